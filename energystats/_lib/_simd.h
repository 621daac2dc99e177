/* Runtime-dispatched vector kernels of energystats (squared and cityblock distances, square
 * roots, sums).
 *
 * The kernel source (_simd_body.h) is compiled once per instruction set in this translation
 * unit -- baseline, AVX2 and AVX-512F on x86-64 with GCC or Clang -- through target attributes,
 * and es_simd_init() picks the widest one the CPU (and the operating system) supports, capped
 * by the level the caller passes (energystats._lib reads ENERGYSTATS_SIMD).  Other compilers and
 * other processors get the baseline build of the same source.  Each extension module that
 * includes this header holds its own table and calls es_simd_init() when it is imported.
 *
 * Every instantiation does the same arithmetic lane for lane (see _simd_body.h), so they give
 * the same bits.
 */
#ifndef ENERGYSTATS_SIMD_H
#define ENERGYSTATS_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef ptrdiff_t es_ssize;

#define ES_LANES 8
/* es_mask_tile builds its tables for this many relabellings a call or more (fewer: from the rows) */
#define ES_MASK_TABLES_FROM 8

#if defined(__GNUC__) || defined(__clang__)
#define ES_MAYBE_UNUSED __attribute__((unused))
#define ES_PREFETCH(p) __builtin_prefetch(p)   /* a hint that never faults */
#else
#define ES_MAYBE_UNUSED
#define ES_PREFETCH(p) ((void)0)
#endif

#if defined(__GNUC__) || defined(__clang__)
/* GCC/Clang vector extensions: eight doubles, lowered to whatever the function's target has. */
typedef double es_v8d __attribute__((vector_size(64)));
typedef float es_v8f __attribute__((vector_size(32)));
#define ES_VZERO ((es_v8d){0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0})
#define ES_VADD(a, b) ((a) + (b))
#define ES_VMUL(a, b) ((a) * (b))
#define ES_VSUBS(s, v) ((s) - (v))
/* statement expressions (no vector passed by value, so no ABI question between targets) */
#define ES_VLOAD_D(p) ({ es_v8d v_; memcpy(&v_, (p), sizeof v_); v_; })
#define ES_VLOAD_F(p) ({ es_v8f f_; memcpy(&f_, (p), sizeof f_); __builtin_convertvector(f_, es_v8d); })
#define ES_VSTORE(p, v) memcpy((p), &(v), sizeof(es_v8d))
typedef int64_t es_v8l __attribute__((vector_size(64)));
#define ES_VLOAD_L(p) ({ es_v8l l_; memcpy(&l_, (p), sizeof l_); l_; })
#else
/* Any other C compiler: the same lanes as a plain array (the compiler may vectorise it). */
typedef struct { double v[ES_LANES]; } es_v8d;
static const es_v8d es_vzero_ = {{0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}};
#define ES_VZERO es_vzero_
static es_v8d es_vadd(es_v8d a, es_v8d b) { int l; for (l = 0; l < ES_LANES; l++) a.v[l] += b.v[l]; return a; }
static es_v8d es_vmul(es_v8d a, es_v8d b) { int l; for (l = 0; l < ES_LANES; l++) a.v[l] *= b.v[l]; return a; }
static es_v8d es_vsubs(double s, es_v8d b) { int l; for (l = 0; l < ES_LANES; l++) b.v[l] = s - b.v[l]; return b; }
static es_v8d es_vload_d(const double* p) { es_v8d v; memcpy(v.v, p, sizeof v.v); return v; }
static es_v8d es_vload_f(const float* p) { es_v8d v; int l; for (l = 0; l < ES_LANES; l++) v.v[l] = p[l]; return v; }
#define ES_VADD(a, b) es_vadd((a), (b))
#define ES_VMUL(a, b) es_vmul((a), (b))
#define ES_VSUBS(s, v) es_vsubs((s), (v))
#define ES_VLOAD_D(p) es_vload_d(p)
#define ES_VLOAD_F(p) es_vload_f(p)
#define ES_VSTORE(p, x) memcpy((p), (x).v, sizeof((x).v))
#endif

