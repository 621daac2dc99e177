"""The command-line tool, driven in-process through ``energystats.cli.main`` (``run_cli``) and,
where only a real process shows it, as a subprocess (``python -m energystats ...``).

Every subcommand, every output format, and the error paths (missing file,
missing column, non-numeric column, empty file, k > n, ...) with their exit
status and one-line message.  Numbers printed by the tool are checked against
independent numpy double loops over SPEC §3, not against the library itself.
Each subprocess costs about half a second to a second, so only the entry point, pipes and
exit statuses seen by the shell run in one (``run_cli_subprocess``, ``_run_raw``).
"""
from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import energystats

PKG_ROOT = str(Path(energystats.__file__).resolve().parents[1])


def library_warnings_shown():
    """Inside ``warnings.catch_warnings()``, before ``cli.main``: the library's warnings are shown
    (the command prints them on stderr, where the tests read them), as in a real process, not
    the errors that the suite's configuration (pyproject's ``filterwarnings``) makes them."""
    import warnings

    for name in energystats.__all__:
        if name.endswith("Warning"):
            warnings.simplefilter("default", getattr(energystats, name))


def run_cli_subprocess(*args, cwd=None, stdin=None):
    """Run ``python -m energystats *args`` in a child process; return (returncode, stdout, stderr).

    For what only a real process shows: the entry point, exit statuses set by ``sys.exit``,
    closed or broken pipes, signals.  Everything else goes through :func:`run_cli`.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "energystats", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, env=env, input=stdin, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


class _Stdin(io.StringIO):
    """Text standard input with the ``buffer`` of bytes that the Parquet reader takes."""

    @property
    def buffer(self):
        return io.BytesIO(self.getvalue().encode())


def run_cli(*args, cwd=None, stdin=None):
    """Run ``energystats *args`` in this process, as ``python -m energystats`` would (the same
    ``main``, argparse's exits, an uncaught exception printed as a traceback with status 1);
    return (returncode, stdout, stderr).

    In-process saves the ~0.5-1 s that each child spends importing NumPy, pandas and the
    package (the suite ran ~150 of them); ``run_cli_subprocess`` keeps the real process.
    """
    import contextlib
    import traceback
    import warnings

    from energystats import cli

    out, err = io.StringIO(), io.StringIO()
    old_cwd, old_stdin = os.getcwd(), sys.stdin
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = _Stdin(stdin or "")
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():          # main() installs its one-line warning printer
            library_warnings_shown()
            try:
                code = cli.main([str(a) for a in args])
            except SystemExit as exc:               # argparse: --help, usage errors
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception:                       # noqa: BLE001 - as the interpreter would
                traceback.print_exc()
                code = 1
    finally:
        sys.stdin = old_stdin
        os.chdir(old_cwd)
    _check_messages(args, err.getvalue())
    return code, out.getvalue(), err.getvalue()


#: what a message of the command line must not contain: a Python argument name in backticks
#: (`focal`, `columns=[...]`): the messages name options (--focal) and the file's columns
PYTHON_WORDS = re.compile(r"`[A-Za-z_][A-Za-z0-9_]*(=[^`]*)?`")
#: the most items a list in a message shows before "... (N more)"
LIST_LIMIT = 12


def _check_messages(args, err):
    """Every CLI run of the test battery: its messages on stderr use option names, never the
    library's argument names, and cut long lists (the first few, then how many more)."""
    if "--debug" in map(str, args) or "Traceback" in err:
        return                      # a traceback is checked by the tests that cause it
    bad = PYTHON_WORDS.search(err)
    assert bad is None, f"energystats {' '.join(map(str, args))}: a message names the Python " \
                        f"argument {bad.group(0)}: {err}"
    for items in re.findall(r"\[([^\[\]]*)\]", err):
        if re.search(r"\(\d+ more\)$", items):
            continue                # cut already: short_list's "..., ... (N more)"
        n = items.count(",") + 1 if items.strip() else 0
        assert n <= LIST_LIMIT, f"energystats {' '.join(map(str, args))}: a list of {n} " \
                                f"items is not cut: {err}"


def has(*names):
    return all(hasattr(energystats, name) for name in names)


needs_tests = pytest.mark.skipif(not has("energy_test", "disco"),
                                 reason="energy_test/disco (issue 3) not in this build yet")
needs_clustering = pytest.mark.skipif(not has("EnergyClustering", "cluster_test"),
                                      reason="EnergyClustering/cluster_test (issue 4) not in this build yet")


# -- independent references (plain numpy loops over SPEC §3) --------------------

def ref_g(A, B):
    A, B = np.atleast_2d(A), np.atleast_2d(B)
    total = 0.0
    for a in A:
        for b in B:
            total += np.sqrt(np.sum((a - b) ** 2))
    return total / (len(A) * len(B))


def ref_E(A, B):
    return 2 * ref_g(A, B) - ref_g(A, A) - ref_g(B, B)


def ref_WST(X, labels):
    X, labels = np.asarray(X, float), np.asarray(labels)
    groups = sorted(set(labels.tolist()), key=str)
    n = len(X)
    W = sum(np.sum(labels == g) / 2 * ref_g(X[labels == g], X[labels == g]) for g in groups)
    T = n / 2 * ref_g(X, X)
    S = 0.0
    for i, a in enumerate(groups):
        for b in groups[i + 1:]:
            A, B = X[labels == a], X[labels == b]
            S += len(A) * len(B) / (2 * n) * ref_E(A, B)
    return W, S, T


# -- fixtures -------------------------------------------------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(20261122)
    n = 36
    df = pd.DataFrame(rng.normal(size=(n, 2)), columns=["x", "y"])
    df["group"] = np.repeat(["a", "b", "c"], n // 3)
    df.loc[df["group"] == "c", "x"] += 3.0
    df["name"] = [f"id{i}" for i in range(n)]
    df["dose"] = np.tile(["lo", "hi"], n // 2)
    df.to_csv(d / "data.csv", index=False)
    df.to_csv(d / "data.tsv", sep="\t", index=False)
    df.to_parquet(d / "data.parquet")
    # one group per file: numeric columns only (text columns need --numeric-only or --columns)
    df.loc[df["group"] == "a", ["x", "y"]].to_csv(d / "A.csv", index=False)
    df.loc[df["group"] == "c", ["x", "y"]].reset_index(drop=True).to_parquet(d / "C.parquet")
    (d / "empty.csv").write_text("")
    (d / "header_only.csv").write_text("x,y,group\n")
    na = df.copy()
    na.loc[[3, 7], "y"] = np.nan
    na.to_csv(d / "missing.csv", index=False)
    df[["x", "y"]].iloc[:2].to_csv(d / "tiny.csv", index=False)
    (d / "data.xlsx").write_text("not really")
    return d, df


# -- help, usage ------------------------------------------------------------------

class TestHelp:
    @pytest.mark.parametrize("command", ["distance", "test", "disco", "cluster", "demo"])
    def test_every_subcommand_has_help_with_an_example(self, command):
        # --help is argparse's own code path; run in-process to keep the suite fast
        # (one subprocess below checks the real entry point).
        from energystats.cli import build_parser

        parser = build_parser()
        sub = parser._subparsers._group_actions[0].choices[command]
        text = sub.format_help()
        assert "example" in text and f"energystats {command}" in text

    def test_top_level_help_and_no_command(self):
        rc, out, err = run_cli_subprocess("--help")     # the real entry point, in a process
        assert rc == 0
        for command in ("distance", "test", "disco", "cluster", "demo"):
            assert command in out
        rc, out, err = run_cli()
        assert rc == 2 and "usage" in err

    def test_unknown_option_and_bad_format_are_usage_errors(self, files):
        d, _ = files
        rc, out, err = run_cli("distance", d / "A.csv", d / "C.parquet", "--format", "xml")
        assert rc == 2 and "--format" in err and "invalid choice" in err
        assert out == ""


# -- distance -------------------------------------------------------------------

class TestDistance:
    def test_two_files_every_format(self, files):
        d, df = files
        A = df.loc[df.group == "a", ["x", "y"]].to_numpy()
        C = df.loc[df.group == "c", ["x", "y"]].to_numpy()
        E = ref_E(A, C)
        n, m = len(A), len(C)
        # CSV against Parquet input, text output; notes on stderr only
        rc, out, err = run_cli("distance", d / "A.csv", d / "C.parquet")
        assert rc == 0, err
        assert "energy distance" in out and f"{E:.6g}" in out
        assert "A.csv: 12 rows" in err and "x, y" in err
        # CSV output: parse it back
        rc, out, err = run_cli("distance", d / "A.csv", d / "C.parquet", "--format", "csv", "-q")
        assert rc == 0 and err == ""
        t = pd.read_csv(io.StringIO(out))
        assert list(t.columns) == ["a", "b", "n_a", "n_b", "energy_distance", "edist", "between"]
        row = t.iloc[0]
        assert (row.n_a, row.n_b) == (n, m)
        np.testing.assert_allclose(row.energy_distance, E, rtol=1e-9)
        np.testing.assert_allclose(row.edist, n * m / (n + m) * E, rtol=1e-9)   # R edist
        np.testing.assert_allclose(row["between"], n * m / (2 * (n + m)) * E, rtol=1e-9)  # S = nm/(2N) E
        # JSON output
        rc, out, err = run_cli("distance", d / "A.csv", d / "C.parquet", "--format", "json",
                               "--columns", "x")
        assert rc == 0
        obj = json.loads(out)
        assert obj["command"] == "distance" and obj["columns"] == ["x"]
        rec = obj["pairs"][0]
        np.testing.assert_allclose(rec["energy_distance"], ref_E(A[:, :1], C[:, :1]), rtol=1e-9)

    def test_stdin(self, files):
        d, df = files
        text = (d / "A.csv").read_text()
        rc, out, err = run_cli("distance", "-", d / "C.parquet", "--format", "csv", "-q", stdin=text)
        assert rc == 0, err
        A = df.loc[df.group == "a", ["x", "y"]].to_numpy()
        C = df.loc[df.group == "c", ["x", "y"]].to_numpy()
        np.testing.assert_allclose(pd.read_csv(io.StringIO(out)).energy_distance[0], ref_E(A, C),
                                   rtol=1e-9)

    def test_groups_of_one_file_tsv_and_metric_options(self, files):
        d, df = files
        rc, out, err = run_cli("distance", d / "data.tsv", "--numeric-only", "--by", "group", "--format", "json",
                               "--exponent", "0.5", "-q")
        assert rc == 0, err
        recs = json.loads(out)["pairs"]
        assert [(r["a"], r["b"]) for r in recs] == [("a", "b"), ("a", "c"), ("b", "c")]
        X = df[["x", "y"]].to_numpy()
        for r in recs:
            A, B = X[df.group == r["a"]], X[df.group == r["b"]]

            def g(P, Q):
                return np.mean(np.sqrt(((P[:, None, :] - Q[None, :, :]) ** 2).sum(-1)) ** 0.5)

            np.testing.assert_allclose(r["energy_distance"], 2 * g(A, B) - g(A, A) - g(B, B), rtol=1e-9)

    def test_laplacian(self, files):
        d, df = files
        rc, out, err = run_cli("distance", d / "data.parquet", "--numeric-only", "--by", "group", "--metric",
                               "laplacian", "--sigma", "2", "--format", "csv", "-q")
        assert rc == 0, err
        t = pd.read_csv(io.StringIO(out))
        X = df[["x", "y"]].to_numpy()
        A, B = X[df.group == "a"], X[df.group == "b"]

        def g(P, Q):
            r = np.sqrt(((P[:, None, :] - Q[None, :, :]) ** 2).sum(-1))
            return np.mean(2 - 2 * np.exp(-r / (2 * 2.0)))

        np.testing.assert_allclose(t.energy_distance[0], 2 * g(A, B) - g(A, A) - g(B, B), rtol=1e-9)


# -- test / disco -----------------------------------------------------------------

@needs_tests
class TestEnergyTest:
    def test_formats_and_statistic(self, files):
        d, df = files
        X = df[["x", "y"]].to_numpy()
        groups = ["a", "b", "c"]
        stat = 0.0
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:
                A, B = X[df.group == a], X[df.group == b]
                stat += len(A) * len(B) / (len(A) + len(B)) * ref_E(A, B)
        rc, out, err = run_cli("test", d / "data.csv", "--numeric-only", "--by", "group", "--resamples", "199",
                               "--seed", "1", "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        assert rec["command"] == "test" and rec["seed"] == 1 and rec["columns"] == ["x", "y"]
        np.testing.assert_allclose(rec["statistic"], stat, rtol=1e-9)
        assert "data.csv: 36 rows" in err                      # notes on stderr, table on stdout
        assert "permutations" not in err                       # stderr is not a terminal: no bar
        assert rec["n_resamples"] == 199
        assert 1 / 200 <= rec["pvalue"] <= 1 and rec["pvalue"] < 0.05  # group c is shifted by 3 sd
        # same seed, same p-value; text and csv formats
        rc2, out2, err2 = run_cli("test", d / "data.parquet", "--numeric-only", "--by", "group", "-R", "199",
                                  "--seed", "1", "--format", "csv", "-q")
        t = pd.read_csv(io.StringIO(out2))
        assert rc2 == 0 and t.pvalue[0] == rec["pvalue"]
        assert err2 == ""                                       # --quiet: nothing on stderr
        assert "verdict" not in out and "verdict" not in out2     # only in text output
        rc3, out3, _ = run_cli("test", d / "data.tsv", "--numeric-only", "--by", "group", "-R", "99", "-q")
        assert rc3 == 0 and "statistic" in out3 and "verdict: the groups' distributions differ" in out3

    def test_bad_options(self, files):
        d, _ = files
        rc, out, err = run_cli("test", d / "data.csv", "--numeric-only", "--by", "nope")
        assert rc == 2 and "'nope'" in err and "--by" in err and len(err.strip().splitlines()) <= 2
        rc, out, err = run_cli("test", d / "data.csv", "--numeric-only", "--by", "group", "--resamples", "-1", "-q")
        assert rc == 2 and "--resamples" in err
        rc, out, err = run_cli("test", d / "data.csv", "--numeric-only", "--by", "group", "--alpha", "5", "-q")
        assert rc == 2 and "--alpha" in err and "(0, 1)" in err


@needs_tests
class TestDisco:
    def test_table_every_format(self, files):
        d, df = files
        W, S, T = ref_WST(df[["x", "y"]].to_numpy(), df.group.to_numpy())
        rc, out, err = run_cli("disco", d / "data.csv", "--numeric-only", "--by", "group", "-R", "99", "--seed", "3",
                               "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)
        assert rec["command"] == "disco" and rec["seed"] == 3 and rec["factors"] == ["Between"]
        np.testing.assert_allclose(rec["between"], S, rtol=1e-9)
        np.testing.assert_allclose(rec["within"], W, rtol=1e-9)
        np.testing.assert_allclose(rec["total"], T, rtol=1e-9)
        assert (rec["df_between"], rec["df_within"], rec["df_total"]) == (2, 33, 35)
        assert 0 < rec["pvalue_se"] < 0.05 and rec["pvalue"] <= 0.05
        rc, out, err = run_cli("disco", d / "data.tsv", "--numeric-only", "--by", "group", "-R", "99", "-q")
        assert rc == 0 and "Between" in out and "Within" in out
        assert "verdict: the groups of group differ" in out
        rc, out, err = run_cli("disco", d / "data.parquet", "--numeric-only", "--by", "group", "-R", "99", "-q",
                               "--format", "csv")
        assert rc == 0 and len(pd.read_csv(io.StringIO(out))) == 3
        # R energy's Mean Dist column: dispersion / df, empty on Total
        table = pd.read_csv(io.StringIO(out), index_col="component")
        assert list(table.columns[:4]) == ["df", "dispersion", "mean_dispersion", "F"]
        np.testing.assert_allclose(table["mean_dispersion"].iloc[:2], [S / 2, W / 33], rtol=1e-9)
        assert np.isnan(table.loc["Total", "mean_dispersion"])

    def test_two_factors(self, files):
        d, df = files
        rc, out, err = run_cli("disco", d / "data.csv", "--numeric-only", "--by", "group,dose", "-R", "0", "-q",
                               "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        assert rec["factors"] == ["group", "dose"] and len(rec["between"]) == 2
        assert rec["pvalue"] is None and rec["seed"] is None       # no resamples were drawn
        assert rec["test"] == "conditional"
        want = energystats.disco(df[["x", "y", "group", "dose"]], by=["group", "dose"], n_resamples=0)
        np.testing.assert_allclose(rec["statistic"], want.statistic, rtol=1e-12)
        # --marginal: R energy's table
        rc, out, err = run_cli("disco", d / "data.csv", "--numeric-only", "--by", "group,dose", "-R", "0", "-q",
                               "--marginal", "--format", "json")
        rec = json.loads(out)
        assert rc == 0 and rec["test"] == "marginal"
        want = energystats.disco(df[["x", "y", "group", "dose"]], by=["group", "dose"], n_resamples=0,
                        conditional=False)
        np.testing.assert_allclose(rec["statistic"], want.statistic, rtol=1e-12)
        rc, out, err = run_cli("disco", d / "data.csv", "--numeric-only", "--by", "group,dose", "-R", "19", "-q")
        assert rc == 0 and "each factor tested given the others" in out

    def test_strata(self, files):
        d, df = files
        rc, out, err = run_cli("disco", d / "data.csv", "--numeric-only", "--by", "group", "--strata", "dose",
                               "-R", "0", "-q", "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        want = energystats.disco(df[["x", "y", "group", "dose"]], by="group", strata="dose", n_resamples=0)
        assert rec["test"] == "stratified" and rec["statistic"] == pytest.approx(want.statistic, rel=1e-12)
        assert rec["columns"] == ["x", "y"]
        rc, out, err = run_cli("test", d / "data.csv", "--numeric-only", "--by", "group", "--strata", "dose",
                               "-R", "99", "--seed", "2", "-q")
        assert rc == 0 and "within 2 strata of dose" in out
        rc, out, err = run_cli("disco", d / "data.csv", "--numeric-only", "--by", "group", "--strata", "group")
        assert rc == 2 and "--strata" in err
        rc, out, err = run_cli("disco", d / "data.csv", "--numeric-only", "--by", "group,dose", "--strata", "name",
                               "--marginal")
        assert rc == 2 and "--marginal" in err


# -- cluster --------------------------------------------------------------------

@needs_clustering
class TestCluster:
    def test_summary_and_labels_file(self, files, tmp_path):
        d, df = files
        out_path = tmp_path / "labels.csv"
        rc, out, err = run_cli("cluster", d / "data.csv", "--numeric-only", "-k", "2", "--seed", "0", "--out", out_path,
                               "--format", "json")
        assert rc == 0, err
        res = json.loads(out)
        fit = res["partition"]
        assert res["command"] == "cluster" and res["seed"] == 0 and res["check"] is None
        lab = pd.read_csv(out_path)
        # the input rows, unchanged and in order, plus the label column
        pd.testing.assert_frame_equal(lab.drop(columns="cluster"), df, check_dtype=False)
        W, S, T = ref_WST(df[["x", "y"]].to_numpy(), lab["cluster"].to_numpy())
        np.testing.assert_allclose([fit["W"], fit["S"], fit["T"]], [W, S, T], rtol=1e-9)
        assert sorted(r["size"] for r in res["clusters"]) == sorted(lab["cluster"].value_counts())
        # the shifted group c is one cluster on its own
        assert lab.loc[df.group == "c", "cluster"].nunique() == 1
        assert "labels written to" in err

    def test_significance_check_text_and_csv(self, files, tmp_path):
        d, _ = files
        rc, out, err = run_cli("cluster", d / "data.parquet", "--numeric-only", "-k", "2", "--test", "-R", "9",
                               "--seed", "1", "--n-init", "2")
        assert rc == 0, err
        assert "pvalue" in out and "W" in out and "statistic" in out
        assert "significance check" in out and "gaussian" in out
        assert "verdict:" in out and "Gaussian with the data's mean and covariance" in out
        # rows dropped by --dropna come back with an empty label, in their place
        rc, out, err = run_cli("cluster", d / "missing.csv", "--numeric-only", "-k", "3", "--format", "csv", "-q",
                               "--dropna", "--out", tmp_path / "l.parquet", "--seed", "2")
        assert rc == 0 and out.startswith("# fitted partition") and "verdict" not in out
        lab = pd.read_parquet(tmp_path / "l.parquet")
        assert len(lab) == 36 and lab["cluster"].isna().tolist() == [i in (3, 7) for i in range(36)]
        assert lab["cluster"].nunique() == 3


# -- error paths ------------------------------------------------------------------

class TestErrors:
    """Exit status 2 and one line naming the file, column or option; no traceback."""

    @staticmethod
    def check(rc, out, err, *needles):
        assert rc == 2, (rc, out, err)
        assert "Traceback" not in err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("energystats "), err
        for s in needles:
            assert s in lines[0], (s, lines[0])

    def test_missing_file(self, files):
        d, _ = files
        self.check(*run_cli("distance", d / "nope.csv", d / "A.csv", "-q"), "nope.csv", "no such file")

    def test_missing_column(self, files):
        d, _ = files
        self.check(*run_cli("distance", d / "A.csv", d / "C.parquet", "--columns", "x,zz", "-q"),
                   "A.csv", "'zz'", "--columns")
        self.check(*run_cli("distance", d / "data.csv", "--numeric-only", "--by", "grp", "-q"), "'grp'", "--by")

    def test_column_missing_in_second_file(self, files, tmp_path):
        d, df = files
        df[["x"]].to_csv(tmp_path / "onlyx.csv", index=False)
        self.check(*run_cli("distance", d / "A.csv", tmp_path / "onlyx.csv", "-q"), "onlyx.csv", "'y'")

    def test_non_numeric_column(self, files):
        d, _ = files
        self.check(*run_cli("distance", d / "data.csv", "--by", "group", "--columns", "name", "-q"),
                   "data.csv", "'name'", "not numeric")
        # without --columns, a text column is an error that names it (never dropped silently)
        self.check(*run_cli("distance", d / "data.csv", "--by", "group", "-q"),
                   "data.csv", "'name'", "--numeric-only")

    def test_empty_file(self, files):
        d, _ = files
        self.check(*run_cli("distance", d / "empty.csv", d / "A.csv", "-q"), "empty.csv", "empty")
        self.check(*run_cli("distance", d / "header_only.csv", d / "A.csv", "-q"),
                   "header_only.csv", "no data rows")

    def test_k_larger_than_n(self, files):
        d, _ = files
        self.check(*run_cli("cluster", d / "tiny.csv", "-k", "3", "-q"), "-k", "n_samples=2", "got 3",
                   "tiny.csv")
        self.check(*run_cli("cluster", d / "tiny.csv", "-k", "1", "-q"), "-k", "got 1")

    def test_missing_values_and_dropna(self, files):
        d, _ = files
        self.check(*run_cli("distance", d / "missing.csv", "--numeric-only", "--by", "group", "-q"),
                   "missing.csv", "2 row(s)", "'y'", "--dropna")
        rc, out, err = run_cli("distance", d / "missing.csv", "--numeric-only", "--by", "group", "--dropna")
        assert rc == 0 and "36 rows" in err and "2 row(s) with missing values dropped" in err

    def test_bad_option_values(self, files):
        d, _ = files
        self.check(*run_cli("distance", d / "A.csv", d / "A.csv", "--exponent", "2.5", "-q"),
                   "--exponent", "2.5")
        self.check(*run_cli("distance", d / "A.csv", d / "A.csv", "--metric", "gaussian",
                            "--sigma", "0", "-q"), "--sigma")
        self.check(*run_cli("distance", d / "A.csv", "-q"), "two files")

    def test_unknown_suffix(self, files):
        d, _ = files
        self.check(*run_cli("distance", d / "data.xlsx", d / "A.csv", "-q"), "data.xlsx", "suffix")

    def test_debug_shows_traceback(self, files):
        d, _ = files
        rc, out, err = run_cli("distance", d / "nope.csv", d / "A.csv", "--debug")
        assert rc != 0 and "Traceback" in err and "nope.csv" in err


# -- demo -------------------------------------------------------------------------

def test_demo_still_works():
    rc, out, err = run_cli("demo")
    assert rc == 0, err
    assert "setosa vs versicolor" in out and "Between" in out and "Within" in out


# -- the file/table helpers, in-process ----------------------------------------------

class TestIOHelpers:
    def test_emit_json_csv_text(self):
        from energystats.cli._io import emit

        t1 = pd.DataFrame({"F": [2.5, np.nan], "df": [1, 2]},
                          index=pd.Index(["Between", "Within"], name="component"))
        t2 = pd.DataFrame({"size": [3, 4]})
        buf = io.StringIO()
        emit([("one", t1), ("two", t2)], "json", buf)
        obj = json.loads(buf.getvalue())                       # strict JSON: NaN became null
        assert obj["one"] == [{"component": "Between", "F": 2.5, "df": 1},
                              {"component": "Within", "F": None, "df": 2}]
        assert obj["two"] == [{"size": 3}, {"size": 4}]
        buf = io.StringIO()
        emit([("one", t1), ("two", t2)], "csv", buf)
        lines = buf.getvalue().splitlines()
        assert lines[0] == "# one" and lines[1] == "component,F,df" and "# two" in lines
        buf = io.StringIO()
        emit([("one", t1)], "csv", buf)                         # one table: plain CSV
        assert pd.read_csv(io.StringIO(buf.getvalue())).shape == (2, 3)
        buf = io.StringIO()
        emit([("one", t1)], "text", buf)
        assert buf.getvalue().startswith("one\n") and "Between" in buf.getvalue()

    def test_numeric_columns_and_missing(self):
        from energystats.cli._io import CLIError, check_missing, numeric_columns

        df = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"], "g": ["u", "v"], "c": [1, None]})
        assert numeric_columns(df, exclude=["g"], numeric_only=True) == (["a", "c"], ["b"])
        with pytest.raises(CLIError, match=r"f.csv has non-numeric column\(s\) \['b'\].*--numeric-only"):
            numeric_columns(df, exclude=["g"], path="f.csv")
        with pytest.raises(CLIError, match=r"f.csv: option --columns: column\(s\) \['b'\] of f.csv are not numeric"):
            numeric_columns(df, ["a", "b"], path="f.csv")
        with pytest.raises(CLIError, match="grouping column"):
            numeric_columns(df, ["g"], exclude=["g"], path="f.csv")
        stray = df.assign(b=["x", "3"], d=["1.5", "2.5"])[["b", "d"]].assign(b=["1", "x"])
        with pytest.raises(CLIError, match=r"column 'b' is numeric but for 1 cell\(s\) of text: the first is 'x' in data row 2"):
            numeric_columns(stray, ["b"], path="f.csv")
        with pytest.raises(CLIError, match=r"1 row\(s\) have missing values \(columns \['c'\], first in data row 2\)"):
            check_missing(df, ["a", "c"], path="f.csv")
        assert len(check_missing(df, ["a", "c"], dropna=True)) == 1

    def test_split_names(self):
        from energystats.cli._io import split_names

        assert split_names(["a,b", " c ", "d,"]) == ["a", "b", "c", "d"]
        assert split_names(None) is None

    def test_write_data_suffixes(self, tmp_path):
        from energystats.cli._io import CLIError, read_table, write_data

        df = pd.DataFrame({"x": [0.5, 1.5], "cluster": [0, 1]})
        for name in ("o.csv", "o.tsv", "o.parquet"):
            write_data(df, str(tmp_path / name))
            pd.testing.assert_frame_equal(read_table(str(tmp_path / name)), df)
        write_data(df, str(tmp_path / "o.json"))
        assert json.loads((tmp_path / "o.json").read_text()) == [{"x": 0.5, "cluster": 0},
                                                                  {"x": 1.5, "cluster": 1}]
        with pytest.raises(CLIError, match="--out"):
            write_data(df, str(tmp_path / "o.xlsx"))


# -- trust in the data path (each of these failed on the landed code) ------------------

def _cli_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = PKG_ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run_raw(args, **kw):
    """Run the CLI with custom stdout handling; returns the CompletedProcess (stderr as text)."""
    return subprocess.run([sys.executable, "-m", "energystats", *map(str, args)], env=_cli_env(),
                          stderr=subprocess.PIPE, text=True, timeout=300, **kw)


def _one_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


class TestDataPath:
    def test_stray_text_cell_is_an_error_naming_column_row_value(self, files, tmp_path):
        d, df = files
        text = (d / "data.csv").read_text().splitlines()
        fields = text[6].split(",")
        fields[0] = "oops"                                  # x of data row 6 (line 7)
        text[6] = ",".join(fields)
        (tmp_path / "stray.csv").write_text("\n".join(text) + "\n")
        for extra in ([], ["--numeric-only"], ["--columns", "x,y"]):
            rc, out, err = run_cli("test", tmp_path / "stray.csv", "--by", "group", "-R", "9", *extra)
            line = _one_line(err)
            assert rc == 2 and "column 'x'" in line and "'oops'" in line and "data row 6" in line, line

    def test_comma_decimal_file_is_explained_and_readable(self, files, tmp_path):
        d, df = files
        eu = df[["x", "y", "group"]]
        eu.to_csv(tmp_path / "eu.csv", sep=";", decimal=",", index=False)
        rc, out, err = run_cli("test", tmp_path / "eu.csv", "--by", "group", "-R", "9", "-q")
        line = _one_line(err)
        assert rc == 2 and "--sep ';'" in line and "--decimal ','" in line, line
        rc, out, err = run_cli("test", tmp_path / "eu.csv", "--by", "group", "-R", "99", "--seed", "4",
                               "--sep", ";", "--decimal", ",", "--format", "json", "-q")
        assert rc == 0, err
        rc2, out2, _ = run_cli("test", d / "data.csv", "--by", "group", "--columns", "x,y", "-R", "99",
                               "--seed", "4", "--format", "json", "-q")
        a, b = json.loads(out), json.loads(out2)
        assert a["statistic"] == pytest.approx(b["statistic"], rel=1e-15) and a["pvalue"] == b["pvalue"]

    def test_input_format_option_exists(self, files, tmp_path):
        d, _ = files
        (tmp_path / "data.dat").write_text((d / "A.csv").read_text())
        rc, out, err = run_cli("distance", tmp_path / "data.dat", d / "C.parquet", "-q")
        assert rc == 2 and "--input-format" in _one_line(err)
        rc, out, err = run_cli("distance", tmp_path / "data.dat", d / "A.csv", "--input-format",
                               "csv", "-q")
        assert rc == 0, err

    def test_duplicate_header_is_refused(self, tmp_path):
        (tmp_path / "dup.csv").write_text("x,x,g\n1,2,a\n3,4,a\n5,6,b\n7,8,b\n")
        rc, out, err = run_cli("test", tmp_path / "dup.csv", "--by", "g", "-q")
        assert rc == 2 and "duplicate column names ['x']" in _one_line(err)

    def test_cluster_out_keeps_every_field_byte_for_byte(self, tmp_path):
        rows = ["id,x,y,note",
                "a,1700000002.789,0.12345678901234567,plain",
                "b,1700000003.5e0,1.0000000000000002,\"with, comma\"",
                "c,-0.000000000000000000000012345678901234567,123456789012345678901234567890,x",
                "d,1e300,2.2250738585072014e-308,",
                "e,12.50,7.000,trailing zeros",
                "f,1700000009.1,3.3,z"]
        src = tmp_path / "in.csv"
        src.write_text("\n".join(rows) + "\n")
        out_path = tmp_path / "out.csv"
        rc, out, err = run_cli("cluster", src, "-k", "2", "--columns", "x,y", "--seed", "1",
                               "--out", out_path, "-q")
        assert rc == 0, err
        import csv

        with open(src, newline="") as fh:
            original = list(csv.reader(fh))
        with open(out_path, newline="") as fh:
            written = list(csv.reader(fh))
        assert [r[:-1] for r in written] == original             # every field, exactly as written
        assert written[0][-1] == "cluster" and {r[-1] for r in written[1:]} <= {"0", "1"}

    def test_cluster_out_json_and_parquet_are_exact(self, files, tmp_path):
        d, df = files
        rc, out, err = run_cli("cluster", d / "data.parquet", "-k", "2", "--numeric-only", "--seed", "1",
                               "--out", tmp_path / "o.json", "-q")
        assert rc == 0, err
        back = pd.DataFrame(json.loads((tmp_path / "o.json").read_text()))
        np.testing.assert_array_equal(back["x"].to_numpy(), df["x"].to_numpy())   # bit for bit
        rc, out, err = run_cli("cluster", d / "data.csv", "-k", "2", "--numeric-only", "--seed", "1",
                               "--out", tmp_path / "o.parquet", "-q")
        np.testing.assert_array_equal(pd.read_parquet(tmp_path / "o.parquet")["y"].to_numpy(),
                                      df["y"].to_numpy())

    def test_out_path_is_checked_before_the_work(self, files, tmp_path):
        d, _ = files
        for bad, needle in ((tmp_path / "no" / "such" / "dir.csv", "does not exist"),
                            (tmp_path / "labels.xlsx", "unknown suffix"),
                            (d / "data.csv", "is the input file")):
            rc, out, err = run_cli("cluster", d / "data.csv", "-k", "2", "--numeric-only", "--test",
                                   "-R", "9999", "--out", bad)
            line = _one_line(err)
            assert rc == 2 and "--out" in line and needle in line, line
            assert "clustering" not in err                    # nothing was computed

    def test_two_and_three_files_as_groups(self, files, tmp_path):
        d, df = files
        df.loc[df.group == "b", ["x", "y"]].to_csv(tmp_path / "B.csv", index=False)
        rc, out, err = run_cli("test", d / "A.csv", d / "C.parquet", "-R", "0", "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        X = df[["x", "y"]].to_numpy()
        A, C = X[df.group == "a"], X[df.group == "c"]
        want = len(A) * len(C) / (len(A) + len(C)) * ref_E(A, C)
        assert rec["statistic"] == pytest.approx(want, rel=1e-12)
        assert rec["sizes"] == [12, 12] and rec["groups"][0].endswith("A.csv")
        rc, out, err = run_cli("test", d / "A.csv", tmp_path / "B.csv", d / "C.parquet", "-R", "0",
                               "--format", "json")
        assert rc == 0 and json.loads(out)["sizes"] == [12, 12, 12]
        rc, out, err = run_cli("test", d / "A.csv", d / "C.parquet", "--by", "group", "-q")
        assert rc == 2 and "--by" in _one_line(err)
        rc, out, err = run_cli("test", d / "data.csv", "-q")
        assert rc == 2 and "--by" in _one_line(err) and "several files" in err

    def test_estimator_u(self, files):
        d, df = files
        rc, out, err = run_cli("test", d / "A.csv", d / "C.parquet", "-R", "0", "--estimator", "U",
                               "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        X = df[["x", "y"]].to_numpy()
        A, C = X[df.group == "a"], X[df.group == "c"]

        def g_u(P):  # mean over distinct pairs
            n = len(P)
            return sum(np.linalg.norm(P[i] - P[j]) for i in range(n) for j in range(n)
                       if i != j) / (n * (n - 1))
        E_u = 2 * ref_g(A, C) - g_u(A) - g_u(C)
        assert rec["estimator"] == "U"
        assert rec["statistic"] == pytest.approx(len(A) * len(C) / (len(A) + len(C)) * E_u,
                                                 rel=1e-12)
        rc, out, err = run_cli("test", d / "A.csv", d / "C.parquet", "-R", "0", "--estimator", "U")
        assert rc == 0 and "estimator" in out
        rc, out, err = run_cli("test", d / "A.csv", d / "C.parquet", "-R", "0")
        assert rc == 0 and "estimator" not in out

    def test_reported_seed_reproduces_the_pvalue(self, files):
        d, _ = files
        args = ("test", d / "data.csv", "--by", "group", "--numeric-only", "-R", "99")
        rc, out, err = run_cli(*args, "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        assert isinstance(rec["seed"], int) and f"--seed {rec['seed']}" in err
        rc2, out2, _ = run_cli(*args, "--format", "json", "--seed", rec["seed"])
        assert json.loads(out2)["pvalue"] == rec["pvalue"]
        assert rec["pvalue_se"] == pytest.approx(np.sqrt(rec["pvalue"] * (1 - rec["pvalue"]) / 99))
        rc, out, err = run_cli(*args, "--seed", "-1")
        assert rc == 2 and "--seed" in err and "integer >= 0" in err and "rng" not in err

    def test_verdict_near_alpha_says_so(self, files):
        d, _ = files
        rc, out, err = run_cli("test", d / "data.csv", "--by", "group", "--numeric-only", "-R", "99",
                               "--seed", "1", "--alpha", "0.011", "-q")
        assert rc == 0
        assert "Monte Carlo" in out and "within 2 Monte Carlo standard errors of alpha" in out

    def test_json_keys_are_the_result_fields(self, files):
        d, _ = files
        rc, out, _ = run_cli("test", d / "data.csv", "--by", "group", "--numeric-only", "-R", "9",
                             "--seed", "1", "--format", "json")
        test_keys = set(json.loads(out))
        import dataclasses

        fields = {f.name for f in dataclasses.fields(energystats.EnergyTestResult)}
        assert test_keys == (fields - {"null_distribution"}) | {"command", "alpha"}
        rc, out, _ = run_cli("disco", d / "data.csv", "--by", "group", "--numeric-only", "-R", "9",
                             "--seed", "1", "--format", "json")
        fields = {f.name for f in dataclasses.fields(energystats.DiscoResult)}
        # plus what each row of the table tests (DiscoResult.row_tests())
        assert set(json.loads(out)) == (fields - {"null_distribution"}) | {"command", "alpha", "tests"}
        assert "p-value" not in out

    def test_long_lists_are_cut(self, tmp_path):
        rng = np.random.default_rng(0)
        n = 5000
        pd.DataFrame({"v": rng.normal(size=n), "g": rng.normal(size=n)}).to_csv(tmp_path / "f.csv",
                                                                               index=False)
        rc, out, err = run_cli("test", tmp_path / "f.csv", "--by", "g", "-R", "9", "-q")
        line = _one_line(err)
        assert rc == 2 and "not a grouping" in line and "more)" in line and len(line) < 600


class TestOSFailures:
    """Closed pipes, closed stdout, a full disk and memory: one line and a documented status."""

    def test_broken_pipe(self, files):
        d, _ = files
        r, w = os.pipe()
        os.close(r)                                             # nobody will read: EPIPE on write
        try:
            proc = _run_raw(["test", d / "data.csv", "--by", "group", "--numeric-only", "-R", "9",
                             "--format", "json", "-q"], stdout=w)
        finally:
            os.close(w)
        assert proc.returncode == 3 and "broken pipe" in _one_line(proc.stderr)

    def test_head_closing_early(self, files):
        d, _ = files
        cmd = (f"{sys.executable} -m energystats distance {d / 'data.csv'} --by group --numeric-only "
               f"--format json -q | head -c 10 >/dev/null; echo \"rc=${{PIPESTATUS[0]}}\" >&2")
        proc = subprocess.run(["bash", "-c", cmd], env=_cli_env(), capture_output=True, text=True,
                              timeout=120)
        # the whole output may fit the pipe before head exits (then the exit is 0); either way
        # there is no traceback and at most one line of message
        assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
        status = proc.stderr.strip().splitlines()[-1]
        assert status in ("rc=0", "rc=3"), proc.stderr

    def test_closed_stdout(self, files):
        d, _ = files
        proc = _run_raw(["test", d / "data.csv", "--by", "group", "--numeric-only", "-R", "9"],
                        stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
        assert proc.returncode == 3 and "standard output is closed" in _one_line(proc.stderr)

    @pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
    def test_full_disk(self, files, tmp_path):
        d, _ = files
        with open("/dev/full", "w") as full:
            proc = _run_raw(["disco", d / "data.csv", "--by", "group", "--numeric-only", "-R", "9",
                             "-q"], stdout=full)
        line = _one_line(proc.stderr)
        assert proc.returncode == 3 and "disk is full" in line
        proc = _run_raw(["cluster", d / "data.csv", "-k", "2", "--numeric-only", "-q", "--out",
                         "/dev/full"], stdout=subprocess.DEVNULL)
        assert proc.returncode in (2, 3) and "/dev/full" in _one_line(proc.stderr)

    def test_memory_error(self, files, monkeypatch, capsys):
        d, _ = files
        from energystats import cli

        def exhausted(*args, **kwargs):
            raise MemoryError()

        monkeypatch.setattr(energystats, "energy_test", exhausted, raising=False)
        code = cli.main(["test", str(d / "data.csv"), "--by", "group", "--numeric-only", "-q"])
        err = capsys.readouterr().err
        assert code == 4 and "out of memory" in _one_line(err)


def test_help_imports_neither_pandas_nor_scikit_learn():
    code = ("import sys, contextlib, io\n"
            "from energystats.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['--help'])\n    except SystemExit:\n        pass\n"
            "print('pandas' in sys.modules, 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=_cli_env(), capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    assert out == ["False", "False"]


# -- dcor, dcor-matrix ------------------------------------------------------------

@needs_tests
class TestDcor:
    def test_dcor_and_test(self, files):
        d, df = files
        rc, out, err = run_cli("dcor", d / "data.csv", "--x", "x", "--y", "y", "-R", "99", "--seed", "4",
                               "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)
        want = energystats.independence_test(df[["x"]], df[["y"]], n_resamples=99, rng=4)
        assert rec["dcor"] == pytest.approx(want.estimates.dcor, rel=1e-12)
        assert rec["pvalue"] == want.pvalue and rec["seed"] == 4
        assert rec["statistic"] == pytest.approx(want.statistic, rel=1e-12)
        rc, out, err = run_cli("dcor", d / "data.csv", "--x", "x", "--y", "y", "-q")
        assert rc == 0 and "verdict" in out and "dcor" in out

    def test_dcor_affine(self, tmp_path):
        rng = np.random.default_rng(3)
        df = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
        df["c"] += df["a"] ** 2
        df.to_csv(tmp_path / "abc.csv", index=False)
        rc, out, err = run_cli("dcor", tmp_path / "abc.csv", "--x", "a,b", "--y", "c", "--affine",
                               "-R", "49", "--seed", "2", "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)
        want = energystats.independence_test(df[["a", "b"]], df[["c"]], n_resamples=49, rng=2,
                                             affine=True)
        assert rec["affine"] is True and rec["pvalue"] == want.pvalue
        assert rec["dcor"] == pytest.approx(want.estimates.dcor, rel=1e-12)
        assert abs(rec["dcor"] - energystats.distance_correlation(df[["a", "b"]], df["c"])) > 1e-6
        rc, out, err = run_cli("dcor", tmp_path / "abc.csv", "--x", "a,b", "--y", "c", "--affine",
                               "-R", "0", "-q")
        assert rc == 0 and "affinely invariant" in out

    def test_dcor_bad_options(self, files):
        d, _ = files
        rc, out, err = run_cli("dcor", d / "data.csv", "--x", "x", "--y", "nope")
        assert rc == 2 and "--x/--y" in err and "'nope'" in err
        rc, out, err = run_cli("dcor", d / "data.csv", "--x", "x", "--y", "x")
        assert rc == 2 and "in both" in err

    def test_dcor_matrix(self, files):
        d, df = files
        rc, out, err = run_cli("dcor-matrix", d / "data.csv", "--columns", "x,y", "--pvalues", "--adjust", "bh",
                               "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)
        want = energystats.distance_correlation_matrix(df[["x", "y"]], pvalue="ttest", adjust="bh")
        np.testing.assert_allclose(rec["dcor"], want.dcor.to_numpy(), rtol=1e-12)
        np.testing.assert_allclose(np.array(rec["adjusted"], dtype=float), want.adjusted.to_numpy(),
                                   rtol=1e-12)  # the diagonal (no test): null, NaN
        rc, out, err = run_cli("dcor-matrix", d / "data.csv", "-q")
        assert rc == 2 and "--numeric-only" in err     # text columns are an error, as elsewhere
        rc, out, err = run_cli("dcor-matrix", d / "data.csv", "--columns", "x,y", "--pvalue-method", "permutation",
                               "-R", "99", "--seed", "4", "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)
        want = energystats.independence_test(df["x"], df["y"], n_resamples=99, rng=4).pvalue
        assert rec["pvalues"][0][1] == want and rec["seed"] == 4 and rec["n_resamples"] == 99
        rc, out, err = run_cli("dcor-matrix", d / "data.csv", "--columns", "x,y", "--seed", "4")
        assert rc == 2 and "only with --pvalue-method permutation" in err


# -- gof --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gof_file(tmp_path_factory):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.gamma(2.0, size=60),
                       "n": rng.poisson(3.0, size=60), "s": ["a"] * 60})
    path = tmp_path_factory.mktemp("gof") / "g.csv"
    df.to_csv(path, index=False)
    return path, df


class TestGof:
    def test_normal_univariate_and_multivariate(self, gof_file):
        path, df = gof_file
        rc, out, err = run_cli("gof", path, "--column", "x", "-R", "99", "--seed", "2", "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)["results"][0]
        want = energystats.normality_test(df["x"], n_resamples=99, rng=2)
        assert rec["statistic"] == pytest.approx(want.statistic, rel=1e-14)
        assert rec["pvalue"] == want.pvalue and rec["seed"] == 2 and rec["columns"] == ["x"]
        rc, out, err = run_cli("gof", path, "--columns", "x,y", "-R", "19", "--seed", "2", "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)["results"][0]
        assert rec["distribution"] == "multivariate normal" and rec["n_features"] == 2
        rc, out, err = run_cli("gof", path, "--column", "x", "--method", "limit")
        assert rc == 0 and "limit" in out and "verdict" in out and "limit distribution" in err

    def test_poisson_and_scipy_families(self, gof_file):
        path, df = gof_file
        rc, out, err = run_cli("gof", path, "--column", "n", "--dist", "poisson", "--statistic", "all",
                               "-R", "49", "--seed", "1", "--format", "json", "-q")
        assert rc == 0, err
        recs = json.loads(out)["results"]
        want = energystats.poisson_test(df["n"], statistic="all", n_resamples=49, rng=1)
        assert [r["statistic_name"] for r in recs] == ["energy", "m-cvm", "m-ad"]
        assert [r["pvalue"] for r in recs] == [want[k].pvalue for k in ("energy", "m-cvm", "m-ad")]
        rc, out, err = run_cli("gof", path, "--column", "y", "--dist", "gamma", "--param", "loc=0",
                               "-R", "19", "--seed", "1", "--format", "json", "-q")
        assert rc == 0, err
        rec = json.loads(out)["results"][0]
        want = energystats.gof_test(df["y"], "gamma", known_params={"loc": 0}, n_resamples=19, rng=1)
        assert rec["pvalue"] == want.pvalue and rec["params"]["loc"] == 0.0
        assert rec["fitted"] == ["a", "scale"]

    def test_bad_input(self, gof_file):
        path, _ = gof_file
        for args, msg in [(("--column", "x", "--dist", "poisson"), "non-negative integer counts"),
                          (("--column", "s"), "not numeric"),
                          (("--column", "x", "--columns", "y"), "give one"),
                          (("--columns", "x,y", "--method", "limit"), "only for univariate normality"),
                          (("--columns", "x,y", "--dist", "gamma"), "takes one column"),
                          (("--column", "x", "--param", "loc"), "NAME=VALUE"),
                          (("--column", "x", "--dist", "gausian"), "not a distribution of scipy.stats"),
                          (("--column", "x", "--statistic", "m-ad"), "only with --dist poisson")]:
            rc, out, err = run_cli("gof", path, *args)
            assert rc == 2 and msg in err and "Traceback" not in err, (args, err)


class TestPvalueMethod:
    """--pvalue-method and --sequential-h of test, disco, dcor, gof and cluster."""

    def test_energy_test_asymptotic_and_decision(self, files):
        d, df = files
        rc, out, err = run_cli("test", d / "data.csv", "--by", "group", "--columns", "x,y",
                               "--pvalue-method", "asymptotic", "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        assert rec["pvalue_method"] == "asymptotic" and rec["n_resamples"] == 0
        assert rec["seed"] is None and "no resampling" in err
        ref = energystats.energy_test(df[["x", "y"]], labels=df["group"], pvalue_method="asymptotic")
        assert rec["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
        rc, out, err = run_cli("test", d / "data.csv", "--by", "group", "--columns", "x,y",
                               "--pvalue-method", "decision", "--seed", "3")
        assert rc == 0, err
        assert "verdict: the groups' distributions differ (p <= alpha = 0.05, decided after" in out

    def test_dcor_asymptotic_and_disco_sequential(self, files):
        d, df = files
        rc, out, err = run_cli("dcor", d / "data.csv", "--x", "x", "--y", "y",
                               "--pvalue-method", "asymptotic", "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        ref = energystats.independence_test(df["x"], df["y"], pvalue_method="asymptotic")
        assert rec["pvalue"] == pytest.approx(ref.pvalue, rel=1e-12)
        assert rec["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
        rc, out, err = run_cli("disco", d / "data.csv", "--by", "group", "--columns", "x,y",
                               "--pvalue-method", "sequential", "--sequential-h", "5", "--seed", "2",
                               "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        ref = energystats.disco(df[["x", "y"]], labels=df["group"], rng=2, pvalue_method="sequential",
                                sequential_h=5)
        assert (rec["pvalue"], rec["n_resamples"]) == (ref.pvalue, ref.n_resamples)

    def test_disco_several_factors_decision(self, files):
        d, df = files
        rc, out, err = run_cli("disco", d / "data.csv", "--by", "group,dose", "--columns", "x,y",
                               "--pvalue-method", "decision", "--seed", "3", "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)
        ref = energystats.disco(df[["x", "y"]], labels=df[["group", "dose"]], rng=3,
                                pvalue_method="decision")
        assert rec["decision"] == ref.decision and rec["n_resamples"] == ref.n_resamples.tolist()
        assert rec["pvalue"] == ref.pvalue.tolist()
        assert "/".join(map(str, ref.n_resamples)) + " (per factor)" in err
        rc, out, err = run_cli("disco", d / "data.csv", "--by", "group,dose", "--columns", "x,y",
                               "--pvalue-method", "decision", "--seed", "3")
        assert rc == 0, err
        verdicts = [line for line in out.splitlines() if line.startswith("verdict:")]
        assert len(verdicts) == 2 and "groups of group" in verdicts[0] and "groups of dose" in verdicts[1]
        for line, dec, used in zip(verdicts, ref.decision, ref.n_resamples):
            assert (f"decided after {used} resamples" in line) == (dec is not None)

    def test_gof_sequential_and_cluster_decision(self, files):
        d, df = files
        rc, out, err = run_cli("gof", d / "data.csv", "--column", "y", "--pvalue-method",
                               "sequential", "--sequential-h", "3", "--seed", "5", "--format", "json")
        assert rc == 0, err
        rec = json.loads(out)["results"][0]
        ref = energystats.normality_test(df["y"], rng=5, pvalue_method="sequential", sequential_h=3)
        assert rec["pvalue_method"] == "sequential"
        assert (rec["pvalue"], rec["n_resamples"]) == (ref.pvalue, ref.n_resamples)
        assert ref.n_resamples < 999   # h = 3 exceedances come early for normal data
        rc, out, err = run_cli("gof", d / "data.csv", "--column", "y", "--pvalue-method",
                               "decision", "--seed", "5")
        assert rc == 0, err
        ref = energystats.normality_test(df["y"], rng=5, pvalue_method="decision")
        assert ref.decision == "p <= alpha"   # (p = 0.018 for this sample)
        assert (f"verdict: the data are not from the normal family (p <= alpha = 0.05, decided after "
                f"{ref.n_resamples} resamples;") in out
        rc, out, err = run_cli("cluster", d / "data.csv", "--columns", "x,y", "-k", "2", "--test",
                               "--resamples", "39", "--n-init", "2", "--pvalue-method", "decision",
                               "--seed", "4", "--format", "json")
        assert rc == 0, err
        check = json.loads(out)["check"]
        ref = energystats.cluster_test(df[["x", "y"]], 2, n_resamples=39, rng=4, random_state=4,
                                       n_init=2, pvalue_method="decision")
        assert check["pvalue_method"] == "decision" and check["decision"] == ref.decision
        assert (check["pvalue"], check["n_resamples"]) == (ref.pvalue, ref.n_resamples)

    @pytest.mark.parametrize("args,text", [
        (("test", "data.csv", "--by", "group", "--columns", "x,y", "--pvalue-method", "sequential",
          "--sequential-h", "0"), "option --sequential-h: must be >= 1"),
        (("gof", "data.csv", "--column", "x", "--method", "limit", "--pvalue-method",
          "sequential"), "--method limit has no bootstrap"),
        (("gof", "data.csv", "--column", "x", "--dist", "poisson", "--statistic", "all",
          "--pvalue-method", "decision"), "one statistic at a time"),
        (("cluster", "data.csv", "--columns", "x,y", "-k", "2", "--pvalue-method", "decision"),
         "only with --test"),
        (("test", "data.csv", "--by", "group", "--columns", "x,y", "--pvalue-method",
          "asymptotic", "--strata", "dose"), "no stratified form"),
        (("dcor", "data.csv", "--x", "x", "--y", "y", "--pvalue-method", "decision",
          "--sequential-h", "5"), "only with --pvalue-method sequential"),
    ])
    def test_errors_are_one_line(self, files, args, text):
        d, _ = files
        rc, out, err = run_cli(*args, "--quiet", cwd=d)
        assert rc == 2 and text in _one_line(err)


# -- issue 30: progress, messages, JSON, demo, output details (in-process) ------

def _cli(capsys, *args):
    """``energystats *args`` in this process; (status, stdout, stderr)."""
    from energystats import cli

    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fake_clock(monkeypatch):
    """Every look at the progress clock is ten seconds later: every update writes a line."""
    from energystats._core import _progress

    ticks = [0.0]

    def clock():
        ticks[0] += 10.0
        return ticks[0]

    monkeypatch.setattr(_progress.time, "monotonic", clock)
    return ticks


@pytest.mark.parametrize("cmd, what", [
    (["test", "{d}/data.csv", "--by", "group", "--columns", "x,y", "-R", "199"], "permutations"),
    (["dcor", "{d}/data.csv", "--x", "x", "--y", "y", "-R", "199"], "resamples"),
    (["dcor-matrix", "{d}/data.csv", "--columns", "x,y", "--pvalue-method", "permutation",
      "-R", "199"], "pair permutations"),
    (["gof", "{d}/data.csv", "--column", "x", "-R", "99"], "resamples"),
    (["cluster", "{d}/data.csv", "--columns", "x,y", "-k", "2", "--test", "-R", "19"],
     "reference clusterings"),
])
def test_progress_lines_when_stderr_is_not_a_terminal(capsys, files, fake_clock, cmd, what):
    """Issue 30: a 51 s `test` printed no progress at all to a log (stderr not a terminal),
    and dcor/dcor-matrix/gof had none anywhere.  Now a line every ~5 s with the percent."""
    d, _ = files
    code, out, err = _cli(capsys, *[c.format(d=d) for c in cmd], "--seed", "3")
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if ln.startswith(what + ":")]
    assert lines and "\r" not in err, err
    assert " 100% " in lines[-1]
    code, out, err = _cli(capsys, *[c.format(d=d) for c in cmd], "--seed", "3", "--quiet")
    assert code == 0 and err == ""


def _strict_json(text):
    """Parse JSON refusing the non-standard NaN/Infinity tokens (as JavaScript and jq do)."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def test_json_has_no_nan_tokens(capsys, tmp_path):
    """Issue 30: `dcor` on 3 rows wrote "dcor_u": NaN (invalid JSON); now null."""
    path = tmp_path / "n3.csv"
    path.write_text("a,b\n1,2\n2,1\n3,5\n")
    code, out, err = _cli(capsys, "dcor", path, "--x", "a", "--y", "b", "-R", "0", "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["dcor_u"] is None and rec["dcov_u"] is None   # U-statistics need n >= 4
    assert rec["n"] == 3 and rec["dcor"] > 0


def test_dcor_matrix_csv_has_row_labels(capsys, tmp_path):
    """Issue 30: the CSV matrices had no row labels (the first column was a's row)."""
    rng = np.random.default_rng(5)
    pd.DataFrame(rng.normal(size=(20, 3)), columns=["a", "b", "c"]).to_csv(tmp_path / "m.csv",
                                                                          index=False)
    code, out, err = _cli(capsys, "dcor-matrix", tmp_path / "m.csv", "--format", "csv")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out), index_col=0)
    assert list(table.index) == ["a", "b", "c"] and list(table.columns) == ["a", "b", "c"]
    assert table.index.name == "column"
    np.testing.assert_allclose(np.diag(table.to_numpy()), 1.0)


@pytest.mark.parametrize("cmd", [
    ["disco", "{d}/data.csv", "--by", "group", "--columns", "x,y", "-R", "49"],
    ["gof", "{d}/data.csv", "--column", "x", "-R", "49"],
    ["test", "{d}/data.csv", "--by", "group", "--columns", "x,y", "-R", "49"],
    ["dcor", "{d}/data.csv", "--x", "x", "--y", "y", "-R", "49"],
    ["cluster", "{d}/data.csv", "--columns", "x,y", "-k", "2"],
])
def test_every_random_command_prints_its_seed(capsys, files, cmd):
    """Issue 30: disco and gof printed their seed only in JSON (and on stderr)."""
    d, _ = files
    args = [c.format(d=d) for c in cmd] + ["--seed", "4321", "-q"]
    code, out, _ = _cli(capsys, *args, "--format", "json")
    assert code == 0
    assert '"seed": 4321' in out
    for fmt in ("text", "csv"):
        code, out, _ = _cli(capsys, *args, "--format", fmt)
        assert code == 0
        assert "seed" in out and "4321" in out, (fmt, out)


def test_demo_shows_the_main_path(capsys):
    """Issue 30: the demo showed distances and W/S/T only; now also the k-sample test with its
    p-value and seed, cluster_test against the Gaussian reference, and the clusters against the
    species (crosstab, adjusted Rand index checked here with scikit-learn's, independent)."""
    metrics = pytest.importorskip("sklearn.metrics")
    code, out, err = _cli(capsys, "demo", "--seed", "7", "-R", "19")
    assert code == 0, err
    assert "Energy test of equal distributions" in out and "19 permutations" in out
    assert "seed 7" in out and "--seed 7" in out
    assert "cluster_test" in out and "Gaussian" in out
    # the crosstab as printed: species rows, cluster columns
    lines = out.splitlines()
    i = lines.index("4. Clusters against the species (crosstab)")
    tab = [ln.split() for ln in lines[i + 3:i + 6]]
    assert [t[0] for t in tab] == ["setosa", "versicolor", "virginica"]
    counts = np.array([[int(v) for v in t[1:]] for t in tab])
    assert counts.sum() == 150 and (counts.sum(axis=1) == 50).all()
    species = np.concatenate([[s] * int(c) for s in range(3) for c in counts[s]])
    clusters = np.concatenate([[k] * int(counts[s, k]) for s in range(3) for k in range(3)])
    ari = metrics.adjusted_rand_score(species, clusters)
    assert f"adjusted Rand index = {ari:.3f}" in out
