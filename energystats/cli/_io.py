"""File reading and table output for the command-line tool.

Kept apart from :mod:`energystats.cli` so that every subcommand reads files,
picks columns and prints tables the same way, and reports bad input with one
line that names the file, the column or the option (:class:`CLIError`).
"""
from __future__ import annotations

import io
import json
import math
import os
import sys

import numpy as np
import pandas as pd

from .._core._errors import CLIError
from .._core._validation import numeric_columns as _numeric_columns
from .._core._validation import short_list

__all__ = ["CLIError", "read_table", "read_text_fields", "numeric_columns", "write_table", "emit",
           "split_names", "write_data", "check_out_path"]

#: file suffix -> reader kind
_SUFFIXES = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv",
    ".parquet": "parquet", ".pq": "parquet",
}
INPUT_FORMATS = ("csv", "tsv", "parquet")
FORMATS = ("text", "csv", "json")


def _exact_floats():
    """The ``read_csv`` options that parse every float exactly.  pandas 3.0.6's default parser
    read 0.10490011715303971 one ulp off (exact only with ``float_precision="round_trip"``);
    pandas 3.1.1's default parsed exactly (and deprecates the argument); pandas 2 needs it.
    Decided by parsing that number, not by the version."""
    import io

    text = "0.10490011715303971"
    if float(pd.read_csv(io.StringIO(f"a\n{text}\n"))["a"].iloc[0]) == float(text):
        return {}
    return {"float_precision": "round_trip"}


_EXACT_FLOATS = _exact_floats()

#: standard input, read once and kept (``-`` may be read again for ``cluster --out``)
_STDIN_TEXT = []


def split_names(values):
    """Flatten ``['a,b', 'c']`` (repeated or comma-separated option values) to ``['a', 'b', 'c']``."""
    if values is None:
        return None
    out = []
    for v in values:
        out.extend(s.strip() for s in str(v).split(",") if s.strip())
    return out


def input_kind(path, fmt=None):
    """'csv', 'tsv' or 'parquet' from ``fmt`` (option --input-format) or the file's suffix."""
    if fmt is not None:
        return fmt
    if path == "-":
        return "csv"
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _SUFFIXES:
        raise CLIError(
            f"{path}: cannot tell the file format from the suffix {suffix!r}; use .csv, .tsv or "
            "(with pyarrow) .parquet, or give --input-format csv|tsv|parquet."
        )
    return _SUFFIXES[suffix]


def _source(path):
    """A path, or a text buffer holding standard input (read once)."""
    if path != "-":
        return path
    if not _STDIN_TEXT:
        _STDIN_TEXT.append(sys.stdin.read() if sys.stdin is not None else "")
    return io.StringIO(_STDIN_TEXT[0])


def _first_line(path):
    if path == "-":
        return (_STDIN_TEXT[0] if _STDIN_TEXT else "").split("\n", 1)[0]
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.readline()


def _csv_options(kind, sep, decimal):
    return {"sep": sep if sep is not None else ("\t" if kind == "tsv" else ","),
            "decimal": decimal if decimal is not None else "."}


def _semicolon_hint(path, kind, sep):
    """A semicolon-separated file read as CSV: say so (the usual decimal-comma export)."""
    if kind != "csv" or sep is not None:
        return ""
    line = _first_line(path)
    if ";" in line and "," not in line:
        return (" The header is separated by ';' (a decimal-comma export?): pass --sep ';' "
                "and, if numbers are written like 1,5, --decimal ','.")
    return ""


def read_table(path, *, fmt=None, sep=None, decimal=None):
    """Read a CSV (``,``), TSV (tab) or Parquet file into a DataFrame.

    ``path='-'`` reads CSV from standard input.  The format comes from the
    suffix (``.csv``; ``.tsv``/``.tab``/``.txt``; ``.parquet``/``.pq``) unless
    ``fmt`` is given; ``sep`` and ``decimal`` override the field separator
    and decimal mark of text files.  Numbers are parsed to the float nearest
    to the text, as ``float()`` does (pandas' round-trip parser).
    Duplicate column names are refused (pandas would rename them silently).
    Every failure is a :class:`CLIError` naming the file.
    """
    kind = input_kind(path, fmt)
    if path != "-" and not os.path.exists(path):
        raise CLIError(f"{path}: no such file.")
    if path != "-" and os.path.isdir(path):
        raise CLIError(f"{path}: is a directory, not a data file.")
    try:
        if kind == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise CLIError(f"{path}: reading Parquet needs pyarrow "
                               "(from a source checkout: python -m pip install '.[parquet]').") from None
            df = pd.read_parquet(_source(path) if path != "-" else io.BytesIO(sys.stdin.buffer.read()))
            names = [str(c) for c in df.columns]
        else:
            opts = _csv_options(kind, sep, decimal)
            header = pd.read_csv(_source(path), header=None, nrows=1, dtype=str,
                                 keep_default_na=False, sep=opts["sep"])
            names = [str(v) for v in header.iloc[0].tolist()] if header.shape[0] else []
            df = pd.read_csv(_source(path), **opts, **_EXACT_FLOATS)
    except CLIError:
        raise
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path}: the file is empty (no header, no rows).") from None
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - parser, decoding, OS and pyarrow errors
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"{path}: could not be read as {kind.upper()}: {first}."
                       + _semicolon_hint(path, kind, sep)) from None
    dup = pd.Index(names)[pd.Index(names).duplicated()]
    if len(dup):
        raise CLIError(f"{path}: duplicate column names {short_list(pd.unique(dup))}; rename them "
                       "so that every column can be named.")
    if df.shape[0] == 0:
        raise CLIError(f"{path}: the file has a header but no data rows.")
    df.columns = [str(c) for c in df.columns]
    if df.shape[1] == 1:
        hint = _semicolon_hint(path, kind, sep)
        if hint:
            raise CLIError(f"{path}: read as one column {df.columns[0]!r}." + hint)
    return df


