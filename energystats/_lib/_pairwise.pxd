# Shared declarations of the semimetric tile kernels, for cimport by the other
# kernel families (Hartigan, permutation).

cdef enum MetricCode:
    ENERGY = 0
    LAPLACIAN = 1
    GAUSSIAN = 2

cdef void transform_sq(double* buf, Py_ssize_t m, int metric, double param) noexcept nogil
cdef void kahan_add(double* acc, double* comp, double value) noexcept nogil
