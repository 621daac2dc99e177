"""The command ``energystats screen`` (issue 52): distance-correlation screening, in-process
through ``run_cli``.

Each feature's dCor printed by the tool is checked against a plain NumPy double loop over the
definition (double-centred distance matrices, V-statistics, root), the ranking and the default
top floor(n / log n) against that reference, the adjusted p-values against a Benjamini-Hochberg
and a Holm adjustment written here; the permutation p-values (and the iterative rounds) against
the library called with the same arguments (the wiring).
"""
from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest

import energystats as es

from .test_cli import run_cli
from ._helpers import one_error_line, strict_json as _strict_json


# -- independent references ---------------------------------------------------------

def ref_dcor(x, y, exponent=1.0):
    """dCor (V-statistic, root) by double loops over the pairs."""
    x = np.asarray(x, float).reshape(len(x), -1)
    y = np.asarray(y, float).reshape(len(y), -1)
    n = len(x)
    a, b = np.empty((n, n)), np.empty((n, n))
    for i in range(n):
        for j in range(n):
            a[i, j] = np.sqrt(np.sum((x[i] - x[j]) ** 2)) ** exponent
            b[i, j] = np.sqrt(np.sum((y[i] - y[j]) ** 2)) ** exponent
    A = a - a.mean(0) - a.mean(1)[:, None] + a.mean()
    B = b - b.mean(0) - b.mean(1)[:, None] + b.mean()
    return math.sqrt((A * B).mean() / math.sqrt((A * A).mean() * (B * B).mean()))


