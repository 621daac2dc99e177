"""Input of the dependence statistics: one variable or a pair (arrays, DataFrame columns),
checked and converted once; strata labels; the estimator's name.
"""
from __future__ import annotations

import pandas as pd

from .._core._validation import as_data


ESTIMATORS = ("V", "U")


# -- input ---------------------------------------------------------------------

def _variable(v, data, name):
    """One variable as ((n, d) array, columns used, index): from data, a column name or names."""
    if data is not None and (isinstance(v, str) or (isinstance(v, (list, tuple)) and v
                                                   and all(isinstance(c, str) for c in v))):
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"`{name}` as column name(s) needs `data=` to be a DataFrame; got "
                            f"{type(data).__name__}.")
        cols = [v] if isinstance(v, str) else list(v)
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise KeyError(f"`{name}`: column(s) {missing} not found in `data`; it has "
                           f"{list(data.columns)[:8]}.")
        v = data[cols]
    index = v.index if isinstance(v, (pd.Series, pd.DataFrame)) else None
    cols = list(v.columns) if isinstance(v, pd.DataFrame) else None
    arr, _ = as_data(v, name)
    return arr, cols, index


def _pair(x, y, data, with_index=False):
    """``(X, Y, columns of x, columns of y)``, and with ``with_index`` the rows' pandas index
    (x's or y's; None for arrays)."""
    X, cx, ix = _variable(x, data, "x")
    Y, cy, iy = _variable(y, data, "y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"`x` and `y` must have the same number of rows (paired samples); got "
                         f"{X.shape[0]} and {Y.shape[0]}.")
    if ix is not None and iy is not None and not ix.equals(iy):
        raise ValueError("`x` and `y` have different indexes: the rows must be paired. Align "
                         "them first (e.g. `y = y.loc[x.index]`) or pass arrays.")
    return (X, Y, cx, cy, ix if ix is not None else iy) if with_index else (X, Y, cx, cy)


def _strata_labels(strata, index, n):
    """``strata`` as :class:`~energystats._core._validation.Labels` of the n rows: a Series is aligned
    with the rows' index (``index``, from DataFrame/Series x and y) by the same code as
    energy_test and disco (:func:`~energystats._core._validation.align_labels`), plain arrays are
    taken by position."""
    from .._core._validation import align_labels, as_labels

    if index is not None:
        strata = align_labels(pd.DataFrame(index=index), strata, "strata")
    return as_labels(strata, n, "strata")


def _check_estimator(estimator):
    if estimator not in ESTIMATORS:
        raise ValueError(f"`estimator` must be 'V' or 'U'; got {estimator!r}.")
    return estimator
