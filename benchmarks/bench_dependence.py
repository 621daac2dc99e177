"""Distance covariance/correlation against dcor (and R energy when installed): time and memory.

Same process, same data.  Rows:

* dCor, n = 5 000, x in 10 and y in 5 dimensions: ``es.distance_correlation`` against
  ``dcor.distance_correlation``;
* dCor, n = 20 000 (same dimensions): time and the peak of Python-side allocations
  (tracemalloc; the compiled kernel allocates one 2 KiB buffer per thread);
* permutation test of independence, n = 1 000, R = 999: ``es.independence_test`` against
  ``dcor.independence.distance_covariance_test`` and R's ``dcov.test`` (timed inside R);
* the same test at n = 20 000 in 10 / 5 dimensions, R = 9: past the default memory budget the
  permutations are streamed (no n×n matrix): seconds per permutation and peak allocations;
* 1-D dCor, n = 10⁶ (the O(n log n) path, best of 5);
* the distance-correlation matrix of p columns × n = 1 000 rows (p = 200 by default;
  ``--matrix-columns 1000`` for the full size), against ``dcor.rowwise`` on a sample of the
  pairs (scaled to all of them);
* screening (``es.distance_correlation_screen``, DC-SIS): n = 1 000 rows, p = 10 000 1-D
  features (``--screen-features``), the ranking, and the ranking with 199 shared permutations,
  against ``dcor.rowwise(dcor.distance_correlation, ...)`` on the same features (its
  permutation tests are one call per feature: timed on 20 features and scaled).

Run::

    python benchmarks/bench_dependence.py            # ~2-4 minutes on 2 cores
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import time
import tracemalloc

import numpy as np

import energystats as es


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def r_dcov_test_seconds(x, y, R=999):
    """Seconds R energy's dcov.test takes on the same data (None without Rscript/energy)."""
    if shutil.which("Rscript") is None:
        return None
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        np.savetxt(os.path.join(d, "x.csv"), x, delimiter=",")
        np.savetxt(os.path.join(d, "y.csv"), y, delimiter=",")
        code = (f"suppressMessages(library(energy)); x <- as.matrix(read.csv('{d}/x.csv', header=FALSE)); "
                f"y <- as.matrix(read.csv('{d}/y.csv', header=FALSE)); set.seed(1); "
                f"t <- system.time(dcov.test(x, y, R = {R}))[['elapsed']]; cat(t)")
        out = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True)
        try:
            return float(out.stdout.strip().split()[-1])
        except (ValueError, IndexError):
            return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix-columns", type=int, default=200)
    ap.add_argument("--screen-features", type=int, default=10_000)
    ap.add_argument("--only", choices=["all", "screen", "top"], default="all")
    ap.add_argument("--top-columns", type=int, default=0,
                    help="also the 100 strongest pairs of a 1000-row table of this many columns "
                         "(distance_correlation_matrix(top=100)); 10000: about half an hour")
    args = ap.parse_args(argv)
    import dcor

    rng = np.random.default_rng(0)
    rows = []
    if args.only in ("all", "top") and args.top_columns:
        top_row(rows, args.top_columns, rng)
    if args.only == "top":
        return report(rows)
    screening_rows(rows, args, dcor, rng)
    if args.only == "screen":
        return report(rows)

    x, y = rng.normal(size=(5000, 10)), rng.normal(size=(5000, 5))
    y[:, 0] += np.sin(x[:, 0])
    ours = best(lambda: es.distance_correlation(x, y), 3)
    theirs = best(lambda: dcor.distance_correlation(x, y), 1)
    assert np.isclose(es.distance_correlation(x, y), dcor.distance_correlation(x, y), rtol=1e-10)
    rows.append(("dCor, n = 5000, d = 10 / 5", ours, theirs, None, ""))

    x2, y2 = rng.normal(size=(20000, 10)), rng.normal(size=(20000, 5))
    tracemalloc.start()
    t = time.perf_counter()
    es.distance_correlation(x2, y2)
    t = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rows.append(("dCor, n = 20000, d = 10 / 5", t, None, None,
                 f"peak of Python allocations {peak / 2**20:.1f} MiB (data {(x2.nbytes + y2.nbytes) / 2**20:.1f} MiB)"))

    x3, y3 = rng.normal(size=(1000, 3)), rng.normal(size=(1000, 2))
    ours = best(lambda: es.independence_test(x3, y3, n_resamples=999, rng=1), 2)
    theirs = best(lambda: dcor.independence.distance_covariance_test(x3, y3, num_resamples=999,
                                                                      random_state=1), 2)
    rows.append(("permutation test, n = 1000, R = 999", ours, theirs, r_dcov_test_seconds(x3, y3), ""))

    # beyond memory_budget (16 n² bytes) the permutations are streamed: no n×n matrix
    tracemalloc.start()
    t = time.perf_counter()
    es.independence_test(x2, y2, n_resamples=9, rng=1)
    t = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rows.append(("permutation test, n = 20000, d = 10 / 5, R = 9 (streamed)", t, None, None,
                 f"{t / 10:.2f} s per permutation; peak of Python allocations {peak / 2**20:.1f} MiB "
                 f"(the two matrices would take {16 * 20000**2 / 2**30:.1f} GiB)"))

    x4 = rng.normal(size=10**6)
    y4 = x4**2 + rng.normal(size=10**6)
    ours = best(lambda: es.distance_correlation(x4, y4), 5)  # shared machine: the best of 5
    rows.append(("1-D dCor, n = 10^6 (sorted path)", ours, None, None, ""))

    p = args.matrix_columns
    M = rng.normal(size=(1000, p))
    t = time.perf_counter()
    es.distance_correlation_matrix(M, pvalue="ttest")
    t = time.perf_counter() - t
    pairs = p * (p - 1) // 2
    sample = [(i, (i * 7 + 1) % p) for i in range(min(p, 200)) if (i * 7 + 1) % p != i]
    td = time.perf_counter()
    dcor.rowwise(dcor.distance_correlation, [M[:, i] for i, _ in sample], [M[:, j] for _, j in sample])
    td = (time.perf_counter() - td) * pairs / len(sample)
    rows.append((f"dCor matrix, {p} columns × n = 1000, t-tests", t, td, None,
                 f"{pairs} pairs; dcor.rowwise timed on {len(sample)} pairs and scaled "
                 f"(its dCor only, no tests)"))
    report(rows)


