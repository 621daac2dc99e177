"""independence_test(method='projection') (issue 53; Huang and Huo 2017): level, power against
the exact test, and time up to n = 10^6.

``level``: x and y independent, 300 data sets per cell (seeds fixed), at n = 500 and 5 000:
the exact test (R = 99) on the same data sets as the reference, the projection test's gamma
p-value (K = 100), and its permutation p-value (K = 10, R = 99; n = 500 only).
Designs: ``normal`` (x ~ N(0, I_5), y ~ N(0, I_5)), ``t3 / lognormal`` (x with t(3) coordinates
in d = 5, y with lognormal coordinates in d = 3 — laws the calibration was not built around),
``one-dimensional`` (x, y ~ N(0, 1): K = 1, the exact 1-D statistic with the gamma p-value),
``uniform / exp`` (uniform coordinates in d = 5, exponential in d = 3: skewed but light-tailed,
where the gamma p-value's heavy-tail warning fires).
Share of p <= 0.05 with its binomial SE.

``power``: n = 300, x ~ N(0, I_5), 200 data sets, y in d = 5 with y_1 depending on x:
``linear`` (y_1 = 0.25 x_1 + e), ``quadratic`` (y_1 = 0.5 x_1² + e), ``scale``
(y_1 = (0.5 + |x_1|) e), the other coordinates noise; the exact permutation test (R = 199) beside
the projection test (gamma, K = 10 / 100; and permutations, K = 10, R = 99).

``warnings``: how often the gamma p-value's heavy-tail warning fires on each null design
(100 data sets per cell, n = 500 and 5 000).

``time``: x, y in d = 5 (y = x + noise, weak), gamma p-value, K = 100, 2 threads; the exact test
(R = 99) at n = 10 000 beside it.

    python benchmarks/projection_independence.py --part level|power|time
    python benchmarks/projection_independence.py --quick     # small sizes: checks the script runs
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

NULLS = {
    "normal": lambda g, n: (g.normal(size=(n, 5)), g.normal(size=(n, 5))),
    "t3 / lognormal": lambda g, n: (g.standard_t(3, size=(n, 5)), g.lognormal(size=(n, 3))),
    "one-dimensional": lambda g, n: (g.normal(size=n), g.normal(size=n)),
    "uniform / exp": lambda g, n: (g.uniform(size=(n, 5)), g.exponential(size=(n, 3))),
    "t10 / normal": lambda g, n: (g.standard_t(10, size=(n, 5)), g.normal(size=(n, 3))),
}


def _alt(kind):
    def make(g, n):
        x = g.normal(size=(n, 5))
        y = g.normal(size=(n, 5))
        e = y[:, 0].copy()
        y[:, 0] = {"linear": 0.25 * x[:, 0] + e, "quadratic": 0.5 * x[:, 0] ** 2 + e,
                   "scale": (0.5 + np.abs(x[:, 0])) * e}[kind]
        return x, y
    return make


def _share(h, reps):
    s = h / reps
    return f"{s:.3f} ({math.sqrt(s * (1 - s) / reps):.3f})"


def level(lines, quick, designs=None, base=5000, sizes=None):
    reps = 30 if quick else 300
    sizes = (200,) if quick else (sizes or (500, 5000))
    cols = [("exact R=99", dict(n_resamples=99)),
            ("proj gamma K=100", dict(method="projection", pvalue_method="gamma")),
            ("proj perm K=10 R=99", dict(method="projection", n_projections=10, n_resamples=99))]
    lines.append(f"## level: x, y independent, {reps} data sets per cell (the same data sets in a "
                 f"row, seeds {base} + r); share of p <= 0.05 (SE)")
    lines.append(f"{'n':>6s}  {'design':16s}" + "".join(f"{c:>22s}" for c, _ in cols))
    for n in sizes:
        for name, make in NULLS.items():
            if designs and name not in designs:
                continue
            hits = np.zeros(len(cols))
            for r in range(reps):
                x, y = make(np.random.default_rng(base + r), n)
                for i, (_, kw) in enumerate(cols):
                    if n > 1000 and i == 2:      # (R + 1)·K sums of 5 000 rows: not run
                        continue
                    hits[i] += es.independence_test(x, y, rng=r, **kw).pvalue <= 0.05
            lines.append(f"{n:6d}  {name:16s}" + "".join(
                f"{'not run' if n > 1000 and i == 2 else _share(h, reps):>22s}"
                for i, h in enumerate(hits)))


def warnings_rate(lines, quick):
    """How often the gamma p-value's heavy-tail warning fires, per null design."""
    import warnings

    from energystats import AntiConservativeWarning

    reps = 10 if quick else 100
    sizes = (200,) if quick else (500, 5000)
    lines.append(f"## the gamma p-value's AntiConservativeWarning (mean excess kurtosis of the "
                 f"projections > 1), K = 100, {reps} data sets per cell (seeds 5000 + r): share "
                 f"warned (SE)")
    for n in sizes:
        for name, make in NULLS.items():
            fired = 0
            for r in range(reps):
                x, y = make(np.random.default_rng(5000 + r), n)
                with warnings.catch_warnings(record=True) as got:
                    warnings.simplefilter("always")
                    es.independence_test(x, y, method="projection", pvalue_method="gamma", rng=r)
                fired += any(issubclass(w.category, AntiConservativeWarning) for w in got)
            lines.append(f"n = {n:5d}  {name:16s} {_share(fired, reps)}")


