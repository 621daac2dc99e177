"""Tests of independence: the distance covariance permutation test
(:func:`independence_test`) and the t-test of distance correlation
(:func:`distance_correlation_ttest`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from . import _dask as _dep_dask
from .._core import _asymptotic, _dask, _dask_pair_sums, _sequential, _serial
from .._core._input import paired_variables, strata_labels
from .._core._metrics import resolve_metric
from .._core._validation import as_square_matrix, check_exact, check_n_threads, warn
from .._core._projections import DEFAULT_PROJECTIONS
from ._projection import check_projection_options, projection_test
from ._products import _permutation_budget, _permutation_plan, _permutation_pvalue, _products
from ._result import DistanceStatsResult, _check_constant, _finish
from .statistics import _stats

__all__ = ["independence_test", "IndependenceTestResult", "distance_correlation_ttest",
           "DistanceCorrelationTTestResult"]


# -- permutation test of independence ---------------------------------------------

@notebook_display
@dataclass(frozen=True)
class IndependenceTestResult:
    r"""Result of :func:`independence_test`.

    Attributes
    ----------
    statistic : float
        :math:`n\mathcal{V}^2_n(x, y)` (``statistic_name='dcov'``, R
        ``dcov.test``), :math:`\mathcal{R}^2_n(x, y)` (``'dcor'``, R
        ``dcor.test``) or, for the χ² test, :math:`nR^*_n` with :math:`R^*_n`
        the bias-corrected distance correlation (``'bcdcor'``).
    pvalue : float or None
        Permutation p-value; None with ``n_resamples=0``.
    null_distribution : ndarray, shape (n_resamples,)
        The statistic with the rows of ``y`` permuted.
    statistic_name : str
    n_resamples : int
    exact : bool
        True when all n! permutations were enumerated.
    estimates : DistanceStatsResult or None
        dCov, dCor and the distance variances (V and U) of the data; None
        with ``method='projection'`` (they are O(n²) to compute).
    pvalue_se : float or None
        Monte Carlo standard error of ``pvalue`` (0 when exact).
    seed : int or None
    columns_x, columns_y : list or None
    strata : list or None
        Strata within which ``y`` was permuted.
    pvalue_method : str
        'full', 'sequential', 'decision', 'asymptotic' (the χ² test, no
        permutations) or 'gamma' (``method='projection'``); with 'sequential' and 'decision' ``n_resamples``
        counts the permutations used before the stop, and ``pvalue_se`` is
        None except for 'full'.
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    perm_blocks : ndarray of shape (n, k) or None
        The block labels that restricted the permutations (``perm_blocks=``).
    n_projections : int or None
        With ``method='projection'``: the number K of pairs of random
        directions (1 when x and y are both one-dimensional: the exact test).
    gamma_parameters : tuple or None
        With ``method='projection', pvalue_method='gamma'``: the (shape,
        scale) of the gamma distribution that gave the p-value.
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    statistic_name: str
    n_resamples: int
    exact: bool
    estimates: DistanceStatsResult = field(repr=False)
    pvalue_se: float | None = None
    seed: int | None = None
    columns_x: list | None = None
    columns_y: list | None = None
    strata: list | None = None
    pvalue_method: str = "full"
    decision: str | None = None
    perm_blocks: np.ndarray | None = field(default=None, repr=False)
    n_projections: int | None = None
    gamma_parameters: tuple | None = None

    def to_frame(self):
        """One row: statistic, p-value and its Monte Carlo error, dCov, dCor (V and U), n."""
        e = self.estimates
        row = {"statistic": [self.statistic], "pvalue": [self.pvalue], "pvalue_se": [self.pvalue_se],
               "n_resamples": [self.n_resamples]}
        if e is None:   # method='projection'
            row.update(n_projections=[self.n_projections], pvalue_method=[self.pvalue_method])
        else:
            row.update(dcov=[e.dcov], dcor=[e.dcor], dcov_u=[e.dcov_u], dcor_u=[e.dcor_u],
                       n_samples=[e.n_samples])
        return pd.DataFrame(row, index=pd.Index([f"independence ({self.statistic_name})"], name="test"))

    def __repr__(self):
        p = "None" if self.pvalue is None else f"{self.pvalue:.4g}"
        seq = "" if self.pvalue_method == "full" else f", pvalue_method={self.pvalue_method!r}"
        if self.pvalue_method == "decision":
            seq += f", decision={self.decision!r}"
        return (f"IndependenceTestResult(statistic={self.statistic:.6g}, pvalue={p}, "
                f"statistic_name={self.statistic_name!r}, n_resamples={self.n_resamples}, "
                f"exact={self.exact}, " + (f"n_projections={self.n_projections}"
                                           if self.estimates is None else
                                           f"dcor={self.estimates.dcor:.6g}") + f"{seq})")


