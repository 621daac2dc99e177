r"""Dependence in time series: the auto-distance correlation function (ADCF,
:func:`auto_distance_correlation`) and the cross-distance correlation function
(:func:`cross_distance_correlation`), with their tests (:func:`adcf_test` of serial
independence, :func:`cross_distance_correlation_test` of independence of two series that may
each be autocorrelated).

At lag :math:`j` the pairs are :math:`(x_t, y_{t-j})` for the :math:`m = n - |j|` times where
both exist, and the statistics are the package's distance statistics of those m pairs
(V-statistics, Székely, Rizzo and Bakirov 2007): with :math:`a_{rl} = \|x_r - x_l\|^\alpha`
and :math:`b_{rl} = \|y_{r-j} - y_{l-j}\|^\alpha` double-centred to :math:`A, B`,

.. math::

    \mathcal{V}^2_n(j) = \frac{1}{m^2} \sum_{r,l} A_{rl} B_{rl}, \qquad
    \mathcal{R}_n(j) = \frac{\mathcal{V}_n(j)}{\sqrt{\mathcal{V}_n(x, x)\,\mathcal{V}_n(y, y)}},

the distance variances taken over the same m rows of each series (Zhou 2012; Fokianos and
Pitsillou 2017).  The ADCF is :math:`y = x`.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._dask import in_memory_backend
from .._core._display import notebook_display
from .._core._blocks import block_length as _block_length, draw_block_permutations
from .._core._engine import pairwise_values
from .._core._input import same_times, time_series
from .._core._metrics import resolve_metric
from .._core._permutation import pvalue_from_null
from .._core._sequential import check_resamples
from .._core._serial import SeriesDependenceWarning, series_findings
from .._core._validation import check_n_threads, is_int, seeded_rng, warn
from ._input import _check_estimator
from ._timeseries import PermutedLags, lag_statistics

__all__ = ["auto_distance_correlation", "cross_distance_correlation", "adcf_test",
           "cross_distance_correlation_test", "ADCFTestResult", "CrossDistanceCorrelationTestResult"]

#: the kernels of the portmanteau statistic's lag weights k(j/p)
KERNELS = ("truncated", "bartlett")
#: the automatic block length of the cross test: these multiples of the Politis-White length of
#: each series and of its squares (the largest over the columns of both series), at most n/4
CROSS_BLOCK_FACTOR, CROSS_SQUARES_FACTOR = 2.0, 3.0


# -- input -------------------------------------------------------------------------

def _series(x, name, other=None):
    """``(X, columns, index)``: the series as a float64 (n, d) array, rows in time order
    (:func:`energystats._core._input.time_series`: an index of times out of order is refused);
    ``other`` the index of the series it is paired with (``x``'s), which must be the same."""
    X, index, cols = time_series(x, name=name)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.shape[0] > 0 and np.all(X == X[0]):
        raise ValueError(f"`{name}` is constant (all its rows are equal): its distance variance is 0 "
                         "and the distance correlations are undefined (0/0).")
    if other is not None:
        same_times(other[0], index)
    return X, cols, index


def _auto_lags(lags, n):
    """The ADCF's lags 1 … L (``lags`` an int L) or the positive lags given, sorted."""
    if lags is None:
        lags = max(1, min(int(10 * math.log10(n)), n - 4))
    if is_int(lags):
        if not 1 <= lags <= n - 4:
            raise ValueError(f"`lags` must be an integer in [1, n_samples - 4 = {n - 4}] (each lag "
                             f"needs at least 4 pairs); got {lags}.")
        return list(range(1, int(lags) + 1))
    out = _lag_list(lags, "lags", n)
    if min(out) < 1:
        raise ValueError(f"`lags` of the ADCF must be positive (lag 0 is dCor(x, x) = 1); got "
                         f"{min(out)}.")
    return out


def _cross_lags(lags, n):
    """The cross lags −K … K (``lags`` an int K ≥ 0) or the lags given, sorted."""
    if lags is None:
        lags = min(math.ceil(math.log(n)), n - 4)
    if is_int(lags):
        if not 0 <= lags <= n - 4:
            raise ValueError(f"`lags` must be an integer in [0, n_samples - 4 = {n - 4}] (lags "
                             f"-lags … lags; each needs at least 4 pairs); got {lags}.")
        return list(range(-int(lags), int(lags) + 1))
    return _lag_list(lags, "lags", n)


def _lag_list(lags, name, n):
    try:
        out = [int(v) for v in lags if is_int(v)]
        ok = len(out) == len(lags) and len(out) > 0
    except TypeError:
        ok = False
    if not ok:
        raise TypeError(f"`{name}` must be an integer or a non-empty sequence of integers; got "
                        f"{lags!r}.")
    if len(set(out)) != len(out):
        raise ValueError(f"`{name}` must not repeat a lag; got {lags!r}.")
    bad = [v for v in out if abs(v) > n - 4]
    if bad:
        raise ValueError(f"`{name}`: every |lag| must be at most n_samples - 4 = {n - 4} (at least "
                         f"4 pairs); got {bad[0]}.")
    return sorted(out)


def _distances(X, metric, exponent, sigma, check_negative_type, n_threads):
    """The n×n distances of the rows in working units (a power of two times the data, so that
    no product of two distances overflows or underflows) and the :class:`Scale` back."""
    from .._core._engine import normalise

    met = resolve_metric(metric, exponent, sigma, allow_precomputed=False,
                         check_negative_type=check_negative_type)
    Xw, met_w, scale = normalise(met, X)
    return pairwise_values(Xw, Xw, met_w, check_n_threads(n_threads)), scale


def _check_alpha(alpha):
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    return float(alpha)


def _kernel_weights(kernel, lags):
    """The squared kernel weights :math:`k^2(j/p)` of the portmanteau, p = max |lag| + 1."""
    if kernel not in KERNELS:
        raise ValueError(f"`kernel` must be one of {KERNELS}; got {kernel!r}.")
    lags = np.abs(np.asarray(lags, dtype=float))
    if kernel == "truncated":
        return np.ones_like(lags)
    return (1.0 - lags / (lags.max() + 1.0)) ** 2


def _lagged_values(DX, DY, lags, estimator):
    st = lag_statistics(DX, DY, lags, estimator)
    if estimator == "V":
        return np.sqrt(st[3]), st
    return st[3], st


# -- the functions -----------------------------------------------------------------

def auto_distance_correlation(x, *, lags=None, estimator="V", exponent=1.0, metric="energy",
                              sigma=1.0, check_negative_type=True, n_threads=None):
    r"""The auto-distance correlation function (ADCF) of a series, lags 1 … L.

    Parameters
    ----------
    x : array_like, Series or DataFrame, shape (n,) or (n, d)
        The series, rows in time order (a multivariate series: one column per component).
    lags : int or sequence of int, optional
        L (the lags 1 … L) or the positive lags wanted; default
        :math:`\min(\lfloor 10 \log_{10} n \rfloor, n - 4)` (statsmodels' ``acf``).
    estimator : {'V', 'U'}, default 'V'
        'V': the distance correlation :math:`\mathcal{R}_n(j)`, the square root of the
        V-statistic dCor² (as :func:`distance_correlation`), in [0, 1]; 'U': the
        bias-corrected distance correlation :math:`R^*_n(j)` (a squared quantity, no root;
        may be negative; R ``bcdcor``).
    exponent, metric, sigma, check_negative_type, n_threads
        As in :func:`distance_stats` (no 'precomputed').

    Returns
    -------
    pandas.Series
        The ADCF indexed by ``lag``.

    Notes
    -----
    At lag j the m = n − j pairs :math:`(x_t, x_{t-j})`, t = j+1 … n, and

    .. math::

        \mathcal{R}_n(j) = \frac{\mathcal{V}_n(x_t, x_{t-j})}
                                {\sqrt{\mathcal{V}_n(x_t, x_t)\,\mathcal{V}_n(x_{t-j}, x_{t-j})}},
        \qquad \mathcal{V}^2_n = \frac{1}{m^2} \sum_{r,l} A_{rl} B_{rl},

    the distance variances over the same m rows (the "sample distance correlation at lag j"
    of Zhou 2012 and of Fokianos and Pitsillou 2017, 2018; R ``dCovTS`` divides by the
    full-series distance variance instead, which differs by O(j/n)).  Unlike Pearson's ACF,
    :math:`\mathcal{R}(j) = 0` only when :math:`x_t` and :math:`x_{t-j}` are independent:
    a GARCH series is uncorrelated at every lag, its ADCF is not 0.  O(n²) memory (one
    n×n distance matrix).

    References
    ----------
    .. [1] Zhou, Z. (2012). Measuring nonlinear dependence in time-series, a distance
       correlation approach. Journal of Time Series Analysis 33(3), 438–457.
    .. [2] Fokianos, K. and Pitsillou, M. (2017). Consistent testing for pairwise dependence
       in time series. Technometrics 59(2), 262–270.
    .. [3] Fokianos, K. and Pitsillou, M. (2018). Testing independence for multivariate time
       series via the auto-distance correlation matrix. Biometrika 105(2), 337–352.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = np.zeros(300)
    >>> for t in range(1, 300):
    ...     x[t] = 0.7 * x[t - 1] + rng.normal()
    >>> es.auto_distance_correlation(x, lags=3).round(3)
    lag
    1    0.667
    2    0.459
    3    0.310
    Name: adcf, dtype: float64
    """
    _check_estimator(estimator)
    X, _, _ = _series(x, "x")
    n = X.shape[0]
    if n < 5:
        raise ValueError(f"`x` must have at least 5 rows (a lag needs at least 4 pairs); got {n}.")
    L = _auto_lags(lags, n)
    D, _ = _distances(X, metric, exponent, sigma, check_negative_type, n_threads)  # dCor: no units
    vals, _ = _lagged_values(D, D, L, estimator)
    return pd.Series(vals, index=pd.Index(L, name="lag"), name="adcf")


def cross_distance_correlation(x, y, *, lags=None, estimator="V", exponent=1.0, metric="energy",
                               sigma=1.0, check_negative_type=True, n_threads=None):
    r"""The cross-distance correlation function: dCor of :math:`x_t` and :math:`y_{t-j}` by lag j.

    Parameters
    ----------
    x, y : array_like, Series or DataFrame, shapes (n,) or (n, p) and (n,) or (n, q)
        Two series observed at the same n times (rows in time order).
    lags : int or sequence of int, optional
        K (the lags −K … K) or the lags wanted (any sign; see Notes); default
        :math:`K = \lceil \log n \rceil` (hyppo's ``max_lag=None``).
    estimator : {'V', 'U'}, default 'V'
        'V': :math:`\mathcal{R}_n(j)`, the square root of the V-statistic dCor², in [0, 1];
        'U': the bias-corrected :math:`R^*_n(j)` (squared scale, no root, may be negative),
        the per-lag term of hyppo's ``DcorrX``.
    exponent, metric, sigma, check_negative_type, n_threads
        As in :func:`distance_stats` (no 'precomputed').

    Returns
    -------
    pandas.Series
        The cross-distance correlations indexed by ``lag``.

    Notes
    -----
    Lag j pairs :math:`x_t` with :math:`y_{t-j}` over the :math:`m = n - |j|` times where both
    exist: j > 0 asks whether the past of y is related to the present of x, j < 0 the
    reverse (the convention of hyppo's ``DcorrX``, whose lags are 0 … M, and of R
    ``dCovTS``'s cross ADCF).  The formula is that of :func:`auto_distance_correlation`
    with :math:`b_{rl} = \|y_{r-j} - y_{l-j}\|^\alpha`.  hyppo's ``DcorrX`` statistic is
    :math:`\sum_{j=0}^{M} \frac{n-j}{n} R^*_n(j)`, with ``estimator='U'`` here; our tests use
    the V-statistics.

    References
    ----------
    .. [1] Fokianos, K. and Pitsillou, M. (2018). Testing independence for multivariate time
       series via the auto-distance correlation matrix. Biometrika 105(2), 337–352.
    .. [2] Mehta, R., Shen, C., Xu, T. and Vogelstein, J. T. (2019). Independence testing for
       multivariate time series. arXiv:1908.06486.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(1)
    >>> y = rng.normal(size=400)
    >>> x = np.r_[0.0, 0.0, y[:-2] ** 2] + 0.3 * rng.normal(size=400)  # y two steps ahead
    >>> c = es.cross_distance_correlation(x, y, lags=3)
    >>> int(c.idxmax()), round(float(c[2]), 2), bool(c.drop(2).max() < 0.15)
    (2, 0.52, True)
    """
    _check_estimator(estimator)
    X, _, ix = _series(x, "x")
    Y, _, _ = _series(y, "y", other=(ix,))
    n = X.shape[0]
    if Y.shape[0] != n:
        raise ValueError(f"`x` and `y` must have the same number of rows (times); got {n} and "
                         f"{Y.shape[0]}.")
    if n < 5:
        raise ValueError(f"`x` and `y` must have at least 5 rows (a lag needs at least 4 "
                         f"pairs); got {n}.")
    L = _cross_lags(lags, n)
    DX, _ = _distances(X, metric, exponent, sigma, check_negative_type, n_threads)  # dCor: no units
    DY, _ = _distances(Y, metric, exponent, sigma, check_negative_type, n_threads)
    vals, _ = _lagged_values(DX, DY, L, estimator)
    return pd.Series(vals, index=pd.Index(L, name="lag"), name="cross_dcor")


# -- results -----------------------------------------------------------------------

class _LagPlot:
    """The figure shared by both results: the per-lag dCor as stems, the permutation critical
    values as a dashed step."""

    def plot(self, ax=None):
        """Draw the per-lag distance correlations (stems) with the permutation critical values
        at level ``alpha`` (dashed; a bar above it is significant at that lag alone), as
        statsmodels' ``plot_acf``.  Needs matplotlib (imported here).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure's axes).

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .._core._plot import axes

        ax = axes(ax)
        lags = np.asarray(self.lags)
        ax.vlines(lags, 0.0, self.dcor, color="C0", lw=2.0)
        ax.plot(lags, self.dcor, "o", color="C0", ms=4)
        ax.plot(lags, self.critical_values, ls="--", color="C1", drawstyle="steps-mid",
                label=f"{1 - self.alpha:.0%} permutation critical value")
        ax.axhline(0.0, color="k", lw=0.8)
        ax.set_xlabel("lag")
        ax.set_ylabel("distance correlation")
        ax.set_title(self._title())
        ax.legend(loc="best", fontsize="small")
        return ax

    def _frame(self, name):
        return pd.DataFrame({name: self.dcor, "statistic": self.lag_statistics,
                             "pvalue": self.pvalues, "critical_value": self.critical_values,
                             "weight": self.weights}, index=pd.Index(self.lags, name="lag"))


@notebook_display
@dataclass(frozen=True, eq=False)
class ADCFTestResult(_LagPlot):
    r"""Result of :func:`adcf_test`.

    Attributes
    ----------
    statistic : float
        The portmanteau :math:`Q = \sum_j k^2(j/p)\,(n - j)\,\mathcal{V}^2_n(j)` (dCov²,
        V-statistic, squared).
    pvalue : float
        Its permutation p-value :math:`(1 + \#\{Q^* \ge Q\}) / (R + 1)`.
    lags : list of int
    dcor : ndarray
        The ADCF :math:`\mathcal{R}_n(j)` (roots) at ``lags``.
    lag_statistics : ndarray
        :math:`(n - j)\,\mathcal{V}^2_n(j)` at each lag.
    pvalues : ndarray
        The permutation p-value of each lag alone (of :math:`\mathcal{R}_n(j)`; no
        multiplicity adjustment).
    critical_values : ndarray
        The :math:`1 - \alpha` quantile of each lag's permuted :math:`\mathcal{R}_n(j)`.
    weights : ndarray
        :math:`k^2(j/p)`.
    null_distribution : ndarray, shape (n_resamples,)
        The permuted Q.
    n_resamples : int
    seed : int or None
        The seed of the permutations (None for a Generator passed as ``rng``).
    kernel : str
    alpha : float
    n_samples : int
    columns : list or None
    """

    statistic: float
    pvalue: float
    lags: list
    dcor: np.ndarray = field(repr=False)
    lag_statistics: np.ndarray = field(repr=False)
    pvalues: np.ndarray = field(repr=False)
    critical_values: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    null_distribution: np.ndarray = field(repr=False)
    n_resamples: int = 0
    seed: int | None = None
    kernel: str = "truncated"
    alpha: float = 0.05
    n_samples: int = 0
    columns: list | None = None

    def to_frame(self):
        """One row per lag: ``adcf``, ``statistic`` ((n − j)·dCov²), ``pvalue``,
        ``critical_value`` and ``weight``."""
        return self._frame("adcf")

    def _title(self):
        return f"ADCF (portmanteau p = {self.pvalue:.3g})"

    def __repr__(self):
        return (f"ADCFTestResult(statistic={self.statistic:.6g}, pvalue={self.pvalue:.4g}, "
                f"lags={_lag_text(self.lags)}, kernel={self.kernel!r}, "
                f"n_resamples={self.n_resamples}, seed={self.seed}, n_samples={self.n_samples})")


@notebook_display
@dataclass(frozen=True, eq=False)
class CrossDistanceCorrelationTestResult(_LagPlot):
    r"""Result of :func:`cross_distance_correlation_test`.

    Attributes
    ----------
    statistic : float
        :math:`Q = \sum_j k^2(j/p)\,(n - |j|)\,\mathcal{V}^2_n(j)` over the lags.
    pvalue : float
        Its p-value from the resampled y (block or row permutations).
    lags : list of int
    dcor : ndarray
        :math:`\mathcal{R}_n(j)` of :math:`x_t` and :math:`y_{t-j}` (roots).
    lag_statistics, pvalues, critical_values, weights, null_distribution
        As in :class:`ADCFTestResult`.
    resampling : str
        'block' or 'permutation'.
    block_length : int
        The length of the blocks (1 with ``resampling='permutation'``).
    n_resamples : int
    seed : int or None
    kernel : str
    alpha : float
    n_samples : int
    columns_x, columns_y : list or None
    valid : bool
        False when the test cannot hold its level on these series: a unit root in x or y (two
        integrated series look dependent to any resampling of rows, the spurious dependence of
        Granger and Newbold 1974); ``validity`` says why.
    validity : str
        The reason ``valid`` is False ('' otherwise).
    block_rule : dict or None
        The inputs of the automatic block length: per column of x and then of y the
        Politis–White length of the column and of its squares, the lag of its first run of
        insignificant autocorrelations (``m_hat``) and its last significant lag up to n/4
        (``reach``), the factors (2 and 3) and the cap n/4; None with ``block_length`` given
        or ``resampling='permutation'``.
    series_checks : tuple of str
        What the time-series diagnostics saw in x and y (a unit root, long memory, a seasonal
        lag; a block longer than n/4), one sentence each, each also a
        ``SeriesDependenceWarning``; or that the series are too short for them (fewer than 50
        rows: nothing checked, no warning).
    """

    statistic: float
    pvalue: float
    lags: list
    dcor: np.ndarray = field(repr=False)
    lag_statistics: np.ndarray = field(repr=False)
    pvalues: np.ndarray = field(repr=False)
    critical_values: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    null_distribution: np.ndarray = field(repr=False)
    resampling: str = "block"
    block_length: int = 1
    n_resamples: int = 0
    seed: int | None = None
    kernel: str = "truncated"
    alpha: float = 0.05
    n_samples: int = 0
    columns_x: list | None = None
    columns_y: list | None = None
    valid: bool = True
    validity: str = ""
    series_checks: tuple = ()
    block_rule: dict | None = field(default=None, repr=False)

    def to_frame(self):
        """One row per lag: ``cross_dcor``, ``statistic`` (:math:`n - |j|` times dCov²), ``pvalue``,
        ``critical_value`` and ``weight``."""
        return self._frame("cross_dcor")

    def _title(self):
        return (f"cross-distance correlation ({self.resampling}, L = {self.block_length}; "
                f"p = {self.pvalue:.3g})")

    def __repr__(self):
        return (f"CrossDistanceCorrelationTestResult(statistic={self.statistic:.6g}, "
                f"pvalue={self.pvalue:.4g}, lags={_lag_text(self.lags)}, "
                f"resampling={self.resampling!r}, block_length={self.block_length}, "
                f"n_resamples={self.n_resamples}, seed={self.seed}, n_samples={self.n_samples}"
                + ("" if self.valid else ", valid=False") + ")")


def _lag_text(lags):
    if len(lags) > 2 and list(lags) == list(range(lags[0], lags[-1] + 1)):
        return f"{lags[0]}..{lags[-1]}"
    return str(list(lags))


def _permutation_results(runs, obs_stats, obs_dcor, w, alpha):
    """``(Q, p, lag p-values, critical values, null of Q)`` from the engine's permuted values
    ``runs = (stats, dcor)``."""
    stats, dcor = runs
    Q, null = float(obs_stats @ w), stats @ w
    tol = 64 * np.finfo(float).eps * max(abs(Q), 1e-300)
    p = float(pvalue_from_null(Q, null, False, tol=tol))
    lag_p = np.asarray(pvalue_from_null(obs_dcor, dcor, False, tol=64 * np.finfo(float).eps))
    crit = np.quantile(dcor, 1.0 - alpha, axis=0) if dcor.shape[0] else np.full(len(w), np.nan)
    return Q, p, lag_p, crit, null


# -- the tests ---------------------------------------------------------------------

def adcf_test(x, *, lags=None, n_resamples=999, kernel="truncated", alpha=0.05, rng=None,
              exponent=1.0, metric="energy", sigma=1.0, check_negative_type=True,
              n_threads=None, backend=None, compute=True):
    r"""Test of serial independence by the ADCF: per lag and a portmanteau over the lags.

    Parameters
    ----------
    x : array_like, Series or DataFrame, shape (n,) or (n, d)
        The series, rows in time order.
    lags : int or sequence of int, optional
        As in :func:`auto_distance_correlation`.
    n_resamples : int, default 999
        Random permutations R of the rows of x (at least 1).
    kernel : {'truncated', 'bartlett'}, default 'truncated'
        The lag weights :math:`k^2(j/p)` of the portmanteau, p = L + 1: 1 at every lag
        ('truncated'), or :math:`(1 - j/p)^2` ('bartlett').
    alpha : float, default 0.05
        The level of the per-lag critical values (``critical_values``, the plot).
    rng : None, int or numpy.random.Generator
        Source of the permutations (the seed recorded in the result).
    exponent, metric, sigma, check_negative_type, n_threads
        As in :func:`auto_distance_correlation`.
    backend : {None, 'threads', 'dask'}, default None
        Where the permuted statistics are computed: this process (None, 'threads') or tasks
        on the current Dask scheduler ('dask'), batches of permutations drawn here as the
        threads draw them — the same p-values for the same ``rng``.  The series stays in
        memory (the test holds its n×n distance matrix; Dask input is refused).
    compute : bool, default True
        With ``backend='dask'``, False returns a Delayed of the result.

    Returns
    -------
    ADCFTestResult

    Notes
    -----
    The null hypothesis is that :math:`x_1, \dots, x_n` are independent and identically
    distributed.  The portmanteau statistic (Fokianos and Pitsillou 2017, eq. (9) with a
    finite set of lags) is

    .. math::

        Q = \sum_{j \in \text{lags}} k^2(j/p)\,(n - j)\,\mathcal{V}^2_n(j),

    :math:`\mathcal{V}^2_n(j)` the V-statistic dCov² of the m = n − j pairs
    :math:`(x_t, x_{t-j})` (divisor m², squared).  The whole series is permuted (its rows in
    a uniformly random order) and every statistic recomputed: under the null the series is
    exchangeable, so the p-values, of Q and of each lag's :math:`\mathcal{R}_n(j)`, are exact
    permutation p-values, :math:`(1 + \#\{T^* \ge T\})/(R + 1)`, whatever n (measured: level
    within two binomial standard errors of 0.05, ``benchmarks/timeseries_level.py``).  The
    independent wild bootstrap of Fokianos and Pitsillou is not offered.  Against serial
    dependence of any form with finite first moments the test is consistent, unlike the
    Ljung–Box test of the Pearson ACF, which misses uncorrelated dependent series (GARCH).
    Costs R gathers of the n×n distance matrix and R·L passes over it.

    References
    ----------
    .. [1] Fokianos, K. and Pitsillou, M. (2017). Consistent testing for pairwise dependence
       in time series. Technometrics 59(2), 262–270.
    .. [2] Fokianos, K. and Pitsillou, M. (2018). Testing independence for multivariate time
       series via the auto-distance correlation matrix. Biometrika 105(2), 337–352.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> n = 2000; x = np.zeros(n); s2 = 1.0                 # GARCH(1,1): uncorrelated
    >>> for t in range(1, n):
    ...     s2 = 0.1 + 0.3 * x[t - 1] ** 2 + 0.6 * s2
    ...     x[t] = np.sqrt(s2) * rng.normal()
    >>> bool(abs(np.corrcoef(x[1:], x[:-1])[0, 1]) < 2 / np.sqrt(n))   # inside the ACF band
    True
    >>> res = es.adcf_test(x, lags=1, n_resamples=19, rng=0)
    >>> res.pvalue, bool(res.dcor[0] > res.critical_values[0])
    (0.05, True)
    >>> res.to_frame().columns.tolist()
    ['adcf', 'statistic', 'pvalue', 'critical_value', 'weight']
    """
    R = check_resamples(n_resamples, low=1)
    alpha = _check_alpha(alpha)
    on_dask = in_memory_backend(backend, compute, "adcf_test", x)
    gen, seed = seeded_rng(rng)
    X, cols, _ = _series(x, "x")
    n = X.shape[0]
    if n < 5:
        raise ValueError(f"`x` must have at least 5 rows (a lag needs at least 4 pairs); got {n}.")
    L = _auto_lags(lags, n)
    w = _kernel_weights(kernel, L)
    D, sx = _distances(X, metric, exponent, sigma, check_negative_type, n_threads)
    dcor, st = _lagged_values(D, D, L, "V")
    engine = PermutedLags(D, D, L, auto=True)
    obs_stats, obs_dcor = engine(np.arange(n))
    perms = np.stack([gen.permutation(n) for _ in range(R)])

    def result(runs):
        Q, p, lag_p, crit, null = _permutation_results(runs, obs_stats, obs_dcor, w, alpha)
        back = lambda v: sx.apply(sx.apply(v))       # noqa: E731 (degree one in each variable)
        return ADCFTestResult(back(Q), p, L, dcor,
                              back(np.array([(n - j) * v for j, v in zip(L, st[0])])), lag_p,
                              crit, w, back(null), R, seed, kernel, alpha, n, cols)

    return _run_permutations(engine, perms, on_dask, compute, result)


def cross_distance_correlation_test(x, y, *, lags=None, n_resamples=999, resampling="block",
                                    block_length=None, kernel="truncated", alpha=0.05, rng=None,
                                    exponent=1.0, metric="energy", sigma=1.0,
                                    check_negative_type=True, n_threads=None, backend=None,
                                    compute=True):
    r"""Test of independence of two time series (each may be autocorrelated) across lags.

    Parameters
    ----------
    x, y : array_like, Series or DataFrame
        As in :func:`cross_distance_correlation`.
    lags : int or sequence of int, optional
        As in :func:`cross_distance_correlation` (default −⌈log n⌉ … ⌈log n⌉).
    n_resamples : int, default 999
        Resamples R of y (at least 1).
    resampling : {'block', 'permutation'}, default 'block'
        'block': y's rows cut into blocks of ``block_length`` consecutive rows (the first
        block of a random length 1 … L) and the blocks put in a random order, each keeping
        its rows' order (Kirch 2007); 'permutation': the rows of y permuted one by one —
        exact only when x or y is serially independent, far too liberal otherwise.
    block_length : int, optional
        L for ``resampling='block'``; default: the automatic length (Notes).
    kernel, alpha, rng, exponent, metric, sigma, check_negative_type, n_threads, backend, compute
        As in :func:`adcf_test`.

    Returns
    -------
    CrossDistanceCorrelationTestResult

    Notes
    -----
    The null hypothesis is that the series :math:`(x_t)` and :math:`(y_t)` are independent;
    each may be serially dependent (stationary, weakly dependent).  The statistic is

    .. math::

        Q = \sum_{j \in \text{lags}} k^2(j/p)\,(n - |j|)\,\mathcal{V}^2_n(j),

    :math:`\mathcal{V}^2_n(j)` the V-statistic dCov² of :math:`(x_t, y_{t-j})` (squared).  x
    is held fixed and y resampled; Q and every lag's :math:`\mathcal{R}_n(j)` are recomputed.
    Permuting single rows would make y serially independent in the resamples, and when both
    series are autocorrelated the permuted Q are then too small: for two independent AR(1)
    series the row permutations rejected at 0.05 in 21–23 % of series with φ = 0.5 and in
    61 % with φ = 0.8, the block permutations in 5.0–7.0 % (n = 200 and 500, 200 series
    each; ``benchmarks/timeseries_level.py``).  Blocks keep the dependence within them.  The automatic block length is the largest over the columns
    of x and of y of 2 × the Politis–White (2004; Patton, Politis and White 2009) block length
    of the column and 3 × that of its squares, at most n / 4 (dependence in the variance, as
    in a GARCH series, shows in the squares).  hyppo's ``DcorrX`` resamples y by the circular
    block bootstrap with blocks of :math:`\lceil\sqrt n\rceil` instead.

    Blocks cannot keep dependence that outlives them.  Each call checks x and y for a unit
    root (augmented Dickey–Fuller not rejected and KPSS rejected, both at 5 %), long memory
    (local Whittle d after an AR(p ≤ 2) prewhitening) and a seasonal lag, and warns
    (``SeriesDependenceWarning``; the
    sentences in ``series_checks``).  Two integrated series look dependent to any resampling of
    rows (Granger and Newbold 1974, "Spurious regressions in econometrics"): with a unit root
    the result says ``valid=False`` and why — difference the series.  Rows indexed by time
    must be in time order, and x and y with indexes must carry the same times.

    References
    ----------
    .. [1] Kirch, C. (2007). Block permutation principles for the change analysis of
       dependent data. Journal of Statistical Planning and Inference 137(7), 2453–2474.
    .. [2] Politis, D. N. and White, H. (2004). Automatic block-length selection for the
       dependent bootstrap. Econometric Reviews 23(1), 53–70.
    .. [3] Mehta, R., Shen, C., Xu, T. and Vogelstein, J. T. (2019). Independence testing for
       multivariate time series. arXiv:1908.06486.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(2)
    >>> def ar1(n, phi):
    ...     e = rng.normal(size=n); z = np.zeros(n)
    ...     for t in range(1, n):
    ...         z[t] = phi * z[t - 1] + e[t]
    ...     return z
    >>> x, y = ar1(300, 0.8), ar1(300, 0.8)                # independent series
    >>> res = es.cross_distance_correlation_test(x, y, lags=2, n_resamples=199, rng=0)
    >>> res.resampling, res.block_length, res.pvalue > 0.05
    ('block', 30, True)
    """
    R = check_resamples(n_resamples, low=1)
    alpha = _check_alpha(alpha)
    if resampling not in ("block", "permutation"):
        raise ValueError(f"`resampling` must be 'block' or 'permutation'; got {resampling!r}.")
    on_dask = in_memory_backend(backend, compute, "cross_distance_correlation_test", x, y)
    gen, seed = seeded_rng(rng)
    X, cx, ix = _series(x, "x")
    Y, cy, _ = _series(y, "y", other=(ix,))
    n = X.shape[0]
    if Y.shape[0] != n:
        raise ValueError(f"`x` and `y` must have the same number of rows (times); got {n} and "
                         f"{Y.shape[0]}.")
    if n < 8:
        raise ValueError(f"`x` and `y` must have at least 8 rows; got {n}.")
    L = _cross_lags(lags, n)
    w = _kernel_weights(kernel, L)
    rule = None
    if resampling == "permutation":
        if block_length not in (None, 1):
            raise ValueError(f"`block_length` applies to resampling='block'; got "
                             f"block_length={block_length!r} with resampling='permutation'.")
        b = 1
    elif block_length is None:
        # scale-free rule: each column by a power of two (its mean cannot overflow), centred,
        # then again to [0.5, 1), so no square under/overflows
        E = np.hstack([X, Y])
        E = np.ldexp(E, -np.frexp(np.max(np.abs(E), axis=0))[1])
        E = E - E.mean(axis=0)
        E = np.ldexp(E, -np.frexp(np.max(np.abs(E), axis=0))[1])
        rule = {}
        b = block_length_rule(E, n, rule)
    else:
        if not is_int(block_length) or not 1 <= block_length <= n // 2:
            raise ValueError(f"`block_length` must be an integer in [1, n_samples // 2 = {n // 2}]; "
                             f"got {block_length!r}.")
        b = int(block_length)
    DX, sx = _distances(X, metric, exponent, sigma, check_negative_type, n_threads)
    DY, sy = _distances(Y, metric, exponent, sigma, check_negative_type, n_threads)
    dcor, st = _lagged_values(DX, DY, L, "V")
    engine = PermutedLags(DX, DY, L)
    obs_stats, obs_dcor = engine(np.arange(n))
    if b == 1:
        perms = np.stack([gen.permutation(n) for _ in range(R)])
    else:
        perms = draw_block_permutations(gen, n, [(0, n)], R, b)
    valid, validity, checks = _cross_checks(X, Y, cx, cy, b, n)

    def result(runs):
        Q, p, lag_p, crit, null = _permutation_results(runs, obs_stats, obs_dcor, w, alpha)
        back = lambda v: sy.apply(sx.apply(v))       # noqa: E731 (degree one in each variable)
        return CrossDistanceCorrelationTestResult(
            back(Q), p, L, dcor, back(np.array([(n - abs(j)) * v for j, v in zip(L, st[0])])),
            lag_p, crit, w, back(null), resampling, b, R, seed, kernel, alpha, n, cx, cy, valid,
            validity, checks, rule)

    return _run_permutations(engine, perms, on_dask, compute, result)


def _run_permutations(engine, perms, on_dask, compute, result):
    """``result(engine.run(perms))``, the permutations in this process or as Dask tasks."""
    if not on_dask:
        return result(engine.run(perms))
    from .._core._dask import finish
    from ._dask import lazy_permuted_lags

    return finish(result, lazy_permuted_lags(engine, perms), compute=compute)


def _cross_checks(X, Y, cx, cy, b, n):
    """``(valid, validity, series_checks)`` of the cross test: the time-series diagnostics on
    x and y (each finding a SeriesDependenceWarning; a unit root makes the test invalid)."""
    found = []
    for V, cols, name in ((X, cx, "x"), (Y, cy, "y")):
        names = ([f"{name}[{c!r}]" for c in cols] if cols is not None else
                 [name] if V.shape[1] == 1 else [f"{name}[:, {j}]" for j in range(V.shape[1])])
        found += [f for f in series_findings(V, names, block_arg="block_length")[0]
                  if f not in found]
    if b > n / 4:
        found.append(("long block", f"a block of {b} rows is longer than n/4 = {n / 4:g}: so few "
                      "blocks barely move y against x; use a smaller block_length"))
    roots = [text for kind, text in found if kind == "unit root"]
    texts = [text for _, text in found]
    for kind, text in found:
        if kind != "too short":
            warn(f"`cross_distance_correlation_test`: {text}.", SeriesDependenceWarning)
    if roots:
        return False, ("a unit root: " + "; ".join(roots) + ". Two integrated series look "
                       "dependent to any resampling of their rows; the p-value is not valid"), \
            tuple(texts)
    return True, "", tuple(texts)


def block_length_rule(E, n, rule=None):
    """The automatic block length of :func:`cross_distance_correlation_test` for the centred
    columns ``E`` of both series (:data:`CROSS_BLOCK_FACTOR`, :data:`CROSS_SQUARES_FACTOR`;
    ``rule``, a dict, receives the rule's inputs)."""
    return _block_length(E, CROSS_BLOCK_FACTOR, CROSS_SQUARES_FACTOR, n // 4, rule)
