"""Balancing weights: the simulation of the guide page, and time and memory of the QP solvers.

Three parts (each alone with its flag, all three by default):

* ``--simulation``: a confounded binary treatment with a known effect (ATE = 1), R data
  sets of n rows (fixed seeds): the bias and RMSE of the difference of (weighted) means with
  no weights, inverse-probability weights from a logistic regression (scikit-learn, when
  installed) and energy balancing weights (ATE, improved); the numbers of
  ``docs/guide/balance.rst``;
* ``--solvers``: ATE weights at n = 2 000 and 10 000, d = 10, with OSQP (the default) and
  Clarabel: seconds, the objective, the KKT residual, and the peak resident memory of the
  process that ran it (each case in a child process, ``ru_maxrss``); n = 10 000 needs about
  5.3 GiB (OSQP; Clarabel 7.6 GiB; ``memory_budget`` raised here) and minutes;
* ``--cells K``: the cell approximation (``cells=K`` per level, OSQP) on the data of
  ``--solvers`` at ``--sizes`` (10 000 and 100 000 by default in a run of everything); with
  ``--simulation``, the simulation adds the cell approximation with each K given;
* ``--streamed``: the weighted energy distance at n = m = 10⁵ (``energy_distance(weights=)``,
  streamed, no n×n matrix): seconds and peak memory; skipped when this build's
  ``energy_distance`` has no ``weights``;
* ``--firstorder``: the matrix-free first-order solver (``solver='firstorder'``) on the data
  of ``--solvers`` (ATE, d = 10): at n = 20 000 its seconds, tracemalloc peak, peak
  resident memory, KKT residual and products with the programme's matrix, and the cell
  approximation's (``cells=1000`` per level, OSQP) objective gap against that exact
  optimum; at n = 3 000 against OSQP (objective gap, largest weight difference).  Each
  size in a child process; the load (``os.getloadavg``) and the CPU's vector instruction
  sets are printed beside the figures;
* ``--bootstrap``: ``weighted_effect``'s resampling with its default (half-samples that
  solve the weights again) on the data of ``--solvers`` (ATE, d = 10) at ``--sizes`` with
  ``--n-boot`` resamples (2 000 rows and 200 resamples for the issue's row): seconds,
  seconds per resample, and the peak resident memory of the parent and of its worker
  processes (``ru_maxrss`` of the process and of its waited-for children).  ``--busy``
  runs two busy-loop processes beside it (a loaded machine).

Run::

    python benchmarks/bench_balance.py --simulation --reps 200     # ~1-2 minutes on 2 cores
    python benchmarks/bench_balance.py --solvers --sizes 2000 10000
    python benchmarks/bench_balance.py --simulation --reps 200 --n 300 --cells 25 50
    python benchmarks/bench_balance.py --cells 1000 --sizes 10000 100000
    python benchmarks/bench_balance.py --bootstrap --sizes 2000 --n-boot 200
    python benchmarks/bench_balance.py --firstorder                  # ~5-10 minutes on 2 cores
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import time

import numpy as np

import energystats as es


def simulate(seed, n):
    """X ~ N(0, I_4); P(T = 1) = logistic(-0.3 + 0.8 x0 + 0.6 x1^2 - 0.5 x2 x3);
    Y = T + x0 + x1^2 + 0.5 x2 x3 + N(0, 1): the effect is 1, and a logistic model linear in
    x misses both nonlinear confounders."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    lin = -0.3 + 0.8 * X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.5 * X[:, 2] * X[:, 3]
    t = (rng.uniform(size=n) < 1 / (1 + np.exp(-lin))).astype(int)
    y = t + X[:, 0] + X[:, 1] ** 2 + 0.5 * X[:, 2] * X[:, 3] + rng.normal(size=n)
    return X, t, y


def weighted_diff(y, t, w):
    return np.average(y[t == 1], weights=w[t == 1]) - np.average(y[t == 0], weights=w[t == 0])


