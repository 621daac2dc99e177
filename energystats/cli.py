"""Command-line interface: ``energystats <command>`` or ``python -m energystats``.

Commands: ``distance``, ``test``, ``disco``, ``cluster`` and ``demo``; run
``energystats <command> --help`` for the options and an example.  Tables go
to standard output (``--format text|csv|json``); notes and progress go to
standard error (silenced by ``--quiet``).  Exit status 0 on success and 2 on
bad usage or bad data, with a one-line message that names the file, the
column or the option (``--debug`` shows the traceback instead).
"""
from __future__ import annotations

import argparse
import inspect
import itertools
import sys
import textwrap
import time

import numpy as np
import pandas as pd

from ._io import FORMATS, CLIError, check_missing, emit, numeric_columns, read_table, split_names, write_data

__all__ = ["main", "build_parser"]


# -- helpers -------------------------------------------------------------------

def _note(args, msg):
    """A note or progress line on stderr, unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(msg, file=sys.stderr, flush=True)


def _level(text):
    """argparse type of --alpha: a number in (0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1); got {text}")
    return value


def _metric_kwargs(args):
    """Validate --metric/--exponent/--sigma here so errors name the option."""
    if args.metric == "energy" and not (0.0 < args.exponent <= 2.0):
        raise CLIError(f"option --exponent: must lie in (0, 2]; got {args.exponent:g}.")
    if args.metric != "energy" and not (np.isfinite(args.sigma) and args.sigma > 0):
        raise CLIError(f"option --sigma: must be a finite number > 0; got {args.sigma:g}.")
    return {"metric": args.metric, "exponent": args.exponent, "sigma": args.sigma}


def _progress(args):
    """Show a progress bar (tqdm, on stderr) unless --quiet or tqdm is missing."""
    if args.quiet:
        return False
    import importlib.util

    return importlib.util.find_spec("tqdm") is not None


def _accepts(func, name):
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):  # pragma: no cover
        return False


def _need(name):
    """``energystats.<name>`` or fail with one line (exit 2) if this build lacks it."""
    import energystats

    func = getattr(energystats, name, None)
    if func is None:
        raise CLIError(f"energystats.{name} is not available in this installation.")
    return func


def _load(args, path, *, by=()):
    """Read ``path`` and return ``(df, cols)`` with checked numeric columns (and ``by``)."""
    df = read_table(path)
    for b in by:
        if b not in df.columns:
            raise CLIError(f"{path}: no column {b!r} (option --by); the file has {list(df.columns)}.")
    cols = numeric_columns(df, split_names(args.columns), exclude=by, path=path)
    df = check_missing(df, cols + list(by), path=path, dropna=args.dropna)
    if df.shape[0] == 0:
        raise CLIError(f"{path}: no rows left after --dropna.")
    _note(args, f"{path}: {df.shape[0]} rows; columns used: {', '.join(cols)}"
                + (f"; grouped by {', '.join(by)}" if by else ""))
    return df, cols


def _check_groups(df, by, path, minimum=2):
    key = df[by[0]] if len(by) == 1 else df[by].astype(str).agg("|".join, axis=1)
    counts = key.value_counts()
    if len(counts) < minimum:
        raise CLIError(f"{path}: column {by[0]!r} (option --by) has {len(counts)} group(s); "
                       f"need at least {minimum}.")
    return counts


def _verdict(args, line):
    """With ``--format text``, a one-line plain-language reading after the tables."""
    if args.format == "text":
        print(f"\n{line}")


def _fmt_groups(groups, sizes):
    return ", ".join(f"{g}: {int(s)}" for g, s in zip(groups, sizes))


# -- commands ------------------------------------------------------------------

