/* The vector kernels of energystats, instantiated by _simd.h once per instruction set.
 *
 * Expects ES_ISA (the name suffix: base, avx2, avx512), ES_ATTR (the target attribute, or
 * nothing) and ES_ROWS4_BY_ROW for the x86 baseline.  Every function does the same arithmetic
 * whatever the instruction set: each column's squared distance is summed over the coordinates in
 * order (eight columns at a time, or, in the x86 baseline, a row of columns at a time: the
 * grouping changes no column's arithmetic), remainders by scalar code that repeats a lane's
 * operations, and every sum of a vector of values keeps eight running sums in a fixed order.
 * With floating-point contraction off (setup.py passes -ffp-contract=off) the results are
 * therefore the same bits for every instruction set; only the speed differs.
 */

#define ES_CAT2_(a, b) a##_##b
#define ES_CAT2(a, b) ES_CAT2_(a, b)
#define ES_FN(name) ES_CAT2(name, ES_ISA)

/* A lane vector (ES_LANES doubles) is held as ES_NH native vectors of ES_NW doubles each (ES_NW
 * from _simd.h: 2 for SSE2, 4 for AVX2, 8 for AVX-512F).  GCC keeps a generic vector wider than
 * the target's registers in memory and moves it through general registers at every operation
 * (the AVX2 build ran slower than the SSE2 one that way), so the kernels below loop over the
 * native pieces instead; each lane still does the same operations in the same order. */
#if defined(__GNUC__) || defined(__clang__)
#define ES_NH (ES_LANES / ES_NW)
#define ES_UNROLL _Pragma("GCC unroll 8")   /* the pieces' loops, unrolled before the arrays of
                                               pieces are given registers */
typedef double ES_FN(es_nv) __attribute__((vector_size(8 * ES_NW)));
typedef float ES_FN(es_nvf) __attribute__((vector_size(4 * ES_NW)));
typedef int64_t ES_FN(es_nvl) __attribute__((vector_size(8 * ES_NW)));
#define ES_NV ES_FN(es_nv)
#define ES_NVL ES_FN(es_nvl)
#define ES_NZERO ((ES_NV){0.0})
#define ES_NLOAD_D(p) ({ ES_NV v_; memcpy(&v_, (p), sizeof v_); v_; })
#define ES_NLOAD_F(p) ({ ES_FN(es_nvf) f_; memcpy(&f_, (p), sizeof f_);                           \
                         __builtin_convertvector(f_, ES_NV); })
#define ES_NLOAD_L(p) ({ ES_NVL l_; memcpy(&l_, (p), sizeof l_); l_; })
#define ES_NSTORE(p, v) memcpy((p), &(v), sizeof(ES_NV))
#define ES_NADD(a, b) ((a) + (b))
#define ES_NMUL(a, b) ((a) * (b))
#define ES_NSUBS(s, v) ((s) - (v))
/* square roots of a native vector in its register (IEEE sqrt is correctly rounded everywhere) */
#if defined(ES_GATHER512)
#define ES_NSQRT(v) ((ES_NV)_mm512_sqrt_pd((__m512d)(v)))
#elif defined(ES_GATHER256)
#define ES_NSQRT(v) ((ES_NV)_mm256_sqrt_pd((__m256d)(v)))
#else
#define ES_NSQRT(v) ({ ES_NV r_ = (v); int l_; for (l_ = 0; l_ < ES_NW; l_++) r_[l_] = sqrt(r_[l_]); r_; })
#endif
#else
#define ES_NH 1
#define ES_UNROLL
#undef ES_NW
#define ES_NW ES_LANES
#define ES_NV es_v8d
#define ES_NZERO ES_VZERO
#define ES_NLOAD_D(p) ES_VLOAD_D(p)
#define ES_NLOAD_F(p) ES_VLOAD_F(p)
#define ES_NSTORE(p, v) ES_VSTORE(p, v)
#define ES_NADD(a, b) ES_VADD(a, b)
#define ES_NMUL(a, b) ES_VMUL(a, b)
#define ES_NSUBS(s, v) ES_VSUBS(s, v)
#define ES_NSQRT(v) ({ ES_NV r_ = (v); int l_; for (l_ = 0; l_ < ES_LANES; l_++) r_.v[l_] = sqrt(r_.v[l_]); r_; })
#endif

/* out[j - j0] = |xi - Y[j]|^2 for j in [j0, j1); Y is given transposed (YT[t * ldy + j]). */
#define ES_SQ_ROW(T, TAG, LOAD, NAME, ROOT)                                                         \
ES_ATTR static void ES_FN(NAME##_##TAG)(const T* xi, const T* YT, es_ssize ldy, es_ssize d,        \
                                        es_ssize j0, es_ssize j1, double* out)                     \
{                                                                                                  \
    es_ssize j = j0, t;                                                                            \
    int h;                                                                                         \
    for (; j + ES_LANES <= j1; j += ES_LANES) {                                                    \
        ES_NV acc[ES_NH], y, diff;                                                                 \
        ES_UNROLL for (h = 0; h < ES_NH; h++)                                                                \
            acc[h] = ES_NZERO;                                                                     \
        for (t = 0; t < d; t++) {                                                                  \
            const double xv = (double)xi[t];                                                       \
            ES_UNROLL for (h = 0; h < ES_NH; h++) {                                                          \
                y = LOAD(YT + t * ldy + j + h * ES_NW);                                            \
                diff = ES_NSUBS(xv, y);                                                            \
                acc[h] = ES_NADD(acc[h], ES_NMUL(diff, diff));                                     \
            }                                                                                      \
        }                                                                                          \
        ES_UNROLL for (h = 0; h < ES_NH; h++) {                                                              \
            acc[h] = ROOT##_V(acc[h]);                                                             \
            ES_NSTORE(out + (j - j0) + h * ES_NW, acc[h]);                                         \
        }                                                                                          \
    }                                                                                              \
    for (; j < j1; j++) {                                                                          \
        double s = 0.0, df;                                                                        \
        for (t = 0; t < d; t++) {                                                                  \
            df = (double)xi[t] - (double)YT[t * ldy + j];                                          \
            s = s + df * df;                                                                       \
        }                                                                                          \
        out[j - j0] = s;                                                                           \
        ROOT(out + (j - j0), 1)                                                                    \
    }                                                                                              \
}

