"""The time-series dependence functions read rows in time order through the one input rule
(``_core._input.time_series``): an index of times out of order is refused, as e_divisive
refuses it, and x and y are paired by time, never by position (issue 51)."""
import numpy as np
import pandas as pd
import pytest

import energystats as es


def _pair(n=120, seed=0):
    g = np.random.default_rng(seed)
    x = np.zeros(n)
    for t in range(1, n):
        x[t] = 0.5 * x[t - 1] + g.normal()
    idx = pd.date_range("2021-01-01", periods=n, freq="D")
    return pd.Series(x, index=idx), pd.Series(g.normal(size=n), index=idx)


@pytest.mark.parametrize("call", [
    lambda s: es.adcf_test(s, n_resamples=19, rng=0),
    lambda s: es.auto_distance_correlation(s),
    lambda s: es.cross_distance_correlation(s, s.sort_index()),
    lambda s: es.cross_distance_correlation_test(s.sort_index(), s, n_resamples=19, rng=0),
    lambda s: es.e_divisive(s, n_changepoints=1),
])
def test_a_shuffled_time_index_is_refused(call):
    x, _ = _pair()
    with pytest.raises(ValueError, match="rows must be in time order.*sort_index"):
        call(x.sample(frac=1, random_state=3))


def test_a_sorted_time_index_gives_the_array_answer():
    x, y = _pair()
    a = es.cross_distance_correlation_test(x, y, n_resamples=49, rng=2)
    b = es.cross_distance_correlation_test(x.to_numpy(), y.to_numpy(), n_resamples=49, rng=2)
    assert a.pvalue == b.pvalue and a.statistic == b.statistic


@pytest.mark.parametrize("func", [
    lambda x, y: es.cross_distance_correlation(x, y),
    lambda x, y: es.cross_distance_correlation_test(x, y, n_resamples=19, rng=0),
])
def test_x_and_y_on_different_times_are_refused(func):
    x, y = _pair()
    y = y.copy()
    y.index = y.index + pd.Timedelta(days=1)           # the same values one day later
    with pytest.raises(ValueError, match="indexes differ.*align"):
        func(x, y)


def test_a_plain_array_beside_an_indexed_series_is_paired_by_position():
    x, y = _pair()
    a = es.cross_distance_correlation(x, y.to_numpy())
    b = es.cross_distance_correlation(x.to_numpy(), y.to_numpy())
    pd.testing.assert_series_equal(a, b)


def test_the_message_says_how_the_indexes_differ():
    from energystats._core._input import same_times

    with pytest.raises(ValueError, match="the same labels in another order"):
        same_times(pd.Index(["a", "b", "c"]), pd.Index(["b", "a", "c"]))
    with pytest.raises(ValueError, match="2 label"):
        same_times(pd.RangeIndex(0, 10), pd.RangeIndex(1, 11))
    same_times(pd.RangeIndex(0, 10), None)               # an array: by position