def independence_test(x, y=None, *, data=None, statistic=None, n_resamples=999, exponent=1.0,
                      metric="energy", sigma=1.0, check_negative_type=True, rng=None, exact=None,
                      strata=None, perm_blocks=None,
                      memory_budget=2**30, n_threads=None, backend=None, compute=True,
                      pvalue_method="full", sequential_h=10, alpha=0.05, affine=False,
                      method="auto", n_projections=DEFAULT_PROJECTIONS):
    r"""Permutation test of independence of x and y by distance covariance.

    Parameters
    ----------
    x, y, data, exponent, metric, sigma, n_threads, check_negative_type
        As in :func:`distance_stats`.
    statistic : {'dcov', 'dcor', 'bcdcor'}, optional
        :math:`n\mathcal{V}^2_n` (R ``dcov.test``, the default of the
        permutation p-values) or :math:`\mathcal{R}^2_n` (R ``dcor.test``);
        the two give the same p-value (the distance variances do not change
        under permutation).  'bcdcor', :math:`nR^*_n` with :math:`R^*_n` the
        bias-corrected distance correlation (the U-statistic form, from the
        U-centred matrices), is the statistic of ``pvalue_method='asymptotic'``
        (and its default); with permutations it is hyppo's
        ``Dcorr(bias=False).test(x, y, auto=False)`` (whose statistic is
        :math:`R^*_n` = this statistic / n): the U-centred matrix of y
        permuted with y's rows, the same statistic recomputed (the two
        matrices held in memory, within ``memory_budget``; not on the Dask
        backend).  Its p-value differs from the V-statistic's: the
        U-centring removes the diagonal terms that the V-statistic's
        permutations keep.
    n_resamples : int, default 999
        Random permutations R of the rows of ``y``; 0 gives the estimates only.
    rng : None, int or numpy.random.Generator
        Source of the permutations (seed recorded in the result); the Dask
        backend copies a Generator into its graph and does not advance it.
    exact : bool or None
        None: enumerate all n! permutations when there are at most
        ``n_resamples`` of them; True: always (n ≤ 9); False: never.
    strata : array_like of shape (n,), optional
        Permute ``y`` only within strata (blocked designs).  A Series is
        aligned with DataFrame/Series ``x`` and ``y`` by index (as in
        :func:`energystats.energy_test`); arrays and lists are positional.
    perm_blocks : array_like of int, shape (n,) or (n, k), optional
        Restricted permutations with blocks exchangeable as wholes (hyppo's
        ``perm_blocks``): column 0 splits the rows into blocks by label,
        each further column splits every block again; at each split the
        blocks with a non-negative label are permuted as wholes among
        themselves (row j of one onto row j of the other, rows in order of
        position), blocks with a negative label stay in place, and the rows
        of each final block are permuted among themselves.  Exchangeable
        blocks must have the same shape.  E.g. ``[0, 0, 1, 1, 2, 2]``:
        three pairs moved as wholes (and each pair's rows swapped or not);
        add a column ``[-1, -2] * 3`` to keep each pair's order.  A column
        of negative labels is ``strata`` (permutations within blocks only),
        so the two options are exclusive.  Aligned by index as ``strata``;
        not with ``backend='dask'`` or ``pvalue_method='asymptotic'``.
    memory_budget : float, default 1 GiB
        Bytes the two double-centred n×n matrices may take (16 n²; lowered
        to 80 % of the memory available).  Beyond it (n above about 8 000 by
        default) each permutation recomputes the distances from the data —
        no n×n matrix, R n² (d_x + d_y) work.
    n_threads : int, optional
        Threads of the compiled kernels (with the Dask backend: per task, default 1).
    backend : {None, 'threads', 'dask'}, default None
        'dask': the statistic's passes and each batch of permutations as Dask
        tasks (each holds x, y and the batch), with the streamed kernel; the
        permutations are drawn from ``rng`` as on threads, so the p-value
        and the null distribution are those of the threads backend's
        streamed kernel, bit for bit.  None: 'dask' for Dask input.
    compute : bool, default True
        With the Dask backend, ``False`` returns a
        :class:`dask.delayed.Delayed` of the result.
    pvalue_method : {'full', 'sequential', 'decision', 'asymptotic', 'gamma'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop permuting early: as in :func:`energystats.energy_test` (Besag &
        Clifford's sequential p-value, or Gandy's decision whether p ≤
        ``alpha``); random permutations only, not on the Dask backend.
        'asymptotic': no permutations, the χ² test of distance correlation
        (see Notes); opt-in, its level measured (the validity table is on
        the guide's testing page), not with ``strata`` or ``exact=True``;
        available on the Dask backend.
    affine : bool, default False
        True: test with the affinely invariant distance correlation
        (:func:`distance_correlation` with ``affine=True``): each sample is
        whitened by its sample covariance once, and ``y``'s rows are permuted
        as usual (a permutation leaves y's covariance unchanged, so this is a
        permutation test of independence of exact level, as the plain one).
        ``metric='energy'``, in-memory data only.
    method : {'auto', 'projection'}, default 'auto'
        'auto': the test of :math:`n\mathcal{V}^2_n` over every pair of rows.
        'projection' (large n; Huang and Huo 2017): a different statistic,
        :math:`c_p c_q` times the mean over ``n_projections`` pairs of random
        directions (u, v) of the one-dimensional :math:`n\mathcal{V}^2_n(u'x,
        v'y)` — an estimate of :math:`n\mathcal{V}^2_n(x, y)` without bias
        given the data, O(K n log n) instead of O(n²).  Its p-value:
        ``pvalue_method='full'`` (the default) is a permutation test
        conditional on the directions — exact level, (R + 1)·K
        one-dimensional sums; 'gamma' is a gamma approximation of that
        permutation distribution, (3K − 2) sums whatever ``n_resamples`` —
        fast but approximate: liberal on skewed, heavy-tailed data (see
        Notes).  ``metric='energy'`` with ``exponent=1`` only; not with
        ``strata``, ``perm_blocks``, ``exact=True``, the Dask backend or
        ``statistic`` other than 'dcov'.  No ``estimates`` (None).
    n_projections : int, default 100
        ``method='projection'``: the number K of pairs of directions (x and
        y both one-dimensional: K = 1, the exact statistic).

    Returns
    -------
    IndependenceTestResult

    Notes
    -----
    The null hypothesis is that x and y are independent (with ``strata``:
    independent within every stratum, the rows exchangeable within strata;
    with ``perm_blocks``: the rows of y exchangeable under the allowed
    permutations, e.g. repeated measures of a subject kept together).
    The p-value is :math:`(1 + \#\{T^* \ge T\}) / (R + 1)` over R
    permutations, as in the package's other tests, with exact ties counted
    (the allowance is the rounding error of :math:`\sum A_{ij}B_{ij}`, 64 eps
    times :math:`\sqrt{\sum A^2 \sum B^2}`).  R's ``dcov.test`` counts ties
    too (``>=``; on x = y = (0, 0, 0, 1, 1, 1), ``set.seed(1)``, R = 999 it gives
    p = 0.085, as the conventions page records).  The test is consistent
    against every alternative with finite first moments (0 < exponent < 2).
    The double-centred n×n matrices of x and y are held in memory (16 n²
    bytes, within ``memory_budget``), and each permutation costs one compiled
    pass over the upper triangle, four permutations sharing each row of x's
    matrix; for n ≥ 640 a batch's (row, permutation) pairs are grouped by
    the block of y's rows they read, so that each block is fetched from
    memory once for many permutations.  Larger n is streamed (see
    ``memory_budget``).  Either way a permutation's sum is formed by one
    thread in a fixed order: the same null distribution for any number of
    threads and any batching.

    The χ² test (``pvalue_method='asymptotic'``, Shen, Panda and Vogelstein
    2022): under independence :math:`nR^*_n` converges to a weighted sum
    :math:`\sum_k w_k (Z_k^2 - 1)`, :math:`\sum_k w_k = 1`, whose upper tail
    the centred :math:`\chi^2_1 - 1` dominates, so
    :math:`p = P(\chi^2_1 \ge nR^*_n + 1)` (conservative when the weights
    are spread, as for multivariate data; about exact for one-dimensional
    Gaussian data).  It costs one pass over the pairs (O(n log n) for 1-D
    data with exponent 1) instead of R + 1.  The p-value equals hyppo's
    ``Dcorr().test(x, y, auto=True)`` (for n > 20), whose statistic is
    :math:`R^*_n` itself.

    Projections (``method='projection'``): for u uniform on the unit sphere
    of :math:`R^p`, :math:`E_u|u'z| = \|z\| / c_p` with
    :math:`c_p = \sqrt{\pi}\,\Gamma((p+1)/2) / \Gamma(p/2)` (Baringhaus and
    Franz 2004), so :math:`\mathcal{V}^2_n(x, y) = c_p c_q E_{u,v}
    \mathcal{V}^2_n(u'x, v'y)` (Huang and Huo 2017).  Each one-dimensional
    statistic takes O(n log n) (Huo and Székely 2016).  The directions are
    drawn from ``rng`` first (x's K, then y's K), then one seed per
    permutation.  The gamma p-value matches the permutation distribution's
    mean exactly (:math:`\operatorname{tr}A\,\operatorname{tr}B / (n-1)` per
    pair of directions, A and B the double-centred distance matrices) and its
    large-n variance (the off-diagonal covariances between pairs of
    directions estimated from consecutive pairs).  Its level was measured
    (300 independent data sets a cell, ``benchmarks/projection_independence.py``,
    the guide's dependence page): at the exact test's rate on the same
    normal data sets at n = 500 and 5 000, but liberal on skewed,
    heavy-tailed data (t(3) against lognormal coordinates at n = 5 000:
    0.103, the exact test 0.057); the gamma p-value therefore warns
    (:class:`AntiConservativeWarning`) when the projections of x or y have a
    mean excess kurtosis above 1.  Use the projections when n is beyond
    what the exact test's O(n²) per permutation allows (above a few times
    10⁴ rows); below that the exact test is both faster and more powerful.

    References
    ----------
    .. [1] Székely, G. J., Rizzo, M. L. and Bakirov, N. K. (2007). Measuring
       and testing dependence by correlation of distances. Ann. Statist.
       35(6), 2769–2794.
    .. [2] Shen, C., Panda, S. and Vogelstein, J. T. (2022). The chi-square
       test of distance correlation. J. Comput. Graph. Statist. 31(1),
       254–262.
    .. [3] Huang, C. and Huo, X. (2017). A statistically and numerically
       efficient independence test based on random projections and distance
       covariance. arXiv:1701.06054.
    .. [4] Baringhaus, L. and Franz, C. (2004). On a new multivariate
       two-sample test. J. Multivariate Anal. 88(1), 190–206.
    .. [5] Huo, X. and Székely, G. J. (2016). Fast computing for distance
       covariance. Technometrics 58(4), 435–447.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=100)
    >>> y = x**2 + 0.5 * rng.normal(size=100)     # dependent, uncorrelated
    >>> round(float(np.corrcoef(x, y)[0, 1]), 2)
    0.16
    >>> es.independence_test(x, y, rng=1).pvalue
    0.001
    >>> res = es.independence_test(x, y, method="projection", rng=1)
    >>> res.n_projections, res.pvalue_method, bool(res.pvalue < 0.01)
    (1, 'full', True)
    """
    from .._core._permutation import Strata, permutation_blocks, pvalue_se
    from .._core._validation import seeded_rng

    if statistic not in (None, "dcov", "dcor", "bcdcor"):
        raise ValueError(f"`statistic` must be 'dcov', 'dcor' or 'bcdcor'; got {statistic!r}.")
    if affine:
        from .statistics import _affine_pair

        x, y = _affine_pair(x, y, data, metric, None, backend, compute)
        data = None
    exact = check_exact(exact)
    if not (isinstance(method, str) and method in ("auto", "projection")):
        raise ValueError(f"`method` must be 'auto' (every pair) or 'projection' (random "
                         f"projections, large n); got {method!r}.")
    if method == "projection":
        return _projected(x, y, data, statistic, n_resamples, exponent, metric, sigma,
                          check_negative_type, rng, exact, strata, perm_blocks, memory_budget,
                          n_threads, backend, compute, pvalue_method, n_projections)
    if pvalue_method == _asymptotic.ASYMPTOTIC:
        if statistic not in (None, "bcdcor"):
            raise ValueError(f"`statistic={statistic!r}`: the χ² test (pvalue_method='asymptotic') "
                             "is a test of the bias-corrected distance correlation; pass "
                             "statistic='bcdcor' or leave it out.")
        _asymptotic.check_options("independence_test", exact, strata)
        if perm_blocks is not None:
            raise ValueError("`perm_blocks` restricts the permutations; the χ² test "
                             "(pvalue_method='asymptotic') has none. Leave one of them out.")
        est = _stats(x, y, data, exponent, metric, sigma, n_threads,
                     check_negative_type=check_negative_type, need_u=True, backend=backend,
                     compute=compute)
        return _finish(est, _chi2_result, compute)
    statistic = "dcov" if statistic is None else statistic
    u_stat = statistic == "bcdcor"
    R = _sequential.check_resamples(n_resamples)
    gen, seed = seeded_rng(rng)
    dask = _dask.use_dask(backend, compute, (x, y, strata))
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha, exact=exact, dask=dask,
                                 also=(_asymptotic.ASYMPTOTIC,))
    if strata is not None and perm_blocks is not None:
        raise ValueError("`strata` and `perm_blocks` are exclusive: strata are perm_blocks with "
                         "one column of negative labels (blocks kept in place, rows permuted "
                         "within each); pass only `perm_blocks`.")
    if dask and perm_blocks is not None:
        raise TypeError("`perm_blocks` is not available with backend='dask'; use the threads "
                        "backend (in-memory data).")
    if dask and u_stat:
        raise TypeError("the permutation test of `statistic='bcdcor'` holds the U-centred matrices "
                        "in memory: not available with backend='dask'.")
    if dask:
        return _independence_dask(x, y, data, statistic, R, exponent, metric, sigma, gen, seed, exact,
                                  strata, n_threads, memory_budget, compute,
                                  check_negative_type=check_negative_type)
    est = _stats(x, y, data, exponent, metric, sigma, n_threads,
                 check_negative_type=check_negative_type, need_u=u_stat)
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    nt = check_n_threads(n_threads)
    index = None
    if met.kind == "precomputed":
        X, Y = as_square_matrix(x, "x"), as_square_matrix(y, "y")
    else:
        X, Y, _, _, index = paired_variables(x, y, data, with_index=True)
    n = X.shape[0]
    st = None
    if strata is not None:
        lab = strata_labels(strata, index, n)
        st = Strata(lab.codes)
    blocks = levels = None
    if perm_blocks is not None:
        blocks, levels = permutation_blocks(perm_blocks, index, n)
    elif strata is None:      # rows grouped by stratum are ordered by design: no check
        _warn_serial(X, Y, index, met)
    _check_constant(est, "test of independence")
    kernel, sx, sy = _products(X, Y, met, nt, _permutation_budget(memory_budget),
                               centring="u" if u_stat else "double")
    if blocks is None:
        is_exact, total, perms = _permutation_plan(n, st, R, False if rule is not None else exact, gen)
    else:
        is_exact, total, perms = _block_plan(blocks, R, False if rule is not None else exact, gen)
    # report the statistic in the data's units
    stat_out = {"dcov": est.test_statistic, "dcor": est.dcor_sqr, "bcdcor": n * est.dcor_u}[statistic]
    if R == 0 and not is_exact:
        return IndependenceTestResult(stat_out, None, np.empty(0), statistic, 0, False, est,
                                      None, None, est.columns_x, est.columns_y,
                                      None if st is None else list(lab.groups),
                                      perm_blocks=levels)
    _, null, p = _permutation_pvalue(kernel, perms, total, is_exact, rule)
    if statistic == "dcov":  # n V² is of degree one in each variable's rho; dCor is scale-free
        null = sy.apply(sx.apply(null / n))
    else:  # Σ A B / √(Σ A² Σ B²): R²_n from the double-centred matrices, R*_n from the U-centred
        null = null / math.sqrt(kernel.norms[0] * kernel.norms[1]) * (n if u_stat else 1)
    used = int(null.shape[0])
    return IndependenceTestResult(stat_out, p, null, statistic, used, bool(is_exact), est,
                                  None if rule is not None else pvalue_se(p, used, is_exact),
                                  None if is_exact else seed,
                                  est.columns_x, est.columns_y,
                                  None if st is None else list(lab.groups),
                                  "full" if rule is None else rule.name,
                                  None if rule is None else rule.decision, levels)


