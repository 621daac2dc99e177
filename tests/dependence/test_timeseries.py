"""Tests of energystats.dependence.timeseries: the ADCF, the cross-distance correlation and
their tests (statistical level and power: benchmarks/timeseries_level.py)."""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core import _blocks
from energystats.dependence._timeseries import PermutedLags, lag_statistics


# -- plain-NumPy references (double loops) ------------------------------------------

def _dist(Z, exponent=1.0):
    Z = np.asarray(Z, dtype=float).reshape(len(Z), -1)
    n = len(Z)
    D = np.empty((n, n))
    for i in range(n):
        for k in range(n):
            D[i, k] = np.sqrt(np.sum((Z[i] - Z[k]) ** 2)) ** exponent
    return D


def _ref_dcov_terms(a, b, estimator):
    """dCov², dVar²(x), dVar²(y) from two m×m distance matrices, double loops."""
    m = len(a)

    def centre(d):
        C = np.empty((m, m))
        if estimator == "V":
            for i in range(m):
                for k in range(m):
                    C[i, k] = d[i, k] - d[i].mean() - d[:, k].mean() + d.mean()
        else:
            for i in range(m):
                for k in range(m):
                    C[i, k] = 0.0 if i == k else (d[i, k] - d[i].sum() / (m - 2) - d[:, k].sum() / (m - 2)
                                                  + d.sum() / ((m - 1) * (m - 2)))
        return C

    A, B = centre(a), centre(b)
    div = m * m if estimator == "V" else m * (m - 3)
    s = lambda P, Q: sum(P[i, k] * Q[i, k] for i in range(m) for k in range(m)) / div  # noqa: E731
    return s(A, B), s(A, A), s(B, B)


def ref_lag_dcor(x, y, j, estimator="V", exponent=1.0):
    """dCor (V: the root; U: bias-corrected, no root) of x_t and y_{t-j}, pairs built by a loop."""
    n = len(x)
    pairs = [(t, t - j) for t in range(n) if 0 <= t - j < n]
    xs = np.array([np.asarray(x, dtype=float).reshape(n, -1)[t] for t, _ in pairs])
    ys = np.array([np.asarray(y, dtype=float).reshape(n, -1)[s] for _, s in pairs])
    cov, vx, vy = _ref_dcov_terms(_dist(xs, exponent), _dist(ys, exponent), estimator)
    r = cov / np.sqrt(vx * vy)
    return np.sqrt(max(r, 0.0)) if estimator == "V" else r


def _ar1(rng, n, phi):
    z = np.zeros(n)
    e = rng.normal(size=n)
    for t in range(1, n):
        z[t] = phi * z[t - 1] + e[t]
    return z


def _garch(rng, n):
    x, s2 = np.zeros(n), 1.0
    for t in range(1, n):
        s2 = 0.1 + 0.3 * x[t - 1] ** 2 + 0.6 * s2
        x[t] = np.sqrt(s2) * rng.normal()
    return x


