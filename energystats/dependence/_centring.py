"""Double and U-centred distance matrices (:func:`u_center`, :func:`d_center`,
:func:`u_product`) and the centred matrices of the matrix engine.
"""
from __future__ import annotations

import math

import numpy as np

from .._core import _engine
from .._core._input import variable
from .._core._pair_sums import _matrix_working_units, _power, _times_pow2
from .._core._validation import as_square_matrix

__all__ = ["u_center", "d_center", "u_product"]


def _double_centred(D):
    """``D − row means − column means + grand mean`` of a symmetric matrix, in place."""
    m = D.mean(axis=1)
    g = math.fsum(m) / D.shape[0]
    D -= m[:, None]
    D -= m[None, :]
    D += g
    return D


def _centred_matrix(X, met, nt):
    """The double-centred n×n distance matrix of one variable (working units) and its scale."""
    if met.kind != "builtin":
        D = X if met.kind == "precomputed" else _engine.pairwise_values(X, X, met, nt)
        Dw, sx = _matrix_working_units(D)
        return _double_centred(np.array(Dw, dtype=np.float64) if Dw is X else Dw), sx
    Xw, mx, sx = _engine.normalise(met, X)
    return _double_centred(_engine.pairwise_values(Xw, Xw, mx, nt)), sx


def _centred_matrices(X, Y, met, nt):
    """Double-centred n×n matrices of x and y (working units), memory checked first, and the
    two variables' scales back to the data's units."""
    from .._core import _memory

    n = X.shape[0]
    _memory.check_fits(2 * 8.0 * n * n, f"the two {n}×{n} distance matrices of the permutation test",
                       "Test a random subsample of the rows, or use distance_correlation_ttest "
                       "(no permutations).")
    (A, sx), (B, sy) = _centred_matrix(X, met, nt), _centred_matrix(Y, met, nt)
    return A, B, sx, sy


def _u_centred_matrices(X, Y, met, nt):
    """The U-centred n×n matrices of x and y (working units; zero diagonals) and the scales,
    as :func:`_centred_matrices` gives the double-centred ones."""
    from .._core import _memory

    n = X.shape[0]
    _memory.check_fits(3 * 8.0 * n * n, f"the two {n}×{n} U-centred distance matrices of the "
                       "permutation test", "Use statistic='dcov' (streamed beyond the memory "
                       "budget) or pvalue_method='asymptotic'.")
    out = []
    for V in (X, Y):
        if met.kind != "builtin":
            D = V if met.kind == "precomputed" else _engine.pairwise_values(V, V, met, nt)
            out.extend(_u_center_working(np.asarray(D, dtype=np.float64)))
        else:
            Vw, mv, sv = _engine.normalise(met, V)
            out.extend((_u_center_working(_engine.pairwise_values(Vw, Vw, mv, nt), rescale=False)[0],
                        sv))
    (A, sx), (B, sy) = (out[0], out[1]), (out[2], out[3])
    return A, B, sx, sy


def _sum_sq(M):
    """``Σ M²`` without BLAS: OpenBLAS's threads spin for ~0.1 s after a call, holding a core
    the permutation kernel's threads then wait for (seen: the first 0.1 s of the kernel ran at
    about 70 % speed after ``np.vdot``)."""
    return float(np.einsum("ij,ij->", M, M))


# -- centring helpers and partial distance covariance ------------------------------

def _square(D, name):
    D = as_square_matrix(D, name)
    if D.shape[0] < 4:
        raise ValueError(f"`{name}`: U-centring needs n >= 4 (it divides by n - 2 and n(n - 3)); "
                         f"got n={D.shape[0]}.")
    return D


def u_center(D):
    r"""U-centred matrix of a distance matrix (R ``energy``'s ``U_center``).

    :math:`\tilde D_{ij} = D_{ij} - \frac{D_{i\cdot}}{n-2} - \frac{D_{\cdot j}}{n-2} +
    \frac{D_{\cdot\cdot}}{(n-1)(n-2)}` for :math:`i \ne j`, 0 on the diagonal
    (Székely and Rizzo 2014).

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> D = np.abs(np.subtract.outer(np.arange(1.0, 6), np.arange(1.0, 6)))
    >>> np.round(es.u_center(D)[0], 4)
    array([ 0.    , -1.3333,  0.    ,  0.6667,  0.6667])
    """
    out, scale = _u_center_working(_square(D, "D"))
    return scale.apply(out, inplace=True) if not scale.identity else out


