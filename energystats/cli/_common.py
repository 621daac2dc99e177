"""What the commands share: reading the input, the seed, the notes on stderr, the
p-value text and verdict, the JSON record.  Only the standard library is imported here.
"""
from __future__ import annotations

import argparse
import sys
import time

from .._core._errors import CLIError


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


def _int_at_least(low):
    """An argparse type: an integer >= ``low``."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}; got {text!r}")
        return value
    return parse


#: argparse type of --seed: an integer >= 0
_seed = _int_at_least(0)


def _one_char(text):
    """argparse type of --sep/--decimal: one character (``\\t`` or 'tab' for a tab)."""
    if text in ("\\t", "tab", "TAB"):
        return "\t"
    if len(text) != 1:
        raise argparse.ArgumentTypeError(f"must be one character; got {text!r}")
    return text


def _metric_kwargs(args):
    """Validate --metric/--exponent/--sigma here so errors name the option.  A SciPy name with
    its parameter (``--metric minkowski:p=1.5``, parsed by the parser into ``(name, params)``)
    is passed on as the library's pair ``metric=(name, params)``."""
    import math

    args.metric = _metric_pair(args.metric)
    metric, params = args.metric if isinstance(args.metric, tuple) else (args.metric, None)
    if params is not None:
        for option, value in (("--exponent", args.exponent), ("--sigma", args.sigma)):
            if value != 1.0:
                raise CLIError(f"option {option}: --metric {metric} has no such parameter "
                               f"(its parameter goes after the colon: --metric "
                               f"{_metric_text(args.metric)}); got {option} {value:g}.")
        kw = {"metric": (metric, params), "exponent": 1.0, "sigma": 1.0}
        if getattr(args, "no_check_negative_type", False):
            kw["check_negative_type"] = False
        return kw
    if args.metric == "energy" and not (0.0 < args.exponent <= 2.0):
        raise CLIError(f"option --exponent: must lie in (0, 2]; got {args.exponent:g}.")
    if args.metric in ("laplacian", "gaussian") and not (math.isfinite(args.sigma) and args.sigma > 0):
        raise CLIError(f"option --sigma: must be a finite number > 0; got {args.sigma:g}.")
    if args.metric == "energy" and args.sigma != 1.0:
        raise CLIError(f"option --sigma: is for --metric laplacian or gaussian; --metric energy "
                       f"would ignore it (got --sigma {args.sigma:g}).")
    if args.metric in ("laplacian", "gaussian") and args.exponent != 1.0:
        raise CLIError(f"option --exponent: is for --metric energy; --metric {args.metric} would "
                       f"ignore it (got --exponent {args.exponent:g}).")
    if args.metric not in ("energy", "laplacian", "gaussian"):  # SciPy's names: no parameter
        for option, value in (("--exponent", args.exponent), ("--sigma", args.sigma)):
            if value != 1.0:
                raise CLIError(f"option {option}: --metric {args.metric} has no parameter (SciPy's "
                               f"'euclidean'/'sqeuclidean' are --metric energy with --exponent 1/2); "
                               f"got {option} {value:g}.")
    kw = {"metric": args.metric, "exponent": args.exponent, "sigma": args.sigma}
    if getattr(args, "no_check_negative_type", False):
        kw["check_negative_type"] = False
    return kw


#: SciPy's names that take a parameter (--metric NAME:KEY=VALUE): the key and an example
_METRIC_PARAMS = {"minkowski": ("p", "minkowski:p=1.5"), "seuclidean": ("V", "'seuclidean:V=1;2;3'"),
                  "mahalanobis": ("VI", "'mahalanobis:VI=2;0.5;0.5;1'")}


