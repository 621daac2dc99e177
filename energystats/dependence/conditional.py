r"""Conditional distance covariance and correlation (Wang, Pan, Hu, Tian and Zhang 2015) and
the local-bootstrap test of conditional independence (:func:`conditional_independence_test`).

Partial distance correlation (:mod:`.partial`) and conditional distance correlation answer
different questions; the Notes of :func:`conditional_distance_correlation` and the guide page
"Conditional and partial dependence" say how.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._dask import delayed_value, in_memory_backend
from .._core._display import notebook_display
from .._core import _engine, _memory, _sequential
from .._core._input import paired_variables, variable
from .._core._metrics import resolve_metric
from .._core._pair_sums import _constancy, _matrix_working_units, _power
from .._core._validation import as_square_matrix, check_n_threads, seeded_rng, warn
from . import _conditional as _eng

__all__ = ["conditional_distance_correlation", "conditional_independence_test",
           "ConditionalDistanceCorrelationResult", "ConditionalIndependenceTestResult"]


@notebook_display
@dataclass(frozen=True)
class ConditionalDistanceCorrelationResult:
    r"""Result of :func:`conditional_distance_correlation`.

    Attributes
    ----------
    statistic : float
        :math:`n^{-1}\sum_i \rho^2(x, y \mid z_i)`, the mean of the local
        conditional distance correlations (a square, no root taken; hyppo
        ``ConditionalDcorr(use_cov=False)``, R ``cdcsis::cdcor``).
    test_statistic : float
        :math:`T = n^{-1}\sum_i \omega(z_i)\,\mathcal{V}^2(x, y \mid z_i)`,
        the statistic of :func:`conditional_independence_test`.  Through the
        density weights :math:`\omega = 12\hat f^4` it goes as the scale of z
        to the power :math:`-4d` (and as x's and y's scales): at z scaled by
        1e±300 its value lies outside float64 (0 or inf) although the
        p-value, which compares T with its resamples, is unchanged.
    local_cdcor : ndarray, shape (n,)
        :math:`\rho^2(x, y \mid z_i)` at each observed :math:`z_i` (0 where a
        local distance variance is 0).
    local_cdcov_sqr : ndarray, shape (n,)
        :math:`\mathcal{V}^2(x, y \mid z_i)`, kernel-weighted V-statistics.
    local_weights : ndarray, shape (n,)
        :math:`\omega(z_i) = 12\hat f(z_i)^4`.
    bandwidth : ndarray, shape (d,)
        The Gaussian kernel's bandwidth for each column of z.
    bandwidth_rule : str or None
        The rule that gave it ('scott', 'silverman', 'nrd0'), None when given.
    n_samples : int
    exponent : float or None
    metric : str
    columns_x, columns_y, columns_z : list or None
        DataFrame columns used (None for array input).
    """

    statistic: float
    test_statistic: float
    local_cdcor: np.ndarray = field(repr=False)
    local_cdcov_sqr: np.ndarray = field(repr=False)
    local_weights: np.ndarray = field(repr=False)
    bandwidth: np.ndarray
    bandwidth_rule: str | None
    n_samples: int
    exponent: float | None = 1.0
    metric: str = "energy"
    columns_x: list | None = None
    columns_y: list | None = None
    columns_z: list | None = None
    _index: object = field(default=None, repr=False, compare=False)

    def to_frame(self):
        """One row per observation: ``cdcov_sqr``, ``cdcor`` and ``weight`` at its z."""
        index = self._index
        if index is None:
            index = pd.RangeIndex(self.n_samples, name="row")
        return pd.DataFrame({"cdcov_sqr": self.local_cdcov_sqr, "cdcor": self.local_cdcor,
                             "weight": self.local_weights}, index=index)


@notebook_display
@dataclass(frozen=True)
class ConditionalIndependenceTestResult:
    r"""Result of :func:`conditional_independence_test`.

    Attributes
    ----------
    statistic : float
        :math:`T = n^{-1}\sum_i \omega(z_i)\,\mathcal{V}^2(x, y \mid z_i)`.
    pvalue : float or None
        Local-bootstrap p-value, :math:`(1 + \#\{T^* \ge T\}) / (R + 1)`; None
        with ``n_resamples=0``.
    null_distribution : ndarray, shape (n_resamples,)
        T of the bootstrap samples.
    n_resamples : int
    bandwidth : ndarray, shape (d,)
    estimates : ConditionalDistanceCorrelationResult
        The statistics of the data (local values, mean conditional dCor).
    pvalue_se : float or None
        Monte Carlo standard error of ``pvalue``.
    seed : int or None
        The seed that repeats the run (None when ``rng`` was a Generator).
    columns_x, columns_y, columns_z : list or None
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    n_resamples: int
    bandwidth: np.ndarray
    estimates: ConditionalDistanceCorrelationResult = field(repr=False)
    pvalue_se: float | None = None
    seed: int | None = None
    columns_x: list | None = None
    columns_y: list | None = None
    columns_z: list | None = None

    def to_frame(self):
        """One row: T, p-value and its Monte Carlo error, resamples, mean conditional dCor."""
        return pd.DataFrame({"statistic": [self.statistic], "pvalue": [self.pvalue],
                             "pvalue_se": [self.pvalue_se], "n_resamples": [self.n_resamples],
                             "cdcor": [self.estimates.statistic],
                             "n_samples": [self.estimates.n_samples]},
                            index=pd.Index(["conditional independence"], name="test"))


