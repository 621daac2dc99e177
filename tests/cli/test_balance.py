"""The ``balance`` command: the weights it writes (read back exactly), its JSON, and its one-line
errors with exit status 2 (in-process, through ``run_cli``)."""
from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest

import energystats as es

from energystats.cli._io import _EXACT_FLOATS

from .test_cli import run_cli

pytest.importorskip("osqp")


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    n = 60
    X = rng.normal(size=(n, 2))
    df = pd.DataFrame(X, columns=["age", "inc"])
    df["t"] = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    df["dose"] = X[:, 0] + rng.normal(size=n)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    return path, df


def test_att_weights_written_and_read_back_exactly(data, tmp_path):
    path, df = data
    out = tmp_path / "weights.csv"
    rc, stdout, err = run_cli("balance", path, "--treatment", "t", "--columns", "age,inc",
                              "--estimand", "ATT", "--out", out)
    assert rc == 0, err
    assert "smd_before" in stdout and "effective sample size" in stdout
    back = pd.read_csv(out, **_EXACT_FLOATS)     # pandas 3.0 rounds 17-digit floats otherwise
    want = es.energy_balancing_weights(df[["age", "inc"]], df["t"], estimand="ATT").weights
    np.testing.assert_array_equal(back["weight"].to_numpy(), want)
    pd.testing.assert_frame_equal(back.drop(columns="weight"), pd.read_csv(path, **_EXACT_FLOATS))
    with open(path) as fin, open(out) as fout:       # every input field kept as written
        for a, b in zip(fin, fout):
            assert b.startswith(a.rstrip("\n") + ",")


def test_continuous_json(data):
    path, df = data
    rc, stdout, err = run_cli("balance", path, "-t", "dose", "--columns", "age,inc", "--continuous",
                              "--format", "json", "-q")
    assert rc == 0, err
    obj = json.loads(stdout)
    res = es.independence_weights(df[["age", "inc"]], df["dose"])
    assert obj["command"] == "balance" and obj["n"] == 60
    assert obj["weights"]["dcor_after"] == res.dcor_after
    assert obj["balance"]["overall"] == "distance correlation"
    assert [r["covariate"] for r in obj["balance"]["table"]] == ["age", "inc"]


@pytest.mark.parametrize("argv,needle", [
    (["-t", "nope"], "no column 'nope' (option --treatment)"),
    (["-t", "t", "-c", "age", "--estimand", "ATT", "--focal", "7"],
     "option --focal: '7' is not a level"),
    (["-t", "t", "--continuous", "--estimand", "ATT"], "options --estimand/--focal"),
    (["-t", "t", "--lam", "-1"], "option --lam: must be a finite number >= 0"),
    (["-t", "t", "--columns", "age,t"], "options --columns and --treatment"),
    (["-t", "t", "-c", "age", "--base-weights", "dose"],
     "column 'dose' (option --base-weights) must be non-negative"),
    (["-t", "t", "--seed", "3"], "option --seed: seeds the k-means of --cells and the resamples"),
    (["-t", "t", "--cells", "1"], "argument --cells: must be an integer >= 2; got '1'"),
    # the covariates must be named: an outcome would otherwise be balanced on
    (["-t", "t"], "name the covariates: --columns COLS, or --outcome COLUMN"),
    (["-t", "t", "--outcome", "nope"], "no column 'nope' (option --outcome)"),
    (["-t", "t", "-c", "age", "--outcome", "age"], "options --columns and --outcome"),
    (["-t", "t", "-c", "age", "--exclude", "nope"], "no column 'nope' (option --exclude)"),
    (["-t", "t", "-c", "age,inc", "--exclude", "inc"], "options --columns and --exclude"),
    (["-t", "t", "-c", "age", "--se", "sandwich"], "option --se: is for the effect on --outcome"),
    (["-t", "t", "-y", "dose", "--reference", "7"], "option --reference: '7' is not a level"),
    (["-t", "t", "-y", "dose", "--confidence", "1.5"], "option --confidence: must be strictly"),
    (["-t", "t", "-y", "dose", "--n-boot", "5"], "argument --n-boot: must be an integer >= 20"),
    (["-t", "t", "-y", "dose", "--quantiles", "0.5,2"], "argument --quantiles: must be "
                                                         "probabilities strictly between 0 and 1"),
    (["-t", "dose", "-c", "age", "--continuous", "--moments", "2"],
     "options --moments/--quantiles: are exact constraints"),
])
def test_errors_are_one_line_with_status_2(data, argv, needle):
    path, _ = data
    rc, stdout, err = run_cli("balance", path, *argv)
    lines = err.strip().splitlines()
    assert rc == 2 and needle in lines[-1], err
    assert "Traceback" not in err


