# cython: language_level=3
"""Kernels of distance-correlation screening: many 1-D columns x_j against one 1-D y.

``sorted_columns_1d``: for each column the double-double sums of the O(n log n) path of
:func:`energystats._core._pair_sums._sums_1d` (Huo and Székely 2016), with the same inline
code (:mod:`._dd`) in the same order, so that each column's sums are those of a call on that
column alone, bit for bit; the columns are spread over the threads (one column, one thread).

``permuted_columns_1d``: for each column and each permutation of y, the part of
n² dCov²(x_j, y∘π) that depends on the permutation, in plain double precision (the
permutation test's ordering, not the reported statistic): ``2 Σ_{i<k} |x_i − x_k||y_π(i) −
y_π(k)| − (2/n) Σ_i a_i b_π(i)`` with ``a_i``, ``b_i`` the rows' distance sums.  Every column
shares the permutations; one Fenwick pass per (column, permutation), O(n log n).
"""
import numpy as np

cimport cython
from cython.parallel cimport parallel, prange
from libc.math cimport fma
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from ._dd cimport cross_moment, dominance_moment, moments, sorted_row_sums
from ._pairwise cimport kahan_add


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def centre_rows(const double[:, ::1] XT,    # IN (p, n) one column of the data per row
                double[:, ::1] out,          # OUT (p, n) each row minus its mean
                int n_threads):
    """``out[j] = XT[j] − (Σ XT[j]) / n`` with the sum compensated (Neumaier) in order, as
    :func:`energystats._core._pair_sums._csum` forms it."""
    cdef Py_ssize_t p = XT.shape[0], n = XT.shape[1], j, i
    cdef double s, c, m
    with nogil:
        for j in prange(p, num_threads=max(1, n_threads), schedule="static"):
            s = 0.0
            c = 0.0
            for i in range(n):
                kahan_add(&s, &c, XT[j, i] * 1.0)
            m = (s + c) / <double> n
            for i in range(n):
                out[j, i] = XT[j, i] - m


@cython.boundscheck(False)
@cython.wraparound(False)
def sorted_columns_1d(const double[:, ::1] XT,          # IN (p, n) centred columns, working units
                      const Py_ssize_t[:, ::1] OX,      # IN (p, n) each row's argsort
                      const double[::1] y,              # IN (n,) centred y, working units
                      const double[::1] bh,             # IN (n,) y's rows' distance sums (hi)
                      const double[::1] bl,             # IN (n,) (lo)
                      const Py_ssize_t[::1] oy,         # IN (n,) argsort of y
                      double[:, ::1] out,               # OUT (p, 22) D (2), then the 20 moments
                      int n_threads):
    """Per column j: ``out[j, 0:2]`` the dominance sum D of :func:`._dependence.dominance_moment_1d`
    (split at h = n // 2) and ``out[j, 2:22]`` the moments of :func:`._dependence.moments_dd`."""
    cdef Py_ssize_t p = XT.shape[0], n = XT.shape[1], h = n // 2
    cdef Py_ssize_t j, k, o, q, cl, cr
    cdef double* xs
    cdef double* ys
    cdef double* hi
    cdef double* lo
    cdef double* ah
    cdef double* al
    cdef double* tree
    cdef Py_ssize_t* pos
    cdef Py_ssize_t* yorder
    cdef Py_ssize_t* rank_l
    cdef Py_ssize_t* rank_r
    cdef double* parts
    cdef double* tot
    cdef int failed[1]
    failed[0] = 0
    if n < 2 or p == 0:
        return
    with nogil, parallel(num_threads=max(1, n_threads)):
        xs = <double*> malloc((6 * n + 6) * sizeof(double))
        tree = <double*> malloc(8 * (n + 1) * sizeof(double))
        pos = <Py_ssize_t*> malloc(3 * n * sizeof(Py_ssize_t))
        if xs == NULL or tree == NULL or pos == NULL:
            failed[0] = 1
        else:
            ys = xs + n
            hi = xs + 2 * n
            lo = xs + 3 * n
            ah = xs + 4 * n
            al = xs + 5 * n
            parts = xs + 6 * n          # per thread: parts[0:4], tot[0:2]
            tot = parts + 4
            yorder = pos + n
            rank_l = pos + 2 * n
            rank_r = rank_l + h
            for j in prange(p, schedule="dynamic"):
                for k in range(n):
                    o = OX[j, k]
                    xs[k] = XT[j, o]
                    ys[k] = y[o]
                sorted_row_sums(xs, n, hi, lo, tot)
                for k in range(n):
                    o = OX[j, k]
                    ah[o] = hi[k]
                    al[o] = lo[k]
                    pos[o] = k
                for k in range(n):
                    yorder[k] = pos[oy[k]]
                cl = 0
                cr = 0
                for k in range(n):
                    q = yorder[k]
                    if q < h:
                        rank_l[q] = cl
                        cl = cl + 1
                    else:
                        rank_r[q - h] = cr
                        cr = cr + 1
                dominance_moment(xs, ys, rank_l, h, tree, parts)
                dominance_moment(xs + h, ys + h, rank_r, n - h, tree, parts + 2)
                cross_moment(xs, ys, yorder, n, h, parts, &out[j, 0])
                moments(&XT[j, 0], &y[0], ah, al, &bh[0], &bl[0], n, &out[j, 2])
        free(xs)
        free(tree)
        free(pos)
    if failed[0]:
        raise MemoryError("sorted_columns_1d: no memory for a thread's work arrays")


