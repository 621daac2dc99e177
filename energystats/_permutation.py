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
    relabellings costs one BLAS product ``Lᵀ D`` (``L`` one-hot, the largest
    group left out and recovered from the row sums of ``D``) plus an O(n·k)
    fold per relabelling.
``blocked``
    When ``D`` does not fit in the memory budget: for each batch, ``D`` is
    recomputed in row blocks (compiled) and ``Lᵀ D`` accumulated block by
    block — the matrix path without the n×n matrix.
``streamed``
    When not even one relabelling's one-hot and product rows fit (or on
    request): one streamed compiled reduction
    (:func:`energystats._lib._pairwise.group_sums`) per relabelling, O(n²·d)
    time and O(n·d) memory each.

:func:`permutation_null` draws the relabellings (deterministically from the
Generator, independent of batch sizes and thread counts) or enumerates them
all, and evaluates a statistic on each.
"""
from __future__ import annotations

import contextlib
import itertools
import math

import numpy as np

from . import _engine
from ._lib import _permutation

__all__ = ["build_engine", "permutation_null", "count_relabellings", "enumerate_relabellings",
           "draw_permutations", "pvalue_from_null", "DegenerateStatisticWarning"]

#: Default memory budget (bytes) for the n×n matrix and a batch of one-hot matrices.
DEFAULT_MEMORY_BUDGET = 512 * 2**20


_CONTROLLER = []


def _blas_limits(n_threads):
    """Limit BLAS threads to ``n_threads`` when threadpoolctl is available
    (a no-op when BLAS already uses no more threads)."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController
            _CONTROLLER.append(ThreadpoolController())
        except ImportError:  # pragma: no cover - optional
            _CONTROLLER.append(None)
    ctl = _CONTROLLER[0]
    if ctl is None:
        return contextlib.nullcontext()
    blas = ctl.select(user_api="blas")
    if all(lib.num_threads <= n_threads for lib in blas.lib_controllers):
        return contextlib.nullcontext()
    return blas.limit(limits=n_threads)


