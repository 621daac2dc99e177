"""Sequential Monte Carlo p-values (energystats._core._sequential) and the tests that use them."""
import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core import _sequential


def _bc_plain(exceed, h, R_max):
    """Besag & Clifford by hand: walk the flags one by one."""
    g = 0
    for L, e in enumerate(exceed[:R_max], start=1):
        g += bool(e)
        if g == h:
            return h / L, L
    return (g + 1) / (R_max + 1), min(len(exceed), R_max)


@pytest.mark.parametrize("seed", range(6))
def test_besag_clifford_matches_the_plain_walk_for_any_batching(seed):
    rng = np.random.default_rng(seed)
    R_max = 300
    exceed = rng.random(R_max) < rng.choice([0.01, 0.05, 0.3])
    p_ref, used_ref = _bc_plain(exceed, 10, R_max)
    for cap in (1, 7, 16, 64, 1000):
        rule = _sequential.BesagClifford(10, R_max)
        r0 = 0
        for m in _sequential.batches(R_max, cap, True):
            if rule.update(exceed[r0:r0 + m]):
                break
            r0 += m
        assert (rule.pvalue(), rule.used) == (p_ref, used_ref)


def test_batches_grow_from_16_to_the_cap():
    assert list(_sequential.batches(100, 40, True)) == [16, 32, 40, 12]
    assert list(_sequential.batches(100, 40, False)) == [40, 40, 20]
    assert sum(_sequential.batches(9999, 512, True)) == 9999


@pytest.mark.parametrize("p_true,wrong", [(0.03, "p > alpha"), (0.05, None), (0.08, "p <= alpha")])
def test_gandy_resampling_risk_is_bounded(p_true, wrong):
    # epsilon = 0.05 so that the bound is visible in 4000 simulated streams; at p = alpha
    # either decision is "wrong" and each must stay within epsilon
    alpha, eps, R_max, n_streams = 0.05, 0.05, 3000, 4000
    rng = np.random.default_rng(11)
    decisions = []
    for _ in range(n_streams):
        rule = _sequential.GandyDecision(alpha, eps, R_max)
        for m in _sequential.batches(R_max, 256, True):
            if rule.update(rng.random(m) < p_true):
                break
        decisions.append(rule.decision)
    decisions = np.array(decisions, dtype=object)
    bound = eps + 3 * np.sqrt(eps * (1 - eps) / n_streams)
    for d in (["p > alpha", "p <= alpha"] if wrong is None else [wrong]):
        assert np.mean(decisions == d) <= bound, (d, np.mean(decisions == d))
    if wrong is not None:  # away from alpha it decides, and rightly, nearly always
        right = "p <= alpha" if wrong == "p > alpha" else "p > alpha"
        assert np.mean(decisions == right) >= 0.9


def test_gandy_boundaries_spend_no_more_than_epsilon_under_alpha():
    # the boundaries' own promise, by exact recursion on a small case: P(stop above U) and
    # P(stop below L) under p = alpha, each at most epsilon
    alpha, eps, R_max = 0.1, 0.05, 400
    U, L = _sequential.gandy_boundaries(alpha, eps, R_max)
    alive = {0: 1.0}
    up = down = 0.0
    for n in range(R_max):
        nxt = {}
        for j, pr in alive.items():
            for jj, q in ((j, 1 - alpha), (j + 1, alpha)):
                nxt[jj] = nxt.get(jj, 0.0) + pr * q
        alive = {}
        for j, pr in nxt.items():
            if j >= U[n]:
                up += pr
            elif j <= L[n]:
                down += pr
            else:
                alive[j] = pr
    assert up <= eps * (1 + 1e-9) and down <= eps * (1 + 1e-9)
    assert up > 0.5 * eps * R_max / (R_max + 1000)  # and it does spend (the boundaries are not trivial)


