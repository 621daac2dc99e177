"""ns per pair of the energy-distance pair kernel beside a C probe of the same arithmetic.

The probe (``benchmarks/probe_pairs.c``) is built here with ``-O3 -march=native
-fno-math-errno -fopenmp`` and sums the roots of the squared distances of all
pairs i < j of a pooled sample of N points, the plain way (one running sum)
and with eight running sums.  The package runs
``energy_distance(x, y, method="pairwise")`` on n = m = N / 2 points (the same
pairs, plus its k×k group sums), with the instruction set it chose at import
and, in a subprocess, with ``ENERGYSTATS_SIMD=baseline``; the two results must
agree to 1e-13 relative (they are built to give the same bits).

    python benchmarks/bench_simd.py            # the table of docs/benchmarks/simd.txt

Run it on an idle machine: timings are the best of three.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [(20000, 1), (20000, 2), (20000, 10), (6000, 100)]
THREADS = (1, 2)


def build_probe(tmp):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        return None, f"no C compiler ({cc}) on PATH"
    exe = os.path.join(tmp, "probe_pairs")
    cmd = [cc, "-O3", "-march=native", "-fno-math-errno", "-fopenmp",
           os.path.join(HERE, "probe_pairs.c"), "-o", exe, "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        return None, f"building the probe failed: {done.stderr.strip()[:300]}"
    return exe, " ".join(cmd[:5])


def probe(exe, N, d, nt, lanes):
    out = subprocess.run([exe, str(N), str(d), str(nt), str(lanes)], capture_output=True, text=True,
                         check=True).stdout.split()
    return float(out[5])


def package(N, d, nt):
    """(seconds, value, level) of the package's pair kernel, best of 3 (run in this process)."""
    import energystats as es
    from energystats._lib import _pairwise

    rng = np.random.default_rng(0)
    x = rng.uniform(size=(N // 2, d))
    y = rng.uniform(size=(N // 2, d))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        value = es.energy_distance(x, y, method="pairwise", n_threads=nt)
        best = min(best, time.perf_counter() - t0)
    return best, value, _pairwise.SIMD_LEVEL


def package_in(level, N, d, nt):
    env = dict(os.environ, ENERGYSTATS_SIMD=level)
    code = (f"import json, sys; sys.path.insert(0, {HERE!r}); import bench_simd as b; "
            f"print(json.dumps(b.package({N}, {d}, {nt})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        exe, how = build_probe(tmp)
        print(f"probe: {how}")
        print("ns per pair (best of 3); pairs = N(N-1)/2; the package on n = m = N/2\n")
        print(f"{'N':>6} {'d':>4} {'thr':>3} | {'probe':>7} {'probe8':>7} | {'package':>7} {'level':>7}"
              f" {'baseline':>8} | {'pkg/probe':>9} {'base/pkg':>8} | {'rel. diff':>9}")
        worst = 0.0
        for N, d in CASES:
            pairs = N * (N - 1) / 2
            for nt in THREADS:
                p1 = probe(exe, N, d, nt, 1) if exe else float("nan")
                p8 = probe(exe, N, d, nt, 8) if exe else float("nan")
                t, v, level = package_in("avx512", N, d, nt)
                tb, vb, _ = package_in("baseline", N, d, nt)
                rel = abs(v - vb) / abs(vb)
                worst = max(worst, rel)
                ns, nsb = t / pairs * 1e9, tb / pairs * 1e9
                print(f"{N:>6} {d:>4} {nt:>3} | {p1:>7.3f} {p8:>7.3f} | {ns:>7.3f} {level:>7}"
                      f" {nsb:>8.3f} | {ns / p1:>9.2f} {nsb / ns:>8.2f} | {rel:>9.1e}", flush=True)
        print(f"\nlargest relative difference, chosen instruction set vs baseline: {worst:.1e}")
        if worst > 1e-13:
            sys.exit("the instruction sets disagree beyond 1e-13")


if __name__ == "__main__":
    main()
