"""E-Agglo from coarser initial segments (issue 53 item 4): the k×k block sums streamed from
the rows on this machine's threads and as tiles on a Dask cluster, on long series whose T×T
distance matrix (the only way before) could not be held.

Cases: d = 2, initial segments of 500 rows, a mean shift of 0.3 at the middle; T = 50 000
(k = 100; the T×T matrix would be 20 GB) and T = 200 000 (k = 400; 320 GB).  "threads" is
``n_threads=2``; "dask" is a ``distributed.LocalCluster(n_workers=2, threads_per_worker=1,
processes=True)`` started before the timings and warmed by one small call.  Each time is one
run (the second of two for the smaller case); the change points are checked equal and the
fits to 1e-12.  On two cores Dask cannot be faster than the threads: the ratio is the
overhead a larger cluster's gain must beat.  Quote the instruction set
(``ENERGYSTATS_SIMD``) and the load beside the figures.

Run::

    python benchmarks/bench_e_agglo_blocks.py            # about a minute on 2 cores
    python benchmarks/bench_e_agglo_blocks.py --quick    # T = 20 000 only
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import energystats as es


def _series(T, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, 2))
    x[T // 2:] += 0.3
    return x, np.repeat(np.arange(T // 500), 500)


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    sizes = [20_000] if args.quick else [50_000, 200_000]
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"ENERGYSTATS_SIMD={os.environ.get('ENERGYSTATS_SIMD', '(default)')}, "
          f"load at start {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, \
            Client(cluster):
        print(f"# cluster start {time.perf_counter() - t0:.1f} s")
        x, member = _series(4000)
        es.e_agglo(x, member=member, backend="dask")     # the workers' imports
        print(f"{'T':>8} {'k':>5} {'threads s':>10} {'dask s':>8} {'dask/threads':>13} "
              f"{'T×T GB':>7}  change points")
        for T in sizes:
            x, member = _series(T)
            if T <= 50_000:
                es.e_agglo(x, member=member, n_threads=2)
            want, t_thr = _timed(lambda: es.e_agglo(x, member=member, n_threads=2))
            got, t_dask = _timed(lambda: es.e_agglo(x, member=member, backend="dask"))
            assert got.changepoints.tolist() == want.changepoints.tolist()
            np.testing.assert_allclose(got.path["fit"], want.path["fit"], rtol=1e-12)
            print(f"{T:>8} {T // 500:>5} {t_thr:>10.2f} {t_dask:>8.2f} {t_dask / t_thr:>13.2f} "
                  f"{8 * T * T / 1e9:>7.0f}  {want.changepoints.tolist()}")
    print(f"# load at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
