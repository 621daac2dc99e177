# cython: language_level=3
"""E-Divisive split search (Matteson & James 2014) in O(T²·d) time and O(T) memory.

One segment Z_0 … Z_{T-1} (rows of a C-contiguous float64 array), rho(x, y) the
semimetric (``‖x − y‖^alpha``, or the Laplacian / Gaussian kernel distances).  For a split
with X = Z_0 … Z_{τ-1} (n = τ rows) and Y = Z_τ … Z_{κ-1} (m = κ − τ rows), with
B = Σ_{X×Y} rho, W_X = Σ_{i<k in X} rho and W_Y = Σ_{j<k in Y} rho,

    Q(τ, κ) = nm/(n+m) · (2B/(nm) − W_X/C(n,2) − W_Y/C(m,2))
            = 2/κ · (B − m·W_X/(n−1) − n·W_Y/(m−1)).

The sweep keeps c(j) = Σ_{i<τ} rho(Z_i, Z_j) for j ≥ τ (one row of rho added per step of τ,
O(T·d)), and the left column sums L(k) = Σ_{i<k} rho(Z_i, Z_k) computed once.  For fixed τ
the κ loop grows Y one row j = κ − 1 at a time: B += c(j), W_Y += L(j) − c(j) (the pairs
of row j with rows τ … j−1; the difference loses about eps·j/(j−τ) relative, never the
square of it as S(κ) − S(τ) − B would), and W_X(τ) = Σ_{k<τ} L(k).  No T×T matrix.

Tie rule: the smallest τ, then the smallest κ, among the splits with the largest Q (strict
``>`` in a loop over τ then κ, both upward; the τ-blocks of the threaded search are
reduced in τ order, and each block starts from the same sums in the same order as the
serial sweep, so the result is the same bits for every thread count).

Kernels release the GIL and read a process-wide cancel flag once per τ
(:func:`cancel`, :func:`reset`), as :mod:`energystats._lib._hartigan` does.
"""
import numpy as np

cimport cython
from cython.parallel cimport prange
from libc.math cimport INFINITY, exp, fabs, pow, sqrt
from libc.stdlib cimport free, malloc

from ._pairwise cimport es_simd_init, rho_block
from energystats._lib import simd_cap

cdef extern from *:
    """
    /* process-wide cancel flag of this module: written by cancel()/reset() from any thread,
       read by the sweeps once per split position */
    static volatile int es_cp_cancel_flag = 0;
    static inline int es_cp_cancelled(void) { return es_cp_cancel_flag; }
    static inline void es_cp_set_cancel(int v) { es_cp_cancel_flag = v; }
    #include "_cp_lanes.h"
    """
    int es_cp_cancelled() noexcept nogil
    void es_cp_set_cancel(int v) noexcept nogil
    int es_cp_lanes_init(int level) noexcept nogil
    int es_cp_lanes() noexcept nogil
    int es_cp_group(const double* Z, Py_ssize_t d, const Py_ssize_t* const* perm,
                    const Py_ssize_t* starts, const Py_ssize_t* ends, Py_ssize_t S,
                    Py_ssize_t maxlen, Py_ssize_t min_size, int code, int mode, double param,
                    int end_only, double* work, double* out) noexcept nogil

# this module's copy of the pair kernels' dispatch (_simd.h), and the permuted re-searches'
# lane kernels (_cp_lanes.h) of the same instruction set
es_cp_lanes_init(es_simd_init(simd_cap()))


def lanes():
    """Permutations one group of the lane kernels re-searches at once (0: serial sweeps only)."""
    return es_cp_lanes()

#: columns per task of the threaded left sums
cdef enum:
    LEFT_TILE = 2048

#: metric codes of the kernels (those of :mod:`energystats._core._metrics`)
ENERGY, LAPLACIAN, GAUSSIAN = 0, 1, 2


def cancel():
    """Ask the running sweeps to stop (they return early; the caller raises)."""
    es_cp_set_cancel(1)