/* The index of the lowest set bit of a non-zero word. */
static inline es_ssize es_ctz64(uint64_t w)
{
#if defined(__GNUC__) || defined(__clang__)
    return (es_ssize)__builtin_ctzll(w);
#else
    es_ssize t = 0;
    while (!(w & 1)) {
        w >>= 1;
        t++;
    }
    return t;
#endif
}

/* Compensated (Kahan-Babuska/Neumaier) addition of `value` into *acc, the error into *comp
 * (the sum is *acc + *comp); kahan_add in _pairwise.pyx calls it. */
static inline void es_neumaier(double* acc, double* comp, double value)
{
    double t = *acc + value;
    if ((*acc >= value) == (*acc >= -value))   /* |acc| >= |value| */
        *comp += (*acc - t) + value;
    else
        *comp += (value - t) + *acc;
    *acc = t;
}

#if defined(__GNUC__) || defined(__clang__)
/* es_lane_masks[m][l]: all ones where bit l of m is set, else zero (the masked sums of
 * es_mask_tile: the columns of a tile kept in a group's sums). */
static int64_t es_lane_masks[256][ES_LANES];
static void es_lane_masks_init(void)
{
    int m, l;
    for (m = 0; m < 256; m++)
        for (l = 0; l < ES_LANES; l++)
            es_lane_masks[m][l] = ((m >> l) & 1) ? -1 : 0;
}
#else
static void es_lane_masks_init(void) {}
#endif

/* The baseline build: whatever the compiler targets by default (SSE2 on x86-64). */
#define ES_ISA base
#define ES_ATTR
#define ES_NW 2   /* doubles in a native register: SSE2 (and NEON) hold two */
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64) || defined(_M_IX86)
#define ES_ROWS4_BY_ROW 1   /* SSE2: coordinates outside, columns inside, one row at a time */
#endif
#include "_simd_body.h"
#undef ES_ISA
#undef ES_ATTR
#undef ES_NW
#undef ES_ROWS4_BY_ROW

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) \
    && !defined(ENERGYSTATS_NO_SIMD_DISPATCH)
#define ES_X86_DISPATCH 1
#include <immintrin.h>
#define ES_ISA avx2
#define ES_ATTR __attribute__((target("avx2")))
#define ES_NW 4
#define ES_GATHER256 1   /* the permuted products gather with AVX2 intrinsics */
#include "_simd_body.h"
#undef ES_GATHER256
#undef ES_ISA
#undef ES_ATTR
#undef ES_NW
#define ES_ISA avx512
#define ES_ATTR __attribute__((target("avx512f")))
#define ES_NW 8
#define ES_GATHER512 1   /* the permuted products gather with AVX-512F intrinsics */
#include "_simd_body.h"
#undef ES_GATHER512
#undef ES_ISA
#undef ES_ATTR
#undef ES_NW
#endif

/* Instruction-set levels, in increasing order. */
#define ES_SIMD_BASELINE 0
#define ES_SIMD_AVX2 1
#define ES_SIMD_AVX512 2