def _metric_pair(text):
    """--metric's value: a name, or for SciPy's parametrised names NAME:KEY=VALUE[,KEY=VALUE...]
    (vector values separated by ';', VI's d*d values row by row) as the library's pair
    ``(NAME, {KEY: VALUE})``, checked by the library's own validators; an error is one line
    naming the option."""
    if isinstance(text, tuple):
        return text
    name, colon, rest = text.partition(":")
    if name not in _METRIC_PARAMS:
        if colon:
            own = {"energy": " (its parameter is --exponent)", "laplacian": " (its parameter is "
                   "--sigma)", "gaussian": " (its parameter is --sigma)"}.get(name, "")
            raise CLIError(f"option --metric: {name} takes no parameter after ':'{own}; only "
                           f"{', '.join(_METRIC_PARAMS)} do; got {text!r}.")
        return name
    key, example = _METRIC_PARAMS[name]
    if not rest.strip():
        raise CLIError(f"option --metric: {name} needs its parameter {key}, written "
                       f"NAME:{key}=VALUE, e.g. --metric {example}.")
    params = {}
    for item in rest.split(","):
        k, eq, v = (s.strip() for s in item.partition("="))
        if not eq or not k or not v:
            raise CLIError(f"option --metric: {name}'s parameter must be written KEY=VALUE, e.g. "
                           f"--metric {example}; got {item.strip()!r}.")
        if k != key:
            raise CLIError(f"option --metric: {name} takes the parameter {key} only, e.g. "
                           f"--metric {example}; got {k!r}.")
        if k in params:
            raise CLIError(f"option --metric: the parameter {k} of {name} is given twice.")
        try:
            values = [float(x) for x in v.split(";")]
        except ValueError:
            raise CLIError(f"option --metric: {k} of {name} must be number(s) separated by ';'; "
                           f"got {v!r}.") from None
        if k == "p":
            if len(values) != 1:
                raise CLIError(f"option --metric: p of minkowski is one number; got {v!r}.")
            params[k] = values[0]
        elif k == "VI":
            d = int(round(len(values) ** 0.5))
            if d * d != len(values):
                raise CLIError(f"option --metric: VI of mahalanobis is a d x d matrix, its d*d "
                               f"values row by row separated by ';'; got {len(values)} values.")
            params[k] = [values[i * d:(i + 1) * d] for i in range(d)]
        else:
            params[k] = values
    import re

    from .._core._metrics import resolve_metric

    try:
        resolve_metric((name, params))
    except (TypeError, ValueError) as exc:
        msg = re.sub(r"`(V|VI|p)` of metric='([a-z]+)'", r"\1 of \2", str(exc))
        raise CLIError(f"option --metric: {msg}") from None
    return name, params


def _metric_text(metric):
    """``--metric``'s value as the user writes it: ``minkowski:p=1.5``, ``seuclidean:V=1;2``."""
    if not isinstance(metric, tuple):
        return metric
    name, params = metric

    def value(v):
        if not isinstance(v, list):
            return f"{v:g}"
        flat = [x for row in v for x in row] if v and isinstance(v[0], list) else v
        return ";".join(f"{x:g}" for x in flat)

    return name + ":" + ",".join(f"{k}={value(v)}" for k, v in params.items())


def _metric_record(met):
    """The metric options of a JSON record: ``metric`` (the name), ``metric_params`` (SciPy's
    parameter, ``{"p": 1.5}``, or null), ``exponent``, ``sigma`` and, when given,
    ``check_negative_type``."""
    metric = met["metric"]
    name, params = metric if isinstance(metric, tuple) else (metric, None)
    return {**met, "metric": name, "metric_params": params}


def _progress(args):
    """Progress (with the time left) on stderr unless --quiet: redrawn in place on a terminal,
    elsewhere (a log, a pipe) a line every few seconds (see energystats._core._progress)."""
    return not getattr(args, "quiet", True) and sys.stderr is not None


def _read(args, path):
    from ._io import read_table

    return read_table(path, fmt=args.input_format, sep=args.sep, decimal=args.decimal)


def _load(args, path, *, by=(), columns=None, option="--columns", options=None, by_note=None,
          by_option="--by"):
    """Read ``path``; return ``(df, cols)`` with checked columns (and ``by``), rows with
    missing values refused or (``--dropna``) dropped, the values checked (inf, integers beyond
    float64), each message naming the column, its option (``options``: column -> option; default
    --columns for the columns it names) and the data row — each step reported on stderr
    (``by_note``: what the ``by`` columns are, when they are not groups; ``by_option``: the option
    that named them)."""
    from ._io import check_cells, check_missing, numeric_columns, split_names
    from .._core._validation import short_list

    df = _read(args, path)
    for b in by:
        if b not in df.columns:
            raise CLIError(f"{path}: no column {b!r} (option {by_option}); the file has "
                           f"{short_list(df.columns)}.")
    wanted = split_names(args.columns) if columns is None else columns
    excluded = _excluded(args, df, path, wanted)
    if wanted is not None:
        wanted = [c for c in wanted if c not in excluded]
    cols, left_out = numeric_columns(df, wanted, exclude=tuple(by) + tuple(excluded),
                                     numeric_only=args.numeric_only, path=path, option=option)
    n0 = df.shape[0]
    if options is None:
        options = _columns_option(args)
    skip = df[cols + list(by)].isna().any(axis=1).to_numpy() if args.dropna else None
    df = check_cells(df, cols, path=path, skip=skip, options=options)
    df = check_missing(df, cols + list(by), path=path, dropna=args.dropna)
    if df.shape[0] == 0:
        raise CLIError(f"{path}: no rows left after --dropna.")
    note = f"{path}: {n0} rows; columns used: {', '.join(map(str, cols))}"
    if excluded:
        note += f"; left out (--exclude): {', '.join(map(str, excluded))}"
    if by:
        note += f"; {by_note}" if by_note else f"; grouped by {', '.join(by)}"
    if left_out:
        note += f"; left out (--numeric-only): {', '.join(map(str, left_out))}"
    if df.shape[0] < n0:
        note += f"; {n0 - df.shape[0]} row(s) with missing values dropped (--dropna)"
    _note(args, note)
    prev = list(getattr(args, "columns_used", None) or [])   # the text output names them
    args.columns_used = prev + [c for c in cols if c not in prev]
    return df, cols