def reset():
    """Clear the cancel flag (after the cancelled kernels have returned)."""
    es_cp_set_cancel(0)


def cancelled():
    """Whether the cancel flag is set."""
    return bool(es_cp_cancelled())


ctypedef struct Rho:
    int code        # 0 energy, 1 laplacian, 2 gaussian
    int mode        # energy: 1 alpha = 1, 2 alpha = 2, 3 |x - y| in 1-D, 0 general
    double param    # alpha, or sigma
    Py_ssize_t d


cdef Rho _make_rho(int code, double param, Py_ssize_t d):
    cdef Rho r
    r.code = code
    r.param = param
    r.d = d
    r.mode = 0
    if code == 0:
        if param == 1.0:
            r.mode = 3 if d == 1 else 1
        elif param == 2.0:
            r.mode = 2
    return r


cdef void _row_add(const double* Zt, Py_ssize_t T, Py_ssize_t i, Py_ssize_t j0, Py_ssize_t j1,
                   Rho* r, double* acc, double* tmp) noexcept nogil:
    """acc[j] += rho(Z_i, Z_j) for j in [j0, j1).  ``Zt`` is the series column by column
    (d×T, row stride T), so that every loop here runs over j and vectorises; ``tmp`` is T
    doubles of work space.  Squared distances are summed over the columns in order."""
    cdef Py_ssize_t j, k, d = r.d
    cdef double x, t, h
    cdef const double* col
    if j1 <= j0:
        return
    if r.mode == 3:
        x = Zt[i]
        for j in range(j0, j1):
            acc[j] = acc[j] + fabs(Zt[j] - x)
        return
    cdef double xi[8]
    if r.mode == 1 and d <= 8:
        # ‖x − y‖ by the pair kernels' vectorised row (dispatched to the machine's instruction
        # set; the squares added over the columns in order, as below: the same bits)
        for k in range(d):
            xi[k] = Zt[k * T + i]
        rho_block(xi, Zt, T, d, j0, j1, tmp + j0, 0, 1.0)
        for j in range(j0, j1):
            acc[j] = acc[j] + tmp[j]
        return
    x = Zt[i]
    for j in range(j0, j1):
        t = Zt[j] - x
        tmp[j] = t * t
    for k in range(1, d):
        col = Zt + k * T
        x = col[i]
        for j in range(j0, j1):
            t = col[j] - x
            tmp[j] = tmp[j] + t * t
    if r.code == 0:
        if r.mode == 1:
            for j in range(j0, j1):
                acc[j] = acc[j] + sqrt(tmp[j])
        elif r.mode == 2:
            for j in range(j0, j1):
                acc[j] = acc[j] + tmp[j]
        else:
            h = 0.5 * r.param
            for j in range(j0, j1):
                if tmp[j] > 0.0:
                    acc[j] = acc[j] + pow(tmp[j], h)
    elif r.code == 1:
        h = 1.0 / (2.0 * r.param)
        for j in range(j0, j1):
            acc[j] = acc[j] + (2.0 - 2.0 * exp(-sqrt(tmp[j]) * h))
    else:
        h = 1.0 / (2.0 * r.param * r.param)
        for j in range(j0, j1):
            acc[j] = acc[j] + (2.0 - 2.0 * exp(-tmp[j] * h))


cdef void _left_sums(const double* Zt, Py_ssize_t T, Py_ssize_t j0, Py_ssize_t j1, Rho* r,
                     double* L, double* tmp) noexcept nogil:
    """L[j] = Σ_{i<j} rho(Z_i, Z_j) for j in [j0, j1), the rows i added in ascending order
    (the same order whatever the column range)."""
    cdef Py_ssize_t i, j
    for j in range(j0, j1):
        L[j] = 0.0
    for i in range(j1 - 1):
        _row_add(Zt, T, i, i + 1 if i + 1 > j0 else j0, j1, r, L, tmp)


