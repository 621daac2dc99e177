"""Dependence on the Dask backend: the permuted pair sums and the dCor Gram tiles as tasks
(the pair sums themselves are :mod:`energystats._core._dask_pair_sums`).
"""
from __future__ import annotations

import copy

import numpy as np

from .._core._dask import ROWS_WORK, _concat, _draw_perms, dask_compute, lazy_draws


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
        return dask_compute(dask.delayed(_dcor_assemble, pure=True)(p, spans, *tiles))[0]

    return gram


# -- the time-series tests: batches of permutations as tasks ---------------------------------

#: matrix entries gathered and passed over by one task of the time-series tests (R_task · n² ·
#: lags): about 0.2 s of NumPy, two hundred times Dask's per-task overhead
LAGS_TASK_WORK = 2e8


def _lags_run(engine, perms):
    return engine.run(perms)


def _stack_runs(parts):
    return (np.vstack([p[0] for p in parts]), np.vstack([p[1] for p in parts]))


def lazy_permuted_lags(engine, perms):
    """Delayed ``engine.run(perms)`` (:class:`~._timeseries.PermutedLags`) with the permutations
    in batches as tasks: each permutation's values are computed on their own, so the batches
    give the same bits as one call; the permutations are drawn by the caller, as on threads."""
    import dask

    R, n = perms.shape
    per = int(max(1, min(R, LAGS_TASK_WORK // max(1.0, float(n) * n * len(engine.lags)))))
    eng = dask.delayed(engine, pure=True)
    run = dask.delayed(_lags_run, pure=True)
    parts = [run(eng, perms[r0:r0 + per]) for r0 in range(0, R, per)]
    return dask.delayed(_stack_runs, pure=True)(parts)


# -- the conditional test: batches of local-bootstrap samples as tasks ------------------------

def _boot_per_task(n, R):
    """Bootstrap samples of one task: each gathers two n×n matrices and sums them under the
    kernel weights, about 4 n² entries; :data:`LAGS_TASK_WORK` entries a task."""
    return int(max(1, min(R, LAGS_TASK_WORK // max(1.0, 4.0 * n * n))))


def _draw_uniforms_task(gen, n, draw, count):
    g = copy.deepcopy(gen)
    return draw(g, n, count), g


def lazy_local_bootstrap(prep, R, gen, draw, boot):
    """Delayed T of R local-bootstrap samples: their uniforms drawn by a chain of tasks
    (:func:`~energystats._core._dask.lazy_draws`; ``draw(g, n, m)`` gives the next m samples'
    uniforms as the threads draw them, one sample after another), each batch of samples one
    task ``boot(prep, U)`` (a sample's value depends on its uniforms alone)."""
    import dask

    per = _boot_per_task(prep["n"], R)
    P = dask.delayed(prep, pure=True)
    run = dask.delayed(boot, pure=True)
    batches = lazy_draws(gen, R, per, _draw_uniforms_task, prep["n"], draw)
    return dask.delayed(_concat, pure=True)([run(P, U) for U in batches])
