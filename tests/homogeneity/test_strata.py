"""Stratified permutation tests and conditional multi-factor DISCO (issue 10).

References are independent: statistics by the double loops of tests/reference.py
summed over strata, null distributions by brute-force enumeration of the
relabellings within strata.
"""
import itertools

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core import _permutation
from tests.reference import ref_g, ref_wst


def _ref_energy_stat(X, labels):
    """k-sample energy statistic Σ_{i<j} n_i n_j/(n_i+n_j) E(C_i, C_j) by double loops."""
    groups = sorted(set(labels.tolist()))
    parts = [X[labels == g] for g in groups]
    stat = 0.0
    for a, b in itertools.combinations(parts, 2):
        E = 2 * ref_g(a, b) - ref_g(a, a) - ref_g(b, b)
        stat += len(a) * len(b) / (len(a) + len(b)) * E
    return stat


def _ref_stratified_energy(X, labels, strata):
    return sum(_ref_energy_stat(X[strata == s], labels[strata == s]) for s in np.unique(strata)
               if len(np.unique(labels[strata == s])) > 1)


def _ref_conditional_F(X, labels, strata):
    """F of ``labels`` within ``strata``: (Σ_s S_s / Σ_s (k_s − 1)) / (W_cells / (n − #cells))."""
    S = sum(ref_wst(X[strata == s], labels[strata == s])[1] for s in np.unique(strata))
    cells = np.array([f"{a}|{b}" for a, b in zip(labels, strata)])
    W = ref_wst(X, cells)[0]
    K = len(np.unique(cells))
    df_b = K - len(np.unique(strata))
    return (S / df_b) / (W / (len(X) - K)), S, W


@pytest.fixture
def design():
    rng = np.random.default_rng(0)
    n = 36
    strata = np.repeat([0, 1, 2], 12)
    labels = np.tile([0, 0, 1, 1, 1, 2], 6)
    X = rng.normal(size=(n, 2)) + strata[:, None] * 3.0   # strata differ a lot
    X[labels == 2] += 0.7
    return X, labels, strata


class TestDraws:
    def test_within_strata_and_independent_of_batches(self):
        codes = np.array([0, 1, 1, 0, 2, 2, 1, 0, 0, 1])
        st = _permutation.Strata(np.array([0, 0, 0, 1, 1, 1, 1, 2, 2, 2]))
        a = _permutation.draw_permutations(np.random.default_rng(5), codes, 12, st)
        rng = np.random.default_rng(5)
        b = np.vstack([_permutation.draw_permutations(rng, codes, 7, st),
                       _permutation.draw_permutations(rng, codes, 5, st)])
        np.testing.assert_array_equal(a, b)
        for row in a:
            for idx in st.positions:
                assert sorted(row[idx]) == sorted(codes[idx])
        assert len({tuple(r) for r in a}) > 6  # they do move

    def test_uniform_within_strata(self):
        # each of the 3 arrangements of (0, 0, 1) in a stratum equally likely: chi-square check
        codes = np.array([0, 0, 1, 1, 0])
        st = _permutation.Strata(np.array([0, 0, 0, 1, 1]))
        rows = _permutation.draw_permutations(np.random.default_rng(1), codes, 3000, st)
        counts = np.bincount(np.argmax(rows[:, :3] == 1, axis=1), minlength=3)
        from scipy import stats
        assert stats.chisquare(counts).pvalue > 0.01
        assert set(map(tuple, rows[:, 3:])) == {(1, 0), (0, 1)}

    def test_enumeration_and_count(self):
        codes = np.array([0, 1, 1, 0, 2, 1])
        strata = np.array([0, 0, 0, 1, 1, 1])
        st = _permutation.Strata(strata)
        rows = _permutation.enumerate_relabellings(codes, 3, strata=st)
        brute = {tuple(codes[list(p)]) for p in itertools.permutations(range(6))
                 if all(strata[list(p)] == strata)}
        assert {tuple(r) for r in rows} == brute and len(rows) == len(brute)
        assert _permutation.count_stratified(codes, 3, st) == len(brute) == 3 * 6
        batched = np.vstack(list(_permutation.enumerate_relabellings(codes, 3, batch=4, strata=st)))
        np.testing.assert_array_equal(batched, rows)