cdef int _sweep(const double* Zt, Py_ssize_t T, Rho* r, Py_ssize_t min_size, Py_ssize_t a,
                Py_ssize_t b, const double* L, double* c, double* best, double* table,
                int end_only=0) noexcept nogil:
    """The best split with τ in [a, b): best = (Q, τ, κ) (Q = -inf, τ = κ = -1: none).
    ``c`` is 4T + 2 doubles of work space; ``table`` NULL, or (T+1)×(T+1) doubles that get
    every admissible Q at [τ, κ] (tests); ``end_only``: κ = T only (the second part ends at
    the segment's end).  Returns 1 when cancelled.

    The κ loop takes two rows of Y per step (B and W_Y grow by the pair's sum), which halves
    the chain of dependent additions; the rounding depends on τ and κ only."""
    cdef Py_ssize_t i, j, tau, kap, m, n
    cdef double WX = 0.0, A, B, WY, q, q1, c0, c1, e0, e1, B0, W0, bq = -INFINITY
    cdef Py_ssize_t bt = -1, bk = -1
    cdef double* im1 = c + T       # im1[m] = 1 / (m - 1)
    cdef double* tk = c + 2 * T + 1  # tk[κ] = 2 / κ
    cdef double* tmp = c + 3 * T + 2
    for m in range(2, T + 1):
        im1[m] = 1.0 / (m - 1)
    for kap in range(1, T + 1):
        tk[kap] = 2.0 / kap
    for j in range(a, T):
        c[j] = 0.0
    for i in range(a):  # rows 0 .. a-1, in the order the serial sweep adds them
        _row_add(Zt, T, i, a, T, r, c, tmp)
        WX = WX + L[i]
    for tau in range(a, b):
        if es_cp_cancelled():
            return 1
        n = tau
        A = WX / (n - 1)
        B = 0.0
        WY = 0.0
        for j in range(tau, tau + min_size - 1):  # Y too short yet: sums only
            B = B + c[j]
            WY = WY + (L[j] - c[j])
        kap = tau + min_size
        while kap < T:  # rows j = κ - 1 and κ
            j = kap - 1
            c0 = c[j]
            c1 = c[j + 1]
            e0 = L[j] - c0
            e1 = L[j + 1] - c1
            B0 = B + c0
            W0 = WY + e0
            B = B + (c0 + c1)
            WY = WY + (e0 + e1)
            m = kap - tau
            q = (B0 - m * A - n * W0 * im1[m]) * tk[kap]
            q1 = (B - (m + 1) * A - n * WY * im1[m + 1]) * tk[kap + 1]
            if table != NULL:
                table[tau * (T + 1) + kap] = q
                table[tau * (T + 1) + kap + 1] = q1
            if end_only:
                if kap + 1 == T and q1 > bq:
                    bq, bt, bk = q1, tau, kap + 1
            elif q > bq or q1 > bq:
                if q >= q1:
                    bq, bt, bk = q, tau, kap
                else:
                    bq, bt, bk = q1, tau, kap + 1
            kap = kap + 2
        if kap == T:
            j = kap - 1
            B = B + c[j]
            WY = WY + (L[j] - c[j])
            m = kap - tau
            q = (B - m * A - n * WY * im1[m]) * tk[kap]
            if table != NULL:
                table[tau * (T + 1) + kap] = q
            if q > bq:
                bq, bt, bk = q, tau, kap
        if tau + 1 < b:
            _row_add(Zt, T, tau, tau + 1, T, r, c, tmp)
            WX = WX + L[tau]
    best[0] = bq
    best[1] = <double>bt
    best[2] = <double>bk
    return 0


