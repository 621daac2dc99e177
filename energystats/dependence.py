r"""Distance covariance and distance correlation (Székely, Rizzo and Bakirov 2007).

For paired samples :math:`(x_i, y_i)`, :math:`i = 1..n`, with
:math:`a_{ij} = \rho(x_i, x_j)`, :math:`b_{ij} = \rho(y_i, y_j)` (by default
:math:`\|x_i - x_j\|^{\alpha}`):

* V-statistics: double-centred :math:`A_{ij} = a_{ij} - \bar a_{i\cdot} - \bar
  a_{\cdot j} + \bar a_{\cdot\cdot}` and :math:`\mathcal{V}^2_n(x, y) =
  \frac{1}{n^2}\sum_{i,j} A_{ij} B_{ij}`; :math:`\mathcal{R}^2_n =
  \mathcal{V}^2_n(x, y) / \sqrt{\mathcal{V}^2_n(x, x)\,\mathcal{V}^2_n(y, y)}`.
* U-statistics (bias-corrected; Székely and Rizzo 2014): U-centred
  :math:`\tilde A_{ij} = a_{ij} - \frac{a_{i\cdot}}{n-2} - \frac{a_{\cdot
  j}}{n-2} + \frac{a_{\cdot\cdot}}{(n-1)(n-2)}` (:math:`i \ne j`, 0 on the
  diagonal) and :math:`\Omega_n(x, y) = \frac{1}{n(n-3)}\sum_{i \ne j}\tilde
  A_{ij}\tilde B_{ij}`, an unbiased estimator of :math:`\mathcal{V}^2(x, y)`
  (it can be negative); the bias-corrected distance correlation is
  :math:`\Omega_n(x, y)/\sqrt{\Omega_n(x, x)\,\Omega_n(y, y)}`.

Names say what they return (as in ``dcor``): ``distance_covariance`` and
``distance_correlation`` are the **square roots** of the V-statistics (R
``energy``'s ``dcov`` and ``dcor``); the ``_sqr`` functions return squares, and
with ``estimator="U"`` R's ``dcovU`` and ``bcdcor``.
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _asymptotic, _engine, _sequential, backends
from ._lib import _dependence
from ._metrics import resolve_metric
from ._validation import as_data, as_square_matrix, check_n_threads, warn

__all__ = ["distance_covariance", "distance_correlation", "distance_covariance_sqr",
           "distance_correlation_sqr", "distance_stats", "DistanceStatsResult",
           "independence_test", "IndependenceTestResult", "distance_correlation_ttest",
           "DistanceCorrelationTTestResult", "u_center", "d_center", "u_product",
           "partial_distance_covariance", "partial_distance_correlation",
           "partial_distance_correlation_test", "PartialDistanceTestResult",
           "mutual_independence_test", "MutualIndependenceTestResult",
           "distance_correlation_matrix", "DistanceCorrelationMatrixResult"]

ESTIMATORS = ("V", "U")


@dataclass(frozen=True)
class DistanceStatsResult:
    r"""Distance covariance, variances and correlation, V and U forms (:func:`distance_stats`).

    Attributes
    ----------
    dcov_sqr, dvar_x_sqr, dvar_y_sqr, dcor_sqr : float
        V-statistics :math:`\mathcal{V}^2_n(x, y)`, :math:`\mathcal{V}^2_n(x, x)`,
        :math:`\mathcal{V}^2_n(y, y)` and :math:`\mathcal{R}^2_n` (squares).
    dcov_u, dvar_x_u, dvar_y_u, dcor_u : float
        U-statistics :math:`\Omega_n` (unbiased, may be negative) and the
        bias-corrected distance correlation (R ``dcovU``, ``bcdcor``).
    n_samples : int
    exponent : float or None
        The exponent of :math:`\|x - y\|` (None for other metrics).
    metric : str
    columns_x, columns_y : list or None
        DataFrame columns used (None for array input).
    """

    dcov_sqr: float
    dvar_x_sqr: float
    dvar_y_sqr: float
    dcor_sqr: float
    dcov_u: float
    dvar_x_u: float
    dvar_y_u: float
    dcor_u: float
    n_samples: int
    exponent: float | None = None
    metric: str = "energy"
    columns_x: list | None = None
    columns_y: list | None = None
    #: the roots (dCov, dVarX, dVarY) formed in working units and scaled back once, so that they
    #: are right where their squares leave the float64 range (None: from the squares)
    _roots: tuple | None = field(default=None, repr=False, compare=False)
    #: why x, y have distance variance 0, from the data: None, "rows" (all rows equal) or
    #: "distances" (every distance 0 under the metric)
    _constant: tuple = field(default=(None, None), repr=False, compare=False)

    def _root(self, k, square):
        return self._roots[k] if self._roots is not None else math.sqrt(max(square, 0.0))

    @property
    def dcov(self):
        """:math:`\\mathcal{V}_n(x, y)`, the root (R ``dcov``)."""
        return self._root(0, self.dcov_sqr)

    @property
    def dvar_x(self):
        """:math:`\\mathcal{V}_n(x, x)`, the root."""
        return self._root(1, self.dvar_x_sqr)

    @property
    def dvar_y(self):
        """:math:`\\mathcal{V}_n(y, y)`, the root."""
        return self._root(2, self.dvar_y_sqr)

    @property
    def dcor(self):
        """:math:`\\mathcal{R}_n(x, y)`, the root (R ``dcor``)."""
        return math.sqrt(max(self.dcor_sqr, 0.0))

    @property
    def test_statistic(self):
        """:math:`n\\mathcal{V}^2_n`, the statistic of R ``dcov.test``."""
        return self.n_samples * self.dcov_sqr

    def to_frame(self):
        """Rows V (squares and roots) and U; columns dCov², dVarX², dVarY², dCor², and roots."""
        return pd.DataFrame(
            {"dcov_sqr": [self.dcov_sqr, self.dcov_u],
             "dvar_x_sqr": [self.dvar_x_sqr, self.dvar_x_u],
             "dvar_y_sqr": [self.dvar_y_sqr, self.dvar_y_u],
             "dcor_sqr": [self.dcor_sqr, self.dcor_u],
             "dcov": [self.dcov, np.nan],
             "dcor": [self.dcor, np.nan],
             "dvar_x": [self.dvar_x, np.nan],
             "dvar_y": [self.dvar_y, np.nan]},
            index=pd.Index(["V", "U"], name="estimator"))

    def __repr__(self):
        return (f"DistanceStatsResult(dcov={self.dcov:.6g}, dcor={self.dcor:.6g}, "
                f"dcov_u={self.dcov_u:.6g}, dcor_u={self.dcor_u:.6g}, n_samples={self.n_samples})")


# -- input ---------------------------------------------------------------------

def _variable(v, data, name):
    """One variable as ((n, d) array, columns used, index): from data, a column name or names."""
    if data is not None and (isinstance(v, str) or (isinstance(v, (list, tuple)) and v
                                                   and all(isinstance(c, str) for c in v))):
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"`{name}` as column name(s) needs `data=` to be a DataFrame; got "
                            f"{type(data).__name__}.")
        cols = [v] if isinstance(v, str) else list(v)
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise KeyError(f"`{name}`: column(s) {missing} not found in `data`; it has "
                           f"{list(data.columns)[:8]}.")
        v = data[cols]
    index = v.index if isinstance(v, (pd.Series, pd.DataFrame)) else None
    cols = list(v.columns) if isinstance(v, pd.DataFrame) else None
    arr, _ = as_data(v, name)
    return arr, cols, index


def _pair(x, y, data, with_index=False):
    """``(X, Y, columns of x, columns of y)``, and with ``with_index`` the rows' pandas index
    (x's or y's; None for arrays)."""
    X, cx, ix = _variable(x, data, "x")
    Y, cy, iy = _variable(y, data, "y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"`x` and `y` must have the same number of rows (paired samples); got "
                         f"{X.shape[0]} and {Y.shape[0]}.")
    if ix is not None and iy is not None and not ix.equals(iy):
        raise ValueError("`x` and `y` have different indexes: the rows must be paired. Align "
                         "them first (e.g. `y = y.loc[x.index]`) or pass arrays.")
    return (X, Y, cx, cy, ix if ix is not None else iy) if with_index else (X, Y, cx, cy)


def _strata_labels(strata, index, n):
    """``strata`` as :class:`~energystats._validation.Labels` of the n rows: a Series is aligned
    with the rows' index (``index``, from DataFrame/Series x and y) by the same code as
    energy_test and disco (:func:`~energystats._validation.align_labels`), plain arrays are
    taken by position."""
    from ._validation import align_labels, as_labels

    if index is not None:
        strata = align_labels(pd.DataFrame(index=index), strata, "strata")
    return as_labels(strata, n, "strata")


def _check_estimator(estimator):
    if estimator not in ESTIMATORS:
        raise ValueError(f"`estimator` must be 'V' or 'U'; got {estimator!r}.")
    return estimator


# -- computation ---------------------------------------------------------------

#: pairs × features of one kernel call: short enough that Ctrl-C is honoured between calls
CALL_WORK = 5e8


def _sums(X, Y, met, n_threads, method="auto"):
    """V and U sums of the centred products (in working units) and the two variables' scales."""
    if met.kind != "builtin":
        if met.kind == "precomputed":
            a, b = X, Y
        else:
            a, b = _engine.pairwise_values(X, X, met, n_threads), _engine.pairwise_values(Y, Y, met, n_threads)
        (a, sx), (b, sy) = _matrix_working_units(a), _matrix_working_units(b)
        return _sums_from_matrices(a, b), sx, sy
    # working units: no squared distance can overflow or underflow (a bounded metric's sigma
    # is rescaled with its variable)
    X, met_x, sx = _engine.normalise(met, X)
    Y, met_y, sy = _engine.normalise(met, Y)
    if method != "pairwise" and _fast_1d(X, Y, met, method):
        return _sums_1d(X[:, 0], Y[:, 0], n_threads), sx, sy
    return _streamed_sums(X, Y, met.code, met_x.param, met_y.param, n_threads), sx, sy


def _matrix_working_units(M):
    """A distance matrix in working units, its largest entry in [0.5, 1) (a power of two: exact
    for normal values), and the :class:`~energystats._engine.Scale` back (degree 1), so that
    products of entries neither overflow nor underflow."""
    m = float(np.max(np.abs(M))) if M.size else 0.0
    if m == 0.0 or not math.isfinite(m):
        return M, _engine.Scale()
    e = math.frexp(m)[1]
    return (np.ldexp(M, -e), _engine.Scale(e, 1.0)) if e != 0 else (M, _engine.Scale())


def _power(scale):
    """p with rho in data units = rho in working units × 2**p."""
    return 0.0 if scale.identity else scale.shift * scale.degree


def _times_pow2(v, p):
    """``v × 2**p`` (p any real) with one conversion at the end: inf only where the value is
    beyond float64, 0 or a subnormal only where it is below the normal range."""
    whole = math.floor(p)
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(v * 2.0 ** (p - whole), whole))


def _constancy(V, precomputed):
    """Why a variable has distance variance 0, decided from its data: "rows" when all its rows
    are equal (a distance matrix: all entries 0), else None."""
    if precomputed:
        return None if np.any(V) else "rows"
    return "rows" if V.shape[0] == 0 or bool(np.all(V == V[:1])) else None


