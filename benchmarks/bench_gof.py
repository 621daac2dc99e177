"""Energy goodness-of-fit tests against R energy (when installed): time.

Same data in both.  Rows:

* univariate normality, n = 10⁵, 999 parametric bootstrap samples: ``es.normality_test``
  against R's ``normal.test(x, R = 999)`` (timed inside R);
* the same statistic's limit p-value (``method="limit"``) against
  ``normal.test(x, method = "limit")``;
* multivariate normality, n = 2 000, d = 10, 199 bootstrap samples: ``es.normality_test``
  against ``mvnorm.test(x, R = 199)``;
* Poisson, n = 10⁴, 999 bootstrap samples, all three statistics: ``es.poisson_test`` against
  ``poisson.tests(x, R = 999)``;
* ``es.gof_test`` of a gamma sample (shape and scale fitted on every replicate, loc 0),
  n = 1 000, 999 samples (no R counterpart in energy).

Run::

    python benchmarks/bench_gof.py          # ~2-4 minutes on 2 cores with R
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

import numpy as np

import energystats as es


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def r_seconds(x, call, integer=False):
    """``(seconds, statistic, p-value)`` of R energy's ``call`` on ``x`` (None without R)."""
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "x.csv")
        np.savetxt(path, np.asarray(x).reshape(len(x), -1), delimiter=",",
                   fmt="%d" if integer else "%.17g")
        load = (f"x <- as.matrix(read.csv('{path}', header=FALSE)); "
                + ("x <- as.integer(x[, 1]); " if integer else
                   "if (ncol(x) == 1) x <- x[, 1]; "))
        code = (f"suppressMessages(library(energy)); {load} set.seed(1); "
                f"t <- system.time(r <- {call})[['elapsed']]; "
                "s <- if (is.data.frame(r)) r['M-CvM', 'statistic'] else r$statistic; "
                "p <- if (is.data.frame(r)) r['M-CvM', 'p.value'] else r$p.value; cat(t, s, p)")
        out = subprocess.run(["Rscript", "-e", code], capture_output=True, text=True)
        try:
            return tuple(float(v) for v in out.stdout.split()[-3:])
        except ValueError:
            return None


def main():
    rng = np.random.default_rng(0)
    rows = []

    x1 = rng.normal(size=10**5)
    t, res = timed(lambda: es.normality_test(x1, n_resamples=999, rng=1))
    r = r_seconds(x1, "normal.test(x, R = 999)")
    rows.append(("normality, n = 10^5, R = 999 (bootstrap)", t, r, res))
    t, res = timed(lambda: es.normality_test(x1, method="limit"))
    r = r_seconds(x1, 'normal.test(x, method = "limit")')
    rows.append(("normality, n = 10^5 (limit p-value)", t, r, res))

    x2 = rng.normal(size=(2000, 10))
    t, res = timed(lambda: es.normality_test(x2, n_resamples=199, rng=1))
    r = r_seconds(x2, "mvnorm.test(x, R = 199)")
    rows.append(("multivariate normality, n = 2000, d = 10, R = 199", t, r, res))

    x3 = rng.poisson(3.0, size=10**4)
    t, res = timed(lambda: es.poisson_test(x3, statistic="all", n_resamples=999, rng=1))
    r = r_seconds(x3, "poisson.tests(x, R = 999)", integer=True)
    rows.append(("Poisson, n = 10^4, R = 999, three statistics", t, r, res["m-cvm"]))

    x4 = rng.gamma(2.0, 3.0, size=1000)
    t, res = timed(lambda: es.gof_test(x4, "gamma", known_params={"loc": 0}, n_resamples=999,
                                       rng=1))
    rows.append(("gamma (shape, scale refitted), n = 1000, R = 999", t, None, res))

    print("| case | energystats [s] | R energy [s] | R / ours | statistic (ours; R) | p (ours; R) |")
    print("|---|---|---|---|---|---|")
    for case, t, r, res in rows:
        rs = "" if r is None else f"{r[0]:.2f}"
        ratio = "" if r is None else f"{r[0] / t:.1f}×"
        stat = f"{res.statistic:.6g}" + ("" if r is None else f"; {r[1]:.6g}")
        p = f"{res.pvalue:.4g}" + ("" if r is None else f"; {r[2]:.4g}")
        print(f"| {case} | {t:.2f} | {rs} | {ratio} | {stat} | {p} |")


if __name__ == "__main__":
    main()