def _blocks(Py_ssize_t T, Py_ssize_t lo, Py_ssize_t hi, int nblocks):
    """τ-block bounds lo = t_0 < … < t_B = hi with about equal sweep work Σ (T − τ)."""
    cdef double total = 0.0
    w = np.asarray(T - np.arange(lo, hi), dtype=np.float64)
    cum = np.concatenate([[0.0], np.cumsum(w)])
    total = cum[cum.shape[0] - 1]
    bounds = [lo]
    for k in range(1, nblocks):
        t = int(np.searchsorted(cum, total * k / nblocks))
        t = min(max(t + lo, bounds[len(bounds) - 1] + 1), hi)
        if t < hi:
            bounds.append(t)
    bounds.append(hi)
    return np.asarray(bounds, dtype=np.intp)


@cython.boundscheck(False)
@cython.wraparound(False)
def best_split(const double[:, ::1] Z, Py_ssize_t min_size, int code, double param,
               int n_threads=1, double[:, ::1] table=None, int end_only=0):
    """``(Q, τ, κ)`` of the best split of the segment ``Z`` (τ, κ = -1 and Q = -inf when
    ``T < 2·min_size``); ``min_size ≥ 2``.  The left sums and the τ-blocks run on
    ``n_threads`` threads; the result does not depend on the thread count.  ``table``
    (tests): a (T+1)×(T+1) array that gets Q(τ, κ) of every admissible split."""
    cdef Py_ssize_t T = Z.shape[0], d = Z.shape[1], k, nb, nt, j0, j1
    cdef Rho r = _make_rho(code, param, d)
    cdef double* tmp
    cdef int failed = 0
    if T < 2 * min_size:
        return -np.inf, -1, -1
    Zt_arr = np.ascontiguousarray(np.asarray(Z).T)  # d×T: the loops run over rows
    cdef const double[:, ::1] Zt = Zt_arr
    cdef const double* zt = &Zt[0, 0]
    L_arr = np.empty(T, dtype=np.float64)
    cdef double[::1] L = L_arr
    # left sums by column tiles (tile k costs about its last column × its width)
    nt = (T + LEFT_TILE - 1) // LEFT_TILE
    for k in prange(nt, num_threads=max(1, n_threads), schedule="dynamic", nogil=True):
        tmp = <double*>malloc(T * sizeof(double))
        if tmp == NULL:
            failed += 1
            continue
        j0 = k * LEFT_TILE
        j1 = min(T, j0 + LEFT_TILE)
        _left_sums(zt, T, j0, j1, &r, &L[0], tmp)
        free(tmp)
    if failed:
        raise MemoryError(f"no memory for a work row of {T} doubles")
    if es_cp_cancelled():
        raise KeyboardInterrupt("energystats: the computation was cancelled")
    bounds_arr = _blocks(T, min_size, T - min_size + 1, max(1, n_threads))
    cdef Py_ssize_t[::1] bounds = bounds_arr
    nb = bounds.shape[0] - 1
    out_arr = np.empty((nb, 3), dtype=np.float64)
    cdef double[:, ::1] out = out_arr
    cdef double* work
    cdef double* tab = NULL
    if table is not None:
        if table.shape[0] != T + 1 or table.shape[1] != T + 1:
            raise ValueError(f"`table` must have shape ({T + 1}, {T + 1})")
        tab = &table[0, 0]
    for k in prange(nb, num_threads=max(1, min(n_threads, nb)), schedule="static", nogil=True):
        work = <double*>malloc((4 * T + 2) * sizeof(double))
        if work == NULL:
            out[k, 0] = INFINITY
            out[k, 1] = -2.0
            continue
        if _sweep(zt, T, &r, min_size, bounds[k], bounds[k + 1], &L[0], work, &out[k, 0], tab,
                  end_only):
            out[k, 1] = -3.0
        free(work)
    if es_cp_cancelled() or np.any(out_arr[:, 1] == -3.0):
        raise KeyboardInterrupt("energystats: the computation was cancelled")
    if np.any(out_arr[:, 1] == -2.0):
        raise MemoryError(f"no memory for a work row of {T} doubles")
    bq, bt, bk = -np.inf, -1, -1
    for k in range(nb):  # in τ order: a later block wins only when strictly larger
        if out_arr[k, 0] > bq:
            bq, bt, bk = float(out_arr[k, 0]), int(out_arr[k, 1]), int(out_arr[k, 2])
    return bq, bt, bk


