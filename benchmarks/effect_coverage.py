"""Coverage of the 95 % intervals of ``weighted_effect`` (issue: "coverage of the bootstrap CI
measured by simulation on a confounded design with a known effect").

The design is the confounded study of ``docs/guide/balance.rst`` (``simulate`` in
``benchmarks/bench_balance.py``): X ~ N(0, I_4), logit P(t = 1) = -0.3 + 0.8 x0 + 0.6 x1² -
0.5 x2 x3, y = t + x0 + x1² + 0.5 x2 x3 + N(0, 1); the effect is 1 for everybody, so
ATE = ATT = 1.  For each of ``--reps`` data sets of ``--n`` rows (data set r drawn with seed
``seed0 + r``) the ATE energy balancing weights are computed with the default options, and
``weighted_effect`` gives

* the default, **half-sampling** (``se='subsample'``, ``--n-boot`` half-samples, weights
  solved again on each, ``rng = seed0 + r``) with its **normal** interval
  ``estimate ± z·std_error`` (the default ``ci_method='normal'``), and the **subsampling
  percentile** interval ``[est - f(q_hi - est), est - f(q_lo - est)]``, f = sqrt(b/(n-b)),
  b = sum of max(2, ⌊n_g/2⌋), computed here from the same run's ``boot`` (the half-sample
  estimates), which is what ``ci_method='percentile'`` returns for the same seed, without a
  second run;
* the with-replacement **bootstrap** (``se='bootstrap'``, ``--n-boot-bootstrap`` resamples,
  default ``--n-boot``, same seed) and its **percentile** interval, and the **normal**
  bootstrap interval from the *same* bootstrap's ``std_error``;
* the **sandwich** interval (HC0, the weights held fixed),

each for the difference of weighted means (``covariates=None``) and the regression-adjusted
estimate (``covariates=True``: linear in x, while the truth is not).  The adjusted runs use
the same seeds, so the same resampled rows, as the unadjusted ones.

The table gives, per interval: the coverage of the true effect 1 with its binomial standard
error sqrt(p(1-p)/reps), a flag (``ok`` within 2 SE of 0.95, else ``low``/``high``), how many
intervals missed on either side (``above``: the whole interval above 1), the mean width; and
per estimator: the bias (mean estimate - 1) with its Monte Carlo SE, the RMSE, the mean
standard error the method reports against the Monte Carlo SD of the estimates (and their
ratio).  The **oracle** row of each estimator is the interval estimate ± 1.96 × the Monte
Carlo SD: the right width, centred where the biased estimate falls, so its coverage is what
the bias alone allows (normal theory: Φ(1.96 - bias/SD) + Φ(-1.96 - bias/SD), printed below
the table).  An interval whose standard error is about the Monte Carlo SD covers about as
often as the oracle; the shortfall from 0.95 that it shares with the oracle is the bias's,
the rest (a narrower or wider interval than the oracle's) is the standard error's.  The
half-sample percentile row repeats the normal row's mean SE (the same run).

    python benchmarks/effect_coverage.py        # docs/benchmarks/effect_coverage.txt
    python benchmarks/effect_coverage.py --reps 20 --n-boot 50 --no-adjusted   # quick look

``--threads`` worker processes run whole data sets in parallel (``--parallel datasets``, the
default, each resampling in one process) or each run's resamples
(``--parallel bootstrap``, ``weighted_effect(n_threads=...)``).
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import subprocess
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.special import ndtri

import energystats as es

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_balance import simulate  # noqa: E402 (the design of the guide page)

TRUTH = 1.0
CONFIDENCE = 0.95


def one_dataset(seed, n, n_boot, n_boot_bootstrap, adjusted, n_threads):
    """Intervals of one data set: ``{(adjustment, method): (estimate, se, lo, hi)}``, the failed
    resamples ``{(adjustment, se): count}``, and the warnings (category: message) raised on
    the way."""
    X, t, y = simulate(seed, n)
    z = float(ndtri(0.5 + CONFIDENCE / 2))
    # the half-samples' size: max(2, floor(n_g / 2)) rows of each level (weighted_effect's rule)
    b = sum(max(2, int(np.sum(t == g)) // 2) for g in np.unique(t))
    f = math.sqrt(b / (n - b))
    qs = [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2]
    out, failed = {}, {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = es.energy_balancing_weights(X, t, estimand="ATE")
        for adj, cov in [("unadjusted", None)] + ([("adjusted", True)] if adjusted else []):
            h = es.weighted_effect(y, res, covariates=cov, n_boot=n_boot,
                                   confidence=CONFIDENCE, rng=seed, n_threads=n_threads)
            assert h.se_method == "subsample" and h.ci_method == "normal"   # the defaults
            est, sd = float(h.estimate[0]), float(h.std_error[0])
            out[adj, "half-sample normal (default)"] = (est, sd, float(h.ci_low[0]),
                                                        float(h.ci_high[0]))
            qlo, qhi = np.quantile(h.boot[:, 0], qs)
            out[adj, "half-sample percentile"] = (est, sd, est - f * (qhi - est),
                                                  est - f * (qlo - est))
            failed[adj, "subsample"] = h.n_failed
            bt = es.weighted_effect(y, res, covariates=cov, se="bootstrap",
                                    n_boot=n_boot_bootstrap, confidence=CONFIDENCE,
                                    ci_method="percentile", rng=seed, n_threads=n_threads)
            est, sd = float(bt.estimate[0]), float(bt.std_error[0])
            out[adj, "bootstrap percentile"] = (est, sd, float(bt.ci_low[0]),
                                                float(bt.ci_high[0]))
            out[adj, "bootstrap normal"] = (est, sd, est - z * sd, est + z * sd)
            failed[adj, "bootstrap"] = bt.n_failed
            s = es.weighted_effect(y, res, covariates=cov, se="sandwich", confidence=CONFIDENCE)
            out[adj, "sandwich (HC0)"] = (float(s.estimate[0]), float(s.std_error[0]),
                                          float(s.ci_low[0]), float(s.ci_high[0]))
    msgs = [f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught]
    return out, failed, msgs


def _job(args):
    return one_dataset(*args)


def machine():
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        lscpu = ""
    model = next((ln.split(":", 1)[1].strip() for ln in lscpu.splitlines()
                  if ln.startswith("Model name")), platform.processor() or "?")
    flags = set(next((ln.split(":", 1)[1].split() for ln in lscpu.splitlines()
                      if ln.startswith("Flags")), []))
    simd = ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in ("avx2", "avx512f"))
    return f"{model}; {os.cpu_count()} CPUs; {simd}"


def versions():
    parts = [f"energystats {es.__version__}", f"numpy {np.__version__}",
             f"python {platform.python_version()}"]
    for mod in ("osqp", "clarabel"):
        try:
            m = __import__(mod)
            parts.append(f"{mod} {getattr(m, '__version__', '?')}")
        except ImportError:
            pass
    return ", ".join(parts)


METHODS = ["half-sample normal (default)", "half-sample percentile", "bootstrap percentile",
           "bootstrap normal", "sandwich (HC0)"]


def _phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def summarise(results, reps, adjusted):
    z = float(ndtri(0.5 + CONFIDENCE / 2))
    z_nom = math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / reps)
    print(f"\nnominal {CONFIDENCE:.0%}; binomial SE at the nominal level sqrt(.95 .05 / {reps}) = "
          f"{z_nom:.4f}; flag 'ok' when |coverage - 0.95| <= 2 SE (SE from the coverage)\n")
    print("| estimate | interval | coverage ± SE | | missed: below / above 1 | mean width "
          "| bias ± SE | RMSE | mean SE | MC SD | mean SE / MC SD |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    adjs = ["unadjusted"] + (["adjusted"] if adjusted else [])
    notes = []
    for adj in adjs:
        rows = [(m, np.array([r[adj, m] for r in results])) for m in METHODS]   # (reps, 4)
        est0 = rows[0][1][:, 0]
        sd0 = est0.std(ddof=1)
        # the oracle: the estimate ± z × the Monte Carlo SD of the estimates
        rows.append(("oracle: est ± 1.96 MC SD", np.column_stack(
            [est0, np.full(reps, sd0), est0 - z * sd0, est0 + z * sd0])))
        for m, a in rows:
            est, se, lo, hi = a.T
            cover = (lo <= TRUTH) & (TRUTH <= hi)
            p = cover.mean()
            sp = math.sqrt(p * (1 - p) / reps)
            flag = "ok" if abs(p - CONFIDENCE) <= 2 * sp else ("low" if p < CONFIDENCE else "high")
            below, above = int((hi < TRUTH).sum()), int((lo > TRUTH).sum())
            bias = est.mean() - TRUTH
            sd = est.std(ddof=1)
            rmse = math.sqrt(np.mean((est - TRUTH) ** 2))
            print(f"| {adj} | {m} | {p:.3f} ± {sp:.3f} | {flag} | {below} / {above} "
                  f"| {np.mean(hi - lo):.3f} | {bias:+.3f} ± {sd / math.sqrt(reps):.3f} "
                  f"| {rmse:.3f} | {se.mean():.3f} | {sd:.3f} | {se.mean() / sd:.2f} |")
        bias0 = est0.mean() - TRUTH
        notes.append(f"{adj}: bias / MC SD = {bias0 / sd0:+.2f}; a normal estimate with this "
                     f"bias and the right SE covers Φ(1.96 - {bias0 / sd0:.2f}) + "
                     f"Φ(-1.96 - {bias0 / sd0:.2f}) = "
                     f"{_phi(z - bias0 / sd0) + _phi(-z - bias0 / sd0):.3f}")
    print()
    for line in notes:
        print(line)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200, help="data sets (default 200)")
    ap.add_argument("--n", type=int, default=300, help="rows per data set (default 300)")
    ap.add_argument("--n-boot", type=int, default=200,
                    help="half-samples (and bootstrap resamples; default 200)")
    ap.add_argument("--n-boot-bootstrap", type=int, default=None,
                    help="with-replacement bootstrap resamples (default: --n-boot)")
    ap.add_argument("--seed0", type=int, default=1000, help="data set r has seed seed0 + r")
    ap.add_argument("--threads", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--parallel", choices=["datasets", "bootstrap"], default="datasets",
                    help="what the workers share: whole data sets, or each bootstrap")
    ap.add_argument("--no-adjusted", dest="adjusted", action="store_false",
                    help="the difference of weighted means only (no covariates=True)")
    args = ap.parse_args(argv)
    if args.n_boot_bootstrap is None:
        args.n_boot_bootstrap = args.n_boot

    print("$ python " + " ".join(sys.argv))
    print(f"machine: {machine()}")
    print(f"versions: {versions()}")
    print(f"load average at start (1, 5, 15 min): "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"design: docs/guide/balance.rst 'A confounded study'; true effect {TRUTH} (ATE = ATT)")
    print(f"run: {args.reps} data sets of n = {args.n} (seeds {args.seed0}.."
          f"{args.seed0 + args.reps - 1}), ATE energy balancing weights (default options), "
          f"n_boot = {args.n_boot} half-samples and {args.n_boot_bootstrap} bootstrap resamples "
          f"(rng = the data set's seed), "
          f"{'unadjusted and adjusted' if args.adjusted else 'unadjusted only'}; "
          f"{args.threads} worker process(es) over "
          f"{'data sets' if args.parallel == 'datasets' else 'bootstrap resamples'}")
    print("the half-sample percentile (subsampling) interval is computed from the default "
          "run's half-sample estimates (its `boot`), the normal bootstrap interval is "
          "estimate ± 1.96·std_error of the percentile run's bootstrap (no second runs)",
          flush=True)

    t0 = time.perf_counter()
    n_threads = 1 if args.parallel == "datasets" else args.threads
    jobs = [(args.seed0 + r, args.n, args.n_boot, args.n_boot_bootstrap, args.adjusted,
             n_threads) for r in range(args.reps)]
    results, failed, msgs = [], {}, {}
    step = max(1, args.reps // 10)

    def collect(i, item):
        out, fl, ms = item
        results.append(out)
        for k, v in fl.items():
            failed[k] = failed.get(k, 0) + v
        for m in ms:
            msgs[m] = msgs.get(m, 0) + 1
        if (i + 1) % step == 0 or i + 1 == args.reps:
            print(f"  {i + 1}/{args.reps} data sets, {time.perf_counter() - t0:.0f} s",
                  flush=True)

    if args.parallel == "datasets" and args.threads > 1:
        with ProcessPoolExecutor(max_workers=args.threads) as ex:
            for i, item in enumerate(ex.map(_job, jobs)):
                collect(i, item)
    else:
        for i, job in enumerate(jobs):
            collect(i, _job(job))
    wall = time.perf_counter() - t0
    # CPU seconds of this process and its (finished) workers: the wall time less the waiting
    # for other jobs' processes on a shared machine
    cpu = sum(getattr(resource.getrusage(who), f) for who in
              (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))

    summarise(results, args.reps, args.adjusted)
    print()
    for (adj, se), v in failed.items():
        total = args.reps * (args.n_boot if se == "subsample" else args.n_boot_bootstrap)
        print(f"failed resamples ({adj}, se='{se}'): {v} of {total}")
    if msgs:
        print("warnings (count: category: message):")
        for m, c in sorted(msgs.items(), key=lambda kv: -kv[1]):
            print(f"  {c}: {m}")
    else:
        print("warnings: none")
    print(f"load average at end (1, 5, 15 min): {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"wall time: {wall:.0f} s ({wall / 60:.1f} min); CPU time of the run's processes: "
          f"{cpu:.0f} s ({cpu / 60:.1f} min; {cpu / wall:.2f} of the {os.cpu_count()} CPUs "
          f"on average)")


if __name__ == "__main__":
    main()
