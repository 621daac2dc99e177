"""Validity of the asymptotic p-values (issue "Answers sooner", part 4).

Rejection rates under the null hypothesis at alpha = 0.01 and 0.05, with binomial standard
errors, of

* ``energy_test(..., pvalue_method="asymptotic")`` (moment-matched gamma): two samples of n
  points each, and three samples of sizes n, n/2, n/2 (unequal sizes);
* ``independence_test(..., pvalue_method="asymptotic")`` (the χ² test of distance
  correlation): n independent pairs;
* ``distance_correlation_ttest`` (R energy's ``dcorT.test``), for comparison,

for n in {50, 200, 1000} under three null designs, every sample drawn from the same law:

* ``normal-1``: standard normal, 1 dimension (independence: x and y each 1-D);
* ``t3-5``: multivariate Student t with 3 degrees of freedom, 5 dimensions (heavy tails);
* ``lognormal-10``: independent lognormal coordinates, 10 dimensions (skewed).

``--sets`` data sets per cell (default 1000), fixed seeds, default settings (metric
'energy', exponent 1).  A rate more than 2 standard errors above alpha is flagged "high"
(the test rejects too often), more than 2 below "low" (conservative).

    python benchmarks/asymptotic_validity.py             # docs/benchmarks/asymptotic_validity.txt
    python benchmarks/asymptotic_validity.py --sets 200  # quicker
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

import energystats as es

ALPHAS = (0.01, 0.05)
SIZES = (50, 200, 1000)


def draw(design, rng, n):
    if design == "normal-1":
        return rng.normal(size=(n, 1))
    if design == "t3-5":
        z = rng.normal(size=(n, 5))
        return z / np.sqrt(rng.chisquare(3, size=(n, 1)) / 3)
    if design == "lognormal-10":
        return np.exp(rng.normal(size=(n, 10)))
    raise ValueError(design)


def energy2(design, rng, n):
    return es.energy_test(draw(design, rng, n), draw(design, rng, n),
                          pvalue_method="asymptotic").pvalue


def energy3(design, rng, n):
    return es.energy_test(draw(design, rng, n), draw(design, rng, n // 2),
                          draw(design, rng, n // 2), pvalue_method="asymptotic").pvalue


def chi2(design, rng, n):
    return es.independence_test(draw(design, rng, n), draw(design, rng, n),
                                pvalue_method="asymptotic").pvalue


def ttest(design, rng, n):
    return es.distance_correlation_ttest(draw(design, rng, n), draw(design, rng, n)).pvalue


TESTS = (("energy, 2 samples (gamma)", energy2), ("energy, 3 samples n, n/2, n/2 (gamma)", energy3),
         ("independence, chi-square", chi2), ("independence, t-test (dcorT)", ttest))
DESIGNS = ("normal-1", "t3-5", "lognormal-10")


def flag(rate, alpha, sets):
    se = math.sqrt(alpha * (1 - alpha) / sets)
    if rate > alpha + 2 * se:
        return "high"
    if rate < alpha - 2 * se:
        return "low"
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", type=int, default=1000, help="data sets per cell (default 1000)")
    args = ap.parse_args()
    sets = args.sets
    se = {a: math.sqrt(a * (1 - a) / sets) for a in ALPHAS}
    print(f"{sets} data sets per cell; binomial standard error at the nominal level: "
          + ", ".join(f"{se[a]:.4f} at alpha = {a}" for a in ALPHAS) + "\n")
    print("| test | design | n | rejection at 0.01 (± SE) | | rejection at 0.05 (± SE) | | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    seed = 0
    for name, fn in TESTS:
        for design in DESIGNS:
            for n in SIZES:
                seed += 1
                rng = np.random.default_rng([2026, seed])
                t = time.perf_counter()
                p = np.array([fn(design, rng, n) for _ in range(sets)])
                t = time.perf_counter() - t
                if np.isnan(p).any():
                    raise RuntimeError(f"{name} {design} n={n}: {int(np.isnan(p).sum())} NaN p-values")
                cells = []
                for a in ALPHAS:
                    r = float(np.mean(p <= a))
                    cells.append(f"{r:.4f} ± {math.sqrt(r * (1 - r) / sets):.4f} | {flag(r, a, sets)}")
                print(f"| {name} | {design} | {n} | " + " | ".join(cells) + f" | {t:.1f} |", flush=True)


if __name__ == "__main__":
    main()
