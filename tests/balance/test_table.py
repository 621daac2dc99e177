"""balance_table: every column against a plain reference (cobalt's definitions written out in
NumPy, and hand-computed values on a fixed example), integer weights against repeated rows
(dcor on the repeated rows), magnitudes, index alignment, thresholds, warnings and the named
errors."""
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats.balance.table import BalanceWarning

# a BalanceWarning or DegenerateStatisticWarning that a test does not expect is an error
pytestmark = [pytest.mark.filterwarnings("error::energystats.balance.table.BalanceWarning"),
              pytest.mark.filterwarnings("error::energystats.DegenerateStatisticWarning")]


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
    bt = es.balance_table(X, t, w, warn=False)
    assert list(bt.table.columns) == ["type", "smd_before", "smd_after", "var_ratio_before",
                                      "var_ratio_after", "ks_before", "ks_after"]
    assert list(bt.table["type"]) == ["contin."] * 3
    assert bt.estimand == "ATE" and bt.focal is None
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
    assert ess.loc[1, "ess_after"] == pytest.approx(w[t == 1].sum() ** 2 / (w[t == 1] ** 2).sum(),
                                                    rel=1e-12)
    assert ess.loc[0, "ess_before"] == (t == 0).sum()


def test_energy_and_dcor_equal_repeated_rows():
    # integer weights must equal repeating the rows (references: plain numpy on the repeated rows)
    X, t, w = _data()
    bt = es.balance_table(X, t, w, warn=False)
    Z = _studentize(X)
    reps = w.astype(int)
    Zr, tr = np.repeat(Z, reps, axis=0), np.repeat(t, reps)
    assert bt.energy_before == pytest.approx(_energy(Z[t == 0], Z[t == 1]), rel=1e-10)
    assert bt.energy_after == pytest.approx(_energy(Zr[tr == 0], Zr[tr == 1]), rel=1e-10)
    a = X[:, 0] * 2 + np.random.default_rng(1).normal(size=len(t))
    bc = es.balance_table(X, a, w, treatment_kind="continuous", warn=False)
    assert bc.kind == "continuous"
    As = (a - a.mean()) / a.std()
    ar = np.repeat(As, reps)
    assert bc.energy_before == pytest.approx(_dcor(As, Z), rel=1e-10)
    assert bc.energy_after == pytest.approx(_dcor(ar, Zr), rel=1e-10)
    Xr = np.repeat(X, reps, axis=0)
    for j in range(3):
        assert bc.table["corr_after"].iloc[j] == pytest.approx(np.corrcoef(ar, Xr[:, j])[0, 1], rel=1e-10)


def test_three_levels_report_the_largest_pair_and_a_frame_column():
    # ATE, 3 levels: cobalt's "pooled" denominator is over ALL levels, sqrt(mean of the
    # three variances), the same for every pair
    rng = np.random.default_rng(3)
    X = rng.normal(size=(45, 2))
    t = np.repeat(["a", "b", "c"], 15)
    X[t == "c"] += 1.0
    df = pd.DataFrame(X, columns=["u", "v"]).assign(arm=t)
    bt = es.balance_table(df, "arm")
    assert list(bt.table.index) == ["u", "v"] and "smd_after" not in bt.table
    assert np.isnan(bt.energy_after)
    for j, c in enumerate("uv"):
        pooled = np.sqrt(np.mean([X[t == g, j].var(ddof=1) for g in "abc"]))
        smds = [(X[t == h, j].mean() - X[t == g, j].mean()) / pooled
                for g, h in (("a", "b"), ("a", "c"), ("b", "c"))]
        assert bt.table.loc[c, "smd_before"] == pytest.approx(max(smds, key=abs), rel=1e-12)


def test_love_plot():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    X, t, w = _data()
    ax = es.balance_table(X, t, w, warn=False).plot()
    assert [tx.get_text() for tx in ax.get_yticklabels()] == ["x0", "x1", "x2"]
    with pytest.raises(ValueError, match=r"`stat` must name a statistic of the table "
                                         r"\(\['ks', 'smd', 'var_ratio'\]\)"):
        es.balance_table(X, t, w, warn=False).plot(stat="corr")