/* The same for four consecutive rows X[0..3] (row stride ldx) at once, each loaded column
 * serving the four rows: out[r * ldo + j - j0] = |X[r] - Y[j]|^2. */
#define ES_SQ_ROWS4(T, TAG, LOAD, NAME, ROOT)                                                      \
ES_ATTR static void ES_FN(NAME##_##TAG)(const T* X, es_ssize ldx, const T* YT, es_ssize ldy,       \
                                        es_ssize d, es_ssize j0, es_ssize j1, double* out,         \
                                        es_ssize ldo)                                              \
{                                                                                                  \
    es_ssize j = j0, t, r;                                                                         \
    for (; j + ES_LANES <= j1; j += ES_LANES) {                                                    \
        ES_NV a0[ES_NH], a1[ES_NH], a2[ES_NH], a3[ES_NH], y, df;                                   \
        int h;                                                                                     \
        ES_UNROLL for (h = 0; h < ES_NH; h++)                                                                \
            a0[h] = a1[h] = a2[h] = a3[h] = ES_NZERO;                                              \
        for (t = 0; t < d; t++) {                                                                  \
            const double x0 = (double)X[t], x1 = (double)X[ldx + t];                               \
            const double x2 = (double)X[2 * ldx + t], x3 = (double)X[3 * ldx + t];                 \
            ES_UNROLL for (h = 0; h < ES_NH; h++) {                                                          \
                y = LOAD(YT + t * ldy + j + h * ES_NW);                                            \
                df = ES_NSUBS(x0, y);                                                              \
                a0[h] = ES_NADD(a0[h], ES_NMUL(df, df));                                           \
                df = ES_NSUBS(x1, y);                                                              \
                a1[h] = ES_NADD(a1[h], ES_NMUL(df, df));                                           \
                df = ES_NSUBS(x2, y);                                                              \
                a2[h] = ES_NADD(a2[h], ES_NMUL(df, df));                                           \
                df = ES_NSUBS(x3, y);                                                              \
                a3[h] = ES_NADD(a3[h], ES_NMUL(df, df));                                           \
            }                                                                                      \
        }                                                                                          \
        ES_UNROLL for (h = 0; h < ES_NH; h++) {                                                              \
            a0[h] = ROOT##_V(a0[h]);                                                               \
            a1[h] = ROOT##_V(a1[h]);                                                               \
            a2[h] = ROOT##_V(a2[h]);                                                               \
            a3[h] = ROOT##_V(a3[h]);                                                               \
            ES_NSTORE(out + (j - j0) + h * ES_NW, a0[h]);                                          \
            ES_NSTORE(out + ldo + (j - j0) + h * ES_NW, a1[h]);                                    \
            ES_NSTORE(out + 2 * ldo + (j - j0) + h * ES_NW, a2[h]);                                \
            ES_NSTORE(out + 3 * ldo + (j - j0) + h * ES_NW, a3[h]);                                \
        }                                                                                          \
    }                                                                                              \
    for (; j < j1; j++) {                                                                          \
        for (r = 0; r < 4; r++) {                                                                  \
            double s = 0.0, dd;                                                                    \
            for (t = 0; t < d; t++) {                                                              \
                dd = (double)X[r * ldx + t] - (double)YT[t * ldy + j];                             \
                s = s + dd * dd;                                                                   \
            }                                                                                      \
            out[r * ldo + j - j0] = s;                                                             \
            ROOT(out + r * ldo + (j - j0), 1)                                                      \
        }                                                                                          \
    }                                                                                              \
}

/* Four rows as four one-row calls: the same lanes, so the same bits.  For the baseline build,
 * whose sixteen SSE2 registers cannot hold four rows' accumulators. */
