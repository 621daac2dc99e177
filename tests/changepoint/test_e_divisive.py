"""E-Divisive: the compiled split search against the plain NumPy reference of the definitions,
the hierarchical procedure, level and power of the permutation test, the sequential rules'
prefix property, and bad input."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._lib import _changepoint as K
from energystats.changepoint import _search

from .reference import best_split, distances, e_divisive_fixed, q_table


def _series(T, d, changes, rng, shift=2.0):
    Z = rng.normal(size=(T, d))
    for c in changes:
        Z[c:] += shift
    return Z


# -- the kernel against the definitions ----------------------------------------------------

@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
def test_q_for_every_split_matches_reference(d, alpha):
    rng = np.random.default_rng(100 + d)
    Z = _series(37, d, [15], rng, shift=1.0)
    T, min_size = len(Z), 4
    table = np.full((T + 1, T + 1), np.nan)
    q, t, k = K.best_split(Z, min_size, 0, alpha, 1, table)
    ref = q_table(Z, min_size, alpha)
    got = {key: table[key] for key in ref}
    assert np.count_nonzero(~np.isnan(table)) == len(ref)  # nothing outside the admissible splits
    scale = max(abs(v) for v in ref.values())
    for key, v in ref.items():
        assert got[key] == pytest.approx(v, rel=1e-11, abs=1e-11 * scale), key
    rq, rt, rk = best_split(Z, min_size, alpha)
    assert (t, k) == (rt, rk)
    assert q == pytest.approx(rq, rel=1e-11)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_thread_count_gives_the_same_bits(n_threads):
    Z = _series(300, 2, [120, 200], np.random.default_rng(5))
    assert K.best_split(Z, 10, 0, 1.0, n_threads) == K.best_split(Z, 10, 0, 1.0, 1)
    r1 = es.e_divisive(Z, min_size=10, n_resamples=19, rng=3, n_threads=1)
    r2 = es.e_divisive(Z, min_size=10, n_resamples=19, rng=3, n_threads=n_threads)
    assert r1.changepoints.tolist() == r2.changepoints.tolist()
    assert r1.statistics.tolist() == r2.statistics.tolist()
    assert r1.pvalues.tolist() == r2.pvalues.tolist()


def test_tie_rule_smallest_tau_then_kappa():
    # a constant series: every Q is 0, so the tie rule alone decides
    Z = np.ones((20, 2))
    assert K.best_split(Z, 3, 0, 1.0, 2) == (0.0, 3, 6)
    # a series symmetric in time (a bump in the middle): splits at tau and at T - tau mirror
    # each other; the reference and the kernel both take the smaller tau
    Z = np.r_[np.zeros(10), np.full(10, 5.0), np.zeros(10)].reshape(-1, 1)
    q, t, k = K.best_split(Z, 5, 0, 1.0, 1)
    rq, rt, rk = best_split(Z, 5, 1.0)
    assert (t, k) == (rt, rk) == (10, 20)


def test_segment_too_short_has_no_split():
    assert K.best_split(np.zeros((7, 1)), 4, 0, 1.0, 1) == (-np.inf, -1, -1)


@pytest.mark.filterwarnings("ignore::energystats.ChangePointWarning")  # splits of noise at min_size
@pytest.mark.parametrize("n_changes", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("d", [1, 3])
def test_fixed_k_matches_reference_hierarchy(n_changes, d):
    rng = np.random.default_rng(10 * n_changes + d)
    T, min_size = 60, 5
    changes = sorted(rng.choice(np.arange(8, 52), size=n_changes, replace=False))
    Z = _series(T, d, changes, rng, shift=1.5)
    k = 4
    ref = e_divisive_fixed(Z, k, min_size, 1.0)
    res = es.e_divisive(Z, min_size=min_size, n_changepoints=k)
    assert res.order_found.tolist() == [p for p, _ in ref]
    np.testing.assert_allclose(res.statistics, [q for _, q in ref], rtol=1e-10)
    assert res.changepoints.tolist() == sorted(p for p, _ in ref)
    assert res.pvalues is None and res.seed is None and res.rejected is None


def test_permuted_maxima_match_reference():
    rng = np.random.default_rng(8)
    Z = _series(40, 2, [20], rng)
    segments = [(0, 20), (20, 40)]
    perms = _search._draw(np.random.default_rng(1), 40, segments, 3)
    got = K.permuted_maxima(Z, perms, np.array([0, 20]), np.array([20, 40]), 4, 0, 1.0, 2)
    for r in range(3):
        ref = max(best_split(Z[perms[r, a:b]], 4, 1.0)[0] for a, b in segments)
        assert got[r] == pytest.approx(ref, rel=1e-11)


@pytest.mark.parametrize("d", [1, 2, 3, 9])
@pytest.mark.parametrize("code,param", [(0, 1.0), (0, 2.0), (0, 0.7), (1, 1.3), (2, 0.8)])
def test_permuted_maxima_lanes_give_the_serial_bits(d, code, param):
    # the lane kernels (several permutations per vector) against the serial sweep: exact, for
    # every metric, two segments, κ searched or fixed at the end, a count of permutations that
    # is not a multiple of the lanes (the last group padded), one and two threads
    rng = np.random.default_rng(d)
    T = 97
    Z = rng.normal(size=(T, d))
    segments = [(0, 40), (40, T)]
    perms = _search._draw(np.random.default_rng(3), T, segments, 11)
    starts, ends = np.array([0, 40]), np.array([40, T])
    for end_only in (0, 1):
        for min_size in (3, 20):
            lanes = K.permuted_maxima(Z, perms, starts, ends, min_size, code, param, 2, end_only, 1)
            serial = K.permuted_maxima(Z, perms, starts, ends, min_size, code, param, 1, end_only, 0)
            np.testing.assert_array_equal(lanes, serial)
            assert np.all(np.isfinite(lanes))


# -- the tests' p-values -------------------------------------------------------------------

def _rejection_rate(draw, n_series, R=99, seed=0, **kw):
    import warnings

    rng = np.random.default_rng(seed)
    hits = 0
    for i in range(n_series):
        with warnings.catch_warnings():   # the false positives' splits at min_size, say
            warnings.simplefilter("ignore", es.ChangePointWarning)
            res = es.e_divisive(draw(rng), min_size=30, n_resamples=R, rng=i, n_threads=1, **kw)
        hits += res.changepoints.size > 0
    return hits / n_series


@pytest.mark.slow
@pytest.mark.parametrize("law", ["gaussian", "t3"])
@pytest.mark.filterwarnings("ignore::energystats.SeriesDependenceWarning")  # ~1 % a series, by design
def test_level_no_change(law):
    n = 300
    draw = {"gaussian": lambda g: g.normal(size=(200, 1)),
            "t3": lambda g: g.standard_t(3, size=(200, 1))}[law]
    rate = _rejection_rate(draw, n, seed=5 if law == "gaussian" else 6)
    se = math.sqrt(0.05 * 0.95 / n)
    assert abs(rate - 0.05) <= 2 * se, f"{law}: rejection rate {rate:.3f} at level 0.05 (n={n})"


def _mean_change(g):
    z = g.normal(size=(200, 2))
    z[100:] += 1.0
    return z


def _variance_change(g):
    z = g.normal(size=(200, 2))
    z[100:] *= 2.5
    return z


def _correlation_change(g):
    # the same N(0, 1) margins throughout; the correlation goes from -0.8 to 0.8
    z = g.normal(size=(200, 2))
    r = np.where(np.arange(200) < 100, -0.8, 0.8)
    z[:, 1] = r * z[:, 0] + np.sqrt(1 - r ** 2) * z[:, 1]
    return z


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::energystats.SeriesDependenceWarning")  # ~1 % a series, by design
@pytest.mark.parametrize("kind,draw,floor", [("mean", _mean_change, 0.9),
                                              ("variance", _variance_change, 0.9),
                                              ("correlation", _correlation_change, 0.8)])
def test_power(kind, draw, floor, record_property):
    # floors well above the level: 0.05 + 4 binomial SEs of the level at n = 40 is 0.19
    n = 40
    rate = _rejection_rate(draw, n, R=49, seed=3)
    record_property(f"power_{kind}", rate)
    print(f"power, change in {kind} only (T=200, d=2, n={n} series): {rate:.2f}")
    assert rate >= floor, f"power against a change in {kind}: {rate:.2f} (n={n})"


@pytest.mark.parametrize("method", ["sequential", "decision"])
def test_sequential_uses_a_prefix_of_the_full_permutations(method, monkeypatch):
    drawn = {"full": [], method: []}  # per run: [(stage generator, perms), ...]
    original = _search._draw
    current = []

    def recording(gen, T, segments, count):
        perms = original(gen, T, segments, count)
        drawn[current[-1]].append((gen, perms))  # the generator is kept: no id reuse
        return perms

    monkeypatch.setattr(_search, "_draw", recording)
    Z = _series(240, 2, [80, 160], np.random.default_rng(4), shift=0.8)
    runs = {}
    for name in ("full", method):
        current.append(name)
        runs[name] = es.e_divisive(Z, min_size=20, n_resamples=99, pvalue_method=name, rng=7)
    full, seq = runs["full"], runs[method]
    assert seq.changepoints.tolist() == full.changepoints.tolist()
    assert len(seq.n_resamples) == len(full.n_resamples) >= 2

    def stages(records):
        out = []
        for gen, perms in records:
            if not out or out[-1][0] is not gen:
                out.append((gen, []))
            out[-1][1].append(perms)
        return [np.concatenate(p) for _, p in out]

    f_stages, s_stages = stages(drawn["full"]), stages(drawn[method])
    assert len(f_stages) == len(s_stages) == len(full.n_resamples)
    for f, s_, used_f, used_s in zip(f_stages, s_stages, full.n_resamples, seq.n_resamples):
        assert used_f == 99 and len(f) == 99 and used_s <= 99
        np.testing.assert_array_equal(s_[:used_s], f[:used_s])
    assert sum(seq.n_resamples) < sum(full.n_resamples)  # something stopped early
    if method == "decision":
        assert all(d in ("p <= alpha", "p > alpha", None) for d in seq.decisions)


def test_pvalue_counts_with_plus_one():
    Z = _series(120, 1, [60], np.random.default_rng(2), shift=3.0)
    res = es.e_divisive(Z, min_size=10, n_resamples=9, sig_level=0.1, rng=0)
    assert res.pvalues[0] == 0.1  # (0 + 1) / (9 + 1): the smallest p-value of 9 permutations
    assert res.n_resamples[0] == 9


# -- results -------------------------------------------------------------------------------

def test_result_fields_index_and_frame():
    rng = np.random.default_rng(9)
    Z = _series(150, 2, [50, 100], rng, shift=3.0)
    idx = pd.date_range("2026-01-01", periods=150, freq="D")
    df = pd.DataFrame(Z, columns=["a", "b"], index=idx)
    res = es.e_divisive(df, min_size=15, n_resamples=49, rng=1)
    assert res.changepoints.tolist() == [50, 100]
    assert res.changepoint_labels == [idx[50], idx[100]]
    assert res.labels.tolist() == [0] * 50 + [1] * 50 + [2] * 50
    assert res.statistics.size == res.pvalues.size == 2
    assert sorted(res.order_found.tolist()) == [50, 100]
    assert res.rejected is not None and res.rejected_pvalue > 0.05
    assert len(res.n_resamples) == 3 and res.seed == 1 and res.columns == ["a", "b"]
    frame = res.to_frame()
    assert frame["start"].tolist() == [0, 50, 100] and frame["length"].tolist() == [50, 50, 50]
    assert frame["first"].tolist() == [idx[0], idx[50], idx[100]]
    np.testing.assert_allclose(frame["mean_a"], [Z[:50, 0].mean(), Z[50:100, 0].mean(), Z[100:, 0].mean()])
    with pytest.raises(Exception):
        res.seed = 2  # frozen


def test_plot_draws_the_change_points():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    Z = _series(100, 1, [50], np.random.default_rng(1), shift=3.0)
    res = es.e_divisive(Z, min_size=10, n_changepoints=1)
    ax = res.plot()
    assert [line.get_xdata()[0] for line in ax.lines[1:]] == [50]


def test_seed_is_recorded_and_repeats():
    Z = _series(100, 1, [50], np.random.default_rng(1), shift=1.0)
    a = es.e_divisive(Z, min_size=10, n_resamples=19)
    b = es.e_divisive(Z, min_size=10, n_resamples=19, rng=a.seed)
    assert a.pvalues.tolist() == b.pvalues.tolist() and a.rejected_pvalue == b.rejected_pvalue


# -- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    ({"min_size": 1}, r"`min_size` must be an integer >= 2.*got 1"),
    ({"min_size": 2.0}, r"`min_size` must be an integer >= 2.*got 2.0"),
    ({"min_size": 26}, r"`min_size` must be at most T // 2 = 25.*got 26"),
    ({"min_size": 10, "n_changepoints": 5}, r"`n_changepoints` must be .*\[0, 4\].*got 5"),
    ({"n_changepoints": -1}, r"`n_changepoints`.*got -1"),
    ({"exponent": 2.0}, r"`exponent` must be a number in \(0, 2\).*got 2.0"),
    ({"exponent": 3.0, "metric": "gaussian"}, r"`exponent` must be a number in \(0, 2\).*got 3.0"),
    ({"metric": "cosine"}, r"metric='cosine' is refused"),
    # of negative type, but not computed by the compiled search (read as gaussian before: a
    # plausible wrong change point)
    ({"metric": "cityblock"}, r"`metric` must be one of 'energy' .*got 'cityblock'"),
    ({"metric": "canberra"}, r"`metric` must be one of 'energy' .*got 'canberra'"),
    ({"sig_level": 1.5}, r"`sig_level` must be a number in \(0, 1\); got 1.5"),
    ({"n_resamples": 0}, r"`n_resamples` must be an integer in \[1, 10\*\*9\]; got 0"),
    ({"pvalue_method": "asymptotic"}, r"`pvalue_method` must be one of"),
    ({"pvalue_method": "sequential", "n_resamples": 5},
     r"`n_resamples` must be at least 10 with pvalue_method='sequential'.*got 5"),
    ({"metric": "precomputed"}, r"`metric` must be one of"),
    ({"n_changepoints": 1, "rng": -3}, r"`rng` must be a non-negative integer seed.*got -3"),
    # exponent 2 by its SciPy name: ran untold and missed a change in spread (found by review)
    ({"metric": "sqeuclidean"}, r"metric='sqeuclidean' is \|x - y\|\^2.*compares means only"),
    # the tests' settings with no test to run: once ignored without a word
    ({"n_changepoints": 1, "n_resamples": 999, "rng": 5},
     r"`n_resamples`, `rng`: for the permutation tests, which do not run with `n_changepoints`"),
    ({"n_changepoints": 1, "pvalue_method": "sequential", "sig_level": 0.01, "progress": True},
     r"`pvalue_method`, `sig_level`, `progress`: for the permutation tests"),
])
def test_bad_arguments_are_named(kwargs, match):
    Z = np.random.default_rng(0).normal(size=(50, 1))
    with pytest.raises(ValueError, match=match):
        es.e_divisive(Z, **{"min_size": 10, **kwargs})


def test_nan_is_refused():
    Z = np.random.default_rng(0).normal(size=(50, 2))
    Z[7, 1] = np.nan
    with pytest.raises(ValueError, match=r"`X` contains NaN.*first row 7"):
        es.e_divisive(Z, min_size=5)


def test_constant_series_is_a_documented_result():
    Z = np.full((60, 1), 3.0)
    res = es.e_divisive(Z, min_size=10, n_resamples=19, rng=0)
    assert res.changepoints.size == 0
    assert res.rejected_statistic == 0.0 and res.rejected_pvalue == 1.0
    with pytest.warns(UserWarning, match="constant"):
        fixed = es.e_divisive(Z, min_size=10, n_changepoints=1)
    assert fixed.changepoints.tolist() == [10]


def test_fixed_k_that_the_search_cannot_reach_warns():
    # T = 100, min_size = 30: the bound allows 2, but the first split at 50 leaves two
    # segments of 50 < 2 * 30 rows
    Z = _series(100, 1, [50], np.random.default_rng(0), shift=5.0)
    with pytest.warns(UserWarning, match=r"only 1 split\(s\) found"):
        res = es.e_divisive(Z, min_size=30, n_changepoints=2)
    assert res.changepoints.tolist() == [50]


def test_other_metrics_use_the_same_search():
    Z = _series(80, 2, [40], np.random.default_rng(3), shift=2.0)
    res = es.e_divisive(Z, min_size=8, n_changepoints=1, metric="gaussian", sigma=2.0)
    D = 2.0 - 2.0 * np.exp(-distances(Z, 2.0) / (2.0 * 2.0 ** 2))
    rq, rt, _ = best_split(Z, 8, D=D)
    assert res.changepoints.tolist() == [rt]
    assert res.statistics[0] == pytest.approx(rq, rel=1e-10)


@pytest.mark.parametrize("k", [-1000, 900])
def test_any_magnitude(k):
    # distances of data near the float range would overflow (or vanish); the search works in
    # units of a power of two and converts back exactly
    Z = _series(90, 2, [45], np.random.default_rng(6), shift=2.0)
    ref = es.e_divisive(Z, min_size=10, n_resamples=19, rng=2)
    res = es.e_divisive(np.ldexp(Z, k), min_size=10, n_resamples=19, rng=2)
    assert res.changepoints.tolist() == ref.changepoints.tolist() == [45]
    np.testing.assert_array_equal(res.statistics, np.ldexp(ref.statistics, k))
    assert res.pvalues.tolist() == ref.pvalues.tolist()


@pytest.mark.parametrize("which", ["best_split", "permuted_maxima"])
def test_kernels_stop_when_cancelled(which):
    import threading

    Z = np.random.default_rng(0).normal(size=(40000, 1))
    if which == "best_split":
        run = lambda: K.best_split(Z, 30, 0, 1.0, 2)  # noqa: E731
    else:
        perms = np.tile(np.arange(40000), (4, 1))
        run = lambda: K.permuted_maxima(Z, perms, np.array([0]), np.array([40000]), 30, 0, 1.0, 2)  # noqa: E731
    timer = threading.Timer(0.05, K.cancel)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="cancelled"):
            run()
    finally:
        timer.join()
        K.reset()
    assert not K.cancelled()
    assert K.best_split(Z[:100], 30, 0, 1.0, 1)[1] >= 30  # runs again after reset


def test_progress_is_shown_per_test():
    import io

    buf = io.StringIO()
    Z = _series(120, 1, [60], np.random.default_rng(2), shift=3.0)
    res = es.e_divisive(Z, min_size=10, n_resamples=19, rng=0, progress=buf)
    for t in range(1, len(res.n_resamples) + 1):
        assert f"test {t}: permutations" in buf.getvalue()


def test_dataframe_columns_are_chosen_and_text_refused():
    Z = _series(80, 2, [40], np.random.default_rng(3), shift=3.0)
    df = pd.DataFrame({"a": Z[:, 0], "b": Z[:, 1], "note": ["x"] * 80})
    res = es.e_divisive(df, columns=["a", "b"], min_size=10, n_changepoints=1)
    ref = es.e_divisive(Z, min_size=10, n_changepoints=1)
    assert res.columns == ["a", "b"] and res.changepoints.tolist() == ref.changepoints.tolist()
    assert list(res.to_frame().columns[-2:]) == ["mean_a", "mean_b"]
    with pytest.raises((TypeError, ValueError), match="note"):
        es.e_divisive(df, min_size=10, n_changepoints=1)


@pytest.mark.parametrize("T,min_size", [(8, 4), (9, 4), (5, 2), (6, 2)])
def test_smallest_segments_match_reference(T, min_size):
    Z = np.random.default_rng(T).normal(size=(T, 2))
    table = np.full((T + 1, T + 1), np.nan)
    q, t, k = K.best_split(Z, min_size, 0, 1.0, 3, table)
    ref = q_table(Z, min_size)
    assert np.count_nonzero(~np.isnan(table)) == len(ref)
    for key, v in ref.items():
        assert table[key] == pytest.approx(v, rel=1e-12, abs=1e-12)
    assert (t, k) == best_split(Z, min_size)[1:]


def test_float32_input_is_widened_exactly():
    Z = _series(90, 2, [45], np.random.default_rng(12), shift=2.0).astype(np.float32)
    a = es.e_divisive(Z, min_size=10, n_resamples=19, rng=4)
    b = es.e_divisive(Z.astype(np.float64), min_size=10, n_resamples=19, rng=4)
    assert a.changepoints.tolist() == b.changepoints.tolist()
    assert a.statistics.tolist() == b.statistics.tolist() and a.pvalues.tolist() == b.pvalues.tolist()
    assert es.e_agglo(Z[:30], member=np.repeat(np.arange(10), 3)).fit == \
        es.e_agglo(Z[:30].astype(np.float64), member=np.repeat(np.arange(10), 3)).fit


# -- serial dependence: the block permutation test --------------------------------------------

def _ar1(rng, T, phi, d=1, burn=100):
    e = rng.normal(size=(T + burn, d))
    x = np.zeros_like(e)
    for t in range(1, T + burn):
        x[t] = phi * x[t - 1] + e[t]
    return x[burn:]


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::energystats.SeriesDependenceWarning")  # ~1 % a series, by design
def test_block_test_holds_its_level_on_ar1_noise():
    """AR(1) noise, phi = 0.5, no change: the permutation test found a change in most series
    (90 % at T = 500 in the audit); the block permutation test holds alpha = 0.05 within a
    binomial band (120 series, R = 99; fixed seeds)."""
    perm = _rejection_rate(lambda rng: _ar1(rng, 300, 0.5), 30, seed=3)
    block = _rejection_rate(lambda rng: _ar1(rng, 300, 0.5), 120, seed=4, resampling="block")
    assert perm > 0.5
    se = np.sqrt(0.05 * 0.95 / 120)
    assert abs(block - 0.05) <= 3 * se, block


def test_block_permutations_keep_blocks_in_order():
    """Within each segment the rows are permuted, and the rows of a block stay adjacent and
    in order: a segment of n rows in blocks of L has at most ceil(n / L) + 1 places where
    row i + 1 does not follow row i."""
    from energystats.changepoint._blocks import draw_block_permutations

    gen = np.random.default_rng(0)
    segments, L = [(0, 23), (23, 50)], 4
    perms = draw_block_permutations(gen, 50, segments, 40, L)
    moved = 0
    for p in perms:
        pos = np.argsort(p)
        for a, b in segments:
            assert sorted(p[a:b]) == list(range(a, b))
            breaks = int(np.sum(pos[a + 1:b] != pos[a:b - 1] + 1))
            assert breaks <= -(-(b - a) // L) + 1
        moved += not np.array_equal(p, np.arange(50))
    assert moved >= 35                                   # the blocks do move


def test_block_length_rule_grows_with_the_dependence():
    from energystats.changepoint._blocks import auto_block_length

    rng = np.random.default_rng(1)
    L = [auto_block_length(_ar1(rng, 2000, phi), [(0, 2000)]) for phi in (0.0, 0.5, 0.9)]
    assert L[0] <= 3 < L[1] < L[2]


def test_block_prefix_property_and_threads():
    rng = np.random.default_rng(2)
    x = np.r_[_ar1(rng, 150, 0.4)[:, 0], 2.0 + _ar1(rng, 150, 0.4)[:, 0]]
    full = es.e_divisive(x, min_size=20, resampling="block", n_resamples=99, rng=7, n_threads=1)
    two = es.e_divisive(x, min_size=20, resampling="block", n_resamples=99, rng=7, n_threads=2)
    assert full.changepoints.tolist() == two.changepoints.tolist()
    assert full.pvalues.tolist() == two.pvalues.tolist() and full.block_sizes == two.block_sizes
    seq = es.e_divisive(x, min_size=20, resampling="block", n_resamples=99, rng=7,
                        pvalue_method="sequential")
    dec = es.e_divisive(x, min_size=20, resampling="block", n_resamples=99, rng=7,
                        pvalue_method="decision")
    assert seq.changepoints.tolist() == full.changepoints.tolist()
    assert dec.changepoints.tolist() == full.changepoints.tolist()
    assert full.resampling == "block" and all(b >= 1 for b in full.block_sizes)
    fixed = es.e_divisive(x, min_size=20, resampling="block", block_size=5, n_resamples=19,
                          rng=7)
    assert set(fixed.block_sizes) == {5}


@pytest.mark.parametrize("c", [2.0 ** 900, 2.0 ** -900, 1e300, 1e-300])
def test_same_answer_at_any_magnitude(c):
    rng = np.random.default_rng(3)
    x = np.r_[rng.normal(size=80), 1.5 + rng.normal(size=80)]
    base = es.e_divisive(x, min_size=20, resampling="block", n_resamples=49, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = es.e_divisive(x * c, min_size=20, resampling="block", n_resamples=49, rng=1)
    assert got.changepoints.tolist() == base.changepoints.tolist()
    assert got.pvalues.tolist() == base.pvalues.tolist()
    assert got.block_sizes == base.block_sizes
    np.testing.assert_allclose(np.asarray(got.statistics) / c, base.statistics, rtol=1e-10)


def test_autocorrelated_residuals_warn_with_the_permutation_test():
    rng = np.random.default_rng(4)
    x = _ar1(rng, 300, 0.7)[:, 0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = es.e_divisive(x, min_size=30, n_resamples=19, rng=0)
    said = [str(w.message) for w in caught if w.category is es.ChangePointWarning]
    assert any("lag-1 autocorrelation of 0." in m and "resampling='block'" in m for m in said)
    assert res.lag1_autocorrelation > 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.ChangePointWarning)   # boundary splits, if any
        res = es.e_divisive(x, min_size=30, n_resamples=19, rng=0, resampling="block")
    assert res.lag1_autocorrelation > 0.5


# -- defaults that do not mislead -------------------------------------------------------------

def test_nile_change_at_the_min_size_boundary_warns():
    """The Nile (1871-1970): min_size=30 returns 1901, the earliest position it allows; the
    accepted change is 1898/1899, found with min_size <= 28."""
    from energystats.datasets import load_nile

    nile = load_nile()
    with pytest.warns(es.ChangePointWarning, match=r"\[1901\] lie at or just beyond min_size = 30"):
        res = es.e_divisive(nile, min_size=30, n_resamples=99, rng=1)
    assert res.changepoint_labels == [1901] and res.at_boundary == (30,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = es.e_divisive(nile, min_size=20, n_resamples=99, rng=1)
    assert res.changepoint_labels == [1899] and res.at_boundary == ()


def test_a_change_just_beyond_min_size_warns_too():
    """A clear shift 32 rows from the start with min_size = 30: the constraint nearly binds
    (within max(2, 5 % of 200) = 10 rows), so it warns; a shift in the middle does not."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    x[:32] += 4.0
    with pytest.warns(es.ChangePointWarning, match=r"\[32\] lie at or just beyond min_size = 30"):
        res = es.e_divisive(x, min_size=30, n_resamples=99, rng=1)
    assert res.at_boundary == (32,)
    y = rng.normal(size=200)
    y[:100] += 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert es.e_divisive(y, min_size=30, n_resamples=99, rng=1).changepoints.tolist() == [100]


