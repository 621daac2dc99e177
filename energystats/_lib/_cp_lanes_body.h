/* The permuted re-searches of E-Divisive, ES_NW permutations at once (one per vector lane),
 * instantiated by _cp_lanes.h once per instruction set (ES_ISA, ES_ATTR, ES_NW as in _simd.h).
 *
 * Every permutation of a group runs the same loops over τ and κ (the segments and min_size are
 * shared), so lane p of each vector holds permutation p's running sums and the κ loop of the
 * serial sweep (_changepoint.pyx: _sweep) runs once for the group.  Each lane does exactly the
 * serial sweep's operations in its order -- the left sums and the sums c(j) add the rows in
 * ascending order, the squared distances add the coordinates in order, Q and the running best
 * are formed by the same expressions and comparisons (a select where the sweep branches) -- with
 * floating-point contraction off, so a permutation's maximum is the same bits as the serial
 * sweep's whichever lane, group or instruction set computes it.
 *
 * Layout: the permuted segment interleaved, Zi[(k * tn + j) * W + p] (coordinate k of row j of
 * lane p), and so are the left sums L and the sums c. */

#define ES_CP_CAT_(a, b) a##_##b
#define ES_CP_CAT(a, b) ES_CP_CAT_(a, b)
#define ES_CP_FN(name) ES_CP_CAT(name, ES_ISA)

typedef double ES_CP_FN(es_cpv) __attribute__((vector_size(8 * ES_NW)));
typedef int64_t ES_CP_FN(es_cpl) __attribute__((vector_size(8 * ES_NW)));
#define V ES_CP_FN(es_cpv)
#define VL ES_CP_FN(es_cpl)
#define VLOAD(p) ({ V v_; memcpy(&v_, (p), sizeof v_); v_; })
#define VSTORE(p, v) memcpy((p), &(v), sizeof(V))
#define VSEL(m, a, b) ((V)((((VL)(a)) & (m)) | (((VL)(b)) & ~(m))))

/* acc[j] += rho(Z_i, Z_j) for j in [j0, j1), lane by lane (the serial _row_add's arithmetic). */
ES_ATTR static void ES_CP_FN(es_cp_rowadd)(const double* Zi, es_ssize tn, es_ssize d, es_ssize i,
                                           es_ssize j0, es_ssize j1, int code, int mode,
                                           double param, double* acc)
{
    const es_ssize W = ES_NW;
    es_ssize j, k;
    int p;
    V x, s, t, a;
    VL absmask;
    for (p = 0; p < W; p++)
        absmask[p] = INT64_MAX;
    if (mode == 3) {   /* |x - y| in one dimension */
        x = VLOAD(Zi + i * W);
        for (j = j0; j < j1; j++) {
            t = VLOAD(Zi + j * W) - x;
            t = (V)((VL)t & absmask);
            a = VLOAD(acc + j * W) + t;
            VSTORE(acc + j * W, a);
        }
        return;
    }
    for (j = j0; j < j1; j++) {
        x = VLOAD(Zi + i * W);
        t = VLOAD(Zi + j * W) - x;
        s = t * t;
        for (k = 1; k < d; k++) {
            x = VLOAD(Zi + (k * tn + i) * W);
            t = VLOAD(Zi + (k * tn + j) * W) - x;
            s = s + t * t;
        }
        a = VLOAD(acc + j * W);
        if (code == 0 && mode == 1) {
#if defined(ES_CP_SQRT)
            a = a + ES_CP_SQRT(s);
#else
            for (p = 0; p < W; p++)
                a[p] = a[p] + sqrt(s[p]);
#endif
        } else if (code == 0 && mode == 2) {
            a = a + s;
        } else if (code == 0) {
            const double h = 0.5 * param;
            for (p = 0; p < W; p++)
                if (s[p] > 0.0)
                    a[p] = a[p] + pow(s[p], h);
        } else if (code == 1) {
            const double h = 1.0 / (2.0 * param);
            for (p = 0; p < W; p++)
                a[p] = a[p] + (2.0 - 2.0 * exp(-sqrt(s[p]) * h));
        } else {
            const double h = 1.0 / (2.0 * param * param);
            for (p = 0; p < W; p++)
                a[p] = a[p] + (2.0 - 2.0 * exp(-s[p] * h));
        }
        VSTORE(acc + j * W, a);
    }
}

/* The best Q of each lane's split search of the segment Zi (tn rows; τ in [min_size,
 * tn − min_size]), into bq[0..W).  L, c: tn·W doubles; im1, tk: tn + 1 doubles.  Returns 1
 * when cancelled. */