#: from this many rows on, 1-D x and y with exponent 1 take the O(n log n) path (below it the
#: streamed O(n²) pass takes well under a second); both agree with the exact rational value of
#: the statistic to about 1e-15 relative (tests/test_dependence.py, against exact integer
#: arithmetic at n = 10⁵)
FAST_1D_MIN_N = 10_000


def _fast_1d(X, Y, met, method="auto"):
    if not (X.shape[1] == 1 and Y.shape[1] == 1 and met.name == "energy" and met.param == 1.0):
        return False
    return method == "sorted" or X.shape[0] >= FAST_1D_MIN_N


def _sorted_row_sums(v):
    """``Σ_j |v_i − v_j|`` for every i as double-double ``(hi, lo)`` arrays (sorted prefix
    sums, O(n log n)) and the order of v (ties in any order)."""
    n = v.size
    order = np.argsort(v)  # the order among ties does not matter
    hi, lo = np.empty(n), np.empty(n)
    _dependence.sorted_row_sums_dd(np.ascontiguousarray(v[order]), hi, lo)
    r_hi, r_lo = np.empty(n), np.empty(n)
    r_hi[order], r_lo[order] = hi, lo
    return (r_hi, r_lo), order


def _csum(a, b=None):
    """Compensated ``Σ a_i`` (or ``Σ a_i b_i``), in order (compiled)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return _dependence.compensated_dot(a, np.ones_like(a) if b is None else
                                       np.ascontiguousarray(b, dtype=np.float64))


def _exact(pair):
    """A double-double ``(hi, lo)`` as an exact rational."""
    return Fraction(pair[0]) + Fraction(pair[1])


def _sums_1d(x, y, n_threads):
    """The V and U sums of :func:`_centred_sums` for 1-D x, y and |x − y|, in O(n log n).

    ``V = T1 − 2 T2 / n + Sa Sb / n²`` and ``U = T1 − 2 T2 / (n − 2) + Sa Sb / ((n − 1)(n − 2))``
    with ``T1 = Σ_ij a_ij b_ij``, ``T2 = Σ_i a_i. b_i.``, ``Sa = a..`` (Huo and Székely 2016):
    the terms are of order n² and their difference of order n, so each is formed in
    double-double and they are combined in exact rational arithmetic; the one rounding is the
    final conversion.
    """
    from . import _memory

    n = x.size
    # the Fenwick trees (64 n bytes) and about twenty work arrays of n values
    _memory.check_fits(64.0 * n + 160.0 * n, f"the O(n log n) path's work arrays (n = {n})",
                       "Use a random subsample of the rows.")
    x = np.asarray(x, dtype=np.float64) - _csum(x) / n  # centred: the expansions cancel little
    y = np.asarray(y, dtype=np.float64) - _csum(y) / n
    if n_threads > 1:  # the two sorts release the GIL
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            (ra, ox), (rb, oy) = pool.map(_sorted_row_sums, (x, y))
    else:
        (ra, ox), (rb, oy) = _sorted_row_sums(x), _sorted_row_sums(y)
    # Σ_{i<j} |x_i − x_j||y_i − y_j| = 2 D − F: D over the pairs ordered alike in x and y
    xs, ys = np.ascontiguousarray(x[ox]), np.ascontiguousarray(y[ox])
    pos = np.empty(n, dtype=np.intp)
    pos[ox] = np.arange(n)
    yorder = pos[oy]  # x positions by increasing y
    h = n // 2
    first = yorder < h
    rank_l, rank_r = np.empty(h, dtype=np.intp), np.empty(n - h, dtype=np.intp)
    rank_l[yorder[first]] = np.arange(h)
    rank_r[yorder[~first] - h] = np.arange(n - h)
    nt = _engine.effective_threads(n_threads, float(n) * math.log2(n) * 100)
    D = _exact(_dependence.dominance_moment_1d(xs, ys, yorder, h, rank_l, rank_r, nt))
    m = np.empty(20)
    _dependence.moments_dd(x, y, ra[0], ra[1], rb[0], rb[1], m)
    sx, sy, sxx, syy, sxy, Sa, Sb, T2, T2a, T2b = (_exact(m[2 * k:2 * k + 2]) for k in range(10))
    F = n * sxy - sx * sy
    T1 = 2 * (2 * D - F)
    Saa, Sbb = 2 * n * sxx - 2 * sx * sx, 2 * n * syy - 2 * sy * sy  # Σ_ij (v_i − v_j)²
    V = (T1 - 2 * T2 / n + Sa * Sb / n**2, Saa - 2 * T2a / n + Sa * Sa / n**2,
         Sbb - 2 * T2b / n + Sb * Sb / n**2)
    if n > 2:
        c1, c2 = Fraction(2, n - 2), Fraction(1, (n - 1) * (n - 2))
        U = (T1 - c1 * T2 + c2 * Sa * Sb, Saa - c1 * T2a + c2 * Sa * Sa, Sbb - c1 * T2b + c2 * Sb * Sb)
    else:
        U = (0, 0, 0)
    return tuple(float(v) for v in V), tuple(float(v) for v in U)


def _streamed_sums(X, Y, code, param_x, param_y, n_threads):
    return _streamed_sums_and_rows(X, Y, code, param_x, param_y, n_threads)[:2]


def _streamed_sums_and_rows(X, Y, code, param_x, param_y, n_threads):
    """The V and U sums of :func:`_centred_sums` by the two streamed passes, and the rows'
    distance sums ``(Σ_j a_ij, Σ_j b_ij)`` of the first."""
    n = X.shape[0]
    if X.dtype != Y.dtype:
        X, Y = X.astype(np.float64), Y.astype(np.float64)
    X, Y = np.ascontiguousarray(X), np.ascontiguousarray(Y)
    XT, YT = np.ascontiguousarray(X.T), np.ascontiguousarray(Y.T)
    d = X.shape[1] + Y.shape[1]
    nt = _engine.effective_threads(n_threads, float(n) * n * d)
    step = int(max(1, CALL_WORK // max(1.0, n * d)))
    rs = np.empty((n, 2))
    for r0 in range(0, n, step):
        _dependence.row_sums(X, XT, Y, YT, code, param_x, param_y, r0, min(n, r0 + step), rs, nt)
    V, U = _centred_sums(rs[:, 0], rs[:, 1], n, lambda *args: _dependence.centred_products(
        X, XT, Y, YT, code, param_x, param_y, *args), nt, step)
    return V, U, rs


def _centring(ra, rb, n):
    """The centring terms ``(va, vb, ga, gb, ua, ub, uga, ugb)`` of the V and U forms from the
    rows' distance sums."""
    Sa, Sb = math.fsum(ra), math.fsum(rb)
    va, vb = ra / n, rb / n
    ga, gb = Sa / n**2, Sb / n**2
    if n > 2:
        ua, ub = ra / (n - 2), rb / (n - 2)
        uga, ugb = Sa / ((n - 1) * (n - 2)), Sb / ((n - 1) * (n - 2))
    else:
        ua = ub = np.zeros(n)
        uga = ugb = 0.0
    return va, vb, ga, gb, ua, ub, uga, ugb


def _centred_sums(ra, rb, n, kernel, nt, step):
    terms = _centring(ra, rb, n)
    out = np.empty((n, 6))
    for r0 in range(0, n, step):
        kernel(*terms, r0, min(n, r0 + step), out, nt)
    return _sums_from_rows(out, *terms[:4])


def _sums_from_rows(out, va, vb, ga, gb):
    """V and U sums from the per-row sums ``out`` (n, 6) of the centred products (pairs j > i)."""
    upper = [math.fsum(out[:, t]) for t in range(6)]
    Ad, Bd = -2.0 * va + ga, -2.0 * vb + gb  # diagonal of the double-centred matrices (a_ii = 0)
    V = (2 * upper[0] + math.fsum(Ad * Bd), 2 * upper[1] + math.fsum(Ad * Ad),
         2 * upper[2] + math.fsum(Bd * Bd))
    U = (2 * upper[3], 2 * upper[4], 2 * upper[5])
    return V, U


def _sums_from_matrices(a, b):
    """The same sums from the n×n matrices (precomputed, callable metrics)."""
    n = a.shape[0]
    ra, rb = a.sum(axis=1), b.sum(axis=1)
    A = a - ra[:, None] / n - ra[None, :] / n + ra.sum() / n**2
    B = b - rb[:, None] / n - rb[None, :] / n + rb.sum() / n**2
    V = (float(np.sum(A * B)), float(np.sum(A * A)), float(np.sum(B * B)))
    if n > 2:
        At = a - ra[:, None] / (n - 2) - ra[None, :] / (n - 2) + ra.sum() / ((n - 1) * (n - 2))
        Bt = b - rb[:, None] / (n - 2) - rb[None, :] / (n - 2) + rb.sum() / ((n - 1) * (n - 2))
        np.fill_diagonal(At, 0.0)
        np.fill_diagonal(Bt, 0.0)
        U = (float(np.sum(At * Bt)), float(np.sum(At * At)), float(np.sum(Bt * Bt)))
    else:
        U = (0.0, 0.0, 0.0)
    return V, U


def _ratio(cov, vx, vy):
    den = vx * vy
    return cov / math.sqrt(den) if den > 0 else 0.0


def _stats(x, y, data, exponent, metric, sigma, n_threads, need_u=False, method="auto", backend=None,
           compute=True):
    met = resolve_metric(metric, exponent, sigma)
    if backends.use_dask(backend, compute, (x, y)):
        return _stats_dask(x, y, data, met, n_threads, need_u, method)
    nt = check_n_threads(n_threads)
    if met.kind == "precomputed":
        X, Y = as_square_matrix(x, "x"), as_square_matrix(y, "y")
        if X.shape != Y.shape:
            raise ValueError(f"`x` and `y` must be distance matrices of the same n; got {X.shape} "
                             f"and {Y.shape}.")
        cx = cy = None
    else:
        X, Y, cx, cy = _pair(x, y, data)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"distance covariance needs at least 2 paired samples; got {n}.")
    if need_u and n < 4:
        raise ValueError(f"the U-statistics (estimator='U') need at least 4 paired samples "
                         f"(they divide by n(n-3)); got n={n}.")
    constant = (_constancy(X, met.kind == "precomputed"), _constancy(Y, met.kind == "precomputed"))
    return _stats_result(*_sums(X, Y, met, nt, method), n, met, cx, cy, constant=constant)


