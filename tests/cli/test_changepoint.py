"""The command ``energystats changepoint`` (issue 32), in-process through ``run_cli``.

Change points and Q̂ printed by the tool are checked against a plain NumPy double loop over
the definitions of Matteson & James (2014) (``ref_best_split``), never against the library;
p-values against what the permutation p-value must be, ``(1 + #{≥}) / (R + 1)``.
"""
from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from .test_cli import run_cli


# -- an independent reference: Q̂ of every (τ, κ) by double loops ----------------

def ref_Q(X, Y, alpha=1.0):
    """Q̂(X, Y; α) = nm/(n+m) Ê with U-type within averages (plain loops)."""
    n, m = len(X), len(Y)
    between = sum(np.linalg.norm(x - y) ** alpha for x in X for y in Y) * 2.0 / (n * m)
    wx = sum(np.linalg.norm(X[i] - X[j]) ** alpha for i in range(n) for j in range(i + 1, n))
    wy = sum(np.linalg.norm(Y[i] - Y[j]) ** alpha for i in range(m) for j in range(i + 1, m))
    E = between - wx / (n * (n - 1) / 2) - wy / (m * (m - 1) / 2)
    return n * m / (n + m) * E


def ref_best_split(Z, min_size, alpha=1.0):
    """(τ, Q̂) of the best split of the whole series: τ the first row of the new segment."""
    Z = np.asarray(Z, float).reshape(len(Z), -1)
    T = len(Z)
    best = (-np.inf, None)
    for tau in range(min_size, T - min_size + 1):
        for kappa in range(tau + min_size, T + 1):
            q = ref_Q(Z[:tau], Z[tau:kappa], alpha)
            if q > best[0]:
                best = (q, tau)
    return best[1], best[0]


# -- data -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def series(tmp_path_factory):
    d = tmp_path_factory.mktemp("cp")
    rng = np.random.default_rng(20261126)
    T = 48
    a = np.r_[rng.normal(0, 1, 28), rng.normal(6, 1, 20)]   # one clear change, at row 28
    b = rng.normal(size=T)
    df = pd.DataFrame({"date": pd.date_range("2026-01-01", periods=T, freq="D").strftime("%Y-%m-%d"),
                       "a": a, "b": b, "name": [f"id{i}" for i in range(T)]})
    df.to_csv(d / "s.csv", index=False)
    return d, df


def _strict_json(text):
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def _no_traceback(code, err):
    assert code == 2, err
    assert "Traceback" not in err, err
    assert [ln for ln in err.splitlines() if "error:" in ln] == [err.strip().splitlines()[-1]], err


# -- results ------------------------------------------------------------------------

def test_help_has_an_example():
    code, out, _ = run_cli("changepoint", "--help")
    assert code == 0 and "energystats changepoint data.csv" in out
    code, out, _ = run_cli("--help")
    assert "changepoint" in out


def test_fixed_k_matches_the_reference_and_labels_rows_by_date(series):
    """--k 1: the split and its Q̂ are the reference's; the table names the rows by --time-column."""
    d, df = series
    tau, q = ref_best_split(df[["a", "b"]].to_numpy(), 5)
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a,b", "--time-column", "date",
                             "--min-size", "5", "--k", "1", "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["changepoints"] == [tau] and rec["pvalues"] is None and rec["seed"] is None
    assert rec["statistics"][0] == pytest.approx(q, rel=1e-9)
    assert rec["changepoint_labels"][0].startswith(df["date"][tau])
    seg = rec["segments"]
    assert [s["start"] for s in seg] == [0, tau] and [s["end"] for s in seg] == [tau, len(df)]
    assert seg[1]["first"].startswith(df["date"][tau])
    assert seg[0]["mean_a"] == pytest.approx(df["a"][:tau].mean(), rel=1e-12)
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a,b", "--time-column", "date",
                             "--min-size", "5", "--k", "1")
    assert code == 0 and df["date"][tau] in out and "untested" in out