class TestInTheTests:
    def _data(self, shift=0.0):
        rng = np.random.default_rng(0)
        return rng.normal(size=(60, 2)), rng.normal(size=(50, 2)) + shift

    def test_energy_test_sequential_is_the_prefix_of_the_full_run(self):
        x, y = self._data()
        full = es.energy_test(x, y, n_resamples=4999, rng=3)
        seq = es.energy_test(x, y, n_resamples=4999, rng=3, pvalue_method="sequential", sequential_h=7)
        L = seq.n_resamples
        np.testing.assert_array_equal(seq.null_distribution, full.null_distribution[:L])
        p_ref, used_ref = _bc_plain(full.null_distribution >= full.statistic, 7, 4999)
        assert (seq.pvalue, L) == (p_ref, used_ref)
        assert seq.pvalue_method == "sequential" and seq.pvalue_se is None and seq.seed == 3
        assert "pvalue_method='sequential'" in repr(seq)

    def test_energy_test_decision_stops_early_on_a_clear_alternative(self):
        x, y = self._data(shift=2.0)
        res = es.energy_test(x, y, n_resamples=9999, rng=3, pvalue_method="decision")
        assert res.decision == "p <= alpha" and res.n_resamples < 400
        x, y = self._data()
        res = es.energy_test(x, y, n_resamples=9999, rng=3, pvalue_method="decision")
        assert res.decision == "p > alpha" and res.n_resamples < 100

    def test_independence_test_sequential_is_the_prefix_of_the_full_run(self):
        rng = np.random.default_rng(4)
        x, y = rng.normal(size=(80, 2)), rng.normal(size=(80, 1))
        full = es.independence_test(x, y, n_resamples=2999, rng=8)
        seq = es.independence_test(x, y, n_resamples=2999, rng=8, pvalue_method="sequential")
        L = seq.n_resamples
        np.testing.assert_array_equal(seq.null_distribution, full.null_distribution[:L])
        assert (seq.pvalue, L) == _bc_plain(full.null_distribution >= full.statistic, 10, 2999)
        dec = es.independence_test(x, x[:, :1] + y, n_resamples=2999, rng=8, pvalue_method="decision")
        assert dec.decision == "p <= alpha" and dec.n_resamples < 400

    def test_disco_sequential_is_the_prefix_of_the_full_run(self):
        rng = np.random.default_rng(6)
        z = rng.normal(size=(90, 2))
        g = np.repeat([0, 1, 2], 30)
        full = es.disco(z, labels=g, n_resamples=2999, rng=4)
        seq = es.disco(z, labels=g, n_resamples=2999, rng=4, pvalue_method="sequential", sequential_h=5)
        L = seq.n_resamples
        assert L < 2999
        # the same relabellings; their sums go through BLAS products of the batch's one-hot rows,
        # and a BLAS may round a row of L @ D differently when L has fewer rows (OpenBLAS 0.3.31
        # on an AVX-512 Xeon: L[:m] @ D != (L @ D)[:m] in the last bit for m < 128), so the
        # values agree to rounding; the counts (ties within the rounding bound) are exact
        np.testing.assert_allclose(seq.null_distribution, full.null_distribution[:L], rtol=1e-13)
        assert (seq.pvalue, L) == _bc_plain(full.null_distribution >= full.statistic, 5, 2999)
        assert (seq.pvalue_method, seq.pvalue_se, seq.decision) == ("sequential", None, None)
        assert "stopped sequentially" in repr(seq)
        # within strata too
        s = np.tile([0, 1], 45)
        full = es.disco(z, labels=g, strata=s, n_resamples=999, rng=4)
        seq = es.disco(z, labels=g, strata=s, n_resamples=999, rng=4, pvalue_method="sequential")
        np.testing.assert_allclose(seq.null_distribution, full.null_distribution[:seq.n_resamples],
                                   rtol=1e-13)
        dec = es.disco(z + 1.5 * g[:, None], labels=g, n_resamples=9999, rng=4, pvalue_method="decision")
        assert dec.decision == "p <= alpha" and dec.n_resamples < 400

    @pytest.mark.parametrize("conditional", [True, False])
    def test_disco_several_factors_each_rule_on_the_full_runs_relabellings(self, conditional):
        # factor a does nothing, b shifts the response: a's rule stops after a few dozen, b's
        # runs to R_max; each factor's p is its rule applied to the full run's relabellings
        rng = np.random.default_rng(9)
        n = 90
        a, b = rng.integers(0, 3, n), rng.integers(0, 2, n)
        df = pd.DataFrame({"y": rng.normal(size=n) + 1.2 * b, "z": rng.normal(size=n), "a": a, "b": b})
        kw = dict(by=["a", "b"], n_resamples=1999, rng=4, conditional=conditional)
        full = es.disco(df, **kw)
        seq = es.disco(df, **kw, pvalue_method="sequential", sequential_h=5)
        assert seq.n_resamples.dtype.kind == "i" and seq.n_resamples.shape == (2,)
        assert seq.n_resamples[0] < 200 and seq.n_resamples[1] == 1999
        for f in range(2):
            L = int(seq.n_resamples[f])
            # the same relabellings: values equal to rounding (BLAS batch shapes), the counts exact
            np.testing.assert_allclose(seq.null_distribution[:L, f], full.null_distribution[:L, f],
                                       rtol=1e-13)
            assert np.all(np.isnan(seq.null_distribution[L:, f]))
            ref = _bc_plain(full.null_distribution[:, f] >= full.statistic[f], 5, 1999)
            assert (seq.pvalue[f], L) == ref
        assert seq.pvalue[1] == 1 / 2000 and seq.pvalue_se is None and seq.seed == 4
        assert "random relabellings (per factor)" in repr(seq)
        assert f"{seq.n_resamples[0]}/1999" in repr(seq)
        # Gandy's decision, per factor
        dec = es.disco(df, **kw, pvalue_method="decision")
        assert dec.decision == ["p > alpha", "p <= alpha"]
        assert np.all(dec.n_resamples < 400)
        assert "decisions: p > alpha; p <= alpha" in repr(dec)

    def test_disco_factors_after_an_early_stop_get_the_full_runs_relabellings(self, monkeypatch):
        # without skipping the stopped factor's remaining relabellings, the next factor would
        # draw different ones: its null would no longer be the full run's
        from energystats._core import _permutation

        rng = np.random.default_rng(9)
        n = 60
        df = pd.DataFrame({"y": rng.normal(size=n), "a": rng.integers(0, 2, n),
                           "b": rng.integers(0, 2, n)})
        full = es.disco(df, by=["a", "b"], n_resamples=499, rng=1)
        seq = es.disco(df, by=["a", "b"], n_resamples=499, rng=1, pvalue_method="sequential")
        L = int(seq.n_resamples[1])
        assert seq.n_resamples[0] < 499
        np.testing.assert_allclose(seq.null_distribution[:L, 1], full.null_distribution[:L, 1],
                                   rtol=1e-13)
        skipped = []
        real = _permutation.skip_relabellings
        monkeypatch.setattr(_permutation, "skip_relabellings",
                            lambda *a, **k: skipped.append(a[2]) or real(*a, **k))
        es.disco(df, by=["a", "b"], n_resamples=499, rng=1, pvalue_method="sequential")
        assert skipped and skipped[0] > 0  # the first factor's rest, once

    def test_skip_relabellings_leaves_the_generator_as_drawing_them(self):
        from energystats._core import _permutation

        codes = np.repeat([0, 1, 2], [5, 7, 4])
        strata = _permutation.Strata(np.tile([0, 1], 8))
        for st in (None, strata):
            g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
            _permutation.draw_permutations(g1, codes, 37, st)
            _permutation.skip_relabellings(g2, codes, 37, st)
            assert np.array_equal(_permutation.draw_permutations(g1, codes, 3, st),
                                  _permutation.draw_permutations(g2, codes, 3, st))

    def test_no_exceedance_runs_to_the_end(self):
        x, y = self._data(shift=3.0)
        res = es.energy_test(x, y, n_resamples=199, rng=1, pvalue_method="sequential")
        assert res.n_resamples == 199 and res.pvalue == 1 / 200

    @pytest.mark.parametrize("kw,match", [
        ({"pvalue_method": "seq"}, "pvalue_method"),
        ({"pvalue_method": "sequential", "sequential_h": 0}, "sequential_h"),
        ({"pvalue_method": "sequential", "sequential_h": 10, "n_resamples": 5}, "sequential_h"),
        ({"pvalue_method": "decision", "alpha": 1.5}, "alpha"),
        ({"pvalue_method": "sequential", "exact": True}, "exact=True"),
    ])
    def test_errors(self, kw, match):
        x, y = self._data()
        with pytest.raises(ValueError, match=match):
            es.energy_test(x, y, rng=0, **kw)
        with pytest.raises(ValueError, match=match):
            es.independence_test(x[:50], y, rng=0, **kw)

    def test_level_under_the_null(self):
        # Besag-Clifford is valid: rejection rate at 0.05 within 3 binomial SE (two-sided)
        rng = np.random.default_rng(2026)
        n_sets, rej, used = 300, 0, []
        for _ in range(n_sets):
            x, y = rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
            res = es.energy_test(x, y, n_resamples=999, rng=rng, pvalue_method="sequential")
            rej += res.pvalue <= 0.05
            used.append(res.n_resamples)
        se = np.sqrt(0.05 * 0.95 / n_sets)
        assert abs(rej / n_sets - 0.05) <= 3 * se, rej / n_sets
        assert np.mean(used) < 0.1 * 999


