"""The command ``changepoint``: E-Divisive (tested splits, or the first ``--k`` untested),
with ``--method agglo`` E-Agglo (Matteson & James 2014), or with ``--method cp3o`` e-cp3o
(Zhang, James & Matteson 2017), on the rows of one file, in file order.
"""
from __future__ import annotations

import os
import time

from .._core._errors import CLIError
from ._common import _columns_option, _draw_seed, _excluded, _note, _print_json, _progress, _read, _record, _speak

#: the defaults of the options left at None so that a combination that ignores them is refused
DEFAULTS = {"min_size": 30, "resamples": 199, "sig_level": 0.05, "pvalue_method": "full"}

#: options of E-Divisive's test, E-Divisive and E-Agglo (dest -> option)
_TEST_OPTIONS = {"resamples": "--resamples", "sig_level": "--sig-level",
                 "pvalue_method": "--pvalue-method", "seed": "--seed",
                 "resampling": "--resampling", "block_size": "--block-size"}
_DIVISIVE_OPTIONS = {"kappa": "--kappa"}
_AGGLO_OPTIONS = {"block": "--block", "penalty": "--penalty"}


def _given(args, options):
    return [opt for dest, opt in options.items() if getattr(args, dest) is not None]


_CP3O_OPTIONS = {"delta": "--delta", "max_k": "--max-k"}


def _method(args):
    """The method: --method, or --agglo (its older spelling); they must agree."""
    if args.agglo:
        if args.method not in (None, "agglo"):
            raise CLIError(f"options --agglo and --method {args.method}: --agglo is --method "
                           "agglo; give one.")
        return "agglo"
    return args.method or "divisive"


def _check_options(args):
    """Refuse options that the chosen method would ignore (nothing is dropped silently)."""
    args.method = _method(args)
    if args.method != "cp3o":
        unused = _given(args, _CP3O_OPTIONS)
        if unused:
            raise CLIError(f"option {unused[0]}: only with --method cp3o (e-cp3o).")
    if args.method == "cp3o":
        unused = _given(args, {**_TEST_OPTIONS, **_DIVISIVE_OPTIONS, **_AGGLO_OPTIONS,
                               "min_size": "--min-size"})
        if unused:
            raise CLIError(f"option {unused[0]}: not used by --method cp3o (e-cp3o fits 1 ... "
                           "--max-k change points by dynamic programming, segments of at least "
                           "--delta + 1 rows, and runs no test); leave it out.")
        if args.k is not None and args.max_k is not None:
            raise CLIError("options --k and --max-k: --k fixes the number of change points, "
                           "--max-k is the most among which ecp's rule chooses; give one.")
        for opt, v, lo in (("--k", args.k, 1), ("--max-k", args.max_k, 1), ("--delta", args.delta, 2)):
            if v is not None and v < lo:
                raise CLIError(f"option {opt}: must be an integer >= {lo}; got {v}.")
    elif args.method == "agglo":
        unused = _given(args, {**_TEST_OPTIONS, **_DIVISIVE_OPTIONS, "min_size": "--min-size"})
        if unused:
            raise CLIError(f"option {unused[0]}: not used by --agglo (E-Agglo merges segments "
                           "and runs no permutation test); leave it out.")
        if args.k is not None and args.penalty is not None:
            raise CLIError("options --k and --penalty: --k picks the segmentation with k change "
                           "points on the merge path, --penalty chooses the number; give one.")
    else:
        unused = _given(args, _AGGLO_OPTIONS)
        if unused:
            raise CLIError(f"option {unused[0]}: only with --agglo (E-Agglo).")
        if args.k is not None:
            unused = _given(args, _TEST_OPTIONS)
            if unused:
                raise CLIError(f"option {unused[0]}: not used with --k (the first k splits are "
                               "returned untested: no permutations); leave it out.")
    if args.min_size is not None and args.min_size < 2:
        raise CLIError(f"option --min-size: must be an integer >= 2 (the within-segment terms "
                       f"need two rows); got {args.min_size}.")
    if args.k is not None and args.k < 0:
        raise CLIError(f"option --k: must be an integer >= 0; got {args.k}.")
    if args.block_size is not None and args.resampling != "block":
        raise CLIError("option --block-size: is the block length of --resampling block.")
    if args.block is not None and args.block < 1:
        raise CLIError(f"option --block: must be an integer >= 1; got {args.block}.")
    if args.penalty is not None and not (args.penalty >= 0 and args.penalty != float("inf")):
        raise CLIError(f"option --penalty: must be a finite number >= 0; got {args.penalty:g}.")
    if not 0.0 < args.exponent < 2.0:
        raise CLIError(f"option --exponent: must lie in (0, 2) for change points (at 2 the "
                       f"divergence compares means only); got {args.exponent:g}.")


