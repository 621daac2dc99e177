"""Random directions for the projection tests (below every concept).

Baringhaus and Franz (2004): for u uniform on the unit sphere of R^d,
E_u |u'z| = ‖z‖ / c_d with c_d = √π Γ((d+1)/2) / Γ(d/2).  The energy test's and the
distance covariance's sums with ρ = ‖x − y‖ are therefore c_d (c_p c_q) times the mean over
directions of the same sums of the projected data (Huang and Huo 2017 for the latter).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["sphere_constant", "directions", "project", "sorted_rows", "check_n_projections",
           "DEFAULT_PROJECTIONS"]

#: the default number of random directions
DEFAULT_PROJECTIONS = 100


def check_n_projections(n_projections):
    """``n_projections`` as an int in [1, 10**6] (the refusal names the argument)."""
    if not (isinstance(n_projections, numbers.Integral) and not isinstance(n_projections, bool)
            and 1 <= n_projections <= 10**6):
        raise ValueError(f"`n_projections` must be an integer in [1, 10**6]; got {n_projections!r}.")
    return int(n_projections)


def sphere_constant(d):
    """c_d = √π Γ((d+1)/2) / Γ(d/2): ‖z‖ = c_d · E_u |u'z| for u uniform on the sphere of R^d."""
    return math.exp(0.5 * math.log(math.pi) + math.lgamma((d + 1) / 2.0) - math.lgamma(d / 2.0))


def directions(gen, K, d):
    """K directions uniform on the unit sphere (normal rows, normalised); d = 1: the sign is
    irrelevant (|u x - u y| = |x - y|), so every direction is +1."""
    if d == 1:
        return np.ones((K, 1))
    U = gen.standard_normal((K, d))
    U /= np.sqrt(np.einsum("ij,ij->i", U, U))[:, None]
    return U


def project(X, U):
    """The (J, n) projections U X', row by row, the columns added in a fixed order (no BLAS:
    the same bits on every machine and thread count), each row centred on its mean (the sums
    are translation invariant; centring keeps the running sums small)."""
    XT = np.ascontiguousarray(X.T)
    P = np.empty((U.shape[0], X.shape[0]))
    tmp = np.empty(X.shape[0])
    for r in range(U.shape[0]):
        np.multiply(XT[0], U[r, 0], out=P[r])
        for j in range(1, XT.shape[0]):
            np.multiply(XT[j], U[r, j], out=tmp)
            P[r] += tmp
    P -= P.mean(axis=1, keepdims=True)
    return P


def sorted_rows(P, n_threads):
    """``(V, order)``: every row of ``P`` sorted ascending (stable) and its sort order, the rows
    shared among ``n_threads`` threads (NumPy's sort releases the GIL; each row is sorted by one
    thread, so the result does not depend on the thread count)."""
    order = np.empty(P.shape, dtype=np.intp)
    V = np.empty(P.shape)

    def one(j):
        order[j] = np.argsort(P[j], kind="stable")
        V[j] = P[j][order[j]]

    if n_threads > 1 and P.shape[0] > 1 and P.shape[1] >= 50_000:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(n_threads, P.shape[0])) as pool:
            list(pool.map(one, range(P.shape[0])))
    else:
        for j in range(P.shape[0]):
            one(j)
    return V, order
