"""Scale: the exact statistics and tests on threads and on Dask, and large-n clustering.

Every case runs in a fresh child process, so its peak resident memory (``ru_maxrss``) is its
own; "extra" is that peak minus the resident memory just before the timed call (the data,
numpy, pandas and the package are already loaded then, and a call on 40 rows has imported
what the package imports lazily: ~100 MB of modules that would otherwise count as "extra").  Dask cases run on a
``distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` whose workers
hold the data already (persisted); their memory is each worker's peak resident memory.

Cases (same data for both backends; d = 10):

* exact energy distance, n = m = 5·10⁴: threads vs the cluster;
* energy test n = m = 5000, R = 999: threads vs the cluster;
* exact energy clustering, n = 10⁵, k = 4, n_init = 4 (engine='streamed', no n×n matrix);
* Nyström clustering, r = 256: n = 10⁵ in full (the exact W of the partition included), and
  n = 10⁶ without the exact W (features + restarts; W's O(n²) cost extrapolated);
* extrapolation of the exact E at n = m = 10⁶ on 100 workers from a measured tile.

Run::

    python benchmarks/bench_scale.py            # everything (about 10 minutes on 2 cores)
    python benchmarks/bench_scale.py --quick    # smaller n, to try the script
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(r"""
    import json, resource, sys, time
    import numpy as np
    import energystats as es

    def rss_mb():
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
        return float("nan")

    def peak_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0

    def mixture(n, d, k, seed):
        rng = np.random.default_rng(seed)
        centres = rng.normal(0.0, 2.0, (k, d))
        return centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))

    case, n = sys.argv[1], int(sys.argv[2])
    out = {}
    rng = np.random.default_rng(0)
    if case in ("E", "E-dask", "T", "T-dask"):
        x = rng.normal(size=(n, 10))
        y = rng.normal(size=(n, 10)) + 0.05
    if case.endswith("-dask"):
        import distributed, dask.array as da
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0", silence_logs=40)
        client = distributed.Client(cluster)
        xd, yd = client.persist([da.from_array(x, chunks=(10000, 10)), da.from_array(y, chunks=(10000, 10))])
        distributed.wait([xd, yd])
        base = client.run(rss_mb)
    # the first call of the package imports what it uses lazily (pandas, scipy.stats, ...:
    # about 400 modules, ~100 MB resident and a few tenths of a second); one call on a few
    # rows first, so that the timed call's time and memory are its own
    w = np.random.default_rng(9).normal(size=(40, 10))
    es.energy_test(w[:20], w[20:], n_resamples=9, rng=0)
    es.EnergyClustering(2, n_init=1, random_state=0).fit(w)
    base_rss = rss_mb()
    t0 = time.perf_counter()
    if case == "E":
        out["value"] = es.energy_distance(x, y)
    elif case == "E-dask":
        out["value"] = es.energy_distance(xd, yd)
    elif case == "T":
        r = es.energy_test(x, y, n_resamples=999, rng=1)
        out["value"], out["pvalue"], out["engine"] = r.statistic, r.pvalue, r.engine
    elif case == "T-dask":
        r = es.energy_test(xd, yd, n_resamples=999, rng=1)
        out["value"], out["pvalue"], out["engine"] = r.statistic, r.pvalue, r.engine
    elif case == "cluster":
        X = mixture(n, 10, 4, 1)
        base_rss = rss_mb()
        t0 = time.perf_counter()
        est = es.EnergyClustering(4, n_init=4, random_state=0, engine="streamed").fit(X)
        out["value"], out["n_iter"] = est.W_, est.n_iter_
    elif case == "nystrom":
        X = mixture(n, 10, 4, 1)
        base_rss = rss_mb()
        t0 = time.perf_counter()
        est = es.EnergyClustering(4, n_init=4, random_state=0, approximation="nystrom",
                                  n_components=256).fit(X)
        out["value"] = est.W_
    elif case == "nystrom-noW":
        from energystats.clustering import _engine as ce
        from energystats._core._metrics import resolve_metric
        X = mixture(n, 10, 4, 1)
        base_rss = rss_mb()
        t0 = time.perf_counter()
        gen = np.random.default_rng(0)
        feats = ce.NystromFeatures(X, resolve_metric("energy", 1.0, 1.0), 256, gen, 2)
        t_feat = time.perf_counter() - t0
        labels, it = ce.fit_features(feats.F, feats.g, 4, "hartigan", "k-means++", 4, 300, gen, 2)
        out["features_s"] = t_feat
        out["value"] = float(np.bincount(labels).min())
    elif case == "tile":
        from energystats._core import _dask as backends
        from energystats._core._metrics import resolve_metric
        b = backends.block_rows(2 * n, 10)
        XI, XJ = rng.normal(size=(b, 10)), rng.normal(size=(b, 10))
        met = resolve_metric("energy", 1.0, 1.0)
        plan = backends._working_plan(met, True, 4.0)
        cI, cJ = np.zeros(b, dtype=np.intp), np.ones(b, dtype=np.intp)
        backends._tile_sums(XI[:512], XJ[:512], cI[:512], cJ[:512], 2, plan, False, 1)
        t0 = time.perf_counter()
        backends._tile_sums(XI, XJ, cI, cJ, 2, plan, False, 1)
        out["block_rows"] = b
    out["seconds"] = time.perf_counter() - t0
    out["peak_mb"] = peak_mb()
    out["extra_mb"] = peak_mb() - base_rss
    if case.endswith("-dask"):
        peaks = client.run(peak_mb)
        out["worker_peak_mb"] = max(peaks.values())
        out["worker_extra_mb"] = max(peaks[w] - base[w] for w in peaks)
        client.close()
        cluster.close()
    print("RESULT " + json.dumps(out), flush=True)
