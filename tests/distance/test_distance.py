"""Tests of energystats.distance: pairwise, gram_matrix, energy_distance."""
import numpy as np
import pandas as pd
import pytest
import scipy.stats

import energystats as es
from energystats._core._metrics import METRICS

from ..reference import ref_energy, ref_matrix, metric_kwargs

METRIC_PARAMS = [("energy", 0.5), ("energy", 1.0), ("energy", 1.5), ("energy", 2.0),
                 ("laplacian", 0.7), ("laplacian", 2.0), ("gaussian", 0.7), ("gaussian", 2.0)]


def _layouts(X):
    """The same data as C-, F-ordered and strided (every other row of a bigger array)."""
    big = np.zeros((2 * X.shape[0], X.shape[1] + 1), dtype=X.dtype)
    big[::2, :-1] = X
    return {"C": np.ascontiguousarray(X), "F": np.asfortranarray(X), "strided": big[::2, :-1]}


@pytest.fixture
def data():
    rng = np.random.default_rng(1234)
    return rng.normal(size=(37, 3)), rng.normal(loc=0.3, size=(23, 3))


class TestPairwise:
    @pytest.mark.parametrize("metric,param", METRIC_PARAMS)
    @pytest.mark.parametrize("n_threads", [1, 2])
    def test_against_reference_float64(self, data, metric, param, n_threads):
        X, Y = data
        want = ref_matrix(X, Y, metric, param)
        for name, arr in _layouts(X).items():
            got = es.pairwise(arr, Y, n_threads=n_threads, **metric_kwargs(metric, param))
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13, err_msg=name)

    @pytest.mark.parametrize("metric,param", METRIC_PARAMS)
    def test_against_reference_float32(self, data, metric, param):
        X, Y = (a.astype(np.float32) for a in data)
        want = ref_matrix(X.astype(float), Y.astype(float), metric, param)
        for name, arr in _layouts(X).items():
            got = es.pairwise(arr, Y, **metric_kwargs(metric, param))
            assert got.dtype == np.float64
            # float32 input is read as double in the kernels and all arithmetic is double, so
            # against the reference on the same (float32) values the error is float64
            # rounding: measured max 9.6e-16 relative (laplacian) and 2.2e-16 absolute (the
            # reference's 2 − 2 exp(.) near 0, gaussian); about 10× margin on both.  Computing
            # in float32 would give ~1e-7.
            np.testing.assert_allclose(got, want, rtol=1e-14, atol=2e-15, err_msg=name)

    def test_registry_reference_agrees_with_test_reference(self, data):
        X, Y = data
        for name, info in METRICS.items():
            for param in (0.5, 1.0, 2.0):
                assert info.reference(X[0], Y[0], param) == pytest.approx(
                    ref_matrix(X[:1], Y[:1], name, param)[0, 0], rel=1e-12)

    def test_symmetric_default_and_zero_diagonal(self, data):
        X, _ = data
        D = es.pairwise(X)
        np.testing.assert_array_equal(D, D.T)
        np.testing.assert_array_equal(np.diag(D), 0.0)

    def test_close_points_keep_relative_accuracy(self):
        # |x|^2 + |y|^2 - 2xy would return 0 or garbage here; differences do not.
        X = np.array([[1e8, 1.0], [1e8 + 1e-6, 1.0]])
        exact = X[1, 0] - X[0, 0]  # exact in floating point (Sterbenz), about 1e-6
        assert es.pairwise(X)[0, 1] == pytest.approx(exact, rel=1e-12)
        # laplacian of nearby points: 2 - 2 exp(-r/2) ~ r, kept by expm1
        Y = np.array([[0.0], [1e-12]])
        assert es.pairwise(Y, metric="laplacian", sigma=0.5)[0, 1] == pytest.approx(2e-12, rel=1e-9)

    def test_callable_metric(self, data):
        X, Y = data
        cityblock = lambda a, b: float(np.abs(a - b).sum())  # noqa: E731
        np.testing.assert_allclose(es.pairwise(X, Y, metric=cityblock),
                                   np.abs(X[:, None, :] - Y[None, :, :]).sum(-1), rtol=1e-12)

    def test_dataframe_and_list_input(self, data):
        X, Y = data
        df = pd.DataFrame(X, columns=list("abc"))
        np.testing.assert_allclose(es.pairwise(df, Y.tolist()), ref_matrix(X, Y), rtol=1e-10)

    # -- input validation --
    @pytest.mark.parametrize("kw,match", [
        ({"exponent": 0.0}, "exponent"), ({"exponent": 2.5}, "exponent"), ({"exponent": -1}, "exponent"),
        ({"metric": "laplacian", "sigma": 0.0}, "sigma"), ({"metric": "gaussian", "sigma": -1}, "sigma"),
        ({"metric": "gaussian", "sigma": np.inf}, "sigma"), ({"metric": "cosine"}, "metric"),
    ])
    def test_bad_parameters(self, data, kw, match):
        with pytest.raises(ValueError, match=match):
            es.pairwise(data[0], **kw)

    def test_bad_data(self, data):
        X, Y = data
        with pytest.raises(ValueError, match="`X` contains NaN"):
            es.pairwise(np.where(X > 1.5, np.nan, X))
        with pytest.raises(ValueError, match="`Y` contains inf"):
            es.pairwise(X, np.where(Y > 1.5, np.inf, Y))
        with pytest.raises(ValueError, match="same number of features"):
            es.pairwise(X, Y[:, :2])
        with pytest.raises(ValueError, match="empty"):
            es.pairwise(np.empty((0, 3)))
        with pytest.raises(TypeError, match="non-numeric column"):
            es.pairwise(pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}))
        with pytest.raises(ValueError, match="n_threads"):
            es.pairwise(X, n_threads=0)


