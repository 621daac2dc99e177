"""SciPy's metric names: accepted where the metric is of negative type (checked here with
is_negative_type on random samples), refused with the reason otherwise unless
check_negative_type=False; the values against plain loops and SciPy; a representative entry point
of each concept (homogeneity, dependence, clustering) against the same call on the precomputed
matrix."""
import numpy as np
import pytest

import energystats as es

ACCEPTED = ["euclidean", "sqeuclidean", "cityblock", "hamming", "canberra"]
RNG = np.random.default_rng(34)


def _samples(d, seed):
    """A mix of continuous, heavy-tailed, signed and repeated (categorical) columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, d))
    X[:, ::2] = rng.integers(-2, 3, size=(40, X[:, ::2].shape[1]))
    X[::3, -1] = rng.standard_cauchy(size=X[::3, -1].shape)
    return X


def _ref(name, x, y):
    """rho by its definition, plain Python (SciPy's definitions, 0/0 = 0 for canberra)."""
    x, y = [float(v) for v in x], [float(v) for v in y]
    if name == "euclidean":
        return sum((a - b) ** 2 for a, b in zip(x, y)) ** 0.5
    if name == "sqeuclidean":
        return sum((a - b) ** 2 for a, b in zip(x, y))
    if name == "cityblock":
        return sum(abs(a - b) for a, b in zip(x, y))
    if name == "hamming":
        return sum(a != b for a, b in zip(x, y)) / len(x)
    if name == "canberra":
        return sum(abs(a - b) / (abs(a) + abs(b)) for a, b in zip(x, y) if abs(a) + abs(b) > 0)
    if name == "chebyshev":
        return max(abs(a - b) for a, b in zip(x, y))
    raise AssertionError(name)


@pytest.mark.parametrize("name", ACCEPTED + ["chebyshev"])
def test_values_match_the_definition(name):
    X = _samples(2, 1)[:15]
    D = es.pairwise(X, metric=name)
    expect = np.array([[_ref(name, a, b) for b in X] for a in X])
    np.testing.assert_allclose(D, expect, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", ACCEPTED + ["chebyshev"])
def test_values_match_scipy(name):
    distance = pytest.importorskip("scipy.spatial.distance")
    X = _samples(2, 2)
    np.testing.assert_allclose(es.pairwise(X, metric=name), distance.cdist(X, X, name),
                               rtol=1e-14, atol=0)


def test_euclidean_and_sqeuclidean_are_the_energy_metric_bit_for_bit():
    X = _samples(3, 3)
    lab = np.repeat([0, 1], 20)
    for name, exponent in (("euclidean", 1.0), ("sqeuclidean", 2.0)):
        a = es.energy_test(X, labels=lab, metric=name, n_resamples=49, rng=5)
        b = es.energy_test(X, labels=lab, exponent=exponent, n_resamples=49, rng=5)
        assert a.statistic == b.statistic
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        assert es.distance_covariance(X[:, :1], X[:, 1:], metric=name) == \
            es.distance_covariance(X[:, :1], X[:, 1:], exponent=exponent)


@pytest.mark.parametrize("name", ACCEPTED)
@pytest.mark.parametrize("d", [1, 2, 5])
def test_accepted_names_are_of_negative_type_on_random_samples(name, d):
    for seed in range(5):
        assert es.is_negative_type(es.pairwise(_samples(d, seed), metric=name)), (name, d, seed)


def test_chebyshev_negative_type_in_two_features_not_in_three():
    for seed in range(5):
        assert es.is_negative_type(es.pairwise(_samples(2, seed), metric="chebyshev"))
        assert es.is_negative_type(es.pairwise(_samples(1, seed), metric="chebyshev"))
    X = np.random.default_rng(0).normal(size=(40, 3))
    D = es.pairwise(X, metric="chebyshev", check_negative_type=False)
    assert not es.is_negative_type(D)          # the reason it is refused
    with pytest.raises(ValueError, match=r"metric='chebyshev' with 3 features is refused: .*not of "
                                         r"negative type for 3 or more \(Misiewicz 1989\).*"
                                         r"check_negative_type=False"):
        es.pairwise(X, metric="chebyshev")
    with pytest.raises(ValueError, match="metric='chebyshev' with 3 features is refused"):
        es.energy_test(X[:20], X[20:], metric="chebyshev", n_resamples=9)


def test_cosine_refused_with_its_reason():
    X = np.random.default_rng(1).normal(size=(30, 3))
    with pytest.raises(ValueError, match=r"metric='cosine' is refused: .*squared Euclidean "
                                         r"distance between directions.*check_negative_type=False"):
        es.energy_test(X[:15], X[15:], metric="cosine", n_resamples=9)
    with pytest.raises(ValueError, match=r"metric='correlation' is refused"):
        es.distance_correlation(X[:, :1], X[:, 1:], metric="correlation")
    with pytest.raises(ValueError, match=r"metric='braycurtis' is refused: .*not of negative type"):
        es.energy_clustering(X, 2, metric="braycurtis")
    # what the reason says: of negative type as a squared Euclidean distance between directions
    D = es.pairwise(X, metric="cosine", check_negative_type=False)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    np.testing.assert_allclose(D, 0.5 * es.pairwise(U, exponent=2), rtol=1e-12, atol=1e-15)
    assert es.is_negative_type(D)
    assert not es.is_negative_type(es.pairwise(X, metric="braycurtis", check_negative_type=False))
    # ... and usable through metric='precomputed'
    res = es.energy_test(D, labels=np.repeat([0, 1], 15), metric="precomputed", n_resamples=9, rng=1)
    assert np.isfinite(res.statistic)


def test_bad_names_and_arguments():
    with pytest.raises(ValueError, match=r"`metric` must be one of .*'canberra'.*'cityblock'.*; "
                                         r"got 'minkowskii'"):
        es.pairwise([[1.0]], metric="minkowskii")
    with pytest.raises(ValueError, match=r"`exponent` applies to metric='energy' only; got "
                                         r"exponent=0.5 with metric='cityblock'"):
        es.pairwise([[1.0]], metric="cityblock", exponent=0.5)
    with pytest.raises(ValueError, match=r"metric='euclidean' fixes the exponent \(1\); got exponent=2"):
        es.pairwise([[1.0]], metric="euclidean", exponent=2)
    with pytest.raises(TypeError, match=r"`check_negative_type` must be True or False; got 'no'"):
        es.pairwise([[1.0]], metric="cosine", check_negative_type="no")
    with pytest.raises(ValueError, match=r"metric='cosine' gave a non-finite value"):
        es.pairwise([[0.0, 0.0], [1.0, 2.0]], metric="cosine", check_negative_type=False)


def test_cityblock_energy_distance_is_the_sum_over_coordinates():
    # E with rho = sum_t |x_t - y_t| is the sum of the coordinates' one-dimensional E: the
    # statistics compare marginal distributions only (documented)
    X, Y = RNG.normal(size=(30, 3)), RNG.normal(size=(25, 3)) * [1.0, 2.0, 0.5]
    total = sum(es.energy_distance(X[:, t], Y[:, t]) for t in range(3))
    assert es.energy_distance(X, Y, metric="cityblock") == pytest.approx(total, rel=1e-13)
    # a joint difference with equal marginals: energy sees it, cityblock cannot
    Z = RNG.choice([-1.0, 1.0], size=(400, 1))
    A = np.hstack([Z, Z])                     # x1 = x2
    B = np.hstack([Z, RNG.permutation(Z)])    # the same marginals, independent coordinates
    assert es.energy_distance(A, B, metric="cityblock") == pytest.approx(0.0, abs=0.02)
    assert es.energy_distance(A, B) > 0.2


def _precomputed(name, X):
    distance = pytest.importorskip("scipy.spatial.distance")
    return distance.cdist(X, X, name)


@pytest.mark.parametrize("name", ["cityblock", "hamming", "canberra"])
def test_entry_points_equal_the_precomputed_matrix(name):
    X = _samples(3, 7)
    Y = _samples(2, 8)
    lab = np.repeat([0, 1, 2], [12, 13, 15])
    DX, DY = _precomputed(name, X), _precomputed(name, Y)
    # homogeneity
    a = es.energy_test(X, labels=lab, metric=name, n_resamples=49, rng=3)
    b = es.energy_test(DX, labels=lab, metric="precomputed", n_resamples=49, rng=3)
    assert a.statistic == pytest.approx(b.statistic, rel=1e-12)
    assert a.pvalue == b.pvalue
    a = es.disco(X, labels=lab, metric=name, n_resamples=19, rng=3)
    b = es.disco(DX, labels=lab, metric="precomputed", n_resamples=19, rng=3)
    assert a.statistic == pytest.approx(b.statistic, rel=1e-12)
    # dependence
    a = es.independence_test(X, Y, metric=name, n_resamples=49, rng=3)
    b = es.independence_test(DX, DY, metric="precomputed", n_resamples=49, rng=3)
    assert a.statistic == pytest.approx(b.statistic, rel=1e-12)
    assert a.pvalue == b.pvalue
    assert es.distance_correlation(X, Y, metric=name) == pytest.approx(
        es.distance_correlation(DX, DY, metric="precomputed"), rel=1e-12)
    # clustering
    a = es.energy_clustering(X, 2, metric=name, rng=3)
    b = es.energy_clustering(DX, 2, metric="precomputed", rng=3)
    np.testing.assert_array_equal(a.labels, b.labels)
    Za = es.energy_linkage(X, metric=name)
    Zb = es.energy_linkage(DX, metric="precomputed")
    np.testing.assert_allclose(Za, Zb, rtol=1e-12)
