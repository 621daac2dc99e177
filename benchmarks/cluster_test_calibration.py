"""Calibration of cluster_test: level, what each reference tests, and power (Liu et al. 2008; Tibshirani et al. 2001).

``cluster_test`` compares S/T of the fitted partition with S/T of the same
clustering re-run on B reference data sets, as SigClust (Liu, Hayes, Nobel &
Marron 2008, "Statistical significance of clustering for high-dimension,
low-sample size data", JASA 103(483)) and the gap statistic (Tibshirani,
Walther & Hastie 2001, "Estimating the number of clusters in a data set via
the gap statistic", JRSS B 63(2)); see docs/cluster_test_calibration.rst.
Every rate is the fraction of data sets with p <= alpha, for alpha = 0.05 and
0.10, ± its binomial standard error sqrt(r (1 - r) / m) over m data sets.

a. Level on single Gaussians (isotropic, and elongated with sd 10:1:...:1
   randomly rotated), d in {1, 2, 5}, n in {30, 100, 400}, for the
   references ``gaussian`` (exact) and ``uniform`` (a box, approximate).
b. Rejection rates on single non-Gaussian populations (uniform, exponential,
   lognormal, t3, a scale mixture of normals), d in {1, 2}, n = 100: what
   "more clustered than the reference" means in practice.
c. Power against two (k = 2) and three (k = 3) Gaussian groups, n = 100,
   d = 2, as the separation grows, for both references, the naive
   permutation test of the fitted labels (``cluster_test(..., naive=True)``)
   and sample splitting (``split_p``); separation 0 is one Gaussian, where
   the last two show that they are invalid.

The defaults of cluster_test throughout (k = 2 unless stated, B = n_resamples
= 99, n_init = 10, algorithm 'hartigan', n_threads = 1 per fit).  Each cell's
data sets are seeded from ``numpy.random.SeedSequence(seed, spawn_key=(cell,
i))``, so the results do not depend on the number of worker processes, and
the two references (and, in c, the four procedures) see the same data sets.
The script ends with the project's acceptance criteria and whether they hold.

Run::

    python benchmarks/cluster_test_calibration.py             # ~23 minutes on 2 cores (2 workers)
    python benchmarks/cluster_test_calibration.py --quick     # smoke run, ~1 minute
    python benchmarks/cluster_test_calibration.py --out docs/benchmarks/cluster_test_calibration.txt
    python benchmarks/cluster_test_calibration.py --level-cell isotropic:2:100 --sets 1000 --seed 777
                                                              # re-check one level cell, ~2.5 minutes

Data sets per cell (full run): level cells with n in {30, 100}, 400 for the
gaussian reference and 200 for the uniform one; n = 400, 100 and 60; table b,
200; table c, 200 per separation; table d, 3 samples of n = 2000.  The
recorded run took 1366 s on a 2-core machine (tables a 618 s, b 331 s, c 409 s,
d 8 s).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")     # one thread per worker process

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
import zlib  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402

import numpy as np  # noqa: E402

import energystats as es  # noqa: E402

ALPHAS = (0.05, 0.10)
B = 99            # cluster_test's default n_resamples; also the permutations of split_p
N_INIT = 10       # cluster_test's default n_init
REFS = ("gaussian", "uniform")
SEPARATIONS = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)


# --------------------------------------------------------------------------- populations

def rotation(rng, d):
    """A uniformly distributed rotation (Haar orthogonal matrix) of R^d."""
    Q, R = np.linalg.qr(rng.normal(size=(d, d)))
    return Q * np.sign(np.diag(R))


def gaussian(rng, n, d, shape):
    """One Gaussian: 'isotropic' N(0, I), or 'elongated' with sd 10:1:...:1 randomly rotated."""
    sd = np.ones(d)
    if shape == "elongated":
        sd[0] = 10.0
    return rng.normal(size=(n, d)) * sd @ rotation(rng, d).T


def non_gaussian(rng, n, d, name):
    """Independent coordinates, except the scale mixture (elliptical: one scale per point)."""
    if name == "uniform":
        return rng.uniform(-1, 1, size=(n, d))
    if name == "uniform box 3:1":     # sides 3:1:...:1, randomly rotated
        sd = np.ones(d)
        sd[0] = 3.0
        return rng.uniform(-1, 1, size=(n, d)) * sd @ rotation(rng, d).T
    if name == "exponential":
        return rng.exponential(size=(n, d))
    if name == "lognormal":
        return rng.lognormal(size=(n, d))
    if name == "t3":
        return rng.standard_t(3, size=(n, d))
    if name == "scale mixture":
        return rng.normal(size=(n, d)) * np.where(rng.random(n) < 0.5, 1.0, 3.0)[:, None]
    raise ValueError(name)


def groups(rng, n, d, k, sep):
    """k Gaussian groups N(c_j, I) of sizes as equal as possible, centres pairwise ``sep`` apart.

    k = 2: centres 0 and sep·e1; k = 3: the vertices of an equilateral triangle
    with side ``sep`` in the (e1, e2) plane.
    """
    centres = {2: [(0.0, 0.0), (1.0, 0.0)],
               3: [(0.0, 0.0), (1.0, 0.0), (0.5, np.sqrt(3) / 2)]}[k]
    X = rng.normal(size=(n, d))
    for j, idx in enumerate(np.array_split(np.arange(n), k)):
        X[idx, 0] += sep * centres[j][0]
        X[idx, 1] += sep * centres[j][1]
    return X


POPULATIONS = {
    "gaussian": lambda rng, n, d, arg: gaussian(rng, n, d, arg),
    "non-gaussian": lambda rng, n, d, arg: non_gaussian(rng, n, d, arg),
    "groups": lambda rng, n, d, arg: groups(rng, n, d, *arg),
}


# --------------------------------------------------------------------------- procedures

def reference_p(X, rng, k, null):
    return es.cluster_test(X, k, null=null, n_resamples=B, n_init=N_INIT, rng=rng,
                           n_threads=1).pvalue


def naive_p(X, rng, k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.AntiConservativeWarning)
        return es.cluster_test(X, k, n_resamples=B, n_init=N_INIT, naive=True, rng=rng,
                               n_threads=1).pvalue


def split_p(X, rng, k):
    """Sample splitting: cluster a random half, assign the other half with ``predict``,
    permutation-test S of the held-out half's assigned labels (B permutations)."""
    n = X.shape[0]
    perm = rng.permutation(n)
    train, test = X[perm[: n // 2]], X[perm[n // 2:]]
    lab = es.EnergyClustering(k, n_init=N_INIT, random_state=rng, n_threads=1).fit(train).predict(test)
    if np.bincount(lab, minlength=k).min() == 0:
        return 1.0                        # a group is empty: cannot test, "not rejected"
    obs = es.dispersion(test, lab, n_threads=1).S
    null = np.array([es.dispersion(test, rng.permutation(lab), n_threads=1).S for _ in range(B)])
    return (1 + np.sum(null >= obs * (1 - 1e-12))) / (B + 1)


def run_procedure(proc, X, rng, k):
    if proc in REFS:
        return reference_p(X, rng, k, proc)
    if proc == "naive":
        return naive_p(X, rng, k)
    if proc == "split":
        return split_p(X, rng, k)
    raise ValueError(proc)


# --------------------------------------------------------------------------- cells and workers

class Cell:
    """One population setting; ``sets[proc]`` data sets for each procedure, shared (paired)."""

    def __init__(self, table, kind, arg, n, d, k, sets):
        self.table, self.kind, self.arg, self.n, self.d, self.k = table, kind, arg, n, d, k
        self.sets = dict(sets)

    @property
    def key(self):
        return f"{self.table}|{self.kind}|{self.arg}|n={self.n}|d={self.d}|k={self.k}"

    def cost(self, proc):
        """Rough seconds per data set (for scheduling the biggest tasks first)."""
        base = 0.12 * max(1.0, (self.n / 100.0) ** 1.3)
        return base if proc in REFS else 0.02


def one_chunk(task):
    """p-values of procedure ``proc`` on data sets ``lo .. hi - 1`` of a cell.

    Data set i of a cell is drawn from SeedSequence(seed, spawn_key=(cell, i)),
    whichever procedure runs on it (paired); the procedure's own randomness
    (reference sets, clusterings, permutations) from spawn_key=(cell, i, j + 1),
    j its index in the cell, so no stream depends on the chunking or the workers.
    """
    kind, arg, n, d, k, key, seed, lo, hi, proc, j = task
    cell = zlib.crc32(key.encode())
    out = []
    for i in range(lo, hi):
        X = POPULATIONS[kind](np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(cell, i))),
                              n, d, arg)
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(cell, i, j + 1)))
        out.append(run_procedure(proc, X, rng, k))
    return key, proc, lo, out