class TestAutoDistanceCorrelation:
    @pytest.mark.parametrize("estimator", ["V", "U"])
    @pytest.mark.parametrize("d", [1, 3])
    def test_against_double_loop_reference(self, estimator, d):
        rng = np.random.default_rng(d)
        x = rng.normal(size=(30, d)).squeeze()
        got = es.auto_distance_correlation(x, lags=4, estimator=estimator)
        want = [ref_lag_dcor(x, x, j, estimator) for j in range(1, 5)]
        assert got.index.tolist() == [1, 2, 3, 4]
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, atol=1e-14)

    def test_exponent_and_lag_list(self):
        x = np.random.default_rng(5).normal(size=25)
        got = es.auto_distance_correlation(x, lags=[3, 1], exponent=0.5)
        assert got.index.tolist() == [1, 3]
        np.testing.assert_allclose(got.to_numpy(),
                                   [ref_lag_dcor(x, x, j, exponent=0.5) for j in (1, 3)], rtol=1e-12)

    def test_equals_distance_correlation_of_the_lagged_pairs(self):
        x = np.random.default_rng(6).normal(size=(80, 2))
        got = es.auto_distance_correlation(x, lags=3)
        for j in (1, 2, 3):
            assert got[j] == pytest.approx(es.distance_correlation(x[j:], x[:-j]), rel=1e-12)

    def test_default_lags_and_series_input(self):
        x = pd.Series(np.random.default_rng(7).normal(size=100))
        got = es.auto_distance_correlation(x)
        assert got.index.tolist() == list(range(1, 21))  # floor(10 log10 100)
        assert got.name == "adcf" and got.index.name == "lag"

    def test_sees_garch_where_pearson_does_not(self):
        """GARCH(1,1) is uncorrelated: at n = 2000 its lag-1 Pearson autocorrelation is inside
        the ±2/√n band, while the lag-1 ADCF is above the permutation critical value and the
        test gives the smallest p-value of 19 permutations (the power at n = 200 and 500 is
        measured in benchmarks/timeseries_level.py)."""
        x = _garch(np.random.default_rng(0), 2000)
        assert abs(np.corrcoef(x[1:], x[:-1])[0, 1]) < 2 / np.sqrt(2000)
        res = es.adcf_test(x, lags=1, n_resamples=19, rng=0)
        assert res.pvalue == 0.05 and res.dcor[0] > res.critical_values[0]

    # -- input validation --
    @pytest.mark.parametrize("lags, err, msg", [
        (0, ValueError, r"`lags` must be an integer in \[1, n_samples - 4 = 16\].*got 0"),
        (17, ValueError, r"got 17"),
        ([1, 1], ValueError, "must not repeat"),
        ([0, 1], ValueError, "must be positive"),
        ([1, 2.5], TypeError, "integer or a non-empty sequence"),
        ([], TypeError, "non-empty"),
        ("a", TypeError, "`lags`"),
    ])
    def test_bad_lags(self, lags, err, msg):
        with pytest.raises(err, match=msg):
            es.auto_distance_correlation(np.arange(20.0), lags=lags)

    def test_bad_estimator_and_short_series(self):
        with pytest.raises(ValueError, match="`estimator` must be 'V' or 'U'"):
            es.auto_distance_correlation(np.arange(20.0), estimator="W")
        with pytest.raises(ValueError, match="at least 5 rows.*got 4"):
            es.auto_distance_correlation(np.arange(4.0))
        with pytest.raises(ValueError, match="precomputed"):
            es.auto_distance_correlation(np.arange(20.0), metric="precomputed")
        with pytest.raises(ValueError, match="`x` is constant"):
            es.adcf_test(np.ones(20))
        with pytest.raises(ValueError, match="`y` is constant"):
            es.cross_distance_correlation(np.arange(20.0), np.full((20, 2), 3.0))


