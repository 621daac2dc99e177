"""Level and power of the time-series dependence tests (energystats.dependence.timeseries).

* :func:`energystats.cross_distance_correlation_test` (lags -2..2, R = 99 resamples of y):
  rejection rate at 0.05 when x and y are *independent* series, each AR(1) with
  phi = 0.5 or 0.8, or GARCH(1,1), at n = 200 and 500; block permutations (the default, the
  automatic block length) against row permutations (``resampling='permutation'``).
* :func:`energystats.adcf_test` (lags 1..5, R = 99 permutations): level under iid N(0, 1),
  power under AR(1) phi = 0.3 and GARCH(1,1), at n = 200 and 500; beside it the Ljung-Box
  test of the Pearson ACF (lags 1..5, chi^2_5), which GARCH escapes.

GARCH(1,1): x_t = s_t e_t, s_t^2 = 0.1 + 0.3 x_{t-1}^2 + 0.6 s_{t-1}^2, e_t iid N(0, 1);
AR(1): x_t = phi x_{t-1} + e_t; 200 rows of burn-in.  Fixed seeds: rerun to get the same
table.  The binomial standard error of a rate r over N series is sqrt(r (1 - r) / N); at
the nominal 0.05 and N = 200 it is 0.0154, so a level within 0.05 +- 0.031 is within 2 SE.

Run (about 13 minutes of one core; the numbers in docs/benchmarks/timeseries_level.txt)::

    nice -n 19 python benchmarks/timeseries_level.py --series 200 \
        --out docs/benchmarks/timeseries_level.txt
"""
from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
from scipy import stats

import energystats as es

BURN = 200
R = 99
CROSS_LAGS = 2
ADCF_LAGS = 5


def ar1(rng, n, phi):
    e = rng.normal(size=n + BURN)
    z = np.empty(n + BURN)
    z[0] = e[0]
    for t in range(1, n + BURN):
        z[t] = phi * z[t - 1] + e[t]
    return z[BURN:]


def garch(rng, n, omega=0.1, a=0.3, b=0.6):
    e = rng.normal(size=n + BURN)
    x = np.empty(n + BURN)
    s2 = omega / (1 - a - b)
    x[0] = math.sqrt(s2) * e[0]
    for t in range(1, n + BURN):
        s2 = omega + a * x[t - 1] ** 2 + b * s2
        x[t] = math.sqrt(s2) * e[t]
    return x[BURN:]


def iid(rng, n):
    return rng.normal(size=n)


PROCESSES = {"AR(1) phi=0.5": lambda rng, n: ar1(rng, n, 0.5),
             "AR(1) phi=0.8": lambda rng, n: ar1(rng, n, 0.8),
             "GARCH(1,1)": garch}
ADCF_PROCESSES = {"iid N(0,1) (level)": iid,
                  "AR(1) phi=0.3 (power)": lambda rng, n: ar1(rng, n, 0.3),
                  "GARCH(1,1) (power)": garch}


def ljung_box(x, h):
    x = x - x.mean()
    n = x.size
    r = np.array([x[k:] @ x[:-k] for k in range(1, h + 1)]) / (x @ x)
    Q = n * (n + 2) * np.sum(r ** 2 / (n - np.arange(1, h + 1)))
    return float(stats.chi2.sf(Q, h))


def se(r, N):
    """The binomial standard error of a rejection rate ``r`` over ``N`` series."""
    return math.sqrt(r * (1 - r) / N)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200, help="series per cell (default 200)")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    ap.add_argument("--only", choices=("cross", "adcf"), default=None)
    args = ap.parse_args(argv)
    N = args.series
    lines = [f"# energystats time-series tests: rejection rates at 0.05, {N} series per cell, "
             f"R = {R}", f"# command: nice -n 19 python benchmarks/timeseries_level.py --series {N}",
             f"# binomial SE at 0.05: {math.sqrt(0.05 * 0.95 / N):.4f} (2 SE: "
             f"{2 * math.sqrt(0.05 * 0.95 / N):.4f})", ""]

    def emit(s):
        print(s, flush=True)
        lines.append(s)

    for s in lines:
        print(s)
    t0 = time.process_time()
    if args.only in (None, "cross"):
        emit(f"cross_distance_correlation_test, lags -{CROSS_LAGS}..{CROSS_LAGS}; x, y independent")
        emit(f"{'process':<16}{'n':>5}  {'block':>7} {'(SE)':>7}  {'median L':>8}  "
             f"{'rows':>7} {'(SE)':>7}")
        for k, (name, gen_series) in enumerate(PROCESSES.items()):
            for n in (200, 500):
                rng = np.random.default_rng([43, k, n])
                rej = {"block": 0, "permutation": 0}
                Ls = []
                for s in range(N):
                    x, y = gen_series(rng, n), gen_series(rng, n)
                    for method in rej:
                        res = es.cross_distance_correlation_test(
                            x, y, lags=CROSS_LAGS, n_resamples=R, resampling=method, rng=1000 * s + n)
                        rej[method] += res.pvalue <= 0.05
                        if method == "block":
                            Ls.append(res.block_length)
                rb, rp = rej["block"] / N, rej["permutation"] / N
                emit(f"{name:<16}{n:>5}  {rb:>7.3f} {se(rb, N):>7.4f}  {int(np.median(Ls)):>8}  "
                     f"{rp:>7.3f} {se(rp, N):>7.4f}")
        emit("")
    if args.only in (None, "adcf"):
        emit(f"adcf_test (portmanteau, lags 1..{ADCF_LAGS}, row permutations) and Ljung-Box "
             f"(Pearson ACF, lags 1..{ADCF_LAGS})")
        emit(f"{'process':<24}{'n':>5}  {'ADCF':>7} {'(SE)':>7}  {'Ljung-Box':>9} {'(SE)':>7}")
        for k, (name, gen_series) in enumerate(ADCF_PROCESSES.items()):
            for n in (200, 500):
                rng = np.random.default_rng([44, k, n])
                ra = rl = 0
                for s in range(N):
                    x = gen_series(rng, n)
                    ra += es.adcf_test(x, lags=ADCF_LAGS, n_resamples=R, rng=1000 * s + n).pvalue <= 0.05
                    rl += ljung_box(x, ADCF_LAGS) <= 0.05
                ra, rl = ra / N, rl / N
                emit(f"{name:<24}{n:>5}  {ra:>7.3f} {se(ra, N):>7.4f}  {rl:>9.3f} {se(rl, N):>7.4f}")
        emit("")
    emit(f"# CPU time: {time.process_time() - t0:.0f} s")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
