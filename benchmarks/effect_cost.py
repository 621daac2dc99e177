"""The cost of ``weighted_effect`` at n = 2 000 (the guide's confounded design, d = 4, ATE
weights): the default (augmented, kernel model, influence SE), the old default (difference of
weighted means, half-samples that solve the weights again) and the augmented estimator with
half-samples that also refit the model; ``--n-boot`` resamples (default 20; the per-resample
cost is what the 200-resample comparison scales with), on this machine's worker processes.

    python benchmarks/effect_cost.py [--n 2000] [--n-boot 20]
"""
import argparse
import os
import sys
import time

import energystats as es

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_balance import simulate  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--n-boot", type=int, default=20)
    a = ap.parse_args()
    print(f"# python benchmarks/effect_cost.py --n {a.n} --n-boot {a.n_boot}; load "
          f"{os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    X, t, y = simulate(1, a.n)
    res = es.energy_balancing_weights(X, t)
    runs = (("default (augmented, influence SE)", {}),
            (f"old default: weighted difference, {a.n_boot} half-samples",
             {"outcome_model": None, "se": "subsample", "n_boot": a.n_boot}),
            (f"augmented, {a.n_boot} half-samples (model refitted)",
             {"se": "subsample", "n_boot": a.n_boot}))
    for label, kw in runs:
        t0 = time.perf_counter()
        e = es.weighted_effect(y, res, rng=1, progress=False, **kw)
        print(f"{label}: {time.perf_counter() - t0:.1f} s (estimate {e.estimate[0]:.3f}, "
              f"se {e.std_error[0]:.3f})", flush=True)


if __name__ == "__main__":
    main()
