"""The affinely invariant distance correlation (``affine=True``): against a plain-NumPy
reference and dcor, invariant under affine maps, at any magnitude, and its refusals."""
import numpy as np
import pandas as pd
import pytest

import energystats as es


def _ref_whiten(X):
    # the definition, written out: S^{-1/2}(x - mean), S with divisor n - 1, by the SVD of S
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    Xc = X - X.mean(axis=0)
    S = Xc.T @ Xc / (len(X) - 1)
    U, s, _ = np.linalg.svd(S)
    return Xc @ (U * s ** -0.5) @ U.T


def _ref_dcor(X, Y):
    # V-statistic distance correlation by double loops
    n = len(X)
    a = np.array([[np.linalg.norm(X[i] - X[j]) for j in range(n)] for i in range(n)])
    b = np.array([[np.linalg.norm(Y[i] - Y[j]) for j in range(n)] for i in range(n)])
    A = a - a.mean(axis=0) - a.mean(axis=1)[:, None] + a.mean()
    B = b - b.mean(axis=0) - b.mean(axis=1)[:, None] + b.mean()
    return np.sqrt((A * B).mean() / np.sqrt((A * A).mean() * (B * B).mean()))


def _data(n=40, p=3, q=2, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, p)) @ rng.normal(size=(p, p))
    y = np.column_stack([x[:, 0] ** 2, x[:, -1]])[:, :q] + rng.normal(size=(n, q))
    return x, y


def test_equals_the_plain_reference():
    x, y = _data()
    got = es.distance_correlation(x, y, affine=True)
    assert got == pytest.approx(_ref_dcor(_ref_whiten(x), _ref_whiten(y)), rel=1e-12)
    assert abs(got - es.distance_correlation(x, y)) > 1e-3   # not the plain dCor


def test_equals_dcor():
    dcor = pytest.importorskip("dcor")
    for seed in range(3):
        x, y = _data(seed=seed)
        assert es.distance_correlation(x, y, affine=True) == pytest.approx(
            float(dcor.distance_correlation_af_inv(x, y)), rel=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_invariant_under_affine_maps(seed):
    x, y = _data(seed=seed)
    rng = np.random.default_rng(100 + seed)
    A, C = rng.normal(size=(3, 3)), rng.normal(size=(2, 2))
    b, d = rng.normal(size=3) * 10, rng.normal(size=2) * 10
    before = es.distance_correlation(x, y, affine=True)
    after = es.distance_correlation(x @ A + b, y @ C + d, affine=True)
    assert after == pytest.approx(before, rel=1e-12)


@pytest.mark.parametrize("scale", [2.0 ** 900, 2.0 ** -900, 1e300, 1e-300])
def test_any_magnitude(scale):
    x, y = _data()
    assert es.distance_correlation(x * scale, y, affine=True) == pytest.approx(
        es.distance_correlation(x, y, affine=True), rel=1e-12)


def test_one_dimension_is_the_plain_dcor():
    x, y = _data(p=1, q=1)
    assert es.distance_correlation(x, y, affine=True) == pytest.approx(
        es.distance_correlation(x, y), rel=1e-12)


def test_refusals():
    x, y = _data()
    singular = np.column_stack([x[:, 0], x[:, 1], x[:, 0] + x[:, 1]])
    with pytest.raises(ValueError, match="`x` has a singular sample covariance"):
        es.distance_correlation(singular, y, affine=True)
    with pytest.raises(ValueError, match="`y`: .* more rows than columns; got 3 rows and 3"):
        es.distance_correlation(x[:3, :1], np.column_stack([y, x[:, 2]])[:3], affine=True)
    with pytest.raises(ValueError, match="metric='energy'"):
        es.distance_correlation(x, y, affine=True, metric="laplacian")
    with pytest.raises(TypeError, match="`weights`"):
        es.distance_correlation(x, y, affine=True, weights=np.ones(len(x)))


def test_the_test_permutes_the_whitened_samples():
    x, y = _data(n=30)
    res = es.independence_test(x, y, affine=True, n_resamples=99, rng=4)
    ref = es.independence_test(_ref_whiten(x), _ref_whiten(y), n_resamples=99, rng=4)
    assert res.pvalue == ref.pvalue
    np.testing.assert_allclose(res.null_distribution, ref.null_distribution, rtol=1e-10)
    # and the same p-value after affine maps of both samples
    rng = np.random.default_rng(9)
    moved = es.independence_test(x @ rng.normal(size=(3, 3)) + 3.0, y @ rng.normal(size=(2, 2)),
                                 affine=True, n_resamples=99, rng=4)
    assert moved.pvalue == res.pvalue


def test_dataframes_keep_their_column_names():
    x, y = _data()
    df = pd.DataFrame(np.column_stack([x, y]), columns=["a", "b", "c", "u", "v"],
                      index=np.arange(100, 140))
    res = es.independence_test(["a", "b", "c"], ["u", "v"], data=df, affine=True,
                               n_resamples=19, rng=0)
    assert res.columns_x == ["a", "b", "c"] and res.columns_y == ["u", "v"]
    assert es.distance_correlation(["a", "b", "c"], ["u", "v"], data=df, affine=True) == \
        pytest.approx(es.distance_correlation(x, y, affine=True), rel=1e-12)
