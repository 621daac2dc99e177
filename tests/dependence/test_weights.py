"""Sample weights of the distance covariance and correlation (issue 33): weighted double
centring against a double-loop reference, integer weights against repeated rows, bad input."""
import math

import numpy as np
import pandas as pd
import pytest

import energystats as es

from ..reference import ref_matrix, ref_weighted_dcov, metric_kwargs

METRICS = [("energy", 1.0), ("energy", 0.5), ("gaussian", 1.3)]
FUNCS = ["distance_stats", "distance_covariance", "distance_covariance_sqr", "distance_correlation",
         "distance_correlation_sqr"]


def _expected(name, cov, xx, yy):
    dcor_sqr = cov / math.sqrt(xx * yy)
    return {"distance_covariance": math.sqrt(cov), "distance_covariance_sqr": cov,
            "distance_correlation": math.sqrt(dcor_sqr), "distance_correlation_sqr": dcor_sqr}[name]


@pytest.mark.parametrize("metric,param", METRICS)
@pytest.mark.parametrize("dx,dy", [(1, 1), (3, 2)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 2])
def test_weighted_stats_against_double_loop(metric, param, dx, dy, dtype, threads):
    rng = np.random.default_rng(3300)
    x = rng.normal(size=(21, dx)).astype(dtype)
    y = (x[:, :1] ** 2 + rng.normal(size=(21, dy))).astype(dtype)
    w = rng.uniform(0.0, 3.0, 21)
    w[4] = 0.0
    cov, xx, yy = ref_weighted_dcov(x.astype(float), y.astype(float), w, metric, param)
    res = es.distance_stats(x, y, weights=w, n_threads=threads, **metric_kwargs(metric, param))
    assert res.dcov_sqr == pytest.approx(cov, rel=1e-11)
    assert res.dvar_x_sqr == pytest.approx(xx, rel=1e-12)
    assert res.dvar_y_sqr == pytest.approx(yy, rel=1e-12)
    assert res.dcor_sqr == pytest.approx(cov / math.sqrt(xx * yy), rel=1e-11)
    assert math.isnan(res.dcov_u) and math.isnan(res.dcor_u) and res.weights == "array"
    for name in FUNCS[1:]:
        got = getattr(es, name)(x, y, weights=w, n_threads=threads, **metric_kwargs(metric, param))
        assert got == pytest.approx(_expected(name, cov, xx, yy), rel=1e-11)


def test_weighted_stats_precomputed_and_callable():
    rng = np.random.default_rng(3301)
    x, y = rng.normal(size=(12, 2)), rng.normal(size=(12, 1))
    w = rng.uniform(0.2, 2.0, 12)
    cov, xx, yy = ref_weighted_dcov(x, y, w)
    res = es.distance_stats(ref_matrix(x), ref_matrix(y), metric="precomputed", weights=w)
    assert (res.dcov_sqr, res.dvar_x_sqr, res.dvar_y_sqr) == pytest.approx((cov, xx, yy), rel=1e-12)
    res = es.distance_stats(x, y, metric=lambda a, b: float(np.linalg.norm(a - b)), weights=w)
    assert (res.dcov_sqr, res.dvar_x_sqr, res.dvar_y_sqr) == pytest.approx((cov, xx, yy), rel=1e-12)


def test_two_threads_same_bits():
    rng = np.random.default_rng(3302)
    x, y = rng.normal(size=(900, 3)), rng.normal(size=(900, 2))
    w = rng.uniform(size=900)
    one = es.distance_stats(x, y, weights=w, n_threads=1)
    two = es.distance_stats(x, y, weights=w, n_threads=2)
    assert (one.dcov_sqr, one.dvar_x_sqr, one.dvar_y_sqr) == (two.dcov_sqr, two.dvar_x_sqr, two.dvar_y_sqr)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("dx", [1, 3])