def run_simulation(reps, n, cells=()):
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        LogisticRegression = None
    est = {"unweighted": [], "logistic IPW": [], "energy": []}
    est.update({f"energy, cells={c}": [] for c in cells})
    for r in range(reps):
        X, t, y = simulate(1000 + r, n)
        est["unweighted"].append(weighted_diff(y, t, np.ones(n)))
        if LogisticRegression is not None:
            p = LogisticRegression(C=1e6, max_iter=1000).fit(X, t).predict_proba(X)[:, 1]
            est["logistic IPW"].append(weighted_diff(y, t, np.where(t == 1, 1 / p, 1 / (1 - p))))
        est["energy"].append(weighted_diff(y, t, es.energy_balancing_weights(X, t).weights))
        for c in cells:  # the cell approximation, k-means seeded by the data set's seed
            w = es.energy_balancing_weights(X, t, cells=c, rng=1000 + r).weights
            est[f"energy, cells={c}"].append(weighted_diff(y, t, w))
    print(f"simulation: {reps} data sets of n = {n}, true ATE = 1 (seeds 1000..{1000 + reps - 1})")
    print(f"{'weights':<20}{'bias':>9}{'RMSE':>9}{'MC s.e. of bias':>17}")
    for name, v in est.items():
        if not v:
            print(f"{name:<20}  (scikit-learn not installed)")
            continue
        e = np.asarray(v) - 1.0
        print(f"{name:<20}{e.mean():>9.3f}{np.sqrt((e ** 2).mean()):>9.3f}"
              f"{e.std(ddof=1) / np.sqrt(len(e)):>17.3f}")


_CHILD = """
import json, resource, sys, time
import numpy as np, energystats as es
n, solver = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 10))
t = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n) > 0.5).astype(int)
es.energy_balancing_weights(X[:20], t[:20] if len(set(t[:20])) == 2 else np.arange(20) % 2,
                            solver=solver)  # warm-up: the imports of the first call
t0 = time.perf_counter()
r = es.energy_balancing_weights(X, t, solver=solver, memory_budget=2**36)
dt = time.perf_counter() - t0
print(json.dumps({"seconds": dt, "objective": r.objective, "kkt": r.kkt_residual,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


_CELLS_CHILD = """
import json, resource, sys, time
import numpy as np, energystats as es
n, cells, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 10))
score = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
t = (score > 0.5).astype(int)
if kind == "binary":
    f = lambda X, t, **kw: es.energy_balancing_weights(X, t, **kw)
else:  # a continuous treatment: independence weights
    f, t = (lambda X, t, **kw: es.independence_weights(X, t, **kw)), score
