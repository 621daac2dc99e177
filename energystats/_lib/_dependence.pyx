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
from libc.math cimport fabs, fma, pow, sqrt
from libc.stdint cimport uint16_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from ._dd cimport cross_moment, dominance_moment, moments, sorted_row_sums
from ._pairwise cimport es_perm_dot4_i64, es_perm_dot4_u16, es_simd_init, kahan_add, rho_block
from energystats._lib import simd_cap

es_simd_init(simd_cap())  # this module's copy of the pair kernels' dispatch (_simd.h)

cdef Py_ssize_t COL_BLOCK = 256


cdef inline void pair_rows(const floating* xi, const floating* XT, const floating* yi,
                           const floating* YT, Py_ssize_t n, Py_ssize_t dx, Py_ssize_t dy,
                           Py_ssize_t j0, Py_ssize_t j1, int metric, double param_x,
                           double param_y, double* bx, double* by) noexcept nogil:
    """bx, by = a(x_i, x_j), b(y_i, y_j) for j in [j0, j1)."""
    rho_block(xi, XT, n, dx, j0, j1, bx, metric, param_x)
    rho_block(yi, YT, n, dy, j0, j1, by, metric, param_y)


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


ctypedef fused perm_index:
    uint16_t
    Py_ssize_t


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void permuted_block(const double* A, const double* B, Py_ssize_t n,
                         const perm_index* p0, const perm_index* p1, const perm_index* p2,
                         const perm_index* p3, double* out, Py_ssize_t count) noexcept nogil:
    """``out[k] = Σ_ij A_ij B_{p_i p_j}`` for the four permutations ``pk`` (row-major n×n A, B),
    written for ``k < count`` (a short last group's copies are discarded)."""
    cdef Py_ssize_t i, k, inext
    cdef double s[4]
    cdef double c[4]
    cdef double rowsum[4]
    cdef const double* b[4]
    cdef const double* nb[4]
    cdef const perm_index* p[4]
    cdef double a
    p[0] = p0
    p[1] = p1
    p[2] = p2
    p[3] = p3
    for k in range(4):
        s[k] = 0.0
        c[k] = 0.0
    for i in range(n):
        inext = i + 1 if i + 1 < n else i
        for k in range(4):
            b[k] = B + p[k][i] * n
            nb[k] = B + p[k][inext] * n
        if perm_index is uint16_t:
            es_perm_dot4_u16(A + i * n, b, p, nb, i + 1, n, n, rowsum)
        else:
            es_perm_dot4_i64(A + i * n, b, p, nb, i + 1, n, n, rowsum)
        a = A[i * n + i]
        for k in range(4):
            kahan_add(&s[k], &c[k], 2.0 * rowsum[k] + a * b[k][p[k][i]])
    for k in range(count):
        out[k] = s[k] + c[k]


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def permuted_products(const double[:, ::1] A,          # IN (n, n) centred, symmetric
                      const double[:, ::1] B,          # IN (n, n) centred, symmetric
                      const perm_index[:, ::1] perms,  # IN (R, n) permutations of 0..n-1
                      double[::1] out,                 # OUT (R,)
                      int n_threads):
    """``out[r] = Σ_ij A[i, j] B[p_i, p_j]`` with ``p = perms[r]`` (symmetry: the upper triangle
    twice plus the diagonal).

    Four permutations share each pass over a row of A (the matrix is read R/4 times, not R
    times).  A row's sum over j > i is formed by the vector kernel ``es_perm_dot4`` (``_simd.h``:
    eight running sums per permutation, AVX-512 or AVX2 gathers where the CPU has them, the
    same bits in every build); the rows are added in order with compensation.  A
    permutation's arithmetic does not depend on the others in its group (a short last group
    repeats its last permutation and discards the copies), so every value is the same bits for
    any number of threads, any R, either index type and every instruction set.

    The pass is bound by fetching the permuted rows of B (each gather lands in a different
    row; at n = 3000 the four rows do not stay in cache), so the next row's four rows are
    prefetched during the current one; the caller passes 16-bit indices when n ≤ 65536.
    """
    cdef Py_ssize_t R = perms.shape[0], n = A.shape[0]
    cdef Py_ssize_t nblocks = (R + 3) // 4, blk, r0
    if n_threads < 1:
        n_threads = 1
    if R == 0 or n == 0:
        return
    with nogil:
        for blk in prange(nblocks, schedule="dynamic", chunksize=1, num_threads=n_threads):
            r0 = 4 * blk
            permuted_block(&A[0, 0], &B[0, 0], n, &perms[r0, 0],
                           &perms[r0 + 1 if r0 + 1 < R else R - 1, 0],
                           &perms[r0 + 2 if r0 + 2 < R else R - 1, 0],
                           &perms[r0 + 3 if r0 + 3 < R else R - 1, 0], &out[r0],
                           R - r0 if R - r0 < 4 else 4)


