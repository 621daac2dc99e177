"""Sample weights of energy_distance (issue 33): against a double-loop reference, integer weights
against repeated rows, scipy's weighted 1-D energy distance on scipy's own test cases, bad input."""
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

import energystats as es

from ..reference import ref_weighted_energy, metric_kwargs

METRICS = [("energy", 1.0), ("energy", 0.5), ("gaussian", 0.8)]


@pytest.mark.parametrize("metric,param", METRICS)
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 2])
def test_weighted_energy_distance_against_double_loop(metric, param, d, dtype, threads):
    rng = np.random.default_rng(33)
    a = rng.normal(size=(23, d)).astype(dtype)
    b = rng.normal(loc=0.4, size=(17, d)).astype(dtype)
    wa, wb = rng.uniform(0.0, 3.0, 23), rng.uniform(0.1, 2.0, 17)
    wa[3] = 0.0
    got = es.energy_distance(a, b, weights=wa, weights_y=wb, n_threads=threads, **metric_kwargs(metric, param))
    want = ref_weighted_energy(a.astype(float), b.astype(float), wa, wb, metric, param)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_weighted_energy_distance_large_enough_for_two_threads_same_bits():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(700, 4)), rng.normal(size=(600, 4))
    wa, wb = rng.uniform(size=700), rng.uniform(size=600)
    one = es.energy_distance(a, b, weights=wa, weights_y=wb, n_threads=1)
    two = es.energy_distance(a, b, weights=wa, weights_y=wb, n_threads=2)
    assert one == two


@pytest.mark.parametrize("d", [1, 2])
def test_integer_weights_equal_repeated_rows_exactly(d):
    # small integer coordinates, exponent 2 in d-D (integer squared distances), exponent 1 in
    # 1-D, and weight totals that are powers of two: every sum on both sides is exact
    rng = np.random.default_rng(7)
    a = rng.integers(-5, 6, size=(6, d)).astype(float)
    b = rng.integers(-5, 6, size=(5, d)).astype(float)
    wa = np.array([1, 3, 0, 2, 1, 1])   # total 8
    wb = np.array([4, 1, 1, 1, 1])      # total 8
    exponent = 1.0 if d == 1 else 2.0
    got = es.energy_distance(a, b, weights=wa, weights_y=wb, exponent=exponent)
    want = es.energy_distance(np.repeat(a, wa, axis=0), np.repeat(b, wb, axis=0), exponent=exponent)
    assert got == want


@pytest.mark.parametrize("d", [1, 3])
def test_integer_weights_equal_repeated_rows(d):
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(30, d)), rng.normal(size=(20, d))
    wa, wb = rng.integers(0, 4, 30), rng.integers(1, 5, 20)
    got = es.energy_distance(a, b, weights=wa, weights_y=wb)
    want = es.energy_distance(np.repeat(a, wa, axis=0), np.repeat(b, wb, axis=0))
    assert got == pytest.approx(want, rel=1e-13)


def test_by_form_and_column_weights():
    rng = np.random.default_rng(9)
    df = pd.DataFrame({"u": rng.normal(size=12), "v": rng.normal(size=12),
                       "w": rng.uniform(0.5, 2.0, 12), "g": ["a", "b"] * 6})
    a, b = df[df.g == "a"], df[df.g == "b"]
    want = ref_weighted_energy(a[["u", "v"]].to_numpy(), b[["u", "v"]].to_numpy(), a.w, b.w)
    assert es.energy_distance(df, by="g", weights="w") == pytest.approx(want, rel=1e-12)
    assert es.energy_distance(df.drop(columns="w"), by="g", weights=df.w.to_numpy()) == \
        pytest.approx(want, rel=1e-12)
    got = es.energy_distance(a.drop(columns="g"), b.drop(columns="g"), weights="w", weights_y="w")
    assert got == pytest.approx(want, rel=1e-12)


