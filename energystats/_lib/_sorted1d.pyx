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
