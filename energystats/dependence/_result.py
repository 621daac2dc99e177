"""The distance covariance/correlation result (:class:`DistanceStatsResult`) from the V and U
pair sums, in working units and scaled back once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core import _dask
from .._core._pair_sums import _power, _times_pow2

__all__ = ["DistanceStatsResult"]


@notebook_display
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
    weights : str or None
        None without sample weights; with them, the name of the weights'
        column of ``data`` (not a variable) or ``"array"``.  The V-statistics
        are then the weighted ones and the U-statistics are NaN (not defined
        with weights).
    weight_total : float or None
        With weights: their total :math:`N = \sum_i w_i`, which takes the place
        of n in ``test_statistic`` (the weights count as frequencies);
        ``n_samples`` stays the number of rows.
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
    weights: str | None = None
    weight_total: float | None = None
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
        """:math:`n\\mathcal{V}^2_n`, the statistic of R ``dcov.test`` (V-statistic, squared).

        With weights :math:`N\\mathcal{V}^2_w`, N = ``weight_total`` (the weights count as
        frequencies): integer weights give the statistic of the rows repeated that many times,
        and a common factor of the weights scales it (it does not scale the V-statistics)."""
        n = self.n_samples if self.weight_total is None else self.weight_total
        return n * self.dcov_sqr

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
                f"dcov_u={self.dcov_u:.6g}, dcor_u={self.dcor_u:.6g}, n_samples={self.n_samples}"
                + (f", weights={self.weights!r})" if self.weights is not None else ")"))


def _ratio(cov, vx, vy):
    den = vx * vy
    return cov / math.sqrt(den) if den > 0 else 0.0


def _stats_result(VU, sx, sy, n, met, cx, cy, constant=(None, None), weights=None,
                  weight_total=None):
    """The :class:`DistanceStatsResult` from the V and U sums (working units) and the scales.

    Every value is formed in working units and scaled back once (:func:`_times_pow2`): the
    squares (degree one in each variable's rho) overflow to inf or underflow only where their
    true values lie beyond float64, and the roots are scaled back from the roots in working
    units (half the power), so they are right wherever they are themselves in range.
    ``constant``: the variables' constancy decided from the data (:func:`_constancy`); a
    working-unit distance variance of exactly 0 (no underflow is possible there) adds
    "distances".  ``weights`` (what the result records of them): the V sums are the weighted
    means already and there are no U-statistics; ``weight_total`` is their total, the n of
    ``test_statistic``."""
    V, U = VU
    cov_v, xx_v, yy_v = (s / n**2 for s in V) if weights is None else V
    if n > 3 and weights is None:
        cov_u, xx_u, yy_u = (s / (n * (n - 3)) for s in U)
    else:
        cov_u = xx_u = yy_u = float("nan")
    constant = tuple(c if c is not None else ("distances" if w == 0 else None)
                     for c, w in zip(constant, (xx_v, yy_v)))
    # correlations are scale-free: formed in working units, before the conversion back
    dcor_v = min(max(_ratio(cov_v, xx_v, yy_v), 0.0), 1.0)
    dcor_u = _ratio(cov_u, xx_u, yy_u) if n > 3 and weights is None else float("nan")
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
        columns_x=cx, columns_y=cy, weights=weights, weight_total=weight_total, _roots=roots,
        _constant=constant)
    return res


def _finish(res, fn, compute):
    """``fn(res)``, or for a Delayed ``res`` the Delayed of it (computed unless ``compute=False``)."""
    if _dask.is_dask(res):
        import dask

        out = dask.delayed(fn, pure=True)(res)
        return _dask.dask_compute(out)[0] if compute else out
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
