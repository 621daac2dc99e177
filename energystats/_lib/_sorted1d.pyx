# cython: language_level=3
"""O(n log n) energy sums for one-dimensional data with rho = |x - y|.

The sorted formulas of the docs' guide page "One-dimensional data".

The caller sorts the pooled sample once (O(n log n)); the kernels here are
single O(n·k) passes over the sorted values.  For an element x of group g at
sorted position p, the pairs it forms with the earlier elements of group h add
``cnt_h · x − sum_h`` to Σ|x − y| (every earlier y is ≤ x), where ``cnt_h`` and
``sum_h`` are the count and sum of the group-h values seen so far.  This is the
pooled-sort form of ``Σ_{x,y∈C}|x−y| = 2 Σ_l (2l − 1 − m) x_(l)``.

The caller centres the data first (the sums are translation invariant), which
keeps ``cnt_h · x − sum_h`` free of cancellation; all long sums are
compensated.
"""
import numpy as np

cimport cython
from cython.parallel cimport prange
from libc.stdlib cimport calloc, free

from energystats._lib._pairwise cimport kahan_add


@cython.boundscheck(False)
@cython.wraparound(False)
def sorted_group_sums(const double[::1] x,          # IN (n,), sorted ascending
                      const Py_ssize_t[::1] labels,  # IN (n,), group code of x[p]
                      Py_ssize_t k):
    """k×k matrix ``M[g, h] = Σ_{x∈C_g} Σ_{y∈C_h} |x − y|`` in O(n·k)."""
    cdef Py_ssize_t n = x.shape[0], p, g, h
    P_arr = np.zeros((k, k), dtype=np.float64)
    C_arr = np.zeros((k, k), dtype=np.float64)
    cdef double[:, ::1] P = P_arr
    cdef double[:, ::1] C = C_arr
    cdef double* cnt = <double*> calloc(k, sizeof(double))
    cdef double* tot = <double*> calloc(k, sizeof(double))
    cdef double* totc = <double*> calloc(k, sizeof(double))
    cdef double xv
    if cnt == NULL or tot == NULL or totc == NULL:
        free(cnt); free(tot); free(totc)
        raise MemoryError()
    with nogil:
        for p in range(n):
            xv = x[p]
            g = labels[p]
            for h in range(k):
                if cnt[h] > 0:
                    kahan_add(&P[g, h], &C[g, h], cnt[h] * xv - (tot[h] + totc[h]))
            cnt[g] += 1.0
            kahan_add(&tot[g], &totc[g], xv)
    free(cnt); free(tot); free(totc)
    P_arr += C_arr
    return P_arr + P_arr.T


# -- random projections: the group sums of many relabellings over many projections -------------

cdef extern from *:
    """
    #include <math.h>
    /* this module's cancel flag, read by projected_group_sums once per relabelling */
    static volatile int es_s1d_cancel_flag = 0;
    static inline int es_s1d_cancelled(void) { return es_s1d_cancel_flag; }
    static inline void es_s1d_set_cancel(int v) { es_s1d_cancel_flag = v; }

    /* projected_group_sums for two groups, the relabellings in structure-of-arrays form so
       that the loop over them vectorises (each relabelling's lane does the same operations in
       the same order: the bits do not depend on the vector width).  For the value x at sorted
       position p with c0 values of group 0 before it (c1 = p - c0 of group 1), the unordered
       within sums gain x (2 c0 - n0 + 1) (group 0) or x (2 c1 - n1 + 1) (group 1): the
       pooled-sort form of sum_{i<j in C} |x_i - x_j| = sum_l (2l - 1 - m) x_(l).  Both terms
       are formed, the other group's multiplied by 0; the sums are Neumaier-compensated. */
    static int es_s1d_two_groups(const double* v, const Py_ssize_t* order,
                                 const unsigned char* LT, Py_ssize_t n, Py_ssize_t B,
                                 double n0, double n1, double* restrict cnt,
                                 double* restrict w0, double* restrict w0c,
                                 double* restrict w1, double* restrict w1c)
    {
        Py_ssize_t p, b;
        for (p = 0; p < n; p++) {
            if ((p & 65535) == 0 && es_s1d_cancel_flag)
                return 1;
            const double xv = v[p], pp = (double)p;
            const unsigned char* restrict row = LT + order[p] * B;
            #pragma GCC ivdep
            for (b = 0; b < B; b++) {
                const double m1 = (double)row[b], m0 = 1.0 - m1, c0 = cnt[b];
                const double t0 = m0 * (xv * (2.0 * c0 - n0 + 1.0));
                const double t1 = m1 * (xv * (2.0 * (pp - c0) - n1 + 1.0));
                /* Neumaier: the compensation gains (big - t) + small, big the addend of the
                   larger magnitude; the selects are of values, so the loop stays branch-free */
                const double a0 = w0[b], s0 = a0 + t0;
                const int k0 = fabs(a0) >= fabs(t0);
                const double big0 = k0 ? a0 : t0, small0 = k0 ? t0 : a0;
                w0c[b] += (big0 - s0) + small0;
                w0[b] = s0;
                const double a1 = w1[b], s1 = a1 + t1;
                const int k1 = fabs(a1) >= fabs(t1);
                const double big1 = k1 ? a1 : t1, small1 = k1 ? t1 : a1;
                w1c[b] += (big1 - s1) + small1;
                w1[b] = s1;
                cnt[b] = c0 + m0;
            }
        }
        return 0;
    }
    """
    int es_s1d_cancelled() noexcept nogil
    void es_s1d_set_cancel(int v) noexcept nogil
    int es_s1d_two_groups(const double* v, const Py_ssize_t* order, const unsigned char* LT,
                          Py_ssize_t n, Py_ssize_t B, double n0, double n1, double* cnt,
                          double* w0, double* w0c, double* w1, double* w1c) noexcept nogil


