"""balance_table: every column against a plain reference, integer weights against repeated
rows (dcor on the repeated rows), and the named errors."""
import numpy as np
import pandas as pd
import pytest

import energystats as es


def _studentize(X):
    return (X - X.mean(0)) / X.std(0)


def _wvar(x, w):
    # the unbiased weighted variance with reliability weights, written out
    m = sum(wi * xi for wi, xi in zip(w, x)) / sum(w)
    return sum(wi * (xi - m) ** 2 for wi, xi in zip(w, x)) / (sum(w) - sum(wi * wi for wi in w) / sum(w))


def _wmean(x, w):
    return sum(wi * xi for wi, xi in zip(w, x)) / sum(w)


def _ks(x0, w0, x1, w1):
    best = 0.0
    for v in np.r_[x0, x1]:
        f0 = sum(wi for wi, xi in zip(w0, x0) if xi <= v) / sum(w0)
        f1 = sum(wi for wi, xi in zip(w1, x1) if xi <= v) / sum(w1)
        best = max(best, abs(f0 - f1))
    return best


def _pd(A, B):
    return np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def _energy(A, B):
    """Unweighted V-statistic energy distance, written out (no package code)."""
    return 2 * _pd(A, B).mean() - _pd(A, A).mean() - _pd(B, B).mean()


def _dcor(a, B):
    a = a.reshape(len(a), -1)

    def centred(D):
        return D - D.mean(0) - D.mean(1)[:, None] + D.mean()

    A, Bc = centred(_pd(a, a)), centred(_pd(B, B))
    return np.sqrt((A * Bc).mean() / np.sqrt((A * A).mean() * (Bc * Bc).mean()))


def _data(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[:, 2] = np.round(X[:, 2])                      # ties for the KS distance
    t = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    w = rng.integers(1, 4, size=n).astype(float)
    return X, t, w


def test_columns_against_plain_reference():
    X, t, w = _data()
    bt = es.balance_table(X, t, w)
    assert list(bt.table.columns) == ["smd_before", "smd_after", "var_ratio_before", "var_ratio_after",
                                      "ks_before", "ks_after"]
    one = np.ones(len(t))
    for j in range(3):
        x0, x1 = X[t == 0, j], X[t == 1, j]
        pooled = np.sqrt((_wvar(x0, one[t == 0]) + _wvar(x1, one[t == 1])) / 2)
        for tag, ww in (("before", one), ("after", w)):
            w0, w1 = ww[t == 0], ww[t == 1]
            smd = (_wmean(x1, w1) - _wmean(x0, w0)) / pooled
            v0, v1 = _wvar(x0, w0), _wvar(x1, w1)
            row = bt.table.iloc[j]
            assert row[f"smd_{tag}"] == pytest.approx(smd, rel=1e-12)
            assert row[f"var_ratio_{tag}"] == pytest.approx(max(v0, v1) / min(v0, v1), rel=1e-12)
            assert row[f"ks_{tag}"] == pytest.approx(_ks(x0, w0, x1, w1), rel=1e-12)
    ess = bt.ess
    assert ess.loc[1, "ess_after"] == pytest.approx(w[t == 1].sum() ** 2 / (w[t == 1] ** 2).sum())
    assert ess.loc[0, "ess_before"] == (t == 0).sum()


def test_energy_and_dcor_equal_repeated_rows():
    # integer weights must equal repeating the rows (references: plain numpy on the repeated rows)
    X, t, w = _data()
    bt = es.balance_table(X, t, w)
    Z = _studentize(X)
    reps = w.astype(int)
    Zr, tr = np.repeat(Z, reps, axis=0), np.repeat(t, reps)
    assert bt.energy_before == pytest.approx(_energy(Z[t == 0], Z[t == 1]), rel=1e-10)
    assert bt.energy_after == pytest.approx(_energy(Zr[tr == 0], Zr[tr == 1]), rel=1e-10)
    a = X[:, 0] * 2 + np.random.default_rng(1).normal(size=len(t))
    bc = es.balance_table(X, a, w, treatment_kind="continuous")
    assert bc.kind == "continuous"
    As = (a - a.mean()) / a.std()
    ar = np.repeat(As, reps)
    assert bc.energy_before == pytest.approx(_dcor(As, Z), rel=1e-10)
    assert bc.energy_after == pytest.approx(_dcor(ar, Zr), rel=1e-10)
    Xr = np.repeat(X, reps, axis=0)
    for j in range(3):
        assert bc.table["corr_after"].iloc[j] == pytest.approx(np.corrcoef(ar, Xr[:, j])[0, 1], rel=1e-10)


def test_three_levels_report_the_largest_pair_and_a_frame_column():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(45, 2))
    t = np.repeat(["a", "b", "c"], 15)
    X[t == "c"] += 1.0
    df = pd.DataFrame(X, columns=["u", "v"]).assign(arm=t)
    bt = es.balance_table(df, "arm")
    assert list(bt.table.index) == ["u", "v"] and "smd_after" not in bt.table
    assert np.isnan(bt.energy_after)
    for j, c in enumerate("uv"):
        smds = []
        for g, h in (("a", "b"), ("a", "c"), ("b", "c")):
            xg, xh = X[t == g, j], X[t == h, j]
            smds.append((xh.mean() - xg.mean()) / np.sqrt((xg.var(ddof=1) + xh.var(ddof=1)) / 2))
        assert bt.table.loc[c, "smd_before"] == pytest.approx(max(smds, key=abs), rel=1e-12)


