"""Private permutation engine: group-sum matrices for many relabellings at once.

Inputs are validated by the public functions (:mod:`energystats.homogeneity`).
An engine is built once per test from the pooled data; ``engine.group_sums(codes)``
then returns the k×k group-sum matrices ``M_b[g, h] = Σ_{x∈C_g^b, y∈C_h^b} rho(x, y)``
for a batch of relabellings ``codes`` (shape (B, n)).  Three engines:

``sorted``
    1-D data, ``rho = |x − y|``: sort once, O(n·k) per relabelling (the
    sorted formulas of the docs' guide page "One-dimensional data").
``matrix``
    The n×n matrix ``D`` is computed once (compiled, all threads); a batch of
    relabellings costs one compiled pass summing ``D`` under the groups' bit
    masks (few groups, :func:`masked_path`) or BLAS products ``L_pᵀ D_pq L_q``
    over the upper block triangle (``L`` one-hot); either way the largest group
    is left out and recovered from the row sums of ``D``.
``tiled``
    When ``D`` does not fit in the memory budget (fewer than 32 groups): for
    each batch, ``D`` is recomputed in tiles of 1024 rows, each tile pushing
    the whole batch through one matrix product (threads over tiles).
``blocked``
    With many groups, or a budget too small for two tiles, when ``D`` does not fit: for each batch, ``D`` is
    recomputed in row blocks (compiled) and ``Lᵀ D`` accumulated block by
    block — the matrix path without the n×n matrix.
``streamed``
    When not even one relabelling's one-hot and product rows fit (or on
    request): one streamed compiled reduction
    (:func:`energystats._lib._pairwise.group_sums`) per relabelling, O(n²·d)
    time and O(n·d) memory each.
"""
from __future__ import annotations

import contextlib
import math
import os
import threading

import numpy as np

from . import _engine, _memory
from .._lib import _pairwise, _permutation

__all__ = ["build_engine"]


#: Default memory budget (bytes) for the n×n matrix and a batch of one-hot matrices.
DEFAULT_MEMORY_BUDGET = 512 * 2**20


_CONTROLLER = []  # [threadpoolctl's BLAS controller, or None without threadpoolctl], once scanned
_CONTROLLER_LOCK = threading.Lock()

#: multiply-adds of one BLAS task of the matrix engines (about 10-20 ms on one core).  The
#: tasks' sizes follow from the data's shape alone, so the products, hence every bit of the
#: null distribution, do not depend on the number of threads; tasks this long keep the
#: threads' meeting points rare, which matters on a machine whose cores are busy
#: (benchmarks/bench_threads.py --busy)
TASK_WORK = 5e7


def chunk_size(per_relabelling_work):
    """Relabellings per BLAS task: about ``TASK_WORK``, between 16 and 4096."""
    return int(min(4096, max(16, math.ceil(TASK_WORK / max(per_relabelling_work, 1.0)))))


def _blas():
    """threadpoolctl's view of the BLAS libraries, or None when it is not installed.

    Scanned once, after importing ``scipy.linalg`` (SciPy's own OpenBLAS), never again:
    threadpoolctl's scan runs a Python callback (needing the GIL) inside the loader's lock,
    which a thread importing an extension waits for while holding the GIL, so a rescan while
    another thread imports can deadlock (rescans on every change of ``sys.modules`` hung a
    clustering fit's threads once in a few runs of the Ctrl-C tests)."""
    with _CONTROLLER_LOCK:
        if not _CONTROLLER:
            try:
                import scipy.linalg  # noqa: F401 - its OpenBLAS, loaded before the one scan
                from threadpoolctl import ThreadpoolController
            except ImportError:  # pragma: no cover - optional
                _CONTROLLER[:] = [None]
            else:
                _CONTROLLER[:] = [ThreadpoolController().select(user_api="blas")]
        return _CONTROLLER[0]


def _per_thread_pool(lib):
    """Whether ``lib``'s thread count is a setting of the calling thread (OpenBLAS built on
    OpenMP) rather than of the whole process."""
    return getattr(lib, "internal_api", "") == "openblas" and getattr(lib, "threading_layer", "") == "openmp"


def _set_blas_threads(lib, n):
    """Set ``lib``'s thread count from any thread.  threadpoolctl >= 3.8 lets only one
    "controlling" thread (the first to set a limit, until it leaves a ``with`` block) change a
    process-wide OpenBLAS pool and silently ignores the others, so a limit set by a test
    running in another thread (or after a test in the main thread) did nothing; this module
    serialises its own changes (:class:`_SingleThreadedBlas`), so it sets the count itself."""
    getattr(lib, "_real_set_num_threads", lib.set_num_threads)(n)


