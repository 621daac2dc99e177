"""Energy clustering speed and memory: energystats vs R ``energy::kgroups`` vs a plain numpy Hartigan.

Data: a mixture of k = 4 Gaussians in d = 10 (unit covariance, centres drawn
N(0, 1.5² I)), n in {1000, 5000, 10000}; every method keeps the best of
n_init = 10 starts.  W (the within dispersion of docs/theory.rst; Székely &
Rizzo 2013, "Energy statistics: A class of statistics based on distances")
of every returned partition is recomputed by ``energystats.dispersion`` on
its labels, so the columns are comparable.

* energystats: ``EnergyClustering(algorithm="hartigan")`` — Gram matrix (O(n²)
  memory, built by the compiled kernel), k-means++ seeding, Cython Hartigan
  sweeps with O(n) bookkeeping per move, restarts in threads.
* numpy: the same algorithm with ``Q_l(x_i)`` recomputed from the Gram row
  at every point (``np.bincount``, O(n) per point, O(n²) per sweep), a
  Python loop over points: the plain implementation.
* R: ``energy::kgroups(x, k, iter.max = 300, nstart = 10)`` through Rscript
  on the same data (CSV in a temp dir); time measured inside R.

Peak memory is Python's tracemalloc peak (numpy allocations included) for
the Python methods; R's is not measured.  Run::

    python benchmarks/bench_cluster.py                 # n = 1000, 5000, 10000
    python benchmarks/bench_cluster.py --n 1000 5000 --numpy-max 5000 --threads 1 2
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
import tracemalloc

import numpy as np

import energystats as es
from energystats.clustering import _engine as ce


def make_data(n, d, k, rng):
    centres = rng.normal(scale=1.5, size=(k, d))
    y = rng.integers(0, k, n)
    return rng.normal(size=(n, d)) + centres[y], y


def numpy_hartigan(G, labels, k, max_iter=300):
    """Plain Hartigan: Q_l(x_i) from the Gram row at each point (O(n) per point)."""
    n = G.shape[0]
    labels = labels.copy()
    sizes = np.bincount(labels, minlength=k).astype(float)
    Q = np.array([G[np.ix_(labels == l, labels == l)].sum() for l in range(k)])
    diag = np.diagonal(G)
    tol = ce.tolerance(G)
    for sweep in range(max_iter):
        moved = 0
        for i in range(n):
            j = labels[i]
            if sizes[j] <= 1:
                continue
            qx = np.bincount(labels, weights=G[i], minlength=k)
            base = (Q[j] / sizes[j] - 2 * qx[j] + diag[i]) / (sizes[j] - 1)
            dq = base - (Q / sizes - 2 * qx - diag[i]) / (sizes + 1)
            dq[j] = -np.inf
            l = int(np.argmax(dq))
            if dq[l] > tol:
                Q[j] += -2 * qx[j] + diag[i]
                Q[l] += 2 * qx[l] + diag[i]
                sizes[j] -= 1
                sizes[l] += 1
                labels[i] = l
                moved += 1
        if moved == 0:
            break
    return labels, float(np.trace(G) - np.sum(Q / sizes))


def run_numpy(X, k, n_init, seed):
    rng = np.random.default_rng(seed)
    G = ce.centred_gram(es.pairwise(X))
    best = None
    for _ in range(n_init):
        lab0 = ce.kmeanspp_labels(G, k, rng)
        lab, W = numpy_hartigan(G, lab0, k)
        if best is None or W < best[1]:
            best = (lab, W)
    return best[0]


def measure(fn):
    tracemalloc.start()
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, dt, peak / 2**20


R_SCRIPT = """
library(energy)
x <- as.matrix(read.csv("{csv}", header = FALSE))
set.seed({seed})
t <- system.time(r <- kgroups(x, {k}, iter.max = 300, nstart = {n_init}))[["elapsed"]]
write.table(r$cluster, "{out}", row.names = FALSE, col.names = FALSE)
cat(sprintf("%.6f %.10g %d\\n", t, r$W, r$iterations))
"""


def run_r(X, k, n_init, seed, timeout):
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        csv, out = os.path.join(tmp, "x.csv"), os.path.join(tmp, "lab.txt")
        np.savetxt(csv, X, delimiter=",", fmt="%.17g")
        script = os.path.join(tmp, "run.R")
        with open(script, "w") as fh:
            fh.write(R_SCRIPT.format(csv=csv, out=out, seed=seed, k=k, n_init=n_init))
        try:
            res = subprocess.run(["Rscript", script], capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout"
        if res.returncode != 0:
            return "error: " + res.stderr.strip().splitlines()[-1] if res.stderr else "error"
        t, W, it = res.stdout.split()
        labels = np.loadtxt(out).astype(int)
        return float(t), float(W), labels


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1000, 5000, 10000])
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--threads", type=int, nargs="+", default=[None])
    ap.add_argument("--numpy-max", type=int, default=5000, help="largest n for the plain numpy Hartigan")
    ap.add_argument("--r-timeout", type=float, default=900)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"# d = {args.d}, k = {args.k}, n_init = {args.n_init}; W recomputed by es.dispersion on each "
          "method's labels; time in s, peak = tracemalloc peak in MiB")
    print("| n | method | threads | time (s) | peak MiB | W | W / W_energystats | speed-up of energystats |")
    print("|---|---|---|---|---|---|---|---|")
    times = {}
    for n in args.n:
        X, _ = make_data(n, args.d, args.k, rng)
        rows = []
        base_time = None
        for nt in args.threads:
            est, dt, peak = measure(lambda: es.EnergyClustering(args.k, n_init=args.n_init, random_state=args.seed,
                                                                n_threads=nt).fit(X))
            W = es.dispersion(X, est.labels_).W
            if base_time is None:
                base_time, base_W = dt, W
            times.setdefault(nt, []).append((n, dt))
            rows.append(("energystats hartigan", nt or "all", dt, f"{peak:.0f}", W))
        lloyd, dt, peak = measure(lambda: es.EnergyClustering(args.k, algorithm="lloyd", n_init=args.n_init,
                                                              random_state=args.seed).fit(X))
        rows.append(("energystats lloyd", "all", dt, f"{peak:.0f}", es.dispersion(X, lloyd.labels_).W))
        if n <= args.numpy_max:
            lab, dt, peak = measure(lambda: run_numpy(X, args.k, args.n_init, args.seed))
            rows.append(("numpy hartigan", 1, dt, f"{peak:.0f}", es.dispersion(X, lab).W))
        r = run_r(X, args.k, args.n_init, args.seed, args.r_timeout)
        if isinstance(r, tuple):
            t, W_r, lab = r
            W_check = es.dispersion(X, lab).W
            rows.append(("R energy::kgroups", 1, t, "—", W_check))
            if not np.isclose(W_r, W_check, rtol=1e-6):
                print(f"note: R reports W = {W_r:.6g}, recomputed {W_check:.6g}")
        elif r is not None:
            rows.append(("R energy::kgroups", 1, float("nan"), "—", float("nan")))
            print(f"note: R {r}")
        for name, nt, dt, peak, W in rows:
            print(f"| {n} | {name} | {nt} | {dt:.3f} | {peak} | {W:.6g} | {W / base_W:.6f} | "
                  f"{dt / base_time:.1f}× |", flush=True)
    for nt, tl in times.items():
        if len(tl) > 1:
            ns = np.array([a for a, _ in tl], float)
            ts = np.array([b for _, b in tl])
            slope = np.polyfit(np.log(ns), np.log(ts), 1)[0]
            print(f"# energystats (threads={nt or 'all'}): time grows like n^{slope:.2f} over n = "
                  f"{', '.join(str(int(a)) for a in ns)}")


if __name__ == "__main__":
    main()
