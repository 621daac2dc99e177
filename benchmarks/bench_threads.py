"""Small calls and threads: default ``n_threads`` against ``n_threads=1``, idle and loaded.

For energy distances of growing size (work = pairs × features), prints the
mean time of one call with one thread and with all cores, on an idle machine
and with one busy process per core (``--busy``; the processes spin in pure
Python and are stopped at the end).  The kernels run single-threaded below
``energystats._core._engine.PARALLEL_MIN_WORK``; this table is how that threshold
was chosen.  A second table does the same for permutation tests on the
matrix engine and on the blocked engine (the n×n matrix recomputed in row
blocks, BLAS products between them).

    python benchmarks/bench_threads.py            # idle
    python benchmarks/bench_threads.py --busy     # one spinning process per core
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time

import numpy as np

import energystats as es
from energystats._core import _engine

SIZES = [(50, 2), (100, 5), (200, 5), (300, 10), (500, 10), (800, 10), (1500, 10), (3000, 10)]


def spin(stop):
    while not stop.is_set():
        pass


def per_call(x, y, n_threads, seconds=0.4):
    es.energy_distance(x, y, n_threads=n_threads, method="pairwise")  # warm up
    reps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        es.energy_distance(x, y, n_threads=n_threads, method="pairwise")
        reps += 1
    return (time.perf_counter() - t0) / reps


ENGINES = [("matrix", {}), ("blocked", {"memory_budget": 16 * 2**20})]


def test_time(X, labels, n_threads, kw, reps=3):
    es.energy_test(X, labels=labels, n_resamples=19, rng=0, n_threads=n_threads, **kw)  # warm up
    best = np.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        res = es.energy_test(X, labels=labels, n_resamples=199, rng=0, n_threads=n_threads, **kw)
        best = min(best, time.perf_counter() - t0)
    return best, res.engine


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--busy", action="store_true", help="one spinning process per core")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0))
    stop, procs = None, []
    if args.busy:
        ctx = mp.get_context("spawn")
        stop = ctx.Event()
        procs = [ctx.Process(target=spin, args=(stop,)) for _ in range(cores)]
        for p in procs:
            p.start()
        time.sleep(0.5)
    rng = np.random.default_rng(0)
    print(f"{'busy' if args.busy else 'idle'} machine, {cores} cores; "
          f"PARALLEL_MIN_WORK = {_engine.PARALLEL_MIN_WORK:.0e}")
    print(f"{'n + m':>6} {'d':>4} {'work':>9} {'1 thread [ms]':>14} {'default [ms]':>13} {'ratio':>6}")
    try:
        for n, d in SIZES:
            x, y = rng.normal(size=(n, d)), rng.normal(size=(n, d))
            one = per_call(x, y, 1)
            default = per_call(x, y, None)
            work = 0.5 * (2 * n) ** 2 * d
            print(f"{2 * n:>6} {d:>4} {work:>9.1e} {one * 1e3:>14.3f} {default * 1e3:>13.3f} "
                  f"{default / one:>6.2f}")
        print()
        print(f"{'engine':>8} {'n':>6} {'d':>3} {'R':>4} {'1 thread [s]':>13} {'default [s]':>12} {'ratio':>6}")
        n, d = 2000, 5
        X = rng.normal(size=(n, d))
        labels = np.arange(n) % 2
        for name, kw in ENGINES:
            one, eng = test_time(X, labels, 1, kw)
            default, _ = test_time(X, labels, None, kw)
            assert eng == name, eng
            print(f"{name:>8} {n:>6} {d:>3} {199:>4} {one:>13.3f} {default:>12.3f} {default / one:>6.2f}")
    finally:
        if stop is not None:
            stop.set()
            for p in procs:
                p.join()


if __name__ == "__main__":
    main()
