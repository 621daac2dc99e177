"""Benchmark: permutation tests of equal distributions against the peers.

Same process, same data:

* two-sample energy test, n = m = 500, d = 10, R = 999 —
  ``energystats.energy_test`` vs ``dcor.homogeneity.energy_test``,
  ``hyppo.ksample.Energy`` and R ``energy::eqdist.etest``;
* DISCO, k = 3 groups × 100 points, d = 5, R = 999 —
  ``energystats.disco`` vs ``hyppo.ksample.DISCO`` and R ``energy::disco``;
* (``--oned``) a 1-D two-sample test, n = m = 2000, R = 999, which uses the
  sorted O(n log n + R·n) path, vs ``dcor``.

R runs as a subprocess (``Rscript``) on the same data written to a CSV file;
its time is measured inside R with ``system.time`` (process start-up and I/O
are not counted).  Times are the best of ``--repeat`` runs for energystats
and a single run for the peers.

Statistics: energystats, dcor and R report the same statistic
(Σ_{i<j} n_i n_j/(n_i+n_j) E(C_i, C_j); DISCO's F).  hyppo reports
statistics on its own dcov-based scale (``hyppo.ksample.Energy`` and
``DISCO`` with their default U-statistic ``bias=False``), which are not
numerically comparable; they are listed as given.

Run::

    python benchmarks/bench_tests.py                 # the issue's two cases
    python benchmarks/bench_tests.py --threads 1     # single-threaded
    python benchmarks/bench_tests.py --oned --no-r   # add the 1-D case, skip R
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import energystats as es  # noqa: E402


def best_of(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run_r(script, data, tmp):
    """Run an R snippet on ``data`` (written as x.csv with a 'g' column);
    the snippet prints 'stat p elapsed'."""
    if shutil.which("Rscript") is None:
        return None
    path = os.path.join(tmp, "x.csv")
    np.savetxt(path, data, delimiter=",")
    code = f'suppressMessages(library(energy)); d <- as.matrix(read.csv("{path}", header=FALSE)); {script}'
    try:
        out = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True, timeout=3600)
    except (OSError, subprocess.TimeoutExpired) as exc:  # pragma: no cover
        print(f"R failed: {exc}", file=sys.stderr)
        return None
    if out.returncode != 0:
        print("R failed:", out.stderr.strip()[-500:], file=sys.stderr)
        return None
    stat, p, elapsed = map(float, out.stdout.split()[-3:])
    return elapsed, stat, p


HEAD = f"{'case':<28} {'tool':<34} {'time [s]':>10} {'statistic':>14} {'p-value':>8} {'× ours':>8}"


def fmt(r):
    case, tool, sec, stat, p, ratio = r
    return f"{case:<28} {tool:<34} {sec:>10.4f} {stat:>14.6g} {p:>8.3f} {ratio:>8.1f}"


def row(rows, case, tool, seconds, stat, p, ours_seconds):
    rows.append((case, tool, seconds, stat, p, seconds / ours_seconds))
    print(fmt(rows[-1]), file=sys.stderr, flush=True)  # progress while the peers run


def print_table(rows):
    print(HEAD)
    print("-" * len(HEAD))
    for r in rows:
        print(fmt(r))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=500, help="points per sample, two-sample case")
    ap.add_argument("--d", type=int, default=10, help="dimension, two-sample case")
    ap.add_argument("--k-disco", type=int, default=3, help="groups in the DISCO case")
    ap.add_argument("--n-disco", type=int, default=100, help="points per group, DISCO case")
    ap.add_argument("--d-disco", type=int, default=5, help="dimension, DISCO case")
    ap.add_argument("--reps", type=int, default=999, help="permutations R")
    ap.add_argument("--threads", type=int, default=None, help="n_threads for energystats")
    ap.add_argument("--repeat", type=int, default=3, help="best-of repeats for energystats")
    ap.add_argument("--oned", action="store_true", help="add a 1-D two-sample case")
    ap.add_argument("--n-oned", type=int, default=2000, help="points per sample, 1-D case")
    ap.add_argument("--no-r", action="store_true", help="skip R")
    ap.add_argument("--no-hyppo", action="store_true", help="skip hyppo")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    rng = np.random.default_rng(2024)
    R = args.reps
    rows = []
    tmp = tempfile.mkdtemp()
    try:
        # -- two-sample energy test --
        n, d = args.n, args.d
        x = rng.normal(size=(n, d))
        y = rng.normal(size=(n, d)) + 0.1
        case = f"energy test n=m={n} d={d}"
        t_ours, res = best_of(lambda: es.energy_test(x, y, n_resamples=R, rng=1,
                                                     n_threads=args.threads), args.repeat)
        row(rows, case, f"energystats ({res.engine})", t_ours, res.statistic, res.pvalue, t_ours)
        try:
            import dcor
            dcor.homogeneity.energy_test(x[:10], y[:10], num_resamples=2)  # warm up numba
            t, r = timed(lambda: dcor.homogeneity.energy_test(x, y, num_resamples=R, random_state=1))
            row(rows, case, "dcor.homogeneity.energy_test", t, float(r.statistic), r.pvalue, t_ours)
        except ImportError:
            print("dcor not installed", file=sys.stderr)
        if not args.no_hyppo:
            try:
                from hyppo.ksample import Energy
                t, r = timed(lambda: Energy().test(x, y, reps=R, auto=False, random_state=1))
                row(rows, case, "hyppo.ksample.Energy (own scale)", t, r[0], r[1], t_ours)
            except ImportError:
                print("hyppo not installed", file=sys.stderr)
        if not args.no_r:
            out = run_r(f"e <- system.time(r <- eqdist.etest(d, sizes=c({n},{n}), R={R}))[['elapsed']]; "
                        "cat(r$statistic, r$p.value, e)", np.vstack([x, y]), tmp)
            if out:
                row(rows, case, "R energy::eqdist.etest", out[0], out[1], out[2], t_ours)

        # -- DISCO --
        k, m, dd = args.k_disco, args.n_disco, args.d_disco
        groups = [rng.normal(size=(m, dd)) + 0.05 * j for j in range(k)]
        case = f"DISCO k={k}x{m} d={dd}"
        t_ours, res = best_of(lambda: es.disco(*groups, n_resamples=R, rng=1,
                                               n_threads=args.threads), args.repeat)
        row(rows, case, f"energystats ({res.engine})", t_ours, res.statistic, res.pvalue, t_ours)
        if not args.no_hyppo:
            try:
                from hyppo.ksample import DISCO
                t, r = timed(lambda: DISCO().test(*groups, reps=R, auto=False, random_state=1))
                row(rows, case, "hyppo.ksample.DISCO (own scale)", t, r[0], r[1], t_ours)
            except ImportError:
                pass
        if not args.no_r:
            sizes = ",".join([str(m)] * k)
            out = run_r(f"f <- factor(rep(1:{k}, c({sizes}))); "
                        f"e <- system.time(r <- disco(d, factors=f, R={R}))[['elapsed']]; "
                        "cat(r$statistic, r$p.value, e)", np.vstack(groups), tmp)
            if out:
                row(rows, case, "R energy::disco", out[0], out[1], out[2], t_ours)

        # -- 1-D --
        if args.oned:
            n1 = args.n_oned
            a, b = rng.normal(size=n1), rng.normal(size=n1) + 0.05
            case = f"1-D energy test n=m={n1}"
            t_ours, res = best_of(lambda: es.energy_test(a, b, n_resamples=R, rng=1,
                                                         n_threads=args.threads), args.repeat)
            row(rows, case, f"energystats ({res.engine})", t_ours, res.statistic, res.pvalue, t_ours)
            try:
                import dcor
                t, r = timed(lambda: dcor.homogeneity.energy_test(a[:, None], b[:, None],
                                                                  num_resamples=R, random_state=1))
                row(rows, case, "dcor.homogeneity.energy_test", t, float(r.statistic), r.pvalue, t_ours)
            except ImportError:
                pass
            if not args.no_r:
                out = run_r(f"e <- system.time(r <- eqdist.etest(d, sizes=c({n1},{n1}), R={R}))[['elapsed']]; "
                            "cat(r$statistic, r$p.value, e)", np.concatenate([a, b])[:, None], tmp)
                if out:
                    row(rows, case, "R energy::eqdist.etest", out[0], out[1], out[2], t_ours)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"R = {R} permutations; energystats n_threads={args.threads or 'all'} "
          f"({os.cpu_count()} CPUs); best of {args.repeat} for energystats, 1 run for peers")
    print_table(rows)


if __name__ == "__main__":
    main()
