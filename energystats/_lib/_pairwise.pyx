# cython: language_level=3
"""Tile kernels for pairwise semimetrics and streamed block reductions.

Metrics (the semimetrics of Székely and Rizzo 2013, "Energy statistics: A class
of statistics based on distances", and their Laplacian and Gaussian
counterparts), computed from the squared Euclidean distance ``q``:

* ``ENERGY``     rho = q ** (exponent / 2)
* ``LAPLACIAN``  rho = 2 - 2 exp(-sqrt(q) / (2 sigma))   (as -2 expm1(.), exact for small q)
* ``GAUSSIAN``   rho = 2 - 2 exp(-q / (2 sigma**2))

and, not from ``q``, ``CITYBLOCK``  rho = sum_t |x_t - y_t| (SciPy's 'cityblock').

Every kernel takes validated, C-contiguous arrays (float32 or float64); the
arithmetic is done in double precision whatever the input type.  Differences
are formed coordinate by coordinate (never through ``|x|² + |y|² - 2 x·y``,
which cancels catastrophically for close points).

Layout: the column operand is passed transposed (``YT``, shape (d, m)) so that
the innermost loop runs over contiguous columns and vectorises.
"""
import numpy as np

cimport cython
from cython cimport floating
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport exp, expm1, ldexp, pow, sqrt
from libc.stdlib cimport free, malloc

from energystats._lib import SIMD_LEVELS, simd_cap

cdef Py_ssize_t ROW_BLOCK = 128
cdef Py_ssize_t COL_BLOCK = 256
ROW_BLOCK_SIZE = ROW_BLOCK  # rows per block of group_sums (its stripes deal out blocks)

#: the instruction set of this module's pair kernels, chosen at import (``_simd.h``)
SIMD_LEVEL = SIMD_LEVELS[es_simd_init(simd_cap())]


cdef void transform_sq(double* buf, Py_ssize_t m, int metric, double param) noexcept nogil:
    """Overwrite squared distances ``buf[:m]`` by the semimetric values."""
    cdef Py_ssize_t j
    cdef double scale
    if metric == ENERGY:
        if param == 1.0:
            es_vsqrt(buf, m)
        elif param == 2.0:
            pass
        else:
            scale = 0.5 * param
            for j in range(m):
                buf[j] = pow(buf[j], scale)
    elif metric == LAPLACIAN:
        scale = 1.0 / (2.0 * param)
        for j in range(m):
            buf[j] = -2.0 * expm1(-sqrt(buf[j]) * scale)
    else:  # GAUSSIAN
        scale = 1.0 / (2.0 * param * param)
        for j in range(m):
            buf[j] = -2.0 * expm1(-buf[j] * scale)


cdef inline void kahan_add(double* acc, double* comp, double value) noexcept nogil:
    """Compensated (Kahan–Babuška/Neumaier) addition of ``value`` into ``acc`` (the error
    into ``comp``): ``es_neumaier`` of _simd.h, which the vector kernels use too."""
    es_neumaier(acc, comp, value)


cdef inline void _segment_sums(const double* buf, Py_ssize_t js, Py_ssize_t j1,
                               const Py_ssize_t* labels, const Py_ssize_t* bounds,
                               double* acc, double* comp) noexcept nogil:
    """Add ``buf[j - js]`` for ``js <= j < j1`` into ``acc[h] + comp[h]``, h the group of column j.

    The columns are sorted by group (``labels`` non-decreasing, group h the columns
    ``[bounds[h], bounds[h+1])``): each run of one group is summed in ``es_vsum``'s fixed
    eight-lane order, then added with compensation.
    """
    cdef Py_ssize_t j = js, e, h
    while j < j1:
        h = labels[j]
        e = bounds[h + 1]
        if e > j1:
            e = j1
        kahan_add(&acc[h], &comp[h], es_vsum(&buf[j - js], e - j))
        j = e


