"""Distance covariance and correlation (issue 11): against R energy, dcor's documented cases
and an independent O(n²) numpy reference; invariances; bad input."""
import math
from fractions import Fraction

import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es
from tests.reference import exact_dcov_1d, ref_matrix


def ref_dcov(X, Y, metric="energy", param=1.0):
    """(V: dcov², dvarx², dvary², dcor²; U: dcov_u, dvarx_u, dvary_u, dcor_u) by the definitions,
    from the full n×n matrices of the reference semimetric (plain numpy, double loops)."""
    a, b = ref_matrix(X, metric=metric, param=param), ref_matrix(Y, metric=metric, param=param)
    n = a.shape[0]

    def dc(m):
        return m - m.mean(0)[None, :] - m.mean(1)[:, None] + m.mean()

    def uc(m):
        out = np.empty_like(m)
        rs, tot = m.sum(1), m.sum()
        for i in range(n):
            for j in range(n):
                out[i, j] = 0.0 if i == j else (m[i, j] - rs[i] / (n - 2) - rs[j] / (n - 2)
                                                 + tot / ((n - 1) * (n - 2)))
        return out

    A, B = dc(a), dc(b)
    V = [np.sum(A * B) / n**2, np.sum(A * A) / n**2, np.sum(B * B) / n**2]
    V.append(V[0] / math.sqrt(V[1] * V[2]) if V[1] * V[2] > 0 else float("nan"))
    At, Bt = uc(a), uc(b)
    U = [np.sum(At * Bt) / (n * (n - 3)), np.sum(At * At) / (n * (n - 3)), np.sum(Bt * Bt) / (n * (n - 3))]
    U.append(U[0] / math.sqrt(U[1] * U[2]) if U[1] * U[2] > 0 else float("nan"))  # U may be <= 0
    return V, U


def _r_data():
    i = np.arange(1, 31, dtype=float)
    x = np.column_stack([np.sin(i), np.cos(i**2), np.log(i)])
    y = np.column_stack([i % 7 + 0.5 * np.sin(i), np.sqrt(i)])
    return x, y


class TestAgainstR:
    def test_iris_reference_pages(self):
        # R 4.2, energy 1.7.11:
        #   x <- iris[1:50, 1:4]; y <- iris[51:100, 1:4]
        #   DCOR(x, y)    -> dCov 0.102508670511496, dCor 0.30604786547732,
        #                    dVarX 0.271292743445382, dVarY 0.413527422805133
        #   dcovU(x, y)   -> -0.00274835128597198;  bcdcor(x, y) -> -0.0271709015086332
        from energystats.datasets import load_iris
        iris = load_iris()
        x, y = iris.iloc[:50, :4], iris.iloc[50:100, :4].set_axis(iris.index[:50])
        r = es.distance_stats(x, y)
        assert r.dcov == pytest.approx(0.102508670511496, rel=1e-13)
        assert r.dcor == pytest.approx(0.30604786547732, rel=1e-13)
        assert math.sqrt(r.dvar_x_sqr) == pytest.approx(0.271292743445382, rel=1e-13)
        assert math.sqrt(r.dvar_y_sqr) == pytest.approx(0.413527422805133, rel=1e-13)
        assert r.dcov_u == pytest.approx(-0.00274835128597198, rel=1e-11)
        assert r.dcor_u == pytest.approx(-0.0271709015086332, rel=1e-11)
        assert r.test_statistic == pytest.approx(50 * 0.102508670511496**2, rel=1e-12)
        assert r.columns_x == list(iris.columns[:4])

    @pytest.mark.parametrize("exponent,want", [
        # R: i <- 1:30; x <- cbind(sin(i), cos(i^2), log(i)); y <- cbind(i %% 7 + 0.5*sin(i), sqrt(i))
        #    d <- DCOR(x, y, index = a); c(d$dCov, d$dCor, d$dVarX, d$dVarY)
        (0.5, (0.312951408958954, 0.809806897458023, 0.313786651775342, 0.475944611437933)),
        (1.0, (0.605181119100106, 0.676896857016188, 0.605432328531405, 1.32026204286515)),
        (1.5, (1.14181935014677, 0.594674950733957, 1.10979842240832, 3.32193708965486)),
    ])
    def test_exponents(self, exponent, want):
        x, y = _r_data()
        r = es.distance_stats(x, y, exponent=exponent)
        got = (r.dcov, r.dcor, math.sqrt(r.dvar_x_sqr), math.sqrt(r.dvar_y_sqr))
        np.testing.assert_allclose(got, want, rtol=1e-13)

    def test_u_statistics_and_dcov_test_statistic(self):
        # R: dcovU(x, y) -> 0.216522151980683; bcdcor(x, y) -> 0.323612125820752
        #    dcov.test(x, y, R = 0)$statistic -> 10.9873256074577 (n V²)
        x, y = _r_data()
        r = es.distance_stats(x, y)
        assert r.dcov_u == pytest.approx(0.216522151980683, rel=1e-12)
        assert r.dcor_u == pytest.approx(0.323612125820752, rel=1e-12)
        assert r.test_statistic == pytest.approx(10.9873256074577, rel=1e-12)

    def test_dcor_documented_small_case(self):
        # dcor's documentation: x = 1..6, y = (1, 7, 5, 5, 6, 2); R energy agrees:
        #   DCOR(x, y): dCov 0.827759134763963, dCor 0.553723710021925
        #   dcovU -0.888888888888889, bcdcor -0.416125189288239
        x, y = np.arange(1, 7), [1, 7, 5, 5, 6, 2]
        assert es.distance_covariance_sqr(x, y) == pytest.approx(0.6851851851851851, rel=1e-13)
        assert es.distance_correlation_sqr(x, y) == pytest.approx(0.553723710021925**2, rel=1e-13)
        assert es.distance_covariance_sqr(x, y, estimator="U") == pytest.approx(-0.888888888888889, rel=1e-13)
        assert es.distance_correlation_sqr(x, y, estimator="U") == pytest.approx(-0.416125189288239, rel=1e-12)
        assert es.distance_covariance(x, y) == pytest.approx(0.827759134763963, rel=1e-13)
        assert es.distance_correlation(x, y) == pytest.approx(0.553723710021925, rel=1e-13)


