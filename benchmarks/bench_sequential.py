"""Sequential p-values: level under the null and resamples used (issue "Answers sooner").

For each design, ``--sets`` data sets (default 1000) are tested with
``n_resamples = R_max = 9999``:

* ``pvalue_method="sequential"`` (Besag & Clifford, h = 10) under the null hypothesis:
  rejection rates at alpha = 0.01 and 0.05 with binomial standard errors, and the resamples
  used (mean, median, largest; the mean as a share of R_max);
* ``pvalue_method="decision"`` (Gandy, alpha = 0.05, resampling risk 1e-3): under the null
  and under a clear alternative, the decisions and the resamples used;
* ``pvalue_method="sequential"`` under the same alternative, for comparison (a small p-value
  needs all R_max resamples: that is what the decision mode is for).

Designs: the energy test of two samples of n = 100 points in 2 dimensions (standard
normal; the alternative shifts the second sample by 1 in the first coordinate), and the
test of independence of n = 100 pairs (x in 2, y in 1 dimensions; the alternative
y = x_1 + noise).  Fixed seeds.

    python benchmarks/bench_sequential.py            # docs/benchmarks/bench_sequential.txt
    python benchmarks/bench_sequential.py --sets 200 # quicker
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import energystats as es

R_MAX = 9999


def energy_data(rng, alternative):
    x = rng.normal(size=(100, 2))
    y = rng.normal(size=(100, 2))
    if alternative:
        y[:, 0] += 1.0
    return (x, y), es.energy_test


def independence_data(rng, alternative):
    x = rng.normal(size=(100, 2))
    y = rng.normal(size=(100, 1))
    if alternative:
        y[:, 0] += x[:, 0]
    return (x, y), es.independence_test


def run(design, method, alternative, sets, seed):
    rng = np.random.default_rng(seed)
    pvals, used, decisions = [], [], []
    t0 = time.perf_counter()
    for _ in range(sets):
        args, test = design(rng, alternative)
        res = test(*args, n_resamples=R_MAX, rng=rng, pvalue_method=method)
        pvals.append(res.pvalue)
        used.append(res.n_resamples)
        decisions.append(res.decision)
    return np.array(pvals), np.array(used), decisions, time.perf_counter() - t0


def rate(x, sets):
    return f"{x / sets:.3f} ± {math.sqrt(max(x / sets * (1 - x / sets), 1e-12) / sets):.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=1000)
    args = ap.parse_args(argv)
    sets = args.sets
    print(f"{sets} data sets per row, R_max = {R_MAX}, h = 10; rates ± one binomial SE\n")
    for name, design in (("energy test, n = m = 100, d = 2", energy_data),
                         ("independence test, n = 100, d = 2 / 1", independence_data)):
        print(name)
        p, used, _, t = run(design, "sequential", False, sets, 1)
        print(f"  sequential, H0:   reject at 0.01 {rate(np.sum(p <= 0.01), sets)}, at 0.05 "
              f"{rate(np.sum(p <= 0.05), sets)}; resamples mean {used.mean():.1f} "
              f"({100 * used.mean() / R_MAX:.2f} % of R_max), median {np.median(used):.0f}, "
              f"max {used.max()}; {t:.1f} s")
        for alt in (False, True):
            _, used, dec, t = run(design, "decision", alt, sets, 2 + alt)
            dec = np.array(dec, dtype=object)
            print(f"  decision, {'H1' if alt else 'H0'}:     p <= alpha {np.mean(dec == 'p <= alpha'):.3f}, "
                  f"p > alpha {np.mean(dec == 'p > alpha'):.3f}, open {np.mean(dec == None):.3f}; "  # noqa: E711
                  f"resamples mean {used.mean():.1f}, median {np.median(used):.0f}, max {used.max()}; "
                  f"{t:.1f} s")
        p, used, _, t = run(design, "sequential", True, min(sets, 100), 4)
        print(f"  sequential, H1:   reject at 0.05 {np.mean(p <= 0.05):.3f}; resamples mean "
              f"{used.mean():.1f} ({min(sets, 100)} sets); {t:.1f} s\n")


if __name__ == "__main__":
    main()
