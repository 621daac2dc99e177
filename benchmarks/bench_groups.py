"""The matrix engine's three paths per relabelling, for growing numbers of groups k.

The matrix engine evaluates a batch of relabellings with BLAS products of
one-hot group matrices (O(k·n²) per relabelling, O(k·n) memory), by summing
the n×n matrix under the groups' bit masks in a compiled kernel (about
(k − 1)²/(2k)·n² additions, only on the points of the first k − 1 groups), or by
folding the rows of the matrix by label in a compiled kernel (O(n²), O(n)
memory).  This prints the three times per relabelling (the masked sums on the
instruction set chosen at import, for k ≤ 16) and the largest relative
difference from the fold; ``energystats._core._group_sums.FOLD_MIN_GROUPS``,
and ``MASK_MAX_GROUPS`` were chosen from it.  Set
``ENERGYSTATS_SIMD`` to time the masked sums on a narrower instruction set.

    python benchmarks/bench_groups.py [--n 2000] [--threads 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from energystats._core import _engine, _group_sums, _permutation
from energystats._lib import _permutation as _kernels
from energystats._core._metrics import resolve_metric


def per_relabelling(engine, codes, repeat=7):
    engine.group_sums(codes[:4])  # warm up
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = engine.group_sums(codes)
        best = min(best, time.perf_counter() - t0)
    return best / codes.shape[0], out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.n
    X = rng.normal(size=(n, 3))
    D = _engine.pairwise_values(X, X, resolve_metric("energy", 1.0, 1.0), args.threads, aligned=True)
    print(f"n = {n}, {args.threads} threads, batches of {args.batch}, best of 7; masked sums on "
          f"{_kernels.SIMD_LEVEL}; FOLD_MIN_GROUPS = {_group_sums.FOLD_MIN_GROUPS}, MASK_MAX_GROUPS = "
          f"{_group_sums.MASK_MAX_GROUPS}")
    print(f"{'k':>5} {'masked [ms]':>12} {'one-hot [ms]':>13} {'fold [ms]':>10} {'max rel. diff':>14}")
    for k in (2, 3, 4, 5, 8, 16, 32, 64, 128):
        codes = _permutation.draw_permutations(rng, np.arange(n) % k, args.batch)
        sizes = np.bincount(np.arange(n) % k)
        budget = 8.0 * n * n + 2**30
        times, outs = [], []
        for path in ("masked", "one-hot", "fold"):
            if path == "masked" and k > 16:
                times.append(np.nan)
                continue
            eng = _group_sums.MatrixEngine(D, k, sizes, args.threads, budget, fold=path == "fold")
            eng.masked = path == "masked"
            t, out = per_relabelling(eng, codes)
            times.append(t)
            outs.append(out)
        diff = max(float(np.max(np.abs(o - outs[-1])) / np.max(np.abs(outs[-1]))) for o in outs[:-1])
        print(f"{k:>5} {times[0] * 1e3:>12.3f} {times[1] * 1e3:>13.3f} {times[2] * 1e3:>10.3f} {diff:>14.1e}")


if __name__ == "__main__":
    main()
