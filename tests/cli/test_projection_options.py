"""``energystats dcor --projections K`` and ``energystats test --projections K``: the projection
tests from the CLI, wired to the library (the same statistic and p-value for the same seed),
and their refusals with the command line's option names."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import energystats as es

from .test_cli import run_cli
from ._helpers import one_error_line, strict_json


@pytest.fixture
def csv(tmp_path):
    g = np.random.default_rng(4)
    x = g.normal(size=(120, 2))
    df = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "c": x[:, 0] + g.normal(size=120)})
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.mark.parametrize("method", ["full", "gamma"])
def test_projection_json_equals_library(csv, method):
    path, df = csv
    code, out, err = run_cli("dcor", path, "--x", "a,b", "--y", "c", "--projections", "7",
                             "--resamples", "49", "--seed", "3", "--pvalue-method", method,
                             "--format", "json")
    assert code == 0, err
    got = strict_json(out)
    lib = es.independence_test(df[["a", "b"]], df[["c"]], method="projection", n_projections=7,
                               n_resamples=49, rng=3, pvalue_method=method)
    assert got["statistic"] == lib.statistic and got["pvalue"] == lib.pvalue
    assert got["n_projections"] == 7 and got["pvalue_method"] == method and got["seed"] == 3
    assert ("n_resamples" in got) == (method == "full")


def test_projection_text_verdict(csv):
    path, _ = csv
    code, out, err = run_cli("dcor", path, "--x", "a,b", "--y", "c", "--projections", "5",
                             "--pvalue-method", "gamma", "--seed", "1")
    assert code == 0, err
    assert "projection test of independence" in out and "gamma p-value, approximate" in out
    assert "verdict: x and y are dependent" in out


@pytest.mark.parametrize("extra, match", [
    (["--projections", "0"], "--projections: must be >= 1"),
    (["--pvalue-method", "gamma"], "only with --projections"),
    (["--projections", "5", "--pvalue-method", "sequential"], "full or gamma"),
    (["--projections", "5", "--resamples", "0"], "--resamples"),
    (["--projections", "5", "--exponent", "0.5"], "--exponent 1"),
])
def test_projection_refusals(csv, extra, match):
    path, _ = csv
    code, _, err = run_cli("dcor", path, "--x", "a,b", "--y", "c", *extra)
    assert match in one_error_line(code, err, "dcor")


def test_gamma_warning_reaches_stderr(tmp_path):
    g = np.random.default_rng(0)
    df = pd.DataFrame(g.standard_t(3, size=(300, 2)), columns=["a", "b"])
    df["c"] = g.lognormal(size=300)
    path = tmp_path / "heavy.csv"
    df.to_csv(path, index=False)
    code, out, err = run_cli("dcor", path, "--x", "a,b", "--y", "c", "--projections", "10",
                             "--pvalue-method", "gamma", "--seed", "1")
    assert code == 0, err
    assert "kurtosis" in err and "warning" in err.lower()


@pytest.fixture
def groups_csv(tmp_path):
    g = np.random.default_rng(2)
    df = pd.DataFrame(g.normal(size=(160, 3)), columns=["a", "b", "c"])
    df["grp"] = np.repeat(["u", "v"], 80)
    df.loc[df.grp == "v", "a"] += 0.5
    path = tmp_path / "g.csv"
    df.to_csv(path, index=False)
    return path, df


def test_energy_projection_json_equals_library(groups_csv):
    path, df = groups_csv
    code, out, err = run_cli("test", path, "--by", "grp", "--projections", "9", "--resamples", "49",
                             "--seed", "3", "--format", "json")
    assert code == 0, err
    got = strict_json(out)
    lib = es.energy_test(df, by="grp", columns=["a", "b", "c"], method="projection",
                         n_projections=9, n_resamples=49, rng=3)
    assert got["statistic"] == lib.statistic and got["pvalue"] == lib.pvalue
    assert got["n_projections"] == 9 and got["seed"] == 3


@pytest.mark.parametrize("extra, match", [
    (["--projections", "0"], "must be >= 1"),
    (["--projections", "5", "--estimator", "U"], "--estimator U"),
    (["--projections", "5", "--pvalue-method", "sequential"], "--pvalue-method sequential"),
    (["--projections", "5", "--resamples", "0"], "--resamples 0"),
    (["--projections", "5", "--metric", "cityblock"], "--metric energy"),
])
def test_energy_projection_refusals(groups_csv, extra, match):
    path, _ = groups_csv
    code, _, err = run_cli("test", path, "--by", "grp", *extra)
    assert match in one_error_line(code, err, "test")


def test_the_gamma_run_reports_no_resampling(csv):
    # was: "0 resamples in 0.97 s" for a p-value that resamples nothing
    path, _ = csv
    code, _, err = run_cli("dcor", path, "--x", "a,b", "--y", "c", "--projections", "5",
                           "--pvalue-method", "gamma", "--seed", "1")
    assert code == 0, err
    assert "gamma p-value, no resampling" in err and "0 resamples" not in err
    assert "seed 1 of the 5 random directions" in err
