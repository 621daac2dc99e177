"""e-cp3o (issue 50): time at T = 5 000, d = 3, K = 5 (target <= 10 s on 2 cores), how often
ecp's programme reaches the exact maximum of its goodness of fit, and what its rule chooses.

* ``time``: T = 5 000, d = 3, changes at 1 250 (mean +1), 2 500 (SD ×2), 3 750 (correlation
  0 → 0.9 in the first two columns), ``max_changepoints=5``, ``delta=29`` (ecp's default),
  best of 3 calls, 2 threads and 1; and T = 20 000 (d = 3, K = 5). The programme's inner loop
  is scalar C (no SIMD path), so ``ENERGYSTATS_SIMD`` does not change it; the window sums are
  NumPy.  Peak memory by ``tracemalloc``.
* ``exact``: 100 series, T = 300, d = 1, mean shifts of 1 SD at 100 and 200, ``delta=10``,
  K = 3: the share of fits where ecp's programme (the last segment not re-chosen) reaches the
  exact maximum of G (``search='exact'``), per number of change points, and the worst gap.
* ``rule``: 200 series, T = 600, d = 1, with mean shifts of 1.5 SD at 200 and 400, and 200 iid
  series: the number chosen by ecp's rule (K = 5), and the share of the true changes found
  within 10 rows. e-cp3o is not a test: on iid series it still returns at least one change.

    python benchmarks/cp3o.py            # writes docs/benchmarks/cp3o.txt
    python benchmarks/cp3o.py --quick    # small sizes: checks the script runs
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import tracemalloc

import numpy as np

import energystats as es
from energystats._lib import _pairwise


def mv_series(T, rng):
    Z = rng.normal(size=(T, 3))
    q = T // 4
    Z[q:] += 1.0
    Z[2 * q:3 * q] = 1.0 + 2.0 * rng.normal(size=(q, 3))
    c = rng.normal(size=(T - 3 * q, 2))
    Z[3 * q:, 0] = 1.0 + c[:, 0]
    Z[3 * q:, 1] = 1.0 + 0.9 * c[:, 0] + np.sqrt(1 - 0.81) * c[:, 1]
    return Z, [q, 2 * q, 3 * q]


def timed(fn, reps):
    best = np.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def case_time(lines, quick):
    rng = np.random.default_rng(20261207)
    for T in ((600, 1200) if quick else (5000, 20000)):
        Z, truth = mv_series(T, rng)
        for nt in (2, 1):
            secs, res = timed(lambda: es.e_cp3o(Z, max_changepoints=5, n_threads=nt),
                              1 if T > 5000 else 3)
            tracemalloc.start()
            es.e_cp3o(Z, max_changepoints=5, n_threads=nt)
            peak = tracemalloc.get_traced_memory()[1] / 2 ** 20
            tracemalloc.stop()
            lines.append(f"T = {T:6d}, d = 3, K = 5, {nt} thread(s): {secs:7.2f} s, peak "
                         f"{peak:6.1f} MiB; found {res.changepoints.tolist()} "
                         f"(true {truth}), {res.n_changepoints} by ecp's rule")


def case_exact(lines, quick):
    rng = np.random.default_rng(7)
    n = 10 if quick else 100
    same = np.zeros(3)
    worst = np.zeros(3)
    for _ in range(n):
        x = rng.normal(size=300)
        x[100:] += 1.0
        x[200:] -= 1.0
        a = es.e_cp3o(x, max_changepoints=3, delta=10)
        b = es.e_cp3o(x, max_changepoints=3, delta=10, search="exact")
        gap = (b.gof - a.gof) / np.abs(b.gof)
        same += gap <= 1e-12
        worst = np.maximum(worst, gap)
    for k in range(3):
        lines.append(f"k = {k + 1}: ecp's programme reaches the exact maximum in {same[k]:.0f} "
                     f"of {n} series ({same[k] / n:.2f}); largest shortfall {worst[k]:.3%} of G")


def case_rule(lines, quick):
    rng = np.random.default_rng(11)
    n = 20 if quick else 200
    for design in ("two shifts", "iid"):
        counts = np.zeros(6, dtype=int)
        hits = 0
        for _ in range(n):
            x = rng.normal(size=600)
            if design == "two shifts":
                x[200:400] += 1.5
            res = es.e_cp3o(x, max_changepoints=5)
            counts[res.n_changepoints] += 1
            if design == "two shifts":
                hits += sum(np.min(np.abs(res.changepoints - c)) <= 10 for c in (200, 400))
        share = ", ".join(f"{k}: {counts[k] / n:.3f}" for k in range(1, 6))
        extra = (f"; true changes found within 10 rows: {hits / (2 * n):.3f}"
                 if design == "two shifts" else "")
        lines.append(f"{design:10s} ({n} series, T = 600): number chosen {share}{extra}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    lines = [f"# benchmarks/cp3o.py{' --quick' if args.quick else ''}",
             f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
             f"{os.getloadavg()[0]:.2f} at start; ENERGYSTATS_SIMD="
             f"{os.environ.get('ENERGYSTATS_SIMD', '(unset)')}, instruction set "
             f"{_pairwise.SIMD_LEVEL} (pair kernels; not used by the programme); "
             f"energystats {es.__version__}, numpy {np.__version__}", "", "## time"]
    case_time(lines, args.quick)
    lines += ["", "## ecp's programme against the exact maximum"]
    case_exact(lines, args.quick)
    lines += ["", "## ecp's rule for the number of change points (K = 5)"]
    case_rule(lines, args.quick)
    lines.append(f"# load {os.getloadavg()[0]:.2f} at the end")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        out = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks", "cp3o.txt")
        with open(out, "w") as fh:
            fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
