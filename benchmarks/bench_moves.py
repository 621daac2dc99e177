"""Cost of one Hartigan move in the matrix engine, per point, by instruction set.

A move of point i from cluster j to cluster l subtracts row i of the Gram matrix G
from column j of the n×k table of Q_l(x) and adds it to column l.  With AVX-512 and
k ≤ 8 the compiled kernel passes over the table eight entries at a time; AVX2 and
the baseline build change the two columns entry by entry (the same bits); every
build prefetches the row of G 2 kB ahead.  This
times one sweep from random labels that stops after 400 moves, minus the same sweep
stopped at its first move, for k = 4 and growing n (G = A Aᵀ, A normal n×5), the
best of five, each instruction set in a subprocess (``ENERGYSTATS_SIMD``).

    python benchmarks/bench_moves.py
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

CHILD = r"""
import json, time
import numpy as np
from energystats._lib import _hartigan
k = 4
out = {}
for n in (500, 1000, 2000, 5000):
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, 5))
    G = np.ascontiguousarray(A @ A.T)
    labels0 = rng.integers(0, k, n).astype(np.intp)
    QX, Q, sizes = np.zeros((n, k)), np.zeros(k), np.zeros(k, dtype=np.intp)
    best = {}
    for moves in (0, 400):
        b = float("inf")
        for _ in range(5):
            labels = labels0.copy()
            _hartigan.hartigan(G, labels, k, QX, Q, sizes, 1, -np.inf, 0, True, False)
            t = time.perf_counter()
            r = _hartigan.hartigan(G, labels, k, QX, Q, sizes, 1, 0.0, moves, False, False)
            b = min(b, time.perf_counter() - t)
        best[moves] = (b, r[1])
    (t0, m0), (t1, m1) = best[0], best[400]
    out[n] = (t1 - t0) / max(m1 - m0, 1) / n * 1e9
print(json.dumps(out))
"""


def main():
    from energystats._lib import _hartigan  # noqa: F401  (fails early when not built)
    from energystats._lib import _permutation
    levels = [lv for lv in ("baseline", "avx2", "avx512")
              if ("baseline", "avx2", "avx512").index(lv) <= ("baseline", "avx2", "avx512").index(
                  _permutation.SIMD_LEVEL)]
    res = {}
    for lv in levels:
        env = dict(os.environ, ENERGYSTATS_SIMD=lv)
        p = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                           check=True)
        res[lv] = json.loads(p.stdout)
    print(f"ns per point of one Hartigan move, k = 4, one thread; best of 5 ({', '.join(levels)})")
    print(f"{'n':>6} " + " ".join(f"{lv:>9}" for lv in levels))
    for n in res[levels[0]]:
        print(f"{n:>6} " + " ".join(f"{res[lv][n]:>9.2f}" for lv in levels))


if __name__ == "__main__":
    main()