# -- input validation ------------------------------------------------------------

def _bandwidth_iv(bandwidth, Z, cz):
    """``(h, rule)``: the per-column bandwidths (float64, shape (d,)) and the rule's name."""
    n, d = Z.shape
    if bandwidth is None:
        bandwidth = "half-scott"
    if isinstance(bandwidth, str):
        if bandwidth not in _eng.BANDWIDTH_RULES:
            raise ValueError(f"`bandwidth` must be one of {list(_eng.BANDWIDTH_RULES)}, a positive "
                             f"number or {d} positive number(s) (one per column of `z`); got "
                             f"{bandwidth!r}.")
        h = _eng.rule_bandwidth(Z, bandwidth)
        bad = np.flatnonzero(~(h > 0) | ~np.isfinite(h))
        if bad.size:
            j = int(bad[0])
            name = repr(cz[j]) if cz is not None else j
            raise ValueError(f"`bandwidth`: the {bandwidth!r} rule gives {float(h[j])!r} for "
                             f"column {name} of `z`, which is constant; drop that column or "
                             "pass `bandwidth=` as numbers.")
        return h, bandwidth
    if isinstance(bandwidth, (bool, np.bool_)):
        raise TypeError(f"`bandwidth` must be a rule's name, a positive number or {d} positive "
                        f"number(s); got {bandwidth!r}.")
    try:
        h = np.asarray(bandwidth, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`bandwidth` must be a rule's name, a positive number or {d} positive "
                        f"number(s); got {bandwidth!r}.") from None
    if h.ndim == 0:
        h = np.full(d, float(h))
    if h.ndim != 1 or h.shape[0] != d:
        raise ValueError(f"`bandwidth` must be a number or one number per column of `z` (d={d}); "
                         f"got shape {np.shape(bandwidth)}.")
    if not np.all(np.isfinite(h) & (h > 0)):
        raise ValueError(f"`bandwidth` must be finite and > 0; got {bandwidth!r}.")
    return h, None


def _working_distances(V, met, nt, precomputed):
    """The n×n distance matrix of one variable in working units (largest entry in [0.5, 1))
    and its :class:`~energystats._core._engine.Scale` back to the data's units."""
    D = V if precomputed else _engine.pairwise_values(V, V, met, nt)
    Dw, scale = _matrix_working_units(D)
    return np.asarray(Dw, dtype=np.float64), scale