def _projected(x, y, data, statistic, n_resamples, exponent, metric, sigma, check_negative_type,
               rng, exact, strata, perm_blocks, memory_budget, n_threads, backend, compute,
               pvalue_method, n_projections):
    """:func:`independence_test` with ``method='projection'`` (:mod:`._projection`)."""
    from types import SimpleNamespace

    from .._core._pair_sums import _constancy
    from .._core._permutation import pvalue_se
    from .._core._validation import seeded_rng

    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    check_projection_options(n_projections, met, statistic, pvalue_method, exact, strata,
                             perm_blocks, _dask.use_dask(backend, compute, (x, y)))
    R = _sequential.check_resamples(n_resamples)
    if pvalue_method == "full" and R == 0:
        raise ValueError("`n_resamples=0` leaves the projection test without a p-value; pass "
                         "n_resamples > 0 or pvalue_method='gamma'.")
    gen, seed = seeded_rng(rng)
    nt = check_n_threads(n_threads)
    X, Y, cx, cy, index = paired_variables(x, y, data, with_index=True)
    if X.shape[0] < 4:
        raise ValueError(f"the projection test needs at least 4 paired samples; got {X.shape[0]}.")
    _check_constant(SimpleNamespace(_constant=(_constancy(X, False), _constancy(Y, False)),
                                    metric=met.name), "test of independence")
    _warn_serial(X, Y, index, met)
    out = projection_test(X, Y, gen, R, n_projections, pvalue_method, nt,
                          _permutation_budget(memory_budget))
    full = pvalue_method == "full"
    return IndependenceTestResult(out.statistic, out.pvalue, out.null, "dcov", out.n_resamples,
                                  False, None, pvalue_se(out.pvalue, out.n_resamples, False)
                                  if full else None, seed, cx, cy, None, pvalue_method,
                                  n_projections=out.n_projections, gamma_parameters=out.gamma)


