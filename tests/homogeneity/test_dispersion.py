"""Tests of energystats.dispersion (W, S, T, F) against the SPEC §3 definitions."""
import numpy as np
import pandas as pd
import pytest

import energystats as es

from ..reference import ref_matrix, ref_wst
from ..distance.test_distance import METRIC_PARAMS, _layouts
from ..reference import metric_kwargs


@pytest.fixture
def grouped():
    rng = np.random.default_rng(42)
    X = rng.normal(size=(45, 2))
    labels = np.array(["c", "a", "b"] * 15)
    X[labels == "b"] += 1.0
    return X, labels


class TestDispersion:
    @pytest.mark.parametrize("metric,param", METRIC_PARAMS)
    @pytest.mark.parametrize("n_threads", [1, 2])
    def test_against_reference(self, grouped, metric, param, n_threads):
        X, labels = grouped
        W, S, T = ref_wst(X, labels, metric, param)
        for name, arr in _layouts(X).items():
            res = es.dispersion(arr, labels, n_threads=n_threads, **metric_kwargs(metric, param))
            assert res.W == pytest.approx(W, rel=1e-10), name
            assert res.S == pytest.approx(S, rel=1e-10), name
            assert res.T == pytest.approx(T, rel=1e-10), name
            assert res.W + res.S == pytest.approx(res.T, rel=1e-12)

    @pytest.mark.parametrize("metric,param", METRIC_PARAMS)
    def test_float32(self, grouped, metric, param):
        X, labels = grouped
        X32 = X.astype(np.float32)
        W, S, T = ref_wst(X32.astype(float), labels, metric, param)
        res = es.dispersion(X32, labels, **metric_kwargs(metric, param))
        # float32 data are read as double and every sum is formed in double: measured max
        # relative error 2.6e-15 (S, energy exponent 0.5) against the reference on the same
        # float32 values; rel 3e-14 is a ~10× margin (float32 arithmetic would give ~1e-7).
        assert (res.W, res.S, res.T) == pytest.approx((W, S, T), rel=3e-14)

    def test_fields_F_and_g(self, grouped):
        X, labels = grouped
        res = es.dispersion(X, labels)
        assert res.groups == ["a", "b", "c"]
        np.testing.assert_array_equal(res.sizes, [15, 15, 15])
        n, k = 45, 3
        assert res.F == pytest.approx((res.S / (k - 1)) / (res.W / (n - k)))
        D = ref_matrix(X)
        for i, gi in enumerate(res.groups):
            for j, gj in enumerate(res.groups):
                assert res.g[i, j] == pytest.approx(D[np.ix_(labels == gi, labels == gj)].mean(), rel=1e-10)
        assert res.df == (2, 42, 44)

    def test_to_frame(self, grouped):
        X, labels = grouped
        res = es.dispersion(X, labels)
        tab = res.to_frame()
        assert list(tab.index) == ["Between", "Within", "Total"]
        assert tab.loc["Between", "dispersion"] == res.S and tab.loc["Within", "dispersion"] == res.W
        assert tab.loc["Total", "df"] == 44 and tab.loc["Between", "F"] == res.F
        g = res.to_frame("g")
        assert list(g.index) == ["a", "b", "c"] and g.loc["a", "b"] == res.g[0, 1]
        assert list(res.to_frame("groups")["size"]) == [15, 15, 15]
        with pytest.raises(ValueError, match="kind"):
            res.to_frame("nope")
        assert "W=" in repr(res) and "groups=['a', 'b', 'c']" in repr(res)

    def test_label_types(self, grouped):
        X, labels = grouped
        base = es.dispersion(X, labels)
        ints = pd.factorize(labels, sort=True)[0]
        cat = pd.Categorical(labels, categories=["c", "b", "a", "unused"])
        for lab in (ints, list(labels), pd.Series(labels), cat, pd.Series(cat)):
            res = es.dispersion(X, lab)
            assert res.W == pytest.approx(base.W, rel=1e-12) and res.S == pytest.approx(base.S, rel=1e-12)
        assert es.dispersion(X, cat).groups == ["c", "b", "a"]  # category order, unused dropped

    def test_dataframe_by_and_columns(self, grouped):
        X, labels = grouped
        df = pd.DataFrame(X, columns=["u", "v"]).assign(grp=labels, note="text")
        res = es.dispersion(df, by="grp", columns=["u", "v"])
        base = es.dispersion(X, labels)
        assert res.S == pytest.approx(base.S, rel=1e-12)
        with pytest.raises(TypeError, match="non-numeric column"):
            es.dispersion(df.drop(columns="grp"), labels)
        df.loc[3, "u"] = np.nan
        with pytest.raises(ValueError, match=r"missing values in 1 row\(s\), in column\(s\) \['u'\]"):
            es.dispersion(df, by="grp", columns=["u", "v"])
        dropped = es.dispersion(df, by="grp", columns=["u", "v"], dropna=True)
        keep = np.arange(45) != 3
        assert dropped.S == pytest.approx(es.dispersion(X[keep], labels[keep]).S, rel=1e-12)
        assert dropped.sizes.sum() == 44
        with pytest.raises(KeyError, match="not found"):
            es.dispersion(df, by="nope")

    def test_against_r_energy_disco(self):
        # R energy 1.7-11:
        #   Rscript -e 'library(energy); d <- disco(as.matrix(iris[,1:4]), factors=iris$Species, R=0);
        #               print(d$between, digits=15); print(d$within, digits=15);
        #               print(d$total, digits=15); print(d$statistic, digits=15)'
        #   -> between 119.237309536293, within 70.3384796594852, total 189.575789195778,
        #      F 124.596697189711
        from energystats.datasets import load_iris
        res = es.dispersion(load_iris(), by="species")
        assert res.S == pytest.approx(119.237309536293, rel=1e-12)
        assert res.W == pytest.approx(70.3384796594852, rel=1e-12)
        assert res.T == pytest.approx(189.575789195778, rel=1e-12)
        assert res.F == pytest.approx(124.596697189711, rel=1e-12)

    def test_precomputed_and_callable(self, grouped):
        X, labels = grouped
        base = es.dispersion(X, labels, exponent=1.5)
        D = ref_matrix(X, None, "energy", 1.5)
        pre = es.dispersion(D, labels, metric="precomputed")
        assert (pre.W, pre.S, pre.T) == pytest.approx((base.W, base.S, base.T), rel=1e-10)
        f = lambda a, b: float(np.linalg.norm(a - b) ** 1.5)  # noqa: E731
        cal = es.dispersion(X, labels, metric=f)
        assert (cal.W, cal.S, cal.T) == pytest.approx((base.W, base.S, base.T), rel=1e-10)

    def test_one_dimensional_paths_agree(self):
        rng = np.random.default_rng(9)
        x = np.round(rng.normal(size=300), 1)
        labels = rng.integers(0, 4, size=300)
        W, S, T = ref_wst(x, labels)
        for method in ("auto", "sorted", "pairwise"):
            res = es.dispersion(x, labels, method=method)
            assert (res.W, res.S, res.T) == pytest.approx((W, S, T), rel=1e-11), method

    def test_singletons_and_one_group(self):
        with pytest.warns(es.DegenerateStatisticWarning):
            res = es.dispersion([0.0, 1.0, 3.0], [0, 1, 2])
        assert res.W == 0.0 and np.isnan(res.F)  # n == k: no within degrees of freedom
        with pytest.warns(es.DegenerateStatisticWarning):
            one = es.dispersion([0.0, 1.0, 3.0], [0, 0, 0])
        assert one.S == 0.0 and one.W == pytest.approx(one.T) and np.isnan(one.F)
        two = es.dispersion([0.0, 0.0, 3.0, 3.0], [0, 0, 1, 1])
        assert two.W == 0.0 and two.F == np.inf

    # -- input validation --
    def test_bad_input(self, grouped):
        X, labels = grouped
        with pytest.raises(ValueError, match="`labels` has length 44"):
            es.dispersion(X, labels[:-1])
        with pytest.raises(ValueError, match="missing"):
            es.dispersion(X, np.where(np.arange(45) == 3, None, labels))
        with pytest.raises(TypeError, match="labels"):
            es.dispersion(X)
        with pytest.raises(ValueError, match="sigma"):
            es.dispersion(X, labels, metric="gaussian", sigma=0)
        with pytest.raises(ValueError, match="metric"):
            es.dispersion(X, labels, metric="minkowski")
        with pytest.raises(ValueError, match="NaN"):
            es.dispersion(np.where(X > 2, np.nan, X), labels)
        with pytest.raises(TypeError, match="`by` needs"):
            es.dispersion(X, by="g")


@pytest.mark.parametrize("X, labels, what", [([0.0, 1.0, 3.0], ["a", "a", "a"], "1 group"),
                                             ([0.0, 1.0, 3.0], ["a", "b", "c"], "n = k = 3")])
def test_undefined_f_warns(X, labels, what):
    # issue 30: one group gave F = NaN silently; W, S, T stay (T = (n/2) g(X, X) by hand)
    with pytest.warns(es.DegenerateStatisticWarning, match=what):
        res = es.dispersion(X, labels)
    assert np.isnan(res.F) and res.T == pytest.approx(3 / 2 * (2 * (1 + 3 + 2)) / 9)
