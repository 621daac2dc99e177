"""The command ``energystats conditional`` (issue 52): the test of conditional independence,
in-process through ``run_cli``.

The statistic T and the mean conditional dCor printed by the tool are checked against a plain
NumPy transcription of Wang et al. (2015) (kernel weights, weighted double centring, the
density weight 12 f(z)^4), the default bandwidth against half of Scott's rule written here;
the bootstrap p-value against the library called with the same seed (the wiring) and the form
(1 + count) / (R + 1).
"""
from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import energystats as es

from .test_cli import run_cli
from ._helpers import one_error_line, strict_json as _strict_json


# -- an independent reference ----------------------------------------------------------

def ref_conditional(x, y, z, h):
    """``(T, mean rho^2)`` of Wang et al. (2015) by the definitions, point by point."""
    x = np.asarray(x, float).reshape(len(x), -1)
    y = np.asarray(y, float).reshape(len(y), -1)
    z = np.asarray(z, float).reshape(len(z), -1)
    n = len(x)
    h = np.broadcast_to(np.asarray(h, float), (z.shape[1],))
    a = np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(-1))
    b = np.sqrt(((y[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    u = (z[:, None, :] - z[None, :, :]) / h
    K = np.prod(np.exp(-u ** 2 / 2) / (np.sqrt(2 * np.pi) * h), axis=-1)   # K[i, k]

    def v2(w, p, q):
        def centre(m):
            r = m @ w
            return m - r[:, None] - r[None, :] + w @ m @ w
        return float(w @ (centre(p) * centre(q)) @ w)

    T, rho = 0.0, []
    for i in range(n):
        w = K[i] / K[i].sum()
        f = K[i].mean()
        vxy = v2(w, a, b)
        T += 12 * f ** 4 * vxy / n
        rho.append(vxy / np.sqrt(v2(w, a, a) * v2(w, b, b)))
    return T, float(np.mean(rho))


def _one_error_line(code, err):
    return one_error_line(code, err, "conditional")


@pytest.fixture(scope="module")
def cond_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("cond")
    rng = np.random.default_rng(5202)
    n = 30
    z = rng.normal(size=n)
    w = rng.normal(size=n)
    df = pd.DataFrame({"a": z + 0.5 * rng.normal(size=n), "b": z ** 2 + 0.5 * rng.normal(size=n),
                       "c": z, "d": w})
    df["e"] = df["a"] + 0.1 * rng.normal(size=n)           # dependent on a given z
    df["name"] = [f"r{i}" for i in range(n)]
    df.to_csv(d / "c.csv", index=False)
    return d / "c.csv", df


# -- results ----------------------------------------------------------------------------------

def test_help_has_an_example():
    code, out, _ = run_cli("conditional", "--help")
    assert code == 0 and "energystats conditional data.csv --x a --y b --z c,d" in out


@pytest.mark.parametrize("z, h", [(["c"], "0.7"), (["c", "d"], "0.6,0.9")])
def test_statistic_and_cdcor_against_the_definition(cond_file, z, h):
    path, df = cond_file
    T, rho = ref_conditional(df["a"], df["b"], df[z], [float(v) for v in h.split(",")])
    code, out, err = run_cli("conditional", path, "--x", "a", "--y", "b", "--z", ",".join(z),
                             "--bandwidth", h, "-R", "0", "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    assert rec["command"] == "conditional"
    assert rec["statistic"] == pytest.approx(T, rel=1e-9)
    assert rec["cdcor"] == pytest.approx(rho, rel=1e-9)
    assert rec["pvalue"] is None and rec["seed"] is None and rec["n_resamples"] == 0
    assert rec["bandwidth"] == [float(v) for v in h.split(",")] and rec["bandwidth_rule"] is None
    assert rec["columns_x"] == ["a"] and rec["columns_z"] == z and rec["n"] == len(df)


def test_default_bandwidth_is_half_scott(cond_file):
    path, df = cond_file
    n, d = len(df), 2
    h = df[["c", "d"]].std(ddof=1).to_numpy() * n ** (-1 / (d + 4)) / 2
    code, out, err = run_cli("conditional", path, "--x", "a", "--y", "b", "--z", "c,d", "-R", "0",
                             "--format", "csv", "-q")
    assert code == 0, err
    bw = out.split("# bandwidth", 1)[1].split("\n", 1)[1]
    table = pd.read_csv(io.StringIO(bw), index_col="z")
    np.testing.assert_allclose(table["bandwidth"], h, rtol=1e-12)
    T, rho = ref_conditional(df["a"], df["b"], df[["c", "d"]], h)
    main = pd.read_csv(io.StringIO(out.split("\n\n")[0].split("\n", 1)[1]))
    assert main["statistic"][0] == pytest.approx(T, rel=1e-9)


def test_pvalue_seed_and_verdict(cond_file):
    path, df = cond_file
    args = ["conditional", path, "--x", "a", "--y", "e", "--z", "c", "-R", "99", "--seed", "12"]
    code, out, err = run_cli(*args, "--format", "json")
    assert code == 0, err
    rec = _strict_json(out)
    want = es.conditional_independence_test(df["a"], df["e"], df["c"], n_resamples=99, rng=12)
    assert (rec["pvalue"], rec["seed"], rec["n_resamples"]) == (want.pvalue, 12, 99)
    assert rec["statistic"] == pytest.approx(want.statistic, rel=1e-12)
    count = rec["pvalue"] * 100 - 1
    assert abs(count - round(count)) < 1e-9 and rec["pvalue"] <= 0.05
    assert rec["pvalue_se"] == pytest.approx(np.sqrt(rec["pvalue"] * (1 - rec["pvalue"]) / 99))
    assert "seed 12 (pass --seed 12 to repeat)" in err
    code, out, err = run_cli(*args, "-q")
    assert code == 0 and "verdict: x and y are dependent given z" in out
    assert "check the rejection at half of it (--bandwidth " in out
    assert "seed" in out and " 12" in out
    code, out, err = run_cli(*args, "--format", "csv", "-q")
    first = pd.read_csv(io.StringIO(out.split("\n\n")[0].split("\n", 1)[1]))
    assert code == 0 and first["seed"][0] == 12
    # a fresh seed is drawn and printed when none is given
    code, out, err = run_cli("conditional", path, "--x", "a", "--y", "b", "--z", "c", "-R", "19",
                             "--format", "json")
    seed = _strict_json(out)["seed"]
    assert code == 0 and isinstance(seed, int) and f"--seed {seed}" in err


def test_no_evidence_verdict(cond_file):
    path, _ = cond_file
    code, out, err = run_cli("conditional", path, "--x", "a", "--y", "d", "--z", "c", "-R", "99",
                             "--seed", "3", "-q")
    assert code == 0, err
    assert "verdict: no evidence of dependence between x and y given z" in out


# -- input validation ------------------------------------------------------------------------

@pytest.mark.parametrize("extra, text", [
    (["--x", "a", "--y", "a", "--z", "c"], "options --x and --y: column(s) ['a'] in both"),
    (["--x", "a", "--y", "b", "--z", "b"], "options --y and --z: column(s) ['b'] in both"),
    (["--x", "a", "--y", "b", "--z", "c", "--bandwidth", "1,2"],
     "option --bandwidth: one number, or one per column of --z (1: c); got 2"),
    (["--x", "a", "--y", "b", "--z", "c", "--bandwidth", "wide"], "option --bandwidth: must be a rule"),
    (["--x", "a", "--y", "b", "--z", "c", "--bandwidth", "-1"], "option --bandwidth: must be finite"),
    (["--x", "a", "--y", "b", "--z", "c", "-R", "0", "--seed", "3"],
     "option --seed: --resamples 0 draws nothing"),
    (["--x", "a", "--y", "b", "--z", "c", "-R", "-1"], "option --resamples: must be >= 0; got -1"),
    (["--x", "a", "--y", "b", "--z", "nope"], "'nope'"),
    (["--x", "a", "--y", "name", "--z", "c"], "'name'"),
    (["--x", "a", "--y", "b", "--z", "c", "--columns", "d"], "option --columns: conditional takes"),
])
def test_refused_inputs_are_one_line(cond_file, extra, text):
    path, _ = cond_file
    code, out, err = run_cli("conditional", path, *extra)
    assert text in _one_error_line(code, err) and out == ""


def test_constant_column_speaks_of_the_column(cond_file, tmp_path):
    path, df = cond_file
    df = df.assign(k=1.0)
    df.to_csv(tmp_path / "k.csv", index=False)
    code, out, err = run_cli("conditional", tmp_path / "k.csv", "--x", "k", "--y", "b", "--z", "c",
                             "-R", "0")
    line = _one_error_line(code, err)
    assert "column 'k' (option --x) is constant" in line