def screening_rows(rows, args, dcor, rng):
    n, p = 1000, args.screen_features
    X = rng.normal(size=(n, p))
    y = X[:, 3] ** 2 + np.abs(X[:, 11]) + rng.normal(size=n)
    es.distance_correlation_screen(X[:, :50], y)        # warm
    ours = best(lambda: es.distance_correlation_screen(X, y, top=20), 3)
    t = time.perf_counter()
    theirs = dcor.rowwise(dcor.distance_correlation, [X[:, j] for j in range(p)], [y] * p)
    theirs_t = time.perf_counter() - t
    res = es.distance_correlation_screen(X, y, top=20)
    err = float(np.max(np.abs(res.statistic.to_numpy() - theirs)))
    rows.append((f"screening, n = {n}, p = {p}: ranking", ours, theirs_t, None,
                 f"max |ours − dcor| = {err:.1e}; selected {res.selected[:2]}"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the adjusted-p floor at R = 199
        t = time.perf_counter()
        res = es.distance_correlation_screen(X, y, top=20, pvalue="permutation", n_resamples=199, rng=1)
        t = time.perf_counter() - t
    k = 20
    td = time.perf_counter()
    for j in range(k):
        dcor.independence.distance_covariance_test(X[:, j], y, num_resamples=199, random_state=1)
    td = (time.perf_counter() - td) * p / k
    rows.append((f"screening, n = {n}, p = {p}: ranking + 199 shared permutations", t, td, None,
                 f"dcor: distance_covariance_test per feature, timed on {k} features and scaled; "
                 f"smallest BH-adjusted p {float(res.adjusted.min()):.3f}"))


def top_row(rows, p, rng):
    import resource

    M = rng.normal(size=(1000, p))
    M[:, 1] = M[:, 0] ** 2 + 0.5 * rng.normal(size=1000)
    t = time.perf_counter()
    res = es.distance_correlation_matrix(M, top=100)
    t = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    first = res.top_pairs.iloc[0]
    rows.append((f"dCor matrix, {p} columns × n = 1000, top=100 pairs", t, None, None,
                 f"{p * (p - 1) // 2} pairs, no p×p matrix; peak RSS {peak:.0f} MiB; strongest "
                 f"({first.x}, {first.y}) {first.dcor:.3f}"))


def report(rows):
    print("| case | energystats [s] | dcor [s] | R energy [s] | ratio dcor/ours | note |")
    print("|---|---|---|---|---|---|")
    for case, o, d, r, note in rows:
        ratio = f"{d / o:.1f}×" if d else ""
        print(f"| {case} | {o:.3f} | {'' if d is None else f'{d:.3f}'} | "
              f"{'' if r is None else f'{r:.3f}'} | {ratio} | {note} |")


if __name__ == "__main__":
    main()