def _time_labels(args, df, path):
    """The index of the series: the --time-column's values (text in ISO 8601 form parsed as
    dates; whole numbers stored as floats as integers), checked to be in time order; without
    it the file's data rows, counting from 1."""
    import numpy as np
    import pandas as pd

    if args.time_column is None:
        return pd.Index(df.index + 1, name="row"), "data row"
    col = args.time_column
    s = df[col]
    if pd.api.types.is_float_dtype(s) and np.all(np.isfinite(s)) and np.all(s == np.round(s)) \
            and np.all(np.abs(s) < 2**53):
        s = s.astype(np.int64)            # whole numbers (years) are labels, not 1901.0
    how = ""
    if not (pd.api.types.is_numeric_dtype(s) or pd.api.types.is_datetime64_any_dtype(s)):
        try:
            s = pd.to_datetime(s, format="ISO8601")
            how = " (parsed as dates)"
        except (ValueError, TypeError):
            how = " (text: not ISO 8601 dates, so its order is not checked)"
    if pd.api.types.is_numeric_dtype(s) or pd.api.types.is_datetime64_any_dtype(s):
        v = s.to_numpy()
        back = (v[1:] < v[:-1]).nonzero()[0]
        if back.size:
            i = back[0] + 1
            raise CLIError(f"{path}: column {col!r} (option --time-column) is not in time order: "
                           f"data row {df.index[i] + 1} ({s.iloc[i]}) comes after data row "
                           f"{df.index[i - 1] + 1} ({s.iloc[i - 1]}); the rows must be in time "
                           "order (sort the file).")
    args.time_note = f"; time column {col!r}{how}"
    return pd.Index(s.to_numpy(), name=col), col


def _load_series(args, path):
    """``(df, cols, index, where)``: the file's rows (missing values refused, or dropped with
    --dropna), the numeric columns used (not the time column) and the series' index."""
    from ._io import check_cells, check_missing, numeric_columns, split_names
    from .._core._validation import short_list

    df = _read(args, path)
    extra = []
    if args.time_column is not None:
        if args.time_column not in df.columns:
            raise CLIError(f"{path}: no column {args.time_column!r} (option --time-column); the "
                           f"file has {short_list(df.columns)}.")
        extra = [args.time_column]
    if args.time_column is not None and args.time_column in (split_names(args.columns) or ()):
        raise CLIError(f"option --columns: {args.time_column!r} is the --time-column; it cannot "
                       "also be a column of the series.")
    wanted = split_names(args.columns)
    excluded = _excluded(args, df, path, wanted)
    cols, left_out = numeric_columns(df, wanted, exclude=tuple(extra) + tuple(excluded),
                                     numeric_only=args.numeric_only, path=path)
    n0 = df.shape[0]
    skip = df[cols + extra].isna().any(axis=1).to_numpy() if args.dropna else None
    df = check_cells(df, cols, path=path, skip=skip, options=_columns_option(args))
    df = check_missing(df, cols + extra, path=path, dropna=args.dropna)
    if df.shape[0] == 0:
        raise CLIError(f"{path}: no rows left after --dropna.")
    args.time_note = ""
    index, where = _time_labels(args, df, path)
    note = f"{path}: {n0} rows; columns used: {', '.join(cols)}{args.time_note}"
    if excluded:
        note += f"; left out (--exclude): {', '.join(map(str, excluded))}"
    if left_out:
        note += f"; left out (--numeric-only): {', '.join(map(str, left_out))}"
    if df.shape[0] < n0:
        note += (f"; {n0 - df.shape[0]} row(s) with missing values dropped (--dropna): the rows "
                 "around them become adjacent in the series")
    _note(args, note)
    return df, cols, index, where


