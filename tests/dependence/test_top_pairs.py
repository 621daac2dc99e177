"""distance_correlation_matrix(top=k): the k strongest pairs without the p×p matrix, equal to the
full matrix's k largest entries (in blocks of any size), ties in the order of the pairs."""
import numpy as np
import pandas as pd
import pytest

import energystats as es


def _table(n=60, p=25, seed=0, tie=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 3] = X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    X[:, 7] = np.round(X[:, 5])
    if tie:
        X[:, 9] = X[:, 8]    # dcor(9, k) == dcor(8, k) for every k, up to the products' rounding
    return pd.DataFrame(X).add_prefix("c")


@pytest.mark.parametrize("estimator", ["V", "U"])
@pytest.mark.parametrize("budget", [2**30, 3 * 8 * 60 * 61])   # one block / blocks of 1-2 columns
def test_equal_to_the_full_matrix(estimator, budget):
    df = _table()
    full = es.distance_correlation_matrix(df, estimator=estimator).to_frame()
    want = full.sort_values("dcor", ascending=False, kind="stable").head(12)
    got = es.distance_correlation_matrix(df, estimator=estimator, top=12, memory_budget=budget)
    assert got.dcor is None
    tp = got.to_frame()
    np.testing.assert_allclose(tp["dcor"], want["dcor"], rtol=0, atol=1e-13)
    assert list(zip(tp.x, tp.y)) == list(zip(want.x, want.y))


def test_against_pairwise_calls():
    df = _table(n=40, p=8, seed=3)
    tp = es.distance_correlation_matrix(df, top=5).to_frame()
    for x, y, d in tp.itertuples(index=False):
        assert d == pytest.approx(es.distance_correlation(df[x], df[y]), rel=1e-12)
    # every pair not kept is at most the smallest kept
    kept = set(zip(tp.x, tp.y))
    for a in range(8):
        for b in range(a + 1, 8):
            if (f"c{a}", f"c{b}") not in kept:
                assert es.distance_correlation(df[f"c{a}"], df[f"c{b}"]) <= tp.dcor.min() + 1e-12


def test_a_repeated_column_gives_neighbouring_pairs():
    df = _table(tie=True)
    tp = es.distance_correlation_matrix(df, top=40).to_frame()
    assert (tp.x.iloc[0], tp.y.iloc[0], tp.dcor.iloc[0]) == ("c8", "c9", pytest.approx(1.0))
    for k in ("c3", "c1"):
        a = tp[(tp.x == k) & (tp.y == "c8")].dcor.to_numpy()
        b = tp[(tp.x == k) & (tp.y == "c9")].dcor.to_numpy()
        np.testing.assert_allclose(a, b, rtol=1e-13)


@pytest.mark.parametrize("kw, err, match", [
    (dict(top=0), ValueError, r"`top` must be an integer in \[1, p\(p-1\)/2 = 300\]; got 0"),
    (dict(top=301), ValueError, "`top` must be an integer"),
    (dict(top=2.0), ValueError, "`top` must be an integer"),
    (dict(top=3, pvalue="ttest"), ValueError, "pass pvalue=None"),
])
def test_bad_arguments(kw, err, match):
    with pytest.raises(err, match=match):
        es.distance_correlation_matrix(_table(), **kw)
