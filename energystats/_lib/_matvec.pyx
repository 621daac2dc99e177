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


@cython.boundscheck(False)
@cython.wraparound(False)
def sym_tile_products(const double[:, ::1] X,          # IN (N, d) the points
                      const double[:, ::1] XT,         # IN (d, N) the same, transposed
                      const double[::1] w,             # IN (N,) the vector
                      const Py_ssize_t[::1] bounds,    # IN (k + 1,) group h: [bounds[h], bounds[h+1])
                      int metric, double param,
                      const Py_ssize_t[::1] pair_i,    # IN tile pairs (I <= J) of this call
                      const Py_ssize_t[::1] pair_j,
                      Py_ssize_t tile,                 # rows per tile
                      double[:, :, ::1] part,          # OUT (nT, nT, tile * k), see below
                      int n_threads):
    """The symmetric half of ``D w``: each pair of row tiles I <= J forms its block of
    distances once, and writes ``part[I, J, r*k + h] = Σ_{j ∈ J ∩ C_h} w_j D_{i_r j}`` (rows
    of I) and, for J > I, ``part[J, I, c*k + h] = Σ_{i ∈ I ∩ C_h} w_i D_{i j_c}`` (rows of J,
    from the block's columns, summed over the block's rows in order).  :func:`sym_finish`
    then adds each row's pieces in tile order.  A block is formed by one thread and each
    piece has one slot, so the result is the same for any number of threads."""
    cdef Py_ssize_t P = pair_i.shape[0], N = X.shape[0], d = X.shape[1], k = bounds.shape[0] - 1
    cdef Py_ssize_t p, I, J, i0, i1, j0, j1, nr, nc, r, c, h, a, b
    cdef double* buf = NULL
    cdef double* tmp = NULL
    cdef double* col = NULL
    cdef double s
    cdef int failed = 0
    if n_threads < 1:
        n_threads = 1
    with nogil, parallel(num_threads=n_threads):
        buf = <double*> malloc(tile * tile * sizeof(double))
        tmp = <double*> malloc(tile * sizeof(double))
        col = <double*> malloc(tile * sizeof(double))
        for p in prange(P, schedule="dynamic"):
            if buf == NULL or tmp == NULL or col == NULL:
                failed += 1
                continue
            I = pair_i[p]
            J = pair_j[p]
            i0 = I * tile
            i1 = min(N, i0 + tile)
            j0 = J * tile
            j1 = min(N, j0 + tile)
            nr = i1 - i0
            nc = j1 - j0
            r = 0
            while r + 4 <= nr:
                rho_rows4(&X[i0 + r, 0], d, &XT[0, 0], N, d, j0, j1, &buf[r * tile], tile,
                          metric, param)
                r = r + 4
            while r < nr:
                rho_block(&X[i0 + r, 0], &XT[0, 0], N, d, j0, j1, &buf[r * tile], metric, param)
                r = r + 1
            for h in range(k):
                # rows of I: the block's columns in group h
                a = max(j0, bounds[h])
                b = min(j1, bounds[h + 1])
                for r in range(nr):
                    s = 0.0
                    if a < b:
                        for c in range(a, b):
                            tmp[c - a] = buf[r * tile + c - j0] * w[c]
                        s = es_vsum(tmp, b - a)
                    part[I, J, r * k + h] = s
                if J > I:
                    # rows of J: the block's rows in group h, added in order
                    a = max(i0, bounds[h])
                    b = min(i1, bounds[h + 1])
                    for c in range(nc):
                        col[c] = 0.0
                    for r in range(a - i0, b - i0):
                        for c in range(nc):
                            col[c] = col[c] + buf[r * tile + c] * w[i0 + r]
                    for c in range(nc):
                        part[J, I, c * k + h] = col[c]
        free(buf)
        free(tmp)
        free(col)
    if failed:
        raise MemoryError("no memory for a tile of the symmetric products")


@cython.boundscheck(False)
@cython.wraparound(False)
def sym_finish(const double[:, :, ::1] part, Py_ssize_t N, Py_ssize_t tile,
               double[:, ::1] out, int n_threads):
    """``out[i, h]``: the pieces ``part[I, J, r*k + h]`` of row ``i = I*tile + r`` added over the
    tiles J in order, with Neumaier compensation (the same bits for any number of threads)."""
    cdef Py_ssize_t nT = part.shape[0], k = out.shape[1], i, I, J, r, h
    cdef double acc, comp
    for i in prange(N, nogil=True, num_threads=max(1, n_threads), schedule="static"):
        I = i // tile
        r = i - I * tile
        for h in range(k):
            acc = 0.0
            comp = 0.0
            for J in range(nT):
                kahan_add(&acc, &comp, part[I, J, r * k + h])
            out[i, h] = acc + comp