cdef void tiled_rows(const double* A, const double* B, Py_ssize_t n,
                     const perm_index* P, Py_ssize_t R, Py_ssize_t i0, Py_ssize_t i1,
                     Py_ssize_t b, int* E, Py_ssize_t* C, double* rows) noexcept nogil:
    """``rows[k, i] = Σ_{j>i} A_ij B_{p_i p_j}`` (p = P[k]) for all k and i0 ≤ i < i1, by the
    permuted rows' block: the pairs (i, k) are bucketed by ``p_k(i) // b`` (rows i, then k, in
    order within a bucket), so a bucket's rows of B — and rows i0..i1 of A — stay in cache
    while its sums are formed, four permutations sharing a row of A (a short group repeats
    its last member).  ``E`` holds (i1 − i0) R codes, ``C`` n // b + 2 counters."""
    cdef Py_ssize_t nbj = (n + b - 1) // b, J, i, k, e, e1, end, cnt, q, il, start
    cdef int code
    cdef const double* bp[4]
    cdef const double* nbp[4]
    cdef const perm_index* pp[4]
    cdef Py_ssize_t kk[4]
    cdef double rs[4]
    for J in range(nbj + 1):
        C[J] = 0
    for i in range(i0, i1):
        for k in range(R):
            C[P[k * n + i] // b + 1] += 1
    for J in range(nbj):
        C[J + 1] += C[J]
    for i in range(i0, i1):
        for k in range(R):
            J = P[k * n + i] // b
            E[C[J]] = <int> ((i - i0) * R + k)
            C[J] += 1
    start = 0
    for J in range(nbj):
        end = C[J]
        e = start
        while e < end:
            il = E[e] // R
            cnt = 1
            while cnt < 4 and e + cnt < end and E[e + cnt] // R == il:
                cnt += 1
            i = i0 + il
            for q in range(4):
                kk[q] = E[e + (q if q < cnt else cnt - 1)] % R
                pp[q] = P + kk[q] * n
                bp[q] = B + pp[q][i] * n
            e1 = e + cnt
            if e1 < end:   # prefetch the next group's first row of B into L1
                code = E[e1]
                for q in range(4):
                    nbp[q] = B + P[(code % R) * n + i0 + code // R] * n
            else:
                for q in range(4):
                    nbp[q] = bp[q]
            if perm_index is uint16_t:
                es_perm_dot4_u16(A + i * n, bp, pp, nbp, i + 1, n, n, rs)
            else:
                es_perm_dot4_i64(A + i * n, bp, pp, nbp, i + 1, n, n, rs)
            for q in range(cnt):
                rows[kk[q] * n + i] = rs[q]
            e = e1
        start = end


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def permuted_products_tiled(const double[:, ::1] A,          # IN (n, n) centred, symmetric
                            const double[:, ::1] B,          # IN (n, n) centred, symmetric
                            const perm_index[:, ::1] perms,  # IN (R, n) permutations of 0..n-1
                            double[::1] out,                 # OUT (R,)
                            double[:, ::1] rows,             # SCRATCH (R, n)
                            int[:, ::1] codes,               # SCRATCH (n_threads, a R)
                            Py_ssize_t[:, ::1] counters,     # SCRATCH (n_threads, n // b + 2)
                            Py_ssize_t a, Py_ssize_t b, int n_threads):
    """The sums of :func:`permuted_products`, the same bits, with the rows of A in blocks of
    ``a`` (one block a task) and each block's (row, permutation) pairs bucketed by the block
    of ``b`` rows of B they read: a bucket's rows of B are fetched once for all its pairs,
    where the row-by-row pass fetches a row of B (n doubles) for every pair — the pass's
    bound when n² doubles do not fit in cache.  Every row sum is formed by ``es_perm_dot4``
    exactly as there (a permutation's arithmetic does not depend on its group), and the row
    sums of a permutation are added in row order with compensation, as there.
    """
    cdef Py_ssize_t R = perms.shape[0], n = A.shape[0]
    cdef Py_ssize_t nblk, blk, i0, i1, k, i, tid
    cdef double s, c
    if n_threads < 1:
        n_threads = 1
    if R == 0 or n == 0:
        return
    if a < 1 or b < 1 or a * R >= 2**31:
        raise ValueError("permuted_products_tiled: blocks must be positive, with a × R < 2**31 "
                         "(the pair codes are 32-bit)")
    if (codes.shape[0] < n_threads or codes.shape[1] < a * R or counters.shape[0] < n_threads
            or counters.shape[1] < (n + b - 1) // b + 1 or rows.shape[0] < R or rows.shape[1] != n):
        raise ValueError("permuted_products_tiled: scratch arrays too small")
    nblk = (n + a - 1) // a
    with nogil:
        for blk in prange(nblk, schedule="dynamic", chunksize=1, num_threads=n_threads):
            tid = cython.parallel.threadid()
            i0 = blk * a
            i1 = i0 + a if i0 + a < n else n
            tiled_rows(&A[0, 0], &B[0, 0], n, &perms[0, 0], R, i0, i1, b, &codes[tid, 0],
                       &counters[tid, 0], &rows[0, 0])
        for k in prange(R, schedule="static", num_threads=n_threads):
            s = 0.0
            c = 0.0
            for i in range(n):
                kahan_add(&s, &c, 2.0 * rows[k, i] + A[i, i] * B[perms[k, i], perms[k, i]])
            out[k] = s + c


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def streamed_permuted_products(const floating[:, ::1] X, const floating[:, ::1] XT,
                               const floating[:, ::1] Y,
                               int metric, double param_x, double param_y,
                               const double[::1] va, double ga,   # IN x centring ā_i, ā
                               const double[::1] vb, double gb,   # IN y centring b̄_i, b̄
                               const Py_ssize_t[:, ::1] perms,    # IN (R, n)
                               Py_ssize_t i0, Py_ssize_t i1,      # IN rows i0 ≤ i < i1
                               double[:, ::1] state,              # INOUT (R, 2) sum, compensation
                               int n_threads):
    """Adds rows ``i0 ≤ i < i1`` of ``Σ_ij A_ij B_{p_i p_j}`` (as :func:`permuted_products`)
    to ``state[r]`` (the compensated sum ``state[r, 0] + state[r, 1]``), with no n×n matrix:
    the double-centred ``A_ij`` and ``B_{p_i p_j}`` are formed pair by pair from the data and
    the centring vectors, four permutations per pass over the pairs (each thread holds the
    four permuted, transposed copies of y).  Each permutation's sum is formed by one thread,
    rows in order with compensation, so the caller may split the rows over calls (to honour
    Ctrl-C between them): the same bits for any split and any number of threads."""
    cdef Py_ssize_t R = perms.shape[0], n = X.shape[0], dx = X.shape[1], dy = Y.shape[1]
    cdef Py_ssize_t nblocks = (R + 3) // 4, blk, r0, i, j, j0, j1, m, k, t
    cdef const Py_ssize_t* pk
    cdef double Ad, sk, bi
    cdef double* ypt
    cdef double* yi
    cdef double* vbp
    cdef double* bx
    cdef double* by
    cdef double* acc
    cdef int failed[1]
    failed[0] = 0
    if n_threads < 1:
        n_threads = 1
    if i0 < 0:
        i0 = 0
    if i1 > n:
        i1 = n
    if R == 0 or i1 <= i0:
        return
    with nogil, parallel(num_threads=n_threads):
        ypt = <double*> malloc(4 * dy * n * sizeof(double))
        yi = <double*> malloc(dy * sizeof(double))
        vbp = <double*> malloc(4 * n * sizeof(double))
        bx = <double*> malloc(COL_BLOCK * sizeof(double))
        by = <double*> malloc(COL_BLOCK * sizeof(double))
        acc = <double*> malloc(12 * sizeof(double))
        for blk in prange(nblocks, schedule="dynamic", chunksize=1):
            if ypt == NULL or yi == NULL or vbp == NULL or bx == NULL or by == NULL or acc == NULL:
                failed[0] = 1
            else:
                r0 = 4 * blk
                for k in range(4):   # a short last group repeats its last permutation
                    pk = &perms[r0 + k if r0 + k < R else R - 1, 0]
                    for i in range(n):
                        vbp[k * n + i] = vb[pk[i]]
                        for t in range(dy):
                            ypt[(k * dy + t) * n + i] = Y[pk[i], t]
                for k in range(4):
                    t = r0 + k if r0 + k < R else R - 1
                    acc[k] = state[t, 0]
                    acc[4 + k] = state[t, 1]
                for i in range(i0, i1):
                    for k in range(4):
                        acc[8 + k] = 0.0   # row i's sum over j > i, permutation k
                    j0 = i + 1
                    while j0 < n:
                        j1 = j0 + COL_BLOCK
                        if j1 > n:
                            j1 = n
                        m = j1 - j0
                        rho_block(&X[i, 0], &XT[0, 0], n, dx, j0, j1, bx, metric, param_x)
                        for j in range(m):
                            bx[j] = bx[j] - va[i] - va[j0 + j] + ga
                        for k in range(4):
                            for t in range(dy):
                                yi[t] = ypt[(k * dy + t) * n + i]
                            rho_block(yi, &ypt[k * dy * n], n, dy, j0, j1, by, metric, param_y)
                            bi = gb - vbp[k * n + i]
                            sk = 0.0
                            for j in range(m):
                                sk = sk + bx[j] * (by[j] + bi - vbp[k * n + j0 + j])
                            acc[8 + k] = acc[8 + k] + sk
                        j0 = j1
                    Ad = ga - 2.0 * va[i]
                    for k in range(4):
                        kahan_add(&acc[k], &acc[4 + k],
                                  2.0 * acc[8 + k] + Ad * (gb - 2.0 * vbp[k * n + i]))
                for k in range(4):
                    if r0 + k < R:
                        state[r0 + k, 0] = acc[k]
                        state[r0 + k, 1] = acc[4 + k]
        free(ypt)
        free(yi)
        free(vbp)
        free(bx)
        free(by)
        free(acc)
    if failed[0]:
        raise MemoryError("streamed_permuted_products: no memory for the permuted copies of y")


@cython.boundscheck(False)
@cython.wraparound(False)
def dominance_moment_1d(const double[::1] xs,          # IN (n,) x in increasing order
                        const double[::1] ys,          # IN (n,) y of the same points
                        const Py_ssize_t[::1] yorder,  # IN (n,) the positions 0..n-1 by increasing y
                        Py_ssize_t h,                  # IN the split: first half 0..h-1
                        const Py_ssize_t[::1] rank_l,  # IN (h,) y rank of each point < h among them
                        const Py_ssize_t[::1] rank_r,  # IN (n-h,) y rank of each point >= h among them
                        int n_threads):
    """``D = Σ (x_j − x_i)(y_j − y_i)`` over the pairs with x_i <= x_j and y_i <= y_j (``i``
    before ``j`` in both orders), as a double-double ``(hi, lo)``.

    With ``F = n Σ x y − Σ x Σ y`` (the same sum over all pairs ``i < j``),
    ``Σ_{i<j} |x_i − x_j| |y_i − y_j| = 2 D − F`` (Huo and Székely 2016; pairs tied in x or
    y contribute 0 whichever way they are counted).  The points are split at ``h``: the
    pairs within each half are summed by Fenwick trees over the y ranks (count, Σx, Σy, Σxy,
    each sum double-double, products exact by fused multiply–add), the two halves on two
    threads; the pairs across, in one pass by increasing y with running sums over the first
    half.  About 32 significant digits of the centred data's exact value; the same bits for
    any number of threads.
    """
    cdef Py_ssize_t n = xs.shape[0]
    cdef double parts[4]
    cdef double out[2]
    cdef double* trees[2]
    cdef int t, failed = 0
    if n_threads < 1:
        n_threads = 1
    trees[0] = <double*> malloc(8 * (h + 1) * sizeof(double))
    trees[1] = <double*> malloc(8 * (n - h + 1) * sizeof(double))
    if trees[0] == NULL or trees[1] == NULL:
        free(trees[0])
        free(trees[1])
        raise MemoryError("dominance_moment_1d: no memory for the Fenwick trees")
    with nogil:
        for t in prange(2, num_threads=min(n_threads, 2), schedule="static", chunksize=1):
            if t == 0:
                dominance_moment(&xs[0], &ys[0], &rank_l[0], h, trees[0], &parts[0])
            else:
                dominance_moment(&xs[h], &ys[h], &rank_r[0], n - h, trees[1], &parts[2])
        cross_moment(&xs[0], &ys[0], &yorder[0], n, h, parts, out)
    free(trees[0])
    free(trees[1])
    return out[0], out[1]


@cython.boundscheck(False)
@cython.wraparound(False)
def sorted_row_sums_dd(const double[::1] s,    # IN (n,) values in increasing order
                       double[::1] hi,         # OUT (n,)
                       double[::1] lo):        # OUT (n,)
    """``Σ_l |s_k − s_l|`` for every k as double-double pairs: ``s_k (2k − n) − 2 P_k + P_n``
    with the prefix sums ``P_k`` carried in double-double and the product exact."""
    cdef double tot[2]
    with nogil:
        sorted_row_sums(&s[0], s.shape[0], &hi[0], &lo[0], tot)
    return tot[0], tot[1]


@cython.boundscheck(False)
@cython.wraparound(False)
def moments_dd(const double[::1] x, const double[::1] y,
               const double[::1] ah, const double[::1] al,
               const double[::1] bh, const double[::1] bl,
               double[::1] out):                # OUT (20,) ten double-double sums
    """One pass, in order: Σx, Σy, Σx², Σy², Σxy, Σa, Σb, Σab, Σa², Σb² (a = ah + al,
    b = bh + bl), each as a double-double pair ``out[2k], out[2k + 1]``."""
    with nogil:
        moments(&x[0], &y[0], &ah[0], &al[0], &bh[0], &bl[0], x.shape[0], &out[0])


@cython.boundscheck(False)
@cython.wraparound(False)
def compensated_dot(const double[::1] a, const double[::1] b):
    """``Σ a_i b_i`` with compensated (Neumaier) summation of the products, in order."""
    cdef Py_ssize_t i, n = a.shape[0]
    cdef double s = 0.0, c = 0.0
    with nogil:
        for i in range(n):
            kahan_add(&s, &c, a[i] * b[i])
    return s + c


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def centred_upper_1d(const double[::1] x,     # IN (n,) one column
                     double exponent, int u,
                     double[::1] out,         # OUT (n (n + 1) / 2,) upper triangle, row by row
                     double[::1] work):       # scratch (n,)
    """The double-centred (``u = 0``) or U-centred (``u = 1``) matrix of ``|x_i − x_j|^exponent``
    as its upper triangle (diagonal included), off-diagonal entries times √2, so that the dot
    product of two such vectors is the sum over all (i, j) of the products."""
    cdef Py_ssize_t n = x.shape[0], i, j, k
    cdef double a, tot = 0.0, g, ci, w = sqrt(2.0), dn = <double> n
    with nogil:
        for i in range(n):
            a = 0.0
            for j in range(n):
                if exponent == 1.0:
                    a = a + fabs(x[i] - x[j])
                else:
                    a = a + pow(fabs(x[i] - x[j]), exponent)
            work[i] = a
            tot = tot + a
        if u:
            for i in range(n):
                work[i] = work[i] / (dn - 2.0)
            g = tot / ((dn - 1.0) * (dn - 2.0))
        else:
            for i in range(n):
                work[i] = work[i] / dn
            g = tot / (dn * dn)
        k = 0
        for i in range(n):
            ci = g - work[i]
            out[k] = 0.0 if u else ci - work[i]   # the diagonal: a_ii = 0
            k = k + 1
            for j in range(i + 1, n):
                if exponent == 1.0:
                    a = fabs(x[i] - x[j])
                else:
                    a = pow(fabs(x[i] - x[j]), exponent)
                out[k] = w * (a + ci - work[j])
                k = k + 1
