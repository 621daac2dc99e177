"""Tests of energystats.energy_test and energystats.disco (SPEC §3–§4).

The references here are independent plain-numpy double loops over the SPEC
formulas; they never call the package's kernels.
"""
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import energystats as es
from energystats._core import _permutation

# -- independent references ----------------------------------------------------

METRICS = [("energy", 1.0), ("energy", 0.5), ("energy", 1.7), ("laplacian", 0.8), ("gaussian", 1.3)]


def ref_rho(x, y, metric, param):
    r = math.sqrt(sum((float(a) - float(b)) ** 2 for a, b in zip(np.atleast_1d(x), np.atleast_1d(y))))
    if metric == "energy":
        return r ** param
    if metric == "laplacian":
        return 2.0 - 2.0 * math.exp(-r / (2.0 * param))
    if metric == "gaussian":
        return 2.0 - 2.0 * math.exp(-r * r / (2.0 * param * param))
    raise ValueError(metric)


def ref_matrix(X, metric="energy", param=1.0):
    X = np.asarray(X, dtype=np.float64).reshape(len(X), -1)
    n = len(X)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            D[i, j] = ref_rho(X[i], X[j], metric, param)
    return D


def ref_g(D, codes, a, b):
    ia = np.flatnonzero(codes == a)
    ib = np.flatnonzero(codes == b)
    s = 0.0
    for i in ia:
        for j in ib:
            s += D[i, j]
    return s / (len(ia) * len(ib))


def ref_energy_stat(D, codes):
    """Σ_{i<j} n_i n_j/(n_i+n_j) [2 g_ij − g_ii − g_jj] by loops (SPEC §3, R convention)."""
    k = int(codes.max()) + 1
    n = np.bincount(codes, minlength=k)
    total = 0.0
    for i in range(k):
        for j in range(i + 1, k):
            E = 2 * ref_g(D, codes, i, j) - ref_g(D, codes, i, i) - ref_g(D, codes, j, j)
            total += n[i] * n[j] / (n[i] + n[j]) * E
    return total


def ref_disco(D, codes):
    """(S, W, T, F) by loops (SPEC §3)."""
    k = int(codes.max()) + 1
    sizes = np.bincount(codes, minlength=k)
    n = sizes.sum()
    W = sum(sizes[j] / 2 * ref_g(D, codes, j, j) for j in range(k))
    S = 0.0
    for i in range(k):
        for j in range(i + 1, k):
            E = 2 * ref_g(D, codes, i, j) - ref_g(D, codes, i, i) - ref_g(D, codes, j, j)
            S += sizes[i] * sizes[j] / (2 * n) * E
    T = n / 2 * D.sum() / n ** 2
    F = (S / (k - 1)) / (W / (n - k))
    return S, W, T, F


def fast_stat(D, codes, kind):
    """Vectorised numpy statistic from a dense D (the 'naive loop' body)."""
    k = int(codes.max()) + 1
    L = np.eye(k)[codes]
    M = L.T @ D @ L
    n = L.sum(axis=0)
    g = M / np.outer(n, n)
    E = 2 * g - np.diag(g)[:, None] - np.diag(g)[None, :]
    iu = np.triu_indices(k, 1)
    if kind == "energy":
        return float(np.sum((np.outer(n, n) / (n[:, None] + n[None, :]) * E)[iu]))
    N = n.sum()
    S = float(np.sum((np.outer(n, n) / (2 * N) * E)[iu]))
    W = float(np.sum(n / 2 * np.diag(g)))
    return (S / (k - 1)) / (W / (N - k))


def naive_null(D, codes, R, seed, kind="energy"):
    """Loop over the relabellings ``rng.permutation(codes)`` of the same rng stream."""
    rng = np.random.default_rng(seed)
    return np.array([fast_stat(D, rng.permutation(codes), kind) for _ in range(R)])


def samples_of(rng, sizes, d, shift=0.0):
    return [rng.normal(loc=shift * j, size=(s, d)) for j, s in enumerate(sizes)]


def codes_of(sizes):
    return np.repeat(np.arange(len(sizes)), sizes)


# -- energy_test ---------------------------------------------------------------