def _u_center_working(D, rescale=True):
    """The U-centred matrix in working units (:func:`_matrix_working_units`: no row sum can
    overflow) and the Scale back (``rescale=False``: D is in working units already)."""
    D, scale = _matrix_working_units(D) if rescale else (D, _engine.Scale())
    n = D.shape[0]
    r = D.sum(axis=1)
    out = D - r[:, None] / (n - 2) - r[None, :] / (n - 2) + math.fsum(r) / ((n - 1) * (n - 2))
    np.fill_diagonal(out, 0.0)
    return out, scale


def d_center(D):
    r"""Double-centred matrix :math:`D_{ij} - \bar D_{i\cdot} - \bar D_{\cdot j} + \bar D_{\cdot\cdot}`
    (R ``energy``'s ``D_center``).

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> D = np.abs(np.subtract.outer(np.arange(1.0, 6), np.arange(1.0, 6)))
    >>> np.round(es.d_center(D)[0], 4)
    array([-2.4, -0.8,  0.4,  1.2,  1.6])
    """
    D = as_square_matrix(D, "D")
    Dw, scale = _matrix_working_units(D)  # no row sum can overflow
    out = _double_centred(np.array(Dw, dtype=np.float64) if Dw is D else Dw)
    return scale.apply(out, inplace=True) if not scale.identity else out


def u_product(U, V):
    r""":math:`\frac{1}{n(n-3)}\sum_{i \ne j} U_{ij} V_{ij}` of two U-centred matrices
    (R ``energy``'s ``U_product``): the unbiased distance covariance when
    ``U``, ``V`` are the U-centred distance matrices of x and y.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> d = lambda v: np.abs(np.subtract.outer(v, v))
    >>> round(es.u_product(es.u_center(d(np.arange(1.0, 6))), es.u_center(d(np.array([1.0, 3, 2, 5, 4])))), 6)
    0.533333
    """
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    if U.ndim != 2 or U.shape != V.shape or U.shape[0] != U.shape[1]:
        raise ValueError(f"`U` and `V` must be square matrices of the same shape; got {U.shape} and "
                         f"{V.shape}.")
    n = U.shape[0]
    if n < 4:
        raise ValueError(f"u_product needs n >= 4; got n={n}.")
    # each matrix in working units (a power of two): the products neither overflow nor
    # underflow, and the sum is scaled back once (inf or 0 only beyond float64's range)
    (U, su), (V, sv) = _matrix_working_units(U), _matrix_working_units(V)
    P = U * V
    np.fill_diagonal(P, 0.0)
    return _times_pow2(math.fsum(P.ravel()) / (n * (n - 3)), _power(su) + _power(sv))


def _u_centred(v, name, data, met, nt, n=None):
    """U-centred distance matrix of one variable (raw data, or a matrix with 'precomputed')."""
    from .._core import _memory

    if met.kind == "precomputed":
        return _u_center_working(_square(v, name))
    X, _, _ = variable(v, data, name)
    if n is not None and X.shape[0] != n:
        raise ValueError(f"`x`, `y` and `z` must have the same number of rows; `{name}` has "
                         f"{X.shape[0]}, expected {n}.")
    _memory.check_fits(8.0 * X.shape[0] ** 2 * 3, f"the {X.shape[0]}×{X.shape[0]} distance matrix of `{name}`",
                       "Use a random subsample of the rows.")
    # working units (no overflow of squared distances); the scale converts back
    if met.kind != "builtin":
        return _u_center_working(_engine.pairwise_values(X, X, met, nt))
    Xw, mw, sc = _engine.normalise(met, X)
    return _u_center_working(_engine.pairwise_values(Xw, Xw, mw, nt), rescale=False)[0], sc


def _squared_distances(X):
    """Squared Euclidean distances between the rows of ``X`` (n, d), as an n×n matrix, summed
    coordinate by coordinate from the differences (no cancellation of |x|² + |y|² − 2x·y)."""
    D = np.zeros((X.shape[0], X.shape[0]))
    for t in range(X.shape[1]):
        diff = X[:, t][:, None] - X[:, t][None, :]
        D += diff * diff
    return D