class TestStratifiedEnergyTest:
    def test_statistic_is_the_sum_over_strata(self, design):
        X, labels, strata = design
        res = es.energy_test(X, labels=labels, strata=strata, n_resamples=0)
        assert res.statistic == pytest.approx(_ref_stratified_energy(X, labels, strata), rel=1e-12)
        assert res.strata == [0, 1, 2]
        # the energy distances are the pooled groups'
        assert res.energy_distances[0, 2] == pytest.approx(
            2 * ref_g(X[labels == 0], X[labels == 2]) - ref_g(X[labels == 0], X[labels == 0])
            - ref_g(X[labels == 2], X[labels == 2]), rel=1e-12)

    def test_exact_pvalue_against_brute_force(self):
        rng = np.random.default_rng(2)
        X = rng.normal(size=(10, 1)) + np.repeat([0, 5], 5)[:, None]
        labels = np.array([0, 1, 0, 1, 1, 0, 1, 1, 0, 0])
        strata = np.repeat([0, 1], 5)
        res = es.energy_test(X, labels=labels, strata=strata, n_resamples=1000, method="pairwise")
        assert res.exact and res.n_resamples == 10 * 10
        obs = _ref_stratified_energy(X, labels, strata)
        vals = []
        for p0 in itertools.permutations(range(5)):
            for p1 in itertools.permutations(range(5, 10)):
                lab = labels[list(p0) + list(p1)]
                vals.append(_ref_stratified_energy(X, lab, strata))
        # every distinct relabelling appears (2!3!)^2 times among the permutations
        want = np.mean(np.array(vals) >= obs - 1e-9)
        assert res.pvalue == pytest.approx(want, abs=1e-12)

    def test_random_relabellings_reproduce(self, design):
        X, labels, strata = design
        a = es.energy_test(X, labels=labels, strata=strata, n_resamples=99, rng=3)
        b = es.energy_test(X, labels=labels, strata=strata, n_resamples=99, rng=3,
                           method="streamed", n_threads=1)
        assert a.engine == "matrix" and b.engine == "streamed"
        assert a.pvalue == b.pvalue
        np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-10)
        # null values by the reference on the same relabellings (within-strata draws)
        st = _permutation.Strata(strata)
        draws = _permutation.draw_permutations(np.random.default_rng(3), labels, 99, st)
        for r in (0, 50, 98):
            assert a.null_distribution[r] == pytest.approx(
                _ref_stratified_energy(X, draws[r], strata), rel=1e-10)

    def test_input_forms(self, design):
        X, labels, strata = design
        df = pd.DataFrame(X, columns=["u", "v"]).assign(g=labels, s=strata)
        want = es.energy_test(X, labels=labels, strata=strata, n_resamples=0).statistic
        r = es.energy_test(df, by="g", strata="s", n_resamples=0)
        assert r.statistic == pytest.approx(want) and r.strata_name == "s" and r.strata == [0, 1, 2]
        r = es.energy_test(df.drop(columns="s"), by="g", strata=df["s"], n_resamples=0)
        assert r.statistic == pytest.approx(want) and r.columns == ["u", "v"]
        r = es.energy_test(df[["u", "v", "s"]], labels=df["g"], strata="s", n_resamples=0)
        assert r.statistic == pytest.approx(want) and r.columns == ["u", "v"]
        a, b = X[labels == 0], X[labels != 0]
        s_ab = np.r_[strata[labels == 0], strata[labels != 0]]
        two = es.energy_test(a, b, strata=s_ab, n_resamples=0).statistic
        assert two == pytest.approx(_ref_stratified_energy(np.vstack([a, b]),
                                                           np.repeat([0, 1], [len(a), len(b)]), s_ab))
        # dropna drops the same rows from the data, the groups and the strata
        dfn = df.copy()
        dfn.loc[3, "s"] = np.nan
        r = es.energy_test(dfn, by="g", strata="s", dropna=True, n_resamples=0)
        keep = np.arange(len(df)) != 3
        assert r.statistic == pytest.approx(_ref_stratified_energy(X[keep], labels[keep], strata[keep]))

    def test_bad_input(self, design):
        X, labels, strata = design
        with pytest.raises(ValueError, match="one entry per row"):
            es.energy_test(X, labels=labels, strata=strata[:-1])
        with pytest.raises(TypeError, match="column name needs a DataFrame"):
            es.energy_test(X, labels=labels, strata="s")
        df = pd.DataFrame(X, columns=["u", "v"]).assign(g=labels, s=strata)
        with pytest.raises(KeyError, match="'t'"):
            es.energy_test(df, by="g", strata="t")
        with pytest.raises(ValueError, match="nothing to compare"):
            es.energy_test(X, labels=labels, strata=labels)   # each stratum holds one group
        with pytest.raises(TypeError, match="dropna"):
            es.energy_test(X, labels=labels, strata=strata, dropna=True)


