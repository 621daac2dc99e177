"""Energy clustering on the Dask backend: the streamed engine's passes and the restarts as tasks
(the n×n matrix is never formed)."""
from __future__ import annotations

import numpy as np

from .._core._dask import _row_ranges


# -- energy clustering without the n×n matrix: passes and restarts as tasks ----------------

def _gram_row_means(X, metric, a, b, n_threads):
    from ._engine import StreamedGram

    return StreamedGram.row_means(X, metric, n_threads, a, b)


def _gram(X, metric, n_threads, *r_parts):
    from ._engine import StreamedGram

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
    """Delayed ``(labels, n_iter)`` of :func:`energystats.clustering._engine.fit_streamed` on Dask.

    The passes over the rows of G (row means, then the n×k tables of all
    restarts) are tasks over ranges of rows, and each restart is a task; every
    task holds the data (O(n·d)).  The rows of G are computed with the same
    arithmetic, so the partition is the one the threads backend finds.
    """
    import dask

    from ._engine import best_restart, restart_seeds

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
