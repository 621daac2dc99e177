"""How often the time-series diagnostics speak: on independent series (normal and t(3), where
they should stay silent: <= 5 %) and on the designs whose dependence block resampling cannot
see (seasonal AR, ARFIMA, random walks, a near-unit-root VAR), where they should warn.

Each cell draws ``--reps`` series (fixed seeds; the designs of ``changepoint_level.py``) and
runs ``energystats._core._serial.series_findings`` on the raw series: the checks that
``cross_distance_correlation_test`` runs on x and y, and that ``e_divisive`` (with tests, any
resampling) runs on the series (unit root) and on the residuals of its segments (long memory,
seasonality; a unit root is reported when the augmented Dickey-Fuller test does not reject
and KPSS rejects, both at 5 %).  Prints, per cell, the share of series with
any finding and with each kind, with binomial standard errors, and the share of series in
which the Dickey-Fuller test alone does not reject (what the unit-root finding was before it
asked KPSS to agree).

    python benchmarks/series_diagnostics.py --reps 300
    python benchmarks/series_diagnostics.py --reps 300 --short    # the short-series cells only
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from changepoint_level import simulate  # noqa: E402

from energystats._core._serial import ADF_CRITICAL, adf_t, series_findings  # noqa: E402

CELLS = ([("iid", T) for T in (100, 500, 2000)] + [("t3", T) for T in (100, 500, 2000)]
         + [("ar0.5", 500), ("ar0.8", 500), ("arma", 500), ("garch", 500), ("var", 500),
            ("arn0.8", 200), ("arn0.8", 500)]
         + [("sar4", 480), ("sar12", 480), ("sar52", 520), ("arfima0.2", 500), ("arfima0.3", 500),
            ("arfima0.4", 500), ("var0.9", 500), ("rw", 200), ("rw", 500), ("iar0.5", 200)])
#: short series, where Dickey-Fuller alone has little power against persistence
SHORT = [("iid", 80), ("ar0.5", 80), ("ar0.8", 80), ("ar0.5", 200), ("ar0.8", 200), ("rw", 80)]
KINDS = ("unit root", "long memory", "seasonal")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--short", action="store_true", help="only the short-series cells")
    a = ap.parse_args(argv)
    print(f"# python benchmarks/series_diagnostics.py --reps {a.reps}"
          + (" --short" if a.short else ""))
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    print(f"{'design':<10} {'T':>5} {'any':>13} " + " ".join(f"{k:>12}" for k in KINDS)
          + f" {'ADF alone':>12}")
    t0 = time.perf_counter()
    for design, T in (SHORT if a.short else CELLS + SHORT):
        hits = np.zeros((a.reps, len(KINDS) + 2))
        for r in range(a.reps):
            x = simulate(design, T, np.random.default_rng(90_000 + r))
            found, _ = series_findings(x, [f"x{j}" for j in range(x.shape[1])])
            kinds = {k for k, _ in found}
            hits[r, 0] = bool(kinds & set(KINDS))
            hits[r, 1:-1] = [k in kinds for k in KINDS]
            hits[r, -1] = any(adf_t(x[:, j]) > ADF_CRITICAL for j in range(x.shape[1]))
        p = hits.mean(axis=0)
        se = np.sqrt(p * (1 - p) / a.reps)
        print(f"{design:<10} {T:>5} {p[0]:>6.3f} ± {se[0]:.3f} "
              + " ".join(f"{v:>12.3f}" for v in p[1:]))
    print(f"# wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
