"""distance_correlation_scores: the (scores, pvalues) of scikit-learn's univariate selectors
(issue 52): each score is the feature's distance correlation, each p-value the χ² test of
independence_test, and SelectKBest / SelectFdr in a Pipeline pick the active features of a
nonlinear design."""
import warnings

import numpy as np
import pytest

import energystats as es


def _design(seed=0, n=200, p=30):
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, p))
    y = X[:, 3] ** 2 + 2 * np.abs(X[:, 7]) + np.sin(2 * X[:, 11]) + 0.3 * g.normal(size=n)
    return X, y


def test_scores_and_pvalues_are_the_packages_own_per_feature():
    X, y = _design(p=12)
    scores, pvalues = es.distance_correlation_scores(X, y)
    for j in range(12):
        assert scores[j] == pytest.approx(float(es.distance_correlation(X[:, j], y)), rel=1e-12)
        want = es.independence_test(X[:, j], y, pvalue_method="asymptotic").pvalue
        assert pvalues[j] == want


def _u_centred(v):
    a = np.abs(v[:, None] - v[None, :])
    n = len(v)
    A = a - a.sum(1)[:, None] / (n - 2) - a.sum(0)[None, :] / (n - 2) + a.sum() / ((n - 1) * (n - 2))
    np.fill_diagonal(A, 0.0)
    return A


def test_pvalues_against_a_plain_numpy_chi_square_test():
    """Independent of the package: the U-centred matrices by hand, R* = (A.B)/sqrt((A.A)(B.B))
    and p = P(chi2_1 >= n R* + 1) (Shen, Panda and Vogelstein 2022); the V-statistic dCor by
    double centring."""
    from scipy.stats import chi2

    X, y = _design(n=80, p=12)
    scores, pvalues = es.distance_correlation_scores(X, y)
    B = _u_centred(y)
    by = np.abs(y[:, None] - y[None, :])
    Bd = by - by.mean(0) - by.mean(1)[:, None] + by.mean()
    for j in (0, 3, 7):
        A = _u_centred(X[:, j])
        r = (A * B).sum() / np.sqrt((A * A).sum() * (B * B).sum())
        assert pvalues[j] == pytest.approx(chi2.sf(80 * r + 1, 1), rel=1e-8, abs=1e-300)
        ax = np.abs(X[:, j][:, None] - X[:, j][None, :])
        Ad = ax - ax.mean(0) - ax.mean(1)[:, None] + ax.mean()
        v = np.sqrt((Ad * Bd).mean() / np.sqrt((Ad * Ad).mean() * (Bd * Bd).mean()))
        assert scores[j] == pytest.approx(v, rel=1e-10)


def test_select_k_best_in_a_pipeline_picks_the_active_features():
    sklearn = pytest.importorskip("sklearn")
    from sklearn.feature_selection import SelectFdr, SelectKBest
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline

    X, y = _design()
    pipe = make_pipeline(SelectKBest(es.distance_correlation_scores, k=3), LinearRegression())
    pipe.fit(X, y)
    assert np.flatnonzero(pipe[0].get_support()).tolist() == [3, 7, 11]
    fdr = SelectFdr(es.distance_correlation_scores, alpha=0.05).fit(X, y)
    assert {3, 7, 11} <= set(np.flatnonzero(fdr.get_support()).tolist())
    assert sklearn.__version__


def test_a_constant_feature_is_nan_and_named():
    X, y = _design(p=12)
    X[:, 2] = 1.5
    with pytest.warns(es.DegenerateStatisticWarning, match=r"constant feature\(s\) \[2\]"):
        scores, pvalues = es.distance_correlation_scores(X, y)
    assert np.isnan(scores[2]) and np.isnan(pvalues[2])
    assert np.all(np.isfinite(np.delete(scores, 2)))
