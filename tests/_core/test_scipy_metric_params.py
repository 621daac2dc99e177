"""SciPy's names with a parameter (issue 43): 'seuclidean' (V), 'mahalanobis' (VI), 'minkowski' (p).

They are given as a pair, ``metric=(name, {param: value})``, resolved once by
``_core._metrics.resolve_metric`` and computed by ``scipy.spatial.distance.cdist(..., name,
**params)`` in tiles of rows (minkowski p = 1 and p = 2: the compiled 'cityblock' and 'energy'
kernels).  The statistics are checked here against plain NumPy formulas on SciPy's cdist
matrices; that every public entry point taking ``metric=`` accepts them is
``test_metric_names_everywhere.py``.  V and VI have no default (cdist would compute them from each
tile it is given): a bare name is an error that says so.
"""
import numpy as np
import pytest
from scipy.spatial.distance import cdist

import energystats as es
from energystats._core._metrics import SCIPY_NAMES, SCIPY_PARAMS, resolve_metric

RTOL = 1e-12
_L = np.array([[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.2, 0.7]])
V3 = np.array([0.5, 2.0, 1.5])
VI3 = _L @ _L.T                                      # symmetric positive definite
PAIRS = [("seuclidean", {"V": V3}), ("mahalanobis", {"VI": VI3}), ("minkowski", {"p": 1.5}),
         ("minkowski", {"p": 1.0}), ("minkowski", {"p": 2.0}), ("minkowski", {"p": 1.2})]
IDS = ["seuclidean", "mahalanobis", "minkowski-1.5", "minkowski-1", "minkowski-2", "minkowski-1.2"]


def _sample(n, seed, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * [1.0, 3.0, 0.5][:d] + 0.2


def _cd(A, B, pair):
    name, params = pair
    return cdist(np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64), name, **params)


def _energy_distance_ref(X, Y, pair):
    """The V-statistic 2 E|X − Y| − E|X − X'| − E|Y − Y'| from SciPy's matrices."""
    return 2 * _cd(X, Y, pair).mean() - _cd(X, X, pair).mean() - _cd(Y, Y, pair).mean()


def _centred(D):
    return D - D.mean(axis=0) - D.mean(axis=1)[:, None] + D.mean()


def _dcov_sqr_ref(X, Y, pair):
    """The squared distance covariance, V-statistic: mean of the double-centred products."""
    return float((_centred(_cd(X, X, pair)) * _centred(_cd(Y, Y, pair))).mean())


def _dcor_ref(X, Y, pair):
    A, B = _centred(_cd(X, X, pair)), _centred(_cd(Y, Y, pair))
    return float(np.sqrt((A * B).mean() / np.sqrt((A * A).mean() * (B * B).mean())))