def test_love_plot_with_binary_covariates_and_thresholds():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    X, t, w = _data()
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(flag=X[:, 0] > 0,
                                                         g=np.where(X[:, 1] > 0, "p", "q"))
    bt = es.balance_table(df, t, w, thresholds={"smd": 0.2, "var_ratio": 2}, warn=False)
    ax = bt.plot()
    assert [tx.get_text() for tx in ax.get_yticklabels()] == ["a", "b", "c", "flag_True", "g_q"]
    assert ax.get_xlabel() == "|smd| (binary covariates: raw difference)"
    assert [ln.get_xdata()[0] for ln in ax.get_lines()] == [0.2]        # the table's threshold
    ax = bt.plot(stat="var_ratio")                                       # NaN for the binary rows
    assert [ln.get_xdata()[0] for ln in ax.get_lines()] == [2.0]
    ax = bt.plot(stat="ks")                                              # no threshold, no line
    assert ax.get_lines() == []
    plt.close("all")


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
    with pytest.raises(TypeError, match=r"`warn` must be True or False; got 'no'"):
        es.balance_table(X, t, w, warn="no")
    with pytest.raises(KeyError, match=r"`treatment`: column 'arm' not found in `X`"):
        es.balance_table(pd.DataFrame(X), "arm")


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
    bt = es.balance_table(X, t, w, base_weights=s if based else None, warn=False)
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
    bt = es.balance_table(X, a, w, base_weights=s if based else None, treatment_kind="continuous",
                          warn=False)
    Z = _studentize_w(X, s)
    assert bt.energy_before == pytest.approx(es.distance_correlation(a, Z, weights=s), rel=1e-12)
    assert bt.energy_after == pytest.approx(es.distance_correlation(a, Z, weights=w), rel=1e-12)
    assert type(bt.energy_before) is float and type(bt.energy_after) is float


@pytest.mark.parametrize("degenerate", ["treated", "control"])
def test_a_level_with_one_positive_weight_has_no_variance_ratio(degenerate):
    # its weighted variance is undefined: the variance ratio once came out 1.0 or inf, a perfect
    # balance reported beside KS = 1.  The SMD is defined: its denominator is the base-weighted
    # pooled SD (cobalt's, the same before and after), the level's mean is its one point's value
    rng = np.random.default_rng(0)
    x = rng.normal(20, 1, size=(20, 1))
    t = np.repeat(["c", "t"], 10)
    w = np.ones(20)
    lo = 10 if degenerate == "treated" else 0
    w[lo:lo + 10] = 0.0
    w[lo + 2] = 10.0
    with pytest.warns(es.DegenerateStatisticWarning, match=rf"level\(s\) \['{degenerate[0]}'\]"):
        res = es.balance_table(x, t, w, warn=False)
    row = res.table.iloc[0]
    assert np.isnan(row["var_ratio_after"]) and row["ks_after"] > 0
    pooled = np.sqrt((x[:10, 0].var(ddof=1) + x[10:, 0].var(ddof=1)) / 2)
    m = [np.average(x[:10, 0], weights=w[:10]), np.average(x[10:, 0], weights=w[10:])]
    assert row["smd_after"] == pytest.approx((m[1] - m[0]) / pooled, rel=1e-12)
    assert np.isfinite(row["smd_before"])


# -- SMD denominators by estimand, binary covariates and factors: hand-computed --------------

# a fixed example (cobalt's definitions, computed by hand below)
_X = np.array([1.0, 2.0, 4.0, 7.0, 3.0, 5.0, 6.0, 9.0, 8.0, 2.5])
_B = np.array([0, 1, 0, 0, 1, 0, 1, 1, 0, 1])
_F = np.array(["a", "b", "c", "a", "b", "c", "a", "b", "c", "a"])
_T = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
_W = np.array([1.0, 2.0, 0.5, 1.5, 1.0, 1.0, 3.0, 0.5, 2.0, 1.0])


def _frame():
    return pd.DataFrame({"x": _X, "b": _B, "f": _F})


