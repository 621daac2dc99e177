"""The fair share on a busy machine: the change-point, energy-test and clustering workloads,
quiet and with busy-loop processes beside them.

Each workload runs in a fresh process (the package's thread choice sees the machine as it is),
best of ``--reps``; then again with ``--loaders`` busy-loop processes (default: one per core)
started beside it.  Reported per workload: wall time, the process's CPU time (user + system,
all its threads), CPU/wall, and the busy/quiet wall ratio.  With k loaders on c cores the
fair share of the machine is c/(c + k) of it, so a workload that scales perfectly takes
(c + k)/c times its quiet wall time when its threads are no more than the cores; the issue's
target is busy/quiet <= 2.5 on 2 cores with 2 loaders.

    python benchmarks/bench_busy.py                   # 2 loaders on a 2-core machine
    ENERGYSTATS_SIMD=avx2 python benchmarks/bench_busy.py --only changepoint
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

WORKLOADS = {
    "changepoint": ("e_divisive T=5000, d=3, 3 changes, R=199 sequential", r"""
import numpy as np, energystats as es
rng = np.random.default_rng(0)
T, d = 5000, 3
Z = rng.normal(size=(T, d))
Z[1250:2500] += 1.0
Z[2500:3750] *= 2.0
Z[3750:, 1] = 0.8 * Z[3750:, 0] + 0.6 * Z[3750:, 1]
def run():
    return es.e_divisive(Z, n_resamples=199, rng=1).changepoints.tolist()
"""),
    "energy_test": ("energy_test n=m=1000, d=10, R=999", r"""
import numpy as np, energystats as es
rng = np.random.default_rng(0)
x = rng.normal(size=(1000, 10)); y = rng.normal(size=(1000, 10)) + 0.05
def run():
    return float(es.energy_test(x, y, n_resamples=999, rng=1).pvalue)
"""),
    "clustering": ("EnergyClustering k=4, n=5000, d=10, n_init=10", r"""
import sys, numpy as np, energystats as es
sys.path.insert(0, {here!r})
from bench_cluster import make_data
X, _ = make_data(5000, 10, 4, np.random.default_rng(0))
def run():
    return float(es.EnergyClustering(4, n_init=10, random_state=0).fit(X).W_)
"""),
}

CHILD = r"""
import json, os, time
{setup}
run()  # warm up
best = None
for _ in range({reps}):
    w0, c0 = time.perf_counter(), time.process_time()
    out = run()
    w, c = time.perf_counter() - w0, time.process_time() - c0
    if best is None or w < best[0]:
        best = (w, c)
print(json.dumps({{"wall": best[0], "cpu": best[1], "out": out, "load": os.getloadavg()[0]}}))
"""


def loaders(k):
    """``k`` busy-loop processes (pure Python spinning); terminate them when done."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(k)]


def measure(name, reps):
    setup = WORKLOADS[name][1].format(here=HERE)
    code = CHILD.format(setup=setup, reps=reps)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    from energystats._lib import _pairwise

    cores = len(os.sched_getaffinity(0))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loaders", type=int, default=cores, help="busy-loop processes (one per core)")
    ap.add_argument("--reps", type=int, default=3, help="best of this many runs")
    ap.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), default=list(WORKLOADS))
    args = ap.parse_args(argv)
    print(f"# python benchmarks/bench_busy.py {' '.join(argv or sys.argv[1:])}".rstrip())
    print(f"# {platform.machine()}, {cores} cores, instruction set {_pairwise.SIMD_LEVEL}; "
          f"load before {os.getloadavg()[0]:.2f}; busy = {args.loaders} busy-loop processes")
    print(f"{'workload':<48} {'quiet s':>8} {'cpu/wall':>8} {'busy s':>8} {'cpu/wall':>8} "
          f"{'busy/quiet':>10}")
    for name in args.only:
        quiet = measure(name, args.reps)
        procs = loaders(args.loaders)
        try:
            time.sleep(0.5)
            busy = measure(name, args.reps)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait()
        assert busy["out"] == quiet["out"], (name, busy["out"], quiet["out"])
        print(f"{WORKLOADS[name][0]:<48} {quiet['wall']:>8.2f} {quiet['cpu'] / quiet['wall']:>8.2f} "
              f"{busy['wall']:>8.2f} {busy['cpu'] / busy['wall']:>8.2f} "
              f"{busy['wall'] / quiet['wall']:>10.2f}", flush=True)


if __name__ == "__main__":
    main()
