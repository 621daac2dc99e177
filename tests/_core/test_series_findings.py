"""The time-series diagnostics (issue 50): a unit root, long memory and seasonality, each
against an independent computation and on the design it names, silent on independent rows,
and wired into e_divisive (block) and cross_distance_correlation_test."""
import math
import warnings

import numpy as np
import pytest

import energystats as es
from energystats._core import _serial


def _ar1(rng, n, phi):
    e = rng.normal(size=n + 200)
    x = np.zeros_like(e)
    for t in range(1, e.size):
        x[t] = phi * x[t - 1] + e[t]
    return x[200:]


def _arfima(rng, n, d, K=2000):
    psi = np.ones(K)
    for k in range(1, K):
        psi[k] = psi[k - 1] * (k - 1 + d) / k
    return np.convolve(rng.normal(size=n + K), psi, mode="full")[K:K + n]


def _sar(rng, n, s, phi=0.6):
    e = rng.normal(size=n + 10 * s)
    x = np.zeros_like(e)
    for t in range(s, e.size):
        x[t] = phi * x[t - s] + e[t]
    return x[10 * s:]


def test_adf_t_equals_the_normal_equations():
    """The ADF t statistic against the regression written out by hand (normal equations in
    the series' own units; the code scales to the largest deviation first)."""
    rng = np.random.default_rng(0)
    x = 5.0 + _ar1(rng, 150, 0.7)
    n, p = x.size, int((x.size - 1) ** (1 / 3))
    dx = np.diff(x)
    rows = [[1.0, x[t]] + [dx[t - j] for j in range(1, p + 1)] for t in range(p, n - 1)]
    A, y = np.array(rows), dx[p:]
    G = A.T @ A
    beta = np.linalg.solve(G, A.T @ y)
    r = y - A @ beta
    s2 = r @ r / (len(y) - A.shape[1])
    want = beta[1] / math.sqrt(s2 * np.linalg.inv(G)[1, 1])
    assert _serial.adf_t(x) == pytest.approx(want, rel=1e-9)


def _yule_walker_aic(c, pmax=2):
    """AR(p) residuals of the centred c, p <= pmax by AIC, the Yule-Walker equations solved
    as a plain linear system (autocovariances summed directly)."""
    n = c.size
    acov = np.array([c[:n - k] @ c[k:] / n for k in range(pmax + 1)])
    best = (n * np.log(acov[0]), np.zeros(0))
    for p in range(1, pmax + 1):
        R = np.array([[acov[abs(i - j)] for j in range(p)] for i in range(p)])
        a = np.linalg.solve(R, acov[1:p + 1])
        aic = n * np.log(acov[0] - a @ acov[1:p + 1]) + 2 * p
        if aic < best[0]:
            best = (aic, a)
    a = best[1]
    p = a.size
    return np.array([c[t] - sum(a[j] * c[t - 1 - j] for j in range(p)) for t in range(p, n)])


def test_local_whittle_minimises_its_objective():
    """d-hat against a grid search of Robinson's objective written out (prewhitened by the
    AIC-chosen AR(p <= 2), m = floor(n^0.65) frequencies, a plain DFT)."""
    rng = np.random.default_rng(1)
    x = _arfima(rng, 600, 0.3)
    c = (x - x.mean()) / np.max(np.abs(x - x.mean()))
    e = _yule_walker_aic(c)
    n = e.size
    m = int(n ** 0.65)
    lam = 2 * np.pi * np.arange(1, m + 1) / n
    I = np.abs(np.array([np.sum((e - e.mean()) * np.exp(-1j * lam_k * np.arange(n)))
                         for lam_k in lam])) ** 2
    grid = np.linspace(-0.49, 0.99, 14801)
    obj = [np.log(np.mean(lam ** (2 * d) * I)) - 2 * d * np.mean(np.log(lam)) for d in grid]
    d, se = _serial.local_whittle_d(x)
    assert d == pytest.approx(grid[int(np.argmin(obj))], abs=2e-4)
    assert se == pytest.approx(1 / (2 * math.sqrt(m)))


def test_an_ar1_seen_through_noise_is_not_long_memory():
    """AR(1) 0.8 plus as much white noise (an ARMA(1,1)): prewhitening by AR(1) alone called it
    long memory in 45-72 % of series; AR(p <= 2) by AIC in at most 3 of 40 here."""
    hits = 0
    for s in range(40):
        g = np.random.default_rng(200 + s)
        y = _ar1(g, 300, 0.8) + g.normal(size=300)
        hits += "long memory" in {k for k, _ in _serial.series_findings(y, ["y"])[0]}
    assert hits <= 3, hits


