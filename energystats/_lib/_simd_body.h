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

/* out[j - j0] = |xi - Y[j]|^2 for j in [j0, j1); Y is given transposed (YT[t * ldy + j]). */
#define ES_SQ_ROW(T, TAG, LOAD)                                                                    \
ES_ATTR static void ES_FN(es_sq_row_##TAG)(const T* xi, const T* YT, es_ssize ldy, es_ssize d,     \
                                           es_ssize j0, es_ssize j1, double* out)                  \
{                                                                                                  \
    es_ssize j = j0, t;                                                                            \
    for (; j + ES_LANES <= j1; j += ES_LANES) {                                                    \
        es_v8d acc = ES_VZERO, y, diff;                                                             \
        for (t = 0; t < d; t++) {                                                                  \
            y = LOAD(YT + t * ldy + j);                                                            \
            diff = ES_VSUBS((double)xi[t], y);                                                     \
            acc = ES_VADD(acc, ES_VMUL(diff, diff));                                               \
        }                                                                                          \
        ES_VSTORE(out + (j - j0), acc);                                                            \
    }                                                                                              \
    for (; j < j1; j++) {                                                                          \
        double s = 0.0, df;                                                                        \
        for (t = 0; t < d; t++) {                                                                  \
            df = (double)xi[t] - (double)YT[t * ldy + j];                                          \
            s = s + df * df;                                                                       \
        }                                                                                          \
        out[j - j0] = s;                                                                           \
    }                                                                                              \
}

/* The same for four consecutive rows X[0..3] (row stride ldx) at once, each loaded column
 * serving the four rows: out[r * ldo + j - j0] = |X[r] - Y[j]|^2. */
#define ES_SQ_ROWS4(T, TAG, LOAD)                                                                  \
ES_ATTR static void ES_FN(es_sq_rows4_##TAG)(const T* X, es_ssize ldx, const T* YT, es_ssize ldy,  \
                                             es_ssize d, es_ssize j0, es_ssize j1, double* out,    \
                                             es_ssize ldo)                                         \
{                                                                                                  \
    es_ssize j = j0, t, r;                                                                         \
    for (; j + ES_LANES <= j1; j += ES_LANES) {                                                    \
        es_v8d a0 = ES_VZERO, a1 = ES_VZERO, a2 = ES_VZERO, a3 = ES_VZERO, y, df;                   \
        for (t = 0; t < d; t++) {                                                                  \
            y = LOAD(YT + t * ldy + j);                                                            \
            df = ES_VSUBS((double)X[t], y);                                                        \
            a0 = ES_VADD(a0, ES_VMUL(df, df));                                                     \
            df = ES_VSUBS((double)X[ldx + t], y);                                                  \
            a1 = ES_VADD(a1, ES_VMUL(df, df));                                                     \
            df = ES_VSUBS((double)X[2 * ldx + t], y);                                              \
            a2 = ES_VADD(a2, ES_VMUL(df, df));                                                     \
            df = ES_VSUBS((double)X[3 * ldx + t], y);                                              \
            a3 = ES_VADD(a3, ES_VMUL(df, df));                                                     \
        }                                                                                          \
        ES_VSTORE(out + (j - j0), a0);                                                             \
        ES_VSTORE(out + ldo + (j - j0), a1);                                                       \
        ES_VSTORE(out + 2 * ldo + (j - j0), a2);                                                   \
        ES_VSTORE(out + 3 * ldo + (j - j0), a3);                                                   \
    }                                                                                              \
    for (; j < j1; j++) {                                                                          \
        for (r = 0; r < 4; r++) {                                                                  \
            double s = 0.0, dd;                                                                    \
            for (t = 0; t < d; t++) {                                                              \
                dd = (double)X[r * ldx + t] - (double)YT[t * ldy + j];                             \
                s = s + dd * dd;                                                                   \
            }                                                                                      \
            out[r * ldo + j - j0] = s;                                                             \
        }                                                                                          \
    }                                                                                              \
}

/* Four rows as four one-row calls: the same lanes, so the same bits.  For the baseline build,
 * whose sixteen SSE2 registers cannot hold four rows' accumulators. */
#define ES_SQ_ROWS4_BY_ROW(T, TAG)                                                                 \
ES_ATTR static void ES_FN(es_sq_rows4_##TAG)(const T* X, es_ssize ldx, const T* YT, es_ssize ldy,  \
                                             es_ssize d, es_ssize j0, es_ssize j1, double* out,    \
                                             es_ssize ldo)                                         \
{                                                                                                  \
    int r;                                                                                         \
    for (r = 0; r < 4; r++)                                                                        \
        ES_FN(es_sq_row_##TAG)(X + r * ldx, YT, ldy, d, j0, j1, out + r * ldo);                    \
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

#ifdef ES_ROWS4_BY_ROW
ES_SQ_ROW_PLAIN(double, d)
ES_SQ_ROW_PLAIN(float, f)
ES_SQ_ROWS4_BY_ROW(double, d)
ES_SQ_ROWS4_BY_ROW(float, f)
#else
ES_SQ_ROW(double, d, ES_VLOAD_D)
ES_SQ_ROW(float, f, ES_VLOAD_F)
ES_SQ_ROWS4(double, d, ES_VLOAD_D)
ES_SQ_ROWS4(float, f, ES_VLOAD_F)
#endif

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
    es_v8d acc = ES_VZERO;
    for (; j + ES_LANES <= m; j += ES_LANES)
        acc = ES_VADD(acc, ES_VLOAD_D(v + j));
    ES_VSTORE(lane, acc);
    for (; j < m; j++)
        lane[j & (ES_LANES - 1)] = lane[j & (ES_LANES - 1)] + v[j];
    return ((lane[0] + lane[4]) + (lane[2] + lane[6])) + ((lane[1] + lane[5]) + (lane[3] + lane[7]));
}

#undef ES_SQ_ROW
#undef ES_SQ_ROWS4
#undef ES_SQ_ROWS4_BY_ROW
#undef ES_SQ_ROW_PLAIN
#undef ES_FN
#undef ES_CAT2
#undef ES_CAT2_
