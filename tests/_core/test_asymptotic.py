"""Asymptotic p-values (energystats._core._asymptotic): the χ² test of distance correlation and the
moment-matched gamma of the energy test, against independent references."""
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

import energystats as es
from energystats._core import _asymptotic
from energystats._core._permutation import DegenerateStatisticWarning


def _dist(z):
    z = np.asarray(z, dtype=float).reshape(len(z), -1)
    n = len(z)
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            D[i, j] = math.sqrt(sum((z[i] - z[j]) ** 2))
    return D


def _u_centre(D):
    """U-centring written out element by element (Székely & Rizzo 2014, Definition 1)."""
    n = len(D)
    r = D.sum(axis=1)
    t = D.sum()
    U = np.zeros_like(D)
    for i in range(n):
        for j in range(n):
            if i != j:
                U[i, j] = D[i, j] - r[i] / (n - 2) - r[j] / (n - 2) + t / ((n - 1) * (n - 2))
    return U


def _u_product(A, B):
    n = len(A)
    return float(np.sum(A * B)) / (n * (n - 3))


def _bcdcor(x, y):
    A, B = _u_centre(_dist(x)), _u_centre(_dist(y))
    return _u_product(A, B) / math.sqrt(_u_product(A, A) * _u_product(B, B))


# -- the χ² test of distance correlation ---------------------------------------------------

def test_chi2_pvalue_is_the_upper_tail_at_n_bcdcor_plus_one():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(40, 2))
    y = x[:, :1] ** 2 + rng.normal(size=(40, 1))
    r = _bcdcor(x, y)
    res = es.independence_test(x, y, pvalue_method="asymptotic")
    assert res.statistic == pytest.approx(40 * r, rel=1e-12)
    assert res.pvalue == pytest.approx(stats.chi2.sf(40 * r + 1, 1), rel=1e-10)
    assert (res.statistic_name, res.pvalue_method, res.n_resamples, res.seed, res.pvalue_se) == \
        ("bcdcor", "asymptotic", 0, None, None)
    assert res.null_distribution.size == 0
    assert res.estimates.dcor_u == pytest.approx(r, rel=1e-12)


def test_chi2_test_matches_hyppo():
    # hyppo 0.5.2, in a separate environment:
    #   from hyppo.independence import Dcorr
    #   rng = np.random.default_rng(3); x = rng.normal(size=(60, 3))
    #   y = x[:, :2]**2 + rng.normal(size=(60, 2))
    #   Dcorr().test(x, y, auto=True)  ->  (0.09198931902676645, 0.010670644711638906)
    #   x1 = rng.normal(size=200); y1 = rng.normal(size=200)
    #   Dcorr().test(x1, y1, auto=True)  ->  (0.004979617361759038, 0.15772290386893353)
    # hyppo reports the bias-corrected dCor itself; the package's statistic is n times it.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(60, 3))
    y = x[:, :2] ** 2 + rng.normal(size=(60, 2))
    res = es.independence_test(x, y, pvalue_method="asymptotic")
    assert res.statistic / 60 == pytest.approx(0.09198931902676645, rel=1e-12)
    assert res.pvalue == pytest.approx(0.010670644711638906, rel=1e-10)
    x1, y1 = rng.normal(size=200), rng.normal(size=200)
    res = es.independence_test(x1, y1, pvalue_method="asymptotic")
    assert res.statistic / 200 == pytest.approx(0.004979617361759038, rel=1e-9)
    assert res.pvalue == pytest.approx(0.15772290386893353, rel=1e-9)


def test_chi2_options_that_cannot_apply_are_errors():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 2)), rng.normal(size=(30, 1))
    for kw, text in [(dict(statistic="dcov"), "bias-corrected"), (dict(exact=True), "exact=True"),
                     (dict(strata=np.repeat([0, 1], 15)), "stratified")]:
        with pytest.raises(ValueError, match=text):
            es.independence_test(x, y, pvalue_method="asymptotic", **kw)
    # statistic='bcdcor' with permutations is the U-statistic's permutation test now
    # (tests/dependence/test_u_permutation.py): the same statistic as the χ² test's
    perm = es.independence_test(x, y, statistic="bcdcor", n_resamples=9, rng=0)
    assert perm.statistic == es.independence_test(x, y, pvalue_method="asymptotic").statistic
    with pytest.raises(ValueError, match="constant"):
        es.independence_test(np.ones(30), y, pvalue_method="asymptotic")
    with pytest.raises(ValueError, match="at least 4"):
        es.independence_test(x[:3], y[:3], pvalue_method="asymptotic")


