"""E-Divisive's permutation tests on the Dask backend: the permuted re-searches of a stage as
tasks (the mirror of :func:`._search.stage_pvalue`, calling the same kernel with the same
arguments, and counting the maxima as it does).

A stage's permutations are drawn from its Generator by a chain of small tasks, batch after
batch, exactly as the threads driver draws them (every permutation is a fixed number of
calls on the stream, whatever the batch it falls in), and each batch of about
:data:`TASK_CELLS` split-search cells is one task of the compiled
:func:`energystats._lib._changepoint.permuted_maxima`, whose maxima do not depend on the
batch or the threads.  The rounds are those of :func:`energystats._core._sequential.collect`:
one round of every permutation for ``pvalue_method='full'``, rounds of 16, 32, 64, ...
under a stopping rule, which looks at the maxima in draw order between rounds.  So the same
``rng`` gives the same permutations, maxima, p-values and counts used as on the threads.
"""
from __future__ import annotations

import copy

import numpy as np

from .._core import _interrupt, _sequential
from .._core._dask import dask_compute
from .._lib import _changepoint as _kernel
from ._blocks import draw_block_permutations
from ._search import TIE_RTOL, _draw, permuted_segments, stage_result

__all__ = ["stage_pvalue", "TASK_CELLS", "ROUND_TASKS"]

#: split-search cells (τ, κ pairs) of one task's permuted re-searches: about 0.1 s at the
#: lane kernels' ~1 ns a cell on one core (measured: T = 2000, R = 199, two threads, at
#: load 4.7), a hundred times Dask's per-task overhead (~1 ms); a re-search of T = 2000 rows
#: is 2·10⁶ cells (50 a task), of T = 150 about 10⁴, so small series share a task
TASK_CELLS = 1e8
#: tasks of one round at most (a round's graph stays small whatever ``n_resamples``)
ROUND_TASKS = 1000


def _draw_task(gen, T, splittable, count, block):
    """``count`` permutations from a copy of ``gen`` (a task's result may be shared
    in-process, so ``gen`` itself is never advanced) and the advanced copy."""
    g = copy.deepcopy(gen)
    if block is None:
        return _draw(g, T, splittable, count), g
    return draw_block_permutations(g, T, splittable, count, block), g


def _maxima_task(Z, perms, starts, ends, min_size, code, param, n_threads, end_only):
    """The best permuted split's Q̂ of each permutation (the threads driver's kernel call)."""
    return _interrupt.call(_kernel.permuted_maxima, Z, perms, starts, ends, int(min_size), code,
                           param, int(n_threads), int(end_only), cancel=_kernel.cancel,
                           reset=_kernel.reset)


def per_task(R, splittable):
    """Permutations per task: about :data:`TASK_CELLS` cells, whole groups of the lane kernels'
    permutations (:func:`~energystats._lib._changepoint.lanes`), at least one group."""
    cells = sum((b - a) ** 2 / 2.0 for a, b in splittable) or 1.0
    lanes = max(1, _kernel.lanes())
    return int(max(1, min(R, max(lanes, int(TASK_CELLS // cells) // lanes * lanes))))


def stage_pvalue(Z, segments, observed, min_size, met, n_threads, gen, R, rule, progress=False,
                 desc="permutations", block=None, end_only=False):
    """:func:`._search.stage_pvalue` with the permuted re-searches as Dask tasks of
    ``n_threads`` threads each (``progress`` and ``desc`` are the threads driver's; a
    backend='dask' call refuses ``progress``).  Returns ``(pvalue, used, decision)``."""
    import dask

    T = Z.shape[0]
    splittable, starts, ends = permuted_segments(segments, min_size)
    size = per_task(R, splittable)
    tol = TIE_RTOL * abs(observed)
    Zd = dask.delayed(Z, pure=True)
    draw = dask.delayed(_draw_task, nout=2, pure=True)
    maxima = dask.delayed(_maxima_task, pure=True)
    state = {"gen": gen}

    def evaluate(r0, m):
        g, parts = state["gen"], []
        for done in range(0, m, size):
            perms, g = draw(g, T, splittable, min(size, m - done), block)
            parts.append(maxima(Zd, perms, starts, ends, min_size, met.code, met.param, n_threads,
                                end_only))
        *values, state["gen"] = dask_compute(*parts, g)
        return np.concatenate(values)

    null = _sequential.collect(R, min(R, size * ROUND_TASKS), evaluate, observed, tol, rule)
    return stage_result(null, observed, tol, R, rule)   # as the threads driver counts
