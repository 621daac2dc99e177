"""File reading and table output for the command-line tool.

Kept apart from :mod:`energystats.cli` so that every subcommand reads files,
picks columns and prints tables the same way, and reports bad input with one
line that names the file, the column or the option (:class:`CLIError`).
"""
from __future__ import annotations

import json
import math
import os
import sys

import numpy as np
import pandas as pd

__all__ = ["CLIError", "read_table", "numeric_columns", "write_table", "emit", "split_names"]

#: file suffix -> reader kind
_SUFFIXES = {
    ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv",
    ".parquet": "parquet", ".pq": "parquet",
}
FORMATS = ("text", "csv", "json")


class CLIError(Exception):
    """Bad usage or bad data: printed as one line, exit status 2."""


def split_names(values):
    """Flatten ``['a,b', 'c']`` (repeated or comma-separated option values) to ``['a', 'b', 'c']``."""
    if values is None:
        return None
    out = []
    for v in values:
        out.extend(s.strip() for s in str(v).split(",") if s.strip())
    return out


def _kind(path, fmt=None):
    if fmt is not None:
        return fmt
    if path == "-":
        return "csv"
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in _SUFFIXES:
        raise CLIError(
            f"{path}: cannot tell the file format from the suffix {suffix!r}; use .csv, .tsv or "
            "(with pyarrow) .parquet, or give --input-format."
        )
    return _SUFFIXES[suffix]


def read_table(path, *, fmt=None):
    """Read a CSV (``,``), TSV (tab) or Parquet file into a DataFrame.

    ``path='-'`` reads CSV from standard input.  The format comes from the
    suffix (``.csv``; ``.tsv``/``.tab``/``.txt``; ``.parquet``/``.pq``) unless
    ``fmt`` is given.  Every failure is a :class:`CLIError` naming the file.
    """
    kind = _kind(path, fmt)
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
                               "(pip install 'energy-statistics[parquet]').") from None
            df = pd.read_parquet(path)
        else:
            src = sys.stdin if path == "-" else path
            df = pd.read_csv(src, sep="\t" if kind == "tsv" else ",")
    except CLIError:
        raise
    except pd.errors.EmptyDataError:
        raise CLIError(f"{path}: the file is empty (no header, no rows).") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"{path}: could not be read as {kind.upper()}: {first}") from None
    except Exception as exc:  # noqa: BLE001 - e.g. pyarrow errors on a non-Parquet file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CLIError(f"{path}: could not be read as {kind.upper()}: {first}") from None
    if df.shape[0] == 0:
        raise CLIError(f"{path}: the file has a header but no data rows.")
    df.columns = [str(c) for c in df.columns]
    return df


def _is_numeric(s):
    return pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype)


def numeric_columns(df, columns=None, *, exclude=(), path="data"):
    """The columns to use from ``df``, checked: present, numeric, no missing values.

    ``columns=None`` means every numeric column not in ``exclude``.  Errors
    name the file and the column (and, for a non-numeric column, the first
    value that is not a number).
    """
    exclude = list(exclude)
    if columns is None:
        cols = [c for c in df.columns if c not in exclude and _is_numeric(df[c])]
        if not cols:
            raise CLIError(f"{path}: no numeric columns to use (columns: {list(df.columns)}); "
                           "choose them with --columns.")
    else:
        cols = list(columns)
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise CLIError(f"{path}: no column {missing[0]!r} (option --columns); "
                           f"the file has {list(df.columns)}.")
        clash = [c for c in cols if c in exclude]
        if clash:
            raise CLIError(f"{path}: column {clash[0]!r} is the grouping column; "
                           "leave it out of --columns.")
        for c in cols:
            if not _is_numeric(df[c]):
                vals = df[c]
                bad = vals[pd.to_numeric(vals, errors="coerce").isna() & vals.notna()]
                where = (f"; e.g. {bad.iloc[0]!r} in data row {df.index.get_loc(bad.index[0]) + 1}"
                         if len(bad) else "")
                raise CLIError(f"{path}: column {c!r} is not numeric{where}.")
    return cols


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
    raise CLIError(f"{path}: {int(rows.sum())} row(s) have missing values (columns {bad}, first in "
                   f"data row {first}); drop them or pass --dropna.")


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
        df.to_csv(stream, index=_has_named_index(df), float_format="%.10g", lineterminator="\n")
    elif fmt == "json":
        json.dump(_records(df), stream, indent=2)
        stream.write("\n")
    else:  # pragma: no cover - argparse restricts the choices
        raise CLIError(f"--format must be one of {FORMATS}; got {fmt!r}.")


def emit(sections, fmt="text", stream=None):
    """Write named tables ``[(name, DataFrame), ...]``.

    text: each table under its name, separated by blank lines; csv: one table
    alone is plain CSV, several are each preceded by a ``# name`` line and
    separated by a blank line; json: one object ``{name: [records...]}``.
    """
    stream = sys.stdout if stream is None else stream
    if fmt == "json":
        json.dump({name: _records(df) for name, df in sections}, stream, indent=2)
        stream.write("\n")
        return
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
    """Write a DataFrame to ``path`` in the format its suffix names (csv/tsv/parquet/json)."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix != ".json" and suffix not in _SUFFIXES:
        raise CLIError(f"{path} (option --out): unknown suffix {suffix!r}; use .csv, .tsv, "
                       ".parquet or .json.")
    try:
        if suffix == ".json":
            df.to_json(path, orient="records", indent=2)
            return
        kind = _SUFFIXES[suffix]
        if kind == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise CLIError(f"{path}: writing Parquet needs pyarrow "
                               "(pip install 'energy-statistics[parquet]').") from None
            df.to_parquet(path, index=False)
        else:
            df.to_csv(path, sep="\t" if kind == "tsv" else ",", index=False, float_format="%.10g")
    except OSError as exc:
        raise CLIError(f"{path} (option --out): cannot write: {exc.strerror or exc}") from None
