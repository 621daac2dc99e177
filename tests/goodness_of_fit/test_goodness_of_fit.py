"""Energy goodness-of-fit tests: normality, Poisson and SciPy families.

Reference values from R 4.2.2 with the R package energy 1.7.11, each with its command.
"""
import contextlib
import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

import energystats as es
from energystats.goodness_of_fit import normality
from energystats.goodness_of_fit._families import Family
from energystats.datasets import load_iris


def level_band(alpha, trials):
    """Two binomial standard errors around alpha."""
    se = math.sqrt(alpha * (1 - alpha) / trials)
    return alpha - 2 * se, alpha + 2 * se


def energy_by_loops(y, dist):
    """The statistic by its definition: E|y_i − Z| by quadrature of |y − z| f(z), E|Z − Z′|
    by a double integral's closed reduction 2∫F(1 − F), Σ_ij |y_i − y_j| by a double loop."""
    n = len(y)
    lo, hi = dist.support()

    def e_abs(v):
        a = integrate.quad(lambda z: (v - z) * dist.pdf(z), lo, v, limit=200)[0] if v > lo else 0.0
        b = integrate.quad(lambda z: (z - v) * dist.pdf(z), max(v, lo), hi, limit=200)[0]
        return a + b

    g = sum(e_abs(v) for v in y)
    md = 2 * integrate.quad(lambda z: dist.cdf(z) * dist.sf(z), lo, hi, limit=200)[0]
    pairs = sum(abs(a - b) for a in y for b in y)
    return 2 * g - n * md - pairs / n


class TestAgainstR:
    def test_normal_e_iris(self):
        # R> library(energy); print(normal.e(iris[1:50, 1]), digits = 15)
        # [1] 0.465029455282107
        x = load_iris().iloc[:50, 0]
        res = es.normality_test(x, n_resamples=0)
        assert res.statistic == pytest.approx(0.465029455282107, rel=1e-12)
        assert res.pvalue is None and res.columns == [x.name] and res.method == "none"

    def test_mvnorm_e_iris(self):
        # R> print(mvnorm.e(iris[1:50, 1:4]), digits = 15)
        # [1] 1.2033967029264
        x = load_iris().iloc[:50, :4]
        res = es.normality_test(x, n_resamples=0)
        assert res.statistic == pytest.approx(1.2033967029264, rel=1e-12)
        assert res.n_features == 4 and res.columns == list(x.columns)
        np.testing.assert_allclose(res.params["cov"], np.cov(x.to_numpy(), rowvar=False), rtol=1e-14)

    def test_limit_pvalue_iris(self):
        # R> normal.test(iris[1:50, 1], method = "limit")   (R energy's reference pages)
        # statistic = 0.46503, p-value = 0.2869
        # R's p-value comes from its table of 125 eigenvalues, whose sum is 0.3977 where the
        # limit's mean (the operator's trace) is 0.4231: the table's tail is too small, and
        # R's p-values are 12-13 % low.  tests/goodness_of_fit/test_gof_limit.py reproduces R's 0.2869 from
        # that table's summary and shows by simulating the statistic that the limit p-value
        # here is 0.3244 (Monte Carlo 0.3243 ± 0.003 at n = 2000).
        res = es.normality_test(load_iris().iloc[:50, 0], method="limit")
        assert res.pvalue == pytest.approx(0.3244140226, rel=1e-8)
        assert res.method == "limit" and res.n_resamples == 0 and res.pvalue_se is None


    def test_poisson_tests_against_R(self):
        # the public test uses the cancellation-free recursion for M-CvM/M-AD: equal to R's
        # values (tests/goodness_of_fit/test_gof_poisson.py's R_CASES, R energy 1.7.11) where R is accurate
        from .test_gof_poisson import R_CASES

        for cmd, x, m, e in R_CASES[:5]:
            res = es.poisson_test(x, statistic="all", n_resamples=0)
            assert res["m-cvm"].statistic == pytest.approx(m[0], rel=1e-11), cmd
            assert res["m-ad"].statistic == pytest.approx(m[1], rel=1e-11), cmd
            assert res["energy"].statistic == pytest.approx(e, rel=1e-12), cmd