def _conditional_iv(x, y, z, data, bandwidth, exponent, metric, sigma, check_negative_type,
                    n_threads):
    """Checked inputs of the conditional statistics, once: a dict of the working-unit distance
    matrices, their scales, the kernel weights and what the result records."""
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    nt = check_n_threads(n_threads)
    pre = met.kind == "precomputed"
    if pre:
        X, Y = as_square_matrix(x, "x"), as_square_matrix(y, "y")
        if X.shape != Y.shape:
            raise ValueError(f"`x` and `y` must be distance matrices of the same n; got "
                             f"{X.shape[0]}×{X.shape[0]} and {Y.shape[0]}×{Y.shape[0]}.")
        cx = cy = index = None
    else:  # the rows' number and index, checked once by the input layer
        X, Y, cx, cy, index = paired_variables(x, y, data, with_index=True)
    Z, cz, iz = variable(z, data, "z")
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[0]
    if X.shape[0] != n:
        raise ValueError(f"`z` must have as many rows as `x` and `y` (observations: "
                         f"{X.shape[0]}); got {n}.")
    if index is not None and iz is not None and not index.equals(iz):
        raise ValueError("`z` has a different index from `x` and `y`: the rows must be paired. "
                         "Align them first (e.g. `z = z.loc[x.index]`) or pass arrays.")
    if n < 3:
        raise ValueError(f"the conditional statistics need at least 3 observations; got n={n}.")
    for which, V in (("x", X), ("y", Y)):
        if _constancy(V, pre) == "rows":
            raise ValueError(f"`{which}` is constant (all its rows are equal): its conditional "
                             "distance variance is 0 at every z and the conditional distance "
                             "correlation is undefined (0/0).")
    h, rule = _bandwidth_iv(bandwidth, Z, cz)
    _check_size(n)
    A, sx = _working_distances(X, met, nt, pre)
    B, sy = _working_distances(Y, met, nt, pre)
    W, w, e = _eng.kernel_weights(Z, h)
    # T in the data's units = T in working units (weights w, distances in working units) × 2**p
    p = e + _power(sx) + _power(sy)
    return dict(A=A, B=B, sx=sx, sy=sy, W=W, w=w, e=e, p=p, h=h, rule=rule, n=n, nt=nt,
                met=met, cols=(cx, cy, cz), index=index if index is not None else iz)


def _check_size(n):
    """Refuse at once an n whose matrices exceed ``MAX_BYTES`` or the memory available."""
    need = _eng.MATRICES_HELD * 8.0 * n * n
    if need > _eng.MAX_BYTES:
        n_max = int(math.sqrt(_eng.MAX_BYTES / (_eng.MATRICES_HELD * 8.0)))
        raise MemoryError(f"the conditional distance statistics hold {_eng.MATRICES_HELD} {n}×{n} "
                          f"float64 matrices ({_memory.format_bytes(need)}), above their limit of "
                          f"{_memory.format_bytes(_eng.MAX_BYTES)} (n <= {n_max}); and each costs "
                          "O(n³) time. Work on a random subsample of the rows.")
    _memory.check_fits(need, f"the {_eng.MATRICES_HELD} {n}×{n} matrices of the conditional "
                       "distance statistics", "Work on a random subsample of the rows.")


# -- the statistics --------------------------------------------------------------

