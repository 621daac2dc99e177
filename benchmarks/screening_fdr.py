"""False discovery rate and power of Benjamini-Hochberg on distance_correlation_scores'
χ² p-values (issue 52): n = 300 rows, p = 2 000 features, 5 of them active through a
nonlinear response, ``--reps`` data sets (fixed seeds).  Per data set: the features BH selects
at q = 0.05 (scipy.stats.false_discovery_control), the false discovery proportion, whether all 5
active features are selected; and the rejection rate of the null features' p-values at 0.05,
0.01 and 0.001 (their level).

Designs (x ~ N(0, I_p), the active features 0..4):

* ``marginal`` (default): y = x_0 + x_1^2 + 2|x_2| + 2 sin(2 x_3) + exp(x_4) / 2 + N(0, 1), every
  active feature related to y on its own, linearly or not;
* ``interaction``: y = x_0 + x_1^2 + |x_2| + sin(2 x_3) + x_4 x_0 + N(0, 1): x_4 acts only
  through its product with x_0 (a marginal screen sees it only through y's spread) and the
  |x_2|, sin terms are weak beside x_1^2.

    python benchmarks/screening_fdr.py --reps 100 --jobs 2 [--design interaction]
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

ACTIVE = 5


def one(args):
    import energystats as es
    from scipy.stats import false_discovery_control

    seed, n, p, design = args
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, p))
    if design == "marginal":
        y = X[:, 0] + X[:, 1] ** 2 + 2 * np.abs(X[:, 2]) + 2 * np.sin(2 * X[:, 3]) \
            + np.exp(X[:, 4]) / 2 + g.normal(size=n)
    else:
        y = X[:, 0] + X[:, 1] ** 2 + np.abs(X[:, 2]) + np.sin(2 * X[:, 3]) + X[:, 4] * X[:, 0] \
            + g.normal(size=n)
    _, pv = es.distance_correlation_scores(X, y)
    sel = np.flatnonzero(false_discovery_control(pv, method="bh") <= 0.05)
    false = int(np.sum(sel >= ACTIVE))
    null = pv[ACTIVE:]
    return (false / max(len(sel), 1), int(np.all(np.isin(np.arange(ACTIVE), sel))), len(sel),
            float(np.mean(null <= 0.05)), float(np.mean(null <= 0.01)), float(np.mean(null <= 0.001)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--p", type=int, default=2000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--design", choices=["marginal", "interaction"], default="marginal")
    a = ap.parse_args(argv)
    print(f"# python benchmarks/screening_fdr.py --reps {a.reps} --n {a.n} --p {a.p} --jobs {a.jobs} "
          f"--design {a.design}")
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    t0 = time.perf_counter()
    with ProcessPoolExecutor(a.jobs) as ex:
        rows = np.array(list(ex.map(one, [(70_000 + r, a.n, a.p, a.design)
                                          for r in range(a.reps)])))
    fdp, allfound, nsel, l05, l01, l001 = rows.T
    R = len(rows)
    print(f"BH at q = 0.05 over {R} data sets: FDR (mean FDP) {fdp.mean():.4f} ± "
          f"{fdp.std(ddof=1) / math.sqrt(R):.4f}; all {ACTIVE} active selected in "
          f"{allfound.mean():.3f}; mean selected {nsel.mean():.2f}")
    m = R * (a.p - ACTIVE)
    for lvl, v in ((0.05, l05), (0.01, l01), (0.001, l001)):
        r = v.mean()
        print(f"null features' p <= {lvl}: {r:.5f} (binomial SE over {m} p-values "
              f"{math.sqrt(lvl * (1 - lvl) / m):.5f})")
    print(f"# wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