def test_tested_splits_print_pvalues_the_rejected_split_and_the_seed(series):
    """Every tested split is printed with its p-value (the accepted ones and the rejected last
    one), p = (1 + count) / (R + 1), and the seed in text, CSV and JSON."""
    d, df = series
    tau, q = ref_best_split(df[["a", "b"]].to_numpy(), 5)
    args = ["changepoint", d / "s.csv", "--columns", "a,b", "--min-size", "5", "-R", "99",
            "--seed", "4321"]
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["changepoints"][0] == tau and rec["seed"] == 4321
    assert rec["pvalues"][0] == pytest.approx(0.01)   # a 6-sd shift: no permutation reaches Q̂
    splits = rec["splits"]
    assert [s["accepted"] for s in splits] == [True] * len(rec["changepoints"]) + [False]
    assert splits[-1]["pvalue"] == rec["rejected_pvalue"] > 0.05
    for s in splits:
        count = s["pvalue"] * (s["n_resamples"] + 1) - 1
        assert abs(count - round(count)) < 1e-9 and s["seed"] == 4321
    assert "4321" in err
    code, out, err = run_cli(*args, "--format", "csv", "-q")
    assert code == 0 and err == ""
    table = pd.read_csv(io.StringIO(out.split("# splits")[1].split("\n", 1)[1]))
    assert list(table["accepted"]) == [True] * len(rec["changepoints"]) + [False]
    assert set(table["seed"]) == {4321}
    code, out, err = run_cli(*args)
    assert code == 0 and "verdict:" in out and "4321" in out and "next best split" in out


def test_out_writes_the_rows_with_a_segment_column(series, tmp_path):
    d, df = series
    tau, _ = ref_best_split(df[["a", "b"]].to_numpy(), 5)
    out_path = tmp_path / "segments.csv"
    code, _, err = run_cli("changepoint", d / "s.csv", "--columns", "a,b", "--min-size", "5",
                           "--k", "1", "--out", out_path)
    assert code == 0, err
    back = pd.read_csv(out_path)
    assert list(back.columns) == ["date", "a", "b", "name", "segment"]
    assert back["segment"].tolist() == [0] * tau + [1] * (len(df) - tau)
    assert (out_path.read_text().splitlines()[1].split(",")[:4]
            == (d / "s.csv").read_text().splitlines()[1].split(",")[:4])   # fields as written


def test_agglo_finds_the_change_and_k_picks_the_merge_path(series):
    d, df = series
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a", "--agglo", "--block",
                             "4", "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["method"] == "e_agglo" and rec["changepoints"] == [28]
    assert rec["path"][0]["n_changepoints"] == len(df) // 4 - 1
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a", "--agglo", "--block",
                             "4", "--k", "3", "--format", "json")
    assert code == 0, err
    assert len(_strict_json(out)["changepoints"]) == 3


def test_cp3o_finds_the_change_with_the_fit_of_the_loops(series):
    from ..changepoint.test_e_cp3o import ref_gof

    d, df = series
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a", "--method", "cp3o",
                             "--delta", "5", "--max-k", "4", "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["method"] == "e_cp3o" and rec["changepoints"] == [28]
    assert rec["chosen_by"] == "ecp rule" and len(rec["gof"]) == 4
    Z = df[["a"]].to_numpy()
    assert rec["gof"][0] == pytest.approx(ref_gof(Z, 5, 1.0, [27]), rel=1e-12)
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a", "--method", "cp3o",
                             "--delta", "5", "--k", "2", "--time-column", "date")
    assert code == 0, err
    assert "2 change point(s)" in out and "runs no significance test" in out
    assert "ecp's gofM and cpLoc" in out and "2026-01-29" in out