def tasks_of(cells, seed, chunk=20):
    """Chunks of at most ``chunk`` data sets of one procedure in one cell, biggest first."""
    tasks = []
    for c in cells:
        for j, (proc, m) in enumerate(c.sets.items()):
            for lo in range(0, m, chunk):
                hi = min(lo + chunk, m)
                tasks.append((c.cost(proc) * (hi - lo),
                              (c.kind, c.arg, c.n, c.d, c.k, c.key, seed, lo, hi, proc, j)))
    tasks.sort(key=lambda t: -t[0])
    return [t for _, t in tasks]


def run_cells(cells, seed, workers):
    """{cell key: {procedure: p-values in data-set order}}."""
    results = {c.key: {p: {} for p in c.sets} for c in cells}
    tasks = tasks_of(cells, seed)
    if workers <= 1:
        done = map(one_chunk, tasks)
        pool = None
    else:
        pool = ProcessPoolExecutor(max_workers=workers)
        done = pool.map(one_chunk, tasks)
    try:
        for key, proc, lo, ps in done:
            for i, v in enumerate(ps):
                results[key][proc][lo + i] = v
    finally:
        if pool is not None:
            pool.shutdown()
    return {key: {p: np.array([d[i] for i in sorted(d)]) for p, d in r.items()}
            for key, r in results.items()}


