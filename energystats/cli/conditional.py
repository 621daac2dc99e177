"""The command ``conditional``: the test of conditional independence of two sets of columns
given a third (:func:`energystats.conditional_independence_test`, Wang et al. 2015).
"""
from __future__ import annotations

import time

from .._core._errors import CLIError
from ._common import (_draw_seed, _load, _metric_kwargs, _metric_record, _note, _print_json,
    _pvalue_text, _record, _speak, _verdict, _with_seed)

#: the bandwidth rules of the library (energystats.dependence's BANDWIDTH_RULES)
RULES = ("half-scott", "scott", "silverman", "nrd0")


def _bandwidth(text, zs):
    """--bandwidth: None (the library's default rule), a rule's name, or one number or one per
    column of --z."""
    if text is None or text in RULES:
        return text
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise CLIError(f"option --bandwidth: must be a rule ({', '.join(RULES)}), a number, or one "
                       f"number per column of --z, comma-separated; got {text!r}.") from None
    if len(values) not in (1, len(zs)):
        raise CLIError(f"option --bandwidth: one number, or one per column of --z ({len(zs)}: "
                       f"{', '.join(zs)}); got {len(values)}.")
    if not all(v > 0 and v != float("inf") for v in values):
        raise CLIError(f"option --bandwidth: must be finite and > 0; got {text!r}.")
    return values[0] if len(values) == 1 else values


def _columns(args):
    """``(xs, ys, zs, options)``: the three sets of columns, checked to be disjoint."""
    from ._io import split_names

    if args.columns:
        raise CLIError("option --columns: conditional takes its columns from --x, --y and --z.")
    sets = {"--x": split_names(args.x), "--y": split_names(args.y), "--z": split_names(args.z)}
    for opt, cols in sets.items():
        if not cols:
            raise CLIError(f"option {opt}: name at least one column.")
    for a, b in (("--x", "--y"), ("--x", "--z"), ("--y", "--z")):
        both = sorted(set(sets[a]) & set(sets[b]))
        if both:
            raise CLIError(f"options {a} and {b}: column(s) {both} in both.")
    options = {c: opt for opt, cols in sets.items() for c in cols}
    return sets["--x"], sets["--y"], sets["--z"], options


def _cmd_conditional(args):
    import pandas as pd

    from .. import conditional_independence_test
    from ._io import emit

    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    if args.resamples == 0 and args.seed is not None:
        raise CLIError("option --seed: --resamples 0 draws nothing (the statistic only).")
    xs, ys, zs, options = _columns(args)
    bandwidth = _bandwidth(args.bandwidth, zs)
    df, _ = _load(args, args.file, columns=xs + ys + zs, option="--x/--y/--z", options=options)
    for name, cols in (("x", xs), ("y", ys), ("z", zs)):
        _speak(args, name, cols, options)
    seed = _draw_seed(args) if args.resamples > 0 else None
    n = df.shape[0]
    t0 = time.perf_counter()
    if args.resamples:
        _note(args, f"conditional independence test: {args.resamples} local-bootstrap samples of "
                    f"{n} rows, each O(n^3); seed {seed}")
    res = conditional_independence_test(df[xs], df[ys], df[zs], n_resamples=args.resamples,
                                        bandwidth=bandwidth, rng=seed, **met)
    est = res.estimates
    done = (f"{res.n_resamples} bootstrap samples" if seed is not None else
            "the statistic only (--resamples 0)")
    _note(args, f"conditional independence test: {done} in {time.perf_counter() - t0:.2f} s"
                + (f"; seed {seed} (pass --seed {seed} to repeat)" if seed is not None else ""))
    rule = est.bandwidth_rule or "given (--bandwidth)"
    if args.format == "json":
        _print_json({"command": "conditional",
                     **_record(res, drop=("null_distribution", "estimates")),
                     "seed": seed, "cdcor": est.statistic, "bandwidth_rule": est.bandwidth_rule,
                     "n": n, **_metric_record(met), "alpha": args.alpha})
        return 0
    table = res.to_frame()
    table.insert(0, "x", ", ".join(xs))
    table.insert(1, "y", ", ".join(ys))
    table.insert(2, "z", ", ".join(zs))
    if seed is None:
        table["pvalue"] = table["pvalue"].astype(float)
    table = _with_seed(table, seed)
    bw = pd.DataFrame({"bandwidth": est.bandwidth}, index=pd.Index(zs, name="z"))
    emit([("conditional independence of x and y given z (statistic: T = mean of 12 f(z_i)^4 "
           "dCov^2(x, y | z_i), V-statistics, squared; pvalue: local bootstrap; cdcor: mean "
           "conditional distance correlation, a square)", table),
          (f"bandwidth of the Gaussian kernel on each column of z (rule: {rule})", bw)],
         args.format, columns=getattr(args, "columns_used", None))
    if res.pvalue is not None:
        what = _pvalue_text(res.pvalue, res.pvalue_se)
        if res.pvalue <= args.alpha:
            half = ",".join(f"{h / 2:.4g}" for h in est.bandwidth)
            line = (f"verdict: x and y are dependent given z ({what} <= alpha = {args.alpha:g}); "
                    f"the level depends on the bandwidth: check the rejection at half of it "
                    f"(--bandwidth {half}).")
        else:
            line = (f"verdict: no evidence of dependence between x and y given z ({what} > "
                    f"alpha = {args.alpha:g}).")
        _verdict(args, line, res.pvalue, res.pvalue_se)
    return 0