class TestAgainstReference:
    @pytest.mark.parametrize("metric,param", [("energy", 1.0), ("energy", 0.7), ("energy", 1.9),
                                              ("laplacian", 0.8), ("gaussian", 1.3)])
    def test_random_data(self, metric, param):
        rng = np.random.default_rng(1)
        X = rng.normal(size=(57, 3))
        Y = X[:, :2] ** 2 + rng.normal(size=(57, 2))
        V, U = ref_dcov(X, Y, metric, param)
        kw = {"metric": metric, ("exponent" if metric == "energy" else "sigma"): param}
        r = es.distance_stats(X, Y, **kw)
        np.testing.assert_allclose([r.dcov_sqr, r.dvar_x_sqr, r.dvar_y_sqr, r.dcor_sqr], V, rtol=1e-12)
        np.testing.assert_allclose([r.dcov_u, r.dvar_x_u, r.dvar_y_u, r.dcor_u], U, rtol=1e-11)

    def test_precomputed_and_callable(self):
        rng = np.random.default_rng(2)
        X, Y = rng.normal(size=(20, 2)), rng.normal(size=(20, 1))
        want = es.distance_stats(X, Y)
        r = es.distance_stats(ref_matrix(X), ref_matrix(Y), metric="precomputed")
        np.testing.assert_allclose([r.dcov_sqr, r.dcor_sqr, r.dcov_u, r.dcor_u],
                                   [want.dcov_sqr, want.dcor_sqr, want.dcov_u, want.dcor_u], rtol=1e-12)
        r = es.distance_stats(X, Y, metric=lambda a, b: np.sqrt(np.sum((a - b) ** 2)))
        assert r.dcor_sqr == pytest.approx(want.dcor_sqr, rel=1e-12)

    def test_layouts_dtypes_threads_give_the_same_bits(self):
        rng = np.random.default_rng(3)
        X, Y = rng.normal(size=(700, 3)), rng.normal(size=(700, 2))
        base = es.distance_stats(X, Y, n_threads=1)
        for Xv in (np.asfortranarray(X), np.repeat(X, 2, axis=1)[:, ::2]):
            for nt in (1, 2, 3):
                r = es.distance_stats(Xv, Y, n_threads=nt)
                assert (r.dcov_sqr, r.dcov_u, r.dcor_sqr) == (base.dcov_sqr, base.dcov_u, base.dcor_sqr)
        # float32 input is read as double: the reference on the same (rounded) values
        X32, Y32 = X[:60].astype(np.float32), Y[:60].astype(np.float32)
        V, U = ref_dcov(X32.astype(float), Y32.astype(float))
        r = es.distance_stats(X32, Y32)
        np.testing.assert_allclose([r.dcov_sqr, r.dcov_u], [V[0], U[0]], rtol=1e-12)

    def test_scale_extremes(self):
        # working units: no overflow or underflow of squared distances
        rng = np.random.default_rng(4)
        X = rng.normal(size=(40, 2))
        Y = X[:, :1] ** 2 + rng.normal(size=(40, 1))
        base = es.distance_stats(X, Y)
        for c in (1e-160, 1e150):
            r = es.distance_stats(X * c, Y)
            assert r.dcor_sqr == pytest.approx(base.dcor_sqr, rel=1e-12)
            assert r.dcor_u == pytest.approx(base.dcor_u, rel=1e-11)
            assert r.dcov_sqr == pytest.approx(base.dcov_sqr * c, rel=1e-12)


class TestProperties:
    def test_invariances_and_bounds(self):
        rng = np.random.default_rng(5)
        X = rng.normal(size=(50, 3))
        Y = np.sin(X[:, :2]) + 0.3 * rng.normal(size=(50, 2))
        base = es.distance_stats(X, Y)
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        r = es.distance_stats(3.0 * X @ Q + 7.0, Y - 2.0)
        assert r.dcor_sqr == pytest.approx(base.dcor_sqr, rel=1e-12)
        assert r.dcov_sqr == pytest.approx(3.0 * base.dcov_sqr, rel=1e-12)
        assert r.dcor_u == pytest.approx(base.dcor_u, rel=1e-11)
        perm = rng.permutation(50)  # paired rows reordered together
        assert es.distance_stats(X[perm], Y[perm]).dcor_sqr == pytest.approx(base.dcor_sqr, rel=1e-12)
        assert 0 <= base.dcor_sqr <= 1

    def test_dcor_one_for_similarity(self):
        rng = np.random.default_rng(6)
        X = rng.normal(size=(30, 2))
        Q, _ = np.linalg.qr(rng.normal(size=(2, 2)))
        assert es.distance_correlation(X, -2.5 * X @ Q + 1.0) == pytest.approx(1.0, abs=1e-12)


class TestBadInput:
    def test_errors_name_the_problem(self):
        x = np.arange(10.0)
        with pytest.raises(ValueError, match="same number of rows"):
            es.distance_correlation(x, x[:9])
        with pytest.raises(ValueError, match="at least 4"):
            es.distance_covariance_sqr(x[:3], x[:3], estimator="U")
        with pytest.raises(ValueError, match="`y` is constant"):
            es.distance_correlation(x, np.ones(10))
        with pytest.raises(ValueError, match="NaN"):
            es.distance_correlation(np.r_[x[:9], np.nan], x)
        with pytest.raises(ValueError, match="`estimator`"):
            es.distance_covariance_sqr(x, x, estimator="W")
        with pytest.raises(ValueError, match="different indexes"):
            es.distance_correlation(pd.Series(x), pd.Series(x, index=np.arange(10) + 1))
        df = pd.DataFrame({"a": x, "b": x ** 2})
        with pytest.raises(KeyError, match="'c'"):
            es.distance_correlation("a", "c", data=df)
        assert es.distance_covariance(x, np.ones(10)) == 0.0  # dCov of a constant is 0


class TestIndependenceTest:
    def test_null_distribution_by_the_reference(self):
        rng = np.random.default_rng(7)
        x = rng.normal(size=(25, 2))
        y = x[:, :1] ** 2 + rng.normal(size=(25, 1))
        res = es.independence_test(x, y, n_resamples=30, rng=11)
        V, _ = ref_dcov(x, y)
        assert res.statistic == pytest.approx(25 * V[0], rel=1e-12)
        perm_rng = np.random.default_rng(11)
        for r in range(30):
            p = perm_rng.permutation(25)  # the documented draw: rng.permutation(n), r-th call
            if r in (0, 17, 29):
                Vp, _ = ref_dcov(x, y[p])
                assert res.null_distribution[r] == pytest.approx(25 * Vp[0], rel=1e-10)
        want = (1 + np.sum(res.null_distribution >= res.statistic * (1 - 1e-12))) / 31
        assert res.pvalue == want and res.seed == 11 and not res.exact
        d = es.independence_test(x, y, statistic="dcor", n_resamples=30, rng=11)
        assert d.pvalue == res.pvalue and d.statistic == pytest.approx(V[3], rel=1e-12)
        assert list(res.to_frame().columns)[:3] == ["statistic", "pvalue", "pvalue_se"]

    def test_exact_and_strata(self):
        x = np.array([0.3, 1.2, 2.2, 2.9, 4.1])
        y = np.array([0.1, 0.9, 2.5, 2.4, 3.8])
        res = es.independence_test(x, y, n_resamples=999)
        assert res.exact and res.n_resamples == 120
        import itertools
        obs = ref_dcov(x, y)[0][0]
        vals = [ref_dcov(x, y[list(p)])[0][0] for p in itertools.permutations(range(5))]
        assert res.pvalue == pytest.approx(np.mean(np.array(vals) >= obs - 1e-12), abs=1e-12)
        s = es.independence_test(x, y, n_resamples=999, strata=[0, 0, 1, 1, 1])
        assert s.exact and s.n_resamples == 2 * 6 and s.strata == [0, 1]

    def test_threads_and_seed_reproduce(self):
        rng = np.random.default_rng(8)
        x, y = rng.normal(size=(300, 3)), rng.normal(size=(300, 1))
        a = es.independence_test(x, y, n_resamples=99, rng=5, n_threads=1)
        b = es.independence_test(x, y, n_resamples=99, rng=5, n_threads=2)
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        assert a.pvalue == b.pvalue


@pytest.mark.slow
def test_independence_test_level_and_power():
    """Level within 2 binomial SE of 0.05 (two-sided; default R = 999); power against
    y = x² + noise, where Pearson's test has almost none."""
    from scipy import stats
    rng = np.random.default_rng(20261123)
    n_sets = 300
    rej = 0
    for _ in range(n_sets):
        rej += es.independence_test(rng.normal(size=(30, 2)), rng.standard_t(3, size=30), rng=rng).pvalue <= 0.05
    assert abs(rej / n_sets - 0.05) <= 2 * np.sqrt(0.05 * 0.95 / n_sets), rej / n_sets
    pw = pe = 0
    for _ in range(100):
        x = rng.normal(size=50)
        y = x ** 2 + 0.5 * rng.normal(size=50)
        pw += es.independence_test(x, y, rng=rng).pvalue <= 0.05
        pe += stats.pearsonr(x, y).pvalue <= 0.05
    assert pw >= 95 and pe <= 40, (pw, pe)