# --------------------------------------------------------------------------- formatting

def rate(ps, alpha):
    r = float(np.mean(ps <= alpha + 1e-12))
    return r, np.sqrt(r * (1 - r) / ps.size)


def fmt(ps, alpha):
    r, se = rate(ps, alpha)
    return f"{r:.3f} ± {se:.3f}"


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the tables

def plan(quick):
    """The cells of tables a, b, c and their data sets per procedure."""
    if quick:
        m_acc, m_a400, m_unif, m_unif400, m_b, m_c = 10, 4, 10, 4, 8, 8
    else:
        m_acc, m_a400, m_unif, m_unif400, m_b, m_c = 400, 100, 200, 60, 200, 200
    a, b, c = [], [], []
    shapes = [(1, "isotropic")] + [(d, s) for d in (2, 5) for s in ("isotropic", "elongated")]
    for d, shape in shapes:
        for n in (30, 100, 400):
            sets = ({"gaussian": m_a400, "uniform": m_unif400} if n == 400
                    else {"gaussian": m_acc, "uniform": m_unif})
            a.append(Cell("a", "gaussian", shape, n, d, 2, sets))
    for d in (1, 2):
        for name in ("uniform", "uniform box 3:1", "exponential", "lognormal", "t3", "scale mixture"):
            if d == 1 and name == "uniform box 3:1":
                continue                  # the same as 'uniform' at d = 1
            b.append(Cell("b", "non-gaussian", name, 100, d, 2, {"gaussian": m_b, "uniform": m_b}))
    for k in (2, 3):
        for sep in SEPARATIONS:
            c.append(Cell("c", "groups", (k, sep), 100, 2, k,
                          {"gaussian": m_c, "uniform": m_c, "naive": m_c, "split": m_c}))
    return a, b, c


