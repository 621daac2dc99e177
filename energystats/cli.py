"""Command-line interface: ``energystats <command>`` or ``python -m energystats``.

Commands: ``distance``, ``test``, ``disco``, ``cluster`` and ``demo``; run
``energystats <command> --help`` for the options and an example.  Tables go
to standard output (``--format text|csv|json``; JSON is one object per
command whose keys are the fields of the Python result); notes, the seed and
progress go to standard error (silenced by ``--quiet``).

Exit status: 0 success; 2 bad usage or bad data, with a one-line message
that names the file, the column or the option (``--debug`` shows the
traceback instead); 3 an operating-system failure (output could not be
written: a closed pipe or standard output, a full disk, no permission);
4 out of memory; 130 interrupted.

Only the standard library is imported until a command runs, so ``--help``
answers at once; scikit-learn is imported only by ``cluster``.
"""
from __future__ import annotations

import argparse
import errno
import os
import sys
import textwrap
import time

from ._errors import EXIT_INTERRUPTED, EXIT_MEMORY, EXIT_OS, EXIT_USAGE, CLIError

__all__ = ["main", "build_parser"]

FORMATS = ("text", "csv", "json")
INPUT_FORMATS = ("csv", "tsv", "parquet")


# -- helpers -------------------------------------------------------------------

def _note(args, msg):
    """A note or progress line on stderr, unless ``--quiet``."""
    if not getattr(args, "quiet", False) and sys.stderr is not None:
        print(msg, file=sys.stderr, flush=True)


def _level(text):
    """argparse type of --alpha: a number in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text}")
    return value


def _seed(text):
    """argparse type of --seed: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0; got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0; got {value}")
    return value


def _one_char(text):
    """argparse type of --sep/--decimal: one character (``\\t`` or 'tab' for a tab)."""
    if text in ("\\t", "tab", "TAB"):
        return "\t"
    if len(text) != 1:
        raise argparse.ArgumentTypeError(f"must be one character; got {text!r}")
    return text


def _metric_kwargs(args):
    """Validate --metric/--exponent/--sigma here so errors name the option."""
    import math

    if args.metric == "energy" and not (0.0 < args.exponent <= 2.0):
        raise CLIError(f"option --exponent: must lie in (0, 2]; got {args.exponent:g}.")
    if args.metric != "energy" and not (math.isfinite(args.sigma) and args.sigma > 0):
        raise CLIError(f"option --sigma: must be a finite number > 0; got {args.sigma:g}.")
    return {"metric": args.metric, "exponent": args.exponent, "sigma": args.sigma}


def _progress(args):
    """Progress (with the time left) on stderr unless --quiet: redrawn in place on a terminal,
    elsewhere (a log, a pipe) a line every few seconds (see energystats._progress)."""
    return not getattr(args, "quiet", True) and sys.stderr is not None


def _read(args, path):
    from ._io import read_table

    return read_table(path, fmt=args.input_format, sep=args.sep, decimal=args.decimal)


def _load(args, path, *, by=(), columns=None, option="--columns", options=None):
    """Read ``path``; return ``(df, cols)`` with checked columns (and ``by``), rows with
    missing values refused or (``--dropna``) dropped, the values checked (inf, integers beyond
    float64), each message naming the column, its option (``options``: column -> option; default
    --columns for the columns it names) and the data row — each step reported on stderr."""
    from ._io import check_cells, check_missing, numeric_columns, split_names
    from ._validation import short_list

    df = _read(args, path)
    for b in by:
        if b not in df.columns:
            raise CLIError(f"{path}: no column {b!r} (option --by); the file has "
                           f"{short_list(df.columns)}.")
    wanted = split_names(args.columns) if columns is None else columns
    cols, left_out = numeric_columns(df, wanted, exclude=by, numeric_only=args.numeric_only,
                                     path=path, option=option)
    n0 = df.shape[0]
    if options is None:
        options = _columns_option(args)
    skip = df[cols + list(by)].isna().any(axis=1).to_numpy() if args.dropna else None
    df = check_cells(df, cols, path=path, skip=skip, options=options)
    df = check_missing(df, cols + list(by), path=path, dropna=args.dropna)
    if df.shape[0] == 0:
        raise CLIError(f"{path}: no rows left after --dropna.")
    note = f"{path}: {n0} rows; columns used: {', '.join(cols)}"
    if by:
        note += f"; grouped by {', '.join(by)}"
    if left_out:
        note += f"; left out (--numeric-only): {', '.join(map(str, left_out))}"
    if df.shape[0] < n0:
        note += f"; {n0 - df.shape[0]} row(s) with missing values dropped (--dropna)"
    _note(args, note)
    return df, cols


def _columns_option(args):
    """``{column: '--columns'}`` for the columns that --columns names."""
    from ._io import split_names

    return {c: "--columns" for c in split_names(args.columns) or ()}


def _speak(args, name, cols, options=None, where=""):
    """Let messages of the library that name its argument ``name`` (`` `x` ``) speak of the
    file's columns ``cols`` passed as it, and of the options that chose them (``options``:
    column -> option); see :func:`_user_words`."""
    options = options or {}
    cols = [str(c) for c in cols]
    opts = sorted({options[c] for c in cols if c in options})
    text = ("column " if len(cols) == 1 else "columns ") + ", ".join(repr(c) for c in cols)
    text += (f" (option {'/'.join(opts)})" if opts else "") + where
    args.words = {**getattr(args, "words", {}), name: (text, options)}


def _user_words(args, msg):
    """``msg`` with the library's argument names replaced by the user's words: the one place
    where a message of a library function called by a command is translated (`` `x` is
    constant `` -> ``column 'a' (option --x) is constant``; `` `y` (column 'b') `` -> ``column
    'b' (option --y)``)."""
    import ast
    import re

    words = getattr(args, "words", None)
    if not words:
        return msg

    def say(m):
        text, options = words[m.group(1)]
        if m.group(2) is None:
            return text
        col = ast.literal_eval(m.group(2))
        return f"column {col!r}" + (f" (option {options[col]})" if col in options else "")

    names = "|".join(re.escape(n) for n in words)
    return re.sub(rf"`({names})`(?: \(column ('[^']*'|\"[^\"]*\")\))?", say, msg)


