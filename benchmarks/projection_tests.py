"""energy_test(method='projection') (issue 53): its level and its power cost against the
pairwise test, and its time at n = 10^5 and 10^6.

``power``: two samples of 200 rows in d = 10, 200 data sets per design (seeds fixed), R = 199
relabellings, default settings otherwise; the share of p <= 0.05 with its binomial SE, for the
pairwise test and for the projection test with K = 10, 50 and 100 (the default) directions.
Designs: ``null`` (both N(0, I)), ``t3 null`` (both t(3) coordinates, a law the tests were not
built around), ``all coordinates`` (the second sample shifted by 0.15 in every coordinate),
``one coordinate`` (shifted by 0.45 in the first coordinate only), ``scale`` (the second sample
N(0, 1.25² I)).

``time``: two groups of n/2 rows, d = 5, a mean shift of 0.02, K = 100, R = 99, 2 threads; the
pairwise test at n = 20 000 beside it.

    python benchmarks/projection_tests.py             # both; writes docs/benchmarks/projection_tests.txt
    python benchmarks/projection_tests.py --quick     # small sizes: checks the script runs
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time

import numpy as np

import energystats as es
from energystats._lib import _pairwise

DESIGNS = {
    "null": lambda g, n, d: (g.normal(size=(n, d)), g.normal(size=(n, d))),
    "t3 null": lambda g, n, d: (g.standard_t(3, size=(n, d)), g.standard_t(3, size=(n, d))),
    "all coordinates": lambda g, n, d: (g.normal(size=(n, d)), g.normal(size=(n, d)) + 0.15),
    "one coordinate": lambda g, n, d: (g.normal(size=(n, d)),
                                       g.normal(size=(n, d)) + 0.45 * (np.arange(d) == 0)),
    "scale": lambda g, n, d: (g.normal(size=(n, d)), 1.25 * g.normal(size=(n, d))),
}
METHODS = [("pairwise", {}), ("projection K=10", dict(method="projection", n_projections=10)),
           ("projection K=50", dict(method="projection", n_projections=50)),
           ("projection K=100", dict(method="projection"))]


def power(lines, quick):
    reps, n, d, R = (20, 60, 10, 49) if quick else (200, 200, 10, 199)
    lines.append(f"## level and power: two samples of {n} rows, d = {d}, {reps} data sets, "
                 f"R = {R}; share of p <= 0.05 (binomial SE)")
    lines.append(f"{'design':18s}" + "".join(f"{m:>20s}" for m, _ in METHODS))
    for name, make in DESIGNS.items():
        hits = np.zeros(len(METHODS))
        for r in range(reps):
            g = np.random.default_rng(1000 + r)
            x, y = make(g, n, d)
            for i, (_, kw) in enumerate(METHODS):
                hits[i] += es.energy_test(x, y, n_resamples=R, rng=r, **kw).pvalue <= 0.05
        cells = "".join(f"{h / reps:>11.3f} ({math.sqrt(h / reps * (1 - h / reps) / reps):.3f})"
                        for h in hits)
        lines.append(f"{name:18s}{cells}")


def timing(lines, quick):
    sizes = (2000, 20000) if quick else (20000, 100000, 1000000)
    lines.append("")
    lines.append("## time: two groups of n/2 rows, d = 5, K = 100, R = 99, 2 threads (best of 1)")
    g = np.random.default_rng(7)
    for n in sizes:
        X = g.normal(size=(n, 5))
        X[n // 2:] += 0.02
        lab = np.repeat([0, 1], n // 2)
        t0 = time.perf_counter()
        res = es.energy_test(X, labels=lab, method="projection", n_resamples=99, rng=1)
        t = time.perf_counter() - t0
        lines.append(f"projection n = {n:8d}: {t:8.2f} s, p = {res.pvalue:.3f}")
        if n <= 20000:
            t0 = time.perf_counter()
            res = es.energy_test(X, labels=lab, n_resamples=99, rng=1)
            t = time.perf_counter() - t0
            lines.append(f"pairwise   n = {n:8d}: {t:8.2f} s, p = {res.pvalue:.3f} "
                         f"(engine {res.engine})")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--part", choices=("power", "time", "both"), default="both")
    args = p.parse_args(argv)
    lines = [f"# benchmarks/projection_tests.py{' --quick' if args.quick else ''} --part "
             f"{args.part}",
             f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at "
             f"start; instruction set {_pairwise.SIMD_LEVEL} (pair kernels; the projection "
             f"kernel uses SSE2 vectors whatever the dispatch); energystats {es.__version__}, "
             f"numpy {np.__version__}", ""]
    if args.part in ("power", "both"):
        power(lines, args.quick)
    if args.part in ("time", "both"):
        timing(lines, args.quick)
    lines.append(f"# load {os.getloadavg()[0]:.2f} at the end")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        out = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks",
                           f"projection_tests_{args.part}.txt")
        with open(out, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
