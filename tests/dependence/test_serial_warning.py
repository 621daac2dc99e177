"""independence_test on serial data: a SeriesDependenceWarning when both variables are
autocorrelated in row order (the spurious-dependence trap), none on independent rows; the
lag-1 autocorrelation against a plain loop."""
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core import _serial


def _ar(gen, n, phi):
    e = gen.normal(size=n)
    x = np.empty(n)
    x[0] = e[0]
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


def test_lag1_autocorrelation_against_a_loop():
    gen = np.random.default_rng(1)
    A = gen.normal(size=(50, 3)) * [1.0, 1e300, 1e-300]
    got = _serial.lag1_autocorrelations(A)
    for j in range(3):
        a = A[:, j] / abs(A[:, j]).max()
        m = sum(a) / len(a)
        num = sum((a[t] - m) * (a[t + 1] - m) for t in range(len(a) - 1))
        den = sum((v - m) ** 2 for v in a)
        assert got[j] == pytest.approx(num / den, rel=1e-12)
    assert _serial.lag1_autocorrelations(np.ones((10, 1)))[0] == 0.0


def test_time_indexed_ar1_pair_warns():
    gen = np.random.default_rng(4)
    idx = pd.date_range("2021-01-01", periods=200, freq="D")
    x, y = pd.Series(_ar(gen, 200, 0.8), index=idx), pd.Series(_ar(gen, 200, 0.8), index=idx)
    with pytest.warns(es.SeriesDependenceWarning, match="both serially dependent.*indexed by time"
                      ".*cross_distance_correlation_test"):
        es.independence_test(x, y, rng=1, n_resamples=99)


def test_random_walks_warn_without_an_index():
    gen = np.random.default_rng(5)
    x, y = np.cumsum(gen.normal(size=150)), np.cumsum(gen.normal(size=150))
    with pytest.warns(es.SeriesDependenceWarning, match="spurious dependence"):
        es.independence_test(x, y, rng=1, n_resamples=99)


def test_independent_rows_and_one_serial_variable_do_not_warn():
    gen = np.random.default_rng(6)
    idx = pd.date_range("2021-01-01", periods=300, freq="D")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        es.independence_test(pd.Series(gen.normal(size=300), index=idx),
                             pd.Series(gen.normal(size=300), index=idx), rng=1, n_resamples=99)
        # one autocorrelated variable against independent rows: the permutation test is valid
        es.independence_test(_ar(gen, 300, 0.9), gen.normal(size=300), rng=1, n_resamples=99)
        # blocks of rows permuted: the user has taken the dependence into account
        es.independence_test(np.cumsum(gen.normal(size=300)), np.cumsum(gen.normal(size=300)),
                             perm_blocks=np.repeat(np.arange(30), 10), rng=1, n_resamples=99)


def test_the_rule_needs_both_variables():
    """A mutation check: the note depends on the smaller of the two autocorrelations."""
    gen = np.random.default_rng(7)
    x = _ar(gen, 400, 0.9)
    assert _serial.serial_dependence_note(x, x) is not None
    assert _serial.serial_dependence_note(x, gen.normal(size=400)) is None
