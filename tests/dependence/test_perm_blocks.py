"""Restricted permutations with blocks exchangeable as wholes (``perm_blocks=``, hyppo's
``perm_blocks``): the enumeration against a brute-force filter of all n! permutations, every
draw inside the allowed set, hyppo's own draws inside it, the statistic equal to hyppo's, and
the exact p-value against recomputation."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core._permutation import permutation_blocks

# (n, k) label arrays: hyppo's semantics (column 0 splits the rows, each further column splits
# every block; non-negative labels exchangeable as wholes, negative ones kept in place; rows of
# the final blocks exchangeable)
CASES = {
    "pairs": np.array([[0], [0], [1], [1], [2], [2]]),
    "pairs kept in order": np.column_stack([[0, 0, 1, 1, 2, 2], [-1, -2] * 3]),
    "one block fixed": np.array([[-1], [-1], [0], [0], [1], [1], [-5]]),
    "two levels": np.column_stack([[0] * 4 + [1] * 4, [0, 0, 1, 1, 0, 0, 1, 1]]),
    "strata": np.array([[-1], [-1], [-1], [-2], [-2]]),
    "triples, middle fixed": np.column_stack([[3, 3, 3, 7, 7, 7], [0, -1, 1, 0, -1, 1]]),
}


def _allowed(perm, L):
    """Whether ``y[perm]`` respects the blocks, by the rule itself: at every level the blocks
    (rows sharing labels up to that column) are mapped onto blocks, a row's label keeps its sign,
    and a row with a negative label lands on a row with the same label."""
    n, k = L.shape
    for j in range(k):
        key = [tuple(L[r, :j + 1]) for r in range(n)]
        for r in range(n):
            if (L[perm[r], j] < 0) != (L[r, j] < 0):
                return False
            if L[r, j] < 0 and L[perm[r], j] != L[r, j]:
                return False
            for s in range(n):
                if (key[r] == key[s]) != (key[perm[r]] == key[perm[s]]):
                    return False
    return True


def _brute_force(L):
    return {p for p in itertools.permutations(range(L.shape[0])) if _allowed(p, L)}


class TestPermutationBlocks:
    @pytest.mark.parametrize("name", list(CASES))
    def test_enumeration_is_the_brute_force_set(self, name):
        L = CASES[name]
        blocks, _ = permutation_blocks(L, None, L.shape[0])
        every = blocks.enumerate()
        got = {tuple(p) for p in every}
        assert len(got) == every.shape[0] == blocks.count()  # each once
        assert got == _brute_force(L)

    @pytest.mark.parametrize("name", list(CASES))
    def test_draws_are_allowed_and_cover_the_set(self, name):
        L = CASES[name]
        blocks, _ = permutation_blocks(L, None, L.shape[0])
        allowed = {tuple(p) for p in blocks.enumerate()}
        draws = blocks.draw(np.random.default_rng(0), 40 * len(allowed))
        seen = {tuple(p) for p in draws}
        assert seen <= allowed
        assert seen == allowed  # 40 draws per permutation: each one shows up (seeded)

    def test_draws_do_not_depend_on_the_batches(self):
        blocks, _ = permutation_blocks(CASES["two levels"], None, 8)
        g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
        whole = blocks.draw(g1, 30)
        parts = np.vstack([blocks.draw(g2, 7), blocks.draw(g2, 23)])
        np.testing.assert_array_equal(whole, parts)

    @pytest.mark.parametrize("name", ["pairs", "pairs kept in order", "two levels",
                                      "triples, middle fixed"])
    def test_hyppo_draws_are_allowed(self, name):
        # hyppo 0.5.2's own restricted permutations (its _PermTree; note that it draws the levels
        # below the top from NumPy's global generator) all lie in the enumerated set
        common = pytest.importorskip("hyppo.tools.common")
        L = CASES[name]
        blocks, _ = permutation_blocks(L, None, L.shape[0])
        allowed = {tuple(p) for p in blocks.enumerate()}
        tree = common._PermTree(L)
        rs = np.random.RandomState(0)
        assert all(tuple(tree.permute_indices(rs)) in allowed for _ in range(200))

    # -- input validation --
    def test_refusals(self):
        with pytest.raises(ValueError, match=r"column 0: the exchangeable blocks at the top level "
                                             r"must have the same shape.*block 0 has 2 rows.*"
                                             r"block 1 has 3 rows"):
            permutation_blocks([0, 0, 1, 1, 1], None, 5)
        with pytest.raises(ValueError, match=r"column 1: .*inside the block with labels \[0\]"):
            permutation_blocks(np.column_stack([[0] * 4 + [1] * 4, [0, 0, 0, 1, 0, 0, 1, 1]]), None, 8)
        with pytest.raises(ValueError, match="one row per sample, n=6; got 5 rows"):
            permutation_blocks([0, 0, 1, 1, 2], None, 6)
        with pytest.raises(TypeError, match="integer labels.*got dtype float64"):
            permutation_blocks([0.5, 0, 1, 1], None, 4)
        with pytest.raises(TypeError, match="integer labels.*got dtype bool"):
            permutation_blocks([True, True, False, False], None, 4)
        with pytest.raises(ValueError, match=r"shape \(n,\) or \(n, k\)"):
            permutation_blocks(np.zeros((4, 1, 1), dtype=int), None, 4)
        blocks, L = permutation_blocks([2.0, 2.0, -1.0], None, 3)  # integral floats are labels
        assert L.dtype == np.int64 and blocks.count() == 2


def _data(n=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    y = x[:, :1] ** 2 + 0.5 * rng.normal(size=(n, 1))
    return x, y


class TestIndependenceTestPermBlocks:
    def test_exact_pvalue_against_brute_force(self):
        x, y = _data()
        L = CASES["two levels"]
        res = es.independence_test(x, y, perm_blocks=L, n_resamples=999)
        allowed = sorted(_brute_force(L))
        assert res.exact and res.n_resamples == len(allowed) == 128  # 2! (2!·2!·2!)²
        null = np.array([8 * es.distance_covariance_sqr(x, y[list(p)]) for p in allowed])
        np.testing.assert_allclose(np.sort(res.null_distribution), np.sort(null), rtol=1e-12)
        assert res.pvalue == np.mean(null >= res.statistic * (1 - 1e-12))
        np.testing.assert_array_equal(res.perm_blocks, L)

    def test_random_permutations_are_the_drawn_ones(self):
        x, y = _data(12, seed=1)
        L = np.repeat(np.arange(4), 3)
        res = es.independence_test(x, y, perm_blocks=L, n_resamples=50, rng=5)
        assert not res.exact and res.seed == 5
        blocks, _ = permutation_blocks(L, None, 12)
        perms = blocks.draw(np.random.default_rng(5), 50)
        want = [12 * es.distance_covariance_sqr(x, y[p]) for p in perms]
        np.testing.assert_allclose(res.null_distribution, want, rtol=1e-12)
        assert res.pvalue == (1 + np.sum(res.null_distribution >= res.statistic * (1 - 1e-12))) / 51

    def test_statistic_equals_hyppo(self):
        # hyppo 0.5.2: Dcorr(bias=True).test(x, y, reps, perm_blocks) reports R_n (our
        # estimates.dcor); Dcorr().test (bias=False) the bias-corrected R*_n = our 'bcdcor' / n
        hyppo = pytest.importorskip("hyppo.independence")
        x, y = _data(12, seed=2)
        L = np.column_stack([np.repeat(np.arange(4), 3), np.tile([-1, -2, -3], 4)])
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The number of replications is low", RuntimeWarning)
            biased = hyppo.Dcorr(bias=True).test(x, y, reps=50, perm_blocks=L, random_state=1)
            unbiased = hyppo.Dcorr().test(x, y, reps=50, perm_blocks=L, random_state=1)
        res = es.independence_test(x, y, statistic="dcor", perm_blocks=L, rng=1)
        assert res.estimates.dcor == pytest.approx(biased.stat, rel=1e-12)
        res = es.independence_test(x, y, statistic="bcdcor", perm_blocks=L, rng=1)
        assert res.statistic / 12 == pytest.approx(unbiased.stat, rel=1e-12)
        assert res.exact and res.n_resamples == 24  # 4! moves of whole blocks, order kept

    def test_negative_column_is_strata(self):
        x, y = _data(7, seed=3)
        codes = np.array([0, 0, 0, 1, 1, 2, 2])
        a = es.independence_test(x, y, strata=codes)
        b = es.independence_test(x, y, perm_blocks=-(codes + 1))
        assert a.exact and b.exact and a.n_resamples == b.n_resamples == 24
        assert a.pvalue == b.pvalue
        np.testing.assert_allclose(np.sort(a.null_distribution), np.sort(b.null_distribution),
                                   rtol=1e-14)

    def test_sequential_and_frame_alignment(self):
        x, y = _data(12, seed=4)
        L = np.repeat(np.arange(4), 3)
        res = es.independence_test(x, y, perm_blocks=L, n_resamples=99, rng=0,
                                   pvalue_method="sequential")
        assert res.pvalue_method == "sequential" and res.n_resamples <= 99
        # a Series is aligned by index with DataFrame x and y, as strata are
        idx = pd.Index(list("abcdefghijkl"))
        X, Y = pd.DataFrame(x, index=idx), pd.DataFrame(y, index=idx)
        s = pd.Series(L, index=idx)[::-1]
        a = es.independence_test(X, Y, perm_blocks=s, n_resamples=30, rng=2)
        b = es.independence_test(x, y, perm_blocks=L, n_resamples=30, rng=2)
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)

    # -- input validation --
    def test_refusals(self):
        x, y = _data()
        L = CASES["two levels"]
        with pytest.raises(ValueError, match="`strata` and `perm_blocks` are exclusive"):
            es.independence_test(x, y, strata=L[:, 0], perm_blocks=L)
        with pytest.raises(ValueError, match="`perm_blocks`.*asymptotic"):
            es.independence_test(x, y, perm_blocks=L, pvalue_method="asymptotic")
        with pytest.raises(ValueError, match="one row per sample, n=8; got 6 rows"):
            es.independence_test(x, y, perm_blocks=L[:6])
        with pytest.raises(ValueError, match="`exact=True`: `perm_blocks` allows more than 10"):
            es.independence_test(np.arange(24.0), np.arange(24.0), perm_blocks=np.repeat(np.arange(12), 2),
                                 exact=True)
