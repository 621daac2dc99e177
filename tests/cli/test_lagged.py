"""The command ``energystats lagged`` (issue 52): the ADCF test and the cross-distance
correlation test of time series, in-process through ``run_cli``.

The per-lag dCor and (n - |j|) dCov^2 printed by the tool, and the portmanteau Q, are checked
against plain NumPy double loops over the lagged pairs (x_t, y_(t-j)); the p-values against the
library called with the same seed (the wiring) and the form (1 + count) / (R + 1).
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import energystats as es

from .test_cli import run_cli
from ._helpers import one_error_line, strict_json as _strict_json


# -- an independent reference ------------------------------------------------------------

def ref_lag(x, y, j):
    """``(dCor, (n - |j|) dCov^2)`` of the pairs (x_t, y_(t-j)), V-statistics, by double loops."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    if j >= 0:
        xs, ys = x[j:], y[:n - j]
    else:
        xs, ys = x[:n + j], y[-j:]
    m = len(xs)
    a, b = np.empty((m, m)), np.empty((m, m))
    for r in range(m):
        for s in range(m):
            a[r, s] = abs(xs[r] - xs[s])
            b[r, s] = abs(ys[r] - ys[s])
    A = a - a.mean(0) - a.mean(1)[:, None] + a.mean()
    B = b - b.mean(0) - b.mean(1)[:, None] + b.mean()
    v2 = (A * B).mean()
    return np.sqrt(v2 / np.sqrt((A * A).mean() * (B * B).mean())), (n - abs(j)) * v2


def _one_error_line(code, err):
    return one_error_line(code, err, "lagged")


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    d = tmp_path_factory.mktemp("lagged")
    rng = np.random.default_rng(5203)
    T = 80
    e = rng.normal(size=T)
    x = np.zeros(T)
    for t in range(1, T):
        x[t] = 0.3 * x[t - 1] + e[t]      # stationary: no unit root found at T = 80
    y = np.r_[0.0, x[:-1]] ** 2 + 0.3 * rng.normal(size=T)      # y_t depends on x_(t-1)
    ar = np.zeros(T)                                             # strongly autocorrelated
    for t in range(1, T):
        ar[t] = 0.8 * ar[t - 1] + e[t]
    df = pd.DataFrame({"date": pd.date_range("2026-01-01", periods=T, freq="D").strftime("%Y-%m-%d"),
                       "x": x, "y": y, "ar": ar, "noise": rng.normal(size=T),
                       "w1": np.cumsum(rng.normal(size=T)), "w2": np.cumsum(rng.normal(size=T))})
    df.to_csv(d / "t.csv", index=False)
    df.iloc[::-1].to_csv(d / "reversed.csv", index=False)
    return d, df


# -- results ----------------------------------------------------------------------------------

def test_help_has_an_example():
    code, out, _ = run_cli("lagged", "--help")
    assert code == 0 and "energystats lagged data.csv --x a --lags 10" in out