class TestCrossDistanceCorrelation:
    @pytest.mark.parametrize("estimator", ["V", "U"])
    def test_against_double_loop_reference(self, estimator):
        rng = np.random.default_rng(11)
        x, y = rng.normal(size=(28, 2)), rng.normal(size=28)
        got = es.cross_distance_correlation(x, y, lags=3, estimator=estimator)
        assert got.index.tolist() == [-3, -2, -1, 0, 1, 2, 3]
        want = [ref_lag_dcor(x, y, j, estimator) for j in range(-3, 4)]
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-12, atol=1e-14)

    def test_lag_direction(self):
        """x_t depends on y_{t-2}: the peak is at lag +2 (x leads by nothing, y by two)."""
        rng = np.random.default_rng(12)
        y = rng.normal(size=300)
        x = np.r_[0.0, 0.0, y[:-2]] + 0.1 * rng.normal(size=300)
        c = es.cross_distance_correlation(x, y, lags=3)
        assert c.idxmax() == 2 and c[2] > 0.9 and c[-2] < 0.3

    def test_against_hyppo_dcorrx(self):
        """hyppo 0.5.2 DcorrX's statistic is Σ_{j=0}^{M} (n − j)/n · R*_n(j), R*_n the
        bias-corrected (U) dCor of x[j:], y[:n−j]: ours with estimator='U'.  hyppo is given the
        distance matrices (compute_distance=None): with its default 'euclidean' its lag terms
        j ≥ 1 are the Dcorr of the Euclidean distances between *rows of the distance
        matrices*, not of the series."""
        hyppo_ts = pytest.importorskip("hyppo.time_series")
        rng = np.random.default_rng(13)
        n = 60
        x, y = rng.normal(size=(n, 2)), rng.normal(size=n)
        y[2:] += 0.5 * x[:-2, 0]
        Dx, Dy = _dist(x), _dist(y)
        stat, opt_lag = hyppo_ts.DcorrX(compute_distance=None, max_lag=3).statistic(Dx, Dy)
        c = es.cross_distance_correlation(x, y, lags=[0, 1, 2, 3], estimator="U")
        assert sum((n - j) / n * c[j] for j in range(4)) == pytest.approx(stat, rel=1e-12)
        assert opt_lag == 2 == c.idxmax()

    # -- input validation --
    def test_bad_input(self):
        x = np.arange(20.0)
        with pytest.raises(ValueError, match="same number of rows.*got 20 and 19"):
            es.cross_distance_correlation(x, x[:-1])
        with pytest.raises(ValueError, match=r"`lags` must be an integer in \[0, n_samples - 4 = 16\]"):
            es.cross_distance_correlation(x, x, lags=-1)
        with pytest.raises(ValueError, match=r"every \|lag\| must be at most n_samples - 4 = 16.*got -17"):
            es.cross_distance_correlation(x, x, lags=[-17, 0])


def test_against_r_energy_dcor_of_the_lagged_pairs():
    """R energy 1.7.11's ``dcor`` of the lagged pairs, computed once with

    Rscript -e 'options(digits=17); n <- 40; t <- 1:n; x <- sin(1.3*t) + cos(0.7*t^2);
      y <- cos(0.9*t) * sin(0.4*t^2); for (j in 1:3) cat(j, energy::dcor(x[(j+1):n], x[1:(n-j)]), "\\n");
      for (j in c(-2,0,2)) { if (j>=0) cat(j, energy::dcor(x[(j+1):n], y[1:(n-j)]), "\\n")
      else cat(j, energy::dcor(x[1:(n+j)], y[(1-j):n]), "\\n") }'

    (R dCovTS, whose ADCF divides by the full-series distance variances, is not installed)."""
    t = np.arange(1, 41, dtype=float)
    x, y = np.sin(1.3 * t) + np.cos(0.7 * t ** 2), np.cos(0.9 * t) * np.sin(0.4 * t ** 2)
    np.testing.assert_allclose(es.auto_distance_correlation(x, lags=3).to_numpy(),
                               [0.21952317310093342, 0.30133833904525992, 0.29320281855938629],
                               rtol=1e-13)
    np.testing.assert_allclose(es.cross_distance_correlation(x, y, lags=[-2, 0, 2]).to_numpy(),
                               [0.20428975994957069, 0.25880225385808514, 0.27415381114387594],
                               rtol=1e-13)


class TestLagEngine:
    """The permutation engine against the direct statistics of the permuted series."""

    def test_auto_engine_equals_direct(self):
        rng = np.random.default_rng(21)
        x = rng.normal(size=(40, 2))
        D = _dist(x)
        lags = [1, 2, 5]
        eng = PermutedLags(D, D, lags, auto=True)
        p = rng.permutation(40)
        stats, dcor = eng(p)
        Dp = _dist(x[p])
        st = lag_statistics(Dp, Dp, lags)
        np.testing.assert_allclose(stats, [(40 - j) * v for j, v in zip(lags, st[0])], rtol=1e-10)
        np.testing.assert_allclose(dcor, np.sqrt(st[3]), rtol=1e-10)
        np.testing.assert_allclose(dcor, [ref_lag_dcor(x[p], x[p], j) for j in lags], rtol=1e-10)

    def test_cross_engine_equals_direct(self):
        rng = np.random.default_rng(22)
        x, y = rng.normal(size=40), rng.normal(size=(40, 2))
        lags = [-3, 0, 2]
        eng = PermutedLags(_dist(x), _dist(y), lags)
        p = rng.permutation(40)
        stats, dcor = eng(p)
        np.testing.assert_allclose(dcor, [ref_lag_dcor(x, y[p], j) for j in lags], rtol=1e-10)
        st = lag_statistics(_dist(x), _dist(y[p]), lags)
        np.testing.assert_allclose(stats, [(40 - abs(j)) * v for j, v in zip(lags, st[0])], rtol=1e-10)