class TestStratifiedAndConditionalDisco:
    def test_stratified_disco_components(self, design):
        X, labels, strata = design
        res = es.disco(X, labels=labels, strata=strata, n_resamples=0)
        F, S, W = _ref_conditional_F(X, labels, strata)
        assert res.statistic == pytest.approx(F, rel=1e-11)
        assert res.between == pytest.approx(S, rel=1e-11)
        assert res.within == pytest.approx(W, rel=1e-11)
        assert res.total == pytest.approx(ref_wst(X, labels)[2], rel=1e-12)
        # T = S_strata + S(groups | strata) + W(cells): a sequential decomposition
        assert ref_wst(X, strata)[1] + res.between + res.within == pytest.approx(res.total, rel=1e-11)
        assert res.df_between == 3 * 2 and res.df_within == 36 - 9
        assert res.test == "stratified" and "within 3 strata" in repr(res)

    def test_conditional_two_factors(self, design):
        X, labels, strata = design
        df = pd.DataFrame(X, columns=["u", "v"]).assign(a=labels, b=strata)
        res = es.disco(df, by=["a", "b"], n_resamples=0)
        assert res.test == "conditional" and "given the others" in repr(res)
        Fa, Sa, W = _ref_conditional_F(X, labels, strata)
        Fb, Sb, _ = _ref_conditional_F(X, strata, labels)
        np.testing.assert_allclose(res.statistic, [Fa, Fb], rtol=1e-11)
        np.testing.assert_allclose(res.between, [Sa, Sb], rtol=1e-11)
        assert res.within == pytest.approx(W, rel=1e-11)
        marginal = es.disco(df, by=["a", "b"], n_resamples=0, conditional=False)
        assert marginal.test == "marginal" and "alone" in repr(marginal)
        assert not np.allclose(marginal.statistic, res.statistic)

    def test_conditional_null_relabels_within_the_other_factor(self, design):
        X, labels, strata = design
        df = pd.DataFrame(X, columns=["u", "v"]).assign(a=labels, b=strata)
        res = es.disco(df, by=["a", "b"], n_resamples=30, rng=4)
        rng = np.random.default_rng(4)
        # factor a: cells (a, b) relabelled within b; then factor b within a, from the same Generator
        cells_a = pd.factorize(pd.Series(list(zip(labels, strata))), sort=True)[0]
        da = _permutation.draw_permutations(rng, cells_a, 30, _permutation.Strata(strata))
        uniq = sorted(set(zip(labels, strata)))
        a_of = np.array([u[0] for u in uniq])
        for r in (0, 29):
            assert res.null_distribution[r, 0] == pytest.approx(
                _ref_conditional_F(X, a_of[da[r]], strata)[0], rel=1e-10)

    def test_bad_input(self, design):
        X, labels, strata = design
        df = pd.DataFrame(X, columns=["u", "v"]).assign(a=labels, b=strata, c=labels)
        with pytest.raises(ValueError, match="single level within every"):
            es.disco(df, by=["a", "c"], n_resamples=0)      # a and c identical
        with pytest.raises(ValueError, match="`conditional`"):
            es.disco(df, by=["a", "b"], conditional="yes")
        with pytest.raises(ValueError, match="not available with `strata`"):
            es.disco(df, by=["a", "b"], strata=strata, conditional=False)
        with pytest.raises(ValueError, match="exact=True"):
            es.disco(df, by=["a", "b"], exact=True)


def _associated_design(rng, n=60, effect_a=0.0, effect_b=2.0, agree=0.85):
    """Two-level factors A and B that agree in a fraction ``agree`` of rows; B (and A) shift the mean."""
    b = rng.integers(0, 2, size=n)
    a = np.where(rng.random(n) < agree, b, 1 - b)
    X = rng.normal(size=(n, 2))
    X[:, 0] += effect_b * b + effect_a * a
    return pd.DataFrame(X, columns=["u", "v"]).assign(a=a, b=b)


@pytest.mark.slow
def test_conditional_level_with_associated_factors():
    """Only B acts, A and B associated: A's conditional test holds its level (two-sided, 3 SE);
    the marginal test rejects A almost always."""
    rng = np.random.default_rng(20261123)
    n_sets, rej_c, rej_m = 300, 0, 0
    import warnings
    warnings.filterwarnings("ignore", message=".*hold a single group", category=UserWarning)
    for _ in range(n_sets):
        df = _associated_design(rng)
        rej_c += es.disco(df, by=["a", "b"], n_resamples=199, rng=rng).pvalue[0] <= 0.05
        if _ < 50:
            rej_m += es.disco(df, by=["a", "b"], n_resamples=199, rng=rng,
                              conditional=False).pvalue[0] <= 0.05
    rate = rej_c / n_sets
    assert abs(rate - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / n_sets), rate
    assert rej_m / 50 > 0.9


def test_strata_with_a_single_group_are_reported():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20, 2))
    labels = np.array([0, 1] * 8 + [0] * 4)
    strata = np.repeat([0, 1, 2, 3, 4], 4)          # stratum 4 holds group 0 only
    with pytest.warns(UserWarning, match="1 of the 5 strata hold a single group, so their 4 rows"):
        r = es.energy_test(X, labels=labels, strata=strata, n_resamples=0)
    assert r.statistic == pytest.approx(_ref_stratified_energy(X, labels, strata), rel=1e-12)
    with pytest.warns(UserWarning, match="single group"):
        es.disco(X, labels=labels, strata=strata, n_resamples=0)