#define ES_SQ_ROWS4_BY_ROW(T, TAG, NAME, ROW)                                                       \
ES_ATTR static void ES_FN(NAME##_##TAG)(const T* X, es_ssize ldx, const T* YT, es_ssize ldy,       \
                                        es_ssize d, es_ssize j0, es_ssize j1, double* out,         \
                                        es_ssize ldo)                                              \
{                                                                                                  \
    int r;                                                                                         \
    for (r = 0; r < 4; r++)                                                                        \
        ES_FN(ROW##_##TAG)(X + r * ldx, YT, ldy, d, j0, j1, out + r * ldo);                        \
}

/* The same squared distances with the coordinates outside and the columns inside (each column's
 * sum still in coordinate order, so the same bits): what the compiler vectorises best for SSE2,
 * whose sixteen registers cannot hold several rows' running sums. */
#define ES_SQ_ROW_PLAIN(T, TAG)                                                                    \
ES_ATTR static void ES_FN(es_sq_row_##TAG)(const T* xi, const T* YT, es_ssize ldy, es_ssize d,     \
                                           es_ssize j0, es_ssize j1, double* out)                  \
{                                                                                                  \
    es_ssize j, t, m = j1 - j0;                                                                    \
    double xv, df;                                                                                 \
    const T* yrow;                                                                                 \
    for (j = 0; j < m; j++)                                                                        \
        out[j] = 0.0;                                                                              \
    for (t = 0; t < d; t++) {                                                                      \
        xv = (double)xi[t];                                                                        \
        yrow = YT + t * ldy + j0;                                                                  \
        for (j = 0; j < m; j++) {                                                                  \
            df = xv - (double)yrow[j];                                                             \
            out[j] = out[j] + df * df;                                                             \
        }                                                                                          \
    }                                                                                              \
}

/* The "_rt_" kernels give the square roots of the same squared distances (the Euclidean
 * distances: the energy metric with exponent 1), each taken right after its vector of squares is
 * stored, so that the square roots overlap the next columns' arithmetic instead of running as a
 * separate pass.  sqrt is correctly rounded in every instruction set: the same bits as
 * es_sq_... followed by es_sqrt. */
#define ES_NO_ROOT(p, m)
#define ES_NO_ROOT_V(v) (v)
#define ES_ROOT_V(v) ES_NSQRT(v)
#define ES_ROOT(p, m)                                                                              \
    { es_ssize q_; double* p_ = (p); for (q_ = 0; q_ < (m); q_++) p_[q_] = sqrt(p_[q_]); }
/* the x86 baseline's row-at-a-time kernel: the squares of the whole row, then their roots */
#define ES_RT_ROW_PLAIN(T, TAG)                                                                    \
ES_ATTR static void ES_FN(es_rt_row_##TAG)(const T* xi, const T* YT, es_ssize ldy, es_ssize d,     \
                                           es_ssize j0, es_ssize j1, double* out)                  \
{                                                                                                  \
    ES_FN(es_sq_row_##TAG)(xi, YT, ldy, d, j0, j1, out);                                           \
    ES_ROOT(out, j1 - j0)                                                                          \
}

#ifdef ES_ROWS4_BY_ROW
ES_SQ_ROW_PLAIN(double, d)
ES_SQ_ROW_PLAIN(float, f)
ES_RT_ROW_PLAIN(double, d)
ES_RT_ROW_PLAIN(float, f)
ES_SQ_ROWS4_BY_ROW(double, d, es_sq_rows4, es_sq_row)
ES_SQ_ROWS4_BY_ROW(float, f, es_sq_rows4, es_sq_row)
ES_SQ_ROWS4_BY_ROW(double, d, es_rt_rows4, es_rt_row)
ES_SQ_ROWS4_BY_ROW(float, f, es_rt_rows4, es_rt_row)
#else
ES_SQ_ROW(double, d, ES_NLOAD_D, es_sq_row, ES_NO_ROOT)
ES_SQ_ROW(float, f, ES_NLOAD_F, es_sq_row, ES_NO_ROOT)
ES_SQ_ROW(double, d, ES_NLOAD_D, es_rt_row, ES_ROOT)
ES_SQ_ROW(float, f, ES_NLOAD_F, es_rt_row, ES_ROOT)
ES_SQ_ROWS4(double, d, ES_NLOAD_D, es_sq_rows4, ES_NO_ROOT)
ES_SQ_ROWS4(float, f, ES_NLOAD_F, es_sq_rows4, ES_NO_ROOT)
ES_SQ_ROWS4(double, d, ES_NLOAD_D, es_rt_rows4, ES_ROOT)
ES_SQ_ROWS4(float, f, ES_NLOAD_F, es_rt_rows4, ES_ROOT)
#endif
#undef ES_NO_ROOT
#undef ES_ROOT
#undef ES_NO_ROOT_V
#undef ES_ROOT_V
#undef ES_RT_ROW_PLAIN

/* out[j - j0] = sum_t |xi[t] - Y[j][t]| (the cityblock distance) for j in [j0, j1), with the
 * coordinates outside and the columns inside, which the compiler vectorises for each target.
 * Each column's sum runs over the coordinates in order and |.| is exact, so every instruction
 * set gives the same bits. */
#define ES_L1_ROW(T, TAG)                                                                          \
ES_ATTR static void ES_FN(es_l1_row_##TAG)(const T* xi, const T* YT, es_ssize ldy, es_ssize d,     \
                                           es_ssize j0, es_ssize j1, double* out)                  \
{                                                                                                  \
    es_ssize j, t, m = j1 - j0;                                                                    \
    double xv;                                                                                     \
    const T* yrow;                                                                                 \
    for (j = 0; j < m; j++)                                                                        \
        out[j] = 0.0;                                                                              \
    for (t = 0; t < d; t++) {                                                                      \
        xv = (double)xi[t];                                                                        \
        yrow = YT + t * ldy + j0;                                                                  \
        for (j = 0; j < m; j++)                                                                    \
            out[j] = out[j] + fabs(xv - (double)yrow[j]);                                          \
    }                                                                                              \
}
ES_L1_ROW(double, d)
ES_L1_ROW(float, f)
ES_SQ_ROWS4_BY_ROW(double, d, es_l1_rows4, es_l1_row)
ES_SQ_ROWS4_BY_ROW(float, f, es_l1_rows4, es_l1_row)
#undef ES_L1_ROW

/* buf[:m] = sqrt(buf[:m]) (correctly rounded in every instruction set, so the same bits). */
ES_ATTR static void ES_FN(es_sqrt)(double* buf, es_ssize m)
{
    es_ssize j;
    for (j = 0; j < m; j++)
        buf[j] = sqrt(buf[j]);
}

/* The sum of v[:m] in a fixed order: eight running sums (lane l takes v[j], j = l mod 8, in
 * order of j), then ((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7)). */
ES_ATTR static double ES_FN(es_sum)(const double* v, es_ssize m)
{
    es_ssize j = 0;
    double lane[ES_LANES];
    ES_NV acc[ES_NH];
    int h;
    ES_UNROLL for (h = 0; h < ES_NH; h++)
        acc[h] = ES_NZERO;
    for (; j + ES_LANES <= m; j += ES_LANES)
        ES_UNROLL for (h = 0; h < ES_NH; h++)
            acc[h] = ES_NADD(acc[h], ES_NLOAD_D(v + j + h * ES_NW));
    ES_UNROLL for (h = 0; h < ES_NH; h++)
        ES_NSTORE(lane + h * ES_NW, acc[h]);
    for (; j < m; j++)
        lane[j & (ES_LANES - 1)] = lane[j & (ES_LANES - 1)] + v[j];
    return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

/* The permuted products of the permutation test of independence, four permutations at once:
 * out[k] = sum over j in [j0, j1) of a[j] * b[k][p[k][j]], each as eight running sums (lane l
 * takes the j with j - j0 = l mod 8, in order of j; a product, then a sum: no fused operation)
 * reduced as es_sum reduces its lanes.  The AVX-512 build gathers the eight b values of a lane
 * vector with one instruction, the AVX2 build with two; the baseline loads them one by one,
 * a permutation at a time.  All do the same operations in the same order, so the same bits.
 * nb[k] (the rows the next call will read) are prefetched. */
#define ES_PERM_DOT4_TAIL()                                                                        \
    for (; j < j1; j++) {                                                                          \
        double aj = a[j];                                                                          \
        es_ssize l = (j - j0) & (ES_LANES - 1);                                                    \
        for (k = 0; k < 4; k++)                                                                    \
            lane[k][l] = lane[k][l] + aj * b[k][p[k][j]];                                          \
    }                                                                                              \
    for (k = 0; k < 4; k++) {                                                                      \
        const double* L = lane[k];                                                                 \
        out[k] = ((L[0] + L[4]) + (L[2] + L[6])) + ((L[1] + L[5]) + (L[3] + L[7]));                \
    }

#define ES_PERM_PREFETCH()                                                                         \
        if (q < n) {                                                                               \
            for (k = 0; k < 4; k++) {                                                              \
                ES_PREFETCH(nb[k] + q);                                                            \
                ES_PREFETCH(nb[k] + q + 8);                                                        \
            }                                                                                      \
            q += 16;                                                                               \
        }
#define ES_PERM_PREFETCH_REST()                                                                    \
    for (; q < n; q += 8)                                                                          \
        for (k = 0; k < 4; k++)                                                                    \
            ES_PREFETCH(nb[k] + q);

#if defined(ES_GATHER512)
#define ES_PERM_DOT4(IT, TAG, IDX)                                                                 \
ES_ATTR static void ES_FN(es_perm_dot4_##TAG)(const double* a, const double* const* b,            \
                                              const IT* const* p, const double* const* nb,         \
                                              es_ssize j0, es_ssize j1, es_ssize n, double* out)   \
{                                                                                                  \
    es_ssize j = j0, k, q = 0;                                                                     \
    double lane[4][ES_LANES];                                                                      \
    __m512d c0 = _mm512_setzero_pd(), c1 = c0, c2 = c0, c3 = c0, av;                               \
    for (; j + ES_LANES <= j1; j += ES_LANES) {                                                    \
        ES_PERM_PREFETCH()                                                                         \
        av = _mm512_loadu_pd(a + j);                                                               \
        c0 = _mm512_add_pd(c0, _mm512_mul_pd(av, IDX(p[0] + j, b[0])));                            \
        c1 = _mm512_add_pd(c1, _mm512_mul_pd(av, IDX(p[1] + j, b[1])));                            \
        c2 = _mm512_add_pd(c2, _mm512_mul_pd(av, IDX(p[2] + j, b[2])));                            \
        c3 = _mm512_add_pd(c3, _mm512_mul_pd(av, IDX(p[3] + j, b[3])));                            \
    }                                                                                              \
    ES_PERM_PREFETCH_REST()                                                                        \
    _mm512_storeu_pd(lane[0], c0);                                                                 \
    _mm512_storeu_pd(lane[1], c1);                                                                 \
    _mm512_storeu_pd(lane[2], c2);                                                                 \
    _mm512_storeu_pd(lane[3], c3);                                                                 \
    ES_PERM_DOT4_TAIL()                                                                            \
}
#define ES_GATHER_U16(ip, base)                                                                    \
    _mm512_i32gather_pd(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)(ip))), (base), 8)