def _cmd_changepoint(args):
    import numpy as np
    import pandas as pd

    from ._io import check_out_path, emit

    _check_options(args)
    path = args.file
    if args.out:
        check_out_path(args.out, inputs=[path])
    df, cols, index, where = _load_series(args, path)
    if args.out and args.segment_column in _read(args, path).columns:
        raise CLIError(f"option --segment-column: {path} already has a column "
                       f"{args.segment_column!r}; choose another name.")
    _speak(args, "X", cols, _columns_option(args))
    for name, option in (("min_size", "--min-size"), ("n_resamples", "--resamples"),
                         ("sig_level", "--sig-level"), ("n_changepoints", "--k"),
                         ("exponent", "--exponent"), ("penalty", "--penalty")):
        args.words[name] = (f"option {option}", {})
    X = pd.DataFrame(df[cols].to_numpy(dtype=np.float64), columns=cols, index=index)
    T = X.shape[0]
    t0 = time.perf_counter()
    if args.method == "agglo":
        res, extra = _run_agglo(args, X, T)
    elif args.method == "cp3o":
        res, extra = _run_cp3o(args, X, T)
    else:
        res, extra = _run_divisive(args, X, T)
    _note(args, f"{extra['method']}: {extra['what']} in {time.perf_counter() - t0:.2f} s"
                + (f"; seed {res.seed} (pass --seed {res.seed} to repeat)"
                   if getattr(res, "seed", None) is not None else ""))
    segments = res.to_frame()
    if args.out:
        _write_segments(args, path, df, np.asarray(res.labels))
    if args.format == "json":
        drop = ("data", "index", "labels", "path", "path_changepoints")
        obj = {"command": "changepoint", "method": extra["method"],
               **_record(res, drop=drop), "time_column": args.time_column, "n": T,
               "segments": segments.reset_index().to_dict(orient="records")}
        if "splits" in extra:
            obj["splits"] = extra["splits"].reset_index().to_dict(orient="records")
        if "path" in extra:
            obj["path"] = extra["path"].to_dict(orient="records")
        _print_json(obj)
        return 0
    first = where if where != "data row" else "data rows of the file, counting from 1"
    sections = [(f"segments (start, end: positions in the series, end excluded; first, last: "
                 f"{first})", segments)]
    if "splits" in extra:
        sections.append((extra["splits_title"], extra["splits"]))
    if "summary" in extra:
        sections.append((extra.get("summary_title", "E-Agglo segmentation"), extra["summary"]))
    if extra["method"] == "e_cp3o":
        sections.append(("the best fit with each number of change points (ecp's gofM and cpLoc)",
                         extra["path"].set_index("n_changepoints")))
    emit(sections, args.format,
         columns=getattr(args, "columns_used", None))
    if args.format == "text":
        print(f"\n{extra['verdict']}")
    return 0


def _label(index, pos):
    return None if pos is None else index[int(pos)]


def _text(v):
    """A label as the tables print it (a date at midnight without its time)."""
    import pandas as pd

    if isinstance(v, pd.Timestamp) and v == v.normalize():
        return str(v.date())
    return str(v)


def _run_divisive(args, X, T):
    """E-Divisive: tested splits (or the first --k, untested); the splits table and the verdict."""
    import pandas as pd

    from .. import e_divisive

    min_size = DEFAULTS["min_size"] if args.min_size is None else args.min_size
    if args.k is not None:
        kmax = T // min_size - 1
        if args.k > kmax:
            raise CLIError(f"option --k: must be at most T // min-size - 1 = {T} // {min_size} - 1 = "
                           f"{kmax} ({T} rows, --min-size {min_size}: every segment needs "
                           f"min-size rows); got {args.k}.")
        _note(args, f"E-Divisive: the first {args.k} split(s) of {T} rows (--min-size {min_size}), "
                    "untested")
        res = e_divisive(X, min_size=min_size, exponent=args.exponent, n_changepoints=args.k,
                         **({} if args.kappa is None else {"kappa": args.kappa}))
    else:
        R = DEFAULTS["resamples"] if args.resamples is None else args.resamples
        method = args.pvalue_method or DEFAULTS["pvalue_method"]
        level = DEFAULTS["sig_level"] if args.sig_level is None else args.sig_level
        if method == "sequential" and R < 10:
            raise CLIError(f"option --resamples: must be at least 10 with --pvalue-method "
                           f"sequential (it stops at the 10th permuted maximum reaching the "
                           f"observed one); got {R}.")
        seed = _draw_seed(args)
        _note(args, f"E-Divisive on {T} rows (--min-size {min_size}): each split tested with up to "
                    f"{R} permutations ({method}); seed {seed}")
        extra = {} if args.resampling is None else {"resampling": args.resampling}
        if args.kappa is not None:
            extra["kappa"] = args.kappa
        if args.block_size is not None:
            extra["block_size"] = args.block_size
        res = e_divisive(X, min_size=min_size, exponent=args.exponent, sig_level=level,
                         n_resamples=R, pvalue_method=method, rng=seed, progress=_progress(args),
                         **extra)
        if res.resampling == "block":
            _note(args, f"block permutations (--resampling block), block length(s) "
                        f"{', '.join(map(str, res.block_sizes))}")
    rows = []
    for i, (pos, q) in enumerate(zip(res.order_found, res.statistics)):
        row = {"order": i + 1, "changepoint": int(pos), "at": _label(X.index, pos),
               "statistic": float(q)}
        if res.pvalues is not None:
            row.update(pvalue=float(res.pvalues[i]), n_resamples=int(res.n_resamples[i]),
                       accepted=True)
            if res.decisions:
                row["decision"] = res.decisions[i]
            row["seed"] = res.seed
        rows.append(row)
    if res.rejected is not None:
        row = {"order": len(rows) + 1, "changepoint": int(res.rejected),
               "at": _label(X.index, res.rejected), "statistic": float(res.rejected_statistic),
               "pvalue": float(res.rejected_pvalue), "n_resamples": int(res.n_resamples[-1]),
               "accepted": False}
        if res.decisions:
            row["decision"] = res.decisions[-1]
        row["seed"] = res.seed
        rows.append(row)
    columns = ["order", "changepoint", "at", "statistic"]
    if res.pvalues is not None:
        columns += ["pvalue", "n_resamples", "accepted"] + (["decision"] if res.decisions else [])
        columns.append("seed")
    splits = pd.DataFrame(rows, columns=columns).set_index("order")
    if res.pvalues is None:
        title = ("splits in the order found (--k: untested, no p-values; statistic: Q = "
                 "nm/(n+m) E of the two sides)")
    else:
        title = ("splits in the order found, each tested given the segments before it "
                 "(statistic: Q = nm/(n+m) E; pvalue = (1 + #{permuted max >= Q}) / (R + 1)); "
                 "the last row is the split rejected")
        if res.rejected is None:
            title = title.rsplit(";", 1)[0] + "; no split was rejected"
    return res, {"method": "e_divisive", "splits": splits, "splits_title": title,
                 "what": _what_divisive(res), "verdict": _verdict_divisive(args, res, X.index)}