def test_dcor_ttest_against_R():
    # R energy 1.7.11: dcorT.test(iris[1:50, 1:4], iris[51:100, 1:4])
    #   -> T -0.931319007205131, p 0.824059977522431, df 1174, bcdcor -0.0271709015086332
    #   i <- 1:30; x <- cbind(sin(i), cos(i^2), log(i)); y <- cbind(i %% 7 + 0.5*sin(i), sqrt(i))
    #   dcorT.test(x, y) -> T 6.87443790913807, p 1.18560716799720e-11, df 404
    #   R forms that p-value as 1 - pt(T, df), which cancels: pt(6.87443790913807, 404,
    #   lower.tail = FALSE) -> 1.18560480437749e-11 is the accurate value (ours, 2e-6 apart)
    from energystats.datasets import load_iris
    iris = load_iris()
    r = es.distance_correlation_ttest(iris.iloc[:50, :4].to_numpy(), iris.iloc[50:100, :4].to_numpy())
    assert r.statistic == pytest.approx(-0.931319007205131, rel=1e-11)
    assert r.pvalue == pytest.approx(0.824059977522431, rel=1e-11)
    assert r.df == 1174 and r.estimate == pytest.approx(-0.0271709015086332, rel=1e-11)
    x, y = _r_data()
    r = es.distance_correlation_ttest(x, y)
    assert r.statistic == pytest.approx(6.87443790913807, rel=1e-11) and r.df == 404
    assert r.pvalue == pytest.approx(1.18560480437749e-11, rel=1e-11)
    assert r.pvalue != pytest.approx(1.18560716799720e-11, rel=1e-7)


class TestPartial:
    def test_against_R(self):
        # R energy 1.7.11, with x, y as in _r_data and z <- cbind(cos(3*i), i/10):
        #   pdcov(x, y, z) -> 0.164398557356795; pdcor(x, y, z) -> 0.267913455730592
        #   pdcor(x, y, x[, 1]) -> 0.364779154395122
        x, y = _r_data()
        i = np.arange(1.0, 31)
        z = np.column_stack([np.cos(3 * i), i / 10])
        assert es.partial_distance_covariance(x, y, z) == pytest.approx(0.164398557356795, rel=1e-12)
        assert es.partial_distance_correlation(x, y, z) == pytest.approx(0.267913455730592, rel=1e-12)
        assert es.partial_distance_correlation(x, y, x[:, 0]) == pytest.approx(0.364779154395122, rel=1e-12)
        # scale: degree one in each of x and y, none in z
        assert es.partial_distance_covariance(x * 1e150, y, z * 1e-150) == pytest.approx(
            0.164398557356795e150, rel=1e-12)
        D = [ref_matrix(v) for v in (x, y, z)]
        assert es.partial_distance_correlation(*D, metric="precomputed") == pytest.approx(
            0.267913455730592, rel=1e-12)

    def test_centring_helpers_against_R(self):
        # R: D <- as.matrix(dist(1:5)); U_center(D)[1, ] -> 0 -1.3333333 0 0.6666667 0.6666667
        #    D_center(D)[1, ] -> -2.4 -0.8 0.4 1.2 1.6
        #    U_product(U_center(D), U_center(as.matrix(dist(c(1,3,2,5,4))))) -> 0.533333333333333
        D = np.abs(np.subtract.outer(np.arange(1.0, 6), np.arange(1.0, 6)))
        np.testing.assert_allclose(es.u_center(D)[0], [0, -4 / 3, 0, 2 / 3, 2 / 3], atol=1e-15)
        np.testing.assert_allclose(es.d_center(D)[0], [-2.4, -0.8, 0.4, 1.2, 1.6], atol=1e-15)
        v = np.array([1.0, 3, 2, 5, 4])
        E = np.abs(np.subtract.outer(v, v))
        assert es.u_product(es.u_center(D), es.u_center(E)) == pytest.approx(0.533333333333333, rel=1e-13)
        # the unbiased dCov is the U-product of the U-centred matrices
        x, y = _r_data()
        assert es.u_product(es.u_center(ref_matrix(x)), es.u_center(ref_matrix(y))) == pytest.approx(
            es.distance_covariance_sqr(x, y, estimator="U"), rel=1e-12)

    def test_degenerate_and_bad_input(self):
        x, y = _r_data()
        for z in (x, 3.7 * x + 1.0, x @ np.linalg.qr(np.random.default_rng(0).normal(size=(3, 3)))[0]):
            with pytest.warns(UserWarning, match="undefined; returning 0"):
                assert es.partial_distance_correlation(x, y, z) == 0.0
        with pytest.raises(ValueError, match="same number of rows"):
            es.partial_distance_correlation(x, y, x[:20])
        with pytest.raises(ValueError, match="n >= 4"):
            es.u_center(np.zeros((3, 3)))


class TestPartialTest:
    def test_null_by_the_reference(self):
        x, y = _r_data()
        i = np.arange(1.0, 31)
        z = np.column_stack([np.cos(3 * i), i / 10])
        res = es.partial_distance_correlation_test(x, y, z, n_resamples=20, rng=3)
        assert res.statistic == pytest.approx(0.267913455730592, rel=1e-12)
        assert res.partial_dcov == pytest.approx(0.164398557356795, rel=1e-12)
        # reference: U-centre, project, permute the projection of x (R's pdcor.test)
        A, B, C = (es.u_center(ref_matrix(v)) for v in (x, y, z))
        Px = A - es.u_product(A, C) / es.u_product(C, C) * C
        Py = B - es.u_product(B, C) / es.u_product(C, C) * C
        rng = np.random.default_rng(3)
        norm = np.sqrt(es.u_product(Px, Px) * es.u_product(Py, Py))
        want = []
        for _ in range(20):
            p = rng.permutation(30)
            want.append(es.u_product(Px[np.ix_(p, p)], Py) / norm)
        np.testing.assert_allclose(res.null_distribution, want, rtol=1e-10, atol=1e-14)
        assert res.pvalue == (1 + np.sum(np.array(want) >= res.statistic - 1e-12)) / 21


@pytest.mark.slow
def test_partial_test_level():
    """x, y, z independent: rejection rate within 2 binomial SE of 0.05 (default R = 999)."""
    rng = np.random.default_rng(11)
    n_sets, rej = 200, 0
    for _ in range(n_sets):
        x, y, z = rng.normal(size=(30, 2)), rng.normal(size=30), rng.normal(size=(30, 1))
        rej += es.partial_distance_correlation_test(x, y, z, rng=rng).pvalue <= 0.05
    assert abs(rej / n_sets - 0.05) <= 2 * np.sqrt(0.05 * 0.95 / n_sets), rej / n_sets


