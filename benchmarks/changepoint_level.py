"""The level of E-Divisive's tests on serially dependent series without a change, and the power
that the block permutation costs on independent series.

Each cell draws ``--reps`` series of length T with no change (fixed seeds) from one design and
runs ``energystats.e_divisive`` (``min_size=30``, ``n_resamples`` R, ``sig_level`` 0.05); a
series "rejects" when at least one change point is accepted, so the rate is the level of the
first test.  Designs (unit-variance innovations, a burn-in of 200 rows):

* ``iid``: N(0, 1);
* ``ar0.3``, ``ar0.5``, ``ar0.8``: AR(1), x_t = φ x_{t-1} + e_t;
* ``arma``: ARMA(1,1), φ = 0.5, θ = 0.4;
* ``garch``: GARCH(1,1), ω = 0.1, α = 0.1, β = 0.8 (uncorrelated, dependent in the variance);
* ``var``: d = 3 VAR(1), A = 0.5 I + 0.1 (off the diagonal), correlated innovations (ρ 0.3).

Power (``--power``): the iid and AR(0.3) designs with one change in the mean of ``--shift``
standard deviations (of the series) at T/2.

    python benchmarks/changepoint_level.py --reps 300 --T 200 500 --R 199
    python benchmarks/changepoint_level.py --reps 100 --T 2000 --R 99
    python benchmarks/changepoint_level.py --power --shift 0.3 --reps 100 --T 500

Prints one row per (design, T, resampling): the rejection rate, its binomial standard error,
the mean automatic block length, and the share of series that carried a warning about their
dependence (a SeriesDependenceWarning, or the lag-1 warning of resampling='permutation').  Runs the series on ``--jobs`` processes.
"""
from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
import zlib
from concurrent.futures import ProcessPoolExecutor

import numpy as np

DESIGNS = ("iid", "ar0.3", "ar0.5", "ar0.8", "arma", "garch", "var")
#: designs the automatic block length was not first measured on (issue 50): seasonal AR,
#: x_t = 0.6 x_{t-s} + e_t (s = 4, 12, 52), and ARFIMA(0, d, 0) by its MA weights
#: psi_k = psi_{k-1} (k - 1 + d) / k, truncated at 2 000 lags
EXTRA = ("sar4", "sar12", "sar52", "arfima0.2", "arfima0.3", "arfima0.4")
#: and for the series diagnostics: t(3) noise, a random walk, an integrated AR(1) (phi 0.5),
#: a d = 3 VAR(1) whose largest eigenvalue is 0.9 (A = 0.6 I + 0.1 (all ones))
#: and an AR(1) 0.8 observed with as much white noise (an ARMA(1,1): short memory)
DIAGNOSTIC = ("t3", "rw", "iar0.5", "var0.9", "arn0.8")
BURN = 200