cdef inline double permuted_pass(const double* xs, const Py_ssize_t* ox, const Py_ssize_t* perm,
                                 const double* y, const Py_ssize_t* yrank,
                                 const double* a, const double* b, Py_ssize_t n,
                                 double sx, double sy, double* tree) noexcept nogil:
    """``2 Σ_{i<k} |Δx||Δy| − (2/n) Σ_i a_i b_π(i)`` for x in sorted order ``xs`` (original
    positions ``ox``) against y∘π: one Fenwick pass over the y ranks (count, Σx, Σy, Σxy of the
    points before with a smaller rank; Huo and Székely 2016)."""
    cdef Py_ssize_t k, o, q, r, t
    cdef double c, qx, qy, qxy, xk, yk, D = 0.0, sxy = 0.0, t2 = 0.0
    cdef double* node
    memset(tree, 0, 4 * (n + 1) * sizeof(double))
    for k in range(n):
        o = ox[k]
        q = perm[o]
        xk = xs[k]
        yk = y[q]
        r = yrank[q]
        c = 0.0
        qx = 0.0
        qy = 0.0
        qxy = 0.0
        t = r
        while t > 0:
            node = tree + 4 * t
            c = c + node[0]
            qx = qx + node[1]
            qy = qy + node[2]
            qxy = qxy + node[3]
            t = t - (t & (-t))
        D = D + ((xk * yk) * c - xk * qy - yk * qx + qxy)
        sxy = sxy + xk * yk
        t2 = t2 + a[o] * b[q]
        t = r + 1
        while t <= n:
            node = tree + 4 * t
            node[0] = node[0] + 1.0
            node[1] = node[1] + xk
            node[2] = node[2] + yk
            node[3] = node[3] + xk * yk
            t = t + (t & (-t))
    # Σ_{i<k} |Δx||Δy| = 2 D − F,  F = n Σ x y − Σ x Σ y
    return 2.0 * (2.0 * D - (n * sxy - sx * sy)) - 2.0 * t2 / <double> n


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def permuted_columns_1d(const double[:, ::1] XS,        # IN (p, n) centred columns, each sorted
                        const Py_ssize_t[:, ::1] OX,    # IN (p, n) each column's argsort
                        const double[:, ::1] A,         # IN (p, n) rows' distance sums of x_j
                        const double[::1] y,            # IN (n,) centred y
                        const Py_ssize_t[::1] yrank,    # IN (n,) rank of y_i (ties in any order)
                        const double[::1] b,            # IN (n,) rows' distance sums of y
                        const Py_ssize_t[:, ::1] perms, # IN (R, n) permutations of 0..n-1
                        double[:, ::1] out,             # OUT (p, R)
                        int n_threads):
    """``out[j, r]``: the permuted statistic of column j under permutation r (see the module
    notes).  Each (j, r) is one sequential pass: the same bits for any number of threads."""
    cdef Py_ssize_t p = XS.shape[0], n = XS.shape[1], R = perms.shape[0], j, r, k
    cdef double sx, sy = 0.0
    cdef double* tree
    cdef int failed[1]
    failed[0] = 0
    if n < 2 or p == 0 or R == 0:
        return
    for k in range(n):
        sy = sy + y[k]
    with nogil, parallel(num_threads=max(1, n_threads)):
        tree = <double*> malloc(4 * (n + 1) * sizeof(double))
        if tree == NULL:
            failed[0] = 1
        else:
            for j in prange(p, schedule="dynamic"):
                sx = 0.0
                for k in range(n):
                    sx = sx + XS[j, k]
                for r in range(R):
                    out[j, r] = permuted_pass(&XS[j, 0], &OX[j, 0], &perms[r, 0], &y[0], &yrank[0],
                                              &A[j, 0], &b[0], n, sx, sy, tree)
        free(tree)
    if failed[0]:
        raise MemoryError("permuted_columns_1d: no memory for a thread's Fenwick tree")
