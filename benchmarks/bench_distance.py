"""Time and peak memory of energy_distance against dcor and scipy, same data, same process.

Run:  python benchmarks/bench_distance.py [--repeats 3] [--big-peers] [--threads N]

Prints a Markdown table: for each (n = m, d) the wall time (best of
--repeats) and the peak traced memory (tracemalloc, a separate run) of
``energystats.energy_distance``, ``dcor.energy_distance`` and, for d = 1,
``scipy.stats.energy_distance`` (which returns sqrt(E); it is squared before the
values are compared).  dcor forms three dense n×m matrices, so it is skipped
where that would need more than --peer-mem-gb (default 4) unless --big-peers
is given; at n = 10^6 only the O(n log n) methods run.
"""
import argparse
import gc
import time
import tracemalloc

import numpy as np

import energystats as es


def _measure(fn, repeats):
    best = np.inf
    value = None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 2**20, value


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="n_threads for energystats (default: all)")
    ap.add_argument("--big-peers", action="store_true", help="run dcor even where it needs a lot of memory")
    ap.add_argument("--peer-mem-gb", type=float, default=4.0)
    args = ap.parse_args()

    try:
        import dcor
        dcor.energy_distance(np.zeros((3, 2)), np.ones((3, 2)))  # compile numba paths first
    except ImportError:
        dcor = None
    import scipy.stats

    cases = [(n, d) for n in (1_000, 5_000, 20_000) for d in (1, 10)] + [(1_000_000, 1)]
    rng = np.random.default_rng(20261122)
    print(f"energystats {es.__version__}; numpy {np.__version__}; threads={args.threads or 'all'}")
    print("| n = m | d | method | time (s) | peak MB | E(A, B) | speed-up vs energystats |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for n, d in cases:
        x = rng.normal(size=(n, d))
        y = rng.normal(loc=0.1, size=(n, d))
        rows = []
        t_es, m_es, v_es = _measure(lambda: es.energy_distance(x, y, n_threads=args.threads), args.repeats)
        rows.append(("energystats", t_es, m_es, v_es))
        dense_gb = 3 * n * n * 8 / 2**30
        if dcor is not None and n <= 20_000 and (dense_gb <= args.peer_mem_gb or args.big_peers):
            t, m, v = _measure(lambda: dcor.energy_distance(x, y), args.repeats)
            rows.append(("dcor", t, m, v))
        elif dcor is not None:
            rows.append(("dcor", None, None, f"skipped (needs ~{dense_gb:.0f} GB)"))
        if d == 1:
            t, m, v = _measure(lambda: scipy.stats.energy_distance(x[:, 0], y[:, 0]) ** 2, args.repeats)
            rows.append(("scipy (squared)", t, m, v))
        for name, t, m, v in rows:
            if t is None:
                print(f"| {n:,} | {d} | {name} | — | — | {v} | — |")
                continue
            agree = "" if name == "energystats" else (" ✓" if np.isclose(v, v_es, rtol=1e-8) else " ✗ differs")
            speed = "1" if name == "energystats" else f"{t / t_es:.1f}×"
            print(f"| {n:,} | {d} | {name} | {t:.4f} | {m:.1f} | {v:.10g}{agree} | {speed} |")


if __name__ == "__main__":
    main()
