"""The command ``lagged``: dependence across time of the rows of one file.  With ``--x`` only,
the auto-distance correlation function and its test of serial independence
(:func:`energystats.adcf_test`); with ``--y`` too, the cross-distance correlation and the test
that the two series are independent (:func:`energystats.cross_distance_correlation_test`).
"""
from __future__ import annotations

import time

from .._core._errors import CLIError
from ._common import (_draw_seed, _load, _metric_kwargs, _metric_record, _note, _print_json,
    _pvalue_text, _record, _speak, _verdict, _with_seed)
from .changepoint import _time_labels

#: options of the cross test only (dest -> option)
_CROSS_OPTIONS = {"resampling": "--resampling", "block_length": "--block-size"}


def _lags(text):
    """--lags: None (the library's default), an integer L, or the lags, comma-separated."""
    if text is None:
        return None
    parts = [v.strip() for v in text.split(",") if v.strip()]
    try:
        values = [int(v) for v in parts]
    except ValueError:
        raise CLIError(f"option --lags: must be an integer L, or the lags as integers separated "
                       f"by commas; got {text!r}.") from None
    if not values:
        raise CLIError(f"option --lags: give an integer L or the lags; got {text!r}.")
    return values[0] if len(values) == 1 and "," not in text else values


def _columns(args):
    """``(xs, ys, options)``: the columns of x and (cross test) y, and the option of each."""
    from ._io import split_names

    if args.columns:
        raise CLIError("option --columns: lagged takes its columns from --x (and --y).")
    xs, ys = split_names(args.x), split_names(args.y) or []
    if not xs:
        raise CLIError("option --x: name at least one column.")
    if args.y is not None and not ys:
        raise CLIError("option --y: name at least one column.")
    both = sorted(set(xs) & set(ys))
    if both:
        raise CLIError(f"options --x and --y: column(s) {both} in both.")
    if args.time_column is not None and args.time_column in xs + ys:
        raise CLIError(f"option --time-column: {args.time_column!r} is also a column of "
                       f"{'--x' if args.time_column in xs else '--y'}; the time stamps are not "
                       "a series.")
    if not ys:
        given = [opt for dest, opt in _CROSS_OPTIONS.items() if getattr(args, dest) is not None]
        if given:
            raise CLIError(f"option {given[0]}: only with --y (the cross test resamples y; the "
                           "ADCF test permutes the rows of x).")
    if args.block_length is not None and args.resampling == "permutation":
        raise CLIError("option --block-size: is the block length of --resampling block.")
    return xs, ys, {**{c: "--x" for c in xs}, **{c: "--y" for c in ys}}


def _user_text(text, options):
    """The library's sentences about the series (``x['a']``, ``block_length=``, ``np.diff``)
    in the command's words."""
    import re

    def column(m):
        col = m.group(2)[1:-1]
        return f"column {col!r} (option {options.get(col, '--' + m.group(1))})"

    text = re.sub(r"\b([xy])\[('[^']*'|\"[^\"]*\")\]", column, text)
    text = text.replace("difference it (np.diff) before testing",
                        "difference it (take first differences) before testing")
    text = re.sub(r"\bblock_length=?", "--block-size", text)
    return text


def _run(args, met, X, Y, lags, seed, options):
    """The test's result; its warnings about the series re-issued in the command's words."""
    import warnings

    from .. import adcf_test, cross_distance_correlation_test

    common = dict(lags=lags, n_resamples=args.resamples, kernel=args.kernel, alpha=args.alpha,
                  rng=seed, **met)
    if Y is None:
        return adcf_test(X, **common)
    extra = {} if args.resampling is None else {"resampling": args.resampling}
    if args.block_length is not None:
        extra["block_length"] = args.block_length
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cross_distance_correlation_test(X, Y, **common, **extra)
    for w in caught:
        warnings.warn(_user_text(str(w.message), options), w.category, stacklevel=2)
    return res


