"""Ties that count on every engine (issue 10).

Relabellings whose statistic equals the observed one *exactly* must count as
"≥" whatever engine, memory budget or thread count evaluated them, so that one
seed gives one p-value.  The references here are exact: group-pair sums of
|x − y| in rational arithmetic (1-D; the floats' exact values), or distances
to 60 significant digits (2-D), evaluated on the same relabellings as the
package draws (relabelling r is ``labels[rng.permutation(n)]`` of the r-th call,
the documented rule).
"""
import itertools
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

import energystats as es
from energystats._core import _permutation

ENGINES = [  # (method, memory_budget) -> engine
    ("sorted", None),
    ("pairwise", None),                 # matrix
    ("pairwise", 96 * 1024),            # blocked (the n×n matrix does not fit)
    ("streamed", None),
]


def _kw(method, budget, n_threads=None):
    kw = {"method": method, "n_threads": n_threads}
    if budget is not None:
        kw["memory_budget"] = budget
    return kw


def _draws(seed, labels, R):
    rng = np.random.default_rng(seed)
    return [labels[rng.permutation(labels.size)] for _ in range(R)]


# -- exact references -----------------------------------------------------------

def _exact_sums_1d(x, codes, k):
    """M[g][h] = Σ_{a∈g, b∈h} |a − b| in exact rationals (one sorted sweep)."""
    order = np.argsort(x, kind="stable")
    cnt = [0] * k
    tot = [Fraction(0)] * k
    M = [[Fraction(0)] * k for _ in range(k)]
    for i in order:
        y, h = Fraction(float(x[i])), int(codes[i])
        for g in range(k):  # earlier (smaller or equal) values of group g
            c = cnt[g] * y - tot[g]
            M[g][h] += c
            M[h][g] += c
        cnt[h] += 1
        tot[h] += y
    return M


def _exact_energy(M, sizes):
    k = len(sizes)
    stat = Fraction(0)
    for i, j in itertools.combinations(range(k), 2):
        ni, nj = sizes[i], sizes[j]
        E = 2 * M[i][j] / (ni * nj) - M[i][i] / ni**2 - M[j][j] / nj**2
        stat += Fraction(ni * nj, ni + nj) * E
    return stat


def _exact_disco_ratio(M, sizes):
    """S/W (monotone in F for fixed n, k) in exact rationals."""
    n, k = sum(sizes), len(sizes)
    W = sum(M[i][i] / (2 * sizes[i]) for i in range(k))
    T = sum(M[i][j] for i in range(k) for j in range(k)) / (2 * n)
    return (T - W) / W


def _exact_pvalue(values, obs, exact):
    ge = sum(v >= obs for v in values)
    return Fraction(ge, len(values)) if exact else Fraction(1 + ge, len(values) + 1)


# -- data with ties -------------------------------------------------------------

def _tied_1d(seed, n, values=(0.1, 0.3, 0.7)):
    """Decimal values (not exact in binary) with many duplicates."""
    return np.random.default_rng(seed).choice(values, size=n)