class SortedEngine:
    """1-D ``|x − y|``: pooled data sorted and centred once."""

    name = "sorted"

    def __init__(self, X, k, n_threads, memory_budget=DEFAULT_MEMORY_BUDGET):
        self.order, self.xs = _engine.sort_centred(X)
        self.k = k
        self.n_threads = n_threads
        # a batch holds the drawn codes: 8 bytes per point and relabelling
        self.batch_size = int(max(1, min(512, memory_budget // (8 * max(self.xs.size, 1)))))

    def group_sums(self, codes):
        cs = np.ascontiguousarray(codes, dtype=np.intp)
        out = np.zeros((cs.shape[0], self.k, self.k))
        _permutation.batch_sorted_group_sums(self.xs, self.order, cs, out, self.n_threads)
        return out + out.transpose(0, 2, 1)


class MatrixEngine:
    """The n×n matrix in memory; batches through one BLAS product each."""

    name = "matrix"

    def __init__(self, D, k, sizes, n_threads, memory_budget):
        self.D = D
        self.rowsum = np.ascontiguousarray(D.sum(axis=1))
        self.k = k
        self.n_threads = n_threads
        n = D.shape[0]
        # Internal order of the groups: the largest last (its column is recovered
        # from the row sums, so the subtraction loses the least).
        self.perm = np.argsort(-np.asarray(sizes), kind="stable")[::-1].copy()
        inv = np.empty(k, dtype=np.intp)
        inv[self.perm] = np.arange(k)
        self.inv = inv  # external code -> internal code
        per = (16 * (k - 1) + 8 + 8 * k * k / max(n, 1)) * n
        free = memory_budget - 8.0 * n * n
        self.batch_size = int(max(1, min(1024, free // per))) if free > 0 else 1

    def _product(self, LT):
        return LT @ self.D

    def _onehot(self, codes):
        """Internal codes (largest group last) and the one-hot rows of the others."""
        B, n = codes.shape
        kp = self.k - 1
        ci = np.ascontiguousarray(self.inv[codes], dtype=np.intp)
        if kp == 1:
            LT = (ci == 0).astype(np.float64)
        else:
            LT = (ci[:, None, :] == np.arange(kp)[None, :, None]).astype(np.float64).reshape(B * kp, n)
        return ci, LT

    def group_sums(self, codes):
        """``Lᵀ D L`` over the upper block triangle of ``D`` (symmetry halves the work).

        With the rows cut into P blocks, ``Lᵀ D L = Σ_p L_pᵀ D_pp L_p +
        Σ_{p<q} (L_pᵀ D_pq L_q + its transpose)``: P(P+1)/2 of the P² block
        products.  The largest group's row and column follow from ``Lᵀ r``
        (``r`` the row sums of ``D``).
        """
        B, n = codes.shape
        k, kp = self.k, self.k - 1
        ci, LT = self._onehot(codes)
        L3 = LT.reshape(B, kp, n)
        nb = int(min(4, max(1, n // 256)))
        edges = np.linspace(0, n, nb + 1).astype(int)
        Q = np.zeros((B, kp, kp))
        with _blas_limits(self.n_threads):
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
        total = float(self.rowsum.sum())
        out = np.empty((B, k, k))
        out[:, :kp, :kp] = 0.5 * (Q + Q.transpose(0, 2, 1))
        last = s - out[:, :kp, :kp].sum(axis=2)  # Σ_{x∈C_g, y∈C_last}
        out[:, :kp, kp] = last
        out[:, kp, :kp] = last
        out[:, kp, kp] = (total - s.sum(axis=1)) - last.sum(axis=1)
        return out[:, self.inv][:, :, self.inv]

    def _group_sums_full(self, codes):
        """``Z = Lᵀ D`` for every row, folded by label in the compiled kernel."""
        B, n = codes.shape
        k = self.k
        ci, LT = self._onehot(codes)
        with _blas_limits(self.n_threads):
            Z = self._product(LT)
        out = np.empty((B, k, k))
        _permutation.batch_group_sums(np.ascontiguousarray(Z), ci, self.rowsum, out, self.n_threads)
        out = 0.5 * (out + out.transpose(0, 2, 1))
        return out[:, self.inv][:, :, self.inv]


class BlockedEngine(MatrixEngine):
    """The n×n matrix does not fit: recompute it in row blocks for every batch.

    ``Z = Lᵀ D`` is accumulated block by block, ``Z += L[I]ᵀ D[I, :]`` with
    ``D[I, :]`` computed by the compiled kernel; memory is one row block plus
    the batch's one-hot and product matrices, all within the budget.  Each
    batch costs one pass of O(n²·d) metric evaluations plus its BLAS
    products, so large batches amortise the recomputation.
    """

    name = "blocked"

    def __init__(self, X, k, sizes, metric, n_threads, memory_budget):
        n = X.shape[0]
        self.X = X
        self.metric = metric
        # Row block: at most a quarter of the budget, 16..4096 rows.
        self.block_rows = int(min(n, max(16, min(4096, memory_budget / 4 // (8 * n)))))
        self.k = k
        self.n_threads = n_threads
        self.perm = np.argsort(-np.asarray(sizes), kind="stable")[::-1].copy()
        inv = np.empty(k, dtype=np.intp)
        inv[self.perm] = np.arange(k)
        self.inv = inv
        rowsum = np.empty(n)
        for i0 in range(0, n, self.block_rows):
            blk = _engine.pairwise_values(X[i0:i0 + self.block_rows], X, metric, n_threads)
            rowsum[i0:i0 + blk.shape[0]] = blk.sum(axis=1)
        self.rowsum = rowsum
        per = (16 * (k - 1) + 8 + 8 * k * k / max(n, 1)) * n
        free = memory_budget - 8.0 * self.block_rows * n
        self.batch_size = int(max(1, min(4096, free // per)))

    def group_sums(self, codes):
        return self._group_sums_full(codes)

    def _product(self, LT):
        n = self.X.shape[0]
        Z = np.zeros((LT.shape[0], n))
        for i0 in range(0, n, self.block_rows):
            i1 = min(n, i0 + self.block_rows)
            blk = _engine.pairwise_values(self.X[i0:i1], self.X, self.metric, self.n_threads)
            Z += LT[:, i0:i1] @ blk
        return Z


class StreamedEngine:
    """No n×n matrix: one streamed compiled reduction per relabelling."""

    name = "streamed"

    def __init__(self, X, k, metric, n_threads):
        self.X = X
        self.k = k
        self.metric = metric
        self.n_threads = n_threads
        self.batch_size = 16

    def group_sums(self, codes):
        out = np.empty((codes.shape[0], self.k, self.k))
        for b, c in enumerate(codes):
            out[b] = _engine.group_sum_matrix(self.X, c, self.k, self.metric, self.n_threads)
        return out


def build_engine(X, k, sizes, metric, n_threads, *, method="auto", memory_budget=DEFAULT_MEMORY_BUDGET):
    """Choose and set up the engine (``method`` in 'auto', 'sorted', 'pairwise', 'streamed')."""
    if metric.kind == "precomputed":
        if method in ("sorted", "streamed"):
            raise ValueError(f"`method={method!r}` is not available with metric='precomputed'.")
        return MatrixEngine(np.ascontiguousarray(X, dtype=np.float64), k, sizes, n_threads, memory_budget)
    if method == "streamed":
        if metric.kind != "builtin":
            raise ValueError("`method='streamed'` needs a built-in metric (not a callable).")
        return StreamedEngine(X, k, metric, n_threads)
    if _engine.use_sorted_path(X, metric, "pairwise" if method == "pairwise" else method):
        return SortedEngine(X, k, n_threads, memory_budget)
    n = X.shape[0]
    if metric.kind == "builtin" and 8.0 * n * n > memory_budget:
        per = (16 * (k - 1) + 8) * n + 8 * 16 * n  # one relabelling and a 16-row block
        if per > memory_budget:
            return StreamedEngine(X, k, metric, n_threads)
        return BlockedEngine(X, k, sizes, metric, n_threads, memory_budget)
    return MatrixEngine(_engine.pairwise_values(X, X, metric, n_threads), k, sizes, n_threads,
                        memory_budget)


# -- relabellings ------------------------------------------------------------

def count_relabellings(sizes, limit=None):
    """Number of distinct assignments of the group labels to the n positions,
    ``n! / Π n_j!``; returns ``limit + 1`` as soon as the count exceeds ``limit``."""
    total, left = 1, int(np.sum(sizes))
    for s in sizes:
        total *= math.comb(left, int(s))
        left -= int(s)
        if limit is not None and total > limit:
            return limit + 1
    return total


def enumerate_relabellings(codes, k):
    """All distinct rearrangements of ``codes`` (a multiset), shape (N, n).

    The observed arrangement is one of them; each is equally likely under
    the null hypothesis of exchangeability.
    """
    codes = np.asarray(codes)
    n = codes.size
    sizes = np.bincount(codes, minlength=k)
    rows = []
    cur = np.empty(n, dtype=np.intp)

    def rec(avail, g):
        if g == k - 1:
            cur[list(avail)] = g
            rows.append(cur.copy())
            return
        for chosen in itertools.combinations(avail, int(sizes[g])):
            cur[list(chosen)] = g
            rest = tuple(i for i in avail if i not in set(chosen))
            rec(rest, g + 1)

    rec(tuple(range(n)), 0)
    return np.array(rows, dtype=np.intp).reshape(len(rows), n)


def draw_permutations(rng, values, count):
    """``count`` random rearrangements of ``values`` (1-D), shape (count, len(values)).

    Row ``r`` is what the ``r``-th call ``rng.permutation(values)`` would
    give, i.e. ``values[rng.permutation(len(values))]`` (the shuffle does not
    depend on the values): the draws depend only on the Generator's state,
    never on batch sizes or thread counts.
    """
    values = np.asarray(values)
    return rng.permuted(np.broadcast_to(values, (count, values.size)).copy(), axis=1)


class DegenerateStatisticWarning(RuntimeWarning):
    """A test statistic is not finite (e.g. 0/0), so the test has no p-value (NaN)."""


def pvalue_from_null(observed, null, exact, what="statistic"):
    """One-sided p-value with SciPy's tolerance for ties (relative 100·eps).

    Random relabellings: ``(1 + #{null ≥ observed}) / (R + 1)``; exact
    enumeration (the observed arrangement included in ``null``):
    ``#{null ≥ observed} / N``.  Works column-wise for 2-D ``null``.

    A statistic that is not finite has no p-value: NaN, with a
    :class:`DegenerateStatisticWarning` (never the smallest p-value, which is
    what ``null >= nan`` being false would give).  Relabellings whose
    statistic is NaN count as exceedances (conservative), with a warning.
    """
    from ._validation import warn

    observed = np.asarray(observed, dtype=np.float64)
    null = np.asarray(null, dtype=np.float64)
    gamma = np.abs(100 * np.finfo(np.float64).eps * observed)
    bad_null = np.isnan(null)
    ge = np.sum((null >= observed - gamma) | bad_null, axis=0)
    R = null.shape[0]
    p = ge / R if exact else (1.0 + ge) / (R + 1.0)
    finite = np.isfinite(observed)
    if not np.all(finite):
        warn(f"the observed {what} is {np.ravel(observed)[~np.ravel(finite)][0]} (not finite), so the "
             "test has no p-value (NaN). This happens when a dispersion is 0, e.g. all points "
             "identical (0/0) or every group's points coincide (W = 0), or when the data "
             "overflow float64 arithmetic (|x| above about 1e154).",
             DegenerateStatisticWarning)
        p = np.where(finite, p, np.nan)
    elif bad_null.any():
        warn(f"{int(bad_null.sum())} of the {R} relabelled {what} values are NaN (a degenerate "
             "relabelling, e.g. 0/0); they were counted as at least as large as the observed "
             "value (conservative).", DegenerateStatisticWarning)
    return p


def pvalue_se(pvalue, n_resamples, exact):
    """Monte Carlo standard error of a permutation p-value: ``sqrt(p (1 - p) / R)``.

    0 for an exact (enumerated) p-value, None when there is no p-value.
    """
    if pvalue is None:
        return None
    p = np.asarray(pvalue, dtype=np.float64)
    se = np.zeros_like(p) if exact or n_resamples == 0 else np.sqrt(p * (1.0 - p) / n_resamples)
    se = np.where(np.isnan(p), np.nan, se)
    return float(se) if se.ndim == 0 else se


def permutation_null(engines, cell_codes, factor_maps, statistic, *, n_resamples, rng,
                     exact=None, exact_limit=10**6, progress=False):
    """Observed statistic and its null distribution.

    Parameters
    ----------
    engines : list
        One engine per factor (all built on the same rows).
    cell_codes : ndarray of intp, shape (n,)
        Observed cell of every row (one factor: the group codes).
    factor_maps : list of ndarray
        For factor ``f``, ``factor_maps[f][cell]`` is the factor's group code.
    statistic : callable
        ``statistic([M_f for f])`` with ``M_f`` of shape (B, k_f, k_f) returns
        an array of shape (B,) or (B, n_factors).
    n_resamples, rng, exact, progress
        As in the public functions.

    Returns
    -------
    observed, null, is_exact, M_observed (list per factor, each (k_f, k_f))
    """
    n_cells = len(factor_maps[0])
    sizes = np.bincount(cell_codes, minlength=n_cells)
    if exact is None:
        is_exact = n_resamples > 0 and count_relabellings(sizes, n_resamples) <= n_resamples
    elif exact:
        N = count_relabellings(sizes, exact_limit)
        if N > exact_limit:
            raise ValueError(f"`exact=True`: more than {exact_limit} distinct relabellings; "
                             "use random relabellings (`exact=None`).")
        is_exact = True
    else:
        is_exact = False

    def evaluate(cells):
        return statistic([eng.group_sums(np.ascontiguousarray(fm[cells]))
                          for eng, fm in zip(engines, factor_maps)])

    batch = max(1, min(eng.batch_size for eng in engines))
    # The observed labelling goes through the same engine as the null, so an
    # identical relabelling reproduces its value to the last bit.
    obs_M = [eng.group_sums(np.ascontiguousarray(fm[cell_codes][None, :]))
             for eng, fm in zip(engines, factor_maps)]
    observed = statistic(obs_M)[0]
    obs_M = [m[0] for m in obs_M]
    if is_exact:
        source = enumerate_relabellings(cell_codes, n_cells)
        total = source.shape[0]
    else:
        total = int(n_resamples)
    null = None
    bar = _progress_bar(total, progress)
    done = 0
    try:
        while done < total:
            if is_exact:
                cells = source[done:done + batch]
            else:
                cells = draw_permutations(rng, cell_codes, min(batch, total - done))
            vals = np.asarray(evaluate(cells))
            if null is None:
                null = np.empty((total,) + vals.shape[1:])
            null[done:done + cells.shape[0]] = vals
            done += cells.shape[0]
            if bar is not None:
                bar.update(cells.shape[0])
    finally:
        if bar is not None:
            bar.close()
    if null is None:
        null = np.empty((0,) + np.shape(observed))
    return observed, null, is_exact, obs_M


def _progress_bar(total, progress, desc="permutations", unit="perm"):
    """A tqdm bar on stderr when ``progress`` is true and tqdm is installed (else None)."""
    if not progress or total == 0:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        import warnings
        warnings.warn("`progress=True` needs tqdm, which is not installed; no progress is shown.",
                      RuntimeWarning, stacklevel=4)
        return None
    return tqdm(total=total, desc=desc, unit=unit)
