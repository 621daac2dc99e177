"""Coverage of ``weighted_effect``'s **default** 95 % interval (the cross-fitted augmented
estimator with the kernel outcome model, influence-function standard error, normal interval),
of its bias-aware interval, and the bias of the unaugmented weighted difference beside them.

Designs (true effect known):

* ``ks`` — Kang and Schafer (2007, "Demystifying double robustness", Statistical Science 22(4)):
  z ~ N(0, I_4), P(t = 1) = expit(-z1 + 0.5 z2 - 0.25 z3 - 0.1 z4),
  y = 210 + 27.4 z1 + 13.7 (z2 + z3 + z4) + N(0, 1) for both arms (effect 0, ATE = ATT = 0),
  and the observed covariates are the transforms x1 = exp(z1/2), x2 = z2/(1 + exp(z1)) + 10,
  x3 = (z1 z3/25 + 0.6)^3, x4 = (z2 + z4 + 20)^2 (the misspecified case).  Not a design the
  estimator was built around.
* ``own`` — the confounded design of the guide page (``benchmarks/bench_balance.py:simulate``;
  effect 1).

For every data set r (seed seed0 + r) the weights are ``energy_balancing_weights(X, t,
estimand=...)`` with default options, and ``weighted_effect(y, res, rng=r)`` the default
call.  The table: coverage with its binomial SE sqrt(p(1-p)/reps), the bias (mean estimate -
truth) with its Monte Carlo SE, the mean SE / Monte Carlo SD, the mean width; the same for
the bias-aware interval (computed from the same run's bias bound, as
``ci_method='bias-aware'`` does); the share of data sets that carried the BalanceWarning of
the bias bound; and the bias of the unaugmented weighted difference (the same weights).

    python benchmarks/effect_coverage_augmented.py --design ks --n 500 --estimand ATE --reps 200
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.special import ndtri

import energystats as es
from energystats.balance._augment import bias_aware_halfwidth

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_balance import simulate  # noqa: E402


def kang_schafer(seed, n):
    g = np.random.default_rng(seed)
    z = g.normal(size=(n, 4))
    p = 1 / (1 + np.exp(-(-z[:, 0] + 0.5 * z[:, 1] - 0.25 * z[:, 2] - 0.1 * z[:, 3])))
    t = (g.uniform(size=n) < p).astype(int)
    y = 210 + 27.4 * z[:, 0] + 13.7 * (z[:, 1] + z[:, 2] + z[:, 3]) + g.normal(size=n)
    x = np.column_stack([np.exp(z[:, 0] / 2), z[:, 1] / (1 + np.exp(z[:, 0])) + 10,
                         (z[:, 0] * z[:, 2] / 25 + 0.6) ** 3, (z[:, 1] + z[:, 3] + 20) ** 2])
    return x, t, y


DESIGNS = {"ks": (kang_schafer, 0.0), "own": (simulate, 1.0)}


def one(args):
    design, n, estimand, seed = args
    make, truth = DESIGNS[design]
    X, t, y = make(seed, n)
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = es.energy_balancing_weights(X, t, estimand=estimand)
        eff = es.weighted_effect(y, res, rng=seed)
    warned = any("bias bound exceeds" in str(w.message) for w in caught)
    e, s, b = float(eff.estimate[0]), float(eff.std_error[0]), float(eff.bias_bound[0])
    half = bias_aware_halfwidth(b, s, 0.95)
    return (e - truth, s, float(eff.ci_low[0]) - truth, float(eff.ci_high[0]) - truth, b,
            half, float(eff.unaugmented[0]) - truth, warned, time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--design", choices=sorted(DESIGNS), default="ks")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--estimand", choices=["ATE", "ATT"], default="ATE")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed0", type=int, default=5000)
    ap.add_argument("--threads", type=int, default=2, help="worker processes (data sets)")
    a = ap.parse_args(argv)
    jobs = [(a.design, a.n, a.estimand, a.seed0 + r) for r in range(a.reps)]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.threads) as ex:
        rows = np.array(list(ex.map(one, jobs)), dtype=float)
    wall = time.perf_counter() - t0
    err, se, lo, hi, bound, half, plain, warned, secs = rows.T
    R = len(rows)

    def cov(p):
        return f"{p:.3f} ± {math.sqrt(p * (1 - p) / R):.3f}"
    mc = err.std(ddof=1)
    cover = float(np.mean((lo <= 0) & (hi >= 0)))
    cover_ba = float(np.mean(np.abs(err) <= half))
    print(f"design={a.design} n={a.n} estimand={a.estimand} reps={R} seeds {a.seed0}..{a.seed0 + R - 1}"
          f" ({wall:.0f} s wall, {a.threads} processes; {secs.mean():.2f} s per data set)")
    print(f"  default (augmented, kernel, influence SE, normal): coverage {cov(cover)}, "
          f"bias {err.mean():+.3f} ± {mc / math.sqrt(R):.3f}, mean SE / MC SD "
          f"{se.mean():.3f} / {mc:.3f} = {se.mean() / mc:.2f}, mean width {np.mean(hi - lo):.3f}")
    print(f"  bias-aware: coverage {cov(cover_ba)}, mean width {np.mean(2 * half):.3f}, "
          f"mean bias bound {bound.mean():.3f}; bound > SE on {np.mean(bound > se):.3f}; "
          f"BalanceWarning on {np.mean(warned):.3f}")
    print(f"  unaugmented weighted difference (same weights): bias {plain.mean():+.3f}, "
          f"MC SD {plain.std(ddof=1):.3f}")
    print(f"  normal-theory coverage the bias alone allows (oracle SD): "
          f"{0.5 * math.erfc(-(1.96 - abs(err.mean()) / mc) / math.sqrt(2)) + 0.5 * math.erfc((1.96 + abs(err.mean()) / mc) / math.sqrt(2)):.3f}")


if __name__ == "__main__":
    main()