def _estimates(prep):
    """The :class:`ConditionalDistanceCorrelationResult` of the prepared data, and T and the
    size of its terms in working units (for the ties of the bootstrap)."""
    S = _eng.local_sums(prep["W"], prep["A"], prep["B"], True, prep["nt"])
    cdcov, size = _eng.cdcov_from_sums(S)
    vx, vy, noise = _eng.local_variances(S)
    with np.errstate(invalid="ignore", divide="ignore"):
        cdcor = np.where(noise, 0.0, cdcov / np.sqrt(np.where(noise, 1.0, vx * vy)))
    if noise.any():
        warn(f"at {int(noise.sum())} of {prep['n']} points z_i the kernel weights leave x or y "
             "with no local spread beyond rounding (a bandwidth small against the spacing of "
             "z, or x or y constant near z_i): the conditional distance correlation is undefined "
             "there and counted as 0, as hyppo and R cdcsis do. A larger `bandwidth` avoids it.",
             UserWarning)
    T = float(np.mean(prep["w"] * cdcov))  # working units, the weights scaled by 2**-e
    size_T = float(np.mean(prep["w"] * size))
    sx, sy, met = prep["sx"], prep["sy"], prep["met"]
    cx, cy, cz = prep["cols"]
    omega = _eng.times_pow2(prep["w"], prep["e"])  # 0 or inf only where beyond float64
    res = ConditionalDistanceCorrelationResult(
        statistic=float(np.mean(cdcor)), test_statistic=_eng.times_pow2(T, prep["p"]),
        local_cdcor=cdcor, local_cdcov_sqr=np.asarray(sy.apply(sx.apply(cdcov))),
        local_weights=omega, bandwidth=prep["h"], bandwidth_rule=prep["rule"], n_samples=prep["n"],
        exponent=met.param if met.name == "energy" else None, metric=met.name,
        columns_x=cx, columns_y=cy, columns_z=cz, _index=prep["index"])
    return res, T, size_T