class TestMutualIndependence:
    def test_estimates_against_R(self):
        # R energy 1.7.11: i <- 1:30; x <- cbind(sin(i), cos(i^2), log(i), i %% 7)
        #   mutualIndep.test(x, R = 199)$statistic -> 0.145696757264582
        #   estimate (rounded by R) -> 0.070 0.133 -0.057
        i = np.arange(1.0, 31)
        x = np.column_stack([np.sin(i), np.cos(i**2), np.log(i), i % 7])
        r = es.mutual_independence_test(x, n_resamples=0)
        assert r.statistic == pytest.approx(0.145696757264582, rel=1e-12)
        np.testing.assert_allclose(r.estimates, [0.070, 0.133, -0.057], atol=5e-4)
        # each term is the bias-corrected dCor of a column with the ones after it
        assert r.estimates[0] == pytest.approx(
            es.distance_correlation_sqr(x[:, 0], x[:, 1:], estimator="U"), rel=1e-12)
        df = pd.DataFrame(x, columns=list("abcd"))
        r2 = es.mutual_independence_test(df, n_resamples=0)
        assert r2.names == list("abcd") and r2.statistic == pytest.approx(r.statistic, rel=1e-14)
        r3 = es.mutual_independence_test("a", ["b", "c"], "d", data=df, n_resamples=0)
        assert r3.names == ["a", "b+c", "d"] and r3.estimates.size == 2

    def test_null_by_the_reference(self):
        rng = np.random.default_rng(2)
        a, b, c = rng.normal(size=(15, 2)), rng.normal(size=15), rng.normal(size=15)
        res = es.mutual_independence_test(a, b, c, n_resamples=10, rng=4)
        gen = np.random.default_rng(4)
        for r in range(10):
            pa, pb, pc = gen.permutation(15), gen.permutation(15), gen.permutation(15)
            A, B, C = a[pa], b[pb], c[pc]
            want = (es.distance_correlation_sqr(A, np.column_stack([B, C]), estimator="U")
                    + es.distance_correlation_sqr(B, C, estimator="U"))
            assert res.null_distribution[r] == pytest.approx(want, rel=1e-10, abs=1e-13)

    def test_bad_input(self):
        with pytest.raises(ValueError, match="at least 2 variables|2-D array"):
            es.mutual_independence_test(np.arange(10.0))
        with pytest.raises(ValueError, match="same number of rows"):
            es.mutual_independence_test(np.arange(10.0), np.arange(9.0))
        with pytest.raises(ValueError, match="constant"):
            es.mutual_independence_test(np.arange(10.0), np.ones(10))


@pytest.mark.slow
def test_mutual_independence_level():
    rng = np.random.default_rng(12)
    n_sets, rej = 200, 0
    for _ in range(n_sets):
        rej += es.mutual_independence_test(rng.normal(size=25), rng.exponential(size=25),
                                           rng.normal(size=(25, 2)), rng=rng).pvalue <= 0.05
    assert abs(rej / n_sets - 0.05) <= 2 * np.sqrt(0.05 * 0.95 / n_sets), rej / n_sets


def _holm_loop(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh_loop(p):
    m = len(p)
    out = []
    for i in range(m):
        # min over all p_(j) >= p_i of m p_(j) / rank(j)
        ranks = sorted(p)
        out.append(min(1.0, min(m * ranks[j] / (j + 1) for j in range(m) if ranks[j] >= p[i])))
    return out


from scipy import stats  # noqa: E402


class TestDistanceCorrelationMatrix:
    def _data(self):
        rng = np.random.default_rng(13)
        n = 40
        x = rng.normal(size=n)
        return pd.DataFrame({"a": x, "b": x**2 + rng.normal(size=n), "c": rng.normal(size=n),
                             "d": np.sin(3 * x) + 0.2 * rng.normal(size=n), "e": rng.exponential(size=n)})

    @pytest.mark.parametrize("budget", [256 * 2**20, 20000])   # one block; one column per block
    def test_entries_against_the_reference(self, budget):
        df = self._data()
        res = es.distance_correlation_matrix(df, pvalue="ttest", adjust=None, memory_budget=budget)
        resu = es.distance_correlation_matrix(df, estimator="U", memory_budget=budget)
        for a in df.columns:
            for b in df.columns:
                if a == b:
                    assert res.dcor.loc[a, b] == 1.0
                    continue
                V, U = ref_dcov(df[a].to_numpy(), df[b].to_numpy())
                assert res.dcor.loc[a, b] == pytest.approx(math.sqrt(V[3]), rel=1e-11)
                assert resu.dcor.loc[a, b] == pytest.approx(U[3], rel=1e-10, abs=1e-13)
                # the t-test from the reference's bias-corrected dCor (Székely and Rizzo 2013)
                n = len(df)
                M = n * (n - 3) / 2
                T = math.sqrt(M - 1) * U[3] / math.sqrt(1 - U[3] ** 2)
                assert res.pvalues.loc[a, b] == pytest.approx(stats.t.sf(T, M - 1), rel=1e-9, abs=1e-15)

    def test_adjustments(self):
        df = self._data()
        raw = es.distance_correlation_matrix(df, pvalue="ttest", adjust=None)
        iu, ju = np.triu_indices(5, 1)
        p = raw.pvalues.to_numpy()[iu, ju]
        for method, loop in (("holm", _holm_loop), ("bh", _bh_loop)):
            res = es.distance_correlation_matrix(df, pvalue="ttest", adjust=method)
            np.testing.assert_allclose(res.adjusted.to_numpy()[iu, ju], loop(list(p)), rtol=1e-12)
        long = res.to_frame()
        assert list(long.columns) == ["x", "y", "dcor", "pvalue", "pvalue_adjusted"] and len(long) == 10

    def test_bad_input(self):
        df = self._data()
        with pytest.raises(ValueError, match="constant"):
            es.distance_correlation_matrix(df.assign(k=1.0))
        with pytest.raises(ValueError, match="`adjust`"):
            es.distance_correlation_matrix(df, adjust="bonferroni")
        with pytest.raises(ValueError, match="at least 2 columns"):
            es.distance_correlation_matrix(df[["a"]])


def _tied_pair(n, offset=50.0):
    rng = np.random.default_rng(n)
    x = np.round(rng.normal(size=n), 1) + offset        # ties and an offset
    y = np.round(np.abs(x - offset) + rng.normal(size=n), 1)
    return x, y


class TestSortedPath:
    @pytest.mark.parametrize("n", [4, 7, 50, 3000])
    def test_sorted_equals_pairwise_with_ties(self, n):
        x, y = _tied_pair(n)
        a = es.distance_stats(x, y, method="sorted")
        b = es.distance_stats(x, y, method="pairwise")
        for f in ("dcov_sqr", "dvar_x_sqr", "dvar_y_sqr", "dcov_u", "dvar_x_u"):
            assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-12, abs=1e-300), f
        if n <= 50:
            V, U = ref_dcov(x, y)
            np.testing.assert_allclose([a.dcov_sqr, a.dcov_u], [V[0], U[0]], rtol=1e-11)

    @pytest.mark.parametrize("n", [5, 300, 5000])
    @pytest.mark.parametrize("dependent", [False, True])
    def test_sorted_is_exact(self, n, dependent):
        # against exact integer arithmetic (tests/reference.py, independent of the package);
        # independent pairs are the hard case: dCov² ~ 1/n, the sums combined ~ 1
        x, y = _tied_pair(n, offset=1e3)
        if not dependent:
            y = np.random.default_rng(1).permutation(y)
        V, U = exact_dcov_1d(x, y)
        a = es.distance_stats(x, y, method="sorted")
        assert a.dcov_sqr == pytest.approx(float(V), rel=1e-14)
        assert a.dcov_u == pytest.approx(float(U), rel=1e-14)

    def test_sorted_threads_same_bits(self):
        x, y = _tied_pair(20_001)
        a = es.distance_stats(x, y, n_threads=1)
        b = es.distance_stats(x, y, n_threads=2)
        assert (a.dcov_sqr, a.dcov_u, a.dvar_y_u) == (b.dcov_sqr, b.dcov_u, b.dvar_y_u)


@pytest.mark.slow
def test_sorted_path_at_large_n():
    """The O(n log n) path against exact integer arithmetic at n = 10⁵ and against the blocked
    O(n²) pass at n = 2·10⁴ (ties, offset, independent and dependent pairs), to 1e-10: the
    sums it combines are of order n², the statistic of order n (measured: ≤ 3e-16 at 10⁵;
    the former double-precision combination was 3e-10 off at 2·10⁴)."""
    rng = np.random.default_rng(77)
    n = 100_000
    x = np.round(rng.normal(size=n) * 10, 1) + 1e3
    for y in (np.round(rng.standard_t(3, size=n), 2) - 7, np.round(x**2 / 100, 1)):
        V, U = exact_dcov_1d(x, y)
        a = es.distance_stats(x, y)                           # n >= FAST_1D_MIN_N: sorted
        assert a.dcov_sqr == pytest.approx(float(V), rel=1e-10)
        assert a.dcov_u == pytest.approx(float(U), rel=1e-10)
    x, y = x[:20_000], y[:20_000]
    a = es.distance_stats(x, y, method="sorted")
    b = es.distance_stats(x, y, method="pairwise")
    for f in ("dcov_sqr", "dcov_u", "dvar_x_sqr", "dvar_y_u", "dcor_sqr", "dcor_u"):
        assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-10), f


