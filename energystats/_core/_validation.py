"""Input validation and conversion: the one place where user input is checked.

Every public function calls these helpers once, at the edge; the compiled
kernels behind them assume what is checked here (finite values, C-contiguous
float32/float64, group codes in range) and run without bounds checks.
"""
from __future__ import annotations

import math
import numbers
import os
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._foreign import foreign_labels, foreign_to_pandas

__all__ = [
    "DataConversionWarning",
    "numeric_columns",
    "column_kind",
    "short_list",
    "as_data",
    "foreign_to_pandas",
    "foreign_labels",
    "refuse_sparse",
    "align_labels",
    "as_labels",
    "as_square_matrix",
    "condensed_size",
    "expand_condensed",
    "check_int",
    "check_n_threads",
    "available_cores",
    "check_rng",
    "seeded_rng",
    "Labels",
]


def _is_frame(x):
    return isinstance(x, pd.DataFrame)


class DataConversionWarning(UserWarning):
    """The data were converted with a possible loss (e.g. integers beyond 2**53 to float64)."""


def warn(message, category=UserWarning):
    """Warn with the stack level of the first caller outside this package."""
    import sys

    # the package's folder: this module is in energystats/_core/
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    level, frame = 2, sys._getframe(1)  # stacklevel 2 = the caller of this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def short_list(items, limit=8):
    """``repr`` of a list, cut after ``limit`` items with a count of the rest."""
    items = list(items)
    if len(items) <= limit:
        return repr(items)
    head = ", ".join(repr(v) for v in items[:limit])
    return f"[{head}, ... ({len(items) - limit} more)]"


def _short(value, width=40):
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


_EXACT_INT = 2**53


def _check_int_precision(values, name, where=""):
    """Warn when integers beyond 2**53 are about to become float64 (they lose digits)."""
    if values.size == 0:
        return
    if values.dtype.kind in "iu":
        big = int(np.max(values)) > _EXACT_INT or (values.dtype.kind == "i" and int(np.min(values)) < -_EXACT_INT)
    else:  # object array of Python/numpy numbers
        big = any(isinstance(v, numbers.Integral) and abs(int(v)) > _EXACT_INT for v in values.ravel())
    if big:
        warn(f"`{name}`{where} holds integers larger than 2**53 in magnitude; as float64 they "
             "lose their last digits (statistics are computed in floating point). Rescale or "
             "centre them first if those digits matter.", DataConversionWarning)


def _is_real_number(v):
    return (isinstance(v, (numbers.Real, np.bool_)) or type(v).__name__ == "Decimal") and not isinstance(v, (str, bytes))


def _refuse_dtype(arr, name):
    kind = arr.dtype.kind
    if kind in "US":
        what = "text (strings)" if kind == "U" else "bytes"
        raise TypeError(f"`{name}` holds {what} (dtype {arr.dtype}); numbers stored as text are not "
                        "parsed silently: convert them explicitly (e.g. `np.asarray(X, dtype=float)`).")
    if kind in "mM":
        what = "datetimes" if kind == "M" else "timedeltas"
        raise TypeError(f"`{name}` holds {what} (dtype {arr.dtype}); they are not converted silently "
                        "because the numbers would depend on the unit: convert them explicitly, "
                        "e.g. `(t - t.min()) / np.timedelta64(1, 's')` for seconds.")
    if kind == "c":
        raise TypeError(f"`{name}` must be real; got complex dtype {arr.dtype}.")
    if kind == "V":
        raise TypeError(f"`{name}` must be numeric; got a structured or void array of dtype {arr.dtype}.")
    if kind == "O":
        flat = arr.ravel()
        for i, v in enumerate(flat):
            if v is None or (isinstance(v, float) and v != v):
                continue  # missing: reported as NaN below
            if not _is_real_number(v):
                pos = np.unravel_index(i, arr.shape)
                where = f"row {pos[0]}" + (f", column {pos[1]}" if arr.ndim > 1 else "")
                raise TypeError(f"`{name}` must be numeric; found {_short(v)} "
                                f"({type(v).__name__}) at {where}. Numbers stored as text are not "
                                "parsed silently: convert them explicitly first.")