class TestOneDimensional:
    """Decimal-valued 1-D data with many duplicates: every engine gives the exact tie-aware p-value."""

    @pytest.mark.parametrize("seed", [0, 1, 2, 3])
    def test_energy_test_random_relabellings(self, seed):
        n, R = 20, 199
        x = _tied_1d(seed, n)
        labels = np.repeat([0, 1], n // 2)
        sizes = [n // 2, n // 2]
        obs = _exact_energy(_exact_sums_1d(x, labels, 2), sizes)
        vals = [_exact_energy(_exact_sums_1d(x, c, 2), sizes) for c in _draws(seed, labels, R)]
        want = float(_exact_pvalue(vals, obs, exact=False))
        assert sum(v == obs for v in vals) > 0  # the data do have exactly tied relabellings
        for method, budget in ENGINES:
            for nt in (1, 2):
                res = es.energy_test(x, labels=labels, n_resamples=R, rng=seed,
                                     **_kw(method, budget, nt))
                assert res.pvalue == want, (method, budget, nt, res.engine, res.pvalue, want)

    @pytest.mark.parametrize("seed", [4, 5])
    def test_disco_three_groups(self, seed):
        n, R = 24, 199
        x = _tied_1d(seed, n, (0.1, 0.7))
        labels = np.repeat([0, 1, 2], n // 3)
        sizes = [n // 3] * 3
        obs = _exact_disco_ratio(_exact_sums_1d(x, labels, 3), sizes)
        vals = [_exact_disco_ratio(_exact_sums_1d(x, c, 3), sizes) for c in _draws(seed, labels, R)]
        want = float(_exact_pvalue(vals, obs, exact=False))
        assert sum(v == obs for v in vals) > 0
        for method, budget in ENGINES:
            res = es.disco(x, labels=labels, n_resamples=R, rng=seed, **_kw(method, budget))
            assert res.pvalue == want, (method, budget, res.engine, res.pvalue, want)

    def test_larger_sample_one_pvalue_per_seed(self):
        # n = 600: tied relabellings come out far apart in relative terms (the sums are
        # large, the statistic small); the p-value is the exact one on every engine
        n, R = 600, 199
        x = _tied_1d(9, n, (0.1, 0.7))
        labels = np.repeat([0, 1], n // 2)
        sizes = [n // 2, n // 2]
        obs = _exact_energy(_exact_sums_1d(x, labels, 2), sizes)
        vals = [_exact_energy(_exact_sums_1d(x, c, 2), sizes) for c in _draws(9, labels, R)]
        want = float(_exact_pvalue(vals, obs, exact=False))
        assert sum(v == obs for v in vals) > 0
        for method, budget in [("sorted", None), ("pairwise", None), ("pairwise", 4 * 2**20)]:
            res = es.energy_test(x, labels=labels, n_resamples=R, rng=9, **_kw(method, budget))
            assert res.pvalue == want, (method, budget, res.engine, res.pvalue, want)


class TestTwoDimensionalExact:
    """2-D points with duplicates: ties are structural (equal multisets of distances)."""

    def _data(self, seed):
        rng = np.random.default_rng(seed)
        pts = np.array([[0.1, 0.2], [0.3, 0.1], [0.7, 0.7], [0.2, 1.1]])
        return pts[rng.integers(0, 4, size=12)]

    @staticmethod
    def _decimal_matrix(X):
        getcontext().prec = 60
        n = len(X)
        D = [[Decimal(0)] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                s = sum((Decimal(float(a)) - Decimal(float(b))) ** 2 for a, b in zip(X[i], X[j]))
                D[i][j] = D[j][i] = s.sqrt()
        return D

    @staticmethod
    def _decimal_energy(D, codes):
        n = len(codes)
        sizes = [int(np.sum(codes == g)) for g in (0, 1)]
        M = [[Decimal(0)] * 2 for _ in range(2)]
        for i in range(n):
            for j in range(n):
                M[codes[i]][codes[j]] += D[i][j]
        a, b = sizes
        E = 2 * M[0][1] / (a * b) - M[0][0] / a**2 - M[1][1] / b**2
        return Decimal(a * b) / Decimal(a + b) * E

    @pytest.mark.parametrize("seed", [0, 1])
    def test_exact_enumeration(self, seed):
        X = self._data(seed)
        labels = np.repeat([0, 1], 6)
        D = self._decimal_matrix(X)
        obs = self._decimal_energy(D, labels)
        vals = [self._decimal_energy(D, c) for c in _permutation.enumerate_relabellings(labels, 2)]
        tie = Decimal(10) ** -40
        ge = sum(v >= obs - tie for v in vals)
        assert sum(abs(v - obs) <= tie for v in vals) > 1  # structural ties besides the observed one
        want = ge / len(vals)
        for method, budget in ENGINES[1:]:
            res = es.energy_test(X, labels=labels, n_resamples=1000, rng=0, **_kw(method, budget))
            assert res.exact and res.n_resamples == len(vals)
            assert res.pvalue == want, (method, budget, res.engine, res.pvalue, want)


def test_zero_statistic_ties_count():
    # identical groups: every relabelling that keeps them identical has statistic 0
    # (computed as tiny non-zero values of either sign); the p-value counts them
    x = np.repeat([0.1, 0.7], 10)
    labels = np.tile([0, 1], 10)
    for method, budget in ENGINES:
        res = es.energy_test(x, labels=labels, n_resamples=99, rng=0, **_kw(method, budget))
        assert abs(res.statistic) < 1e-12
        assert res.pvalue == 1.0, (method, res.engine, res.pvalue)


def test_tolerance_is_far_below_distinct_values():
    # the tie allowance is a few hundred eps of the total dispersion: distinct relabellings
    # of continuous data are never merged with the observed value
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=30), rng.normal(size=30)
    res = es.energy_test(x, y, n_resamples=999, rng=1, method="pairwise")
    T = es.dispersion(np.r_[x, y], np.repeat([0, 1], 30)).T
    gaps = np.abs(res.null_distribution - res.statistic)
    assert np.min(gaps) > 1e-9 * T
    assert res.pvalue == (1 + np.sum(res.null_distribution >= res.statistic)) / 1000