def test_adcf_per_lag_and_portmanteau_against_double_loops(series):
    d, df = series
    code, out, err = run_cli("lagged", d / "t.csv", "--x", "ar", "--lags", "3", "-R", "99",
                             "--seed", "8", "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["command"] == "lagged" and rec["test"] == "adcf" and rec["lags"] == [1, 2, 3]
    assert rec["seed"] == 8 and rec["n_resamples"] == 99 and rec["columns"] == ["ar"]
    refs = [ref_lag(df["ar"], df["ar"], j) for j in (1, 2, 3)]
    np.testing.assert_allclose(rec["dcor"], [r[0] for r in refs], rtol=1e-10)
    np.testing.assert_allclose(rec["lag_statistics"], [r[1] for r in refs], rtol=1e-10)
    assert rec["statistic"] == pytest.approx(sum(r[1] for r in refs), rel=1e-10)
    want = es.adcf_test(df["ar"].to_numpy(), lags=3, n_resamples=99, rng=8)
    assert rec["pvalue"] == want.pvalue and rec["pvalues"] == want.pvalues.tolist()
    count = rec["pvalue"] * 100 - 1
    assert abs(count - round(count)) < 1e-9 and rec["pvalue"] <= 0.05    # an AR(1) series
    assert [r["lag"] for r in rec["per_lag"]] == [1, 2, 3]
    assert all(r["seed"] == 8 for r in rec["per_lag"])
    assert "seed 8 (pass --seed 8 to repeat)" in err
    code, out, err = run_cli("lagged", d / "t.csv", "--x", "ar", "--lags", "3", "-R", "99",
                             "--seed", "8", "-q")
    assert code == 0 and "verdict: x is serially dependent (at lags 1..3" in out
    assert f"{refs[0][0]:.6g}" in out
    code, out, err = run_cli("lagged", d / "t.csv", "--x", "noise", "--lags", "2", "-R", "99",
                             "--seed", "8", "-q")
    assert code == 0 and "verdict: no evidence of serial dependence in x" in out


def test_bartlett_weights_and_a_list_of_lags(series):
    d, df = series
    code, out, err = run_cli("lagged", d / "t.csv", "--x", "x", "--lags", "1,3", "--kernel",
                             "bartlett", "-R", "19", "--seed", "1", "--format", "json", "-q")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["lags"] == [1, 3] and rec["kernel"] == "bartlett"
    w = [(1 - j / 4) ** 2 for j in (1, 3)]
    np.testing.assert_allclose(rec["weights"], w, rtol=1e-12)
    q = sum(wj * ref_lag(df["x"], df["x"], j)[1] for wj, j in zip(w, (1, 3)))
    assert rec["statistic"] == pytest.approx(q, rel=1e-10)


def test_cross_per_lag_against_double_loops_and_time_column(series):
    d, df = series
    args = ["lagged", d / "t.csv", "--x", "x", "--y", "y", "--lags", "2", "-R", "99", "--seed", "4"]
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["test"] == "cross" and rec["lags"] == [-2, -1, 0, 1, 2]
    assert rec["columns_x"] == ["x"] and rec["columns_y"] == ["y"] and rec["valid"] is True
    refs = [ref_lag(df["x"], df["y"], j) for j in rec["lags"]]
    np.testing.assert_allclose(rec["dcor"], [r[0] for r in refs], rtol=1e-10)
    np.testing.assert_allclose(rec["lag_statistics"], [r[1] for r in refs], rtol=1e-10)
    assert rec["statistic"] == pytest.approx(sum(r[1] for r in refs), rel=1e-10)
    assert int(np.argmax(rec["dcor"])) == 1      # lag -1: y_(t+1) is x_t squared
    want = es.cross_distance_correlation_test(df["x"].to_numpy(), df["y"].to_numpy(), lags=2,
                                              n_resamples=99, rng=4)
    assert (rec["pvalue"], rec["block_length"], rec["resampling"]) == \
        (want.pvalue, want.block_length, "block")
    # --time-column: checked in order, the same result
    code, out2, err = run_cli(*args, "--time-column", "date", "--format", "json")
    assert code == 0, err
    assert _strict_json(out2)["statistic"] == rec["statistic"]
    assert _strict_json(out2)["time_column"] == "date"
    code, out, err = run_cli("lagged", d / "reversed.csv", "--x", "x", "--lags", "2",
                             "--time-column", "date")
    line = _one_error_line(code, err)
    assert "column 'date' (option --time-column) is not in time order" in line
    assert "data row 2" in line
    # the text output: both tables, the verdict
    code, out, err = run_cli(*args, "-q")
    assert code == 0 and "cross_dcor" in out and "portmanteau" in out
    assert "verdict: x and y are dependent" in out and "valid: False" not in out


def test_cross_permutation_and_given_block_size(series):
    d, df = series
    code, out, err = run_cli("lagged", d / "t.csv", "--x", "x", "--y", "noise", "--lags", "1",
                             "--block-size", "5", "-R", "49", "--seed", "2", "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    want = es.cross_distance_correlation_test(df["x"].to_numpy(), df["noise"].to_numpy(), lags=1,
                                              block_length=5, n_resamples=49, rng=2)
    assert rec["block_length"] == 5 and rec["pvalue"] == want.pvalue and rec["block_rule"] is None
    code, out, err = run_cli("lagged", d / "t.csv", "--x", "x", "--y", "noise", "--lags", "1",
                             "--resampling", "permutation", "-R", "49", "--seed", "2",
                             "--format", "csv", "-q")
    assert code == 0, err
    summary = pd.read_csv(io.StringIO(out.split("# portmanteau")[1].split("\n", 1)[1]))
    assert summary["resampling"][0] == "permutation" and summary["block_length"][0] == 1
    assert summary["seed"][0] == 2


def test_random_walks_print_valid_and_validity(series):
    d, df = series
    args = ["lagged", d / "t.csv", "--x", "w1", "--y", "w2", "--lags", "1", "-R", "19",
            "--seed", "1"]
    code, out, err = run_cli(*args)
    assert code == 0, err
    assert "\nvalid: False\nvalidity: a unit root: column 'w1' (option --x) looks integrated" in out
    assert "verdict: none: the test is not valid on these series" in out
    assert "warning (SeriesDependenceWarning): column 'w1' (option --x) looks integrated" in err
    assert "np.diff" not in out + err and "x['w1']" not in out + err
    code, out, err = run_cli(*args, "--format", "json", "-q")
    rec = _strict_json(out)
    assert rec["valid"] is False and rec["validity"].startswith("a unit root: column 'w1'")
    assert any("looks integrated" in c for c in rec["series_checks"])


# -- input validation ------------------------------------------------------------------------

@pytest.mark.parametrize("extra, text", [
    (["--x", "x", "--block-size", "3"], "option --block-size: only with --y"),
    (["--x", "x", "--resampling", "block"], "option --resampling: only with --y"),
    (["--x", "x", "--y", "y", "--resampling", "permutation", "--block-size", "3"],
     "option --block-size: is the block length of --resampling block"),
    (["--x", "x", "--y", "y", "--block-size", "60"],
     "--block-size must be an integer in [1, n_samples // 2 = 40]"),
    (["--x", "x", "--lags", "soon"], "option --lags: must be an integer L"),
    (["--x", "x", "--lags", "500"], "--lags must be an integer in [1, n_samples - 4 = 76]"),
    (["--x", "x", "--lags=-1,2"], "--lags of the ADCF must be positive"),
    (["--x", "x", "--y", "x"], "options --x and --y: column(s) ['x'] in both"),
    (["--x", "x", "--time-column", "x"], "option --time-column: 'x' is also a column of --x"),
    (["--x", "x", "--time-column", "when"], "no column 'when' (option --time-column)"),
    (["--x", "x", "-R", "0"], "option --resamples: must be an integer >= 1; got 0"),
    (["--x", "date"], "'date'"),
])
def test_refused_inputs_are_one_line(series, extra, text):
    d, _ = series
    code, out, err = run_cli("lagged", d / "t.csv", *extra)
    assert text in _one_error_line(code, err) and out == ""
