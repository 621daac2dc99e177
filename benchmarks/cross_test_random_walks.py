"""The cross-distance correlation test on integrated series (issue 50): two independent random
walks, two independent integrated AR(1) series (phi 0.5), and, as the control, two independent
stationary AR(1) series (phi 0.5); n = 200, default settings (block resampling, 999
resamples, the automatic block length), fixed seeds.  Per cell: the rejection rate at 0.05
with its binomial standard error, the share marked ``valid=False`` and the share that carried
a SeriesDependenceWarning.

    python benchmarks/cross_test_random_walks.py --pairs 300
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import time
import warnings

import numpy as np

import energystats as es


def ar1(g, n, phi):
    e = g.normal(size=n + 200)
    x = np.zeros_like(e)
    for t in range(1, e.size):
        x[t] = phi * x[t - 1] + e[t]
    return x[200:]


DESIGNS = {"random walk": lambda g, n: np.cumsum(g.normal(size=n)),
           "integrated AR(1) 0.5": lambda g, n: np.cumsum(ar1(g, n, 0.5)),
           "AR(1) 0.5 (control)": lambda g, n: ar1(g, n, 0.5)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=300)
    ap.add_argument("--n", type=int, default=200)
    a = ap.parse_args(argv)
    print(f"# python benchmarks/cross_test_random_walks.py --pairs {a.pairs} --n {a.n}")
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    print(f"{'design':<22}{'n':>5}{'rejects':>9}{'± SE':>7}{'invalid':>9}{'warned':>8}")
    t0 = time.perf_counter()
    for k, (name, make) in enumerate(DESIGNS.items()):
        rej = inval = warned = 0
        for s in range(a.pairs):
            g = np.random.default_rng([50, k, s])
            x, y = make(g, a.n), make(g, a.n)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                res = es.cross_distance_correlation_test(x, y, rng=s)
            rej += res.pvalue <= 0.05
            inval += not res.valid
            warned += any(issubclass(w.category, es.SeriesDependenceWarning) for w in caught)
        r = rej / a.pairs
        print(f"{name:<22}{a.n:>5}{r:>9.3f}{math.sqrt(r * (1 - r) / a.pairs):>7.3f}"
              f"{inval / a.pairs:>9.3f}{warned / a.pairs:>8.3f}", flush=True)
    print(f"# wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