def _what_divisive(res):
    if res.pvalues is None:
        return f"{len(res.changepoints)} split(s), no test"
    used = "+".join(str(n) for n in res.n_resamples) or "0"
    return f"{len(res.n_resamples)} test(s), {used} permutations"


def _verdict_divisive(args, res, index):
    k = len(res.changepoints)
    at = ", ".join(_text(v) for v in res.changepoint_labels)
    if res.pvalues is None:
        return (f"note: the first {k} split(s) (at {at or 'none'}), as --k asked; untested: "
                "run without --k for the permutation tests." if k else
                "note: --k 0: no split asked for.")
    level = res.sig_level
    if res.rejected is not None:
        nxt = (f"the next best split, at {_text(_label(index, res.rejected))}, has p = "
               f"{res.rejected_pvalue:.4g} > sig-level {level:g}")
        if res.pvalue_method == "decision" and res.decisions[-1] is None:
            nxt += f" (undecided after {res.n_resamples[-1]} permutations: give more --resamples)"
    else:
        nxt = f"no segment left with 2 x --min-size = {2 * res.min_size} rows to test"
    if k == 0:
        return f"verdict: no evidence of a change point ({nxt})."
    ps = ", ".join(f"{p:.4g}" for p in res.pvalues)
    return (f"verdict: {k} change point(s), at {at} (p = {ps} in the order found, each <= "
            f"sig-level {level:g} given the segments before it); {nxt}.")