class TestADCFTest:
    def test_result_fields_and_frame(self):
        x = np.random.default_rng(31).normal(size=60)
        res = es.adcf_test(x, lags=3, n_resamples=49, rng=4)
        assert 0 < res.pvalue <= 1 and res.seed == 4 and res.n_resamples == 49
        assert res.null_distribution.shape == (49,)
        assert res.statistic == pytest.approx(float(res.lag_statistics @ res.weights))
        np.testing.assert_allclose(res.dcor, es.auto_distance_correlation(x, lags=3), rtol=1e-14)
        f = res.to_frame()
        assert f.index.tolist() == [1, 2, 3]
        assert f.columns.tolist() == ["adcf", "statistic", "pvalue", "critical_value", "weight"]
        assert "ADCFTestResult(statistic=" in repr(res) and "lags=1..3" in repr(res)
        assert "seed=4" in repr(res)
        again = es.adcf_test(x, lags=3, n_resamples=49, rng=4)
        np.testing.assert_array_equal(again.null_distribution, res.null_distribution)
        fresh = es.adcf_test(x, lags=3, n_resamples=9)          # rng=None: a seed drawn, recorded
        replay = es.adcf_test(x, lags=3, n_resamples=9, rng=fresh.seed)
        np.testing.assert_array_equal(replay.null_distribution, fresh.null_distribution)

    def test_permuted_values_are_those_of_permuted_series(self):
        """Q* is the portmanteau of x in the drawn order: rng's permutations replayed."""
        x = np.random.default_rng(32).normal(size=30)
        res = es.adcf_test(x, lags=2, n_resamples=3, kernel="bartlett", rng=9)
        gen = np.random.default_rng(9)
        for r in range(3):
            xp = x[gen.permutation(30)]
            q = sum((1 - j / 3) ** 2 * (30 - j) * _ref_dcov_terms(_dist(xp[j:]), _dist(xp[:-j]), "V")[0]
                    for j in (1, 2))
            assert res.null_distribution[r] == pytest.approx(q, rel=1e-9)

    def test_power_smoke_ar(self):
        rng = np.random.default_rng(33)
        assert es.adcf_test(_ar1(rng, 200, 0.5), lags=3, n_resamples=99, rng=0).pvalue <= 0.02

    def test_plot(self):
        mpl = pytest.importorskip("matplotlib")
        mpl.use("Agg")
        import matplotlib.pyplot as plt

        res = es.adcf_test(np.random.default_rng(34).normal(size=50), lags=4, n_resamples=19, rng=0)
        ax = res.plot()
        assert ax.get_xlabel() == "lag" and "portmanteau" in ax.get_title()
        np.testing.assert_allclose(ax.lines[1].get_ydata(), res.critical_values)
        plt.close("all")

    def test_plot_without_matplotlib(self, monkeypatch):
        res = es.adcf_test(np.arange(30.0) % 7, lags=2, n_resamples=9, rng=0)
        monkeypatch.setitem(sys.modules, "matplotlib", None)
        monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
        with pytest.raises(ImportError, match=r"`plot` needs matplotlib \(pip install matplotlib\)"):
            res.plot()

    # -- input validation --
    @pytest.mark.parametrize("kw, msg", [
        ({"n_resamples": 0}, "n_resamples"),
        ({"kernel": "parzen"}, r"`kernel` must be one of \('truncated', 'bartlett'\); got 'parzen'"),
        ({"alpha": 1.5}, r"`alpha` must be a number in \(0, 1\); got 1.5"),
        ({"lags": 40}, r"got 40"),
    ])
    def test_bad_arguments(self, kw, msg):
        with pytest.raises((ValueError, TypeError), match=msg):
            es.adcf_test(np.arange(30.0), **kw)


