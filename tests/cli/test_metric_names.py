"""CLI ``--metric`` with SciPy's names and ``--no-check-negative-type`` (issue 34).

Expected numbers from SciPy's ``cdist`` matrices with plain NumPy means, never from the package.
"""
import json

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from .test_cli import run_cli


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rng = np.random.default_rng(34)
    df = pd.DataFrame(rng.integers(-2, 3, size=(30, 3)).astype(float) + 0.5, columns=["x", "y", "z"])
    df["group"] = np.repeat(["a", "b"], 15)
    path = tmp_path_factory.mktemp("metric") / "d.csv"
    df.to_csv(path, index=False)
    return path, df


def _edist(df, metric):
    X = df[["x", "y", "z"]].to_numpy()
    A, B = X[df.group == "a"], X[df.group == "b"]
    return 2 * cdist(A, B, metric).mean() - cdist(A, A, metric).mean() - cdist(B, B, metric).mean()


@pytest.mark.parametrize("metric", ["cityblock", "canberra", "hamming", "euclidean", "sqeuclidean"])
def test_distance_with_scipy_names(data, metric):
    path, df = data
    rc, out, err = run_cli("distance", path, "--numeric-only", "--by", "group", "--metric", metric,
                           "--format", "json", "-q")
    assert rc == 0, err
    rec = json.loads(out)
    assert rec["metric"] == metric
    np.testing.assert_allclose(rec["pairs"][0]["energy_distance"], _edist(df, metric), rtol=1e-10)


def test_test_and_dcor_with_a_scipy_name(data):
    path, df = data
    rc, out, err = run_cli("test", path, "--numeric-only", "--by", "group", "--metric", "cityblock",
                           "-R", "99", "--seed", "1", "--format", "json", "-q")
    assert rc == 0, err
    n = m = 15
    np.testing.assert_allclose(json.loads(out)["statistic"], n * m / (n + m) * _edist(df, "cityblock"),
                               rtol=1e-10)
    rc, out, err = run_cli("dcor", path, "--x", "x,y", "--y", "z", "--metric", "canberra", "-R", "0",
                           "--format", "json", "-q")
    assert rc == 0, err
    X, Y = df[["x", "y"]].to_numpy(), df[["z"]].to_numpy()

    def centred(D):
        return D - D.mean(0) - D.mean(1)[:, None] + D.mean()

    A, B = centred(cdist(X, X, "canberra")), centred(cdist(Y, Y, "canberra"))
    dcor = np.sqrt((A * B).mean() / np.sqrt((A * A).mean() * (B * B).mean()))
    np.testing.assert_allclose(json.loads(out)["dcor"], dcor, rtol=1e-10)


def test_refused_name_names_the_option_and_the_option_lifts_it(data):
    path, df = data
    rc, out, err = run_cli("distance", path, "--numeric-only", "--by", "group", "--metric", "chebyshev",
                           "-q")
    assert rc == 2 and out == ""
    assert "metric='chebyshev' with 3 features is refused" in err, err
    assert "Misiewicz" in err and "--no-check-negative-type" in err, err
    assert "check_negative_type=False" not in err, err          # the library's words translated
    rc, out, err = run_cli("distance", path, "--numeric-only", "--by", "group", "--metric", "chebyshev",
                           "--no-check-negative-type", "--format", "json", "-q")
    assert rc == 0, err
    rec = json.loads(out)
    assert rec["check_negative_type"] is False                  # the run records it
    np.testing.assert_allclose(rec["pairs"][0]["energy_distance"], _edist(df, "chebyshev"), rtol=1e-10)
    rc, out, err = run_cli("distance", path, "--numeric-only", "--by", "group", "--metric", "cosine", "-q")
    assert rc == 2 and "metric='cosine' is refused" in err and "--no-check-negative-type" in err, err


@pytest.mark.parametrize("option, value", [("--exponent", "0.5"), ("--sigma", "2")])
def test_a_parameter_with_a_scipy_name_is_refused(data, option, value):
    rc, out, err = run_cli("distance", data[0], "--numeric-only", "--by", "group", "--metric", "cityblock",
                           option, value, "-q")
    assert rc == 2, err
    assert f"option {option}: --metric cityblock has no parameter" in err and f"got {option} {value}" in err, err


def test_unknown_name_lists_the_choices(data):
    # (was 'minkowski', accepted since issue 52 with its parameter: test_metric_params.py)
    rc, out, err = run_cli("distance", data[0], "--metric", "jaccard")
    assert rc == 2 and "invalid choice: 'jaccard'" in err and "'cityblock'" in err, err
    assert "'minkowski'" in err, err


@pytest.mark.parametrize("metric, option, value, owner", [
    ("energy", "--sigma", "2", "--metric laplacian or gaussian"),
    ("gaussian", "--exponent", "1.5", "--metric energy"),
    ("laplacian", "--exponent", "0.5", "--metric energy"),
])
def test_a_parameter_the_metric_would_ignore_is_refused(data, metric, option, value, owner):
    rc, out, err = run_cli("distance", data[0], "--numeric-only", "--by", "group", "--metric", metric,
                           option, value, "-q")
    assert rc == 2 and "Traceback" not in err, err
    assert f"option {option}: is for {owner}" in err and f"got {option} {value}" in err, err