def conditional_distance_correlation(x, y, z, *, data=None, bandwidth=None, exponent=1.0,
                                     metric="energy", sigma=1.0, check_negative_type=True,
                                     n_threads=None):
    r"""Conditional distance covariance and correlation of x and y given z (Wang et al. 2015).

    Parameters
    ----------
    x, y : array_like, Series, DataFrame, or column name(s) with ``data``
        Shape (n, p) and (n, q) (1-D for one feature); with
        ``metric='precomputed'`` their n×n distance matrices.
    z : array_like, Series, DataFrame, or column name(s) with ``data``
        The conditioning variable, shape (n, d): always data (a Gaussian
        kernel is put on it).
    data : DataFrame, optional
        The table that column names are taken from.
    bandwidth : {None, 'half-scott', 'scott', 'silverman', 'nrd0'}, float or array_like of shape (d,)
        The Gaussian kernel's bandwidth :math:`h_j` for each column of z (a
        diagonal :math:`H`).  None: 'half-scott', half of Scott's rule,
        :math:`h_j = \hat\sigma_j n^{-1/(d+4)} / 2`: the level study
        (``docs/benchmarks/conditional_level.txt``) found Scott's rule itself
        (hyppo's default, 'scott') rejecting 60–82 % of conditionally
        independent data sets in one design (:math:`x, y = |z|` + noise, n = 50 and
        100), half of it within two standard errors of 0.05 in every null
        design, at about the same power;
        'silverman': :math:`\hat\sigma_j (n(d+2)/4)^{-1/(d+4)}` (hyppo's);
        'nrd0': R's ``bw.nrd0`` per column, :math:`0.9\min(\hat\sigma_j,
        \mathrm{IQR}_j/1.34)\,n^{-1/5}` (the default of R ``cdcsis``, the
        authors' package, for one-dimensional z); :math:`\hat\sigma_j` with
        divisor n - 1.  The result records the bandwidth used.
    exponent, metric, sigma, check_negative_type :
        The semimetric of x and of y, as in
        :func:`~energystats.distance_stats` (default :math:`|x - x'|`).
    n_threads : int, optional
        Threads: the distance matrices' kernel and the row blocks of the
        matrix products (one BLAS thread each: the same bits for any count).

    Returns
    -------
    ConditionalDistanceCorrelationResult
        ``statistic`` (mean local conditional dCor), ``test_statistic`` (T),
        the per-point values and the bandwidth.

    Notes
    -----
    With :math:`K_H(u) = \prod_j (2\pi)^{-1/2}h_j^{-1}e^{-u_j^2/(2h_j^2)}`
    and the weights :math:`w_k(z) = K_H(z - z_k) / \sum_l K_H(z - z_l)`, the
    conditional distance covariance at :math:`z_i` is the weighted
    V-statistic

    .. math::

        \mathcal{V}^2(x, y \mid z_i) = S_1 + S_2 - 2S_3, \quad
        S_1 = \sum_{k,l} w_k w_l a_{kl} b_{kl},\;
        S_2 = \sum_{k,l} w_k w_l a_{kl} \sum_{k,l} w_k w_l b_{kl},\;
        S_3 = \sum_{k,l,m} w_k w_l w_m a_{kl} b_{km}

    (:math:`w = w(z_i)`, :math:`a_{kl} = |x_k - x_l|^{\alpha}`,
    :math:`b_{kl}` likewise), equal to
    :math:`\sum_{k,l} w_k w_l \tilde A_{kl}\tilde B_{kl}` with the distance
    matrices double-centred by the weights, :math:`\tilde A_{kl} = a_{kl} -
    \sum_m w_m a_{km} - \sum_m w_m a_{ml} + \sum_{m,m'} w_m w_{m'} a_{mm'}`.
    The local correlation is :math:`\rho^2(x, y \mid z_i) = \mathcal{V}^2(x,
    y \mid z_i) / \sqrt{\mathcal{V}^2(x, x \mid z_i)\mathcal{V}^2(y, y \mid
    z_i)}` (a square: no root is taken, as for hyppo and cdcsis), and
    ``statistic`` is its mean over the n points.  The test statistic is

    .. math::

        T = \frac1n \sum_i \omega(z_i)\,\mathcal{V}^2(x, y \mid z_i), \quad
        \omega(z) = 12 \hat f(z)^4, \quad \hat f(z) = \frac1n \sum_l K_H(z - z_l),

    the weight of the paper, which clears the random denominators:
    :math:`\omega(z_i)\mathcal{V}^2(x, y \mid z_i) = n^{-4}\sum_{j,k,l,m}
    K_{ij}K_{ik}K_{il}K_{im}\, d^S_{jklm}` with :math:`d_{jklm} = (a_{jk} +
    a_{lm} - a_{jl} - a_{km})(b_{jk} + b_{lm} - b_{jl} - b_{km})` and
    :math:`d^S_{jklm} = d_{jklm} + d_{jkml} + d_{jmlk}`.

    *Cost.* Written with weighted row sums (:math:`r_k = \sum_l w_l a_{kl}`,
    so :math:`S_3 = \sum_k w_k r^a_k r^b_k`), each point costs O(n²) instead
    of the O(n⁴) of the four-index form, and all n points are three n×n
    matrix products (five with the local variances of the correlation):
    O(n³) time, BLAS, in row blocks.  Memory: 7 n×n float64 matrices
    (:math:`56n^2` bytes: 224 MB at n = 2 000); above 4 GiB (n > 8 757) the
    call is refused.  Rounding: the three sums cancel to the local value; the
    error is a few eps of the sums' size (``cdcov_sqr`` of points where the
    local value is far below its terms has fewer correct digits, as has
    every O(n²)-per-point form).

    *Conditional versus partial dCor.*  In the population
    :math:`\mathcal{V}^2(x, y \mid z) = 0` for (almost) every z exactly when x
    and y are independent given z (finite first moments): T tends to 0
    under conditional independence and to a positive limit otherwise, at the
    cost of a bandwidth (the kernel sees only neighbours of :math:`z_i`; the
    estimate's bias and variance depend on h).  The partial distance
    correlation of :func:`~energystats.partial_distance_correlation`
    (Székely and Rizzo 2014) has no bandwidth but answers another question:
    it removes from x's and y's U-centred distance matrices their projection
    on z's, a projection *linear in the Hilbert space of U-centred
    matrices*; it can be non-zero when x and y are conditionally independent
    (:math:`x = |z| + 0.3e_1`, :math:`y = |z| + 0.3e_2`: about 0.57, and its
    test rejects every data set of n = 100; see the guide page "Conditional
    and partial dependence") and about 0 when they are not.

    References
    ----------
    .. [1] Wang, X., Pan, W., Hu, W., Tian, Y. and Zhang, H. (2015).
       Conditional distance correlation. J. Amer. Statist. Assoc.
       110(512), 1726–1734.
    .. [2] Székely, G. J. and Rizzo, M. L. (2014). Partial distance
       correlation with methods for dissimilarities. Ann. Statist. 42(6),
       2382–2412.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=100)
    >>> x, y = z + 0.5 * rng.normal(size=100), z + 0.5 * rng.normal(size=100)
    >>> round(es.distance_correlation(x, y), 2)        # dependent, through z
    0.76
    >>> res = es.conditional_distance_correlation(x, y, z)
    >>> round(res.statistic, 2), res.bandwidth.round(3)   # given z: weak
    (0.21, array([0.192]))
    >>> w = x + 0.3 * rng.normal(size=100)                 # w depends on x given z
    >>> round(es.conditional_distance_correlation(x, w, z).statistic, 2)
    0.76
    >>> res.local_cdcor.shape
    (100,)
    """
    prep = _conditional_iv(x, y, z, data, bandwidth, exponent, metric, sigma, check_negative_type,
                           n_threads)
    return _estimates(prep)[0]