def test_matrix_scaled_piece_by_piece_as_scale_apply():
    """pairwise_values scales each piece of the matrix back to the data's units inside the
    kernel: the bits of Scale.apply on the whole working-unit matrix (multiplication by
    2**whole, or ldexp beyond |whole| = 1000; subnormal results included)."""
    from energystats._core import _engine
    from energystats._lib import _pairwise
    from energystats._core._metrics import resolve_metric

    rng = np.random.default_rng(1)
    seen = set()
    for scale in (1.0, 3.7e-200, 1e150, 2.1e150, 1e-310, 2.1e-310):
        for metric, e in (("energy", 1.0), ("energy", 0.5), ("energy", 1.5), ("laplacian", 1.0)):
            X = rng.normal(size=(203, 3)) * scale  # 203 rows: blocks of four rows and a rest
            met = resolve_metric(metric, e, 1.0 if metric == "energy" else 2.0)
            Xw, mw, sc = _engine.normalise(met, X)
            ref = np.empty((203, 203))
            _pairwise.pairwise_matrix(Xw, np.ascontiguousarray(Xw.T), ref, mw.code, mw.param, 1)
            with np.errstate(all="ignore"):
                ref = sc.apply(ref, inplace=True)
            got = _engine.pairwise_values(X, X, met, 2)
            assert np.array_equal(got, ref), (scale, metric, e)
            mult, whole = sc.factors()
            seen.add((mult != 1.0, abs(whole) > 1000))
    assert seen == {(False, False), (True, False), (False, True), (True, True)}  # every branch


class TestGramMatrix:
    @pytest.mark.parametrize("metric,param", METRIC_PARAMS)
    def test_generates_the_semimetric(self, data, metric, param):
        X, _ = data
        G = es.gram_matrix(X, **metric_kwargs(metric, param))
        D = ref_matrix(X, None, metric, param)
        d = np.diag(G)
        np.testing.assert_allclose(d[:, None] + d[None, :] - 2 * G, D, rtol=1e-9, atol=1e-9)
        # K(x, y) = (rho(x, 0) + rho(y, 0) - rho(x, y)) / 2 entrywise
        r0 = ref_matrix(X, np.zeros((1, X.shape[1])), metric, param)[:, 0]
        np.testing.assert_allclose(G, 0.5 * (r0[:, None] + r0[None, :] - D), rtol=1e-10, atol=1e-12)

    def test_positive_semidefinite_for_negative_type(self, data):
        X, _ = data
        for metric, param in METRIC_PARAMS:
            ev = np.linalg.eigvalsh(es.gram_matrix(X, **metric_kwargs(metric, param)))
            assert ev.min() > -1e-9 * ev.max()

    def test_x0_and_precomputed(self, data):
        X, _ = data
        G0 = es.gram_matrix(X, x0=X[3])
        Gp = es.gram_matrix(es.pairwise(X), metric="precomputed", x0=3)
        np.testing.assert_allclose(G0, Gp, atol=1e-12)
        with pytest.raises(ValueError, match="x0"):
            es.gram_matrix(X, x0=[1.0, 2.0])
        with pytest.raises(ValueError, match="square"):
            es.gram_matrix(X, metric="precomputed")
        D = es.pairwise(X)
        D[0, 1] += 1.0
        with pytest.raises(ValueError, match="symmetric"):
            es.gram_matrix(D, metric="precomputed")


