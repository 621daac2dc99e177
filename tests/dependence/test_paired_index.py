"""Variables read as paired rows are paired by index or refused, never by position (issue
51): y's rows shuffled (its index with them) must give the same answer or a clear error, for
every function of several paired variables.  partial_distance_correlation paired a shuffled y
by position (0.735 -> -0.005, no word) before this test."""
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es

n = 40
_g = np.random.default_rng(0)
IDX = pd.Index([f"r{i}" for i in range(n)])
X = pd.DataFrame(_g.normal(size=(n, 3)), index=IDX, columns=["a", "b", "c"])
Y = pd.Series(2 * X["a"] + _g.normal(size=n), index=IDX, name="y")
Z = pd.Series(_g.normal(size=n), index=IDX, name="z")
SHUFFLED = Y.iloc[_g.permutation(n)]

CALLS = {
    "partial_distance_correlation": lambda y: es.partial_distance_correlation(X[["a"]], y, X[["b"]]),
    "partial_distance_covariance": lambda y: es.partial_distance_covariance(X[["a"]], y, X[["b"]]),
    "partial_distance_correlation_test": lambda y: es.partial_distance_correlation_test(
        X[["a"]], y, X[["b"]], rng=0, n_resamples=19).statistic,
    "conditional_distance_correlation": lambda y: es.conditional_distance_correlation(
        X[["a"]], y, Z).statistic,
    "conditional_independence_test": lambda y: es.conditional_independence_test(
        X[["a"]], y, Z, rng=0, n_resamples=19).statistic,
    "independence_test": lambda y: es.independence_test(X, y, rng=0, n_resamples=19).statistic,
    "distance_correlation": lambda y: es.distance_correlation(X, y),
    "distance_covariance": lambda y: es.distance_covariance(X, y),
    "distance_correlation_ttest": lambda y: es.distance_correlation_ttest(X, y).statistic,
    "independence_coefficient": lambda y: es.independence_coefficient(X, y),
    "distance_correlation_screen": lambda y: es.distance_correlation_screen(X, y).statistic,
    "distance_correlation_scores": lambda y: np.concatenate(es.distance_correlation_scores(X, y)),
    "independence_weights": lambda y: es.independence_weights(X, y).weights,
    "cross_distance_correlation": lambda y: es.cross_distance_correlation(X[["a"]], y).to_numpy(),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_shuffled_pandas_argument_is_aligned_or_refused(name):
    call = CALLS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = np.asarray(call(Y), dtype=float)
        try:
            got = np.asarray(call(SHUFFLED), dtype=float)
        except ValueError as exc:
            assert "index" in str(exc) and "`y`" in str(exc), str(exc)
            return
    np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)