def read_text_fields(path, *, fmt=None, sep=None, decimal=None):
    """The fields of a CSV/TSV file exactly as written (strings, nothing parsed or converted)."""
    kind = input_kind(path, fmt)
    opts = _csv_options(kind, sep, decimal)
    return pd.read_csv(_source(path), dtype=str, keep_default_na=False, na_filter=False,
                       sep=opts["sep"])


def numeric_columns(df, columns=None, *, exclude=(), numeric_only=False, path="data",
                    option="--columns"):
    """The columns to use from ``df`` and those left out, with the library's checks.

    The same rules as the Python API (see :func:`energystats._core._validation.numeric_columns`):
    a non-numeric column is an error unless ``--numeric-only``; a column of
    numbers with a stray text cell is always an error naming the row and the
    value.  Errors are :class:`CLIError` lines that name the file.
    """
    try:
        return _numeric_columns(df, columns, exclude=exclude, numeric_only=numeric_only, name=path,
                                hint=f"option {option}", only_hint="--numeric-only",
                                file_rows=True)
    except (KeyError, ValueError, TypeError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        msg = msg.replace(f"`{path}`", path)
        if not msg.startswith(path):
            msg = f"{path}: {msg}"
        raise CLIError(msg) from None


def check_cells(df, cols, *, path="data", skip=None, options=None):
    """The values of the used columns, checked here so that messages name the file's column and
    data row (counting from 1: the first line after the header is data row 1).

    An infinite value, or an integer beyond the float64 range, is a :class:`CLIError`; integers
    beyond 2**53 (digits lost as float64) warn (:class:`DataConversionWarning`) and their column
    is converted to float64 here, so that the library does not warn again in its own words.
    Rows where ``skip`` is true (dropped by --dropna) are not looked at.  ``options`` maps a
    column to the option that chose it.  Returns ``df`` (a copy when a column was converted).
    """
    import numbers
    import warnings

    from .._core._validation import _EXACT_INT, DataConversionWarning

    options = options or {}
    keep = np.ones(df.shape[0], dtype=bool) if skip is None else ~np.asarray(skip, dtype=bool)

    def column(c):
        return f"column {c!r}" + (f" (option {options[c]})" if c in options else "")

    converted = {}
    for c in cols:
        s = df[c]
        big = None
        if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iu":  # within the float64 range
            v = s.to_numpy()
            rows = np.flatnonzero(((v > _EXACT_INT) | (v < -_EXACT_INT if v.dtype.kind == "i"
                                                      else False)) & keep)
            big = rows[0] if rows.size else None
        elif s.dtype == object or s.dtype.kind in "iu":  # Python ints of any size; Int64 with NA
            values = s.to_numpy(dtype=object)
            for i in np.flatnonzero(keep):
                v = values[i]
                if not isinstance(v, numbers.Integral) or isinstance(v, (bool, np.bool_)):
                    continue
                if abs(int(v)) > _EXACT_INT and big is None:
                    big = i
                try:
                    float(v)
                except OverflowError:
                    raise CLIError(f"{path}: {column(c)} holds an integer of {len(str(abs(int(v))))} "
                                   f"digits at data row {i + 1}, beyond the float64 range (about "
                                   "1.8e308) in which statistics are computed; rescale it (e.g. "
                                   "divide by a power of ten) or correct it.") from None
        if s.dtype.kind == "f" or s.dtype == object:
            with np.errstate(invalid="ignore"):
                inf = np.flatnonzero(np.isinf(s.to_numpy(dtype=np.float64, na_value=np.nan)) & keep)
            if inf.size:
                v = float(s.iloc[inf[0]])
                raise CLIError(f"{path}: {column(c)} holds {'-inf' if v < 0 else 'inf'} at data row "
                               f"{inf[0] + 1} ({inf.size} infinite value(s) in the column); "
                               "correct or remove those rows.")
        if big is not None:
            warnings.warn(f"{path}: {column(c)} holds integers larger than 2**53 in magnitude "
                          f"(the first at data row {big + 1}); as float64 they lose their last "
                          "digits (statistics are computed in floating point). Rescale or centre "
                          "them first if those digits matter.", DataConversionWarning)
            converted[c] = s.astype(np.float64)
    return df.assign(**converted) if converted else df


def check_missing(df, cols, *, path="data", dropna=False):
    """Refuse (or with ``dropna`` drop) rows with missing values in ``cols``."""
    na = df[cols].isna()
    if not na.to_numpy().any():
        return df
    rows = na.any(axis=1)
    if dropna:
        return df.loc[~rows]
    bad = [c for c in cols if na[c].any()]
    first = df.index.get_loc(rows[rows].index[0]) + 1
    raise CLIError(f"{path}: {int(rows.sum())} row(s) have missing values (columns {short_list(bad)}, "
                   f"first in data row {first}); drop them or pass --dropna.")


def check_out_path(path, inputs=()):
    """Check an output path before any work: known suffix, existing writable folder, not an input."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix != ".json" and suffix not in _SUFFIXES:
        raise CLIError(f"{path} (option --out): unknown suffix {suffix!r}; use .csv, .tsv, "
                       ".parquet or .json.")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CLIError(f"{path} (option --out): the folder {folder} does not exist.")
    if os.path.isdir(path):
        raise CLIError(f"{path} (option --out): is a directory.")
    target = path if os.path.exists(path) else folder
    if not os.access(target, os.W_OK):
        raise CLIError(f"{path} (option --out): not writable (permission denied).")
    for inp in inputs:
        if inp != "-" and os.path.exists(path) and os.path.samefile(inp, path):
            raise CLIError(f"{path} (option --out): is the input file; write the labels to a new file.")


# -- output ------------------------------------------------------------------

def _jsonable(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return v if math.isfinite(v) else None
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.ndarray):
        return [_jsonable(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if pd.api.types.is_scalar(v) and pd.isna(v):
        return None
    return v if isinstance(v, (int, str, bool)) else str(v)


def _records(df):
    flat = df.reset_index() if _has_named_index(df) else df
    return [{str(k): _jsonable(v) for k, v in row.items()} for row in flat.to_dict(orient="records")]


def _has_named_index(df):
    return any(name is not None for name in df.index.names)


def write_table(df, fmt="text", stream=None, *, title=None):
    """Write one table as aligned text, CSV or JSON records."""
    stream = sys.stdout if stream is None else stream
    if fmt == "text":
        if title:
            stream.write(f"{title}\n")
        with pd.option_context("display.float_format", "{:.6g}".format, "display.width", 200,
                               "display.max_columns", 50, "display.max_rows", 200):
            stream.write(df.to_string() + "\n")
    elif fmt == "csv":
        df.to_csv(stream, index=_has_named_index(df), lineterminator="\n")
    elif fmt == "json":
        json.dump(_records(df), stream, indent=2, allow_nan=False)
        stream.write("\n")
    else:  # pragma: no cover - argparse restricts the choices
        raise CLIError(f"--format must be one of {FORMATS}; got {fmt!r}.")


def emit(sections, fmt="text", stream=None, columns=None):
    """Write named tables ``[(name, DataFrame), ...]``.

    text: each table under its name, separated by blank lines, after a line naming the
    ``columns`` used (when given; long lists cut); csv: one table alone is plain CSV,
    several are each preceded by a ``# name`` line and separated by a blank line; json: one
    object ``{name: [records...]}``.
    """
    stream = sys.stdout if stream is None else stream
    if fmt == "json":
        json.dump({name: _records(df) for name, df in sections}, stream, indent=2, allow_nan=False)
        stream.write("\n")
        return
    if fmt == "text" and columns:
        names = [str(c) for c in columns]
        shown = ", ".join(names[:12]) + (f", ... ({len(names) - 12} more)" if len(names) > 12 else "")
        stream.write(f"columns used: {shown}\n\n")
    for i, (name, df) in enumerate(sections):
        if i:
            stream.write("\n")
        if fmt == "csv":
            if len(sections) > 1:
                stream.write(f"# {name}\n")
            write_table(df, "csv", stream)
        else:
            write_table(df, "text", stream, title=name)


def write_data(df, path):
    """Write a DataFrame to ``path`` in the format its suffix names (csv/tsv/parquet/json).

    Floats are written so that they read back as the same float64 (shortest
    round-trip text, as ``repr``); nothing is rounded.
    """
    suffix = os.path.splitext(path)[1].lower()
    if suffix != ".json" and suffix not in _SUFFIXES:
        raise CLIError(f"{path} (option --out): unknown suffix {suffix!r}; use .csv, .tsv, "
                       ".parquet or .json.")
    try:
        if suffix == ".json":
            with open(path, "w", encoding="utf-8") as fh:
                json.dump([{str(k): _jsonable(v) for k, v in row.items()}
                           for row in df.to_dict(orient="records")], fh, indent=2, allow_nan=False)
                fh.write("\n")
            return
        kind = _SUFFIXES[suffix]
        if kind == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise CLIError(f"{path}: writing Parquet needs pyarrow "
                               "(from a source checkout: python -m pip install '.[parquet]').") from None
            df.to_parquet(path, index=False)
        else:
            df.to_csv(path, sep="\t" if kind == "tsv" else ",", index=False, lineterminator="\n")
    except OSError as exc:
        raise OSError(exc.errno, f"{path} (option --out): cannot write: {exc.strerror or exc}") from None
