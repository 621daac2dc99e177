# cython: language_level=3
"""Kernels of the one-dimensional energy goodness-of-fit statistic (Székely and Rizzo 2005).

For a sorted sample y_(0) ≤ … ≤ y_(n−1) and a hypothesised Z,

    E_n = Σ_i [ 2 E|y_(i) − Z| − E|Z − Z′| − (2/n)(2i − n + 1) y_(i) ],

since Σ_ij |y_i − y_j| = 2 Σ_i (2i − n + 1) y_(i).  Every term is of the order of the data's
scale and E_n of order one, so about log10(n) digits cancel: the terms are added with
compensation, in index order, one row (one bootstrap replicate) per thread at a time — the
same bits for any number of threads.  ``bound[r]`` receives Σ_i |term pieces|, the scale of
the rounding error, for the tie allowance of the bootstrap p-value.
"""
cimport cython
from cython.parallel cimport prange
from libc.math cimport erf, exp, fabs, sqrt

from ._pairwise cimport kahan_add

cdef double INV_SQRT_2PI = 0.3989422804014327   # 1/√(2π)
cdef double INV_SQRT2 = 0.7071067811865476      # 1/√2
cdef double TWO_OVER_SQRT_PI = 1.1283791670955126  # E|Z − Z′| for N(0, 1)


cdef inline double row_mean(const double* x, Py_ssize_t n) noexcept nogil:
    """Compensated mean."""
    cdef Py_ssize_t i
    cdef double s = 0.0, c = 0.0
    for i in range(n):
        kahan_add(&s, &c, x[i])
    return (s + c) / n


cdef inline double row_sd(const double* x, Py_ssize_t n, double m) noexcept nogil:
    """Standard deviation about ``m`` (n − 1 divisor), compensated."""
    cdef Py_ssize_t i
    cdef double v = 0.0, cv = 0.0, t
    for i in range(n):
        t = x[i] - m
        kahan_add(&v, &cv, t * t)
    return sqrt((v + cv) / (n - 1))


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def normal_rows(const double[:, ::1] X,   # IN (B, n) each row sorted ascending
                double[::1] out,          # OUT (B,) E_n of the row's standardised values
                double[::1] bound,        # OUT (B,) Σ |term pieces|
                int n_threads):
    """E_n for N(μ, σ²) with μ, σ estimated by the row's mean and standard deviation (n − 1
    divisor), as R ``energy``'s ``normal.e``: y = (x − x̄)/s and E|y − Z| = 2φ(y) + y erf(y/√2).
    A constant row (s = 0) gives NaN."""
    cdef Py_ssize_t B = X.shape[0], n = X.shape[1], r, i
    cdef double mean, sd, y, g, w, s, c, b
    if n_threads < 1:
        n_threads = 1
    for r in prange(B, nogil=True, schedule="static", num_threads=n_threads):
        mean = row_mean(&X[r, 0], n)   # assigned in the loop: private to the thread
        sd = row_sd(&X[r, 0], n, mean)
        if not sd > 0.0:
            out[r] = 0.0 / sd if sd == sd else sd  # NaN
            bound[r] = 0.0
            continue
        s = 0.0
        c = 0.0
        b = 0.0
        for i in range(n):
            y = (X[r, i] - mean) / sd
            g = 2.0 * INV_SQRT_2PI * exp(-0.5 * y * y) + y * erf(y * INV_SQRT2)
            w = (2.0 / n) * (2 * i - n + 1) * y
            kahan_add(&s, &c, (2.0 * g - TWO_OVER_SQRT_PI) - w)
            b = b + 2.0 * g + TWO_OVER_SQRT_PI + fabs(w)
        out[r] = s + c
        bound[r] = b


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def energy_rows(const double[:, ::1] Y,   # IN (B, n) each row sorted ascending
                const double[:, ::1] G,   # IN (B, n) E|y − Z| at Y (the row's fitted Z)
                const double[::1] mean_diff,  # IN (B,) E|Z − Z′| of the row's fitted Z
                double[::1] out,          # OUT (B,)
                double[::1] bound,        # OUT (B,)
                int n_threads):
    """E_n from the sorted values and their E|y − Z| (any family, computed by the caller)."""
    cdef Py_ssize_t B = Y.shape[0], n = Y.shape[1], r, i
    cdef double w, s, c, b
    if n_threads < 1:
        n_threads = 1
    for r in prange(B, nogil=True, schedule="static", num_threads=n_threads):
        s = 0.0
        c = 0.0
        b = 0.0
        for i in range(n):
            w = (2.0 / n) * (2 * i - n + 1) * Y[r, i]
            kahan_add(&s, &c, (2.0 * G[r, i] - mean_diff[r]) - w)
            b = b + 2.0 * fabs(G[r, i]) + fabs(mean_diff[r]) + fabs(w)
        out[r] = s + c
        bound[r] = b
