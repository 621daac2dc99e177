"""ns per pair of the streamed energy-distance kernel, 1 and 2 threads (best of 3).

Run it on two builds (e.g. a worktree of an older commit built with
``python setup.py build_ext --inplace`` and put first on PYTHONPATH) to check
that a change leaves the hot loop as fast as it was.

    python benchmarks/bench_kernel.py
"""
import time

import numpy as np

import energystats as es


def main():
    rng = np.random.default_rng(0)
    print(es.__file__)
    for n, d in [(5000, 10), (20000, 10), (5000, 100)]:
        x = rng.normal(size=(n, d))
        y = rng.normal(size=(n, d)) + 0.1
        for nt in (1, 2):
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                es.energy_distance(x, y, n_threads=nt)
                best = min(best, time.perf_counter() - t0)
            pairs = (2 * n) ** 2 / 2
            print(f"n=m={n} d={d} threads={nt}: {best:.3f} s  {best / pairs * 1e9:.2f} ns/pair")


if __name__ == "__main__":
    main()