@pytest.mark.parametrize("make,kind", [
    (lambda g: np.cumsum(g.normal(size=300)), "unit root"),
    (lambda g: _arfima(g, 2000, 0.4), "long memory"),
    (lambda g: _sar(g, 480, 12), "seasonal"),
])
def test_each_design_is_named(make, kind):
    """Each diagnostic fires on its design in at least 9 of 10 series (fixed seeds)."""
    hits = sum(kind in {k for k, _ in _serial.series_findings(make(np.random.default_rng(s)),
                                                             ["x"])[0]}
               for s in range(10))
    assert hits >= 9, (kind, hits)


@pytest.mark.parametrize("make", [lambda g: g.normal(size=500), lambda g: g.standard_t(3, size=500),
                                  lambda g: _ar1(g, 500, 0.8)])
def test_silent_on_independent_and_short_memory_series(make):
    """iid normal, t(3) and AR(1) 0.8: at most 2 of 40 series with a finding (the benchmark
    measures 0-4 % on 100 series a cell)."""
    hits = sum(bool(_serial.series_findings(make(np.random.default_rng(100 + s)), ["x"])[0])
               for s in range(40))
    assert hits <= 2, hits


def test_short_series_says_so():
    found, fig = _serial.series_findings(np.arange(30.0), ["x"])
    assert [k for k, _ in found] == ["too short"] and "at least 50" in found[0][1]


def test_seasonal_peak_needs_more_than_the_lag1_decay():
    """An AR(1)'s autocorrelations decay from lag 1: no seasonal lag; a seasonal AR's lag 12."""
    g = np.random.default_rng(3)
    assert _serial.seasonal_peak(_ar1(g, 600, 0.9)) is None
    assert _serial.seasonal_peak(_sar(g, 600, 12))[0] == 12


def test_cross_test_on_random_walks_is_marked_invalid():
    g = np.random.default_rng(4)
    x, y = np.cumsum(g.normal(size=200)), np.cumsum(g.normal(size=200))
    with pytest.warns(es.SeriesDependenceWarning, match="unit root not rejected"):
        res = es.cross_distance_correlation_test(x, y, n_resamples=99, rng=1)
    assert res.valid is False and "unit root" in res.validity
    assert any("integrated" in c for c in res.series_checks)
    assert "valid=False" in repr(res)


def test_cross_test_on_stationary_series_is_valid_and_silent():
    g = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = es.cross_distance_correlation_test(_ar1(g, 300, 0.5), _ar1(g, 300, 0.5),
                                                 n_resamples=99, rng=1)
    assert res.valid and res.validity == "" and res.series_checks == ()


def test_e_divisive_names_a_random_walk_and_a_seasonal_series():
    g = np.random.default_rng(6)
    with pytest.warns(es.SeriesDependenceWarning, match="integrated"):
        res = es.e_divisive(np.cumsum(g.normal(size=300)), resampling="block", n_resamples=49,
                            rng=1)
    assert any("unit root" in c for c in res.series_checks)
    with pytest.warns(es.SeriesDependenceWarning, match="lag 12"):
        es.e_divisive(_sar(g, 480, 12), resampling="block", n_resamples=49, rng=1)


def test_a_mean_shift_is_not_a_unit_root():
    """A large shift in the mean of independent rows keeps a Dickey-Fuller test from
    rejecting, but the segments' residuals are not persistent: no unit-root finding."""
    g = np.random.default_rng(7)
    x = g.normal(size=300)
    x[150:] += 6.0
    assert _serial.adf_t(x) > -40          # (the raw t is far less negative than iid's)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = es.e_divisive(x, resampling="block", n_resamples=49, rng=1)
    assert res.changepoints.tolist() == [150] and res.series_checks == ()


def test_a_block_longer_than_a_quarter_warns():
    g = np.random.default_rng(8)
    x = g.normal(size=200)
    with pytest.warns(es.SeriesDependenceWarning, match="longer than T/4"):
        res = es.e_divisive(x, resampling="block", block_size=80, n_resamples=49, rng=1)
    assert any("T/4" in c for c in res.series_checks)
    with pytest.warns(es.SeriesDependenceWarning, match="longer than n/4"):
        es.cross_distance_correlation_test(x, g.normal(size=200), block_length=60,
                                           n_resamples=49, rng=1)