def test_not_on_dask():
    pytest.importorskip("dask")
    pytest.importorskip("distributed")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 2)), rng.normal(size=(30, 2))
    for test in (es.energy_test, es.independence_test, es.disco):
        with pytest.raises(ValueError, match="backend='dask'"):
            test(x, y, rng=0, backend="dask", pvalue_method="sequential")


def test_gandy_boundaries_do_not_depend_on_how_far_they_were_extended():
    whole = _sequential._GandyBounds(0.05, 1e-3).upto(3000)
    grown = _sequential._GandyBounds(0.05, 1e-3)
    for count in (1, 7, 100, 1500, 3000):
        part = grown.upto(count)
    np.testing.assert_array_equal(part[0], whole[0])
    np.testing.assert_array_equal(part[1], whole[1])


def test_partial_and_mutual_tests_sequential_are_the_prefix_of_the_full_run():
    rng = np.random.default_rng(12)
    z = rng.normal(size=60)
    x, y = z + rng.normal(size=60), z + rng.normal(size=60)
    full = es.partial_distance_correlation_test(x, y, z, n_resamples=1999, rng=5)
    seq = es.partial_distance_correlation_test(x, y, z, n_resamples=1999, rng=5,
                                               pvalue_method="sequential")
    L = seq.n_resamples
    assert L < 1999
    np.testing.assert_array_equal(seq.null_distribution, full.null_distribution[:L])
    assert (seq.pvalue, L) == _bc_plain(full.null_distribution >= full.statistic, 10, 1999)
    assert (seq.pvalue_method, seq.pvalue_se) == ("sequential", None)
    dec = es.partial_distance_correlation_test(x + 2 * y, y, z, n_resamples=9999, rng=5,
                                               pvalue_method="decision")
    assert dec.decision == "p <= alpha" and dec.n_resamples < 400

    a, b, c = rng.normal(size=(3, 40))
    full = es.mutual_independence_test(a, b, c, n_resamples=999, rng=7)
    seq = es.mutual_independence_test(a, b, c, n_resamples=999, rng=7, pvalue_method="sequential",
                                      sequential_h=4)
    L = seq.n_resamples
    assert L < 999
    np.testing.assert_array_equal(seq.null_distribution, full.null_distribution[:L])
    assert (seq.pvalue, L) == _bc_plain(full.null_distribution >= full.statistic, 4, 999)
    assert (seq.pvalue_method, seq.pvalue_se, seq.decision) == ("sequential", None, None)
    with pytest.raises(ValueError, match="sequential_h"):
        es.mutual_independence_test(a, b, c, pvalue_method="sequential", sequential_h=0)
    with pytest.raises(ValueError, match="pvalue_method"):
        es.partial_distance_correlation_test(x, y, z, pvalue_method="asymptotic")