class TestAgainstCdist:
    @pytest.mark.parametrize("pair", PAIRS, ids=IDS)
    def test_pairwise(self, pair):
        X, Y = _sample(20, 0), _sample(7, 1)
        np.testing.assert_allclose(es.pairwise(X, Y, metric=pair), _cd(X, Y, pair), rtol=RTOL, atol=0)
        np.testing.assert_allclose(es.pairwise(X, metric=pair), _cd(X, X, pair), rtol=RTOL, atol=1e-15)

    @pytest.mark.parametrize("pair", PAIRS, ids=IDS)
    def test_energy_distance(self, pair):
        X, Y = _sample(25, 2), _sample(18, 3) + [0.5, 0.0, 0.0]
        got = es.energy_distance(X, Y, metric=pair)
        assert got == pytest.approx(_energy_distance_ref(X, Y, pair), rel=RTOL)

    @pytest.mark.parametrize("pair", PAIRS, ids=IDS)
    def test_distance_covariance_and_correlation(self, pair):
        X = _sample(30, 4)
        Y = X ** 2 + 0.3 * _sample(30, 5)
        assert es.distance_covariance_sqr(X, Y, metric=pair) == pytest.approx(
            _dcov_sqr_ref(X, Y, pair), rel=RTOL)
        assert es.distance_correlation(X, Y, metric=pair) == pytest.approx(
            _dcor_ref(X, Y, pair), rel=RTOL)

    @pytest.mark.parametrize("pair", PAIRS[:3], ids=IDS[:3])
    def test_energy_test_statistic(self, pair):
        X, Y = _sample(15, 6), _sample(12, 7)
        res = es.energy_test(X, Y, metric=pair, n_resamples=19, rng=0)
        n, m = len(X), len(Y)
        assert res.statistic == pytest.approx(n * m / (n + m) * _energy_distance_ref(X, Y, pair),
                                              rel=RTOL)

    @pytest.mark.parametrize("pair", PAIRS, ids=IDS)
    def test_float32_input(self, pair):
        X, Y = _sample(20, 8).astype(np.float32), _sample(15, 9).astype(np.float32)
        # the float32 values, exactly as float64: cdist's numbers on them
        assert es.energy_distance(X, Y, metric=pair) == pytest.approx(
            _energy_distance_ref(X, Y, pair), rel=1e-10)
        D = es.pairwise(X, Y, metric=pair)
        assert D.dtype == np.float64
        np.testing.assert_allclose(D, _cd(X, Y, pair), rtol=1e-6)

    @pytest.mark.parametrize("pair", PAIRS[:3], ids=IDS[:3])
    def test_dataframe_input(self, pair):
        pd = pytest.importorskip("pandas")
        X, Y = _sample(20, 10), _sample(20, 11)
        fx = pd.DataFrame(X, columns=["a", "b", "c"])
        # the same columns in another order: lined up by name before V, VI apply by position
        fy = pd.DataFrame(Y, columns=["a", "b", "c"])[["c", "a", "b"]]
        assert es.energy_distance(fx, fy, metric=pair) == es.energy_distance(X, Y, metric=pair)
        fy = pd.DataFrame(Y, columns=["u", "v", "w"])
        assert es.distance_covariance_sqr(fx, fy, metric=pair) == pytest.approx(
            _dcov_sqr_ref(X, Y, pair), rel=RTOL)

    def test_tiles_use_the_given_parameter_not_the_tiles_own(self, monkeypatch):
        # tiles of 3 rows: each pair's value is cdist's with the given V, whatever the tile
        from energystats._core import _engine

        X = _sample(10, 12)
        full = es.pairwise(X, metric=("seuclidean", {"V": V3}))
        monkeypatch.setattr(_engine, "SCIPY_TILE_VALUES", 30)   # tiles of 3 rows
        np.testing.assert_array_equal(es.pairwise(X, metric=("seuclidean", {"V": V3})), full)
        np.testing.assert_allclose(full, cdist(X, X, "seuclidean", V=V3), rtol=RTOL, atol=1e-15)

    def test_p_1_and_2_are_cityblock_and_euclidean_bit_for_bit(self):
        X, Y = _sample(20, 13), _sample(15, 14)
        assert es.energy_distance(X, Y, metric=("minkowski", {"p": 1})) == \
            es.energy_distance(X, Y, metric="cityblock")
        assert es.energy_distance(X, Y, metric=("minkowski", {"p": 2})) == es.energy_distance(X, Y)

    def test_a_linear_map_then_euclidean(self):
        # the negative-type argument: seuclidean is 'energy' on X / sqrt(V), mahalanobis on X L
        X, Y = _sample(20, 15), _sample(15, 16)
        L = np.linalg.cholesky(VI3)                  # L Lᵀ = VI: (x − y)ᵀ VI (x − y) = ‖Lᵀ(x − y)‖²
        assert es.energy_distance(X, Y, metric=("seuclidean", {"V": V3})) == pytest.approx(
            es.energy_distance(X / np.sqrt(V3), Y / np.sqrt(V3)), rel=1e-12)
        assert es.energy_distance(X, Y, metric=("mahalanobis", {"VI": VI3})) == pytest.approx(
            es.energy_distance(X @ L, Y @ L), rel=1e-12)

    def test_reference_of_the_resolved_metric(self):
        x, y = _sample(2, 17)
        for pair in PAIRS:
            got = resolve_metric(pair).reference(x, y)
            assert got == pytest.approx(_cd(x[None], y[None], pair)[0, 0], rel=1e-14)


