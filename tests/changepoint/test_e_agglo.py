"""E-Agglo: ecp's definitions against a plain-loop reference and sktime's EAgglo, the default
penalty (no saturation), magnitudes, short series, the 'u-statistic' variant, bad input."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es

from .reference import distances, e_agglo as u_reference, s_hat

#: the annual flow of the Nile at Aswan, 1871-1970 (10^8 m^3), 100 values: R's datasets::Nile
#: (Cobb 1978; Balke 1993), as statsmodels ships it (sm.datasets.nile).  Public domain.  The
#: accepted answer is one change, before 1899 (the Aswan dam): position 28.
NILE = np.array([
    1120, 1160, 963, 1210, 1160, 1160, 813, 1230, 1370, 1140, 995, 935, 1110, 994, 1020, 960,
    1180, 799, 958, 1140, 1100, 1210, 1150, 1250, 1260, 1220, 1030, 1100, 774, 840, 874, 694,
    940, 833, 701, 916, 692, 1020, 1050, 969, 831, 726, 456, 824, 702, 1120, 1100, 832, 764,
    821, 768, 845, 864, 862, 698, 845, 744, 796, 1040, 759, 781, 865, 845, 944, 984, 897, 822,
    1010, 771, 676, 649, 846, 812, 742, 801, 1040, 860, 874, 848, 890, 744, 749, 838, 1050, 918,
    986, 797, 923, 975, 815, 1020, 906, 901, 1170, 912, 746, 919, 718, 714, 740], dtype=float)


def _series(T, d, changes, seed, shift=2.0):
    Z = np.random.default_rng(seed).normal(size=(T, d))
    for c in changes:
        Z[c:] += shift
    return Z


def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


# -- an independent reference of ecp's e.agglo, from its definitions (plain loops) ---------

def ecp_reference(Z, bounds, alpha=1.0):
    """ecp 3.1's e.agglo as its definitions read, one merge at a time, plain Python loops.

    Clusters are kept in cyclic order (the last is the left neighbour of the first).  The
    distance between two initial segments is 2/(n m) Σ ρ(x, y) − 1/n² Σ_A ρ − 1/m² Σ_B ρ (both
    sums over ordered pairs, the diagonal included, ρ = ‖x − y‖^α); after merging A and B,
    the distance to any C is ((n_A + n_C) D(A,C) + (n_B + n_C) D(B,C) − n_C D(A,B)) / (n_A +
    n_B + n_C).  The goodness of fit is Σ_c [D(c, left(c)) + D(c, right(c))].  Each step
    merges a cluster with its right neighbour where the fit after the merge,
    fit − 2[D(A,B) + D(A,left(A)) + D(B,right(B))] + 2 D(A∪B, left(A)) + 2 D(A∪B, right(B)),
    is largest (ties: the smallest cluster number, new clusters numbered on in creation
    order).  Returns [(fit, set of cluster starts)] from the initial segmentation to one
    cluster."""
    Z = np.asarray(Z, float).reshape(len(Z), -1)
    R = distances(Z, alpha)
    bounds = list(bounds)
    segs = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]
    N = len(segs)
    size = {c: b - a for c, (a, b) in enumerate(segs)}
    start = {c: a for c, (a, b) in enumerate(segs)}
    within = {c: sum(R[i, j] for i in range(a, b) for j in range(a, b)) / (b - a) ** 2
              for c, (a, b) in enumerate(segs)}
    D = {}
    for c1, (a1, b1) in enumerate(segs):
        for c2, (a2, b2) in enumerate(segs):
            if c1 != c2:
                between = sum(R[i, j] for i in range(a1, b1) for j in range(a2, b2))
                D[c1, c2] = 2.0 * between / ((b1 - a1) * (b2 - a2)) - within[c1] - within[c2]
            else:
                D[c1, c2] = 0.0
    ring = list(range(N))                 # cluster numbers in cyclic order

    def dist(a, b):
        return D[a, b]

    fit = 0.0
    for p, c in enumerate(ring):
        fit = fit + dist(c, ring[p - 1]) + dist(c, ring[(p + 1) % N])
    path = [(fit, {start[c] for c in ring})]
    new = N
    while len(ring) > 1:
        k = len(ring)
        best = None
        for p in sorted(range(k), key=lambda q: ring[q]):        # by cluster number
            a, b = ring[p], ring[(p + 1) % k]
            left, right = ring[p - 1], ring[(p + 2) % k]
            na, nb = size[a], size[b]
            g = fit - 2.0 * (dist(a, b) + dist(a, left) + dist(b, right))
            nl = size[left]
            g = g + 2.0 * (((na + nl) * dist(a, left) + (nb + nl) * dist(b, left)
                            - nl * dist(a, b)) / (na + nb + nl))
            nr = size[right]
            g = g + 2.0 * (((na + nr) * dist(a, right) + (nb + nr) * dist(b, right)
                            - nr * dist(a, b)) / (na + nb + nr))
            if best is None or g > best[0]:
                best = (g, p)
        g, p = best
        a, b = ring[p], ring[(p + 1) % k]
        for c in ring:
            if c not in (a, b):
                n = size[a] + size[b] + size[c]
                v = ((n - size[b]) * dist(a, c) + (n - size[a]) * dist(b, c)
                     - size[c] * dist(a, b)) / n
                D[new, c] = D[c, new] = v
        D[new, new] = 0.0
        size[new] = size[a] + size[b]
        start[new] = start[a]
        ring[p] = new
        ring.remove(b)
        fit = g
        path.append((fit, {start[c] for c in ring}))
        new += 1
    return path


def ref_changepoints(starts, T):
    """Change points of a row of the reference: the starts other than 0 (none for one
    cluster, where ecp would list the start of a wrapped cluster)."""
    return [] if len(starts) == 1 else sorted(s for s in starts if s != 0)


class TestEAgglo:

    # -- ecp's definitions ------------------------------------------------------------------

    @pytest.mark.parametrize("d", [1, 3])
    @pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
    @pytest.mark.parametrize("start", ["rows", "blocks", "uneven"])
    def test_against_reference_ecp(self, d, alpha, start):
        T = 30
        Z = _series(T, d, [10, 20], seed=d + int(10 * alpha), shift=1.5)
        bounds = {"rows": list(range(T + 1)), "blocks": list(range(0, T + 1, 3)),
                  "uneven": [0, 2, 3, 7, 12, 13, 19, 24, 26, 30]}[start]
        member = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
        res = _quiet(es.e_agglo, Z, member=member, exponent=alpha, penalty=0)
        path = ecp_reference(Z, bounds, alpha)
        np.testing.assert_allclose(res.path["fit"], [f for f, _ in path], rtol=1e-10, atol=1e-10)
        assert ([list(map(int, c)) for c in res.path_changepoints]
                == [ref_changepoints(s, T) for _, s in path])
        first = int(np.argmax([f for f, _ in path]))                 # R's which.max: the first
        assert res.changepoints.tolist() == ref_changepoints(path[first][1], T)
        assert res.fit == pytest.approx(path[first][0], rel=1e-10)

    def test_first_and_last_segments_are_neighbours(self):
        # A B A: ecp merges the last segment with the first (cyclic neighbours), so the best
        # segmentation has two clusters, the first and last rows in the same one
        Z = np.r_[np.zeros(30), np.full(30, 5.0), np.zeros(30)] + \
            np.random.default_rng(3).normal(0, 0.5, 90)
        res = es.e_agglo(Z, member=np.arange(90) // 5)
        assert res.changepoints.tolist() == [30, 60]
        assert res.labels[0] == res.labels[-1] == 0 and set(res.labels[30:60]) == {1}
        assert res.path["wrapped"].iloc[-2]                        # the two-cluster row
        assert res.to_frame()["length"].tolist() == [30, 30, 30]

    @pytest.mark.parametrize("seed", range(6))
    def test_against_sktime(self, seed):
        # sktime's EAgglo ports ecp's e.agglo (sktime/detection/eagglo.py, "source code based
        # on cran/ecp R/e_agglomerative.R"); its `penalty` is added to the fit
        skt = pytest.importorskip("sktime")
        try:
            from sktime.detection.eagglo import EAgglo
        except ImportError:  # older releases
            from sktime.annotation.eagglo import EAgglo
        rng = np.random.default_rng(seed)
        T = int(rng.integers(20, 70))
        d = 1 + seed % 2
        Z = rng.normal(size=(T, d))
        Z[T // 3:] += rng.uniform(0.5, 3)
        alpha = [0.5, 1.0, 1.5][seed % 3]
        if seed % 2:
            cuts = np.sort(rng.choice(np.arange(1, T), size=12, replace=False))
            member = np.repeat(np.arange(13), np.diff(np.r_[0, cuts, T]))
        else:
            member = None
        ours = _quiet(es.e_agglo, Z, member=member, exponent=alpha, penalty=0)
        theirs = EAgglo(member=member, alpha=alpha).fit(pd.DataFrame(Z))
        np.testing.assert_allclose(ours.path["fit"], theirs.gof_, rtol=1e-10, atol=1e-10,
                                   err_msg=f"sktime {skt.__version__}")
        rows = [sorted(int(v) for v in row if v == v) for row in theirs.progression]
        assert ([list(map(int, c)) for c in ours.path_changepoints[:-1]]
                == [[v for v in r if 0 < v < T] for r in rows[:-1]])
        est = [int(v) for v in theirs._estimates if 0 < v < T]
        assert ours.changepoints.tolist() == est
        # a penalty per change point: subtracted here, added (negative) there
        lam = float(np.ptp(theirs.gof_)) / max(T // 4, 1)
        pen = EAgglo(member=member, alpha=alpha,
                     penalty=lambda x: -lam * sum(1 for v in x if 0 < v < T)).fit(pd.DataFrame(Z))
        ours = _quiet(es.e_agglo, Z, member=member, exponent=alpha, penalty=lam)
        assert ours.changepoints.tolist() == [int(v) for v in pen._estimates if 0 < v < T]

    # -- the default penalty ----------------------------------------------------------------

    def test_nile_default_finds_the_dam(self):
        res = es.e_agglo(NILE)
        assert res.changepoints.tolist() == [28]                    # 1899; 75 before
        lam = 4 * np.mean(distances(NILE[:, None])[np.triu_indices(100, 1)]) \
            * (1 + 2 * math.log(100))
        assert res.penalty == pytest.approx(lam, rel=1e-12)
        assert res.penalised_fit == pytest.approx(res.fit - lam, rel=1e-12)
        # ecp's own default (no penalty) is near-saturated: the first maximum of the fit
        zero = es.e_agglo(NILE, penalty=0)
        path = zero.path["fit"].to_numpy()
        assert zero.changepoints.size == zero.path["n_changepoints"].iloc[int(np.argmax(path))]
        assert zero.changepoints.size > 40

    def test_default_does_not_saturate_on_three_changes(self):
        # T = 5000 from one segment per row: 3751 change points before (penalty None)
        rng = np.random.default_rng(2016)
        x = rng.normal(size=5000)
        for c, s in ((1250, 1.5), (2500, -1.5), (3750, 1.5)):
            x[c:] += s
        res = es.e_agglo(x)
        assert len(res.changepoints) == 3
        assert np.all(np.abs(res.changepoints - [1250, 2500, 3750]) <= 10)

    @pytest.mark.parametrize("seed", range(4))
    def test_default_finds_nothing_in_noise(self, seed):
        x = np.random.default_rng(seed).normal(size=(300, 2))
        assert es.e_agglo(x).changepoints.tolist() == []
        assert es.e_agglo(x, member=np.arange(300) // 10).changepoints.tolist() == []

    def test_constant_series_has_no_change_point(self):
        # every fit is 0 and so is the default penalty: the tie went to the first row (all
        # 29 boundaries)
        assert es.e_agglo(np.full(30, 2.5)).changepoints.tolist() == []
        assert es.e_agglo(np.full(30, 2.5), penalty=0).changepoints.size == 29   # ecp: which.max

    def test_default_penalty_of_blocks(self):
        # 4 m h (1 + 2 log T): h the mean of 1/size over the initial segments
        Z = _series(60, 2, [30], seed=5)
        bounds = [0, 4, 10, 20, 30, 33, 45, 60]
        member = np.repeat(np.arange(7), np.diff(bounds))
        res = es.e_agglo(Z, member=member)
        m = np.mean(distances(Z)[np.triu_indices(60, 1)])
        h = np.mean(1.0 / np.diff(bounds))
        assert res.penalty == pytest.approx(4 * m * h * (1 + 2 * math.log(60)), rel=1e-12)
        pf = res.path["fit"] - res.penalty * res.path["n_changepoints"]
        np.testing.assert_allclose(res.path["penalised_fit"], pf, rtol=1e-12, atol=1e-9)
        assert res.changepoints.tolist() == [30]

    def test_penalty_reduces_the_number_of_changes_monotonically(self):
        Z = _series(60, 2, [15, 30, 45], seed=7, shift=1.0)
        member = np.repeat(np.arange(20), 3)
        counts = []
        for lam in [0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 1e6]:
            res = es.e_agglo(Z, member=member, penalty=lam)
            fits = res.path["fit"].to_numpy() - lam * res.path["n_changepoints"].to_numpy()
            first = int(np.flatnonzero(fits == fits.max())[0])
            assert res.changepoints.tolist() == list(res.path_changepoints[first]), lam
            counts.append(res.changepoints.size)
        assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1] == 0

    def test_callable_penalty_and_index(self):
        idx = pd.date_range("2026-03-01", periods=30, freq="h")
        s = pd.Series(_series(30, 1, [15], seed=3, shift=4.0)[:, 0], index=idx)
        res = es.e_agglo(s, member=np.repeat(np.arange(10), 3),
                         penalty=lambda cps: 10.0 * len(cps))
        assert res.changepoints.tolist() == [15]
        assert res.changepoint_labels == [idx[15]]
        assert res.to_frame()["length"].tolist() == [15, 15]
        assert callable(res.penalty)

    def test_cyclic_neighbours_can_add_a_boundary_near_an_end(self):
        # one change at 15: ecp's path never holds the segmentation [15] alone; its two-
        # cluster row puts the last block with the first (a boundary at 27), which the
        # linear 'u-statistic' definition cannot do
        s = _series(30, 1, [15], seed=2, shift=4.0)[:, 0]
        member = np.repeat(np.arange(10), 3)
        res = es.e_agglo(s, member=member, penalty=lambda cps: 10.0 * len(cps))
        assert res.changepoints.tolist() == [15, 27]
        assert res.labels.tolist() == [0] * 15 + [1] * 12 + [0] * 3
        assert [15] not in [list(c) for c in res.path_changepoints]
        lin = es.e_agglo(s, member=member, definition="u-statistic")
        assert lin.changepoints.tolist() == [15]

    @pytest.mark.slow
    def test_guide_table(self):
        # the table of docs/guide/changepoint.rst ("The default penalty"): change points from
        # one segment per row / blocks of 10 rows; a count where there are more than 4
        for name, (X, _), want in _guide_cases():
            X = np.asarray(X, float)
            for b, row in zip((1, 10), want):
                member = None if b == 1 else np.arange(len(X)) // b
                ecp = es.e_agglo(X, member=member)
                u = es.e_agglo(X, member=member, definition="u-statistic")
                # no penalty: the last maximum of the fit ('u-statistic'), the first ('ecp')
                fu, fe = u.path["fit"].to_numpy(), ecp.path["fit"].to_numpy()
                got = [u.path_changepoints[int(np.flatnonzero(fu == fu.max())[-1])],
                       ecp.path_changepoints[int(np.argmax(fe))], ecp.changepoints, u.changepoints]
                got = [c.tolist() if c.size <= 4 else c.size for c in got]
                assert got == row, (name, b)

    # -- working units --------------------------------------------------------------------

    @pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
    @pytest.mark.parametrize("definition", ["ecp", "u-statistic"])
    def test_magnitudes(self, alpha, definition):
        # ×1e-300 and ×2**-900 returned [] where ×1 returned [40]; ×1e300 and ×2**900 raised
        # IndexError
        x = np.r_[np.random.default_rng(0).normal(0, 1, 40), np.random.default_rng(1).normal(4, 1, 40)]
        member = np.arange(80) // 5
        base = es.e_agglo(x, member=member, exponent=alpha, definition=definition)
        assert base.changepoints.tolist() == [40]
        for k in (900, -900):
            got = es.e_agglo(x * 2.0**k, member=member, exponent=alpha, definition=definition)
            assert got.changepoints.tolist() == [40], k
            np.testing.assert_array_equal(got.path["n_changepoints"], base.path["n_changepoints"])
            with np.errstate(over="ignore"):                  # 2**1350: inf, as reported
                want = np.ldexp(base.path["fit"].to_numpy(), int(k * alpha))
            np.testing.assert_allclose(got.path["fit"], want, rtol=1e-12)
        for c in (1e300, 1e-300):
            got = es.e_agglo(x * c, member=member, exponent=alpha, definition=definition)
            assert got.changepoints.tolist() == [40], c
            assert [list(p) for p in got.path_changepoints] == \
                [list(p) for p in base.path_changepoints]

    def test_magnitudes_with_a_given_penalty(self):
        # a number is in the units of the fit: scaled with it, the answer is the same
        x = np.r_[np.zeros(20), np.ones(20)] + np.random.default_rng(4).normal(0, 0.3, 40)
        member = np.arange(40) // 4
        lam = 3.0
        base = es.e_agglo(x, member=member, penalty=lam)
        for k in (900, -900):
            got = es.e_agglo(x * 2.0**k, member=member, penalty=lam * 2.0**k)
            assert got.changepoints.tolist() == base.changepoints.tolist()
            assert got.penalised_fit == pytest.approx(base.penalised_fit * 2.0**k, rel=1e-12)

    # -- short series -----------------------------------------------------------------------

    def test_short_series_warn(self):
        # 3 rows returned 2 change points without a word
        x = np.array([0.3, -0.2, 0.1])
        with pytest.warns(UserWarning, match=r"T = 3 rows.*below 20"):
            res = es.e_agglo(x)
        assert res.changepoints.tolist() == []
        with pytest.warns(UserWarning, match=r"T = 3 rows"):
            assert es.e_agglo(x, penalty=0).changepoints.tolist() == [1, 2]   # ecp's answer
        with pytest.warns(UserWarning, match=r"T = 12 rows"):
            es.e_agglo(np.arange(12.0), penalty=0)

    @pytest.mark.parametrize("X,member", [(np.array([1.0]), None), (np.arange(6.0), [0] * 6)])
    def test_one_segment_is_refused(self, X, member):
        with pytest.raises(ValueError, match=r"at least 2 initial segments"):
            es.e_agglo(X, member=member)

    # -- the 'u-statistic' definition (this package's before ecp's) -------------------------

    @pytest.mark.parametrize("d", [1, 3])
    @pytest.mark.parametrize("alpha", [0.5, 1.0, 1.5])
    def test_u_statistic_matches_reference_from_blocks(self, d, alpha):
        Z = _series(48, d, [16, 32], seed=d, shift=1.5)
        member = np.repeat(np.arange(12), 4)
        res = es.e_agglo(Z, member=member, exponent=alpha, definition="u-statistic", penalty=0)
        path, best = u_reference(Z, list(range(0, 49, 4)), alpha)
        assert [list(map(int, c)) for c in res.path_changepoints] == [b[1:-1] for b, _ in path]
        np.testing.assert_allclose(res.path["fit"], [s for _, s in path], rtol=1e-10, atol=1e-10)
        assert res.changepoints.tolist() == best[1:-1]
        assert res.fit == pytest.approx(s_hat(distances(Z, alpha), best), rel=1e-10)
        assert not res.path["wrapped"].any()

    def test_u_statistic_singletons_and_penalty(self):
        Z = _series(18, 2, [9], seed=4, shift=3.0)
        res = _quiet(es.e_agglo, Z, definition="u-statistic", penalty=0.5)
        path, best = u_reference(Z, list(range(19)), penalty=0.5)
        assert [list(map(int, c)) for c in res.path_changepoints] == [b[1:-1] for b, _ in path]
        assert res.changepoints.tolist() == best[1:-1]
        assert res.path["n_changepoints"].tolist() == list(range(17, -1, -1))
        # its default penalty: 2 m log T (the within averages are unbiased: no null mean)
        auto = _quiet(es.e_agglo, Z, definition="u-statistic")
        m = np.mean(distances(Z)[np.triu_indices(18, 1)])
        assert auto.penalty == pytest.approx(2 * m * math.log(18), rel=1e-12)

    # -- input validation ---------------------------------------------------------------------

    @pytest.mark.parametrize("kwargs,match", [
        ({"member": [0, 0, 1, 1, 0, 0]}, r"`member` must give each segment as one contiguous run"),
        ({"member": [0, 1]}, r"member"),
        ({"penalty": -1.0}, r"`penalty` must be 'auto', None, a non-negative number.*got -1.0"),
        ({"penalty": "bic"}, r"`penalty` must be 'auto'.*got 'bic'"),
        ({"penalty": lambda c: float("nan")}, r"`penalty` must return a finite number"),
        ({"exponent": 0.0}, r"`exponent` must be a number in \(0, 2\)"),
        ({"definition": "paper"}, r"`definition` must be 'ecp' or 'u-statistic'; got 'paper'"),
    ])
    def test_bad_input(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            _quiet(es.e_agglo, np.arange(6.0), **kwargs)

    def test_nan_is_refused(self):
        with pytest.raises(ValueError, match=r"`X` contains NaN"):
            es.e_agglo(np.array([1.0, np.nan, 2.0]))

    def test_one_segment_per_row_holds_one_matrix(self):
        # the block sums of one-row segments are the distance matrix itself: the peak was three
        # T×T matrices (D, a reduceat copy, M) while the memory check counted two
        import tracemalloc

        x = np.random.default_rng(0).normal(size=(600, 1))
        es.e_agglo(x[:40])  # imports and caches outside the measurement
        tracemalloc.start()
        try:
            es.e_agglo(x)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1.8 * 8 * 600 * 600, peak


    def test_coarse_segments_hold_no_series_matrix(self):
        # from coarser initial segments only their k×k block sums are kept (streamed): the
        # T×T matrix (72 MB here) is never formed; the path is the reference's
        import tracemalloc

        T, k = 3000, 30
        x = _series(T, 2, [1000, 2000], seed=4)
        member = np.repeat(np.arange(k), T // k)
        es.e_agglo(x[:60], member=np.repeat([0, 1], 30))  # imports and caches outside the measurement
        tracemalloc.start()
        try:
            res = es.e_agglo(x, member=member)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 0.05 * 8 * T * T, peak
        assert res.changepoints.tolist() == [1000, 2000]
        path = ecp_reference(x[::10], list(range(0, T // 10 + 1, 10)))   # the same shape, smaller
        small = es.e_agglo(x[::10], member=member[::10])
        np.testing.assert_allclose(small.path["fit"], [f for f, _ in path], rtol=1e-10, atol=1e-10)


# -- the series of the guide's table ------------------------------------------------------

def _guide_cases():
    """(name, (X, true change points), [row from one segment per row, row from blocks of 10]),
    each row: [earlier default ('u-statistic', no penalty), ecp (penalty 0), the default,
    'u-statistic' with its default penalty]."""
    rng = np.random.default_rng(1)                          # the guide's df and burst y
    df = np.vstack([rng.normal(0, 1, (100, 2)), rng.normal([1.5, 0], 1, (100, 2)),
                    rng.normal(0, 3, (100, 2))])
    y = np.r_[rng.normal(0, 1, 120), rng.normal(4, 1, 12), rng.normal(0, 1, 120)]
    g = np.random.default_rng(2014)                         # docs/scripts/fig_changepoint.py
    mu = np.full(3, 1.5)
    gallery = np.vstack([g.normal(size=(200, 3)), mu + g.normal(size=(200, 3)),
                         mu + 2.0 * g.normal(size=(200, 3)),
                         g.multivariate_normal(mu, 4.0 * (0.1 * np.eye(3) + 0.9), 200)])
    p = np.random.default_rng(2016)                         # bench_changepoint.py: peers, mv
    peers = p.normal(size=2000)
    for i, c in enumerate((500, 1000, 1500)):
        peers[c:] += 1.5 if i % 2 == 0 else -1.5
    m = np.random.default_rng(2014)
    mv = m.normal(size=(5000, 3))
    mv[1250:, 0] += 1.5
    mv[2500:3750, 1] *= 2.5
    L = np.linalg.cholesky(np.full((3, 3), 0.9) + 0.1 * np.eye(3))
    mv[3750:] = m.normal(size=(1250, 3)) @ L.T
    mv[3750:, 0] += 1.5
    noise = np.random.default_rng(99).normal(size=500)
    return [
        ("df", (df, [100, 200]), [[284, 270, [92, 200], [92]],
                                  [[100, 200], [100, 200], [200], [100, 200]]]),
        ("burst", (y, [120, 132]), [[125, 125, [120, 132], [120, 132]],
                                    [[30, 120, 130], 7, [120, 130], [120, 130]]]),
        ("gallery", (gallery, [200, 400, 600]), [[741, 696, [199, 798], [204]],
                                                 [15, [200], [200], [200]]]),
        ("peers", (peers, [500, 1000, 1500]),
         [[1515, 1382, [501, 1003, 1505], [501, 1003, 1505]],
          [[500, 1000, 1500], [500, 1000, 1500], [500, 1000, 1500], [500, 1000, 1500]]]),
        ("mv", (mv, [1250, 2500, 3750]), [[4700, 4359, [1248, 4980], [1246]],
                                          [[1250, 3620], [1250], [1250], [1250]]]),
        ("noise", (noise, []), [[366, 347, [], []], [21, 38, [], []]]),
        ("Nile", (NILE, [28]), [[75, 57, [28], [26]], [[30], [30], [30], [30]]]),
    ]