# -- DataFrame columns ---------------------------------------------------------

_COMMA_DECIMAL = re.compile(r"^\s*[-+]?\d+,\d+\s*$")


def _text_hint(values):
    """A hint for text cells that look like comma decimals (``'1,5'``)."""
    if any(isinstance(v, str) and _COMMA_DECIMAL.match(v) for v in values):
        return (" The cells look like numbers with a decimal comma: read the file with "
                "`decimal=','` (and usually `sep=';'`), or on the command line "
                "`--decimal , --sep ';'`.")
    return ""


def column_kind(s, file_rows=False):
    """Classify a column: 'numeric', 'text' (wholly non-numeric), 'temporal' or 'complex'.

    A column whose cells are mostly numbers but with some text is never
    classified: it raises a ValueError naming the column, the first row and
    the value (never dropped, never coerced).  The row is the position
    counting from 0 with the index label, or with ``file_rows=True`` (the
    command line) the file's data row counting from 1.
    """
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "numeric"
    if pd.api.types.is_complex_dtype(dtype):
        return "complex"
    if pd.api.types.is_numeric_dtype(dtype):
        return "numeric"
    if isinstance(dtype, pd.CategoricalDtype):
        return "text"
    if dtype.kind in "mM" or isinstance(dtype, (pd.PeriodDtype, pd.DatetimeTZDtype)):
        return "temporal"
    # object / string columns: look at the cells
    present = s[s.notna()]
    if present.size == 0:
        return "text"
    values = present.to_numpy(dtype=object)
    real = np.fromiter((_is_real_number(v) for v in values), dtype=bool, count=values.size)
    if real.all():
        return "numeric"  # an object column of numbers (no text among them)
    parsed = pd.to_numeric(present, errors="coerce").notna().to_numpy()
    comma = np.fromiter((isinstance(v, str) and _COMMA_DECIMAL.match(v) is not None for v in values),
                        dtype=bool, count=values.size)
    numberish = real | parsed | comma  # decimal commas are numbers in disguise: never dropped
    if numberish.sum() * 2 < values.size:
        return "text"
    bad = np.flatnonzero(~numberish)
    if bad.size:
        label = present.index[bad[0]]
        pos = s.index.get_loc(label)
        pos = pos if isinstance(pos, (int, np.integer)) else label
        if file_rows:  # by position: the index of a file's frame need not be 0..n-1
            row = int(np.flatnonzero(s.notna().to_numpy())[bad[0]]) + 1
            where, advice = f"data row {row}", "correct or remove that value in the file."
        else:
            where = f"row {pos} (counting from 0; index {label!r})"
            advice = ("correct or remove that value, or convert the column yourself (e.g. "
                      "`pd.to_numeric(df[col], errors='coerce')` and drop the NaN rows).")
        raise ValueError(
            f"column {s.name!r} is numeric but for {bad.size} cell(s) of text: the first is "
            f"{_short(values[bad[0]])} in {where}. A column is never dropped or coerced for a "
            f"stray cell: {advice}" + _text_hint(values[bad[:50]]))
    raise ValueError(
        f"column {s.name!r} holds numbers stored as text (e.g. {_short(values[~real][0])}); they are "
        "not parsed silently: convert the column explicitly (`pd.to_numeric(df[col])`)."
        + _text_hint(values[~real][:50]))


def check_unique_columns(df, name="X"):
    """Refuse a DataFrame with duplicate column names (they make columns ambiguous)."""
    dup = df.columns[df.columns.duplicated()]
    if len(dup):
        raise ValueError(f"`{name}` has duplicate column names {short_list(pd.unique(dup))}; "
                         "rename them so that every column can be named unambiguously.")


