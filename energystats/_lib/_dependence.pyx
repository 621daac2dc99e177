# cython: language_level=3
"""Streamed kernels for distance covariance (Székely, Rizzo and Bakirov 2007).

Two passes over the pairs, no n×n matrix:

1. ``row_sums``: ``ra[i] = Σ_j a(x_i, x_j)`` and ``rb[i] = Σ_j b(y_i, y_j)``;
2. ``centred_products``: for each row ``i`` and ``j > i`` the double-centred
   values ``A_ij = a_ij − ā_i − ā_j + ā`` (V) and the U-centred values
   ``Ã_ij = a_ij − a_i./(n−2) − a_.j/(n−2) + a../((n−1)(n−2))`` are formed pair
   by pair and ``A·B``, ``A·A``, ``B·B`` (both forms) summed — the centring is
   applied to each term, never by combining the raw sums ``Σ a b``,
   ``Σ a_i. b_i.`` and ``a.. b..``, whose difference cancels catastrophically at
   large n.

Each row's sums are formed by one thread, in a fixed order, with compensated
(Neumaier) summation, and written to that row's slot; the caller adds the rows
up (``math.fsum``).  Results are therefore the same for any number of threads.
The arithmetic is in double precision whatever the input type.
"""
import numpy as np

cimport cython
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc

from ._pairwise cimport kahan_add, transform_sq

cdef Py_ssize_t COL_BLOCK = 256


cdef inline void sq_row(const floating* xi, const floating* XT, Py_ssize_t ldx,
                        Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* buf) noexcept nogil:
    """buf[j - j0] = ||xi - X[j]||² for j in [j0, j1)."""
    cdef Py_ssize_t t, j, m = j1 - j0
    cdef double xv, diff
    cdef const floating* col
    for j in range(m):
        buf[j] = 0.0
    for t in range(d):
        xv = xi[t]
        col = XT + t * ldx + j0
        for j in range(m):
            diff = xv - <double>col[j]
            buf[j] += diff * diff


cdef inline void pair_rows(const floating* xi, const floating* XT, const floating* yi,
                           const floating* YT, Py_ssize_t n, Py_ssize_t dx, Py_ssize_t dy,
                           Py_ssize_t j0, Py_ssize_t j1, int metric, double param_x,
                           double param_y, double* bx, double* by) noexcept nogil:
    """bx, by = a(x_i, x_j), b(y_i, y_j) for j in [j0, j1)."""
    sq_row(xi, XT, n, dx, j0, j1, bx)
    transform_sq(bx, j1 - j0, metric, param_x)
    sq_row(yi, YT, n, dy, j0, j1, by)
    transform_sq(by, j1 - j0, metric, param_y)


