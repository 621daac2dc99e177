# Shared declarations of the semimetric tile kernels, for cimport by the other
# kernel families (Hartigan, permutation, dependence).

from cython cimport floating

cdef enum MetricCode:
    ENERGY = 0
    LAPLACIAN = 1
    GAUSSIAN = 2

cdef void transform_sq(double* buf, Py_ssize_t m, int metric, double param) noexcept nogil
cdef void kahan_add(double* acc, double* comp, double value) noexcept nogil


cdef inline void sq_block(const floating* xi, const floating* YT, Py_ssize_t ldy,
                          Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1,
                          double* buf) noexcept nogil:
    """buf[j - j0] = ||xi - Y[j]||² for j in [j0, j1)."""
    cdef Py_ssize_t t, j, m = j1 - j0
    cdef double xv, diff
    cdef const floating* yrow
    for j in range(m):
        buf[j] = 0.0
    for t in range(d):
        xv = xi[t]
        yrow = YT + t * ldy + j0
        for j in range(m):
            diff = xv - <double>yrow[j]
            buf[j] += diff * diff
