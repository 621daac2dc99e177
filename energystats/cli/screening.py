"""The command ``screen``: distance-correlation screening of the columns of one file against a
target column (DC-SIS, :func:`energystats.distance_correlation_screen`).
"""
from __future__ import annotations

import time

from .._core._errors import CLIError
from ._common import (_columns_option, _draw_seed, _load, _metric_kwargs, _metric_record, _note,
    _print_json, _speak, _verdict, _with_seed)

#: options that only the permutation p-values use (dest -> option)
_PVALUE_OPTIONS = {"resamples": "--resamples", "seed": "--seed", "adjust": "--adjust"}
#: the defaults of the options left at None (so that one given without --pvalue is refused)
DEFAULTS = {"resamples": 999, "adjust": "bh", "alpha": 0.05}


def _names(names, limit=20):
    """``a, b, c`` (the first ``limit``, then how many more)."""
    names = [str(c) for c in names]
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _check_options(args):
    """Refuse what the library refuses, and options that it would ignore, in the options' words."""
    if args.pvalue is None:
        given = [opt for dest, opt in _PVALUE_OPTIONS.items() if getattr(args, dest) is not None]
        if given:
            raise CLIError(f"option {given[0]}: only with --pvalue permutation (without it no "
                           "p-values are computed).")
    if args.resamples is not None and args.resamples < 1:
        raise CLIError(f"option --resamples: must be an integer >= 1; got {args.resamples}.")
    if args.top is not None and args.rounds > args.top:
        raise CLIError(f"option --rounds: must be at most --top ({args.top}): each round selects "
                       f"at least one feature; got {args.rounds}.")


def _load_features(args, path):
    """``(df, features, targets)``: the rows, the feature columns (--columns, default every
    numeric column but the target's) and the target column(s), all numeric and checked."""
    from ._io import check_cells, numeric_columns, split_names

    targets = split_names(args.target)
    if not targets:
        raise CLIError("option --target: name the target column(s).")
    both = sorted(set(targets) & set(split_names(args.columns) or ()))
    if both:
        raise CLIError(f"options --target and --columns: column(s) {both} in both; the target "
                       "is not screened against itself.")
    note = f"target: column(s) {', '.join(map(repr, targets))} (--target)"
    df, cols = _load(args, path, by=targets, by_option="--target", by_note=note)
    numeric_columns(df, targets, path=path, option="--target")
    df = check_cells(df, targets, path=path, options={t: "--target" for t in targets})
    if not cols:
        raise CLIError(f"{path}: no feature columns left besides --target.")
    return df, cols, targets


def _cmd_screen(args):
    from .. import distance_correlation_screen
    from ._io import emit

    met = _metric_kwargs(args)
    _check_options(args)
    path = args.file
    df, cols, targets = _load_features(args, path)
    _speak(args, "X", cols, _columns_option(args))
    _speak(args, "y", targets, {t: "--target" for t in targets})
    n, p = df.shape[0], len(cols)
    if args.top is not None and args.top > p:
        raise CLIError(f"option --top: must be at most the number of features, {p}; got "
                       f"{args.top}.")
    alpha = DEFAULTS["alpha"] if args.alpha is None else args.alpha
    adjust = DEFAULTS["adjust"] if args.adjust is None else args.adjust
    kw = dict(top=args.top, rounds=args.rounds, alpha=alpha, **met)
    if args.pvalue:
        R = DEFAULTS["resamples"] if args.resamples is None else args.resamples
        kw.update(pvalue=args.pvalue, n_resamples=R, adjust=None if adjust == "none" else adjust,
                  rng=_draw_seed(args))
    y = df[targets[0]] if len(targets) == 1 else df[targets]
    t0 = time.perf_counter()
    res = distance_correlation_screen(df[cols], y, **kw)
    what = f"distance correlation of {p} feature(s) with the target ({res.method} path)"
    if args.pvalue:
        kind = "relabellings (exact)" if res.exact else "permutations"
        what += f", {res.n_resamples} {kind} shared by the features"
    _note(args, f"screening: {what} in {time.perf_counter() - t0:.2f} s"
                + (f"; seed {res.seed} (pass --seed {res.seed} to repeat)"
                   if res.seed is not None else ""))
    table = res.to_frame().rename_axis("feature")
    table["round"] = table["round"].astype("Int64")
    table = _with_seed(table, res.seed)
    if args.format == "json":
        _print_json({"command": "screen", "target": targets, "columns": cols, "n": n,
                     "selected": res.selected, "ranking": res.ranking, "top": res.top,
                     "rounds": res.rounds, "pvalue_method": args.pvalue,
                     "adjust": res.adjust if args.pvalue else None, "alpha": alpha,
                     "n_resamples": res.n_resamples, "exact": res.exact, "seed": res.seed,
                     "method": res.method, "constant": res.constant, **_metric_record(met),
                     "features": table.reset_index().to_dict(orient="records")})
        return 0
    title = (f"distance correlation of each feature with {_names(targets)} (dcor: V-statistic, "
             "root; by rank; selected: the top "
             + (f"{res.top} (--top)" if args.top is not None else
                f"min(floor(n / log n), features) = {res.top} (Li, Zhong and Zhu's default; "
                f"--top sets it)")
             + (f", chosen in {res.rounds} rounds, round: the round that chose it"
                if res.rounds > 1 else ""))
    if args.pvalue:
        title += (f"; pvalue: permutation test of each feature ({res.n_resamples} permutations "
                  f"shared by the features), pvalue_adjusted: {res.adjust or 'none'})")
    else:
        title += ")"
    emit([(title, table)], args.format, columns=getattr(args, "columns_used", None))
    _verdict(args, _verdict_line(res, alpha))
    return 0


def _verdict_line(res, alpha):
    line = (f"selected: {len(res.selected)} of {res.statistic.size} feature(s), the top "
            f"{res.top} by distance correlation"
            + (f" in {res.rounds} rounds" if res.rounds > 1 else "")
            + f": {_names(res.selected)}.")
    if res.pvalue is not None:
        small = [f for f in res.ranking if res.adjusted[f] <= alpha]
        how = "adjusted p-value" if res.adjust else "p-value (not adjusted)"
        line += (f"\nsignificant: {len(small)} feature(s) with {how} <= alpha = {alpha:g}"
                 + (f": {_names(small)}." if small else "."))
    if res.constant:
        line += f"\nnote: constant feature(s), no distance correlation: {_names(res.constant)}."
    return line
