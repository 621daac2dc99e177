/* The arithmetic limit of the energy-distance pair kernel on this machine: a plain C loop over the
 * same work (all pairs i < j of a pooled sample of N points in d dimensions, the distance formed
 * coordinate by coordinate in double, its square root, the sum), built with native flags:
 *
 *     cc -O3 -march=native -fno-math-errno -fopenmp probe_pairs.c -o probe_pairs -lm
 *     ./probe_pairs N d threads [lanes]
 *
 * lanes = 1 (default): the sum of the roots as one running sum (the plain loop);
 * lanes = 8: eight running sums, so that the sum vectorises too.
 * Prints the best of three runs in ns per pair.  benchmarks/bench_simd.py builds and runs it.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK 256

int main(int argc, char** argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s N d threads [lanes]\n", argv[0]);
        return 2;
    }
    long N = atol(argv[1]);
    int d = atoi(argv[2]), nt = atoi(argv[3]), lanes = argc > 4 ? atoi(argv[4]) : 1;
    double* ZT = malloc(sizeof(double) * N * d);   /* transposed: ZT[t * N + i] */
    unsigned long long state = 88172645463325252ULL;
    for (long i = 0; i < N * d; i++) {             /* xorshift64: uniform in [0, 1) */
        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
        ZT[i] = (state >> 11) * (1.0 / 9007199254740992.0);
    }
    double best = 1e300, total = 0.0;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = omp_get_wtime(), s = 0.0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16) reduction(+ : s)
        for (long i = 0; i < N; i++) {
            double buf[BLOCK];
            for (long j0 = i + 1; j0 < N; j0 += BLOCK) {
                long m = N - j0 < BLOCK ? N - j0 : BLOCK;
                for (long j = 0; j < m; j++)
                    buf[j] = 0.0;
                for (int t = 0; t < d; t++) {
                    double xv = ZT[t * N + i];
                    const double* y = ZT + t * N + j0;
                    for (long j = 0; j < m; j++) {
                        double df = xv - y[j];
                        buf[j] += df * df;
                    }
                }
                if (lanes == 8) {
                    double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                    long j = 0;
                    for (; j + 8 <= m; j += 8)
                        for (int l = 0; l < 8; l++)
                            a[l] += sqrt(buf[j + l]);
                    for (; j < m; j++)
                        a[0] += sqrt(buf[j]);
                    s += ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
                } else {
                    double a = 0.0;
                    for (long j = 0; j < m; j++)
                        a += sqrt(buf[j]);
                    s += a;
                }
            }
        }
        double t = omp_get_wtime() - t0;
        if (t < best)
            best = t;
        total = s;
    }
    printf("%ld %d %d %d %.6f %.4f %.17g\n", N, d, nt, lanes, best, best / (N * (N - 1) / 2.0) * 1e9,
           total);
    free(ZT);
    return 0;
}