def _cmd_distance(args):
    from . import energy_distance

    met = _metric_kwargs(args)
    rows = []
    if args.by:
        if len(args.files) != 1:
            raise CLIError("option --by: give one file with a grouping column, not two files.")
        path = args.files[0]
        by = split_names(args.by)
        df, cols = _load(args, path, by=by)
        _check_groups(df, by, path)
        key = df[by[0]] if len(by) == 1 else df[by].astype(str).agg("|".join, axis=1)
        groups = sorted(key.unique(), key=str)
        for a, b in itertools.combinations(groups, 2):
            xa, xb = df.loc[key == a, cols], df.loc[key == b, cols]
            rows.append(_distance_row(str(a), str(b), xa, xb, met, energy_distance))
    else:
        if len(args.files) != 2:
            raise CLIError(f"distance needs two files (A.csv B.csv), or one file and --by; "
                           f"got {len(args.files)} file(s).")
        pa, pb = args.files
        da, cols = _load(args, pa)
        db = read_table(pb)
        missing = [c for c in cols if c not in db.columns]
        if missing:
            raise CLIError(f"{pb}: no column {missing[0]!r} (used from {pa}); "
                           f"the file has {list(db.columns)}.")
        numeric_columns(db, cols, path=pb)
        db = check_missing(db, cols, path=pb, dropna=args.dropna)
        rows.append(_distance_row(pa, pb, da[cols], db[cols], met, energy_distance))
    table = pd.DataFrame(rows).set_index(["A", "B"])
    emit([("energy distance", table)], args.format)
    return 0


def _distance_row(a, b, xa, xb, met, energy_distance):
    n, m = len(xa), len(xb)
    e = energy_distance(xa, xb, **met)
    return {"A": a, "B": b, "n_A": n, "n_B": m, "E": e, "edist_R": n * m / (n + m) * e,
            "S": n * m / (2 * (n + m)) * e}


def _cmd_test(args):
    energy_test = _need("energy_test")
    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    path, by = args.file, split_names(args.by)
    if len(by) != 1:
        raise CLIError(f"option --by: the energy test takes one grouping column; got {by}.")
    df, cols = _load(args, path, by=by)
    _check_groups(df, by, path)
    kw = dict(by=by[0], columns=cols, n_resamples=args.resamples, rng=args.seed, **met)
    if _accepts(energy_test, "progress"):
        kw["progress"] = _progress(args)
    t0 = time.perf_counter()
    res = energy_test(df, **kw)
    _note(args, f"energy test: {args.resamples} resamples in {time.perf_counter() - t0:.2f} s")
    row = {"statistic": res.statistic, "pvalue": res.pvalue, "n_resamples": res.n_resamples}
    for extra in ("method", "exact"):
        if hasattr(res, extra):
            row[extra] = getattr(res, extra)
    row["groups"] = _fmt_groups(res.groups, res.sizes)
    table = pd.DataFrame([row], index=pd.Index(["energy test"], name="test"))
    emit([("energy test of equal distributions", table)], args.format)
    if res.pvalue is not None:
        if res.pvalue <= args.alpha:
            _verdict(args, f"verdict: the groups' distributions differ (p = {res.pvalue:.4g} <= "
                           f"alpha = {args.alpha:g}).")
        else:
            _verdict(args, f"verdict: no evidence that the groups' distributions differ "
                           f"(p = {res.pvalue:.4g} > alpha = {args.alpha:g}).")
    return 0


def _cmd_disco(args):
    disco = _need("disco")
    met = _metric_kwargs(args)
    if args.resamples < 0:
        raise CLIError(f"option --resamples: must be >= 0; got {args.resamples}.")
    path, by = args.file, split_names(args.by)
    df, cols = _load(args, path, by=by)
    for b in by:
        _check_groups(df, [b], path)
    kw = dict(by=by[0] if len(by) == 1 else by, columns=cols, n_resamples=args.resamples,
              rng=args.seed, **met)
    if _accepts(disco, "progress"):
        kw["progress"] = _progress(args)
    t0 = time.perf_counter()
    res = disco(df, **kw)
    _note(args, f"disco: {args.resamples} resamples in {time.perf_counter() - t0:.2f} s")
    table = res.to_frame()
    emit([("DISCO (distance components)", table)], args.format)
    if res.pvalue is not None:
        factors = [f for f in table.index if f not in ("Within", "Total")]
        for f, p in zip(factors, np.atleast_1d(res.pvalue)):
            what = "differ" if p <= args.alpha else "show no evidence of differing"
            _verdict(args, f"verdict: the groups of {f if f != 'Between' else by[0]} {what} "
                           f"(p = {p:.4g}, alpha = {args.alpha:g}).")
    return 0