def test_single_level_treatment_names_the_column(tmp_path):
    df = pd.DataFrame({"a": np.arange(6.0), "t": 1})
    df.to_csv(tmp_path / "one.csv", index=False)
    rc, _, err = run_cli("balance", tmp_path / "one.csv", "-t", "t", "-c", "a")
    assert rc == 2 and "column 't' (option --treatment) must have at least 2 levels" in err, err


def test_missing_solver_is_a_one_line_error(data, monkeypatch):
    monkeypatch.setitem(sys.modules, "osqp", None)
    rc, _, err = run_cli("balance", data[0], "-t", "t", "-c", "age", "--solver", "osqp")
    assert rc == 2 and "pip install energy-statistics[balance]" in err and "Traceback" not in err
    # --solver auto (the default) takes the package's own first-order solver instead
    rc, _, err = run_cli("balance", data[0], "-t", "t", "-c", "age")
    assert rc == 0 and "firstorder" in err, err


def test_help_has_an_example():
    from energystats.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices["balance"]
    text = sub.format_help()
    assert "example" in text and "energystats balance data.csv --treatment t" in text


def test_stderr_names_the_treatment_and_base_weights_columns_as_such(data):
    path, _ = data
    rc, _, err = run_cli("balance", path, "-t", "t", "--columns", "age,inc")
    assert rc == 0, err
    assert "grouped by" not in err
    assert "treatment: column 't' (--treatment)" in err, err


def test_stderr_names_the_base_weights_column(tmp_path, data):
    _, df = data
    df = df.assign(sw=np.linspace(0.5, 2.0, len(df)))
    path = tmp_path / "sw.csv"
    df.to_csv(path, index=False)
    rc, _, err = run_cli("balance", path, "-t", "t", "--columns", "age,inc", "--base-weights", "sw")
    assert rc == 0, err
    assert "grouped by" not in err
    assert "base weights: column 'sw' (--base-weights)" in err, err


def test_memory_error_gives_the_balance_advice(data, monkeypatch):
    import energystats.balance.weights as bw

    def boom(*a, **k):
        raise MemoryError("numpy could not allocate 3.2 GiB")

    monkeypatch.setattr(bw._forms, "distance_matrix", boom)
    rc, _, err = run_cli("balance", data[0], "-t", "t", "--columns", "age,inc")
    last = err.strip().splitlines()[-1]
    assert rc == 4 and "Traceback" not in err, err
    assert "--resamples" not in last, last
    assert "8 60×60 float64 matrices" in last and "60 rows" in last, last
    assert "--cells K" in last, last


