"""Dependence on the Dask backend: the permuted pair sums and the dCor Gram tiles as tasks
(the pair sums themselves are :mod:`energystats._core._dask_pair_sums`).
"""
from __future__ import annotations

import numpy as np

from .._core._dask import ROWS_WORK, _concat, _draw_perms, lazy_draws


def _dep_permuted(prep, terms, perms, n_threads):
    """``Σ_ij A_ij B_{p_i p_j}`` for a batch of permutations (the threads backend's streamed kernel,
    all rows in one call: the same bits as its row-split calls)."""
    from .._lib import _dependence

    va, vb, ga, gb = terms[:4]
    perms = np.ascontiguousarray(perms, dtype=np.intp)
    state = np.zeros((perms.shape[0], 2))
    _dependence.streamed_permuted_products(prep["X"], prep["XT"], prep["Y"], prep["code"], prep["px"],
                                           prep["py"], va, ga, vb, gb, perms, 0, prep["X"].shape[0],
                                           state, n_threads)
    return state[:, 0] + state[:, 1]


def lazy_permuted_sums(prep, terms, n, d, *, R, gen, strata, exact_perms, n_threads=1):
    """Delayed ``(observed Σ A_ij B_ij, the permuted sums)`` of the independence test.

    Random permutations are drawn batch after batch from ``gen`` by a chain
    of tasks, as the threads backend draws them; each batch is one task.
    """
    import dask

    perm = dask.delayed(_dep_permuted, pure=True)
    obs = perm(prep, terms, np.arange(n, dtype=np.intp)[None, :], n_threads)
    if exact_perms is not None:
        batches = [exact_perms[i:i + 256] for i in range(0, exact_perms.shape[0], 256)]
    else:
        B = int(max(8, min(R, 8 * (ROWS_WORK // max(1.0, 4.0 * n * n * d)))))
        batches = lazy_draws(gen, R, B, _draw_perms, n, strata)
    null = dask.delayed(_concat, pure=True)([perm(prep, terms, p, n_threads) for p in batches])
    return obs, null


# -- the distance-correlation matrix: column blocks as tasks --------------------------------

def _dcor_block(X, j0, j1, exponent, u):
    """The columns' centred distance vectors (upper triangles), rows j0..j1-1 of the Gram's factor."""
    from .._lib import _dependence

    n = X.shape[0]
    V = np.empty((j1 - j0, n * (n + 1) // 2))
    work = np.empty(n)
    for t in range(j1 - j0):
        _dependence.centred_upper_1d(np.ascontiguousarray(X[:, j0 + t]), exponent, int(u), V[t], work)
    return V


def _dcor_tile(X, i0, i1, j0, j1, exponent, u):
    Vi = _dcor_block(X, i0, i1, exponent, u)
    return Vi @ (Vi if (i0, i1) == (j0, j1) else _dcor_block(X, j0, j1, exponent, u)).T


def _dcor_assemble(p, spans, *tiles):
    G = np.empty((p, p))
    for (i0, i1, j0, j1), T in zip(spans, tiles):
        G[i0:i1, j0:j1] = T
        G[j0:j1, i0:i1] = T.T
    d = np.sqrt(np.clip(np.diag(G), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        return G / np.outer(d, d)


def lazy_dcor_gram(X, exponent, block):
    """``gram(u)`` of :func:`energystats.dependence.matrix.distance_correlation_matrix` with its column
    blocks I ≤ J as Dask tasks (each holds the table and two blocks of centred vectors; the
    products are those of the threads backend, block for block), computed when called."""
    import dask

    n, p = X.shape
    Xd = dask.delayed(X, pure=True)
    tile = dask.delayed(_dcor_tile, pure=True)

    def gram(u):
        spans = [(i0, min(p, i0 + block), j0, min(p, j0 + block))
                 for i0 in range(0, p, block) for j0 in range(i0, p, block)]
        tiles = [tile(Xd, *s, exponent, u) for s in spans]
        return dask.delayed(_dcor_assemble, pure=True)(p, spans, *tiles).compute()

    return gram