@cython.boundscheck(False)
@cython.wraparound(False)
def row_sums(const floating[:, ::1] X, const floating[:, ::1] XT,
             const floating[:, ::1] Y, const floating[:, ::1] YT,
             int metric, double param_x, double param_y, Py_ssize_t row0, Py_ssize_t row1,
             double[:, ::1] out,              # OUT (n, 2): rows row0..row1-1 written
             int n_threads):
    """``out[i] = (Σ_j a_ij, Σ_j b_ij)`` for ``row0 <= i < row1`` (full rows)."""
    cdef Py_ssize_t n = X.shape[0], dx = X.shape[1], dy = Y.shape[1]
    cdef Py_ssize_t i, j, j0, j1
    cdef double sa, ca, sb, cb, pa, pb
    cdef double* bx
    cdef double* by
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        bx = <double*> malloc(COL_BLOCK * sizeof(double))
        by = <double*> malloc(COL_BLOCK * sizeof(double))
        for i in prange(row0, row1, schedule="static"):
            sa = 0.0
            ca = 0.0
            sb = 0.0
            cb = 0.0
            j0 = 0
            while j0 < n:
                j1 = j0 + COL_BLOCK
                if j1 > n:
                    j1 = n
                pair_rows(&X[i, 0], &XT[0, 0], &Y[i, 0], &YT[0, 0], n, dx, dy, j0, j1, metric,
                          param_x, param_y, bx, by)
                pa = 0.0
                pb = 0.0
                for j in range(j1 - j0):
                    pa = pa + bx[j]
                    pb = pb + by[j]
                kahan_add(&sa, &ca, pa)
                kahan_add(&sb, &cb, pb)
                j0 = j1
            out[i, 0] = sa + ca
            out[i, 1] = sb + cb
        free(bx)
        free(by)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def centred_products(const floating[:, ::1] X, const floating[:, ::1] XT,
                     const floating[:, ::1] Y, const floating[:, ::1] YT,
                     int metric, double param_x, double param_y,
                     const double[::1] va, const double[::1] vb,   # IN (n,) V centring ā_i, b̄_i
                     double ga, double gb,                         # IN V grand means ā, b̄
                     const double[::1] ua, const double[::1] ub,   # IN (n,) U centring a_i./(n-2)
                     double uga, double ugb,                       # IN U grand terms a../((n-1)(n-2))
                     Py_ssize_t row0, Py_ssize_t row1,
                     double[:, ::1] out,              # OUT (n, 6): rows row0..row1-1 written
                     int n_threads):
    """Per row ``i``: Σ_{j>i} of A·B, A·A, B·B (V-centred) and Ã·B̃, Ã·Ã, B̃·B̃ (U-centred)."""
    cdef Py_ssize_t n = X.shape[0], dx = X.shape[1], dy = Y.shape[1]
    cdef Py_ssize_t i, j, j0, j1, m, t
    cdef double A, B, At, Bt, p0, p1, p2, p3, p4, p5
    cdef double* bx
    cdef double* by
    cdef double* acc
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        bx = <double*> malloc(COL_BLOCK * sizeof(double))
        by = <double*> malloc(COL_BLOCK * sizeof(double))
        acc = <double*> malloc(12 * sizeof(double))
        for i in prange(row0, row1, schedule="dynamic", chunksize=4):
            for t in range(12):
                acc[t] = 0.0
            j0 = i + 1
            while j0 < n:
                j1 = j0 + COL_BLOCK
                if j1 > n:
                    j1 = n
                m = j1 - j0
                pair_rows(&X[i, 0], &XT[0, 0], &Y[i, 0], &YT[0, 0], n, dx, dy, j0, j1, metric,
                          param_x, param_y, bx, by)
                p0 = 0.0
                p1 = 0.0
                p2 = 0.0
                p3 = 0.0
                p4 = 0.0
                p5 = 0.0
                for j in range(m):
                    A = bx[j] - va[i] - va[j0 + j] + ga
                    B = by[j] - vb[i] - vb[j0 + j] + gb
                    At = bx[j] - ua[i] - ua[j0 + j] + uga
                    Bt = by[j] - ub[i] - ub[j0 + j] + ugb
                    p0 = p0 + A * B
                    p1 = p1 + A * A
                    p2 = p2 + B * B
                    p3 = p3 + At * Bt
                    p4 = p4 + At * At
                    p5 = p5 + Bt * Bt
                kahan_add(&acc[0], &acc[6], p0)
                kahan_add(&acc[1], &acc[7], p1)
                kahan_add(&acc[2], &acc[8], p2)
                kahan_add(&acc[3], &acc[9], p3)
                kahan_add(&acc[4], &acc[10], p4)
                kahan_add(&acc[5], &acc[11], p5)
                j0 = j1
            for t in range(6):
                out[i, t] = acc[t] + acc[t + 6]
        free(bx)
        free(by)
        free(acc)


