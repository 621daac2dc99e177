"""Gallery: a Love plot of energy balancing weights and the effect they estimate.

The confounded study of the guide page "Balancing weights" (n = 400, four covariates, two
confounders entering nonlinearly, true effect 1): the standardised mean differences (R
cobalt's conventions) and KS distances before and after the ATE energy balancing weights
(Huling & Mak 2024), and the effect with four standard errors: the half-samples that solve
the weights again (the default), the same with the outcome regression adjustment, the
bootstrap (too narrow for these weights), and the sandwich that holds the weights fixed.  Writes ``balance_love.png`` and ``balance_love.inc``.
"""
import numpy as np
import pandas as pd

from _common import args, plt, rst_table, save, write_inc  # noqa: I001 (sets sys.path)

import energystats as es  # noqa: E402


def study(seed=7, n=400):
    """The guide's confounded study: ``benchmarks/bench_balance.py``'s design, seed 7, n = 400."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_balance import simulate

    return simulate(seed, n)


def main():
    a = args(__doc__)
    n_boot = 50 if a.quick else 500
    X, t, y = study()
    res = es.energy_balancing_weights(X, t)
    bt = es.balance_table(X, t, res)
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), gridspec_kw={"width_ratios": [1, 1, 1.3]})
    bt.plot(ax=axes[0], stat="smd")
    axes[0].set_title("standardised mean difference")
    bt.plot(ax=axes[1], stat="ks")
    axes[1].set_title("weighted KS distance")
    rows = []
    for label, kw in (("augmented, kernel (default)", {"se": "influence"}),
                      ("half-samples, weighted difference", {"outcome_model": None}),
                      ("half-samples, adjusted", {"outcome_model": "linear"}),
                      ("bootstrap (too narrow)", {"outcome_model": None, "se": "bootstrap"}),
                      ("sandwich (weights fixed)", {"outcome_model": None, "se": "sandwich"})):
        boot = kw.get("se") not in ("sandwich", "influence")
        if kw.get("se") == "influence":
            kw = {**kw, "rng": 1}
        eff = es.weighted_effect(y, res, **kw, **({"n_boot": n_boot, "rng": 1} if boot else {}))
        rows.append((label, eff.estimate[0], eff.std_error[0], eff.ci_low[0], eff.ci_high[0]))
    naive = y[t == 1].mean() - y[t == 0].mean()
    ax = axes[2]
    for i, (label, est, se, lo, hi) in enumerate(rows):
        ax.errorbar(est, i, xerr=[[est - lo], [hi - est]], fmt="o", capsize=3)
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1, label="true effect")
    ax.axvline(naive, color="tab:red", linestyle=":", linewidth=1, label="unweighted")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in rows])
    ax.set_xlabel("ATE, 95% interval")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    save(fig, a.out, "balance_love")
    table = pd.DataFrame(rows, columns=["standard error", "estimate", "s.e.", "low", "high"])
    table = table.set_index("standard error")
    write_inc(a.out, "balance_love",
              f"The effect (true value 1; unweighted difference {naive:.3f}), {n_boot} "
              "resamples:\n\n" + rst_table(table.round(3)))


if __name__ == "__main__":
    main()