# scipy's own cases: scipy/scipy, scipy/stats/tests/test_stats.py, class TestEnergyDistance
# (scipy 1.17.1, the installed copy, lines 8398-8442), quoted with their expected values.
# scipy.stats.energy_distance(u, v, u_weights, v_weights) = sqrt(E_w) (exponent 1).
SCIPY_CASES = [
    # test_simple
    (([0, 1], [0], [1, 1], [1]), np.sqrt(2) * .5),
    (([0, 1], [0], [3, 1], [1]), np.sqrt(2) * .25),
    (([0, 2], [0], [1, 1], [1]), 2 * .5),
    (([0, 1, 2], [1, 2, 3], None, None), np.sqrt(2) * (3 * (1. / 3**2))**.5),
    # test_same_distribution
    (([1, 2, 3], [2, 1, 3], None, None), 0.0),
    (([1, 1, 1, 4], [4, 1], [1, 1, 1, 1], [1, 3]), 0.0),
    # test_shift
    (([0], [1], None, None), np.sqrt(2)),
    (([-5], [5], None, None), np.sqrt(2) * 10**.5),
]


@pytest.mark.parametrize("args,expected", SCIPY_CASES)
def test_scipy_weighted_energy_distance_cases(args, expected):
    u, v, uw, vw = args
    got = math.sqrt(es.energy_distance(u, v, weights=uw, weights_y=vw) if uw is not None
                    else es.energy_distance(u, v))
    assert got == pytest.approx(expected, rel=1e-14, abs=1e-15)
    assert got == pytest.approx(scipy.stats.energy_distance(u, v, uw, vw), rel=1e-14, abs=1e-15)


def test_scipy_combine_weights_and_zero_weight():
    # test_combine_weights: a weight w equals w copies of the value
    full = es.energy_distance([0, 0, 1, 1, 1, 1, 5], [0, 3, 3, 3, 3, 4, 4],
                              weights=[1] * 7, weights_y=[1] * 7)
    comb = es.energy_distance([5, 0, 1], [0, 4, 3], weights=[1, 2, 4], weights_y=[1, 2, 4])
    assert comb == pytest.approx(full, rel=1e-14)
    assert math.sqrt(comb) == pytest.approx(scipy.stats.energy_distance(
        [5, 0, 1], [0, 4, 3], [1, 2, 4], [1, 2, 4]), rel=1e-14)
    # test_zero_weight: values with zero weight have no impact
    assert es.energy_distance([1, 2, 100000], [1, 1], weights=[1, 1, 0], weights_y=[1, 1]) == \
        pytest.approx(es.energy_distance([1, 2], [1, 1]), rel=1e-14)


def test_scipy_random_weighted_1d():
    rng = np.random.default_rng(10)
    u, v = rng.normal(size=50), rng.normal(0.5, 2.0, size=40)
    uw, vw = rng.uniform(size=50), rng.uniform(size=40)
    got = math.sqrt(es.energy_distance(u, v, weights=uw, weights_y=vw))
    assert got == pytest.approx(scipy.stats.energy_distance(u, v, uw, vw), rel=1e-12)


@pytest.mark.parametrize("w,err,match", [
    ([1, -1, 1], ValueError, r"`weights` must be non-negative; got -1.0 at position 1"),
    ([1, np.nan, 1], ValueError, r"`weights` must be finite; got nan at position 1"),
    ([1, np.inf, 1], ValueError, r"`weights` must be finite; got inf"),
    ([0, 0, 0], ValueError, r"`weights` must not all be 0"),
    ([1, 1], ValueError, r"`weights` must have one weight per row \(3\); got 2"),
    ([[1, 1, 1]], ValueError, r"`weights` must be 1-D"),
    ([1e308, 1e308, 1e308], ValueError, r"`weights` must have a finite sum; got weights up to 1e\+308"),
    ([True, False, True], TypeError, r"`weights` must be real numbers"),
    (["a", "b", "c"], TypeError, r"`weights` names a column|`weights` must be real numbers"),
])
def test_bad_weights(w, err, match):
    with pytest.raises(err, match=match):
        es.energy_distance([0.0, 1.0, 2.0], [3.0, 4.0], weights=w)