def _warn_serial(X, Y, index, met):
    """A SeriesDependenceWarning when both variables are serially dependent in row order (the
    rows of a time series; :mod:`energystats._core._serial`)."""
    if met.kind == "precomputed":
        return
    note = _serial.serial_dependence_note(X, Y, index)
    if note is not None:
        warn(f"`independence_test`: {note}", _serial.SeriesDependenceWarning)


def _block_plan(blocks, R, exact, gen):
    """``(is_exact, total, perms)`` of :func:`_permutation_plan` for the permutations allowed by
    ``blocks`` (:class:`~energystats._core._permutation.PermutationBlocks`)."""
    if exact is None:
        is_exact = R > 0 and blocks.count(R) <= R
    elif exact:
        if blocks.count(10**6) > 10**6:
            raise ValueError("`exact=True`: `perm_blocks` allows more than 10**6 permutations; use "
                             "random ones.")
        is_exact = True
    else:
        is_exact = False
    if is_exact:
        every = blocks.enumerate()
        return True, every.shape[0], lambda r0, m: every[r0:r0 + m]
    return False, R, lambda r0, m: blocks.draw(gen, m)


def _chi2_result(est):
    """The χ² test of distance correlation from the estimates (:mod:`energystats._core._asymptotic`)."""
    _check_constant(est, "χ² test of independence")
    n = est.n_samples
    return IndependenceTestResult(n * est.dcor_u, _asymptotic.chi2_dcor_pvalue(n, est.dcor_u),
                                  np.empty(0), "bcdcor", 0, False, est, None, None, est.columns_x,
                                  est.columns_y, None, _asymptotic.ASYMPTOTIC, None)