class TestCrossDistanceCorrelationTest:
    def test_result_fields(self):
        rng = np.random.default_rng(41)
        x, y = _ar1(rng, 120, 0.5), _ar1(rng, 120, 0.5)
        res = es.cross_distance_correlation_test(x, y, lags=1, n_resamples=29, rng=3)
        assert res.resampling == "block" and res.block_length > 1 and res.seed == 3
        assert res.to_frame().index.tolist() == [-1, 0, 1]
        assert res.to_frame().columns[0] == "cross_dcor"
        assert "resampling='block'" in repr(res) and "lags=-1..1" in repr(res)
        np.testing.assert_allclose(res.dcor, es.cross_distance_correlation(x, y, lags=1), rtol=1e-14)
        rows = es.cross_distance_correlation_test(x, y, lags=1, n_resamples=29, rng=3,
                                                  resampling="permutation")
        assert rows.block_length == 1 and rows.statistic == res.statistic
        fixed = es.cross_distance_correlation_test(x, y, lags=[0], n_resamples=9, rng=3, block_length=7)
        assert fixed.block_length == 7 and fixed.lags == [0]

    def test_block_resamples_keep_blocks(self):
        """The block resamples are Kirch's block permutations of y (draw replayed)."""
        rng = np.random.default_rng(42)
        x, y = rng.normal(size=40), rng.normal(size=40)
        res = es.cross_distance_correlation_test(x, y, lags=[0], n_resamples=4, rng=5, block_length=6)
        perms = _blocks.draw_block_permutations(np.random.default_rng(5), 40, [(0, 40)], 4, 6)
        for r in range(4):
            yp = y[perms[r]]
            cov = _ref_dcov_terms(_dist(x), _dist(yp), "V")[0]
            assert res.null_distribution[r] == pytest.approx(40 * cov, rel=1e-9)

    def test_detects_dependence(self):
        rng = np.random.default_rng(43)
        y = _ar1(rng, 200, 0.5)
        x = np.r_[0.0, y[:-1] ** 2] + rng.normal(size=200)
        assert es.cross_distance_correlation_test(x, y, lags=2, n_resamples=99, rng=0).pvalue <= 0.02

    def test_plot(self):
        mpl = pytest.importorskip("matplotlib")
        mpl.use("Agg")
        import matplotlib.pyplot as plt

        rng = np.random.default_rng(44)
        res = es.cross_distance_correlation_test(rng.normal(size=50), rng.normal(size=50), lags=2,
                                                 n_resamples=19, rng=0)
        ax = res.plot()
        assert "block" in ax.get_title()
        plt.close("all")

    # -- input validation --
    @pytest.mark.parametrize("kw, msg", [
        ({"resampling": "bootstrap"}, r"`resampling` must be 'block' or 'permutation'; got 'bootstrap'"),
        ({"block_length": 0}, r"`block_length` must be an integer in \[1, n_samples // 2 = 15\]; got 0"),
        ({"block_length": 3, "resampling": "permutation"}, "applies to resampling='block'"),
        ({"n_resamples": -1}, "n_resamples"),
    ])
    def test_bad_arguments(self, kw, msg):
        with pytest.raises((ValueError, TypeError), match=msg):
            es.cross_distance_correlation_test(np.arange(30.0), np.arange(30.0) ** 2, **kw)


class TestCoreBlocks:
    def test_politis_white_grows_with_dependence(self):
        rng = np.random.default_rng(51)
        b = [_blocks.politis_white(_ar1(rng, 2000, phi)) for phi in (0.0, 0.5, 0.9)]
        assert b[0] < b[1] < b[2]
        assert _blocks.politis_white(np.ones(50)) == 1.0

    def test_block_length_cap_and_squares(self):
        rng = np.random.default_rng(52)
        E = np.column_stack([rng.normal(size=500), _ar1(rng, 500, 0.9)])
        assert _blocks.block_length(E, 2.0, 3.0, 10) == 10
        g = _garch(rng, 2000)[:, None]
        assert _blocks.block_length(g, 2.0, 3.0, 500) > _blocks.block_length(g, 2.0, 0.0, 500)
