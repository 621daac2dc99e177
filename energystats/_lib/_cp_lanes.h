/* The permuted re-searches of E-Divisive with one permutation per vector lane
 * (_cp_lanes_body.h), compiled for the baseline (two lanes: SSE2), AVX2 (four) and AVX-512F
 * (eight) as _simd.h compiles the pair kernels, and dispatched to the level es_simd_init chose
 * for this module.  Expects es_cp_cancelled() (the module's cancel flag) to be declared.
 * Compilers without GCC/Clang vector extensions get no lane kernels (es_cp_lanes() is 0) and
 * the caller runs the serial sweep. */
#ifndef ENERGYSTATS_CP_LANES_H
#define ENERGYSTATS_CP_LANES_H

#include "_simd.h"

typedef int (*es_cp_group_fn)(const double*, es_ssize, const es_ssize* const*, const es_ssize*,
                              const es_ssize*, es_ssize, es_ssize, es_ssize, int, int, double, int,
                              double*, double*);

#if defined(__GNUC__) || defined(__clang__)
#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#define ES_CP_SQRT(v) ((V)_mm_sqrt_pd((__m128d)(v)))
#endif
#define ES_ISA base
#define ES_ATTR
#define ES_NW 2
#include "_cp_lanes_body.h"
#undef ES_ISA
#undef ES_ATTR
#undef ES_NW
#undef ES_CP_SQRT

#ifdef ES_X86_DISPATCH
#define ES_ISA avx2
#define ES_ATTR __attribute__((target("avx2")))
#define ES_NW 4
#define ES_CP_SQRT(v) ((V)_mm256_sqrt_pd((__m256d)(v)))
#include "_cp_lanes_body.h"
#undef ES_ISA
#undef ES_ATTR
#undef ES_NW
#undef ES_CP_SQRT
#define ES_ISA avx512
#define ES_ATTR __attribute__((target("avx512f")))
#define ES_NW 8
#define ES_CP_SQRT(v) ((V)_mm512_sqrt_pd((__m512d)(v)))
#include "_cp_lanes_body.h"
#undef ES_ISA
#undef ES_ATTR
#undef ES_NW
#undef ES_CP_SQRT
#endif

static es_cp_group_fn es_cp_group_kernel = es_cp_group_base;
static int es_cp_width = 2;

/* Pick the lane kernel of `level` (an ES_SIMD_ level); returns the lanes (permutations a
 * group takes). */
static int es_cp_lanes_init(int level)
{
    es_cp_group_kernel = es_cp_group_base;
    es_cp_width = 2;
#ifdef ES_X86_DISPATCH
    if (level == ES_SIMD_AVX2) {
        es_cp_group_kernel = es_cp_group_avx2;
        es_cp_width = 4;
    } else if (level == ES_SIMD_AVX512) {
        es_cp_group_kernel = es_cp_group_avx512;
        es_cp_width = 8;
    }
#else
    (void)level;
#endif
    return es_cp_width;
}
#else
static es_cp_group_fn es_cp_group_kernel = 0;
static int es_cp_width = 0;
static int es_cp_lanes_init(int level) { (void)level; return 0; }
#endif

static inline int es_cp_lanes(void) { return es_cp_width; }
static inline int es_cp_group(const double* Z, es_ssize d, const es_ssize* const* perm,
                              const es_ssize* starts, const es_ssize* ends, es_ssize S,
                              es_ssize maxlen, es_ssize min_size, int code, int mode, double param,
                              int end_only, double* work, double* out)
{
    return es_cp_group_kernel(Z, d, perm, starts, ends, S, maxlen, min_size, code, mode, param,
                              end_only, work, out);
}

#endif