def numeric_columns(df, columns=None, *, exclude=(), numeric_only=False, name="X",
                    hint="`columns=[...]`", only_hint="`numeric_only=True`", file_rows=False):
    """The columns of ``df`` to use, checked, and the non-numeric ones left out.

    ``columns=None`` means every column not in ``exclude``; a wholly
    non-numeric column (text, categorical, datetime) among them is an error
    naming it, or, with ``numeric_only=True``, left out and returned in the
    second list (pandas' ``numeric_only`` convention).  A column of numbers
    with stray text cells is always an error naming the row and the value
    (``file_rows``: see :func:`column_kind`).  Returns ``(used, left_out)``.
    """
    check_unique_columns(df, name)
    exclude = list(exclude)
    if columns is None:
        candidates = [c for c in df.columns if c not in exclude]
        explicit = False
    else:
        candidates = [columns] if isinstance(columns, (str, int)) else list(columns)
        missing = [c for c in candidates if c not in df.columns]
        if missing:
            raise KeyError(f"{hint}: column(s) {short_list(missing)} not found in `{name}`; "
                           f"it has {short_list(df.columns)}.")
        overlap = [c for c in candidates if c in exclude]
        if overlap:
            raise ValueError(f"{hint} must not contain the grouping column(s) {short_list(overlap)}.")
        dups = pd.Index(candidates)[pd.Index(candidates).duplicated()]
        if len(dups):
            raise ValueError(f"{hint} names column(s) {short_list(pd.unique(dups))} more than once.")
        explicit = True
    used, left_out = [], []
    for c in candidates:
        kind = column_kind(df[c], file_rows)
        if kind == "numeric":
            used.append(c)
        elif kind == "complex":
            raise TypeError(f"column {c!r} of `{name}` is complex; energy statistics need real data.")
        else:
            left_out.append((c, kind))
    if left_out and (explicit or not numeric_only):
        names = [c for c, _ in left_out]
        kinds = sorted({k for _, k in left_out})
        if explicit:
            raise TypeError(f"{hint}: column(s) {short_list(names)} of `{name}` are not numeric "
                            f"({', '.join(kinds)}); choose numeric columns.")
        raise TypeError(f"`{name}` has non-numeric column(s) {short_list(names)} "
                        f"({', '.join(kinds)}); choose the columns with {hint}, or pass "
                        f"{only_hint} to leave them out.")
    if not used:
        raise ValueError(f"`{name}` has no numeric columns to use"
                         + (f" besides {short_list(exclude)}" if exclude else "") + ".")
    return used, [c for c, _ in left_out]


def _frame_to_array(X, name):
    """A DataFrame of numeric columns as a 2-D array (float32 when every column is)."""
    check_unique_columns(X, name)
    if X.shape[1] == 0:
        raise ValueError(f"`{name}` has no columns.")
    kinds = [column_kind(X[c]) for c in X.columns]
    bad = [str(c) for c, k in zip(X.columns, kinds) if k != "numeric"]
    if bad:
        raise TypeError(f"`{name}` has non-numeric column(s) {short_list(bad)}; "
                        f"{_selection_advice()}")
    for c in X.columns:
        s = X[c]
        if pd.api.types.is_integer_dtype(s.dtype) or s.dtype == object:
            vals = s.dropna().to_numpy()
            if vals.dtype == object:    # too large for float64 is an error, before the warning
                _check_float_range(vals, name, f" (column {c!r})", None)
            if vals.dtype == object or vals.dtype.kind in "iu":
                _check_int_precision(vals, name, f" (column {c!r})")
    dtypes = {X[c].dtype for c in X.columns}
    target = np.float32 if dtypes == {np.dtype(np.float32)} else np.float64
    try:
        return X.to_numpy(dtype=target, na_value=np.nan)
    except OverflowError:
        for c in X.columns:
            _check_float_range(X[c].dropna().to_numpy(dtype=object), name, f" (column {c!r})",
                               X.index)
        raise


def _selection_advice():
    """How to leave non-numeric columns out, from the signature of the public function that
    was called (the outermost frame of a name in ``energystats.__all__``): its ``columns``
    and ``numeric_only`` arguments where it has them, else selecting the columns first."""
    import inspect
    import sys

    import energystats

    public, frame = None, sys._getframe(1)
    while frame is not None:
        code = frame.f_code.co_name
        if frame.f_globals.get("__name__", "").startswith("energystats.") \
                and code in energystats.__all__:
            public = code                         # keep going: the outermost one was called
        frame = frame.f_back
    if public is None:
        return "select the numeric columns (X[[...]]) or encode them first."
    params = inspect.signature(getattr(energystats, public)).parameters
    offers = [f"`{p}`" for p in ("columns", "numeric_only") if p in params]
    if offers:
        return (f"choose the columns with {' or '.join(offers)} of `{public}`, or encode them "
                "first.")
    return (f"`{public}` takes numeric columns only: select them before the call "
            "(X[[...]]) or encode them first.")