class TestEnergyTest:

    @pytest.mark.parametrize("metric,param", METRICS)
    @pytest.mark.parametrize("sizes,d", [((7, 9), 3), ((5, 6, 4, 8), 2), ((6, 8, 5), 1)])
    def test_statistic_against_reference(self, metric, param, sizes, d):
        rng = np.random.default_rng(sum(sizes) * 7 + d)
        samples = samples_of(rng, sizes, d, shift=0.4)
        D = ref_matrix(np.vstack(samples), metric, param)
        expected = ref_energy_stat(D, codes_of(sizes))
        kw = {"exponent": param} if metric == "energy" else {"sigma": param}
        res = es.energy_test(*samples, metric=metric, n_resamples=0, **kw)
        assert res.statistic == pytest.approx(expected, rel=1e-10, abs=1e-12)
        assert res.pvalue is None
        assert res.null_distribution.shape == (0,)

    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    def test_float32_input(self, dtype):
        rng = np.random.default_rng(3)
        x = rng.normal(size=(12, 3)).astype(dtype)
        y = (rng.normal(size=(10, 3)) + 0.5).astype(dtype)
        D = ref_matrix(np.vstack([x, y]).astype(np.float64))
        res = es.energy_test(x, y, n_resamples=0)
        # float32 data enter the kernels as double: measured relative error 2.8e-15 (float32)
        # and 4.9e-15 (float64) against the reference on the same values; rel 5e-14 is a
        # 10× margin (float32 arithmetic would give ~1e-7).
        assert res.statistic == pytest.approx(ref_energy_stat(D, codes_of((12, 10))), rel=5e-14)

    @pytest.mark.parametrize("metric,param", METRICS)
    @pytest.mark.parametrize("sizes,d", [((9, 11), 3), ((6, 7, 5, 8), 2)])
    @pytest.mark.parametrize("method", ["pairwise", "streamed"])
    def test_null_equals_naive_loop(self, metric, param, sizes, d, method):
        rng = np.random.default_rng(len(sizes) * 100 + d)
        samples = samples_of(rng, sizes, d, shift=0.3)
        D = ref_matrix(np.vstack(samples), metric, param)
        codes = codes_of(sizes)
        R, seed = 60, 12345
        kw = {"exponent": param} if metric == "energy" else {"sigma": param}
        res = es.energy_test(*samples, metric=metric, n_resamples=R, rng=seed, method=method, **kw)
        assert res.engine == ("matrix" if method == "pairwise" else "streamed")
        expected = naive_null(D, codes, R, seed)
        np.testing.assert_allclose(res.null_distribution, expected, rtol=1e-10, atol=1e-12)
        obs = ref_energy_stat(D, codes)
        count = np.sum(expected >= obs * (1 - 1e-12))
        assert res.pvalue == pytest.approx((1 + count) / (R + 1))

    @pytest.mark.parametrize("sizes", [(9, 11), (6, 7, 5, 8)])
    def test_null_precomputed_and_callable(self, sizes):
        rng = np.random.default_rng(11)
        samples = samples_of(rng, sizes, 2, shift=0.3)
        X = np.vstack(samples)
        codes = codes_of(sizes)
        D = ref_matrix(X, "energy", 1.0)
        expected = naive_null(D, codes, 40, 7)
        res_pre = es.energy_test(D, labels=codes, metric="precomputed", n_resamples=40, rng=7)
        np.testing.assert_allclose(res_pre.null_distribution, expected, rtol=1e-10)
        city = lambda a, b: float(np.abs(a - b).sum())  # noqa: E731  (l1, negative type)
        Dc = np.array([[city(a, b) for b in X] for a in X])
        res_c = es.energy_test(X, labels=codes, metric=city, n_resamples=40, rng=7)
        np.testing.assert_allclose(res_c.null_distribution, naive_null(Dc, codes, 40, 7), rtol=1e-10)
        assert res_c.statistic == pytest.approx(ref_energy_stat(Dc, codes), rel=1e-10)

    @pytest.mark.parametrize("sizes", [(15, 20), (8, 12, 10, 9)])
    def test_sorted_path_null_equals_general_path(self, sizes):
        rng = np.random.default_rng(5)
        samples = [rng.standard_t(3, size=s) + 0.2 * j for j, s in enumerate(sizes)]
        a = es.energy_test(*samples, n_resamples=150, rng=99, method="sorted")
        b = es.energy_test(*samples, n_resamples=150, rng=99, method="pairwise")
        assert a.engine == "sorted" and b.engine == "matrix"
        assert a.statistic == pytest.approx(b.statistic, rel=1e-12)
        np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-10, atol=1e-12)
        assert a.pvalue == b.pvalue
        auto = es.energy_test(*samples, n_resamples=150, rng=99)
        assert auto.engine == "sorted"
        D = ref_matrix(np.concatenate(samples))
        np.testing.assert_allclose(a.null_distribution, naive_null(D, codes_of(sizes), 150, 99),
                                   rtol=1e-10, atol=1e-12)

    def test_sorted_path_ties(self):
        # Heavily tied integer data: the sorted kernel must agree with the matrix path.
        rng = np.random.default_rng(8)
        x = rng.integers(0, 4, size=25).astype(float)
        y = rng.integers(0, 5, size=30).astype(float)
        a = es.energy_test(x, y, n_resamples=100, rng=1, method="sorted")
        b = es.energy_test(x, y, n_resamples=100, rng=1, method="pairwise")
        np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-10, atol=1e-12)
        assert a.pvalue == b.pvalue

    @pytest.mark.parametrize("sizes", [(30, 25), (12, 15, 10, 18)])
    def test_memory_budget_selects_blocked_then_streamed(self, sizes):
        rng = np.random.default_rng(2)
        samples = samples_of(rng, sizes, 4)
        n = sum(sizes)
        big = es.energy_test(*samples, n_resamples=30, rng=3)
        # the n×n matrix (8 n² bytes) does not fit, a 16-row block and a few relabellings do
        mid = es.energy_test(*samples, n_resamples=30, rng=3, memory_budget=0.8 * 8 * n * n)
        # not even one relabelling and a 16-row block fit (about 11-18 KiB), the streamed
        # reduction's sorted copies of the data and k×k sums (about 7 KiB) do
        small = es.energy_test(*samples, n_resamples=30, rng=3, memory_budget=8000)
        with pytest.raises(MemoryError, match=r"needs at least .* KiB .*streamed.*memory_budget"):
            es.energy_test(*samples, n_resamples=30, rng=3, memory_budget=1000)
        assert (big.engine, mid.engine, small.engine) == ("matrix", "blocked", "streamed")
        D = ref_matrix(np.vstack(samples))
        expected = naive_null(D, codes_of(sizes), 30, 3)
        for res in (big, mid, small):
            np.testing.assert_allclose(res.null_distribution, expected, rtol=1e-10)
            assert res.pvalue == big.pvalue

    def test_tiny_batches_do_not_change_the_draws(self):
        # A budget that allows only a few relabellings per batch must give the
        # same relabellings as one big batch.
        rng = np.random.default_rng(4)
        x, y = rng.normal(size=(20, 2)), rng.normal(size=(22, 2))
        n = 42
        budget = 8 * n * n + 3 * 40 * n  # room for ~3 relabellings per batch
        a = es.energy_test(x, y, n_resamples=50, rng=6, memory_budget=budget)
        b = es.energy_test(x, y, n_resamples=50, rng=6)
        assert a.engine == "matrix"
        np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-12)

    @pytest.mark.parametrize("x_shape", [(40, 3), (60,)])
    def test_same_pvalue_any_thread_count(self, x_shape):
        rng = np.random.default_rng(10)
        x = rng.normal(size=x_shape)
        y = rng.normal(size=x_shape) + 0.2
        r1 = es.energy_test(x, y, n_resamples=200, rng=2024, n_threads=1)
        r2 = es.energy_test(x, y, n_resamples=200, rng=2024, n_threads=2)
        assert r1.pvalue == r2.pvalue
        np.testing.assert_allclose(r1.null_distribution, r2.null_distribution, rtol=1e-12)

    def test_reproducible_with_seed_and_generator(self):
        rng = np.random.default_rng(0)
        x, y = rng.normal(size=(25, 2)), rng.normal(size=(30, 2)) + 0.3
        a = es.energy_test(x, y, n_resamples=99, rng=42)
        b = es.energy_test(x, y, n_resamples=99, rng=42)
        c = es.energy_test(x, y, n_resamples=99, rng=np.random.default_rng(42))
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        np.testing.assert_array_equal(a.null_distribution, c.null_distribution)
        assert a.pvalue == b.pvalue == c.pvalue
        d = es.energy_test(x, y, n_resamples=99, rng=43)
        assert not np.array_equal(a.null_distribution, d.null_distribution)

    def test_pvalue_formula_and_bounds(self):
        rng = np.random.default_rng(1)
        x, y = rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 3.0
        res = es.energy_test(x, y, n_resamples=99, rng=0)
        # far apart: no relabelling reaches the observed value, p = 1/(R+1), never 0
        assert res.pvalue == pytest.approx(1 / 100)
        assert res.n_resamples == 99 and not res.exact
        same = es.energy_test(x, x + 0.0, n_resamples=99, rng=0)
        assert same.statistic == pytest.approx(0.0, abs=1e-12)
        # identical samples: every relabelling ties or exceeds 0 → p = 1
        assert same.pvalue == pytest.approx(1.0)

    def test_ties_counted_with_tolerance(self):
        # Two-point groups of a symmetric design: many relabellings reproduce the
        # observed value exactly in theory; they must all count as ties.
        x = np.array([[0.0], [1.0], [2.0]])
        y = np.array([[0.0], [1.0], [2.0]]) + 0.1
        res = es.energy_test(x, y, n_resamples=0, rng=0, exact=True)
        null = res.null_distribution
        stat = res.statistic
        assert res.exact
        assert res.pvalue == pytest.approx(np.mean(null >= stat - 1e-9 * abs(stat)))

    # -- exact enumeration --

    @pytest.mark.parametrize("sizes", [(3, 3), (2, 4), (2, 2, 3), (3, 4)])
    def test_exact_against_brute_force(self, sizes):
        rng = np.random.default_rng(sum(sizes))
        samples = samples_of(rng, sizes, 2, shift=0.7)
        X = np.vstack(samples)
        codes = codes_of(sizes)
        D = ref_matrix(X)
        n = len(codes)
        N = math.factorial(n) // math.prod(math.factorial(s) for s in sizes)
        res = es.energy_test(*samples, n_resamples=N)  # N ≤ n_resamples → exact
        assert res.exact and res.n_resamples == N
        # brute force: all n! orderings of the labels, each equally likely
        obs = ref_energy_stat(D, codes)
        vals = np.array([fast_stat(D, codes[list(p)], "energy") for p in itertools.permutations(range(n))])
        expected_p = np.mean(vals >= obs - 1e-9 * obs)
        assert res.pvalue == pytest.approx(expected_p, rel=1e-12)
        distinct = sorted({tuple(codes[list(p)]) for p in itertools.permutations(range(n))})
        assert len(distinct) == N
        ref_null = np.sort([fast_stat(D, np.array(c), "energy") for c in distinct])
        np.testing.assert_allclose(np.sort(res.null_distribution), ref_null, rtol=1e-10, atol=1e-12)
        # one fewer resample than relabellings → random relabellings instead
        rnd = es.energy_test(*samples, n_resamples=N - 1, rng=0)
        assert not rnd.exact and rnd.n_resamples == N - 1

    def test_exact_flags(self):
        x, y = np.arange(4.0), np.arange(4.0) + 0.5
        assert es.energy_test(x, y, n_resamples=1000).exact
        assert not es.energy_test(x, y, n_resamples=1000, exact=False, rng=0).exact
        forced = es.energy_test(x, y, n_resamples=10, exact=True)
        assert forced.exact and forced.n_resamples == 70
        big = np.arange(60.0)
        with pytest.raises(ValueError, match="more than"):
            es.energy_test(big, big + 1, exact=True)

    def test_count_and_enumerate_relabellings(self):
        assert _permutation.count_relabellings([2, 3, 1]) == 60
        assert _permutation.count_relabellings([30, 30], limit=999) == 1000
        rows = _permutation.enumerate_relabellings(np.array([0, 1, 1, 2, 0, 1]), 3)
        assert rows.shape == (60, 6)
        assert len({tuple(r) for r in rows}) == 60
        assert all(np.array_equal(np.bincount(r, minlength=3), [2, 3, 1]) for r in rows)

    def test_draw_permutations_matches_sequential_calls(self):
        a = _permutation.draw_permutations(np.random.default_rng(5), np.arange(9), 7)
        rng = np.random.default_rng(5)
        b = np.array([rng.permutation(9) for _ in range(7)])
        np.testing.assert_array_equal(a, b)
        codes = np.array([0, 0, 1, 2, 2, 2, 1, 0, 1])
        c = _permutation.draw_permutations(np.random.default_rng(5), codes, 7)
        np.testing.assert_array_equal(c, codes[b])

    # -- against R energy --

    def test_against_R_eqdist_etest(self):
        from energystats.datasets import load_iris
        iris = load_iris()
        # R 4.x, energy 1.7.11:
        #   x <- as.matrix(iris[,1:4])
        #   print(eqdist.etest(x, sizes=c(50,50,50), R=0)$statistic, digits=15)  -> 357.711928608878
        #   print(eqdist.etest(x[1:100,], sizes=c(50,50), R=0)$statistic, digits=15) -> 123.553814983907
        res = es.energy_test(iris, by="species", n_resamples=0)
        assert res.statistic == pytest.approx(357.711928608878, rel=1e-12)
        two = iris[iris.species != "virginica"].copy()
        two["species"] = two["species"].astype(str)
        res2 = es.energy_test(two, by="species", n_resamples=0)
        assert res2.statistic == pytest.approx(123.553814983907, rel=1e-12)

    def test_against_dcor(self):
        dcor = pytest.importorskip("dcor")
        rng = np.random.default_rng(1)
        x, y, z = rng.normal(size=(20, 3)), rng.normal(size=(25, 3)) + 0.2, rng.normal(size=(15, 3))
        ours = es.energy_test(x, y, z, n_resamples=0).statistic
        theirs = dcor.homogeneity.energy_test(x, y, z, num_resamples=0).statistic
        assert ours == pytest.approx(float(theirs), rel=1e-10)

    # -- call forms --

    def test_call_forms_agree(self):
        rng = np.random.default_rng(12)
        a, b, c = rng.normal(size=(10, 2)), rng.normal(size=(12, 2)), rng.normal(size=(9, 2)) + 0.5
        X = np.vstack([a, b, c])
        lab = np.array(["a"] * 10 + ["b"] * 12 + ["c"] * 9)
        df = pd.DataFrame(X, columns=["u", "v"]).assign(g=lab, text="t")
        r1 = es.energy_test(a, b, c, n_resamples=50, rng=1)
        r2 = es.energy_test(X, labels=lab, n_resamples=50, rng=1)
        r3 = es.energy_test(df, by="g", columns=["u", "v"], n_resamples=50, rng=1)
        r4 = es.energy_test(df.drop(columns="text"), by="g", n_resamples=50, rng=1)
        for r in (r2, r3, r4):
            assert r.statistic == pytest.approx(r1.statistic, rel=1e-12)
            assert r.pvalue == r1.pvalue
            assert r.groups == ["a", "b", "c"]
        assert r1.groups == [0, 1, 2]
        assert list(r1.sizes) == [10, 12, 9]
        frame = r2.to_frame(kind="energy_distances")
        assert list(frame.index) == ["a", "b", "c"] and frame.loc["a", "a"] == 0.0
        assert "EnergyTestResult(statistic=" in repr(r1)

    def test_to_frame_is_the_test_table(self):
        # issue "the front door tells the whole truth": to_frame() gave the k×k matrix of
        # energy distances, not the test; now one row with the test's fields, as the other
        # tests' results (independence_test, gof) give
        rng = np.random.default_rng(12)
        X = np.vstack([rng.normal(size=(10, 2)), rng.normal(size=(12, 2)), rng.normal(size=(9, 2)) + 0.5])
        lab = np.array(["a"] * 10 + ["b"] * 12 + ["c"] * 9)
        res = es.energy_test(X, labels=lab, n_resamples=50, rng=1)
        frame = res.to_frame()
        assert list(frame.columns) == ["statistic", "pvalue", "pvalue_se", "n_resamples", "exact",
                                       "pvalue_method", "estimator", "seed", "n_groups", "n_samples"]
        assert list(frame.index) == ["energy test"] and frame.index.name == "test"
        row = frame.iloc[0]
        assert row["statistic"] == res.statistic and row["pvalue"] == res.pvalue
        assert row["pvalue_se"] == res.pvalue_se and row["n_resamples"] == res.n_resamples
        assert row["exact"] == res.exact and row["pvalue_method"] == res.pvalue_method == "full"
        assert row["estimator"] == res.estimator and row["seed"] == res.seed == 1
        assert row["n_groups"] == 3 and row["n_samples"] == 31
        # no permutations: no p-value (NaN, as in DISCO's table), no seed
        none = es.energy_test(X, labels=lab, n_resamples=0).to_frame().iloc[0]
        assert none["statistic"] == res.statistic
        assert np.isnan(none["pvalue"]) and np.isnan(none["pvalue_se"]) and pd.isna(none["seed"])
        # the decision rule and strata add their columns
        dec = es.energy_test(X, labels=lab, n_resamples=199, rng=1, pvalue_method="decision")
        assert dec.to_frame().loc["energy test", "decision"] == dec.decision
        assert "decision" not in frame.columns and "n_strata" not in frame.columns
        strata = np.tile([0, 1], 16)[:31]
        st_res = es.energy_test(X, labels=lab, strata=strata, n_resamples=19, rng=1)
        assert st_res.to_frame().loc["energy test", "n_strata"] == 2

    def test_energy_distances_frame(self):
        # the matrix that to_frame() used to return, now under kind="energy_distances" (the
        # field's name, as DispersionResult.to_frame("g") labels its field g)
        rng = np.random.default_rng(12)
        a, b, c = rng.normal(size=(10, 2)), rng.normal(size=(12, 2)), rng.normal(size=(9, 2)) + 0.5
        res = es.energy_test(a, b, c, n_resamples=0)
        E = res.to_frame(kind="energy_distances")
        idx = pd.Index([0, 1, 2], name="group")
        old = pd.DataFrame(res.energy_distances, index=idx, columns=idx.rename(None))
        pd.testing.assert_frame_equal(E, old)
        assert E.loc[0, 1] == pytest.approx(es.energy_distance(a, b), rel=1e-12)
        with pytest.raises(ValueError, match="`kind` must be 'test' or 'energy_distances'"):
            res.to_frame(kind="distances")

    def test_missing_values_in_frame(self):
        rng = np.random.default_rng(0)
        df = pd.DataFrame(rng.normal(size=(20, 2)), columns=["u", "v"])
        df["g"] = ["x", "y"] * 10
        df.loc[3, "u"] = np.nan
        df.loc[5, "g"] = None
        with pytest.raises(ValueError, match=r"2 row\(s\).*'u'.*'g'"):
            es.energy_test(df, by="g")
        res = es.energy_test(df, by="g", dropna=True, n_resamples=0)
        assert sum(res.sizes) == 18

    def test_progress_bar_runs(self, capsys):
        x, y = np.arange(10.0), np.arange(10.0) + 2
        res = es.energy_test(x, y, n_resamples=30, rng=0, progress=True)
        assert res.n_resamples == 30
        err = capsys.readouterr().err
        assert "permutations" in err and "30/30" in err
        b = es.energy_test(x, y, n_resamples=30, rng=0)
        np.testing.assert_array_equal(res.null_distribution, b.null_distribution)

    # -- invariances (hypothesis) --

    @settings(max_examples=30, deadline=None)
    @given(data=st.data(),
           X=hnp.arrays(np.float64, st.tuples(st.integers(6, 14), st.integers(1, 3)),
                        elements=st.floats(-100, 100, allow_nan=False, width=64)))
    def test_invariant_to_row_order_and_group_names(self, data, X):
        n = X.shape[0]
        k = data.draw(st.integers(2, 3))
        labels = np.arange(n) % k
        assume(np.ptp(X) > 1e-6)
        base = es.energy_test(X, labels=labels, n_resamples=0).statistic
        perm = data.draw(st.permutations(range(n)))
        shuffled = es.energy_test(X[perm], labels=labels[perm], n_resamples=0).statistic
        renamed = es.energy_test(X, labels=np.array(["c", "a", "b"])[labels], n_resamples=0).statistic
        tol = 1e-9 * max(1.0, abs(base))
        assert shuffled == pytest.approx(base, abs=tol)
        assert renamed == pytest.approx(base, abs=tol)
        samples = [X[labels == g] for g in range(k)]
        reordered = es.energy_test(*samples[::-1], n_resamples=0).statistic
        assert reordered == pytest.approx(base, abs=tol)
        # DISCO's components are invariant too
        d0 = es.disco(X, labels=labels, n_resamples=0)
        d1 = es.disco(X[perm], labels=np.array(["c", "a", "b"])[labels[perm]], n_resamples=0)
        scale = max(1.0, abs(d0.total))
        assert d1.between == pytest.approx(d0.between, abs=1e-9 * scale)
        assert d1.within == pytest.approx(d0.within, abs=1e-9 * scale)

    # -- input validation --

    def test_one_sample_only(self):
        with pytest.raises(ValueError, match="at least two samples"):
            es.energy_test(np.arange(10.0))
        with pytest.raises(ValueError, match="at least 2 groups"):
            es.energy_test(np.arange(10.0), labels=np.zeros(10))

    @pytest.mark.filterwarnings("ignore:.*hold a single row")  # the one-row-group warning, expected
    def test_sample_of_one_point_is_a_group(self):
        # as R's eqdist.etest: a one-point group is allowed (its g(C, C) = 0); the
        # numbers against R are in tests/_core/test_trust.py
        res = es.energy_test(np.arange(5.0), np.array([1.0]), n_resamples=0)
        assert list(res.sizes) == [5, 1]
        res = es.energy_test(np.arange(6.0), labels=[0, 0, 0, 0, 0, 1])
        assert res.exact and res.n_resamples == 6

    def test_mismatched_dimensions(self):
        with pytest.raises(ValueError, match=r"same number of features; got \[2, 3\]"):
            es.energy_test(np.zeros((5, 2)), np.zeros((5, 3)))

    def test_missing_by_column(self):
        df = pd.DataFrame({"u": np.arange(6.0), "g": [0, 1] * 3})
        with pytest.raises(KeyError, match="'grp'"):
            es.energy_test(df, by="grp")

    def test_no_numeric_columns(self):
        df = pd.DataFrame({"s": list("abcdef"), "g": [0, 1] * 3})
        with pytest.raises(TypeError, match=r"non-numeric column\(s\) \['s'\]"):
            es.energy_test(df, by="g")
        with pytest.raises(ValueError, match="no numeric columns"):
            es.energy_test(df, by="g", numeric_only=True)

    @pytest.mark.parametrize("bad", [-1, 1.5, "10", True, 10**9 + 1, 10**12])
    def test_bad_n_resamples(self, bad):
        # 10**12 used to fail inside NumPy's allocation with its own message (issue 30)
        with pytest.raises(ValueError, match=r"`n_resamples` must be an integer in \[0, 10\*\*9\]; got"):
            es.energy_test(np.arange(5.0), np.arange(5.0), n_resamples=bad)

    def test_other_bad_arguments(self):
        x, y = np.arange(5.0), np.arange(5.0) + 1
        with pytest.raises(ValueError, match="`method`"):
            es.energy_test(x, y, method="fast")
        with pytest.raises(ValueError, match="`memory_budget`"):
            es.energy_test(x, y, memory_budget=0)
        with pytest.raises(ValueError, match="`exact`"):
            es.energy_test(x, y, exact="yes")
        with pytest.raises(ValueError, match="method='sorted'"):
            es.energy_test(np.zeros((5, 2)), np.ones((5, 2)), method="sorted")
        with pytest.raises(TypeError, match="`rng`"):
            es.energy_test(x, y, rng="seed")
        with pytest.raises(ValueError, match="NaN"):
            es.energy_test(np.array([1.0, np.nan, 2.0]), y)
        with pytest.raises(TypeError, match="one argument"):
            es.energy_test(x, y, labels=[0] * 5)
        with pytest.raises(ValueError, match="single grouping column"):
            es.energy_test(pd.DataFrame({"u": x, "a": [0, 1] * 2 + [0], "b": [0] * 5}), by=["a", "b"])
        with pytest.raises(TypeError, match="precomputed"):
            es.energy_test(np.zeros((3, 3)), np.zeros((3, 3)), metric="precomputed")
        with pytest.raises(ValueError, match="`exponent`"):
            es.energy_test(x, y, exponent=3)