def _cmd_cluster(args):
    met = _metric_kwargs(args)
    path = args.file
    df, cols = _load(args, path)
    n = df.shape[0]
    if not (2 <= args.k <= n):
        raise CLIError(f"option -k/--clusters: must be an integer in [2, n_samples={n}] "
                       f"({path}); got {args.k}.")
    if args.n_init < 1:
        raise CLIError(f"option --n-init: must be >= 1; got {args.n_init}.")
    if args.test and args.resamples < 1:
        raise CLIError(f"option --resamples: --test needs at least 1; got {args.resamples}.")
    X = df[cols]
    opts = dict(algorithm=args.algorithm, n_init=args.n_init, **met)
    t0 = time.perf_counter()
    if args.test:
        # cluster_test fits the data itself (same procedure as on every reference set)
        cluster_test = _need("cluster_test")
        kw = dict(null=args.null, n_resamples=args.resamples, random_state=args.seed,
                  rng=args.seed, **opts)
        kw = {k: v for k, v in kw.items() if _accepts(cluster_test, k)}
        if _accepts(cluster_test, "progress"):
            kw["progress"] = _progress(args)
        _note(args, f"clustering {n} rows into k={args.k} ({args.algorithm}, {args.n_init} "
                    f"restarts), then the same on {args.resamples} reference data sets drawn "
                    f"from the {args.null!r} null")
        tres = cluster_test(X, args.k, **kw)
        labels = np.asarray(tres.labels)
    else:
        EnergyClustering = _need("EnergyClustering")
        _note(args, f"clustering {n} rows into k={args.k} ({args.algorithm}, {args.n_init} restarts)")
        est = EnergyClustering(n_clusters=args.k, random_state=args.seed, **opts)
        labels = np.asarray(est.fit(X).labels_)
    _note(args, f"  done in {time.perf_counter() - t0:.2f} s")
    from . import dispersion

    disp = dispersion(X, labels, **met)
    sizes = pd.Series(labels).value_counts().sort_index()
    clusters = pd.DataFrame({"size": sizes.to_numpy()},
                            index=pd.Index(sizes.index.to_numpy(), name="cluster"))
    summary = {"k": args.k, "n": n, "W": disp.W, "S": disp.S, "T": disp.T, "F": disp.F,
               "S/T": disp.S / disp.T if disp.T > 0 else float("nan")}
    sections = [("fitted partition (W + S = T)",
                 pd.DataFrame([summary], index=pd.Index(["fit"], name="partition"))),
                ("clusters", clusters)]
    if args.test:
        check = {"statistic (S/T)": tres.statistic, "null": args.null,
                 "n_resamples": args.resamples, "pvalue": tres.pvalue}
        sections.append(("significance check: S/T against the same clustering of reference data",
                         pd.DataFrame([check], index=pd.Index(["cluster_test"], name="check"))))
    emit(sections, args.format)
    if args.test:
        ref = ("a Gaussian with the data's mean and covariance" if args.null == "gaussian"
               else "a uniform box along the data's principal axes")
        if tres.pvalue <= args.alpha:
            _verdict(args, f"verdict: more clustered than {ref} (p = {tres.pvalue:.4g} <= "
                           f"alpha = {args.alpha:g}).")
        else:
            _verdict(args, f"verdict: no evidence of more cluster structure than {ref} "
                           f"(p = {tres.pvalue:.4g} > alpha = {args.alpha:g}).")
    if args.out:
        col = args.label_column
        if col in df.columns:
            raise CLIError(f"option --label-column: {path} already has a column {col!r}; "
                           "choose another name.")
        full = read_table(path) if args.dropna else df
        out = full.copy()
        out[col] = pd.Series(labels, index=df.index).reindex(full.index).astype("Int64")
        write_data(out, args.out)
        _note(args, f"labels written to {args.out} (column {col!r}, joined to the input rows)")
    return 0


