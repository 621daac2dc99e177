"""Per-data-set diagnostics of weighted_effect's default interval (issue: coverage < 0.92).

Usage (one process, one thread):
    export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
    python benchmarks/effect_diagnostics.py run --seed0 5000 --reps 100 --out rows_5000.csv
    python benchmarks/effect_diagnostics.py report rows_5000.csv [--holdout rows_5100.csv]

Cells: A ks500 ATE, B ks500 ATT, C own300 ATE, D own300 ATT, E1/E2 ks-latent-z 500 ATE/ATT,
F1 linear design 500 ATE (F2: same, ATT, extra).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from effect_coverage_augmented import kang_schafer  # noqa: E402
from bench_balance import simulate  # noqa: E402

import energystats as es  # noqa: E402
from energystats.balance import _effect_point, _outcome, _design  # noqa: E402


# ---------------------------------------------------------------------------- designs
def ks_latent(seed, n):
    """Kang-Schafer with the latent z as the covariates (correct specification)."""
    x, t, y = kang_schafer(seed, n)
    z = np.random.default_rng(seed).normal(size=(n, 4))     # the first draw of kang_schafer
    xz = np.column_stack([np.exp(z[:, 0] / 2), z[:, 1] / (1 + np.exp(z[:, 0])) + 10,
                          (z[:, 0] * z[:, 2] / 25 + 0.6) ** 3, (z[:, 1] + z[:, 3] + 20) ** 2])
    assert np.array_equal(xz, x), "latent z reconstruction failed"
    return z, t, y


def linear_design(seed, n):
    """x ~ N(0, I_3), P(t=1) = expit(0.5 x1 - 0.5 x2), y = 1 + x1 + 0.5 x2 + x3 + t + N(0,1)."""
    g = np.random.default_rng(seed)
    x = g.normal(size=(n, 3))
    p = 1 / (1 + np.exp(-(0.5 * x[:, 0] - 0.5 * x[:, 1])))
    t = (g.uniform(size=n) < p).astype(int)
    y = 1 + x[:, 0] + 0.5 * x[:, 1] + x[:, 2] + t + g.normal(size=n)
    return x, t, y


def nonconf_design(seed, n):
    """Like linear_design but y has x3**2 (x3 is not a confounder): a nonlinear outcome whose
    misfit should not bias the effect."""
    g = np.random.default_rng(seed)
    x = g.normal(size=(n, 3))
    p = 1 / (1 + np.exp(-(0.5 * x[:, 0] - 0.5 * x[:, 1])))
    t = (g.uniform(size=n) < p).astype(int)
    y = 1 + x[:, 0] + 0.5 * x[:, 1] + x[:, 2] ** 2 + t + g.normal(size=n)
    return x, t, y


CELLS = {  # name: (maker, n, estimand, truth)
    "A_ks_ATE": (kang_schafer, 500, "ATE", 0.0),
    "B_ks_ATT": (kang_schafer, 500, "ATT", 0.0),
    "C_own_ATE": (simulate, 300, "ATE", 1.0),
    "D_own_ATT": (simulate, 300, "ATT", 1.0),
    "E1_ksz_ATE": (ks_latent, 500, "ATE", 0.0),
    "E2_ksz_ATT": (ks_latent, 500, "ATT", 0.0),
    "F1_lin_ATE": (linear_design, 500, "ATE", 1.0),
    "F2_lin_ATT": (linear_design, 500, "ATT", 1.0),
    "G_nonconf_ATE": (nonconf_design, 500, "ATE", 1.0),
    "H_own1000_ATE": (simulate, 1000, "ATE", 1.0),
}


# ---------------------------------------------------------------------------- capture
_CAP = {}
_orig_point = _effect_point.point


def _capturing_point(setup, y, w, codes, a, s, C, Z, T, gen, want_var=False, tick=None):
    pt = _orig_point(setup, y, w, codes, a, s, C, Z, T, gen, want_var=want_var, tick=tick)
    _CAP.update(setup=setup, y=y, w=w, codes=codes, s=s, Z=Z, T=T, pt=pt)
    return pt


_effect_point.point = _capturing_point      # effect.py calls _effect_point.point(...)


def gammas(w, codes, g):
    sel = (codes == g) & (w > 0)
    gam = np.zeros(w.size)
    gam[sel] = w[sel] / w[sel].sum()
    return gam


def quad_basis(X):
    d = X.shape[1]
    cols = [X, X ** 2] + [(X[:, i] * X[:, j])[:, None] for i in range(d) for j in range(i + 1, d)]
    return np.column_stack(cols)


def ols_wald_p(H, e):
    """HC0 Wald test that the slopes of OLS of e on [1, H] are all 0: p-value."""
    A = np.column_stack([np.ones(len(e)), H])
    beta, *_ = np.linalg.lstsq(A, e, rcond=None)
    r = e - A @ beta
    bread = np.linalg.pinv(A.T @ A)
    meat = (A * r[:, None]).T @ (A * r[:, None])
    V = bread @ meat @ bread
    b, Vb = beta[1:], V[1:, 1:]
    stat = float(b @ np.linalg.pinv(Vb) @ b)
    return float(stats.chi2.sf(stat, H.shape[1])), stat


def weighted_moment_p(H, e, gam):
    """gamma-weighted residual-covariate moments: u = sum gam e (h - hbar_gam), chi2 with
    the variance sum gam^2 e^2 (h - hbar)(h - hbar)'; p-value."""
    sel = gam > 0
    Hs, es_, gs = H[sel], e[sel], gam[sel]
    Hc = Hs - gs @ Hs
    u = (gs * es_) @ Hc
    S = (Hc * (gs * es_)[:, None]).T @ (Hc * (gs * es_)[:, None])
    stat = float(u @ np.linalg.pinv(S) @ u)
    return float(stats.chi2.sf(stat, H.shape[1])), stat


