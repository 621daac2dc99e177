"""The parametric bootstrap of the goodness-of-fit tests on the Dask backend: batches of
replicates as tasks (the mirror of :func:`._bootstrap._bootstrap`, the same draws and
statistics).

A test's samples are drawn from its Generator by a chain of small tasks, batch after batch,
exactly as the threads draw them (the draws fill the Generator's stream in order, so a
replicate is the same whatever batch it falls in), and each batch's statistics are one task
of about :data:`TASK_WORK` units (a unit: one value drawn, or :data:`PAIRS_PER_UNIT` pairs
of rows times features of a multivariate sample).  The rounds are those of
:func:`energystats._core._sequential.collect`: one round of every replicate for
``pvalue_method='full'``, rounds of 16, 32, 64, ... under a stopping rule, which looks at
the statistics in draw order between rounds; the p-value is then the same bits as on the
threads.
"""
from __future__ import annotations

import copy

import numpy as np

from .._core import _sequential
from .._core._dask import dask_compute, is_dask, use_dask

__all__ = ["bootstrap", "table", "backend_iv", "TASK_WORK", "PAIRS_PER_UNIT", "ROUND_TASKS"]

#: work of one task, in values drawn: about 0.25 s of drawing, sorting and kernels on one
#: core (measured ~60 ns a value: 1-D normality, n = 1000, R = 999), far above Dask's
#: per-task overhead (~1 ms) and a link of the chain of draws; a small bootstrap is one task
TASK_WORK = 2**22
#: pairs of rows times features of a multivariate sample that cost about one value drawn
#: (measured ~0.3 ns a pair-feature: normality, n = 500, d = 3)
PAIRS_PER_UNIT = 64
#: tasks of one round at most (a round's graph stays small whatever ``n_resamples``)
ROUND_TASKS = 1000


def backend_iv(backend, x, fname):
    """Whether the bootstrap runs on Dask (``backend`` checked; Dask missing is an ImportError
    that says what to install); a Dask collection ``x`` is refused (the sample is in memory)."""
    if is_dask(x):
        raise TypeError(f"`x` is a Dask collection: {fname} keeps the sample in memory (with "
                        "backend='dask' its bootstrap replicates are the tasks); compute it "
                        "first (`x.compute()`).")
    return use_dask(backend, True, ())


def per_task(R, work):
    """Replicates per task: about :data:`TASK_WORK` units of ``work`` each, at least one."""
    return int(max(1, min(R, TASK_WORK // max(1, work))))


def _draw_task(gen, draw, k):
    """The next ``k`` replicates' samples from a copy of ``gen`` (a task's result may be shared
    in-process, so ``gen`` itself is never advanced) and the advanced copy."""
    g = copy.deepcopy(gen)
    return draw(g, k), g


def _statistics_task(statistics, samples, n_threads):
    """The statistics of a batch, its samples left as they are (the draw task's result, which
    may be shared in-process)."""
    return np.asarray(statistics(samples, n_threads, True), dtype=np.float64)


class _Rounds:
    """Replicates in rounds: each round continues the draws where the previous one left
    the Generator (a copy of the caller's: the caller's is never advanced)."""

    def __init__(self, gen, draw, statistics, n_threads, size):
        self.gen, self.draw, self.statistics = gen, draw, statistics
        self.n_threads, self.size = n_threads, size

    def __call__(self, r0, m):
        import dask

        draw = dask.delayed(_draw_task, nout=2, pure=True)
        stat = dask.delayed(_statistics_task, pure=True)
        g, parts = self.gen, []
        for done in range(0, m, self.size):
            samples, g = draw(g, self.draw, min(self.size, m - done))
            parts.append(stat(self.statistics, samples, self.n_threads))
        *values, self.gen = dask_compute(*parts, g)
        return np.concatenate(values)


def bootstrap(R, gen, draw, statistics, n_threads, stat, tol, rule, work):
    """The bootstrap null of :func:`._bootstrap._bootstrap` with its batches as Dask tasks of
    ``n_threads`` threads: ``draw(g, k)`` the next k replicates' samples from Generator ``g``,
    ``statistics(samples, n_threads, copy)`` their statistics, ``work`` the units of one
    replicate."""
    size = per_task(R, work)
    rounds = _Rounds(gen, draw, statistics, n_threads, size)
    return _sequential.collect(R, min(R, size * ROUND_TASKS), rounds, stat, tol, rule)


def table(R, gen, draw, statistics, n_threads, work):
    """All ``R`` replicates' rows of statistics (several per replicate: the Poisson tests that
    share their samples), in rounds of at most :data:`ROUND_TASKS` tasks."""
    size = per_task(R, work)
    rounds = _Rounds(gen, draw, statistics, n_threads, size)
    step = size * ROUND_TASKS
    return np.concatenate([rounds(r0, min(step, R - r0)) for r0 in range(0, R, step)])