@cython.boundscheck(False)
@cython.wraparound(False)
def permuted_maxima(const double[:, ::1] Z, const Py_ssize_t[:, ::1] perms,
                    const Py_ssize_t[::1] starts, const Py_ssize_t[::1] ends,
                    Py_ssize_t min_size, int code, double param, int n_threads=1,
                    int end_only=0, int use_lanes=1):
    """For each row ``p`` of ``perms`` (a permutation of the rows that keeps every segment
    ``[starts[s], ends[s])``): the largest Q of the best splits of the segments of ``Z[p]``
    (-inf when no segment can be split).  With ``use_lanes`` (and a compiler with vector
    extensions), :func:`lanes` permutations per thread at a time, one per vector lane
    (``_cp_lanes.h``); otherwise one at a time.  The same bits either way."""
    cdef Py_ssize_t s, maxlen = 0
    for s in range(starts.shape[0]):
        maxlen = max(maxlen, ends[s] - starts[s])
    # two lanes (the SSE2 baseline) lose to the serial sweep in one dimension, where a
    # distance is one subtraction (T = 5000: 23.4 against 17.1 ms a permutation; d = 3: 42.3
    # against 53.5)
    if use_lanes and es_cp_lanes() > 0 and (es_cp_lanes() > 2 or Z.shape[1] > 1):
        out_arr = _maxima_lanes(Z, perms, starts, ends, maxlen, min_size, code, param, n_threads,
                                end_only)
    else:
        out_arr = _maxima_serial(Z, perms, starts, ends, maxlen, min_size, code, param, n_threads,
                                 end_only)
    if es_cp_cancelled():
        raise KeyboardInterrupt("energystats: the computation was cancelled")
    return out_arr


@cython.boundscheck(False)
@cython.wraparound(False)
cdef _maxima_lanes(const double[:, ::1] Z, const Py_ssize_t[:, ::1] perms,
                   const Py_ssize_t[::1] starts, const Py_ssize_t[::1] ends, Py_ssize_t maxlen,
                   Py_ssize_t min_size, int code, double param, int n_threads, int end_only):
    """Groups of :func:`lanes` permutations (the last group padded with copies of the last
    permutation, whose lanes are dropped), a group per thread at a time."""
    cdef Py_ssize_t R = perms.shape[0], d = Z.shape[1], S = starts.shape[0]
    cdef Py_ssize_t W = es_cp_lanes(), G = (R + W - 1) // W, g, p, rr
    cdef Rho r = _make_rho(code, param, d)
    out_arr = np.full(R, -np.inf)
    cdef double[::1] out = out_arr
    cdef double* work
    cdef const Py_ssize_t** rows
    cdef int failed = 0
    if R == 0:
        return out_arr
    for g in prange(G, num_threads=max(1, min(n_threads, G)), schedule="dynamic", nogil=True):
        if es_cp_cancelled():
            continue
        work = <double*>malloc((maxlen * (d + 2) * W + 2 * maxlen + 2 + 2 * W) * sizeof(double))
        rows = <const Py_ssize_t**>malloc(W * sizeof(Py_ssize_t*))
        if work == NULL or rows == NULL:
            failed += 1
            free(work)
            free(rows)
            continue
        for p in range(W):
            rows[p] = &perms[min(g * W + p, R - 1), 0]
        if es_cp_group(&Z[0, 0], d, rows, &starts[0], &ends[0], S, maxlen, min_size, r.code,
                       r.mode, r.param, end_only, work,
                       work + maxlen * (d + 2) * W + 2 * maxlen + 2 + W) == 0:
            for p in range(W):
                rr = g * W + p
                if rr < R:
                    out[rr] = work[maxlen * (d + 2) * W + 2 * maxlen + 2 + W + p]
        free(work)
        free(rows)
    if failed:
        raise MemoryError(f"no memory for the work rows of a segment of {maxlen} rows")
    return out_arr