class TestSortedPathLimits:
    def test_sorted_needs_1d_exponent_1(self):
        x = np.arange(20.0)
        r = es.distance_stats(x, x**2, exponent=0.5, method="sorted")   # falls back: pairwise
        assert r.dcov_sqr == pytest.approx(es.distance_stats(x, x**2, exponent=0.5).dcov_sqr, rel=1e-14)


# -- hypothesis properties --------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

_vals = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def _paired(draw):
    n = draw(st.integers(4, 25))
    p, q = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    X = draw(hnp.arrays(np.float64, (n, p), elements=_vals))
    Y = draw(hnp.arrays(np.float64, (n, q), elements=_vals))
    return X, Y


def _nonconstant(X):
    return np.ptp(X, axis=0).max() > 1e-6


@settings(max_examples=60, deadline=None)
@given(_paired(), st.floats(0.5, 1.5), st.integers(0, 2**31))
def test_property_invariances_bounds_and_reference(data, exponent, seed):
    X, Y = data
    if not (_nonconstant(X) and _nonconstant(Y)):
        return
    rng = np.random.default_rng(seed)
    r = es.distance_stats(X, Y, exponent=exponent)
    V, U = ref_dcov(X, Y, param=exponent)
    scale = max(1.0, V[1], V[2])
    assert r.dcov_sqr == pytest.approx(max(V[0], 0.0), rel=1e-9, abs=1e-12 * scale)
    assert 0.0 <= r.dcor_sqr <= 1.0
    Q, _ = np.linalg.qr(rng.normal(size=(X.shape[1], X.shape[1])))
    c = float(rng.uniform(0.5, 2.0))
    moved = es.distance_stats(c * X @ Q + rng.normal(size=X.shape[1]), Y, exponent=exponent)
    assert moved.dcor_sqr == pytest.approx(r.dcor_sqr, rel=1e-8, abs=1e-10)
    perm = rng.permutation(X.shape[0])
    again = es.distance_stats(X[perm], Y[perm], exponent=exponent)
    assert again.dcor_sqr == pytest.approx(r.dcor_sqr, rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(3, 20), st.integers(1, 3)), elements=_vals),
       st.integers(0, 2**31))
def test_property_dcor_one_for_similarities(X, seed):
    if not _nonconstant(X):
        return
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(X.shape[1], X.shape[1])))
    a = float(rng.choice([-1, 1]) * rng.uniform(0.2, 5.0))
    assert es.distance_correlation(X, a * X @ Q + 3.0) == pytest.approx(1.0, abs=1e-9)


def test_independence_null_in_the_data_units():
    # working units are powers of two per variable; the null distribution is reported in the
    # data's units whatever the scale (and zero observed statistics do not change that)
    rng = np.random.default_rng(21)
    x, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    base = es.independence_test(x, y, n_resamples=20, rng=2)
    for c in (1e-100, 3.0, 1e100):
        r = es.independence_test(x * c, y, n_resamples=20, rng=2)
        np.testing.assert_allclose(r.null_distribution, base.null_distribution * c, rtol=1e-11)
        assert r.pvalue == base.pvalue
    V, _ = ref_dcov(x, y[np.random.default_rng(2).permutation(30)])
    assert base.null_distribution[0] == pytest.approx(30 * V[0], rel=1e-11)


@pytest.mark.slow
def test_dcor_ttest_level_high_dimension():
    """The t-test is for high dimension (Székely and Rizzo 2013): x and y independent with
    p = q = 100 and n = 30, rejection rate at 0.05 and 0.10 within 2 binomial SE (1000 sets);
    and power against y = x + 2 e in every coordinate.  (Against y = |x| + e it rejected 6
    of 100: in high dimension distance correlation sees mainly linear dependence between
    coordinates, as the guide says.)"""
    rng = np.random.default_rng(20261124)
    n_sets, n, d = 1000, 30, 100
    p = np.array([es.distance_correlation_ttest(rng.normal(size=(n, d)), rng.standard_t(4, size=(n, d))).pvalue
                  for _ in range(n_sets)])
    for alpha in (0.05, 0.10):
        rate = np.mean(p <= alpha)
        assert abs(rate - alpha) <= 2 * np.sqrt(alpha * (1 - alpha) / n_sets), (alpha, rate)
    power = 0
    for _ in range(100):
        x = rng.normal(size=(n, d))
        y = x + 2 * rng.normal(size=(n, d))
        power += es.distance_correlation_ttest(x, y).pvalue <= 0.05
    assert power >= 95, power


class TestMatrixPermutation:
    def _frame(self):
        rng = np.random.default_rng(8)
        x = rng.normal(size=40)
        return pd.DataFrame({"x": x, "sq": x**2 + 0.5 * rng.normal(size=40),
                             "z": rng.normal(size=40), "w": rng.exponential(size=40)})

    @pytest.mark.parametrize("budget", [2**30, 30_000])   # one block, or one column at a time
    def test_each_pair_is_the_independence_test(self, budget):
        df = self._frame()
        res = es.distance_correlation_matrix(df, pvalue="permutation", n_resamples=199, rng=3,
                                             adjust="bh", memory_budget=budget)
        assert (res.pvalue_method, res.n_resamples, res.exact, res.seed) == ("permutation", 199, False, 3)
        cols = list(df.columns)
        for i, a in enumerate(cols):
            for b in cols[i + 1:]:
                want = es.independence_test(df[a], df[b], n_resamples=199, rng=3).pvalue
                assert res.pvalues.loc[a, b] == res.pvalues.loc[b, a] == want, (a, b)
        iu = np.triu_indices(4, 1)
        np.testing.assert_allclose(res.adjusted.to_numpy()[iu], _bh_loop(list(res.pvalues.to_numpy()[iu])),
                                   rtol=1e-15)
        assert res.pvalues.loc["x", "sq"] == pytest.approx(1 / 200)

    def test_exact_when_few_rows(self):
        df = self._frame().iloc[:6]
        res = es.distance_correlation_matrix(df, pvalue="permutation", adjust=None)
        assert res.exact and res.n_resamples == 720 and res.seed is None
        want = es.independence_test(df["x"], df["z"]).pvalue
        assert res.pvalues.loc["x", "z"] == want

    def test_bad_input(self):
        with pytest.raises(ValueError, match="`pvalue`"):
            es.distance_correlation_matrix(self._frame(), pvalue="perm")
        with pytest.raises(ValueError, match="n_resamples"):
            es.distance_correlation_matrix(self._frame(), pvalue="permutation", n_resamples=0)