def test_integer_weights_equal_repeated_rows(name, dx):
    rng = np.random.default_rng(3303)
    x = rng.normal(size=(25, dx))
    y = x[:, :1] + rng.normal(size=(25, 1))
    w = rng.integers(0, 4, 25)
    f = getattr(es, name)
    got, want = f(x, y, weights=w), f(np.repeat(x, w, axis=0), np.repeat(y, w, axis=0))
    if name == "distance_stats":
        got = (got.dcov_sqr, got.dvar_x_sqr, got.dvar_y_sqr, got.dcor_sqr)
        want = (want.dcov_sqr, want.dvar_x_sqr, want.dvar_y_sqr, want.dcor_sqr)
    assert got == pytest.approx(want, rel=1e-12)


def test_integer_weights_equal_repeated_rows_exactly():
    # 1-D integers, exponent 1, weights totalling 8: the masses are dyadic and every centred
    # value and product is exact on both sides
    x = np.array([0.0, 3.0, 1.0, 2.0, 5.0])
    y = np.array([1.0, 0.0, 4.0, 2.0, 2.0])
    w = np.array([2, 1, 0, 4, 1])
    got = es.distance_stats(x, y, weights=w)
    want = es.distance_stats(np.repeat(x, w), np.repeat(y, w))
    assert (got.dcov_sqr, got.dvar_x_sqr, got.dvar_y_sqr) == (want.dcov_sqr, want.dvar_x_sqr,
                                                              want.dvar_y_sqr)


def test_weighted_test_statistic_counts_the_total_weight():
    # the weights count as frequencies: R dcov.test's n·V² is (Σ w)·V²_w, the statistic of the
    # rows repeated; it was the row count times V²_w (here 4 · 0.796335 = 3.18534 for 5.57434)
    x, y, w = np.array([0.0, 1.0, 3.0, 4.0]), np.array([1.0, 0.0, 2.0, 2.0]), np.array([2, 1, 1, 3])
    res = es.distance_stats(x, y, weights=w)
    rep = es.distance_stats(np.repeat(x, w), np.repeat(y, w))
    assert rep.n_samples == 7 and rep.test_statistic == pytest.approx(5.574344023323614, rel=1e-12)
    assert res.test_statistic == pytest.approx(rep.test_statistic, rel=1e-12)
    assert res.weight_total == 7.0 and res.n_samples == 4  # rows, as without weights
    rng = np.random.default_rng(3306)
    x = rng.normal(size=(30, 2))
    y = x[:, :1] ** 2 + rng.normal(size=(30, 1))
    w = rng.integers(0, 6, 30)
    res = es.distance_stats(x, y, weights=w)
    rep = es.distance_stats(np.repeat(x, w, axis=0), np.repeat(y, w, axis=0))
    assert res.test_statistic == pytest.approx(rep.test_statistic, rel=1e-12)
    assert res.test_statistic == pytest.approx(w.sum() * ref_weighted_dcov(x, y, w)[0], rel=1e-12)
    # non-integer weights: Σ w, which a common factor of the weights scales (only there)
    w = rng.uniform(0.5, 2.0, 30)
    one, ten = es.distance_stats(x, y, weights=w), es.distance_stats(x, y, weights=10 * w)
    want = math.fsum(w) * ref_weighted_dcov(x, y, w)[0]
    assert one.test_statistic == pytest.approx(want, rel=1e-12)
    assert ten.test_statistic == pytest.approx(10 * one.test_statistic, rel=1e-12)
    assert ten.dcov_sqr == pytest.approx(one.dcov_sqr, rel=1e-12)
    assert es.distance_stats(x, y).weight_total is None


def test_weights_column_of_data():
    rng = np.random.default_rng(3304)
    df = pd.DataFrame({"a": rng.normal(size=10), "b": rng.normal(size=10), "w": rng.uniform(0.5, 2, 10)})
    res = es.distance_stats("a", "b", data=df, weights="w")
    cov, xx, yy = ref_weighted_dcov(df.a.to_numpy(), df.b.to_numpy(), df.w.to_numpy())
    assert res.dcov_sqr == pytest.approx(cov, rel=1e-12)
    assert res.weights == "w" and res.columns_x == ["a"] and res.columns_y == ["b"]
    assert es.distance_stats("a", "b", data=df).weights is None