def _cmd_lagged(args):
    import numpy as np
    import pandas as pd

    from ._io import emit

    met = _metric_kwargs(args)
    xs, ys, options = _columns(args)
    lags = _lags(args.lags)
    if args.resamples < 1:
        raise CLIError(f"option --resamples: must be an integer >= 1; got {args.resamples}.")
    path, tc = args.file, args.time_column
    note = f"time column {tc!r} (--time-column)" if tc else None
    df, _ = _load(args, path, columns=xs + ys, option="--x/--y", options=options,
                  by=(tc,) if tc else (), by_option="--time-column", by_note=note)
    _time_labels(args, df, path)      # the --time-column in time order (as changepoint checks)
    if tc and "not checked" in args.time_note:
        _note(args, f"{path}: {args.time_note.lstrip('; ')}")
    _speak(args, "x", xs, options)
    if ys:
        _speak(args, "y", ys, options)
    X = pd.DataFrame(df[xs].to_numpy(dtype=np.float64), columns=xs)
    Y = pd.DataFrame(df[ys].to_numpy(dtype=np.float64), columns=ys) if ys else None
    seed = _draw_seed(args)
    t0 = time.perf_counter()
    res = _run(args, met, X, Y, lags, seed, options)
    cross = Y is not None
    kind = "block resamples of y" if cross and res.block_length > 1 else \
        "permutations of y" if cross else "permutations of the rows of x"
    _note(args, f"{'cross test' if cross else 'ADCF test'}: {res.n_resamples} {kind} at "
                f"{len(res.lags)} lag(s) in {time.perf_counter() - t0:.2f} s; seed {seed} (pass "
                f"--seed {seed} to repeat)")
    validity = _user_text(res.validity, options) if cross else ""
    checks = [_user_text(c, options) for c in res.series_checks] if cross else []
    per_lag = _with_seed(res.to_frame(), res.seed)
    if args.format == "json":
        rec = _record(res, drop=("null_distribution",))
        if cross:
            rec.update(validity=validity, series_checks=checks)
        _print_json({"command": "lagged", "test": "cross" if cross else "adcf", **rec,
                     "time_column": tc, **_metric_record(met),
                     "per_lag": per_lag.reset_index().to_dict(orient="records")})
        return 0
    summary = {"statistic": res.statistic, "pvalue": res.pvalue, "n_resamples": res.n_resamples,
               "lags": _lag_text(res.lags), "kernel": res.kernel}
    if cross:
        summary.update(resampling=res.resampling, block_length=res.block_length, valid=res.valid)
    summary["seed"] = res.seed
    name = "cross test" if cross else "ADCF test"
    summary = pd.DataFrame([summary], index=pd.Index([name], name="test"))
    if cross:
        title = (f"cross-distance correlation of x_t ({', '.join(xs)}) and y_(t-j) "
                 f"({', '.join(ys)}) at each lag j (j > 0: y leads; cross_dcor: V-statistic, "
                 "root; statistic: (n - |j|) dCov^2; pvalue: the lag alone, y resampled; "
                 f"critical_value: the {1 - res.alpha:g} quantile of the resampled cross_dcor)")
    else:
        title = (f"auto-distance correlation of x ({', '.join(xs)}) at each lag j (adcf: dCor of "
                 "x_t and x_(t-j), V-statistic, root; statistic: (n - j) dCov^2; pvalue: the lag "
                 f"alone, rows permuted; critical_value: the {1 - res.alpha:g} quantile of the "
                 "permuted adcf)")
    emit([(title, per_lag),
          ("portmanteau test over the lags (statistic: Q = sum of k^2(j/p) (n - |j|) dCov^2)",
           summary)], args.format, columns=getattr(args, "columns_used", None))
    if args.format == "text":
        if cross and not res.valid:
            print(f"\nvalid: False\nvalidity: {validity}.")
        for c in checks:
            if not (cross and not res.valid and c in validity):
                print(f"series check: {c}.")
    _verdict(args, _verdict_line(args, res, cross), res.pvalue)
    return 0


def _lag_text(lags):
    lags = list(lags)
    if len(lags) > 2 and lags == list(range(lags[0], lags[-1] + 1)):
        return f"{lags[0]}..{lags[-1]}"
    return ",".join(map(str, lags))


def _verdict_line(args, res, cross):
    what = f"portmanteau {_pvalue_text(res.pvalue, None)}"
    lags = _lag_text(res.lags)
    if cross and not res.valid:
        return (f"verdict: none: the test is not valid on these series (a unit root; see "
                f"validity above), so its {what} says nothing; difference the series first.")
    if res.pvalue <= args.alpha:
        return ("verdict: " + ("x and y are dependent" if cross else "x is serially dependent")
                + f" (at lags {lags}: {what} <= alpha = {args.alpha:g}).")
    return ("verdict: no evidence of " + ("dependence between x and y" if cross else
                                           "serial dependence in x")
            + f" at lags {lags} ({what} > alpha = {args.alpha:g}).")