ES_ATTR static int ES_CP_FN(es_cp_sweep)(const double* Zi, es_ssize tn, es_ssize d,
                                         es_ssize min_size, int code, int mode, double param,
                                         int end_only, double* L, double* c, double* im1,
                                         double* tk, double* bq_out)
{
    const es_ssize W = ES_NW, a0 = min_size, b = tn - min_size + 1;
    es_ssize i, j, tau, kap, m, n;
    V WX, A, B, WY, q, q1, c0, c1, e0, e1, B0, W0, bq, zero;
    VL upd, pick;
    for (i = 0; i < W; i++) {
        zero[i] = 0.0;
        bq[i] = -INFINITY;
    }
    WX = zero;
    for (m = 2; m <= tn; m++)
        im1[m] = 1.0 / (m - 1);
    for (kap = 1; kap <= tn; kap++)
        tk[kap] = 2.0 / kap;
    /* the left sums, rows added in ascending order */
    for (j = 0; j < tn * W; j++)
        L[j] = 0.0;
    for (i = 0; i + 1 < tn; i++) {
        if (es_cp_cancelled())
            return 1;
        ES_CP_FN(es_cp_rowadd)(Zi, tn, d, i, i + 1, tn, code, mode, param, L);
    }
    for (j = a0 * W; j < tn * W; j++)
        c[j] = 0.0;
    for (i = 0; i < a0; i++) {
        ES_CP_FN(es_cp_rowadd)(Zi, tn, d, i, a0, tn, code, mode, param, c);
        WX = WX + VLOAD(L + i * W);
    }
    for (tau = a0; tau < b; tau++) {
        if (es_cp_cancelled())
            return 1;
        n = tau;
        A = WX / (double)(n - 1);
        B = zero;
        WY = zero;
        for (j = tau; j < tau + min_size - 1; j++) {
            c0 = VLOAD(c + j * W);
            B = B + c0;
            WY = WY + (VLOAD(L + j * W) - c0);
        }
        kap = tau + min_size;
        while (kap < tn) {
            j = kap - 1;
            c0 = VLOAD(c + j * W);
            c1 = VLOAD(c + (j + 1) * W);
            e0 = VLOAD(L + j * W) - c0;
            e1 = VLOAD(L + (j + 1) * W) - c1;
            B0 = B + c0;
            W0 = WY + e0;
            B = B + (c0 + c1);
            WY = WY + (e0 + e1);
            m = kap - tau;
            q = (B0 - (double)m * A - (double)n * W0 * im1[m]) * tk[kap];
            q1 = (B - (double)(m + 1) * A - (double)n * WY * im1[m + 1]) * tk[kap + 1];
            if (end_only) {
                if (kap + 1 == tn) {
                    upd = q1 > bq;
                    bq = VSEL(upd, q1, bq);
                }
            } else {
                upd = (q > bq) | (q1 > bq);
                pick = q >= q1;
                bq = VSEL(upd, VSEL(pick, q, q1), bq);
            }
            kap = kap + 2;
        }
        if (kap == tn) {
            j = kap - 1;
            c0 = VLOAD(c + j * W);
            B = B + c0;
            WY = WY + (VLOAD(L + j * W) - c0);
            m = kap - tau;
            q = (B - (double)m * A - (double)n * WY * im1[m]) * tk[kap];
            upd = q > bq;
            bq = VSEL(upd, q, bq);
        }
        if (tau + 1 < b) {
            ES_CP_FN(es_cp_rowadd)(Zi, tn, d, tau, tau + 1, tn, code, mode, param, c);
            WX = WX + VLOAD(L + tau * W);
        }
    }
    VSTORE(bq_out, bq);
    return 0;
}

/* out[p] (p < W) = the largest best Q over the segments [starts[s], ends[s]) of Z[perm[p]]
 * (-inf where no segment can be split).  Z is T×d (row-major); perm[p] a permutation of the
 * rows; work: maxlen·(d + 2)·W + 2·maxlen + 2 + W doubles.  Returns 1 when cancelled. */
ES_ATTR static int ES_CP_FN(es_cp_group)(const double* Z, es_ssize d, const es_ssize* const* perm,
                                         const es_ssize* starts, const es_ssize* ends, es_ssize S,
                                         es_ssize maxlen, es_ssize min_size, int code, int mode,
                                         double param, int end_only, double* work, double* out)
{
    const es_ssize W = ES_NW;
    double* Zi = work;
    double* L = Zi + maxlen * d * W;
    double* c = L + maxlen * W;
    double* im1 = c + maxlen * W;
    double* tk = im1 + maxlen + 1;
    double* bq = tk + maxlen + 1;
    es_ssize s, t0, tn, i, k;
    int p;
    for (p = 0; p < W; p++)
        out[p] = -INFINITY;
    for (s = 0; s < S; s++) {
        t0 = starts[s];
        tn = ends[s] - t0;
        if (tn < 2 * min_size)
            continue;
        for (k = 0; k < d; k++)
            for (i = 0; i < tn; i++)
                for (p = 0; p < W; p++)
                    Zi[(k * tn + i) * W + p] = Z[perm[p][t0 + i] * d + k];
        if (ES_CP_FN(es_cp_sweep)(Zi, tn, d, min_size, code, mode, param, end_only, L, c, im1, tk,
                                  bq))
            return 1;
        for (p = 0; p < W; p++)
            if (bq[p] > out[p])
                out[p] = bq[p];
    }
    return 0;
}

#undef V
#undef VL
#undef VLOAD
#undef VSTORE
#undef VSEL
#undef ES_CP_FN
#undef ES_CP_CAT
#undef ES_CP_CAT_