typedef struct {
    void (*sq_row_d)(const double*, const double*, es_ssize, es_ssize, es_ssize, es_ssize, double*);
    void (*sq_row_f)(const float*, const float*, es_ssize, es_ssize, es_ssize, es_ssize, double*);
    void (*sq_rows4_d)(const double*, es_ssize, const double*, es_ssize, es_ssize, es_ssize, es_ssize,
                       double*, es_ssize);
    void (*sq_rows4_f)(const float*, es_ssize, const float*, es_ssize, es_ssize, es_ssize, es_ssize,
                       double*, es_ssize);
    void (*rt_row_d)(const double*, const double*, es_ssize, es_ssize, es_ssize, es_ssize, double*);
    void (*rt_row_f)(const float*, const float*, es_ssize, es_ssize, es_ssize, es_ssize, double*);
    void (*rt_rows4_d)(const double*, es_ssize, const double*, es_ssize, es_ssize, es_ssize, es_ssize,
                       double*, es_ssize);
    void (*rt_rows4_f)(const float*, es_ssize, const float*, es_ssize, es_ssize, es_ssize, es_ssize,
                       double*, es_ssize);
    void (*l1_row_d)(const double*, const double*, es_ssize, es_ssize, es_ssize, es_ssize, double*);
    void (*l1_row_f)(const float*, const float*, es_ssize, es_ssize, es_ssize, es_ssize, double*);
    void (*l1_rows4_d)(const double*, es_ssize, const double*, es_ssize, es_ssize, es_ssize, es_ssize,
                       double*, es_ssize);
    void (*l1_rows4_f)(const float*, es_ssize, const float*, es_ssize, es_ssize, es_ssize, es_ssize,
                       double*, es_ssize);
    void (*vsqrt)(double*, es_ssize);
    double (*sum)(const double*, es_ssize);
    void (*perm_dot4_u16)(const double*, const double* const*, const uint16_t* const*,
                          const double* const*, es_ssize, es_ssize, es_ssize, double*);
    void (*perm_dot4_i64)(const double*, const double* const*, const es_ssize* const*,
                          const double* const*, es_ssize, es_ssize, es_ssize, double*);
    void (*mask_tile)(const double*, es_ssize, es_ssize, es_ssize, const uint64_t*, es_ssize,
                      const uint64_t*, es_ssize, es_ssize, es_ssize, double*, es_ssize, es_ssize,
                      double*, double*);
    void (*move_cols)(double*, es_ssize, es_ssize, es_ssize, es_ssize, const double*);
    int level;
} es_simd_table;

#define ES_TABLE(ISA, LEVEL) {es_sq_row_d_##ISA, es_sq_row_f_##ISA, es_sq_rows4_d_##ISA,           \
                              es_sq_rows4_f_##ISA, es_rt_row_d_##ISA, es_rt_row_f_##ISA,           \
                              es_rt_rows4_d_##ISA, es_rt_rows4_f_##ISA, es_l1_row_d_##ISA,         \
                              es_l1_row_f_##ISA, es_l1_rows4_d_##ISA, es_l1_rows4_f_##ISA,         \
                              es_sqrt_##ISA, es_sum_##ISA,                                         \
                              es_perm_dot4_u16_##ISA, es_perm_dot4_i64_##ISA, es_mask_tile_##ISA, \
                              es_move_cols_##ISA, LEVEL}

static es_simd_table es_simd = ES_TABLE(base, ES_SIMD_BASELINE);

/* The widest level this CPU and operating system support (no more than `cap`). */
static int es_simd_available(int cap)
{
    int level = ES_SIMD_BASELINE;
#ifdef ES_X86_DISPATCH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        level = ES_SIMD_AVX2;
    if (level == ES_SIMD_AVX2 && __builtin_cpu_supports("avx512f"))
        level = ES_SIMD_AVX512;
#endif
    return level < cap ? level : cap;
}

/* Select the kernels of the widest level available, at most `cap`; return the level chosen. */
ES_MAYBE_UNUSED static int es_simd_init(int cap)
{
    int level = es_simd_available(cap);
    es_simd_table t = ES_TABLE(base, ES_SIMD_BASELINE);
    es_lane_masks_init();
#ifdef ES_X86_DISPATCH
    if (level == ES_SIMD_AVX2) {
        es_simd_table a = ES_TABLE(avx2, ES_SIMD_AVX2);
        t = a;
    } else if (level == ES_SIMD_AVX512) {
        es_simd_table a = ES_TABLE(avx512, ES_SIMD_AVX512);
        t = a;
    }
#endif
    es_simd = t;
    return level;
}