def _stats_result(VU, sx, sy, n, met, cx, cy, constant=(None, None)):
    """The :class:`DistanceStatsResult` from the V and U sums (working units) and the scales.

    Every value is formed in working units and scaled back once (:func:`_times_pow2`): the
    squares (degree one in each variable's rho) overflow to inf or underflow only where their
    true values lie beyond float64, and the roots are scaled back from the roots in working
    units (half the power), so they are right wherever they are themselves in range.
    ``constant``: the variables' constancy decided from the data (:func:`_constancy`); a
    working-unit distance variance of exactly 0 (no underflow is possible there) adds
    "distances"."""
    V, U = VU
    cov_v, xx_v, yy_v = (s / n**2 for s in V)
    if n > 3:
        cov_u, xx_u, yy_u = (s / (n * (n - 3)) for s in U)
    else:
        cov_u = xx_u = yy_u = float("nan")
    constant = tuple(c if c is not None else ("distances" if w == 0 else None)
                     for c, w in zip(constant, (xx_v, yy_v)))
    # correlations are scale-free: formed in working units, before the conversion back
    dcor_v = min(max(_ratio(cov_v, xx_v, yy_v), 0.0), 1.0)
    dcor_u = _ratio(cov_u, xx_u, yy_u) if n > 3 else float("nan")
    # back from working units: degree one in each variable's rho
    px, py = _power(sx), _power(sy)
    roots = (_times_pow2(math.sqrt(max(cov_v, 0.0)), (px + py) / 2),
             _times_pow2(math.sqrt(max(xx_v, 0.0)), px), _times_pow2(math.sqrt(max(yy_v, 0.0)), py))
    cov_v, cov_u = _times_pow2(cov_v, px + py), _times_pow2(cov_u, px + py)
    xx_v, xx_u = _times_pow2(xx_v, 2 * px), _times_pow2(xx_u, 2 * px)
    yy_v, yy_u = _times_pow2(yy_v, 2 * py), _times_pow2(yy_u, 2 * py)
    res = DistanceStatsResult(
        dcov_sqr=max(cov_v, 0.0), dvar_x_sqr=max(xx_v, 0.0), dvar_y_sqr=max(yy_v, 0.0),
        dcor_sqr=dcor_v, dcov_u=cov_u, dvar_x_u=xx_u, dvar_y_u=yy_u, dcor_u=dcor_u,
        n_samples=n, exponent=met.param if met.name == "energy" else None, metric=met.name,
        columns_x=cx, columns_y=cy, _roots=roots, _constant=constant)
    return res


def _stats_dask(x, y, data, met, n_threads, need_u, method):
    """:func:`_stats` on the Dask backend: a Delayed :class:`DistanceStatsResult`."""
    if met.kind != "builtin":
        raise TypeError(f"backend='dask' needs a built-in metric ('energy', 'laplacian', 'gaussian'); "
                        f"got {met.name!r}.")
    cx = cy = None
    if not backends.is_dask(x) and not backends.is_dask(y) and not backends.is_dask(data):
        x, y, cx, cy = _pair(x, y, data)  # in memory: the threads input layer (names, indexes)
    elif data is not None:
        raise TypeError("`data=` (column names) is not available with Dask input; pass the "
                        "columns as Dask arrays (e.g. `ddf[cols].to_dask_array(lengths=True)`).")
    if method == "sorted":
        raise ValueError("`method='sorted'` is not available with backend='dask' (its passes are the "
                         "'pairwise' method); use method='auto'.")
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    X, Y = backends.as_dask_data(x, "x"), backends.as_dask_data(y, "y")
    n = X.n
    if Y.n != n:
        raise ValueError(f"`x` and `y` must have the same number of rows (paired samples); got "
                         f"{n} and {Y.n}.")
    if n < 2:
        raise ValueError(f"distance covariance needs at least 2 paired samples; got {n}.")
    if need_u and n < 4:
        raise ValueError(f"the U-statistics (estimator='U') need at least 4 paired samples "
                         f"(they divide by n(n-3)); got n={n}.")
    import dask

    VU, sx, sy, prep, _ = backends.lazy_dependence_sums(X, Y, met, nt, parts=True)
    constant = dask.delayed(lambda p: p["constant"], pure=True)(prep)
    return dask.delayed(_stats_result, pure=True)(VU, sx, sy, n, met, cx, cy, constant)


def _finish(res, fn, compute):
    """``fn(res)``, or for a Delayed ``res`` the Delayed of it (computed unless ``compute=False``)."""
    if backends.is_dask(res):
        import dask

        out = dask.delayed(fn, pure=True)(res)
        return out.compute() if compute else out
    return fn(res)


def _check_constant(res, what):
    """A ValueError when x or y has distance variance 0, decided from the data (all rows equal)
    or from the working-unit variance (every distance 0 under the metric), never from a
    variance that underflowed in the data's units."""
    for which, why in zip("xy", res._constant):
        if why == "rows":
            raise ValueError(f"`{which}` is constant (all its rows are equal): its distance variance "
                             f"is 0 and the {what} is undefined (0/0). R energy returns 0 here.")
        if why == "distances":
            raise ValueError(f"`{which}`: every distance between its rows is 0 under the metric "
                             f"({res.metric!r}), so its distance variance is 0 and the {what} is "
                             "undefined (0/0). R energy returns 0 here.")


# -- public functions ------------------------------------------------------------

def distance_stats(x, y, *, data=None, exponent=1.0, metric="energy", sigma=1.0, method="auto",
                   n_threads=None, backend=None, compute=True):
    r"""Distance covariance, variances and correlation of paired samples, V and U forms.

    Parameters
    ----------
    x, y : array_like, Series, DataFrame, or column name(s) with ``data``
        Paired samples, shape (n, p) and (n, q) (1-D for one feature);
        rows are pairs.  With ``metric='precomputed'``, the n×n distance
        matrices of x and of y.
    data : DataFrame, optional
        With column names as ``x``/``y``: the table they are taken from.
    exponent : float, default 1.0
        :math:`\alpha` in :math:`\|x - y\|^{\alpha}`, :math:`0 < \alpha < 2`
        for a consistent test of independence (R's ``index``).
    metric : {'energy', 'laplacian', 'gaussian', 'precomputed'} or callable
        The semimetric, applied to x and to y.
    sigma : float, default 1.0
        Bandwidth of 'laplacian' and 'gaussian'.
    method : {'auto', 'sorted', 'pairwise'}, default 'auto'
        'sorted': for 1-D x and y with ``exponent=1``, the O(n log n)
        algorithm of Huo and Székely (2016) (sorting and Fenwick trees, on
        centred data, compensated sums); 'pairwise': the streamed O(n²)
        pass; 'auto': 'sorted' from 10 000 rows on (where it applies), else
        'pairwise'.  The sorted path combines three sums whose difference is
        about n times smaller than they are: it agrees with the pairwise
        pass to 1e-11 relative or better at n = 2000 and to about 1e-10 (V)
        and 1e-9 (U) at n = 20 000.
    n_threads : int, optional
        Threads of the compiled kernels (with the Dask backend: per task, default 1).
    backend : {None, 'threads', 'dask'}, default None
        Where the two passes run: this process's threads, or Dask tasks over
        ranges of rows (each task holds x and y, O(n·(p + q)), never an n×n
        matrix).  None: 'dask' when ``x`` or ``y`` is a Dask array.  The
        same kernels on the same rows: the same bits as the threads backend.
        Column names with ``data=`` and ``method='sorted'`` are not
        available on Dask; see the guide page "Scaling out".
    compute : bool, default True
        With the Dask backend, ``False`` returns a
        :class:`dask.delayed.Delayed` of the result.

    Returns
    -------
    DistanceStatsResult
        V-statistics (squares, with their roots as properties ``dcov``,
        ``dcor``) and U-statistics; ``.to_frame()`` tabulates them.

    Notes
    -----
    See the module docstring for the formulas.  Every value is formed in
    working units (each variable, or distance matrix, times a power of two
    that brings its largest entry into [0.5, 1)) and scaled back once: the
    roots ``dcov``, ``dvar_x``, ``dvar_y`` are right wherever they are
    themselves floats, and the squares and U-statistics overflow to inf or
    underflow to 0 only where their true values lie beyond float64.  No n×n
    matrix is formed for the built-in metrics: row sums in a first pass, then the centred products
    pair by pair in a second (compensated sums; the same bits for any thread
    count).

    References
    ----------
    .. [1] Székely, G. J., Rizzo, M. L. and Bakirov, N. K. (2007). Measuring
       and testing dependence by correlation of distances. Ann. Statist.
       35(6), 2769–2794.
    .. [2] Székely, G. J. and Rizzo, M. L. (2014). Partial distance
       correlation with methods for dissimilarities. Ann. Statist. 42(6),
       2382–2412.

    Examples
    --------
    >>> import energystats as es
    >>> from energystats.datasets import load_iris
    >>> iris = load_iris()
    >>> x, y = iris.iloc[:50, :4].to_numpy(), iris.iloc[50:100, :4].to_numpy()
    >>> res = es.distance_stats(x, y)
    >>> round(res.dcov, 7), round(res.dcor, 7), round(res.dcov_u, 9), round(res.dcor_u, 7)
    (0.1025087, 0.3060479, -0.002748351, -0.0271709)
    """
    if method not in ("auto", "sorted", "pairwise"):
        raise ValueError(f"`method` must be 'auto', 'sorted' or 'pairwise'; got {method!r}.")
    return _finish(_stats(x, y, data, exponent, metric, sigma, n_threads, method=method, backend=backend,
                          compute=compute), lambda r: r, compute)


def distance_covariance_sqr(x, y, *, data=None, estimator="V", exponent=1.0, metric="energy",
                            sigma=1.0, n_threads=None, backend=None, compute=True):
    r"""Squared distance covariance: :math:`\mathcal{V}^2_n(x, y)` (V) or :math:`\Omega_n(x, y)` (U).

    ``estimator='V'`` is the square of R ``energy``'s ``dcov``; ``'U'`` is R's
    ``dcovU`` (unbiased, may be negative; n ≥ 4).  Other parameters as in
    :func:`distance_stats`.

    Examples
    --------
    >>> import energystats as es
    >>> x, y = [1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]
    >>> round(es.distance_covariance_sqr(x, y), 7), round(es.distance_covariance_sqr(x, y, estimator="U"), 5)
    (0.6851852, -0.88889)
    """
    _check_estimator(estimator)
    res = _stats(x, y, data, exponent, metric, sigma, n_threads, need_u=estimator == "U",
                 backend=backend, compute=compute)
    return _finish(res, lambda r: r.dcov_sqr if estimator == "V" else r.dcov_u, compute)


def distance_correlation_sqr(x, y, *, data=None, estimator="V", exponent=1.0, metric="energy",
                             sigma=1.0, n_threads=None, backend=None, compute=True):
    r"""Squared distance correlation :math:`\mathcal{R}^2_n` (V) or the bias-corrected one (U).

    ``estimator='U'`` is R ``energy``'s ``bcdcor`` (may be negative).  A
    constant ``x`` or ``y`` (distance variance 0) is an error: the ratio is
    0/0.  Other parameters as in :func:`distance_stats`.

    Examples
    --------
    >>> import energystats as es
    >>> x, y = [1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]
    >>> round(es.distance_correlation_sqr(x, y), 7), round(es.distance_correlation_sqr(x, y, estimator="U"), 5)
    (0.3066099, -0.41613)
    """
    _check_estimator(estimator)
    res = _stats(x, y, data, exponent, metric, sigma, n_threads, need_u=estimator == "U",
                 backend=backend, compute=compute)

    def pick(r):
        _check_constant(r, "distance correlation")
        return r.dcor_sqr if estimator == "V" else r.dcor_u

    return _finish(res, pick, compute)


def distance_covariance(x, y, *, data=None, exponent=1.0, metric="energy", sigma=1.0, n_threads=None,
                        backend=None, compute=True):
    r"""Distance covariance :math:`\mathcal{V}_n(x, y)`, the square root of the V-statistic (R ``dcov``).

    Parameters as in :func:`distance_stats`.

    Examples
    --------
    >>> import energystats as es
    >>> round(es.distance_covariance([1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]), 7)
    0.8277591
    """
    return _finish(_stats(x, y, data, exponent, metric, sigma, n_threads, backend=backend, compute=compute),
                   lambda r: r.dcov, compute)