def _run_agglo(args, X, T):
    """E-Agglo from one segment per row (or per --block rows); --k picks the segmentation of
    the merge path with k change points, else the penalised fit (--penalty) chooses."""
    import dataclasses

    import numpy as np
    import pandas as pd

    from .. import e_agglo

    member = None if args.block is None else np.arange(T) // args.block
    start = "one segment per row" if member is None else f"segments of {args.block} rows"
    penalty = "auto" if args.penalty is None else args.penalty
    _note(args, f"E-Agglo (ecp's definitions) on {T} rows from {start}"
                + (f", penalty {args.penalty:g} per change point" if args.penalty is not None
                   else ", the default penalty"))
    res = e_agglo(X, member=member, exponent=args.exponent, penalty=penalty)
    if args.penalty is None:
        chosen = (f"the largest fit minus the default penalty, {res.penalty:.4g} per change "
                  f"point")
    elif args.penalty:
        chosen = f"the largest fit minus --penalty {args.penalty:g} per change point"
    else:
        chosen = "the largest fit (--penalty 0: ecp's default, no penalty)"
    if args.k is not None:
        counts = res.path["n_changepoints"].to_numpy()
        rows = np.flatnonzero(counts == args.k)
        if not rows.size:
            raise CLIError(f"option --k: the merge path has from {counts.min()} to {counts.max()} "
                           f"change points ({start}); got {args.k}.")
        r = int(rows[0])
        cps = np.asarray(res.path_changepoints[r])
        labels = np.zeros(T, dtype=np.intp)
        for c in cps:
            labels[c:] += 1
        if res.path["wrapped"].iloc[r] and cps.size:   # the last segment is the first's cluster
            labels[cps[-1]:] = 0
        fit = float(res.path["fit"].iloc[r])
        res = dataclasses.replace(res, changepoints=cps, labels=labels,
                                  changepoint_labels=[X.index[int(c)] for c in cps],
                                  fit=fit, penalised_fit=float(res.path["penalised_fit"].iloc[r]))
        chosen = f"--k {args.k} on the merge path"
    summary = pd.DataFrame([{"n_changepoints": len(res.changepoints), "fit": res.fit,
                             "penalised_fit": res.penalised_fit, "penalty": res.penalty,
                             "chosen_by": chosen}],
                           index=pd.Index(["e_agglo"], name="method"))
    at = ", ".join(_text(v) for v in res.changepoint_labels) or "none"
    verdict = (f"result: {len(res.changepoints)} change point(s), at {at} ({chosen}; E-Agglo "
               "runs no significance test).")
    return res, {"method": "e_agglo", "summary": summary, "path": res.path,
                 "what": f"{len(res.path)} segmentations on the merge path", "verdict": verdict}


def _run_cp3o(args, X, T):
    """e-cp3o: the best fits with 1 ... K change points; --k fixes the number, else ecp's rule."""
    import pandas as pd

    from .. import e_cp3o

    delta = 29 if args.delta is None else args.delta
    if T < 2 * (delta + 1):
        raise CLIError(f"option --delta: e-cp3o needs at least 2 (delta + 1) = {2 * (delta + 1)} "
                       f"rows for one change point; the series has {T} (--delta {delta}).")
    most = T // (delta + 1) - 1
    for opt, v in (("--k", args.k), ("--max-k", args.max_k)):
        if v is not None and v > most:
            raise CLIError(f"option {opt}: at most T // (delta + 1) - 1 = {most} change points "
                           f"fit with segments of delta + 1 = {delta + 1} rows in {T} rows; "
                           f"got {v}.")
    _note(args, f"e-cp3o on {T} rows, window delta = {delta}"
                + (f", {args.k} change point(s) (--k)" if args.k is not None else ""))
    res = e_cp3o(X, n_changepoints=args.k, max_changepoints=args.max_k, delta=delta,
                 exponent=args.exponent)
    chosen = ("--k" if res.chosen_by == "fixed" else
              f"ecp's rule among 1 ... {res.max_changepoints} change points")
    path = res.path_frame()
    path["changepoints"] = [", ".join(_text(X.index[int(c)]) for c in cps)
                            for cps in res.path_changepoints]
    summary = pd.DataFrame([{"n_changepoints": res.n_changepoints,
                             "gof": float(res.gof[res.n_changepoints - 1]), "delta": res.delta,
                             "chosen_by": chosen}],
                           index=pd.Index(["e_cp3o"], name="method"))
    at = ", ".join(_text(v) for v in res.changepoint_labels)
    verdict = (f"result: {res.n_changepoints} change point(s), at {at} ({chosen}; e-cp3o runs "
               "no significance test and always returns at least one change point: use the "
               "default method for tested change points).")
    return res, {"method": "e_cp3o", "summary": summary, "summary_title": "e-cp3o fit",
                 "path": path, "what": f"fits with 1 to {res.max_changepoints} change points",
                 "verdict": verdict}


def _write_segments(args, path, df, labels):
    """The input rows with the segment column appended; text files keep every field as written."""
    import pandas as pd

    from ._io import input_kind, read_text_fields, write_data

    col = args.segment_column
    in_kind = input_kind(path, args.input_format)
    out_kind = os.path.splitext(args.out)[1].lower()
    if in_kind in ("csv", "tsv") and out_kind in (".csv", ".tsv", ".tab", ".txt"):
        full = read_text_fields(path, fmt=args.input_format, sep=args.sep, decimal=args.decimal)
        full[col] = pd.Series([str(v) for v in labels], index=df.index).reindex(full.index).fillna("")
    else:
        full = _read(args, path)
        full[col] = pd.Series(labels, index=df.index).reindex(full.index).astype("Int64")
    write_data(full, args.out)
    _note(args, f"segments written to {args.out} (column {col!r} appended to the input rows"
                + ("; rows dropped by --dropna have an empty segment)" if len(full) > len(df)
                   else ")"))