# -- disco ---------------------------------------------------------------------

class TestDisco:

    @pytest.mark.parametrize("metric,param", METRICS)
    @pytest.mark.parametrize("sizes,d", [((7, 9), 2), ((5, 6, 8), 3), ((6, 4, 5, 7), 1)])
    def test_against_reference_and_identities(self, metric, param, sizes, d):
        rng = np.random.default_rng(sum(sizes) + d)
        samples = samples_of(rng, sizes, d, shift=0.5)
        codes = codes_of(sizes)
        D = ref_matrix(np.vstack(samples), metric, param)
        S, W, T, F = ref_disco(D, codes)
        kw = {"exponent": param} if metric == "energy" else {"sigma": param}
        res = es.disco(*samples, metric=metric, n_resamples=0, **kw)
        assert res.between == pytest.approx(S, rel=1e-10)
        assert res.within == pytest.approx(W, rel=1e-10)
        assert res.total == pytest.approx(T, rel=1e-10)
        assert res.statistic == pytest.approx(F, rel=1e-10)
        # identities
        n, k = sum(sizes), len(sizes)
        assert res.between + res.within == pytest.approx(res.total, rel=1e-12)
        assert res.statistic == pytest.approx((res.between / (k - 1)) / (res.within / (n - k)), rel=1e-12)
        assert (res.df_between, res.df_within, res.df_total) == (k - 1, n - k, n - 1)
        assert res.pvalue is None

    @pytest.mark.parametrize("metric,param", METRICS)
    def test_two_samples_statistic_is_twice_between(self, metric, param):
        # SPEC §3: two samples, S = (n1 n2 / (2n)) E, and the energy test statistic is 2S.
        rng = np.random.default_rng(7)
        x, y = rng.normal(size=(13, 2)), rng.normal(size=(17, 2)) + 0.4
        kw = {"exponent": param} if metric == "energy" else {"sigma": param}
        d = es.disco(x, y, metric=metric, n_resamples=0, **kw)
        t = es.energy_test(x, y, metric=metric, n_resamples=0, **kw)
        assert t.statistic == pytest.approx(2 * d.between, rel=1e-12)
        E = t.energy_distances[0, 1]
        assert d.between == pytest.approx(13 * 17 / (2 * 30) * E, rel=1e-12)
        ed = es.energy_distance(x, y, metric=metric, **kw)
        assert E == pytest.approx(float(getattr(ed, "statistic", ed)), rel=1e-10)

    @pytest.mark.parametrize("method", ["pairwise", "streamed"])
    def test_null_equals_naive_loop(self, method):
        rng = np.random.default_rng(21)
        sizes = (8, 10, 7)
        samples = samples_of(rng, sizes, 2, shift=0.3)
        D = ref_matrix(np.vstack(samples))
        res = es.disco(*samples, n_resamples=50, rng=5, method=method)
        expected = naive_null(D, codes_of(sizes), 50, 5, kind="disco")
        np.testing.assert_allclose(res.null_distribution, expected, rtol=1e-10)
        F = ref_disco(D, codes_of(sizes))[3]
        assert res.pvalue == pytest.approx((1 + np.sum(expected >= F * (1 - 1e-12))) / 51)

    def test_against_R_disco(self):
        from energystats.datasets import load_iris
        iris = load_iris()
        # R 4.x, energy 1.7.11 (x <- as.matrix(iris[,1:4])):
        #   d <- disco(x, factors=iris$Species, R=0)
        #   print(c(d$between, d$within, d$total, d$statistic), digits=15)
        #   -> 119.237309536293 70.3384796594852 189.575789195778 124.596697189711
        res = es.disco(iris, by="species", n_resamples=0)
        assert res.between == pytest.approx(119.237309536293, rel=1e-12)
        assert res.within == pytest.approx(70.3384796594852, rel=1e-12)
        assert res.total == pytest.approx(189.575789195778, rel=1e-12)
        assert res.statistic == pytest.approx(124.596697189711, rel=1e-12)
        #   d <- disco(x, factors=iris$Species, R=0, index=0.5)
        #   print(c(d$between, d$within, d$statistic), digits=15)
        #   -> 42.6235710229870 69.1346435993382 45.3149435230405
        r5 = es.disco(iris, by="species", exponent=0.5, n_resamples=0)
        assert (r5.between, r5.within, r5.statistic) == pytest.approx(
            (42.6235710229870, 69.1346435993382, 45.3149435230405), rel=1e-12)

    def test_against_R_multifactor(self):
        from energystats.datasets import load_iris
        iris = load_iris()
        iris["f2"] = ["a", "b", "c"] * 50
        # R 4.x, energy 1.7.11:
        #   f2 <- factor(rep(c("a","b","c"), 50))
        #   d <- disco(x, factors=data.frame(species=iris$Species, f2=f2), R=0)
        #   print(d$stats, digits=15); print(c(d$within, d$total, d$Df.e), digits=15)
        #   -> Trt 119.237309536292514, 0.788754262282851; Stat 124.596697189710682,
        #      0.307083790463748; df1 2, 2; within 69.5497253972023; total 189.5757891957777;
        #      Df.e 145
        res = es.disco(iris, by=["species", "f2"], n_resamples=0, conditional=False)
        assert res.test == "marginal"
        np.testing.assert_allclose(res.between, [119.237309536292514, 0.788754262282851], rtol=1e-12)
        np.testing.assert_allclose(res.statistic, [124.596697189710682, 0.307083790463748], rtol=1e-12)
        assert res.within == pytest.approx(69.5497253972023, rel=1e-12)
        assert res.total == pytest.approx(189.5757891957777, rel=1e-12)
        assert res.df_within == 145 and list(res.df_between) == [2, 2]
        table = res.to_frame()
        assert list(table.index) == ["species", "f2", "Within", "Total"]
        assert list(table.columns) == ["df", "dispersion", "mean_dispersion", "F", "pvalue", "pvalue_se", "tests"]
        assert table.loc["Within", "dispersion"] == pytest.approx(res.total - res.between.sum())
        # the same through a DataFrame of factors as `labels`
        res2 = es.disco(iris.iloc[:, :4], labels=iris[["species", "f2"]], n_resamples=0,
                        conditional=False)
        np.testing.assert_allclose(res2.statistic, res.statistic, rtol=1e-12)

    def test_multifactor_null_equals_naive_loop(self):
        rng = np.random.default_rng(3)
        n = 24
        X = rng.normal(size=(n, 2))
        f1 = np.repeat([0, 1, 2], 8)
        f2 = np.tile([0, 1], 12)
        X[f1 == 2] += 0.8
        df = pd.DataFrame(X, columns=["u", "v"]).assign(f1=f1, f2=f2)
        res = es.disco(df, by=["f1", "f2"], n_resamples=40, rng=9, conditional=False)
        D = ref_matrix(X)
        perm_rng = np.random.default_rng(9)
        expected = []
        for _ in range(40):
            p = perm_rng.permutation(n)  # one row permutation for both factors
            expected.append([fast_stat(D, f1[p], "disco"), fast_stat(D, f2[p], "disco")])
        np.testing.assert_allclose(res.null_distribution, np.array(expected), rtol=1e-10)
        obs = [ref_disco(D, f1)[3], ref_disco(D, f2)[3]]
        np.testing.assert_allclose(res.statistic, obs, rtol=1e-10)
        exp_p = (1 + np.sum(np.array(expected) >= np.array(obs) * (1 - 1e-12), axis=0)) / 41
        np.testing.assert_allclose(res.pvalue, exp_p)

    def test_exact_against_brute_force(self):
        x = np.array([0.0, 0.4, 1.1])
        y = np.array([0.9, 1.7, 2.0])
        z = np.array([2.2, 3.5])
        res = es.disco(x, y, z, n_resamples=10**4)
        assert res.exact and res.n_resamples == 8 * 7 * 6 * 5 * 4 * 3 * 2 // (6 * 6 * 2)
        codes = codes_of((3, 3, 2))
        D = ref_matrix(np.concatenate([x, y, z]))
        F = ref_disco(D, codes)[3]
        vals = np.array([fast_stat(D, codes[list(p)], "disco") for p in itertools.permutations(range(8))])
        assert res.pvalue == pytest.approx(np.mean(vals >= F * (1 - 1e-9)), rel=1e-12)

    def test_table_and_repr(self):
        rng = np.random.default_rng(0)
        res = es.disco(rng.normal(size=(10, 2)), rng.normal(size=(12, 2)), n_resamples=20, rng=1)
        table = res.to_frame()
        assert list(table.index) == ["Between", "Within", "Total"]
        assert list(table["df"]) == [1, 20, 21]
        assert table.loc["Between", "pvalue"] == res.pvalue
        assert np.isnan(table.loc["Within", "F"])
        text = repr(res)
        assert "DISCO" in text and "Between" in text and "Within" in text and "20 random" in text

    def test_mean_column_is_sum_over_df(self):
        # R energy's print.disco has "Mean Dist" = "Sum Dist" / "Df" for the factors and
        # Within (Total blank): R 4.x, energy 1.7.11, x <- as.matrix(iris[, 1:4]);
        #   disco(x, factors = iris$Species, R = 199)
        #   -> factors 2 119.23731 59.61865 124.597; Within 147 70.33848 0.47849;
        #      Total 149 189.57579 (quoted in docs/conventions.rst)
        from energystats.datasets import load_iris
        iris = load_iris()
        res = es.disco(iris, by="species", n_resamples=0)
        table = res.to_frame()
        assert list(table.columns) == ["df", "dispersion", "mean_dispersion", "F", "pvalue", "pvalue_se"]
        assert table.loc["Between", "mean_dispersion"] == res.between / res.df_between
        assert table.loc["Within", "mean_dispersion"] == res.within / res.df_within
        assert np.isnan(table.loc["Total", "mean_dispersion"])
        assert round(table.loc["Between", "mean_dispersion"], 5) == 59.61865
        assert round(table.loc["Within", "mean_dispersion"], 5) == 0.47849
        # one-way: F is the ratio of the two means
        assert table.loc["Between", "F"] == pytest.approx(
            table.loc["Between", "mean_dispersion"] / table.loc["Within", "mean_dispersion"], rel=1e-12)
        # several factors (R's marginal table): R 4.x, energy 1.7.11,
        #   disco(x, factors = data.frame(iris$Species, f2 = factor(rep(c("a", "b"), 75))), R = 0)
        #   -> f2 1 0.34480 0.34480; Within 146 69.99368 0.47941
        iris["f2"] = np.tile(["a", "b"], 75)
        res = es.disco(iris, by=["species", "f2"], n_resamples=0, conditional=False)
        table = res.to_frame()
        for f, S, d in zip(res.factors, res.between, res.df_between):
            assert table.loc[f, "mean_dispersion"] == S / d
        assert round(table.loc["f2", "mean_dispersion"], 5) == 0.34480
        assert round(table.loc["Within", "mean_dispersion"], 5) == 0.47941
        assert np.isnan(table.loc["Total", "mean_dispersion"])
        assert "mean_dispersion" in repr(res)

    @pytest.mark.parametrize("k", [-520, 520])
    def test_disco_precomputed_at_any_magnitude(self, k):
        # a dissimilarity matrix times 2**k (exact): F is scale-free and the p-value the same;
        # the tie allowance once squared S + W, an OverflowError above about 1e154
        rng = np.random.default_rng(0)
        X = np.r_[rng.normal(size=(10, 2)), rng.normal(1, 1, size=(10, 2))]
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        labels = np.repeat([0, 1], 10)
        base = es.disco(D, labels=labels, metric="precomputed", n_resamples=99, rng=1)
        scaled = es.disco(D * 2.0 ** k, labels=labels, metric="precomputed", n_resamples=99, rng=1)
        assert scaled.statistic == base.statistic
        assert scaled.pvalue == base.pvalue

    def test_disco_bad_input(self):
        with pytest.raises(ValueError, match="at least two samples"):
            es.disco(np.zeros((4, 2)))
        with pytest.raises(ValueError, match="within-group degrees of freedom"):
            es.disco(np.zeros((1, 2)), np.ones((1, 2)))   # n = k: no F ratio
        df = pd.DataFrame({"u": np.arange(8.0), "a": [0, 1] * 4, "b": [0, 0, 1, 1] * 2})
        with pytest.raises(KeyError, match="'c'"):
            es.disco(df, by=["a", "c"])
        with pytest.raises(ValueError, match="`n_resamples`"):
            es.disco(df, by="a", n_resamples=-5)


