"""The picture at the top of README.md: three things the package does, in one figure.

(a) energy clustering (Hartigan's method, the laplacian semimetric) of the parallel cigars of
França & Vogelstein (2017, eq. 40); (b) E-Divisive change points (Matteson & James 2014) of a
series whose mean, then variance, then correlation change; (c) a Love plot of energy balancing
weights (Huling & Mak 2024) on the confounded study of the guide page "Balancing weights".
Not run at the documentation build: run it by hand after a change that moves these results,
and commit the PNG::

    python docs/scripts/readme_figure.py          # writes docs/_static/readme.png
"""
from pathlib import Path

import numpy as np

from _common import plt  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402
from fig_balance import study  # noqa: E402
from fig_changepoint import TRUE, series  # noqa: E402
from fig_gallery import cigars  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "_static" / "readme.png"


def main():
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4), gridspec_kw={"width_ratios": [0.8, 1.5, 1]})
    rng = np.random.default_rng(7)
    X, y = cigars(rng)
    res = es.energy_clustering(X, 2, metric="laplacian", sigma=2.0, n_init=5, rng=1)
    acc = es.clustering_accuracy(y, res.labels)
    ax = axes[0]
    ax.scatter(X[:, 0], X[:, 1], c=np.asarray(res.labels), s=5, cmap="coolwarm")
    ax.set_title(f"energy clustering (accuracy {acc:.2f})", fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    S = series(np.random.default_rng(2014))
    cp = es.e_divisive(S, min_size=30, n_resamples=99, rng=32)
    ax = axes[1]
    ax.plot(S[:, 0], linewidth=0.6, color="tab:blue")
    ax.plot(S[:, 1] - 12, linewidth=0.6, color="tab:orange")
    for c in TRUE:
        ax.axvspan(c - 2, c + 2, color="grey", alpha=0.3)
    for c in cp.changepoints:
        ax.axvline(c, color="black", linestyle="--", linewidth=1)
    ax.set_yticks([])
    ax.set_title("change points: mean, variance, correlation (E-Divisive)", fontsize=10)
    X, t, _ = study()
    bt = es.balance_table(X, t, es.energy_balancing_weights(X, t))
    bt.plot(ax=axes[2], stat="ks", threshold=0.1)
    axes[2].set_title("balancing weights: KS before / after", fontsize=10)
    fig.tight_layout()
    fig.savefig(OUT, dpi=80, bbox_inches="tight")
    print(f"wrote {OUT} ({OUT.stat().st_size // 1024} KiB); change points found "
          f"{list(cp.changepoints)}")


if __name__ == "__main__":
    main()
