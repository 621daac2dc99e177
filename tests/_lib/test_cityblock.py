"""The compiled cityblock kernel (``CITYBLOCK`` of _lib/_pairwise.pxd, ``es_l1_row`` of
_lib/_simd_body.h) against plain loops: float64 and float32, one and two threads, C, Fortran and
strided input, lengths off the kernels' blocks of four rows and eight columns, magnitudes far from
one, every instruction set the same bits."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import energystats as es
from energystats._lib import SIMD_LEVELS, _pairwise


def _loops(X, Y):
    """sum_t |x_t - y_t| in double, coordinates in order (the kernel's order: the same bits)."""
    X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    out = np.empty((len(X), len(Y)))
    for i in range(len(X)):
        for j in range(len(Y)):
            s = 0.0
            for t in range(X.shape[1]):
                s = s + abs(float(X[i, t]) - float(Y[j, t]))
            out[i, j] = s
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_cityblock_matches_plain_loops(dtype, n_threads, layout):
    rng = np.random.default_rng(11)
    n, m, d = 37, 19, 5
    X = rng.normal(size=(n, 2 * d)).astype(dtype)
    Y = rng.standard_cauchy(size=(m, d)).astype(dtype)
    X = {"C": np.ascontiguousarray(X[:, :d]), "F": np.asfortranarray(X[:, :d]),
         "strided": X[:, ::2]}[layout]
    expect = _loops(X, Y)
    np.testing.assert_array_equal(es.pairwise(X, Y, metric="cityblock", n_threads=n_threads), expect)
    np.testing.assert_array_equal(es.pairwise(X, metric="cityblock", n_threads=n_threads),
                                  _loops(X, X))


@pytest.mark.parametrize("scale", [2.0**-600, 2.0**700, 3.0e-300, 1e300])
def test_cityblock_at_any_magnitude(scale):
    # the data in working units (a power of two) and back: exact, no overflow or underflow
    X = np.random.default_rng(4).normal(size=(9, 3))
    got = es.pairwise(X * scale, metric="cityblock")
    expect = _loops(X, X) * scale
    np.testing.assert_allclose(got, expect, rtol=4e-16 * 3, atol=0)
    assert np.all(np.isfinite(got))


def test_cityblock_scipy_and_r():
    # R 4.2: Rscript -e 'm <- matrix(c(0,1,3,7, 0,2,0,5), 4); print(as.vector(dist(m, method="manhattan")))'
    #        -> 3 3 12 4 9 9
    m = np.array([[0.0, 0.0], [1.0, 2.0], [3.0, 0.0], [7.0, 5.0]])
    D = es.pairwise(m, metric="cityblock")
    np.testing.assert_array_equal(D[np.triu_indices(4, 1)], [3, 3, 12, 4, 9, 9])
    distance = pytest.importorskip("scipy.spatial.distance")
    X = np.random.default_rng(8).normal(size=(23, 4))
    np.testing.assert_array_equal(es.pairwise(X, metric="cityblock"),
                                  distance.cdist(X, X, "cityblock"))


CHILD = r"""
import json, sys
import numpy as np
import energystats as es
from energystats._lib import _pairwise
out = {"level": _pairwise.SIMD_LEVEL}
rng = np.random.default_rng(5)
for d in (1, 3, 8, 13):
    for dt in ("float64", "float32"):
        x = rng.normal(size=(103, d)).astype(dt)
        y = (rng.normal(size=(41, d)) + 0.3).astype(dt)
        out[f"{d}-{dt}-D"] = es.pairwise(x, y, metric="cityblock").ravel().tolist()
        out[f"{d}-{dt}-E"] = float(es.energy_distance(x, y, metric="cityblock", method="pairwise"))
        out[f"{d}-{dt}-dcov"] = float(es.distance_covariance(x[:41], y, metric="cityblock"))
        out[f"{d}-{dt}-W"] = float(es.EnergyClustering(3, metric="cityblock", engine="streamed",
                                                       random_state=0).fit(x).W_)
json.dump(out, sys.stdout)
"""


def _run(level):
    env = dict(os.environ, ENERGYSTATS_SIMD=level)
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                          timeout=600, cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                              os.path.abspath(__file__)))))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_cityblock_same_bits_on_every_instruction_set():
    base = _run("baseline")
    assert base.pop("level") == "baseline"
    chosen = SIMD_LEVELS.index(_pairwise.SIMD_LEVEL)
    if chosen == 0:
        pytest.skip("this CPU has only the baseline instruction set")
    for level in SIMD_LEVELS[1:chosen + 1]:
        got = _run(level)
        assert got.pop("level") == level
        diff = [key for key in base if got[key] != base[key]]   # exact: the same bits
        assert not diff, (level, diff[:5])