class TestNegativeType:
    @pytest.mark.parametrize("pair", PAIRS, ids=IDS)
    def test_accepted_on_random_samples(self, pair):
        for seed in range(5):
            assert es.is_negative_type(es.pairwise(_sample(40, seed), metric=pair)), seed

    def test_minkowski_above_2_refused_with_three_features_accepted_with_two(self):
        X = np.random.default_rng(0).normal(size=(40, 3))
        D = es.pairwise(X, metric=("minkowski", {"p": 4}), check_negative_type=False)
        np.testing.assert_allclose(D, cdist(X, X, "minkowski", p=4), rtol=RTOL)
        assert not es.is_negative_type(D)             # the reason it is refused
        with pytest.raises(ValueError, match=r"metric='minkowski' with p=4.0 and 3 features is "
                                             r"refused: .*1 ≤ p ≤ 2.*Bretagnolle.*not for 3 or "
                                             r"more \(Koldobsky 1991\).*check_negative_type=False"):
            es.pairwise(X, metric=("minkowski", {"p": 4}))
        with pytest.raises(ValueError, match=r"metric='minkowski' with p=3.0 and 3 features"):
            es.energy_distance(X[:20], X[20:], metric=("minkowski", {"p": 3}))
        # two features: every two-dimensional normed space is of negative type
        X2 = X[:, :2]
        D2 = es.pairwise(X2, metric=("minkowski", {"p": 4}))
        np.testing.assert_allclose(D2, cdist(X2, X2, "minkowski", p=4), rtol=RTOL)
        assert es.is_negative_type(D2)

    def test_minkowski_check_negative_type_false_equals_cdist(self):
        X, Y = _sample(20, 18), _sample(15, 19)
        pair = ("minkowski", {"p": 3.5})
        got = es.energy_distance(X, Y, metric=pair, check_negative_type=False)
        assert got == pytest.approx(_energy_distance_ref(X, Y, pair), rel=RTOL)


