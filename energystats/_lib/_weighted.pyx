# cython: language_level=3
"""Streamed kernels of the weighted energy statistics (sample weights; no n×n matrix).

* ``weighted_group_rows``: for rows sorted by group, ``out[i, h] = Σ_{j > i, j ∈ C_h} w_j ρ(x_i, x_j)``
  (the caller multiplies by ``w_i`` and adds the rows of each group: the k×k weighted sums);
* ``weighted_row_sums``: ``out[i] = (Σ_j w_j a_ij, Σ_j w_j b_ij)`` (full rows);
* ``weighted_centred_products``: per row i, ``Σ_{j > i} w_j A_ij B_ij``, ``Σ w_j A_ij²`` and
  ``Σ w_j B_ij²`` with the weighted double-centred values ``A_ij = a_ij − ā_i − ā_j + ā`` formed
  pair by pair (the caller multiplies by ``w_i`` and adds the rows);
* ``weighted_group_centred_rows``: per row i and group h, ``Σ_{j > i, j ∈ C_h} w_j A_ij B_ij``,
  ``Σ w_j a_ij`` and ``Σ w_j b_ij`` (the cell sums of the approximate independence weights).

Each row is formed by one thread, in a fixed order, with compensated (Neumaier) summation,
and written to that row's slot: the results are the same for any number of threads.  The
arithmetic is in double precision whatever the input type.
"""
cimport cython
from cython cimport floating
from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc

from ._pairwise cimport es_simd_init, kahan_add, rho_block
from energystats._lib import simd_cap

es_simd_init(simd_cap())  # this module's copy of the pair kernels' dispatch (_simd.h)

cdef Py_ssize_t COL_BLOCK = 256