def test_love_plot():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    X, t, w = _data()
    ax = es.balance_table(X, t, w).plot()
    assert [tx.get_text() for tx in ax.get_yticklabels()] == ["x0", "x1", "x2"]
    with pytest.raises(ValueError, match=r"`stat` must name a statistic of the table"):
        es.balance_table(X, t, w).plot(stat="corr")


def test_bad_weights_and_kinds_are_named():
    X, t, w = _data()
    with pytest.raises(ValueError, match=r"`weights` must be non-negative; got -1\.0 at position 3"):
        es.balance_table(X, t, np.where(np.arange(30) == 3, -1.0, 1.0))
    with pytest.raises(ValueError, match=r"`weights` must be finite; got nan"):
        es.balance_table(X, t, np.r_[np.nan, w[1:]])
    with pytest.raises(ValueError, match=r"`weights` must not be all zero within a treatment level"):
        es.balance_table(X, t, np.where(t == 1, 0.0, 1.0))
    with pytest.raises(ValueError, match=r"`treatment_kind` must be one of"):
        es.balance_table(X, t, treatment_kind="binary")
    with pytest.raises(ValueError, match=r"`treatment` must have at least 2 levels"):
        es.balance_table(X, np.zeros(30, dtype=int))


def _studentize_w(X, s):
    p = s / s.sum()
    m = p @ X
    return (X - m) / np.sqrt(p @ (X - m) ** 2)


@pytest.mark.parametrize("k,based", [(2, False), (2, True), (3, True)])
def test_overall_energy_equals_the_weighted_energy_distance(k, based):
    # the table's overall statistic is the package's public weighted energy distance of the
    # (base-weighted) studentized covariates, largest over the pairs of levels
    rng = np.random.default_rng(3)
    n = 45
    X = rng.normal(size=(n, 3)) * [1.0, 2.0, 5.0]
    t = np.arange(n) % k
    w = rng.uniform(0.2, 3.0, n)
    s = rng.uniform(0.5, 2.0, n) if based else np.ones(n)
    bt = es.balance_table(X, t, w, base_weights=s if based else None)
    Z = _studentize_w(X, s)

    def largest(v):
        return max(es.energy_distance(Z[t == g], Z[t == h], weights=v[t == g], weights_y=v[t == h])
                   for g in range(k) for h in range(g + 1, k))

    assert bt.energy_before == pytest.approx(largest(s), rel=1e-12)
    assert bt.energy_after == pytest.approx(largest(w), rel=1e-12)
    assert type(bt.energy_before) is float and type(bt.energy_after) is float


@pytest.mark.parametrize("based", [False, True])
def test_overall_dcor_equals_the_weighted_distance_correlation(based):
    rng = np.random.default_rng(4)
    n = 40
    X = rng.normal(size=(n, 2)) * [1.0, 4.0]
    a = X[:, 0] + rng.normal(size=n)
    w = rng.uniform(0.2, 3.0, n)
    s = rng.uniform(0.5, 2.0, n) if based else np.ones(n)
    bt = es.balance_table(X, a, w, base_weights=s if based else None, treatment_kind="continuous")
    Z = _studentize_w(X, s)
    assert bt.energy_before == pytest.approx(es.distance_correlation(a, Z, weights=s), rel=1e-12)
    assert bt.energy_after == pytest.approx(es.distance_correlation(a, Z, weights=w), rel=1e-12)
    assert type(bt.energy_before) is float and type(bt.energy_after) is float


@pytest.mark.parametrize("degenerate", ["treated", "control"])
def test_a_level_with_one_positive_weight_has_no_smd_or_variance_ratio(degenerate):
    # its weighted variance is undefined: the SMD and variance ratio once came out 0.0 and 1.0
    # or inf (depending on which level), a perfect balance reported beside KS = 1
    rng = np.random.default_rng(0)
    x = rng.normal(20, 1, size=(20, 1))
    t = np.repeat(["c", "t"], 10)
    w = np.ones(20)
    lo = 10 if degenerate == "treated" else 0
    w[lo:lo + 10] = 0.0
    w[lo + 2] = 10.0
    with pytest.warns(es.DegenerateStatisticWarning, match=rf"level\(s\) \['{degenerate[0]}'\]"):
        res = es.balance_table(x, t, w)
    row = res.table.iloc[0]
    assert np.isnan(row["smd_after"]) and np.isnan(row["var_ratio_after"])
    assert row["ks_after"] > 0 and np.isfinite(row["smd_before"])
