"""The independence coefficient I_n (R energy's ``mvI``) and its permutation test (``mvI.test``):
against R, against a plain-NumPy reference written from the paper's definition with explicit
loops, and the permutation shortcut of the test (G_{k, pi(k)}) against recomputation."""
import itertools
import math
import pathlib

import numpy as np
import pytest

import energystats as es
from energystats.datasets import load_iris
from energystats.dependence import mvi

HERE = pathlib.Path(__file__).parent


def _ref_coefficient(x, y):
    # Bakirov, Rizzo & Székely (2006): Z_k = (X_k, Y_k), W_ij = (X_i, Y_j) the product sample;
    # I² = (2 E|Z-W| - E|Z-Z'| - E|W-W'|) / (E|X-X'| + E|Y-Y'| - E|W-W'|), every expectation
    # a mean over all the points of the empirical distributions (V-statistics), explicit loops
    x = np.asarray(x, dtype=float).reshape(len(x), -1)
    y = np.asarray(y, dtype=float).reshape(len(y), -1)
    n = len(x)
    Z = [np.concatenate([x[k], y[k]]) for k in range(n)]
    W = [np.concatenate([x[i], y[j]]) for i in range(n) for j in range(n)]
    zw = sum(np.linalg.norm(z - w) for z in Z for w in W) / (n * n**2)
    zz = sum(np.linalg.norm(z - v) for z in Z for v in Z) / n**2
    ww = sum(np.linalg.norm(w - v) for w in W for v in W) / n**4
    xx = sum(np.linalg.norm(x[i] - x[k]) for i in range(n) for k in range(n)) / n**2
    yy = sum(np.linalg.norm(y[j] - y[l]) for j in range(n) for l in range(n)) / n**2
    return math.sqrt((2 * zw - zz - ww) / (xx + yy - ww))


def _r_example(k):
    # The data of the mvI examples of R energy's help page (?indep.test; ?mvI.test has none),
    # drawn once in R 4.2.2 and written with 17 significant digits:
    #   example 1:  set.seed(1); x <- matrix(rnorm(60), nrow=20, ncol=3)
    #               y <- matrix(rnorm(40), nrow=20, ncol=2)
    #   example 2:  library(MASS); set.seed(1)
    #               Sigma <- matrix(c(1, .1, 0, 0 , 1, 0, 0 ,.1, 1), 3, 3)
    #               x <- mvrnorm(30, c(0, 0, 0), diag(3))
    #               y <- mvrnorm(30, c(0, 0, 0), Sigma) * x
    # read with Python's float() (correctly rounded), not a fast CSV float parser
    rows = [line.split(",") for line in (HERE / "mvi_r_examples.csv").read_text().split()[1:]]
    rows = [[float(v) if v else np.nan for v in r[1:]] for r in rows if int(r[0]) == k]
    data = np.array(rows)
    data = data[:, ~np.isnan(data).any(axis=0)]
    return data[:, :3], data[:, 3:]