def test_budget_refusal_gives_the_balance_advice(tmp_path):
    # 6000 rows: 8 matrices of 6000×6000 float64 at the peak = 2.1 GiB, above the 1 GiB budget, refused
    # before anything is allocated
    rng = np.random.default_rng(2)
    n = 6000
    df = pd.DataFrame({"a": rng.normal(size=n), "t": np.arange(n) % 2})
    df.to_csv(tmp_path / "big.csv", index=False)
    rc, _, err = run_cli("balance", tmp_path / "big.csv", "-t", "t", "--columns", "a",
                         "--solver", "osqp")   # the default, auto, runs firstorder here
    last = err.strip().splitlines()[-1]
    assert rc == 4 and "--resamples" not in last, err
    assert "6000×6000" in last and "above the memory budget of 1.0 GiB" in last, last
    assert "--cells K" in last, last
    # the advice works: the same file on cells, in O(cells²) memory
    rc, stdout, err = run_cli("balance", tmp_path / "big.csv", "-t", "t", "--columns", "a",
                              "--cells", "100", "--seed", "3", "--format", "json")
    assert rc == 0, err
    obj = json.loads(stdout)
    assert obj["weights"]["cells"] <= 200 and obj["weights"]["seed"] == 3
    assert "cell_labels" not in obj["weights"]
    assert "k-means cells (seed 3; pass --seed 3 to repeat)" in err, err


def test_continuous_no_dimension_adj(data):
    path, df = data
    rc, stdout, err = run_cli("balance", path, "-t", "dose", "--columns", "age,inc", "--continuous",
                              "--no-dimension-adj", "--format", "json", "-q")
    assert rc == 0, err
    obj = json.loads(stdout)
    res = es.independence_weights(df[["age", "inc"]], df["dose"], dimension_adj=False)
    assert obj["weights"]["dimension_adj"] is False and obj["weights"]["energy_weights"] == [0.5, 0.5]
    assert obj["weights"]["objective"] == res.objective
    rc, _, err = run_cli("balance", path, "-t", "t", "--columns", "age,inc", "--no-dimension-adj")
    assert rc == 2 and "option --no-dimension-adj" in err and "--continuous" in err, err


def test_outcome_is_left_out_and_its_effect_printed(data):
    """--outcome: not a covariate (the other numeric columns are), and the effect with its
    bootstrap SE equals the library's with the same seed."""
    path, df = data
    rc, stdout, err = run_cli("balance", path, "-t", "t", "--outcome", "dose", "--exclude", "inc",
                              "--seed", "5", "--n-boot", "40", "--format", "json", "-q")
    assert rc == 0, err
    obj = json.loads(stdout)
    assert obj["columns"] == ["age"] and obj["outcome"] == "dose"
    res = es.energy_balancing_weights(df[["age"]], df["t"])
    eff = es.weighted_effect(df["dose"], res, rng=5)      # the default: augmented, kernel
    row = obj["effect"]["table"][0]
    assert obj["effect"]["outcome_model"] == "kernel" and obj["effect"]["n_folds"] == 5
    assert row["bias_bound"] == eff.bias_bound[0] and row["unaugmented"] == eff.unaugmented[0]
    assert row["contrast"] == "1 - 0"
    assert row["estimate"] == eff.estimate[0] and row["std_error"] == eff.std_error[0]
    assert (row["ci_low"], row["ci_high"]) == (eff.ci_low[0], eff.ci_high[0])
    assert obj["effect"]["seed"] == 5
    rc, stdout, err = run_cli("balance", path, "-t", "t", "--outcome", "dose", "--exclude", "inc",
                              "--seed", "5", "--n-boot", "40", "--format", "json", "-q",
                              "--outcome-model", "none", "--se", "subsample")
    assert rc == 0, err
    row = json.loads(stdout)["effect"]["table"][0]
    eff = es.weighted_effect(df["dose"], res, outcome_model=None, n_boot=40, rng=5)
    assert row["estimate"] == eff.estimate[0] and row["std_error"] == eff.std_error[0]


def test_outcome_model_options_are_checked(data):
    path, _ = data
    rc, _, err = run_cli("balance", path, "-t", "t", "--outcome", "dose", "--exclude", "inc",
                         "--outcome-model", "none", "--ci-method", "bias-aware", "-q")
    assert rc == 2 and "bias-aware" in err and "Traceback" not in err
    rc, _, err = run_cli("balance", path, "-t", "t", "--ci-method", "bias-aware", "-q")
    assert rc == 2 and "option --ci-method: is for the effect on --outcome" in err


