"""Significance after clustering: rejection rate under H0 of three procedures.

Data with no cluster structure (one Gaussian with a random covariance, n = 100,
d = 1, 2, 5) are clustered into k = 2 groups by energy clustering (Hartigan),
and then "tested" in three ways at level 0.05 (docs/guide/clustering.rst; the
calibrated check is a Monte Carlo test against a no-cluster reference as in
SigClust, Liu, Hayes, Nobel & Marron 2008, "Statistical significance of
clustering for high-dimension, low-sample size data", JASA 103(483), and the
gap statistic, Tibshirani, Walther & Hastie 2001, "Estimating the number of
clusters in a data set via the gap statistic", JRSS B 63(2)):

* naive: permutation test (``energy_test``) of the fitted labels on the same data;
* sample splitting: fit on a random half, assign the other half with
  ``predict``, permutation-test the held-out half by its assigned labels;
* calibrated: ``cluster_test`` (S/T against the same clustering re-run on
  reference data sets drawn uniformly among those with exactly the data's
  mean and covariance: exact level for every Gaussian, with any number of
  restarts; 0.05 exactly when 0.05 (B + 1) is an integer, as for B = 39 and
  99; docs/cluster_test_calibration.rst).

Also the calibrated check's power on two Gaussians 4 sd apart (n = 100, d = 2).
Writes ``naive_test.png`` and ``naive_test.inc``.
"""
import numpy as np
import pandas as pd

from _common import args, machine, plt, rst_table, save, write_inc  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402

ALPHA = 0.05


def random_gaussian(rng, n, d):
    A = rng.normal(size=(d, d)) / np.sqrt(d) + np.eye(d)
    return rng.normal(size=(n, d)) @ A.T + rng.normal(size=d)


def one(X, rng, B, n_init):
    est = es.EnergyClustering(2, n_init=n_init, random_state=rng.integers(2**31)).fit(X)
    naive = es.energy_test(X, labels=est.labels_, n_resamples=199, rng=rng).pvalue
    idx = rng.permutation(len(X))
    fit, held = idx[: len(X) // 2], idx[len(X) // 2:]
    est_half = es.EnergyClustering(2, n_init=n_init, random_state=rng.integers(2**31)).fit(X[fit])
    lab = est_half.predict(X[held])
    if np.min(np.bincount(lab, minlength=2)) < 2:
        split = 1.0                               # cannot test: counted as "not rejected"
    else:
        split = es.energy_test(X[held], labels=lab, n_resamples=199, rng=rng).pvalue
    cal = es.cluster_test(X, 2, n_resamples=B, n_init=n_init, rng=rng).pvalue
    return naive, split, cal


def rate_ci(x):
    """Rejection rate and a 95% Wilson interval."""
    x = np.asarray(x)
    n, p = x.size, x.mean()
    z = 1.96
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, c - h, c + h


def main():
    a = args(__doc__)
    reps, B, n_init = (50, 39, 3) if a.quick else (300, 99, 5)
    rng = np.random.default_rng(20261122)
    rows = []
    for d in (1, 2, 5):
        rej = {"naive permutation": [], "sample splitting": [], "calibrated (cluster_test)": []}
        for _ in range(reps):
            ps = one(random_gaussian(rng, 100, d), rng, B, n_init)
            for key, p in zip(rej, ps):
                rej[key].append(p <= ALPHA)
        for key, r in rej.items():
            p, lo, hi = rate_ci(r)
            rows.append(dict(setting=f"one Gaussian, d={d}", procedure=key, rate=p, lo=lo, hi=hi))
    power = []
    for _ in range(reps // 2):
        X = np.vstack([rng.normal(size=(50, 2)), rng.normal(size=(50, 2)) + [4.0, 0.0]])
        power.append(es.cluster_test(X, 2, n_resamples=B, n_init=n_init, rng=rng).pvalue <= ALPHA)
    pw, plo, phi = rate_ci(power)
    df = pd.DataFrame(rows)

    fig, ax = plt.subplots(figsize=(8, 3.8))
    procs = list(dict.fromkeys(df.procedure))
    settings = list(dict.fromkeys(df.setting))
    width = 0.8 / len(procs)
    for i, proc in enumerate(procs):
        g = df[df.procedure == proc]
        x = np.arange(len(settings)) + (i - (len(procs) - 1) / 2) * width
        ax.bar(x, g.rate, width, label=proc,
               yerr=[np.clip(g.rate - g.lo, 0, None), np.clip(g.hi - g.rate, 0, None)], capsize=3)
    ax.axhline(ALPHA, color="k", ls="--", lw=1, label="nominal level 0.05")
    ax.set_xticks(np.arange(len(settings)), settings)
    ax.set_ylabel("rejection rate at 0.05")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"No clusters (H0), n = 100, k = 2: {reps} data sets per setting")
    ax.legend(fontsize=8, loc="center right")
    save(fig, a.out, "naive_test")

    table = df.pivot_table(index="setting", columns="procedure", values="rate", sort=False)
    table = table[procs]
    write_inc(a.out, "naive_test",
              f"Rejection rates at level 0.05 under H0 ({reps} data sets per row; bars in the "
              f"figure are 95% Wilson intervals; {B} reference sets per calibrated check, 199 "
              f"permutations per permutation test, {n_init} restarts per clustering; the "
              f"calibrated check's level is exactly 0.05, so its rates differ from 0.05 by "
              f"Monte Carlo error only):\n\n"
              + rst_table(table, "{:.3f}")
              + f"\nPower of the calibrated check on two Gaussians 4 sd apart (n = 100, d = 2): "
              f"{pw:.2f} (95% interval {plo:.2f}–{phi:.2f}, {len(power)} data sets).\n\n"
              f"Machine: {machine()}.  Regenerate: ``python docs/scripts/fig_naive_test.py"
              f"{' --quick' if a.quick else ''}``.\n")


if __name__ == "__main__":
    main()