class TestStatistic:
    def test_hypergeometric_form_at_d1_is_the_closed_form(self):
        y = np.concatenate([np.linspace(0, 8, 81), [12.0, 25.0, 37.5]])
        closed = 2 * stats.norm.pdf(y) + y * special.erf(y / math.sqrt(2))
        np.testing.assert_allclose(normality._mvn_expected_distance(y * y, 1), closed, rtol=1e-12, atol=0)

    @pytest.mark.parametrize("d", [2, 3, 4, 10])
    def test_hypergeometric_form_against_quadrature(self, d):
        # E‖y − Z‖ = E √W with W noncentral chi-square (d, ‖y‖²): one-dimensional quadrature
        for r in (0.0, 0.3, 1.7, 4.0, 9.0):
            w = stats.ncx2(d, r * r) if r > 0 else stats.chi2(d)
            want = integrate.quad(lambda t: math.sqrt(t) * w.pdf(t), 0, np.inf, limit=400,
                                  epsabs=0, epsrel=1e-13)[0]
            assert normality._mvn_expected_distance(r * r, d) == pytest.approx(want, rel=1e-9)

    def test_multivariate_path_at_d1_equals_the_sorted_path(self):
        x = np.random.default_rng(1).gamma(2.0, size=(137, 1))
        md = normality._normal_md(x, 1)[0]
        one = es.normality_test(x[:, 0], n_resamples=0).statistic
        assert md == pytest.approx(one, rel=1e-12)

    def test_univariate_against_the_definition(self):
        rng = np.random.default_rng(2)
        x = rng.standard_t(4, size=41)
        y = (x - x.mean()) / x.std(ddof=1)
        want = energy_by_loops(y, stats.norm())
        assert es.normality_test(x, n_resamples=0).statistic == pytest.approx(want, rel=1e-10)

    def test_multivariate_against_the_definition(self):
        rng = np.random.default_rng(3)
        x = rng.normal(size=(30, 3)) @ np.array([[1, 0.5, 0], [0, 1, 0.3], [0, 0, 2]])
        C = x - x.mean(0)
        w, V = np.linalg.eigh(np.cov(x, rowvar=False))
        y = C @ V @ np.diag(w ** -0.5) @ V.T
        d = 3
        # E‖y − Z‖ by quadrature of the noncentral chi law, E‖Z − Z′‖ = √2 E‖Z‖
        ez = [integrate.quad(lambda t, r=r: math.sqrt(t) * stats.ncx2(d, r).pdf(t), 0, np.inf,
                             limit=400)[0] for r in (y ** 2).sum(1)]
        ezz = math.sqrt(2) * integrate.quad(lambda t: math.sqrt(t) * stats.chi2(d).pdf(t), 0, np.inf)[0]
        pairs = sum(np.linalg.norm(a - b) for a in y for b in y)
        want = 2 * sum(ez) - 30 * ezz - pairs / 30
        assert es.normality_test(x, n_resamples=0).statistic == pytest.approx(want, rel=1e-8)

    def test_generic_path_equals_the_normal_one(self):
        x = np.random.default_rng(4).lognormal(size=64)
        known = {"loc": x.mean(), "scale": x.std(ddof=1)}
        generic = es.gof_test(x, stats.norm, known_params=known, n_resamples=0).statistic
        assert generic == pytest.approx(es.normality_test(x, n_resamples=0).statistic, rel=1e-12)

    CASES = {"norm": dict(loc=5, scale=4), "expon": dict(loc=0.3, scale=5),
             "uniform": dict(loc=0.3, scale=25), "gamma": dict(a=2, loc=0, scale=3),
             "lognorm": dict(s=0.8, loc=0, scale=4.5), "pareto": dict(b=2.5, loc=-1, scale=2),
             "weibull_min": dict(c=1.5, loc=0, scale=6), "beta": dict(a=2, b=3, loc=-1, scale=30)}

    @pytest.mark.parametrize("name", sorted(CASES))
    def test_closed_forms_against_integration(self, name):
        dist = getattr(stats, name)
        y = np.sort(np.random.default_rng(5).gamma(2.0, 3.0, size=(1, 25)), axis=1)
        closed = Family(dist)
        G1, m1 = closed.terms(y, self.CASES[name])
        numeric = Family(dist)
        numeric.closed = None          # the generic path: quadrature of z f(z) and of F(1 − F)
        G2, m2 = numeric.terms(y, self.CASES[name])
        np.testing.assert_allclose(G1, G2, rtol=1e-10, atol=0)
        assert m1[0] == pytest.approx(m2[0], rel=1e-10)
        fz = dist(**self.CASES[name])
        want = energy_by_loops(y[0], fz) / self.CASES[name]["scale"]  # documented: no units
        got = es.gof_test(y[0], fz, n_resamples=0).statistic
        assert got == pytest.approx(want, rel=1e-8)

    def test_discrete_sum_equals_the_poisson_closed_form(self):
        x = np.random.default_rng(6).poisson(4.0, size=90)
        a = es.gof_test(x, "poisson", n_resamples=0)
        b = es.poisson_test(x, n_resamples=0)
        assert a.params["mu"] == b.params["mu"] == x.mean()
        assert a.statistic == pytest.approx(b.statistic, rel=1e-11)

    def test_binomial_and_geometric_against_the_definition(self):
        rng = np.random.default_rng(7)
        for x, dist in ((rng.binomial(12, 0.3, size=40), stats.binom(12, 0.3)),
                        (rng.geometric(0.2, size=40), stats.geom(0.2))):
            k = np.arange(0, 2000)
            p = dist.pmf(k)
            g = sum(np.sum(np.abs(v - k) * p) for v in x)
            md = np.sum(np.abs(k[:, None] - k[None, :400]) * p[:, None] * p[None, :400])
            want = 2 * g - x.size * md - np.abs(x[:, None] - x[None, :]).sum() / x.size
            got = es.gof_test(x, dist, n_resamples=0).statistic
            assert got == pytest.approx(want, rel=1e-9)