class TestStreamedPermutations:
    """Beyond ``memory_budget`` the permutation test forms every term from the data."""

    @pytest.mark.parametrize("metric,dtype", [("energy", np.float64), ("laplacian", np.float64),
                                              ("energy", np.float32)])
    def test_equals_the_matrix_path(self, metric, dtype):
        rng = np.random.default_rng(5)
        x = rng.normal(size=(61, 3)).astype(dtype)
        y = (np.abs(x[:, :2]) + rng.normal(size=(61, 2))).astype(dtype)
        for stat in ("dcov", "dcor"):
            a = es.independence_test(x, y, statistic=stat, n_resamples=101, rng=2, metric=metric)
            b = es.independence_test(x, y, statistic=stat, n_resamples=101, rng=2, metric=metric,
                                     memory_budget=1000)            # 16 n² > 1000: streamed
            np.testing.assert_allclose(b.null_distribution, a.null_distribution, rtol=1e-12)
            assert b.pvalue == a.pvalue and b.statistic == a.statistic

    def test_against_the_definition_and_threads(self):
        rng = np.random.default_rng(6)
        x, y = rng.normal(size=(23, 2)), rng.normal(size=23)
        res = es.independence_test(x, y, n_resamples=9, rng=3, memory_budget=100, n_threads=2)
        gen = np.random.default_rng(3)
        for r in range(9):
            want = 23 * ref_dcov(x, y[gen.permutation(23)])[0][0]      # n V², y permuted
            assert res.null_distribution[r] == pytest.approx(want, rel=1e-11)
        one = es.independence_test(x, y, n_resamples=9, rng=3, memory_budget=100, n_threads=1)
        np.testing.assert_array_equal(one.null_distribution, res.null_distribution)

    def test_rows_split_over_calls(self, monkeypatch):
        # a small CALL_WORK splits every batch's rows over many calls (Ctrl-C between them):
        # the same bits as one call per batch
        from energystats._lib import _dependence
        from energystats.dependence import _products

        rng = np.random.default_rng(8)
        x, y = rng.normal(size=(41, 3)), rng.normal(size=(41, 2))
        whole = es.independence_test(x, y, n_resamples=19, rng=4, memory_budget=100)
        calls = []
        kernel = _dependence.streamed_permuted_products
        monkeypatch.setattr(_products, "CALL_WORK", 2000.0)
        monkeypatch.setattr(_dependence, "streamed_permuted_products",
                            lambda *a: calls.append(a[11:13]) or kernel(*a))
        split = es.independence_test(x, y, n_resamples=19, rng=4, memory_budget=100)
        assert len(calls) > 19 and all(i1 > i0 for i0, i1 in calls)
        np.testing.assert_array_equal(split.null_distribution, whole.null_distribution)

    def test_permuted_products_kernel(self):
        # the compiled sum Σ_ij A_ij B_{p_i p_j} against math.fsum, with 16-bit and native
        # indices (the same bits), for n below, at and above the 4-wide inner step
        from energystats._lib import _dependence

        rng = np.random.default_rng(12)
        for n in (1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 67):
            A = rng.normal(size=(n, n))
            B = rng.normal(size=(n, n))
            A, B = A + A.T, B + B.T
            P = np.argsort(rng.random((6, n)), axis=1)
            wide, narrow = np.empty(6), np.empty(6)
            _dependence.permuted_products(A, B, P, wide, 2)
            _dependence.permuted_products(A, B, P.astype(np.uint16), narrow, 1)
            np.testing.assert_array_equal(wide, narrow)
            for r, p in enumerate(P):
                terms = (A * B[np.ix_(p, p)]).ravel()
                bound = math.fsum(np.abs(terms))
                assert abs(wide[r] - math.fsum(terms)) <= 1e-14 * bound

    def test_tiled_products_kernel(self):
        # the tiled kernel (rows of A in blocks, pairs bucketed by the block of B's rows) gives
        # the row-by-row kernel's bits for every block shape, R, thread count and index type
        from energystats._lib import _dependence

        rng = np.random.default_rng(13)
        for n in (1, 2, 5, 9, 63, 64, 65, 130):
            A = rng.normal(size=(n, n))
            B = rng.normal(size=(n, n))
            A, B = A + A.T, B + B.T
            for R in (1, 3, 4, 13):
                P = np.argsort(rng.random((R, n)), axis=1)
                want = np.empty(R)
                _dependence.permuted_products(A, B, P, want, 1)
                for a, b in ((1, 1), (3, 7), (64, 64), (200, 2)):
                    for nt in (1, 2):
                        for dt in (np.uint16, np.intp):
                            got = np.full(R, np.nan)
                            _dependence.permuted_products_tiled(
                                A, B, P.astype(dt), got, np.empty((R, n)),
                                np.empty((nt, a * R), dtype=np.int32),
                                np.empty((nt, n // b + 2), dtype=np.intp), a, b, nt)
                            np.testing.assert_array_equal(got, want, err_msg=f"{n} {R} {a} {b} {nt}")
                for r, p in enumerate(P):   # and the exact sum of the terms (math.fsum)
                    terms = (A * B[np.ix_(p, p)]).ravel()
                    assert abs(got[r] - math.fsum(terms)) <= 1e-14 * math.fsum(np.abs(terms))
        with pytest.raises(ValueError, match="scratch"):
            _dependence.permuted_products_tiled(A, B, P, want, np.empty((R, n)),
                                                np.empty((1, 1), dtype=np.int32),
                                                np.empty((1, n + 2), dtype=np.intp), 1, 1, 1)
        with pytest.raises(ValueError, match="positive"):
            _dependence.permuted_products_tiled(A, B, P, want, np.empty((R, n)),
                                                np.empty((1, R), dtype=np.int32),
                                                np.empty((1, n + 2), dtype=np.intp), 1, 0, 1)
        with pytest.raises(ValueError, match="positive"):
            _dependence.permuted_products_tiled(A, B, P, want, np.empty((R, n)),
                                                np.empty((1, R), dtype=np.int32),
                                                np.empty((1, n + 2), dtype=np.intp), 0, 1, 1)

    def test_tiled_products_in_the_test(self, monkeypatch):
        # n and the batch large enough for the tiled kernel: it is used, and the null
        # distribution is that of the row-by-row kernel, bit for bit
        from energystats._lib import _dependence
        from energystats.dependence import _products

        rng = np.random.default_rng(14)
        x, y = rng.normal(size=(700, 2)), rng.normal(size=(700, 1))
        calls = []
        tiled = _dependence.permuted_products_tiled
        monkeypatch.setattr(_dependence, "permuted_products_tiled",
                            lambda *a: calls.append(a[2].shape[0]) or tiled(*a))
        res = es.independence_test(x, y, n_resamples=300, rng=5)
        assert calls == [300]
        monkeypatch.setattr(_products._MatrixProducts, "TILED_MIN_N", 10**9)
        row = es.independence_test(x, y, n_resamples=300, rng=5)
        assert calls == [300]
        np.testing.assert_array_equal(res.null_distribution, row.null_distribution)
        assert res.pvalue == row.pvalue
        gen = np.random.default_rng(5)
        for r in range(3):   # and the plain O(n²) statistic of the permuted data
            want = 700 * ref_dcov(x, y[gen.permutation(700)])[0][0]
            assert res.null_distribution[r] == pytest.approx(want, rel=1e-11)

    def test_strata_and_exact(self):
        x = np.arange(7.0)
        y = np.array([3.0, 1, 4, 1, 5, 9, 2])
        a = es.independence_test(x, y, exact=True)
        b = es.independence_test(x, y, exact=True, memory_budget=10)
        assert a.pvalue == b.pvalue and a.n_resamples == 5040
        g = [0, 0, 0, 1, 1, 1, 1]
        a = es.independence_test(x, y, strata=g, n_resamples=50, rng=1)
        b = es.independence_test(x, y, strata=g, n_resamples=50, rng=1, memory_budget=10)
        np.testing.assert_allclose(b.null_distribution, a.null_distribution, rtol=1e-12)


# -- issue 30: values and constancy where the squares leave the float64 range --------------

def _issue30_data():
    """Small integers: the exact V-statistics are rationals (tests/reference.exact_dcov_1d)."""
    x = np.array([3.0, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8])
    y = np.array([2.0, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5])
    return x, y


def _exact_roots(x, y):
    """dCov, dVarX, dVarY and dCor of the unscaled data from the exact rationals (each root
    correctly rounded from a correctly rounded square)."""
    vxy, vxx, vyy = (float(exact_dcov_1d(a, b)[0]) for a, b in ((x, y), (x, x), (y, y)))
    return math.sqrt(vxy), math.sqrt(vxx), math.sqrt(vyy), math.sqrt(vxy / math.sqrt(vxx * vyy))


class TestScaleRange:
    """dCov = 2**k dCov(x, y) for x, y scaled by 2**k: exact in binary, so the expected values
    are the exact rationals' roots times a power of two."""

    # 2**515 ≈ 1e155 (the squares overflow), 2**-532 ≈ 1e-160 (subnormal squares), 2**-565 ≈
    # 1e-170 and 2**-1000 ≈ 1e-301 (squares below the subnormals)
    @pytest.mark.parametrize("k", [515, -532, -565, -1000])
    def test_roots_in_range_when_squares_are_not(self, k):
        x, y = _issue30_data()
        dcov, dvx, dvy, dcor = _exact_roots(x, y)
        xs, ys = np.ldexp(x, k), np.ldexp(y, k)
        want = math.ldexp(dcov, k)
        for method in ("pairwise", "sorted"):
            r = es.distance_stats(xs, ys, method=method)
            assert r.dcov == pytest.approx(want, rel=4e-16)
            assert (r.dvar_x, r.dvar_y) == pytest.approx((math.ldexp(dvx, k), math.ldexp(dvy, k)), rel=4e-16)
            assert r.to_frame().loc["V", "dcov"] == r.dcov
            assert r.dcor == pytest.approx(dcor, rel=4e-16)
        assert es.distance_covariance(xs, ys) == pytest.approx(want, rel=4e-16)
        assert es.distance_correlation(xs, ys) == pytest.approx(dcor, rel=4e-16)
        # the squares: correctly scaled where they are normal floats, inf or ≤ the smallest
        # normal where the true value lies beyond float64's range
        sq = es.distance_covariance_sqr(xs, ys)
        true_sq = float(exact_dcov_1d(x, y)[0])
        if 2 * k > 1000:
            assert sq == math.inf
        elif 2 * k < -1030:
            assert 0.0 <= sq < np.finfo(float).tiny
        # the precomputed matrices and the Dask backend take the same route
        D = lambda v: np.abs(np.subtract.outer(v, v))  # noqa: E731
        assert es.distance_covariance(D(xs), D(ys), metric="precomputed") == pytest.approx(want, rel=4e-16)
        assert es.distance_correlation(D(xs), D(ys), metric="precomputed") == pytest.approx(dcor, rel=4e-16)
        da = pytest.importorskip("dask.array")
        X, Y = da.from_array(xs, chunks=5), da.from_array(ys, chunks=5)
        assert es.distance_covariance(X, Y) == pytest.approx(want, rel=4e-16)
        assert es.distance_correlation(X, Y) == pytest.approx(dcor, rel=4e-16)
        del true_sq

    def test_squares_in_range_are_scaled_once(self):
        # 2**-530 on x and 2**-520 on y: the square 2**-1050 dCov² is subnormal (few digits), its
        # factors were not; 2**-500 and 2**-505: the square is a normal float, exact to rounding
        x, y = _issue30_data()
        v, u = exact_dcov_1d(x, y)
        r = es.distance_stats(np.ldexp(x, -500), np.ldexp(y, -505))
        assert r.dcov_sqr == pytest.approx(math.ldexp(float(v), -1005), rel=4e-16)
        assert r.dcov_u == pytest.approx(math.ldexp(float(u), -1005), rel=1e-13)  # U: cancellation
        sub = es.distance_covariance_sqr(np.ldexp(x, -530), np.ldexp(y, -520))
        assert sub == pytest.approx(math.ldexp(float(v), -1050), abs=2 * 2.0**-1074)

    def test_u_centring_and_partial_in_working_units(self):
        x, y = _issue30_data()
        D = lambda v: np.abs(np.subtract.outer(v, v))  # noqa: E731
        # U-centring: the row sums of D·2**1019 overflow, its entries do not
        n = x.size
        Dx = D(x)
        r = Dx.sum(axis=1)
        want = np.array([[0.0 if i == j else float(Fraction(int(Dx[i, j])) - Fraction(int(r[i]), n - 2)
                                                  - Fraction(int(r[j]), n - 2)
                                                  + Fraction(int(r.sum()), (n - 1) * (n - 2)))
                          for j in range(n)] for i in range(n)])
        np.testing.assert_allclose(es.u_center(np.ldexp(Dx, 1019)), np.ldexp(want, 1019), rtol=1e-14)
        np.testing.assert_allclose(es.d_center(np.ldexp(Dx, 1019)), np.ldexp(es.d_center(Dx), 1019),
                                   rtol=1e-14)
        # u_product of the U-centred matrices is the exact U statistic (tiny and huge factors)
        Ux, Uy = es.u_center(np.ldexp(Dx, -600)), es.u_center(np.ldexp(D(y), 500))
        assert es.u_product(Ux, Uy) == pytest.approx(math.ldexp(float(exact_dcov_1d(x, y)[1]), -100),
                                                     rel=1e-14)
        # the partial statistics of tiny distance matrices: pdcor is scale-free
        z = np.array([1.0, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144])
        Ds = [np.ldexp(D(v), -1000) for v in (x, y, z)]
        want_pdcor = es.partial_distance_correlation(x, y, z)
        assert es.partial_distance_correlation(*Ds, metric="precomputed") == pytest.approx(want_pdcor, rel=1e-12)
        assert es.partial_distance_covariance(np.ldexp(x, 515), np.ldexp(y, -515), z) == pytest.approx(
            es.partial_distance_covariance(x, y, z), rel=1e-12)


class TestConstancyFromTheData:
    """Issue 30 item 4: "`x` is constant" only when its rows are (or its distances are 0)."""

    @pytest.mark.parametrize("kx,ky", [(-560, -560), (-1000, -1000), (996, -996)])
    def test_tiny_and_mixed_scales(self, kx, ky):
        x, y = _issue30_data()
        dcor = _exact_roots(x, y)[3]
        xs, ys = np.ldexp(x, kx), np.ldexp(y, ky)
        assert es.distance_correlation(xs, ys) == pytest.approx(dcor, rel=4e-16)
        assert es.distance_correlation_sqr(xs, ys, estimator="U") == pytest.approx(
            es.distance_correlation_sqr(x, y, estimator="U"), rel=1e-14)
        assert es.distance_correlation_ttest(xs, ys).pvalue == pytest.approx(
            es.distance_correlation_ttest(x, y).pvalue, rel=1e-12)
        base = es.independence_test(x, y, n_resamples=99, rng=5)
        for kw in ({}, {"memory_budget": 10}, {"pvalue_method": "asymptotic"}):
            res = es.independence_test(xs, ys, n_resamples=99, rng=5, **kw)
            ref = base if not kw or "memory_budget" in kw else es.independence_test(x, y, **kw)
            assert res.pvalue == ref.pvalue
        D = lambda v: np.abs(np.subtract.outer(v, v))  # noqa: E731
        assert es.distance_correlation(D(xs), D(ys), metric="precomputed") == pytest.approx(dcor, rel=4e-16)
        assert es.independence_test(D(xs), D(ys), metric="precomputed", n_resamples=99,
                                    rng=5).pvalue == base.pvalue
        da = pytest.importorskip("dask.array")
        assert es.distance_correlation(da.from_array(xs, chunks=5), da.from_array(ys, chunks=5)) == \
            pytest.approx(dcor, rel=4e-16)

    def test_constant_data_still_refused(self):
        x, y = _issue30_data()
        c = np.full(12, 0.1)
        for f in (es.distance_correlation, es.distance_correlation_ttest):
            with pytest.raises(ValueError, match="`x` is constant"):
                f(c, y)
            with pytest.raises(ValueError, match="`y` is constant"):
                f(x, np.ldexp(c, -1040))
        with pytest.raises(ValueError, match="`x` is constant"):
            es.independence_test(np.zeros((12, 12)), np.abs(np.subtract.outer(y, y)), metric="precomputed")
        da = pytest.importorskip("dask.array")
        with pytest.raises(ValueError, match="`x` is constant"):
            es.distance_correlation(da.from_array(c, chunks=5), da.from_array(y, chunks=5))


class TestStrataAlignment:
    """Issue 30 item 2: a strata Series is aligned with DataFrame/Series x and y by index."""

    def test_series_strata_follow_the_index(self):
        rng = np.random.default_rng(4)
        n = 40
        idx = pd.Index([f"r{i}" for i in rng.permutation(n)])
        g = np.repeat([0, 1, 2, 3], 10)
        x = pd.DataFrame({"a": rng.normal(size=n) + g}, index=idx)
        y = pd.Series(rng.normal(size=n) + g, index=idx, name="b")
        s = pd.Series(g, index=idx)
        want = es.independence_test(x, y, strata=g, n_resamples=199, rng=3)  # by position = aligned
        shuffled = s.sample(frac=1.0, random_state=1)
        assert not shuffled.index.equals(idx)
        got = es.independence_test(x, y, strata=shuffled, n_resamples=199, rng=3)
        assert got.pvalue == want.pvalue
        np.testing.assert_array_equal(got.null_distribution, want.null_distribution)
        df = pd.concat([x, y], axis=1)
        assert es.independence_test("a", "b", data=df, strata=shuffled, n_resamples=199,
                                    rng=3).pvalue == want.pvalue
        # an index that does not match is an error naming `strata`
        with pytest.raises(ValueError, match="`strata` is indexed but its index does not match"):
            es.independence_test(x, y, strata=pd.Series(g), n_resamples=19, rng=3)
        pytest.importorskip("dask")
        got = es.independence_test(x, y, strata=shuffled, n_resamples=199, rng=3, backend="dask")
        assert got.pvalue == es.independence_test(x, y, strata=g, n_resamples=199, rng=3,
                                                  backend="dask").pvalue


def test_partial_test_noise_projection_is_zero():
    """Issue 30 item 8: y = c against z = c (projection exactly 0) and z = 0.1 c (the projection
    is rounding noise, |P_y|² ≈ 1e-33 against |P_x|² ≈ 0.02): the same statistic (0, with the
    warning) and the same p-value (1), as the statistic's own floor decides."""
    a = np.array([[1.0], [1], [2], [2], [3]])
    c = np.array([[1.0], [2], [2], [1], [2]])
    out = []
    for z in (c, 0.1 * c, 3.7 * c + 1):
        with pytest.warns(UserWarning, match="undefined; returning 0"):
            res = es.partial_distance_correlation_test(a, c, z, n_resamples=5, rng=1)
        out.append((res.statistic, res.pvalue, list(res.null_distribution)))
    assert out[0] == out[1] == out[2] == (0.0, 1.0, [0.0] * 5)
    pytest.importorskip("dask")
    with pytest.warns(UserWarning, match="undefined; returning 0"):
        res = es.partial_distance_correlation_test(a, c, 0.1 * c, n_resamples=5, rng=1, backend="dask")
    assert (res.statistic, res.pvalue) == (0.0, 1.0)


def test_dcor_matrix_refuses_a_budget_below_two_columns():
    """Issue 30 item 9: one column's n×n data larger than `memory_budget` is a MemoryError that
    names the budget, the need and what to do (not a silent overrun); a budget that fits works."""
    x = np.random.default_rng(0).normal(size=(200, 3))
    # two columns' upper triangles: 2 × 8 × 200 × 201 / 2 bytes = 314.1 KiB
    with pytest.raises(MemoryError, match=r"at least 314\.1 KiB .*budget of 256\.0 KiB.*Raise `memory_budget`"):
        es.distance_correlation_matrix(x, memory_budget=2**18)
    # the permutation p-values hold two 200×200 double-centred matrices: 625 KiB
    # refused before any warning about its p-values (n_resamples=9 keeps the call cheap; with
    # Holm's adjustment no pair could reach alpha, which used to be said before the refusal)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(MemoryError, match=r"at least 625\.0 KiB .*budget of 512\.0 KiB"):
            es.distance_correlation_matrix(x, pvalue="permutation", n_resamples=9, rng=1,
                                           memory_budget=2**19)
    want = es.distance_correlation_matrix(x)
    pd.testing.assert_frame_equal(es.distance_correlation_matrix(x, memory_budget=2**19).dcor, want.dcor)


class TestMatrixPvalues:
    """Issue 30: the dCor matrix's permutation p-values can reach alpha after adjustment, its
    diagonals are NaN, numeric_only= is accepted, a constant column is refused."""

    def _frame(self, n=15, p=11):
        rng = np.random.default_rng(2)
        x = rng.normal(size=n)
        cols = {"x": x, "x2": 3 * x + 1}  # dCor 1: no permutation reaches it
        for j in range(p - 2):
            cols[f"z{j}"] = rng.normal(size=n)
        return pd.DataFrame(cols)

    def test_default_resamples_reach_alpha_over_55_pairs(self):
        df = self._frame()
        res = es.distance_correlation_matrix(df, pvalue="permutation", rng=1)
        # 55 pairs, alpha 0.05: R + 1 = 5 * 55 / 0.05 = 5500, up to 6000
        assert res.n_resamples == 5999
        assert res.pvalues.loc["x", "x2"] == 1 / 6000    # never reached by a permutation
        assert res.adjusted.loc["x", "x2"] == pytest.approx(55 / 6000, rel=1e-12)
        assert res.adjusted.loc["x", "x2"] < 0.05
        with pytest.warns(UserWarning, match=r"smallest adjusted p-value a pair can reach is 0\.055 > alpha"):
            low = es.distance_correlation_matrix(df, pvalue="permutation", n_resamples=999, rng=1)
        assert low.adjusted.loc["x", "x2"] == pytest.approx(0.055, rel=1e-12)
        assert es.distance_correlation_matrix(df.iloc[:, :3], pvalue="permutation", rng=1).n_resamples == 999

    def test_diagonals_nan(self):
        df = self._frame(n=12, p=4)
        for kw in ({"pvalue": "ttest"}, {"pvalue": "permutation", "n_resamples": 199, "rng": 1}):
            res = es.distance_correlation_matrix(df, **kw)
            assert np.isnan(np.diag(res.pvalues.to_numpy())).all()
            assert np.isnan(np.diag(res.adjusted.to_numpy())).all()
            assert not np.isnan(res.to_frame()["pvalue_adjusted"]).any()

    def test_numeric_only(self):
        df = self._frame(n=12, p=4)
        mixed = df.assign(s=list("abcabcabcabc"))
        res = es.distance_correlation_matrix(mixed, numeric_only=True)
        assert res.left_out == ["s"] and list(res.dcor.columns) == list(df.columns)
        with pytest.raises(TypeError, match=r"non-numeric column\(s\) \['s'\]"):
            es.distance_correlation_matrix(mixed)

    def test_constant_column(self):
        df = self._frame(n=12, p=4)
        # a constant column whose rounded mean is not its value (0.1 × 12 / 12 ≠ 0.1)
        with pytest.raises(ValueError, match=r"constant column\(s\) \['c'\]"):
            es.distance_correlation_matrix(df.assign(c=np.full(12, 0.1)))


def test_mutual_test_refuses_a_constant_variable_with_a_rounded_mean():
    """0.1 repeated 12 times: its mean is not 0.1, so its centred values were not 0 and the
    constant variable slipped through as a term 0 (issue 30 item 4, constancy from the data)."""
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="variable 'x1' is constant"):
        es.mutual_independence_test(rng.normal(size=12), np.full(12, 0.1), rng.normal(size=12),
                                    n_resamples=9, rng=1)