def _check_float_range(values, name, where="", index=None):
    """A ValueError naming the first integer beyond the float64 range (about 1.8e308)."""
    flat = np.asarray(values, dtype=object).ravel()
    for i, v in enumerate(flat):
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            try:
                float(v)
            except OverflowError:
                digits = len(str(abs(int(v))))
                row = i if index is None or values.ndim != 1 else index[i]
                raise ValueError(
                    f"`{name}`{where} holds an integer of {digits} digits (at row {row}), beyond "
                    "the float64 range (about 1.8e308) in which statistics are computed; rescale "
                    "it (e.g. divide by a power of ten) or correct it.") from None


def refuse_sparse(X, name="X"):
    """A TypeError naming ``name`` for a SciPy sparse matrix or array (never densified silently:
    the dense copy may not fit in memory, and numpy would make a 0-d object array of it)."""
    import sys

    sparse = sys.modules.get("scipy.sparse")  # not imported: X cannot be one of its types
    if sparse is not None and sparse.issparse(X):
        raise TypeError(f"`{name}` is a SciPy sparse {type(X).__name__} of shape {X.shape}; "
                        "sparse input is not supported (the statistics use every pairwise "
                        f"distance, so nothing is gained): pass `{name}.toarray()` if the dense "
                        "array fits in memory.")


def as_data(X, name="X", *, dtype=None, min_samples=1, allow_1d=True):
    """Convert ``X`` to a finite, C-contiguous 2-D float32/float64 array.

    Lists, 1-D arrays (treated as n×1), 2-D arrays, pandas Series and
    DataFrames (numeric columns only) are accepted.  float32 input is kept as
    float32 (no copy when already C-contiguous); everything else becomes
    float64.  Nothing is converted silently: text, bytes, datetimes,
    timedeltas, masked values, duplicate column names and SciPy sparse
    matrices (:func:`refuse_sparse`) are errors that name ``name``; integers
    beyond 2**53 warn (:class:`DataConversionWarning`).
    Returns ``(array, index)`` where ``index`` is the pandas index of a
    Series/DataFrame input and ``None`` otherwise.
    """
    index = None
    X = foreign_to_pandas(X, name)
    refuse_sparse(X, name)
    if hasattr(X, "__dask_graph__"):  # np.asarray would compute it, silently
        raise TypeError(f"`{name}` is a Dask collection, and this call has no Dask backend (see the "
                        "guide page \"Scaling out\" for those that do); compute it first "
                        "(`x.compute()`) if it fits in memory.")
    if isinstance(X, pd.Series):
        index = X.index
        X = X.to_frame()
        X = _frame_to_array(X, name).ravel()
    elif _is_frame(X):
        index = X.index
        X = _frame_to_array(X, name)
    elif isinstance(X, np.ma.MaskedArray):
        masked = int(np.ma.count_masked(X))
        if masked:
            raise ValueError(f"`{name}` is a masked array with {masked} masked value(s); masks are not "
                             "applied silently: drop those rows (e.g. `X[~X.mask.any(axis=1)]`) or "
                             "fill them (`X.filled(...)`) first.")
        X = np.ma.getdata(X)
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"`{name}` could not be converted to a numeric array: {exc}") from None
    _refuse_dtype(arr, name)
    if arr.dtype.kind == "O":       # too large for float64 is an error, before the warning
        _check_float_range(arr, name)
    if arr.dtype.kind in "iuO":
        _check_int_precision(arr, name)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        try:
            arr = arr.astype(np.float64)
        except OverflowError:
            _check_float_range(arr, name)
            raise
        except (TypeError, ValueError):
            raise TypeError(f"`{name}` must be numeric; got an array of dtype {arr.dtype}.") from None
    if dtype is None:
        dtype = np.float32 if arr.dtype == np.float32 else np.float64
    if arr.ndim == 0:
        raise ValueError(f"`{name}` must be a 1-D or 2-D array; got a scalar.")
    if arr.ndim == 1:
        if not allow_1d:
            raise ValueError(f"`{name}` must be 2-D; got shape {arr.shape}.")
        arr = arr.reshape(-1, 1)
    check_sample_shape(arr, name, min_samples)
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