def test_chi2_on_dask_equals_threads():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    x = rng.normal(size=(120, 2))
    y = x[:, :1] + rng.normal(size=(120, 1))
    ref = es.independence_test(x, y, pvalue_method="asymptotic")
    res = es.independence_test(da.from_array(x, chunks=50), da.from_array(y, chunks=50),
                               pvalue_method="asymptotic")
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


# -- the energy test's gamma approximation -------------------------------------------------

def _gamma_reference(samples):
    """The p-value from the formulas, with every ingredient computed by plain loops."""
    sizes = [len(s) for s in samples]
    Z = np.vstack([np.asarray(s, dtype=float).reshape(len(s), -1) for s in samples])
    N = len(Z)
    D = _dist(Z)
    bounds = np.cumsum([0] + sizes)
    blocks = [range(bounds[g], bounds[g + 1]) for g in range(len(sizes))]
    stat = 0.0
    for g, h in itertools.combinations(range(len(sizes)), 2):
        gh = np.mean([[D[i, j] for j in blocks[h]] for i in blocks[g]])
        gg = np.mean([[D[i, j] for j in blocks[g]] for i in blocks[g]])
        hh = np.mean([[D[i, j] for j in blocks[h]] for i in blocks[h]])
        stat += sizes[g] * sizes[h] / (sizes[g] + sizes[h]) * (2 * gh - gg - hh)
    mean_d = (D.sum() - np.trace(D)) / (N * (N - 1))
    U = _u_centre(D)
    dvar_u = _u_product(U, U)
    # ||Q||_F^2 from its entries: Q = sum_{g<h} w_gh v_gh v_gh^T
    k = len(sizes)
    Q = np.zeros((k, k))
    for g, h in itertools.combinations(range(k), 2):
        w = sizes[g] * sizes[h] / (sizes[g] + sizes[h])
        Q[g, g] += w / sizes[g]
        Q[h, h] += w / sizes[h]
        Q[g, h] -= w / math.sqrt(sizes[g] * sizes[h])
        Q[h, g] -= w / math.sqrt(sizes[g] * sizes[h])
    mean = k * (k - 1) / 2 * mean_d
    var = 2 * np.sum(Q ** 2) * dvar_u
    return stat, stats.gamma.sf(stat, mean ** 2 / var, scale=var / mean)


@pytest.mark.parametrize("sizes,d,shift", [((20, 15), 2, 0.0), ((12, 20, 9), 1, 0.5),
                                            ((10, 10, 10, 14), 3, 0.3)])
def test_gamma_pvalue_matches_the_formulas(sizes, d, shift):
    rng = np.random.default_rng(sum(sizes))
    samples = [rng.normal(loc=shift * g, size=(m, d)) for g, m in enumerate(sizes)]
    stat, p = _gamma_reference(samples)
    res = es.energy_test(*samples, pvalue_method="asymptotic")
    assert res.statistic == pytest.approx(stat, rel=1e-12)
    assert res.pvalue == pytest.approx(p, rel=1e-9)
    assert (res.pvalue_method, res.n_resamples, res.seed, res.pvalue_se, res.exact) == \
        ("asymptotic", 0, None, None, False)


def test_gamma_mean_is_the_exact_mean_over_relabellings():
    """The limit law's mean, C(k, 2) times the mean distance between distinct rows, is the
    mean of the statistic over all relabellings (enumerated)."""
    rng = np.random.default_rng(4)
    for sizes in [(5, 4), (3, 3, 2)]:
        samples = [rng.exponential(size=(m, 2)) for m in sizes]
        res = es.energy_test(*samples, exact=True)
        Z = np.vstack(samples)
        N = len(Z)
        D = _dist(Z)
        mean_d = D.sum() / (N * (N - 1))
        mean, _ = _asymptotic.energy_moments(sizes, mean_d, 1.0)
        assert res.null_distribution.mean() == pytest.approx(mean, rel=1e-12)


def test_gamma_variance_is_the_variance_over_relabellings():
    """The limit's variance 2 ||Q||² Σλ² against the variance over 4000 random relabellings
    (its standard error is about 4 %; the tolerance is 15 %).  Group sizes unequal, k = 3."""
    rng = np.random.default_rng(11)
    sizes = (100, 250, 150)
    samples = [rng.standard_t(4, size=(m, 1)) for m in sizes]
    res = es.energy_test(*samples, n_resamples=4000, rng=2)
    Z = np.vstack(samples)
    dvar_u = es.distance_stats(Z, Z).dvar_x_u
    _, var = _asymptotic.energy_moments(sizes, 1.0, dvar_u)
    assert np.var(res.null_distribution) == pytest.approx(var, rel=0.15)
    # the tolerance tells the right form from the plausible wrong one that treats the three
    # pairs' terms as independent (||Q||² = trace = 3 in place of 4.57: 34 % off)
    tr, fro2 = _asymptotic.group_form(sizes)
    assert tr == pytest.approx(3.0) and fro2 == pytest.approx(32 / 7)
    assert np.var(res.null_distribution) != pytest.approx(var * tr / fro2, rel=0.15)