def _independence_dask(x, y, data, statistic, R, exponent, metric, sigma, gen, seed, exact, strata,
                       n_threads, memory_budget, compute, check_negative_type=True):
    """:func:`independence_test` on the Dask backend (the streamed kernels as tasks)."""
    from .._core._permutation import Strata

    if memory_budget != 2**30:
        raise ValueError("`memory_budget` bounds the threads backend's working memory; with "
                         "backend='dask' each task holds x, y and a batch of permutations, so leave "
                         "it at its default.")
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    est = _stats(x, y, data, exponent, metric, sigma, n_threads,
                 check_negative_type=check_negative_type, backend="dask")  # validates
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    index = None
    if not _dask.is_dask(x) and not _dask.is_dask(y):
        # in memory: the threads input layer (names, indexes)
        x, y, _, _, index = paired_variables(x, y, data, with_index=True)
    X, Y = _dask.as_dask_data(x, "x"), _dask.as_dask_data(y, "y")
    n = X.n
    st = lab = None
    if strata is not None:
        if _dask.is_dask(strata):
            strata = _dask.dask_compute(strata)[0]
        lab = strata_labels(strata, index, n)
        st = Strata(lab.codes)
    is_exact, total, perms = _permutation_plan(n, st, R, exact, gen)
    VU, sx, sy, prep, terms = _dask_pair_sums.lazy_dependence_sums(X, Y, met, nt, parts=True)
    obs = null = None
    if is_exact or R > 0:
        obs, null = _dep_dask.lazy_permuted_sums(prep, terms, n, X.d + Y.d, R=R, gen=gen, strata=st,
                                                exact_perms=perms(0, total) if is_exact else None,
                                                n_threads=nt)
    return _dask.finish(_independence_finish, est, obs, null, VU, sx, sy, statistic, n, total,
                           is_exact, seed, None if lab is None else list(lab.groups), compute=compute)