#define ES_GATHER_I64(ip, base)                                                                    \
    _mm512_i64gather_pd(_mm512_loadu_si512((const void*)(ip)), (base), 8)
ES_PERM_DOT4(uint16_t, u16, ES_GATHER_U16)
ES_PERM_DOT4(es_ssize, i64, ES_GATHER_I64)
#undef ES_GATHER_U16
#undef ES_GATHER_I64
#elif defined(ES_GATHER256)
/* lanes 0-3 and 4-7 as two AVX2 vectors */
#define ES_PERM_DOT4(IT, TAG, IDX)                                                                 \
ES_ATTR static void ES_FN(es_perm_dot4_##TAG)(const double* a, const double* const* b,            \
                                              const IT* const* p, const double* const* nb,         \
                                              es_ssize j0, es_ssize j1, es_ssize n, double* out)   \
{                                                                                                  \
    es_ssize j = j0, k, q = 0;                                                                     \
    double lane[4][ES_LANES];                                                                      \
    __m256d lo[4], hi[4], alo, ahi;                                                                \
    for (k = 0; k < 4; k++) {                                                                      \
        lo[k] = _mm256_setzero_pd();                                                               \
        hi[k] = _mm256_setzero_pd();                                                               \
    }                                                                                              \
    for (; j + ES_LANES <= j1; j += ES_LANES) {                                                    \
        ES_PERM_PREFETCH()                                                                         \
        alo = _mm256_loadu_pd(a + j);                                                              \
        ahi = _mm256_loadu_pd(a + j + 4);                                                          \
        for (k = 0; k < 4; k++) {                                                                  \
            lo[k] = _mm256_add_pd(lo[k], _mm256_mul_pd(alo, IDX(p[k] + j, b[k])));                 \
            hi[k] = _mm256_add_pd(hi[k], _mm256_mul_pd(ahi, IDX(p[k] + j + 4, b[k])));             \
        }                                                                                          \
    }                                                                                              \
    ES_PERM_PREFETCH_REST()                                                                        \
    for (k = 0; k < 4; k++) {                                                                      \
        _mm256_storeu_pd(lane[k], lo[k]);                                                          \
        _mm256_storeu_pd(lane[k] + 4, hi[k]);                                                      \
    }                                                                                              \
    ES_PERM_DOT4_TAIL()                                                                            \
}
#define ES_GATHER_U16(ip, base)                                                                    \
    _mm256_i32gather_pd((base), _mm_cvtepu16_epi32(_mm_loadl_epi64((const __m128i*)(ip))), 8)