def _cmd_demo(args):
    from . import dispersion, energy_distance
    from .datasets import load_iris

    df = load_iris()
    features = [c for c in df.columns if c != "species"]
    print("Fisher's iris data: 150 flowers, features", ", ".join(features))
    print(f"metric = 'energy', exponent = {args.exponent}\n")
    rows = []
    for a, b in itertools.combinations(df["species"].cat.categories, 2):
        xa = df.loc[df["species"] == a, features]
        xb = df.loc[df["species"] == b, features]
        e = energy_distance(xa, xb, exponent=args.exponent)
        sub = df[df["species"].isin([a, b])]
        res = dispersion(sub[features], sub["species"].astype(str), exponent=args.exponent)
        n1, n2 = len(xa), len(xb)
        rows.append({"pair": f"{a} vs {b}", "E": e, "edist (R)": n1 * n2 / (n1 + n2) * e,
                     "W": res.W, "S": res.S, "T": res.T, "F": res.F})
    table = pd.DataFrame(rows).set_index("pair")
    with pd.option_context("display.float_format", "{:.6g}".format, "display.width", 120):
        print("Energy distance and dispersion per pair of species")
        print(table.to_string())
        res = dispersion(df, by="species", exponent=args.exponent)
        print("\nDispersion of the three species (W + S = T)")
        print(res.to_frame().to_string())
    return 0


# -- parser --------------------------------------------------------------------

def _common_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("output")
    g.add_argument("--format", choices=FORMATS, default="text",
                   help="table format on stdout (default: text)")
    g.add_argument("--quiet", "-q", action="store_true", help="no notes or progress on stderr")
    g.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    return p


def _data_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("data")
    g.add_argument("--columns", "-c", action="append", metavar="COLS",
                   help="columns to use, comma-separated or repeated (default: all numeric "
                        "columns except --by)")
    g.add_argument("--dropna", action="store_true",
                   help="drop rows with missing values in the used columns instead of failing")
    return p


def _metric_parent():
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("semimetric")
    g.add_argument("--metric", choices=("energy", "laplacian", "gaussian"), default="energy",
                   help="semimetric rho (default: energy, |x-y|^exponent)")
    g.add_argument("--exponent", type=float, default=1.0,
                   help="exponent of the energy metric, in (0, 2] (default: 1)")
    g.add_argument("--sigma", type=float, default=1.0,
                   help="scale of the laplacian/gaussian metrics, > 0 (default: 1)")
    return p


_FMT = argparse.RawDescriptionHelpFormatter


def _wrap(text):
    """Descriptions are wrapped here; epilogs (examples) stay as written."""
    return textwrap.fill(" ".join(text.split()), width=79)


