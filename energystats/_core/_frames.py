"""DataFrame helpers: data plus grouping from arrays, labels or a ``by`` column.

Every public function that takes groups accepts the same call forms through
:func:`grouped_data`:

* ``f(X, labels)`` — data and one label per row (every column of a DataFrame
  ``X`` is used unless ``columns`` says otherwise).  Labels that carry a
  pandas index (a Series) are aligned with an indexed ``X`` by index; plain
  arrays and lists are positional;
* ``f(df, by="group", columns=None)`` — a DataFrame with a grouping column
  (``columns`` default to every column except ``by``).

Nothing is dropped silently: a non-numeric column among the used ones is an
error naming it unless ``numeric_only=True`` asks to leave such columns out
(they are then listed in ``left_out``), a column of numbers with stray text is
always an error naming the row and the value, and rows with missing values
are an error unless ``dropna=True``.  The command-line tool reads files
through the same checks.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._validation import (Labels, align_labels, as_data, as_labels, check_unique_columns,
    foreign_to_pandas, numeric_columns, short_list)

__all__ = ["grouped_data", "GroupedData", "select_frame", "select_columns", "match_columns"]


@dataclass(frozen=True)
class GroupedData:
    """Validated data (C-contiguous float array), group labels and what was used."""

    X: np.ndarray
    labels: Labels
    index: object = None
    columns: list | None = None
    left_out: list = field(default_factory=list)
    n_dropped: int = 0


def select_columns(df, columns=None, exclude=(), name="X", numeric_only=False):
    """The columns used from ``df`` and the non-numeric ones left out (see :func:`numeric_columns`)."""
    return numeric_columns(df, columns, exclude=exclude, numeric_only=numeric_only, name=name)


def select_frame(X, columns=None, name="X", numeric_only=False):
    """``(X[used], used, left_out)`` for a DataFrame ``X``; ``(X, None, [])`` for other input.

    With ``columns=None`` a DataFrame keeps every column, unless
    ``numeric_only=True`` leaves the non-numeric ones out.
    """
    X = foreign_to_pandas(X, name)
    if not isinstance(X, pd.DataFrame):
        if columns is not None:
            raise TypeError(f"`columns` needs `{name}` to be a pandas DataFrame; got {type(X).__name__}.")
        if numeric_only:
            raise TypeError(f"`numeric_only` needs `{name}` to be a pandas DataFrame; got {type(X).__name__}.")
        return X, None, []
    if columns is None and not numeric_only:
        check_unique_columns(X, name)
        return X, list(X.columns), []
    used, left_out = select_columns(X, columns, name=name, numeric_only=numeric_only)
    return X[used], used, left_out


def match_columns(samples, names):
    """Line up the columns of several DataFrame samples by name (the first one's order).

    Samples that are all DataFrames must have the same column names; the
    same names in another order are reordered to the first sample's order
    (as pandas aligns by label), different names are an error.  Other
    input is returned unchanged (positional).  Returns ``(samples, columns)``.
    """
    if len(samples) < 2 or not all(isinstance(s, pd.DataFrame) for s in samples):
        return list(samples), None
    first = list(samples[0].columns)
    out = [samples[0]]
    for s, name in zip(samples[1:], names[1:]):
        cols = list(s.columns)
        if cols != first:
            if sorted(map(str, cols)) != sorted(map(str, first)) or len(set(cols)) != len(cols):
                raise ValueError(f"`{names[0]}` and `{name}` must have the same columns; got "
                                 f"{short_list(first)} and {short_list(cols)}. Select the same "
                                 "columns (e.g. `columns=[...]`).")
            s = s[first]
        out.append(s)
    return out, first


def _missing_rows(frame, name, dropna):
    """Rows of ``frame`` with a missing value: an error naming them, or (``dropna``) a mask to keep."""
    na = frame.isna()
    if not na.to_numpy().any():
        return None
    rows = na.any(axis=1).to_numpy()
    if not dropna:
        bad = [str(c) for c in frame.columns if na[c].any()]
        first = int(np.flatnonzero(rows)[0])
        raise ValueError(
            f"`{name}` has missing values in {int(rows.sum())} row(s), in column(s) "
            f"{short_list(bad)} (first: row {first}, index {frame.index[first]!r}); drop or impute "
            "them, or pass `dropna=True`."
        )
    return ~rows


def grouped_data(X, labels=None, *, by=None, columns=None, dropna=False, numeric_only=False,
                 min_groups=1, name="X"):
    """Resolve the call forms above into a :class:`GroupedData`.

    Missing values in the grouping or the used columns raise an error that
    says how many rows and which columns, unless ``dropna=True`` (the number
    of rows dropped is recorded in ``n_dropped``).
    """
    X = foreign_to_pandas(X, name)
    if by is not None:
        if labels is not None:
            raise TypeError("give either `labels` or `by`, not both.")
        if not isinstance(X, pd.DataFrame):
            raise TypeError(f"`by` needs `{name}` to be a pandas DataFrame; got {type(X).__name__}.")
        check_unique_columns(X, name)
        by_cols = [by] if not isinstance(by, (list, tuple)) else list(by)
        missing = [c for c in by_cols if c not in X.columns]
        if missing:
            raise KeyError(f"`by`: column(s) {short_list(missing)} not found in `{name}`; "
                           f"it has {short_list(X.columns)}.")
        cols, left_out = select_columns(X, columns, exclude=by_cols, name=name,
                                        numeric_only=numeric_only)
        frame = X[cols + by_cols]
        keep = _missing_rows(frame, name, dropna)
        n_dropped = 0
        if keep is not None:
            n_dropped = int((~keep).sum())
            frame = frame.loc[keep]
        if len(by_cols) == 1:
            lab = frame[by_cols[0]]
        else:
            lab = pd.Series(list(frame[by_cols].itertuples(index=False, name=None)), index=frame.index)
        arr, index = as_data(frame[cols], name)
        labs = as_labels(lab, arr.shape[0], "by")
        out = GroupedData(arr, labs, index, cols, left_out, n_dropped)
    else:
        if labels is None:
            raise TypeError("`labels` (or `by=` with a DataFrame) is required.")
        X, cols, left_out = select_frame(X, columns, name, numeric_only)
        labels = align_labels(X, labels)
        n_dropped = 0
        if dropna and isinstance(X, pd.DataFrame):
            lab_na = pd.isna(np.asarray(labels, dtype=object))
            keep = ~X.isna().any(axis=1).to_numpy() & ~lab_na
            n_dropped = int((~keep).sum())
            X = X.loc[keep]
            labels = labels[keep] if isinstance(labels, pd.Series) else np.asarray(labels, dtype=object)[keep]
        arr, index = as_data(X, name)
        labs = as_labels(labels, arr.shape[0])
        out = GroupedData(arr, labs, index, cols, left_out, n_dropped)
    if out.labels.k < min_groups:
        raise ValueError(f"need at least {min_groups} groups; got {out.labels.k} "
                         f"({short_list(out.labels.groups)}).")
    return out