def ref_bh(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    running = 1.0
    for k in range(m - 1, -1, -1):
        running = min(running, p[order[k]] * m / (k + 1))
        adj[order[k]] = running
    return adj


def ref_holm(p):
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    adj = np.empty(m)
    running = 0.0
    for k in range(m):
        running = max(running, min(1.0, (m - k) * p[order[k]]))
        adj[order[k]] = running
    return adj


def _one_error_line(code, err):
    return one_error_line(code, err, "screen")


# -- data -----------------------------------------------------------------------------

FEATURES = ["g0", "g1", "g2", "g3", "g4", "g5"]


@pytest.fixture(scope="module")
def screen_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("screen")
    rng = np.random.default_rng(5201)
    n = 40
    df = pd.DataFrame(rng.normal(size=(n, 6)), columns=FEATURES)
    df["y"] = np.abs(df["g2"]) + df["g4"] ** 2 + 0.4 * rng.normal(size=n)
    df["y2"] = df["g1"] + 0.3 * rng.normal(size=n)
    df["name"] = [f"r{i}" for i in range(n)]
    df.to_csv(d / "s.csv", index=False)
    return d / "s.csv", df


# -- results ----------------------------------------------------------------------------

def test_help_has_an_example():
    code, out, _ = run_cli("screen", "--help")
    assert code == 0 and "energystats screen data.csv --target y" in out


def test_dcor_ranking_and_default_top_against_double_loops(screen_file):
    path, df = screen_file
    want = {f: ref_dcor(df[f], df["y"]) for f in FEATURES}
    order = sorted(FEATURES, key=lambda f: -want[f])
    n = len(df)
    top = min(len(FEATURES), math.floor(n / math.log(n)))
    code, out, err = run_cli("screen", path, "--target", "y", "--columns", ",".join(FEATURES),
                             "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["command"] == "screen" and rec["target"] == ["y"] and rec["columns"] == FEATURES
    assert rec["top"] == top and rec["ranking"] == order and rec["selected"] == order[:top]
    assert rec["pvalue_method"] is None and rec["seed"] is None and rec["n_resamples"] == 0
    feats = rec["features"]
    assert [r["feature"] for r in feats] == order
    for r in feats:
        assert r["dcor"] == pytest.approx(want[r["feature"]], rel=1e-10)
        assert "pvalue" not in r
    assert [r["rank"] for r in feats] == list(range(1, 7))
    assert [r["selected"] for r in feats] == [True] * top + [False] * (6 - top)
    assert rec["metric"] == "energy" and rec["metric_params"] is None
    # text: the table, the columns, the verdict naming the selected features
    code, out, err = run_cli("screen", path, "--target", "y", "--numeric-only", "--exclude", "y2",
                             "--top", "2")
    assert code == 0, err
    assert f"{want[order[0]]:.6g}" in out
    assert f"selected: 2 of 6 feature(s), the top 2 by distance correlation: {order[0]}, " \
           f"{order[1]}." in out
    assert "left out (--numeric-only): name" in err and "target: column(s) 'y'" in err
    # csv parses back with the feature names as row labels
    code, out, err = run_cli("screen", path, "--target", "y", "--numeric-only", "--exclude", "y2",
                             "--format", "csv", "-q")
    assert code == 0 and err == ""
    t = pd.read_csv(io.StringIO(out), index_col="feature")
    assert list(t.index) == order
    np.testing.assert_allclose(t["dcor"], [want[f] for f in order], rtol=1e-10)


def test_exponent_reaches_the_library(screen_file):
    path, df = screen_file
    code, out, err = run_cli("screen", path, "--target", "y", "--columns", "g2,g4",
                             "--exponent", "0.5", "--format", "json", "-q")
    assert code == 0, err
    got = {r["feature"]: r["dcor"] for r in _strict_json(out)["features"]}
    for f in ("g2", "g4"):
        assert got[f] == pytest.approx(ref_dcor(df[f], df["y"], 0.5), rel=1e-10)


@pytest.mark.parametrize("adjust, ref", [("bh", ref_bh), ("holm", ref_holm), ("none", None)])
def test_permutation_pvalues_adjusted_and_seed(screen_file, adjust, ref):
    path, df = screen_file
    args = ["screen", path, "--target", "y", "--columns", ",".join(FEATURES), "--pvalue",
            "permutation", "-R", "199", "--seed", "77", "--adjust", adjust]
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["seed"] == 77 and rec["n_resamples"] == 199 and rec["exact"] is False
    assert rec["adjust"] == (None if adjust == "none" else adjust)
    feats = {r["feature"]: r for r in rec["features"]}
    p = np.array([feats[f]["pvalue"] for f in FEATURES])
    for f in FEATURES:   # the library's test of each feature with the same permutations
        assert feats[f]["pvalue"] == es.independence_test(df[f], df["y"], n_resamples=199,
                                                          rng=77).pvalue
        count = feats[f]["pvalue"] * 200 - 1
        assert abs(count - round(count)) < 1e-9 and feats[f]["seed"] == 77
    adj = np.array([feats[f]["pvalue_adjusted"] for f in FEATURES])
    np.testing.assert_allclose(adj, p if ref is None else ref(p), rtol=1e-12)
    assert "seed 77 (pass --seed 77 to repeat)" in err
    code, out, err = run_cli(*args, "-q")
    assert code == 0 and "seed" in out and "77" in out
    significant = [f for f in rec["ranking"] if feats[f]["pvalue_adjusted"] <= 0.05]
    assert f"significant: {len(significant)} feature(s)" in out
    assert ", ".join(significant) in out
    code, out, err = run_cli(*args, "--format", "csv", "-q")
    assert code == 0 and (pd.read_csv(io.StringIO(out))["seed"] == 77).all()


def test_a_seed_is_drawn_and_reported_when_not_given(screen_file):
    path, df = screen_file
    code, out, err = run_cli("screen", path, "--target", "y", "--columns", "g2,g4", "--pvalue",
                             "permutation", "-R", "99", "--format", "json")
    assert code == 0, err
    seed = _strict_json(out)["seed"]
    assert isinstance(seed, int) and f"pass --seed {seed} to repeat" in err
    again = run_cli("screen", path, "--target", "y", "--columns", "g2,g4", "--pvalue",
                    "permutation", "-R", "99", "--seed", str(seed), "--format", "json")[1]
    assert _strict_json(again)["features"] == _strict_json(out)["features"]


def test_rounds_and_a_multivariate_target_match_the_library(screen_file):
    path, df = screen_file
    code, out, err = run_cli("screen", path, "--target", "y", "--columns", ",".join(FEATURES),
                             "--top", "4", "--rounds", "2", "--format", "json", "-q")
    assert code == 0, err
    rec = _strict_json(out)
    want = es.distance_correlation_screen(df[FEATURES], df["y"], top=4, rounds=2)
    assert rec["selected"] == want.selected and rec["rounds"] == 2
    rounds = {r["feature"]: r["round"] for r in rec["features"]}
    assert [rounds[f] for f in want.selected] == [1, 1, 2, 2]
    code, out, err = run_cli("screen", path, "--target", "y,y2", "--columns", ",".join(FEATURES),
                             "--format", "json", "-q")
    assert code == 0, err
    got = {r["feature"]: r["dcor"] for r in _strict_json(out)["features"]}
    for f in FEATURES:
        assert got[f] == pytest.approx(ref_dcor(df[f], df[["y", "y2"]]), rel=1e-10)


# -- input validation ------------------------------------------------------------------------

@pytest.mark.parametrize("extra, text", [
    (["--seed", "1"], "option --seed: only with --pvalue permutation"),
    (["--resamples", "99"], "option --resamples: only with --pvalue permutation"),
    (["--adjust", "holm"], "option --adjust: only with --pvalue permutation"),
    (["--pvalue", "permutation", "-R", "0"], "option --resamples: must be an integer >= 1; got 0"),
    (["--top", "9"], "option --top: must be at most the number of features, 6; got 9"),
    (["--top", "2", "--rounds", "3"], "option --rounds: must be at most --top (2)"),
    (["--rounds", "9"], "--rounds must be an integer in [1, top="),
])
def test_refused_options_are_one_line_in_option_words(screen_file, extra, text):
    path, _ = screen_file
    code, out, err = run_cli("screen", path, "--target", "y", "--columns", ",".join(FEATURES),
                             *extra)
    line = _one_error_line(code, err)
    assert text in line and out == "", err


def test_bad_columns(screen_file):
    path, _ = screen_file
    code, out, err = run_cli("screen", path, "--target", "nope", "--numeric-only")
    assert "no column 'nope' (option --target)" in _one_error_line(code, err)
    code, out, err = run_cli("screen", path, "--target", "y", "--columns", "y,g1")
    assert "options --target and --columns: column(s) ['y'] in both" in _one_error_line(code, err)
    code, out, err = run_cli("screen", path, "--target", "name", "--columns", "g1")
    line = _one_error_line(code, err)
    assert "--target" in line and "'name'" in line and "not numeric" in line
    code, out, err = run_cli("screen", path, "--target", "y")    # the text column 'name'
    line = _one_error_line(code, err)
    assert "'name'" in line and "--numeric-only" in line
    code, out, err = run_cli("screen", path, "--target", "y", "--numeric-only", "--pvalue",
                             "asymptotic")
    assert code == 2 and "invalid choice: 'asymptotic'" in err


def test_too_few_permutations_warn_in_option_words(screen_file):
    path, _ = screen_file
    code, out, err = run_cli("screen", path, "--target", "y", "--columns", ",".join(FEATURES),
                             "--pvalue", "permutation", "-R", "19", "--seed", "1")
    assert code == 0, err
    assert "warning (UserWarning)" in err and "use --resamples >= " in err
    assert "n_resamples" not in err
