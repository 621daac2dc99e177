"""Gallery: energy clustering of parallel cigars and concentric circles.

Parallel cigars (França & Vogelstein 2017, "Energy Clustering", arXiv:1710.09859v1,
eq. 40; 200 points per class as in França, Rizzo & Vogelstein 2021, "Kernel
k-Groups via Hartigan's Method", IEEE TPAMI 43(12), Table 1):
N((0,0), diag(1, 20)) and N((6.5,0), diag(1, 20)).  Two concentric
circles of radii 1 and 2 with Gaussian noise 0.1, 400 points per class.  Each
clustered by Hartigan's method with the standard semimetric |x - y| and with a
localised one (laplacian sigma = 2 for the cigars, as in Table 1; gaussian
sigma = 0.3 for the circles).  Writes ``gallery_clusters.png`` and
``gallery_clusters.inc`` (mean accuracy over repeated draws).
"""
import numpy as np
import pandas as pd

from _common import args, machine, plt, rst_table, save, write_inc  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402


def cigars(rng, n=200):
    cov = np.diag([1.0, 20.0])
    X = np.vstack([rng.multivariate_normal([0, 0], cov, n), rng.multivariate_normal([6.5, 0], cov, n)])
    return X, np.repeat([0, 1], n)


def circles(rng, n=400, radii=(1.0, 2.0), noise=0.1):
    parts = []
    for r in radii:
        t = rng.uniform(0, 2 * np.pi, n)
        parts.append(np.c_[r * np.cos(t), r * np.sin(t)] + rng.normal(scale=noise, size=(n, 2)))
    return np.vstack(parts), np.repeat(np.arange(len(radii)), n)


CASES = [
    ("parallel cigars", cigars, [("energy, exponent 1", dict(metric="energy")),
                                 ("laplacian, sigma 2", dict(metric="laplacian", sigma=2.0))]),
    ("two circles", circles, [("energy, exponent 1", dict(metric="energy")),
                              ("gaussian, sigma 0.3", dict(metric="gaussian", sigma=0.3))]),
]


def main():
    a = args(__doc__)
    trials = 3 if a.quick else 10
    rng = np.random.default_rng(7)
    fig, axes = plt.subplots(2, 2, figsize=(9, 8))
    rows = []
    for r, (name, gen, metrics) in enumerate(CASES):
        X, y = gen(rng)
        for c, (mname, kw) in enumerate(metrics):
            res = es.energy_clustering(X, 2, n_init=5, rng=1, **kw)
            acc = es.clustering_accuracy(y, res.labels)
            ax = axes[r, c]
            ax.scatter(X[:, 0], X[:, 1], c=np.asarray(res.labels), s=6, cmap="coolwarm")
            ax.set_title(f"{name}: {mname}\naccuracy {acc:.3f}", fontsize=10)
            ax.set_aspect("equal", adjustable="datalim")
            accs = [acc]
            for _ in range(trials - 1):
                Xt, yt = gen(rng)
                accs.append(es.clustering_accuracy(yt, es.energy_clustering(Xt, 2, n_init=5, rng=rng, **kw).labels))
            rows.append({"data": name, "semimetric": mname, "mean accuracy": float(np.mean(accs)),
                         "std. error": float(np.std(accs, ddof=1) / np.sqrt(len(accs)))})
    fig.suptitle("Energy clustering (Hartigan, k = 2, 5 restarts); colour = fitted cluster")
    fig.tight_layout()
    save(fig, a.out, "gallery_clusters")
    table = pd.DataFrame(rows).set_index("data")
    write_inc(a.out, "gallery_clusters",
              f"Mean accuracy (França, Rizzo and Vogelstein 2021, eq. 22) over {trials} independent draws:\n\n"
              + rst_table(table, "{:.3f}") + f"\nMachine: {machine()}.\n")


if __name__ == "__main__":
    main()