#define ES_GATHER_I64(ip, base)                                                                    \
    _mm256_i64gather_pd((base), _mm256_loadu_si256((const __m256i*)(ip)), 8)
ES_PERM_DOT4(uint16_t, u16, ES_GATHER_U16)
ES_PERM_DOT4(es_ssize, i64, ES_GATHER_I64)
#undef ES_GATHER_U16
#undef ES_GATHER_I64
#else
/* one permutation at a time, its eight running sums in registers (the row of a stays in L1) */
#define ES_PERM_DOT4(IT, TAG)                                                                      \
ES_ATTR static void ES_FN(es_perm_dot4_##TAG)(const double* a, const double* const* b,            \
                                              const IT* const* p, const double* const* nb,         \
                                              es_ssize j0, es_ssize j1, es_ssize n, double* out)   \
{                                                                                                  \
    es_ssize j, k, q;                                                                              \
    double lane[4][ES_LANES];                                                                      \
    for (k = 0; k < 4; k++) {                                                                      \
        const double* bk = b[k];                                                                   \
        const IT* pk = p[k];                                                                       \
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;     \
        q = 0;                                                                                     \
        for (j = j0; j + ES_LANES <= j1; j += ES_LANES) {                                          \
            if (q < n) {                                                                           \
                ES_PREFETCH(nb[k] + q);                                                            \
                ES_PREFETCH(nb[k] + q + 8);                                                        \
                q += 16;                                                                           \
            }                                                                                      \
            s0 = s0 + a[j] * bk[pk[j]];                                                            \
            s1 = s1 + a[j + 1] * bk[pk[j + 1]];                                                    \
            s2 = s2 + a[j + 2] * bk[pk[j + 2]];                                                    \
            s3 = s3 + a[j + 3] * bk[pk[j + 3]];                                                    \
            s4 = s4 + a[j + 4] * bk[pk[j + 4]];                                                    \
            s5 = s5 + a[j + 5] * bk[pk[j + 5]];                                                    \
            s6 = s6 + a[j + 6] * bk[pk[j + 6]];                                                    \
            s7 = s7 + a[j + 7] * bk[pk[j + 7]];                                                    \
        }                                                                                          \
        lane[k][0] = s0; lane[k][1] = s1; lane[k][2] = s2; lane[k][3] = s3;                        \
        lane[k][4] = s4; lane[k][5] = s5; lane[k][6] = s6; lane[k][7] = s7;                        \
        for (; q < n; q += 8)                                                                      \
            ES_PREFETCH(nb[k] + q);                                                                \
    }                                                                                              \
    j = j0 + ((j1 - j0) / ES_LANES) * ES_LANES;                                                    \
    ES_PERM_DOT4_TAIL()                                                                            \
}
ES_PERM_DOT4(uint16_t, u16)
ES_PERM_DOT4(es_ssize, i64)
#endif

/* acc[l] (compensation acc[8 + l]) gains value[l], l < 8: es_neumaier's arithmetic lane by lane
 * (|acc| >= |value| decides which error term is exact). */
