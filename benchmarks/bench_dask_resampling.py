"""Resampling on Dask (issue 42): the overhead of ``backend="dask"`` against this machine's
threads for the three resampling loops, on the same data in the same process, with the
answers checked to be the same bits.

Cases:

* ``e_divisive``: T = 2000, d = 1, two changes (three tests), ``min_size=100``, R = 199
  permutations per test;
* ``normality_test``: d = 3, n = 500, R = 199 (about five replicates a task), and d = 1,
  n = 1000, R = 999 (one task: a bootstrap below one task's work);
* ``weighted_effect``: n = 300, d = 3, 50 half-samples (one task each).

"threads" is the default backend with ``n_threads=2`` (for ``weighted_effect``: two worker
processes once the first resample says it pays); "dask" is a
``distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` started
before the timings (its start is reported apart) and warmed by one small call of each
function, so that the workers' imports are not counted.  Each time is the median of
``--repeat`` runs; before each Dask run the scheduler is left to forget the previous one's
tasks (the tasks are pure: the same data and seed give the same keys, and results the
workers still held would answer a repeat without computing).  On two cores Dask cannot be
faster than the threads; the ratio is the overhead a cluster's gain must beat.

Run::

    python benchmarks/bench_dask_resampling.py             # about half a minute on 2 cores
    python benchmarks/bench_dask_resampling.py --quick     # smaller cases, to try the script
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import energystats as es


def _settle(client, timeout=10.0):
    """Wait until the scheduler holds no task (the previous call's results are released)."""
    t0 = time.perf_counter()
    while client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) and \
            time.perf_counter() - t0 < timeout:
        time.sleep(0.05)


def _timed(fn, repeat, client=None):
    """The last result and the median time of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        if client is not None:
            _settle(client)
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, float(np.median(times))


def _cases(quick):
    rng = np.random.default_rng(0)
    T = 400 if quick else 2000
    series = rng.normal(size=(T, 1))
    series[T // 3:] += 1.0
    series[2 * T // 3:] -= 1.5
    mvn = rng.normal(size=(200 if quick else 500, 3))
    uni = rng.normal(size=1000)
    n = 120 if quick else 300
    X = rng.normal(size=(n, 3))
    t = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    y = 2.0 * t + X[:, 0] + rng.normal(size=n)
    weights = es.energy_balancing_weights(X, t)
    R = 49 if quick else 199
    return [
        (f"e_divisive T={T} d=1 R={R}",
         lambda **kw: es.e_divisive(series, min_size=100, n_resamples=R, rng=1, **kw),
         lambda r: (r.changepoints.tolist(), r.pvalues.tolist(), r.n_resamples)),
        (f"normality_test n={len(mvn)} d=3 R={R}",
         lambda **kw: es.normality_test(mvn, n_resamples=R, rng=2, **kw),
         lambda r: (r.pvalue, r.null_distribution.tobytes())),
        (f"normality_test n=1000 d=1 R={5 * R + 4}",
         lambda **kw: es.normality_test(uni, n_resamples=5 * R + 4, rng=3, **kw),
         lambda r: (r.pvalue, r.null_distribution.tobytes())),
        (f"weighted_effect n={n} d=3 50 half-samples",
         lambda **kw: es.weighted_effect(y, weights, n_boot=50, rng=4, **kw),
         lambda r: (r.std_error.tobytes(), r.ci_low.tobytes(), r.boot.tobytes())),
    ]


def _warm():
    """One small call of each function on Dask: the workers import what the tasks need."""
    rng = np.random.default_rng(9)
    es.e_divisive(rng.normal(size=80), min_size=20, n_resamples=9, rng=1, backend="dask")
    es.normality_test(rng.normal(size=(30, 2)), n_resamples=9, rng=1, backend="dask")
    X = rng.normal(size=(60, 2))
    t = (X[:, 0] > 0).astype(int)
    es.weighted_effect(X[:, 1] + t, es.energy_balancing_weights(X, t), n_boot=20, rng=1,
                       backend="dask")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller cases")
    ap.add_argument("--repeat", type=int, default=3, help="median of this many runs (default 3)")
    args = ap.parse_args()
    import distributed

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load average at start {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    t0 = time.perf_counter()
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=40)
    client = distributed.Client(cluster)
    started = time.perf_counter() - t0
    _warm()
    print(f"# LocalCluster(n_workers=2, threads_per_worker=1): started in {started:.2f} s, "
          f"warmed in {time.perf_counter() - t0 - started:.2f} s")
    print(f"{'case':<42} {'threads s':>10} {'dask s':>8} {'dask/threads':>13}  same bits")
    for name, call, key in _cases(args.quick):
        local, t_local = _timed(lambda: call(n_threads=2), args.repeat)
        on_dask, t_dask = _timed(lambda: call(backend="dask"), args.repeat, client)
        same = key(local) == key(on_dask)
        print(f"{name:<42} {t_local:>10.3f} {t_dask:>8.3f} {t_dask / t_local:>13.2f}  {same}")
    client.close()
    cluster.close()
    print(f"# load average at end {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