def simulate(design, T, rng, shift=0.0):
    n = T + BURN
    if design in ("var", "var0.9"):
        d = 3
        A = np.full((d, d), 0.1) + (0.4 if design == "var" else 0.6) * np.eye(d)
        L = np.linalg.cholesky(0.7 * np.eye(d) + 0.3)
        e = rng.normal(size=(n, d)) @ L.T
        x = np.zeros((n, d))
        for t in range(1, n):
            x[t] = A @ x[t - 1] + e[t]
    else:
        e = rng.normal(size=n)
        x = np.zeros(n)
        if design == "iid":
            x = e
        elif design == "t3":
            x = rng.standard_t(3, size=n)
        elif design == "arn0.8":
            for t in range(1, n):
                x[t] = 0.8 * x[t - 1] + e[t]
            x = x + rng.normal(size=n)
        elif design == "rw":
            x = np.cumsum(e)
        elif design == "iar0.5":
            for t in range(1, n):
                x[t] = 0.5 * x[t - 1] + e[t]
            x = np.cumsum(x)
        elif design.startswith("sar"):
            s_ = int(design[3:])
            e = rng.normal(size=n + 10 * s_)
            x = np.zeros(n + 10 * s_)
            for t in range(s_, x.size):
                x[t] = 0.6 * x[t - s_] + e[t]
            x = x[10 * s_:]
        elif design.startswith("arfima"):
            d_ = float(design[6:])
            K = 2000
            psi = np.ones(K)
            for k in range(1, K):
                psi[k] = psi[k - 1] * (k - 1 + d_) / k
            e = rng.normal(size=n + K)
            x = np.convolve(e, psi, mode="full")[K:K + n]
        elif design == "arma":
            for t in range(1, n):
                x[t] = 0.5 * x[t - 1] + e[t] + 0.4 * e[t - 1]
        elif design.startswith("ar"):
            phi = float(design[2:])
            for t in range(1, n):
                x[t] = phi * x[t - 1] + e[t]
        elif design == "garch":
            h = np.full(n, 0.1 / (1 - 0.9))
            for t in range(1, n):
                h[t] = 0.1 + 0.1 * x[t - 1] ** 2 + 0.8 * h[t - 1]
                x[t] = np.sqrt(h[t]) * e[t]
        x = x[:, None]
    x = x[BURN:]
    if shift:
        x = x.copy()
        x[T // 2:] += shift * x.std(axis=0)
    return x


def one(job):
    import energystats as es

    design, T, resampling, seed, R, shift = job
    rng = np.random.default_rng(seed)
    x = simulate(design, T, rng, shift)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = es.e_divisive(x, min_size=30, n_resamples=R, rng=seed, resampling=resampling,
                            n_threads=1)
    # warned: a SeriesDependenceWarning, or the permutation test's lag-1 ChangePointWarning
    warned = any(issubclass(w.category, es.SeriesDependenceWarning)
                 or "not exchangeable" in str(w.message) for w in caught)
    return (int(res.changepoints.size > 0), (res.block_sizes[0] if res.block_sizes else 1),
            int(warned))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--T", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--R", type=int, default=199)
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS),
                    help=f"of {', '.join(DESIGNS + EXTRA + DIAGNOSTIC)}")
    ap.add_argument("--resampling", nargs="+", default=["permutation", "block"])
    ap.add_argument("--power", action="store_true",
                    help="a change in the mean of --shift sd at T/2, iid and ar0.3")
    ap.add_argument("--shift", type=float, default=0.8, help="with --power (default: 0.8)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    args = ap.parse_args()
    designs = ["iid", "ar0.3"] if args.power and args.designs == list(DESIGNS) else args.designs
    shift = args.shift if args.power else 0.0
    print(f"# python benchmarks/changepoint_level.py {' '.join(os.sys.argv[1:])}")
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, "
          f"{args.jobs} processes; min_size 30, sig_level 0.05, R = {args.R}"
          + (f"; a mean change of {shift} sd at T/2" if shift else "; no change"))
    print(f"{'design':<8}{'T':>6} {'resampling':<12}{'rejection':>10}{'± s.e.':>8}{'block':>7}"
          f"{'series':>8}{'warned':>8}")
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.jobs) as pool:
        for T in args.T:
            for design in designs:
                for resampling in args.resampling:
                    base = zlib.crc32(f"{design}-{T}".encode()) % 2**31   # fixed seeds
                    seeds = [base + i for i in range(args.reps)]
                    jobs = [(design, T, resampling, s, args.R, shift) for s in seeds]
                    out = list(pool.map(one, jobs, chunksize=8))
                    rate = np.mean([o[0] for o in out])
                    se = np.sqrt(max(rate * (1 - rate), 0.05 * 0.95) / args.reps)
                    block = np.mean([o[1] for o in out]) if resampling == "block" else 1
                    warned = np.mean([o[2] for o in out])
                    print(f"{design:<8}{T:>6} {resampling:<12}{rate:>10.3f}{se:>8.3f}"
                          f"{block:>7.1f}{args.reps:>8}{warned:>8.3f}", flush=True)
    print(f"# wall time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