class TestBootstrap:
    def test_null_is_the_documented_draw(self):
        x = np.random.default_rng(8).normal(size=30)
        res = es.normality_test(x, n_resamples=20, rng=5)
        Z = np.random.default_rng(5).standard_normal((20, 30))
        want = [es.normality_test(z, n_resamples=0).statistic for z in Z]
        np.testing.assert_allclose(res.null_distribution, want, rtol=1e-13)
        assert res.pvalue == (1 + np.sum(res.null_distribution >= res.statistic)) / 21
        assert res.seed == 5

    def test_multivariate_draw_and_threads(self):
        x = np.random.default_rng(9).normal(size=(40, 3))
        a = es.normality_test(x, n_resamples=15, rng=3, n_threads=1)
        b = es.normality_test(x, n_resamples=15, rng=3, n_threads=2)
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        gen = np.random.default_rng(3)
        want = [es.normality_test(gen.standard_normal((40, 3)), n_resamples=0).statistic
                for _ in range(15)]
        np.testing.assert_allclose(a.null_distribution, want, rtol=1e-13)

    def test_large_batches_and_threads_give_the_same_bits(self, monkeypatch):
        x = np.random.default_rng(10).normal(size=1000)
        a = es.normality_test(x, n_resamples=150, rng=2, n_threads=2)
        monkeypatch.setattr(normality, "BATCH_DOUBLES", 7000)  # batches of 7 samples
        b = es.normality_test(x, n_resamples=150, rng=2, n_threads=1)
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)

    def test_gof_refits_every_replicate(self):
        x = np.random.default_rng(11).exponential(2.0, size=50)
        res = es.gof_test(x, "exponential", n_resamples=10, rng=4)
        assert res.fitted == ("loc", "scale") and res.params["loc"] == x.min()
        assert res.params["scale"] == pytest.approx(x.mean() - x.min(), rel=1e-14)
        law = stats.expon(loc=res.params["loc"], scale=res.params["scale"])
        Z = law.rvs(size=(10, 50), random_state=np.random.default_rng(4))
        want = [es.gof_test(z, "exponential", n_resamples=0).statistic for z in Z]
        np.testing.assert_allclose(res.null_distribution, want, rtol=1e-12)

    def test_frozen_law_is_a_simple_hypothesis(self):
        x = np.random.default_rng(12).gamma(2.0, size=50)
        res = es.gof_test(x, stats.gamma(2.0), n_resamples=10, rng=1)
        assert res.fitted == () and res.params == {"a": 2.0, "loc": 0.0, "scale": 1.0}
        Z = stats.gamma(2.0).rvs(size=(10, 50), random_state=np.random.default_rng(1))
        want = [es.gof_test(z, stats.gamma(2.0), n_resamples=0).statistic for z in Z]
        np.testing.assert_allclose(res.null_distribution, want, rtol=1e-12)

    def test_poisson_all_shares_the_samples(self):
        x = np.random.default_rng(13).poisson(2.0, size=60)
        allres = es.poisson_test(x, statistic="all", n_resamples=30, rng=6)
        for name in ("energy", "m-cvm", "m-ad"):
            one = es.poisson_test(x, statistic=name, n_resamples=30, rng=6)
            np.testing.assert_array_equal(allres[name].null_distribution, one.null_distribution)
            assert allres[name].pvalue == one.pvalue
        frame = allres.to_frame()
        assert list(frame.index) == ["energy", "m-cvm", "m-ad"] and (frame["param_mu"] == x.mean()).all()


