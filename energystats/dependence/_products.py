"""Permutation engines of the dependence tests: Σ A_ij B_π(i)π(j) for batches of
permutations (in memory or streamed), their plan, budget and p-value.
"""
from __future__ import annotations

import math

import numpy as np

from .._core import _engine, _sequential
from .._core._pair_sums import CALL_WORK, _streamed_sums_and_rows
from .._lib import _dependence
from ._centring import _centred_matrices, _sum_sq, _u_centred_matrices


class _MatrixProducts:
    """``Σ_ij A_ij B_{p_i p_j}`` from the two double-centred n×n matrices (one gather per term).

    Large batches go through the tiled kernel (rows of A in blocks of ``TILE_ROWS``, the
    (row, permutation) pairs bucketed by the block of B's rows they read, so those rows are
    fetched from memory once per bucket, not once per pair); small ones (sequential rules'
    first batches, n below ``TILED_MIN_N``, where both matrices stay in cache) row by row.
    The two give the same bits (``permuted_products_tiled``), so the choice is speed only:
    n = 1000, R = 512 on a 2-core Xeon, 0.20 against 0.28 ns per pair and permutation."""

    TILE_ROWS = 64
    TILED_MIN_N = 640
    TILED_MIN_BATCH = 128

    def __init__(self, A, B, nt):
        self.A, self.B, self.nt, self.n = A, B, nt, A.shape[0]
        n = self.n
        # ≤ 64 MiB of permutations (and as much of row sums); calls of at most ~4·10⁹
        # pair-permutations (about a second), so that Ctrl-C is honoured between them
        self.batch = int(max(1, min(512, 2**26 // (8 * n), 4e9 // max(1.0, n * n / 2.0))))
        # Σ A², Σ B²: the Cauchy–Schwarz bound of the sum's terms, and dCor's denominator
        self.norms = (_sum_sq(A), _sum_sq(B))
        self._scratch = None

    def __call__(self, perms, out):
        if self.n <= 65536:  # 16-bit indices: a quarter of the index loads, the same bits
            perms = perms.astype(np.uint16)
        R, n, nt = perms.shape[0], self.n, max(1, self.nt)
        if n < self.TILED_MIN_N or R < self.TILED_MIN_BATCH:
            _dependence.permuted_products(self.A, self.B, perms, out, nt)
            return
        a = self.TILE_ROWS
        # blocks of B's rows: about 16 pairs of a row of A per bucket (groups of four)
        b = 64 * int(min(4, max(1, round(16.0 * n / (64.0 * R)))))
        rows, codes, counters = self._buffers(R, a, b, nt)
        _dependence.permuted_products_tiled(self.A, self.B, perms, out, rows[:R], codes,
                                            counters, a, b, nt)

    def _buffers(self, R, a, b, nt):
        """Scratch of the tiled kernel, kept for the next batch: row sums (R, n), the pair
        codes and bucket counters of each thread."""
        n = self.n
        sc = self._scratch
        if sc is None or sc[0].shape[0] < R or sc[1].shape[1] < a * R or sc[2].shape[1] < n // b + 2:
            R = max(R, self.batch)
            sc = self._scratch = (np.empty((R, n)), np.empty((nt, a * R), dtype=np.int32),
                                  np.empty((nt, n // 64 + 2), dtype=np.intp))
        return sc


class _StreamedProducts:
    """The same sums with no n×n matrix: every term formed from the data (working units) and
    the centring vectors; R n² (d_x + d_y) work in place of 16 n² bytes."""

    def __init__(self, X, Y, met, nt):
        X, mx, self.sx = _engine.normalise(met, X)
        Y, my, self.sy = _engine.normalise(met, Y)
        if X.dtype != Y.dtype:
            X, Y = X.astype(np.float64), Y.astype(np.float64)
        self.X, self.XT, self.Y = np.ascontiguousarray(X), np.ascontiguousarray(X.T), np.ascontiguousarray(Y)
        self.code, self.px, self.py, self.nt = met.code, mx.param, my.param, nt
        n = self.n = X.shape[0]
        d = X.shape[1] + Y.shape[1]
        V, _, rs = _streamed_sums_and_rows(self.X, self.Y, met.code, mx.param, my.param, nt)
        self.norms = (V[1], V[2])  # Σ A², Σ B²
        self.va, self.ga = rs[:, 0] / n, math.fsum(rs[:, 0]) / n**2
        self.vb, self.gb = rs[:, 1] / n, math.fsum(rs[:, 1]) / n**2
        # permutations per batch: two groups of four (one per thread) at least, more while a
        # batch's work is below CALL_WORK; a call covers the rows of about CALL_WORK
        self.batch = int(max(8, 8 * (CALL_WORK // max(1.0, 4.0 * n * n * d))))

    def __call__(self, perms, out):
        # rows split so that a call's work (pairs × features × permutations) is about CALL_WORK:
        # Ctrl-C is honoured between calls; the split does not change the bits
        R, n = perms.shape[0], self.n
        d = self.X.shape[1] + self.Y.shape[1]
        pairs = np.cumsum(np.arange(n - 1, -1, -1, dtype=np.float64))  # pairs in rows < i + 1
        per_call = max(1.0, CALL_WORK / (R * d))
        state = np.zeros((R, 2))
        i0 = 0
        while i0 < n:
            done = pairs[i0 - 1] if i0 else 0.0
            i1 = int(min(n, max(i0 + 1, np.searchsorted(pairs, done + per_call, side="right"))))
            _dependence.streamed_permuted_products(self.X, self.XT, self.Y, self.code, self.px,
                                                   self.py, self.va, self.ga, self.vb, self.gb,
                                                   perms, i0, i1, state, self.nt)
            i0 = i1
        out[:] = state[:, 0] + state[:, 1]


def _products(X, Y, met, nt, memory_budget, centring="double"):
    """The sums of the permutation test: from the centred matrices when the two fit within
    ``memory_budget`` (bytes, already lowered to the memory available; or the metric is not
    built in), else streamed.  Also the scales.  ``centring='u'``: the U-centred matrices
    (the bias-corrected statistic), in memory only."""
    n = X.shape[0]
    if centring == "u":
        if 16.0 * n * n > memory_budget:
            raise ValueError(f"the permutation test of statistic='bcdcor' holds the two {n}×{n} "
                             f"U-centred matrices ({16.0 * n * n / 2**20:.0f} MiB), more than "
                             f"`memory_budget` allows; raise it, or use statistic='dcov' (streamed "
                             f"beyond the budget) or pvalue_method='asymptotic'.")
        A, B, sx, sy = _u_centred_matrices(X, Y, met, nt)
        return _MatrixProducts(A, B, nt), sx, sy
    if met.kind == "builtin" and 16.0 * n * n > memory_budget:
        kernel = _StreamedProducts(X, Y, met, nt)
        return kernel, kernel.sx, kernel.sy
    A, B, sx, sy = _centred_matrices(X, Y, met, nt)
    return _MatrixProducts(A, B, nt), sx, sy


def _permutation_pvalue(kernel, perms, total, is_exact, rule=None):
    """``(observed Σ A_ij B_ij, the permuted sums, p-value)``: the p-value by the package's rule
    on the sums themselves, permutations that reproduce the observed sum up to its rounding
    error (64 eps of the Cauchy–Schwarz bound √(ΣA² ΣB²) of its terms) counting as ties.
    A sequential ``rule`` (:mod:`energystats._core._sequential`) sees the permutations in growing
    batches and stops them; the permuted sums are then those it used."""
    from .._core._permutation import pvalue_from_null

    obs = np.empty(1)
    kernel(np.arange(kernel.n, dtype=np.intp)[None, :], obs)
    tol = 64 * np.finfo(float).eps * math.sqrt(kernel.norms[0] * kernel.norms[1])

    def evaluate(r0, m):
        vals = np.empty(m)
        kernel(np.ascontiguousarray(perms(r0, m), dtype=np.intp), vals)
        return vals

    null = _sequential.collect(total, kernel.batch, evaluate, obs[0], tol, rule)
    p = _sequential.final_pvalue(float(pvalue_from_null(obs[0], null, is_exact, tol=tol)), rule)
    return float(obs[0]), null, p


def _permutation_plan(n, st, R, exact, gen):
    """``(is_exact, total, perms)`` with ``perms(r0, m)`` the rows r0..r0+m-1 of the
    permutations: all of them (``exact``, or when there are at most R) or R random ones."""
    from .._core._permutation import draw_permutations

    if exact is None:
        is_exact = R > 0 and _count_perms(n, st, R) <= R
    elif exact:
        if _count_perms(n, st, 10**6) > 10**6:
            raise ValueError("`exact=True`: more than 10**6 permutations; use random ones.")
        is_exact = True
    else:
        is_exact = False
    if is_exact:
        every = _all_perms(n, st)
        return True, every.shape[0], lambda r0, m: every[r0:r0 + m]
    return False, R, lambda r0, m: draw_permutations(gen, np.arange(n), m, st)


def _count_perms(n, strata, limit):
    sizes = [n] if strata is None else [p.size for p in strata.positions]
    total = 1
    for s in sizes:
        total *= math.factorial(s)
        if total > limit:
            return limit + 1
    return total


def _all_perms(n, strata):
    import itertools

    if strata is None:
        return np.array(list(itertools.permutations(range(n))), dtype=np.intp)
    blocks = [list(itertools.permutations(p.tolist())) for p in strata.positions]
    rows = []
    for choice in itertools.product(*blocks):
        perm = np.arange(n)
        for pos, img in zip(strata.positions, choice):
            perm[pos] = img
        rows.append(perm)
    return np.array(rows, dtype=np.intp)


def _permutation_budget(memory_budget):
    from .._core._group_sums import effective_budget

    if not (isinstance(memory_budget, (int, float)) and memory_budget > 0):
        raise ValueError(f"`memory_budget` must be a positive number of bytes; got {memory_budget!r}.")
    return effective_budget(float(memory_budget))