@pytest.mark.parametrize("case", ["normal-1d", "normal-2d", "poisson", "gamma"])
def test_goodness_of_fit_sequential_is_the_prefix_of_the_full_bootstrap(case):
    rng = np.random.default_rng(21)
    if case == "normal-1d":
        x = rng.normal(size=50)
        run = lambda **kw: es.normality_test(x, rng=9, **kw)
    elif case == "normal-2d":
        x = rng.normal(size=(30, 2))
        run = lambda **kw: es.normality_test(x, rng=9, **kw)
    elif case == "poisson":
        x = rng.poisson(3.0, size=40)
        run = lambda **kw: es.poisson_test(x, rng=9, **kw)
    else:
        x = rng.gamma(2.0, size=40)
        run = lambda **kw: es.gof_test(x, "gamma", known_params={"loc": 0}, rng=9, **kw)
    R = 499
    full = run(n_resamples=R)
    seq = run(n_resamples=R, pvalue_method="sequential", sequential_h=5)
    L = seq.n_resamples
    assert L < R
    np.testing.assert_array_equal(seq.null_distribution, full.null_distribution[:L])
    assert (seq.pvalue, L) == _bc_plain(full.null_distribution >= full.statistic, 5, R)
    assert (seq.pvalue_method, seq.pvalue_se) == ("sequential", None)


def test_goodness_of_fit_sequential_errors():
    x = np.random.default_rng(0).normal(size=30)
    with pytest.raises(ValueError, match="method='limit'"):
        es.normality_test(x, method="limit", pvalue_method="sequential")
    with pytest.raises(ValueError, match="statistic='all'"):
        es.poisson_test(np.arange(30) % 4, statistic="all", pvalue_method="decision")
    dec = es.normality_test(np.random.default_rng(1).exponential(size=80), n_resamples=9999, rng=2,
                            pvalue_method="decision")
    assert dec.decision == "p <= alpha" and dec.n_resamples < 400