def table_a(cells, res):
    header = ["population", "d", "n", "sets", "gaussian, 0.05", "gaussian, 0.10",
              "sets", "uniform, 0.05", "uniform, 0.10"]
    rows = []
    for c in cells:
        r = res[c.key]
        label = "Gaussian (d = 1)" if c.d == 1 else f"Gaussian, {c.arg}"
        rows.append([label, c.d, c.n,
                     r["gaussian"].size, fmt(r["gaussian"], 0.05), fmt(r["gaussian"], 0.10),
                     r["uniform"].size, fmt(r["uniform"], 0.05), fmt(r["uniform"], 0.10)])
    return md_table(header, rows)


def table_b(cells, res):
    header = ["population", "d", "n", "sets", "gaussian, 0.05", "gaussian, 0.10",
              "uniform, 0.05", "uniform, 0.10"]
    rows = []
    for c in cells:
        r = res[c.key]
        rows.append([c.arg, c.d, c.n, r["gaussian"].size,
                     fmt(r["gaussian"], 0.05), fmt(r["gaussian"], 0.10),
                     fmt(r["uniform"], 0.05), fmt(r["uniform"], 0.10)])
    return md_table(header, rows)


def table_c(cells, res, alpha):
    header = ["groups, k", "separation [sd]", "sets", "gaussian", "uniform",
              "naive permutation", "sample splitting"]
    rows = []
    for c in cells:
        r = res[c.key]
        k, sep = c.arg
        rows.append([f"{k} groups, k = {c.k}", f"{sep:g}", r["gaussian"].size,
                     fmt(r["gaussian"], alpha), fmt(r["uniform"], alpha),
                     fmt(r["naive"], alpha), fmt(r["split"], alpha)])
    return md_table(header, rows)


def acceptance(a_cells, c_cells, res):
    """The project's criteria: the gaussian reference's level within 2 binomial SE of alpha
    (SE at alpha: sqrt(alpha (1 - alpha) / m)) for n in {30, 100}; power at 3 sd >= 0.84."""
    lines, ok_all = [], True
    checks = 0
    fails = []
    pooled = {a: [0, 0] for a in ALPHAS}
    for c in a_cells:
        if c.n not in (30, 100):
            continue
        ps = res[c.key]["gaussian"]
        for a in ALPHAS:
            r, _ = rate(ps, a)
            se0 = np.sqrt(a * (1 - a) / ps.size)
            checks += 1
            pooled[a][0] += int(np.sum(ps <= a + 1e-12))
            pooled[a][1] += ps.size
            if abs(r - a) > 2 * se0:
                fails.append(f"{'Gaussian (d = 1)' if c.d == 1 else 'Gaussian, ' + c.arg}, "
                             f"d = {c.d}, n = {c.n}, alpha = {a}: {r:.3f} "
                             f"({(r - a) / se0:+.1f} SE)")
    lines.append(f"1. gaussian reference, level within 2 binomial SE of alpha (SE at alpha) "
                 f"on single Gaussians, d in {{1, 2, 5}}, n in {{30, 100}}: "
                 f"{checks - len(fails)} of {checks} checks hold"
                 + (" -- HOLDS" if not fails else " -- outside: " + "; ".join(fails)))
    if fails:
        ok_all = False
        lines.append(f"   ({checks} checks at 2 SE: an exact test fails about 5% of them, "
                     f"i.e. about {0.05 * checks:.1f}, by chance.)")
    for a, (hits, m) in pooled.items():
        r = hits / m
        se0 = np.sqrt(a * (1 - a) / m)
        lines.append(f"   pooled over those cells at alpha = {a}: {r:.4f} over {m} data sets "
                     f"({(r - a) / se0:+.1f} SE at alpha)")
    c3 = next(c for c in c_cells if c.arg == (2, 3.0))
    p3, se3 = rate(res[c3.key]["gaussian"], 0.05)
    ok = p3 >= 0.84
    ok_all &= ok
    lines.append(f"2. power at 3 sd separation (two equal groups, n = 100, d = 2, k = 2, alpha = "
                 f"0.05), gaussian reference: {p3:.3f} ± {se3:.3f} (>= 0.84: "
                 f"{'HOLDS' if ok else 'FAILS'})")
    return "\n".join(lines), ok_all


