"""Significance after clustering (SPEC §7): level, power, and the invalid alternatives measured.

The level checks run the full procedure on data sets with no cluster structure
and count rejections at 0.05.  With B reference sets the p-value
(1 + #{null >= obs}) / (B + 1) is valid for any B, so small B keeps them fast.
"""
import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats.significance import reference_sampler


def _random_gaussian(rng):
    """A single Gaussian with random size, dimension, covariance (condition number up to ~1e3), location."""
    n = int(rng.integers(100, 301))
    d = int(rng.integers(1, 11))
    A = rng.normal(size=(d, d))
    Q, _ = np.linalg.qr(A)
    scales = np.exp(rng.uniform(-3.5, 0, size=d))
    X = rng.normal(size=(n, d)) * scales @ Q.T * rng.uniform(0.1, 10) + rng.normal(size=d) * 5
    return X


def _random_box(rng):
    n = int(rng.integers(100, 301))
    d = int(rng.integers(1, 11))
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return rng.uniform(0, 1, size=(n, d)) * rng.uniform(0.2, 3, size=d) @ Q.T


def _rejection_rate(make, null, n_sets, seed, B=19):
    rng = np.random.default_rng(seed)
    rej = 0
    for i in range(n_sets):
        X = make(rng)
        res = es.cluster_test(X, 2, null=null, n_resamples=B, n_init=1, rng=rng)
        rej += res.pvalue <= 0.05
    return rej / n_sets


class TestLevelAndPower:
    @pytest.mark.slow
    def test_level_single_gaussians(self):
        rate = _rejection_rate(_random_gaussian, "gaussian", 300, seed=20240601)
        assert rate <= 0.07, rate

    @pytest.mark.slow
    def test_level_uniform_boxes(self):
        rate = _rejection_rate(_random_box, "uniform", 300, seed=20240602)
        assert rate <= 0.07, rate

    @pytest.mark.slow
    def test_level_gaussian_hartigan_k3_lloyd(self):
        rng = np.random.default_rng(7)
        rej = 0
        for i in range(200):
            X = _random_gaussian(rng)
            alg = "lloyd" if i % 2 else "hartigan"
            rej += es.cluster_test(X, 3, n_resamples=19, n_init=1, algorithm=alg, rng=rng).pvalue <= 0.05
        assert rej / 200 <= 0.07

    def test_power_two_gaussians_4sd(self):
        rng = np.random.default_rng(3)
        rej = 0
        for i in range(30):
            X = rng.normal(size=(100, 2))
            X[:50, 0] += 4.0
            rej += es.cluster_test(X, 2, n_resamples=19, n_init=2, rng=rng).pvalue <= 0.05
        assert rej / 30 >= 0.9


