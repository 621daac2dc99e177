"""Level and power of the energy test of normality against Shapiro–Wilk and Anderson–Darling.

Rejection rates at alpha = 0.05 for n = 20 and n = 100, on the same data sets for every
test: under the normal null (level) and three alternatives — Student t with 5 degrees of
freedom (heavy tails), the lognormal with sigma = 0.5 (skew) and the equal-weight normal
location mixture 0.5 N(0, 1) + 0.5 N(3, 1) (bimodal, symmetric).  Tests:

* ``energystats.normality_test`` with the parametric bootstrap (R = 199 samples; the
  p-value (1 + #{T* >= T})/(R + 1));
* ``energystats.normality_test(method="limit")`` (the limit distribution; no resampling);
* ``scipy.stats.shapiro`` (p-value <= 0.05);
* ``scipy.stats.anderson`` for the normal family, rejecting when the statistic is at least
  its 5% critical value.

Every cell uses its own data seed (fixed), and data set i of a cell its own bootstrap seed,
so a rerun gives the same table.  Prints a Markdown table (rejection rate and its binomial
standard error sqrt(p(1 - p)/N)) and writes it, with the command on the first line, to
``docs/benchmarks/gof_power.txt``::

    python docs/scripts/gof_power.py [--datasets 200] [--resamples 199] [--no-write]
"""
from __future__ import annotations

import argparse
import math
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:   # run against the in-place build of this checkout
    sys.path.insert(0, str(ROOT))

import energystats as es  # noqa: E402

ALPHA = 0.05
SIZES = (20, 100)
SEED = 2026

#: (label, draw(rng, n))
ALTERNATIVES = [
    ("normal (level)", lambda g, n: g.standard_normal(n)),
    ("t, 5 df", lambda g, n: g.standard_t(5, size=n)),
    ("lognormal, sigma 0.5", lambda g, n: g.lognormal(0.0, 0.5, size=n)),
    ("0.5 N(0,1) + 0.5 N(3,1)",
     lambda g, n: g.standard_normal(n) + 3.0 * (g.random(n) < 0.5)),
]


def anderson_rejects(x):
    """Anderson–Darling test of normality at 5%: statistic >= SciPy's 5% critical value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)   # SciPy >= 1.17: critical values deprecated
        r = stats.anderson(x, "norm")
    if hasattr(r, "critical_values"):
        levels = [float(v) for v in r.significance_level]
        return bool(r.statistic >= r.critical_values[levels.index(5.0)])
    return bool(stats.anderson(x, "norm", method="interpolate").pvalue <= ALPHA)  # SciPy >= 1.19


TESTS = [
    ("energy, bootstrap", None),
    ("energy, limit", None),
    ("Shapiro–Wilk", lambda x: stats.shapiro(x).pvalue <= ALPHA),
    ("Anderson–Darling", anderson_rejects),
]


def run(n_datasets, n_resamples):
    rows = []
    for n in SIZES:
        for k, (label, draw) in enumerate(ALTERNATIVES):
            g = np.random.default_rng([SEED, n, k])      # the data of this cell
            rej = np.zeros(len(TESTS), dtype=int)
            for i in range(n_datasets):
                x = draw(g, n)
                boot = es.normality_test(x, n_resamples=n_resamples, rng=100_000 * k + 1000 * n + i)
                lim = es.normality_test(x, method="limit")
                rej[0] += boot.pvalue <= ALPHA
                rej[1] += lim.pvalue <= ALPHA
                rej[2] += TESTS[2][1](x)
                rej[3] += TESTS[3][1](x)
            rows.append((n, label, rej / n_datasets))
    return rows


def markdown(rows, n_datasets):
    head = "| n | data | " + " | ".join(t for t, _ in TESTS) + " |"
    sep = "|---:|:---|" + "---:|" * len(TESTS)
    lines = [head, sep]
    for n, label, rates in rows:
        cells = [f"{p:.3f} ± {math.sqrt(p * (1 - p) / n_datasets):.3f}" for p in rates]
        lines.append(f"| {n} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=200, help="data sets per cell (default 200)")
    ap.add_argument("--resamples", type=int, default=199, help="bootstrap samples (default 199)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    a = ap.parse_args()
    t0 = time.perf_counter()
    rows = run(a.datasets, a.resamples)
    dt = time.perf_counter() - t0
    cmd = "python docs/scripts/gof_power.py" + (
        f" --datasets {a.datasets}" if a.datasets != 200 else "") + (
        f" --resamples {a.resamples}" if a.resamples != 199 else "")
    text = "\n".join([
        cmd,
        "",
        f"Rejection rates at alpha = {ALPHA} ± binomial standard error sqrt(p(1-p)/N), "
        f"N = {a.datasets} data sets per row (the same data sets for every test; data seed "
        f"[{SEED}, n, row], bootstrap seed 100000*row + 1000*n + i for data set i).",
        f"energy, bootstrap: energystats.normality_test, R = {a.resamples} parametric bootstrap "
        "samples; energy, limit: method='limit'; Shapiro–Wilk: scipy.stats.shapiro p <= 0.05; "
        "Anderson–Darling: scipy.stats.anderson(x, 'norm') statistic >= its 5% critical value.",
        "",
        markdown(rows, a.datasets),
        "",
        f"energystats {es.__version__}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"Python {platform.python_version()}, {platform.machine()}; {dt:.0f} s.",
    ])
    print(text)
    if not a.no_write:
        out = Path(__file__).resolve().parents[1] / "benchmarks" / "gof_power.txt"
        out.write_text(text + "\n")


if __name__ == "__main__":
    main()