def align_labels(X, labels, name="labels"):
    """Align labels that carry a pandas index with indexed data (``X`` a Series/DataFrame).

    Equal indexes are used as they are; the same index labels in another
    order are aligned (as pandas does); a mismatched or duplicated index is
    an error.  Plain arrays and lists (on either side) stay positional.
    """
    labels = foreign_labels(labels, name)
    if not (isinstance(labels, (pd.Series, pd.DataFrame)) and isinstance(X, (pd.Series, pd.DataFrame))):
        return labels
    xi, li = X.index, labels.index
    if li.equals(xi):
        return labels
    if len(li) == len(xi) and not li.has_duplicates and not xi.has_duplicates:
        missing = xi.difference(li)
        if len(missing) == 0:
            return labels.reindex(xi)
    else:
        missing = xi.difference(li) if not li.has_duplicates else pd.Index([])
    extra = li.difference(xi)
    parts = []
    if li.has_duplicates or xi.has_duplicates:
        parts.append("an index has duplicate entries")
    if len(missing):
        parts.append(f"{len(missing)} row(s) of the data have no label (e.g. index {missing[0]!r})")
    if len(extra):
        parts.append(f"{len(extra)} label(s) match no row (e.g. index {extra[0]!r})")
    if len(li) != len(xi):
        parts.append(f"{len(li)} labels for {len(xi)} rows")
    raise ValueError(f"`{name}` is indexed but its index does not match the data's: "
                     f"{'; '.join(parts) or 'the indexes differ'}. Labels with an index are aligned "
                     "with the data by index; pass `.to_numpy()` to use them by position.")


def as_labels(labels, n_samples, name="labels"):
    """Encode ``labels`` (ints, strings, Categorical, Series) as codes 0..k-1.

    Groups are ordered as the categories of a Categorical (unused categories
    dropped), otherwise sorted when the labels are sortable, otherwise by
    first appearance.
    """
    if labels is None:
        raise TypeError(f"`{name}` is required.")
    labels = foreign_labels(labels, name)
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
        for i, v in enumerate(arr if arr.dtype == object else ()):
            try:
                hash(v)
            except TypeError:
                raise TypeError(f"`{name}` must hold hashable group names (numbers, strings, "
                                f"tuples); found a {type(v).__name__} at position {i}: "
                                f"{_short(v)}. Convert each to a tuple or string first.") from None
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


def condensed_size(m, name="X"):
    """The number of points n whose condensed distance vector has length ``m = n(n-1)/2``; a
    ValueError naming ``name``, the length and the nearest valid lengths otherwise."""
    n = (1 + math.isqrt(1 + 8 * m)) // 2
    if n * (n - 1) // 2 != m:
        lo, hi = n * (n - 1) // 2, (n + 1) * n // 2
        raise ValueError(f"`{name}` is 1-D, so it is read as a condensed distance vector (the order "
                         "of scipy.spatial.distance.pdist and of R's dist), whose length must be "
                         f"n(n-1)/2 for n points; got length {m}, between {lo} (n={n}) and {hi} "
                         f"(n={n + 1}).")
    return n


def expand_condensed(v, name="X"):
    """The n×n matrix of a validated condensed vector ``v`` (finite float64, length n(n-1)/2):
    entry k is the pair (i, j), i < j, in row order of the upper triangle, which is also R's
    ``dist`` order (the lower triangle by columns).  The matrix is checked against the memory
    available first (:func:`~energystats._core._memory.check_fits`)."""
    from ._memory import check_fits

    n = condensed_size(v.size, name)
    check_fits(8.0 * n * n, f"the {n}×{n} matrix expanded from the condensed vector `{name}` "
               f"(length {v.size})",
               "Every statistic with metric='precomputed' works on the square matrix; pass the data "
               "themselves with a metric name instead (their pair sums are streamed in tiles), or "
               "a random subset of the points.")
    D = np.empty((n, n), dtype=np.float64)
    k = 0
    for i in range(n):
        row = v[k:k + n - 1 - i]
        D[i, i] = 0.0
        D[i, i + 1:] = row
        D[i + 1:, i] = row
        k += n - 1 - i
    return D


