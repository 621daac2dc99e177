"""CLI ``--metric NAME:KEY=VALUE`` (issue 52): SciPy's parametrised names 'minkowski' (p),
'seuclidean' (V, values separated by ';') and 'mahalanobis' (VI, its d*d values row by row),
passed to the library as the pair ``metric=(name, {key: value})``.

Expected numbers from SciPy's ``cdist`` matrices with plain NumPy means, never from the package.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from .test_cli import run_cli
from ._helpers import strict_json as _strict_json

L3 = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.2, 0.7]])
VI3 = L3 @ L3.T
METRICS = [("minkowski:p=1.5", "minkowski", {"p": 1.5}),
           ("seuclidean:V=0.5;2;1.5", "seuclidean", {"V": np.array([0.5, 2.0, 1.5])}),
           ("mahalanobis:VI=" + ";".join(repr(float(v)) for v in VI3.ravel()), "mahalanobis",
            {"VI": VI3})]
IDS = ["minkowski", "seuclidean", "mahalanobis"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(52)
    df = pd.DataFrame(rng.normal(size=(30, 3)) * [1.0, 3.0, 0.5], columns=["x", "y", "z"])
    df["group"] = np.repeat(["a", "b"], 15)
    df.loc[df.group == "b", "x"] += 1.0
    df["w"] = df["x"] ** 2 + 0.3 * rng.normal(size=30)
    df["v"] = rng.normal(size=30)
    path = tmp_path_factory.mktemp("metric_params") / "d.csv"
    df.to_csv(path, index=False)
    return path, df


def _edist(A, B, name, params):
    return (2 * cdist(A, B, name, **params).mean() - cdist(A, A, name, **params).mean()
            - cdist(B, B, name, **params).mean())


def _centred(D):
    return D - D.mean(0) - D.mean(1)[:, None] + D.mean()


def _dcor(X, Y, name, params):
    A = _centred(cdist(X, X, name, **params))
    B = _centred(cdist(Y, Y, name, **params))
    return float(np.sqrt((A * B).mean() / np.sqrt((A * A).mean() * (B * B).mean())))


@pytest.mark.parametrize("text, name, params", METRICS, ids=IDS)
def test_distance_and_test_with_a_parameter(data, text, name, params):
    path, df = data
    X = df[["x", "y", "z"]].to_numpy()
    A, B = X[df.group == "a"], X[df.group == "b"]
    rc, out, err = run_cli("distance", path, "--columns", "x,y,z", "--by", "group", "--metric",
                           text, "--format", "json", "-q")
    assert rc == 0, err
    rec = _strict_json(out)
    assert rec["metric"] == name
    assert rec["metric_params"].keys() == params.keys()
    np.testing.assert_allclose(np.asarray(next(iter(rec["metric_params"].values()))),
                               next(iter(params.values())), rtol=1e-15)
    np.testing.assert_allclose(rec["pairs"][0]["energy_distance"], _edist(A, B, name, params),
                               rtol=1e-10)
    rc, out, err = run_cli("test", path, "--columns", "x,y,z", "--by", "group", "--metric", text,
                           "-R", "19", "--seed", "1", "--format", "json", "-q")
    assert rc == 0, err
    np.testing.assert_allclose(_strict_json(out)["statistic"], 7.5 * _edist(A, B, name, params),
                               rtol=1e-10)


def test_dcor_with_minkowski(data):
    path, df = data
    rc, out, err = run_cli("dcor", path, "--x", "x,y", "--y", "w,v", "--metric", "minkowski:p=1.2",
                           "-R", "0", "--format", "json", "-q")
    assert rc == 0, err
    rec = _strict_json(out)
    assert rec["metric"] == "minkowski" and rec["metric_params"] == {"p": 1.2}
    want = _dcor(df[["x", "y"]].to_numpy(), df[["w", "v"]].to_numpy(), "minkowski", {"p": 1.2})
    np.testing.assert_allclose(rec["dcor"], want, rtol=1e-10)


def test_the_new_commands_take_it(data):
    path, df = data
    p = {"p": 1.5}
    rc, out, err = run_cli("screen", path, "--target", "w,v", "--columns", "x,y,z", "--metric",
                           "minkowski:p=1.5", "--format", "json", "-q")
    assert rc == 0, err
    rec = _strict_json(out)
    assert rec["metric_params"] == p
    got = {r["feature"]: r["dcor"] for r in rec["features"]}
    Y = df[["w", "v"]].to_numpy()
    for f in ("x", "y", "z"):
        want = _dcor(df[[f]].to_numpy(), Y, "minkowski", p)
        np.testing.assert_allclose(got[f], want, rtol=1e-10)
    rc, out, err = run_cli("lagged", path, "--x", "x,y", "--lags", "1", "--metric",
                           "seuclidean:V=1;4", "-R", "9", "--seed", "1", "--format", "json", "-q")
    assert rc == 0, err
    rec = _strict_json(out)
    X = df[["x", "y"]].to_numpy()
    want = _dcor(X[1:], X[:-1], "seuclidean", {"V": np.array([1.0, 4.0])})
    np.testing.assert_allclose(rec["dcor"][0], want, rtol=1e-10)
    assert rec["metric"] == "seuclidean" and rec["metric_params"] == {"V": [1.0, 4.0]}
    rc, out, err = run_cli("conditional", path, "--x", "x,y", "--y", "w,v", "--z", "z", "--metric",
                           "mahalanobis:VI=2;0.5;0.5;1", "-R", "0", "--format", "json", "-q")
    assert rc == 0, err
    assert _strict_json(out)["metric_params"] == {"VI": [[2.0, 0.5], [0.5, 1.0]]}


# -- input validation ------------------------------------------------------------------

@pytest.mark.parametrize("metric, text", [
    ("minkowski", "option --metric: minkowski needs its parameter p, written NAME:p=VALUE, e.g. "
                  "--metric minkowski:p=1.5"),
    ("minkowski:", "minkowski needs its parameter p"),
    ("minkowski:q=1.5", "option --metric: minkowski takes the parameter p only"),
    ("minkowski:p", "minkowski's parameter must be written KEY=VALUE"),
    ("minkowski:p=1.5,p=1.2", "the parameter p of minkowski is given twice"),
    ("minkowski:p=abc", "option --metric: p of minkowski must be number(s) separated by ';'; "
                        "got 'abc'"),
    ("minkowski:p=1;2", "p of minkowski is one number"),
    ("minkowski:p=0.5", "option --metric: p of minkowski must be ≥ 1"),
    ("seuclidean:V=1;-2;3", "option --metric: V of seuclidean must be > 0 everywhere"),
    ("mahalanobis:VI=1;2;3", "VI of mahalanobis is a d x d matrix, its d*d values row by row"),
    ("mahalanobis:VI=1;2;3;4", "VI of mahalanobis must be symmetric"),
    ("mahalanobis:VI=1;0;0;-1", "VI of mahalanobis must be positive definite"),
    ("energy:p=1", "option --metric: energy takes no parameter after ':' (its parameter is "
                   "--exponent)"),
    ("cityblock:p=1", "cityblock takes no parameter after ':'"),
])
def test_bad_parameters_are_one_line(data, metric, text):
    rc, out, err = run_cli("distance", data[0], "--columns", "x,y,z", "--by", "group", "--metric",
                           metric)
    assert rc == 2 and out == "" and "Traceback" not in err, err
    assert err.strip().splitlines() == [err.strip()], err
    assert err.startswith("energystats distance: error: ") and text in err, err


def test_parameter_checked_against_the_data(data):
    rc, out, err = run_cli("distance", data[0], "--columns", "x,y,z", "--by", "group", "--metric",
                           "seuclidean:V=1;2")
    assert rc == 2 and "V of --metric seuclidean has length 2, but the data have 3 feature(s)" \
        in err, err
    rc, out, err = run_cli("distance", data[0], "--columns", "x,y,z", "--by", "group", "--metric",
                           "minkowski:p=3")
    assert rc == 2 and "metric='minkowski' with p=3.0 and 3 features is refused" in err, err
    assert "--no-check-negative-type" in err
    rc, out, err = run_cli("distance", data[0], "--columns", "x,y,z", "--by", "group", "--metric",
                           "minkowski:p=3", "--no-check-negative-type", "--format", "json", "-q")
    assert rc == 0, err
    X = data[1][["x", "y", "z"]].to_numpy()
    g = data[1].group.to_numpy()
    np.testing.assert_allclose(_strict_json(out)["pairs"][0]["energy_distance"],
                               _edist(X[g == "a"], X[g == "b"], "minkowski", {"p": 3.0}), rtol=1e-10)


@pytest.mark.parametrize("option, value", [("--exponent", "0.5"), ("--sigma", "2")])
def test_exponent_or_sigma_with_a_parameter_is_refused(data, option, value):
    rc, out, err = run_cli("distance", data[0], "--columns", "x,y,z", "--by", "group", "--metric",
                           "minkowski:p=1.5", option, value)
    assert rc == 2, err
    assert f"option {option}: --metric minkowski has no such parameter (its parameter goes after " \
           f"the colon: --metric minkowski:p=1.5); got {option} {value}." in err, err
