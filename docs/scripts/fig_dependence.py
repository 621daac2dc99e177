"""Distance correlation against Pearson's correlation on the wine data, with significance marks.

The 13 chemical measurements of 178 Italian wines (Forina et al.; the copy
shipped with scikit-learn, ``sklearn.datasets.load_wine``): the distance
correlation of every pair of measurements with permutation p-values (all pairs
share the permutations; Benjamini–Hochberg over the 78 pairs), next to the
absolute Pearson correlation with its own BH-adjusted p-values.  Writes
``dependence_wine.png`` and ``dependence_wine.inc``.
"""
import numpy as np
import pandas as pd
from scipy import stats

from _common import args, machine, plt, rst_table, save, write_inc  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402
from energystats.dependence.matrix import _adjust  # noqa: E402  (the same BH as the function)


def main():
    a = args(__doc__)
    from sklearn.datasets import load_wine

    R = 1999 if a.quick else 9999
    df = load_wine(as_frame=True).frame.drop(columns="target")
    cols = list(df.columns)
    p = len(cols)
    res = es.distance_correlation_matrix(df, pvalue="permutation", n_resamples=R, rng=1883,
                                         adjust="bh")
    pear = np.ones((p, p))
    pp = np.zeros((p, p))
    for i in range(p):
        for j in range(i + 1, p):
            r = stats.pearsonr(df.iloc[:, i], df.iloc[:, j])
            pear[i, j] = pear[j, i] = abs(r.statistic)
            pp[i, j] = pp[j, i] = r.pvalue
    iu, ju = np.triu_indices(p, 1)
    pear_adj = np.zeros((p, p))
    pear_adj[iu, ju] = _adjust(pp[iu, ju], "bh")
    pear_adj[ju, iu] = pear_adj[iu, ju]
    dc_adj = res.adjusted.to_numpy()

    fig, axes = plt.subplots(1, 2, figsize=(13, 6.2))
    short = [c.replace("_", " ")[:14] for c in cols]
    for ax, M, adj, title in ((axes[0], res.dcor.to_numpy(), dc_adj, "distance correlation"),
                              (axes[1], pear, pear_adj, "|Pearson correlation|")):
        im = ax.imshow(M, vmin=0, vmax=1, cmap="viridis")
        for i in range(p):
            for j in range(p):
                if i != j and adj[i, j] <= 0.05:
                    ax.text(j, i, "*", ha="center", va="center", color="w" if M[i, j] < 0.6 else "k",
                            fontsize=11)
        ax.set_xticks(range(p), short, rotation=90, fontsize=8)
        ax.set_yticks(range(p), short, fontsize=8)
        ax.set_title(f"{title}\n* BH-adjusted p ≤ 0.05 ({int(np.sum(adj[iu, ju] <= 0.05))} of {len(iu)} pairs)",
                     fontsize=10)
    fig.colorbar(im, ax=axes, shrink=0.7)
    save(fig, a.out, "dependence_wine")

    only_dc = (dc_adj[iu, ju] <= 0.05) & (pear_adj[iu, ju] > 0.05)
    rows = [{"pair": f"{cols[i]} / {cols[j]}", "dCor": float(res.dcor.iloc[i, j]),
             "dCor p (BH)": float(dc_adj[i, j]), "abs(Pearson r)": float(pear[i, j]),
             "Pearson p (BH)": float(pear_adj[i, j])}
            for i, j, k in zip(iu, ju, only_dc) if k]
    t = pd.DataFrame(rows).set_index("pair") if rows else None
    text = (f"Permutation p-values from {res.n_resamples} permutations (seed {res.seed}), so no "
            f"p-value is below {1 / (res.n_resamples + 1):.2g}.  "
            f"{int(np.sum(dc_adj[iu, ju] <= 0.05))} pairs are dependent by distance correlation "
            f"and {int(np.sum(pear_adj[iu, ju] <= 0.05))} by Pearson's test (BH, 0.05); "
            f"the pairs only distance correlation finds:\n\n")
    text += rst_table(t, "{:.3g}") if t is not None else "(none)\n"
    write_inc(a.out, "dependence_wine", text + f"\nMachine: {machine()}.\n")


if __name__ == "__main__":
    main()