def test_small_things_a_first_user_met():
    import pandas as pd

    rng = np.random.default_rng(5)
    s = pd.Series(np.r_[rng.normal(size=40), 3 + rng.normal(size=40)], name="flow",
                  index=pd.date_range("2020-01-01", periods=80, freq="D"))
    assert "mean_flow" in es.e_divisive(s, min_size=10, n_changepoints=1).to_frame()
    with pytest.raises(ValueError, match="rows must be in time order, but the index decreases"):
        es.e_divisive(s.sample(frac=1.0, random_state=0), min_size=10, n_resamples=19)
    with pytest.raises(ValueError, match="`X` is too short: the series has T = 3 row"):
        es.e_divisive([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="`block_size` is for resampling='block'"):
        es.e_divisive(s, min_size=10, block_size=3)
    with pytest.raises(ValueError, match="`resampling` must be 'permutation' or 'block'"):
        es.e_divisive(s, min_size=10, resampling="stationary")


def test_batches_are_small_enough_for_the_bar_to_move():
    from energystats.changepoint._search import _batch_cap

    assert _batch_cap(199, 5000, [(0, 5000)], 2) <= 40     # T = 5000: several batches
    assert _batch_cap(199, 300, [(0, 300)], 2) == 199       # small: one batch


# -- kappa: the fixed-end variant -------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fixed_end_split_against_the_reference(seed):
    """kappa='end': the best split over tau with kappa the segment's end (the definition,
    from every pair summed afresh), in the kernel, the driver and the permuted re-search."""
    from .reference import q_blocks, distances

    rng = np.random.default_rng(seed)
    Z = _series(48, 2, [20], rng)
    D = distances(Z, 1.0)
    ref = max((q_blocks(D, 0, t, 48), -t) for t in range(6, 48 - 6 + 1))
    q, t, k = K.best_split(Z, 6, 0, 1.0, 1, None, 1)
    assert (t, k) == (-ref[1], 48) and q == pytest.approx(ref[0], rel=1e-11)
    res = es.e_divisive(Z, min_size=6, n_changepoints=1, kappa="end")
    assert res.order_found.tolist() == [-ref[1]]
    # an epidemic change (rows 16-29 raised): the searched kappa splits at its start, the
    # fixed end at its end -- the driver must pass kappa on
    E = np.random.default_rng(5).normal(size=(48, 1))
    E[16:30] += 3.0
    DE = distances(E, 1.0)
    want = max((q_blocks(DE, 0, t, 48), -t) for t in range(6, 43))
    end = es.e_divisive(E, min_size=6, n_changepoints=1, kappa="end")
    search = es.e_divisive(E, min_size=6, n_changepoints=1)
    assert end.order_found.tolist() == [-want[1]] != search.order_found.tolist()
    assert end.statistics[0] == pytest.approx(want[0], rel=1e-11)
    perms = _search._draw(np.random.default_rng(1), 48, [(0, 48)], 3)
    got = K.permuted_maxima(Z, perms, np.array([0]), np.array([48]), 6, 0, 1.0, 2, 1)
    for r in range(3):
        Dp = distances(Z[perms[r]], 1.0)
        want = max(q_blocks(Dp, 0, t, 48) for t in range(6, 43))
        assert got[r] == pytest.approx(want, rel=1e-11)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::energystats.SeriesDependenceWarning")  # ~1 % a series, by design
def test_fixed_end_holds_its_level_and_sees_a_change_in_correlation():
    """iid noise: level 0.05 within 3 binomial SE (150 series); a change in correlation only
    (d = 2, rho 0 -> 0.8 at T/2, T = 500): kappa='end' finds it far more often than the
    searched kappa (measured 0.85 against 0.22 over 40 series)."""
    level = _rejection_rate(lambda rng: rng.normal(size=(200, 2)), 150, seed=6, kappa="end")
    assert abs(level - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / 150), level

    def corr_change(rng):
        cov = np.array([[1.0, 0.8], [0.8, 1.0]])
        return np.vstack([rng.normal(size=(250, 2)), rng.multivariate_normal([0, 0], cov, 250)])

    end = _rejection_rate(corr_change, 30, seed=7, kappa="end")
    search = _rejection_rate(corr_change, 30, seed=7)
    assert end >= 0.6 and end > search + 0.3, (end, search)