def one(cell, seed):
    make, n, estimand, truth = CELLS[cell]
    X, t, y = make(seed, n)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = es.energy_balancing_weights(X, t, estimand=estimand, n_threads=1)
        _CAP.clear()
        eff = es.weighted_effect(y, res, rng=seed)
    cap = dict(_CAP)
    warned = any("bias bound exceeds" in str(w.message) for w in caught)
    w_ess = any("effective sample size" in str(w.message).lower() or "ess" in str(w.message).lower()
                for w in caught if "bias bound" not in str(w.message))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin = es.weighted_effect(y, res, outcome_model="linear", se=None)
    secs = time.perf_counter() - t0

    est, se = float(eff.estimate[0]), float(eff.std_error[0])
    lo, hi = float(eff.ci_low[0]), float(eff.ci_high[0])
    bound, plain = float(eff.bias_bound[0]), float(eff.unaugmented[0])

    # ---- the stored pieces, working units
    setup, pt = cap["setup"], cap["pt"]
    yw, w, codes, s = cap["y"], cap["w"], cap["codes"], cap["s"]
    shift = _design.pow2_shift(y)
    assert np.isclose(np.ldexp(pt.estimate[0], shift), est, rtol=1e-12, atol=0)
    k, ref = setup.k, setup.ref
    g1 = [g for g in range(k) if g != ref][0]
    resid = pt.resid
    pred = yw[None, :] - resid
    v = _effect_point.target_masses(setup, s, codes, None)
    gam = {g: gammas(w, codes, g) for g in range(k)}
    mu = np.array([v @ pred[g] + gam[g] @ resid[g] for g in range(k)])
    assert np.allclose(mu, pt.means, rtol=1e-10, atol=1e-12)
    se_w = math.sqrt(pt.variance[0])
    assert np.isclose(np.ldexp(se_w, shift), se, rtol=1e-10)

    # 1. augmentation term and its SE
    augterm = gam[g1] @ resid[g1] - gam[ref] @ resid[ref]          # sum gam e, contrast
    sd_aug = math.sqrt(sum(float(gam[g] ** 2 @ resid[g] ** 2) for g in (g1, ref)))
    corr = pt.estimate[0] - pt.plain[0]                               # augmented - unaugmented
    z_aug = corr / sd_aug
    z_augterm = augterm / sd_aug
    # 2, 3
    d_aug_se = abs(corr) / se_w
    bound_se = bound / se
    # 4. ESS / n per level
    ess_ratio = min(float(w[codes == g].sum() ** 2 / (w[codes == g] ** 2).sum()) / int((codes == g).sum())
                    for g in range(k))
    # 5
    lin_diff = (est - float(lin.estimate[0])) / se
    # 6. cross-fitted R2 per level
    r2 = []
    for g in range(k):
        sel = codes == g
        r2.append(1 - float(resid[g][sel] @ resid[g][sel]) / float(((yw[sel] - yw[sel].mean()) ** 2).sum()))
    r2min = min(r2)
    # 7. residual-misspecification signals, on the model's covariates (weights' units)
    Xm, _ = _effect_point.model_units(setup, cap["Z"], s, None, None)
    H = quad_basis(Xm)
    p_ols, p_wm, loo_r2, plug, plugq = [], [], [], 0.0, 0.0
    A1 = np.column_stack([np.ones(len(yw)), H])
    for g in (g1, ref):
        sel = codes == g
        e = resid[g][sel]
        p_ols.append(ols_wald_p(H[sel], e)[0])
        p_wm.append(weighted_moment_p(H, resid[g] * (codes == g), gam[g])[0])
        kr = _outcome.EnergyKernelRidge().fit(Xm[sel], e)
        loo_r2.append(1 - kr.loo_ / float(((e - e.mean()) ** 2).sum()))
        rhat = kr.predict(Xm)        # smoothed residual function of level g, everywhere
        b = float(gam[g] @ rhat - v @ rhat)   # plug-in bias of level g's augmented mean
        plug += b if g == g1 else -b
        # 7e: the same with a quadratic OLS fit of the residuals (unpenalised)
        bq, *_ = np.linalg.lstsq(A1[sel], e, rcond=None)
        rq = A1 @ bq
        b = float(gam[g] @ rq - v @ rq)
        plugq += b if g == g1 else -b
    plug_se = abs(plug) / se_w
    # linear-model R2 vs kernel R2 (in-sample OLS on the covariates, per level, min)
    return dict(cell=cell, seed=seed, truth=truth, est=est, se=se, lo=lo, hi=hi,
                covered=int(lo <= truth <= hi), err=est - truth, plain=plain, bound=bound,
                lin_est=float(lin.estimate[0]), warned_bound=int(warned), warned_other=int(w_ess),
                z_aug=z_aug, z_augterm=z_augterm, d_aug_se=d_aug_se, bound_se=bound_se,
                ess_ratio=ess_ratio, lin_diff=lin_diff, r2min=r2min,
                p_resid_ols=min(p_ols), p_resid_wmom=min(p_wm), resid_loo_r2=max(loo_r2),
                plug_se=plug_se, plugq_se=abs(plugq) / se_w, plugq_signed=plugq / se_w, energy_max=float(np.max(res.energy_after)),
                n1=int((codes == g1).sum()), secs=secs)


