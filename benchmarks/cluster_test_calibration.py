"""Rejection rates at 0.05 of significance checks after clustering (Liu et al. 2008; Tibshirani et al. 2001).

The valid check, ``cluster_test``, calibrates S/T by a parametric bootstrap
from a no-cluster reference, as in SigClust (Liu, Hayes, Nobel & Marron 2008,
"Statistical significance of clustering for high-dimension, low-sample size
data", JASA 103(483)) and the gap statistic (Tibshirani, Walther & Hastie
2001, "Estimating the number of clusters in a data set via the gap
statistic", JRSS B 63(2)); see docs/guide/clustering.rst.

Under "no clusters" (single Gaussians, uniform boxes) and under two clusters,
for the valid reference calibration (``cluster_test``), the naive permutation
test of the fitted labels (``cluster_test(..., naive=True)``) and a
sample-splitting attempt (cluster one half, assign the other half to the learned
clusters with ``predict``, permutation-test S on that half).

Run::

    python benchmarks/cluster_test_calibration.py            # ~2-4 minutes on 2 cores
    python benchmarks/cluster_test_calibration.py --sets 400 --B 39
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import energystats as es


def gaussian_set(rng, n=None, d=None):
    n = int(rng.integers(100, 301)) if n is None else n
    d = int(rng.integers(1, 11)) if d is None else d
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    scales = np.exp(rng.uniform(-3.5, 0, size=d))
    return rng.normal(size=(n, d)) * scales @ Q.T * rng.uniform(0.1, 10) + rng.normal(size=d) * 5


def box_set(rng):
    n, d = int(rng.integers(100, 301)), int(rng.integers(1, 11))
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return rng.uniform(size=(n, d)) * rng.uniform(0.2, 3, size=d) @ Q.T


def two_clusters(rng, sep):
    X = rng.normal(size=(100, 2))
    X[:50, 0] += sep
    return X


def reference_p(X, rng, null, B):
    return es.cluster_test(X, 2, null=null, n_resamples=B, n_init=1, rng=rng).pvalue


def naive_p(X, rng, B):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.AntiConservativeWarning)
        return es.cluster_test(X, 2, n_resamples=B, n_init=1, naive=True, rng=rng).pvalue


def split_p(X, rng, B):
    n = X.shape[0]
    perm = rng.permutation(n)
    train, test = X[perm[: n // 2]], X[perm[n // 2:]]
    lab = es.EnergyClustering(2, n_init=1, random_state=rng).fit(train).predict(test)
    if np.bincount(lab, minlength=2).min() == 0:
        return 1.0
    obs = es.dispersion(test, lab).S
    null = np.array([es.dispersion(test, rng.permutation(lab)).S for _ in range(B)])
    return (1 + np.sum(null >= obs * (1 - 1e-12))) / (B + 1)


def rate(ps):
    ps = np.asarray(ps)
    r = np.mean(ps <= 0.05)
    return f"{r:.3f} ± {np.sqrt(r * (1 - r) / ps.size):.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=200, help="data sets per row (reference rows)")
    ap.add_argument("--sets-invalid", type=int, default=40, help="data sets per row (naive, splitting)")
    ap.add_argument("--B", type=int, default=19, help="reference sets / permutations per test")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    print(f"# rejection rate at 0.05 ± binomial SE; k = 2, Hartigan, n_init = 1; B = {args.B} "
          f"(reference rows), 99 (naive, splitting)")
    print("| data | procedure | data sets | rejection rate |")
    print("|---|---|---|---|")
    rows = [
        ("single Gaussian, n 100–300, d 1–10, random covariance", "reference 'gaussian' (valid)",
         args.sets, lambda: reference_p(gaussian_set(rng), rng, "gaussian", args.B)),
        ("uniform box, n 100–300, d 1–10, rotated", "reference 'uniform' (valid)",
         args.sets, lambda: reference_p(box_set(rng), rng, "uniform", args.B)),
        ("single Gaussian N(0, I), n 100, d 2", "naive permutation of fitted labels",
         args.sets_invalid, lambda: naive_p(rng.normal(size=(100, 2)), rng, 99)),
        ("single Gaussian N(0, I), n 100, d 2", "sample splitting + permutation",
         args.sets_invalid, lambda: split_p(rng.normal(size=(100, 2)), rng, 99)),
        ("two Gaussians 4 sd apart, n 100, d 2", "reference 'gaussian'",
         args.sets_invalid, lambda: reference_p(two_clusters(rng, 4.0), rng, "gaussian", args.B)),
        ("two Gaussians 3 sd apart, n 100, d 2", "reference 'gaussian'",
         args.sets_invalid, lambda: reference_p(two_clusters(rng, 3.0), rng, "gaussian", args.B)),
        ("two Gaussians 4 sd apart, n 100, d 2", "reference 'uniform'",
         args.sets_invalid, lambda: reference_p(two_clusters(rng, 4.0), rng, "uniform", args.B)),
    ]
    for data, proc, m, fn in rows:
        ps = [fn() for _ in range(m)]
        print(f"| {data} | {proc} | {m} | {rate(ps)} |", flush=True)
    print(f"# {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