def test_bad_weights_y_and_options():
    with pytest.raises(ValueError, match=r"`weights_y` must be non-negative"):
        es.energy_distance([0.0, 1.0], [3.0, 4.0], weights_y=[1, -2])
    with pytest.raises(ValueError, match="estimator='U'.*not available with `weights`"):
        es.energy_distance([0.0, 1.0], [3.0, 4.0], weights=[1, 2], estimator="U")
    with pytest.raises(ValueError, match="method='sorted'.*not available with `weights`"):
        es.energy_distance([0.0, 1.0], [3.0, 4.0], weights=[1, 2], method="sorted")
    with pytest.raises(TypeError, match="names a column, which needs `x` to be a pandas DataFrame"):
        es.energy_distance([0.0, 1.0], [3.0, 4.0], weights="w")
    df = pd.DataFrame({"v": [0.0, 1.0, 2.0, 3.0], "w": [1.0, 1.0, 2.0, 2.0], "g": list("aabb")})
    with pytest.raises(KeyError, match="column 'q' not found in `x`"):
        es.energy_distance(df, by="g", weights="q")
    with pytest.raises(ValueError, match="column 'w' is the weights and cannot also be among `columns`"):
        es.energy_distance(df, by="g", weights="w", columns=["v", "w"])
    with pytest.raises(ValueError, match="group 'b' has only zero weights"):
        es.energy_distance(df, by="g", weights=[1.0, 1.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="`weights_y` is for the `x, y` form"):
        es.energy_distance(df, by="g", weights="w", weights_y=[1, 1])
    s = pd.Series([1.0, 2.0], index=[5, 6])
    with pytest.raises(ValueError, match="index differs from the data's"):
        es.energy_distance(pd.DataFrame({"v": [0.0, 1.0]}), pd.DataFrame({"v": [2.0, 3.0]}), weights=s)



@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("call_work", [None, 3e3])
def test_weighted_energy_distance_many_blocks_and_calls(dtype, call_work, monkeypatch):
    # several column blocks of the kernel (256) and, with a small CALL_WORK, many calls over
    # rows; against a dense NumPy formula (scipy's cdist, weighted means)
    from scipy.spatial.distance import cdist

    from energystats._core import _weights

    if call_work is not None:
        monkeypatch.setattr(_weights, "CALL_WORK", call_work)
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=(700, 3)).astype(dtype), rng.normal(0.2, size=(550, 3)).astype(dtype)
    wa, wb = rng.uniform(size=700), rng.uniform(size=550)
    u, v = wa / wa.sum(), wb / wb.sum()
    A, B = a.astype(float), b.astype(float)
    want = 2 * u @ cdist(A, B) @ v - u @ cdist(A, A) @ u - v @ cdist(B, B) @ v
    got = es.energy_distance(a, b, weights=wa, weights_y=wb, n_threads=2)
    assert got == pytest.approx(want, rel=1e-11)


@pytest.mark.parametrize("metric", ["cityblock", "canberra", "hamming"])
def test_weighted_statistics_with_scipy_metric_names(metric):
    # the SciPy-named metrics (issue 34) with weights (issue 33): the weighted sums once went to the
    # compiled kernel with a metric code it does not have (NaN, no error); reference: cdist and masses
    from scipy.spatial.distance import cdist

    rng = np.random.default_rng(34)
    a, b = rng.normal(size=(9, 3)), rng.normal(0.5, 1.0, size=(7, 3))
    if metric == "hamming":
        a, b = np.round(a), np.round(b)
    wa, wb = rng.uniform(0.1, 2.0, 9), rng.uniform(0.1, 2.0, 7)
    u, v = wa / wa.sum(), wb / wb.sum()
    want = 2 * u @ cdist(a, b, metric) @ v - u @ cdist(a, a, metric) @ u - v @ cdist(b, b, metric) @ v
    got = es.energy_distance(a, b, metric=metric, weights=wa, weights_y=wb)
    assert got == pytest.approx(want, rel=1e-12)
    # dCov² by weighted double centring, the same masses
    p = wa / wa.sum()
    y = rng.normal(size=(9, 2))

    def centred(D):
        r = D @ p
        return D - r[:, None] - r[None, :] + p @ r

    A, B = centred(cdist(a, a, metric)), centred(cdist(y, y, metric))
    want_dcov = float(np.sum(np.outer(p, p) * A * B))
    got_dcov = es.distance_covariance_sqr(a, y, metric=metric, weights=wa)
    assert got_dcov == pytest.approx(want_dcov, rel=1e-10, abs=1e-14)