class TestIndependenceCoefficient:
    def test_against_r_help_examples(self):
        # R 4.2.2, energy 1.7-11, on the data of _r_example:
        #   sprintf("%.17g", mvI(x, y))  ->  0.23411963655687718  (example 1)
        #                                    0.19925946706336878  (example 2)
        # (an extended-precision sum gives 0.234119636556894177 and 0.199259467063518663: the
        # difference is R's sequential sum of n⁴ terms, amplified ~300× by the numerator's
        # cancellation; this package is within 2e-14 of those)
        for k, want in ((1, 0.23411963655687718), (2, 0.19925946706336878)):
            x, y = _r_example(k)
            assert es.independence_coefficient(x, y) == pytest.approx(want, rel=1e-12)

    def test_against_r_iris(self):
        # sprintf("%.17g", mvI(iris[1:50, 1:2], iris[1:50, 3:4]))  ->  0.15349160900039022
        # np.longdouble reference (all five terms in 80-bit):         0.15349160899993984
        # R's sequential n⁴ = 6.25e6-term sum is off by 2.9e-12 (relative) here, the package by
        # 5e-14.  (On all 150 rows, mvI(iris[, 1], iris[, 2]) = 0.18323950191248126 is off by
        # 4.3e-8 from the extended-precision 0.18323950982987717: not a test case.)
        iris = load_iris()
        got = es.independence_coefficient(iris.iloc[:50, :2], iris.iloc[:50, 2:4])
        assert got == pytest.approx(0.15349160900039022, rel=5e-12)
        assert got == pytest.approx(0.15349160899993984, rel=2e-13)

    def test_against_r_small_cases(self):
        # sprintf("%.17g", mvI(1:5, 1:5))       ->  0.62562727650192584
        # sprintf("%.17g", mvI(c(1,2), c(3,5))) ->  1
        assert es.independence_coefficient(np.arange(1.0, 6.0), np.arange(1.0, 6.0)) == \
            pytest.approx(0.62562727650192584, rel=1e-14)
        assert es.independence_coefficient([1.0, 2.0], [3.0, 5.0]) == 1.0

    @pytest.mark.parametrize("n, p, q, seed", [(5, 1, 1, 0), (6, 2, 3, 1), (7, 3, 1, 2)])
    def test_against_loop_reference(self, n, p, q, seed):
        rng = np.random.default_rng(seed)
        x = rng.normal(size=(n, p))
        y = rng.normal(size=(n, q)) + x[:, :1] ** 2
        assert es.independence_coefficient(x, y) == pytest.approx(_ref_coefficient(x, y), rel=1e-12)

    def test_invariances_and_range(self):
        rng = np.random.default_rng(3)
        x = rng.normal(size=(25, 2))
        y = np.abs(x[:, :1]) + 0.3 * rng.normal(size=(25, 1))
        I = es.independence_coefficient(x, y)
        assert 0 < I < 1
        order = rng.permutation(25)  # rows reordered jointly: the same pairs
        assert es.independence_coefficient(x[order], y[order]) == pytest.approx(I, rel=1e-12)
        # a common scale and a rotation of x change no ratio of distances
        Q, _ = np.linalg.qr(rng.normal(size=(2, 2)))
        assert es.independence_coefficient(3 * x @ Q, 3 * y) == pytest.approx(I, rel=1e-12)
        assert es.independence_coefficient(y, x) == pytest.approx(I, rel=1e-12)
        # squares of 1e200 and 1e-200 overflow and underflow: the data are rescaled first
        for c in (1e200, 1e-200):
            assert es.independence_coefficient(c * x, c * y) == pytest.approx(I, rel=1e-12)

    def test_data_frame_columns(self):
        iris = load_iris()
        a = es.independence_coefficient(["sepal_length", "sepal_width"], "petal_length", data=iris[:40])
        b = es.independence_coefficient(iris.iloc[:40, :2].to_numpy(), iris.iloc[:40, 2].to_numpy())
        assert a == b

    # -- input validation --
    def test_refusals(self, monkeypatch):
        with pytest.raises(ValueError, match="at least 2 rows.*n=1"):
            es.independence_coefficient([1.0], [2.0])
        with pytest.raises(ValueError, match="`y` is constant"):
            es.independence_coefficient([1.0, 2.0, 3.0], [2.0, 2.0, 2.0])
        with pytest.raises(ValueError, match="same number of rows"):
            es.independence_coefficient([1.0, 2.0, 3.0], [2.0, 1.0])
        monkeypatch.setattr(mvi, "MAX_PAIRS", 1e4)
        with pytest.raises(ValueError, match=r"n=30 rows: the coefficient takes about 2e\+05 square "
                                             r"roots.*largest n accepted is 14"):
            es.independence_coefficient(np.arange(30.0), np.arange(30.0) ** 2)


def test_the_largest_n_named_is_the_largest_accepted(monkeypatch):
    """The refusal named n = 441 while 447 was accepted (its search stepped down by n // 64;
    issue 51): the n it names runs and one more row is refused."""
    import re

    monkeypatch.setattr(mvi, "MAX_PAIRS", 2e7)
    g = np.random.default_rng(0)
    with pytest.raises(ValueError, match="largest n accepted is") as err:
        es.independence_coefficient(g.normal(size=400), g.normal(size=400))
    n = int(re.search(r"largest n accepted is (\d+)", str(err.value)).group(1))
    assert n > 64
    es.independence_coefficient(g.normal(size=n), g.normal(size=n))
    with pytest.raises(ValueError, match=f"n={n + 1} rows"):
        es.independence_coefficient(g.normal(size=n + 1), g.normal(size=n + 1))