@cython.boundscheck(False)
@cython.wraparound(False)
def permuted_products(const double[:, ::1] A,          # IN (n, n) centred, symmetric
                      const double[:, ::1] B,          # IN (n, n) centred, symmetric
                      const Py_ssize_t[:, ::1] perms,  # IN (R, n) permutations of 0..n-1
                      double[::1] out,                 # OUT (R,)
                      int n_threads):
    """``out[r] = Σ_ij A[i, j] B[p_i, p_j]`` with ``p = perms[r]`` (symmetry: the upper triangle
    twice plus the diagonal).  One permutation per thread, rows summed in a fixed order with
    compensation: the same bits for any number of threads."""
    cdef Py_ssize_t R = perms.shape[0], n = A.shape[0]
    cdef Py_ssize_t r, i, j, pi
    cdef double s, c, row
    cdef const Py_ssize_t* p
    cdef const double* brow
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        for r in prange(R, schedule="dynamic", chunksize=1):
            p = &perms[r, 0]
            s = 0.0
            c = 0.0
            for i in range(n):
                pi = p[i]
                brow = &B[pi, 0]
                row = 0.0
                for j in range(i + 1, n):
                    row = row + A[i, j] * brow[p[j]]
                kahan_add(&s, &c, 2.0 * row + A[i, i] * brow[pi])
            out[r] = s + c


cdef inline void fenwick_add(double* tree, Py_ssize_t n, Py_ssize_t pos, double v) noexcept nogil:
    pos += 1
    while pos <= n:
        tree[pos] += v
        pos += pos & (-pos)


cdef inline double fenwick_prefix(const double* tree, Py_ssize_t pos) noexcept nogil:
    """Sum of the values at positions < pos."""
    cdef double s = 0.0
    while pos > 0:
        s += tree[pos]
        pos -= pos & (-pos)
    return s


@cython.boundscheck(False)
@cython.wraparound(False)
def cross_sum_1d(const double[::1] xs,          # IN (n,) x in increasing order
                 const double[::1] ys,          # IN (n,) y of the same points
                 const Py_ssize_t[::1] ry):     # IN (n,) rank of each y (ties share the lowest rank)
    """``Σ_{i<j} |x_i − x_j| |y_i − y_j|`` in O(n log n) (Huo and Székely 2016).

    The points are visited in increasing x; for point j the earlier points with
    ``y_i < y_j`` and with ``y_i >= y_j`` are summed through Fenwick trees over
    the y ranks (count, Σx, Σy, Σxy), so that
    ``Σ_{i<j} (x_j − x_i)|y_j − y_i|`` follows from four prefix sums.  The data
    should be centred (the per-point expansions then cancel little); the
    contributions are added with compensation.
    """
    cdef Py_ssize_t n = xs.shape[0], j, r
    cdef double xj, yj, c_lt, sx_lt, sy_lt, sxy_lt, c_ge, sx_ge, sy_ge, sxy_ge
    cdef double tc = 0.0, tx = 0.0, ty = 0.0, txy = 0.0, lt, ge, s = 0.0, comp = 0.0
    cdef double* tree = <double*> malloc(4 * (n + 1) * sizeof(double))
    if tree == NULL:
        raise MemoryError("cross_sum_1d: no memory for the Fenwick trees")
    cdef double* fc = tree
    cdef double* fx = tree + (n + 1)
    cdef double* fy = tree + 2 * (n + 1)
    cdef double* fxy = tree + 3 * (n + 1)
    try:
        with nogil:
            for j in range(4 * (n + 1)):
                tree[j] = 0.0
            for j in range(n):
                xj = xs[j]
                yj = ys[j]
                r = ry[j]
                c_lt = fenwick_prefix(fc, r)
                sx_lt = fenwick_prefix(fx, r)
                sy_lt = fenwick_prefix(fy, r)
                sxy_lt = fenwick_prefix(fxy, r)
                c_ge = tc - c_lt
                sx_ge = tx - sx_lt
                sy_ge = ty - sy_lt
                sxy_ge = txy - sxy_lt
                # Σ (x_j − x_i)(y_j − y_i) over earlier i with y_i < y_j, and over y_i >= y_j
                lt = xj * yj * c_lt - xj * sy_lt - yj * sx_lt + sxy_lt
                ge = xj * yj * c_ge - xj * sy_ge - yj * sx_ge + sxy_ge
                kahan_add(&s, &comp, lt - ge)
                fenwick_add(fc, n, r, 1.0)
                fenwick_add(fx, n, r, xj)
                fenwick_add(fy, n, r, yj)
                fenwick_add(fxy, n, r, xj * yj)
                tc += 1.0
                tx += xj
                ty += yj
                txy += xj * yj
    finally:
        free(tree)
    return s + comp