class TestValidation:
    # -- input validation --

    def test_bare_name_asks_for_the_parameter(self):
        X = _sample(10, 0)
        for name, pname in (("seuclidean", "V"), ("mahalanobis", "VI"), ("minkowski", "p")):
            with pytest.raises(ValueError, match=rf"metric='{name}' needs its parameter {pname} "
                                                 rf".*pass metric=\('{name}', \{{'{pname}': "
                                                 rf"\.\.\.\}}\).*no default here"):
                es.energy_distance(X, X + 1, metric=name)

    @pytest.mark.parametrize("V, err, match", [
        (np.ones((3, 1)), ValueError, r"`V` of metric='seuclidean' must be a non-empty 1-D array; "
                                      r"got shape \(3, 1\)"),
        ([], ValueError, r"non-empty 1-D array; got shape \(0,\)"),
        ([1.0, 0.0, 2.0], ValueError, r"`V` of metric='seuclidean' must be > 0 everywhere .*; got "
                                      r"V\[1\] = 0.0"),
        ([1.0, -2.0, 2.0], ValueError, r"must be > 0 everywhere .*V\[1\] = -2.0"),
        ([1.0, np.inf, 2.0], ValueError, r"`V` of metric='seuclidean' must be finite"),
        (["1", "2", "3"], TypeError, r"`V` of metric='seuclidean' must hold real numbers"),
    ])
    def test_V(self, V, err, match):
        with pytest.raises(err, match=match):
            resolve_metric(("seuclidean", {"V": V}))

    def test_V_length_is_checked_against_the_data(self):
        with pytest.raises(ValueError, match=r"`V` of metric='seuclidean' has length 2, but the "
                                             r"data have 3 feature\(s\)"):
            es.energy_distance(_sample(10, 0), _sample(10, 1), metric=("seuclidean", {"V": [1, 2]}))

    @pytest.mark.parametrize("VI, match", [
        (np.ones(3), r"`VI` of metric='mahalanobis' must be a non-empty 2-D array; got shape \(3,\)"),
        (np.ones((3, 2)), r"must be a square n_features × n_features matrix; got shape \(3, 2\)"),
        (np.array([[2.0, 1.0], [0.0, 2.0]]), r"`VI` of metric='mahalanobis' must be symmetric"),
        (np.array([[1.0, 2.0], [2.0, 1.0]]), r"`VI` of metric='mahalanobis' must be positive "
                                             r"definite .*smallest eigenvalue is -1"),
        (np.zeros((2, 2)), r"must be positive definite"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), r"`VI` of metric='mahalanobis' must be finite"),
    ])
    def test_VI(self, VI, match):
        with pytest.raises(ValueError, match=match):
            resolve_metric(("mahalanobis", {"VI": VI}))

    def test_VI_from_np_linalg_inv_is_accepted(self):
        # an inverse computed in floating point is symmetric to rounding only
        X = _sample(50, 3)
        VI = np.linalg.inv(np.cov(X.T))
        D = es.pairwise(X, metric=("mahalanobis", {"VI": VI}))
        np.testing.assert_allclose(D, cdist(X, X, "mahalanobis", VI=VI), rtol=RTOL, atol=1e-15)

    def test_VI_size_is_checked_against_the_data(self):
        with pytest.raises(ValueError, match=r"`VI` of metric='mahalanobis' is 2×2, but the data "
                                             r"have 3 feature\(s\): VI must be 3×3"):
            es.distance_covariance(_sample(10, 0), _sample(10, 1),
                                   metric=("mahalanobis", {"VI": np.eye(2)}))

    @pytest.mark.parametrize("p, err, match", [
        (0.5, ValueError, r"`p` of metric='minkowski' must be ≥ 1: for p < 1 the triangle "
                          r"inequality fails .*; got p=0.5"),
        (0, ValueError, r"must be ≥ 1"),
        (np.inf, ValueError, r"`p` of metric='minkowski' must be finite \(p = ∞ is "
                             r"metric='chebyshev'\)"),
        ("1.5", TypeError, r"`p` of metric='minkowski' must be a real number in \[1, 2\]; got '1.5'"),
        (True, TypeError, r"must be a real number in \[1, 2\]; got True"),
        ([1.5], TypeError, r"must be a real number in \[1, 2\]"),
    ])
    def test_p(self, p, err, match):
        with pytest.raises(err, match=match):
            resolve_metric(("minkowski", {"p": p}))

    @pytest.mark.parametrize("metric, match", [
        (("cityblock", {"p": 1}), r"metric='cityblock' takes no parameter; got the parameters "
                                  r"\{'p': 1\}\. A \(name, params\) pair is for 'mahalanobis', "
                                  r"'minkowski', 'seuclidean' only"),
        (("euclidean", {}), r"metric='euclidean' takes no parameter"),
        (("cosine", {"p": 1}), r"metric='cosine' takes no parameter"),
        (("energy", {"exponent": 1.5}), r"`metric` as a \(name, params\) pair is for "
                                        r"'mahalanobis', 'minkowski', 'seuclidean' only"),
        (("minkowski", {"p": 1.5, "w": [1, 2, 3]}), r"metric='minkowski' takes the parameter p "
                                                    r"only; got 'w' as well"),
        (("seuclidean", {"VI": VI3}), r"metric='seuclidean' needs its parameter V"),
    ])
    def test_parameters_a_metric_does_not_use_are_refused(self, metric, match):
        with pytest.raises(ValueError, match=match):
            resolve_metric(metric)

    @pytest.mark.parametrize("metric", [("minkowski",), ("minkowski", {"p": 1.5}, 1),
                                        ("minkowski", 1.5), (1.5, {"p": 1.5})])
    def test_malformed_pair(self, metric):
        with pytest.raises(TypeError, match=r"`metric` as a pair must be \(name, params\), .*e\.g\. "
                                            r"\('minkowski', \{'p': 1\.5\}\); got"):
            resolve_metric(metric)

    @pytest.mark.parametrize("kw", [{"exponent": 1.5}, {"sigma": 2.0}])
    def test_exponent_and_sigma_refused_with_a_pair(self, kw):
        with pytest.raises(ValueError, match=r"applies to metric='(energy|gaussian).* only; got "
                                             r".*with metric='minkowski'"):
            resolve_metric(("minkowski", {"p": 1.5}), **kw)

    def test_the_list_of_accepted_names_has_the_new_ones(self):
        with pytest.raises(ValueError) as err:
            es.energy_distance(_sample(5, 0), _sample(5, 1), metric="minkowsky")
        msg = str(err.value)
        for name in ("seuclidean", "mahalanobis", "minkowski", "cityblock", "canberra"):
            assert repr(name) in msg, msg
        assert "('minkowski', {'p': 1.5})" in msg and "got 'minkowsky'" in msg, msg

    def test_tables_agree(self):
        assert set(SCIPY_PARAMS) <= set(SCIPY_NAMES)
        assert {SCIPY_PARAMS[k][0] for k in SCIPY_PARAMS} == {"V", "VI", "p"}

    def test_dask_backend_refuses_naming_the_metric(self):
        pytest.importorskip("dask.array")
        X = _sample(10, 0)
        with pytest.raises((ValueError, TypeError), match=r"backend='dask'.*got metric='seuclidean'"):
            es.energy_distance(X, X + 1, metric=("seuclidean", {"V": V3}), backend="dask")