def _independence_finish(est, obs, null, VU, sx, sy, statistic, n, total, is_exact, seed, strata_groups):
    from .._core._permutation import pvalue_from_null, pvalue_se

    _check_constant(est, "test of independence")
    stat_out = est.test_statistic if statistic == "dcov" else est.dcor_sqr
    if null is None:
        return IndependenceTestResult(stat_out, None, np.empty(0), statistic, 0, False, est, None, None,
                                      est.columns_x, est.columns_y, strata_groups)
    V = VU[0]
    norms = (V[1], V[2])
    tol = 64 * np.finfo(float).eps * math.sqrt(norms[0] * norms[1])
    p = float(pvalue_from_null(obs[0], null, is_exact, tol=tol))
    if statistic == "dcov":
        null = sy.apply(sx.apply(null / n))
    else:
        null = null / math.sqrt(norms[0] * norms[1])
    return IndependenceTestResult(stat_out, p, null, statistic, total, bool(is_exact), est,
                                  pvalue_se(p, total, is_exact), None if is_exact else seed,
                                  est.columns_x, est.columns_y, strata_groups)


@notebook_display
@dataclass(frozen=True)
class DistanceCorrelationTTestResult:
    r"""Result of :func:`distance_correlation_ttest`.

    Attributes
    ----------
    statistic : float
        :math:`T = \sqrt{M - 1}\, R^*_n / \sqrt{1 - (R^*_n)^2}`, :math:`M = n(n-3)/2`.
    pvalue : float
        :math:`P(t_{M-1} \ge T)` (one-sided, as R ``dcorT.test``).
    df : int
        :math:`M - 1`.
    estimate : float
        The bias-corrected distance correlation :math:`R^*_n` (R ``bcdcor``).
    estimates : DistanceStatsResult
    """

    statistic: float
    pvalue: float
    df: int
    estimate: float
    estimates: DistanceStatsResult = field(repr=False)

    def to_frame(self):
        """One row: statistic, df, p-value, bias-corrected dCor, n."""
        return pd.DataFrame({"statistic": [self.statistic], "df": [self.df], "pvalue": [self.pvalue],
                             "dcor_u": [self.estimate], "n_samples": [self.estimates.n_samples]},
                            index=pd.Index(["dcor t-test"], name="test"))


