"""E-Agglo against the plain NumPy reference of the greedy merging, the penalty, bad input."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import energystats as es

from .reference import distances, e_agglo, s_hat


def _series(T, d, changes, seed, shift=2.0):
    Z = np.random.default_rng(seed).normal(size=(T, d))
    for c in changes:
        Z[c:] += shift
    return Z


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
def test_merge_path_matches_reference_from_blocks(d, alpha):
    Z = _series(48, d, [16, 32], seed=d, shift=1.5)
    member = np.repeat(np.arange(12), 4)
    res = es.e_agglo(Z, member=member, exponent=alpha)
    path, best = e_agglo(Z, list(range(0, 49, 4)), alpha)
    assert [list(map(int, c)) for c in res.path_changepoints] == [b[1:-1] for b, _ in path]
    np.testing.assert_allclose(res.path["fit"], [s for _, s in path], rtol=1e-10, atol=1e-10)
    assert res.changepoints.tolist() == best[1:-1]
    assert res.fit == pytest.approx(s_hat(distances(Z, alpha), best), rel=1e-10)


def test_singletons_match_reference():
    Z = _series(18, 2, [9], seed=4, shift=3.0)
    res = es.e_agglo(Z)
    path, best = e_agglo(Z, list(range(19)))
    assert [list(map(int, c)) for c in res.path_changepoints] == [b[1:-1] for b, _ in path]
    np.testing.assert_allclose(res.path["fit"], [s for _, s in path], rtol=1e-10, atol=1e-10)
    assert res.changepoints.tolist() == best[1:-1]
    assert res.path["n_changepoints"].tolist() == list(range(17, -1, -1))


def test_penalty_reduces_the_number_of_changes_monotonically():
    Z = _series(60, 2, [15, 30, 45], seed=7, shift=1.0)
    member = np.repeat(np.arange(20), 3)
    counts = []
    for lam in [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 1e6]:
        res = es.e_agglo(Z, member=member, penalty=lam)
        _, best = e_agglo(Z, list(range(0, 61, 3)), penalty=lam)
        assert res.changepoints.tolist() == best[1:-1], lam
        counts.append(res.changepoints.size)
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1] == 0


def test_callable_penalty_and_index():
    idx = pd.date_range("2026-03-01", periods=30, freq="h")
    s = pd.Series(_series(30, 1, [15], seed=2, shift=4.0)[:, 0], index=idx)
    res = es.e_agglo(s, member=np.repeat(np.arange(10), 3), penalty=lambda cps: 10.0 * len(cps))
    assert res.changepoints.tolist() == [15]
    assert res.changepoint_labels == [idx[15]]
    assert res.to_frame()["length"].tolist() == [15, 15]


@pytest.mark.parametrize("kwargs,err,match", [
    ({"member": [0, 0, 1, 1, 0, 0]}, ValueError, r"`member` must give each segment as one contiguous run"),
    ({"member": [0, 1]}, ValueError, r"member"),
    ({"penalty": -1.0}, ValueError, r"`penalty` must be None, a non-negative number.*got -1.0"),
    ({"penalty": lambda c: float("nan")}, ValueError, r"`penalty` must return a finite number"),
    ({"exponent": 0.0}, ValueError, r"`exponent` must be a number in \(0, 2\)"),
])
def test_bad_input(kwargs, err, match):
    with pytest.raises(err, match=match):
        es.e_agglo(np.arange(6.0), **kwargs)


def test_nan_is_refused():
    with pytest.raises(ValueError, match=r"`X` contains NaN"):
        es.e_agglo(np.array([1.0, np.nan, 2.0]))


def test_one_segment_per_row_holds_one_matrix():
    # the block sums of one-row segments are the distance matrix itself: the peak was three
    # T×T matrices (D, a reduceat copy, M) while the memory check counted two
    import tracemalloc

    x = np.random.default_rng(0).normal(size=(600, 1))
    es.e_agglo(x[:40])  # imports and caches outside the measurement
    tracemalloc.start()
    try:
        es.e_agglo(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.8 * 8 * 600 * 600, peak