ES_ATTR static void ES_FN(es_lanes_neumaier)(const double* value, double* acc)
{
#if defined(__GNUC__) || defined(__clang__)
    ES_NV a, v, e, sum, x, y;
    ES_NVL big, absmask;
    int h, l;
    for (l = 0; l < ES_NW; l++)
        absmask[l] = INT64_MAX;
    ES_UNROLL for (h = 0; h < ES_NH; h++) {
        const es_ssize o = h * ES_NW;
        v = ES_NLOAD_D(value + o);
        a = ES_NLOAD_D(acc + o);
        e = ES_NLOAD_D(acc + 8 + o);
        sum = a + v;
        big = (ES_NV)((ES_NVL)a & absmask) >= (ES_NV)((ES_NVL)v & absmask);
        x = (a - sum) + v;
        y = (v - sum) + a;
        e = e + (ES_NV)(((ES_NVL)x & big) | ((ES_NVL)y & ~big));
        ES_NSTORE(acc + o, sum);
        ES_NSTORE(acc + 8 + o, e);
    }
#else
    int l;
    for (l = 0; l < 8; l++)
        es_neumaier(acc + l, acc + 8 + l, value[l]);
#endif
}

/* Masked sums over one tile of a matrix, for `count` relabellings q and kp groups:
 *     acc[q * as + (g * kp + h) * 16 + l] (+ its compensation at + 8 + l) gains
 *         sum over the chunks c of colsum_g[8c + l] where bit 8c + l of cols[q * cs + h * gs] is
 *         set,  colsum_g[j] = sum over the rows i of rows[q * rs + g * gs] of T[i * ld + j],
 * bit t of a mask standing for row (column) t of the tile (the tile has nr ≤ 64 rows and nc ≤ 64
 * columns; no bit at or beyond them is set).
 *
 * By tables of the rows' subset sums (the "four Russians" idea): for a chunk of eight columns
 * and each block of four rows 4k..4k+3, lut[k][s] holds the sum of the block's rows in the
 * subset s (s = 0..15) over the chunk, formed once per tile as
 * lut[k][s] = lut[k][s minus its lowest bit] + row(4k + lowest bit of s), from lut[k][0] = +0.0.
 * A relabelling's column sums over a chunk are then one table row per block (the nibble
 * (rw >> 4k) & 15 of g's mask) instead of one matrix row per member: n²/8 additions a group
 * and relabelling over the lower triangle instead of n²/4.  Two chunks are served at a time
 * (32 KiB of tables, in L1 while the batch passes).  The order of the additions, the same in
 * every build: the sixteen blocks' table rows in two running sums from +0.0 (even k, odd k, in
 * increasing order), added (even + odd); the columns outside h's mask replaced by +0.0 (a
 * select, not a product: an infinite or NaN entry outside the masks changes nothing); the
 * chunks added in increasing order into part (one eight-lane total per relabelling and pair of
 * groups); and the totals added to acc with compensation (es_neumaier's arithmetic, lane by
 * lane).  Each lane is one column's chain; the builds differ only in how many lanes a register
 * holds: the same bits everywhere.
 * Fewer than ES_MASK_TABLES_FROM relabellings take the same sums from the rows, no tables.
 * Scratch: part, count * kp * kp * 8 doubles; lut, 8 * 16 * 16 * 8 doubles (128 KiB). */