def _excluded(args, df, path, wanted):
    """The columns that --exclude names (each must be a column of the file, and not one that
    --columns names)."""
    from ._io import split_names
    from .._core._validation import short_list

    excluded = split_names(getattr(args, "exclude", None)) or []
    for c in excluded:
        if c not in df.columns:
            raise CLIError(f"{path}: no column {c!r} (option --exclude); the file has "
                           f"{short_list(df.columns)}.")
        if wanted is not None and c in wanted:
            raise CLIError(f"options --columns and --exclude: column {c!r} in both.")
    return excluded


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
    'b' (option --y)``; `` `solver='osqp'` `` -> ``--solver osqp``)."""
    import re

    # the library's refusal of a metric that is not of negative type names its argument
    msg = re.sub(r"check_negative_type=False \(an argument of every function that takes "
                 r"`metric`\)", "--no-check-negative-type", msg)
    # a warning's "`function`: " prefix names the library function the command called
    msg = re.sub(r"^`[a-z_]+`: ", "", msg)
    # SciPy's parameter of a metric given as --metric NAME:KEY=VALUE
    msg = re.sub(r"`(V|VI|p)` of metric='([a-z]+)'", r"\1 of --metric \2", msg)
    msg = _bare_words(args, msg)
    words = getattr(args, "words", None)
    if not words:
        return _option_words(args, msg)
    return _option_words(args, _column_words(args, words, msg))


#: argument names that the library's messages also write without backticks ("use n_resamples >=
#: 499"), with the destination of the option that sets them
_BARE = {"n_resamples": "resamples", "block_length": "block_length"}


def _bare_words(args, msg):
    """The library's argument names written bare (:data:`_BARE`) as the command's options."""
    import re

    options = getattr(args, "option_of", None) or {}
    for word, dest in _BARE.items():
        if dest in options:
            msg = re.sub(rf"(?<![`\w-]){word}(?![`\w])", options[dest], msg)
    return msg


def _option_words(args, msg):
    """The library's argument names that are options of the command (`` `solver='osqp'` ``,
    `` `dist` ``) as the options (``--solver osqp``, ``--dist``)."""
    import re

    options = getattr(args, "option_of", None) or {}

    def say(m):
        opt = options.get(m.group(1))
        if opt is None:
            return m.group(0)
        value = m.group(2)
        return opt if value is None else f"{opt} {value.strip(chr(39) + chr(34))}"

    return re.sub(r"`([A-Za-z_][A-Za-z0-9_]*)(?:=([^`]*))?`", say, msg)


def _column_words(args, words, msg):
    """The names of the library's data arguments (``words``, set by :func:`_speak`) as the
    file's columns and the options that chose them."""
    import ast
    import re

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
    from .._core._validation import short_list

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
    from .._core._validation import seeded_rng

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
    if args.pvalue_method in ("asymptotic", "gamma"):
        return dict(pvalue_method=args.pvalue_method)
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
    method = getattr(res, "pvalue_method", "full")
    if method in ("asymptotic", "gamma"):
        seed = (f"; seed {res.seed} of the {res.n_projections} random directions (pass --seed "
                f"{res.seed} to repeat)" if getattr(res, "n_projections", None) else "")
        _note(args, f"{what}: {method} p-value, no resampling, "
                    f"{time.perf_counter() - t0:.2f} s{seed}")
        return
    kind = "relabellings (exact)" if res.exact else "resamples"
    seed = f"; seed {res.seed} (pass --seed {res.seed} to repeat)" if res.seed is not None else ""
    from .._core._sequential import used_text

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
