"""e_cp3o: the windowed statistic against plain double loops over the rows, the exact search
against an enumeration of every segmentation, ecp's programme against a plain-Python copy of its
recursion, ecp's choice of the number, conventions, scale, threads and bad input."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._lib import _changepoint as kernel
from energystats.changepoint.e_cp3o import ecp_number, window_sums


def _rho(Z, alpha):
    return lambda a, b: float(np.sqrt(np.sum((Z[a] - Z[b]) ** 2)) ** alpha)


def ref_stat(Z, delta, alpha, u, s, t):
    """Ê(u, s, t) from the rows, by loops: left segment u+1 … s, right s+1 … t."""
    rho = _rho(Z, alpha)
    P = delta * (delta - 1) / 2
    wl = sum(rho(i, j) for i in range(s - delta + 1, s + 1) for j in range(i + 1, s + 1))
    wr = sum(rho(i, j) for i in range(s + 1, s + delta + 1) for j in range(i + 1, s + delta + 1))
    bt = sum(rho(i, j) for i in range(s - delta + 1, s + 1) for j in range(s + 1, s + delta + 1))
    cl = sum(rho(i - 1, i) for i in range(u + 2, s - delta + 2))
    cr = sum(rho(i - 1, i) for i in range(s + delta + 1, t + 1))
    left = (wl + cl) / (P + s - u - delta)
    right = (wr + cr) / (P + t - s - delta)
    return (2 * bt / delta ** 2 - left - right) * (s - u) * (t - s) / (t - u) ** 2


def ref_gof(Z, delta, alpha, bounds):
    b = [-1, *bounds, len(Z) - 1]
    return sum(ref_stat(Z, delta, alpha, b[i - 1], b[i], b[i + 1]) for i in range(1, len(b) - 1))


def brute_force(Z, delta, alpha, k):
    """The maximum of G over every segmentation with k changes (segments ≥ δ+1 rows), the
    smallest boundaries (lexicographically) among ties."""
    T = len(Z)
    best, arg = -np.inf, None
    for taus in itertools.combinations(range(delta, T - delta - 1), k):
        b = [-1, *taus, T - 1]
        if any(b[i + 1] - b[i] < delta + 1 for i in range(len(b) - 1)):
            continue
        g = ref_gof(Z, delta, alpha, taus)
        if arg is None or g > best + 1e-12 * max(1.0, abs(best)):
            best, arg = g, taus
    return best, arg


def ref_ecp_programme(Z, delta, alpha, K):
    """ecp's recursion in plain Python: F[0][t] = max_s E(-1, s, t), F[k][t] = max_s
    F[k-1][s] + E(A[k-1][s], s, t); segments ≥ δ+1 rows; the first s among ties."""
    T = len(Z)
    F = [[-np.inf] * T for _ in range(K)]
    A = [[-1] * T for _ in range(K)]
    for k in range(K):
        for t in range(T):
            for s in range(delta, t - delta):
                if k == 0:
                    val = ref_stat(Z, delta, alpha, -1, s, t)
                elif F[k - 1][s] == -np.inf:
                    continue
                else:
                    val = F[k - 1][s] + ref_stat(Z, delta, alpha, A[k - 1][s], s, t)
                if val > F[k][t]:
                    F[k][t], A[k][t] = val, s
    paths = []
    for k in range(K):
        s, out = A[k][T - 1], []
        out.append(s)
        for kk in range(k - 1, -1, -1):
            s = A[kk][s]
            out.append(s)
        paths.append([c + 1 for c in out[::-1]])
    return [F[k][T - 1] for k in range(K)], paths


def _series(rng, T, d=1, jumps=()):
    Z = rng.normal(size=(T, d))
    for at, size in jumps:
        Z[at:] += size
    return Z


@pytest.mark.parametrize("alpha,d", [(1.0, 1), (0.5, 3), (1.5, 2)])
def test_statistic_equals_double_loops(alpha, d):
    rng = np.random.default_rng(11)
    T, delta = 40, 4
    Z = _series(rng, T, d)
    d1, wl, wr, bt = window_sums(Z, delta, alpha)
    for u, s, t in [(-1, 4, 9), (-1, 10, 39), (5, 12, 30), (3, 20, 39), (-1, 34, 39),
                    (10, 15, 25), (0, 5, 39)]:
        got = kernel.cp3o_statistic(d1, wl, wr, bt, delta, u, s, t)
        assert got == pytest.approx(ref_stat(Z, delta, alpha, u, s, t), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("seed", range(6))
def test_exact_search_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    Z = _series(rng, 26, 1, [(9, rng.normal() * 2), (18, rng.normal() * 2)])
    for k in (1, 2, 3):
        best, arg = brute_force(Z, 3, 1.0, k)
        res = es.e_cp3o(Z, n_changepoints=k, delta=3, search="exact")
        assert res.gof[k - 1] == pytest.approx(best, rel=1e-12)
        assert (res.changepoints - 1).tolist() == list(arg)
        assert res.chosen_by == "fixed" and res.n_changepoints == k


@pytest.mark.parametrize("seed", range(3))
def test_ecp_programme_equals_its_plain_recursion(seed):
    rng = np.random.default_rng(100 + seed)
    Z = _series(rng, 30, 2, [(10, 1.5), (20, -1.5)])
    gof, paths = ref_ecp_programme(Z, 3, 1.0, 3)
    res = es.e_cp3o(Z, max_changepoints=3, delta=3)
    np.testing.assert_allclose(res.gof, gof, rtol=1e-12)
    assert [p.tolist() for p in res.path_changepoints] == paths


def test_one_change_is_exact_in_both_searches():
    # with one change point, ecp's programme is the exact maximum over s
    rng = np.random.default_rng(5)
    Z = _series(rng, 60, 1, [(25, 1.0)])
    best, arg = brute_force(Z, 5, 1.0, 1)
    for search in ("ecp", "exact"):
        res = es.e_cp3o(Z, n_changepoints=1, delta=5, search=search)
        assert res.changepoints.tolist() == [arg[0] + 1]
        assert res.gof[0] == pytest.approx(best, rel=1e-12)


def test_ecp_never_beats_exact_and_finds_clear_changes():
    rng = np.random.default_rng(8)
    Z = _series(rng, 300, 2, [(100, 4.0), (200, -4.0)])
    ecp = es.e_cp3o(Z, max_changepoints=4, delta=10)
    ex = es.e_cp3o(Z, max_changepoints=4, delta=10, search="exact")
    assert np.all(ecp.gof <= ex.gof * (1 + 1e-12))
    assert ecp.changepoints.tolist() == ex.changepoints.tolist() == [100, 200]
    assert ecp.n_changepoints == 2 and ecp.chosen_by == "ecp rule"


def test_ecp_rule_by_hand():
    # f = (1, 1, 0.1): mean 0.7, sample SD 0.5196…, threshold 0.9598: two leading increases
    assert ecp_number([1.0, 2.0, 3.0, 3.1]) == 3
    # f = (1, 0.2, 0.9): threshold 0.7 + 0.5·0.4359 = 0.918; one leading increase
    assert ecp_number([0.0, 1.0, 1.2, 2.1]) == 2
    # f = (1, 0.85, 0): the sample SD (0.539) puts the threshold at 0.886, above 0.85; the
    # population SD (0.440) would put it at 0.837 and count two
    assert ecp_number([0.0, 1.0, 1.85, 1.85]) == 2
    assert ecp_number([0.5]) == 1
    assert ecp_number([0.5, 0.4]) == 2             # one increase is its own threshold (as ecp)
    assert ecp_number([3.0, 2.0, 1.0, 0.0]) == 4   # equal increases (SD 0): each is the threshold


def test_changepoints_are_first_rows_and_frames():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.normal(0, 1, 120), rng.normal(5, 1, 120)])
    s = pd.Series(x, index=pd.date_range("2026-01-01", periods=240, freq="D"))
    res = es.e_cp3o(s, n_changepoints=1, delta=10)
    assert res.changepoints.tolist() == [120]
    assert res.changepoint_labels == [pd.Timestamp("2026-05-01")]
    fr = res.to_frame()
    assert fr["start"].tolist() == [0, 120] and fr["end"].tolist() == [120, 240]
    path = res.path_frame()
    assert path["n_changepoints"].tolist() == [1] and path["changepoints"].iloc[0] == [120]
    assert np.bincount(res.labels).tolist() == [120, 120]
    assert "ECp3oResult(changepoints=[120]" in repr(res)


def test_scale_threads_and_layouts():
    rng = np.random.default_rng(4)
    Z = _series(rng, 400, 3, [(150, 1.0), (300, -1.0)])
    base = es.e_cp3o(Z, max_changepoints=4, delta=15)
    for k in (-900, 900):
        r = es.e_cp3o(Z * 2.0 ** k, max_changepoints=4, delta=15)
        assert r.changepoints.tolist() == base.changepoints.tolist()
        np.testing.assert_allclose(r.gof, base.gof * 2.0 ** k, rtol=1e-12)
    one = es.e_cp3o(Z, max_changepoints=4, delta=15, n_threads=1)
    two = es.e_cp3o(Z, max_changepoints=4, delta=15, n_threads=2)
    assert np.array_equal(one.gof, two.gof) and one.changepoints.tolist() == two.changepoints.tolist()
    for Zv in (np.asfortranarray(Z), Z.astype(np.float32), np.repeat(Z, 2, axis=0)[::2]):
        r = es.e_cp3o(Zv, max_changepoints=4, delta=15)
        assert r.changepoints.tolist() == base.changepoints.tolist()


def test_far_outlier_costs_no_digits_later():
    # a 1e15 outlier early: the within means of later segments come from running sums in
    # double-double, so the statistic far from it still equals the loops
    rng = np.random.default_rng(6)
    Z = _series(rng, 60, 1)
    Z[2, 0] = 1e15
    d1, wl, wr, bt = window_sums(Z, 4, 1.0)
    got = kernel.cp3o_statistic(d1, wl, wr, bt, 4, 30, 40, 59)
    assert got == pytest.approx(ref_stat(Z, 4, 1.0, 30, 40, 59), rel=1e-12)


def test_constant_series_warns():
    with pytest.warns(es.ChangePointWarning, match="constant"):
        res = es.e_cp3o(np.ones(40), n_changepoints=1, delta=3)
    assert res.changepoints.size == 1


@pytest.mark.parametrize("kwargs,match", [
    (dict(delta=1), "`delta` must be an integer in \\[2, "),
    (dict(delta=2.5), "`delta` must be an integer"),
    (dict(delta=True), "`delta` must be an integer"),
    (dict(delta=30), "`delta` must be an integer in \\[2, 29\\]"),
    (dict(n_changepoints=0), "`n_changepoints` must be an integer in \\[1, 5\\]"),
    (dict(n_changepoints=6), "`n_changepoints` must be an integer in \\[1, 5\\]"),
    (dict(max_changepoints=0), "`max_changepoints` must be an integer in \\[1, 5\\]"),
    (dict(search="pelt"), "`search` must be 'ecp' or 'exact'"),
    (dict(exponent=2.0), "`exponent` must be a number in \\(0, 2\\)"),
])
def test_bad_arguments_are_named(kwargs, match):
    x = np.random.default_rng(0).normal(size=60)
    kw = dict(delta=9)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=match):
        es.e_cp3o(x, **kw)


def test_bad_data_is_named():
    with pytest.raises(ValueError, match="at least 2·\\(delta\\+1\\) = 6 rows"):
        es.e_cp3o(np.arange(5.0), delta=2)
    with pytest.raises(ValueError, match="`delta` must be an integer in \\[2, 28\\].*T = 59"):
        es.e_cp3o(np.arange(59.0))
    x = np.random.default_rng(0).normal(size=80)
    x[5] = np.nan
    with pytest.raises(ValueError, match="X"):
        es.e_cp3o(x, delta=5)
    with pytest.raises(ValueError, match="at most 1000 rows"):
        es.e_cp3o(np.random.default_rng(0).normal(size=1001), search="exact")
    s = pd.Series(np.arange(80.0), index=pd.date_range("2026-01-01", periods=80)[::-1])
    with pytest.raises(ValueError):
        es.e_cp3o(s, delta=5)


def test_no_warning_on_a_plain_call():
    x = np.random.default_rng(1).normal(size=200)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        es.e_cp3o(x)
