"""metric='precomputed' with a condensed distance vector (scipy's pdist order, which is R's dist
order): every entry point that takes the n×n matrix takes the vector, with the same results bit
for bit; a vector of the wrong length, non-finite or negative values, or one whose square matrix
does not fit in memory is a named error."""
import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core._validation import as_square_matrix

N = 12
RNG = np.random.default_rng(20261126)
X, Y, Z = RNG.normal(size=(N, 2)), RNG.normal(size=(N, 2)), RNG.normal(size=(N, 1))
LAB = np.repeat([0, 1, 2], N // 3)


def _square(A):
    """|a_i - a_j| by plain loops (the reference matrix)."""
    n = len(A)
    return np.array([[float(np.sqrt(np.sum((A[i] - A[j]) ** 2))) for j in range(n)]
                     for i in range(n)])


def _condensed(D):
    """Row order of the upper triangle, by plain loops: (0,1), (0,2), ..., (1,2), ..."""
    n = len(D)
    return np.array([D[i, j] for i in range(n) for j in range(i + 1, n)])


DX, DY, DZ = _square(X), _square(Y), _square(Z)


def test_r_dist_order_is_pdist_order():
    # R 4.2: Rscript -e 'x <- c(0, 1, 3, 7); print(as.vector(dist(x)))'  ->  1 3 7 2 6 4
    r_vector = [1.0, 3.0, 7.0, 2.0, 6.0, 4.0]
    x = np.array([0.0, 1.0, 3.0, 7.0])
    np.testing.assert_array_equal(as_square_matrix(r_vector), np.abs(x[:, None] - x[None, :]))
    scipy_distance = pytest.importorskip("scipy.spatial.distance")
    np.testing.assert_array_equal(scipy_distance.pdist(x[:, None]), r_vector)
    np.testing.assert_array_equal(as_square_matrix(scipy_distance.pdist(X)),
                                  scipy_distance.squareform(scipy_distance.pdist(X)))


def _fields(res):
    """The result as comparable values (dataclass fields, arrays, scalars)."""
    if hasattr(res, "__dataclass_fields__"):
        return {k: _fields(getattr(res, k)) for k in res.__dataclass_fields__}
    if hasattr(res, "labels_"):
        return {"labels_": res.labels_, "W_": res.W_}
    return res


def assert_pandas_equal(a, b):
    (pd.testing.assert_frame_equal if isinstance(a, pd.DataFrame) else pd.testing.assert_series_equal)(
        a, b, check_exact=True)


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for p, q in zip(a, b):
            _same(_fields(p), _fields(q))
    elif isinstance(a, (pd.DataFrame, pd.Series)):
        assert_pandas_equal(a, b)
    elif isinstance(a, np.ndarray) or isinstance(a, float):
        np.testing.assert_array_equal(a, b)  # NaN equals NaN here; nothing else is rounded
    else:
        assert a == b


def _pair(square):
    return {True: (DX, DY, DZ), False: (_condensed(DX), _condensed(DY), _condensed(DZ))}[square]


CASES = {
    "energy_test": lambda x, y, z: es.energy_test(x, labels=LAB, metric="precomputed",
                                                  n_resamples=39, rng=3),
    "disco": lambda x, y, z: es.disco(x, labels=LAB, metric="precomputed", n_resamples=39, rng=3),
    "dispersion": lambda x, y, z: es.dispersion(x, LAB, metric="precomputed"),
    "distance_covariance": lambda x, y, z: es.distance_covariance(x, y, metric="precomputed"),
    "distance_correlation_sqr": lambda x, y, z: es.distance_correlation_sqr(
        x, y, metric="precomputed", estimator="U"),
    "independence_test": lambda x, y, z: es.independence_test(x, y, metric="precomputed",
                                                              n_resamples=39, rng=3),
    "partial_distance_correlation": lambda x, y, z: es.partial_distance_correlation(
        x, y, z, metric="precomputed"),
    "energy_clustering": lambda x, y, z: es.energy_clustering(x, 2, metric="precomputed", rng=3),
    "EnergyClustering": lambda x, y, z: es.EnergyClustering(2, metric="precomputed",
                                                            random_state=3).fit(x),
    "energy_linkage": lambda x, y, z: es.energy_linkage(x, metric="precomputed"),
    "gram_matrix": lambda x, y, z: es.gram_matrix(x, metric="precomputed"),
    "is_negative_type": lambda x, y, z: es.is_negative_type(x),
    "d_center": lambda x, y, z: es.d_center(x),
    "u_center": lambda x, y, z: es.u_center(x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_condensed_equals_square(name):
    call = CASES[name]
    _same(_fields(call(*_pair(True))), _fields(call(*_pair(False))))


def test_condensed_series_and_list():
    v = _condensed(DX)
    expect = es.dispersion(DX, LAB, metric="precomputed")
    _same(_fields(es.dispersion(pd.Series(v), LAB, metric="precomputed")), _fields(expect))
    _same(_fields(es.dispersion(list(v), LAB, metric="precomputed")), _fields(expect))


@pytest.mark.parametrize("length, lo, hi", [(65, 55, 66), (2, 1, 3), (67, 66, 78)])
def test_wrong_length_names_length_and_nearest_n(length, lo, hi):
    v = np.ones(length)
    with pytest.raises(ValueError, match=rf"`X` .*condensed.*got length {length}, between {lo} "
                                         rf"\(n=\d+\) and {hi} \(n=\d+\)"):
        es.energy_test(v, labels=LAB, metric="precomputed", n_resamples=9)
    with pytest.raises(ValueError, match=rf"`x` .*got length {length}"):
        es.distance_covariance(v, v, metric="precomputed")


def test_non_finite_and_negative_refused():
    v = _condensed(DX)
    bad = v.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match="`X`.*(NaN|finite|missing)"):
        es.energy_clustering(bad, 2, metric="precomputed")
    bad = v.copy()
    bad[7] = -0.5
    with pytest.raises(ValueError, match=r"`X` must be non-negative.*-0\.5 at position 7"):
        es.dispersion(bad, LAB, metric="precomputed")


def test_expansion_checked_against_memory(monkeypatch):
    v = _condensed(DX)
    monkeypatch.setenv("ENERGYSTATS_AVAILABLE_MEMORY", "512")
    with pytest.raises(MemoryError, match=r"12×12 matrix expanded from the condensed vector `X` "
                                          r"\(length 66\) needs about 1\.1 KiB, but only 512 bytes "
                                          r"is available .*pass the data themselves"):
        es.energy_test(v, labels=LAB, metric="precomputed", n_resamples=9)
