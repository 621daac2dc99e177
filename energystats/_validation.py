"""Input validation and conversion: the one place where user input is checked.

Every public function calls these helpers once, at the edge; the compiled
kernels behind them assume what is checked here (finite values, C-contiguous
float32/float64, group codes in range) and run without bounds checks.
"""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "as_data",
    "as_labels",
    "as_square_matrix",
    "check_int",
    "check_n_threads",
    "check_rng",
    "Labels",
]


def _is_frame(x):
    return isinstance(x, pd.DataFrame)


def as_data(X, name="X", *, dtype=None, min_samples=1, allow_1d=True):
    """Convert ``X`` to a finite, C-contiguous 2-D float32/float64 array.

    Lists, 1-D arrays (treated as n×1), 2-D arrays, pandas Series and
    DataFrames (numeric columns only) are accepted.  float32 input is kept as
    float32 (no copy when already C-contiguous); everything else becomes
    float64.  Returns ``(array, index)`` where ``index`` is the pandas index
    of a Series/DataFrame input and ``None`` otherwise.
    """
    index = None
    if isinstance(X, pd.Series):
        index = X.index
        if not (pd.api.types.is_numeric_dtype(X.dtype) or pd.api.types.is_bool_dtype(X.dtype)):
            raise TypeError(f"`{name}` must be numeric; Series {X.name!r} has dtype {X.dtype}.")
        X = X.to_numpy(dtype=np.float64, na_value=np.nan)
    elif _is_frame(X):
        index = X.index
        bad = [str(c) for c in X.columns if not (pd.api.types.is_numeric_dtype(X[c].dtype)
                                                  or pd.api.types.is_bool_dtype(X[c].dtype))]
        if bad:
            raise TypeError(
                f"`{name}` has non-numeric column(s) {bad}; select numeric columns "
                "(e.g. `columns=[...]`) or encode them first."
            )
        if X.shape[1] == 0:
            raise ValueError(f"`{name}` has no columns.")
        dtypes = {X[c].dtype for c in X.columns}
        target = np.float32 if dtypes == {np.dtype(np.float32)} else np.float64
        X = X.to_numpy(dtype=target, na_value=np.nan)
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` could not be converted to a numeric array: {exc}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"`{name}` must be numeric; got an array of dtype {arr.dtype}.") from None
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"`{name}` must be real; got complex dtype {arr.dtype}.")
    if dtype is None:
        dtype = np.float32 if arr.dtype == np.float32 else np.float64
    if arr.ndim == 0:
        raise ValueError(f"`{name}` must be a 1-D or 2-D array; got a scalar.")
    if arr.ndim == 1:
        if not allow_1d:
            raise ValueError(f"`{name}` must be 2-D; got shape {arr.shape}.")
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be a 1-D or 2-D array; got shape {arr.shape}.")
    if arr.shape[0] < min_samples:
        got = "it is empty" if arr.shape[0] == 0 else f"got {arr.shape[0]}"
        raise ValueError(f"`{name}` must have at least {min_samples} sample(s); {got}.")
    if arr.shape[1] == 0:
        raise ValueError(f"`{name}` has no features (shape {arr.shape}).")
    arr = np.ascontiguousarray(arr, dtype=dtype)
    if not np.all(np.isfinite(arr)):
        bad = ~np.isfinite(arr)
        rows = np.flatnonzero(bad.any(axis=1))
        kind = "NaN" if np.isnan(arr[bad]).any() else "inf"
        raise ValueError(
            f"`{name}` contains {kind} values ({bad.sum()} value(s) in {rows.size} row(s), "
            f"first row {rows[0]}); drop or impute them first."
        )
    return arr, index


@dataclass(frozen=True)
class Labels:
    """Integer group codes ``codes`` (0..k-1) with the original group names."""

    codes: np.ndarray
    groups: list
    sizes: np.ndarray

    @property
    def k(self):
        return len(self.groups)


def as_labels(labels, n_samples, name="labels"):
    """Encode ``labels`` (ints, strings, Categorical, Series) as codes 0..k-1.

    Groups are ordered as the categories of a Categorical (unused categories
    dropped), otherwise sorted when the labels are sortable, otherwise by
    first appearance.
    """
    if labels is None:
        raise TypeError(f"`{name}` is required.")
    if isinstance(labels, pd.DataFrame):
        raise TypeError(f"`{name}` must be 1-D; got a DataFrame.")
    values = labels
    if isinstance(labels, pd.Series):
        values = labels.array
    if isinstance(values, pd.Categorical) or isinstance(getattr(values, "dtype", None),
                                                            pd.CategoricalDtype):
        cat = pd.Categorical(values)
        if len(cat) != n_samples:
            raise ValueError(f"`{name}` has length {len(cat)}, but the data have {n_samples} samples.")
        if (cat.codes < 0).any():
            raise ValueError(f"`{name}` contains {int((cat.codes < 0).sum())} missing value(s).")
        cat = cat.remove_unused_categories()
        codes = cat.codes.astype(np.intp)
        groups = list(cat.categories)
    else:
        arr = np.asarray(values, dtype=object if not isinstance(values, np.ndarray) else None)
        if arr.ndim != 1:
            arr = np.squeeze(arr)
            if arr.ndim != 1:
                raise ValueError(f"`{name}` must be 1-D; got shape {np.shape(values)}.")
        if len(arr) != n_samples:
            raise ValueError(f"`{name}` has length {len(arr)}, but the data have {n_samples} samples.")
        missing = pd.isna(arr)
        if missing.any():
            raise ValueError(f"`{name}` contains {int(missing.sum())} missing value(s).")
        try:
            codes, uniques = pd.factorize(arr, sort=True)
        except TypeError:
            codes, uniques = pd.factorize(arr, sort=False)
        codes = codes.astype(np.intp)
        groups = [u.item() if isinstance(u, np.generic) else u for u in np.asarray(uniques, dtype=object)]
    sizes = np.bincount(codes, minlength=len(groups)).astype(np.intp)
    return Labels(np.ascontiguousarray(codes), groups, sizes)


def as_square_matrix(D, name="X", *, check_symmetric=True, rtol=1e-10):
    """Validate a precomputed semimetric matrix: square, finite, symmetric, zero diagonal."""
    arr, _ = as_data(D, name, dtype=np.float64, allow_1d=False)
    n, m = arr.shape
    if n != m:
        raise ValueError(f"`{name}` must be a square matrix with metric='precomputed'; got shape {arr.shape}.")
    if check_symmetric:
        scale = max(float(np.abs(arr).max()), np.finfo(float).tiny)
        asym = float(np.abs(arr - arr.T).max())
        if asym > rtol * scale:
            raise ValueError(
                f"`{name}` must be symmetric with metric='precomputed'; max |D - D.T| = {asym:.3g}."
            )
        diag = float(np.abs(np.diag(arr)).max())
        if diag > rtol * scale:
            raise ValueError(f"`{name}` must have a zero diagonal (rho(x, x) = 0); max |D_ii| = {diag:.3g}.")
        if (arr < -rtol * scale).any():
            raise ValueError(f"`{name}` must be non-negative: a semimetric has rho(x, y) >= 0.")
    return arr


def is_int(value):
    """True for a Python/numpy integer that is not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(value, name, low):
    """``value`` as an int ``>= low``, else a ValueError naming ``name``."""
    if not is_int(value) or value < low:
        raise ValueError(f"`{name}` must be an integer >= {low}; got {value!r}.")
    return int(value)


def check_n_threads(n_threads):
    """Resolve ``n_threads`` (None → all cores available to the process)."""
    if n_threads is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - not Linux
            return max(1, os.cpu_count() or 1)
    if not is_int(n_threads) or n_threads < 1:
        raise ValueError(f"`n_threads` must be a positive integer or None; got {n_threads!r}.")
    return int(n_threads)


def check_rng(rng):
    """``rng`` as a :class:`numpy.random.Generator` (seed, Generator or None)."""
    if isinstance(rng, np.random.RandomState):
        raise TypeError("`rng` must be a seed or a numpy.random.Generator; RandomState is not supported.")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`rng` must be None, an int seed or a numpy.random.Generator; got {rng!r}.") from exc
