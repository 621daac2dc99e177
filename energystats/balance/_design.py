"""The covariates as a numeric design: factor columns expanded to 0/1 indicators, weights
given as a pandas Series aligned with the rows by index, and columns and weights brought to
working units by powers of two.

Shared by :func:`~energystats.balance_table` and (to come) the balancing weights, so that both
see the same columns under the same names.  R ``cobalt`` (``splitfactor``, used by
``bal.tab``) is the model: a factor ``col`` becomes one 0/1 column per level, named
``col_level``; with ``drop_first="if2"`` (cobalt's setting in ``bal.tab``) a factor with two
levels keeps only the second one's column, the first being its complement.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._validation import align_labels

__all__ = ["FactorExpansion", "expand_factors", "is_factor", "align_weights", "pow2_shift",
           "column_shifts"]

DROP_FIRST = ("if2", True, False)


@dataclass(frozen=True)
class FactorExpansion:
    """What :func:`expand_factors` did: which columns of the input became which 0/1 columns.

    Attributes
    ----------
    columns : dict
        Each expanded factor column of the input -> the tuple of the names of its 0/1 columns
        in the output (in level order); columns that were not expanded are absent.
    levels : dict
        Each expanded factor column -> the tuple of the levels of those columns (the same
        order), the level of output column ``columns[c][i]`` being ``levels[c][i]``.
    dropped : dict
        Each expanded factor column -> the level whose column was left out (its first level,
        under ``drop_first``), or None when every level has a column.
    """

    columns: dict = field(default_factory=dict)
    levels: dict = field(default_factory=dict)
    dropped: dict = field(default_factory=dict)

    @property
    def source(self):
        """Output column -> the factor column of the input it came from (expanded columns only)."""
        return {new: old for old, names in self.columns.items() for new in names}

    def __bool__(self):
        return bool(self.columns)


def is_factor(col):
    """True for a pandas column that :func:`expand_factors` expands: dtype category, bool
    (NumPy or pandas' nullable 'boolean'), object, or a pandas string dtype."""
    dt = col.dtype
    return (isinstance(dt, (pd.CategoricalDtype, pd.StringDtype, pd.BooleanDtype))
            or dt == object or dt == bool)


def _levels(col):
    """The observed levels of a factor column, in order: a categorical's categories (unused
    ones left out), False before True, else sorted when the values sort, else first seen."""
    dt = col.dtype
    if isinstance(dt, pd.CategoricalDtype):
        seen = set(col.cat.codes[col.cat.codes >= 0])
        return [c for i, c in enumerate(dt.categories) if i in seen]
    values = pd.unique(col.to_numpy(dtype=object))
    try:
        return sorted(values)
    except TypeError:  # mixed types that do not compare
        return list(values)


def expand_factors(X, *, drop_first="if2", exclude=(), name="X"):
    r"""The covariates ``X`` with every factor column replaced by 0/1 indicator columns.

    Parameters
    ----------
    X : DataFrame, Series or array_like, shape (n, d)
        Covariates.  A DataFrame's (or a named Series') columns of dtype category, bool,
        object or string are factors; all other columns must be numeric (checked later by
        the input layer, whose errors name them).  Anything else (arrays, lists) has no
        factors: a numeric array comes back as float64, other input unchanged, for the input
        layer to refuse with its named error.
    drop_first : {'if2', True, False}
        'if2' (default, cobalt's ``bal.tab``): a factor with exactly two observed levels gets
        one column, for its second level (the first is its complement); True: the first
        level of every factor is left out (reference coding, for a full-rank design); False:
        one column per level.
    exclude : sequence of column names
        Columns left as they are, in place (e.g. a treatment column that is still in ``X``).
    name : str
        The argument's name in error messages.

    Returns
    -------
    X : DataFrame or ndarray
        A DataFrame of float64 columns (the excluded ones as they were) with the original
        index and the original column order, each factor's columns in its place, named
        ``f"{col}_{level}"``; an array input as float64.
    info : FactorExpansion
        Which columns were expanded into which names and levels (empty without factors).

    Raises
    ------
    ValueError
        A factor column with a missing value (None, NaN, ``pd.NA``) -- it is refused, not
        dropped, naming the column and the first row; a new column name that is already a
        column of ``X``; a bad ``drop_first``.

    Notes
    -----
    Levels are the *observed* values, in this order: a categorical's categories (unused ones
    left out, so no column is all zero), ``False`` before ``True``, else sorted (first seen
    when the values do not sort, e.g. mixed types).  A factor with one observed level gives
    one column of ones.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"age": [30, 41, 52], "race": ["b", "w", "h"], "male": [True, False, True]})
    >>> Z, info = expand_factors(df)
    >>> list(Z.columns)
    ['age', 'race_b', 'race_h', 'race_w', 'male_True']
    >>> info.columns["male"], info.dropped["male"]
    (('male_True',), False)
    """
    if drop_first not in DROP_FIRST or not isinstance(drop_first, (str, bool)):
        raise ValueError(f"`drop_first` must be 'if2', True or False; got {drop_first!r}.")
    info = FactorExpansion()
    if isinstance(X, pd.Series):
        if X.name is None or not is_factor(X):
            return X, info
        X = X.to_frame()
    if not isinstance(X, pd.DataFrame):
        arr = np.asarray(X) if isinstance(X, (np.ndarray, list, tuple)) else None
        if arr is not None and arr.dtype.kind in "biuf":
            return arr.astype(np.float64, copy=False), info
        return X, info
    if X.columns.has_duplicates:  # the input layer refuses them, naming them
        return X, info
    exclude = set(exclude)
    out = []                                    # (name, column) in the output's order
    for col in X.columns:
        c = X[col]
        if col in exclude or not is_factor(c):
            out.append((col, c if col in exclude else _as_float(c)))
            continue
        missing = c.isna().to_numpy()
        if missing.any():
            i = int(np.flatnonzero(missing)[0])
            raise ValueError(f"`{name}`: column {col!r} is a factor (dtype {c.dtype}) with "
                             f"{int(missing.sum())} missing value(s), e.g. at row {X.index[i]!r}; "
                             "missing values are not dropped silently: drop those rows or make "
                             "'missing' a level of its own (e.g. `.fillna('missing')`).")
        levels = _levels(c)
        drop = drop_first is True or (drop_first == "if2" and len(levels) == 2)
        dropped = levels[0] if drop and len(levels) > 1 else None
        kept = levels[1:] if dropped is not None else levels
        values = c.to_numpy(dtype=object)
        names = tuple(f"{col}_{lev}" for lev in kept)
        out.extend((new, pd.Series((values == lev).astype(np.float64), index=X.index))
                   for new, lev in zip(names, kept))
        info.columns[col], info.levels[col], info.dropped[col] = names, tuple(kept), dropped
    seen, dup = set(), []
    for k, _ in out:
        (dup.append(k) if k in seen else seen.add(k))
    if dup:
        raise ValueError(f"`{name}`: expanding the factor columns gives the name(s) {dup} twice "
                         "(a factor level's column `col_level` is also another column's name); "
                         "rename one of them.")
    return pd.DataFrame(dict(out), index=X.index), info


def _as_float(c):
    """A numeric column as float64 (pandas' nullable ones with NaN for NA, for the input layer to
    refuse by name); integers beyond 2**53 and non-numeric columns are left as they are, for the
    input layer's warning or error."""
    if not pd.api.types.is_numeric_dtype(c.dtype) or pd.api.types.is_bool_dtype(c.dtype):
        return c
    if pd.api.types.is_integer_dtype(c.dtype) and len(c) and \
            float(np.nanmax(np.abs(c.to_numpy(dtype=np.float64, na_value=np.nan)))) > 2**53:
        return c
    return pd.Series(c.to_numpy(dtype=np.float64, na_value=np.nan), index=c.index, name=c.name)


def align_weights(X, w, name):
    """``w`` aligned with the rows of ``X`` by index when both carry one (a Series against a
    DataFrame or Series), by the rule of the treatment (:func:`align_labels`): the same labels
    in another order are reordered, different labels are an error naming ``name``.  Anything
    else is returned as it is (positional)."""
    if isinstance(w, pd.Series) and isinstance(X, (pd.DataFrame, pd.Series)):
        return align_labels(X, w, name)
    return w


def pow2_shift(a):
    """The power of two ``e`` with ``max|a| * 2**-e`` in [0.5, 1) (0 when ``a`` is all zero or
    empty): ``np.ldexp(a, -e)`` is ``a`` in working units, exactly."""
    top = float(np.max(np.abs(a))) if np.size(a) else 0.0
    return math.frexp(top)[1] if top > 0 and np.isfinite(top) else 0


def column_shifts(Z):
    """:func:`pow2_shift` of each column of ``Z`` (n, d), as an int array of length d."""
    return np.array([pow2_shift(Z[:, j]) for j in range(Z.shape[1])], dtype=np.int64)