def test_bad_weights():
    x, y = [1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0]
    with pytest.raises(ValueError, match=r"`weights` must be non-negative; got -2.0 at position 3"):
        es.distance_covariance(x, y, weights=[1, 1, 1, -2, 1])
    with pytest.raises(ValueError, match=r"`weights` must be finite; got nan at position 0"):
        es.distance_correlation(x, y, weights=[np.nan, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"`weights` must not all be 0"):
        es.distance_stats(x, y, weights=np.zeros(5))
    with pytest.raises(ValueError, match=r"one weight per row \(5\); got 4"):
        es.distance_covariance_sqr(x, y, weights=[1, 1, 1, 1])
    with pytest.raises(ValueError, match="estimator='U'.*not available with `weights`"):
        es.distance_covariance_sqr(x, y, weights=[1] * 5, estimator="U")
    with pytest.raises(ValueError, match="estimator='U'.*not available with `weights`"):
        es.distance_correlation_sqr(x, y, weights=[1] * 5, estimator="U")
    with pytest.raises(ValueError, match="method='sorted'.*not available with `weights`"):
        es.distance_stats(x, y, weights=[1] * 5, method="sorted")
    with pytest.raises(TypeError, match="needs `data=` to be a pandas DataFrame"):
        es.distance_stats(x, y, weights="w")
    df = pd.DataFrame({"a": x, "b": y, "w": [1.0] * 5})
    with pytest.raises(KeyError, match="column 'q' not found in `data`"):
        es.distance_stats("a", "b", data=df, weights="q")
    with pytest.raises(ValueError, match="column 'w' is the weights and cannot also be among the columns of `y`"):
        es.distance_stats("a", ["b", "w"], data=df, weights="w")
    with pytest.raises(ValueError, match="constant"):  # only the zero-weight row differs
        es.distance_correlation([1.0, 1.0, 1.0, 7.0], [1.0, 2.0, 3.0, 4.0], weights=[1, 1, 1, 0])


def test_weights_refused_on_dask():
    da = pytest.importorskip("dask.array")
    x, y = da.from_array(np.arange(6.0)), da.from_array(np.arange(5.0) + 1)
    with pytest.raises(TypeError, match="`weights` are not available with backend='dask'"):
        es.energy_distance(x, y, weights=np.ones(6))
    with pytest.raises(TypeError, match="`weights` are not available with backend='dask'"):
        es.dispersion(np.arange(6.0), [0, 0, 0, 1, 1, 1], weights=np.ones(6), backend="dask")
    with pytest.raises(TypeError, match="`weights` are not available with backend='dask'"):
        es.distance_stats(x, da.from_array(np.arange(6.0) ** 2), weights=np.ones(6))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("call_work", [None, 3e3])
def test_weighted_dcov_many_blocks_and_calls(dtype, call_work, monkeypatch):
    # several column blocks of the kernels (256) and, with a small CALL_WORK, many calls over
    # rows; against dense NumPy weighted double centring (scipy's cdist)
    from scipy.spatial.distance import cdist

    from energystats._core import _weights

    if call_work is not None:
        monkeypatch.setattr(_weights, "CALL_WORK", call_work)
    rng = np.random.default_rng(12)
    x = rng.normal(size=(650, 2)).astype(dtype)
    y = (np.abs(x[:, :1]) + rng.normal(size=(650, 1))).astype(dtype)
    w = rng.uniform(size=650)
    p = w / w.sum()

    def centred(D):
        r = D @ p
        return D - r[:, None] - r[None, :] + p @ r

    A = centred(cdist(x.astype(float), x.astype(float)))
    B = centred(cdist(y.astype(float), y.astype(float)))
    res = es.distance_stats(x, y, weights=w, n_threads=2)
    assert res.dcov_sqr == pytest.approx(p @ (A * B) @ p, rel=1e-10)
    assert res.dvar_x_sqr == pytest.approx(p @ (A * A) @ p, rel=1e-11)
    assert res.dvar_y_sqr == pytest.approx(p @ (B * B) @ p, rel=1e-11)