def distance_correlation(x, y, *, data=None, exponent=1.0, metric="energy", sigma=1.0, n_threads=None,
                         backend=None, compute=True):
    r"""Distance correlation :math:`\mathcal{R}_n(x, y)`, the square root (R ``dcor``), in [0, 1].

    Parameters as in :func:`distance_stats`.  0 characterises independence in
    the population (for :math:`0 < \alpha < 2` and finite moments); 1 only for
    :math:`y = a + b\,xQ` (Q orthogonal).

    Examples
    --------
    >>> import energystats as es
    >>> round(es.distance_correlation([1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]), 7)
    0.5537237
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": [1, 7, 5, 5, 6, 2]})
    >>> round(es.distance_correlation("a", "b", data=df), 7)
    0.5537237
    """
    res = _stats(x, y, data, exponent, metric, sigma, n_threads, backend=backend, compute=compute)

    def pick(r):
        _check_constant(r, "distance correlation")
        return r.dcor

    return _finish(res, pick, compute)


# -- permutation test of independence ---------------------------------------------

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
    estimates : DistanceStatsResult
        dCov, dCor and the distance variances (V and U) of the data.
    pvalue_se : float or None
        Monte Carlo standard error of ``pvalue`` (0 when exact).
    seed : int or None
    columns_x, columns_y : list or None
    strata : list or None
        Strata within which ``y`` was permuted.
    pvalue_method : str
        'full', 'sequential', 'decision' or 'asymptotic' (the χ² test, no
        permutations); with 'sequential' and 'decision' ``n_resamples``
        counts the permutations used before the stop, and ``pvalue_se`` is
        None except for 'full'.
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
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

    def to_frame(self):
        """One row: statistic, p-value and its Monte Carlo error, dCov, dCor (V and U), n."""
        e = self.estimates
        return pd.DataFrame(
            {"statistic": [self.statistic], "pvalue": [self.pvalue], "pvalue_se": [self.pvalue_se],
             "n_resamples": [self.n_resamples], "dcov": [e.dcov], "dcor": [e.dcor],
             "dcov_u": [e.dcov_u], "dcor_u": [e.dcor_u], "n_samples": [e.n_samples]},
            index=pd.Index([f"independence ({self.statistic_name})"], name="test"))

    def __repr__(self):
        p = "None" if self.pvalue is None else f"{self.pvalue:.4g}"
        seq = "" if self.pvalue_method == "full" else f", pvalue_method={self.pvalue_method!r}"
        if self.pvalue_method == "decision":
            seq += f", decision={self.decision!r}"
        return (f"IndependenceTestResult(statistic={self.statistic:.6g}, pvalue={p}, "
                f"statistic_name={self.statistic_name!r}, n_resamples={self.n_resamples}, "
                f"exact={self.exact}, dcor={self.estimates.dcor:.6g}{seq})")


def _double_centred(D):
    """``D − row means − column means + grand mean`` of a symmetric matrix, in place."""
    m = D.mean(axis=1)
    g = math.fsum(m) / D.shape[0]
    D -= m[:, None]
    D -= m[None, :]
    D += g
    return D


def _centred_matrix(X, met, nt):
    """The double-centred n×n distance matrix of one variable (working units) and its scale."""
    if met.kind != "builtin":
        D = X if met.kind == "precomputed" else _engine.pairwise_values(X, X, met, nt)
        Dw, sx = _matrix_working_units(D)
        return _double_centred(np.array(Dw, dtype=np.float64) if Dw is X else Dw), sx
    Xw, mx, sx = _engine.normalise(met, X)
    return _double_centred(_engine.pairwise_values(Xw, Xw, mx, nt)), sx


def _centred_matrices(X, Y, met, nt):
    """Double-centred n×n matrices of x and y (working units), memory checked first, and the
    two variables' scales back to the data's units."""
    from . import _memory

    n = X.shape[0]
    _memory.check_fits(2 * 8.0 * n * n, f"the two {n}×{n} distance matrices of the permutation test",
                       "Test a random subsample of the rows, or use distance_correlation_ttest "
                       "(no permutations).")
    (A, sx), (B, sy) = _centred_matrix(X, met, nt), _centred_matrix(Y, met, nt)
    return A, B, sx, sy


def _sum_sq(M):
    """``Σ M²`` without BLAS: OpenBLAS's threads spin for ~0.1 s after a call, holding a core
    the permutation kernel's threads then wait for (seen: the first 0.1 s of the kernel ran at
    about 70 % speed after ``np.vdot``)."""
    return float(np.einsum("ij,ij->", M, M))


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


def _products(X, Y, met, nt, memory_budget):
    """The sums of the permutation test: from the centred matrices when the two fit within
    ``memory_budget`` (bytes, already lowered to the memory available; or the metric is not
    built in), else streamed.  Also the scales."""
    n = X.shape[0]
    if met.kind == "builtin" and 16.0 * n * n > memory_budget:
        kernel = _StreamedProducts(X, Y, met, nt)
        return kernel, kernel.sx, kernel.sy
    A, B, sx, sy = _centred_matrices(X, Y, met, nt)
    return _MatrixProducts(A, B, nt), sx, sy


def _permutation_pvalue(kernel, perms, total, is_exact, rule=None):
    """``(observed Σ A_ij B_ij, the permuted sums, p-value)``: the p-value by the package's rule
    on the sums themselves, permutations that reproduce the observed sum up to its rounding
    error (64 eps of the Cauchy–Schwarz bound √(ΣA² ΣB²) of its terms) counting as ties.
    A sequential ``rule`` (:mod:`energystats._sequential`) sees the permutations in growing
    batches and stops them; the permuted sums are then those it used."""
    from ._permutation import pvalue_from_null

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
    from ._permutation import draw_permutations

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


def independence_test(x, y, *, data=None, statistic=None, n_resamples=999, exponent=1.0,
                      metric="energy", sigma=1.0, rng=None, exact=None, strata=None,
                      memory_budget=2**30, n_threads=None, backend=None, compute=True,
                      pvalue_method="full", sequential_h=10, alpha=0.05):
    r"""Permutation test of independence of x and y by distance covariance.

    Parameters
    ----------
    x, y, data, exponent, metric, sigma, n_threads
        As in :func:`distance_stats`.
    statistic : {'dcov', 'dcor', 'bcdcor'}, optional
        :math:`n\mathcal{V}^2_n` (R ``dcov.test``, the default of the
        permutation p-values) or :math:`\mathcal{R}^2_n` (R ``dcor.test``);
        the two give the same p-value (the distance variances do not change
        under permutation).  'bcdcor', :math:`nR^*_n` with :math:`R^*_n` the
        bias-corrected distance correlation, is the statistic of
        ``pvalue_method='asymptotic'`` (and its default), and of it only.
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
    pvalue_method : {'full', 'sequential', 'decision', 'asymptotic'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop permuting early: as in :func:`energystats.energy_test` (Besag &
        Clifford's sequential p-value, or Gandy's decision whether p ≤
        ``alpha``); random permutations only, not on the Dask backend.
        'asymptotic': no permutations, the χ² test of distance correlation
        (see Notes); opt-in, its level measured (the validity table is on
        the guide's testing page), not with ``strata`` or ``exact=True``;
        available on the Dask backend.

    Returns
    -------
    IndependenceTestResult

    Notes
    -----
    The null hypothesis is that x and y are independent (with ``strata``:
    independent within every stratum, the rows exchangeable within strata).
    The p-value is :math:`(1 + \#\{T^* \ge T\}) / (R + 1)` over R
    permutations, as in the package's other tests, with exact ties counted
    (the allowance is the rounding error of :math:`\sum A_{ij}B_{ij}`, 64 eps
    times :math:`\sqrt{\sum A^2 \sum B^2}`).  R's ``dcov.test`` counts
    strictly greater values in the same rule.  The test is consistent
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

    References
    ----------
    .. [1] Székely, G. J., Rizzo, M. L. and Bakirov, N. K. (2007). Measuring
       and testing dependence by correlation of distances. Ann. Statist.
       35(6), 2769–2794.
    .. [2] Shen, C., Panda, S. and Vogelstein, J. T. (2022). The chi-square
       test of distance correlation. J. Comput. Graph. Statist. 31(1),
       254–262.

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
    """
    from ._permutation import Strata, pvalue_se
    from ._validation import check_int, seeded_rng

    if statistic not in (None, "dcov", "dcor", "bcdcor"):
        raise ValueError(f"`statistic` must be 'dcov', 'dcor' or 'bcdcor'; got {statistic!r}.")
    if exact not in (None, True, False):
        raise ValueError(f"`exact` must be None, True or False; got {exact!r}.")
    if pvalue_method == _asymptotic.ASYMPTOTIC:
        if statistic not in (None, "bcdcor"):
            raise ValueError(f"`statistic={statistic!r}`: the χ² test (pvalue_method='asymptotic') "
                             "is a test of the bias-corrected distance correlation; pass "
                             "statistic='bcdcor' or leave it out.")
        _asymptotic.check_options("independence_test", exact, strata)
        est = _stats(x, y, data, exponent, metric, sigma, n_threads, need_u=True, backend=backend,
                     compute=compute)
        return _finish(est, _chi2_result, compute)
    if statistic == "bcdcor":
        raise ValueError("`statistic='bcdcor'` is the statistic of the χ² test; it needs "
                         "pvalue_method='asymptotic' (its permutation null is not implemented).")
    statistic = "dcov" if statistic is None else statistic
    R = check_int(n_resamples, "n_resamples", 0)
    gen, seed = seeded_rng(rng)
    dask = backends.use_dask(backend, compute, (x, y, strata))
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha, exact=exact, dask=dask,
                                 also=(_asymptotic.ASYMPTOTIC,))
    if dask:
        return _independence_dask(x, y, data, statistic, R, exponent, metric, sigma, gen, seed, exact,
                                  strata, n_threads, memory_budget, compute)
    est = _stats(x, y, data, exponent, metric, sigma, n_threads)
    met = resolve_metric(metric, exponent, sigma)
    nt = check_n_threads(n_threads)
    index = None
    if met.kind == "precomputed":
        X, Y = as_square_matrix(x, "x"), as_square_matrix(y, "y")
    else:
        X, Y, _, _, index = _pair(x, y, data, with_index=True)
    n = X.shape[0]
    st = None
    if strata is not None:
        lab = _strata_labels(strata, index, n)
        st = Strata(lab.codes)
    _check_constant(est, "test of independence")
    kernel, sx, sy = _products(X, Y, met, nt, _permutation_budget(memory_budget))
    is_exact, total, perms = _permutation_plan(n, st, R, False if rule is not None else exact, gen)
    # report the statistic in the data's units
    stat_out = est.test_statistic if statistic == "dcov" else est.dcor_sqr
    if R == 0 and not is_exact:
        return IndependenceTestResult(stat_out, None, np.empty(0), statistic, 0, False, est,
                                      None, None, est.columns_x, est.columns_y,
                                      None if st is None else list(lab.groups))
    _, null, p = _permutation_pvalue(kernel, perms, total, is_exact, rule)
    if statistic == "dcov":  # n V² is of degree one in each variable's rho; dCor is scale-free
        null = sy.apply(sx.apply(null / n))
    else:
        null = null / math.sqrt(kernel.norms[0] * kernel.norms[1])
    used = int(null.shape[0])
    return IndependenceTestResult(stat_out, p, null, statistic, used, bool(is_exact), est,
                                  None if rule is not None else pvalue_se(p, used, is_exact),
                                  None if is_exact else seed,
                                  est.columns_x, est.columns_y,
                                  None if st is None else list(lab.groups),
                                  "full" if rule is None else rule.name,
                                  None if rule is None else rule.decision)


