"""Sample weights of dispersion (issue 33): against a double-loop reference, integer weights
against repeated rows, the result's record of the weights, bad input."""
import numpy as np
import pandas as pd
import pytest

import energystats as es

from ..reference import ref_matrix, ref_weighted_wst, metric_kwargs

METRICS = [("energy", 1.0), ("energy", 1.5), ("laplacian", 0.7)]


@pytest.mark.parametrize("metric,param", METRICS)
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("threads", [1, 2])
def test_weighted_dispersion_against_double_loop(metric, param, d, dtype, threads):
    rng = np.random.default_rng(330)
    X = rng.normal(size=(31, d)).astype(dtype)
    labels = rng.choice(["a", "b", "c"], size=31)
    w = rng.uniform(0.0, 2.5, 31)
    res = es.dispersion(X, labels, weights=w, n_threads=threads, **metric_kwargs(metric, param))
    W, S, T, F = ref_weighted_wst(X.astype(float), labels, w, metric, param)
    # reference groups in order of appearance; the result's sorted: compare the scalars
    assert res.W == pytest.approx(W, rel=1e-12)
    assert res.S == pytest.approx(S, rel=1e-12)
    assert res.T == pytest.approx(T, rel=1e-12)
    assert res.F == pytest.approx(F, rel=1e-11)
    assert res.weights == "array"
    for j, g in enumerate(res.groups):
        assert res.weight_totals[j] == pytest.approx(w[labels == g].sum(), rel=1e-14)
    assert res.df[1] == pytest.approx(w.sum() - 3, rel=1e-14)
    np.testing.assert_array_equal(res.to_frame("groups")["weight_total"], res.weight_totals)


def test_weighted_dispersion_precomputed():
    rng = np.random.default_rng(331)
    X = rng.normal(size=(15, 2))
    labels = np.repeat([0, 1, 2], 5)
    w = rng.uniform(0.1, 2.0, 15)
    res = es.dispersion(ref_matrix(X), labels, weights=w, metric="precomputed")
    W, S, T, F = ref_weighted_wst(X, labels, w)
    assert (res.W, res.S, res.T, res.F) == pytest.approx((W, S, T, F), rel=1e-12)


@pytest.mark.parametrize("d", [1, 3])
def test_integer_weights_equal_repeated_rows(d):
    rng = np.random.default_rng(332)
    X = rng.normal(size=(40, d))
    labels = rng.choice([0, 1, 2], size=40)
    w = rng.integers(0, 4, 40)
    w[labels == 0] += 1  # no group loses all its rows
    res = es.dispersion(X, labels, weights=w)
    rep = es.dispersion(np.repeat(X, w, axis=0), np.repeat(labels, w))
    assert (res.W, res.S, res.T, res.F) == pytest.approx((rep.W, rep.S, rep.T, rep.F), rel=1e-13)
    np.testing.assert_allclose(res.g, rep.g, rtol=1e-13)
    assert res.df == pytest.approx(rep.df)


def test_integer_weights_equal_repeated_rows_exactly():
    # 1-D integers, exponent 1: every pair sum is an integer; the weights' group totals are
    # powers of two, so the masses are exact too
    X = np.array([0.0, 3.0, 1.0, 7.0, 4.0, 2.0, 9.0, 5.0])
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    w = np.array([2, 1, 1, 4, 0, 2, 1, 1])
    res = es.dispersion(X, labels, weights=w)
    rep = es.dispersion(np.repeat(X, w), np.repeat(labels, w))
    assert (res.W, res.S, res.T) == (rep.W, rep.S, rep.T)
    assert np.array_equal(res.g, rep.g)


@pytest.mark.parametrize("c", [1e300, 1e-300, 2.0**900, 2.0**-900])
def test_weights_scale_linearly_at_extreme_magnitudes(c):
    # the weights count as frequencies: W, S and T are linear in a common factor c of the
    # weights, g does not change, and F changes only through its N - k. The products of two
    # group totals once overflowed (c = 1e300: S = T = F = inf) or underflowed (c = 1e-300:
    # S = T = 0); the reference is the plain loops at c = 1
    rng = np.random.default_rng(335)
    X = rng.normal(size=(30, 2))
    labels = rng.choice([0, 1, 2], size=30)
    w = rng.uniform(0.5, 3.0, 30)
    W, S, T, _ = ref_weighted_wst(X, labels, w)
    N, k = float(w.sum()) * c, 3
    if N > k:
        res = es.dispersion(X, labels, weights=w * c)
        assert res.F == pytest.approx((S / (k - 1)) / (W / (N - k)), rel=1e-12)
    else:  # N - k < 0: F is undefined, and said to be
        with pytest.warns(es.DegenerateStatisticWarning, match="F is NaN"):
            res = es.dispersion(X, labels, weights=w * c)
        assert np.isnan(res.F)
    assert (res.W / c, res.S / c, res.T / c) == pytest.approx((W, S, T), rel=1e-12)
    np.testing.assert_allclose(res.g, es.dispersion(X, labels, weights=w).g, rtol=1e-14)
    np.testing.assert_allclose(res.weight_totals / c, [w[labels == j].sum() for j in range(k)],
                               rtol=1e-14)