def _add_inference_args(p, resamples, what):
    """--resamples, --seed and --alpha, shared by test, disco and cluster."""
    p.add_argument("--resamples", "-R", type=int, default=resamples,
                   help=f"{what} (default: {resamples})")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: fresh entropy)")
    p.add_argument("--alpha", type=_level, default=0.05, help="level of the verdict line (default: 0.05)")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="energystats",
        description=_wrap("Energy statistics from the command line: energy distance, k-sample "
                    "tests, DISCO and energy clustering of CSV, TSV or Parquet files."),
        epilog="Run 'energystats <command> --help' for the options of a command.\n"
               "example: energystats test data.csv --by group --resamples 999 --seed 1",
        formatter_class=_FMT,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"energystats {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")
    common, data, metric = _common_parent(), _data_parent(), _metric_parent()

    p = sub.add_parser(
        "distance", parents=[data, metric, common], formatter_class=_FMT,
        help="energy distance between two samples (two files, or groups of one file)",
        description=_wrap("Two-sample energy distance E(A, B) (V-statistic, no square root), with "
                    "R energy's edist = nm/(n+m) E and the between statistic S = nm/(2(n+m)) E."),
        epilog="examples:\n  energystats distance A.csv B.csv --columns x,y\n"
               "  energystats distance data.csv --by group --format csv",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="A.csv B.csv, or one file with --by")
    p.add_argument("--by", action="append", help="grouping column: E for every pair of groups")
    p.set_defaults(func=_cmd_distance)

    p = sub.add_parser(
        "test", parents=[data, metric, common], formatter_class=_FMT,
        help="permutation test of equal distributions (k samples)",
        description=_wrap("Energy test of equal distributions of the groups in one file: statistic "
                    "sum_{i<j} n_i n_j/(n_i+n_j) E(C_i, C_j) (R energy's eqdist.etest), "
                    "permutation p-value (1 + #{null >= observed}) / (R + 1)."),
        epilog="example:\n  energystats test data.csv --by group --resamples 999 --seed 1",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--by", action="append", required=True, help="grouping column")
    _add_inference_args(p, 999, "permutations")
    p.set_defaults(func=_cmd_test)

    p = sub.add_parser(
        "disco", parents=[data, metric, common], formatter_class=_FMT,
        help="distance components (DISCO) analysis: nonparametric ANOVA",
        description=_wrap("DISCO decomposition T = S + W with F = (S/(k-1)) / (W/(n-k)) and its "
                    "permutation p-value; several --by columns give one row per factor "
                    "(as R energy's disco)."),
        epilog="examples:\n  energystats disco data.csv --by group --resamples 999 --seed 1\n"
               "  energystats disco data.csv --by dose,supplement --format json",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("--by", action="append", required=True,
                   help="grouping column(s), comma-separated or repeated")
    _add_inference_args(p, 999, "permutations")
    p.set_defaults(func=_cmd_disco)

    p = sub.add_parser(
        "cluster", parents=[data, metric, common], formatter_class=_FMT,
        help="energy clustering (Hartigan's method) with a valid significance check",
        description=_wrap("Energy clustering into k groups; prints W, S, T, F of the fitted "
                    "partition and, with --test, the significance check: S/T "
                    "calibrated by re-clustering reference data sets drawn from a no-cluster "
                    "null (not the naive permutation test, which is invalid after clustering)."),
        epilog="example:\n  energystats cluster data.csv -k 3 --test --resamples 99 --seed 1 "
               "--out labels.csv",
    )
    p.add_argument("file", metavar="FILE", help="CSV, TSV or Parquet file")
    p.add_argument("-k", "--clusters", dest="k", type=int, required=True, help="number of clusters")
    p.add_argument("--algorithm", choices=("hartigan", "lloyd", "spectral", "exact-1d"),
                   default="hartigan", help="clustering algorithm (default: hartigan)")
    p.add_argument("--n-init", type=int, default=10, help="restarts, best W kept (default: 10)")
    p.add_argument("--test", action="store_true",
                   help="run the significance check (re-clusters --resamples null data sets)")
    p.add_argument("--null", choices=("gaussian", "uniform"), default="gaussian",
                   help="reference null of the check (default: gaussian)")
    _add_inference_args(p, 99, "reference data sets of the check")
    p.add_argument("--out", "-o", metavar="PATH",
                   help="write the input rows with a label column (.csv, .tsv, .parquet, .json)")
    p.add_argument("--label-column", default="cluster", help="name of the label column (default: cluster)")
    p.set_defaults(func=_cmd_cluster)

    p = sub.add_parser(
        "demo", formatter_class=_FMT,
        help="energy distances and W/S/T on the bundled iris data",
        description=_wrap("Energy distance and the W/S/T/F dispersion table on Fisher's iris data."),
        epilog="example:\n  energystats demo --exponent 1",
    )
    p.add_argument("--exponent", type=float, default=1.0, help="exponent of the energy metric, in (0, 2]")
    p.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args)
    except CLIError as exc:
        if args.debug:
            raise
        print(f"energystats {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, KeyError) as exc:
        if args.debug:
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        where = getattr(args, "file", None) or ", ".join(getattr(args, "files", None) or [])
        prefix = f"{where}: " if where else ""
        print(f"energystats {args.command}: error: {prefix}{msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print(f"energystats {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