class TestEnergyDistance:
    @pytest.mark.parametrize("metric,param", METRIC_PARAMS)
    @pytest.mark.parametrize("n_threads", [1, 2])
    def test_against_reference(self, data, metric, param, n_threads):
        X, Y = data
        want = ref_energy(X, Y, metric, param)
        for name, arr in _layouts(X).items():
            got = es.energy_distance(arr, Y, n_threads=n_threads, **metric_kwargs(metric, param))
            assert got == pytest.approx(want, rel=1e-10), name

    @pytest.mark.parametrize("metric,param", METRIC_PARAMS)
    def test_float32(self, data, metric, param):
        X, Y = (a.astype(np.float32) for a in data)
        want = ref_energy(X.astype(float), Y.astype(float), metric, param)
        # arithmetic in double for float32 input: measured max relative error 1.2e-13
        # (laplacian, sigma 0.7: E = 2g(A,B) − g(A,A) − g(B,B) cancels about 100-fold here,
        # and the reference sums plainly); rel 1e-12 is an 8× margin.
        assert es.energy_distance(X, Y, **metric_kwargs(metric, param)) == pytest.approx(want, rel=1e-12)

    def test_many_blocks_and_threads(self):
        # more rows than one kernel block (128 x 256) so that block edges and
        # the per-thread merge are exercised
        rng = np.random.default_rng(7)
        X, Y = rng.normal(size=(300, 2)), rng.normal(size=(290, 2)) + 0.1
        D = ref_matrix(np.vstack([X, Y]))
        n = len(X)
        want = 2 * D[:n, n:].mean() - D[:n, :n].mean() - D[n:, n:].mean()
        for nt in (1, 2, 3):
            assert es.energy_distance(X, Y, n_threads=nt) == pytest.approx(want, rel=1e-11)

    def test_one_dimensional_sorted_path(self):
        rng = np.random.default_rng(3)
        x = np.round(rng.normal(size=200), 1)  # many ties
        y = np.round(rng.normal(size=150) * 2, 1)
        want = ref_energy(x, y)
        assert es.energy_distance(x, y) == pytest.approx(want, rel=1e-11)
        assert es.energy_distance(x, y, method="sorted") == pytest.approx(want, rel=1e-11)
        assert es.energy_distance(x, y, method="pairwise") == pytest.approx(want, rel=1e-11)
        with pytest.raises(ValueError, match="method='sorted'"):
            es.energy_distance(x, y, exponent=0.5, method="sorted")
        with pytest.raises(ValueError, match="method"):
            es.energy_distance(x, y, method="fast")

    def test_large_offset_one_dimensional(self):
        # the prefix sums of the sorted path are centred: a big common offset is harmless
        rng = np.random.default_rng(5)
        x, y = rng.normal(size=500), rng.normal(size=400) + 0.5
        e = es.energy_distance(x, y, method="pairwise")
        assert es.energy_distance(x + 1e6, y + 1e6) == pytest.approx(e, rel=1e-8)

    def test_against_scipy(self):
        # SPEC §3: scipy.stats.energy_distance = sqrt(E) for exponent 1, 1-D
        rng = np.random.default_rng(11)
        x, y = rng.exponential(size=80), rng.normal(size=60)
        assert scipy.stats.energy_distance(x, y) == pytest.approx(np.sqrt(es.energy_distance(x, y)), rel=1e-10)

    @pytest.mark.parametrize("exponent", [0.5, 1.0, 1.5])
    def test_against_dcor(self, data, exponent):
        # SPEC §3: dcor.energy_distance is the V-statistic E(A, B)
        dcor = pytest.importorskip("dcor")
        X, Y = data
        assert dcor.energy_distance(X, Y, exponent=exponent) == pytest.approx(
            es.energy_distance(X, Y, exponent=exponent), rel=1e-10)

    def test_against_r_energy_edist(self):
        # R energy 1.7-11, Debian r-cran-energy:
        #   Rscript -e 'library(energy); print(edist(as.matrix(iris[,1:4]), c(50,50,50)), digits=15)'
        #   -> 123.5538149839066 (setosa/versicolor), 195.3039604308554 (setosa/virginica),
        #      38.8541531941155 (versicolor/virginica); alpha=0.5: 47.0384652626598, 64.0867294194850,
        #      16.7455183868161.  edist reports (n m / (n + m)) E = 25 E here.
        from energystats.datasets import load_iris
        df = load_iris()
        sp = {s: df.loc[df.species == s].iloc[:, :4] for s in df.species.cat.categories}
        pairs = [("setosa", "versicolor"), ("setosa", "virginica"), ("versicolor", "virginica")]
        r1 = [123.5538149839066, 195.3039604308554, 38.8541531941155]
        r05 = [47.0384652626598, 64.0867294194850, 16.7455183868161]
        for (a, b), v1, v05 in zip(pairs, r1, r05):
            assert 25 * es.energy_distance(sp[a], sp[b]) == pytest.approx(v1, rel=1e-12)
            assert 25 * es.energy_distance(sp[a], sp[b], exponent=0.5) == pytest.approx(v05, rel=1e-12)

    def test_single_points_and_identical_samples(self):
        assert es.energy_distance([1.0], [4.0]) == pytest.approx(6.0)
        X = np.random.default_rng(0).normal(size=(10, 2))
        assert es.energy_distance(X, X) == pytest.approx(0.0, abs=1e-14)

    # -- input validation --
    def test_bad_input(self, data):
        X, Y = data
        with pytest.raises(ValueError, match="`y` must have at least 1"):
            es.energy_distance(X, np.empty((0, 3)))
        with pytest.raises(ValueError, match="same number of features"):
            es.energy_distance(X, Y[:, :1])
        with pytest.raises(ValueError, match="`x` contains NaN"):
            es.energy_distance(np.where(X > 1, np.nan, X), Y)
        with pytest.raises(TypeError, match="precomputed.*`labels=`"):   # the matrix form
            es.energy_distance(X, Y, metric="precomputed")
        with pytest.raises(ValueError, match="exponent"):
            es.energy_distance(X, Y, exponent=3)


