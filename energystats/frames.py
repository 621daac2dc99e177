"""DataFrame helpers: data plus grouping from arrays, labels or a ``by`` column.

Every public function that takes groups accepts the same call forms through
:func:`grouped_data`:

* ``f(X, labels)`` — data and one label per row (every column of a DataFrame
  ``X`` is used unless ``columns`` says otherwise);
* ``f(df, by="group", columns=None)`` — a DataFrame with a grouping column
  (``columns`` default to every numeric column except ``by``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._validation import Labels, as_data, as_labels

__all__ = ["grouped_data", "GroupedData", "select_frame"]


@dataclass(frozen=True)
class GroupedData:
    """Validated data (C-contiguous float array), group labels and the row index."""

    X: np.ndarray
    labels: Labels
    index: object = None
    columns: list | None = None


def select_columns(df, columns=None, exclude=(), name="X"):
    """The numeric columns used from ``df``: ``columns`` or all numeric ones but ``exclude``."""
    if columns is None:
        columns = [c for c in df.columns if c not in exclude
                   and (pd.api.types.is_numeric_dtype(df[c].dtype) or pd.api.types.is_bool_dtype(df[c].dtype))]
        if not columns:
            raise ValueError(f"`{name}` has no numeric columns besides {list(exclude)}.")
    else:
        columns = [columns] if isinstance(columns, (str, int)) else list(columns)
        missing = [c for c in columns if c not in df.columns]
        if missing:
            raise KeyError(f"`columns`: {missing} not found in `{name}`; it has {list(df.columns)}.")
        overlap = [c for c in columns if c in exclude]
        if overlap:
            raise ValueError(f"`columns` must not contain the grouping column(s) {overlap}.")
    return columns


def select_frame(X, columns=None, name="X"):
    """``X[columns]`` for a DataFrame ``X`` (checked), ``X`` itself when ``columns`` is None."""
    if columns is None:
        return X
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"`columns` needs `{name}` to be a pandas DataFrame; got {type(X).__name__}.")
    return X[select_columns(X, columns, name=name)]


def grouped_data(X, labels=None, *, by=None, columns=None, dropna=False, min_groups=1,
                 name="X"):
    """Resolve the call forms above into a :class:`GroupedData`.

    Missing values in the grouping or the used columns raise an error that
    says how many rows and which columns, unless ``dropna=True``.
    """
    if by is not None:
        if labels is not None:
            raise TypeError("give either `labels` or `by`, not both.")
        if not isinstance(X, pd.DataFrame):
            raise TypeError(f"`by` needs `{name}` to be a pandas DataFrame; got {type(X).__name__}.")
        by_cols = [by] if not isinstance(by, (list, tuple)) else list(by)
        missing = [c for c in by_cols if c not in X.columns]
        if missing:
            raise KeyError(f"`by`: column(s) {missing} not found in `{name}`; it has {list(X.columns)}.")
        cols = select_columns(X, columns, exclude=by_cols, name=name)
        frame = X[cols + by_cols]
        na = frame.isna()
        if na.to_numpy().any():
            rows = int(na.any(axis=1).sum())
            bad = [str(c) for c in frame.columns if na[c].any()]
            if not dropna:
                raise ValueError(
                    f"`{name}` has missing values in {rows} row(s), in column(s) {bad}; "
                    "drop or impute them, or pass `dropna=True`."
                )
            frame = frame.loc[~na.any(axis=1)]
        if len(by_cols) == 1:
            lab = frame[by_cols[0]]
        else:
            lab = pd.Series(list(frame[by_cols].itertuples(index=False, name=None)), index=frame.index)
        arr, index = as_data(frame[cols], name)
        labs = as_labels(lab, arr.shape[0], "by")
        out = GroupedData(arr, labs, index, cols)
    else:
        if labels is None:
            raise TypeError("`labels` (or `by=` with a DataFrame) is required.")
        if isinstance(X, pd.DataFrame):
            # without `by`, every column is data: a non-numeric one is an error
            # (raised by as_data, naming it) unless `columns` leaves it out
            cols = list(X.columns) if columns is None else select_columns(X, columns, name=name)
            X = X[cols]
        elif columns is not None:
            raise TypeError("`columns` needs a DataFrame.")
        else:
            cols = None
        if dropna and isinstance(X, pd.DataFrame):
            keep = ~X.isna().any(axis=1).to_numpy() & ~pd.isna(np.asarray(labels, dtype=object))
            X = X.loc[keep]
            labels = np.asarray(labels, dtype=object)[keep]
        arr, index = as_data(X, name)
        labs = as_labels(labels, arr.shape[0])
        out = GroupedData(arr, labs, index, cols)
    if out.labels.k < min_groups:
        raise ValueError(f"need at least {min_groups} groups; got {out.labels.k} ({out.labels.groups}).")
    return out
