"""Many groups: one-hot BLAS products against the compiled fold, per relabelling.

The matrix engine evaluates a batch of relabellings either with BLAS products
of one-hot group matrices (O(k·n²) per relabelling, O(k·n) memory) or by
folding the rows of the n×n matrix by label in a compiled kernel (O(n²),
O(n) memory).  This prints both times per relabelling and their largest
relative difference for growing k; ``energystats._permutation.FOLD_MIN_GROUPS``
(the number of groups from which the engine folds) was chosen from it.

    python benchmarks/bench_groups.py [--n 2000] [--threads 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from energystats import _engine, _permutation
from energystats._metrics import resolve_metric


def per_relabelling(engine, codes, repeat=3):
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
    D = _engine.pairwise_values(X, X, resolve_metric("energy", 1.0, 1.0), args.threads)
    print(f"n = {n}, {args.threads} threads, batches of {args.batch}; "
          f"FOLD_MIN_GROUPS = {_permutation.FOLD_MIN_GROUPS}")
    print(f"{'k':>5} {'one-hot [ms]':>13} {'fold [ms]':>10} {'max rel. diff':>14}")
    for k in (2, 4, 8, 16, 32, 64, 128):
        codes = _permutation.draw_permutations(rng, np.arange(n) % k, args.batch)
        sizes = np.bincount(np.arange(n) % k)
        budget = 8.0 * n * n + 2**30
        onehot = _permutation.MatrixEngine(D, k, sizes, args.threads, budget, fold=False)
        fold = _permutation.MatrixEngine(D, k, sizes, args.threads, budget, fold=True)
        t1, a = per_relabelling(onehot, codes)
        t2, b = per_relabelling(fold, codes)
        diff = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
        print(f"{k:>5} {t1 * 1e3:>13.3f} {t2 * 1e3:>10.3f} {diff:>14.1e}")


if __name__ == "__main__":
    main()