def _chi2_result(est):
    """The χ² test of distance correlation from the estimates (:mod:`energystats._asymptotic`)."""
    _check_constant(est, "χ² test of independence")
    n = est.n_samples
    return IndependenceTestResult(n * est.dcor_u, _asymptotic.chi2_dcor_pvalue(n, est.dcor_u),
                                  np.empty(0), "bcdcor", 0, False, est, None, None, est.columns_x,
                                  est.columns_y, None, _asymptotic.ASYMPTOTIC, None)


def _independence_dask(x, y, data, statistic, R, exponent, metric, sigma, gen, seed, exact, strata,
                       n_threads, memory_budget, compute):
    """:func:`independence_test` on the Dask backend (the streamed kernels as tasks)."""
    from ._permutation import Strata

    if memory_budget != 2**30:
        raise ValueError("`memory_budget` bounds the threads backend's working memory; with "
                         "backend='dask' each task holds x, y and a batch of permutations, so leave "
                         "it at its default.")
    met = resolve_metric(metric, exponent, sigma)
    est = _stats(x, y, data, exponent, metric, sigma, n_threads, backend="dask")  # validates
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    index = None
    if not backends.is_dask(x) and not backends.is_dask(y):
        # in memory: the threads input layer (names, indexes)
        x, y, _, _, index = _pair(x, y, data, with_index=True)
    X, Y = backends.as_dask_data(x, "x"), backends.as_dask_data(y, "y")
    n = X.n
    st = lab = None
    if strata is not None:
        if backends.is_dask(strata):
            strata = strata.compute()
        lab = _strata_labels(strata, index, n)
        st = Strata(lab.codes)
    is_exact, total, perms = _permutation_plan(n, st, R, exact, gen)
    VU, sx, sy, prep, terms = backends.lazy_dependence_sums(X, Y, met, nt, parts=True)
    obs = null = None
    if is_exact or R > 0:
        obs, null = backends.lazy_permuted_sums(prep, terms, n, X.d + Y.d, R=R, gen=gen, strata=st,
                                                exact_perms=perms(0, total) if is_exact else None,
                                                n_threads=nt)
    return backends.finish(_independence_finish, est, obs, null, VU, sx, sy, statistic, n, total,
                           is_exact, seed, None if lab is None else list(lab.groups), compute=compute)


def _independence_finish(est, obs, null, VU, sx, sy, statistic, n, total, is_exact, seed, strata_groups):
    from ._permutation import pvalue_from_null, pvalue_se

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


