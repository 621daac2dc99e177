"""Dask drivers of the concepts (moved to their packages step by step).
"""
from __future__ import annotations

import numpy as np

from ._core._dask import ROWS_WORK, _concat, _draw_perms, _row_ranges, lazy_draws


def _dep_permuted(prep, terms, perms, n_threads):
    """``Σ_ij A_ij B_{p_i p_j}`` for a batch of permutations (the threads backend's streamed kernel,
    all rows in one call: the same bits as its row-split calls)."""
    from ._lib import _dependence

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


# -- energy clustering without the n×n matrix: passes and restarts as tasks ----------------

def _gram_row_means(X, metric, a, b, n_threads):
    from ._cluster_engine import StreamedGram

    return StreamedGram.row_means(X, metric, n_threads, a, b)


def _gram(X, metric, n_threads, *r_parts):
    from ._cluster_engine import StreamedGram

    return StreamedGram(X, metric, n_threads, r=np.concatenate(r_parts))


def _gram_start(gram, init, k, seed):
    return gram.start(init, k, seed)


def _gram_products(gram, k, a, b, *starts):
    return gram.products(starts, k, a, b)


def _gram_table(t, *parts):
    return np.concatenate([p[t] for p in parts])


def _gram_restart(gram, labels, QX, k, algorithm, max_iter, n_threads):
    return gram.restart(labels, QX, k, algorithm, max_iter, gram.tolerance(), n_threads)


def lazy_fit_streamed(X, metric, k, algorithm, init, n_init, max_iter, rng, n_threads=1):
    """Delayed ``(labels, n_iter)`` of :func:`energystats._cluster_engine.fit_streamed` on Dask.

    The passes over the rows of G (row means, then the n×k tables of all
    restarts) are tasks over ranges of rows, and each restart is a task; every
    task holds the data (O(n·d)).  The rows of G are computed with the same
    arithmetic, so the partition is the one the threads backend finds.
    """
    import dask

    from ._cluster_engine import best_restart, restart_seeds

    n, d = X.shape
    ranges = _row_ranges(n, n * d, False)
    Xd = dask.delayed(X, pure=True)
    r_parts = [dask.delayed(_gram_row_means, pure=True)(Xd, metric, int(a), int(b), n_threads)
               for a, b in ranges]
    gram = dask.delayed(_gram, pure=True)(Xd, metric, n_threads, *r_parts)
    seeds = restart_seeds(init, n_init, rng)
    starts = [dask.delayed(_gram_start, pure=True)(gram, init, k, int(s)) for s in seeds]
    parts = [dask.delayed(_gram_products, pure=True)(gram, k, int(a), int(b), *starts) for a, b in ranges]
    table = dask.delayed(_gram_table, pure=True)
    restart = dask.delayed(_gram_restart, pure=True)
    results = [restart(gram, starts[t], table(t, *parts), k, algorithm, max_iter, n_threads)
               for t in range(len(seeds))]
    return dask.delayed(best_restart, pure=True)(results)


# -- the distance-correlation matrix: column blocks as tasks --------------------------------

def _dcor_block(X, j0, j1, exponent, u):
    """The columns' centred distance vectors (upper triangles), rows j0..j1-1 of the Gram's factor."""
    from ._lib import _dependence

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
    """``gram(u)`` of :func:`energystats.dependence.distance_correlation_matrix` with its column
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