class TestDenominators:
    # by hand, unweighted: control x = 1 2 4 7 3, mean 3.4, squares 5.76 1.96 .36 12.96 .16,
    # s0² = 21.2/4 = 5.3; treated x = 5 6 9 8 2.5, mean 6.1, squares 1.21 .01 8.41 3.61 12.96,
    # s1² = 26.2/4 = 6.55; difference 2.7
    HAND = {"ATT": 2.7 / np.sqrt(6.55), "ATC": 2.7 / np.sqrt(5.3),
            "ATE": 2.7 / np.sqrt((5.3 + 6.55) / 2)}

    @pytest.mark.parametrize("estimand", ["ATE", "ATT", "ATC"])
    def test_against_hand_computed_smd(self, estimand):
        bt = es.balance_table(_frame(), _T, _W, estimand=estimand, warn=False)
        assert bt.table.loc["x", "smd_before"] == pytest.approx(self.HAND[estimand], rel=1e-12)
        assert self.HAND["ATT"] == pytest.approx(1.054977, rel=1e-6)      # 2.7/2.559297
        assert self.HAND["ATC"] == pytest.approx(1.172805, rel=1e-6)      # 2.7/2.302173
        assert self.HAND["ATE"] == pytest.approx(1.109225, rel=1e-6)      # 2.7/2.434132
        # after weighting: the weighted means over the SAME denominator (cobalt)
        m0 = (_W[:5] @ _X[:5]) / _W[:5].sum()
        m1 = (_W[5:] @ _X[5:]) / _W[5:].sum()
        den = 2.7 / self.HAND[estimand]
        assert bt.table.loc["x", "smd_after"] == pytest.approx((m1 - m0) / den, rel=1e-12)
        assert bt.estimand == estimand
        assert bt.focal == {"ATE": None, "ATT": 1, "ATC": 0}[estimand]

    def test_binary_covariate_is_the_raw_difference_in_proportions(self):
        bt = es.balance_table(_frame(), _T, _W, estimand="ATT", warn=False)
        row = bt.table.loc["b"]
        assert row["type"] == "binary"
        # by hand: control 0 1 0 0 1 -> 0.4, treated 0 1 1 0 1 -> 0.6
        assert row["smd_before"] == pytest.approx(0.2, rel=1e-12)
        p0 = (_W[:5] @ _B[:5]) / _W[:5].sum()                   # (2 + 1) / 6 = 0.5
        p1 = (_W[5:] @ _B[5:]) / _W[5:].sum()                   # (3 + .5 + 1) / 7.5 = 0.6
        assert (p0, p1) == (pytest.approx(0.5, rel=1e-15), pytest.approx(0.6, rel=1e-15))
        assert row["smd_after"] == pytest.approx(p1 - p0, rel=1e-12)
        assert np.isnan(row["var_ratio_before"]) and np.isnan(row["var_ratio_after"])
        assert row["ks_before"] == pytest.approx(0.2, rel=1e-12)  # KS of a 0/1 variable
        # the same under every estimand: no denominator
        for est in ("ATE", "ATC"):
            other = es.balance_table(_frame(), _T, _W, estimand=est, warn=False).table.loc["b"]
            assert other["smd_after"] == row["smd_after"]

    def test_two_valued_covariate_is_coded_as_cobalts_binarize(self):
        # values {3, 7}: 3 -> 0, 7 -> 1; values {-1, 0}: 0 stays 0, -1 -> 1
        df = pd.DataFrame({"u": np.where(_B == 1, 7.0, 3.0), "v": np.where(_B == 1, 0.0, -1.0)})
        bt = es.balance_table(df, _T, warn=False)
        assert list(bt.table["type"]) == ["binary", "binary"]
        assert bt.table.loc["u", "smd_before"] == pytest.approx(0.2, rel=1e-12)
        assert bt.table.loc["v", "smd_before"] == pytest.approx(-0.2, rel=1e-12)

    def test_factor_rows_are_level_proportions(self):
        bt = es.balance_table(_frame(), _T, _W, warn=False)
        assert list(bt.table.index) == ["x", "b", "f_a", "f_b", "f_c"]
        assert list(bt.table["type"]) == ["contin.", "binary", "binary", "binary", "binary"]
        # by hand: control a b c a b -> .4 .4 .2; treated c a b c a -> .4 .2 .4
        np.testing.assert_allclose(bt.table.loc[["f_a", "f_b", "f_c"], "smd_before"],
                                   [0.0, -0.2, 0.2], rtol=0, atol=1e-15)
        for lev in "abc":
            ind = (_F == lev).astype(float)
            want = (_W[5:] @ ind[5:]) / _W[5:].sum() - (_W[:5] @ ind[:5]) / _W[:5].sum()
            assert bt.table.loc[f"f_{lev}", "smd_after"] == pytest.approx(want, rel=1e-12, abs=1e-15)

    def test_factor_dtypes_and_the_treatment_column(self):
        df = _frame().assign(cat=pd.Categorical(_F, categories=["c", "b", "a", "z"]),
                             flag=_B == 1, arm=np.where(_T == 1, "treated", "control"))
        bt = es.balance_table(df, "arm", warn=False, estimand="ATT", focal="treated")
        # category: categories' order, the unused 'z' left out; bool: False/True, two levels ->
        # the second's row only; the treatment column is not a covariate
        assert list(bt.table.index) == ["x", "b", "f_a", "f_b", "f_c", "cat_c", "cat_b", "cat_a",
                                        "flag_True"]
        assert bt.table.loc["flag_True", "smd_before"] == pytest.approx(0.2, rel=1e-12)
        assert bt.table.loc["x", "smd_before"] == pytest.approx(self.HAND["ATT"], rel=1e-12)

    def test_missing_factor_value_is_refused(self):
        df = _frame()
        df.loc[3, "f"] = None
        with pytest.raises(ValueError, match=r"column 'f' is a factor .* 1 missing value\(s\), "
                                             r"e\.g\. at row 3"):
            es.balance_table(df, _T)

    def test_estimand_and_focal_from_a_weights_result(self):
        res = SimpleNamespace(weights=_W, estimand="ATT", focal=1, index=None)
        bt = es.balance_table(_frame(), _T, res, warn=False)
        assert (bt.estimand, bt.focal) == ("ATT", 1)
        assert bt.table.loc["x", "smd_before"] == pytest.approx(self.HAND["ATT"], rel=1e-12)
        # an explicit estimand wins, and the result's focal level goes with the result's estimand
        bt = es.balance_table(_frame(), _T, res, estimand="ATE", warn=False)
        assert (bt.estimand, bt.focal) == ("ATE", None)
        assert bt.table.loc["x", "smd_before"] == pytest.approx(self.HAND["ATE"], rel=1e-12)

    def test_a_real_att_result(self):
        pytest.importorskip("osqp")
        X, t, _ = _data(n=40)
        res = es.energy_balancing_weights(X, t, estimand="ATT")
        bt = es.balance_table(X, t, res, warn=False)
        plain = es.balance_table(X, t, res.weights, estimand="ATT", warn=False)
        pd.testing.assert_frame_equal(bt.table, plain.table)
        sd1 = X[t == 1].std(axis=0, ddof=1)
        m = [np.average(X[t == g], axis=0, weights=res.weights[t == g]) for g in (0, 1)]
        np.testing.assert_allclose(bt.table["smd_after"], (m[1] - m[0]) / sd1, rtol=1e-12)

    def test_multi_level_focal_compares_each_level_with_it(self):
        rng = np.random.default_rng(5)
        x = rng.normal(size=60)
        t = np.repeat(["a", "b", "c"], 20)
        x[t == "c"] += 3.0                   # a-c differs most, but it is not a compared pair
        x[t == "b"] += 1.0
        bt = es.balance_table(x, t, estimand="ATT", focal="a")
        sd = x[t == "a"].std(ddof=1)
        want = max([(x[t == h].mean() - x[t == "a"].mean()) / sd for h in "bc"], key=abs)
        assert bt.table["smd_before"].iloc[0] == pytest.approx(want, rel=1e-12)
        bt = es.balance_table(x, t, estimand="ATT", focal="b")
        sd = x[t == "b"].std(ddof=1)
        pairs = [("a", "b"), ("b", "c")]     # (a, c) left out
        want = max([(x[t == h].mean() - x[t == g].mean()) / sd for g, h in pairs], key=abs)
        assert bt.table["smd_before"].iloc[0] == pytest.approx(want, rel=1e-12)

    # -- input validation --
    def test_bad_estimand_and_focal(self):
        with pytest.raises(ValueError, match=r"`estimand` must be one of 'ATE', 'ATT', 'ATC'; got 'ATO'"):
            es.balance_table(_X, _T, estimand="ATO")
        with pytest.raises(ValueError, match=r"`focal` is for estimand 'ATT' or 'ATC'; got focal=1"):
            es.balance_table(_X, _T, focal=1)
        with pytest.raises(ValueError, match=r"`focal` must be one of the treatment levels \[0, 1\]"):
            es.balance_table(_X, _T, estimand="ATT", focal=2)
        with pytest.raises(ValueError, match=r"`focal` is required with estimand 'ATC'"):
            es.balance_table(_X, np.where(_T == 1, "t", "c"), estimand="ATC")
        with pytest.raises(ValueError, match=r"`estimand` and `focal` are for a categorical"):
            es.balance_table(np.c_[_X, _X ** 2], np.linspace(0, 1, 10), estimand="ATT",
                             treatment_kind="continuous")


