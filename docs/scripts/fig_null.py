"""Null distributions with the observed statistic, on Fisher's iris data.

(a) ``energy_test`` versicolor vs virginica (all four measurements);
(b) ``energy_test`` of two random halves of setosa (H0 true by construction);
(c) ``disco`` F of sepal width by species;
(d) ``cluster_test`` with k = 3 (S/T against re-clustered Gaussian references).
Writes ``null_distributions.png`` and ``null_distributions.inc``.
"""
import numpy as np
import pandas as pd

from _common import args, machine, plt, rst_table, save, write_inc  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402
from energystats.datasets import load_iris  # noqa: E402


def main():
    a = args(__doc__)
    R = 499 if a.quick else 1999
    B = 49 if a.quick else 199
    df = load_iris()
    feats = [c for c in df.columns if c != "species"]
    rng = np.random.default_rng(1936)
    vv = df[df.species.isin(["versicolor", "virginica"])]
    res = []
    r = es.energy_test(vv, by="species", n_resamples=R, rng=rng)
    res.append(("(a) energy test: versicolor vs virginica", r.statistic, r.null_distribution, r.pvalue))
    setosa = df[df.species == "setosa"][feats].to_numpy()
    half = rng.permutation(len(setosa)) < len(setosa) // 2
    r = es.energy_test(setosa[half], setosa[~half], n_resamples=R, rng=rng)
    res.append(("(b) energy test: two random halves of setosa", r.statistic, r.null_distribution, r.pvalue))
    r = es.disco(df, by="species", columns=["sepal_width"], n_resamples=R, rng=rng)
    res.append(("(c) DISCO F: sepal width by species", float(r.statistic), np.asarray(r.null_distribution).ravel(),
                float(r.pvalue)))
    r = es.cluster_test(df[feats], 3, n_resamples=B, n_init=5, rng=rng)
    res.append(("(d) cluster_test, k = 3: S/T vs Gaussian reference", r.statistic, r.null_distribution, r.pvalue))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    rows = []
    for ax, (title, obs, null, p) in zip(axes.ravel(), res):
        ax.hist(null, bins=40, color="0.7", edgecolor="0.5")
        ax.axvline(obs, color="C3", lw=2, label=f"observed {obs:.4g}")
        ax.set_title(f"{title}\np = {p:.4g} ({len(null)} null draws)", fontsize=9)
        ax.legend(fontsize=8)
        rows.append({"panel": title, "observed": float(obs), "null mean": float(np.mean(null)),
                     "null 95%": float(np.quantile(null, 0.95)), "p-value": float(p), "draws": len(null)})
    fig.tight_layout()
    save(fig, a.out, "null_distributions")
    t = pd.DataFrame(rows).set_index("panel")
    write_inc(a.out, "null_distributions", rst_table(t, "{:.4g}") + f"\nMachine: {machine()}.\n")


if __name__ == "__main__":
    main()
