"""The input layer: every public function turns its arguments into validated data here.

Three entry points, each raising the package's named errors with the argument, the rule and
the value:

* :func:`sample_matrix` — one sample matrix (array or DataFrame with ``columns``/
  ``numeric_only``; or an n×n distance matrix);
* :func:`grouped_input` — grouped data: several samples, ``X, labels=``, ``df, by=``, with
  ``strata=`` (built on :func:`~energystats._core._frames.grouped_data`);
* :func:`paired_variables` — two paired variables (arrays, pandas objects or column names of
  ``data``), with :func:`variable` for one and :func:`strata_labels` for their strata.

The Dask backend's lazy twins are in :mod:`energystats._core._dask`.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from ._formula import formula_design, indicator_columns, has_tilde
from ._frames import grouped_data, match_columns, select_frame
from ._validation import (Labels, align_labels, as_data, as_labels, as_square_matrix,
    foreign_to_pandas, short_list)

__all__ = ["sample_matrix", "time_series", "same_times", "paired_indexes", "SampleMatrix", "condensed_as_square", "grouped_input", "paired_variables", "variable", "strata_labels"]


# -- one sample matrix -----------------------------------------------------------

class SampleMatrix(NamedTuple):
    """One validated sample matrix (:func:`sample_matrix`)."""

    X: np.ndarray  #: C-contiguous float array (n×d; n×n with ``precomputed``)
    index: object  #: the rows' pandas index, None for arrays
    columns: list | None  #: the DataFrame columns used, None for other input
    left_out: list  #: non-numeric columns left out by ``numeric_only=True``


def sample_matrix(X, *, columns=None, numeric_only=False, precomputed=False, dtype=None, name="X"):
    """One sample matrix, checked once: a :class:`SampleMatrix` ``(X, index, columns, left_out)``.

    The columns of a DataFrame are chosen by
    :func:`~energystats._core._frames.select_frame` (``columns``, ``numeric_only``; both need a
    DataFrame), then the data are converted by
    :func:`~energystats._core._validation.as_data` (numeric, finite; ``dtype``) or, with
    ``precomputed``, checked as an n×n distance matrix
    (:func:`~energystats._core._validation.as_square_matrix`).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1.0, 2.0, 4.0], "b": [0.0, 1.0, 0.0], "g": ["x", "y", "x"]})
    >>> s = sample_matrix(df, numeric_only=True)
    >>> s.X.shape, s.columns, s.left_out
    ((3, 2), ['a', 'b'], ['g'])
    """
    X, used, left_out = select_frame(X, columns, name, numeric_only)
    if precomputed:
        index = X.index if isinstance(X, pd.DataFrame) else None
        return SampleMatrix(as_square_matrix(X, name), index, used, left_out)
    arr, index = as_data(X, name, dtype=dtype)
    return SampleMatrix(arr, index, used, left_out)


def condensed_as_square(X, name="X"):
    """``X`` unchanged, or, when it is 1-D, the n×n matrix of that condensed distance vector
    (:func:`~energystats._core._validation.as_square_matrix`): for ``metric='precomputed'`` in
    the grouped call forms, whose labels count the points, not the pairs.

    Examples
    --------
    >>> condensed_as_square([3.0, 4.0, 5.0])
    array([[0., 3., 4.],
           [3., 0., 5.],
           [4., 5., 0.]])
    """
    if np.ndim(X) == 1 and not hasattr(X, "__dask_graph__"):
        return as_square_matrix(X, name)
    return X


def time_series(X, columns=None, name="X"):
    """``(X, index, columns)``: a series as a validated (T, d) float64 array, with its index
    and columns (a named Series' name as its column) — the one input rule of every function
    that reads rows in time order.  An index of times or numbers must increase: rows out of
    time order are refused (a search or a lag on shuffled rows finds nothing, silently)."""
    s = sample_matrix(X, columns=columns, dtype=np.float64, name=name)
    cols = s.columns
    if cols is None and isinstance(X, pd.Series) and X.name is not None:
        cols = [X.name]
    index = s.index
    if index is not None and len(index) > 1 and not isinstance(index, pd.RangeIndex) \
            and (isinstance(index, (pd.DatetimeIndex, pd.PeriodIndex, pd.TimedeltaIndex))
                 or pd.api.types.is_numeric_dtype(index.dtype)) \
            and not index.is_monotonic_increasing:
        bad = int(np.flatnonzero(~(np.asarray(index[1:]) >= np.asarray(index[:-1])))[0])
        raise ValueError(f"`{name}`: the rows must be in time order, but the index decreases at "
                         f"position {bad + 1} ({index[bad]!r} then {index[bad + 1]!r}); sort "
                         f"it first (`{name}.sort_index()`).")
    return s.X, index, cols


def same_times(ix, iy, names=("x", "y")):
    """Two series read side by side must carry the same times: where both have an index, the
    indexes must be equal (both are in time order already, so the same labels are the same
    positions); otherwise a ValueError naming both.  A plain array on either side is taken by
    position."""
    if ix is None or iy is None or ix.equals(iy):
        return
    diff = ix.symmetric_difference(iy) if not (ix.has_duplicates or iy.has_duplicates) else []
    how = (f"{len(diff)} label(s) in one only, e.g. {list(diff[:3])!r}" if len(diff) else
           "the same labels in another order or with other repeats" if len(ix) == len(iy) else
           f"{len(ix)} and {len(iy)} rows")
    raise ValueError(f"`{names[0]}` and `{names[1]}` are paired time by time, but their indexes "
                     f"differ ({how}); align them first (`{names[0]}, {names[1]} = "
                     f"{names[0]}.align({names[1]}, join='inner')`) or pass arrays.")


# -- grouped data ----------------------------------------------------------------

def _samples_data(samples, name):
    """Stack several samples into one array with group codes 0..k-1 (and the columns used)."""
    samples, cols = match_columns(samples, [f"samples[{i}]" for i in range(len(samples))])
    arrays = []
    for i, s in enumerate(samples):
        arr, _ = as_data(s, f"samples[{i}]")
        arrays.append(arr)
    d = {a.shape[1] for a in arrays}
    if len(d) > 1:
        dims = [a.shape[1] for a in arrays]
        raise ValueError(f"all samples must have the same number of features; got {dims}.")
    dtype = np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64
    X = np.ascontiguousarray(np.concatenate([a.astype(dtype, copy=False) for a in arrays]))
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.intp)
    codes = np.repeat(np.arange(len(arrays), dtype=np.intp), sizes)
    return X, Labels(codes, list(range(len(arrays))), sizes), cols


def _factor_labels(labels, n):
    """A list of :class:`Labels`, one per factor, from a DataFrame of factors."""
    return [as_labels(labels[c], n, f"labels[{c!r}]") for c in labels.columns], list(labels.columns)


def _grouped_input(samples, labels, by, columns, dropna, numeric_only, fname, allow_factors=False):
    """Resolve the call forms into (X, [Labels per factor], factor names, columns used)."""
    if not samples:
        raise TypeError(f"`{fname}` needs data: several samples, `X, labels=` or `df, by=`.")
    if labels is not None or by is not None:
        if len(samples) != 1:
            raise TypeError(f"with `labels=` or `by=`, pass the data as one argument; got {len(samples)}.")
        X = samples[0]
        if allow_factors and isinstance(labels, pd.DataFrame) and by is None:
            if labels.shape[1] == 1:
                labels = labels.iloc[:, 0]
            else:
                X, cols, _ = select_frame(X, columns, "X", numeric_only)
                labels = align_labels(X, labels)
                if dropna:
                    raise TypeError("`dropna=True` is not available with a DataFrame of factors as "
                                    "`labels`; drop the rows first, or use `df, by=[...]`.")
                arr, _ = as_data(X, "X")
                labs, names = _factor_labels(labels, arr.shape[0])
                return arr, labs, names, cols
        multi = isinstance(by, (list, tuple)) and len(by) > 1
        if multi and not allow_factors:
            raise ValueError(f"`{fname}` takes a single grouping column; got `by={list(by)!r}` "
                             "(use `disco` for several factors).")
        if isinstance(by, (list, tuple)) and len(by) == 1:
            by = by[0]
        data = grouped_data(X, labels, by=by, columns=columns, dropna=dropna,
                            numeric_only=numeric_only)
        if multi:
            # grouped_data has encoded each row's tuple of factor levels; split it.
            names = list(by)
            labs = []
            for f, col in enumerate(names):
                levels = np.array([g[f] for g in data.labels.groups], dtype=object)
                labs.append(as_labels(levels[data.labels.codes], data.X.shape[0], f"by[{col!r}]"))
            return data.X, labs, names, data.columns
        name = by if by is not None else (labels.name if isinstance(labels, pd.Series) else None)
        return data.X, [data.labels], [name], data.columns
    if columns is not None:
        raise TypeError("`columns` needs a DataFrame with `by=`.")
    if len(samples) < 2:
        raise ValueError(f"`{fname}` needs at least two samples (or `X, labels=` / `df, by=`); "
                         "got 1 sample.")
    X, lab, cols = _samples_data(samples, "samples")
    return X, [lab], [None], cols


def grouped_input(samples, labels, by, columns, dropna, numeric_only, fname, allow_factors=False,
                  strata=None):
    """Grouped data from any call form, checked once: ``(X, [Labels per factor], factor names,
    columns used, strata Labels or None, strata column name or None)``.

    The forms: several samples; ``X, labels=`` (a DataFrame of factors with
    ``allow_factors``); ``df, by=`` (several columns with ``allow_factors``); each with
    ``strata=`` (labels, or a column name of a DataFrame ``X``).  Columns are matched by name,
    labels aligned on the index (:func:`~energystats._core._validation.align_labels`), rows with
    missing values an error unless ``dropna`` (:func:`~energystats._core._frames.grouped_data`).
    ``fname`` names the calling function in the messages.

    Examples
    --------
    >>> import numpy as np
    >>> X, labs, names, cols, strata, _ = grouped_input(
    ...     (np.zeros((2, 1)), np.ones((3, 1))), None, None, None, False, False, "f")
    >>> X.shape, labs[0].codes.tolist(), strata is None
    ((5, 1), [0, 0, 1, 1, 1], True)
    """
    if strata is None:
        return (*_grouped_input(samples, labels, by, columns, dropna, numeric_only, fname,
                                allow_factors), None, None)
    if by is not None:
        X = samples[0] if len(samples) == 1 else None
        if not isinstance(X, pd.DataFrame):
            raise TypeError("`by=` needs the data as one DataFrame.")
        by_cols = list(by) if isinstance(by, (list, tuple)) else [by]
        if isinstance(strata, str):
            if strata not in X.columns:
                raise KeyError(f"`strata`: column {strata!r} not found in `X`; it has "
                               f"{short_list(X.columns)}.")
            if strata in by_cols:
                raise ValueError(f"`strata` {strata!r} is also a factor in `by`.")
            scol = strata
        else:
            scol = "__strata__"
            while scol in X.columns:
                scol += "_"
            values = align_labels(X, strata, "strata")
            if len(values) != len(X):
                raise ValueError(f"`strata` must have one entry per row of `X` ({len(X)}); "
                                 f"got {len(values)}.")
            X = X.assign(**{scol: np.asarray(values, dtype=object)})
        Xa, labs, names, cols = _grouped_input((X,), None, by_cols + [scol], columns, dropna,
                                               numeric_only, fname, True)
        return Xa, labs[:-1], names[:-1], cols, labs[-1], strata if isinstance(strata, str) else None
    if isinstance(strata, str):
        if labels is None or len(samples) != 1 or not isinstance(samples[0], pd.DataFrame):
            raise TypeError("`strata` as a column name needs a DataFrame `X` with `by=` or `labels=`.")
        X = samples[0]
        if strata not in X.columns:
            raise KeyError(f"`strata`: column {strata!r} not found in `X`; it has {short_list(X.columns)}.")
        values = X[strata]
        if columns is None:
            columns = [c for c in X.columns if c != strata]
        samples = (X,)
    else:
        values = strata
    if dropna:
        raise TypeError("`dropna=True` with `strata` needs the `df, by=` form (so that the same rows "
                        "are dropped from the data, the groups and the strata).")
    Xa, labs, names, cols = _grouped_input(samples, labels, by, columns, dropna, numeric_only, fname,
                                           allow_factors)
    if labels is not None and len(samples) == 1:
        values = align_labels(samples[0], values, "strata")
    n = Xa.shape[0]
    if isinstance(values, str) or np.ndim(values) != 1 or len(values) != n:
        raise ValueError(f"`strata` must be a column name or have one entry per row ({n}); got "
                         f"{type(values).__name__} of shape {np.shape(values)}.")
    return (Xa, labs, names, cols, as_labels(values, n, "strata"),
            strata if isinstance(strata, str) else None)


# -- paired variables ------------------------------------------------------------

def variable(v, data, name):
    """One variable as ((n, d) array, columns used, index): from data, a column name or names."""
    if has_tilde(v):      # a one-sided formula '~ a + C(g)': its design, factors as 0/1 columns
        v = formula_design(v, data, factors=indicator_columns, name=name, lhs="forbidden").rhs
        data = None
    v = foreign_to_pandas(v, name)
    data = foreign_to_pandas(data, "data")
    if data is not None and (isinstance(v, str) or (isinstance(v, (list, tuple)) and v
                                                   and all(isinstance(c, str) for c in v))):
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"`{name}` as column name(s) needs `data=` to be a DataFrame; got "
                            f"{type(data).__name__}.")
        cols = [v] if isinstance(v, str) else list(v)
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise KeyError(f"`{name}`: column(s) {short_list(missing)} not found in `data`; it has "
                           f"{list(data.columns)[:8]}.")
        v = data[cols]
    index = v.index if isinstance(v, (pd.Series, pd.DataFrame)) else None
    cols = list(v.columns) if isinstance(v, pd.DataFrame) else None
    arr, _ = as_data(v, name)
    return arr, cols, index


def paired_variables(x, y, data=None, with_index=False, names=("x", "y")):
    """Two paired variables, checked once: ``(X, Y, columns of x, columns of y)``, and with
    ``with_index`` the rows' pandas index (x's or y's; None for arrays).

    Each of ``x``, ``y`` is an array, a Series/DataFrame, column name(s) of ``data`` or a
    one-sided formula '~ a + C(g)' on ``data`` (:func:`variable`); or ``y`` is None and ``x``
    a formula 'y1 + y2 ~ x1 + C(g)' (the left side y, the right side's design x; factors as
    0/1 columns, one per level).  The rows must agree in number and, for pandas input, in
    index.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.5, 0.1, 0.2]})
    >>> X, Y, cx, cy = paired_variables("a", "b", df)
    >>> X.shape, Y.shape, cx, cy
    ((3, 1), (3, 1), ['a'], ['b'])
    """
    nx, ny = names                      # the arguments' names, for the messages
    if y is None:
        x, y, data = _formula_pair(x, data, nx, ny)
    X, cx, ix = variable(x, data, nx)
    Y, cy, iy = variable(y, data, ny)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"`{nx}` and `{ny}` must have the same number of rows (paired samples); "
                         f"got {X.shape[0]} and {Y.shape[0]}.")
    if ix is not None and iy is not None and not ix.equals(iy):
        raise ValueError(f"`{nx}` and `{ny}` have different indexes: the rows must be paired. "
                         f"Align them first (e.g. `{ny} = {ny}.loc[{nx}.index]`) or pass arrays.")
    return (X, Y, cx, cy, ix if ix is not None else iy) if with_index else (X, Y, cx, cy)


def _formula_pair(x, data, nx, ny):
    """``(x, y, None)`` from a two-sided formula ``x`` = 'y ~ x1 + C(g)' (``y`` not given): the
    left side is y (its columns as they are), the right side's design is x."""
    if not has_tilde(x) or x.strip().startswith("~"):
        raise TypeError(f"`{ny}` is missing: pass it, or pass `{nx}` as a formula "
                        f"'y1 + y2 ~ x1 + C(g)' with `data=` (the left side is {ny}).")
    fd = formula_design(x, data, factors=indicator_columns, name=nx, lhs="required")
    return fd.rhs, fd.lhs, None


def paired_indexes(*named):
    """Refuse variables read as paired rows whose pandas indexes differ: ``named`` holds
    ``(index or None, argument name)`` pairs; plain arrays (None) are taken by position."""
    have = [(ix, nm) for ix, nm in named if ix is not None]
    for ix, nm in have[1:]:
        if not ix.equals(have[0][0]):
            first = have[0][1]
            raise ValueError(f"`{first}` and `{nm}` have different indexes: the rows must be "
                             f"paired. Align them first (e.g. `{nm} = {nm}.loc[{first}.index]`) "
                             "or pass arrays.")


def strata_labels(strata, index, n):
    """``strata`` as :class:`~energystats._core._validation.Labels` of the n rows: a Series is aligned
    with the rows' index (``index``, from DataFrame/Series x and y) by the same code as
    energy_test and disco (:func:`~energystats._core._validation.align_labels`), plain arrays are
    taken by position."""
    if index is not None:
        strata = align_labels(pd.DataFrame(index=index), strata, "strata")
    return as_labels(strata, n, "strata")