class TestIsNegativeType:
    def test_builtin_and_counterexample(self, data):
        X, _ = data
        for metric, param in METRIC_PARAMS:
            assert es.is_negative_type(es.pairwise(X, **metric_kwargs(metric, param)))
        # SPEC §1: |x-y|^2 exp(-|x-y|/2) is not of negative type in general
        bad = lambda a, b: float(np.sum((a - b) ** 2) * np.exp(-np.sqrt(np.sum((a - b) ** 2)) / 2))  # noqa: E731
        Z = np.random.default_rng(2).normal(size=(40, 2)) * 3
        assert not es.is_negative_type(es.pairwise(Z, metric=bad))


class TestStreamedSums:
    """The compiled group-sum kernel against an exactly rounded sum (math.fsum)."""

    def test_large_n_accuracy(self):
        import math

        from scipy.spatial.distance import cdist

        from energystats._core._engine import group_sum_matrix
        from energystats._core._metrics import resolve_metric

        rng = np.random.default_rng(99)
        X = rng.normal(size=(3000, 2)) * 1e3 + 1e4
        codes = (rng.random(3000) < 0.4).astype(np.intp)
        D = cdist(X, X)
        met = resolve_metric("energy", 1.0, 1.0)
        for nt in (1, 2):
            M = group_sum_matrix(X, codes, 2, met, nt)
            for g in (0, 1):
                for h in (0, 1):
                    exact = math.fsum(D[np.ix_(codes == g, codes == h)].ravel())
                    assert M[g, h] == pytest.approx(exact, rel=1e-13)