def conditional_independence_test(x, y, z, *, data=None, n_resamples=999, bandwidth=None,
                                  exponent=1.0, metric="energy", sigma=1.0,
                                  check_negative_type=True, rng=None, n_threads=None,
                                  backend=None, compute=True):
    r"""Test of conditional independence of x and y given z by the conditional distance
    covariance and its local bootstrap (Wang et al. 2015).

    Parameters
    ----------
    x, y, z, data, bandwidth, exponent, metric, sigma, check_negative_type, n_threads :
        As in :func:`conditional_distance_correlation`.
    n_resamples : int, default 999
        Bootstrap samples R (0: the statistic only, no p-value).
    rng : None, int or numpy.random.Generator
        The source of the bootstrap draws; the result records the seed
        (None is a fresh seed, recorded too).
    backend : {None, 'threads', 'dask'}, default None
        Where the bootstrap samples are computed: here (None, 'threads') or as tasks on the
        current Dask scheduler ('dask'), their uniforms drawn by a chain of tasks exactly as
        the threads draw them — the same p-value for the same ``rng``.  The n×n matrices
        stay in memory (Dask input is refused).
    compute : bool, default True
        With ``backend='dask'``, False returns a Delayed of the result.

    Returns
    -------
    ConditionalIndependenceTestResult
        ``statistic`` (T), ``pvalue``, ``null_distribution``, ``n_resamples``,
        ``bandwidth``, ``seed``, the data's ``estimates``.

    Notes
    -----
    The statistic is :math:`T = n^{-1}\sum_i \omega(z_i)\mathcal{V}^2(x, y \mid
    z_i)` (:func:`conditional_distance_correlation`).  Each bootstrap sample
    keeps :math:`z_1, \dots, z_n` and draws, for every i independently,
    :math:`x^*_i` from :math:`\sum_k w_k(z_i)\delta_{x_k}` and :math:`y^*_i`
    from :math:`\sum_k w_k(z_i)\delta_{y_k}` (the kernel-weighted empirical
    conditional distributions at :math:`z_i`): a sample in which x and y are
    independent given z with about the data's conditional marginals.  The
    p-value is :math:`(1 + \#\{T^* \ge T\})/(R + 1)`; bootstrap values
    within rounding of T (64 eps of its terms) count as ties.  Each
    sample costs what the statistic does, O(n³) (three n×n matrix
    products), so R samples cost R + 1 statistics.  hyppo's
    ``ConditionalDcorr.test`` resamples y only (and R ``cdcsis::cdcov.test``
    x only), from the same weights; this test draws both, as the paper's
    local bootstrap does.

    The level is approximate and depends on the bandwidth: the kernel mixes
    neighbours whose z differ by about h, which in the data (not in the
    bootstrap samples) makes x and y co-vary when both move with z faster
    than their noise.  Measured at n = 100, 800 data sets each, 0.05
    (``benchmarks/conditional_level.py``): with Scott's rule 0.044 for
    :math:`x = z + e_1, y = z^2 + e_2`, 0.076 for :math:`x = z^2 + e_1, y =
    z^2 + e_2`, 0.818 for :math:`x = |z| + 0.3e_1, y = |z| + 0.3e_2`; with
    half of it 0.041, 0.051, 0.049, at about the same power.  Check a
    rejection at half the default bandwidth (guide page "Conditional and
    partial dependence").

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(1)
    >>> z = rng.normal(size=60)
    >>> x, y = z + 0.5 * rng.normal(size=60), z**2 + 0.5 * rng.normal(size=60)
    >>> res = es.conditional_independence_test(x, y, z, n_resamples=199, rng=2)
    >>> res.pvalue > 0.05, res.n_resamples, res.seed
    (True, 199, 2)
    >>> w = z + 0.5 * rng.normal(size=60)
    >>> es.conditional_independence_test(w, w + 0.2 * rng.normal(size=60), z,
    ...                                  n_resamples=199, rng=2).pvalue
    0.005
    """
    R = _sequential.check_resamples(n_resamples)
    on_dask = in_memory_backend(backend, compute, "conditional_independence_test", x, y, z,
                                data)
    gen, seed = seeded_rng(rng)
    prep = _conditional_iv(x, y, z, data, bandwidth, exponent, metric, sigma, check_negative_type,
                           n_threads)
    est, T, size = _estimates(prep)
    cx, cy, cz = prep["cols"]
    if R == 0:
        res = ConditionalIndependenceTestResult(est.test_statistic, None, np.empty(0), 0,
                                                prep["h"], est, None, seed, cx, cy, cz)
        return res if compute else delayed_value(res)

    def result(null):
        from .._core._permutation import pvalue_from_null, pvalue_se

        p = float(pvalue_from_null(T, null, False, tol=_eng.LOCAL_FLOOR * size))
        null = _eng.times_pow2(null, prep["p"])
        return ConditionalIndependenceTestResult(est.test_statistic, p, null, R, prep["h"], est,
                                                 pvalue_se(p, R, False), seed, cx, cy, cz)

    work = {k: prep[k] for k in ("W", "A", "B", "n", "nt", "w")}
    work["cumW"] = np.cumsum(prep["W"], axis=1)
    work["cumW"][:, -1] = 1.0  # a uniform in [0, 1) always falls in a row
    if not on_dask:            # 32 samples' uniforms at a time (64 n floats), drawn in order
        return result(np.concatenate([_bootstrap(work, _draw_uniforms(gen, prep["n"],
                                                                      min(32, R - r0)))
                                      for r0 in range(0, R, 32)]))
    from .._core._dask import finish
    from ._dask import lazy_local_bootstrap

    return finish(result, lazy_local_bootstrap(work, R, gen, _draw_uniforms, _bootstrap),
                  compute=compute)


def _draw_uniforms(gen, n, count):
    """The uniforms of ``count`` bootstrap samples, (count, 2, n): x's draws then y's per
    sample, in the order the samples are taken."""
    return np.stack([gen.random((2, n)) for _ in range(count)]) if count else np.empty((0, 2, n))


def _bootstrap(prep, U):
    """T (working units) of the local-bootstrap samples whose uniforms are ``U`` (m, 2, n): per
    sample, one row of W drawn for each point from x's uniforms, then from y's (``cumW``: W's
    row-wise cumulative sums, the last set to 1)."""
    W, A, B, nt, cumW = prep["W"], prep["A"], prep["B"], prep["nt"], prep["cumW"]
    null = np.empty(U.shape[0])
    for r in range(U.shape[0]):
        I, J = _eng.draw_local(cumW, U[r, 0]), _eng.draw_local(cumW, U[r, 1])
        S = _eng.local_sums(W, A[np.ix_(I, I)], B[np.ix_(J, J)], False, nt)
        null[r] = float(np.mean(prep["w"] * _eng.cdcov_from_sums(S)[0]))
    return null
