"""Accuracy curves: Hartigan vs kernel k-means (Lloyd) vs spectral on the same kernel.

Settings of França, Rizzo & Vogelstein (2021), "Kernel k-Groups via Hartigan's
Method", IEEE TPAMI 43(12), 4411-4425.  Left: their eq. 26 (two Gaussians in
R^D, signal in 10 coordinates, 200 points; Bayes accuracy about 0.86),
accuracy against D.  Right: their eqs. 24-25 (univariate lognormal mixture;
Bayes accuracy about 0.88), accuracy against n for the exact 1-D split,
Hartigan and scikit-learn's k-means.
Mean and standard error over the trials.  Writes ``accuracy.png`` and
``accuracy.inc``.
"""
import numpy as np
import pandas as pd

from _common import args, machine, plt, rst_table, save, write_inc  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402


def eq26(rng, D, n=200):
    y = rng.integers(0, 2, n)
    mu = np.zeros(D)
    mu[:10] = 0.7
    return rng.normal(size=(n, D)) + y[:, None] * mu, y


def eq24(rng, n):
    y = rng.integers(0, 2, n)
    mu, sd = np.where(y == 0, 1.5, 0.0), np.where(y == 0, 0.3, 1.5)
    return np.exp(rng.normal(mu, sd)), y


def mean_se(v):
    v = np.asarray(v, float)
    return v.mean(), (v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else np.nan)


def main():
    a = args(__doc__)
    trials = 8 if a.quick else 50
    Ds = [10, 50, 100, 200] if a.quick else [10, 20, 50, 100, 150, 200]
    ns = [50, 200, 800] if a.quick else [25, 50, 100, 200, 400, 800, 1600]
    rng = np.random.default_rng(26)
    rows = []
    for D in Ds:
        acc = {alg: [] for alg in ("hartigan", "lloyd", "spectral")}
        for _ in range(trials):
            X, y = eq26(rng, D)
            seed = rng.integers(2**31)
            for alg in acc:
                lab = es.energy_clustering(X, 2, algorithm=alg, n_init=5, rng=seed).labels
                acc[alg].append(es.clustering_accuracy(y, lab))
        for alg, v in acc.items():
            m, se = mean_se(v)
            rows.append(dict(experiment="eq. 26", x=D, method=alg, mean=m, se=se))
    try:
        from sklearn.cluster import KMeans
    except ImportError:  # pragma: no cover
        KMeans = None
    for n in ns:
        acc = {"exact-1d": [], "hartigan": []}
        if KMeans is not None:
            acc["k-means (sklearn)"] = []
        for _ in range(trials):
            x, y = eq24(rng, n)
            seed = int(rng.integers(2**31))
            acc["exact-1d"].append(es.clustering_accuracy(y, es.energy_clustering(x, 2, algorithm="exact-1d").labels))
            acc["hartigan"].append(es.clustering_accuracy(y, es.energy_clustering(x, 2, n_init=5, rng=seed).labels))
            if KMeans is not None:
                km = KMeans(2, n_init=5, random_state=seed).fit(x.reshape(-1, 1))
                acc["k-means (sklearn)"].append(es.clustering_accuracy(y, km.labels_))
        for alg, v in acc.items():
            m, se = mean_se(v)
            rows.append(dict(experiment="eq. 24", x=n, method=alg, mean=m, se=se))
    df = pd.DataFrame(rows)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), layout="constrained")
    for ax, (exp, xlabel, bayes, grid) in zip(axes, [("eq. 26", "dimension D", 0.86, Ds),
                                                     ("eq. 24", "n (log scale)", 0.88, ns)]):
        for alg, g in df[df.experiment == exp].groupby("method", sort=False):
            ax.errorbar(g.x, g["mean"], yerr=g.se, marker="o", capsize=3, label=alg)
        ax.axhline(bayes, color="k", ls="--", lw=1, label=f"Bayes ≈ {bayes}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("accuracy")
        ax.set_title(f"França, Rizzo and Vogelstein (2021), {exp}\n{trials} trials per point", fontsize=10)
        if exp == "eq. 24":
            ax.set_xscale("log")
        # one labelled tick per grid point, no minor labels (they overlapped on the log axis)
        ax.set_xticks(grid, [str(v) for v in grid])
        ax.minorticks_off()
        ax.tick_params(axis="x", labelsize=8)
        # the legend below the axes, not over the error bars
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        ax.grid(alpha=0.3)
    save(fig, a.out, "accuracy")
    parts = []
    for exp, label in (("eq. 26", "D"), ("eq. 24", "n")):
        g = df[df.experiment == exp].copy()
        g["cell"] = [f"{m:.3f} ± {s:.3f}" for m, s in zip(g["mean"], g.se)]
        t = g.pivot(index="x", columns="method", values="cell")[list(dict.fromkeys(g.method))]
        t.index = [f"{label} = {v}" for v in t.index]
        t.index.name = exp
        parts.append(rst_table(t))
    write_inc(a.out, "accuracy",
              f"Mean accuracy ± standard error over {trials} trials (5 restarts each):\n\n"
              + "\n".join(parts) + f"\nMachine: {machine()}.\n")


if __name__ == "__main__":
    main()
