r"""Energy goodness-of-fit tests: normality, Poisson, and any distribution SciPy knows.

For a sample :math:`y_1, \dots, y_n` and a hypothesised law of :math:`Z` (Székely and Rizzo
2005, "A new test for multivariate normality", *J. Multivariate Anal.* 93; Székely and Rizzo
2013, "Energy statistics: a class of statistics based on distances", *J. Statist. Plann.
Inference* 143),

.. math::

    \mathcal{E}_n = n\Big(\frac{2}{n}\sum_i E\|y_i - Z\| - E\|Z - Z'\|
                    - \frac{1}{n^2}\sum_{i,j}\|y_i - y_j\|\Big),

which is n times the energy distance between the sample and the law: zero only when they
agree, large when they differ.  Parameters are estimated from the data and the p-value comes
from a parametric bootstrap that re-estimates them in every replicate (or, for univariate
normality, from the statistic's limit distribution).
"""
from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from ._core import _engine, _sequential
from ._gof_families import Family, resolve
from ._lib import _gof
from ._core._metrics import resolve_metric
from ._core._permutation import pvalue_from_null, pvalue_se
from ._core._validation import as_data, check_int, check_n_threads, seeded_rng
from ._core._frames import select_frame

__all__ = ["GoodnessOfFitResult", "PoissonTestsResult", "normality_test", "poisson_test",
           "gof_test"]

#: rounding allowance of a statistic, in units of eps times the sum of its terms' magnitudes:
#: bootstrap replicates within it of the observed value count as ties
TIE_ULPS = 64
#: doubles held by one batch of bootstrap samples (64 MiB)
BATCH_DOUBLES = 2**23