LARGE_N, LARGE_REPS = 2000, 3


def large_sample_row(task):
    """Mean S/T (k groups, Hartigan, n_init = 3) of LARGE_REPS samples of size LARGE_N of a
    population, and of one draw of each reference of each sample (the package's samplers)."""
    from energystats.clustering.significance import reference_sampler

    kind, arg, d, k, key, seed, n = task
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(zlib.crc32(key.encode()),)))
    vals = {"data": [], "gaussian": [], "uniform": []}

    def st(X):
        est = es.EnergyClustering(k, n_init=3, random_state=rng.integers(2**31), n_threads=1).fit(X)
        return est.S_ / est.T_

    for _ in range(LARGE_REPS):
        X = POPULATIONS[kind](rng, n, d, arg)
        vals["data"].append(st(X))
        for null in REFS:
            vals[null].append(st(reference_sampler(X, null)(rng)))
    return key, {name: float(np.mean(v)) for name, v in vals.items()}


def table_d(b_cells, c_cells, seed, workers, quick):
    """Where the data sit relative to each reference for large n: S/T of the population and of
    the Gaussian / the box with its mean and covariance."""
    n = 300 if quick else LARGE_N
    rows = [(c.arg, c.kind, c.arg, c.d, c.k) for c in b_cells]
    rows += [(f"{c.arg[0]} groups, separation {c.arg[1]:g}", c.kind, c.arg, c.d, c.k) for c in c_cells]
    tasks = [(kind, arg, d, k, f"d|{label}|d={d}|k={k}", seed, n) for label, kind, arg, d, k in rows]
    if workers <= 1:
        out = dict(map(large_sample_row, tasks))
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            out = dict(pool.map(large_sample_row, tasks))
    header = ["population", "d", "k", "S/T of the data", "Gaussian with its mean and covariance",
              "box with its mean and covariance"]
    body = []
    for (label, kind, arg, d, k), t in zip(rows, tasks):
        v = out[t[4]]
        body.append([label, d, k, f"{v['data']:.3f}", f"{v['gaussian']:.3f}", f"{v['uniform']:.3f}"])
    return n, md_table(header, body)