ES_ATTR static void ES_FN(es_mask_tile)(const double* T, es_ssize ld, es_ssize nr, es_ssize nc,
                                        const uint64_t* rows, es_ssize rs,
                                        const uint64_t* cols, es_ssize cs, es_ssize gs, es_ssize kp,
                                        double* acc, es_ssize as, es_ssize count,
                                        double* part, double* lut)
{
    const es_ssize pq = kp * kp * 8;
    double pad[64];
    es_ssize q, g, h, c, k, s, j;
    for (q = 0; q < count * pq; q++)
        part[q] = 0.0;
    if (count < ES_MASK_TABLES_FROM) {
        /* few relabellings (the observed labelling's sums): no tables, the same sums worked
           out from the rows: a block's entry is +0.0 plus its rows of the subset from the
           highest down, as the tables make it */
        for (c = 0; 8 * c < nc; c++) {
            for (q = 0; q < count; q++)
                for (g = 0; g < kp; g++) {
                    const uint64_t rw = rows[q * rs + g * gs];
                    double e[8], d[8], v[8];
                    if (rw == 0)
                        continue;
                    for (j = 0; j < 8; j++)
                        e[j] = d[j] = 0.0;
                    for (k = 0; k < 16; k++) {
                        const unsigned nib = (unsigned)(rw >> (4 * k)) & 15u;
                        int t;
                        for (j = 0; j < 8; j++)
                            v[j] = 0.0;
                        for (t = 3; t >= 0; t--) {
                            if ((nib >> t) & 1u) {
                                const double* row = T + (4 * k + t) * ld + 8 * c;
                                for (j = 0; j < 8; j++)
                                    v[j] = v[j] + (8 * c + j < nc ? row[j] : 0.0);
                            }
                        }
                        for (j = 0; j < 8; j++) {
                            if (k & 1)
                                d[j] = d[j] + v[j];
                            else
                                e[j] = e[j] + v[j];
                        }
                    }
                    for (j = 0; j < 8; j++)
                        e[j] = e[j] + d[j];
                    for (h = 0; h < kp; h++) {
                        const unsigned cw = (unsigned)(cols[q * cs + h * gs] >> (8 * c)) & 255u;
                        double* P = part + q * pq + (g * kp + h) * 8;
                        for (j = 0; j < 8 && cw; j++)
                            P[j] = P[j] + (((cw >> j) & 1u) ? e[j] : 0.0);
                    }
                }
        }
        for (q = 0; q < count; q++)
            for (g = 0; g < kp * kp; g++)
                ES_FN(es_lanes_neumaier)(part + q * pq + g * 8, acc + q * as + g * 16);
        return;
    }
    /* the tables of all the chunks, lut[2048 c + 128 k + 8 s + j], from the tile's rows read
       whole, in order (rows past nr and columns past nc as zeros: no mask has their bits) */
    for (j = 0; j < 64; j++)
        pad[j] = 0.0;
    for (k = 0; k < 16; k++) {
        for (c = 0; c < 8; c++)
            for (j = 0; j < 8; j++)
                lut[2048 * c + 128 * k + j] = 0.0;
        for (s = 1; s < 16; s++) {
            const es_ssize t = es_ctz64((uint64_t)s), i = 4 * k + t;
            const double* row = pad;
            if (i < nr && nc == 64) {
                row = T + i * ld;
            } else if (i < nr) {
                for (j = 0; j < 64; j++)
                    pad[j] = j < nc ? T[i * ld + j] : 0.0;
            } else {
                for (j = 0; j < 64; j++)
                    pad[j] = 0.0;
            }
            for (c = 0; c < 8; c++) {
                const double* src = lut + 2048 * c + 128 * k + 8 * (s & (s - 1));
                double* dst = lut + 2048 * c + 128 * k + 8 * s;
                for (j = 0; j < 8; j++)
                    dst[j] = src[j] + row[8 * c + j];
            }
        }
    }
    for (c = 0; 8 * c < nc; c += 2) {
        /* two chunks at a time: sixteen columns a table row (32 KiB of tables) */
        const double* lc = lut + 2048 * c;
        const int two = 8 * c + 8 < nc;
        for (q = 0; q < count; q++) {
            for (g = 0; g < kp; g++) {
                const uint64_t rw = rows[q * rs + g * gs];
                if (rw == 0)
                    continue;
#if defined(__GNUC__) || defined(__clang__)
                {
                    ES_NV e[2 * ES_NH], d[2 * ES_NH];
                    uint64_t m = rw;
                    int p, kk;
                    ES_UNROLL for (p = 0; p < 2 * ES_NH; p++)
                        e[p] = d[p] = ES_NZERO;
                    _Pragma("GCC unroll 8") for (kk = 0; kk < 16; kk += 2) {
                        const double* x = lc + 128 * kk + 8 * (m & 15);
                        const double* y = lc + 128 * (kk + 1) + 8 * ((m >> 4) & 15);
                        m >>= 8;
                        ES_UNROLL for (p = 0; p < ES_NH; p++) {
                            e[p] = e[p] + ES_NLOAD_D(x + p * ES_NW);
                            e[ES_NH + p] = e[ES_NH + p] + ES_NLOAD_D(x + 2048 + p * ES_NW);
                            d[p] = d[p] + ES_NLOAD_D(y + p * ES_NW);
                            d[ES_NH + p] = d[ES_NH + p] + ES_NLOAD_D(y + 2048 + p * ES_NW);
                        }
                    }
                    ES_UNROLL for (p = 0; p < 2 * ES_NH; p++)
                        e[p] = e[p] + d[p];
                    for (h = 0; h < kp; h++) {
                        const uint64_t cw2 = cols[q * cs + h * gs] >> (8 * c);
                        double* P = part + q * pq + (g * kp + h) * 8;
                        int half;
                        for (half = 0; half < 1 + two; half++) {
                            const unsigned cw = (unsigned)(cw2 >> (8 * half)) & 255u;
                            if (cw == 0)
                                continue;
                            ES_UNROLL for (p = 0; p < ES_NH; p++) {
                                ES_NV v = (ES_NV)((ES_NVL)e[half * ES_NH + p]
                                                  & ES_NLOAD_L(es_lane_masks[cw] + p * ES_NW));
                                v = ES_NLOAD_D(P + p * ES_NW) + v;
                                ES_NSTORE(P + p * ES_NW, v);
                            }
                        }
                    }
                }
#else
                {
                    int half;
                    for (half = 0; half < 1 + two; half++) {
                        const double* lh = lc + 2048 * half;
                        double e[8], d[8];
                        uint64_t m = rw;
                        for (j = 0; j < 8; j++)
                            e[j] = d[j] = 0.0;
                        for (k = 0; k < 16; k += 2, m >>= 8)
                            for (j = 0; j < 8; j++) {
                                e[j] = e[j] + lh[128 * k + 8 * (m & 15) + j];
                                d[j] = d[j] + lh[128 * (k + 1) + 8 * ((m >> 4) & 15) + j];
                            }
                        for (j = 0; j < 8; j++)
                            e[j] = e[j] + d[j];
                        for (h = 0; h < kp; h++) {
                            const unsigned cw = (unsigned)(cols[q * cs + h * gs] >> (8 * (c + half))) & 255u;
                            double* P = part + q * pq + (g * kp + h) * 8;
                            for (j = 0; j < 8 && cw; j++)
                                P[j] = P[j] + (((cw >> j) & 1u) ? e[j] : 0.0);
                        }
                    }
                }
#endif
            }
        }
    }
    for (q = 0; q < count; q++)
        for (g = 0; g < kp * kp; g++)
            ES_FN(es_lanes_neumaier)(part + q * pq + g * 8, acc + q * as + g * 16);
}