def as_square_matrix(D, name="X", *, check_symmetric=True, rtol=1e-10):
    """Validate a precomputed semimetric matrix: square, finite, symmetric, zero diagonal.

    A 1-D ``D`` is a condensed distance vector (scipy's ``pdist`` order, which is R's ``dist``
    order): its length must be n(n-1)/2, its values finite and non-negative; it is expanded to
    the n×n matrix (:func:`expand_condensed`), so every result equals the square matrix's.
    """
    if np.ndim(D) == 1 and not hasattr(D, "__dask_graph__"):
        v, _ = as_data(D, name, dtype=np.float64)
        v = v.ravel()
        if (v < 0).any():
            k = int(np.flatnonzero(v < 0)[0])
            raise ValueError(f"`{name}` must be non-negative: a semimetric has rho(x, y) >= 0; the "
                             f"condensed vector has {int((v < 0).sum())} negative value(s), the "
                             f"first {float(v[k])!r} at position {k}.")
        return expand_condensed(v, name)
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


def check_sample_shape(X, name, min_samples):
    """A ValueError naming ``name`` unless ``X`` (an array or a Dask array) is 2-D with at least
    ``min_samples`` rows and one column; the one shape rule of :func:`as_data` and its Dask twin."""
    if X.ndim != 2:
        raise ValueError(f"`{name}` must be a 1-D or 2-D array; got shape {X.shape}.")
    if X.shape[0] < min_samples:
        got = "it is empty" if X.shape[0] == 0 else f"got {X.shape[0]}"
        raise ValueError(f"`{name}` must have at least {min_samples} sample(s); {got}.")
    if X.shape[1] == 0:
        raise ValueError(f"`{name}` has no features (shape {X.shape}).")


def check_int(value, name, low):
    """``value`` as an int ``>= low``, else a ValueError naming ``name``."""
    if not is_int(value) or value < low:
        raise ValueError(f"`{name}` must be an integer >= {low}; got {value!r}.")
    return int(value)


def available_cores():
    """Cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _running_threads():
    """Runnable threads of the whole system (``/proc/loadavg``)."""
    with open("/proc/loadavg") as fh:
        return int(fh.read().split()[3].split("/")[0])


def _own_running_threads():
    """This process's threads in state R (``/proc/self/task/*/stat``)."""
    own = 0
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                own += fh.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return own


def busy_cores(samples=2):
    """Threads of other processes running right now (Linux), or 0 when unknown.

    The system's count of runnable threads (``/proc/loadavg``) less this
    process's own running threads (``/proc/self/task/*/stat``), read at the
    moment of the call (not the load average of the last minute).  This
    process's threads are counted just before and just after the system's
    count, and the larger count is used: threads of a kernel that has just
    returned (OpenMP's, or BLAS's, which spin for a while) may stop running
    between the two reads, and must not then count as another process's.
    The smallest of ``samples`` such readings is returned, so that a thread
    that runs for an instant (a shell, a monitor) does not make the next
    call single-threaded.
    """
    try:
        best = None
        for _ in range(max(1, samples)):
            before = _own_running_threads()
            running = _running_threads()
            after = _own_running_threads()
            busy = max(0, running - max(before, after, 1))
            best = busy if best is None else min(best, busy)
        return best
    except (OSError, ValueError, IndexError):
        return 0


def default_threads():
    """Threads for ``n_threads=None``: the available cores not busy with other work, at least 1.

    When every core is busy, a team of threads is held up by whichever member
    the scheduler has set aside, and one thread finishes sooner
    (``benchmarks/bench_threads.py --busy``); the results are the same, bit for
    bit, for any number of threads.
    """
    cores = available_cores()
    if cores == 1 or os.environ.get("ENERGYSTATS_IGNORE_LOAD"):
        return cores
    import time

    now = time.monotonic()
    if now - _LOAD["when"] > _LOAD_INTERVAL:  # reading /proc costs ~0.1 ms: at most every 0.25 s
        _LOAD["busy"], _LOAD["when"] = busy_cores(), now
    return max(1, cores - _LOAD["busy"])


