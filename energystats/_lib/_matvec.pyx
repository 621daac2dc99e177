# cython: language_level=3
"""Streamed products of the pair kernel's matrix with vectors (no n×n matrix).

* ``group_matvec``: for rows ``row0 <= i < row1`` and column groups ``h`` (contiguous ranges
  ``[bounds[h], bounds[h+1])`` of the columns), ``out[i - row0, h] = Σ_{j ∈ C_h} w_j ρ(x_i, y_j)``,
  full rows: ``D`` times the vector ``w`` cut into one piece per group, every piece at once.
* ``sym_group_matvec``: the same sums, the same bits, for the square matrix of one set of
  points, each distance formed once (tiles used for their rows and their columns).

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

cdef enum:
    COL_BLOCK = 256

#: the columns of a block of :func:`group_matvec` (its rows' sums are added block by block)
BLOCK = COL_BLOCK


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


@cython.boundscheck(False)
@cython.wraparound(False)
def sym_group_matvec(const double[:, ::1] X,           # IN (N, d) the points, rows and columns
                     const double[:, ::1] XT,          # IN (d, N) the same, transposed
                     const double[::1] w,              # IN (N,) weights of the columns
                     const Py_ssize_t[::1] starts,     # IN (nb + 1,) the column blocks: block b is
                                                       #    [starts[b], starts[b+1]), within one group,
                                                       #    at most COL_BLOCK wide; starts[nb] = M
                     const Py_ssize_t[::1] bgroup,     # IN (nb,) each block's group
                     int metric, double param,
                     Py_ssize_t s0, Py_ssize_t s1,     # the column blocks J (steps) to serve
                     double[:, :, ::1] acc,            # IN/OUT (N, k, 2) running sums, compensations
                     double[:, ::1] colside,           # scratch (nb, COL_BLOCK)
                     int n_threads):
    """:func:`group_matvec` over all N rows with each distance formed once: the same bits.

    Row i of :func:`group_matvec` adds, block by block of its group's columns (in increasing
    order), the vector sum of ``w_j rho(x_i, x_j)`` over the block, with compensation.  Here
    step J forms the tiles (I, J) of the row blocks I >= J (the same blocks as the columns,
    then blocks of COL_BLOCK rows past M) once: each row i of I gains block J's sum, and, for a
    column block I > J, each point j of block J gains block I's sum over the tile's column j
    (``rho`` is symmetric to the bit), added after the step in increasing I.  Row i thus gains
    its blocks in increasing order (J < I from the steps before, I at the diagonal tile, the
    blocks past I at step I), the sums of the same products in the same order as
    :func:`group_matvec`'s.  The tiles of a step are spread over the threads; each row and
    each column-side slot is written by one thread, so the bits do not depend on
    ``n_threads``.  ``out = acc[:, :, 0] + acc[:, :, 1]`` after the steps 0..nb-1."""
    cdef Py_ssize_t N = X.shape[0], d = X.shape[1], nb = starts.shape[0] - 1
    cdef Py_ssize_t M = starts[nb], ne = (N - M + COL_BLOCK - 1) // COL_BLOCK
    cdef Py_ssize_t J, t, I, r0, r1, c0, c1, nr, nc, r, c, cw, hJ, hI, q
    cdef double* tile = NULL
    cdef double* v = NULL
    cdef double* vt = NULL
    cdef double s
    cdef int failed = 0
    if n_threads < 1:
        n_threads = 1
    for J in range(s0, s1):
        c0 = starts[J]
        c1 = starts[J + 1]
        nc = c1 - c0
        hJ = bgroup[J]
        with nogil, parallel(num_threads=n_threads):
            tile = <double*> malloc(COL_BLOCK * COL_BLOCK * sizeof(double))
            v = <double*> malloc(COL_BLOCK * sizeof(double))
            vt = <double*> malloc(8 * COL_BLOCK * sizeof(double))
            for t in prange(nb - J + ne, schedule="dynamic"):
                if tile == NULL or v == NULL or vt == NULL:
                    failed += 1
                    continue
                I = J + t
                if I < nb:
                    r0 = starts[I]
                    r1 = starts[I + 1]
                else:
                    r0 = M + (I - nb) * COL_BLOCK
                    r1 = min(N, r0 + COL_BLOCK)
                nr = r1 - r0
                q = 0
                while q + 4 <= nr:
                    rho_rows4(&X[r0 + q, 0], d, &XT[0, 0], N, d, c0, c1, &tile[q * COL_BLOCK],
                              COL_BLOCK, metric, param)
                    q = q + 4
                while q < nr:
                    rho_block(&X[r0 + q, 0], &XT[0, 0], N, d, c0, c1, &tile[q * COL_BLOCK],
                              metric, param)
                    q = q + 1
                for r in range(nr):                 # rows of I: block J's sum
                    for c in range(nc):
                        v[c] = tile[r * COL_BLOCK + c] * w[c0 + c]
                    kahan_add(&acc[r0 + r, hJ, 0], &acc[r0 + r, hJ, 1], es_vsum(v, nc))
                if I > J and I < nb:                # points of J: block I's sum
                    c = 0
                    while c < nc:                   # eight columns at a time, read along rows
                        cw = min(8, nc - c)
                        for r in range(nr):
                            s = w[r0 + r]
                            for q in range(cw):
                                vt[q * COL_BLOCK + r] = tile[r * COL_BLOCK + c + q] * s
                        for q in range(cw):
                            colside[I, c + q] = es_vsum(&vt[q * COL_BLOCK], nr)
                        c = c + 8
            free(tile)
            free(v)
            free(vt)
        if failed:
            raise MemoryError("no memory for a work block of the streamed products")
        for I in range(J + 1, nb):
            hI = bgroup[I]
            for c in range(nc):
                kahan_add(&acc[c0 + c, hI, 0], &acc[c0 + c, hI, 1], colside[I, c])