def test_the_cross_test_at_the_edge_of_float64():
    """Values near 1e307: the mean of a column overflowed before it was scaled (the block rule
    and the diagnostics); now the answer is the one at scale 1."""
    g = np.random.default_rng(0)
    x, y = g.uniform(1, 1.7, 100), g.normal(size=100)
    a = es.cross_distance_correlation_test(x, y, lags=1, n_resamples=19, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = es.cross_distance_correlation_test(x * 1e307, y, lags=1, n_resamples=19, rng=1)
    assert (a.pvalue, a.block_length, a.valid) == (b.pvalue, b.block_length, b.valid)
    assert _serial.adf_t(x * 1e307) == pytest.approx(_serial.adf_t(x), rel=1e-9)


def test_one_persistent_column_does_not_make_another_integrated():
    """Column 0 an AR(1) 0.8, column 1 iid with a shift of 6: the shift is found and column 1
    is not called integrated because column 0 is persistent."""
    g = np.random.default_rng(0)
    a = _ar1(g, 240, 0.8)
    b = g.normal(size=240)
    b[120:] += 6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = es.e_divisive(np.column_stack([a, b]), rng=0, n_resamples=99, resampling="block")
    assert 120 in res.changepoints.tolist() and res.series_checks == ()


def test_adf_lag_order_is_the_integer_cube_root():
    """n - 1 = 64: four lagged differences (a float cube root gives 3.999...)."""
    x = np.random.default_rng(1).normal(size=65)
    n, p = 65, 4
    dx = np.diff(x)
    A = np.column_stack([np.ones(n - 1 - p), x[p:n - 1]] + [dx[p - j:n - 1 - j] for j in range(1, p + 1)])
    y = dx[p:]
    beta, *_ = np.linalg.lstsq(A, y, rcond=None)
    r = y - A @ beta
    cov = (r @ r / (len(y) - A.shape[1])) * np.linalg.inv(A.T @ A)
    assert _serial.adf_t(x) == pytest.approx(beta[1] / math.sqrt(cov[1, 1]), rel=1e-9)


# -- the KPSS confirmation of a unit root -----------------------------------------------------

def _kpss_reference(x):
    """KPSS η by loops: partial sums of the demeaned series over n² times the Bartlett long-run
    variance with ⌊4 (n/100)^{1/4}⌋ lags."""
    x = np.asarray(x, float)
    n = len(x)
    e = x - sum(x) / n
    S, acc = 0.0, 0.0
    for t in range(n):
        S += e[t]
        acc += S * S
    lags = int(4 * (n / 100) ** 0.25)
    s2 = sum(e[t] * e[t] for t in range(n)) / n
    for j in range(1, lags + 1):
        s2 += 2 * (1 - j / (lags + 1)) * sum(e[t] * e[t - j] for t in range(j, n)) / n
    return acc / (n * n * s2)


def test_kpss_equals_its_definition_and_is_scale_free():
    g = np.random.default_rng(3)
    for x in (g.normal(size=150), np.cumsum(g.normal(size=90)), g.standard_t(3, size=400)):
        assert _serial.kpss_eta(x) == pytest.approx(_kpss_reference(x), rel=1e-9)
        assert _serial.kpss_eta(x * 2.0 ** 900) == pytest.approx(_serial.kpss_eta(x), rel=1e-9)
    assert _serial.kpss_eta(np.ones(60)) == 0.0


def _ar(g, n, phi):
    e = g.normal(size=n + 200)
    x = np.zeros(n + 200)
    for t in range(1, n + 200):
        x[t] = phi * x[t - 1] + e[t]
    return x[200:]


def test_a_unit_root_needs_both_tests():
    # a stationary AR(1), phi = 0.5, 80 rows, where Dickey-Fuller does not reject (t = -2.42)
    # but KPSS does not reject stationarity either (eta = 0.17): no unit root
    x = _ar(np.random.default_rng(9), 80, 0.5)
    assert _serial.adf_t(x) > _serial.ADF_CRITICAL and _serial.kpss_eta(x) < _serial.KPSS_CRITICAL
    assert not [f for f in _serial.series_findings(x, ["x"])[0] if f[0] == "unit root"]
    # a random walk of 200 rows: both agree, and the sentence gives both figures
    w = np.cumsum(np.random.default_rng(1).normal(size=200))
    found = [t for k, t in _serial.series_findings(w, ["w"])[0] if k == "unit root"]
    assert found and "Dickey-Fuller t = -0.89" in found[0] and "KPSS eta = 3.87" in found[0]