f(X[:40], np.arange(40) % 2 if kind == "binary" else score[:40], cells=5, rng=0)  # warm-up
t0 = time.perf_counter()
r = f(X, t, cells=cells, rng=0)
dt = time.perf_counter() - t0
print(json.dumps({"seconds": dt, "objective": r.objective, "kkt": r.kkt_residual, "cells": r.cells,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_cells(sizes, cells):
    """The cell approximation (OSQP): the data of --solvers, ``cells`` per treatment level
    (binary: energy balancing weights, ATE; continuous: independence weights of the score
    that made the binary treatment); "cells" printed is the total."""
    print(f"{'n':>7} {'treatment':<11}{'cells':>6}{'seconds':>9}{'objective':>20}{'KKT residual':>14}"
          f"{'peak RSS':>11}")
    for kind in ("binary", "continuous"):
        for n in sizes:
            proc = subprocess.run([sys.executable, "-c", _CELLS_CHILD, str(n), str(cells), kind],
                                  capture_output=True, text=True)
            if proc.returncode:
                print(f"{n:>7} {kind:<11}{cells:>6} failed: {proc.stderr.strip().splitlines()[-1]}")
                continue
            r = json.loads(proc.stdout)
            print(f"{n:>7} {kind:<11}{r['cells']:>6}{r['seconds']:>9.2f}{r['objective']:>20.12g}"
                  f"{r['kkt']:>14.1e}{r['peak_mib']:>8.0f} MiB")


def run_solvers(sizes):
    print(f"{'n':>7} {'solver':<9}{'seconds':>9}{'objective':>20}{'KKT residual':>14}{'peak RSS':>11}")
    for n in sizes:
        for solver in ("osqp", "clarabel"):
            proc = subprocess.run([sys.executable, "-c", _CHILD, str(n), solver], capture_output=True,
                                  text=True)
            if proc.returncode:
                print(f"{n:>7} {solver:<9} failed: {proc.stderr.strip().splitlines()[-1]}")
                continue
            r = json.loads(proc.stdout)
            print(f"{n:>7} {solver:<9}{r['seconds']:>9.2f}{r['objective']:>20.12g}{r['kkt']:>14.1e}"
                  f"{r['peak_mib']:>8.0f} MiB")


_FIRSTORDER_CHILD = """
import json, os, resource, sys, time, tracemalloc
import numpy as np, energystats as es
n, versus = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 10))
t = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n) > 0.5).astype(int)
es.energy_balancing_weights(X[:40], np.arange(40) % 2, solver="firstorder")  # warm-up
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
tracemalloc.start()
t0 = time.perf_counter()
r = es.energy_balancing_weights(X, t, solver="firstorder")
dt = time.perf_counter() - t0
peak = tracemalloc.get_traced_memory()[1] / 2**20
tracemalloc.stop()
out = {"seconds": dt, "objective": r.objective, "kkt": r.kkt_residual, "products": r.iterations,
       "tracemalloc_mib": peak, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
       "rss_before_mib": rss0, "load": os.getloadavg()[0]}
t0 = time.perf_counter()
if versus == "osqp":
    q = es.energy_balancing_weights(X, t, solver="osqp", memory_budget=2**36)
    out.update(other_seconds=time.perf_counter() - t0, other_objective=q.objective,
               other_kkt=q.kkt_residual, max_weight_diff=float(np.abs(q.weights - r.weights).max()))
else:
    q = es.energy_balancing_weights(X, t, cells=int(versus), rng=0)
    out.update(other_seconds=time.perf_counter() - t0, other_objective=q.objective,
               other_kkt=q.kkt_residual, cells=q.cells)
print(json.dumps(out))
"""


def _cpu():
    """The CPU's model and vector instruction sets (from /proc/cpuinfo, Linux only)."""
    try:
        text = open("/proc/cpuinfo").read()
    except OSError:
        return "unknown CPU"
    model = next((ln.split(":", 1)[1].strip() for ln in text.splitlines()
                  if ln.startswith("model name")), "unknown CPU")
    flags = next((ln.split(":", 1)[1].split() for ln in text.splitlines()
                  if ln.startswith("flags")), [])
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f") if f in flags]
    return f"{model}, {len(os.sched_getaffinity(0))} cores usable, {' '.join(simd)}"


def run_firstorder():
    """The first-order solver at n = 20 000 (with the cell approximation's gap) and at
    n = 3 000 against OSQP, each in a child process."""
    print(f"first-order solver, ATE, d = 10: {_cpu()}; "
          f"load before {os.getloadavg()[0]:.2f}")
    for n, versus in ((20_000, "1000"), (3_000, "osqp")):
        proc = subprocess.run([sys.executable, "-c", _FIRSTORDER_CHILD, str(n), versus],
                              capture_output=True, text=True)
        if proc.returncode:
            print(f"n = {n}: failed: {proc.stderr.strip().splitlines()[-1]}")
            continue
        r = json.loads(proc.stdout)
        print(f"n = {n}: firstorder {r['seconds']:.1f} s, {r['products']} products "
              f"({r['seconds'] / r['products']:.3f} s each), KKT residual {r['kkt']:.1e}, "
              f"objective {r['objective']:.12g}; tracemalloc peak {r['tracemalloc_mib']:.1f} MiB, "
              f"peak RSS {r['rss_mib']:.0f} MiB ({r['rss_before_mib']:.0f} MiB before the call); "
              f"load {r['load']:.2f} at its end")
        gap = (r["other_objective"] - r["objective"]) / r["objective"]
        if versus == "osqp":
            print(f"           osqp {r['other_seconds']:.1f} s, KKT residual {r['other_kkt']:.1e}, "
                  f"objective {r['other_objective']:.12g}: relative gap (osqp - firstorder) "
                  f"{gap:.1e}, largest weight difference {r['max_weight_diff']:.1e}")
        else:
            print(f"           cells={versus} per level ({r['cells']} cells, osqp) "
                  f"{r['other_seconds']:.1f} s, objective {r['other_objective']:.12g}: above "
                  f"the exact optimum by {gap:.2%}")


def run_streamed(n):
    if "weights" not in inspect.signature(es.energy_distance).parameters:
        print("streamed weighted energy distance: skipped (energy_distance has no `weights` in this "
              "build)")
        return
    import resource

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(n, 10)), rng.normal(0.1, 1, size=(n, 10))
    u, v = rng.uniform(0.5, 2, n), rng.uniform(0.5, 2, n)
    t0 = time.perf_counter()
    e = es.energy_distance(x, y, weights=u, weights_y=v)
    print(f"weighted energy distance, n = m = {n}, d = 10: {time.perf_counter() - t0:.1f} s, E = {e:.6g}, "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


_BOOT_CHILD = """
import json, os, platform, resource, sys, time
import numpy as np, energystats as es
n, n_boot, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 10))
score = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
t = (score > 0.5).astype(int)
y = t + X[:, 0] + X[:, 1] ** 2 + rng.normal(size=n)
t0 = time.perf_counter()
res = es.energy_balancing_weights(X, t)
t_w = time.perf_counter() - t0
t0 = time.perf_counter()
eff = es.weighted_effect(y, res, n_boot=n_boot, rng=1, n_threads=threads)
dt = time.perf_counter() - t0
print(json.dumps({"weights_s": t_w, "seconds": dt, "estimate": float(eff.estimate[0]),
                  "se": float(eff.std_error[0]), "failed": eff.n_failed,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "children_peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "load": os.getloadavg()[0]}))
"""


def _busy(k):
    """``k`` busy-loop processes (a loaded machine); terminate them when done."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]


def run_bootstrap(sizes, n_boot, busy):
    from energystats._core._validation import check_n_threads

    threads = check_n_threads(None)
    print(f"weighted_effect's resampling, its default (half-samples that solve the weights "
          f"again; ATE, d = 10, n_threads = {threads}; "
          f"{'two busy-loop processes beside it' if busy else 'no busy loops added'})")
    print(f"{'n':>7}{'n_boot':>8}{'weights s':>11}{'bootstrap s':>13}{'s/resample':>12}"
          f"{'parent RSS':>12}{'worker RSS':>12}{'load':>6}")
    loaders = _busy(2) if busy else []
    try:
        for n in sizes:
            proc = subprocess.run([sys.executable, "-c", _BOOT_CHILD, str(n), str(n_boot),
                                   str(threads)], capture_output=True, text=True)
            if proc.returncode:
                print(f"{n:>7} failed: {proc.stderr.strip().splitlines()[-1]}")
                continue
            r = json.loads(proc.stdout)
            print(f"{n:>7}{n_boot:>8}{r['weights_s']:>11.2f}{r['seconds']:>13.1f}"
                  f"{r['seconds'] / n_boot:>12.3f}{r['peak_mib']:>8.0f} MiB"
                  f"{r['children_peak_mib']:>8.0f} MiB{r['load']:>6.1f}")
    finally:
        for p in loaders:
            p.terminate()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--simulation", action="store_true")
    ap.add_argument("--solvers", action="store_true")
    ap.add_argument("--streamed", action="store_true")
    ap.add_argument("--bootstrap", action="store_true")
    ap.add_argument("--firstorder", action="store_true",
                    help="the first-order solver at n = 20 000 (and the cells' gap), and at "
                         "n = 3 000 against OSQP")
    ap.add_argument("--n-boot", type=int, default=200)
    ap.add_argument("--busy", action="store_true", help="two busy-loop processes beside it")
    ap.add_argument("--cells", type=int, nargs="*", default=None,
                    help="with --simulation: also the cell approximation with these cells per "
                         "level; alone: time the cell approximation (1000 cells per level) at "
                         "--sizes")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=300, help="rows of each simulated data set")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000])
    args = ap.parse_args()
    every = not (args.simulation or args.solvers or args.streamed or args.bootstrap
                 or args.firstorder or args.cells is not None)
    if every or args.simulation:
        run_simulation(args.reps, args.n, args.cells or ())
    if every or args.solvers:
        run_solvers(args.sizes)
    if every or (args.cells is not None and not args.simulation):
        run_cells([10_000, 100_000] if every else args.sizes, (args.cells or [1000])[0])
    if every or args.streamed:
        run_streamed(100_000)
    if every or args.firstorder:
        run_firstorder()
    if every or args.bootstrap:
        run_bootstrap([2000] if every else args.sizes, args.n_boot, args.busy)


if __name__ == "__main__":
    main()
