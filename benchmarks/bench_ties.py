"""Ties on every engine: one p-value per seed, equal to the exact tie-aware count.

Decimal-valued 1-D data with many duplicates (values 0.1, 0.3, 0.7 or 0.1, 0.7,
not exact in binary), two equal groups: many random relabellings reproduce
the observed statistic exactly.  For each data set the exact statistic of the
observed labelling and of every relabelling is computed in rational
arithmetic (the floats' exact values), giving the exact p-value
``(1 + #{null >= observed}) / (R + 1)``; then ``energy_test`` runs with the same
seed on every engine (sorted, matrix, blocked, streamed; several memory
budgets; 1 and 2 threads).  Printed per data set: the number of exactly tied
relabellings, the largest difference between their computed statistic and
the observed one (in units of eps·T, T the total dispersion), the allowance,
and the p-values.  Run::

    python benchmarks/bench_ties.py          # ~1 minute
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import energystats as es

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from test_ties import _draws, _exact_energy, _exact_pvalue, _exact_sums_1d  # noqa: E402

EPS = np.finfo(float).eps
ENGINES = [("sorted", None), ("pairwise", None), ("pairwise", 4 * 2**20), ("pairwise", 96 * 1024),
           ("streamed", None)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--R", type=int, default=199)
    args = ap.parse_args(argv)
    R = args.R
    t0 = time.perf_counter()
    print(f"# energy_test, two equal groups, R = {R}; p-values per engine (memory budget, threads)")
    print("| n | values | seed | tied | engine (budget, threads) | max diff of tied (eps·T) "
          "| allowance (eps·T) | p-value | exact p |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, seed, values in [(20, 0, (0.1, 0.3, 0.7)), (20, 1, (0.1, 0.3, 0.7)),
                            (200, 2, (0.1, 0.7)), (600, 9, (0.1, 0.7)), (1500, 3, (0.1, 0.7))]:
        x = np.random.default_rng(seed).choice(values, size=n)
        labels = np.repeat([0, 1], n // 2)
        sizes = [n // 2, n // 2]
        obs = _exact_energy(_exact_sums_1d(x, labels, 2), sizes)
        exact_vals = [_exact_energy(_exact_sums_1d(x, c, 2), sizes) for c in _draws(seed, labels, R)]
        tied = np.array([v == obs for v in exact_vals])
        want = float(_exact_pvalue(exact_vals, obs, exact=False))
        T = es.dispersion(x, labels).T
        # the allowance of two equal groups: 64 eps · 2nT · (4/n) = 512 eps·T
        allowance = 512
        for method, budget in ENGINES:
            if method == "streamed" and n > 600:
                continue
            for nt in (1, 2):
                kw = {"method": method, "n_threads": nt}
                if budget is not None:
                    kw["memory_budget"] = budget
                res = es.energy_test(x, labels=labels, n_resamples=R, rng=seed, **kw)
                d = (np.abs(res.null_distribution[tied] - res.statistic).max() / (EPS * T)
                     if tied.any() else 0.0)
                b = "default" if budget is None else f"{budget / 2**20:.2g} MiB"
                print(f"| {n} | {values} | {seed} | {int(tied.sum())} | {res.engine} ({b}, {nt}) "
                      f"| {d:.1f} | {allowance} | {res.pvalue:.4f} | {want:.4f} |", flush=True)
    print(f"# {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