def _naive_rejection(n_sets, seed):
    rng = np.random.default_rng(seed)
    rej = 0
    for _ in range(n_sets):
        X = rng.normal(size=(100, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", es.AntiConservativeWarning)
            res = es.cluster_test(X, 2, n_resamples=99, n_init=2, naive=True, rng=rng)
        rej += res.pvalue <= 0.05
    return rej / n_sets


def _sample_splitting_rejection(n_sets, seed, B=99):
    """Cluster one half, assign the other half to the learned clusters, permutation-test S there."""
    rng = np.random.default_rng(seed)
    rej = 0
    for _ in range(n_sets):
        X = rng.normal(size=(100, 2))
        perm = rng.permutation(100)
        train, test = X[perm[:50]], X[perm[50:]]
        est = es.EnergyClustering(2, n_init=2, random_state=rng).fit(train)
        lab = est.predict(test)
        if np.bincount(lab, minlength=2).min() == 0:
            continue
        obs = es.dispersion(test, lab).S
        null = np.array([es.dispersion(test, rng.permutation(lab)).S for _ in range(B)])
        p = (1 + np.sum(null >= obs * (1 - 1e-12))) / (B + 1)
        rej += p <= 0.05
    return rej / n_sets


class TestInvalidAlternativesMeasured:
    """SPEC §7: the naive permutation test and sample splitting do not hold their level.

    These rates are what the docs report; the tests pin that they are far above 0.05.
    """

    def test_naive_permutation_rejects_single_gaussians(self):
        rate = _naive_rejection(20, seed=11)
        assert rate > 0.5, rate

    def test_sample_splitting_rejects_single_gaussians(self):
        rate = _sample_splitting_rejection(20, seed=12)
        assert rate > 0.5, rate

    def test_naive_warns_with_stacklevel(self):
        X = np.random.default_rng(0).normal(size=(30, 2))
        with pytest.warns(es.AntiConservativeWarning, match="anti-conservative") as rec:
            res = es.cluster_test(X, 2, n_resamples=9, naive=True, rng=0)
        assert rec[0].filename == __file__
        assert res.null == "permutation (naive)"


class TestClusterTestResult:
    def test_fields_pvalue_formula_and_frame(self):
        rng = np.random.default_rng(5)
        X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(3, 1, (40, 2))])
        res = es.cluster_test(X, 2, n_resamples=29, n_init=2, rng=1)
        names = [f.name for f in dataclasses.fields(res)]
        assert names[:3] == ["statistic", "pvalue", "null_distribution"]
        assert res.null == "gaussian" and res.n_resamples == 29
        assert res.null_distribution.shape == (29,)
        p = (1 + np.sum(res.null_distribution >= res.statistic)) / 30
        assert res.pvalue == pytest.approx(p)
        disp = es.dispersion(X, res.labels)
        assert res.statistic == pytest.approx(disp.S / disp.T, rel=1e-10)
        tab = res.to_frame()
        assert list(tab["size"].iloc[:2]) == list(disp.sizes)
        assert tab.loc["all", "pvalue"] == res.pvalue
        assert tab.loc["all", "W"] == pytest.approx(disp.W)
        assert tab.loc["all", "F"] == pytest.approx(disp.F)
        assert "ClusterTestResult(statistic=" in repr(res)

    def test_reproducible_and_thread_independent(self):
        X = np.random.default_rng(6).normal(size=(60, 3))
        a = es.cluster_test(X, 2, n_resamples=9, n_init=2, rng=4, n_threads=1)
        b = es.cluster_test(X, 2, n_resamples=9, n_init=2, rng=4, n_threads=2)
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        assert a.pvalue == b.pvalue

    def test_estimator_test_method(self):
        X = np.random.default_rng(7).normal(size=(60, 2))
        est = es.EnergyClustering(2, n_init=2, random_state=3).fit(X)
        res = est.test(X, n_resamples=9, rng=2)
        np.testing.assert_array_equal(np.asarray(res.labels), est.labels_)
        ref = es.cluster_test(X, 2, n_resamples=9, n_init=2, random_state=3, rng=2)
        np.testing.assert_array_equal(res.null_distribution, ref.null_distribution)

    def test_dataframe_labels(self):
        df = pd.DataFrame(np.random.default_rng(8).normal(size=(40, 2)), columns=["a", "b"],
                          index=[f"s{i}" for i in range(40)])
        res = es.cluster_test(df, 2, n_resamples=5, n_init=1, rng=0)
        assert isinstance(res.labels, pd.Series) and list(res.labels.index) == list(df.index)

    def test_other_metrics_and_exact_1d(self):
        rng = np.random.default_rng(9)
        x = np.r_[rng.normal(0, 1, 60), rng.normal(6, 1, 60)]
        r1 = es.cluster_test(x, 2, algorithm="exact-1d", n_resamples=19, rng=0)
        assert r1.pvalue == pytest.approx(0.05)
        r2 = es.cluster_test(np.c_[x, rng.normal(size=120)], 2, metric="laplacian", sigma=2.0,
                             n_resamples=9, n_init=1, rng=0)
        assert 0 < r2.pvalue <= 1

    # -- input validation --
    def test_bad_input(self):
        X = np.random.default_rng(0).normal(size=(20, 2))
        with pytest.raises(ValueError, match="`null` must be one of"):
            es.cluster_test(X, 2, null="poisson")
        with pytest.raises(ValueError, match="precomputed"):
            es.cluster_test(X, 2, metric="precomputed")
        with pytest.raises(ValueError, match="n_resamples"):
            es.cluster_test(X, 2, n_resamples=0)
        with pytest.raises(ValueError, match="init"):
            es.cluster_test(X, 2, init=[0, 1] * 10)
        with pytest.raises(ValueError, match="n_clusters"):
            es.cluster_test(X, 1)
        with pytest.raises(ValueError, match="at least 2 samples"):
            es.cluster_test(X[:1], 2)
        Xn = X.copy()
        Xn[0, 0] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            es.cluster_test(Xn, 2)


class TestReferenceSampler:
    def test_gaussian_moments(self):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(300, 3)) @ np.array([[2, 0, 0], [1, 1, 0], [0, 0.5, 0.2]]) + [1, -2, 3]
        draw = reference_sampler(X, "gaussian")
        Y = np.vstack([draw(rng) for _ in range(200)])
        np.testing.assert_allclose(Y.mean(0), X.mean(0), atol=0.02)
        np.testing.assert_allclose(np.cov(Y.T), np.cov(X.T), rtol=0.03, atol=0.01)

    @pytest.mark.parametrize("null", ["gaussian", "uniform"])
    def test_rank_deficient(self, null):
        rng = np.random.default_rng(1)
        t = rng.normal(size=(50, 1))
        X = np.hstack([t, 2 * t, -t]) + [1.0, 2.0, 3.0]  # on a line in R^3
        Y = reference_sampler(X, null)(rng)
        assert Y.shape == X.shape
        resid = (Y - X.mean(0)) - np.outer((Y - X.mean(0)) @ [1, 2, -1], [1, 2, -1]) / 6
        assert np.abs(resid).max() < 1e-10
        res = es.cluster_test(X, 2, null=null, n_resamples=5, n_init=1, rng=0)
        assert 0 < res.pvalue <= 1

    def test_uniform_box_matches_covariance(self):
        rng = np.random.default_rng(2)
        X = rng.uniform(size=(200, 2)) @ np.array([[3, 1], [-1, 1]])
        draw = reference_sampler(X, "uniform")
        Xc = X - X.mean(0)
        _, sv, Vt = np.linalg.svd(Xc, full_matrices=False)
        half = np.sqrt(3) * sv / np.sqrt(199)
        Y = draw(rng)
        sy = (Y - X.mean(0)) @ Vt.T
        assert np.all(np.abs(sy) <= half + 1e-12)
        # flat marginals along the principal axes: close to the data's range box for uniform data
        assert np.all(half <= (Xc @ Vt.T).max(0) * 1.15) and np.all(half >= (Xc @ Vt.T).max(0) * 0.85)
        Ys = np.vstack([draw(rng) for _ in range(200)])
        np.testing.assert_allclose(np.cov(Ys.T), np.cov(X.T), rtol=0.03, atol=0.01)


def test_progress_bar_does_not_change_the_result(capsys):
    # progress=True only draws a bar on stderr; the null distribution is the same
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 2))
    a = es.cluster_test(X, 2, n_resamples=5, n_init=1, rng=7, progress=True)
    b = es.cluster_test(X, 2, n_resamples=5, n_init=1, rng=7)
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
    assert "reference clusterings" in capsys.readouterr().err