class TestDiscoTableSays:
    """Issue 30: the conditional table's df (a 3-level factor given a 2-level one: 4, not 2)
    were never explained, nor that R's numbers need ``conditional=False``.  Each row now says
    what it tests and how its df and F are formed; the counts here come from pandas, and each
    F is recomputed from the table's own numbers by the formula the row states."""

    @staticmethod
    def frame(seed=4, n=60):
        rng = np.random.default_rng(seed)
        return pd.DataFrame({"y": rng.normal(size=n), "a": rng.integers(0, 3, n),
                             "b": rng.integers(0, 2, n), "s": rng.integers(0, 2, n)})

    def test_one_factor_table_has_no_tests_column(self):
        res = es.disco(self.frame(), by="a", columns=["y"], n_resamples=19, rng=1)
        assert res.row_tests() is None
        assert list(res.to_frame().columns) == ["df", "dispersion", "mean_dispersion", "F", "pvalue", "pvalue_se"]
        assert "rows:" not in repr(res)

    def test_two_factors_conditional(self):
        df = self.frame()
        res = es.disco(df, by=["a", "b"], columns=["y"], n_resamples=19, rng=1)
        table = res.to_frame()
        n = len(df)
        cells = df.groupby(["a", "b"]).ngroups            # 6
        cells_of = {"a": df["b"].nunique(), "b": df["a"].nunique()}   # the others' cells: 2, 3
        assert list(table.columns) == ["df", "dispersion", "mean_dispersion", "F", "pvalue", "pvalue_se", "tests"]
        assert table.loc["a", "tests"] == (
            f"a given b (a + a:b): the groups of a compared within the {cells_of['a']} cells of b; "
            f"df = {cells} cells - {cells_of['a']}; F = (S/{cells - cells_of['a']}) / (Within/{n - cells})")
        assert table.loc["b", "tests"].startswith("b given a (b + a:b): ")
        assert table.loc["Within", "tests"] == (f"within the {cells} cells of a, b: df = {n} - {cells}; "
                                                "the denominator of every F")
        assert table.loc["Total", "tests"] == f"df = {n} - 1; the rows do not add up to Total"
        W = table.loc["Within", "dispersion"]
        assert cells == 6 and {f: cells - c for f, c in cells_of.items()} == {"a": 4, "b": 3}
        for f in ("a", "b"):
            d = cells - cells_of[f]
            assert table.loc[f, "df"] == d
            assert table.loc[f, "F"] == pytest.approx((table.loc[f, "dispersion"] / d) / (W / (n - cells)),
                                                      rel=1e-12)
        assert table.loc["Within", "df"] == n - cells
        text = repr(res)
        assert "conditional=False gives R energy's table" in text
        assert "rows:" in text and all(f"  {r}: {t}" in text for r, t in table["tests"].items())

    def test_two_factors_marginal(self):
        df = self.frame()
        res = es.disco(df, by=["a", "b"], columns=["y"], n_resamples=19, rng=1, conditional=False)
        table = res.to_frame()
        n, T = len(df), table.loc["Total", "dispersion"]
        for f in ("a", "b"):
            k = df[f].nunique()
            assert table.loc[f, "tests"] == (f"{f} alone (marginal, R energy's disco; conditional=False): "
                                             f"df = {k} levels - 1; F = (S/{k - 1}) / ((Total - S)/{n - k})")
            S = table.loc[f, "dispersion"]
            assert table.loc[f, "F"] == pytest.approx((S / (k - 1)) / ((T - S) / (n - k)), rel=1e-12)
        ka, kb = df["a"].nunique(), df["b"].nunique()
        assert table.loc["Within", "tests"] == f"Total - S_a - S_b: df = {n} - 1 - {ka - 1} - {kb - 1}; no F uses it"
        assert table.loc["Within", "df"] == n - 1 - (ka - 1) - (kb - 1)
        assert table.loc["Within", "dispersion"] == pytest.approx(
            T - table.loc["a", "dispersion"] - table.loc["b", "dispersion"], rel=1e-12)
        assert "conditional=False: R energy's disco table" in repr(res)

    def test_strata(self):
        df = self.frame()
        n = len(df)
        res = es.disco(df, by="a", strata="s", columns=["y"], n_resamples=19, rng=1)
        table = res.to_frame()
        cells, strata = df.groupby(["a", "s"]).ngroups, df["s"].nunique()
        assert table.loc["Between", "tests"] == (
            f"the groups compared within the {strata} strata of 's': df = {cells} cells - {strata} strata; "
            f"F = (S/{cells - strata}) / (Within/{n - cells})")
        assert table.loc["Between", "df"] == cells - strata
        assert table.loc["Between", "F"] == pytest.approx(
            (table.loc["Between", "dispersion"] / (cells - strata))
            / (table.loc["Within", "dispersion"] / (n - cells)), rel=1e-12)
        assert table.loc["Within", "tests"].startswith(f"within the {cells} cells (groups within strata)")
        # two factors given each other and the strata
        res = es.disco(df, by=["a", "b"], strata="s", columns=["y"], n_resamples=19, rng=1)
        table = res.to_frame()
        cells = df.groupby(["a", "b", "s"]).ngroups
        others = df.groupby(["b", "s"]).ngroups
        assert table.loc["a", "tests"] == (
            f"a given b and the strata of 's' (a + a:b, within strata): the groups of a compared within the "
            f"{others} cells of b and the strata of 's'; df = {cells} cells - {others}; "
            f"F = (S/{cells - others}) / (Within/{n - cells})")
        assert table.loc["a", "df"] == cells - others

    def test_cli_prints_the_rows(self, tmp_path, capsys, monkeypatch):
        import json
        import warnings

        from energystats import cli

        monkeypatch.setattr(warnings, "showwarning", warnings.showwarning)  # cli.main replaces it
        path = tmp_path / "d.csv"
        df = self.frame()
        df.to_csv(path, index=False)
        want = es.disco(df, by=["a", "b"], columns=["y"], n_resamples=0).row_tests()
        base = ["disco", str(path), "--by", "a,b", "--columns", "y", "-R", "0", "-q"]
        assert cli.main(base) == 0
        out = capsys.readouterr().out
        assert "--marginal gives R energy's table" in out
        assert f"  a: {want[0]}" in out and f"  Within: {want[2]}" in out
        assert cli.main(base + ["--format", "csv"]) == 0
        csv = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out), index_col=0)
        assert list(csv["tests"]) == want
        assert cli.main(base + ["--format", "json"]) == 0
        assert json.loads(capsys.readouterr().out)["tests"] == dict(zip(["a", "b", "Within", "Total"], want))
        assert cli.main(["disco", str(path), "--by", "a", "--columns", "y", "-R", "0", "-q"]) == 0
        assert "rows:" not in capsys.readouterr().out