@cython.boundscheck(False)
@cython.wraparound(False)
cdef _maxima_serial(const double[:, ::1] Z, const Py_ssize_t[:, ::1] perms,
                    const Py_ssize_t[::1] starts, const Py_ssize_t[::1] ends, Py_ssize_t maxlen,
                    Py_ssize_t min_size, int code, double param, int n_threads, int end_only):
    """One permutation per thread at a time (the serial sweep of each segment)."""
    cdef Py_ssize_t R = perms.shape[0], T = Z.shape[0], d = Z.shape[1], S = starts.shape[0]
    cdef Py_ssize_t rr, s, i, k, t0, tn
    cdef Rho r = _make_rho(code, param, d)
    out_arr = np.full(R, -np.inf)
    cdef double[::1] out = out_arr
    cdef const double* z = &Z[0, 0]
    cdef double* buf
    cdef double* best
    cdef int failed = 0
    for rr in prange(R, num_threads=max(1, n_threads), schedule="dynamic", nogil=True):
        if es_cp_cancelled():
            continue
        buf = <double*>malloc((maxlen * (d + 5) + 5) * sizeof(double))
        if buf == NULL:
            failed += 1
            continue
        best = buf + maxlen * (d + 5) + 2
        for s in range(S):
            t0 = starts[s]
            tn = ends[s] - t0
            if tn < 2 * min_size:
                continue
            for k in range(d):  # the permuted segment, column by column (stride tn)
                for i in range(tn):
                    buf[k * tn + i] = z[perms[rr, t0 + i] * d + k]
            _left_sums(buf, tn, 0, tn, &r, buf + maxlen * d, buf + maxlen * (d + 1) + 3 * tn + 2)
            if _sweep(buf, tn, &r, min_size, min_size, tn - min_size + 1, buf + maxlen * d,
                      buf + maxlen * (d + 1), best, NULL, end_only):
                break
            if best[0] > out[rr]:
                out[rr] = best[0]
        free(buf)
    if failed:
        raise MemoryError(f"no memory for the work rows of a segment of {maxlen} rows")
    return out_arr


# -- e.cp3o (Zhang, James & Matteson 2017): windowed E-statistics and their dynamic programme ---
#
# Rows Z_0 … Z_{T-1}; a change point s ends a segment (its last row, ecp's convention); with
# u < s < t the left segment is rows u+1 … s, the right one s+1 … t.  δ ≥ 2 rows on each side
# of s form the windows; the caller passes, for every s with δ-1 ≤ s ≤ T-δ-1,
#   wl[s] = Σ ρ over the pairs within rows s-δ+1 … s      (δ(δ-1)/2 pairs),
#   wr[s] = Σ ρ over the pairs within rows s+1 … s+δ,
#   bt[s] = Σ ρ over rows s-δ+1 … s × rows s+1 … s+δ      (δ² pairs),
# and d1[i] = ρ(Z_i, Z_{i+1}).  The rest of each segment enters its within mean through its
# consecutive pairs only (cheap and unbiased for iid rows):
#   Ŵ_L = (wl[s] + Σ_{i=u+2}^{s-δ+1} ρ(Z_{i-1}, Z_i)) / (δ(δ-1)/2 + s-u-δ),
#   Ŵ_R = (wr[s] + Σ_{i=s+δ+1}^{t}  ρ(Z_{i-1}, Z_i)) / (δ(δ-1)/2 + t-s-δ),
#   E(u, s, t) = (2 bt[s]/δ² − Ŵ_L − Ŵ_R) · (s-u)(t-s)/(t-u)².
# The consecutive sums come from prefix sums carried in double-double, so a far outlier earlier
# in the series costs no digits of a later difference.

