"""Level and power of two-factor DISCO: conditional tests (default) against R's marginal tests.

``disco(df, by=["a", "b"])`` tests each factor given the other (relabelled
within the other factor's levels, groups compared within them);
``conditional=False`` gives R ``energy``'s marginal table (each factor as if
alone).  Designs (n = 60, two-level factors, response in 2-D, N(0, I) noise,
effects shift the first coordinate):

* associated: A agrees with B in 85 % of the rows; only B acts (shift 2) —
  the rejection rate for A is a level;
* balanced: a 2×2 design with 15 rows per cell; B shifts by 2, A by 0 (level)
  or by 0.5 / 0.75 (power).

Every rate: rejections at 0.05 of factor A over the data sets, ± binomial SE;
999 relabellings per test, fixed seeds.  Run::

    python benchmarks/bench_disco_conditional.py            # ~3-5 minutes on 2 cores
    python benchmarks/bench_disco_conditional.py --sets 200 # quicker
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import energystats as es


def associated(rng, n=60, effect_a=0.0, effect_b=2.0, agree=0.85):
    b = rng.integers(0, 2, size=n)
    a = np.where(rng.random(n) < agree, b, 1 - b)
    X = rng.normal(size=(n, 2))
    X[:, 0] += effect_b * b + effect_a * a
    return pd.DataFrame(X, columns=["u", "v"]).assign(a=a, b=b)


def balanced(rng, per_cell=15, effect_a=0.0, effect_b=2.0):
    a = np.repeat([0, 0, 1, 1], per_cell)
    b = np.repeat([0, 1, 0, 1], per_cell)
    X = rng.normal(size=(a.size, 2))
    X[:, 0] += effect_b * b + effect_a * a
    return pd.DataFrame(X, columns=["u", "v"]).assign(a=a, b=b)


def rate(make, conditional, n_sets, seed, R):
    rng = np.random.default_rng(seed)
    rej = 0
    for _ in range(n_sets):
        df = make(rng)
        p = es.disco(df, by=["a", "b"], n_resamples=R, rng=rng, conditional=conditional).pvalue[0]
        rej += p <= 0.05
    r = rej / n_sets
    return r, np.sqrt(r * (1 - r) / n_sets)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=1000, help="data sets per row")
    ap.add_argument("--R", type=int, default=999, help="relabellings per test")
    args = ap.parse_args(argv)
    rows = [
        ("associated (85 %), only B acts", "level", lambda r: associated(r)),
        ("balanced 2×2, only B acts", "level", lambda r: balanced(r)),
        ("balanced 2×2, B 2, A 0.5", "power", lambda r: balanced(r, effect_a=0.5)),
        ("balanced 2×2, B 2, A 0.75", "power", lambda r: balanced(r, effect_a=0.75)),
    ]
    t0 = time.perf_counter()
    print(f"# rejection rate of factor A at 0.05 ± binomial SE; {args.sets} data sets per cell, "
          f"R = {args.R}; seed per row")
    print("| design | what | conditional (default) | marginal (R's disco) |")
    print("|---|---|---|---|")
    for i, (name, what, make) in enumerate(rows):
        c = rate(make, True, args.sets, 1000 + i, args.R)
        m = rate(make, False, args.sets, 1000 + i, args.R)
        print(f"| {name} | {what} | {c[0]:.3f} ± {c[1]:.3f} | {m[0]:.3f} ± {m[1]:.3f} |", flush=True)
    print(f"# {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