# -- statistical checks ----------------------------------------------------------

@pytest.mark.slow
def test_level_under_null():
    """Rejection rate at 0.05 over 400 null data sets lies in [0.025, 0.075].

    Shapes and sizes cycle through: 2-D normal (two samples, unequal sizes),
    1-D exponential (sorted path), 3-D Student t with three groups, and 2-D
    uniform through DISCO.  Default settings (R = 999): P(p ≤ 0.05) = 50/1000
    = 0.05 exactly under H0; the binomial SD over 400 data sets is 0.011, so
    the interval is ± 2.3 SD.
    """
    rng = np.random.default_rng(20240601)
    rejections = 0
    for i in range(400):
        kind = i % 4
        if kind == 0:
            p = es.energy_test(rng.normal(size=(12, 2)), rng.normal(size=(20, 2)), rng=rng).pvalue
        elif kind == 1:
            p = es.energy_test(rng.exponential(size=15), rng.exponential(size=25), rng=rng).pvalue
        elif kind == 2:
            p = es.energy_test(*[rng.standard_t(3, size=(s, 3)) for s in (8, 10, 12)], rng=rng).pvalue
        else:
            p = es.disco(*[rng.uniform(size=(10, 2)) for _ in range(3)],
                         rng=rng).pvalue
        rejections += p <= 0.05
    rate = rejections / 400
    assert 0.025 <= rate <= 0.075, rate