cdef inline double _cons(const double* ch, const double* cl, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """Σ ρ(Z_{i-1}, Z_i) for i = a+1 … b (0 when b ≤ a)."""
    if b <= a:
        return 0.0
    return (ch[b] - ch[a]) + (cl[b] - cl[a])


cdef inline double _cp3o_stat(Py_ssize_t u, Py_ssize_t s, Py_ssize_t t, Py_ssize_t delta,
                              double pairs, const double* wl, const double* wr, const double* bt,
                              const double* ch, const double* cl) noexcept nogil:
    cdef double left = (wl[s] + _cons(ch, cl, u + 1, s - delta + 1)) / (pairs + <double>(s - u - delta))
    cdef double right = (wr[s] + _cons(ch, cl, s + delta, t)) / (pairs + <double>(t - s - delta))
    cdef double e = 2.0 * bt[s] / (<double>delta * <double>delta) - left - right
    cdef double span = <double>(t - u)
    return e * (<double>(s - u) * <double>(t - s)) / (span * span)


cdef _cp3o_prefix(const double[::1] d1):
    """The double-double prefix sums (hi, lo) of d1, with a leading 0: c[i] = Σ_{j<i} d1[j]."""
    cdef Py_ssize_t n = d1.shape[0], i
    ch_arr = np.zeros(n + 1)
    cl_arr = np.zeros(n + 1)
    cdef double[::1] ch = ch_arr, cl = cl_arr
    cdef double h = 0.0, l = 0.0, s, v, e
    with nogil:
        for i in range(n):
            s = h + d1[i]          # TwoSum of h and d1[i], the error folded into l
            v = s - h
            e = (h - (s - v)) + (d1[i] - v) + l
            h = s + e
            l = e - (h - s)
            ch[i + 1] = h
            cl[i + 1] = l
    return ch_arr, cl_arr


def cp3o_statistic(const double[::1] d1, const double[::1] wl, const double[::1] wr,
                   const double[::1] bt, Py_ssize_t delta, Py_ssize_t u, Py_ssize_t s,
                   Py_ssize_t t):
    """E(u, s, t) above (tests; no checks beyond the caller's)."""
    ch_arr, cl_arr = _cp3o_prefix(d1)
    cdef double[::1] ch = ch_arr, cl = cl_arr
    return _cp3o_stat(u, s, t, delta, 0.5 * delta * (delta - 1), &wl[0], &wr[0], &bt[0],
                      &ch[0], &cl[0])


def cp3o_path(const double[::1] d1, const double[::1] wl, const double[::1] wr,
              const double[::1] bt, Py_ssize_t delta, double[:, ::1] F, Py_ssize_t[:, ::1] A,
              int n_threads=1):
    """ecp's dynamic programme, into F (K×T, -inf where none) and A (K×T, -1 where none):
    F[0, t] = max_s E(-1, s, t); F[k, t] = max_s F[k-1, s] + E(A[k-1, s], s, t) — the last
    segment is scored against the one before it in the best k-change fit of rows 0 … s, not
    against every earlier boundary (which would cost T³).  Segments have ≥ δ+1 rows; ties go
    to the smallest s.  Each t is one task (threads split the t's; the result does not depend
    on the thread count).  Returns 1 when cancelled, else 0."""
    cdef Py_ssize_t T = wl.shape[0], K = F.shape[0], k, t, s, u, lo
    cdef double pairs = 0.5 * delta * (delta - 1), best, val
    ch_arr, cl_arr = _cp3o_prefix(d1)
    cdef double[::1] ch = ch_arr, cl = cl_arr
    cdef const double* pwl = &wl[0]
    cdef const double* pwr = &wr[0]
    cdef const double* pbt = &bt[0]
    cdef const double* pch = &ch[0]
    cdef const double* pcl = &cl[0]
    cdef Py_ssize_t bs
    for k in range(K):
        if es_cp_cancelled():
            return 1
        lo = (k + 1) * (delta + 1) - 1          # the smallest s with k+1 segments before it
        for t in prange(lo + delta + 1, T, num_threads=max(1, n_threads), schedule="dynamic",
                        chunksize=16, nogil=True):
            if es_cp_cancelled():
                continue
            best = -INFINITY
            bs = -1
            for s in range(lo, t - delta):
                if k == 0:
                    val = _cp3o_stat(-1, s, t, delta, pairs, pwl, pwr, pbt, pch, pcl)
                else:
                    if F[k - 1, s] == -INFINITY:
                        continue
                    u = A[k - 1, s]
                    val = F[k - 1, s] + _cp3o_stat(u, s, t, delta, pairs, pwl, pwr, pbt, pch, pcl)
                if val > best:
                    best = val
                    bs = s
            F[k, t] = best
            A[k, t] = bs
    return 1 if es_cp_cancelled() else 0


def cp3o_exact(const double[::1] d1, const double[::1] wl, const double[::1] wr,
               const double[::1] bt, Py_ssize_t delta, Py_ssize_t K, int n_threads=1):
    """The exact maximum of Σ_i E(τ_{i-1}, τ_i, τ_{i+1}) (τ_0 = -1, τ_{k+1} = T-1) over every
    segmentation with k = 1 … K change points and segments of ≥ δ+1 rows, by a programme on the
    last two boundaries: G_k(s, t) = max_u G_{k-1}(u, s) + E(u, s, t).  O(K·T³) time and
    O(K·T²) memory: for short series (the caller bounds T).  Returns (gof, changepoints, cancelled):
    gof[k-1] the maximum with k changes (-inf when none fits), changepoints[k-1] its boundaries."""
    cdef Py_ssize_t T = wl.shape[0], k, t, s, u, lo, bu
    cdef double pairs = 0.5 * delta * (delta - 1), best, val, g
    ch_arr, cl_arr = _cp3o_prefix(d1)
    cdef double[::1] ch = ch_arr, cl = cl_arr
    G_arr = np.full((K, T, T), -np.inf)
    B_arr = np.full((K, T, T), -1, dtype=np.intp)
    cdef double[:, :, ::1] G = G_arr
    cdef Py_ssize_t[:, :, ::1] B = B_arr
    cdef const double* pwl = &wl[0]
    cdef const double* pwr = &wr[0]
    cdef const double* pbt = &bt[0]
    cdef const double* pch = &ch[0]
    cdef const double* pcl = &cl[0]
    for k in range(K):
        if es_cp_cancelled():
            return None, None, True
        lo = (k + 1) * (delta + 1) - 1
        for t in prange(lo + delta + 1, T, num_threads=max(1, n_threads), schedule="dynamic",
                        nogil=True):
            if es_cp_cancelled():
                continue
            for s in range(lo, t - delta):
                if k == 0:
                    G[0, s, t] = _cp3o_stat(-1, s, t, delta, pairs, pwl, pwr, pbt, pch, pcl)
                    continue
                best = -INFINITY
                bu = -1
                for u in range(k * (delta + 1) - 1, s - delta):
                    g = G[k - 1, u, s]
                    if g == -INFINITY:
                        continue
                    val = g + _cp3o_stat(u, s, t, delta, pairs, pwl, pwr, pbt, pch, pcl)
                    if val > best:
                        best = val
                        bu = u
                G[k, s, t] = best
                B[k, s, t] = bu
    if es_cp_cancelled():
        return None, None, True
    gof = np.full(K, -np.inf)
    cps = []
    for k in range(K):
        row = G_arr[k, :, T - 1]
        if not np.isfinite(row).any():
            cps.append(np.empty(0, dtype=np.intp))
            continue
        s = int(np.argmax(row))                  # ties: the smallest s, as the programme's
        gof[k] = row[s]
        out = [s]
        t = T - 1
        for kk in range(k, 0, -1):
            u = B_arr[kk, s, t]
            out.append(u)
            t = s
            s = u
        cps.append(np.array(out[::-1], dtype=np.intp))
    return gof, cps, False
