# cython: language_level=3
"""Streamed products of the pair kernel's matrix with vectors (no n×n matrix).

* ``group_matvec``: for rows ``row0 <= i < row1`` and column groups ``h`` (contiguous ranges
  ``[bounds[h], bounds[h+1])`` of the columns), ``out[i - row0, h] = Σ_{j ∈ C_h} w_j ρ(x_i, y_j)``,
  full rows: ``D`` times the vector ``w`` cut into one piece per group, every piece at once.

Four rows share each loaded block of columns (``rho_rows4``, the same bits as four calls of
the one-row path); each row's products with the weights are summed per block of 256
columns by the vector sum of ``_simd.h`` (a fixed order) and the blocks' sums are added
with Neumaier compensation.  Each row is formed by one thread and written to its own slot,
so the results are the same bits for any number of threads.  Double precision only.
"""
cimport cython
from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc

from ._pairwise cimport es_simd_init, es_vsum, kahan_add, rho_block, rho_rows4
from energystats._lib import simd_cap

es_simd_init(simd_cap())  # this module's copy of the pair kernels' dispatch (_simd.h)

cdef Py_ssize_t COL_BLOCK = 256


@cython.boundscheck(False)
@cython.wraparound(False)
def group_matvec(const double[:, ::1] X,          # IN (n, d) the rows' points
                 const double[:, ::1] YT,         # IN (d, m) the columns' points, transposed
                 const double[::1] w,             # IN (m,) weights of the columns
                 const Py_ssize_t[::1] bounds,    # IN (k + 1,) group h: columns [bounds[h], bounds[h+1])
                 int metric, double param, Py_ssize_t row0, Py_ssize_t row1,
                 double[:, ::1] out,              # OUT (row1 - row0, k)
                 int n_threads):
    """``out[i - row0, h] = Σ_{bounds[h] <= j < bounds[h+1]} w_j rho(x_i, y_j)``."""
    cdef Py_ssize_t m = YT.shape[1], d = X.shape[1], k = bounds.shape[0] - 1
    cdef Py_ssize_t nq = (row1 - row0 + 3) // 4
    cdef Py_ssize_t q, i0, r, nr, h, j, j0, j1, end
    cdef double* buf = NULL
    cdef double* acc = NULL
    cdef int failed = 0
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        buf = <double*> malloc(4 * COL_BLOCK * sizeof(double))
        acc = <double*> malloc(8 * sizeof(double))
        for q in prange(nq, schedule="static"):
            if buf == NULL or acc == NULL:
                failed += 1
                continue
            i0 = row0 + 4 * q
            nr = row1 - i0
            if nr > 4:
                nr = 4
            for h in range(k):
                for r in range(8):
                    acc[r] = 0.0
                j0 = bounds[h]
                end = bounds[h + 1]
                while j0 < end:
                    j1 = j0 + COL_BLOCK
                    if j1 > end:
                        j1 = end
                    if nr == 4:
                        rho_rows4(&X[i0, 0], d, &YT[0, 0], m, d, j0, j1, buf, COL_BLOCK,
                                  metric, param)
                    else:
                        for r in range(nr):
                            rho_block(&X[i0 + r, 0], &YT[0, 0], m, d, j0, j1,
                                      &buf[r * COL_BLOCK], metric, param)
                    for r in range(nr):
                        for j in range(j1 - j0):
                            buf[r * COL_BLOCK + j] = buf[r * COL_BLOCK + j] * w[j0 + j]
                        kahan_add(&acc[r], &acc[4 + r], es_vsum(&buf[r * COL_BLOCK], j1 - j0))
                    j0 = j1
                for r in range(nr):
                    out[i0 + r - row0, h] = acc[r] + acc[4 + r]
        free(buf)
        free(acc)
    if failed:
        raise MemoryError("no memory for a work block of the streamed products")
