"""Energy change points (issue 32): E-Divisive and E-Agglo, time and peak memory, against peers.

Cases (fixed seeds; each series has its true change points printed beside those found):

* ``mv``: T = 5000, d = 3, three true changes (in the mean, in the variance, and in the
  correlation only), ``min_size=30``, ``n_resamples=199``, ``pvalue_method="sequential"``
  and ``"full"`` (targets: <= 10 s and <= 30 s on 2 cores), and ``"decision"``;
* ``test``: T = 20 000, d = 1, three changes in the mean, the full test (R = 199) at every
  stage.
* ``long``: T = 100 000, d = 1, five changes in the mean, ``n_changepoints=5`` (untested;
  target <= 30 s); memory target <= 500 MB;
* ``peers``: T = 2000, d = 1, three changes in the mean: energystats against MongoDB's
  ``signal_processing_algorithms.energy_statistics.e_divisive`` (E-Divisive, permutation
  test), Apache Otava's ``compute_change_points_orig`` (E-Divisive of Matteson & James with
  100 permutations) and its default ``compute_change_points`` (windowed, t-test), and
  sktime's ``EAgglo`` against ``energystats.e_agglo``, where importable (a peer that is
  missing, or that refuses the series, is listed with the reason).  The peers also run on
  ``mv`` when T <= ``--peer-max-T`` and they take multivariate series.

The peers are not in the ``[bench]`` extra: ``signal-processing-algorithms`` 2.1.6 requires an
old ``gevent`` that does not build on Python 3.11 here, and Apache Otava pulls a database and
cloud client stack it does not use for E-Divisive.  Install them without their dependencies
(the recorded run used these)::

    pip install --no-deps signal-processing-algorithms apache-otava
    pip install more-itertools structlog pyyaml
    pip install sktime        # EAgglo; in a separate virtual environment if pandas must stay put

Peak memory: ``tracemalloc`` (Python and NumPy allocations of the call) and the process's
peak resident size (``resource``, for the whole run so far).

    python benchmarks/bench_changepoint.py            # docs/benchmarks/bench_changepoint.txt
    python benchmarks/bench_changepoint.py --quick    # small sizes: checks the script runs
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
import energystats as es  # noqa: E402


def mv_series(T, rng):
    """d = 3: a change in the mean at T/4, in the variance at T/2, in the correlation only at
    3T/4 (the margins stay standard normal)."""
    cuts = [T // 4, T // 2, 3 * T // 4]
    Z = rng.normal(size=(T, 3))
    Z[cuts[0]:, 0] += 1.5                                   # mean
    Z[cuts[1]:cuts[2], 1] *= 2.5                            # variance (until the next change)
    corr = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, 0.9], [0.9, 0.9, 1.0]])
    L = np.linalg.cholesky(corr)
    Z[cuts[2]:] = rng.normal(size=(T - cuts[2], 3)) @ L.T   # correlation only
    Z[cuts[2]:, 0] += 1.5                                   # the mean shift persists
    return Z, cuts


def mean_series(T, k, rng, shift=1.5):
    """d = 1, ``k`` changes in the mean at equal spacing (levels alternating 0, shift)."""
    cuts = [(i + 1) * T // (k + 1) for i in range(k)]
    x = rng.normal(size=T)
    for i, c in enumerate(cuts):
        x[c:] += shift if i % 2 == 0 else -shift
    return x, cuts


def measure(fn):
    """``(value, seconds, tracemalloc peak MB)`` of ``fn()``."""
    tracemalloc.start()
    t0 = time.perf_counter()
    value = fn()
    dt = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return value, dt, peak


def rss_mb():
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / 2**20 if sys.platform == "darwin" else r / 1024


ROWS = []


def row(case, tool, setting, found, truth, dt, peak, note=""):
    ROWS.append((case, tool, setting, found, truth, dt, peak, note))
    found_s = "—" if found is None else str([int(c) for c in found])
    time_s = "—" if dt is None else f"{dt:8.2f}"
    peak_s = "—" if peak is None else f"{peak:8.1f}"
    print(f"{case:6s} {tool:34s} {setting:30s} {time_s:>8s} {peak_s:>8s}  found {found_s}"
          + (f"  ({note})" if note else ""), flush=True)


def skip(case, tool, why):
    print(f"{case:6s} {tool:34s} skipped: {why}", flush=True)


# -- peers -----------------------------------------------------------------------------

def peer_mongodb(x, R):
    try:
        from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive
    except ImportError as exc:
        return None, f"signal-processing-algorithms not importable ({exc})"
    return (lambda: sorted(e_divisive(np.asarray(x, dtype=float), pvalue=0.05, permutations=R)),
            f"pvalue=0.05, permutations={R}")


def peer_otava_orig(x):
    try:
        from otava.analysis import compute_change_points_orig
    except ImportError as exc:
        return None, f"apache-otava not importable ({exc})"
    if np.ndim(x) != 1:
        return None, "otava takes univariate series"
    return (lambda: sorted(int(c.index) for c in compute_change_points_orig(list(map(float, x)),
                                                                          max_pvalue=0.05, seed=1)[0]),
            "max_pvalue=0.05 (100 permutations, fixed)")


def peer_otava_hunter(x):
    try:
        from otava.analysis import compute_change_points
    except ImportError as exc:
        return None, f"apache-otava not importable ({exc})"
    if np.ndim(x) != 1:
        return None, "otava takes univariate series"
    return (lambda: sorted(int(c.index) for c in compute_change_points(list(map(float, x)),
                                                                     max_pvalue=0.05)[0]),
            "windowed, t-test, max_pvalue=0.05")


def peer_sktime_eagglo(x, block):
    try:
        try:
            from sktime.detection.eagglo import EAgglo      # sktime >= 0.34
        except ImportError:
            from sktime.annotation.eagglo import EAgglo     # older releases
    except ImportError as exc:
        return None, f"sktime not importable ({exc}); its EAgglo is skipped"
    import pandas as pd

    def fit():
        member = np.arange(len(x)) // block
        labels = EAgglo(member=member).fit_transform(pd.DataFrame(np.asarray(x).reshape(len(x), -1)))
        lab = np.asarray(labels).ravel()
        return list(np.flatnonzero(lab[1:] != lab[:-1]) + 1)

    return fit, f"member = blocks of {block}"


def run_peers(case, x, cuts, R, block, peer_max_T):
    if len(x) > peer_max_T:
        skip(case, "peers", f"T = {len(x)} > --peer-max-T {peer_max_T}")
        return
    for tool, (fn, setting) in (("signal_processing_algorithms", peer_mongodb(x, R)),
                                ("otava compute_change_points_orig", peer_otava_orig(x)),
                                ("otava compute_change_points", peer_otava_hunter(x)),
                                ("sktime EAgglo", peer_sktime_eagglo(x, block))):
        if fn is None:
            skip(case, tool, setting)
            continue
        try:
            found, dt, peak = measure(fn)
        except Exception as exc:  # noqa: BLE001 - a peer's failure is a row, not the end
            skip(case, tool, f"failed: {type(exc).__name__}: {str(exc)[:80]}")
            continue
        row(case, tool, setting, found, cuts, dt, peak)


# -- the cases -------------------------------------------------------------------------

def ours_divisive(case, x, cuts, *, min_size, R, methods, n_threads):
    for method in methods:
        res, dt, peak = measure(lambda m=method: es.e_divisive(
            x, min_size=min_size, n_resamples=R, pvalue_method=m, rng=1, n_threads=n_threads))
        used = "+".join(map(str, res.n_resamples))
        rej = ("" if res.rejected is None else
               f"; rejected {res.rejected} at p {res.rejected_pvalue:.4g}")
        row(case, "energystats e_divisive", f"R={R} {method}", res.changepoints, cuts, dt, peak,
            f"p {[round(float(p), 4) for p in res.pvalues]}{rej}, permutations {used}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (checks that it runs)")
    ap.add_argument("--T-mv", type=int, default=None, help="length of the d = 3 series (5000)")
    ap.add_argument("--T-long", type=int, default=None, help="length of the d = 1 series (100000)")
    ap.add_argument("--T-peers", type=int, default=None, help="length of the peers' series (2000)")
    ap.add_argument("--resamples", type=int, default=None, help="permutations per test (199)")
    ap.add_argument("--peer-max-T", type=int, default=5000,
                    help="run the peers only on series at most this long (default 5000)")
    ap.add_argument("--threads", type=int, default=None, help="n_threads (default: all cores)")
    ap.add_argument("--T-test", type=int, default=None,
                    help="length of the d = 1 series the full test runs on (20000)")
    ap.add_argument("--cases", default="mv,long,test,peers",
                    help="comma-separated: mv,long,test,peers")
    a = ap.parse_args(argv)
    T_mv = a.T_mv or (600 if a.quick else 5000)
    T_long = a.T_long or (5000 if a.quick else 100_000)
    T_peers = a.T_peers or (400 if a.quick else 2000)
    T_test = a.T_test or (2000 if a.quick else 20_000)
    R = a.resamples or (99 if a.quick else 199)
    cases = set(a.cases.split(","))
    print(f"energystats {es.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}"
          f"{', --quick' if a.quick else ''}; times in s, peak = tracemalloc peak in MB\n")
    es.e_divisive(np.arange(40.0), min_size=10, n_resamples=9, rng=0)  # warm-up: imports, threads
    print(f"{'case':6s} {'tool':34s} {'setting':30s} {'time':>8s} {'peak':>8s}")
    if "mv" in cases:
        x, cuts = mv_series(T_mv, np.random.default_rng(2014))
        print(f"\nmv: T = {T_mv}, d = 3, true change points {cuts} (mean, variance, correlation)")
        ours_divisive("mv", x, cuts, min_size=30, R=R, methods=("sequential", "decision", "full"),
                      n_threads=a.threads)
        run_peers("mv", x, cuts, R, 10, a.peer_max_T)
    if "long" in cases:
        x, cuts = mean_series(T_long, 5, np.random.default_rng(2015))
        print(f"\nlong: T = {T_long}, d = 1, true change points {cuts} (mean)")
        res, dt, peak = measure(lambda: es.e_divisive(x, min_size=30, n_changepoints=5,
                                                      n_threads=a.threads))
        row("long", "energystats e_divisive", "n_changepoints=5", res.changepoints, cuts, dt, peak)
    if "test" in cases:
        x, cuts = mean_series(T_test, 3, np.random.default_rng(2017))
        print(f"\ntest: T = {T_test}, d = 1, true change points {cuts} (mean)")
        ours_divisive("test", x, cuts, min_size=30, R=R, methods=("full",), n_threads=a.threads)
    if "peers" in cases:
        x, cuts = mean_series(T_peers, 3, np.random.default_rng(2016))
        print(f"\npeers: T = {T_peers}, d = 1, true change points {cuts} (mean)")
        ours_divisive("peers", x, cuts, min_size=30, R=R, methods=("sequential", "decision", "full"),
                      n_threads=a.threads)
        res, dt, peak = measure(lambda: es.e_divisive(x, min_size=30, n_changepoints=3,
                                                      n_threads=a.threads))
        row("peers", "energystats e_divisive", "n_changepoints=3", res.changepoints, cuts, dt, peak)
        block = 10
        res, dt, peak = measure(lambda: es.e_agglo(x, member=np.arange(T_peers) // block,
                                                   n_threads=a.threads))
        row("peers", "energystats e_agglo", f"member = blocks of {block}", res.changepoints, cuts,
            dt, peak)
        run_peers("peers", x, cuts, R, block, a.peer_max_T)
    print(f"\nprocess peak resident size: {rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
