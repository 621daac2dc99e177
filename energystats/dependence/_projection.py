r"""The distance covariance test on random projections (``independence_test(method='projection')``).

Huang and Huo (2017): for u, v uniform on the unit spheres of R^p and R^q,
dCov²_n(x, y) = c_p c_q E_{u,v} dCov²_n(u'x, v'y) (Baringhaus and Franz 2004's identity in each
variable; V and U forms alike).  The statistic is c_p c_q times the mean over K pairs of random
directions of the one-dimensional n·dCov²_n — each O(n log n) by sorting (Huo and Székely 2016)
against the O(n²(p + q)) of the pairwise sums — an estimate of n·dCov²_n(x, y) without bias
given the data.

Two calibrations, both conditional on the directions (drawn first from ``rng``):

* ``'full'``: a permutation test — the same K directions for the observed pairing and every
  permutation of y's rows, so the level is exact whatever K.  (R + 1)·K one-dimensional sums.
* ``'gamma'``: the gamma distribution with the permutation distribution's mean and its
  large-n variance, (3K − 2) one-dimensional sums whatever R.  For one pair of directions the
  permutation mean of Σ A_ij B_π(i)π(j) is tr A tr B / (n − 1) exactly (double-centred
  matrices); under independence n·dCov²_n of two pairs k, l has covariance
  2 dCov²(u_k'x, u_l'x) dCov²(v_k'y, v_l'y) in the limit (the degenerate V-statistic's
  Σλ_j Z_j²).  The K diagonal terms are computed; the K(K − 1) others are K(K − 1) times the
  product of the means of dCov²(u_{k−1}'x, u_k'x) and dCov²(v_{k−1}'y, v_k'y) over the K − 1
  consecutive pairs (u and v are drawn independently, so the mean of the products is the
  product of the means).  Its level is measured, not exact (``benchmarks/projection_tests.py``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._core import _engine, _progress
from .._core._pair_sums import SortedSide, sorted_cross
from .._core._projections import check_n_projections, directions, sphere_constant

__all__ = ["check_projection_options", "projection_test", "PROJECTION_PVALUES"]

#: the calibrations of the projection test
PROJECTION_PVALUES = ("full", "gamma")


def check_projection_options(n_projections, met, statistic, pvalue_method, exact, strata,
                             perm_blocks, dask):
    """The options ``method='projection'`` takes (each refusal names the argument)."""
    check_n_projections(n_projections)
    if met.kind != "builtin" or met.name != "energy" or float(met.param) != 1.0:
        raise ValueError("`method='projection'` needs metric='energy' with exponent=1 (the "
                         "identity of Baringhaus and Franz and the sorted one-dimensional sums "
                         "hold for ρ = ‖x − y‖ only).")
    if pvalue_method not in PROJECTION_PVALUES:
        raise ValueError(f"`method='projection'` takes pvalue_method 'full' (permutations) or "
                         f"'gamma' (the gamma approximation); got {pvalue_method!r}.")
    for bad, text in ((dask, "backend='dask'"), (statistic not in (None, "dcov"),
                                                 f"`statistic={statistic!r}`"),
                      (strata is not None, "`strata`"), (perm_blocks is not None, "`perm_blocks`"),
                      (exact is True, "`exact=True`")):
        if bad:
            raise ValueError(f"`method='projection'` does not take {text}: it is a test of the "
                             "projected n·dCov² with random permutations of y's rows (or their "
                             "gamma approximation) on this machine's threads.")


@dataclass(frozen=True)
class ProjectionOutcome:
    """What :func:`projection_test` found, in the data's units."""

    statistic: float
    pvalue: float | None
    null: np.ndarray
    n_resamples: int
    n_projections: int
    gamma: tuple | None = None       # (shape, scale) of the gamma approximation


def _sides(X, U, k):
    """The :class:`SortedSide` of the projection of X on direction k (fixed-order sums)."""
    v = np.zeros(X.shape[0])
    for j in range(X.shape[1]):
        v += U[k, j] * X[:, j]
    return SortedSide(v)


#: the mean excess kurtosis of the projections above which the gamma p-value warns
KURTOSIS_LIMIT = 1.0


def _excess_kurtosis(v):
    """Sample excess kurtosis m4 / m2² − 3 of centred values (0 for constant ones)."""
    m2 = float(np.mean(v * v))
    return float(np.mean((v * v) ** 2)) / (m2 * m2) - 3.0 if m2 > 0 else 0.0


def _warn_heavy_tails(kurt):
    """An :class:`AntiConservativeWarning` when the projections of x or y are heavy-tailed:
    where the gamma p-value was measured liberal (0.10 at n = 5 000 with t(3) against
    lognormal coordinates, the permutation test 0.05 on the same data sets)."""
    from .._core._permutation import AntiConservativeWarning
    from .._core._validation import warn

    worst = int(np.argmax(kurt))
    if kurt[worst] > KURTOSIS_LIMIT:
        warn(f"`pvalue_method='gamma'`: the projections of {'xy'[worst]} have a mean excess "
             f"kurtosis of {kurt[worst]:.3g} (> {KURTOSIS_LIMIT:g}); on heavy-tailed data the "
             f"gamma approximation was measured liberal (rejecting about 10 % of independent "
             f"pairs at the 5 % level). Use `pvalue_method='full'` (permutations, exact level).",
             AntiConservativeWarning)