def run(a):
    cells = a.cells.split(",") if a.cells else list(CELLS)
    rows = []
    t0 = time.perf_counter()
    for c in cells:
        tc = time.perf_counter()
        for r in range(a.reps):
            rows.append(one(c, a.seed0 + r))
        sub = [x for x in rows if x["cell"] == c]
        print(f"{c}: coverage {np.mean([x['covered'] for x in sub]):.3f} "
              f"({time.perf_counter() - tc:.0f} s)", flush=True)
    pd.DataFrame(rows).to_csv(a.out, index=False)
    print(f"wrote {a.out}; {time.perf_counter() - t0:.0f} s wall")


# ---------------------------------------------------------------------------- report
FAIL = ["A_ks_ATE", "B_ks_ATT", "C_own_ATE", "D_own_ATT"]
VALID = ["E1_ksz_ATE", "E2_ksz_ATT", "F1_lin_ATE", "F2_lin_ATT", "G_nonconf_ATE"]
# H_own1000_ATE turned out to fail too (coverage 0.88): reported, not used to pick thresholds
# diagnostic -> (column transform, direction: flag when value > threshold)
DIAGS = {
    "1 |z_aug|": lambda d: d.z_aug.abs(),
    "1b |z_augterm|": lambda d: d.z_augterm.abs(),
    "2 |aug-plain|/SE": lambda d: d.d_aug_se,
    "3 bound/SE": lambda d: d.bound_se,
    "4 -ESS/n (flag low)": lambda d: -d.ess_ratio,
    "5 |kern-lin|/SE": lambda d: d.lin_diff.abs(),
    "6 -R2min (flag low)": lambda d: -d.r2min,
    "7a -log10 p resid~quad OLS": lambda d: -np.log10(d.p_resid_ols.clip(1e-300)),
    "7b -log10 p gamma-wtd resid moments": lambda d: -np.log10(d.p_resid_wmom.clip(1e-300)),
    "7c resid kernel LOO R2": lambda d: d.resid_loo_r2,
    "7d |plug-in resid bias|/SE": lambda d: d.plug_se,
    "7e |plug-in quad-resid bias|/SE": lambda d: d.plugq_se,
}