class _SingleThreadedBlas:
    """One BLAS thread while any call is inside (process-wide, re-entrant, thread-safe).

    BLAS products give different bits on one and on several threads, and the thread count
    of a BLAS library (NumPy's, and SciPy's own OpenBLAS) is a setting of the whole process.
    The first call to enter sets every such library to one thread; the last one to leave
    restores the counts it found, never while another call (another Python thread's test,
    or a nested region) is still inside.  So a test gives the same bits whatever other
    threads do.  Other code's BLAS products run on one thread meanwhile.  Libraries whose
    count is per thread (OpenBLAS on OpenMP) are limited in each entering thread.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.inside = 0
        self.blas = None
        self.saved = []  # (library, thread count) of the process-wide pools set to one thread
        self.local = threading.local()

    def __enter__(self):
        with self.lock:
            if self.inside == 0:
                self.blas = _blas()
                libs = [] if self.blas is None else self.blas.lib_controllers
                self.saved = [(lib, lib.num_threads) for lib in libs if not _per_thread_pool(lib)]
                self.saved = [(lib, n) for lib, n in self.saved if n is not None and n > 1]
                for lib, _ in self.saved:
                    _set_blas_threads(lib, 1)
            self.inside += 1
            blas = self.blas
        depth = getattr(self.local, "depth", 0)
        if depth == 0:
            own = [] if blas is None else [lib for lib in blas.lib_controllers if _per_thread_pool(lib)]
            self.local.saved = [(lib, lib.num_threads) for lib in own]
            for lib, _ in self.local.saved:
                _set_blas_threads(lib, 1)
        self.local.depth = depth + 1
        return self

    def __exit__(self, *exc):
        self.local.depth -= 1
        if self.local.depth == 0:
            for lib, n in self.local.saved:
                _set_blas_threads(lib, n)
            self.local.saved = []
        with self.lock:
            self.inside -= 1
            if self.inside == 0:
                for lib, n in self.saved:
                    _set_blas_threads(lib, n)
                self.saved = []
        return False


_SINGLE_BLAS = _SingleThreadedBlas()


def _in_region(fn):
    """``fn`` run inside the one-BLAS-thread region: for the worker threads of a region
    (a no-op for a process-wide pool, which the caller's region already holds at one thread;
    a per-thread pool is limited in the worker itself)."""
    def run(*args):
        with _SINGLE_BLAS:
            return fn(*args)
    return run


def _blas_limits(n_threads):
    """The process-wide one-BLAS-thread region (:class:`_SingleThreadedBlas`); only
    ``n_threads=1`` is supported."""
    if n_threads != 1:
        raise ValueError(f"`n_threads` must be 1 (the only BLAS limit used); got {n_threads!r}.")
    return _SINGLE_BLAS


def map_chunks(fn, codes, n_threads, chunk):
    """``fn`` over fixed chunks of a batch of relabellings, results stacked.

    With threadpoolctl installed, BLAS runs single-threaded and the chunks
    are shared among ``n_threads`` Python threads (NumPy releases the GIL in
    its products): one level of parallelism, never OpenMP and BLAS threads
    competing for the cores, and the same chunks, so the same bits, for any
    ``n_threads``.  Without threadpoolctl the batch goes to BLAS whole, with
    BLAS's own threads (set by the environment, e.g. ``OPENBLAS_NUM_THREADS``),
    which again do not depend on ``n_threads``.
    """
    blas = _blas()
    if blas is None:
        return fn(codes, 1)
    chunks = [codes[i:i + chunk] for i in range(0, codes.shape[0], chunk)]
    with _blas_limits(1):
        if n_threads <= 1 or len(chunks) == 1:
            parts = [fn(c, 1) for c in chunks]
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(n_threads, len(chunks))) as pool:
                parts = list(pool.map(_in_region(lambda c: fn(c, 1)), chunks))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


# -- memory plan ---------------------------------------------------------------
#
# Every engine keeps its working memory within ``memory_budget``: a fixed part
# (the n×n matrix, a row block, the sorted data) and, per relabelling of a batch, the drawn
# codes and their copies, the one-hot and product rows of the BLAS path, and the k×k sums with
# the statistic's temporaries (counts measured with tracemalloc; tests/_core/test_memory.py).

#: copies of the n codes of one relabelling alive at once (draw, factor map, internal order)
_CODE_COPIES = 3
#: copies of one relabelling's k×k sums alive at once (engine output, symmetrising,
#: the statistic's temporaries), and copies held outside the batches (the observed
#: labelling's sums and their statistic)
_SUM_COPIES = 4
_FIXED_SUM_COPIES = 4
#: from this many groups on, relabellings are folded over the matrix rows (O(n) memory per
#: relabelling) instead of multiplied by one-hot matrices (O(k·n)): measured faster from about
#: 32 groups (benchmarks/bench_groups.py), and more accurate (no column recovered by subtraction)
FOLD_MIN_GROUPS = 32
#: the matrix engine sums up to this many groups under bit masks (compiled, tables of four rows'
#: subset sums) instead of one-hot products (BLAS), by instruction set: at n = 2000 (2-core AMD
#: EPYC) the masked sums took 0.45-0.53x the products' time for two groups, 0.87-0.93x for eight
#: (AVX2, AVX-512), 1.06-1.18x for sixteen; 0.72x for five and 1.19x for eight in the baseline
#: build (benchmarks/bench_groups.py, docs/benchmarks/groups.txt)
MASK_MAX_GROUPS = {"avx512": 8, "avx2": 8, "baseline": 5}
#: longest a batch should run, in multiply-adds, so that Ctrl-C is honoured between batches
_BATCH_WORK = 2e9


def _per_relabelling(n, k, onehot):
    """Bytes one relabelling of a batch needs (codes, sums, one-hot rows and products)."""
    per = 8.0 * n * _CODE_COPIES + 8.0 * k * k * _SUM_COPIES
    if onehot:
        per += 17.0 * (k - 1) * n + 8.0 * (k - 1) * n  # one-hot (and its boolean), products
    return per


def masked_path(k):
    """Whether the matrix engine sums ``k`` groups under bit masks (see MASK_MAX_GROUPS)."""
    return k <= MASK_MAX_GROUPS.get(_permutation.SIMD_LEVEL, 0)


def _per_masked(n, k):
    """Bytes a relabelling needs in the masked sums (codes, sums, one group's booleans, the bit
    masks, the kernel's compensated lane sums and a tile's totals; the tables are fixed)."""
    kp = k - 1
    return (8.0 * n * _CODE_COPIES + 8.0 * k * k * _SUM_COPIES + n + 8.0 * kp * -(-n // 64)
            + 8.0 * kp + 3 * 128.0 * kp * kp)


def _matrix_per(n, k, fold):
    """Bytes per relabelling of the matrix engine's path for ``k`` groups."""
    if fold:
        return _per_relabelling(n, k, False)
    return _per_masked(n, k) if masked_path(k) else _per_relabelling(n, k, True)