class TestDataFrameForms:
    """energy_distance and the clustering functions take DataFrames with columns= / by=."""

    def test_energy_distance_by_and_columns(self):
        rng = np.random.default_rng(8)
        X = rng.normal(size=(30, 2))
        g = np.array(["u"] * 12 + ["v"] * 18)
        df = pd.DataFrame(X, columns=["p", "q"]).assign(grp=g, note="n/a")
        want = ref_energy(X[:12], X[12:])
        with pytest.raises(TypeError, match=r"non-numeric column\(s\) \['note'\].*numeric_only=True"):
            es.energy_distance(df, by="grp")          # a text column is never dropped silently
        assert es.energy_distance(df, by="grp", numeric_only=True) == pytest.approx(want, rel=1e-10)
        assert es.energy_distance(df, by="grp", columns=["q"]) == pytest.approx(
            ref_energy(X[:12, 1], X[12:, 1]), rel=1e-10)
        a, b = df.iloc[:12], df.iloc[12:]
        assert es.energy_distance(a, b, columns=["p", "q"]) == pytest.approx(want, rel=1e-10)
        with pytest.raises(TypeError, match="non-numeric column"):
            es.energy_distance(a, b)
        with pytest.raises(ValueError, match="exactly 2 groups"):
            es.energy_distance(df.assign(grp=np.arange(30) % 3), by="grp", numeric_only=True)
        with pytest.raises(TypeError, match="either `y` or `by`"):
            es.energy_distance(df, b, by="grp")
        with pytest.raises(TypeError, match="`y`"):
            es.energy_distance(df)
        with pytest.raises(TypeError, match="`columns` needs"):
            es.energy_distance(X[:12], X[12:], columns=["p"])

    def test_clustering_functions_take_columns(self):
        rng = np.random.default_rng(4)
        X = np.vstack([rng.normal(size=(15, 2)), rng.normal(size=(15, 2)) + 6])
        df = pd.DataFrame(X, columns=["p", "q"], index=[f"r{i}" for i in range(30)]).assign(name="x")
        res = es.energy_clustering(df, 2, columns=["p", "q"], rng=0)
        assert list(res.labels.index) == list(df.index)
        assert res.W == pytest.approx(es.dispersion(X, res.labels.to_numpy()).W, rel=1e-10)
        Z = es.energy_linkage(df, columns=["p", "q"])
        np.testing.assert_allclose(Z, es.energy_linkage(X))
        t = es.cluster_test(df, 2, columns=["p", "q"], n_resamples=4, n_init=1, rng=1)
        assert t.statistic == pytest.approx(es.cluster_test(X, 2, n_resamples=4, n_init=1, rng=1).statistic)
        with pytest.raises(TypeError, match="non-numeric column"):
            es.energy_clustering(df, 2)
        with pytest.raises(KeyError, match="not found"):
            es.cluster_test(df, 2, columns=["p", "zz"])


class TestEnergyDistanceU:
    def test_u_statistic_against_double_loop(self):
        rng = np.random.default_rng(9)
        a, b = rng.normal(size=(13, 2)), rng.normal(size=(9, 2)) + 0.4
        Da, Db, Dab = ref_matrix(a), ref_matrix(b), ref_matrix(a, b)
        want = 2 * Dab.mean() - Da.sum() / (13 * 12) - Db.sum() / (9 * 8)
        for method in ("auto", "pairwise"):
            assert es.energy_distance(a, b, estimator="U", method=method) == pytest.approx(want, rel=1e-12)
        x, y = rng.normal(size=40), rng.normal(size=30)
        Dx, Dy = ref_matrix(x), ref_matrix(y)
        want = 2 * ref_matrix(x, y).mean() - Dx.sum() / (40 * 39) - Dy.sum() / (30 * 29)
        assert es.energy_distance(x, y, estimator="U") == pytest.approx(want, rel=1e-11)  # sorted path

    def test_u_statistic_bad_input(self):
        with pytest.raises(ValueError, match="at least 2 points"):
            es.energy_distance([0.0], [1.0, 2.0], estimator="U")
        with pytest.raises(ValueError, match="`estimator`"):
            es.energy_distance([0.0], [1.0], estimator="W")