def test_progress_lines_when_stderr_is_not_a_terminal(series, monkeypatch):
    """Like the other long commands: a progress line every few seconds on stderr."""
    from energystats._core import _progress

    ticks = [0.0]

    def clock():
        ticks[0] += 10.0
        return ticks[0]

    monkeypatch.setattr(_progress.time, "monotonic", clock)
    d, _ = series
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a,b", "--min-size", "5",
                             "-R", "99", "--seed", "1")
    assert code == 0, err
    # the bar is the resampling loop's ('resamples: ...') or one per test ('test 1: permutations: ...')
    lines = [ln for ln in err.splitlines()
             if re.match(r"(resamples|test \d+: permutations): ", ln)]
    assert lines and " 100% " in lines[-1] and "\r" not in err, err
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a,b", "--min-size", "5",
                             "-R", "99", "--seed", "1", "--quiet")
    assert code == 0 and err == ""


# -- errors in the user's words -------------------------------------------------------

@pytest.mark.parametrize("extra, words", [
    (["--min-size", "1"], "option --min-size: must be an integer >= 2"),
    (["--min-size", "0", "--k", "1"], "option --min-size: must be an integer >= 2"),
    (["--min-size", "30"], "option --min-size must be at most T // 2 = 24"),
    (["--min-size", "5", "--k", "9"], "option --k: must be at most T // min-size - 1 = 48 // 5 - 1 = 8"),
    (["--min-size", "5", "-R", "0"], "option --resamples must be an integer in [1, 10**9]; got 0"),
    (["--min-size", "5", "-R", "5", "--pvalue-method", "sequential"],
     "option --resamples: must be at least 10 with --pvalue-method sequential"),
    (["--k", "1", "--seed", "3"], "option --seed: not used with --k"),
    (["--agglo", "--resamples", "9"], "option --resamples: not used by --agglo"),
    (["--penalty", "2"], "option --penalty: only with --agglo"),
    (["--exponent", "2"], "option --exponent: must lie in (0, 2)"),
    (["--time-column", "when"], "no column 'when' (option --time-column)"),
    (["--time-column", "a"], "option --columns: 'a' is the --time-column"),
    (["--method", "cp3o", "--seed", "1"], "option --seed: not used by --method cp3o"),
    (["--method", "cp3o", "--min-size", "5"], "option --min-size: not used by --method cp3o"),
    (["--delta", "3"], "option --delta: only with --method cp3o"),
    (["--agglo", "--method", "cp3o"], "options --agglo and --method cp3o"),
    (["--method", "cp3o", "--k", "1", "--max-k", "3"], "options --k and --max-k"),
    (["--method", "cp3o", "--delta", "5", "--k", "8"],
     "option --k: at most T // (delta + 1) - 1 = 7 change points"),
    (["--method", "cp3o", "--delta", "1"], "option --delta: must be an integer >= 2"),
    (["--method", "cp3o"], "option --delta: e-cp3o needs at least 2 (delta + 1) = 60 rows"),
])
def test_bad_options_are_one_line_in_the_users_words(series, extra, words):
    d, _ = series
    code, out, err = run_cli("changepoint", d / "s.csv", "--columns", "a,b", *extra)
    _no_traceback(code, err)
    assert words in err, err
    assert "`" not in err      # no Python argument names


def test_missing_values_and_time_order_name_the_data_row(tmp_path):
    (tmp_path / "na.csv").write_text("t,a\n1,0.5\n2,\n3,0.3\n4,0.2\n5,1\n6,1\n")
    code, _, err = run_cli("changepoint", tmp_path / "na.csv", "--time-column", "t",
                           "--min-size", "2", "--k", "1")
    _no_traceback(code, err)
    assert "first in data row 2" in err and "--dropna" in err
    (tmp_path / "order.csv").write_text("t,a\n1,0.5\n2,0.1\n4,0.3\n3,0.2\n5,1\n6,1\n")
    code, _, err = run_cli("changepoint", tmp_path / "order.csv", "--time-column", "t",
                           "--min-size", "2", "--k", "1")
    _no_traceback(code, err)
    assert "column 't' (option --time-column) is not in time order: data row 4" in err