def _matrix_bytes(n):
    """Bytes of the engine's n×n matrix (on a 64-byte boundary)."""
    return 8.0 * n * n + 64.0


def _fixed_sums(k):
    return 8.0 * k * k * _FIXED_SUM_COPIES


def _batch_size(free, per, cap, work_per=0.0):
    """Relabellings per batch: what fits in ``free`` bytes, at most ``cap`` and ``_BATCH_WORK``."""
    b = min(cap, free // per)
    if work_per > 0:
        b = min(b, _BATCH_WORK // work_per)
    return int(max(1, b))


class Plan:
    """What an engine holds (``fixed`` bytes) and needs per relabelling (``per`` bytes)."""

    def __init__(self, name, fixed, per, fold=False, block_rows=0):
        self.name, self.fixed, self.per, self.fold, self.block_rows = name, fixed, per, fold, block_rows

    @property
    def least(self):
        """Bytes for the smallest batch (one relabelling)."""
        return self.fixed + self.per


def plan_engine(n, d, k, metric, method, budget):
    """The engine for ``method`` (after the sorted path was ruled out) within ``budget``.

    ``auto`` takes the n×n matrix when it fits, else the matrix recomputed in
    row blocks, else the streamed reduction; raises :class:`MemoryError` when
    not even one relabelling fits.
    """
    fold = k >= FOLD_MIN_GROUPS
    plans = []
    if method != "streamed":
        matrix = Plan("matrix", _matrix_bytes(n) + 16.0 * n + _fixed_sums(k), _matrix_per(n, k, fold),
                      fold)
        plans.append(matrix)
        if metric.kind == "builtin" and not fold:
            b = min(n, TILE_ROWS)
            plans.append(Plan("tiled", 2 * (8.0 * b * b + 16.0 * b) + _fixed_sums(k),
                              _per_relabelling(n, k, False) + 2 * 3 * 8.0 * (k - 1) * b))
        if metric.kind == "builtin":
            per = _per_relabelling(n, k, not fold) + (0 if fold else 16.0 * (k - 1) * n)
            free = budget - per - _fixed_sums(k)
            rows = int(min(n, max(16, min(4096, free / 4 // (8.0 * n)))))
            plans.append(Plan("blocked", 8.0 * rows * n + 8.0 * n + _fixed_sums(k), per, fold, rows))
    if metric.kind == "builtin":
        n_stripes, per_call = _engine.stripe_plan(n, d, k)
        plans.append(Plan("streamed", 16.0 * n * d + (16.0 * per_call + 16.0) * k * k + _fixed_sums(k),
                          8.0 * n * (_CODE_COPIES + 1) + 8.0 * k * k * _SUM_COPIES))
    for plan in plans:
        if plan.least <= budget:
            return plan
    least = min(plans, key=lambda p: p.least)
    raise _budget_error(least.least, f"n={n}, {k} groups, the {least.name!r} engine", budget)


def _budget_error(need, what, budget):
    """The MemoryError of a permutation test that cannot fit ``memory_budget``."""
    return MemoryError(
        f"the permutation test needs at least {_memory.format_bytes(need)} ({what}), more than "
        f"`memory_budget` = {_memory.format_bytes(budget)}. Raise `memory_budget` (up to the "
        "memory available) or test fewer or larger groups.")


def effective_budget(memory_budget):
    """``memory_budget``, lowered to 80 % of the memory available when that is less."""
    avail, _ = _memory.available_memory()
    return memory_budget if avail is None else min(memory_budget, 0.8 * avail)


class SortedEngine:
    """1-D ``|x − y|``: pooled data sorted and centred once."""

    name = "sorted"

    def __init__(self, X, k, n_threads, memory_budget=DEFAULT_MEMORY_BUDGET):
        n = X.shape[0]
        per = _per_relabelling(n, k, False)
        fixed = 16.0 * n + _fixed_sums(k)
        if fixed + per > memory_budget:
            raise _budget_error(fixed + per, f"n={n}, {k} groups, the sorted engine", memory_budget)
        self.order, self.xs = _engine.sort_centred(X)
        self.k = k
        self.n_threads = n_threads
        self.batch_size = _batch_size(memory_budget - fixed, per, 512, float(n) * k)

    def group_sums(self, codes):
        cs = np.ascontiguousarray(codes, dtype=np.intp)
        out = np.zeros((cs.shape[0], self.k, self.k))
        _permutation.batch_sorted_group_sums(self.xs, self.order, cs, out, self.n_threads)
        out += out.transpose(0, 2, 1).copy()
        return out


class MatrixEngine:
    """The n×n matrix in memory; batches summed under bit masks (few groups, compiled),
    through BLAS products (more groups) or folded over the matrix rows (many groups)."""

    name = "matrix"

    def __init__(self, D, k, sizes, n_threads, memory_budget, *, fold=None, share=1):
        self.D = D
        self.k = k
        self.n_threads = n_threads
        n = D.shape[0]
        self.fold = k >= FOLD_MIN_GROUPS if fold is None else fold
        self._orders(sizes)
        if not self.fold:
            self.rowsum = np.ascontiguousarray(D.sum(axis=1))
        self.masked = not self.fold and masked_path(k)
        self.small_codes = self.masked and type(self).group_sums is MatrixEngine.group_sums  # bytes
        fixed = _matrix_bytes(n) + 16.0 * n + _fixed_sums(k)
        free = (memory_budget - fixed) / share
        per = _matrix_per(n, k, self.fold)
        if free < per:
            raise _budget_error(fixed + per, f"n={n}, {k} groups, the n×n matrix", memory_budget)
        work = n * n * (1 if self.fold else k) / (4 if self.masked else 1)  # masked: n²/8 adds a group
        self.batch_size = _batch_size(free, per, 1024, work)
        if self.masked and self.batch_size >= _permutation.MASK_TABLES_FROM:  # + tables, a thread
            self.batch_size = max(_permutation.MASK_TABLES_FROM - 1, _batch_size(
                free - 131072.0 * (n_threads or 1) / share, per, 1024, work))

    def _orders(self, sizes):
        k = self.k
        # Internal order of the groups: the largest last (its column is recovered
        # from the row sums, so the subtraction loses the least).
        self.perm = np.argsort(-np.asarray(sizes), kind="stable")[::-1].copy()
        inv = np.empty(k, dtype=np.intp)
        inv[self.perm] = np.arange(k)
        self.inv = inv  # external code -> internal code
        self.identity = bool(np.all(inv == np.arange(k)))

    def _reorder(self, out):
        return out if self.identity else out[:, self.inv][:, :, self.inv]

    def _product(self, LT):
        return LT @ self.D

    def _onehot(self, codes):
        """Internal codes (largest group last) and the one-hot rows of the others."""
        B, n = codes.shape
        kp = self.k - 1
        ci = codes if self.identity else np.ascontiguousarray(self.inv[codes], dtype=np.intp)
        if kp == 1:
            LT = (ci == 0).astype(np.float64)
        else:
            LT = (ci[:, None, :] == np.arange(kp)[None, :, None]).astype(np.float64).reshape(B * kp, n)
        return ci, LT

    def _fold(self, codes, blocks):
        """Sum the rows of ``D`` (given as ``(row0, block)`` pairs) by label."""
        cs = np.ascontiguousarray(codes, dtype=np.intp)
        out = np.zeros((cs.shape[0], self.k, self.k))
        for r0, blk in blocks:
            _permutation.batch_fold_group_sums(blk, r0, cs, out, self.n_threads)
        out += out.transpose(0, 2, 1).copy()
        out *= 0.5
        return out

    def group_sums(self, codes):
        """``Lᵀ D L`` for a batch of relabellings ``codes`` (B, n), by one of three paths.

        * Few groups, on AVX2 or AVX-512 (:func:`masked_path`, :meth:`_masked_sums`): a compiled
          kernel sums ``D`` under the groups' bit masks, reading the lower tile triangle of
          ``D`` and, for the row sums of a group, only its points.
        * More groups (:meth:`_upper_sums`): BLAS products of one-hot matrices over the
          upper block triangle.
        * ``k ≥ FOLD_MIN_GROUPS``: the rows of ``D`` folded by label.

        In the first two the largest group's row and column follow from the row sums of ``D``.
        """
        if self.fold:
            return self._fold(codes, [(0, self.D)])
        if self.masked:
            return self._masked_sums(codes)
        n = codes.shape[1]
        return map_chunks(self._upper_sums, codes, self.n_threads, chunk_size((self.k - 1) * float(n) * n))

    def _finish(self, Q, s, B):
        """The (B, k, k) sums from those among the first k − 1 groups (``Q``) and the groups'
        row sums (``s``, (B, k − 1)), in the external group order."""
        k, kp = self.k, self.k - 1
        total = float(self.rowsum.sum())
        out = np.empty((B, k, k))
        out[:, :kp, :kp] = Q
        last = s - out[:, :kp, :kp].sum(axis=2)  # Σ_{x∈C_g, y∈C_last}
        out[:, :kp, kp] = last
        out[:, kp, :kp] = last
        out[:, kp, kp] = (total - s.sum(axis=1)) - last.sum(axis=1)
        return self._reorder(out)

    def _masked_sums(self, codes):
        """The compiled masked sums (:func:`energystats._lib._permutation.batch_mask_sums`):
        64×64 tiles of the lower triangle, each relabelling's sums in a fixed order (the same
        bits whatever the batch or the threads)."""
        B, n = codes.shape
        kp = self.k - 1
        ci = codes if self.identity else np.ascontiguousarray(self.inv[codes], dtype=np.intp)
        Q = np.empty((B, kp, kp))
        s = np.empty((B, kp))
        threads = self.n_threads if B * (1.0 + kp * kp / 16.0) * n * n >= MASK_THREADS_WORK else 1
        _permutation.batch_mask_sums(self.D, group_masks(ci, kp), self.rowsum, Q, s, threads)
        return self._finish(Q, s, B)

    def _upper_sums(self, codes, n_threads):
        B, n = codes.shape
        kp = self.k - 1
        ci, LT = self._onehot(codes)
        L3 = LT.reshape(B, kp, n)
        nb = int(min(4, max(1, n // 256)))
        edges = np.linspace(0, n, nb + 1).astype(int)
        Q = np.zeros((B, kp, kp))
        for p in range(nb):
            sp = slice(edges[p], edges[p + 1])
            Lp = LT[:, sp]
            for q in range(p, nb):
                sq = slice(edges[q], edges[q + 1])
                Y = (Lp @ self.D[sp, sq]).reshape(B, kp, -1)
                if kp == 1:
                    part = np.einsum("bj,bj->b", Y[:, 0, :], L3[:, 0, sq])[:, None, None]
                else:
                    part = np.matmul(Y, L3[:, :, sq].transpose(0, 2, 1))
                Q += part if p == q else part + part.transpose(0, 2, 1)
        s = (LT @ self.rowsum).reshape(B, kp)
        return self._finish(0.5 * (Q + Q.transpose(0, 2, 1)), s, B)

    def _group_sums_full(self, codes):
        """``Z = Lᵀ D`` for every row, folded by label in the compiled kernel."""
        n = codes.shape[1]
        return map_chunks(self._full_sums, codes, self.n_threads, chunk_size((self.k - 1) * float(n) * n))

    def _full_sums(self, codes, n_threads):
        B, n = codes.shape
        k = self.k
        ci, LT = self._onehot(codes)
        Z = self._product(LT)
        del LT
        out = np.empty((B, k, k))
        _permutation.batch_group_sums(np.ascontiguousarray(Z), ci, self.rowsum, out, n_threads)
        out += out.transpose(0, 2, 1).copy()
        out *= 0.5
        return self._reorder(out)


#: work of the masked sums (relabellings × n² × (1 + (k − 1)²/16): the rows read once, a fold of
#: the column sums per tile and pair of groups) from which they use all threads
MASK_THREADS_WORK = 2e7


def group_masks(ci, kp):
    """Bit masks of the groups 0..kp−1 of a batch of (internal) codes ``ci`` (B, n): shape
    (B, kp, ⌈n/64⌉), bit t of word w set when point 64w + t is in the group."""
    B, n = ci.shape
    W = (n + 63) // 64
    raw = np.zeros((B, kp, 8 * W), dtype=np.uint8)
    for g in range(kp):
        raw[:, g, :(n + 7) // 8] = np.packbits(ci == g, axis=1, bitorder="little")
    return np.ascontiguousarray(raw.view("<u8").astype(np.uint64, copy=False))


def tile_group_sums(XI, XJ, codes, i0, i1, j0, j1, k, inv, metric, diagonal, n_threads):
    """(B, k, k) sums of one tile for every relabelling of a batch (internal group order).

    ``XI``, ``XJ``: rows ``i0:i1`` and ``j0:j1`` of the data (working units);
    ``codes`` (B, n) the batch; ``inv`` maps codes to the internal order
    (largest group last).  The block of rho is computed once; ``Y = L_I D``
    for the batch's one-hot rows ``L_I`` of the first k − 1 (internal)
    groups is one matrix product, and the last group's sums follow from the
    block's row and column sums.  An off-diagonal tile returns ``T + Tᵀ``
    (it stands for tile J, I too).
    """
    if XI.dtype != XJ.dtype:
        XI, XJ = XI.astype(np.float64), XJ.astype(np.float64)
    D = np.empty((XI.shape[0], XJ.shape[0]))
    _pairwise.pairwise_matrix(np.ascontiguousarray(XI), np.ascontiguousarray(XJ.T), D, metric.code,
                              metric.param, n_threads)
    B = codes.shape[0]
    kp = k - 1
    cI = inv[codes[:, i0:i1]]
    cJ = inv[codes[:, j0:j1]]
    grp = np.arange(kp)[None, :, None]
    LI = (cI[:, None, :] == grp).astype(np.float64).reshape(B * kp, -1)
    LJ = (cJ[:, None, :] == grp).astype(np.float64)
    del cI, cJ
    Y = (LI @ D).reshape(B, kp, -1)
    Q = np.matmul(Y, LJ.transpose(0, 2, 1))
    del Y
    sI = (LI @ D.sum(axis=1)).reshape(B, kp)
    sJ = (LJ.reshape(B * kp, -1) @ D.sum(axis=0)).reshape(B, kp)
    T = np.empty((B, k, k))
    T[:, :kp, :kp] = Q
    T[:, :kp, kp] = sI - Q.sum(axis=2)
    T[:, kp, :kp] = sJ - Q.sum(axis=1)
    T[:, kp, kp] = float(D.sum()) - sI.sum(axis=1) - T[:, kp, :kp].sum(axis=1)
    return T if diagonal else T + T.transpose(0, 2, 1)


#: rows of a tile of the 'tiled' engine: its block of rho is 8 MiB.  At n = m = 5000, d = 10,
#: R = 999 on 2 cores, tiles of 1024 to 2048 rows and batches of 256 to 1024 relabellings all
#: took 2.5-3.6 s (one run each, a noisy machine); 1024 / 512 held the least memory
#: (about 175 MB above the data in benchmarks/bench_scale.py)
TILE_ROWS = 1024
#: relabellings per batch of the 'tiled' engine at most: every tile recomputes its block of
#: rho once per batch (a few % of a batch's work at this size), and the batch's codes and
#: one-hot rows stay small
TILED_BATCH = 512


def _part_done(engine, fraction):
    """Tell the progress bar (``engine.on_part``, set by :func:`permutation_null` while a bar
    is shown) that ``fraction`` of the current batch is done: one batch of the tiled or
    blocked engine can take many seconds, and the bar would sit still meanwhile."""
    hook = getattr(engine, "on_part", None)
    if hook is not None:
        hook(fraction)


class TiledEngine(MatrixEngine):
    """The n×n matrix in tiles of ``TILE_ROWS`` rows, recomputed for every batch.

    For each batch, each tile I ≤ J computes its block of rho (compiled) and
    pushes the whole batch through one matrix product
    (:func:`tile_group_sums`); the tiles run in ``n_threads`` threads with
    single-threaded BLAS and are added in a fixed order, so the sums do not
    depend on the number of threads.  Memory: a block of rho and a batch's
    one-hot rows per thread, and the batch's codes.
    """

    name = "tiled"

    def __init__(self, X, k, sizes, metric, n_threads, memory_budget):
        n = X.shape[0]
        self.X, self.metric, self.k, self.n_threads = X, metric, k, n_threads
        self.fold = False
        self._orders(sizes)
        b = min(n, TILE_ROWS)
        self.starts = list(range(0, n, b)) + [n]
        # each thread holds a tile, its batch's one-hot rows and its (B, k, k) sums: as many
        # threads as fit (the sums do not depend on the number), at least one
        tile = 8.0 * b * b + 16.0 * b
        per_thread = 3 * 8.0 * (k - 1) * b + 8.0 * k * k
        per = _per_relabelling(n, k, False)
        fits = (memory_budget - _fixed_sums(k) - per) // (tile + per_thread)
        # the memory of as many threads as this machine runs is set aside whatever n_threads
        # is, so that the batch size (and with it the BLAS products' bits) does not depend on
        # n_threads: with the threads' share taken from n_threads, 1 and 2 threads gave
        # batches of 18 and 1 relabellings and nulls 8e-11 apart under a tight budget
        reserved = int(max(1, min(os.cpu_count() or 1, fits)))
        self.n_threads = int(max(1, min(max(1, n_threads), reserved)))
        fixed = reserved * tile + _fixed_sums(k)
        per += reserved * per_thread
        if fixed + per > memory_budget:
            raise _budget_error(fixed + per, f"n={n}, {k} groups, the tiled engine", memory_budget)
        self.batch_size = _batch_size(memory_budget - fixed, per, TILED_BATCH)

    def group_sums(self, codes):
        s, X = self.starts, self.X
        tiles = [(I, J) for I in range(len(s) - 1) for J in range(I, len(s) - 1)]

        def one(t):
            I, J = t
            return tile_group_sums(X[s[I]:s[I + 1]], X[s[J]:s[J + 1]], codes, s[I], s[I + 1], s[J],
                                   s[J + 1], self.k, self.inv, self.metric, I == J, 1)

        M = None
        with _blas_limits(1), contextlib.ExitStack() as stack:
            pool = None
            if self.n_threads > 1 and len(tiles) > 1:
                from concurrent.futures import ThreadPoolExecutor

                pool = stack.enter_context(ThreadPoolExecutor(max_workers=self.n_threads))
            # a round of n_threads tiles at a time, added in tile order: the same bits for any
            # number of threads, and at most n_threads tiles' sums alive
            for r0 in range(0, len(tiles), self.n_threads):
                chunk = tiles[r0:r0 + self.n_threads]
                for part in (map(one, chunk) if pool is None else pool.map(_in_region(one), chunk)):
                    M = part if M is None else M + part
                _part_done(self, (r0 + len(chunk)) / len(tiles))
        M = 0.5 * (M + M.transpose(0, 2, 1))
        return self._reorder(M)


class BlockedEngine(MatrixEngine):
    """The n×n matrix does not fit: recompute it in row blocks for every batch.

    ``Z = Lᵀ D`` is accumulated block by block, ``Z += L[I]ᵀ D[I, :]`` with
    ``D[I, :]`` computed by the compiled kernel (or, with many groups, each
    block folded by label); memory is one row block plus the batch's
    one-hot and product matrices, all within the budget.  Each batch costs
    one pass of O(n²·d) metric evaluations plus its BLAS products, so large
    batches amortise the recomputation.
    """

    name = "blocked"

    def __init__(self, X, k, sizes, metric, n_threads, memory_budget, *, plan=None, share=1):
        n = X.shape[0]
        plan = plan or plan_engine(n, X.shape[1], k, metric, "auto", memory_budget)
        self.X = X
        self.metric = metric
        self.block_rows = plan.block_rows or int(min(n, max(16, min(4096, memory_budget / 4 // (8 * n)))))
        self.k = k
        self.n_threads = n_threads
        self.fold = plan.fold
        self._orders(sizes)
        if not self.fold:
            rowsum = np.empty(n)
            for i0, blk in self._blocks():
                rowsum[i0:i0 + blk.shape[0]] = blk.sum(axis=1)
            self.rowsum = rowsum
        free = (memory_budget - 8.0 * self.block_rows * n - 8.0 * n - _fixed_sums(k)) / share
        self.batch_size = _batch_size(free, plan.per, 4096)

    def _blocks(self):
        n = self.X.shape[0]
        for i0 in range(0, n, self.block_rows):
            yield i0, _engine.pairwise_values(self.X[i0:i0 + self.block_rows], self.X, self.metric,
                                              self.n_threads)
            _part_done(self, min(n, i0 + self.block_rows) / n)  # the block was used

    def group_sums(self, codes):
        if self.fold:
            return self._fold(codes, self._blocks())
        B, n = codes.shape
        k = self.k
        ci, LT = self._onehot(codes)
        Z = np.zeros((LT.shape[0], n))
        # row chunks of the products fixed by the shape: the same bits for any n_threads
        step = chunk_size((k - 1) * float(self.block_rows) * n) * (k - 1)
        with _RowChunks(LT.shape[0], step, self.n_threads) as chunks:
            for i0, blk in self._blocks():
                i1 = i0 + blk.shape[0]

                def part(r0, r1, blk=blk, i0=i0, i1=i1):
                    Z[r0:r1] += LT[r0:r1, i0:i1] @ blk

                chunks.run(part)
        del LT
        out = np.empty((B, k, k))
        _permutation.batch_group_sums(Z, ci, self.rowsum, out, self.n_threads)
        out += out.transpose(0, 2, 1).copy()
        out *= 0.5
        return self._reorder(out)


class _RowChunks:
    """Run ``fn(r0, r1)`` over fixed row ranges: in threads with single-threaded BLAS
    (threadpoolctl installed), else once over all rows with BLAS's own threads."""

    def __init__(self, nrows, step, n_threads):
        self.blas = _blas()
        self.ranges = ([(0, nrows)] if self.blas is None else
                       [(r, min(nrows, r + step)) for r in range(0, nrows, step)])
        self.workers = min(n_threads, len(self.ranges)) if self.blas is not None else 1
        self.pool = None
        self.limit = contextlib.nullcontext() if self.blas is None else _blas_limits(1)

    def __enter__(self):
        self.limit.__enter__()
        if self.workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=self.workers)
        return self

    def run(self, fn):
        if self.pool is None:
            for r0, r1 in self.ranges:
                fn(r0, r1)
        else:
            for f in [self.pool.submit(_in_region(fn), r0, r1) for r0, r1 in self.ranges]:
                f.result()

    def __exit__(self, *exc):
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.limit.__exit__(*exc)
        return False


class StreamedEngine:
    """No n×n matrix: one streamed compiled reduction per relabelling."""

    name = "streamed"

    def __init__(self, X, k, metric, n_threads, memory_budget=DEFAULT_MEMORY_BUDGET, *, plan=None):
        n = X.shape[0]
        plan = plan or plan_engine(n, X.shape[1], k, metric, "streamed", memory_budget)
        self.X = X
        self.k = k
        self.metric = metric
        self.n_threads = n_threads
        self.batch_size = _batch_size(memory_budget - plan.fixed, plan.per, 16)

    def group_sums(self, codes):
        out = np.empty((codes.shape[0], self.k, self.k))
        for b, c in enumerate(codes):
            out[b] = _engine.group_sum_matrix(self.X, c, self.k, self.metric, self.n_threads)
        return out


def build_engine(X, k, sizes, metric, n_threads, *, method="auto", memory_budget=DEFAULT_MEMORY_BUDGET,
                 share=1, D=None):
    """Choose and set up the engine (``method`` in 'auto', 'sorted', 'pairwise', 'streamed').

    ``share`` engines (one per factor) run side by side: each gets that share
    of the budget for its batches.  ``D``: an n×n matrix another factor's
    engine already holds.
    """
    budget = effective_budget(memory_budget)
    if metric.kind == "precomputed":
        if method in ("sorted", "streamed"):
            raise ValueError(f"`method={method!r}` is not available with metric='precomputed'.")
        return MatrixEngine(np.ascontiguousarray(X, dtype=np.float64), k, sizes, n_threads, budget,
                            share=share)
    if method == "streamed":
        if metric.kind != "builtin":
            from ._metrics import compiled_only
            raise ValueError(compiled_only("`method='streamed'`", metric))
        return StreamedEngine(X, k, metric, n_threads, budget)
    if _engine.use_sorted_path(X, metric, "pairwise" if method == "pairwise" else method):
        return SortedEngine(X, k, n_threads, budget)
    if D is not None:
        return MatrixEngine(D, k, sizes, n_threads, budget, share=share)
    n = X.shape[0]
    plan = plan_engine(n, X.shape[1], k, metric, method, budget)
    if plan.name == "streamed":
        return StreamedEngine(X, k, metric, n_threads, budget, plan=plan)
    if plan.name == "tiled":
        return TiledEngine(X, k, sizes, metric, n_threads, budget)
    if plan.name == "blocked":
        return BlockedEngine(X, k, sizes, metric, n_threads, budget, plan=plan, share=share)
    _memory.check_fits(8.0 * n * n, f"the {n}×{n} distance matrix of the permutation test",
                       "Lower `memory_budget` so that the test works in row blocks.")
    # on a 64-byte boundary: the masked sums load rows eight values at a time
    return MatrixEngine(_engine.pairwise_values(X, X, metric, n_threads, aligned=True), k, sizes,
                        n_threads, budget, share=share)