def distance_correlation_ttest(x, y=None, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                               check_negative_type=True,
                               n_threads=None, backend=None, compute=True):
    r"""t-test of independence by the bias-corrected distance correlation (high dimension).

    Parameters as in :func:`distance_stats`.

    Notes
    -----
    With :math:`R^*_n` the bias-corrected distance correlation and
    :math:`M = n(n-3)/2`, :math:`T = \sqrt{M-1}\,R^*_n/\sqrt{1-(R^*_n)^2}`
    is approximately Student t with :math:`M - 1` degrees of freedom under
    independence when the dimensions of x and y are large (Székely and
    Rizzo 2013); the p-value is the upper tail (R ``energy``'s
    ``dcorT.test``).  For low-dimensional data use
    :func:`independence_test`, whose level holds for any dimension.

    References
    ----------
    .. [1] Székely, G. J. and Rizzo, M. L. (2013). The distance correlation
       t-test of independence in high dimension. J. Multivariate Anal. 117,
       193–213.

    Examples
    --------
    >>> import energystats as es
    >>> from energystats.datasets import load_iris
    >>> iris = load_iris()
    >>> res = es.distance_correlation_ttest(iris.iloc[:50, :4].to_numpy(), iris.iloc[50:100, :4].to_numpy())
    >>> round(res.statistic, 6), res.df, round(res.pvalue, 6)
    (-0.931319, 1174, 0.82406)
    """
    est = _stats(x, y, data, exponent, metric, sigma, n_threads,
                 check_negative_type=check_negative_type, need_u=True, backend=backend,
                 compute=compute)
    return _finish(est, _ttest, compute)


def _ttest(est):
    from scipy import stats

    _check_constant(est, "distance correlation t-test")
    n = est.n_samples
    M = n * (n - 3) / 2
    r = est.dcor_u
    T = math.sqrt(M - 1) * r / math.sqrt(1 - r * r) if abs(r) < 1 else math.copysign(math.inf, r)
    p = float(stats.t.sf(T, M - 1))
    return DistanceCorrelationTTestResult(float(T), p, int(M - 1), r, est)
