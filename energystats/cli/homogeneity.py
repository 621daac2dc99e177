"""The commands ``distance``, ``test`` and ``disco``.
"""
from __future__ import annotations

import time

from .._core._errors import CLIError
from ._common import (_check_groups, _columns_option, _draw_seed, _load, _metric_kwargs,
    _metric_record, _note_run, _print_json, _pvalue_kwargs, _pvalue_text, _record, _speak,
    _test_verdict, _verdict, _with_seed)


# -- commands ------------------------------------------------------------------

def _cmd_distance(args):
    import itertools

    import pandas as pd

    from .. import energy_distance
    from ._io import emit, split_names

    met = _metric_kwargs(args)
    rows = []
    if args.by:
        if len(args.files) != 1:
            raise CLIError("option --by: give one file with a grouping column, not several files.")
        path = args.files[0]
        by = split_names(args.by)
        df, cols = _load(args, path, by=by)
        _check_groups(df, by, path)
        key = df[by[0]] if len(by) == 1 else df[by].astype(str).agg("|".join, axis=1)
        groups = sorted(key.unique(), key=str)
        for a, b in itertools.combinations(groups, 2):
            xa, xb = df.loc[key == a, cols], df.loc[key == b, cols]
            for name, g in (("x", a), ("y", b)):
                _speak(args, name, cols, where=f" in group {str(g)!r} of --by {', '.join(by)}")
            rows.append(_distance_row(str(a), str(b), xa, xb, met, energy_distance))
    else:
        if len(args.files) != 2:
            raise CLIError(f"distance needs two files (A.csv B.csv), or one file and --by; "
                           f"got {len(args.files)} file(s).")
        pa, pb = args.files
        da, cols = _load(args, pa)
        db, _ = _load(args, pb, columns=cols)
        _speak(args, "x", cols, where=f" of {pa}")
        _speak(args, "y", cols, where=f" of {pb}")
        rows.append(_distance_row(pa, pb, da[cols], db[cols], met, energy_distance))
    if args.format == "json":
        _print_json({"command": "distance", "columns": cols, **_metric_record(met), "pairs": rows})
        return 0
    table = pd.DataFrame(rows).set_index(["a", "b"])
    emit([("energy distance", table)], args.format,
         columns=getattr(args, "columns_used", None))
    return 0


def _distance_row(a, b, xa, xb, met, energy_distance):
    n, m = len(xa), len(xb)
    e = energy_distance(xa, xb, **met)
    return {"a": a, "b": b, "n_a": n, "n_b": m, "energy_distance": e,
            "edist": n * m / (n + m) * e, "between": n * m / (2 * (n + m)) * e}


def _cmd_test(args):
    import numpy as np
    import pandas as pd

    from .. import energy_test
    from ._io import emit, split_names

    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    pkw = _pvalue_kwargs(args)
    seed = None if pkw.get("pvalue_method") == "asymptotic" else _draw_seed(args)
    kw = dict(n_resamples=args.resamples, rng=seed, **met, **pkw)  # progress: main's ambient
    if args.estimator != "V":
        kw["estimator"] = args.estimator
    if args.projections is not None:
        kw.update(_projection_options(args, met, pkw))
    if len(args.files) == 1:
        path = args.files[0]
        if not args.by:
            raise CLIError(f"{path}: give the grouping column with --by, or several files "
                           "(one per group): energystats test A.csv B.csv [C.csv ...].")
        by = split_names(args.by)
        if len(by) != 1:
            raise CLIError(f"option --by: the energy test takes one grouping column; got {by}.")
        strata = _strata_column(args, by)
        df, cols = _load(args, path, by=by + strata)
        _check_groups(df, by, path)
        _speak(args, "by", by, {by[0]: "--by"})
        if strata:
            _speak(args, "strata", strata, {strata[0]: "--strata"})
        data, kw = df, dict(kw, by=by[0], columns=cols, strata=strata[0] if strata else None)
    else:
        if args.strata:
            raise CLIError("option --strata: give one file with --by and a strata column.")
        if args.by:
            raise CLIError("option --by: give one file with a grouping column, or several files "
                           "(each file one group) without --by.")
        frames, cols = [], None
        for path in args.files:
            df, cols = _load(args, path, columns=cols)
            frames.append(df[cols])
        data = pd.DataFrame(np.vstack([f.to_numpy(dtype=float) for f in frames]), columns=cols)
        files = np.repeat(np.array(args.files, dtype=object), [len(f) for f in frames])
        if len(set(args.files)) != len(args.files):
            raise CLIError("the same file is given twice; each file is one group.")
        kw = dict(kw, labels=pd.Series(files, index=data.index, name="file"))
    _speak(args, "X", cols, _columns_option(args))
    t0 = time.perf_counter()
    res = energy_test(data, **kw)
    _note_run(args, "energy test", res, t0)
    if args.format == "json":
        _print_json({"command": "test", **_record(res), "alpha": args.alpha})
        return 0
    row = {"statistic": res.statistic, "pvalue": res.pvalue, "pvalue_se": res.pvalue_se,
           "n_resamples": res.n_resamples, "exact": res.exact, "seed": res.seed,
           "groups": ", ".join(f"{g}: {int(s)}" for g, s in zip(res.groups, res.sizes))}
    if res.pvalue_method != "full":
        row["pvalue_method"] = res.pvalue_method
    if res.pvalue_method == "decision":
        row["decision"] = res.decision
    if res.estimator != "V":
        row["estimator"] = res.estimator
    if res.n_projections is not None:
        row["n_projections"] = res.n_projections
    table = pd.DataFrame([row], index=pd.Index(["energy test"], name="test"))
    emit([("energy test of equal distributions", table)], args.format,
         columns=getattr(args, "columns_used", None))
    extra = ("" if res.strata is None else
             f"; groups compared within {len(res.strata)} strata of {args.strata}")
    _test_verdict(args, res, "the groups' distributions differ",
                  "no evidence that the groups' distributions differ", extra)
    return 0