@pytest.mark.slow
def test_power_shift_d5():
    """Power ≥ 0.9 for a 0.5 shift per coordinate in d = 5, n = 50 per group,
    and not below dcor's energy test on the same 100 data sets.

    Both tests use the same statistic and differ only in their random
    relabellings, so their rejection counts differ only through Monte Carlo
    noise in the p-values.  We allow ours to fall short by two standard
    errors of a difference of two proportions near 0.9,
    2·sqrt(2·0.9·0.1/100) ≈ 0.085, i.e. 8 data sets.
    """
    dcor = pytest.importorskip("dcor")
    rng = np.random.default_rng(777)
    n_sets, R = 100, 199
    ours = theirs = 0
    for i in range(n_sets):
        x = rng.normal(size=(50, 5))
        y = rng.normal(size=(50, 5)) + 0.5
        res = es.energy_test(x, y, n_resamples=R, rng=rng)
        ref = dcor.homogeneity.energy_test(x, y, num_resamples=R, random_state=i)
        assert res.statistic == pytest.approx(float(ref.statistic), rel=1e-10)
        ours += res.pvalue <= 0.05
        theirs += ref.pvalue <= 0.05
    assert ours / n_sets >= 0.9
    assert ours >= theirs - 8


# -- perfectly separated groups (issue 30, item 1) ---------------------------------------
#
# Every group's points coincide, so W is 0 in exact arithmetic (rounding noise of either sign
# in d >= 2) and F is inf.  The only relabellings as extreme as the observed one are those
# that separate the points the same way (a swap of equal-sized groups' labels).  Before, the
# tie allowance was relative to W: the noise made it huge, every relabelling counted and p = 1.

