"""Level and power of the conditional distance covariance test (local bootstrap, Wang et al.
2015) beside the partial distance correlation test (Székely and Rizzo 2014), on the same data.

Designs (z, e1, e2 independent N(0, 1); fixed seeds, one per (design, n, data set)):

* ``null-linear``: x = z + e1, y = z² + e2 — conditionally independent given z;
* ``null-square``: x = z² + e1, y = z² + e2 — conditionally independent given z;
* ``null-abs``: x = |z| + 0.3 e1, y = |z| + 0.3 e2 — conditionally independent given z, with
  a strong signal in z against little noise: a hard case for a kernel bandwidth;
* ``alt-shared``: x = z + e1, y = z² + 0.5 e1 + e2 — dependent given z (shared noise);
* ``alt-scale``: x = z + e1, y = z² + e1 e2 — dependent given z through the spread of y only
  (y's conditional mean does not depend on e1).

Each data set is tested by ``conditional_independence_test`` (default bandwidth 'half-scott', and
with ``--bandwidths`` other rules or multiples of Scott's) and
``partial_distance_correlation_test``, both with R resamples; a data set "rejects" at
p <= 0.05.  Prints one row per (design, n, test): the rejection rate, its binomial standard
error sqrt(p(1 - p)/N), the mean statistic (mean local conditional dCor for the conditional
test, pdcor for the partial test), N, and the data sets where the conditional statistic warned
that some z_i had no local spread (a bandwidth too small for an isolated z_i).

    nice -n 19 python benchmarks/conditional_level.py   # -> docs/benchmarks/conditional_level.txt
    nice -n 19 python benchmarks/conditional_level.py --reps-null 200 --reps-alt 100 --out -
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import warnings

import numpy as np

DESIGNS = ("null-linear", "null-square", "null-abs", "alt-shared", "alt-scale")


def simulate(design, n, rng):
    z, e1, e2 = rng.normal(size=(3, n))
    if design == "null-linear":
        return z + e1, z**2 + e2, z
    if design == "null-square":
        return z**2 + e1, z**2 + e2, z
    if design == "null-abs":
        return np.abs(z) + 0.3 * e1, np.abs(z) + 0.3 * e2, z
    if design == "alt-shared":
        return z + e1, z**2 + 0.5 * e1 + e2, z
    return z + e1, z**2 + e1 * e2, z  # alt-scale


def bandwidth_of(spec, z):
    """'scott', 'nrd0', 'silverman', or 'scott*c' (c times Scott's rule)."""
    if "*" in spec:
        rule, c = spec.split("*")
        return float(c) * float(np.std(z, ddof=1)) * len(z) ** (-1 / 5)
    return spec


def run(design, n, reps, R, bandwidths, with_partial):
    import energystats as es

    rej = {b: 0 for b in bandwidths}
    stat = {b: 0.0 for b in bandwidths}
    warned = {b: 0 for b in bandwidths}
    rej_p = stat_p = 0.0
    did = DESIGNS.index(design)
    for s in range(reps):
        x, y, z = simulate(design, n, np.random.default_rng([did, n, s]))
        for b in bandwidths:
            with warnings.catch_warnings(record=True) as caught:  # "no local spread": counted
                warnings.simplefilter("always")
                res = es.conditional_independence_test(x, y, z, n_resamples=R, rng=s, n_threads=1,
                                                       bandwidth=bandwidth_of(b, z))
            warned[b] += any("no local spread" in str(w.message) for w in caught)
            rej[b] += res.pvalue <= 0.05
            stat[b] += res.estimates.statistic
        if with_partial:
            res = es.partial_distance_correlation_test(x, y, z, n_resamples=R, rng=s, n_threads=1)
            rej_p += res.pvalue <= 0.05
            stat_p += res.statistic
    rows = [(f"conditional ({b})", rej[b] / reps, stat[b] / reps, warned[b]) for b in bandwidths]
    if with_partial:
        rows.append(("partial dCor", rej_p / reps, stat_p / reps, 0))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[50, 100])
    ap.add_argument("--reps-null", type=int, default=800)
    ap.add_argument("--reps-alt", type=int, default=400)
    ap.add_argument("--R", type=int, default=199)
    ap.add_argument("--bandwidths", nargs="+", default=["scott", "scott*2"],
                    help="extra bandwidths for the conditional test at the largest n "
                         "(beside the default 'half-scott')")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "docs",
                                                  "benchmarks", "conditional_level.txt"))
    a = ap.parse_args(argv)
    t0, c0 = time.time(), time.process_time()
    lines = [f"# nice -n 19 python benchmarks/conditional_level.py --n {' '.join(map(str, a.n))} "
             f"--reps-null {a.reps_null} --reps-alt {a.reps_alt} --R {a.R} "
             f"--bandwidths {' '.join(a.bandwidths)}",
             f"# {platform.machine()}, {os.cpu_count()} cores, one thread, nice 19 beside other "
             f"work; R = {a.R} resamples; reject at p <= 0.05; s.e. = sqrt(p(1 - p)/N) "
             f"(at p = 0.05: {math.sqrt(0.0475 / a.reps_null):.4f} for N = {a.reps_null})",
             f"{'design':<12} {'n':>4} {'test':<28} {'rejection':>9} {'± s.e.':>7} "
             f"{'mean stat':>9} {'N':>5} {'warned':>6}"]
    print("\n".join(lines), flush=True)
    for design in DESIGNS:
        reps = a.reps_null if design.startswith("null") else a.reps_alt
        for n in a.n:
            extra = a.bandwidths if n == max(a.n) else []
            for name, p, m, w in run(design, n, reps, a.R, ["half-scott"] + extra, True):
                se = math.sqrt(p * (1 - p) / reps)
                line = (f"{design:<12} {n:>4} {name:<28} {p:>9.3f} {se:>7.3f} {m:>9.4f} {reps:>5} "
                        f"{w:>6}")
                lines.append(line)
                print(line, flush=True)
    tail = (f"# {time.time() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU; "
            f"python {platform.python_version()}, numpy {np.__version__}")
    lines.append(tail)
    print(tail)
    if a.out != "-":
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
