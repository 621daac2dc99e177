"""The pair sums of two variables (below every concept): Σ A_ij B_ij of their double-centred
distance matrices and the distance variances, as V- and U-sums, in working units.

Used by dependence's statistics and tests and by homogeneity's asymptotic energy test
(the pooled sample's distance variance).
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import _engine
from .._lib import _dependence


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
    for normal values), and the :class:`~energystats._core._engine.Scale` back (degree 1), so that
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
#: the statistic to about 1e-15 relative (tests/dependence/test_dependence.py, against exact integer
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
    pos = np.empty(n, dtype=np.intp)
    pos[ox] = np.arange(n)
    D, (sx, sy, sxx, syy, sxy, Sa, Sb, T2, T2a, T2b) = _pair_moments_1d(x, y, ra, rb, ox, pos, oy,
                                                                       n_threads)
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


def _pair_moments_1d(x, y, ra, rb, ox, pos, oy, n_threads):
    """The exact ``D`` of :func:`energystats._lib._dependence.dominance_moment_1d` and the ten
    moments of :func:`~energystats._lib._dependence.moments_dd` (exact rationals) of centred 1-D
    ``x``, ``y`` with their rows' distance sums ``ra``, ``rb`` (double-double pairs), the sort
    orders ``ox``, ``oy`` and ``pos`` (``pos[ox] = 0..n-1``): O(n log n), no sort."""
    n = x.size
    xs, ys = np.ascontiguousarray(x[ox]), np.ascontiguousarray(y[ox])
    yorder = pos[oy]  # x positions by increasing y
    h = n // 2
    first = yorder < h
    rank_l, rank_r = np.empty(h, dtype=np.intp), np.empty(n - h, dtype=np.intp)
    rank_l[yorder[first]] = np.arange(h)
    rank_r[yorder[~first] - h] = np.arange(n - h)
    nt = _engine.effective_threads(n_threads, float(n) * math.log2(max(n, 2)) * 100)
    D = _exact(_dependence.dominance_moment_1d(xs, ys, yorder, h, rank_l, rank_r, nt))
    m = np.empty(20)
    _dependence.moments_dd(x, y, ra[0], ra[1], rb[0], rb[1], m)
    return D, tuple(_exact(m[2 * k:2 * k + 2]) for k in range(10))


class SortedSide:
    """One 1-D variable prepared for :func:`sorted_cross`: centred, sorted once, its rows'
    distance sums formed once (double-double), and ``norm`` = ``Σ_ij A_ij²`` (V form) of its
    double-centred distance matrix (exponent 1)."""

    def __init__(self, v):
        n = self.n = v.size
        self.v = np.ascontiguousarray(v - _csum(v) / n)
        self.rows, self.order = _sorted_row_sums(self.v)
        self.pos = np.empty(n, dtype=np.intp)
        self.pos[self.order] = np.arange(n)
        m = np.empty(20)
        r = self.rows
        _dependence.moments_dd(self.v, self.v, r[0], r[1], r[0], r[1], m)
        s, _, ss, _, _, S, _, T2, _, _ = (_exact(m[2 * k:2 * k + 2]) for k in range(10))
        #: Σ_ij (v_i − v_j)² − 2 Σ_i a_i.² / n + a..² / n², exactly rounded
        self.norm = float(2 * n * ss - 2 * s * s - 2 * T2 / n + S * S / n**2)
        #: a.. = Σ_ij |v_i − v_j|
        self.total = float(S)


def sorted_cross(a, b, n_threads, perm=None):
    """``Σ_ij A_ij B_ij`` (V form) of the double-centred distance matrices of two
    :class:`SortedSide` variables, with ``b``'s rows in the order ``perm`` (None: as given):
    O(n log n), no sort (Huo and Székely 2016's sums, as :func:`_sums_1d`; one rounding)."""
    n = a.n
    if perm is None:
        y, rb, oy = b.v, b.rows, b.order
    else:
        inv = np.empty(n, dtype=np.intp)
        inv[perm] = np.arange(n)
        y = b.v[perm]
        rb = (b.rows[0][perm], b.rows[1][perm])
        oy = inv[b.order]
    D, (sx, sy, _, _, sxy, Sa, Sb, T2, _, _) = _pair_moments_1d(a.v, y, a.rows, rb, a.order, a.pos,
                                                                 oy, n_threads)
    T1 = 2 * (2 * D - (n * sxy - sx * sy))
    return float(T1 - 2 * T2 / n + Sa * Sb / n**2)


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