def test_weights_column_is_not_a_variable():
    rng = np.random.default_rng(333)
    df = pd.DataFrame({"u": rng.normal(size=12), "w": rng.uniform(0.5, 2, 12), "g": list("ab") * 6})
    res = es.dispersion(df, by="g", weights="w")
    assert res.columns == ["u"] and res.weights == "w"
    W, S, T, F = ref_weighted_wst(df[["u"]].to_numpy(), df.g.to_numpy(), df.w.to_numpy())
    assert (res.W, res.S, res.T, res.F) == pytest.approx((W, S, T, F), rel=1e-12)


def test_default_result_records_no_weights():
    res = es.dispersion([0.0, 1.0, 5.0, 6.0], ["a", "a", "b", "b"])
    assert res.weights is None and res.weight_totals is None
    assert list(res.to_frame("groups").columns) == ["size", "g_within"]


def test_bad_weights():
    X, labels = [0.0, 1.0, 5.0, 6.0], ["a", "a", "b", "b"]
    with pytest.raises(ValueError, match=r"`weights` must be non-negative; got -1.0 at position 2"):
        es.dispersion(X, labels, weights=[1, 1, -1, 1])
    with pytest.raises(ValueError, match=r"`weights` must be finite; got nan at position 0"):
        es.dispersion(X, labels, weights=[np.nan, 1, 1, 1])
    with pytest.raises(ValueError, match=r"`weights` must not all be 0"):
        es.dispersion(X, labels, weights=[0, 0, 0, 0])
    with pytest.raises(ValueError, match=r"group 'a' has only zero weights"):
        es.dispersion(X, labels, weights=[0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"one weight per row \(4\); got 3"):
        es.dispersion(X, labels, weights=[1, 1, 1])
    with pytest.raises(ValueError, match="method='sorted'.*not available with `weights`"):
        es.dispersion(X, labels, weights=[1, 1, 1, 1], method="sorted")
    df = pd.DataFrame({"v": X, "g": labels})
    with pytest.raises(TypeError, match="`weights` with `dropna=True` is not available"):
        es.dispersion(df, by="g", weights=[1, 1, 1, 1], dropna=True)
    with pytest.raises(KeyError, match="column 'w' not found in `X`"):
        es.dispersion(df, by="g", weights="w")


def test_weighted_dispersion_many_blocks_and_calls(monkeypatch):
    # several column blocks (256) and many calls over rows (small CALL_WORK), groups that
    # straddle the calls; against dense NumPy weighted means (scipy's cdist)
    from scipy.spatial.distance import cdist

    from energystats._core import _weights

    monkeypatch.setattr(_weights, "CALL_WORK", 3e3)
    rng = np.random.default_rng(334)
    X = rng.normal(size=(800, 2))
    labels = rng.choice([0, 1, 2, 3], size=800)
    w = rng.uniform(size=800)
    res = es.dispersion(X, labels, weights=w, n_threads=2)
    D = cdist(X, X)
    N = np.array([w[labels == j].sum() for j in range(4)])
    q = [np.where(labels == j, w, 0.0) / N[j] for j in range(4)]
    g = np.array([[q[i] @ D @ q[j] for j in range(4)] for i in range(4)])
    np.testing.assert_allclose(res.g, g, rtol=1e-12)
    assert res.W == pytest.approx(np.sum(N / 2 * np.diag(g)), rel=1e-12)


def test_weights_totalling_fewer_than_the_groups_say_so():
    # weights are frequencies: normalised weights (total 1) leave F undefined; the warning once
    # said "every group a single point" of 20 points in 2 groups
    rng = np.random.default_rng(2)
    X, g = rng.normal(size=(20, 2)), np.repeat([0, 1], 10)
    w = rng.uniform(0.5, 1.5, 20)
    with pytest.warns(es.DegenerateStatisticWarning, match=r"weights totalling N = 1 for k = 2 groups"):
        res = es.dispersion(X, g, weights=w / w.sum())
    assert np.isnan(res.F) and res.W > 0
    rescaled = es.dispersion(X, g, weights=w / w.mean())  # mean 1: N = n = 20
    assert np.isfinite(rescaled.F)


def test_weighted_dispersion_takes_a_condensed_vector():
    # the weighted path once took the condensed vector as n(n-1)/2 samples and blamed `labels`
    from scipy.spatial.distance import pdist, squareform

    rng = np.random.default_rng(3)
    x, g, w = rng.normal(size=(7, 2)), [0, 0, 1, 1, 1, 2, 2], rng.uniform(0.2, 2.0, 7)
    a = es.dispersion(pdist(x), g, metric="precomputed", weights=w)
    b = es.dispersion(squareform(pdist(x)), g, metric="precomputed", weights=w)
    assert (a.W, a.S, a.T) == (b.W, b.S, b.T)