@dataclass(frozen=True)
class GoodnessOfFitResult:
    r"""Result of :func:`normality_test`, :func:`poisson_test` and :func:`gof_test`.

    Attributes
    ----------
    statistic : float
        The test statistic (:math:`\mathcal{E}_n` for ``statistic_name='energy'``).
    pvalue : float or None
        Bootstrap p-value :math:`(1 + \#\{T^* \ge T\})/(R + 1)`, or the limit p-value
        (``method='limit'``); None with ``n_resamples=0``.
    null_distribution : ndarray, shape (n_resamples,)
        The statistic of each bootstrap sample (parameters re-estimated on each).
    distribution : str
        The hypothesised family ('normal', 'multivariate normal', 'poisson' or a SciPy name).
    params : dict
        Its parameters: estimated from the data (names in ``fitted``) or given.
    fitted : tuple of str
        The parameters estimated from the data (and re-estimated in every replicate).
    method : str
        'bootstrap' (parametric bootstrap), 'limit' (limit distribution) or 'none'.
    statistic_name : str
        'energy', 'm-cvm' or 'm-ad'.
    n_resamples : int
    n_samples, n_features : int
    pvalue_se : float or None
        Monte Carlo standard error of a bootstrap p-value.
    seed : int or None
    columns : list or None
        DataFrame columns (or the Series name) used.
    pvalue_method : str
        'full', 'sequential' or 'decision' (bootstrap stopped early, see
        :func:`energystats.energy_test`); with the last two ``n_resamples``
        counts the replicates used and ``pvalue_se`` is None.
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    distribution: str
    params: dict
    fitted: tuple
    method: str
    statistic_name: str
    n_resamples: int
    n_samples: int
    n_features: int = 1
    pvalue_se: float | None = None
    seed: int | None = None
    columns: list | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """One row: distribution, statistic, p-value, its Monte Carlo error, method, R, n, and
        the parameters (``param_<name>`` columns)."""
        row = {"distribution": [self.distribution], "statistic_name": [self.statistic_name],
               "statistic": [self.statistic], "pvalue": [self.pvalue],
               "pvalue_se": [self.pvalue_se], "method": [self.method],
               "n_resamples": [self.n_resamples], "n_samples": [self.n_samples],
               "n_features": [self.n_features]}
        for k, v in self.params.items():
            if np.ndim(v) == 0:
                row[f"param_{k}"] = [v]
        return pd.DataFrame(row, index=pd.Index(["goodness of fit"], name="test"))

    def __repr__(self):
        p = "None" if self.pvalue is None else f"{self.pvalue:.4g}"
        return (f"GoodnessOfFitResult(statistic={self.statistic:.6g}, pvalue={p}, "
                f"distribution={self.distribution!r}, method={self.method!r}, "
                f"n_resamples={self.n_resamples})")


@dataclass(frozen=True)
class PoissonTestsResult:
    """Result of ``poisson_test(..., statistic='all')``: one :class:`GoodnessOfFitResult` per
    statistic, all from the same bootstrap samples (as R ``energy``'s ``poisson.tests``)."""

    results: dict

    def __getitem__(self, name):
        return self.results[name]

    def to_frame(self):
        """One row per statistic."""
        frames = [r.to_frame().set_axis([name], axis=0) for name, r in self.results.items()]
        return pd.concat(frames).rename_axis("statistic")


# -- input ------------------------------------------------------------------------------------

def _sample(x, columns, name="x", allow_2d=True):
    """``(array n×d float64, columns used or None)``."""
    if isinstance(columns, str):
        columns = [columns]
    x, used, _ = select_frame(x, columns, name=name)
    if isinstance(x, pd.Series) and x.name is not None:
        used = [x.name]
    arr, _ = as_data(x, name, dtype=np.float64)
    if not allow_2d and arr.shape[1] != 1:
        raise ValueError(f"`{name}` must be one-dimensional (one column); got {arr.shape[1]} "
                         "columns. Choose one with `columns=`.")
    return arr, used


def _resamples(n_resamples):
    check_int(n_resamples, "n_resamples", 0)
    return int(n_resamples)


def _pvalue(stat, bound, null, R, rule=None, what="energy statistic"):
    if R == 0:
        return None, None
    tol = TIE_ULPS * np.finfo(np.float64).eps * bound
    p = float(pvalue_from_null(stat, null, exact=False, what=what, tol=tol))
    if rule is not None:
        return _sequential.final_pvalue(p, rule), None
    return p, pvalue_se(p, R, False)


def _bootstrap(R, cap, replicate, stat, bound, rule):
    """The bootstrap null: ``replicate(k)`` gives the next k replicates' statistics in draw
    order (the draws fill the Generator's stream in order, so the replicates are those of the
    full run however :func:`energystats._core._sequential.collect` batches them)."""
    tol = TIE_ULPS * np.finfo(np.float64).eps * bound
    return _sequential.collect(R, cap, lambda r0, k: replicate(k), stat, tol, rule)


def _rule_fields(rule, stat):
    """The early-stopping fields of a result; no decision next to a statistic that is not
    finite (its p-value is NaN, with a warning): the replicates cannot be compared with it."""
    if rule is None:
        return {}
    return {"pvalue_method": rule.name,
            "decision": rule.decision if np.isfinite(stat) else None}


def _sorted_rows(Z, nt):
    """Sort every row of ``Z`` in place, rows shared between ``nt`` threads (NumPy's sort
    releases the GIL)."""
    if nt <= 1 or Z.shape[0] < 2 or Z.size < 100_000:
        Z.sort(axis=1)
        return Z
    parts = np.array_split(np.arange(Z.shape[0]), nt)
    with ThreadPoolExecutor(nt) as ex:
        list(ex.map(lambda ix: Z[ix[0]:ix[-1] + 1].sort(axis=1), [p for p in parts if p.size]))
    return Z


def _pow2_exponent(X):
    """An exponent e such that ``X * 2**-e`` is exact and its largest |value| lies in [1, 2)
    (e = 0 for all-zero data): the statistics are computed on that copy, so that neither
    squares nor sums overflow (|x| above about 1e154) or lose digits to subnormal numbers
    (|x| below about 1e-154), and X and X·c give the same result for every c > 0 up to the
    rounding of X·c.  Where that would push the smallest nonzero |value| below the normal
    range (data spanning more than about 1e300 between nonzero values) e is raised just
    enough to keep every value exact."""
    a = np.abs(X[np.isfinite(X)])
    a = a[a > 0]
    if a.size == 0:
        return 0
    e = int(np.frexp(a.max())[1]) - 1
    low = int(np.frexp(a.min())[1]) - 1   # a.min() >= 2**low
    return min(e, low + 1022) if e > 0 else e


# -- normality ----------------------------------------------------------------------------------

def _normal_1d(rows, nt, copy=True):
    """E_n and its error scale for every row (a sample) of ``rows`` (sorted in place when
    ``copy=False``)."""
    rows = _sorted_rows(np.array(rows, dtype=np.float64, order="C", copy=copy or None), nt)
    out, bound = np.empty(rows.shape[0]), np.empty(rows.shape[0])
    _gof.normal_rows(rows, out, bound, nt if rows.size >= 100_000 else 1)
    return out, bound


def _mvn_expected_distance(r2, d):
    """E‖y − Z‖ for Z ~ N(0, I_d) and ‖y‖² = ``r2``: √2 Γ((d+1)/2)/Γ(d/2) ₁F₁(−½; d/2; −‖y‖²/2)."""
    c = math.sqrt(2.0) * math.exp(special.gammaln((d + 1) / 2) - special.gammaln(d / 2))
    return c * special.hyp1f1(-0.5, d / 2.0, -0.5 * r2)


def _standardised(X):
    """(x − x̄) S^(−1/2), S the sample covariance (n − 1 divisor), symmetric root; None when
    S is singular (to rounding)."""
    n, d = X.shape
    C = X - X.mean(axis=0)
    S = (C.T @ C) / (n - 1)
    w, V = np.linalg.eigh(S)
    if not w[0] > 64 * d * np.finfo(np.float64).eps * max(w[-1], 0.0):
        return None
    return C @ ((V / np.sqrt(w)) @ V.T)


def _normal_md(X, nt, metric=None):
    """E_n (and its error scale) of one d-dimensional sample, parameters estimated."""
    n, d = X.shape
    Y = _standardised(X)
    if Y is None:
        return math.nan, 0.0
    metric = metric or resolve_metric("energy")
    M = float(_engine.group_sum_matrix(Y, np.zeros(n, dtype=np.intp), 1, metric, nt)[0, 0])
    G = _mvn_expected_distance(np.einsum("ij,ij->i", Y, Y), d)
    cd = 2.0 * math.exp(special.gammaln((d + 1) / 2) - special.gammaln(d / 2))
    sG = math.fsum(G)
    return 2.0 * sG - n * cd - M / n, 2.0 * sG + n * cd + M / n


def normality_test(x, *, method="bootstrap", n_resamples=999, rng=None, columns=None,
                   n_threads=None, pvalue_method="full", sequential_h=10, alpha=0.05):
    r"""Energy test of (multivariate) normality with estimated mean and covariance.

    The data are standardised, :math:`y_i = S^{-1/2}(x_i - \bar x)` (sample covariance with
    divisor :math:`n - 1`, symmetric root), and compared with :math:`Z \sim N(0, I_d)`:

    .. math::

        \mathcal{E}_n = 2\sum_i E\|y_i - Z\| - n\,E\|Z - Z'\| - \frac{1}{n}\sum_{i,j}\|y_i - y_j\|,

    :math:`E\|y - Z\| = \sqrt{2}\,\frac{\Gamma((d+1)/2)}{\Gamma(d/2)}\,
    {}_1F_1(-\tfrac12; \tfrac d2; -\tfrac{\|y\|^2}{2})` and :math:`E\|Z - Z'\| =
    2\Gamma((d+1)/2)/\Gamma(d/2)`; in one dimension :math:`E|y - Z| = 2\varphi(y) +
    y(2\Phi(y) - 1)` and the statistic costs a sort (Székely and Rizzo 2005, "A new test for
    multivariate normality", *J. Multivariate Anal.* 93, 58–80).  Large values reject.

    Parameters
    ----------
    x : array_like (n,) or (n, d), Series or DataFrame
        The sample (rows are observations).
    method : {'bootstrap', 'limit'}
        'bootstrap': the statistic of ``n_resamples`` samples of size n from
        :math:`N(0, I_d)`, each standardised by its own mean and covariance — valid with
        estimated parameters because the statistic is affine invariant.  'limit' (d = 1
        only): the limit distribution :math:`\sum_k \lambda_k Z_k^2` of the statistic
        (Móri, Székely and Rizzo 2021, "On energy tests of normality", *J. Statist. Plann.
        Inference* 213, 1–15), its eigenvalues computed by this package and the tail by
        Imhof's (1961) inversion.
    n_resamples : int
        Bootstrap samples (0: the statistic only).
    rng : None, int or numpy.random.Generator
        Replicate r is the r-th draw ``rng.standard_normal((n, d))`` (for d = 1, row r of
        ``rng.standard_normal((n_resamples, n))``): the same p-value for a seed whatever
        ``n_threads``.
    columns : list of str, optional
        DataFrame columns to use (default: all).
    n_threads : int, optional
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop the bootstrap early, as in :func:`energystats.energy_test`
        (Besag & Clifford's sequential p-value, or Gandy's decision whether
        p ≤ ``alpha``); with ``method='bootstrap'`` only.

    Returns
    -------
    GoodnessOfFitResult
        ``params`` holds the estimated mean and covariance.

    Notes
    -----
    R ``energy``'s ``normal.test``/``mvnorm.test`` compute the same statistic
    (``normal.e``, ``mvnorm.e``) but count the p-value as the share of replicates at least
    as large, without the +1 used here (see the conventions page).  Singular covariance
    (a column constant or collinear with others) is an error: the test needs
    :math:`n \ge d + 2` points in general position.

    The statistic is computed on :math:`x\,2^{-e}`, :math:`2^e` the power of two that
    brings the largest :math:`|x|` into [1, 2) (exact): :math:`x` and :math:`c\,x` give the
    same result, to rounding, for any :math:`c > 0`.

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> x = np.random.default_rng(0).normal(size=100)
    >>> res = es.normality_test(x, n_resamples=199, rng=1)
    >>> round(res.statistic, 4), bool(res.pvalue > 0.05)
    (0.475, True)
    >>> bool(es.normality_test(x, method="limit").pvalue > 0.05)
    True
    """
    if method not in ("bootstrap", "limit"):
        raise ValueError(f"`method` must be 'bootstrap' or 'limit'; got {method!r}.")
    X, used = _sample(x, columns)
    n, d = X.shape
    if n < d + 2:
        raise ValueError(f"`x` needs at least d + 2 = {d + 2} observations for a test of "
                         f"{d}-dimensional normality with estimated mean and covariance; got {n}.")
    R = _resamples(n_resamples)
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha)
    if rule is not None and method == "limit":
        raise ValueError(f"`pvalue_method={pvalue_method!r}` stops the bootstrap early; "
                         "`method='limit'` draws no bootstrap samples.")
    nt = check_n_threads(n_threads)
    # the statistic is affine invariant: compute it on X 2**-e, exact (see _pow2_exponent)
    e = _pow2_exponent(X)
    X = np.ldexp(X, -e)
    mean = X.mean(axis=0)
    cov = np.cov(X, rowvar=False, ddof=1)
    if d == 1:
        if not float(cov) > 0:
            raise ValueError("`x` is constant: its standard deviation is 0, so it cannot be "
                             "standardised.")
        stat, bound = (float(v[0]) for v in _normal_1d(X.reshape(1, n), 1))
        params = {"mean": float(np.ldexp(mean[0], e)),
                  "std": float(np.ldexp(math.sqrt(float(cov)), e))}
    else:
        if _standardised(X) is None:
            rank = int(np.linalg.matrix_rank(cov))
            raise ValueError(f"the sample covariance of `x` is singular (rank {rank} < {d}): a "
                             "column is constant or a linear combination of others; drop it.")
        stat, bound = _normal_md(X, nt)
        with np.errstate(over="ignore"):
            params = {"mean": np.ldexp(mean, e), "cov": np.ldexp(cov, 2 * e)}
        if not np.isfinite(params["cov"]).all():
            warnings.warn(f"the sample covariance of `x` has entries beyond the float64 range "
                          f"(up to {np.abs(cov).max():.3g} * 2**{2 * e}): `params['cov']` holds "
                          "inf there; the statistic and p-value, computed on x * 2**"
                          f"{-e}, are not affected.", RuntimeWarning, stacklevel=2)
    seed = None
    if method == "limit":
        if d != 1:
            raise ValueError(f"`method='limit'` is available for univariate data only; `x` has "
                             f"{d} columns. Use method='bootstrap'.")
        from ._gof_limit import normal_limit_pvalue

        pvalue, se, null, R_used, how = float(normal_limit_pvalue(stat)), None, np.empty(0), 0, "limit"
    else:
        gen, seed = seeded_rng(rng)
        if d == 1:
            def replicate(k):
                return _normal_1d(gen.standard_normal((k, n)), nt, copy=False)[0]

            cap = max(1, min(R, BATCH_DOUBLES // n))
        else:
            metric = resolve_metric("energy")

            def replicate(k):
                return [_normal_md(gen.standard_normal((n, d)), nt, metric)[0] for _ in range(k)]

            cap = max(1, R)
        null = _bootstrap(R, cap, replicate, stat, bound, rule)
        pvalue, se = _pvalue(stat, bound, null, R, rule)
        R_used, how = int(null.shape[0]), ("bootstrap" if R else "none")
    return GoodnessOfFitResult(
        statistic=float(stat), pvalue=pvalue, null_distribution=null,
        distribution="normal" if d == 1 else "multivariate normal", params=params,
        fitted=tuple(params), method=how, statistic_name="energy", n_resamples=R_used,
        n_samples=n, n_features=d, pvalue_se=se, seed=seed, columns=used, **_rule_fields(rule, stat))


# -- Poisson ------------------------------------------------------------------------------------

_POISSON_STATS = ("energy", "m-cvm", "m-ad")


def _counts(x, columns, name="x"):
    X, used = _sample(x, columns, name, allow_2d=False)
    v = X[:, 0]
    bad = (v < 0) | (v != np.round(v))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must hold non-negative integer counts; value {v[i]:g} at "
                         f"position {i} is not ({int(bad.sum())} such value(s)).")
    if v.max(initial=0) > 2**31:
        raise ValueError(f"`{name}` has counts up to {v.max():g}; counts above 2**31 are not supported.")
    return v.astype(np.int64), used


def poisson_test(x, *, statistic="energy", n_resamples=999, rng=None, columns=None,
                 pvalue_method="full", sequential_h=10, alpha=0.05):
    r"""Energy and mean-distance tests that a sample of counts is Poisson.

    With :math:`\hat\lambda = \bar x`, the energy statistic (Székely and Rizzo 2004, "Mean
    distance test of Poisson distribution", *Statist. Probab. Lett.* 67, 241–247) is

    .. math::

        \mathcal{E}_n = n\Big(\frac{2}{n}\sum_i E|x_i - X| - E|X - X'|
                        - \frac{1}{n^2}\sum_{i,j}|x_i - x_j|\Big),

    :math:`E|x - X| = 2xF(x) - 2\hat\lambda F(x - 1) + \hat\lambda - x` and
    :math:`E|X - X'| = 2\hat\lambda e^{-2\hat\lambda}(I_0(2\hat\lambda) + I_1(2\hat\lambda))`
    for :math:`X \sim \mathrm{Poisson}(\hat\lambda)`.  'm-cvm' and 'm-ad' are the
    Cramér–von Mises and Anderson–Darling type statistics of the same paper's mean distance
    characterisation, as R ``energy``'s ``poisson.tests``.

    Parameters
    ----------
    x : array_like of non-negative integers, Series, or one-column DataFrame
    statistic : {'energy', 'm-cvm', 'm-ad', 'all'}
        'all' returns a :class:`PoissonTestsResult` with the three tests on the same
        bootstrap samples.
    n_resamples : int
        Parametric bootstrap samples: Poisson(:math:`\hat\lambda`) samples of size n, with
        :math:`\lambda` re-estimated on each.
    rng : None, int or numpy.random.Generator
        Replicate r is row r of ``rng.poisson(λ̂, (n_resamples, n))``.
    columns : str or list of one str, optional
        The column of a DataFrame.
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop the bootstrap early, as in :func:`energystats.energy_test`;
        one statistic at a time (not with ``statistic='all'``, whose three
        tests share the replicates).

    Returns
    -------
    GoodnessOfFitResult or PoissonTestsResult

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> x = np.random.default_rng(0).poisson(3.0, size=80)
    >>> res = es.poisson_test(x, n_resamples=199, rng=1)
    >>> bool(res.params["mu"] == x.mean()), bool(res.pvalue > 0.05)
    (True, True)
    """
    from ._gof_poisson import poisson_statistics

    which = _POISSON_STATS if statistic == "all" else (statistic,)
    if statistic != "all" and statistic not in _POISSON_STATS:
        raise ValueError(f"`statistic` must be one of 'energy', 'm-cvm', 'm-ad', 'all'; got "
                         f"{statistic!r}.")
    v, used = _counts(x, columns)
    n = v.size
    if n < 2:
        raise ValueError(f"`x` needs at least 2 counts; got {n}.")
    R = _resamples(n_resamples)
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha)
    if rule is not None and statistic == "all":
        raise ValueError(f"`pvalue_method={pvalue_method!r}` stops one test's bootstrap; with "
                         "statistic='all' the three tests share it, so use 'full' (or one "
                         "statistic).")
    lam = float(v.mean())
    # M statistics by the recursion without cancellation: R's (m_recursion="r") loses digits
    # as λ̂ grows (relative error ~1e-9 at λ̂ = 50, wrong at λ̂ ≥ 150); the two agree to 1e-12
    # for small λ̂
    obs = poisson_statistics(v[None, :], which, m_recursion="stable")
    gen, seed = seeded_rng(rng)
    m = max(1, min(R, BATCH_DOUBLES // n))
    if rule is None:
        null = {w: np.empty(R) for w in which}
        for r0 in range(0, R, m):
            k = min(m, R - r0)
            got = poisson_statistics(gen.poisson(lam, size=(k, n)).astype(np.int64), which,
                                     m_recursion="stable")
            for w in which:
                null[w][r0:r0 + k] = got[w]
    else:
        (w,) = which
        t = float(np.asarray(obs[w]).ravel()[0])
        null = {w: _bootstrap(R, m, lambda k: poisson_statistics(
            gen.poisson(lam, size=(k, n)).astype(np.int64), which, m_recursion="stable")[w],
            t, abs(t) + n * (1.0 + lam), rule)}
    results = {}
    for w in which:
        t = float(np.asarray(obs[w]).ravel()[0])
        p, se = _pvalue(t, abs(t) + n * (1.0 + lam), null[w], R, rule,
                        what="energy statistic" if w == "energy" else f"{w.upper()} statistic")
        results[w] = GoodnessOfFitResult(
            statistic=t, pvalue=p, null_distribution=null[w], distribution="poisson",
            params={"mu": lam}, fitted=("mu",), method="bootstrap" if R else "none",
            statistic_name=w, n_resamples=int(null[w].shape[0]), n_samples=n, pvalue_se=se,
            seed=seed, columns=used, **_rule_fields(rule, t))
    return PoissonTestsResult(results) if statistic == "all" else results[statistic]


# -- any SciPy distribution -----------------------------------------------------------------------

def _energy_1d(family, Y, params, nt, copy=True):
    """E_n and error scale of each row of ``Y`` for the row's parameters (``Y`` sorted in
    place when ``copy=False``)."""
    Y = _sorted_rows(np.array(Y, dtype=np.float64, order="C", copy=copy or None), nt)
    G, md = family.terms(Y, params)
    out, bound = np.empty(Y.shape[0]), np.empty(Y.shape[0])
    _gof.energy_rows(Y, np.ascontiguousarray(G), np.ascontiguousarray(md, dtype=np.float64),
                     out, bound, nt if Y.size >= 100_000 else 1)
    if "scale" in params:  # the statistic of (y − loc)/scale against the standard law
        scale = np.broadcast_to(np.asarray(params["scale"], dtype=np.float64), out.shape)
        out, bound = out / scale, bound / scale
    return out, bound


def gof_test(x, dist, *, known_params=None, fit=True, n_resamples=999, rng=None, columns=None,
             n_threads=None, pvalue_method="full", sequential_h=10, alpha=0.05):
    r"""Energy goodness-of-fit test of a univariate sample against a SciPy distribution.

    .. math::

        \mathcal{E}_n = 2\sum_i E|y_i - Z| - n\,E|Z - Z'| - \frac{1}{n}\sum_{i,j}|y_i - y_j|,

    with :math:`E|y - Z| = y(2F(y) - 1) + EZ - 2E[Z\,1\{Z \le y\}]` and
    :math:`E|Z - Z'| = 2\int F(1 - F)\,dz` (Székely and Rizzo 2013, "Energy statistics: a
    class of statistics based on distances", *J. Statist. Plann. Inference* 143, §6); the
    law needs a finite mean.  For a continuous SciPy law (``loc``, ``scale``) the statistic
    is that of the standardised sample :math:`(x_i - \mathrm{loc})/\mathrm{scale}` against
    the standard law, so it has no units.  (For ``norm`` SciPy's fit takes the maximum
    likelihood standard deviation, divisor n; with ``known_params`` set to the sample mean
    and the n − 1 standard deviation the statistic is R ``energy``'s ``normal.e`` —
    :func:`normality_test` is that test.)  Closed forms are used for the normal, exponential, uniform,
    gamma, lognormal, Pareto, Weibull and beta families, sums over the support for discrete
    laws (Poisson, geometric, binomial, ...), numerical integration for other continuous
    laws (slow).

    Parameters
    ----------
    x : array_like (n,), Series, or one-column DataFrame
    dist : str, scipy.stats distribution, or frozen distribution
        A name ('normal', 'exponential', 'gamma', 'uniform', 'lognormal', 'pareto',
        'weibull', 'beta', 'poisson', 'geometric', 'binomial' or any ``scipy.stats`` name),
        a distribution such as ``scipy.stats.gamma`` (parameters fitted), or a frozen one
        such as ``scipy.stats.gamma(2.0)`` (a fully specified hypothesis: nothing fitted).
    known_params : dict, optional
        Parameters held fixed (SciPy names: shapes, ``loc``, ``scale``), e.g.
        ``{"loc": 0}`` for a two-parameter gamma; the others are estimated by maximum
        likelihood (SciPy's ``fit``; closed forms for the Poisson mean, the geometric and
        binomial probability — the binomial ``n`` must be known; discrete ``loc`` is 0
        unless given).
    fit : bool
        False: every parameter must be given (``known_params`` or a frozen ``dist``).
    n_resamples : int
        Parametric bootstrap samples from the fitted law, each refitted (as
        ``scipy.stats.goodness_of_fit``); 0 for the statistic only.
    rng : None, int or numpy.random.Generator
        Replicate r is row r of ``law.rvs(size=(n_resamples, n), random_state=rng)``
        (drawn in batches; the same values).
    columns : str or list of one str, optional
    n_threads : int, optional
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop the bootstrap early, as in :func:`energystats.energy_test`.

    Returns
    -------
    GoodnessOfFitResult

    Notes
    -----
    With every parameter known the bootstrap is a plain Monte Carlo test of a simple
    hypothesis.  With parameters estimated the p-value is exact for location–scale families
    fitted by equivariant estimators (normal, exponential, uniform with loc and scale both
    free) and a parametric-bootstrap approximation otherwise.  SciPy's ``fit`` estimates
    ``loc`` too unless it is given: for positive families (gamma, Weibull, lognormal, ...)
    ``known_params={"loc": 0}`` gives the usual two-parameter family and a much more stable
    fit.

    For a continuous law the data (and a given ``loc`` or ``scale``) are first multiplied by
    the power of two :math:`2^{-e}` that brings the largest :math:`|x|` into [1, 2) (exact)
    and the fitted ``loc`` and ``scale`` are reported in the data's units: the statistic
    and p-value of :math:`x` and :math:`c\,x` (:math:`c > 0`) agree to rounding when
    the family is location–scale and whatever is held fixed scales with the data
    (``loc=0``).  Discrete families are not scale invariant.

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> x = np.random.default_rng(0).gamma(2.0, 3.0, size=100)
    >>> res = es.gof_test(x, "gamma", known_params={"loc": 0}, n_resamples=99, rng=1)
    >>> sorted(res.fitted), bool(res.pvalue > 0.05)
    (['a', 'scale'], True)
    """
    dist_obj, frozen, name = resolve(dist)
    family = Family(dist_obj)
    X, used = _sample(x, columns, allow_2d=False)
    v = X[:, 0]
    n = v.size
    if n < 2:
        raise ValueError(f"`x` needs at least 2 observations; got {n}.")
    if family.discrete:
        bad = v != np.round(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"`x` must hold integers for the discrete distribution {name!r}; "
                             f"value {v[i]:g} at position {i} is not.")
    known = {} if known_params is None else dict(known_params)
    if not isinstance(known, dict):
        raise TypeError(f"`known_params` must be a dict; got {type(known_params).__name__}.")
    unknown = [k for k in known if k not in family.param_names]
    if unknown:
        raise ValueError(f"`known_params` {unknown} are not parameters of {name!r} "
                         f"(parameters: {family.param_names}).")
    if frozen is not None:
        if known:
            raise ValueError("`known_params` cannot be combined with a frozen `dist`, whose "
                             "parameters are all fixed.")
        shapes = dict(zip(family.shapes, frozen.args))
        rest = list(frozen.args[len(family.shapes):])
        base = dict(zip([p for p in family.param_names if p not in family.shapes], rest))
        known = {**{p: (0.0 if p == "loc" else 1.0) for p in family.param_names
                    if p not in family.shapes}, **shapes, **base, **frozen.kwds}
        missing = [p for p in family.param_names if p not in known]
        if missing:
            raise ValueError(f"the frozen `dist` does not fix {missing}.")
    elif family.discrete and "loc" not in known:
        known["loc"] = 0.0
    if not fit:
        missing = [p for p in family.param_names if p not in known]
        if missing:
            raise ValueError(f"`fit=False` needs every parameter of {name!r} given; missing "
                             f"{missing} (pass them in `known_params` or freeze `dist`).")
    R = _resamples(n_resamples)
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha)
    nt = check_n_threads(n_threads)
    fitted = tuple(p for p in family.param_names if p not in known)
    if fitted and not family.discrete and not hasattr(dist_obj, "fit"):
        raise TypeError(f"`dist` {name!r} has no fit method; give its parameters.")
    # A continuous law's statistic is that of (x − loc)/scale: compute it on x 2**-e (exact,
    # see _pow2_exponent) with loc and scale in those units, reported back in x's units.
    e = 0 if family.discrete else _pow2_exponent(v)
    v = np.ldexp(v, -e)
    known = {k: (float(np.ldexp(val, -e)) if k in ("loc", "scale") else val)
             for k, val in known.items()}

    def units(p):
        return {k: float(np.ldexp(val, e) if k in ("loc", "scale") else val)
                for k, val in p.items()}

    params = family.fit(v, known)
    law = family.frozen(params)
    mu = float(law.mean())
    if not np.isfinite(mu):
        raise ValueError(f"{name} with parameters {units(params)} has no finite mean: the "
                         "energy statistic needs E|Z| < ∞.")
    stat, bound = (float(a[0]) for a in _energy_1d(family, v[None, :], params, nt))
    gen, seed = seeded_rng(rng)

    def replicate(k):
        Z = np.asarray(law.rvs(size=(k, n), random_state=gen), dtype=np.float64)
        return _energy_1d(family, Z, family.fit_rows(Z, known), nt, copy=False)[0]

    null = _bootstrap(R, max(1, min(R, BATCH_DOUBLES // (4 * n))), replicate, stat, bound, rule)
    p, se = _pvalue(stat, bound, null, R, rule)
    return GoodnessOfFitResult(
        statistic=stat, pvalue=p, null_distribution=null, distribution=name,
        params=units(params), fitted=fitted,
        method="bootstrap" if R else "none", statistic_name="energy",
        n_resamples=int(null.shape[0]), n_samples=n, pvalue_se=se, seed=seed, columns=used,
        **_rule_fields(rule, stat))