def MISSING_HO(ho):
    out = set()
    for name, f in DIAGS.items():
        try:
            f(ho.head(1))
        except AttributeError:
            out.add(name)
    return out


def pse(p, m):
    return math.sqrt(p * (1 - p) / m) if m else float("nan")


def fmt(p, m):
    return "  n/a  " if m == 0 else f"{p:.2f}±{pse(p, m):.2f}"


def report(a):
    d = pd.concat([pd.read_csv(f) for f in a.rows.split(",")], ignore_index=True)
    ho = pd.read_csv(a.holdout) if a.holdout else None
    cells = [c for c in CELLS if c in set(d.cell)]
    print("== coverage of the default interval, per cell ==")
    for c in cells:
        x = d[d.cell == c]
        m = len(x)
        cov = x.covered.mean()
        print(f"{c:12s} reps {m}: coverage {fmt(cov, m)}, bias {x.err.mean():+.3f}±{x.err.std() / math.sqrt(m):.3f}, "
              f"meanSE/MCSD {x.se.mean():.3f}/{x.err.std():.3f}={x.se.mean() / x.err.std():.2f}, "
              f"BalanceWarning(bound>SE) {x.warned_bound.mean():.2f}")
        if ho is not None and (ho.cell == c).any():
            y = ho[ho.cell == c]
            print(f"{'':12s} holdout reps {len(y)}: coverage {fmt(y.covered.mean(), len(y))}")
    print("\n== diagnostic medians per cell ==")
    med = pd.DataFrame({name: [f(d[d.cell == c]).median() for c in cells] for name, f in DIAGS.items()},
                       index=cells).T
    print(med.round(3).to_string())
    fail = [c for c in FAIL if c in cells]
    valid = [c for c in VALID if c in cells]
    print("\n== per diagnostic: threshold chosen so that min over failing cells of the flag share "
          "= 0.90 (in-sample), and fixed thresholds ==")
    for name, f in DIAGS.items():
        vals = {c: f(d[d.cell == c]).to_numpy() for c in cells}
        thr90 = min(np.quantile(vals[c], 0.10) for c in fail)   # flag > thr: >= 90% in each failing cell
        thr90 = np.nextafter(thr90, -np.inf)
        grid = sorted(set(list(FIXED.get(name, [])) + [thr90]))
        print(f"\n-- {name} --")
        for th in grid:
            tag = " (90% rule)" if th == thr90 else ""
            line = f" thr {th:+.3g}{tag}: flagged "
            line += " ".join(f"{c.split('_')[0]}={np.mean(vals[c] > th):.2f}" for c in cells)
            if ho is not None and name not in MISSING_HO(ho):
                line += " | holdout " + " ".join(
                    f"{c.split('_')[0]}={np.mean(f(ho[ho.cell == c]).to_numpy() > th):.2f}" for c in cells
                    if (ho.cell == c).any())
            print(line)
            for c in cells:
                x = d[d.cell == c]
                fl = vals[c] > th
                print(f"     {c:12s} cov|flag {fmt(x.covered[fl].mean() if fl.any() else 0, int(fl.sum()))} "
                      f"(m={int(fl.sum())})  cov|unflag {fmt(x.covered[~fl].mean() if (~fl).any() else 0, int((~fl).sum()))} "
                      f"(m={int((~fl).sum())})")