def power(lines, quick):
    reps, n = (20, 100) if quick else (200, 300)
    methods = [("exact R=199", dict(n_resamples=199)),
               ("proj gamma K=10", dict(method="projection", pvalue_method="gamma", n_projections=10)),
               ("proj gamma K=100", dict(method="projection", pvalue_method="gamma")),
               ("proj perm K=10", dict(method="projection", n_projections=10, n_resamples=99))]
    lines.append("")
    lines.append(f"## power: n = {n}, d = 5 and 5, {reps} data sets; share of p <= 0.05 (SE)")
    lines.append(f"{'design':12s}" + "".join(f"{m:>22s}" for m, _ in methods))
    for kind in ("linear", "quadratic", "scale"):
        hits = np.zeros(len(methods))
        for r in range(reps):
            x, y = _alt(kind)(np.random.default_rng(9000 + r), n)
            for i, (_, kw) in enumerate(methods):
                hits[i] += es.independence_test(x, y, rng=r, **kw).pvalue <= 0.05
        lines.append(f"{kind:12s}" + "".join(f"{_share(h, reps):>22s}" for h in hits))


def timing(lines, quick, sizes):
    sizes = (2000, 10000) if quick else sizes
    lines.append("")
    lines.append("## time: d = 5 and 5, gamma p-value, K = 100, 2 threads (one run each)")
    g = np.random.default_rng(7)
    for n in sizes:
        x = g.normal(size=(n, 5))
        y = 0.01 * x + g.normal(size=(n, 5))
        t0 = time.perf_counter()
        res = es.independence_test(x, y, method="projection", pvalue_method="gamma", rng=1)
        t = time.perf_counter() - t0
        lines.append(f"projection n = {n:8d}: {t:8.2f} s, p = {res.pvalue:.3g}")
        if n <= 10000:
            t0 = time.perf_counter()
            res = es.independence_test(x, y, n_resamples=99, rng=1)
            t = time.perf_counter() - t0
            lines.append(f"exact R=99 n = {n:8d}: {t:8.2f} s, p = {res.pvalue:.3g}")


def main(argv=None):
    import warnings

    from energystats import AntiConservativeWarning

    # the gamma p-value's warning is counted by --part warnings; here it would flood stderr
    warnings.filterwarnings("ignore", category=AntiConservativeWarning)
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--part", choices=("level", "power", "time", "warnings"), required=True)
    p.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000, 1000000])
    p.add_argument("--base", type=int, default=5000,
                   help="--part level: data set r is drawn from default_rng(base + r)")
    p.add_argument("--level-sizes", type=int, nargs="+", default=None,
                   help="--part level: the values of n (default 500 5000)")
    p.add_argument("--designs", nargs="+", choices=sorted(NULLS), default=None,
                   help="--part level: only these null designs (written to a file of their own)")
    args = p.parse_args(argv)
    lines = [f"# benchmarks/projection_independence.py{' --quick' if args.quick else ''} --part "
             f"{args.part}" + (f" --designs {' '.join(map(repr, args.designs))}"
                               if args.designs else "")
             + (f" --base {args.base}" if args.base != 5000 else "")
             + (f" --level-sizes {' '.join(map(str, args.level_sizes))}" if args.level_sizes
                else ""),
             f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f} at "
             f"start; instruction set {_pairwise.SIMD_LEVEL} (pair kernels of the exact test; the "
             f"projection path does not use them); energystats {es.__version__}, numpy {np.__version__}", ""]
    if args.part == "level":
        level(lines, args.quick, args.designs, args.base, args.level_sizes)
    elif args.part == "power":
        power(lines, args.quick)
    elif args.part == "warnings":
        warnings_rate(lines, args.quick)
    else:
        timing(lines, args.quick, args.sizes)
    lines.append(f"# load {os.getloadavg()[0]:.2f} at the end")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        out = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks",
                           f"projection_independence_{args.part}"
                           + ("" if not args.designs else "_" + "_".join(
                               d.split()[0] for d in args.designs))
                           + ("" if args.base == 5000 else f"_base{args.base}") + ".txt")
        with open(out, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
