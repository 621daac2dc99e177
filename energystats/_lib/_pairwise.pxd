# Shared declarations of the semimetric tile kernels, for cimport by the other
# kernel families (Hartigan, permutation, dependence).

from cython cimport floating
from libc.stdint cimport uint64_t

cdef extern from "_simd.h" nogil:
    # The vector kernels (runtime-dispatched; see _simd.h): the same bits on every instruction set.
    int es_simd_init(int cap)
    void es_sq_row_d(const double* xi, const double* YT, Py_ssize_t ldy, Py_ssize_t d,
                     Py_ssize_t j0, Py_ssize_t j1, double* out)
    void es_sq_row_f(const float* xi, const float* YT, Py_ssize_t ldy, Py_ssize_t d,
                     Py_ssize_t j0, Py_ssize_t j1, double* out)
    void es_sq_rows4_d(const double* X, Py_ssize_t ldx, const double* YT, Py_ssize_t ldy,
                       Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* out, Py_ssize_t ldo)
    void es_sq_rows4_f(const float* X, Py_ssize_t ldx, const float* YT, Py_ssize_t ldy,
                       Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* out, Py_ssize_t ldo)
    void es_rt_row_d(const double* xi, const double* YT, Py_ssize_t ldy, Py_ssize_t d,
                     Py_ssize_t j0, Py_ssize_t j1, double* out)
    void es_rt_row_f(const float* xi, const float* YT, Py_ssize_t ldy, Py_ssize_t d,
                     Py_ssize_t j0, Py_ssize_t j1, double* out)
    void es_rt_rows4_d(const double* X, Py_ssize_t ldx, const double* YT, Py_ssize_t ldy,
                       Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* out, Py_ssize_t ldo)
    void es_rt_rows4_f(const float* X, Py_ssize_t ldx, const float* YT, Py_ssize_t ldy,
                       Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* out, Py_ssize_t ldo)
    void es_l1_row_d(const double* xi, const double* YT, Py_ssize_t ldy, Py_ssize_t d,
                     Py_ssize_t j0, Py_ssize_t j1, double* out)
    void es_l1_row_f(const float* xi, const float* YT, Py_ssize_t ldy, Py_ssize_t d,
                     Py_ssize_t j0, Py_ssize_t j1, double* out)
    void es_l1_rows4_d(const double* X, Py_ssize_t ldx, const double* YT, Py_ssize_t ldy,
                       Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* out, Py_ssize_t ldo)
    void es_l1_rows4_f(const float* X, Py_ssize_t ldx, const float* YT, Py_ssize_t ldy,
                       Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* out, Py_ssize_t ldo)
    int ES_MASK_TABLES_FROM
    void es_vsqrt(double* buf, Py_ssize_t m)
    double es_vsum(const double* v, Py_ssize_t m)
    void es_perm_dot4_u16(const double* a, const double* const* b, const unsigned short* const* p,
                          const double* const* nb, Py_ssize_t j0, Py_ssize_t j1, Py_ssize_t n,
                          double* out)
    void es_perm_dot4_i64(const double* a, const double* const* b, const Py_ssize_t* const* p,
                          const double* const* nb, Py_ssize_t j0, Py_ssize_t j1, Py_ssize_t n,
                          double* out)
    Py_ssize_t es_ctz64(uint64_t w)
    void es_neumaier(double* acc, double* comp, double value)
    void es_mask_tile(const double* T, Py_ssize_t ld, Py_ssize_t nr, Py_ssize_t nc,
                      const uint64_t* rows, Py_ssize_t rs, const uint64_t* cols, Py_ssize_t cs,
                      Py_ssize_t gs, Py_ssize_t kp, double* acc, Py_ssize_t acc_stride,
                      Py_ssize_t count, double* part, double* lut)
    void es_move_cols(double* qx, Py_ssize_t n, Py_ssize_t k, Py_ssize_t j, Py_ssize_t l,
                      const double* g)

cdef enum MetricCode:
    ENERGY = 0
    LAPLACIAN = 1
    GAUSSIAN = 2
    CITYBLOCK = 3

cdef void transform_sq(double* buf, Py_ssize_t m, int metric, double param) noexcept nogil
cdef void kahan_add(double* acc, double* comp, double value) noexcept nogil


cdef inline void sq_block(const floating* xi, const floating* YT, Py_ssize_t ldy,
                          Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1,
                          double* buf) noexcept nogil:
    """buf[j - j0] = ||xi - Y[j]||² for j in [j0, j1)."""
    if floating is double:
        es_sq_row_d(xi, YT, ldy, d, j0, j1, buf)
    else:
        es_sq_row_f(xi, YT, ldy, d, j0, j1, buf)


cdef inline void sq_rows4(const floating* X, Py_ssize_t ldx, const floating* YT, Py_ssize_t ldy,
                          Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1,
                          double* buf, Py_ssize_t ldo) noexcept nogil:
    """buf[r * ldo + j - j0] = ||X[r] - Y[j]||² for the rows r < 4 at X (stride ldx), j in [j0, j1)."""
    if floating is double:
        es_sq_rows4_d(X, ldx, YT, ldy, d, j0, j1, buf, ldo)
    else:
        es_sq_rows4_f(X, ldx, YT, ldy, d, j0, j1, buf, ldo)


cdef inline void rho_block(const floating* xi, const floating* YT, Py_ssize_t ldy,
                           Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* buf,
                           int metric, double param) noexcept nogil:
    """buf[j - j0] = rho(xi, Y[j]) for j in [j0, j1): :func:`sq_block` then
    :func:`transform_sq`, or, for the Euclidean distance (energy, exponent 1), the fused kernel
    that takes each vector's square roots as it goes (the same bits); the cityblock distance
    (``CITYBLOCK``, no parameter) by its own kernel."""
    if metric == CITYBLOCK:
        if floating is double:
            es_l1_row_d(xi, YT, ldy, d, j0, j1, buf)
        else:
            es_l1_row_f(xi, YT, ldy, d, j0, j1, buf)
    elif metric == ENERGY and param == 1.0:
        if floating is double:
            es_rt_row_d(xi, YT, ldy, d, j0, j1, buf)
        else:
            es_rt_row_f(xi, YT, ldy, d, j0, j1, buf)
    else:
        sq_block(xi, YT, ldy, d, j0, j1, buf)
        transform_sq(buf, j1 - j0, metric, param)


cdef inline void rho_rows4(const floating* X, Py_ssize_t ldx, const floating* YT, Py_ssize_t ldy,
                           Py_ssize_t d, Py_ssize_t j0, Py_ssize_t j1, double* buf, Py_ssize_t ldo,
                           int metric, double param) noexcept nogil:
    """:func:`rho_block` for the four rows at X (stride ldx), row r into buf + r * ldo."""
    cdef int r
    if metric == CITYBLOCK:
        if floating is double:
            es_l1_rows4_d(X, ldx, YT, ldy, d, j0, j1, buf, ldo)
        else:
            es_l1_rows4_f(X, ldx, YT, ldy, d, j0, j1, buf, ldo)
    elif metric == ENERGY and param == 1.0:
        if floating is double:
            es_rt_rows4_d(X, ldx, YT, ldy, d, j0, j1, buf, ldo)
        else:
            es_rt_rows4_f(X, ldx, YT, ldy, d, j0, j1, buf, ldo)
    else:
        sq_rows4(X, ldx, YT, ldy, d, j0, j1, buf, ldo)
        for r in range(4):
            transform_sq(&buf[r * ldo], j1 - j0, metric, param)
