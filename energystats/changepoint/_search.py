"""Private drivers of the change-point searches: one segment's best split, the permuted
re-search of a stage, and the stage's p-value.

The compiled kernels are :func:`energystats._lib._changepoint.best_split` (one segment, its
τ-blocks on threads) and :func:`energystats._lib._changepoint.permuted_maxima` (a batch of
within-segment permutations, one per thread at a time); both are run through
:func:`energystats._core._interrupt.call`, so Ctrl-C stops them within about a second.

The rows of distances are always computed, never read from a precomputed T×T matrix: for
the permuted re-search, reading ``D[p_i, p_j]`` at the permuted rows was measured slower
than computing (T = 5000, one thread: 2× slower at d = 3, 4.5× at d = 1), besides costing
8T² bytes.
"""
from __future__ import annotations

import numpy as np

from .._core import _interrupt, _progress, _sequential
from .._lib import _changepoint as _kernel

__all__ = ["segment_split", "stage_pvalue", "permuted_segments", "stage_result", "TIE_RTOL"]

#: a permuted maximum within this relative distance of the observed one counts as reaching it
#: (the same split evaluated from other sums differs by rounding; an exact tie always counts)
TIE_RTOL = 1e-10
#: bytes of permutation indices drawn per batch at most (beside the kernels' O(T) rows)
PERM_BATCH_BYTES = 32 * 2**20


def segment_split(Z, a, b, min_size, met, n_threads, end_only=False):
    """``(Q, position, kappa_position)`` of the best split of rows ``[a, b)`` of ``Z``: the
    new segment starts at ``position``; ``Q = -inf`` and positions -1 when the segment is
    shorter than ``2 * min_size``.  ``end_only``: κ is the segment's end."""
    q, t, k = _interrupt.call(_kernel.best_split, Z[a:b], int(min_size), met.code, met.param,
                              int(n_threads), None, int(end_only),
                              cancel=_kernel.cancel, reset=_kernel.reset)
    if t < 0:
        return -np.inf, -1, -1
    return float(q), a + int(t), a + int(k)


def _draw(gen, T, segments, count):
    """``count`` permutations of the rows 0 … T−1 within each of ``segments`` (in draw order:
    resample after resample, segment after segment)."""
    perms = np.empty((count, T), dtype=np.intp)
    base = np.arange(T, dtype=np.intp)
    for r in range(count):
        p = base.copy()
        for a, b in segments:
            p[a:b] = a + gen.permutation(b - a)
        perms[r] = p
    return perms


#: the split-search cells (τ, κ pairs) of one batch of permuted re-searches at most, so
#: that the progress bar moves about once a second (the issue measured about 4 ns a cell on one
#: AVX2 core)
BATCH_CELLS = 2.5e8


def _batch_cap(R, T, splittable, n_threads):
    """Permutations per batch: within the memory of their indices, about BATCH_CELLS cells
    (the bar moves), and a multiple of the threads times the lanes (each thread takes whole
    groups of :func:`~energystats._lib._changepoint.lanes` permutations)."""
    cells = sum((b - a) ** 2 / 2.0 for a, b in splittable) or 1.0
    lanes = max(1, _kernel.lanes())
    per_thread = max(1, int(BATCH_CELLS // cells))
    by_time = max(lanes, per_thread // lanes * lanes) * max(1, n_threads)
    return int(max(1, min(R, PERM_BATCH_BYTES // (8 * T), by_time)))


def stage_pvalue(Z, segments, observed, min_size, met, n_threads, gen, R, rule, progress=False,
                 desc="permutations", block=None, end_only=False):
    """The permutation p-value of a stage whose best split has Q̂ ``observed``: the rows are
    permuted within every segment that can be split (``block`` given: blocks of that many
    consecutive rows, :func:`._blocks.draw_block_permutations`), the whole stage's search
    re-run, and the permuted maxima counted against ``observed`` (under ``rule``:
    :mod:`.._core._sequential`).

    Returns ``(pvalue, used, decision)``."""
    from ._blocks import draw_block_permutations

    T = Z.shape[0]
    splittable, starts, ends = permuted_segments(segments, min_size)
    cap = _batch_cap(R, T, splittable, n_threads)
    tol = TIE_RTOL * abs(observed)

    def evaluate(r0, m):
        perms = (_draw(gen, T, splittable, m) if block is None else
                 draw_block_permutations(gen, T, splittable, m, block))
        return _interrupt.call(_kernel.permuted_maxima, Z, perms, starts, ends, int(min_size),
                               met.code, met.param, int(n_threads), int(end_only),
                               cancel=_kernel.cancel, reset=_kernel.reset)

    bar = _progress.progress_bar(R, progress, desc, "perm", nested=True)
    try:
        null = _sequential.collect(R, cap, evaluate, observed, tol, rule)
    finally:
        if bar is not None:
            bar.close()
    return stage_result(null, observed, tol, R, rule)


def permuted_segments(segments, min_size):
    """The segments a stage's test permutes (those that can be split), their starts and ends."""
    splittable = [(a, b) for a, b in segments if b - a >= 2 * min_size]
    starts = np.asarray([a for a, _ in splittable], dtype=np.intp)
    ends = np.asarray([b for _, b in splittable], dtype=np.intp)
    return splittable, starts, ends


def stage_result(null, observed, tol, R, rule):
    """``(pvalue, used, decision)`` of a stage from its permuted maxima ``null`` (in draw order;
    under a ``rule``, those it used)."""
    if rule is None:
        count = int(np.count_nonzero(_sequential.exceeds(null, observed, tol)))
        return (count + 1.0) / (R + 1.0), R, None
    return float(rule.pvalue()), int(rule.used), rule.decision