_LOAD = {"when": -1e9, "busy": 0}
_LOAD_INTERVAL = 0.25


#: ``n_threads`` above this many times the available cores is refused: threads the OS
#: cannot create would end the process (GNU OpenMP aborts) instead of raising
MAX_THREADS_PER_CORE = 4

#: set once a kernel may have started OpenMP threads in this process, and in a child
#: forked after that (GNU OpenMP's thread pool does not survive fork: a parallel region
#: in the child would wait forever for threads that do not exist)
_THREADS = {"started": False, "forked_after_threads": False}


def _after_fork_in_child():
    if _THREADS["started"]:
        _THREADS["forked_after_threads"] = True


if hasattr(os, "register_at_fork"):  # pragma: no branch - POSIX
    os.register_at_fork(after_in_child=_after_fork_in_child)


def check_exact(exact):
    """``exact`` (None, True or False; 1 and 0 are not taken for True and False)."""
    if not (exact is None or isinstance(exact, (bool, np.bool_))):
        raise ValueError(f"`exact` must be None, True or False; got {exact!r}.")
    return None if exact is None else bool(exact)


def check_n_threads(n_threads):
    """Resolve ``n_threads`` (None → the cores available to the process and not busy
    with other processes' threads at the moment of the call: :func:`default_threads`).

    At most ``MAX_THREADS_PER_CORE`` × the available cores (else a ValueError).
    In a process forked (``multiprocessing``'s 'fork' start method) after this
    package ran multi-threaded kernels, kernels run single-threaded: the
    OpenMP runtime cannot start threads there; a request for more warns.
    """
    cores = available_cores()
    if n_threads is None:
        n = default_threads()
    else:
        if not is_int(n_threads) or n_threads < 1:
            raise ValueError(f"`n_threads` must be a positive integer or None; got {n_threads!r}.")
        limit = MAX_THREADS_PER_CORE * cores
        if n_threads > limit:
            raise ValueError(f"`n_threads` must be at most {limit} ({MAX_THREADS_PER_CORE} × the "
                             f"{cores} available core(s)); got {n_threads}.")
        n = int(n_threads)
    if _THREADS["forked_after_threads"]:
        if n_threads is not None and n_threads > 1:
            warn(f"`n_threads={n_threads}` in a process forked after multi-threaded kernels ran: "
                 "the OpenMP runtime cannot start threads after fork, so the kernels run on one "
                 "thread. Use the 'spawn' or 'forkserver' start method of multiprocessing for "
                 "parallel kernels in worker processes.", RuntimeWarning)
        return 1
    if n > 1:
        _THREADS["started"] = True
    return n


def seeded_rng(rng):
    """``(Generator, seed)``: with ``rng=None`` a fresh seed is drawn and returned.

    The seed is an int that, passed back as ``rng=``, repeats the run; with
    an int ``rng`` it is that int; with a Generator (whose seed is unknown)
    it is None.
    """
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"`rng` must be None, a non-negative integer seed or a "
                        f"numpy.random.Generator; got {rng!r} (a bool, not a seed).")
    if rng is None:
        import secrets

        seed = secrets.randbelow(2**32)
        return np.random.default_rng(seed), seed
    if is_int(rng):
        if rng < 0:
            raise ValueError(f"`rng` must be a non-negative integer seed, a numpy.random.Generator "
                             f"or None; got {rng!r}.")
        return np.random.default_rng(int(rng)), int(rng)
    return check_rng(rng), None


def check_rng(rng):
    """``rng`` as a :class:`numpy.random.Generator` (seed, Generator or None)."""
    if isinstance(rng, (bool, np.bool_)):
        raise TypeError(f"`rng` must be None, a non-negative integer seed or a "
                        f"numpy.random.Generator; got {rng!r} (a bool, not a seed).")
    if isinstance(rng, np.random.RandomState):
        raise TypeError("`rng` must be a seed or a numpy.random.Generator; RandomState is not supported.")
    try:
        return np.random.default_rng(rng)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`rng` must be None, an int seed or a numpy.random.Generator; got {rng!r}.") from exc