class TestIndependenceCoefficientTest:
    def test_statistic_against_r(self):
        # R: r <- mvI.test(x, y, R = 0); sprintf("%.17g", c(r$statistic, r$estimate))
        #   example 1: 1.0962400844304852  0.23411963655687718   (statistic named "nI^2")
        #   example 2: 1.1911300564313323  0.19925946706336878
        for k, stat, est in ((1, 1.0962400844304852, 0.23411963655687718),
                             (2, 1.1911300564313323, 0.19925946706336878)):
            x, y = _r_example(k)
            res = es.independence_coefficient_test(x, y, n_resamples=0)
            assert res.statistic == pytest.approx(stat, rel=2e-12)  # n I², twice I's error
            assert res.estimate == pytest.approx(est, rel=1e-12)
            assert res.statistic == pytest.approx(len(x) * res.estimate**2, rel=1e-14)
            assert res.pvalue is None and res.n_resamples == 0

    def test_exact_null_against_loop_reference(self):
        # all 4! permutations of y's rows, each statistic recomputed from the definition
        rng = np.random.default_rng(4)
        x, y = rng.normal(size=(4, 2)), rng.normal(size=(4, 1))
        res = es.independence_coefficient_test(x, y, n_resamples=999)
        assert res.exact and res.n_resamples == 24 and res.seed is None
        want = np.array([4 * _ref_coefficient(x, y[list(p)]) ** 2
                         for p in itertools.permutations(range(4))])
        np.testing.assert_allclose(res.null_distribution, want, rtol=1e-11)
        obs = 4 * _ref_coefficient(x, y) ** 2
        assert res.statistic == pytest.approx(obs, rel=1e-12)
        assert res.pvalue == np.sum(want >= obs * (1 - 1e-12)) / 24
        assert res.pvalue_se == 0

    def test_random_null_is_the_statistic_of_the_permuted_data(self):
        # the O(n²) shortcut Σ_k G[k, π(k)] against recomputing I_n for y[π]; the permutations
        # are those of the package's engine, drawn from the recorded seed
        from energystats._core._permutation import draw_permutations

        rng = np.random.default_rng(5)
        x = rng.normal(size=(15, 2))
        y = x[:, 1:] ** 2 + rng.normal(size=(15, 1))
        res = es.independence_coefficient_test(x, y, n_resamples=20, rng=7)
        assert res.seed == 7 and not res.exact and res.null_distribution.shape == (20,)
        perms = draw_permutations(np.random.default_rng(7), np.arange(15), 20)
        want = [15 * es.independence_coefficient(x, y[p]) ** 2 for p in perms]
        np.testing.assert_allclose(res.null_distribution, want, rtol=1e-12)
        again = es.independence_coefficient_test(x, y, n_resamples=20, rng=7)
        np.testing.assert_array_equal(again.null_distribution, res.null_distribution)
        assert res.pvalue == (1 + np.sum(res.null_distribution >= res.statistic)) / 21

    def test_dependent_and_independent(self):
        rng = np.random.default_rng(6)
        x = rng.normal(size=30)
        res = es.independence_coefficient_test(x, np.exp(x), n_resamples=99, rng=1)
        # R's mvI.test reports 0 here: its p-value is #{T* >= T} / R (multiples of 1/R:
        # on example 1, set.seed(1); mvI.test(x, y, R = 37)$p.value * 37 is 12; x <- cbind(1:5);
        # set.seed(1); mvI.test(x, x, R = 20000)$p.value * 20000 is 325, ties counted)
        assert res.pvalue == 0.01
        res = es.independence_coefficient_test(x, rng.normal(size=30), n_resamples=99, rng=1)
        assert res.pvalue > 0.05
        frame = res.to_frame()
        assert list(frame.columns[:2]) == ["statistic", "pvalue"] and frame.n_samples.iloc[0] == 30
        assert "IndependenceCoefficientTestResult(statistic=" in repr(res)

    def test_columns_recorded(self):
        iris = load_iris()[:30]
        res = es.independence_coefficient_test(["sepal_length", "sepal_width"], "petal_width",
                                               data=iris, n_resamples=9, rng=0)
        assert res.columns_x == ["sepal_length", "sepal_width"] and res.columns_y == ["petal_width"]

    # -- input validation --
    def test_refusals(self, monkeypatch):
        x = np.arange(10.0)
        with pytest.raises(ValueError, match="`exact` must be None, True or False; got 1"):
            es.independence_coefficient_test(x, x**2, exact=1)
        with pytest.raises(ValueError, match="n_resamples"):
            es.independence_coefficient_test(x, x**2, n_resamples=-1)
        with pytest.raises(ValueError, match="`exact=True`"):
            es.independence_coefficient_test(x, x**2, exact=True)
        with pytest.raises(TypeError, match="`rng`"):
            es.independence_coefficient_test(x, x**2, rng=True)
        monkeypatch.setattr(mvi, "MAX_PAIRS", 1e4)
        with pytest.raises(ValueError, match="n=10 rows: the test with n_resamples=999 takes "
                                             "about.*largest n accepted is 3"):
            es.independence_coefficient_test(x, x**2, n_resamples=999)