def _projection_options(args, met, pkw):
    """``test --projections K``: the options of ``method='projection'``, checked with the
    command line's names."""
    if args.projections < 1:
        raise CLIError(f"option --projections: must be >= 1; got {args.projections}.")
    if met.get("metric", "energy") != "energy" or float(met.get("exponent", 1.0)) != 1.0:
        raise CLIError("option --projections: needs --metric energy with --exponent 1 (the "
                       "projections' identity holds for the Euclidean distance only).")
    for bad, opt in ((args.strata, "--strata"), (args.estimator != "V", "--estimator U"),
                     (pkw, f"--pvalue-method {args.pvalue_method}"),
                     (args.resamples < 1, "--resamples 0")):
        if bad:
            raise CLIError(f"option --projections: does not take {opt} (it is a permutation "
                           "test of the V statistic with all its relabellings).")
    return dict(method="projection", n_projections=args.projections)


def _strata_column(args, by):
    """``[--strata]`` checked against ``--by``, or ``[]``."""
    if not args.strata:
        return []
    if args.strata in by:
        raise CLIError(f"option --strata: {args.strata!r} is also a --by column.")
    return [args.strata]


def _cmd_disco(args):
    import numpy as np

    from .. import disco
    from ._io import emit, split_names

    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    path, by = args.file, split_names(args.by)
    strata = _strata_column(args, by)
    if args.marginal and strata:
        raise CLIError("options --marginal and --strata: marginal tests are not available within "
                       "strata; leave out one of them.")
    df, cols = _load(args, path, by=by + strata)
    for b in by:
        _check_groups(df, [b], path)
    _speak(args, "X", cols, _columns_option(args))
    _speak(args, "by", by, {b: "--by" for b in by})
    if strata:
        _speak(args, "strata", strata, {strata[0]: "--strata"})
    pkw = _pvalue_kwargs(args)
    seed = _draw_seed(args)
    kw = dict(by=by[0] if len(by) == 1 else by, columns=cols, n_resamples=args.resamples,
              rng=seed, strata=strata[0] if strata else None,  # progress: main's ambient
              conditional=not args.marginal, **met, **pkw)
    t0 = time.perf_counter()
    res = disco(df, **kw)
    _note_run(args, "disco", res, t0)
    tests = res.row_tests()  # what each row tests, its df and F (None: one-way table)
    if args.format == "json":
        rows = None if tests is None else dict(zip(list(res.factors) + ["Within", "Total"], tests))
        _print_json({"command": "disco", **_record(res), "tests": rows, "alpha": args.alpha})
        return 0
    title = {"one-way": "DISCO (distance components)",
             "stratified": f"DISCO (distance components), groups compared within the strata of "
                           f"{res.strata_name}",
             "conditional": "DISCO (distance components), each factor tested given the others "
                            "(the rows do not add up to Total; --marginal gives R energy's table)",
             "marginal": "DISCO (distance components), each factor tested alone (marginal, "
                         "--marginal: R energy's disco table)"}[res.test]
    table = _with_seed(res.to_frame(), res.seed)
    if args.format == "text" and tests is not None:  # the tests under the table, one line a row
        table = table.drop(columns="tests")
    emit([(title, table)], args.format,
         columns=getattr(args, "columns_used", None))
    if args.format == "text" and tests is not None:
        print("rows:")
        for row, text in zip(table.index, tests):
            print(f"  {row}: {text}")
    if res.pvalue is not None and res.pvalue_method != "full":
        if len(by) == 1:
            _test_verdict(args, res, f"the groups of {by[0]} differ",
                          f"the groups of {by[0]} show no evidence of differing")
        else:  # each factor's rule stopped on its own: a verdict per factor
            from types import SimpleNamespace

            for f, name in enumerate(by):
                one = SimpleNamespace(pvalue=float(res.pvalue[f]), pvalue_se=None,
                                      pvalue_method=res.pvalue_method, decision=res.decision[f],
                                      n_resamples=int(res.n_resamples[f]))
                _test_verdict(args, one, f"the groups of {name} differ",
                              f"the groups of {name} show no evidence of differing")
    elif res.pvalue is not None:
        names = by if len(by) > 1 else by[:1]
        for f, p, se in zip(names, np.atleast_1d(res.pvalue), np.atleast_1d(res.pvalue_se)):
            what = "differ" if p <= args.alpha else "show no evidence of differing"
            _verdict(args, f"verdict: the groups of {f} {what} "
                           f"({_pvalue_text(float(p), float(se))}; alpha = {args.alpha:g}).",
                     float(p), float(se))
    return 0