def _permutations(gen, R, n, budget):
    """R random permutations of 0..n−1 as ``perm(r)``: stored when they fit a quarter of the
    budget, else drawn again from one seed per permutation (the same permutations either way)."""
    seeds = gen.integers(0, 2**63 - 1, size=R, dtype=np.int64)

    def draw(r):
        return np.random.default_rng(int(seeds[r])).permutation(n)

    if R * n * 8.0 <= budget / 4:
        stored = [draw(r) for r in range(R)]
        return stored.__getitem__
    return draw


def _permutation_pvalue(X, Y, U, V, perm, R, const, n_threads, tick):
    """``(obs, pvalue, null)``: the K directions' sums of the data and of R permutations."""
    from .._core._permutation import pvalue_from_null

    n = X.shape[0]
    sums = np.zeros(R + 1)
    scale = 0.0
    for k in range(U.shape[0]):
        a, b = _sides(X, U, k), _sides(Y, V, k)
        sums[0] += sorted_cross(a, b, n_threads)
        for r in range(R):
            sums[r + 1] += sorted_cross(a, b, n_threads, perm(r))
        scale += math.sqrt(a.norm * b.norm)
        tick()
    tol = 64 * np.finfo(float).eps * scale
    pval = float(pvalue_from_null(sums[0], sums[1:], False, tol=tol))
    return sums[0] * const, pval, sums[1:] * const


def _gamma_pvalue(X, Y, U, V, n, const, n_threads, tick):
    """``(obs, pvalue, (shape, scale) or None)``: the gamma approximation of the permutation
    law, given the directions (warns on heavy tails)."""
    from scipy import stats

    K = U.shape[0]
    obs, mean, diag, off_x, off_y = 0.0, 0.0, 0.0, 0.0, 0.0
    kurt = np.zeros(2)
    prev = None
    gamma = None
    for k in range(K):
        a, b = _sides(X, U, k), _sides(Y, V, k)
        kurt += (_excess_kurtosis(a.v), _excess_kurtosis(b.v))
        obs += sorted_cross(a, b, n_threads)
        mean += a.total * b.total / (n * n * (n - 1))        # tr A tr B / (n − 1)
        diag += a.norm * b.norm
        if prev is not None:
            off_x += sorted_cross(prev[0], a, n_threads)
            off_y += sorted_cross(prev[1], b, n_threads)
        prev = (a, b)
        tick()
    off = 0.0 if K == 1 else K * (K - 1) * (off_x / (K - 1)) * (off_y / (K - 1))
    m = const * mean                                 # E T = const Σ_k tr A_k tr B_k / (n − 1)
    var = 2.0 * const**2 * (diag + off) / n**2       # Cov(S_k, S_l) ≈ 2 ΣA^kA^l ΣB^kB^l / n²
    obs *= const
    if not (m > 0 and var > 0):
        pval = 1.0 if obs <= m else 0.0
    else:
        shape, scl = m * m / var, var / m
        gamma = (shape, scl)
        pval = float(stats.gamma.sf(obs, shape, scale=scl))
    _warn_heavy_tails(kurt / K)
    return obs, pval, gamma


def projection_test(X, Y, gen, R, n_projections, pvalue_method, n_threads, budget):
    """The projected test of x ⟂ y on validated arrays X (n, p), Y (n, q)."""
    from .._core._metrics import resolve_metric

    n, p = X.shape
    q = Y.shape[1]
    met = resolve_metric("energy", 1.0, 1.0)
    X, _, sx = _engine.normalise(met, np.asarray(X, dtype=np.float64))
    Y, _, sy = _engine.normalise(met, np.asarray(Y, dtype=np.float64))
    K = 1 if p == q == 1 else int(n_projections)     # 1-D: every projection is the data
    U, V = directions(gen, K, p), directions(gen, K, q)
    const = sphere_constant(p) * sphere_constant(q) / (K * n)   # Σ over k → n·dCov² estimate
    # no `progress` argument here: the ambient setting (the command line) shows the directions
    bar = _progress.progress_bar(K, False, "projections", "proj")
    tick = (lambda: None) if bar is None else (lambda: bar.update(1))
    try:
        if pvalue_method == "full":
            perm = _permutations(gen, R, n, budget)
            obs, pval, null = _permutation_pvalue(X, Y, U, V, perm, R, const, n_threads, tick)
            gamma = None
        else:
            obs, pval, gamma = _gamma_pvalue(X, Y, U, V, n, const, n_threads, tick)
            null, R = np.empty(0), 0
    finally:
        if bar is not None:
            bar.close()
    to_data = (lambda v: sy.apply(sx.apply(v)))
    if gamma is not None:
        gamma = (gamma[0], float(to_data(gamma[1])))
    return ProjectionOutcome(float(to_data(obs)), pval, np.asarray(to_data(null), dtype=float),
                             R, K, gamma)
