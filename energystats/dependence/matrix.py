"""The distance correlation matrix of several variables with pairwise p-values
(:func:`distance_correlation_matrix`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from . import _dask as _dep_dask
from .._core import _dask
from .._core._metrics import resolve_metric
from .._core._pair_sums import _constancy
from .._core._validation import check_n_threads, warn
from .._lib import _dependence
from ._centring import _centred_matrix
from ._input import _check_estimator
from ._products import _MatrixProducts, _permutation_budget, _permutation_plan, _permutation_pvalue

__all__ = ["distance_correlation_matrix", "DistanceCorrelationMatrixResult"]


# -- distance-correlation matrix ------------------------------------------------------

ADJUSTMENTS = ("holm", "bh", None)


def _adjust(p, method):
    """Holm (family-wise) or Benjamini–Hochberg (false discovery rate) adjusted p-values."""
    p = np.asarray(p, dtype=np.float64)
    m = p.size
    if method is None or m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ps = p[order]
    if method == "holm":
        adj = np.maximum.accumulate((m - np.arange(m)) * ps)
    else:  # bh
        adj = np.minimum.accumulate((m / np.arange(m, 0, -1)) * ps[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


@notebook_display
@dataclass(frozen=True)
class DistanceCorrelationMatrixResult:
    r"""Result of :func:`distance_correlation_matrix`.

    Attributes
    ----------
    dcor : DataFrame
        Distance correlations of every pair of columns (V: :math:`\mathcal{R}_n`,
        the root, 1 on the diagonal; U: the bias-corrected :math:`R^*_n`).
    pvalues : DataFrame or None
        Unadjusted p-values: of the t-test (:func:`distance_correlation_ttest`)
        or of the permutation test (:func:`independence_test`).
    adjusted : DataFrame or None
        The p-values adjusted over the p(p−1)/2 pairs (``adjust``).
    estimator : str
    adjust : str or None
    pvalue_method : {'ttest', 'permutation'} or None
    n_resamples : int or None
        Permutations used (all n! of them when ``exact``).
    exact : bool or None
        Whether the permutation p-values enumerate every permutation.
    seed : int or None
        The seed of the permutations (pass it back as ``rng=`` to repeat them).
    left_out : list
        Non-numeric columns left out by ``numeric_only=True``.
    top_pairs : DataFrame or None
        With ``top=k``: the k pairs of largest distance correlation, in
        decreasing order (columns x, y, dcor); ``dcor`` is then None (no
        p×p matrix is formed).

    The diagonals of ``pvalues`` and ``adjusted`` are NaN (a column is not
    tested against itself).
    """

    dcor: pd.DataFrame | None
    pvalues: pd.DataFrame | None = field(default=None, repr=False)
    adjusted: pd.DataFrame | None = field(default=None, repr=False)
    estimator: str = "V"
    adjust: str | None = None
    pvalue_method: str | None = None
    n_resamples: int | None = None
    exact: bool | None = None
    seed: int | None = None
    left_out: list = field(default_factory=list)
    top_pairs: pd.DataFrame | None = field(default=None, repr=False)

    def to_frame(self):
        """Long format: one row per pair (x, y) with dcor, pvalue and the adjusted p-value
        (with ``top=k``: the k pairs kept)."""
        if self.top_pairs is not None:
            return self.top_pairs.copy()
        cols = list(self.dcor.columns)
        iu, ju = np.triu_indices(len(cols), 1)
        out = pd.DataFrame({"x": [cols[i] for i in iu], "y": [cols[j] for j in ju],
                            "dcor": self.dcor.to_numpy()[iu, ju]})
        if self.pvalues is not None:
            out["pvalue"] = self.pvalues.to_numpy()[iu, ju]
            out["pvalue_adjusted"] = self.adjusted.to_numpy()[iu, ju]
        return out


def distance_correlation_matrix(data, *, columns=None, exponent=1.0, estimator="V", pvalue=None,
                                adjust="holm", n_resamples=None, rng=None, memory_budget=2**30,
                                n_threads=None, backend=None, alpha=0.05, numeric_only=False,
                                top=None):
    r"""Distance correlation of every pair of columns of a DataFrame (or 2-D array).

    Parameters
    ----------
    data : DataFrame or array_like, shape (n, p)
        Each column is one variable (1-D).
    columns : list, optional
        The columns to use (default: all, which must be numeric).
    numeric_only : bool, default False
        Leave the non-numeric columns out (listed in the result's
        ``left_out``) instead of raising an error naming them.
    exponent : float, default 1.0
    estimator : {'V', 'U'}, default 'V'
        'V': :math:`\mathcal{R}_n` (the root, as R ``dcor``); 'U': the
        bias-corrected :math:`R^*_n` (R ``bcdcor``, may be negative; n ≥ 4).
    pvalue : {None, 'ttest', 'permutation'}, default None
        'ttest': the distance-correlation t-test of every pair
        (:func:`distance_correlation_ttest`; an approximation that improves
        with n, O(p² n²) in all).  'permutation': the permutation test of
        every pair (:func:`independence_test` with the dCov statistic; the
        pairs share the same permutations, so each p-value equals
        ``independence_test(data[a], data[b], rng=seed).pvalue``), exact for
        any n but R times the work of the statistic per pair: practical for
        tens of columns, not thousands.
    adjust : {'holm', 'bh', None}, default 'holm'
        Adjustment of the p-values over the p(p−1)/2 pairs: Holm's step-down
        (family-wise error) or Benjamini–Hochberg (false discovery rate).
    n_resamples : int, optional
        Permutations R for ``pvalue='permutation'`` (all n! of them when
        there are at most this many).  A pair's p-value is at least
        1 / (R + 1), so adjusted over m pairs a pair on its own reaches no
        less than m / (R + 1) (Holm; Benjamini–Hochberg too unless other
        pairs are as small).  The default is 999, or more where the m pairs
        need it: R + 1 = 5 m / ``alpha`` rounded up to a multiple of 1000
        (55 pairs at alpha = 0.05: R = 5999, smallest adjusted p-value
        0.0092), so that such a pair's adjusted p-value is at most
        alpha / 5.  A setting with m / (R + 1) > alpha (1 / (R + 1) with
        ``adjust=None``) warns: no pair can reach alpha on its own.
    alpha : float, default 0.05
        The level the adjusted p-values are meant for: it sets the default
        ``n_resamples`` and the warning above (no decision is made).
    rng : None, int or numpy.random.Generator
        Source of the permutations (seed recorded in the result).
    memory_budget : float, default 1 GiB
        Bytes for the columns' centred distance matrices held at once
        (lowered to 80 % of the memory available); with n rows a column
        takes 4 n² bytes (8 n² for permutation p-values), and fewer columns
        at once mean more recomputation.  With the Dask backend: the bytes of
        one task's two blocks of columns.
    n_threads : int or None
        Threads of the permutation kernel (default: all).
    backend : {None, 'threads', 'dask'}, default None
        'dask': the blocks of column pairs as Dask tasks (each holds the
        table, in memory, and two blocks of centred vectors), with the same
        blocks and products as the threads backend (equal to the last bit
        or two of the BLAS products).  With ``pvalue='permutation'`` each
        task also holds the permutations (drawn here, from ``rng``) and runs
        the permutation tests of a block of pairs, a few seconds of work (the
        columns' n×n matrices of two blocks within ``memory_budget``); the
        p-values are the threads backend's, bit for bit.  The table itself
        must be in memory (a Dask DataFrame is an error).

    top : int, optional
        Keep only the ``top`` pairs of largest distance correlation (the
        result's ``top_pairs``), without the p×p matrix: for wide tables,
        whose matrices do not fit (10 000 columns: 800 MB each).  The same
        products as the full matrix, in blocks of columns, plus one pass
        for the columns' norms.  Not with ``pvalue`` or the Dask backend.

    Returns
    -------
    DistanceCorrelationMatrixResult

    Notes
    -----
    Each column's centred distance matrix is formed by a compiled kernel as
    its upper triangle (O(n²)); the pairwise inner products are BLAS products
    of blocks of columns, so the p×p matrix costs O(p² n²/2) multiply-adds
    plus the columns' matrices, rebuilt once per block of rows of the result
    (1 000 columns × 1 000 rows with t-tests: about 30 s on 2 cores).

    Examples
    --------
    >>> import numpy as np, pandas as pd, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=200)
    >>> df = pd.DataFrame({"x": x, "x2": x**2 + 0.3 * rng.normal(size=200), "z": rng.normal(size=200)})
    >>> res = es.distance_correlation_matrix(df, pvalue="ttest")
    >>> res.dcor.round(2)
           x    x2     z
    x   1.00  0.52  0.10
    x2  0.52  1.00  0.12
    z   0.10  0.12  1.00
    >>> (res.adjusted < 0.01).to_numpy().astype(int)   # the diagonal is NaN (no test)
    array([[0, 1, 0],
           [1, 0, 0],
           [0, 0, 0]])
    """
    dask_backend, exponent, nt = _check_options(data, exponent, estimator, pvalue, adjust,
                                                n_resamples, alpha, n_threads, backend)
    need_u = estimator == "U" or pvalue == "ttest"
    X0, names, left_out = _table(data, columns, numeric_only, need_u)
    X = _working_units(X0, names)
    n, p = X.shape
    budget, block = _column_blocks(n, p, memory_budget)
    work = np.empty(n)
    if top is not None:
        build = functools.partial(_build_columns, X, exponent, estimator == "U", work)
        return _top_result(build, top, p, n, block, estimator, names, pvalue, dask_backend,
                           list(left_out))
    # the same Gram on Dask: its blocks as tasks
    make = _dep_dask.lazy_dcor_gram(X, float(exponent), block) if dask_backend else \
        functools.partial(_dcor_gram, X, exponent, block, work)
    RV = make(False) if estimator == "V" else None
    RU = make(True) if need_u else None
    out_dcor = _dcor_frame(RV, RU, estimator, names)
    if pvalue is None:
        return DistanceCorrelationMatrixResult(out_dcor, estimator=estimator, adjust=adjust,
                                               left_out=list(left_out))
    extra = {}
    if pvalue == "ttest":
        P = _ttest_pvalues(RU, n)
    else:
        P, extra = _permutation_pvalues(X0, exponent, n_resamples, alpha, adjust, rng, budget,
                                        1 if dask_backend and n_threads is None else nt,
                                        dask_backend)
    out_p, out_adj = _pvalue_frames(P, adjust, names)
    return DistanceCorrelationMatrixResult(out_dcor, out_p, out_adj, estimator, adjust, pvalue,
                                           **extra, left_out=list(left_out))


def _check_options(data, exponent, estimator, pvalue, adjust, n_resamples, alpha, n_threads,
                   backend):
    """The checked options of :func:`distance_correlation_matrix`: ``(dask, exponent, threads)``."""
    from .._core._metrics import _check_exponent
    from .._core._sequential import check_resamples

    _check_estimator(estimator)
    if pvalue not in (None, "ttest", "permutation"):
        raise ValueError(f"`pvalue` must be None, 'ttest' or 'permutation'; got {pvalue!r}.")
    dask_backend = _dask.use_dask(backend, True, (data,))
    if dask_backend and _dask.is_dask(data):
        raise TypeError("`data`: the matrix needs every row of every column in each task, so the "
                        "Dask backend takes the table in memory (a DataFrame or array; "
                        "`ddf.compute()` first) and spreads the column pairs over the workers.")
    if n_resamples is not None:
        check_resamples(n_resamples, 1)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    exponent = _check_exponent(exponent)  # was unchecked unless pvalue='permutation'
    nt = check_n_threads(n_threads)
    if adjust not in ADJUSTMENTS:
        raise ValueError(f"`adjust` must be 'holm', 'bh' or None; got {adjust!r}.")
    return dask_backend, exponent, nt


def _table(data, columns, numeric_only, need_u):
    """The checked (n, p) float64 table, its column names and the columns left out."""
    from .._core._input import sample_matrix

    X, _, cols, left_out = sample_matrix(data, columns=columns, numeric_only=numeric_only,
                                         name="data")
    n, p = X.shape
    names = cols if cols is not None else list(range(p))
    if p < 2:
        raise ValueError(f"need at least 2 columns; got {p}.")
    if need_u and n < 4:
        raise ValueError(f"the U-statistics need n >= 4 rows; got {n}.")
    return np.asarray(X, dtype=np.float64), names, left_out


def _working_units(X0, names):
    """The columns centred and scaled by a power of two each (constant columns refused)."""
    p = X0.shape[1]
    X = X0 - X0.mean(axis=0)
    # from the data: a constant column's centred values need not be 0 (its mean is rounded)
    const = [names[j] for j in range(p) if _constancy(X0[:, j:j + 1], False)]
    if const:
        raise ValueError(f"`data`: constant column(s) {const[:8]}: their distance correlations are "
                         "undefined (0/0); leave them out (`columns=`).")
    # working units per column (dCor is scale-free): a power of two, no overflow
    return np.ldexp(X, -np.frexp(np.max(np.abs(X), axis=0))[1])


def _column_blocks(n, p, memory_budget):
    """``(budget, block)``: the memory budget and the columns whose centred vectors it holds."""
    from .._core import _memory

    per_col = 8.0 * n * (n + 1) / 2
    budget = _permutation_budget(memory_budget)
    _check_column_budget(2 * per_col, budget, memory_budget, n, "centred distance vectors")
    block = int(max(1, min(p, budget // (2 * per_col))))
    _memory.check_fits(2 * block * per_col, "the columns' centred distance matrices",
                       "Lower `memory_budget`, or use fewer rows.")
    return budget, block


def _build_columns(X, exponent, u, work, j0, V):
    """Fill the rows of ``V`` with the centred distance vectors of columns ``j0, j0 + 1, …``."""
    for t in range(V.shape[0]):
        _dependence.centred_upper_1d(np.ascontiguousarray(X[:, j0 + t]), float(exponent), int(u),
                                     V[t], work)
    return V


def _dcor_gram(X, exponent, block, work, u):
    """The squared distance correlations of every pair of columns, by blocks of columns."""
    n, p = X.shape
    G = np.empty((p, p))
    Vi = np.empty((min(block, p), n * (n + 1) // 2))
    Vj = np.empty_like(Vi)
    for i0 in range(0, p, block):
        bi = min(block, p - i0)
        _build_columns(X, exponent, u, work, i0, Vi[:bi])
        G[i0:i0 + bi, i0:i0 + bi] = Vi[:bi] @ Vi[:bi].T
        for j0 in range(i0 + block, p, block):
            bj = min(block, p - j0)
            _build_columns(X, exponent, u, work, j0, Vj[:bj])
            Gij = Vi[:bi] @ Vj[:bj].T
            G[i0:i0 + bi, j0:j0 + bj] = Gij
            G[j0:j0 + bj, i0:i0 + bi] = Gij.T
    d = np.sqrt(np.clip(np.diag(G), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        R = G / np.outer(d, d)
    return R


def _dcor_frame(RV, RU, estimator, names):
    """The ``dcor`` DataFrame: the root of ``RV`` (V) or ``RU`` (U), 1 on the diagonal."""
    if estimator == "V":
        D = np.sqrt(np.clip(RV, 0.0, 1.0))
        np.fill_diagonal(D, 1.0)
    else:
        D = RU.copy()
        np.fill_diagonal(D, 1.0)
    return pd.DataFrame(D, index=names, columns=names)


def _ttest_pvalues(RU, n):
    """The p-values of the distance-correlation t-test of every pair (U-statistics ``RU``)."""
    from scipy import stats

    M = n * (n - 3) / 2
    r = np.clip(RU, -1.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        T = np.sqrt(M - 1) * r / np.sqrt(1 - r * r)
    return stats.t.sf(T, M - 1)


def _permutation_pvalues(X0, exponent, n_resamples, alpha, adjust, rng, budget, nt, dask_backend):
    """The permutation p-values of every pair (the same permutations) and the result's fields."""
    from .._core._validation import seeded_rng

    n, p = X0.shape
    m = p * (p - 1) // 2
    R = int(n_resamples) if n_resamples is not None else matrix_resamples(m, alpha)
    P = np.zeros((p, p))
    gen, seed = seeded_rng(rng)
    is_exact, total, perms = _permutation_plan(n, None, R, None, gen)
    every = perms(0, total)  # the same permutations for every pair
    _pairwise_permutation_pvalues(X0, exponent, every, is_exact, P, budget, nt, dask_backend)
    # after the computation: a call refused (memory) does not warn about its p-values first
    _warn_unreachable(m if adjust is not None else 1, total, is_exact, alpha, adjust)
    return P, dict(n_resamples=total, exact=is_exact, seed=None if is_exact else seed)


def _pvalue_frames(P, adjust, names):
    """The ``pvalues`` and ``adjusted`` DataFrames (NaN on the diagonal: no test)."""
    p = P.shape[0]
    np.fill_diagonal(P, np.nan)  # a column is not tested against itself
    iu, ju = np.triu_indices(p, 1)
    adj = np.full((p, p), np.nan)
    adj[iu, ju] = _adjust(P[iu, ju], adjust)
    adj[ju, iu] = adj[iu, ju]
    return pd.DataFrame(P, index=names, columns=names), pd.DataFrame(adj, index=names, columns=names)


def _top_result(build, top, p, n, block, estimator, names, pvalue, dask_backend, left_out):
    """The result of ``top=k``: the k strongest pairs (:mod:`._toppairs`), no p×p matrix."""
    from . import _toppairs

    m = p * (p - 1) // 2
    if isinstance(top, (bool, np.bool_)) or not isinstance(top, (int, np.integer)) or not 1 <= top <= m:
        raise ValueError(f"`top` must be an integer in [1, p(p-1)/2 = {m}]; got {top!r}.")
    if pvalue is not None:
        raise ValueError("`top` keeps the strongest pairs' distance correlations only; pass "
                         "pvalue=None (or test the pairs kept with independence_test).")
    if dask_backend:
        raise TypeError("`top` runs on the threads backend; leave `backend` out.")
    i, j, r = _toppairs.top_pairs(build, p, n * (n + 1) // 2, block, int(top))
    d = np.sqrt(np.clip(r, 0.0, 1.0)) if estimator == "V" else r
    pairs = pd.DataFrame({"x": [names[a] for a in i], "y": [names[b] for b in j], "dcor": d})
    return DistanceCorrelationMatrixResult(None, estimator=estimator, left_out=left_out,
                                           top_pairs=pairs)


def matrix_resamples(m, alpha=0.05):
    """The default permutations of :func:`distance_correlation_matrix` for m pairs: 999, or
    R + 1 = 5 m / alpha rounded up to a multiple of 1000, so that a pair whose permutations
    never reach its statistic (p = 1 / (R + 1)) has an adjusted p-value m / (R + 1) ≤ alpha / 5."""
    return max(999, int(math.ceil(5.0 * m / alpha / 1000.0)) * 1000 - 1)


def _warn_unreachable(m, total, is_exact, alpha, adjust):
    """Warn when no pair can reach ``alpha`` on its own: its p-value is at least 1 / (R + 1)
    (1 / n! when all n! permutations are enumerated), adjusted over m pairs m times that."""
    floor = m / (total if is_exact else total + 1)
    if floor > alpha:
        how = {"holm": "Holm's adjustment", "bh": "the Benjamini-Hochberg adjustment (unless other "
               "pairs are as small)", None: "no adjustment"}[adjust]
        warn(f"with {'all ' if is_exact else ''}{total} permutations and {how} over {m} pair(s), the smallest adjusted "
             f"p-value a pair can reach is {floor:.3g} > alpha = {alpha:g}: no pair can be "
             f"significant at alpha. Use n_resamples >= {matrix_resamples(m, alpha)} (or leave it "
             "out for that default).", UserWarning)


def _check_column_budget(need, budget, memory_budget, n, what):
    """The MemoryError of :func:`distance_correlation_matrix` when two columns' n×n data (the
    least it holds at once) exceed the budget (``budget``: ``memory_budget`` lowered to 80 % of
    the memory available)."""
    from .._core import _memory

    if need > budget:
        lowered = ("" if budget >= memory_budget else
                   f" (`memory_budget` = {_memory.format_bytes(memory_budget)} lowered to 80 % of "
                   "the memory available)")
        raise MemoryError(
            f"distance_correlation_matrix needs at least {_memory.format_bytes(need)} for two "
            f"columns' {what} (n = {n} rows; it grows as n²), more than the budget of "
            f"{_memory.format_bytes(budget)}{lowered}. Raise `memory_budget` to at least "
            f"{_memory.format_bytes(need)} (within the memory available), or use a random "
            "subsample of the rows.")


def _pairwise_permutation_pvalues(X, exponent, perms, is_exact, P, budget, nt, dask=False):
    """``P[a, b] = P[b, a]`` = the permutation p-value of columns a < b (y = column b permuted),
    as :func:`independence_test` computes it, by blocks of columns: the columns' double-centred
    matrices are held two blocks at a time (within ``budget``).  ``dask``: the pairs of blocks
    are Dask tasks (blocks also small enough to spread the work: about
    :data:`PAIRS_TASK_WORK` pair-permutations a task); a pair's p-value is the same bits."""
    from .._core import _memory

    n, p = X.shape
    per_col = 8.0 * n * n
    _check_column_budget(2 * per_col, budget, budget, n, "double-centred distance matrices")
    block = int(max(1, min(p, budget // (2 * per_col))))
    _memory.check_fits(2 * block * per_col, "the columns' centred distance matrices",
                       "Lower `memory_budget`, use fewer rows, or pvalue='ttest'.")
    if dask:
        work = perms.shape[0] * n * n / 2.0
        block = int(max(1, min(block, math.isqrt(int(max(1.0, PAIRS_TASK_WORK // max(1.0, work)))))))
    spans = [(i0, min(p, i0 + block), j0, min(p, j0 + block))
             for i0 in range(0, p, block) for j0 in range(i0, p, block)]
    if dask:
        import dask as _dk

        Xd, perms_d = _dk.delayed(X, pure=True), _dk.delayed(perms, pure=True)
        task = _dk.delayed(_pair_pvalues, pure=True)
        blocks = _dask.dask_compute(*[task(Xd, exponent, perms_d, is_exact, nt, *sp)
                                      for sp in spans])
    else:
        from .._core import _progress

        # the command line's progress (its ambient setting): every pair's permutations
        bar = _progress.progress_bar(p * (p - 1) // 2 * perms.shape[0], False, "pair permutations",
                                     "perm", nested=True)
        try:
            blocks = [_pair_pvalues(X, exponent, perms, is_exact, nt, *sp) for sp in spans]
        finally:
            if bar is not None:
                bar.close()
    for (i0, i1, j0, j1), Pb in zip(spans, blocks):
        for a in range(i0, i1):
            for b in range(max(a + 1, j0), j1):
                P[a, b] = P[b, a] = Pb[a - i0, b - j0]


#: pair-permutations of one Dask task of the permutation p-values of the dCor matrix
#: (0.2-0.3 ns each: a few seconds a task)
PAIRS_TASK_WORK = 1e10


def _pair_pvalues(X, exponent, perms, is_exact, nt, i0, i1, j0, j1):
    """The permutation p-values of the pairs a < b of columns a in [i0, i1), b in [j0, j1)
    (NaN elsewhere in the block)."""
    met = resolve_metric("energy", exponent, 1.0)
    total = perms.shape[0]

    def mats(j0, j1):
        return [_centred_matrix(np.ascontiguousarray(X[:, j:j + 1]), met, nt)[0] for j in range(j0, j1)]

    Ai = mats(i0, i1)
    Aj = Ai if (i0, i1) == (j0, j1) else mats(j0, j1)
    out = np.full((i1 - i0, j1 - j0), np.nan)
    for a, A in enumerate(Ai, i0):
        for b, B in enumerate(Aj, j0):
            if b > a:
                out[a - i0, b - j0] = _permutation_pvalue(
                    _MatrixProducts(A, B, nt), lambda r0, m: perms[r0:r0 + m], total, is_exact)[2]
    return out