def cancel():
    """Ask a running :func:`projected_group_sums` to stop (it returns 1)."""
    es_s1d_set_cancel(1)


def reset():
    """Clear the cancel flag."""
    es_s1d_set_cancel(0)


cdef void _two_groups(const double* v, const Py_ssize_t* order, const unsigned char* LT,
                      Py_ssize_t n, Py_ssize_t B, double* work, Py_ssize_t width) noexcept nogil:
    """:func:`projected_group_sums` for k = 2, into the same work layout (P[g*2+h] at 6 + .,
    its compensation at 10 + .): the within sums by ``es_s1d_two_groups`` (one vectorised pass
    over the relabellings per value), the cross sum the sum over all pairs less the two."""
    cdef Py_ssize_t p, b
    cdef double n0 = 0.0, tall = 0.0, tallc = 0.0
    cdef const unsigned char* col0 = LT          # relabelling 0 (every column has the same counts)
    cdef double* soa = <double*> calloc(5 * B, sizeof(double))
    cdef double* w
    if soa == NULL:
        work[0] = -1.0                           # reported as a memory failure by the caller
        return
    for p in range(n):
        n0 += 1.0 - <double>col0[p * B]
    for p in range(n):                           # Σ_{i<j} |x_i − x_j| over all pairs
        kahan_add(&tall, &tallc, v[p] * (2.0 * <double>p - <double>n + 1.0))
    if es_s1d_two_groups(v, order, LT, n, B, n0, <double>n - n0, soa, soa + B, soa + 2 * B,
                         soa + 3 * B, soa + 4 * B):
        free(soa)
        return
    for b in range(B):
        w = work + b * width
        w[6] = soa[B + b]
        w[10] = soa[2 * B + b]
        w[9] = soa[3 * B + b]
        w[13] = soa[4 * B + b]
        w[7] = (tall + tallc) - (w[6] + w[10]) - (w[9] + w[13])
        w[11] = 0.0
    free(soa)


@cython.boundscheck(False)
@cython.wraparound(False)
def projected_group_sums(const double[:, ::1] V,          # IN (J, n): each row sorted ascending
                         const Py_ssize_t[:, ::1] order,  # IN (J, n): the rows' sort orders
                         const unsigned char[:, ::1] LT,  # IN (n, B): group codes, one column
                                                          #    per relabelling
                         Py_ssize_t k,
                         double[:, :, :, ::1] acc,        # OUT (J, B, k, k)
                         int n_threads=1):
    """For every projection j and relabelling b, the k×k sums ``acc[j, b, g, h] = Σ_{x∈C_g}
    Σ_{y∈C_h} |x − y|`` of the projected values ``V[j]`` (the group of ``V[j, p]`` in
    relabelling b is ``LT[order[j, p], b]``; both orders of each pair: symmetric).  One pass
    over the sorted values per projection updates every relabelling's running counts and sums
    at once (one row of ``LT`` read per value), O(J·n·B·k).  The projections run on
    ``n_threads`` threads, each into its own ``acc[j]``, so the result does not depend on the
    thread count.  Returns 1 when cancelled, else 0."""
    cdef Py_ssize_t J = V.shape[0], n = V.shape[1], B = LT.shape[1], b, j, p, g, h, base, cell
    cdef Py_ssize_t width = 3 * k + 2 * k * k
    cdef double* work
    cdef double* w
    cdef const unsigned char* row
    cdef double xv, c
    cdef int failed = 0
    for j in prange(J, nogil=True, num_threads=max(1, n_threads), schedule="dynamic"):
        if es_s1d_cancelled():
            continue
        work = <double*> calloc(B * width, sizeof(double))
        if work == NULL:
            failed += 1
            continue
        if k == 2:
            _two_groups(&V[j, 0], &order[j, 0], &LT[0, 0], n, B, work, width)
            if work[0] == -1.0:
                failed += 1
        for p in range(n if k != 2 else 0):
            if p % 65536 == 0 and es_s1d_cancelled():
                break
            xv = V[j, p]
            row = &LT[order[j, p], 0]
            for b in range(B):
                w = work + b * width          # cnt[k], tot[k], totc[k], P[k*k], C[k*k]
                g = row[b]
                for h in range(k):
                    c = w[h]
                    if c > 0:
                        cell = 3 * k + g * k + h
                        kahan_add(&w[cell], &w[cell + k * k], c * xv - (w[k + h] + w[2 * k + h]))
                w[g] = w[g] + 1.0
                kahan_add(&w[k + g], &w[2 * k + g], xv)
        for b in range(B):
            w = work + b * width
            base = 3 * k
            for g in range(k):
                for h in range(k):
                    acc[j, b, g, h] = (w[base + g * k + h] + w[base + k * k + g * k + h]) \
                        + (w[base + h * k + g] + w[base + k * k + h * k + g])
        free(work)
    if failed:
        raise MemoryError("no memory for the work arrays of a projection")
    return 1 if es_s1d_cancelled() else 0