def test_outcome_text_lists_the_covariates_and_the_method(data):
    path, _ = data
    rc, stdout, err = run_cli("balance", path, "-t", "t", "-y", "dose", "--se", "sandwich",
                              "--adjust")
    assert rc == 0, err
    assert "covariates balanced" in stdout and "age" in stdout and "inc" in stdout
    assert "effect on 'dose' (ATE, regression-adjusted); standard error: HC0 sandwich" in stdout
    assert "columns used: age, inc;" in err and "outcome: column 'dose'" in err


@pytest.mark.parametrize("argv", [
    ["cluster", "-k", "2", "--format", "json"],
    ["dcor-matrix", "--format", "json"],
])
def test_exclude_leaves_columns_out_of_other_commands(tmp_path, argv):
    """--exclude is on every command that reads columns: the column is not used, and the note
    on stderr says so."""
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    df["label"] = np.arange(30) % 3
    path = tmp_path / "x.csv"
    df.to_csv(path, index=False)
    rc, stdout, err = run_cli(argv[0], path, *argv[1:], "--exclude", "label")
    assert rc == 0, err
    assert "columns used: a, b, c;" in err and "left out (--exclude): label" in err
    assert "label" not in json.loads(stdout).get("columns", ["a", "b", "c"])


def test_a_continuous_treatment_as_levels_is_refused_in_option_words_with_a_cut_list(data):
    """Was: '`focal` is required ...' (a Python argument) with all 60 levels in one line."""
    path, df = data
    rc, _, err = run_cli("balance", path, "-t", "dose", "-c", "age", "--estimand", "ATT")
    assert rc == 2 and "every level needs at least 2 rows" in err and "(52 more)" in err, err
    df = df.assign(arm=np.repeat(["a", "b", "c"], 20))
    df.to_csv(path, index=False)
    rc, _, err = run_cli("balance", path, "-t", "arm", "-c", "age", "--estimand", "ATT")
    assert rc == 2 and "--focal is required with estimand 'ATT'" in err, err
    assert "`focal`" not in err


@pytest.mark.parametrize("argv", [["cluster", "-k", "2"], ["dcor-matrix"], ["gof", "--column", "a"]])
def test_text_output_names_the_columns_used(tmp_path, argv):
    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    path = tmp_path / "x.csv"
    df.to_csv(path, index=False)
    rc, stdout, err = run_cli(argv[0], path, *argv[1:], "-q", "--resamples", "19") \
        if argv[0] == "gof" else run_cli(argv[0], path, *argv[1:], "-q")
    assert rc == 0, err
    want = "a" if argv[0] == "gof" else "a, b, c"
    assert stdout.startswith(f"columns used: {want}\n"), stdout[:200]


def test_moments_are_passed_on(data):
    path, df = data
    rc, stdout, err = run_cli("balance", path, "-t", "t", "-c", "age,inc", "--moments", "2",
                              "--quantiles", "0.5", "--format", "json", "-q")
    assert rc == 0, err
    obj = json.loads(stdout)
    want = es.energy_balancing_weights(df[["age", "inc"]], df["t"], moments=2, quantiles=[0.5])
    assert obj["weights"]["n_constraints"] == want.n_constraints == 12
    assert obj["weights"]["objective"] == want.objective


def test_seed_with_resolved_half_samples_is_kept(data):
    """--outcome-model none with the default --se auto resolves to half-samples: --seed is
    taken and repeats the run (it was refused as 'no randomness')."""
    path, df = data
    args = ("balance", path, "-t", "t", "--outcome", "dose", "--exclude", "inc", "--seed", "5",
            "--n-boot", "20", "--format", "json", "-q", "--outcome-model", "none")
    rc, out1, err = run_cli(*args)
    assert rc == 0, err
    rc, out2, _ = run_cli(*args)
    e1, e2 = json.loads(out1)["effect"], json.loads(out2)["effect"]
    assert e1["seed"] == 5 and e1["se_method"] == "subsample" and e1["table"] == e2["table"]
    assert "fold" not in e1