def distance_correlation_ttest(x, y, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
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
    est = _stats(x, y, data, exponent, metric, sigma, n_threads, need_u=True, backend=backend,
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


# -- centring helpers and partial distance covariance ------------------------------

def _square(D, name):
    D = as_square_matrix(D, name)
    if D.shape[0] < 4:
        raise ValueError(f"`{name}`: U-centring needs n >= 4 (it divides by n - 2 and n(n - 3)); "
                         f"got n={D.shape[0]}.")
    return D


def u_center(D):
    r"""U-centred matrix of a distance matrix (R ``energy``'s ``U_center``).

    :math:`\tilde D_{ij} = D_{ij} - \frac{D_{i\cdot}}{n-2} - \frac{D_{\cdot j}}{n-2} +
    \frac{D_{\cdot\cdot}}{(n-1)(n-2)}` for :math:`i \ne j`, 0 on the diagonal
    (Székely and Rizzo 2014).

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> D = np.abs(np.subtract.outer(np.arange(1.0, 6), np.arange(1.0, 6)))
    >>> np.round(es.u_center(D)[0], 4)
    array([ 0.    , -1.3333,  0.    ,  0.6667,  0.6667])
    """
    out, scale = _u_center_working(_square(D, "D"))
    return scale.apply(out, inplace=True) if not scale.identity else out


def _u_center_working(D, rescale=True):
    """The U-centred matrix in working units (:func:`_matrix_working_units`: no row sum can
    overflow) and the Scale back (``rescale=False``: D is in working units already)."""
    D, scale = _matrix_working_units(D) if rescale else (D, _engine.Scale())
    n = D.shape[0]
    r = D.sum(axis=1)
    out = D - r[:, None] / (n - 2) - r[None, :] / (n - 2) + math.fsum(r) / ((n - 1) * (n - 2))
    np.fill_diagonal(out, 0.0)
    return out, scale


def d_center(D):
    r"""Double-centred matrix :math:`D_{ij} - \bar D_{i\cdot} - \bar D_{\cdot j} + \bar D_{\cdot\cdot}`
    (R ``energy``'s ``D_center``).

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> D = np.abs(np.subtract.outer(np.arange(1.0, 6), np.arange(1.0, 6)))
    >>> np.round(es.d_center(D)[0], 4)
    array([-2.4, -0.8,  0.4,  1.2,  1.6])
    """
    D = as_square_matrix(D, "D")
    Dw, scale = _matrix_working_units(D)  # no row sum can overflow
    out = _double_centred(np.array(Dw, dtype=np.float64) if Dw is D else Dw)
    return scale.apply(out, inplace=True) if not scale.identity else out


def u_product(U, V):
    r""":math:`\frac{1}{n(n-3)}\sum_{i \ne j} U_{ij} V_{ij}` of two U-centred matrices
    (R ``energy``'s ``U_product``): the unbiased distance covariance when
    ``U``, ``V`` are the U-centred distance matrices of x and y.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> d = lambda v: np.abs(np.subtract.outer(v, v))
    >>> round(es.u_product(es.u_center(d(np.arange(1.0, 6))), es.u_center(d(np.array([1.0, 3, 2, 5, 4])))), 6)
    0.533333
    """
    U = np.asarray(U, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    if U.ndim != 2 or U.shape != V.shape or U.shape[0] != U.shape[1]:
        raise ValueError(f"`U` and `V` must be square matrices of the same shape; got {U.shape} and "
                         f"{V.shape}.")
    n = U.shape[0]
    if n < 4:
        raise ValueError(f"u_product needs n >= 4; got n={n}.")
    # each matrix in working units (a power of two): the products neither overflow nor
    # underflow, and the sum is scaled back once (inf or 0 only beyond float64's range)
    (U, su), (V, sv) = _matrix_working_units(U), _matrix_working_units(V)
    P = U * V
    np.fill_diagonal(P, 0.0)
    return _times_pow2(math.fsum(P.ravel()) / (n * (n - 3)), _power(su) + _power(sv))


def _u_centred(v, name, data, met, nt, n=None):
    """U-centred distance matrix of one variable (raw data, or a matrix with 'precomputed')."""
    from . import _memory

    if met.kind == "precomputed":
        return _u_center_working(_square(v, name))
    X, _, _ = _variable(v, data, name)
    if n is not None and X.shape[0] != n:
        raise ValueError(f"`x`, `y` and `z` must have the same number of rows; `{name}` has "
                         f"{X.shape[0]}, expected {n}.")
    _memory.check_fits(8.0 * X.shape[0] ** 2 * 3, f"the {X.shape[0]}×{X.shape[0]} distance matrix of `{name}`",
                       "Use a random subsample of the rows.")
    # working units (no overflow of squared distances); the scale converts back
    if met.kind != "builtin":
        return _u_center_working(_engine.pairwise_values(X, X, met, nt))
    Xw, mw, sc = _engine.normalise(met, X)
    return _u_center_working(_engine.pairwise_values(Xw, Xw, mw, nt), rescale=False)[0], sc


def _projection(A, C):
    """Projection of U-centred ``A`` on the orthogonal complement of U-centred ``C``."""
    cc = u_product(C, C)
    return A - (u_product(A, C) / cc) * C if cc > 0 else A


def _partial(x, y, z, data, exponent, metric, sigma, n_threads):
    met = resolve_metric(metric, exponent, sigma)
    nt = check_n_threads(n_threads)
    A, sx = _u_centred(x, "x", data, met, nt)
    n = A.shape[0]
    B, sy = _u_centred(y, "y", data, met, nt, n)
    C, _ = _u_centred(z, "z", data, met, nt, n)
    return _projection(A, C), _projection(B, C), sx, sy, u_product(A, A), u_product(B, B)


def partial_distance_covariance(x, y, z, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                                n_threads=None, backend=None, compute=True):
    r"""Partial distance covariance of x and y given z (R ``energy``'s ``pdcov``).

    :math:`(P_{z^\perp}(x) \cdot P_{z^\perp}(y))`, with :math:`P_{z^\perp}(x) =
    \tilde A - \frac{(\tilde A \cdot \tilde C)}{(\tilde C \cdot \tilde C)}\tilde C`
    the projection of the U-centred distance matrix of x on the complement of
    z's, and :math:`(U \cdot V)` :func:`u_product` (Székely and Rizzo 2014).
    Works on n×n matrices (8 n² bytes each, checked).  Parameters as in
    :func:`distance_stats`, with ``z`` like ``x``.  With ``backend='dask'``
    no n×n matrix is formed: the projections' products are expanded into
    the U-products of the pairs (x, y), (x, z), (y, z), each by the streamed
    passes as Dask tasks, :math:`(P_{z^\perp}(x) \cdot P_{z^\perp}(y)) =
    (\tilde A \cdot \tilde B) - (\tilde A \cdot \tilde C)(\tilde B \cdot
    \tilde C)/(\tilde C \cdot \tilde C)` (equal to the matrix path to
    rounding; for the correlation, a projection whose norm is below about
    5e-7 of the original's counts as 0, since the expansion loses the
    digits below that).

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> i = np.arange(1.0, 31)
    >>> x = np.column_stack([np.sin(i), np.cos(i**2), np.log(i)])
    >>> y = np.column_stack([i % 7 + 0.5 * np.sin(i), np.sqrt(i)])
    >>> z = np.column_stack([np.cos(3 * i), i / 10])
    >>> round(es.partial_distance_covariance(x, y, z), 9)
    0.164398557
    """
    if backends.use_dask(backend, compute, (x, y, z)):
        return _partial_dask(x, y, z, data, exponent, metric, sigma, n_threads, "pdcov", compute)
    Px, Py, sx, sy, _, _ = _partial(x, y, z, data, exponent, metric, sigma, n_threads)
    return sy.apply(sx.apply(u_product(Px, Py)))


def partial_distance_correlation(x, y, z, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                                 n_threads=None, backend=None, compute=True):
    r"""Partial distance correlation of x and y given z (R ``energy``'s ``pdcor``).

    :math:`R^*(x, y; z) = \frac{(P_{z^\perp}(x) \cdot P_{z^\perp}(y))}
    {|P_{z^\perp}(x)|\,|P_{z^\perp}(y)|}` (Székely and Rizzo 2014), in
    [-1, 1].  When a projection is 0 (x or y a function of z in the sense of
    distances) the ratio is undefined: 0 is returned with a warning, as R
    ``energy`` ≥ 1.7-9 does.  Zero partial distance correlation does **not**
    characterise conditional independence of x and y given z; it measures
    the dependence left after removing the part of the distance matrices
    linearly explained by z's.  ``backend``, ``compute``: as in
    :func:`partial_distance_covariance`.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> i = np.arange(1.0, 31)
    >>> x = np.column_stack([np.sin(i), np.cos(i**2), np.log(i)])
    >>> y = np.column_stack([i % 7 + 0.5 * np.sin(i), np.sqrt(i)])
    >>> z = np.column_stack([np.cos(3 * i), i / 10])
    >>> round(es.partial_distance_correlation(x, y, z), 9)
    0.267913456
    """
    if backends.use_dask(backend, compute, (x, y, z)):
        return _partial_dask(x, y, z, data, exponent, metric, sigma, n_threads, "pdcor", compute)
    Px, Py, _, _, aa, bb = _partial(x, y, z, data, exponent, metric, sigma, n_threads)
    return _pdcor(Px, Py, aa, bb)


def _partial_inputs(x, y, z, data, exponent, metric, sigma, n_threads):
    """The metric, threads per task and the three :class:`~energystats.backends.DaskData` of
    the partial statistics on Dask (metadata checked; nothing computed)."""
    met = resolve_metric(metric, exponent, sigma)
    if met.kind != "builtin":
        raise TypeError(f"backend='dask' needs a built-in metric ('energy', 'laplacian', 'gaussian'); "
                        f"got {met.name!r}.")
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    in_memory = not any(backends.is_dask(v) for v in (x, y, z, data))
    if not in_memory and data is not None:
        raise TypeError("`data=` (column names) is not available with Dask input; pass the columns "
                        "as Dask arrays.")
    V = []
    for v, name in ((x, "x"), (y, "y"), (z, "z")):
        if in_memory:
            v = _variable(v, data, name)[0]  # the threads input layer (column names)
        V.append(backends.as_dask_data(v, name))
    n = V[0].n
    for d, name in zip(V[1:], ("y", "z")):
        if d.n != n:
            raise ValueError(f"`x`, `y` and `z` must have the same number of rows; `{name}` has {d.n}, "
                             f"expected {n}.")
    if n < 4:
        raise ValueError(f"U-centring needs n >= 4 (it divides by n - 2 and n(n - 3)); got n={n}.")
    return met, nt, V


def _partial_dask(x, y, z, data, exponent, metric, sigma, n_threads, what, compute):
    """Partial distance covariance / correlation from the U-products of the three pairs (Dask)."""
    met, nt, V = _partial_inputs(x, y, z, data, exponent, metric, sigma, n_threads)
    n = V[0].n
    pairs = [backends.lazy_dependence_sums(V[a], V[b], met, nt) for a, b in ((0, 1), (0, 2), (1, 2))]
    return backends.finish(_partial_from_sums, what, n, *[p for pair in pairs for p in pair],
                           compute=compute)


def _partial_from_sums(what, n, vu_xy, sx, sy, vu_xz, _sx, sz, vu_yz, _sy, _sz):
    """pdcov or pdcor from the pairs' U-sums (working units: each variable its own scale)."""
    (ab, aa, bb), (ac, _, cc), (bc, _, _) = vu_xy[1], vu_xz[1], vu_yz[1]
    if cc > 0:
        pxy, px, py = ab - ac * bc / cc, aa - ac * ac / cc, bb - bc * bc / cc
    else:
        pxy, px, py = ab, aa, bb
    norm = n * (n - 3)
    if what == "pdcov":
        return sy.apply(sx.apply(pxy / norm))
    # the expansion forms |P|² as a difference of terms of size |A|²: its rounding error is a few
    # eps of |A|² (not eps² as for the matrices' projections), so the floor is PROJECTION_FLOOR
    # of |A|² itself: |P| below about 5e-7 |A| counts as 0
    if not (px > PROJECTION_FLOOR * abs(aa) and py > PROJECTION_FLOOR * abs(bb)):
        warn("a projection on the complement of z is 0 (x or y is determined by z in distance "
             "terms), so the partial distance correlation is undefined; returning 0, as R energy "
             "does.", UserWarning)
        return 0.0
    return pxy / math.sqrt(px * py)


#: a projection whose squared norm is below (PROJECTION_FLOOR)² of the original's is rounding
#: noise around 0 (its entries are formed with errors of a few eps of the original's size)
PROJECTION_FLOOR = 1e3 * np.finfo(float).eps


def _pdcor(Px, Py, aa, bb):
    return _pdcor_from(u_product(Px, Py), u_product(Px, Px), u_product(Py, Py), aa, bb)


def _projection_is_zero(px, py, aa, bb):
    """True when a projection's squared norm (px, py) is 0 or rounding noise: below
    PROJECTION_FLOOR² of its original's (aa, bb).  The statistic and the test decide by it."""
    return not (px > PROJECTION_FLOOR**2 * abs(aa) and py > PROJECTION_FLOOR**2 * abs(bb))


def _pdcor_from(pxy, px, py, aa, bb):
    """pdcor from the projections' U-products (and the originals' squared norms aa, bb)."""
    if _projection_is_zero(px, py, aa, bb):
        warn("a projection on the complement of z is 0 (x or y is determined by z in distance "
             "terms), so the partial distance correlation is undefined; returning 0, as R energy "
             "does.", UserWarning)
        return 0.0
    return pxy / math.sqrt(px * py)


@dataclass(frozen=True)
class PartialDistanceTestResult:
    r"""Result of :func:`partial_distance_correlation_test`.

    Attributes
    ----------
    statistic : float
        The partial distance correlation :math:`R^*(x, y; z)`.
    pvalue : float or None
    null_distribution : ndarray
        The statistic with the projection of x permuted.
    n_resamples : int
    partial_dcov : float
        The partial distance covariance (R ``pdcov``).
    pvalue_se : float or None
    seed : int or None
    pvalue_method : str
        'full', 'sequential' or 'decision'; with the last two
        ``n_resamples`` counts the permutations used (``pvalue_se`` None).
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    n_resamples: int
    partial_dcov: float
    pvalue_se: float | None = None
    seed: int | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """One row: pdcor, pdcov, p-value and its Monte Carlo error, resamples."""
        return pd.DataFrame({"pdcor": [self.statistic], "pdcov": [self.partial_dcov],
                             "pvalue": [self.pvalue], "pvalue_se": [self.pvalue_se],
                             "n_resamples": [self.n_resamples]},
                            index=pd.Index(["partial dcor"], name="test"))


def partial_distance_correlation_test(x, y, z, *, data=None, n_resamples=999, exponent=1.0,
                                      metric="energy", sigma=1.0, rng=None, n_threads=None,
                                      pvalue_method="full", sequential_h=10, alpha=0.05,
                                      backend=None, compute=True):
    r"""Permutation test of zero partial distance correlation (Székely and Rizzo 2014).

    The replicates permute the rows and columns of :math:`P_{z^\perp}(x)`
    (the projection of x's U-centred distance matrix), as R ``energy``'s
    ``pdcor.test``; the p-value follows the package's rule (observed value
    counted, exact ties counted).  The null hypothesis of this test is
    :math:`R^*(x, y; z) = 0` in the population, which is **not** conditional
    independence of x and y given z.

    When a projection is 0 (x or y determined by z in distance terms) the
    statistic is undefined and reported as 0 with a warning
    (:func:`partial_distance_correlation`); so is every permuted statistic,
    and the p-value is 1 (the null distribution all zeros).  A projection
    whose squared norm is rounding noise (below about 5e-26 of the
    original's) counts as 0 for the statistic and the test alike, so an
    exactly zero projection and one that came out as noise give the same
    answer.

    Parameters as in :func:`partial_distance_correlation` and
    :func:`independence_test` (``pvalue_method`` 'full', 'sequential' or
    'decision': stop permuting early, as there).  With ``backend='dask'``
    (or Dask input) one task forms the two n×n projections (16 n² bytes,
    held by every worker that runs a batch) and each batch of permutations
    is a task; the permutations are drawn from ``rng`` as on threads, so the
    statistic, the null distribution and the p-value are the same bits,
    whatever the workers and the chunking.  ``compute=False`` returns a
    Delayed of the result; ``pvalue_method`` must be 'full' there.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=80)
    >>> x, y = z + 0.3 * rng.normal(size=80), z + 0.3 * rng.normal(size=80)
    >>> round(es.distance_correlation(x, y), 2)          # dependent through z
    0.88
    >>> res = es.partial_distance_correlation_test(x, y, z, rng=1)
    >>> round(res.statistic, 3), res.pvalue > 0.05
    (0.008, True)
    """
    from ._permutation import draw_permutations
    from ._validation import check_int, seeded_rng

    R = check_int(n_resamples, "n_resamples", 0)
    dask = backends.use_dask(backend, compute, (x, y, z, data))
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha, dask=dask)
    gen, seed = seeded_rng(rng)
    if dask:
        return _partial_test_dask(x, y, z, data, exponent, metric, sigma, n_threads, R, gen, seed,
                                  compute)
    nt = check_n_threads(n_threads)
    prep = _partial(x, y, z, data, exponent, metric, sigma, n_threads)
    summary = _partial_summary(prep)
    n = summary["n"]
    if R == 0 or _partial_degenerate(summary):
        return _partial_test_finish(summary, None, None, R, seed, rule)
    kernel = _partial_products(prep, nt)
    obs, null, _ = _permutation_pvalue(kernel, lambda r0, m: draw_permutations(gen, np.arange(n), m),
                                       R, False, rule)
    return _partial_test_finish(summary, (obs, kernel.norms), null, R, seed, rule)


def _partial_summary(prep):
    """The scalars of the partial test from :func:`_partial`'s projections (small: the one
    thing of them that leaves a Dask task besides the permuted sums)."""
    Px, Py, sx, sy, aa, bb = prep
    return dict(n=Px.shape[0], pxy=u_product(Px, Py), px=u_product(Px, Px), py=u_product(Py, Py),
                aa=aa, bb=bb, sx=sx, sy=sy)


def _partial_degenerate(summary):
    """A projection 0 or rounding noise (:func:`_projection_is_zero`, the statistic's own rule):
    the statistic is taken as 0 and so is every permuted one (p = 1), whether the projection
    came out exactly 0 or as noise (a noise projection's permutations would count noise)."""
    return _projection_is_zero(summary["px"], summary["py"], summary["aa"], summary["bb"])


def _partial_products(prep, nt):
    """``Σ_ij Py_ij Px_{p_i p_j}`` (the projection of x permuted), by the permutation kernel."""
    Px, Py = prep[0], prep[1]
    return _MatrixProducts(np.ascontiguousarray(Py), np.ascontiguousarray(Px), nt)


def _partial_observed(prep, nt):
    kernel = _partial_products(prep, nt)
    obs = np.empty(1)
    kernel(np.arange(kernel.n, dtype=np.intp)[None, :], obs)
    return float(obs[0]), kernel.norms


def _partial_permuted(prep, perms, nt):
    out = np.empty(perms.shape[0])
    _partial_products(prep, nt)(np.ascontiguousarray(perms, dtype=np.intp), out)
    return out


def _partial_test_finish(summary, observed, null, R, seed, rule=None):
    """The result from the summary, ``(observed sum, (Σ Py², Σ Px²))`` and the permuted sums
    (None for no permutations), on either backend: the p-value by the package's rule, sums
    within 64 eps of the Cauchy–Schwarz bound of their terms counting as ties."""
    from ._permutation import pvalue_from_null, pvalue_se

    S = summary
    n = S["n"]
    stat = _pdcor_from(S["pxy"], S["px"], S["py"], S["aa"], S["bb"])
    pdcov = S["sy"].apply(S["sx"].apply(S["pxy"]))
    if R == 0:
        return PartialDistanceTestResult(stat, None, np.empty(0), 0, pdcov)
    if _partial_degenerate(S):
        return PartialDistanceTestResult(stat, 1.0, np.zeros(R), R, pdcov, 0.0, seed)
    obs, norms = observed
    tol = 64 * np.finfo(float).eps * math.sqrt(norms[0] * norms[1])
    p = _sequential.final_pvalue(float(pvalue_from_null(obs, null, False, tol=tol)), rule)
    null = null / (n * (n - 3) * math.sqrt(S["px"] * S["py"]))
    if rule is None:
        return PartialDistanceTestResult(stat, p, null, R, pdcov, pvalue_se(p, R, False), seed)
    return PartialDistanceTestResult(stat, p, null, int(null.shape[0]), pdcov, None, seed,
                                     rule.name, rule.decision)


#: pair-permutations of one Dask task of the partial test (about 0.1-0.3 s on one core)
PARTIAL_TASK_WORK = 1e9


def _partial_test_dask(x, y, z, data, exponent, metric, sigma, n_threads, R, gen, seed, compute):
    """:func:`partial_distance_correlation_test` on Dask: a task forms the projections, then a
    task per batch of permutations drawn as on threads (the same kernel: the same bits)."""
    import dask

    met, nt, V = _partial_inputs(x, y, z, data, exponent, metric, sigma, n_threads)
    n = V[0].n
    prep = dask.delayed(_partial, pure=True)(*[backends.lazy_whole(v) for v in V], None, exponent,
                                             metric, sigma, nt)
    summary = dask.delayed(_partial_summary, pure=True)(prep)
    observed = null = None
    if R > 0:
        observed = dask.delayed(_partial_observed, pure=True)(prep, nt)
        B = int(max(1, min(R, 512, PARTIAL_TASK_WORK // (n * n / 2.0))))
        batches = backends.lazy_draws(gen, R, B, backends._draw_perms, n, None)
        permuted = dask.delayed(_partial_permuted, pure=True)
        null = dask.delayed(np.concatenate, pure=True)([permuted(prep, b, nt) for b in batches])
    return backends.finish(_partial_test_finish, summary, observed, null, R, seed, compute=compute)


# -- mutual independence ------------------------------------------------------------

@dataclass(frozen=True)
class MutualIndependenceTestResult:
    r"""Result of :func:`mutual_independence_test`.

    Attributes
    ----------
    statistic : float
        :math:`\sum_{k=1}^{d-1} R^*_n(X_k, [X_{k+1}, \dots, X_d])`.
    pvalue : float or None
    null_distribution : ndarray
        The statistic of data sets with every variable's rows permuted independently.
    estimates : ndarray, shape (d - 1,)
        The terms :math:`R^*_n(X_k, [X_{k+1}, \dots, X_d])`.
    names : list
        The variables (column names, or ``'x0'``, ``'x1'``, …).
    n_resamples : int
    pvalue_se : float or None
    seed : int or None
    pvalue_method : str
        'full', 'sequential' or 'decision'; with the last two
        ``n_resamples`` counts the replicates used (``pvalue_se`` None).
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    estimates: np.ndarray
    names: list
    n_resamples: int
    pvalue_se: float | None = None
    seed: int | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """One row per term R*(X_k, rest) and a row with the sum and its p-value."""
        idx = [f"R*({a}, {'+'.join(map(str, self.names[i + 1:]))})" for i, a in enumerate(self.names[:-1])]
        rows = pd.DataFrame({"estimate": list(self.estimates) + [self.statistic],
                             "pvalue": [np.nan] * len(idx) + [self.pvalue],
                             "pvalue_se": [np.nan] * len(idx) + [self.pvalue_se]},
                            index=pd.Index(idx + ["sum"], name="term"))
        return rows


def _squared_distances(X):
    """Squared Euclidean distances of the rows (difference form; no cancellation)."""
    D = np.zeros((X.shape[0], X.shape[0]))
    for t in range(X.shape[1]):
        diff = X[:, t][:, None] - X[:, t][None, :]
        D += diff * diff
    return D


def _u_centred_fast(a):
    """U-centred matrix (in place, no argument checks): the replicate loop's version."""
    n = a.shape[0]
    r = a.sum(axis=1)
    a -= r[:, None] / (n - 2)
    a -= r[None, :] / (n - 2)
    a += r.sum() / ((n - 1) * (n - 2))
    np.fill_diagonal(a, 0.0)
    return a


def _bcdcor_from_sq(qa, qb, exponent):
    power = np.sqrt if exponent == 1 else (lambda q: q ** (exponent / 2))
    A, B = _u_centred_fast(power(qa)), _u_centred_fast(power(qb))
    # zero diagonals: the full dot products are the sums over i != j; not BLAS, whose threads
    # split the sum (the bits would depend on the BLAS threads: a Dask worker runs one)
    ab, aa, bb = (float(np.einsum("ij,ij->", u, v)) for u, v in ((A, B), (A, A), (B, B)))
    return _ratio(ab, aa, bb)


def mutual_independence_test(*variables, data=None, n_resamples=999, exponent=1.0, rng=None,
                             pvalue_method="full", sequential_h=10, alpha=0.05, backend=None,
                             compute=True):
    r"""Permutation test of mutual independence of d ≥ 2 variables (Székely and Rizzo).

    Parameters
    ----------
    *variables : array_like, DataFrame, or column name(s) with ``data``
        Either one 2-D array or DataFrame whose columns are the variables (as
        R ``energy``'s ``mutualIndep.test``), or several variables (each 1-D
        or 2-D, the same number of rows).
    data : DataFrame, optional
        With column names as variables.
    n_resamples : int, default 999
    exponent : float, default 1.0
        Exponent of the Euclidean distance, 0 < exponent < 2.
    rng : None, int or numpy.random.Generator
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop permuting early, as in :func:`independence_test`.
    backend : {None, 'threads', 'dask'}, default None
        'dask' (chosen for Dask arrays): one task forms the variables'
        distance matrices (8 d n² bytes, held by every worker that runs a
        batch) and each batch of replicates is a task; the permutations are
        drawn from ``rng`` as on threads, so the null distribution and the
        p-value are the same bits, whatever the workers and the chunking.
        Dask input is taken as dask arrays (one 2-D array, a variable per
        column, or several); ``pvalue_method`` must be 'full'.
    compute : bool, default True
        With the Dask backend, False returns a Delayed of the result.

    Returns
    -------
    MutualIndependenceTestResult

    Notes
    -----
    The statistic is :math:`\sum_{k=1}^{d-1} R^*_n(X_k, [X_{k+1}, \dots, X_d])`,
    bias-corrected distance correlations of each variable with the ones after
    it; it is 0 in the population exactly when the variables are mutually
    independent.  A replicate permutes the rows of every variable
    independently and recomputes the whole statistic, so it is the statistic
    of one data set drawn from the permutation null.  (R's
    ``mutualIndep.test`` permutes, for each term, only :math:`X_k` against the
    unpermuted rest, with one permutation for all terms, and counts strictly
    greater values.)  n×n matrices: O(d n²) time per replicate.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=200), rng.normal(size=200)
    >>> c = np.sign(a * b) * rng.exponential(size=200)   # each pair independent, the three not
    >>> [round(es.independence_test(u, v, rng=1).pvalue, 2) for u, v in ((a, b), (a, c), (b, c))]
    [0.22, 0.07, 0.22]
    >>> es.mutual_independence_test(a, b, c, n_resamples=199, rng=1).pvalue
    0.005
    """
    from ._validation import check_int, seeded_rng

    R = check_int(n_resamples, "n_resamples", 0)
    dask = backends.use_dask(backend, compute, variables + (data,))
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha, dask=dask)
    gen, seed = seeded_rng(rng)
    from ._metrics import _check_exponent

    exponent = _check_exponent(exponent)  # the one validator: '1' and True are refused
    if dask:
        return _mutual_dask(variables, data, exponent, R, gen, seed, compute)
    blocks, names = _mutual_variables(variables, data)
    sq, est = _mutual_prepare(blocks, names, exponent)
    n, d = sq[0].shape[0], len(sq)
    if R == 0:
        return _mutual_finish(est, names, n, None, R, seed)
    tol = _mutual_tol(d, n)

    def replicates(r0, m):  # in draw order: every variable's rows permuted, one after another
        perms, _ = _mutual_draw(gen, n, d, m, advance=True)
        return _mutual_replicates(sq, perms, exponent)

    # batches of at most 2**22 indices of permutations (32 MiB): the values do not depend on them
    cap = int(max(1, min(R, 2**22 // (d * n))))
    null = _sequential.collect(R, cap, replicates, float(np.sum(est)), tol, rule)
    return _mutual_finish(est, names, n, null, R, seed, rule)


def _mutual_variables(variables, data):
    """The variables of :func:`mutual_independence_test` (threads input layer) and their names."""
    blocks, names = [], []
    if len(variables) == 1 and not (data is not None and isinstance(variables[0], str)):
        X, cols, _ = _variable(variables[0], data, "variables[0]")
        if X.shape[1] < 2:
            raise ValueError("one variable given: pass a 2-D array (one column per variable) or "
                             "several variables.")
        blocks = [X[:, [j]] for j in range(X.shape[1])]
        names = cols if cols is not None else [f"x{j}" for j in range(X.shape[1])]
    else:
        for j, v in enumerate(variables):
            X, cols, _ = _variable(v, data, f"variables[{j}]")
            blocks.append(X)
            names.append(v if isinstance(v, str) else ("+".join(map(str, cols)) if cols else f"x{j}"))
    _mutual_shapes([b.shape[0] for b in blocks])
    return blocks, list(names)


def _mutual_shapes(rows):
    d = len(rows)
    if d < 2:
        raise ValueError(f"mutual independence needs at least 2 variables; got {d}.")
    if any(r != rows[0] for r in rows):
        raise ValueError(f"all variables must have the same number of rows; got {rows}.")
    if rows[0] < 4:
        raise ValueError(f"bias-corrected distance correlations need n >= 4; got n={rows[0]}.")


def _mutual_prepare(blocks, names, exponent, split=False):
    """``(sq, est)``: the variables' squared-distance matrices in common working units and the
    terms of the statistic.  ``split``: ``blocks`` is one 2-D array, a variable per column."""
    from . import _memory

    if split:
        blocks = [blocks[0][:, [j]] for j in range(blocks[0].shape[1])]
    n, d = blocks[0].shape[0], len(blocks)
    _memory.check_fits(8.0 * n * n * (d + 6), f"the {d} {n}×{n} distance matrices",
                       "Use a random subsample of the rows.")
    # working units: one power of two for all variables (the distances of the concatenated
    # variables must keep their relative scales; dCor is invariant to a common scale)
    centred = [np.asarray(b, dtype=np.float64) - np.asarray(b, dtype=np.float64).mean(axis=0) for b in blocks]
    for j, b in enumerate(blocks):
        if _constancy(np.asarray(b), False):  # from the data: a rounded mean leaves c ≠ 0
            raise ValueError(f"variable {names[j]!r} is constant: its distance correlations are "
                             "undefined (0/0).")
    e = math.frexp(max(float(np.max(np.abs(c))) for c in centred))[1]
    sq = [_squared_distances(np.ldexp(c, -e)) for c in centred]
    return sq, _mutual_statistic(sq, exponent)


def _mutual_statistic(mats, exponent):
    """The terms R*_n(X_k, [X_{k+1}, …, X_d]) from the variables' squared-distance matrices."""
    d, n = len(mats), mats[0].shape[0]
    tails = [None] * d
    acc = np.zeros((n, n))
    for k in range(d - 1, 0, -1):
        acc = acc + mats[k]
        tails[k] = acc
    return np.array([_bcdcor_from_sq(mats[k], tails[k + 1], exponent) for k in range(d - 1)])


def _mutual_tol(d, n):
    # each term is a ratio of U-products of magnitude <= 1: rounding of a few hundred eps
    return (d - 1) * 64 * n * np.finfo(float).eps


def _mutual_draw(gen, n, d, count, advance=False):
    """``(perms, gen)``: ``count`` replicates' permutations, shape (count, d, n), drawn as
    ``gen.permutation(n)`` for each variable in turn, replicate after replicate (on a copy of
    ``gen`` unless ``advance``)."""
    g = gen if advance else copy.deepcopy(gen)
    perms = np.empty((count, d, n), dtype=np.intp)
    for r in range(count):
        for k in range(d):
            perms[r, k] = g.permutation(n)
    return perms, g


def _mutual_replicates(sq, perms, exponent):
    """The statistic of each replicate: every variable's rows and columns permuted."""
    out = np.empty(perms.shape[0])
    for r in range(perms.shape[0]):
        out[r] = float(np.sum(_mutual_statistic([q[np.ix_(p, p)] for q, p in zip(sq, perms[r])],
                                                exponent)))
    return out


def _mutual_finish(est, names, n, null, R, seed, rule=None):
    from ._permutation import pvalue_from_null, pvalue_se

    obs = float(np.sum(est))
    if null is None:
        return MutualIndependenceTestResult(obs, None, np.empty(0), est, list(names), 0)
    tol = _mutual_tol(len(est) + 1, n)
    p = _sequential.final_pvalue(float(pvalue_from_null(obs, null, False, tol=tol)), rule)
    if rule is None:
        return MutualIndependenceTestResult(obs, p, null, est, list(names), R, pvalue_se(p, R, False),
                                            seed)
    return MutualIndependenceTestResult(obs, p, null, est, list(names), int(null.shape[0]), None, seed,
                                        rule.name, rule.decision)


#: elements of the permuted n×n matrices of one Dask task of the mutual test (about 0.2 s)
MUTUAL_TASK_WORK = 2e7


def _mutual_dask(variables, data, exponent, R, gen, seed, compute):
    """:func:`mutual_independence_test` on Dask: a task forms the matrices, then a task per
    batch of replicates, their permutations drawn as on threads (the same bits)."""
    import dask

    if not any(backends.is_dask(v) for v in variables + (data,)):
        blocks, names = _mutual_variables(variables, data)  # in memory: the threads input layer
        V, split = [backends.as_dask_data(b, str(nm)) for b, nm in zip(blocks, names)], False
    else:
        if data is not None:
            raise TypeError("`data=` (column names) is not available with Dask input; pass the "
                            "variables as Dask arrays.")
        V = [backends.as_dask_data(v, f"variables[{j}]") for j, v in enumerate(variables)]
        split = len(V) == 1
        if split and V[0].d < 2:
            raise ValueError("one variable given: pass a 2-D array (one column per variable) or "
                             "several variables.")
        names = [f"x{j}" for j in range(V[0].d if split else len(V))]
        _mutual_shapes([V[0].n] * V[0].d if split else [v.n for v in V])
    n, d = V[0].n, len(names)
    prep = dask.delayed(_mutual_prepare, nout=2, pure=True)([backends.lazy_whole(v) for v in V],
                                                           names, exponent, split)
    sq, est = prep
    null = None
    if R > 0:
        B = int(max(1, min(R, MUTUAL_TASK_WORK // (d * n * n))))
        batches = backends.lazy_draws(gen, R, B, _mutual_draw, n, d)
        rep = dask.delayed(_mutual_replicates, pure=True)
        null = dask.delayed(np.concatenate, pure=True)([rep(sq, b, exponent) for b in batches])
    return backends.finish(_mutual_finish, est, names, n, null, R, seed, compute=compute)


# -- distance-correlation matrix ------------------------------------------------------

ADJUSTMENTS = ("holm", "bh", None)


def _permutation_budget(memory_budget):
    from ._permutation import effective_budget

    if not (isinstance(memory_budget, (int, float)) and memory_budget > 0):
        raise ValueError(f"`memory_budget` must be a positive number of bytes; got {memory_budget!r}.")
    return effective_budget(float(memory_budget))


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

    The diagonals of ``pvalues`` and ``adjusted`` are NaN (a column is not
    tested against itself).
    """

    dcor: pd.DataFrame
    pvalues: pd.DataFrame | None = field(default=None, repr=False)
    adjusted: pd.DataFrame | None = field(default=None, repr=False)
    estimator: str = "V"
    adjust: str | None = None
    pvalue_method: str | None = None
    n_resamples: int | None = None
    exact: bool | None = None
    seed: int | None = None
    left_out: list = field(default_factory=list)

    def to_frame(self):
        """Long format: one row per pair (x, y) with dcor, pvalue and the adjusted p-value."""
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
                                n_threads=None, backend=None, alpha=0.05, numeric_only=False):
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
    from . import _memory
    from .frames import select_frame
    from scipy import stats

    from ._validation import check_int, seeded_rng

    _check_estimator(estimator)
    if pvalue not in (None, "ttest", "permutation"):
        raise ValueError(f"`pvalue` must be None, 'ttest' or 'permutation'; got {pvalue!r}.")
    dask_backend = backends.use_dask(backend, True, (data,))
    if dask_backend and backends.is_dask(data):
        raise TypeError("`data`: the matrix needs every row of every column in each task, so the "
                        "Dask backend takes the table in memory (a DataFrame or array; "
                        "`ddf.compute()` first) and spreads the column pairs over the workers.")
    if n_resamples is not None:
        check_int(n_resamples, "n_resamples", 1)
    if not (isinstance(alpha, (int, float)) and 0 < alpha < 1):
        raise ValueError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    from ._metrics import _check_exponent

    exponent = _check_exponent(exponent)  # was unchecked unless pvalue='permutation'
    nt = check_n_threads(n_threads)
    if adjust not in ADJUSTMENTS:
        raise ValueError(f"`adjust` must be 'holm', 'bh' or None; got {adjust!r}.")
    X, cols, left_out = select_frame(data, columns, "data", numeric_only)
    X, _ = as_data(X, "data")
    n, p = X.shape
    names = cols if cols is not None else list(range(p))
    if p < 2:
        raise ValueError(f"need at least 2 columns; got {p}.")
    m = p * (p - 1) // 2
    R = int(n_resamples) if n_resamples is not None else matrix_resamples(m, alpha)
    need_u = estimator == "U" or pvalue == "ttest"
    if need_u and n < 4:
        raise ValueError(f"the U-statistics need n >= 4 rows; got {n}.")
    X = np.asarray(X, dtype=np.float64)
    X0 = X
    X = X - X.mean(axis=0)
    # from the data: a constant column's centred values need not be 0 (its mean is rounded)
    const = [names[j] for j in range(p) if _constancy(X0[:, j:j + 1], False)]
    if const:
        raise ValueError(f"constant column(s) {const[:8]}: their distance correlations are undefined (0/0).")
    # working units per column (dCor is scale-free): a power of two, no overflow
    X = np.ldexp(X, -np.frexp(np.max(np.abs(X), axis=0))[1])
    per_col = 8.0 * n * (n + 1) / 2
    budget = _permutation_budget(memory_budget)
    _check_column_budget(2 * per_col, budget, memory_budget, n, "centred distance vectors")
    block = int(max(1, min(p, budget // (2 * per_col))))
    _memory.check_fits(2 * block * per_col, "the columns' centred distance matrices",
                       "Lower `memory_budget`, or use fewer rows.")
    work = np.empty(n)

    def build(j0, V):
        for t in range(V.shape[0]):
            _dependence.centred_upper_1d(np.ascontiguousarray(X[:, j0 + t]), float(exponent), int(u),
                                         V[t], work)
        return V

    def gram(uu):
        nonlocal u
        u = uu
        G = np.empty((p, p))
        Vi = np.empty((min(block, p), n * (n + 1) // 2))
        Vj = np.empty_like(Vi)
        for i0 in range(0, p, block):
            bi = min(block, p - i0)
            build(i0, Vi[:bi])
            G[i0:i0 + bi, i0:i0 + bi] = Vi[:bi] @ Vi[:bi].T
            for j0 in range(i0 + block, p, block):
                bj = min(block, p - j0)
                build(j0, Vj[:bj])
                Gij = Vi[:bi] @ Vj[:bj].T
                G[i0:i0 + bi, j0:j0 + bj] = Gij
                G[j0:j0 + bj, i0:i0 + bi] = Gij.T
        d = np.sqrt(np.clip(np.diag(G), 0.0, None))
        with np.errstate(divide="ignore", invalid="ignore"):
            R = G / np.outer(d, d)
        return R

    # the same Gram on Dask: its blocks as tasks
    make = backends.lazy_dcor_gram(X, float(exponent), block) if dask_backend else gram
    u = False
    RV = make(False) if estimator == "V" else None
    RU = make(True) if need_u else None
    if estimator == "V":
        D = np.sqrt(np.clip(RV, 0.0, 1.0))
        np.fill_diagonal(D, 1.0)
    else:
        D = RU.copy()
        np.fill_diagonal(D, 1.0)
    out_dcor = pd.DataFrame(D, index=names, columns=names)
    if pvalue is None:
        return DistanceCorrelationMatrixResult(out_dcor, estimator=estimator, adjust=adjust,
                                               left_out=list(left_out))
    P = np.zeros((p, p))
    extra = {}
    if pvalue == "ttest":
        M = n * (n - 3) / 2
        r = np.clip(RU, -1.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            T = np.sqrt(M - 1) * r / np.sqrt(1 - r * r)
        P = stats.t.sf(T, M - 1)
    else:
        gen, seed = seeded_rng(rng)
        is_exact, total, perms = _permutation_plan(n, None, R, None, gen)
        _warn_unreachable(m if adjust is not None else 1, total, is_exact, alpha, adjust)
        every = perms(0, total)  # the same permutations for every pair
        _pairwise_permutation_pvalues(X0, exponent, every, is_exact, P, budget,
                                      1 if dask_backend and n_threads is None else nt, dask_backend)
        extra = dict(n_resamples=total, exact=is_exact, seed=None if is_exact else seed)
    np.fill_diagonal(P, np.nan)  # a column is not tested against itself
    iu, ju = np.triu_indices(p, 1)
    adj = np.full((p, p), np.nan)
    adj[iu, ju] = _adjust(P[iu, ju], adjust)
    adj[ju, iu] = adj[iu, ju]
    return DistanceCorrelationMatrixResult(out_dcor, pd.DataFrame(P, index=names, columns=names),
                                           pd.DataFrame(adj, index=names, columns=names),
                                           estimator, adjust, pvalue, **extra, left_out=list(left_out))


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
    from . import _memory

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
    from . import _memory

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
        import dask as _dask

        Xd, perms_d = _dask.delayed(X, pure=True), _dask.delayed(perms, pure=True)
        task = _dask.delayed(_pair_pvalues, pure=True)
        blocks = _dask.compute(*[task(Xd, exponent, perms_d, is_exact, nt, *sp) for sp in spans])
    else:
        from . import _progress

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