def test_gamma_level_under_the_null():
    """400 null data sets (two normal samples of 60, 2-D): rejection at 0.05 within 3 binomial
    standard errors (0.033)."""
    rng = np.random.default_rng(2026)
    p = np.array([es.energy_test(rng.normal(size=(60, 2)), rng.normal(size=(60, 2)),
                                 pvalue_method="asymptotic").pvalue for _ in range(400)])
    se = math.sqrt(0.05 * 0.95 / 400)
    assert abs(np.mean(p <= 0.05) - 0.05) <= 3 * se


def test_gamma_options_that_cannot_apply_are_errors():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
    with pytest.raises(ValueError, match="exact=True"):
        es.energy_test(x, y, pvalue_method="asymptotic", exact=True)
    z = np.vstack([x, y])
    with pytest.raises(ValueError, match="stratified"):
        es.energy_test(z, labels=np.repeat([0, 1], 20), strata=np.tile([0, 1], 20),
                       pvalue_method="asymptotic")


@pytest.mark.parametrize("scale", [1.0, 1e-170, 1e150])
def test_gamma_on_dask_equals_threads(scale):
    # the group sums and the pooled distance variance as Dask tasks: the threads backend's
    # p-value, also where the working units differ from the data's (tiny and huge values)
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(6)
    z1 = np.vstack([rng.normal(size=(70, 3)), rng.normal(size=(50, 3)) + 0.4,
                    rng.standard_t(3, size=(40, 3))])
    g = np.repeat([0, 1, 2], [70, 50, 40])
    z = z1 * scale
    ref = es.energy_test(z, labels=g, pvalue_method="asymptotic")
    stat, p = _gamma_reference([z1[g == 0], z1[g == 1], z1[g == 2]])
    assert ref.pvalue == pytest.approx(p, rel=1e-9) and 1e-4 < p < 0.5
    lazy = es.energy_test(da.from_array(z, chunks=(45, 2)), labels=g, pvalue_method="asymptotic",
                          compute=False)
    assert hasattr(lazy, "compute")
    res = lazy.compute()
    assert res.pvalue_method == "asymptotic" and res.n_resamples == 0 and res.engine == "dask"
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_gamma_on_dask_with_group_sums_in_other_units(monkeypatch):
    # the tiles' working units 2**-3 finer than the distance variance's: the p-value is the same
    da = pytest.importorskip("dask.array")
    from energystats._core import _dask
    from energystats._core._engine import Scale

    rng = np.random.default_rng(7)
    z = np.vstack([rng.normal(size=(60, 2)), rng.normal(size=(45, 2)) + 0.5])
    g = np.repeat([0, 1], [60, 45])
    ref = es.energy_test(z, labels=g, pvalue_method="asymptotic")
    plan = _dask._working_plan
    monkeypatch.setattr(_dask, "_working_plan",
                        lambda *a: (lambda m, s: (m, Scale(s.shift + 3, s.degree)))(*plan(*a)))
    res = es.energy_test(da.from_array(z, chunks=40), labels=g, pvalue_method="asymptotic")
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_gamma_without_spread_is_nan_with_a_warning():
    with pytest.warns(DegenerateStatisticWarning, match="undefined"):
        res = es.energy_test(np.ones((5, 2)), np.ones((4, 2)), pvalue_method="asymptotic")
    assert math.isnan(res.pvalue)


def test_gamma_precomputed_matrix_equals_data():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(25, 3)), rng.normal(loc=0.3, size=(30, 3))
    ref = es.energy_test(x, y, pvalue_method="asymptotic")
    D = _dist(np.vstack([x, y]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = es.energy_test(D, labels=np.repeat([0, 1], [25, 30]), metric="precomputed",
                             pvalue_method="asymptotic")
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)


def test_an_unknown_method_error_names_asymptotic_where_it_is_accepted():
    x, y = np.arange(10.0), np.arange(10.0) + 1
    for test in (es.energy_test, es.independence_test):
        with pytest.raises(ValueError, match="'decision', 'asymptotic'; got 'asymp'"):
            test(x, y, pvalue_method="asymp")
    with pytest.raises(ValueError, match="'decision'; got 'asymptotic'"):
        es.mutual_independence_test(x, y, pvalue_method="asymptotic")
