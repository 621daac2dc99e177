"""The drivers of :func:`energystats.distance_correlation_screen`: each feature's distance
correlation with y, and the permutation statistics that every feature shares.

Two engines:

* **sorted** (1-D y, ``metric='energy'`` with exponent 1): the O(n log n) path of
  :func:`energystats._core._pair_sums._sums_1d` (Huo and Székely 2016) for all columns in one
  compiled pass (:func:`energystats._lib._screen.sorted_columns_1d`, the columns over the
  threads), each column's double-double sums formed by the same inline code in the same order
  and combined here in exact arithmetic: every value equals
  ``distance_correlation(X[:, j], y, method='sorted')`` bit for bit.  The permutation test
  shares the permutations of y among the features: one Fenwick pass per (feature,
  permutation) (:func:`energystats._lib._screen.permuted_columns_1d`).
* **columns** (anything else: multivariate y, another metric or exponent): one call of the
  package's pair sums per column, as :func:`distance_correlation` makes it (the same bits), and
  per column the permutation engine of :func:`independence_test` on the shared permutations
  (the same p-value as ``independence_test(X[:, j], y, rng=seed)``).
"""
from __future__ import annotations

import math

import numpy as np

from .._core import _engine, _interrupt
from .._core._pair_sums import _csum, _sorted_row_sums, _sums
from .._lib import _screen
from ._result import _ratio, _stats_result

__all__ = ["sorted_dcor", "columns_dcor", "sorted_null", "columns_pvalues", "CALL_COLUMNS",
           "DASK_COLUMNS"]

#: columns per compiled call: each call is a fraction of a second, and Ctrl-C is seen between calls
CALL_COLUMNS = 512
#: features per Dask task
DASK_COLUMNS = 4096


def _working_columns(X, n_threads=1):
    """The columns in working units (each times a power of two, as
    :func:`energystats._core._engine.normalise` scales a single column) and centred as
    :func:`~energystats._core._pair_sums._sums_1d` centres them; rows = columns."""
    XT = np.array(X.T, dtype=np.float64, order="C")
    m = np.max(np.abs(XT), axis=1) if XT.shape[1] else np.zeros(XT.shape[0])
    e = np.frexp(m)[1]
    scale = np.where((m > 0) & (e != 0), np.ldexp(1.0, -e), 1.0)
    if X.dtype == np.float64:  # float32 data are not normalised (normalise leaves them alone)
        XT *= scale[:, None]
    out = np.empty_like(XT)
    _screen.centre_rows(XT, out, n_threads)
    return out


def _working_y(y):
    """y (1-D) in working units and centred, and its distance row sums / order."""
    Y = np.asarray(y)
    Yn, _, _ = _engine.normalise(_energy1(), Y.reshape(-1, 1))
    v = np.asarray(Yn[:, 0], dtype=np.float64)
    v = v - _csum(v) / v.size
    rb, oy = _sorted_row_sums(v)
    return v, rb, oy


def _energy1():
    from .._core._metrics import resolve_metric

    return resolve_metric("energy", 1.0)


#: every finite double is an integer multiple of 2**-1074: the exact sums below are integers
#: in that unit (products in its square), as Python's integers hold them without rounding
_UNIT = 1074


def _int(v):
    """The double ``v`` as the integer ``v * 2**1074`` (exact)."""
    num, den = float(v).as_integer_ratio()
    return num << (_UNIT - den.bit_length() + 1)


def _dd(pair):
    """A double-double ``(hi, lo)`` as an integer in units of 2**-1074 (exact)."""
    return _int(pair[0]) + _int(pair[1])


def _v_sums(D, m, n):
    """The V sums ``(Σ AB, Σ AA)`` of one column from its double-double sums, combined exactly
    as :func:`~energystats._core._pair_sums._sums_1d` combines them (there in rationals, here
    in integers: ``n² V · 2**2148`` is an integer); the one rounding is the final division,
    correctly rounded as the rationals' conversion is, so the bits are the same."""
    sx, sy, sxx, syy, sxy, Sa, Sb, T2, T2a, T2b = (_dd(m[2 * k:2 * k + 2]) for k in range(10))
    u = 1 << _UNIT
    F = n * sxy * u - sx * sy                  # units 2**-2148
    T1 = 2 * (2 * _dd(D) * u - F)
    Saa = 2 * n * sxx * u - 2 * sx * sx
    den = n * n << (2 * _UNIT)
    return ((n * n * T1 - 2 * n * T2 * u + Sa * Sb) / den,
            (n * n * Saa - 2 * n * T2a * u + Sa * Sa) / den)


def _yy_v(m, n):
    """``Σ BB`` (V) of y from a column's moments (its y part)."""
    sy, syy, Sb, T2b = (_dd(m[2 * k:2 * k + 2]) for k in (1, 3, 6, 9))
    u = 1 << _UNIT
    Sbb = 2 * n * syy * u - 2 * sy * sy
    return (n * n * Sbb - 2 * n * T2b * u + Sb * Sb) / (n * n << (2 * _UNIT))