@cython.boundscheck(False)
@cython.wraparound(False)
def weighted_group_rows(const floating[:, ::1] X, const floating[:, ::1] XT,
                        const double[::1] w,            # IN (n,) weights of the columns
                        const Py_ssize_t[::1] bounds,   # IN (k + 1,) group h: rows [bounds[h], bounds[h+1])
                        int metric, double param, Py_ssize_t row0, Py_ssize_t row1,
                        double[:, ::1] out,             # OUT (row1 - row0, k)
                        int n_threads):
    """``out[i - row0, h] = Σ_{j > i, j in group h} w_j rho(x_i, x_j)`` for ``row0 <= i < row1``."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = bounds.shape[0] - 1
    cdef Py_ssize_t i, j, j0, j1, h, end
    cdef double s, c, p
    cdef double* buf = NULL
    cdef int failed = 0
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        buf = <double*> malloc(COL_BLOCK * sizeof(double))
        for i in prange(row0, row1, schedule="dynamic", chunksize=4):
            if buf == NULL:
                failed += 1
                continue
            for h in range(k):
                s = 0.0
                c = 0.0
                j0 = bounds[h]
                if j0 < i + 1:
                    j0 = i + 1
                end = bounds[h + 1]
                while j0 < end:
                    j1 = j0 + COL_BLOCK
                    if j1 > end:
                        j1 = end
                    rho_block(&X[i, 0], &XT[0, 0], n, d, j0, j1, buf, metric, param)
                    p = 0.0
                    for j in range(j1 - j0):
                        p = p + w[j0 + j] * buf[j]
                    kahan_add(&s, &c, p)
                    j0 = j1
                out[i - row0, h] = s + c
        free(buf)
    if failed:
        raise MemoryError("no memory for a work block of the weighted sums")


@cython.boundscheck(False)
@cython.wraparound(False)
def weighted_row_sums(const floating[:, ::1] X, const floating[:, ::1] XT,
                      const floating[:, ::1] Y, const floating[:, ::1] YT,
                      const double[::1] w,              # IN (n,) weights (masses)
                      int metric, double param_x, double param_y, Py_ssize_t row0, Py_ssize_t row1,
                      double[:, ::1] out,               # OUT (n, 2): rows row0..row1-1 written
                      int n_threads):
    """``out[i] = (Σ_j w_j a_ij, Σ_j w_j b_ij)`` for ``row0 <= i < row1`` (full rows)."""
    cdef Py_ssize_t n = X.shape[0], dx = X.shape[1], dy = Y.shape[1]
    cdef Py_ssize_t i, j, j0, j1
    cdef double sa, ca, sb, cb, pa, pb
    cdef double* bx = NULL
    cdef double* by = NULL
    cdef int failed = 0
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        bx = <double*> malloc(COL_BLOCK * sizeof(double))
        by = <double*> malloc(COL_BLOCK * sizeof(double))
        for i in prange(row0, row1, schedule="static"):
            if bx == NULL or by == NULL:
                failed += 1
                continue
            sa = 0.0
            ca = 0.0
            sb = 0.0
            cb = 0.0
            j0 = 0
            while j0 < n:
                j1 = j0 + COL_BLOCK
                if j1 > n:
                    j1 = n
                rho_block(&X[i, 0], &XT[0, 0], n, dx, j0, j1, bx, metric, param_x)
                rho_block(&Y[i, 0], &YT[0, 0], n, dy, j0, j1, by, metric, param_y)
                pa = 0.0
                pb = 0.0
                for j in range(j1 - j0):
                    pa = pa + w[j0 + j] * bx[j]
                    pb = pb + w[j0 + j] * by[j]
                kahan_add(&sa, &ca, pa)
                kahan_add(&sb, &cb, pb)
                j0 = j1
            out[i, 0] = sa + ca
            out[i, 1] = sb + cb
        free(bx)
        free(by)
    if failed:
        raise MemoryError("no memory for a work block of the weighted sums")


@cython.boundscheck(False)
@cython.wraparound(False)
def weighted_centred_products(const floating[:, ::1] X, const floating[:, ::1] XT,
                              const floating[:, ::1] Y, const floating[:, ::1] YT,
                              const double[::1] w,          # IN (n,) weights (masses)
                              int metric, double param_x, double param_y,
                              const double[::1] va, const double[::1] vb,   # IN (n,) weighted row means
                              double ga, double gb,                         # IN weighted grand means
                              Py_ssize_t row0, Py_ssize_t row1,
                              double[:, ::1] out,           # OUT (n, 3): rows row0..row1-1 written
                              int n_threads):
    """Per row ``i``: ``Σ_{j>i} w_j A_ij B_ij``, ``Σ_{j>i} w_j A_ij²``, ``Σ_{j>i} w_j B_ij²``."""
    cdef Py_ssize_t n = X.shape[0], dx = X.shape[1], dy = Y.shape[1]
    cdef Py_ssize_t i, j, j0, j1, t
    cdef double A, B, wj, p0, p1, p2
    cdef double* bx = NULL
    cdef double* by = NULL
    cdef double* acc = NULL
    cdef int failed = 0
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        bx = <double*> malloc(COL_BLOCK * sizeof(double))
        by = <double*> malloc(COL_BLOCK * sizeof(double))
        acc = <double*> malloc(6 * sizeof(double))
        for i in prange(row0, row1, schedule="dynamic", chunksize=4):
            if bx == NULL or by == NULL or acc == NULL:
                failed += 1
                continue
            for t in range(6):
                acc[t] = 0.0
            j0 = i + 1
            while j0 < n:
                j1 = j0 + COL_BLOCK
                if j1 > n:
                    j1 = n
                rho_block(&X[i, 0], &XT[0, 0], n, dx, j0, j1, bx, metric, param_x)
                rho_block(&Y[i, 0], &YT[0, 0], n, dy, j0, j1, by, metric, param_y)
                p0 = 0.0
                p1 = 0.0
                p2 = 0.0
                for j in range(j1 - j0):
                    wj = w[j0 + j]
                    A = bx[j] - va[i] - va[j0 + j] + ga
                    B = by[j] - vb[i] - vb[j0 + j] + gb
                    p0 = p0 + wj * (A * B)
                    p1 = p1 + wj * (A * A)
                    p2 = p2 + wj * (B * B)
                kahan_add(&acc[0], &acc[3], p0)
                kahan_add(&acc[1], &acc[4], p1)
                kahan_add(&acc[2], &acc[5], p2)
                j0 = j1
            for t in range(3):
                out[i, t] = acc[t] + acc[t + 3]
        free(bx)
        free(by)
        free(acc)
    if failed:
        raise MemoryError("no memory for a work block of the weighted sums")


@cython.boundscheck(False)
@cython.wraparound(False)
def weighted_group_centred_rows(const floating[:, ::1] X, const floating[:, ::1] XT,
                                const floating[:, ::1] Y, const floating[:, ::1] YT,
                                const double[::1] w,            # IN (n,) weights of the columns
                                const Py_ssize_t[::1] bounds,   # IN (k + 1,) group h: rows [bounds[h], bounds[h+1])
                                int metric, double param_x, double param_y,
                                const double[::1] va, const double[::1] vb,   # IN (n,) row means (centring)
                                double ga, double gb,                         # IN grand means (centring)
                                Py_ssize_t row0, Py_ssize_t row1,
                                double[:, ::1] out,             # OUT (row1 - row0, 3 k)
                                int n_threads):
    """For rows sorted by group and ``row0 <= i < row1``, over ``j > i`` in group ``h``:
    ``out[i - row0, 3h] = Σ w_j A_ij B_ij`` (``A_ij = a_ij − va_i − va_j + ga``, ``B`` alike),
    ``out[i - row0, 3h + 1] = Σ w_j a_ij`` and ``out[i - row0, 3h + 2] = Σ w_j b_ij``."""
    cdef Py_ssize_t n = X.shape[0], dx = X.shape[1], dy = Y.shape[1], k = bounds.shape[0] - 1
    cdef Py_ssize_t i, j, j0, j1, h, end, t
    cdef double A, B, wj, p0, p1, p2
    cdef double* bx = NULL
    cdef double* by = NULL
    cdef double* acc = NULL
    cdef int failed = 0
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        bx = <double*> malloc(COL_BLOCK * sizeof(double))
        by = <double*> malloc(COL_BLOCK * sizeof(double))
        acc = <double*> malloc(6 * sizeof(double))
        for i in prange(row0, row1, schedule="dynamic", chunksize=4):
            if bx == NULL or by == NULL or acc == NULL:
                failed += 1
                continue
            for h in range(k):
                for t in range(6):
                    acc[t] = 0.0
                j0 = bounds[h]
                if j0 < i + 1:
                    j0 = i + 1
                end = bounds[h + 1]
                while j0 < end:
                    j1 = j0 + COL_BLOCK
                    if j1 > end:
                        j1 = end
                    rho_block(&X[i, 0], &XT[0, 0], n, dx, j0, j1, bx, metric, param_x)
                    rho_block(&Y[i, 0], &YT[0, 0], n, dy, j0, j1, by, metric, param_y)
                    p0 = 0.0
                    p1 = 0.0
                    p2 = 0.0
                    for j in range(j1 - j0):
                        wj = w[j0 + j]
                        A = bx[j] - va[i] - va[j0 + j] + ga
                        B = by[j] - vb[i] - vb[j0 + j] + gb
                        p0 = p0 + wj * (A * B)
                        p1 = p1 + wj * bx[j]
                        p2 = p2 + wj * by[j]
                    kahan_add(&acc[0], &acc[3], p0)
                    kahan_add(&acc[1], &acc[4], p1)
                    kahan_add(&acc[2], &acc[5], p2)
                    j0 = j1
                for t in range(3):
                    out[i - row0, 3 * h + t] = acc[t] + acc[t + 3]
        free(bx)
        free(by)
        free(acc)
    if failed:
        raise MemoryError("no memory for a work block of the weighted sums")