class TestLevelAndPower:
    """Rejection rates at α = 0.05 within two binomial standard errors (fixed seeds)."""

    @pytest.mark.parametrize("d,n,trials,R", [(1, 20, 1000, 99), (1, 100, 1000, 99),
                                              (4, 20, 1500, 19), (4, 100, 600, 19)])
    def test_normality_level(self, d, n, trials, R):
        # the statistic is affine invariant, so the bootstrap test is an exact Monte Carlo test
        # (level 0.05 exactly for R = 19, 99): this checks that the data and the replicates
        # are treated alike
        rng = np.random.default_rng(100 + 10 * d + n)
        rejected = sum(es.normality_test(rng.normal(size=(n, d)) * 3 + 1, n_resamples=R,
                                         rng=rng).pvalue <= 0.05 for _ in range(trials))
        lo, hi = level_band(0.05, trials)
        assert lo <= rejected / trials <= hi, rejected / trials

    @pytest.mark.parametrize("lam", [0.5, 5.0])
    def test_poisson_level(self, lam):
        rng = np.random.default_rng(int(lam * 10))
        trials = 1000
        res = [es.poisson_test(rng.poisson(lam, size=50), statistic="all", n_resamples=99, rng=rng)
               for _ in range(trials)]
        lo, hi = level_band(0.05, trials)
        for name in ("energy", "m-cvm", "m-ad"):
            rate = np.mean([r[name].pvalue <= 0.05 for r in res])
            assert lo <= rate <= hi, (name, rate)

    @pytest.mark.parametrize("family,draw,known", [
        ("exponential", lambda g, n: 3 + g.exponential(2.0, n), None),
        ("uniform", lambda g, n: g.uniform(-1, 4, n), None),
        ("gamma", lambda g, n: g.gamma(3.0, 2.0, n), {"loc": 0}),
    ])
    def test_fitted_family_level(self, family, draw, known):
        rng = np.random.default_rng(len(family))
        trials = 250 if family != "gamma" else 150
        rate = np.mean([es.gof_test(draw(rng, 40), family, known_params=known, n_resamples=39,
                                    rng=rng).pvalue <= 0.05 for _ in range(trials)])
        lo, hi = level_band(0.05, trials)
        assert lo <= rate <= hi, rate

    def test_power_against_the_lognormal(self):
        rng = np.random.default_rng(14)
        rate = np.mean([es.normality_test(rng.lognormal(size=100), n_resamples=99,
                                          rng=rng).pvalue <= 0.05 for _ in range(40)])
        assert rate >= 0.95


class TestBadInput:
    def test_nan(self):
        with pytest.raises(ValueError, match="`x` contains NaN"):
            es.normality_test([1.0, 2.0, np.nan, 4.0])
        with pytest.raises(ValueError, match="`x` contains NaN"):
            es.gof_test([1.0, 2.0, np.nan, 4.0], "expon")

    def test_too_few_points(self):
        with pytest.raises(ValueError, match=r"at least d \+ 2 = 5 observations .* got 4"):
            es.normality_test(np.random.default_rng(0).normal(size=(4, 3)))
        with pytest.raises(ValueError, match="at least d \\+ 2 = 3"):
            es.normality_test([1.0, 2.0])

    def test_singular_and_constant(self):
        x = np.random.default_rng(0).normal(size=(30, 2))
        with pytest.raises(ValueError, match=r"singular \(rank 2 < 3\)"):
            es.normality_test(np.column_stack([x, x[:, 0] + x[:, 1]]))
        with pytest.raises(ValueError, match="constant"):
            es.normality_test(np.ones(10))

    def test_poisson_needs_counts(self):
        with pytest.raises(ValueError, match="non-negative integer counts; value 1.5 at position 1"):
            es.poisson_test([1, 1.5, 2])
        with pytest.raises(ValueError, match="value -1 at position 0"):
            es.poisson_test([-1, 1, 2])
        with pytest.raises(ValueError, match="must hold integers for the discrete distribution 'geom'"):
            es.gof_test([1, 2.5, 3], "geometric")

    def test_no_fit_method(self):
        with pytest.raises(TypeError, match="'nbinom'.*no fit method"):
            es.gof_test([1, 2, 3, 4], "nbinom")
        with pytest.raises(TypeError, match="number of trials `n` must be given"):
            es.gof_test([1, 2, 3, 4], "binomial")
        with pytest.raises(ValueError, match=r"`fit=False` needs every parameter .* missing \['scale'\]"):
            es.gof_test([1.0, 2, 3, 4], "expon", known_params={"loc": 0}, fit=False)

    def test_other_arguments(self):
        x = np.random.default_rng(0).normal(size=(20, 2))
        with pytest.raises(ValueError, match="univariate data only"):
            es.normality_test(x, method="limit")
        with pytest.raises(ValueError, match="`method` must be"):
            es.normality_test(x[:, 0], method="exact")
        with pytest.raises(ValueError, match="one-dimensional"):
            es.gof_test(x, "norm")
        with pytest.raises(ValueError, match="not parameters of 'gamma'"):
            es.gof_test(x[:, 0] ** 2, "gamma", known_params={"shape": 2})
        with pytest.raises(ValueError, match="not a distribution of scipy.stats"):
            es.gof_test(x[:, 0], "gausian")
        with pytest.raises(ValueError, match="no finite mean"):
            es.gof_test(np.abs(x[:, 0]) + 1, stats.pareto(0.8))
        with pytest.raises(ValueError, match="`statistic` must be one of"):
            es.poisson_test([1, 2, 3], statistic="cvm")
        with pytest.raises(ValueError, match=r"`n_resamples` must be an integer in \[0, 10\*\*9\]"):
            es.normality_test(x[:, 0], n_resamples=-1)