cdef inline void _rows4_sums(const floating* X, const floating* YT, Py_ssize_t ldy, Py_ssize_t d,
                            Py_ssize_t j0, Py_ssize_t j1, int metric, double param, double* buf,
                            const Py_ssize_t* row_labels, const Py_ssize_t* labels,
                            const Py_ssize_t* bounds, Py_ssize_t k,
                            double* acc, double* comp) noexcept nogil:
    """Four consecutive rows (at ``X``, their groups ``row_labels[0..3]``) against the columns
    ``[j0, j1)``, added into their groups' rows of the k×k ``acc + comp``: each loaded column serves
    the four rows; the same bits as four calls of the one-row path."""
    cdef Py_ssize_t r, g
    rho_rows4(X, d, YT, ldy, d, j0, j1, buf, COL_BLOCK, metric, param)
    for r in range(4):
        g = row_labels[r]
        _segment_sums(&buf[r * COL_BLOCK], j0, j1, labels, bounds, &acc[g * k], &comp[g * k])


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void scale_piece(double* out, Py_ssize_t m, double mult, int whole, double pow2) noexcept nogil:
    """``out[:m]`` back to the original units, as ``Scale.apply`` (multiply by ``mult``, then
    ``ldexp`` by ``whole``).  ``x·2^w`` is exactly ``ldexp(x, w)`` (both round the exact
    product once) when ``2^w`` is a double; a multiplication vectorises, a call of ldexp does
    not."""
    cdef Py_ssize_t j
    if -1000 <= whole <= 1000:
        for j in range(m):
            out[j] = (out[j] * mult) * pow2
    else:
        for j in range(m):
            out[j] = ldexp(out[j] * mult, whole)


def pairwise_matrix(const floating[:, ::1] X,     # IN (n, d)
                    const floating[:, ::1] YT,    # IN (d, m), Y transposed
                    double[:, ::1] out,           # OUT (n, m)
                    int metric, double param, int n_threads,
                    double mult=1.0, int whole=0):  # IN the Scale back to the original units
    """Fill ``out[i, j] = rho(X[i], Y[j])``, times ``mult · 2**whole`` (each piece while it is
    in cache: the bits of ``Scale.apply`` on the whole matrix, without its pass over it)."""
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = YT.shape[1]
    cdef Py_ssize_t nq = (n + 3) // 4
    cdef Py_ssize_t q, i, i0, j0, j1
    cdef bint scaled = mult != 1.0 or whole != 0
    cdef double pow2 = ldexp(1.0, whole) if -1000 <= whole <= 1000 else 0.0
    if n == 0 or m == 0:
        return
    with nogil, parallel(num_threads=n_threads):
        for q in prange(nq, schedule="static"):   # four rows at a time (the same bits as one)
            i0 = 4 * q
            j0 = 0
            while j0 < m:
                j1 = j0 + COL_BLOCK
                if j1 > m:
                    j1 = m
                if i0 + 4 <= n:
                    rho_rows4(&X[i0, 0], d, &YT[0, 0], m, d, j0, j1, &out[i0, j0], m, metric, param)
                    if scaled:
                        for i in range(i0, i0 + 4):
                            scale_piece(&out[i, j0], j1 - j0, mult, whole, pow2)
                else:
                    for i in range(i0, n):
                        rho_block(&X[i, 0], &YT[0, 0], m, d, j0, j1, &out[i, j0], metric, param)
                        if scaled:
                            scale_piece(&out[i, j0], j1 - j0, mult, whole, pow2)
                j0 = j1