def test_dropna_keeps_the_dropped_rows_in_out_with_an_empty_segment(tmp_path):
    (tmp_path / "na.csv").write_text("t,a\n1,0.5\n2,\n3,0.3\n4,0.2\n5,9\n6,9.5\n")
    out_path = tmp_path / "o.csv"
    code, _, err = run_cli("changepoint", tmp_path / "na.csv", "--time-column", "t",
                           "--min-size", "2", "--k", "1", "--dropna", "--out", out_path)
    assert code == 0, err
    assert "dropped (--dropna)" in err
    back = pd.read_csv(out_path)
    assert back["segment"].isna().tolist() == [False, True, False, False, False, False]
    assert back["segment"].dropna().tolist() == [0, 0, 0, 1, 1]


def test_block_resampling_and_whole_number_years(tmp_path):
    """--resampling block is passed on (its block lengths noted), a time column of whole
    numbers stored as floats names the change points as integers (was 1901.0), and the
    min_size warning is in option words."""
    from energystats.datasets import load_nile

    d = load_nile().reset_index()
    d["year"] = d["year"].astype(float)
    path = tmp_path / "nile.csv"
    d.to_csv(path, index=False)
    rc, stdout, err = run_cli("changepoint", path, "--time-column", "year", "--columns", "volume",
                              "--seed", "1", "--resampling", "block", "--format", "json")
    assert rc == 0, err
    obj = json.loads(stdout)
    assert obj["resampling"] == "block" and obj["changepoint_labels"] == [1901]
    assert "block length(s)" in err and "Rerun with option --min-size smaller" in err
    rc, stdout, err = run_cli("changepoint", path, "--time-column", "year", "--columns", "volume",
                              "--seed", "1", "--min-size", "20", "-q")
    assert rc == 0 and "1899 " in stdout and "1899.0" not in stdout, stdout
    rc, _, err = run_cli("changepoint", path, "--columns", "volume", "--block-size", "3")
    assert rc == 2 and "--block-size: is the block length of --resampling block" in err


def test_kappa_end_is_passed_on(tmp_path):
    rng = np.random.default_rng(3)
    x = np.r_[rng.normal(size=60), 2 + rng.normal(size=60)]
    path = tmp_path / "x.csv"
    pd.DataFrame({"x": x}).to_csv(path, index=False)
    rc, stdout, err = run_cli("changepoint", path, "--kappa", "end", "--k", "1", "--min-size", "10",
                              "--format", "json")
    assert rc == 0, err
    import energystats as es
    want = es.e_divisive(x, min_size=10, n_changepoints=1, kappa="end")
    assert json.loads(stdout)["changepoints"] == want.changepoints.tolist()
    rc, _, err = run_cli("changepoint", path, "--kappa", "end", "--agglo")
    assert rc == 2 and "option --kappa: not used by --agglo" in err


def test_exclude_leaves_a_text_column_out(tmp_path):
    """``-x txt`` was ignored by changepoint (it still complained about the text column;
    issue 51): the column is left out, the note says so, and the answer is the one without it;
    a column that does not exist is an error naming the option."""
    g = np.random.default_rng(0)
    df = pd.DataFrame({"a": np.r_[g.normal(size=40), g.normal(3, 1, size=40)], "txt": ["u"] * 80})
    df.to_csv(tmp_path / "t.csv", index=False)
    df[["a"]].to_csv(tmp_path / "a.csv", index=False)
    code, out, err = run_cli("changepoint", tmp_path / "t.csv", "-x", "txt", "--k", "1",
                             "--min-size", "5", "--format", "json")
    assert code == 0, err
    assert "left out (--exclude): txt" in err
    code2, out2, _ = run_cli("changepoint", tmp_path / "a.csv", "--k", "1", "--min-size", "5",
                             "--format", "json")
    assert _strict_json(out)["changepoints"] == _strict_json(out2)["changepoints"]
    code, _, err = run_cli("changepoint", tmp_path / "t.csv", "-x", "nope")
    _no_traceback(code, err)
    assert "no column 'nope' (option --exclude)" in err