class TestFrames:
    def test_to_frame_and_columns(self):
        df = pd.DataFrame({"a": np.random.default_rng(1).normal(size=30), "b": range(30)})
        res = es.normality_test(df, columns=["a"], n_resamples=9, rng=1)
        assert res.columns == ["a"] and res.n_features == 1
        f = res.to_frame()
        assert f.loc["goodness of fit", "param_mean"] == df["a"].mean()
        assert f.loc["goodness of fit", "pvalue"] == res.pvalue


# -- units: the statistics of x and x·c (issue 30) ---------------------------------------------

SCALES = [1e-300, 1e-160, 1e155, 1e300]


def _same(a, b, rel=1e-12):
    assert a == pytest.approx(b, rel=rel, abs=0), (a, b)


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("d", [1, 3])
def test_normality_is_scale_invariant(d, c):
    # was: 1e-300 raised (variance underflowed to 0), 1e-160 moved the statistic by up to
    # 8e-4 relative (subnormal variance), 1e155 gave NaN (d = 1), 1e300 LinAlgError (d = 3)
    x = np.random.default_rng(d).normal(size=(40, d)) + 0.5
    if d == 1:
        x = x[:, 0]
    a = es.normality_test(x, n_resamples=49, rng=1)
    # d = 3, c >= 1e155: the covariance (about c**2) is beyond the float64 range, and said so
    expect = pytest.warns(RuntimeWarning, match=r"the sample covariance of `x` has entries beyond") \
        if d > 1 and c * c > np.finfo(np.float64).max else contextlib.nullcontext()
    with expect:
        b = es.normality_test(x * c, n_resamples=49, rng=1)
    _same(b.statistic, a.statistic)
    _same(b.pvalue, a.pvalue)
    np.testing.assert_allclose(b.params["mean"], c * np.asarray(a.params["mean"]), rtol=1e-12)
    if d == 1:
        _same(b.params["std"], c * a.params["std"])
        _same(es.normality_test(x * c, method="limit").pvalue,
              es.normality_test(x, method="limit").pvalue)


def test_normality_covariance_beyond_float_range_warns():
    x = np.random.default_rng(3).normal(size=(40, 3)) * 1e300
    with pytest.warns(RuntimeWarning, match="params\\['cov'\\]"):
        res = es.normality_test(x, n_resamples=0)
    assert np.isinf(res.params["cov"]).any() and np.isfinite(res.statistic)