def _check_groups(df, by, path, minimum=2):
    """At least ``minimum`` groups, and not (nearly) one group per row."""
    from ._validation import short_list

    key = df[by[0]] if len(by) == 1 else df[by].astype(str).agg("|".join, axis=1)
    counts = key.value_counts()
    k, n = len(counts), df.shape[0]
    if k < minimum:
        raise CLIError(f"{path}: column {by[0]!r} (option --by) has {k} group(s) "
                       f"({short_list(counts.index)}); need at least {minimum}.")
    if k > max(100, n // 2):
        raise CLIError(f"{path}: column(s) {short_list(by)} (option --by) split the {n} rows into "
                       f"{k} groups ({short_list(counts.index)}); that is not a grouping (a "
                       "measurement column?). Choose a column with a few repeated values.")
    return counts


def _draw_seed(args):
    """The --seed, or a fresh one that is reported so the run can be repeated."""
    from ._validation import seeded_rng

    return seeded_rng(args.seed)[1]


def _pvalue_text(p, se):
    """``p = 0.04 ± 0.014 (Monte Carlo s.e.)``; the ± part only for a Monte Carlo p-value."""
    return f"p = {p:.4g}" + (f" ± {se:.2g} (Monte Carlo s.e.)" if se else "")


def _close_call(p, se, alpha):
    """A second verdict line when p is within 2 Monte Carlo standard errors of alpha."""
    if se and abs(p - alpha) <= 2 * se:
        return (f"note: p is within 2 Monte Carlo standard errors of alpha = {alpha:g}; rerun with "
                "more --resamples (e.g. 10 times as many) for a firmer verdict.")
    return None


def _verdict(args, line, p=None, se=None):
    """With ``--format text``, a plain-language reading after the tables (and a note when p
    is too close to alpha to call)."""
    if args.format == "text":
        if p is not None and p != p:  # NaN: the statistic was not finite
            line = ("verdict: none: the statistic is not finite (degenerate data, e.g. all points "
                    "identical), so there is no p-value.")
        print(f"\n{line}")
        close = None if p is None else _close_call(p, se, args.alpha)
        if close:
            print(close)


def _pvalue_kwargs(args):
    """The early-stopping / asymptotic options of --pvalue-method (the decision is taken at the
    verdict's --alpha)."""
    if args.sequential_h is not None and args.pvalue_method != "sequential":
        raise CLIError(f"option --sequential-h: only with --pvalue-method sequential (got "
                       f"--pvalue-method {args.pvalue_method}, which does not use it).")
    if args.pvalue_method == "full":
        return {}
    if args.pvalue_method == "asymptotic":
        return dict(pvalue_method="asymptotic")
    h = 10 if args.sequential_h is None else args.sequential_h
    if h < 1:
        raise CLIError(f"option --sequential-h: must be >= 1; got {h}.")
    return dict(pvalue_method=args.pvalue_method, sequential_h=h, alpha=args.alpha)


def _test_verdict(args, res, differ, same, extra=""):
    """The verdict line of a test result (with 'decision': the decision, which may be open)."""
    if res.pvalue is None:
        return
    what = _pvalue_text(res.pvalue, res.pvalue_se) + extra
    if res.pvalue_method == "asymptotic":
        what = "asymptotic " + what
    if res.pvalue_method == "decision":
        if res.decision is None:
            _verdict(args, f"verdict: none: {res.n_resamples} resamples did not settle whether p <= "
                           f"alpha = {args.alpha:g} ({what} so far); give more --resamples.")
        elif res.decision == "p <= alpha":
            _verdict(args, f"verdict: {differ} (p <= alpha = {args.alpha:g}, decided after "
                           f"{res.n_resamples} resamples; {what}).")
        else:
            _verdict(args, f"verdict: {same} (p > alpha = {args.alpha:g}, decided after "
                           f"{res.n_resamples} resamples; {what}).")
    elif res.pvalue <= args.alpha:
        _verdict(args, f"verdict: {differ} ({what} <= alpha = {args.alpha:g}).", res.pvalue,
                 res.pvalue_se)
    else:
        _verdict(args, f"verdict: {same} ({what} > alpha = {args.alpha:g}).", res.pvalue,
                 res.pvalue_se)


def _note_run(args, what, res, t0):
    """How many relabellings a test used, how long it took and the seed that repeats it."""
    if getattr(res, "pvalue_method", "full") == "asymptotic":
        _note(args, f"{what}: asymptotic p-value, no resampling, {time.perf_counter() - t0:.2f} s")
        return
    kind = "relabellings (exact)" if res.exact else "resamples"
    seed = f"; seed {res.seed} (pass --seed {res.seed} to repeat)" if res.seed is not None else ""
    from ._sequential import used_text

    used = used_text(res.n_resamples)  # several factors, each stopped on its own: one per factor
    if "/" in used:
        used += " (per factor)"
    _note(args, f"{what}: {used} {kind} in {time.perf_counter() - t0:.2f} s{seed}")


def _record(res, drop=("null_distribution",)):
    """A result's fields as a JSON-ready dict (its attribute names as keys)."""
    import dataclasses

    from ._io import _jsonable

    out = {}
    for f in dataclasses.fields(res):
        if f.name in drop:
            continue
        value = getattr(res, f.name)
        if dataclasses.is_dataclass(value):
            value = _record(value, drop=drop + ("g",))
        elif hasattr(value, "tolist"):
            value = _jsonable(value)
        elif isinstance(value, list):
            value = [_jsonable(v.tolist() if hasattr(v, "tolist") else v) for v in value]
        else:
            value = _jsonable(value)
        out[f.name] = value
    return out


def _with_seed(table, seed):
    """``table`` with a ``seed`` column on its rows that have a p-value (empty elsewhere), so
    that text and CSV output, like JSON, say how to repeat the draws (None: nothing drawn)."""
    if seed is None or "pvalue" not in table.columns:
        return table
    import pandas as pd

    table = table.copy()
    table["seed"] = pd.array([seed if p == p and p is not None else pd.NA
                              for p in table["pvalue"]], dtype="Int64")
    return table


def _print_json(obj):
    """One JSON object on stdout; a number that is not finite (NaN, inf) is written as null
    (JSON has no such numbers: ``NaN``/``Infinity`` tokens are refused by strict parsers)."""
    import json

    from ._io import _jsonable

    json.dump(_jsonable(obj), sys.stdout, indent=2, allow_nan=False)
    sys.stdout.write("\n")


# -- commands ------------------------------------------------------------------

def _cmd_distance(args):
    import itertools

    import pandas as pd

    from . import energy_distance
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
        _print_json({"command": "distance", "columns": cols, **met, "pairs": rows})
        return 0
    table = pd.DataFrame(rows).set_index(["a", "b"])
    emit([("energy distance", table)], args.format)
    return 0


def _distance_row(a, b, xa, xb, met, energy_distance):
    n, m = len(xa), len(xb)
    e = energy_distance(xa, xb, **met)
    return {"a": a, "b": b, "n_a": n, "n_b": m, "energy_distance": e,
            "edist": n * m / (n + m) * e, "between": n * m / (2 * (n + m)) * e}


def _cmd_test(args):
    import numpy as np
    import pandas as pd

    from . import energy_test
    from ._io import emit, split_names

    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    pkw = _pvalue_kwargs(args)
    seed = None if pkw.get("pvalue_method") == "asymptotic" else _draw_seed(args)
    kw = dict(n_resamples=args.resamples, rng=seed, **met, **pkw)  # progress: main's ambient
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
    table = pd.DataFrame([row], index=pd.Index(["energy test"], name="test"))
    emit([("energy test of equal distributions", table)], args.format)
    extra = ("" if res.strata is None else
             f"; groups compared within {len(res.strata)} strata of {args.strata}")
    _test_verdict(args, res, "the groups' distributions differ",
                  "no evidence that the groups' distributions differ", extra)
    return 0


def _strata_column(args, by):
    """``[--strata]`` checked against ``--by``, or ``[]``."""
    if not args.strata:
        return []
    if args.strata in by:
        raise CLIError(f"option --strata: {args.strata!r} is also a --by column.")
    return [args.strata]


def _cmd_disco(args):
    import numpy as np

    from . import disco
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
    emit([(title, table)], args.format)
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


def _cmd_dcor(args):
    import pandas as pd

    from . import distance_stats, independence_test
    from ._io import emit, split_names

    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    xs, ys = split_names(args.x), split_names(args.y)
    overlap = sorted(set(xs) & set(ys))
    if overlap:
        raise CLIError(f"options --x and --y: column(s) {overlap} in both.")
    if args.columns:
        raise CLIError("option --columns: dcor takes its columns from --x and --y.")
    options = {**{c: "--x" for c in xs}, **{c: "--y" for c in ys}}
    df, cols = _load(args, args.file, columns=xs + ys, option="--x/--y", options=options)
    x, y = df[xs], df[ys]
    _speak(args, "x", xs, options)
    _speak(args, "y", ys, options)
    pkw = _pvalue_kwargs(args)
    t0 = time.perf_counter()
    if pkw.get("pvalue_method") == "asymptotic":
        res = independence_test(x, y, **met, **pkw)
        _note_run(args, "chi-square test of independence", res, t0)
        est = res.estimates
    elif args.resamples > 0:
        seed = _draw_seed(args)
        res = independence_test(x, y, n_resamples=args.resamples, rng=seed, **met, **pkw)
        _note_run(args, "independence test", res, t0)
        est = res.estimates
    else:
        res, est = None, distance_stats(x, y, **met)
    row = {"x": ", ".join(map(str, xs)), "y": ", ".join(map(str, ys)), "n": est.n_samples,
           "dcor": est.dcor, "dcov": est.dcov, "dcor_u": est.dcor_u, "dcov_u": est.dcov_u,
           "statistic": est.test_statistic}
    title = "statistic: n dCov^2"
    if res is not None:
        row.update(pvalue=res.pvalue, pvalue_se=res.pvalue_se, n_resamples=res.n_resamples,
                   seed=res.seed)
        if res.pvalue_method != "full":
            row["pvalue_method"] = res.pvalue_method
        if res.pvalue_method == "decision":
            row["decision"] = res.decision
        if res.pvalue_method == "asymptotic":
            row["statistic"] = res.statistic
            title = "statistic: n dcor_u, chi-square test"
    if args.format == "json":
        _print_json({"command": "dcor", **row, **met})
        return 0
    emit([("distance correlation (dcor, dcov: V-statistics, roots; dcor_u, dcov_u: bias-corrected, "
           f"squared; {title})",
           pd.DataFrame([row]).set_index(["x", "y"]))], args.format)
    if res is not None:
        _test_verdict(args, res, "x and y are dependent", "no evidence of dependence between x and y")
    return 0


def _cmd_dcor_matrix(args):
    from . import distance_correlation_matrix
    from ._io import emit

    if not (0.0 < args.exponent <= 2.0):
        raise CLIError(f"option --exponent: must lie in (0, 2]; got {args.exponent:g}.")
    df, cols = _load(args, args.file)
    if len(cols) < 2:
        raise CLIError(f"{args.file}: dcor-matrix needs at least 2 numeric columns; got {cols}.")
    _speak(args, "data", cols)
    adjust = None if args.adjust == "none" else args.adjust
    if args.pvalue_method == "permutation":
        args.pvalues = "permutation"
    elif args.pvalues:
        args.pvalues = "ttest"
    else:
        args.pvalues = None
    if args.resamples is not None and args.resamples < 1:
        raise CLIError(f"option --resamples: must be >= 1; got {args.resamples}.")
    if args.pvalues != "permutation" and (args.resamples is not None or args.seed is not None):
        raise CLIError("options --resamples/--seed: only with --pvalue-method permutation.")
    seed = _draw_seed(args) if args.pvalues == "permutation" else None
    t0 = time.perf_counter()
    res = distance_correlation_matrix(df[cols], exponent=args.exponent, estimator=args.estimator,
                                      pvalue=args.pvalues, adjust=adjust,
                                      n_resamples=args.resamples, rng=seed)
    _note(args, f"distance correlation matrix of {len(cols)} columns in "
                f"{time.perf_counter() - t0:.2f} s"
                + (f" ({res.n_resamples} permutations, seed {res.seed})" if seed is not None else ""))
    if args.format == "json":
        out = {"command": "dcor-matrix", "columns": cols, "estimator": args.estimator,
               "exponent": args.exponent, "dcor": res.dcor.to_numpy().tolist()}
        if args.pvalues:
            out.update(pvalue_method=args.pvalues, adjust=args.adjust,
                       pvalues=res.pvalues.to_numpy().tolist(),
                       adjusted=res.adjusted.to_numpy().tolist())
        if seed is not None:
            out.update(n_resamples=res.n_resamples, exact=res.exact, seed=res.seed)
        _print_json(out)
        return 0
    sections = [("distance correlation" + (" (bias-corrected)" if args.estimator == "U" else ""),
                 res.dcor.rename_axis("column"))]  # named: CSV gets its row labels
    if args.pvalues:
        how = ("t-test" if args.pvalues == "ttest" else
               f"permutation ({res.n_resamples} permutations"
               + (", all of them" if res.exact else f", seed {res.seed}") + ")")
        sections.append((f"{how} p-values, adjusted over the pairs ({args.adjust})",
                         res.adjusted.rename_axis("column")))
    emit(sections, args.format)
    return 0


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

    from . import gof_test, normality_test, poisson_test
    from ._gof_families import ALIASES
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
        raise CLIError(f"--dist {args.dist}: the test takes one column (--column); got {cols}. "
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
    emit([(title, pd.DataFrame(rows).set_index(["distribution", "statistic_name"]))], args.format)
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


def _cmd_cluster(args):
    import numpy as np
    import pandas as pd

    from ._io import check_out_path, emit

    met = _metric_kwargs(args)
    path = args.file
    if args.out:
        check_out_path(args.out, inputs=[path])
    df, cols = _load(args, path)
    _speak(args, "X", cols, _columns_option(args),
           " (their z-scores, --standardize)" if args.standardize else "")
    if args.out and args.label_column in _read(args, path).columns:
        raise CLIError(f"option --label-column: {path} already has a column {args.label_column!r}; "
                       "choose another name.")
    n = df.shape[0]
    if not (2 <= args.k <= n):
        raise CLIError(f"option -k/--clusters: must be an integer in [2, n_samples={n}] "
                       f"({path}); got {args.k}.")
    if args.n_init < 1:
        raise CLIError(f"option --n-init: must be >= 1; got {args.n_init}.")
    if args.test and args.resamples < 1:
        raise CLIError(f"option --resamples: --test needs at least 1; got {args.resamples}.")
    pkw = _pvalue_kwargs(args)
    if pkw and not args.test:
        raise CLIError(f"option --pvalue-method {args.pvalue_method}: only with --test (the "
                       "significance check is the test that stops early).")
    X, scaling = _cluster_data(args, df[cols], cols)
    seed = _draw_seed(args)
    opts = dict(algorithm=args.algorithm, n_init=args.n_init, **met)
    t0 = time.perf_counter()
    import warnings

    from . import cluster_test, dispersion, energy_clustering
    from .clustering import ColumnScaleWarning

    on = " (z-scores of the columns)" if scaling is not None else ""
    with warnings.catch_warnings():
        # _cluster_data has said it, with the command line's advice
        warnings.simplefilter("ignore", ColumnScaleWarning)
        if args.test:
            _note(args, f"clustering {n} rows{on} into k={args.k} ({args.algorithm}, {args.n_init} "
                        f"restarts), then the same on {args.resamples} reference data sets drawn "
                        f"from the {args.null!r} null; seed {seed}")
            tres = cluster_test(X, args.k, null=args.null, n_resamples=args.resamples, rng=seed,
                                random_state=seed, **opts, **pkw)  # progress: main's ambient
            labels = np.asarray(tres.labels)
        else:
            _note(args, f"clustering {n} rows{on} into k={args.k} ({args.algorithm}, {args.n_init} "
                        f"restarts); seed {seed}")
            labels = np.asarray(energy_clustering(X, args.k, rng=seed, **opts).labels)
    _note(args, f"  done in {time.perf_counter() - t0:.2f} s (pass --seed {seed} to repeat)")
    disp = dispersion(X, labels, **met)
    sizes = np.bincount(labels, minlength=args.k)
    stat = disp.S / disp.T if disp.T > 0 else float("nan")
    if args.out:
        _write_labels(args, path, df, labels)
    if args.format == "json":
        obj = {"command": "cluster", "k": args.k, "n": n, "columns": cols, "seed": seed,
               "algorithm": args.algorithm, **met, "standardize": scaling,
               "partition": {"W": disp.W, "S": disp.S, "T": disp.T, "F": disp.F, "statistic": stat},
               "clusters": [{"cluster": c, "size": int(s)} for c, s in enumerate(sizes)],
               "check": None}
        if args.test:
            obj["check"] = {**_record(tres, drop=("null_distribution", "labels", "dispersion",
                                                  "columns")), "alpha": args.alpha}
        _print_json(obj)
        return 0
    summary = {"k": args.k, "n": n, "W": disp.W, "S": disp.S, "T": disp.T, "F": disp.F,
               "statistic": stat, "seed": seed}
    sections = [("fitted partition (W + S = T; statistic = S/T)",
                 pd.DataFrame([summary], index=pd.Index(["fit"], name="partition"))),
                ("clusters", pd.DataFrame({"size": sizes},
                                          index=pd.Index(np.arange(args.k), name="cluster")))]
    if scaling is not None:
        sections.insert(0, ("standardized columns: the clustering and W, S, T use z = (x - mean) / sd "
                            "(sd with divisor n - 1)",
                            pd.DataFrame(scaling, index=pd.Index(cols, name="column"))))
    if args.test:
        check = {"statistic": tres.statistic, "null": args.null, "n_resamples": tres.n_resamples,
                 "pvalue": tres.pvalue, "pvalue_se": tres.pvalue_se}
        if tres.pvalue_method != "full":
            check["pvalue_method"] = tres.pvalue_method
        if tres.pvalue_method == "decision":
            check["decision"] = tres.decision
        sections.append(("significance check: S/T against the same clustering of reference data",
                         pd.DataFrame([check], index=pd.Index(["cluster_test"], name="check"))))
    emit(sections, args.format)
    if args.test:
        ref = ("a Gaussian with the data's mean and covariance" if args.null == "gaussian"
               else "a uniform box along the data's principal axes")
        what = _pvalue_text(tres.pvalue, tres.pvalue_se)
        if tres.pvalue_method != "full":
            _test_verdict(args, tres, f"more clustered than {ref}",
                          f"no evidence of more cluster structure than {ref}")
        elif tres.pvalue <= args.alpha:
            _verdict(args, f"verdict: more clustered than {ref} ({what} <= alpha = {args.alpha:g}).",
                     tres.pvalue, tres.pvalue_se)
        else:
            _verdict(args, f"verdict: no evidence of more cluster structure than {ref} "
                           f"({what} > alpha = {args.alpha:g}).", tres.pvalue, tres.pvalue_se)
    return 0


def _cluster_data(args, X, cols):
    """``(data, scaling)``: with --standardize the z-scores of the columns and their means and
    sds (divisor n - 1); else the data as read, with a ColumnScaleWarning when the columns'
    standard deviations differ 1000-fold or more."""
    import warnings

    import numpy as np

    from .clustering import ColumnScaleWarning, column_scale_message

    if not args.standardize:
        msg = column_scale_message(X.to_numpy(dtype=np.float64), [str(c) for c in cols],
                                   advice="If their units are not comparable, pass --standardize "
                                          "to cluster the columns' z-scores, (x - mean) / sd.",
                                   name=args.file)
        if msg is not None:
            warnings.warn(msg, ColumnScaleWarning)
        return X, None
    X = X.astype(np.float64)
    mean, sd = X.mean(), X.std(ddof=1)
    bad = [c for c in cols if not 0.0 < sd[c] < np.inf]
    if bad:
        raise CLIError(f"option --standardize: column(s) {bad} of {args.file} have standard deviation "
                       f"{[float(sd[c]) for c in bad]} and cannot be scaled to 1 (a constant column "
                       "adds nothing to the distances); leave them out with --columns.")
    return (X - mean) / sd, {"mean": {str(c): float(mean[c]) for c in cols},
                             "sd": {str(c): float(sd[c]) for c in cols}}


def _write_labels(args, path, df, labels):
    """The input rows with a label column appended; text files keep every field as written."""
    import pandas as pd

    from ._io import input_kind, read_text_fields, write_data

    col = args.label_column
    in_kind = input_kind(path, args.input_format)
    out_kind = os.path.splitext(args.out)[1].lower()
    if in_kind in ("csv", "tsv") and out_kind in (".csv", ".tsv", ".tab", ".txt"):
        # the fields exactly as they stand in the input (no number is re-formatted)
        full = read_text_fields(path, fmt=args.input_format, sep=args.sep, decimal=args.decimal)
        text = pd.Series([str(v) for v in labels], index=df.index)
        full[col] = text.reindex(full.index).fillna("")
    else:
        full = _read(args, path)
        full[col] = pd.Series(labels, index=df.index).reindex(full.index).astype("Int64")
    write_data(full, args.out)
    _note(args, f"labels written to {args.out} (column {col!r} appended to the input rows"
                + ("; rows dropped by --dropna have an empty label)" if len(full) > len(df) else ")"))


def _adjusted_rand(a, b):
    """Hubert & Arabie's adjusted Rand index of two labelings (1: the same partition, about 0:
    no better than chance), from their contingency table."""
    import numpy as np
    import pandas as pd

    table = pd.crosstab(np.asarray(a), np.asarray(b)).to_numpy().astype(float)

    def pairs(x):
        return float((x * (x - 1) / 2).sum())

    index, rows, cols = pairs(table), pairs(table.sum(1)), pairs(table.sum(0))
    n = pairs(np.array([table.sum()]))
    expected = rows * cols / n
    top = (rows + cols) / 2
    return 1.0 if top == expected else (index - expected) / (top - expected)


def _cmd_demo(args):
    """The package's main path on Fisher's iris data: how far apart the species are (energy
    distances, W/S/T), whether they differ (k-sample test), and whether energy clustering of
    the unlabelled measurements finds them (cluster_test against the Gaussian reference,
    crosstab and adjusted Rand index with the species)."""
    import itertools

    import pandas as pd

    from . import cluster_test, dispersion, energy_distance, energy_test
    from .datasets import load_iris

    if not (0.0 < args.exponent <= 2.0):
        raise CLIError(f"option --exponent: must lie in (0, 2]; got {args.exponent:g}.")
    if args.resamples < 1:
        raise CLIError(f"option --resamples: must be >= 1; got {args.resamples}.")
    seed, R = args.seed, args.resamples
    df = load_iris()
    features = [c for c in df.columns if c != "species"]
    print("Fisher's iris data: 150 flowers, features", ", ".join(features))
    print(f"metric = 'energy', exponent = {args.exponent}; seed = {seed} (energystats demo "
          f"--seed {seed} repeats this run)\n")
    rows = []
    for a, b in itertools.combinations(df["species"].cat.categories, 2):
        xa = df.loc[df["species"] == a, features]
        xb = df.loc[df["species"] == b, features]
        e = energy_distance(xa, xb, exponent=args.exponent)
        sub = df[df["species"].isin([a, b])]
        res = dispersion(sub[features], sub["species"].astype(str), exponent=args.exponent)
        n1, n2 = len(xa), len(xb)
        rows.append({"pair": f"{a} vs {b}", "E": e, "edist (R)": n1 * n2 / (n1 + n2) * e,
                     "W": res.W, "S": res.S, "T": res.T, "F": res.F})
    table = pd.DataFrame(rows).set_index("pair")
    with pd.option_context("display.float_format", "{:.6g}".format, "display.width", 120):
        print("1. Energy distance and dispersion per pair of species")
        print(table.to_string())
        res = dispersion(df, by="species", exponent=args.exponent)
        print("\n   Dispersion of the three species (W + S = T)")
        print(res.to_frame().to_string())

        test = energy_test(df, by="species", exponent=args.exponent, n_resamples=R, rng=seed)
        print(f"\n2. Do the species differ? Energy test of equal distributions (k = 3 samples)\n"
              f"   statistic = {test.statistic:.6g}, p = {test.pvalue:.4g} ± "
              f"{test.pvalue_se:.2g} (Monte Carlo s.e.; {test.n_resamples} permutations,\n"
              f"   seed {test.seed}); the smallest p-value {R} permutations can give is "
              f"{1 / (R + 1):.3g}.")

        check = cluster_test(df[features], 3, exponent=args.exponent, n_resamples=R,
                             rng=seed, random_state=seed)
        labels = pd.Series(check.labels, index=df.index, name="cluster")
        print(f"\n3. Energy clustering of the measurements without the species (k = 3, "
              f"Hartigan)\n   S/T of the fit = {check.statistic:.4g}, against the same "
              f"clustering of {check.n_resamples} Gaussian reference data sets\n   with the "
              f"data's mean and covariance (cluster_test): p = {check.pvalue:.4g} ± "
              f"{check.pvalue_se:.2g} (seed {seed}):\n   "
              + ("more clustered than a Gaussian" if check.pvalue <= 0.05 else
                 "no evidence of more cluster structure than a Gaussian")
              + " at alpha = 0.05. A small p-value says 'more clustered than one\n   Gaussian', "
              "not that the clusters are the species: step 4 compares them.")

        tab = pd.crosstab(df["species"], labels)
        ari = _adjusted_rand(df["species"].astype(str), labels)
        agree = int(tab.max(axis=1).sum()) if len(set(tab.idxmax(axis=1))) == tab.shape[0] else None
        print("\n4. Clusters against the species (crosstab)")
        print(tab.to_string())
        print(f"   adjusted Rand index = {ari:.3f} (1: the same partition; about 0: chance)"
              + (f";\n   {agree} of {len(df)} flowers ({agree / len(df):.0%}) in the cluster "
                 "where most of their species is" if agree is not None else ""))
    return 0


# -- parser --------------------------------------------------------------------

def _common_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("output")
    g.add_argument("--format", choices=FORMATS, default="text",
                   help="table format on stdout (default: text); json: one object whose keys "
                        "are the result's fields")
    g.add_argument("--quiet", "-q", action="store_true", help="no notes or progress on stderr")
    g.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    return p


def _data_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("data")
    g.add_argument("--columns", "-c", action="append", metavar="COLS",
                   help="columns to use, comma-separated or repeated (default: every column "
                        "except --by; a non-numeric one is an error unless --numeric-only)")
    g.add_argument("--numeric-only", action="store_true",
                   help="leave out wholly non-numeric columns (text, dates) instead of failing; "
                        "they are listed on stderr")
    g.add_argument("--dropna", action="store_true",
                   help="drop rows with missing values in the used columns instead of failing")
    g.add_argument("--input-format", choices=INPUT_FORMATS, default=None,
                   help="file format when the suffix does not say (default: from the suffix)")
    g.add_argument("--sep", type=_one_char, default=None,
                   help="field separator of text files (default: ',' for .csv, tab for .tsv)")
    g.add_argument("--decimal", type=_one_char, default=None,
                   help="decimal mark of text files (default: '.'; ',' for 1,5)")
    return p


def _metric_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("semimetric")
    g.add_argument("--metric", choices=("energy", "laplacian", "gaussian"), default="energy",
                   help="semimetric rho (default: energy, |x-y|^exponent)")
    g.add_argument("--exponent", type=float, default=1.0,
                   help="exponent of the energy metric, in (0, 2] (default: 1)")
    g.add_argument("--sigma", type=float, default=1.0,
                   help="scale of the laplacian/gaussian metrics, > 0 (default: 1)")
    return p


_FMT = argparse.RawDescriptionHelpFormatter


def _wrap(text):
    """Descriptions are wrapped here; epilogs (examples) stay as written."""
    return textwrap.fill(" ".join(text.split()), width=79)


def _add_inference_args(p, resamples, what):
    """--resamples, --seed and --alpha, shared by test, disco and cluster."""
    p.add_argument("--resamples", "-R", type=int, default=resamples,
                   help=f"{what} (default: {resamples})")
    p.add_argument("--seed", type=_seed, default=None,
                   help="random seed, an integer >= 0 (default: a fresh one, printed on stderr "
                        "and in the output so that the run can be repeated)")
    p.add_argument("--alpha", type=_level, default=0.05, help="level of the verdict line (default: 0.05)")


def _add_pvalue_method_args(p, asymptotic):
    """--pvalue-method and --sequential-h, for the tests that stop early (or need no resampling)."""
    choices = ("full", "sequential", "decision") + (("asymptotic",) if asymptotic else ())
    p.add_argument("--pvalue-method", choices=choices, default="full",
                   help="full: all --resamples; sequential: stop at the h-th resample reaching the "
                        "statistic (Besag & Clifford), p = h/L; decision: stop once p <= alpha or "
                        "p > alpha is clear (Gandy, error <= 1e-3)"
                        + ("; asymptotic: no resampling, the limit law's p-value (opt-in, see the "
                           "docs' validity table)" if asymptotic else "") + " (default: full)")
    p.add_argument("--sequential-h", type=int, default=None,
                   help="exceedances that stop --pvalue-method sequential (default: 10)")


_EXIT_CODES = ("exit status: 0 success; 2 bad usage or bad data; 3 output could not be written "
               "(closed pipe or stdout, full disk, permission); 4 out of memory; 130 interrupted")


def build_parser():
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="energystats",
        description=_wrap("Energy statistics from the command line: energy distance, k-sample "
                          "tests, DISCO and energy clustering of CSV, TSV or Parquet files."),
        epilog="Run 'energystats <command> --help' for the options of a command.\n"
               "example: energystats test data.csv --by group --resamples 999 --seed 1\n"
               + textwrap.fill(_EXIT_CODES, width=79),
        formatter_class=_FMT,
    )
    parser.add_argument("--version", action="version", version=f"energystats {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    common, data, metric = _common_parent(), _data_parent(), _metric_parent()

    p = sub.add_parser(
        "distance", parents=[data, metric, common], formatter_class=_FMT,
        help="energy distance between two samples (two files, or groups of one file)",
        description=_wrap("Two-sample energy distance E(A, B) (V-statistic, no square root), with "
                          "R energy's edist = nm/(n+m) E and the between statistic "
                          "S = nm/(2(n+m)) E."),
        epilog="examples:\n  energystats distance A.csv B.csv --columns x,y\n"
               "  energystats distance data.csv --by group --format csv",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="A.csv B.csv, or one file with --by")
    p.add_argument("--by", action="append", help="grouping column: E for every pair of groups")
    p.set_defaults(func=_cmd_distance)

    p = sub.add_parser(
        "test", parents=[data, metric, common], formatter_class=_FMT,
        help="permutation test of equal distributions (k samples)",
        description=_wrap("Energy test of equal distributions of the groups of one file (--by) or "
                          "of several files (one group each): statistic "
                          "sum_{i<j} n_i n_j/(n_i+n_j) E(C_i, C_j) (R energy's eqdist.etest), "
                          "permutation p-value (1 + #{null >= observed}) / (R + 1) with its Monte "
                          "Carlo standard error."),
        epilog="examples:\n  energystats test data.csv --by group --resamples 999 --seed 1\n"
               "  energystats test A.csv B.csv C.csv --columns x,y",
    )
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="one CSV, TSV or Parquet file with --by, or one file per group")
    p.add_argument("--by", action="append", help="grouping column (with one file)")
    p.add_argument("--strata", metavar="COLUMN",
                   help="strata column: rows relabelled within strata, groups compared within "
                        "them (blocked designs, repeated measures)")
    _add_inference_args(p, 999, "permutations")
    _add_pvalue_method_args(p, asymptotic=True)
    p.set_defaults(func=_cmd_test)

    p = sub.add_parser(
        "disco", parents=[data, metric, common], formatter_class=_FMT,
        help="distance components (DISCO) analysis: nonparametric ANOVA",
        description=_wrap("DISCO decomposition T = S + W with F = (S/(k-1)) / (W/(n-k)) and its "
                          "permutation p-value. Several --by columns give one row per factor, each "
                          "tested given the others (relabelled within the other factors' cells); "
                          "--marginal gives R energy's table instead, where each factor is tested "
                          "as if alone (an effect of an associated factor makes it significant)."),
        epilog="examples:\n  energystats disco data.csv --by group --resamples 999 --seed 1\n"
               "  energystats disco data.csv --by dose,supplement --format json",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--by", action="append", required=True,
                   help="grouping column(s), comma-separated or repeated")
    p.add_argument("--strata", metavar="COLUMN",
                   help="strata column: groups compared and relabelled within strata")
    p.add_argument("--marginal", action="store_true",
                   help="several factors: marginal tests, each factor as if alone (R energy's "
                        "disco) instead of each given the others")
    _add_inference_args(p, 999, "permutations")
    _add_pvalue_method_args(p, asymptotic=False)
    p.set_defaults(func=_cmd_disco)

    p = sub.add_parser(
        "dcor", parents=[data, metric, common], formatter_class=_FMT,
        help="distance correlation of two sets of columns, with a permutation test",
        description=_wrap("Distance covariance and correlation of the columns --x and --y of one "
                          "file (rows are paired observations): dCor and dCov (V-statistics, "
                          "roots, as R energy's dcor/dcov), their bias-corrected (U) forms, and "
                          "the permutation test of independence (statistic n dCov^2, as R's "
                          "dcov.test; --resamples 0 skips it)."),
        epilog="example:\n  energystats dcor data.csv --x a,b --y c --resamples 999 --seed 1",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--x", action="append", required=True, help="columns of x, comma-separated")
    p.add_argument("--y", action="append", required=True, help="columns of y, comma-separated")
    _add_inference_args(p, 999, "permutations of the test of independence")
    _add_pvalue_method_args(p, asymptotic=True)
    p.set_defaults(func=_cmd_dcor)

    p = sub.add_parser(
        "dcor-matrix", parents=[data, common], formatter_class=_FMT,
        help="distance correlation of every pair of columns",
        description=_wrap("Distance correlation of every pair of numeric columns of one file "
                          "(each column one variable), optionally with p-values (t-test, or "
                          "permutation test of every pair with shared permutations) adjusted over "
                          "the pairs (Holm or Benjamini-Hochberg)."),
        epilog="examples:\n  energystats dcor-matrix data.csv --pvalues --adjust bh --format csv\n"
               "  energystats dcor-matrix data.csv --pvalue-method permutation -R 9999 --seed 1",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--exponent", type=float, default=1.0, help="exponent of |x-y|, in (0, 2] (default: 1)")
    p.add_argument("--estimator", choices=("V", "U"), default="V",
                   help="V: dCor (root); U: bias-corrected dCor (default: V)")
    p.add_argument("--pvalues", action="store_true", help="add p-values adjusted over the pairs")
    p.add_argument("--pvalue-method", choices=("ttest", "permutation"), default="ttest",
                   help="ttest, or the permutation test of every pair (implies --pvalues; "
                        "default: ttest)")
    p.add_argument("--adjust", choices=("holm", "bh", "none"), default="holm",
                   help="adjustment of the p-values over the pairs (default: holm)")
    p.add_argument("--resamples", "-R", type=int, default=None,
                   help="permutations with --pvalue-method permutation (default: 999, more for "
                        "many pairs, so that the adjusted p-values can reach 0.05)")
    p.add_argument("--seed", type=_seed, default=None,
                   help="random seed of the permutations, an integer >= 0 (default: a fresh one, "
                        "printed)")
    p.set_defaults(func=_cmd_dcor_matrix)

    p = sub.add_parser(
        "gof", parents=[data, common], formatter_class=_FMT,
        help="energy goodness-of-fit test: normality (uni- or multivariate), Poisson, SciPy laws",
        description=_wrap("Energy goodness-of-fit test of one column (--column) against a "
                          "distribution (--dist: normal, poisson, or a scipy.stats name such as "
                          "exponential, gamma, lognormal, weibull), parameters estimated and "
                          "re-estimated in every parametric bootstrap sample; with --dist normal "
                          "and several --columns, the test of multivariate normality (R energy's "
                          "mvnorm.test)."),
        epilog="examples:\n  energystats gof data.csv --column x --dist normal --seed 1\n"
               "  energystats gof data.csv --columns a,b,c --dist normal -R 199\n"
               "  energystats gof data.csv --column x --dist normal --method limit\n"
               "  energystats gof counts.csv --column n --dist poisson --statistic all\n"
               "  energystats gof data.csv --column x --dist gamma --param loc=0",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--column", help="the column to test (or --columns for multivariate normality)")
    p.add_argument("--dist", default="normal",
                   help="hypothesised family: normal (default), poisson, or a scipy.stats name")
    p.add_argument("--method", choices=("bootstrap", "limit"), default="bootstrap",
                   help="p-value: parametric bootstrap (default) or, for univariate normality, "
                        "the limit distribution")
    p.add_argument("--statistic", choices=("energy", "m-cvm", "m-ad", "all"), default="energy",
                   help="with --dist poisson: the statistic (default: energy)")
    p.add_argument("--param", action="append", type=_param_value, metavar="NAME=VALUE",
                   help="a parameter held fixed (SciPy name, e.g. loc=0); repeatable; the others "
                        "are estimated")
    _add_inference_args(p, 999, "parametric bootstrap samples")
    _add_pvalue_method_args(p, asymptotic=False)
    p.set_defaults(func=_cmd_gof)

    p = sub.add_parser(
        "cluster", parents=[data, metric, common], formatter_class=_FMT,
        help="energy clustering (Hartigan's method) with a calibrated significance check",
        description=_wrap("Energy clustering into k groups; prints W, S, T, F of the fitted "
                          "partition and, with --test, the significance check: S/T of the fit "
                          "against the same clustering of reference data sets with no clusters: "
                          "data sets with exactly the data's mean and covariance, drawn as a "
                          "Gaussian sample would be (exact level for every Gaussian population), "
                          "or (--null uniform) from a uniform box with the data's covariance "
                          "(approximate). A small p-value says 'more clustered than a Gaussian' "
                          "(or than that box), not 'the clusters are real': a single uniform "
                          "population is more clustered than a Gaussian too. The naive "
                          "permutation test is invalid after clustering and is not offered here."),
        epilog="example:\n  energystats cluster data.csv -k 3 --test --resamples 99 --seed 1 "
               "--out labels.csv",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("-k", "--clusters", dest="k", type=int, required=True, help="number of clusters")
    p.add_argument("--algorithm", choices=("hartigan", "lloyd", "spectral", "exact-1d"),
                   default="hartigan", help="clustering algorithm (default: hartigan)")
    p.add_argument("--n-init", type=int, default=10, help="restarts, best W kept (default: 10)")
    p.add_argument("--standardize", action="store_true",
                   help="cluster the z-scores of the columns, (x - mean) / sd (sd with divisor "
                        "n - 1), instead of the raw values; W, S, T are then those of the "
                        "z-scores, and the means and sds are printed. Without it, columns whose "
                        "standard deviations differ 1000-fold or more draw a warning")
    p.add_argument("--test", action="store_true",
                   help="run the significance check (re-clusters --resamples null data sets)")
    p.add_argument("--null", choices=("gaussian", "uniform"), default="gaussian",
                   help="reference null of the check (default: gaussian)")
    _add_inference_args(p, 99, "reference data sets of the check")
    _add_pvalue_method_args(p, asymptotic=False)
    p.add_argument("--out", "-o", metavar="PATH",
                   help="write the input rows with a label column appended (.csv, .tsv, "
                        ".parquet, .json); text input written as text keeps every field as it is")
    p.add_argument("--label-column", default="cluster", help="name of the label column (default: cluster)")
    p.set_defaults(func=_cmd_cluster)

    p = sub.add_parser(
        "demo", formatter_class=_FMT,
        help="the main path on the bundled iris data: distances, test, clustering",
        description=_wrap("On Fisher's iris data: energy distances and the W/S/T/F dispersion "
                          "table of the species, the k-sample energy test with its p-value and "
                          "seed, energy clustering of the unlabelled measurements with its "
                          "significance check against the Gaussian reference (cluster_test), and "
                          "how the clusters agree with the species (crosstab, adjusted Rand "
                          "index). A few seconds."),
        epilog="example:\n  energystats demo --seed 1 --resamples 199",
    )
    p.add_argument("--exponent", type=float, default=1.0, help="exponent of the energy metric, in (0, 2]")
    p.add_argument("--resamples", "-R", type=int, default=99,
                   help="permutations of the test and reference data sets of the check (default: 99)")
    p.add_argument("--seed", type=_seed, default=1, help="random seed (default: 1)")
    p.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    p.set_defaults(func=_cmd_demo)
    return parser


# -- running a command -----------------------------------------------------------

def _error(args, msg, kind="error"):
    msg = _user_words(args, msg)
    if sys.stderr is not None:
        try:
            print(f"energystats {getattr(args, 'command', None) or ''}: {kind}: {msg}".replace("  ", " "),
                  file=sys.stderr, flush=True)
        except OSError:  # pragma: no cover - stderr gone too
            pass


def _silence_stdout():
    """Point the stdout descriptor at /dev/null so that the exit-time flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, AttributeError, ValueError):  # pragma: no cover
        pass


def _where(args):
    return getattr(args, "file", None) or ", ".join(getattr(args, "files", None) or [])


def main(argv=None):
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    import warnings

    def one_line_warning(message, category, filename, lineno, file=None, line=None):
        _error(args, str(message), kind=f"warning ({category.__name__})")

    warnings.showwarning = one_line_warning
    if sys.stdout is None:
        _error(args, "standard output is closed; nothing could be written (redirect it to a file "
                     "instead of closing it).")
        return EXIT_OS
    try:
        from ._progress import ambient

        with ambient(_progress(args)):  # also for calls without a progress argument of their own
            code = args.func(args)
        sys.stdout.flush()
        return code
    except CLIError as exc:
        if args.debug:
            raise
        _error(args, str(exc))
        return EXIT_USAGE
    except (ValueError, TypeError, KeyError) as exc:
        if args.debug:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        where = _where(args)
        _error(args, f"{where}: {msg}" if where and not str(msg).startswith(where) else msg)
        return EXIT_USAGE
    except BrokenPipeError:
        _silence_stdout()
        _error(args, "the output pipe was closed before all output was written (broken pipe).")
        return EXIT_OS
    except MemoryError:
        if args.debug:
            raise
        _error(args, "out of memory: the data or the number of resamples are too large for this "
                     "machine; try fewer --resamples, fewer rows or columns, or a machine with "
                     "more memory.")
        return EXIT_MEMORY
    except OSError as exc:
        if args.debug:
            raise
        if exc.errno in (errno.EPIPE, errno.EBADF, errno.ENOSPC, errno.EIO, errno.EDQUOT):
            _silence_stdout()
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ENOSPC:
            reason = f"{reason} (the disk is full)"
        _error(args, f"could not write the output: {reason}.")
        return EXIT_OS
    except KeyboardInterrupt:  # pragma: no cover
        _error(args, "interrupted.")
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