FIXED = {
    "1 |z_aug|": [1, 2, 3],
    "1b |z_augterm|": [1, 2],
    "2 |aug-plain|/SE": [0.25, 0.5, 1.0],
    "3 bound/SE": [0.5, 1.0],
    "4 -ESS/n (flag low)": [-0.9, -0.8, -0.7],
    "5 |kern-lin|/SE": [0.25, 0.5, 1.0],
    "6 -R2min (flag low)": [-0.95, -0.9, -0.8],
    "7a -log10 p resid~quad OLS": [1.0, -math.log10(0.05), -math.log10(0.01), 3],
    "7b -log10 p gamma-wtd resid moments": [-math.log10(0.05), -math.log10(0.01)],
    "7c resid kernel LOO R2": [0.0, 0.02, 0.05],
    "7d |plug-in resid bias|/SE": [0.1, 0.25, 0.5],
    "7e |plug-in quad-resid bias|/SE": [0.05, 0.1, 0.25, 0.5],
}


def summary(a):
    """The headline rules' flag shares per cell, pooled over the rows files given."""
    d = pd.concat([pd.read_csv(f) for f in a.rows.split(",")], ignore_index=True)
    RULES = {
        "existing BalanceWarning (bound>SE)": lambda x: x.bound_se > 1,
        "7a resid~quad p<0.10": lambda x: x.p_resid_ols < 0.10,
        "7a resid~quad p<0.05": lambda x: x.p_resid_ols < 0.05,
        "7a p<0.10 OR bound>SE": lambda x: (x.p_resid_ols < 0.10) | (x.bound_se > 1),
        "2 |aug-plain|/SE>0.25": lambda x: x.d_aug_se > 0.25,
        "5 |kern-lin|/SE>0.25": lambda x: x.lin_diff.abs() > 0.25,
        "1 |z_aug|>1": lambda x: x.z_aug.abs() > 1,
    }
    cells = list(dict.fromkeys(d.cell))
    print(f"{'cell':14s} {'m':>4s} {'coverage':>11s} " + " ".join(f"{k[:22]:>22s}" for k in RULES))
    for c in cells:
        x = d[d.cell == c]; m = len(x); p = x.covered.mean()
        row = f"{c:14s} {m:4d} {p:.3f}±{math.sqrt(p*(1-p)/m):.3f} "
        for k, f in RULES.items():
            q = f(x).mean(); row += f"{q:>15.2f}±{math.sqrt(q*(1-q)/m):.2f}    "
        print(row)
    x = d[d.cell.isin(["A_ks_ATE", "B_ks_ATT", "C_own_ATE", "D_own_ATT"])]
    for k in ["7a resid~quad p<0.10", "7a resid~quad p<0.05"]:
        fl = RULES[k](x)
        a, b = x.covered[fl], x.covered[~fl]
        print(f"A-D pooled, {k}: cov|flag {a.mean():.3f}±{math.sqrt(a.mean()*(1-a.mean())/len(a)):.3f} (m={len(a)}), "
              f"cov|unflag {b.mean():.3f}±{math.sqrt(b.mean()*(1-b.mean())/max(len(b),1)):.3f} (m={len(b)})")


def main():
    ap = argparse.ArgumentParser()
    sp = ap.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("run")
    r.add_argument("--seed0", type=int, default=5000)
    r.add_argument("--reps", type=int, default=100)
    r.add_argument("--cells", default="")
    r.add_argument("--out", required=True)
    q = sp.add_parser("report")
    q.add_argument("rows")
    q.add_argument("--holdout", default="")
    m = sp.add_parser("summary")
    m.add_argument("rows", help="comma-separated rows files (pooled)")
    a = ap.parse_args()
    {"run": run, "report": report, "summary": summary}[a.cmd](a)


if __name__ == "__main__":
    main()
