"""Whitening for the affinely invariant distance correlation (Székely, Rizzo & Bakirov 2007,
§3.2; Dueck, Edelmann, Gneiting & Richards 2014).

Each sample is mapped to :math:`S^{-1/2}(x - \\bar x)` with :math:`S` its sample covariance and
:math:`S^{-1/2}` the symmetric inverse square root (from the eigendecomposition of S).  The
Euclidean distances of the whitened sample do not change under :math:`x \\mapsto Ax + b` for any
invertible A (the whitened samples differ by an orthogonal map), so neither does their distance
correlation.
"""
import math

import numpy as np
import pandas as pd

from .._core._input import paired_variables

__all__ = ["whiten", "whitened_pair"]


def whiten(X, name):
    """``X`` (n×p floats) whitened by its sample covariance; a ValueError naming ``name`` when
    n ≤ p or the covariance is singular (to the rounding of the data)."""
    n, p = X.shape
    if n <= p:
        raise ValueError(f"`{name}`: the affinely invariant distance correlation whitens each sample "
                         f"by its sample covariance, which needs more rows than columns; got "
                         f"{n} rows and {p} columns.")
    top = float(np.max(np.abs(X)))
    if top > 0.0:  # a power of two: the same bits of the whitened data at any magnitude
        X = np.ldexp(X, -math.frexp(top)[1])
    Xc = X - X.mean(axis=0)
    C = (Xc.T @ Xc) / (n - 1)
    w, V = np.linalg.eigh(C)
    if not w[-1] > 0.0 or w[0] <= w[-1] * max(n, p) * np.finfo(float).eps:
        raise ValueError(f"`{name}` has a singular sample covariance (eigenvalues from {w[0]:.3g} to "
                         f"{w[-1]:.3g}, relative to the largest): a column is constant or a linear "
                         f"combination of the others, and the affinely invariant distance correlation "
                         f"is not defined; drop the redundant column(s) or use affine=False.")
    return Xc @ ((V / np.sqrt(w)) @ V.T)


def whitened_pair(x, y, data, metric):
    """``(x, y)`` for the affinely invariant statistics: paired, each whitened; a sample given
    with column names comes back as a DataFrame with those names and the rows' index (the
    result records the columns used, ``strata`` still aligns by index), else as an array."""
    if metric != "energy":
        raise ValueError(f"`affine=True` whitens the samples for the Euclidean distance: it needs "
                         f"metric='energy'; got metric={metric!r}.")
    X, Y, cx, cy, index = paired_variables(x, y, data, with_index=True)
    Xw, Yw = whiten(X, "x"), whiten(Y, "y")
    return tuple(W if cols is None else pd.DataFrame(W, columns=cols, index=index)
                 for W, cols in ((Xw, cx), (Yw, cy)))