# location–scale families, loc and scale estimated (or loc = 0 known, which x·c keeps): the
# statistic is that of (x − loc)/scale, so x and x·c (c > 0) have the same statistic.
# Discrete families (Poisson, geometric, binomial) are not scale families.
SCALE_FAMILIES = [("normal", None), ("exponential", None), ("uniform", None),
                  ("gamma", {"loc": 0}), ("lognormal", {"loc": 0}), ("weibull", {"loc": 0})]


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("dist, known", SCALE_FAMILIES, ids=[f[0] for f in SCALE_FAMILIES])
def test_gof_location_scale_families_are_scale_invariant(dist, known, c):
    # was: normal raised at 1e-300, 1e155 and 1e300 (variance under/overflow); Weibull's
    # numerical fit gave c = 0.002 at 1e-300 (scipy's fit is not scale equivariant)
    x = np.random.default_rng(5).gamma(3.0, 2.0, size=40)
    a = es.gof_test(x, dist, known_params=known, n_resamples=19, rng=2)
    b = es.gof_test(x * c, dist, known_params=known, n_resamples=19, rng=2)
    _same(b.statistic, a.statistic)
    _same(b.pvalue, a.pvalue)
    for k, v in a.params.items():
        _same(b.params[k], v * c if k in ("loc", "scale") else v, rel=1e-10)


def test_decision_not_given_next_to_nan_statistic():
    # issue 30: M-AD of an all-zero sample is 0/0 = NaN (as R's poisson.m); 'decision'
    # used to report 'p > alpha' beside statistic NaN, p-value NaN
    with pytest.warns(es.DegenerateStatisticWarning, match="M-AD statistic is nan"):
        res = es.poisson_test([0] * 10, statistic="m-ad", pvalue_method="decision",
                              n_resamples=99, rng=1)
    assert math.isnan(res.statistic) and math.isnan(res.pvalue)
    assert res.pvalue_method == "decision" and res.decision is None
    # a finite statistic still gets its decision
    # (some of the bootstrap samples, ten draws from Poisson(0.1), are all zeros: their M-AD is
    # NaN too, and said so)
    with pytest.warns(es.DegenerateStatisticWarning, match=r"relabelled M-AD statistic values are NaN"):
        res = es.poisson_test([0] * 9 + [1], statistic="m-ad", pvalue_method="decision",
                              n_resamples=99, rng=1)
    assert math.isfinite(res.statistic) and res.decision is not None


# -- the `gof` command's text and CSV output (issue 30) -----------------------------------------

@pytest.fixture(scope="module")
def gof_csv(tmp_path_factory):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=60), "y": rng.gamma(2.0, size=60),
                       "n": rng.poisson(3.0, size=60)})
    path = tmp_path_factory.mktemp("gofcli") / "g.csv"
    df.to_csv(path, index=False)
    return path, df


def gof_cli(capsys, *args):
    from energystats.cli import main

    rc = main(["gof", *map(str, args)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def test_cli_gof_text_and_csv_carry_the_seed(gof_csv, capsys):
    # the seed was only on stderr and in JSON
    path, df = gof_csv
    out = gof_cli(capsys, path, "--column", "x", "-R", "19", "--seed", "7", "-q",
                  "--format", "csv")
    row = pd.read_csv(__import__("io").StringIO(out))
    assert row["seed"].tolist() == [7]
    out = gof_cli(capsys, path, "--column", "x", "-R", "19", "--seed", "7", "-q")
    header = next(line for line in out.splitlines() if "statistic" in line and "pvalue" in line)
    assert header.split()[-1] == "seed"


def test_cli_gof_poisson_all_names_each_pvalue(gof_csv, capsys):
    # the verdict used min(p) of the three statistics without saying so
    path, df = gof_csv
    out = gof_cli(capsys, path, "--column", "n", "--dist", "poisson", "--statistic", "all",
                  "-R", "49", "--seed", "3", "-q")
    res = es.poisson_test(df["n"], statistic="all", n_resamples=49, rng=3)
    verdicts = [line for line in out.splitlines() if line.startswith("verdict:")]
    assert len(verdicts) == 3
    for line, name in zip(verdicts, ("energy", "m-cvm", "m-ad")):
        assert f"the Poisson family, by the {name} statistic (p = {res[name].pvalue:.4g}" in line


@pytest.mark.parametrize("dist, word", [("exponential", "exponential"), ("expon", "expon"),
                                        ("gamma", "gamma"), ("normal", "normal")])
def test_cli_gof_verdict_names_the_family_as_given(gof_csv, capsys, dist, word):
    # was "no evidence against a expon law" for --dist exponential
    path, df = gof_csv
    out = gof_cli(capsys, path, "--column", "y", "--dist", dist, "-R", "19", "--seed", "3", "-q",
                  "--alpha", "1e-9")
    assert f"verdict: no evidence against the {word} family (p = " in out
    out = gof_cli(capsys, path, "--column", "y", "--dist", dist, "-R", "19", "--seed", "3", "-q",
                  "--alpha", "0.999999")
    assert f"verdict: the data are not from the {word} family (p = " in out
