"""The command ``demo``.
"""
from __future__ import annotations

from .._core._errors import CLIError
from .clustering import _adjusted_rand


def _cmd_demo(args):
    """The package's main path on Fisher's iris data: how far apart the species are (energy
    distances, W/S/T), whether they differ (k-sample test), and whether energy clustering of
    the unlabelled measurements finds them (cluster_test against the Gaussian reference,
    crosstab and adjusted Rand index with the species)."""
    import itertools

    import pandas as pd

    from .. import cluster_test, dispersion, energy_distance, energy_test
    from ..datasets import load_iris

    if not (0.0 < args.exponent <= 2.0):
        raise CLIError(f"option --exponent: must lie in (0, 2]; got {args.exponent:g}.")
    if args.resamples < 1:
        raise CLIError(f"option --resamples: must be >= 1; got {args.resamples}.")
    seed, R = args.seed, args.resamples
    df = load_iris()
    features = [c for c in df.columns if c != "species"]
    print("Fisher's iris data: 150 flowers, features", ", ".join(features))
    print(f"metric = 'energy', exponent = {args.exponent}; seed = {seed} (energystats demo "
          f"--seed {seed} repeats this run)\n")
    rows = []
    for a, b in itertools.combinations(df["species"].cat.categories, 2):
        xa = df.loc[df["species"] == a, features]
        xb = df.loc[df["species"] == b, features]
        e = energy_distance(xa, xb, exponent=args.exponent)
        sub = df[df["species"].isin([a, b])]
        res = dispersion(sub[features], sub["species"].astype(str), exponent=args.exponent)
        n1, n2 = len(xa), len(xb)
        rows.append({"pair": f"{a} vs {b}", "E": e, "edist (R)": n1 * n2 / (n1 + n2) * e,
                     "W": res.W, "S": res.S, "T": res.T, "F": res.F})
    table = pd.DataFrame(rows).set_index("pair")
    with pd.option_context("display.float_format", "{:.6g}".format, "display.width", 120):
        print("1. Energy distance and dispersion per pair of species")
        print(table.to_string())
        res = dispersion(df, by="species", exponent=args.exponent)
        print("\n   Dispersion of the three species (W + S = T)")
        print(res.to_frame().to_string())

        test = energy_test(df, by="species", exponent=args.exponent, n_resamples=R, rng=seed)
        print(f"\n2. Do the species differ? Energy test of equal distributions (k = 3 samples)\n"
              f"   statistic = {test.statistic:.6g}, p = {test.pvalue:.4g} ± "
              f"{test.pvalue_se:.2g} (Monte Carlo s.e.; {test.n_resamples} permutations,\n"
              f"   seed {test.seed}); the smallest p-value {R} permutations can give is "
              f"{1 / (R + 1):.3g}.")

        check = cluster_test(df[features], 3, exponent=args.exponent, n_resamples=R,
                             rng=seed, random_state=seed)
        labels = pd.Series(check.labels, index=df.index, name="cluster")
        print(f"\n3. Energy clustering of the measurements without the species (k = 3, "
              f"Hartigan)\n   S/T of the fit = {check.statistic:.4g}, against the same "
              f"clustering of {check.n_resamples} Gaussian reference data sets\n   with the "
              f"data's mean and covariance (cluster_test): p = {check.pvalue:.4g} ± "
              f"{check.pvalue_se:.2g} (seed {seed}):\n   "
              + ("more clustered than a Gaussian" if check.pvalue <= 0.05 else
                 "no evidence of more cluster structure than a Gaussian")
              + " at alpha = 0.05. A small p-value says 'more clustered than one\n   Gaussian', "
              "not that the clusters are the species: step 4 compares them.")

        tab = pd.crosstab(df["species"], labels)
        ari = _adjusted_rand(df["species"].astype(str), labels)
        agree = int(tab.max(axis=1).sum()) if len(set(tab.idxmax(axis=1))) == tab.shape[0] else None
        print("\n4. Clusters against the species (crosstab)")
        print(tab.to_string())
        print(f"   adjusted Rand index = {ari:.3f} (1: the same partition; about 0: chance)"
              + (f";\n   {agree} of {len(df)} flowers ({agree / len(df):.0%}) in the cluster "
                 "where most of their species is" if agree is not None else ""))
    return 0