static inline void es_sq_row_d(const double* xi, const double* YT, es_ssize ldy, es_ssize d,
                               es_ssize j0, es_ssize j1, double* out)
{ es_simd.sq_row_d(xi, YT, ldy, d, j0, j1, out); }
static inline void es_sq_row_f(const float* xi, const float* YT, es_ssize ldy, es_ssize d,
                               es_ssize j0, es_ssize j1, double* out)
{ es_simd.sq_row_f(xi, YT, ldy, d, j0, j1, out); }
static inline void es_sq_rows4_d(const double* X, es_ssize ldx, const double* YT, es_ssize ldy,
                                 es_ssize d, es_ssize j0, es_ssize j1, double* out, es_ssize ldo)
{ es_simd.sq_rows4_d(X, ldx, YT, ldy, d, j0, j1, out, ldo); }
static inline void es_sq_rows4_f(const float* X, es_ssize ldx, const float* YT, es_ssize ldy,
                                 es_ssize d, es_ssize j0, es_ssize j1, double* out, es_ssize ldo)
{ es_simd.sq_rows4_f(X, ldx, YT, ldy, d, j0, j1, out, ldo); }
static inline void es_rt_row_d(const double* xi, const double* YT, es_ssize ldy, es_ssize d,
                               es_ssize j0, es_ssize j1, double* out)
{ es_simd.rt_row_d(xi, YT, ldy, d, j0, j1, out); }
static inline void es_rt_row_f(const float* xi, const float* YT, es_ssize ldy, es_ssize d,
                               es_ssize j0, es_ssize j1, double* out)
{ es_simd.rt_row_f(xi, YT, ldy, d, j0, j1, out); }
static inline void es_rt_rows4_d(const double* X, es_ssize ldx, const double* YT, es_ssize ldy,
                                 es_ssize d, es_ssize j0, es_ssize j1, double* out, es_ssize ldo)
{ es_simd.rt_rows4_d(X, ldx, YT, ldy, d, j0, j1, out, ldo); }
static inline void es_rt_rows4_f(const float* X, es_ssize ldx, const float* YT, es_ssize ldy,
                                 es_ssize d, es_ssize j0, es_ssize j1, double* out, es_ssize ldo)
{ es_simd.rt_rows4_f(X, ldx, YT, ldy, d, j0, j1, out, ldo); }
static inline void es_l1_row_d(const double* xi, const double* YT, es_ssize ldy, es_ssize d,
                               es_ssize j0, es_ssize j1, double* out)
{ es_simd.l1_row_d(xi, YT, ldy, d, j0, j1, out); }
static inline void es_l1_row_f(const float* xi, const float* YT, es_ssize ldy, es_ssize d,
                               es_ssize j0, es_ssize j1, double* out)
{ es_simd.l1_row_f(xi, YT, ldy, d, j0, j1, out); }
static inline void es_l1_rows4_d(const double* X, es_ssize ldx, const double* YT, es_ssize ldy,
                                 es_ssize d, es_ssize j0, es_ssize j1, double* out, es_ssize ldo)
{ es_simd.l1_rows4_d(X, ldx, YT, ldy, d, j0, j1, out, ldo); }
static inline void es_l1_rows4_f(const float* X, es_ssize ldx, const float* YT, es_ssize ldy,
                                 es_ssize d, es_ssize j0, es_ssize j1, double* out, es_ssize ldo)
{ es_simd.l1_rows4_f(X, ldx, YT, ldy, d, j0, j1, out, ldo); }
static inline void es_vsqrt(double* buf, es_ssize m) { es_simd.vsqrt(buf, m); }
static inline double es_vsum(const double* v, es_ssize m) { return es_simd.sum(v, m); }
static inline void es_perm_dot4_u16(const double* a, const double* const* b, const uint16_t* const* p,
                                    const double* const* nb, es_ssize j0, es_ssize j1, es_ssize n,
                                    double* out)
{ es_simd.perm_dot4_u16(a, b, p, nb, j0, j1, n, out); }
static inline void es_perm_dot4_i64(const double* a, const double* const* b, const es_ssize* const* p,
                                    const double* const* nb, es_ssize j0, es_ssize j1, es_ssize n,
                                    double* out)
{ es_simd.perm_dot4_i64(a, b, p, nb, j0, j1, n, out); }
static inline void es_mask_tile(const double* T, es_ssize ld, es_ssize nr, es_ssize nc,
                                const uint64_t* rows, es_ssize rs, const uint64_t* cols,
                                es_ssize cs, es_ssize gs, es_ssize kp, double* acc, es_ssize as,
                                es_ssize count, double* part, double* lut)
{ es_simd.mask_tile(T, ld, nr, nc, rows, rs, cols, cs, gs, kp, acc, as, count, part, lut); }
static inline void es_move_cols(double* qx, es_ssize n, es_ssize k, es_ssize j, es_ssize l,
                                const double* g)
{ es_simd.move_cols(qx, n, k, j, l, g); }

#endif