@cython.boundscheck(False)
@cython.wraparound(False)
def group_sums(const floating[:, ::1] X,        # IN (n, d), rows sorted by group
               const floating[:, ::1] XT,       # IN (d, n), X transposed
               const Py_ssize_t[::1] labels,    # IN (n,), non-decreasing group codes
               const Py_ssize_t[::1] bounds,    # IN (k + 1,), group h is rows [bounds[h], bounds[h+1])
               int metric, double param,
               Py_ssize_t stripe0,              # IN first stripe of this call
               Py_ssize_t n_stripes,            # IN stripes in all (row block b is in stripe b % n_stripes)
               double[:, :, ::1] acc,           # OUT (c, k, k) zeroed: sums of stripes stripe0 .. stripe0 + c - 1
               double[:, :, ::1] comp,          # OUT (c, k, k) zeroed: their compensation terms
               int n_threads):
    """Streamed k×k sums ``Σ_{x∈C_g, y∈C_h, x before y} rho(x, y)`` of some stripes.

    The row blocks (``ROW_BLOCK`` rows each) are dealt to ``n_stripes``
    stripes round robin; each stripe is summed by one thread, block after
    block in a fixed order, into its own accumulator, and the caller adds
    the stripes up in stripe order.  The result therefore does not depend
    on the number of threads or on scheduling (bit for bit), and the caller
    can work through the stripes in calls short enough to honour Ctrl-C.

    Memory: O(n·d) for the data plus a buffer of four ``COL_BLOCK`` rows per thread and
    the (c, k, k) outputs; the n×n matrix is never formed.  Only pairs
    ``i < j`` are evaluated (``rho(x, x) = 0`` for every built-in metric).
    Sums are formed in double: at most ``COL_BLOCK`` terms in eight lanes (a fixed
    order), everything above that with compensated (Neumaier) summation.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], k = bounds.shape[0] - 1
    cdef Py_ssize_t nblocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t c = acc.shape[0]
    cdef Py_ssize_t q, b, i, i0, i1, j0, j1, js, g
    cdef double* buf
    if n_threads < 1:
        n_threads = 1
    if n <= 1 or k == 0 or c == 0:
        return
    with nogil, parallel(num_threads=n_threads):
        buf = <double*> malloc(4 * COL_BLOCK * sizeof(double))
        for q in prange(c, schedule="dynamic", chunksize=1):
            b = stripe0 + q
            while b < nblocks:
                i0 = b * ROW_BLOCK
                i1 = i0 + ROW_BLOCK
                if i1 > n:
                    i1 = n
                j0 = i0 + 1
                while j0 < n:
                    j1 = j0 + COL_BLOCK
                    if j1 > n:
                        j1 = n
                    i = i0
                    if j0 >= i1:   # past the block's own rows: every row takes the whole range
                        while i + 4 <= i1:
                            _rows4_sums(&X[i, 0], &XT[0, 0], n, d, j0, j1, metric, param, buf,
                                        &labels[i], &labels[0], &bounds[0], k, &acc[q, 0, 0],
                                        &comp[q, 0, 0])
                            i = i + 4
                    while i < i1:
                        js = i + 1 if i + 1 > j0 else j0
                        if js < j1:
                            rho_block(&X[i, 0], &XT[0, 0], n, d, js, j1, buf, metric, param)
                            g = labels[i]
                            _segment_sums(buf, js, j1, &labels[0], &bounds[0], &acc[q, g, 0],
                                          &comp[q, g, 0])
                        i = i + 1
                    j0 = j1
                b = b + n_stripes
        free(buf)


@cython.boundscheck(False)
@cython.wraparound(False)
def cross_group_sums(const floating[:, ::1] X,        # IN (n, d): the row block I
                     const floating[:, ::1] YT,       # IN (d, m): the row block J, sorted by group, transposed
                     const Py_ssize_t[::1] labels,    # IN (n,): group code of every row of X
                     const Py_ssize_t[::1] labels_j,  # IN (m,): group codes of the columns, non-decreasing
                     const Py_ssize_t[::1] bounds,    # IN (k + 1,): group h is columns [bounds[h], bounds[h+1]) of YT
                     int metric, double param,
                     double[:, :, ::1] acc,           # OUT (ceil(n / ROW_BLOCK), k, k) zeroed: one table per row block
                     double[:, :, ::1] comp,          # OUT the same shape, zeroed: compensation terms
                     int n_threads):
    """Streamed k×k sums ``Σ_{x∈I∩C_g, y∈J∩C_h} rho(x, y)`` of a rectangular tile.

    The tile of two different row blocks I and J (the Dask backend's unit of
    work; :func:`group_sums` is the tile of a block with itself).  Row block
    ``b`` of ``X`` (``ROW_BLOCK`` rows) is summed, in a fixed order, into
    ``acc[b] + comp[b]``; the caller adds the blocks up in block order, so the
    result does not depend on the number of threads.  Memory: four
    ``COL_BLOCK`` buffers per thread; no n×m matrix.
    """
    cdef Py_ssize_t n = X.shape[0], d = X.shape[1], m = YT.shape[1], k = bounds.shape[0] - 1
    cdef Py_ssize_t nblocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    cdef Py_ssize_t b, i, i0, i1, j0, j1, g
    cdef double* buf
    if n_threads < 1:
        n_threads = 1
    if n == 0 or m == 0 or k == 0:
        return
    with nogil, parallel(num_threads=n_threads):
        buf = <double*> malloc(4 * COL_BLOCK * sizeof(double))
        for b in prange(nblocks, schedule="dynamic", chunksize=1):
            i0 = b * ROW_BLOCK
            i1 = i0 + ROW_BLOCK
            if i1 > n:
                i1 = n
            j0 = 0
            while j0 < m:
                j1 = j0 + COL_BLOCK
                if j1 > m:
                    j1 = m
                i = i0
                while i + 4 <= i1:
                    _rows4_sums(&X[i, 0], &YT[0, 0], m, d, j0, j1, metric, param, buf, &labels[i],
                                &labels_j[0], &bounds[0], k, &acc[b, 0, 0], &comp[b, 0, 0])
                    i = i + 4
                while i < i1:
                    rho_block(&X[i, 0], &YT[0, 0], m, d, j0, j1, buf, metric, param)
                    g = labels[i]
                    _segment_sums(buf, j0, j1, &labels_j[0], &bounds[0], &acc[b, g, 0], &comp[b, g, 0])
                    i = i + 1
                j0 = j1
        free(buf)
