"""How often ``independence_test`` (a permutation test for independent rows) rejects at 0.05 on
two *independent* serial series, and how often it warns (``SeriesDependenceWarning``).

Designs (each series its own innovations, so x and y are independent and every rejection is
false): AR(1) with phi = 0.2, 0.5, 0.8; random walks; and iid normal and t(3) rows (where a
warning is a false warning).  ``--reps`` pairs per design of ``--n`` rows, seeds seed0 + r,
default settings (999 permutations), rows without an index and, with ``--timed``, a daily
DatetimeIndex.  Binomial standard errors beside each rate.

    python benchmarks/iid_tests_on_series.py --reps 300 --n 200
"""
from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
import pandas as pd

import energystats as es


def series(gen, n, kind):
    if kind == "iid normal":
        return gen.normal(size=n)
    if kind == "iid t(3)":
        return gen.standard_t(3, size=n)
    e = gen.normal(size=n)
    if kind == "random walk":
        return np.cumsum(e)
    phi = float(kind.split("=")[1])
    x = np.empty(n)
    x[0] = e[0] / math.sqrt(1 - phi * phi)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed0", type=int, default=100)
    ap.add_argument("--timed", action="store_true", help="a daily DatetimeIndex on both series")
    a = ap.parse_args(argv)
    idx = pd.date_range("2020-01-01", periods=a.n, freq="D") if a.timed else None
    print(f"# python benchmarks/iid_tests_on_series.py --reps {a.reps} --n {a.n}"
          + (" --timed" if a.timed else ""))
    print(f"{'design':<14} {'rejects at 0.05':>18} {'warned':>18}")
    for kind in ("iid normal", "iid t(3)", "AR phi=0.2", "AR phi=0.5", "AR phi=0.8", "random walk"):
        rej = warned = 0
        for r in range(a.reps):
            gen = np.random.default_rng(a.seed0 + r)
            x, y = series(gen, a.n, kind), series(gen, a.n, kind)
            if idx is not None:
                x, y = pd.Series(x, index=idx), pd.Series(y, index=idx)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                p = es.independence_test(x, y, rng=r).pvalue
            rej += p <= 0.05
            warned += any(issubclass(w.category, es.SeriesDependenceWarning) for w in caught)
        f = lambda k: f"{k / a.reps:.3f} ± {math.sqrt(k / a.reps * (1 - k / a.reps) / a.reps):.3f}"  # noqa: E731
        print(f"{kind:<14} {f(rej):>18} {f(warned):>18}")


if __name__ == "__main__":
    main()