def _dcor_from_v(cov, xx, yy, n):
    """``distance_correlation``'s value from the V sums (working units), as
    :func:`~energystats.dependence._result._stats_result` forms it; NaN for a constant column."""
    cov, xx, yy = cov / n**2, xx / n**2, yy / n**2
    if not xx > 0:
        return math.nan
    return math.sqrt(max(min(max(_ratio(cov, xx, yy), 0.0), 1.0), 0.0))


def sorted_dcor(X, y, n_threads):
    """dCor of every column of ``X`` (n, p) with 1-D ``y``: the sorted engine."""
    n, p = X.shape
    yc, rb, oy = _working_y(y)
    out = np.empty((p, 22))
    dcor = np.empty(p)
    yy = None
    for c0 in range(0, p, CALL_COLUMNS):
        c1 = min(p, c0 + CALL_COLUMNS)
        block = _working_columns(X[:, c0:c1], n_threads)
        OX = np.argsort(block, axis=1)
        _interrupt.call(_screen.sorted_columns_1d, block, OX, yc, rb[0], rb[1], oy, out[c0:c1],
                        n_threads)
        for j in range(c0, c1):
            cov, xx = _v_sums(out[j, :2], out[j, 2:], n)
            if yy is None:
                yy = _yy_v(out[j, 2:], n)
            dcor[j] = _dcor_from_v(cov, xx, yy, n)
    return dcor


def columns_dcor(X, Y, met, n_threads):
    """dCor of every column of ``X`` with ``Y`` (any dimension, any metric): one call of the
    package's pair sums per column."""
    n, p = X.shape
    dcor = np.empty(p)
    for j in range(p):
        (V, U), sx, sy = _sums(np.ascontiguousarray(X[:, j:j + 1]), Y, met, n_threads)
        res = _stats_result((V, U), sx, sy, n, met, None, None)
        dcor[j] = math.nan if not res.dvar_x_sqr > 0 else res.dcor
    return dcor


def _row_sums_sorted(XS):
    """``Σ_l |x_k − x_l|`` for sorted rows ``XS`` (plain double, prefix sums)."""
    n = XS.shape[1]
    P = np.cumsum(XS, axis=1)
    before = P - XS
    k = np.arange(n)
    return XS * (2 * k - n) - 2 * before + P[:, -1:]


def sorted_null(X, y, perms, n_threads):
    """``(observed, null, tol)``: for every column the permutation statistic of the identity
    and of each permutation (rows of ``perms``), and the rounding allowance for ties."""
    n, p = X.shape
    R = perms.shape[0]
    yc, rb, oy = _working_y(y)
    b = np.ascontiguousarray(rb[0] + rb[1])
    yrank = np.empty(n, dtype=np.intp)
    yrank[oy] = np.arange(n)
    ident = np.arange(n, dtype=np.intp)[None, :]
    obs, null, tol = np.empty(p), np.empty((p, R)), np.empty(p)
    step = max(1, int(CALL_COLUMNS * 40 // max(R, 1)))  # about 0.5 s of work per call
    for c0 in range(0, p, step):
        c1 = min(p, c0 + step)
        XT = _working_columns(X[:, c0:c1], n_threads)
        OX = np.argsort(XT, axis=1)
        XS = np.ascontiguousarray(np.take_along_axis(XT, OX, axis=1))
        As = _row_sums_sorted(XS)
        A = np.empty_like(As)
        np.put_along_axis(A, OX, As, axis=1)
        o = np.empty((c1 - c0, 1))
        _screen.permuted_columns_1d(XS, OX, A, yc, yrank, b, ident, o, 1)
        obs[c0:c1] = o[:, 0]
        _interrupt.call(_screen.permuted_columns_1d, XS, OX, A, yc, yrank, b, perms,
                        null[c0:c1], n_threads)
        # rounding of one pass: its terms are of the size of T1 + 2 T2 / n; 64 n eps of them
        T2 = A @ b
        tol[c0:c1] = 64 * n * np.finfo(float).eps * (np.abs(o[:, 0] + 2 * T2 / n) + 2 * T2 / n)
    return obs, null, tol


def columns_pvalues(X, Y, met, perms_fn, total, is_exact, budget, n_threads):
    """Per column the p-value of :func:`independence_test` on the shared permutations."""
    from ._products import _permutation_pvalue, _products

    p = X.shape[1]
    out = np.empty(p)
    for j in range(p):
        kernel, _, _ = _products(np.ascontiguousarray(X[:, j:j + 1]), Y, met, n_threads, budget)
        out[j] = _permutation_pvalue(kernel, perms_fn, total, is_exact)[2]
    return out