/* Hartigan's move of a point from cluster j to cluster l (j != l): for m < n,
 *     qx[m * k + j] -= g[m];   qx[m * k + l] += g[m]
 * over the row-major n×k table qx.  Every entry is changed by one subtraction or one addition,
 * or not at all, in every build, so the results are the same bits.  The AVX-512 build, for
 * k ≤ 8, passes over the table eight entries at a time: the chunk's g values are permuted into
 * place from a window of g (the column pattern repeats every k / gcd(k, 8) chunks) and
 * subtracted and added under mask registers; the others (and k > 8, where most chunks hold
 * neither column) change the two columns entry by entry.  Every path prefetches g 2 kB ahead
 * (fetching the row of G bounds a move, not the arithmetic). */
ES_ATTR static void ES_FN(es_move_cols)(double* qx, es_ssize n, es_ssize k, es_ssize j, es_ssize l,
                                        const double* g)
{
    es_ssize m;
#if defined(ES_GATHER512)
    if (k <= 8) {
        es_ssize P, ph, t, lane, nchunk = n * k / 8, row0, per, p;
        __m512i idx[8];
        __mmask8 kj[8], kl[8];
        es_ssize r0[8];
        {
            es_ssize gcd = 8, a = k;
            while (a) { es_ssize t_ = gcd % a; gcd = a; a = t_; }
            P = k / gcd;        /* chunks per period of the column pattern */
            per = 8 * P / k;    /* rows per period */
        }
        for (ph = 0; ph < P; ph++) {
            int64_t ix[8];
            unsigned mj = 0, ml = 0;
            r0[ph] = (8 * ph) / k;
            for (lane = 0; lane < 8; lane++) {
                p = 8 * ph + lane;
                ix[lane] = p / k - r0[ph];
                mj |= (unsigned)(p % k == j) << lane;
                ml |= (unsigned)(p % k == l) << lane;
            }
            idx[ph] = _mm512_loadu_si512((const void*)ix);
            kj[ph] = (__mmask8)mj;
            kl[ph] = (__mmask8)ml;
        }
        t = 0;
        row0 = 0;
        if (P == 1) {
            /* k = 1, 2, 4 or 8: the same pattern in every chunk, held in registers */
            const __m512i ix = idx[0];
            const __mmask8 mj = kj[0], ml = kl[0];
            for (; t < nchunk && row0 + 8 <= n; t++, row0 += per) {
                const __m512d gv = _mm512_permutexvar_pd(ix, _mm512_loadu_pd(g + row0));
                ES_PREFETCH(g + row0 + 256);   /* the row of G, 2 kB ahead */
                __m512d q = _mm512_loadu_pd(qx + 8 * t);
                q = _mm512_mask_sub_pd(q, mj, q, gv);
                q = _mm512_mask_add_pd(q, ml, q, gv);
                _mm512_storeu_pd(qx + 8 * t, q);
            }
        }
        for (ph = 0; t < nchunk; t++) {
            const es_ssize r = row0 + r0[ph], left = n - r;
            const __mmask8 valid = left >= 8 ? (__mmask8)0xff : (__mmask8)((1u << left) - 1u);
            const __m512d gv = _mm512_permutexvar_pd(idx[ph], _mm512_maskz_loadu_pd(valid, g + r));
            ES_PREFETCH(g + r + 256);
            __m512d q = _mm512_loadu_pd(qx + 8 * t);
            q = _mm512_mask_sub_pd(q, kj[ph], q, gv);
            q = _mm512_mask_add_pd(q, kl[ph], q, gv);
            _mm512_storeu_pd(qx + 8 * t, q);
            if (++ph == P) {
                ph = 0;
                row0 += per;
            }
        }
        /* the last n·k mod 8 entries */
        for (p = 8 * nchunk; p < n * k; p++) {
            if (p % k == j)
                qx[p] -= g[p / k];
            else if (p % k == l)
                qx[p] += g[p / k];
        }
        return;
    }
#endif
    for (m = 0; m < n; m++) {
        ES_PREFETCH(g + m + 256);   /* the row of G, 2 kB ahead */
        qx[m * k + j] -= g[m];
        qx[m * k + l] += g[m];
    }
}

#undef ES_PERM_DOT4
#undef ES_PERM_DOT4_TAIL
#undef ES_PERM_PREFETCH
#undef ES_PERM_PREFETCH_REST
#undef ES_SQ_ROW
#undef ES_SQ_ROWS4
#undef ES_SQ_ROWS4_BY_ROW
#undef ES_SQ_ROW_PLAIN
#undef ES_FN
#undef ES_CAT2
#undef ES_CAT2_

#undef ES_NH
#undef ES_UNROLL
#undef ES_NV
#undef ES_NVL
#undef ES_NZERO
#undef ES_NLOAD_D
#undef ES_NLOAD_F
#undef ES_NLOAD_L
#undef ES_NSTORE
#undef ES_NADD
#undef ES_NMUL
#undef ES_NSUBS
#undef ES_NSQRT
