"""The command ``gof``.
"""
from __future__ import annotations

import argparse
import time

from .._core._errors import CLIError
from ._common import (_draw_seed, _load, _note, _print_json, _pvalue_kwargs, _pvalue_text, _record,
    _speak, _test_verdict, _verdict)


def _param_value(text):
    """``NAME=VALUE`` of --param as (name, float)."""
    name, sep, value = text.partition("=")
    try:
        if not sep or not name.strip():
            raise ValueError
        return name.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE with a number, e.g. loc=0; got {text!r}") from None


def _cmd_gof(args):
    import numpy as np
    import pandas as pd

    from .. import gof_test, normality_test, poisson_test
    from .._core._validation import short_list
    from ..goodness_of_fit import ALIASES
    from ._io import emit, split_names

    dist = ALIASES.get(args.dist.strip().lower(), args.dist.strip().lower())
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    if args.column and args.columns:
        raise CLIError("options --column and --columns: give one (--columns for multivariate "
                       "normality).")
    wanted = [args.column] if args.column else split_names(args.columns)
    option = "--column" if args.column else "--columns"
    df, cols = _load(args, args.file, columns=wanted, option=option,
                     options={c: option for c in wanted or ()})
    _speak(args, "x", cols, {c: option for c in wanted or ()})
    if len(cols) > 1 and dist != "norm":
        raise CLIError(f"--dist {args.dist}: the test takes one column (--column); got {short_list(cols)}. "
                       "Only --dist normal takes several (multivariate normality).")
    known = dict(args.param or [])
    if args.method == "limit" and (dist != "norm" or len(cols) > 1):
        raise CLIError("option --method limit: only for univariate normality (--dist normal, one "
                       "column).")
    if args.statistic != "energy" and dist != "poisson":
        raise CLIError("option --statistic: only with --dist poisson.")
    if known and (len(cols) > 1 or args.method == "limit" or args.statistic != "energy"):
        raise CLIError("option --param: only for the one-column test of a SciPy law (not with "
                       "--columns, --method limit or --statistic).")
    pkw = _pvalue_kwargs(args)
    if pkw and args.method == "limit":
        raise CLIError(f"option --pvalue-method {args.pvalue_method}: stops the bootstrap early; "
                       "--method limit has no bootstrap (leave out one of them).")
    if pkw and args.statistic == "all":
        raise CLIError(f"option --pvalue-method {args.pvalue_method}: one statistic at a time "
                       "(--statistic all shares one bootstrap among three tests); leave it out, or "
                       "choose one --statistic.")
    seed = _draw_seed(args) if args.resamples > 0 and args.method != "limit" else None
    t0 = time.perf_counter()
    data = df[cols]
    if dist == "norm" and not known:   # R energy's normal.test / mvnorm.test
        res = normality_test(data, method=args.method, n_resamples=args.resamples, rng=seed, **pkw)
    elif dist == "poisson" and not known:   # R energy's poisson.tests
        res = poisson_test(data, statistic=args.statistic, n_resamples=args.resamples, rng=seed,
                           **pkw)
    else:
        res = gof_test(data, args.dist, known_params=known or None, n_resamples=args.resamples,
                       rng=seed, **pkw)
    results = list(res.results.values()) if hasattr(res, "results") else [res]
    first = results[0]
    how = ("limit distribution" if first.method == "limit" else
           f"{first.n_resamples} bootstrap samples" + (f"; seed {seed} (pass --seed {seed} to "
                                                       "repeat)" if seed is not None else ""))
    _note(args, f"goodness of fit ({first.distribution}): {how}, {time.perf_counter() - t0:.2f} s")
    if args.format == "json":
        _print_json({"command": "gof", "results": [_record(r) for r in results]})
        return 0
    rows = []
    for r in results:
        row = {"distribution": r.distribution, "statistic_name": r.statistic_name,
               "statistic": r.statistic, "pvalue": r.pvalue, "pvalue_se": r.pvalue_se,
               "method": r.method, "n": r.n_samples}
        if r.pvalue_method != "full":
            row.update(pvalue_method=r.pvalue_method, n_resamples=r.n_resamples)
        if r.pvalue_method == "decision":
            row["decision"] = r.decision
        for k, v in r.params.items():
            if np.ndim(v) == 0:
                row[k] = v
        if r.seed is not None:   # the text and CSV output repeat too, not only stderr/JSON
            row["seed"] = r.seed
        rows.append(row)
    title = ("energy goodness of fit: statistic n x energy distance between the sample and the "
             "fitted law; parameters estimated (re-estimated in every bootstrap sample)")
    emit([(title, pd.DataFrame(rows).set_index(["distribution", "statistic_name"]))], args.format,
         columns=getattr(args, "columns_used", None))
    # the family in the user's word (--dist exponential, not SciPy's 'expon')
    word = args.dist.strip().lower()
    word = {"poisson": "Poisson", "weibull": "Weibull", "pareto": "Pareto",
            "gaussian": "Gaussian"}.get(word, word)
    if len(cols) > 1:
        word = f"multivariate {word}"
    differ = f"the data are not from the {word} family"
    same = f"no evidence against the {word} family"
    for r in results:
        # --statistic all: one verdict per statistic, each naming its own p-value
        label = f", by the {r.statistic_name} statistic" if len(results) > 1 else ""
        if r.pvalue is not None and r.pvalue_method != "full":
            _test_verdict(args, r, differ + label, same + label)
        elif r.pvalue is not None:
            verdict = differ if r.pvalue <= args.alpha else same
            _verdict(args, f"verdict: {verdict}{label} ({_pvalue_text(r.pvalue, r.pvalue_se)}; "
                           f"alpha = {args.alpha:g}).", r.pvalue, r.pvalue_se)
    return 0
