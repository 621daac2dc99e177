"""independence_test(method='projection'): the projected distance covariance (Huang and Huo
2017) against plain double loops on the same directions, its permutation and gamma
calibrations, and its refusals."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core._serial import SeriesDependenceWarning


def _c(d):
    """c_d = √π Γ((d+1)/2) / Γ(d/2), written out again."""
    return math.sqrt(math.pi) * math.gamma((d + 1) / 2) / math.gamma(d / 2)


def _centred(v):
    a = np.abs(v[:, None] - v[None, :])
    return a - a.mean(0)[None, :] - a.mean(1)[:, None] + a.mean()


def _nvsq(a, b):
    """n · dCov²_V of two 1-D samples, double loops over the centred matrices."""
    n = a.size
    return float((_centred(a) * _centred(b)).sum()) / n


def _unit(gen, K, d):
    if d == 1:
        return np.ones((K, 1))
    U = gen.standard_normal((K, d))
    return U / np.linalg.norm(U, axis=1, keepdims=True)


def _reference(x, y, seed, K, R):
    """The statistic and its permutations as the docstring describes them: K directions for x,
    then K for y, then one seed per permutation, all from ``default_rng(seed)``."""
    gen = np.random.default_rng(seed)
    p, q = x.shape[1], y.shape[1]
    U, V = _unit(gen, K, p), _unit(gen, K, q)
    seeds = gen.integers(0, 2**63 - 1, size=R, dtype=np.int64)
    perms = [np.random.default_rng(int(s)).permutation(x.shape[0]) for s in seeds]
    c = _c(p) * _c(q) / K
    A = [x @ U[k] for k in range(K)]
    B = [y @ V[k] for k in range(K)]
    obs = c * sum(_nvsq(A[k], B[k]) for k in range(K))
    null = np.array([c * sum(_nvsq(A[k], B[k][pi]) for k in range(K)) for pi in perms])
    return obs, null, A, B


@pytest.fixture
def pair():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40, 3))
    y = np.column_stack([x[:, 0] ** 2 + rng.normal(size=40), rng.normal(size=40)])
    return x, y


def test_statistic_and_null_equal_double_loops(pair):
    x, y = pair
    res = es.independence_test(x, y, method="projection", n_projections=7, n_resamples=29, rng=5,
                               pvalue_method="full")
    obs, null, _, _ = _reference(x, y, 5, 7, 29)
    assert res.statistic == pytest.approx(obs, rel=1e-12)
    np.testing.assert_allclose(res.null_distribution, null, rtol=1e-11)
    assert res.pvalue == (1 + np.sum(null >= obs * (1 - 1e-12))) / 30
    assert res.n_projections == 7 and res.n_resamples == 29 and res.seed == 5
    assert res.estimates is None and res.pvalue_method == "full"


def test_mean_over_directions_is_the_full_statistic(pair):
    """Averaged over many directions the estimate is n·dCov²_n of the data (unbiased given them)."""
    x, y = pair
    exact = es.distance_stats(x, y).test_statistic
    vals = [es.independence_test(x, y, method="projection", n_projections=50, n_resamples=1,
                                 rng=s).statistic for s in range(40)]
    se = np.std(vals, ddof=1) / math.sqrt(len(vals))
    assert abs(np.mean(vals) - exact) < 3 * se + 1e-12
    assert se < 0.05 * exact


@pytest.mark.filterwarnings("ignore::energystats._core._permutation.AntiConservativeWarning")
def test_gamma_moments_equal_their_formulas(pair):
    """The gamma's mean is the permutation mean Σ_k tr A_k tr B_k / (n − 1) (times c_p c_q / (Kn));
    its variance 2 (c_p c_q / (Kn))² / n² · (Σ_k ΣA_k² ΣB_k² + K(K−1) ā_off b̄_off)."""
    x, y = pair
    K, n = 6, x.shape[0]
    res = es.independence_test(x, y, method="projection", n_projections=K, rng=2,
                               pvalue_method="gamma")
    obs, _, A, B = _reference(x, y, 2, K, 0)
    CA, CB = [_centred(a) for a in A], [_centred(b) for b in B]
    c = _c(3) * _c(2) / (K * n)
    mean = c * sum(np.trace(CA[k]) * np.trace(CB[k]) / (n - 1) for k in range(K))
    diag = sum((CA[k] ** 2).sum() * (CB[k] ** 2).sum() for k in range(K))
    ox = np.mean([(CA[k - 1] * CA[k]).sum() for k in range(1, K)])
    oy = np.mean([(CB[k - 1] * CB[k]).sum() for k in range(1, K)])
    var = 2 * c**2 * (diag + K * (K - 1) * ox * oy) / n**2
    shape, scale = res.gamma_parameters
    assert shape * scale == pytest.approx(mean, rel=1e-10)
    assert shape * scale**2 == pytest.approx(var, rel=1e-10)
    from scipy import stats
    assert res.statistic == pytest.approx(obs, rel=1e-12)
    assert res.pvalue == pytest.approx(stats.gamma.sf(obs, shape, scale=scale), rel=1e-9)
    assert res.n_resamples == 0 and res.null_distribution.size == 0 and res.pvalue_se is None


def test_gamma_mean_is_the_permutation_mean():
    """The permutation distribution's mean (many permutations) matches the gamma's to its SE."""
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=(60, 2)), rng.normal(size=(60, 2))
    full = es.independence_test(x, y, method="projection", n_projections=5, n_resamples=2000, rng=4,
                               pvalue_method="full")
    gam = es.independence_test(x, y, method="projection", n_projections=5, rng=4,
                               pvalue_method="gamma")
    shape, scale = gam.gamma_parameters
    null = full.null_distribution
    assert abs(null.mean() - shape * scale) < 4 * null.std() / math.sqrt(null.size)
    assert null.var() == pytest.approx(shape * scale**2, rel=0.25)   # the large-n variance


def test_one_dimensional_is_the_exact_statistic():
    rng = np.random.default_rng(1)
    x = rng.normal(size=50)
    y = x + rng.normal(size=50)
    res = es.independence_test(x, y, method="projection", n_resamples=9, rng=0)
    assert res.n_projections == 1
    assert res.statistic == pytest.approx(es.distance_stats(x, y).test_statistic, rel=1e-13)


@pytest.mark.filterwarnings("ignore::energystats._core._permutation.AntiConservativeWarning")
def test_scale_threads_and_seed(pair):
    x, y = pair
    base = es.independence_test(x, y, method="projection", n_projections=5, n_resamples=19, rng=3,
                                pvalue_method="full")
    big = es.independence_test(x * 2.0**900, y * 2.0**-900, method="projection", n_projections=5,
                               n_resamples=19, rng=3, pvalue_method="full")
    assert big.statistic == pytest.approx(base.statistic, rel=1e-12)
    assert big.pvalue == base.pvalue
    one = es.independence_test(x, y, method="projection", n_projections=5, n_resamples=19, rng=3,
                               n_threads=1, pvalue_method="full")
    assert one.statistic == base.statistic
    np.testing.assert_array_equal(one.null_distribution, base.null_distribution)
    huge = es.independence_test(x * 1e300, y, method="projection", n_projections=5, rng=3,
                                pvalue_method="gamma")
    ref = es.independence_test(x, y, method="projection", n_projections=5, rng=3,
                               pvalue_method="gamma")
    assert huge.statistic == pytest.approx(ref.statistic * 1e300, rel=1e-12)
    assert huge.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


@pytest.mark.filterwarnings("ignore::energystats._core._permutation.AntiConservativeWarning")
def test_frame_and_repr(pair):
    x, y = pair
    res = es.independence_test(pd.DataFrame(x, columns=list("abc")), pd.DataFrame(y, columns=["u", "v"]),
                               method="projection", n_projections=3, rng=0, pvalue_method="gamma")
    assert res.columns_x == list("abc") and res.columns_y == ["u", "v"]
    row = res.to_frame().iloc[0]
    assert row["n_projections"] == 3 and row["pvalue_method"] == "gamma"
    assert "n_projections=3" in repr(res)


def test_time_indexed_series_warn():
    rng = np.random.default_rng(0)
    e = rng.normal(size=(2, 300))
    x, y = np.zeros(300), np.zeros(300)
    for t in range(1, 300):
        x[t] = 0.8 * x[t - 1] + e[0, t]
        y[t] = 0.8 * y[t - 1] + e[1, t]
    idx = pd.date_range("2020-01-01", periods=300, freq="D")
    with pytest.warns(SeriesDependenceWarning):
        es.independence_test(pd.Series(x, index=idx), pd.Series(y, index=idx), method="projection",
                             rng=0, pvalue_method="gamma")


@pytest.mark.parametrize("kwargs, match", [
    ({"n_projections": 0}, "n_projections"),
    ({"n_projections": 2.5}, "n_projections"),
    ({"n_projections": True}, "n_projections"),
    ({"exponent": 0.5}, "exponent=1"),
    ({"metric": "cityblock"}, "metric='energy'"),
    ({"statistic": "dcor"}, "statistic='dcor'"),
    ({"strata": np.repeat([0, 1], 20)}, "strata"),
    ({"perm_blocks": np.repeat(np.arange(20), 2)}, "perm_blocks"),
    ({"exact": True}, "exact=True"),
    ({"pvalue_method": "sequential"}, "pvalue_method"),
    ({"n_resamples": 0, "pvalue_method": "full"}, "n_resamples=0"),
])
def test_refusals(pair, kwargs, match):
    x, y = pair
    with pytest.raises(ValueError, match=match):
        es.independence_test(x, y, method="projection", **kwargs)


def test_bad_method_and_constant(pair):
    x, y = pair
    with pytest.raises(ValueError, match="`method`"):
        es.independence_test(x, y, method="projections")
    with pytest.raises(ValueError, match="`y` is constant"):
        es.independence_test(x, np.ones(40), method="projection", pvalue_method="gamma")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        es.independence_test(x[:4], y[:4], method="projection", n_resamples=5, rng=0,
                             pvalue_method="full")
    with pytest.raises(ValueError, match="at least 4"):
        es.independence_test(x[:3], y[:3], method="projection", n_resamples=5, rng=0)


def test_gamma_warns_on_heavy_tails():
    """The gamma p-value warns where it was measured liberal (heavy-tailed projections) and not
    on normal data; the permutation p-value does not need the warning."""
    from energystats import AntiConservativeWarning
    from energystats.dependence._projection import _excess_kurtosis

    rng = np.random.default_rng(0)
    v = rng.normal(size=10**5)
    assert abs(_excess_kurtosis(v - v.mean())) < 0.1
    e = rng.exponential(size=10**5)
    assert _excess_kurtosis(e - e.mean()) == pytest.approx(6.0, abs=0.6)
    x, y = rng.standard_t(3, size=(500, 5)), rng.lognormal(size=(500, 3))
    with pytest.warns(AntiConservativeWarning, match="kurtosis"):
        es.independence_test(x, y, method="projection", pvalue_method="gamma", rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        es.independence_test(rng.normal(size=(500, 5)), rng.normal(size=(500, 3)),
                             method="projection", pvalue_method="gamma", rng=0)
        es.independence_test(x[:100], y[:100], method="projection", n_projections=3,
                             n_resamples=9, rng=0)


@pytest.mark.parametrize("method", ["full", "gamma"])
def test_the_command_lines_progress_counts_the_directions(method):
    # independence_test has no `progress` argument: the ambient setting (the CLI's) shows a bar
    import io

    from energystats._core import _progress

    g = np.random.default_rng(5)
    x, y = g.normal(size=(80, 3)), g.normal(size=(80, 2))
    kw = dict(method="projection", n_projections=9, n_resamples=19, rng=2, pvalue_method=method)
    buf = io.StringIO()
    with _progress.ambient(buf):
        res = es.independence_test(x, y, **kw)
    quiet = es.independence_test(x, y, **kw)
    assert (res.statistic, res.pvalue) == (quiet.statistic, quiet.pvalue)
    # a run shorter than the log interval leaves no line on a non-terminal ambient stream;
    # so count on a bar forced open through the same call path
    bars = []
    real = _progress.progress_bar

    def spy(total, progress, desc="permutations", unit="perm", **k):
        bar = real(total, buf, desc, unit, **k)
        bars.append(bar)
        return bar

    import energystats.dependence._projection as proj
    try:
        proj._progress.progress_bar = spy
        es.independence_test(x, y, **kw)
    finally:
        proj._progress.progress_bar = real
    assert [(b.total, int(b.n), b.desc) for b in bars] == [(9, 9, "projections")]