""")


def run(case, n, timeout=3600):
    proc = subprocess.run([sys.executable, "-c", CHILD, case, str(n)], capture_output=True, text=True,
                          timeout=timeout)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"case {case} n={n} failed:\n{proc.stderr[-3000:]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller n (to try the script)")
    args = ap.parse_args()
    q = args.quick
    nE, nT, nC, nN1, nN2 = ((5000, 1000, 5000, 10000, 50000) if q else
                           (50000, 5000, 100000, 100000, 1000000))
    lines = []

    def emit(s=""):
        print(s, flush=True)
        lines.append(s)

    emit("Scale benchmark (benchmarks/bench_scale.py); 2 cores; d = 10; times in seconds.")
    emit("peak = the process's peak resident memory; extra = peak minus the resident memory before")
    emit("the call; dask rows: a LocalCluster of 2 workers × 1 thread holding the data, worker peaks.")
    emit()
    e = run("E", nE)
    ed = run("E-dask", nE)
    emit(f"exact E, n = m = {nE}:")
    emit(f"  threads       {e['seconds']:8.2f} s   peak {e['peak_mb']:7.0f} MB   extra {e['extra_mb']:6.0f} MB"
         f"   E = {e['value']:.15g}")
    emit(f"  LocalCluster  {ed['seconds']:8.2f} s   worker peak {ed['worker_peak_mb']:7.0f} MB   worker extra "
         f"{ed['worker_extra_mb']:6.0f} MB   E = {ed['value']:.15g}   ratio {ed['seconds'] / e['seconds']:.2f}")
    emit(f"  relative difference {abs(ed['value'] / e['value'] - 1):.1e}")
    t = run("T", nT)
    td = run("T-dask", nT)
    emit(f"energy test, n = m = {nT}, R = 999:")
    emit(f"  threads       {t['seconds']:8.2f} s   peak {t['peak_mb']:7.0f} MB   extra {t['extra_mb']:6.0f} MB"
         f"   engine {t['engine']}, p = {t['pvalue']}")
    emit(f"  LocalCluster  {td['seconds']:8.2f} s   worker peak {td['worker_peak_mb']:7.0f} MB   worker extra "
         f"{td['worker_extra_mb']:6.0f} MB   p = {td['pvalue']}")
    c = run("cluster", nC)
    emit(f"exact clustering (engine='streamed'), n = {nC}, k = 4, n_init = 4:")
    emit(f"  {c['seconds']:8.2f} s   peak {c['peak_mb']:7.0f} MB   extra {c['extra_mb']:6.0f} MB   W = {c['value']:.10g}")
    ny = run("nystrom", nN1)
    emit(f"Nyström clustering r = 256, n = {nN1} (exact W of the partition included):")
    emit(f"  {ny['seconds']:8.2f} s   peak {ny['peak_mb']:7.0f} MB   extra {ny['extra_mb']:6.0f} MB   W = {ny['value']:.10g}")
    ny2 = run("nystrom-noW", nN2)
    emit(f"Nyström clustering r = 256, n = {nN2}, features and restarts (no exact W):")
    emit(f"  {ny2['seconds']:8.2f} s (features {ny2['features_s']:.2f} s)   peak {ny2['peak_mb']:7.0f} MB   "
         f"extra {ny2['extra_mb']:6.0f} MB")
    per_pair = e["seconds"] * 2 / (2 * nE) ** 2 * 2  # core-seconds per pair of the threads E (2 cores)
    emit(f"  the exact W at n = {nN2} would add about {per_pair * nN2**2 / 2 / 2:.0f} s on these 2 cores "
         f"({per_pair * 1e9:.2f} core-ns per pair, measured by the exact E above)")
    tile = run("tile", 10**6)
    b = tile["block_rows"]
    nb = -(-2 * 10**6 // b)
    tiles = nb * (nb + 1) // 2
    tasks = tiles + (tiles - 1) + 2 * nb + 2  # tiles, tree additions, chunks and their max-abs, plan, result
    emit(f"extrapolation, exact E at n = m = 10^6 on 100 workers (1 thread each):")
    emit(f"  one tile ({b}×{b} rows, d = 10, one thread): {tile['seconds']:.3f} s")
    emit(f"  {nb} row blocks -> {tiles} tiles; graph about {tasks} tasks")
    emit(f"  compute {tiles * tile['seconds'] / 100:.0f} s; scheduler overhead about "
         f"{tasks * 1e-3:.0f} s of scheduler time (~1 ms per task), mostly overlapped with the compute")
    if not q:
        with open("docs/benchmarks/scale.txt", "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