def level_cell(args):
    """One single-Gaussian cell with the gaussian reference, many data sets (an independent
    re-check of a table-a cell: use another --seed)."""
    shape, d, n = args.level_cell.split(":")
    cell = Cell("check", "gaussian", shape, int(n), int(d), 2, {"gaussian": args.sets})
    t0 = time.perf_counter()
    ps = run_cells([cell], args.seed, args.workers)[cell.key]["gaussian"]
    print(f"single Gaussian, {shape}, d = {d}, n = {n}; gaussian reference, defaults; "
          f"{ps.size} data sets; seed {args.seed}")
    print(md_table(["alpha", "rejection rate", "SE at alpha", "(rate - alpha) / SE"],
                   [[f"{a:.2f}", f"{rate(ps, a)[0]:.3f}", f"{np.sqrt(a * (1 - a) / ps.size):.3f}",
                     f"{(rate(ps, a)[0] - a) / np.sqrt(a * (1 - a) / ps.size):+.1f}"]
                    for a in (0.01, 0.02, 0.05, 0.10, 0.20, 0.50)]))
    print(f"({time.perf_counter() - t0:.0f} s)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smoke run (~1 minute): few data sets per cell")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (results do not depend on it)")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--tables", default="abcd", help="which tables to run, e.g. 'a' or 'bcd'")
    ap.add_argument("--level-cell", metavar="SHAPE:D:N",
                    help="instead of the tables: the gaussian reference's rejection rates at several "
                         "alphas on one single-Gaussian cell (e.g. isotropic:2:100), --sets data sets")
    ap.add_argument("--sets", type=int, default=1000, help="data sets for --level-cell")
    ap.add_argument("--out", help="also write the output to this file "
                                  "(e.g. docs/benchmarks/cluster_test_calibration.txt)")
    args = ap.parse_args(argv)

    if args.level_cell:
        return level_cell(args)
    lines = []

    def emit(text=""):
        print(text, flush=True)
        lines.append(text)

    cmd = "python benchmarks/cluster_test_calibration.py" + "".join(
        f" {a}" for a in (argv if argv is not None else sys.argv[1:]) if a)
    emit(f"$ {cmd}    # {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
         f"{os.cpu_count()}-core machine, {args.workers} worker processes")
    emit(f"energystats {es.__version__}, numpy {np.__version__}, Python {platform.python_version()}; "
         f"cluster_test defaults: B = {B}, n_init = {N_INIT}, algorithm 'hartigan', k = 2 unless "
         f"stated; seed {args.seed}")
    emit("rate = fraction of data sets with p <= alpha, ± binomial SE sqrt(r(1 - r)/m); "
         "'sets' = m data sets per cell (paired: both references see the same data sets)")
    a_cells, b_cells, c_cells = plan(args.quick)
    t_all = time.perf_counter()
    res = {}
    if "a" in args.tables:
        t0 = time.perf_counter()
        res.update(run_cells(a_cells, args.seed, args.workers))
        emit()
        emit("## a. Level on single Gaussians (no clusters), k = 2")
        emit("elongated: sd 10:1:...:1, randomly rotated; at d = 1 isotropic and elongated "
             "coincide (S/T is scale-free)")
        emit()
        emit(table_a(a_cells, res))
        emit(f"({time.perf_counter() - t0:.0f} s)")
    if "b" in args.tables:
        t0 = time.perf_counter()
        res.update(run_cells(b_cells, args.seed, args.workers))
        emit()
        emit("## b. Rejection rates on single non-Gaussian populations (no clusters), n = 100, k = 2")
        emit("independent coordinates: uniform(-1, 1) (at d = 2 a square), exponential(1), "
             "lognormal(0, 1), t with 3 df; uniform box 3:1: a 3:1 rectangle, randomly rotated; "
             "scale mixture: N(0, s^2 I) with s = 1 or 3, each with probability 1/2.  For the "
             "'uniform' reference the two uniform rows are levels")
        emit()
        emit(table_b(b_cells, res))
        emit(f"({time.perf_counter() - t0:.0f} s)")
    if "c" in args.tables:
        t0 = time.perf_counter()
        res.update(run_cells(c_cells, args.seed, args.workers))
        emit()
        emit("## c. Power against separated Gaussian groups, n = 100, d = 2")
        emit("groups N(c_j, I), sizes as equal as possible; 2 groups: centres `separation` apart "
             "on e1, clustered with k = 2; 3 groups: an equilateral triangle with side "
             "`separation`, clustered with k = 3.  Separation 0 is one Gaussian: the rates there "
             "are levels.  'naive permutation': cluster_test(..., naive=True); 'sample "
             "splitting': cluster half, predict the other half, permutation test of S "
             f"({B} permutations)")
        for alpha in ALPHAS:
            emit()
            emit(f"alpha = {alpha:.2f}:")
            emit()
            emit(table_c(c_cells, res, alpha))
        emit(f"({time.perf_counter() - t0:.0f} s)")
    if "d" in args.tables:
        t0 = time.perf_counter()
        n_large, text = table_d(b_cells, c_cells, args.seed, args.workers, args.quick)
        emit()
        emit(f"## d. Large samples: S/T of the data and of each reference (n = {n_large}, mean of "
             f"{LARGE_REPS} samples, n_init = 3)")
        emit("the populations of b and c; 'Gaussian' / 'box with its mean and covariance': one "
             "reference set of each sample (cluster_test's samplers).  For large n the test "
             "rejects when the data's S/T exceeds its reference's: the columns say what each "
             "reference can detect")
        emit()
        emit(text)
        emit(f"({time.perf_counter() - t0:.0f} s)")
    if "a" in args.tables and "c" in args.tables:
        emit()
        emit("## Acceptance criteria")
        emit()
        text, _ = acceptance(a_cells, c_cells, res)
        emit(text)
        if args.quick:
            emit("(--quick: far too few data sets per cell to judge the criteria)")
    emit()
    emit(f"# total {time.perf_counter() - t_all:.0f} s")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