# -- magnitudes: every statistic invariant to scaling a column or the weights ----------------

SCALES = [2.0 ** 900, 2.0 ** -900, 1e300, 1e-300]


def _mag_data():
    rng = np.random.default_rng(11)
    n = 40
    X = rng.normal(size=(n, 4))
    X[:, 2] = np.round(X[:, 2])
    X[:, 3] = (X[:, 3] > 0).astype(float)            # binary
    t = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
    w = rng.uniform(0.5, 2.0, n)
    s = rng.uniform(0.5, 2.0, n)
    return X, t, w, s


def _assert_same(a, b, rtol=1e-12):
    num = [c for c in a.table.columns if c != "type"]
    np.testing.assert_allclose(b.table[num].to_numpy(float), a.table[num].to_numpy(float),
                               rtol=rtol, atol=0)
    assert list(a.table["type"]) == list(b.table["type"])
    assert b.energy_before == pytest.approx(a.energy_before, rel=rtol)
    assert b.energy_after == pytest.approx(a.energy_after, rel=rtol)
    np.testing.assert_allclose(b.ess.to_numpy(float), a.ess.to_numpy(float), rtol=rtol, atol=0)


class TestMagnitudes:
    @pytest.mark.parametrize("c", SCALES)
    @pytest.mark.parametrize("cols", ["one", "all"])
    def test_covariates(self, c, cols):
        # once: x 1e300 gave SMD 0 (the variances overflowed), x 2**-900 SMD 0 (underflow)
        X, t, w, s = _mag_data()
        base = es.balance_table(X, t, w, base_weights=s, warn=False)
        Xc = X.copy()
        if cols == "one":
            Xc[:, 1] *= c
        else:
            Xc *= c
        with warnings.catch_warnings():
            warnings.simplefilter("error")           # no overflow or underflow warnings either
            got = es.balance_table(Xc, t, w, base_weights=s, warn=False)
        _assert_same(base, got)
        assert base.table["smd_before"].abs().min() > 1e-3

    @pytest.mark.parametrize("c", SCALES)
    @pytest.mark.parametrize("which", ["weights", "base_weights"])
    def test_weights(self, c, which):
        # once: weights x 2**900 gave SMD and ESS NaN ("at most one positive weight")
        X, t, w, s = _mag_data()
        base = es.balance_table(X, t, w, base_weights=s, warn=False)
        kw = {"weights": w * c, "base_weights": s} if which == "weights" else \
            {"weights": w, "base_weights": s * c}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = es.balance_table(X, t, warn=False, **kw)
        _assert_same(base, got)

    @pytest.mark.parametrize("c", SCALES)
    def test_continuous_treatment(self, c):
        X, _, w, s = _mag_data()
        a = X[:, 0] + np.random.default_rng(2).normal(size=len(w))
        base = es.balance_table(X, a, w, base_weights=s, treatment_kind="continuous", warn=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = es.balance_table(X * c, a * c, w * c, base_weights=s,
                                   treatment_kind="continuous", warn=False)
        _assert_same(base, got)

    def test_mahalanobis_energy(self):
        X, t, w, s = _mag_data()
        base = es.balance_table(X, t, w, standardize="mahalanobis", warn=False)
        got = es.balance_table(X * [1e300, 1.0, 2.0 ** -900, 1.0], t, w,
                               standardize="mahalanobis", warn=False)
        assert got.energy_before == pytest.approx(base.energy_before, rel=1e-10)
        assert got.energy_after == pytest.approx(base.energy_after, rel=1e-10)


# -- pandas Series aligned by index ---------------------------------------------------------

class TestAlignment:
    def _frame(self):
        X, t, w = _data()
        idx = pd.Index([f"r{i}" for i in range(len(t))])
        return pd.DataFrame(X, columns=["a", "b", "c"], index=idx), pd.Series(t, index=idx), w

    @pytest.mark.parametrize("which", ["weights", "base_weights"])
    def test_shuffled_series_is_aligned_by_index(self, which):
        # once: a weights Series was used by position while X and t were aligned by index
        df, t, w = self._frame()
        perm = np.random.default_rng(0).permutation(len(t))
        ws = pd.Series(w, index=df.index)
        want = es.balance_table(df, t, warn=False, **{which: ws})
        got = es.balance_table(df, t, warn=False, **{which: ws.iloc[perm]})
        pd.testing.assert_frame_equal(got.table, want.table)
        assert got.energy_before == want.energy_before
        pd.testing.assert_frame_equal(got.ess, want.ess)
        # the same labels as the treatment's shuffled: X, t and the weights all aligned
        got = es.balance_table(df, t.iloc[perm[::-1]], warn=False, **{which: ws.iloc[perm]})
        pd.testing.assert_frame_equal(got.table, want.table)

    @pytest.mark.parametrize("which", ["weights", "base_weights"])
    def test_foreign_labels_are_refused(self, which):
        df, t, w = self._frame()
        bad = pd.Series(w, index=[f"s{i}" for i in range(len(w))])
        with pytest.raises(ValueError, match=rf"`{which}` is indexed but its index does not match "
                                             r"the data's: 30 row\(s\) of the data have no label"):
            es.balance_table(df, t, **{which: bad})

    def test_a_result_of_a_frame_is_aligned_by_its_index(self):
        pytest.importorskip("osqp")
        df, t, _ = self._frame()
        res = es.energy_balancing_weights(df, t)
        want = es.balance_table(df, t, res, warn=False)
        perm = np.random.default_rng(1).permutation(len(t))
        got = es.balance_table(df.iloc[perm], t.iloc[perm], res, warn=False)
        pd.testing.assert_frame_equal(got.table, want.table, rtol=1e-12)

    def test_array_weights_stay_positional(self):
        df, t, w = self._frame()
        a = es.balance_table(df, t, w, warn=False)
        b = es.balance_table(df, t, pd.Series(w, index=df.index), warn=False)
        pd.testing.assert_frame_equal(a.table, b.table)


# -- thresholds ------------------------------------------------------------------------------

class TestThresholds:
    def test_balanced_columns(self):
        bt = es.balance_table(_frame(), _T, _W, thresholds={"smd": 0.25, "var_ratio": 1.5,
                                                            "ks": 0.3}, warn=False)
        tab = bt.table
        assert list(tab.columns[-3:]) == ["smd_balanced", "var_ratio_balanced", "ks_balanced"]
        assert tab["smd_balanced"].dtype == "boolean"
        np.testing.assert_array_equal(tab["smd_balanced"].to_numpy(bool),
                                      tab["smd_after"].abs().to_numpy() < 0.25)
        np.testing.assert_array_equal(tab["ks_balanced"].to_numpy(bool),
                                      tab["ks_after"].to_numpy() < 0.3)
        # a binary covariate has no variance ratio, so no verdict on it (cobalt leaves it blank)
        assert tab["var_ratio_balanced"].isna().tolist() == [False, True, True, True, True]
        assert bool(tab.loc["x", "var_ratio_balanced"]) == (tab.loc["x", "var_ratio_after"] < 1.5)
        assert bt.thresholds == {"smd": 0.25, "var_ratio": 1.5, "ks": 0.3}

    def test_before_without_weights_and_strict_inequality(self):
        bt = es.balance_table(_frame(), _T, thresholds={"smd": 0.2})
        # b's raw difference is 0.2 exactly (to rounding) -- not below 0.2
        assert bt.table.loc["b", "smd_before"] == pytest.approx(0.2, rel=1e-12)
        assert bt.table["smd_balanced"].tolist() == list(bt.table["smd_before"].abs() < 0.2)

    def test_correlation_threshold(self):
        X, _, w = _data()
        a = X[:, 0] + np.random.default_rng(1).normal(size=len(w))
        bt = es.balance_table(X, a, w, thresholds={"corr": 0.2}, treatment_kind="continuous",
                              warn=False)
        assert list(bt.table.columns) == ["type", "corr_before", "corr_after", "corr_balanced"]
        assert bt.table["corr_balanced"].tolist() == list(bt.table["corr_after"].abs() < 0.2)
        assert bt.warning_rules == {"ess_fraction": 0.1, "corr": 0.2}

    # -- input validation --
    @pytest.mark.parametrize("thr,err,match", [
        ([0.1], TypeError, r"`thresholds` must be a dict such as"),
        ({"m": 0.1}, ValueError, r"key 'm' is not a statistic of a categorical treatment's table; "
                                 r"the keys are \['smd', 'var_ratio', 'ks'\]"),
        ({"corr": 0.1}, ValueError, r"key 'corr' .* \(it is for the other kind\)"),
        ({"smd": -0.1}, ValueError, r"`thresholds\['smd'\]` must be a finite number >= 0; got -0\.1"),
        ({"smd": np.inf}, ValueError, r"`thresholds\['smd'\]` must be a finite number >= 0"),
        ({"var_ratio": 0.5}, ValueError, r"`thresholds\['var_ratio'\]` must be a finite number >= 1"),
        ({"ks": 1.5}, ValueError, r"`thresholds\['ks'\]` must be a number in \[0, 1\]; got 1\.5"),
        ({"ks": True}, ValueError, r"`thresholds\['ks'\]` must be a number in \[0, 1\]; got True"),
        ({"smd": "0.1"}, ValueError, r"`thresholds\['smd'\]` must be a finite number >= 0; got '0.1'"),
    ])
    def test_bad_thresholds(self, thr, err, match):
        with pytest.raises(err, match=match):
            es.balance_table(_frame(), _T, thresholds=thr)

    def test_categorical_key_with_continuous_treatment(self):
        X, _, _ = _data()
        with pytest.raises(ValueError, match=r"key 'smd' is not a statistic of a continuous "
                                             r"treatment's table \(it is for the other kind\)"):
            es.balance_table(X, X[:, 0] + 0.5, thresholds={"smd": 0.1}, treatment_kind="continuous")


# -- warnings --------------------------------------------------------------------------------

def _balanced(n=60, d=2, seed=8):
    """Two levels of the same distribution, weights near 1: nothing to warn about."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    t = np.tile([0, 1], n // 2)
    X[t == 1] = X[t == 0]                           # identical levels: every SMD is 0
    return X, t, rng.uniform(0.9, 1.1, n)


class TestWarnings:
    def test_exported(self):
        assert es.BalanceWarning is BalanceWarning is es.balance.BalanceWarning
        assert issubclass(BalanceWarning, UserWarning)

    def test_quiet_when_balanced(self):
        X, t, w = _balanced()
        bt = es.balance_table(X, t, np.ones(len(t)))     # BalanceWarning is an error here
        assert bt.issues == ()
        assert bt.warning_rules == {"ess_fraction": 0.1, "smd": 0.1}

    def test_small_effective_sample_size(self):
        X, t, _ = _balanced()
        w = np.ones(len(t))
        w[:4] = 1e4               # rows 0-3: two controls and their treated twins carry it all
        with pytest.warns(BalanceWarning, match=r"effective sample size after weighting below 10% "
                                                r"of the rows in level 0 \(2\.0 of 30\), level 1 "
                                                r"\(2\.0 of 30\)\. \(Pass warn=False"):
            bt = es.balance_table(X, t, w)                  # the means stay equal: no |SMD|
        kish = (2e4 + 28) ** 2 / (2e8 + 28)               # (sum w)^2 / sum w^2, by hand
        assert bt.ess["ess_after"].tolist() == [pytest.approx(kish, rel=1e-12)] * 2
        assert len(bt.issues) == 1

    def test_large_smd_names_five_and_counts_the_rest(self):
        rng = np.random.default_rng(9)
        X = rng.normal(size=(80, 8))
        t = np.tile([0, 1], 40)
        X[t == 1] += 1.0
        with pytest.warns(BalanceWarning, match=r"\|SMD\| after weighting above 0\.1 for 8 "
                                                r"covariate\(s\): x0, x1, x2, x3, x4 \.\.\. and 3 more"):
            es.balance_table(X, t, np.ones(80))
        # the threshold given for 'smd' is the warning's
        bt = es.balance_table(X, t, np.ones(80), thresholds={"smd": 10.0})
        assert bt.issues == ()

    def test_binary_difference_is_named_raw(self):
        X, t, w = _balanced()
        g = np.where((t == 1) & (np.arange(60) < 20), "q", "p")   # 10 of the 30 treated: 1/3
        df = pd.DataFrame(X, columns=["u", "v"]).assign(g=g)
        with pytest.warns(BalanceWarning, match=r"\|SMD\| \(binary covariates: \|raw difference\|\)"
                                                r" after weighting above 0\.1 for 1 covariate\(s\): g_q"):
            bt = es.balance_table(df, t, np.ones(60))
        assert bt.table.loc["g_q", "smd_after"] == pytest.approx(1 / 3, rel=1e-12)

    def test_no_overlap(self):
        X, t, w = _balanced()
        X[:, 1] = np.where(t == 1, 5.0, 0.0) + np.random.default_rng(1).uniform(size=len(t))
        with pytest.warns(BalanceWarning, match=r"no overlap: the ranges of 1 covariate\(s\) over "
                                                r"the rows of positive weight do not intersect "
                                                r"between two levels: x1 \(e\.g\. 'x1' between "
                                                r"levels 0 and 1\)"):
            es.balance_table(X, t, w)

    def test_zero_weights_make_no_overlap(self):
        X, t, _ = _balanced()
        w = np.where((t == 1) & (X[:, 0] < 0), 0.0, 1.0)   # treated with x0 < 0 dropped
        w[(t == 0) & (X[:, 0] >= 0)] = 0.0                 # controls with x0 >= 0 dropped
        bt = es.balance_table(X, t, w, warn=False)
        assert any(s.startswith("no overlap") and "x0" in s for s in bt.issues)

    def test_one_warning_lists_all_and_warn_false_keeps_them(self):
        X, t, _ = _balanced()
        X[:, 1] += np.where(t == 1, 10.0, 0.0)
        w = np.ones(len(t))
        w[(t == 0) & (np.arange(len(t)) < 4)] = 1e6
        with pytest.warns(BalanceWarning) as rec:
            bt = es.balance_table(X, t, w)
        assert len(rec) == 1
        text = str(rec[0].message)
        assert "effective sample size" in text and "|SMD|" in text and "no overlap" in text
        assert len(bt.issues) == 3
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            quiet = es.balance_table(X, t, w, warn=False)
        assert quiet.issues == bt.issues

    def test_continuous(self):
        X, _, _ = _balanced()
        a = X[:, 0] + 0.1 * np.random.default_rng(3).normal(size=len(X))
        w = np.ones(len(a))
        w[:3] = 1e5
        with pytest.warns(BalanceWarning, match=r"effective sample size after weighting below 10% "
                                                r"of the rows in the sample \(3\.0 of 60\); "
                                                r"\|correlation\| after weighting above 0\.1"):
            es.balance_table(X, a, w, treatment_kind="continuous")

    def test_nothing_without_weights(self):
        rng = np.random.default_rng(9)
        X = rng.normal(size=(40, 2))
        t = np.tile([0, 1], 20)
        X[t == 1] += 3.0
        assert es.balance_table(X, t).issues == ()
