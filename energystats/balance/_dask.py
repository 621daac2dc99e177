"""The resamples of :func:`energystats.weighted_effect` on the Dask backend: one task per
resample (the mirror of :func:`.effect._bootstrap`'s worker processes, the same function).

A resample draws its rows, solves the balancing programme again and estimates the effect:
tens of milliseconds to seconds, far above Dask's per-task overhead (~1 ms), so each is
one task and a cluster spreads them as finely as it can.  Every resample is seeded by its
own child of the run's ``SeedSequence``, passed to its task, so a resample's estimate is
the same bits on any worker, in any order, as in this process or its worker processes.
The inputs (the data, the options) are one key of the graph, shipped once to each worker.
"""
from __future__ import annotations

from .._core._dask import dask_compute

__all__ = ["replicates"]


def replicates(replicate, common, seeds):
    """``[replicate(common, s) for s in seeds]``, one Dask task each, in the order of
    ``seeds`` (None for a resample whose weights could not be solved)."""
    import dask

    shared = dask.delayed(common, pure=True, traverse=False)
    task = dask.delayed(replicate, pure=True)
    return list(dask_compute(*[task(shared, s) for s in seeds]))