def _separated(sizes, d, noise, seed=0):
    """Group j's points all at (j, j, ...), plus uniform noise of amplitude ``noise``."""
    X = np.repeat(np.arange(len(sizes), dtype=float), sizes)[:, None] * np.ones((1, d))
    return X + noise * np.random.default_rng(seed).uniform(-1, 1, X.shape), codes_of(sizes)


def _count_separating(codes, strata=None):
    """Oracle by plain loops: among all distinct relabellings (within strata), how many put
    exactly one original group in each new group (stratum by stratum); and how many there are."""
    codes = np.asarray(codes)
    strata = np.zeros(codes.size, dtype=int) if strata is None else np.asarray(strata)
    tied, total = 1, 1
    for s in np.unique(strata):
        c = codes[strata == s]
        perms = set(itertools.permutations(c.tolist()))
        good = sum(all(len({orig for orig, new in zip(c, p) if new == g}) == 1 for g in set(p))
                   for p in perms)
        tied *= good
        total *= len(perms)
    return tied, total


class TestSeparatedGroups:
    @pytest.mark.parametrize("noise", [0.0, 1e-16, 1e-14])
    @pytest.mark.parametrize("sizes", [[4, 4], [3, 3, 2]])
    def test_disco_and_energy_test_exact(self, noise, sizes):
        X, codes = _separated(sizes, 2, noise)
        tied, total = _count_separating(codes)
        res = es.disco(X, labels=codes, exact=True)
        assert res.exact and res.n_resamples == total
        assert res.pvalue == tied / total, (res.pvalue, res.statistic, res.within)
        res = es.energy_test(X, labels=codes, exact=True)
        assert res.pvalue == tied / total

    @pytest.mark.parametrize("d", [1, 2, 5])
    def test_issue_example(self, d):
        X, codes = _separated([10, 10], d, 0.0)
        res = es.disco(X, labels=codes, rng=1)
        # ties: the label swap, drawn with probability 2 / C(20, 10) < 1e-5 per relabelling
        assert res.pvalue == 1 / 1000
        dec = es.disco(X, labels=codes, rng=1, pvalue_method="decision")
        assert dec.decision == "p <= alpha"
        seq = es.disco(X, labels=codes, rng=1, pvalue_method="sequential")
        assert seq.pvalue == 1 / 1000
        assert es.energy_test(X, labels=codes, rng=1).pvalue == 1 / 1000

    @pytest.mark.parametrize("noise", [0.0, 1e-14])
    def test_strata_exact(self, noise):
        X, codes = _separated([4, 4], 2, noise)
        X = np.r_[X, X + 10.0]
        codes = np.r_[codes, codes]
        strata = np.repeat([0, 1], 8)
        tied, total = _count_separating(codes, strata)
        for test in (es.disco, es.energy_test):
            res = test(X, labels=codes, strata=strata, exact=True)
            assert res.exact and res.pvalue == tied / total, (test.__name__, res.pvalue)

    @pytest.mark.parametrize("noise", [0.0, 1e-14])
    def test_several_factors(self, noise):
        # y separated by a (every a-group's points coincide), b has no effect of its own
        a = np.tile(np.repeat([0, 1], 5), 2)
        b = np.repeat([0, 1], 10)
        y = a[:, None] * np.ones((1, 2)) + noise * np.random.default_rng(1).uniform(-1, 1, (20, 2))
        df = pd.DataFrame({"y0": y[:, 0], "y1": y[:, 1], "a": a, "b": b})
        R = 199
        cond = es.disco(df, by=["a", "b"], rng=2, n_resamples=R)
        # a relabelling of a within b ties only when it separates both halves: chance (2/252)^2
        assert cond.pvalue[0] == 1 / (R + 1)
        assert cond.pvalue[1] > 0.05
        dec = es.disco(df, by=["a", "b"], rng=2, n_resamples=R, pvalue_method="decision")
        assert dec.decision[0] == "p <= alpha"
        marg = es.disco(df, by=["a", "b"], rng=2, n_resamples=R, conditional=False)
        assert marg.pvalue[0] == 1 / (R + 1)     # ties: the swap, chance 2/C(20, 10)
        small = df.iloc[[0, 1, 5, 6, 10, 11, 15, 16]]   # a: 4 / 4, b: 2 per cell
        tied, total = _count_separating(small["a"].to_numpy())
        marg = es.disco(small, by=["a", "b"], conditional=False, exact=True)
        assert marg.exact and marg.pvalue[0] == tied / total


def test_a_one_row_group_is_named():
    """A new user's one-row group ran without a word (issue 51): the test then only asks
    whether that point is unusual among the others; a warning says so (and the answer is the
    exact one: the point's rank among the N relabellings)."""
    g = np.random.default_rng(0)
    X = g.normal(size=(31, 2))
    groups = np.r_[np.zeros(30), 1]
    with pytest.warns(UserWarning, match=r"group\(s\) \[1.0\] hold a single row.*at least 1/31"):
        res = es.energy_test(X, labels=groups, rng=0, n_resamples=99)
    assert res.exact and res.sizes.tolist() == [30, 1]