def test_cluster_test_sequential_is_the_prefix_of_the_full_run():
    X = np.random.default_rng(3).normal(size=(40, 2))  # no clusters: large p, an early stop
    full = es.cluster_test(X, 2, n_resamples=99, n_init=2, rng=4)
    seq = es.cluster_test(X, 2, n_resamples=99, n_init=2, rng=4, pvalue_method="sequential",
                          sequential_h=3)
    L = seq.n_resamples
    assert L < 99
    np.testing.assert_array_equal(seq.null_distribution, full.null_distribution[:L])
    assert (seq.pvalue, L) == _bc_plain(full.null_distribution >= full.statistic, 3, 99)
    assert (seq.pvalue_method, seq.pvalue_se) == ("sequential", None)
    with pytest.raises(ValueError, match="naive=True"):
        es.cluster_test(X, 2, n_resamples=99, naive=True, pvalue_method="sequential")


# -- issue 30 ---------------------------------------------------------------------------

class TestNoPvalueNoDecision:
    """A statistic without a p-value (NaN: all points identical, F = 0/0) has no decision
    either; before, 'decision' reported 'p <= alpha' next to p = NaN."""

    @pytest.mark.parametrize("method", ["decision", "sequential"])
    def test_disco_identical_points(self, method):
        X = np.ones((12, 2))
        with pytest.warns(es.DegenerateStatisticWarning, match="observed F is nan"):
            res = es.disco(X, labels=np.repeat([0, 1], 6), rng=0, pvalue_method=method)
        assert np.isnan(res.statistic) and np.isnan(res.pvalue)
        assert res.decision is None
        assert res.n_resamples <= 16          # every relabelling counts: the rule stops at once

    def test_several_factors(self):
        df = pd.DataFrame({"y": np.ones(16), "a": np.tile([0, 1], 8), "b": np.repeat([0, 1], 8)})
        with pytest.warns(es.DegenerateStatisticWarning):
            res = es.disco(df, by=["a", "b"], rng=0, pvalue_method="decision")
        assert np.all(np.isnan(res.pvalue)) and res.decision == [None, None]
        with pytest.warns(es.DegenerateStatisticWarning):
            res = es.disco(df, by=["a", "b"], rng=0, pvalue_method="decision", conditional=False)
        assert np.all(np.isnan(res.pvalue)) and res.decision == [None, None]

    def test_final_pvalue_clears_the_decision(self):
        rule = _sequential.make_rule("decision", 5000)
        rule.update(np.zeros(5000, dtype=bool))
        assert rule.decision == "p <= alpha"
        assert np.isnan(_sequential.final_pvalue(float("nan"), rule)) and rule.decision is None


@pytest.mark.parametrize("bad", [dict(alpha=1.5), dict(alpha=0), dict(alpha="0.05"),
                                 dict(sequential_h=0), dict(sequential_h=2.5)])
@pytest.mark.parametrize("method", ["full", "asymptotic"])
def test_alpha_and_h_checked_even_when_unused(bad, method):
    x, y = np.random.default_rng(0).normal(size=(2, 20))
    name = next(iter(bad))
    with pytest.raises(ValueError, match=f"`{name}` must be"):
        es.energy_test(x, y, n_resamples=19, rng=0, pvalue_method=method, **bad)
    if method == "full":
        with pytest.raises(ValueError, match=f"`{name}` must be"):
            es.disco(x, y, n_resamples=19, rng=0, **bad)


def test_default_h_with_few_resamples_is_fine():
    x, y = np.random.default_rng(0).normal(size=(2, 20))
    assert es.energy_test(x, y, n_resamples=5, rng=0).n_resamples == 5    # h = 10 > 5 unused


def test_sequential_keeps_only_the_resamples_it_uses(tmp_path):
    # 10**9 relabellings allowed, a null result stops after ~h / p of them: the rules used to
    # allocate all 10**9 values (8 GB) first, which fails under a 3 GB address-space limit
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import resource, numpy as np, energystats as es\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))\n"
        "x, y = np.random.default_rng(0).normal(size=(2, 30))\n"
        "r = es.energy_test(x, y, n_resamples=10**9, rng=1, pvalue_method='sequential')\n"
        "d = es.disco(x, y, n_resamples=10**9, rng=1, pvalue_method='decision')\n"
        "print(r.n_resamples, d.n_resamples, d.decision)\n")
    root = str(Path(es.__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          cwd=root, env={"PYTHONPATH": root, "OPENBLAS_NUM_THREADS": "1",
                                         "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    used_r, used_d, decision = proc.stdout.split(maxsplit=2)
    assert int(used_r) < 10**4 and int(used_d) < 10**4 and decision.strip() == "p > alpha"
