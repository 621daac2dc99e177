"""The energy test of (multivariate) normality (:func:`normality_test`; Székely and Rizzo 2005).
"""
from __future__ import annotations

import math
import warnings
from functools import partial

from scipy import special
import numpy as np

from .._core import _engine, _sequential
from .._core._metrics import resolve_metric
from .._core._validation import check_n_threads, seeded_rng
from .._lib import _gof
from ._bootstrap import (BATCH_DOUBLES, _bootstrap, _dask_threads, _pow2_exponent, _pvalue,
    _resamples, _rule_fields, _sample, _sorted_rows)
from ._dask import PAIRS_PER_UNIT, backend_iv
from ._results import GoodnessOfFitResult

__all__ = ["normality_test"]


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


def _draw_1d(gen, k, n):
    return gen.standard_normal((k, n))


def _statistics_1d(rows, nt, copy):
    return _normal_1d(rows, nt, copy=copy)[0]


def _draw_md(gen, k, n, d):
    return [gen.standard_normal((n, d)) for _ in range(k)]


def _statistics_md(samples, nt, copy):
    metric = resolve_metric("energy")
    return [_normal_md(Z, nt, metric)[0] for Z in samples]


def _normal_null(R, gen, n, d, stat, bound, rule, nt, dask_nt):
    """The bootstrap null of the normality test (see :func:`._bootstrap._bootstrap`)."""
    if d == 1:
        return _bootstrap(R, max(1, min(R, BATCH_DOUBLES // n)), gen, partial(_draw_1d, n=n),
                          _statistics_1d, stat, bound, rule, n_threads=nt, dask=dask_nt, work=n)
    # the samples of a batch are held together: BATCH_DOUBLES at most
    return _bootstrap(R, max(1, min(R, BATCH_DOUBLES // (n * d))), gen, partial(_draw_md, n=n, d=d),
                      _statistics_md, stat, bound, rule, n_threads=nt, dask=dask_nt,
                      work=n * d + n * n * d // PAIRS_PER_UNIT)


def normality_test(x, *, method="bootstrap", n_resamples=999, rng=None, columns=None,
                   n_threads=None, pvalue_method="full", sequential_h=10, alpha=0.05,
                   backend=None):
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
        Threads of the statistics (on the Dask backend, threads per task, default 1).
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop the bootstrap early, as in :func:`energystats.energy_test`
        (Besag & Clifford's sequential p-value, or Gandy's decision whether
        p ≤ ``alpha``); with ``method='bootstrap'`` only.
    backend : {None, 'threads', 'dask'}, default None
        Where the bootstrap runs.  None and 'threads': this process.  'dask': tasks on the
        current Dask scheduler (a ``distributed.Client`` if one is active), ``n_threads``
        threads each (default 1).  A chain of small tasks draws the samples from ``rng``
        batch after batch as this process does, and each batch of about 4·10⁶ values drawn
        (for d > 1 a value's work counts 64 pairs of rows times features) is one task that
        computes its statistics; with 'sequential' or 'decision' the replicates run in
        rounds of 16, 32, 64, ... between which the rule looks at them in draw order.  The
        null distribution and p-value are the same bits as here for the same ``rng`` (a
        Generator given is copied, not advanced).  The sample stays in memory (Dask input is
        refused).  A bootstrap below one task's work is one task: n = 1000, R = 999 took
        0.054 s on a two-worker local cluster against 0.061 s here, n = 500, d = 3, R = 199
        0.062 s against 0.042 s (load 4.8 on two cores;
        ``docs/benchmarks/dask_resampling.txt``).

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
    on_dask = backend_iv(backend, x, "normality_test")
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
    if on_dask and method == "limit":
        raise ValueError("`backend='dask'` runs the bootstrap's replicates as tasks; "
                         "`method='limit'` draws none.")
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
        from ._limit import normal_limit_pvalue

        pvalue, se, null, R_used, how = float(normal_limit_pvalue(stat)), None, np.empty(0), 0, "limit"
    else:
        gen, seed = seeded_rng(rng)
        dask_nt = _dask_threads(on_dask, n_threads, nt)
        null = _normal_null(R, gen, n, d, stat, bound, rule, nt, dask_nt)
        pvalue, se = _pvalue(stat, bound, null, R, rule)
        R_used, how = int(null.shape[0]), ("bootstrap" if R else "none")
    return GoodnessOfFitResult(
        statistic=float(stat), pvalue=pvalue, null_distribution=null,
        distribution="normal" if d == 1 else "multivariate normal", params=params,
        fitted=tuple(params), method=how, statistic_name="energy", n_resamples=R_used,
        n_samples=n, n_features=d, pvalue_se=se, seed=seed, columns=used, **_rule_fields(rule, stat))
