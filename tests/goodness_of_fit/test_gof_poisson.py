"""Statistics of the Poisson goodness-of-fit tests (energystats.goodness_of_fit._poisson).

Reference values are from R 4.2 with the R package energy 1.7.11; the commands are given
with each sample, and every number was printed with ``sprintf("%.17g", ...)``, e.g.

    library(energy)
    set.seed(1); x <- rpois(20, 2)
    sprintf("%.17g", poisson.m(x))   # M-CvM, M-AD
    sprintf("%.17g", poisson.e(x))   # E

The data are copied here too, since numpy cannot replay R's random numbers.
"""
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import pdtr
from scipy.stats import poisson

from energystats.goodness_of_fit import _poisson as gp
from energystats.goodness_of_fit._poisson import poisson_statistics, poisson_support_end

# (R command, data, (M-CvM, M-AD), E) -- R's poisson.m(x), poisson.e(x) printed with %.17g
R_CASES = [
    ("set.seed(1); x <- rpois(20, 2)",
     [1, 1, 2, 4, 1, 4, 4, 2, 2, 0, 1, 1, 3, 1, 3, 2, 3, 6, 1, 3],
     (0.041098742602596522, 0.23210331237912651), 0.31674952111750088),
    ("set.seed(2); x <- rpois(100, 0.5)",
     [0, 1, 0, 0, 2, 2, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 2, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 2,
      0, 0, 0, 1, 1, 0, 1, 1, 0, 1, 0, 2, 0, 0, 0, 2, 1, 2, 0, 0, 1, 0, 0, 1, 2, 0, 1, 1, 3,
      1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 2,
      0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0],
     (0.011007993052311683, 0.046335639601586057), 0.11913081115131341),
    ("set.seed(3); x <- rpois(50, 30)",
     [24, 27, 23, 31, 30, 30, 35, 32, 26, 23, 34, 37, 33, 28, 29, 27, 31, 26, 30, 26, 27, 25,
      35, 29, 23, 36, 34, 28, 33, 37, 30, 24, 33, 32, 16, 25, 37, 26, 36, 27, 32, 32, 33, 27,
      22, 22, 37, 35, 25, 35],
     (0.2425702065786817, 1.372944185180961), 2.4361040768793973),
    # ties and a gap (3, 4, 5, 7, 8 absent)
    ("x <- c(0L, 0L, 1L, 1L, 1L, 1L, 2L, 2L, 6L, 6L, 9L)",
     [0, 0, 1, 1, 1, 1, 2, 2, 6, 6, 9],
     (1.1190464327529386, 5.2333521829679732), 5.0862797791831831),
    # not Poisson (overdispersed)
    ("set.seed(4); x <- rgeom(60, 0.3)",
     [0, 1, 1, 2, 0, 11, 3, 1, 1, 1, 0, 4, 0, 0, 1, 1, 4, 1, 2, 0, 0, 5, 4, 3, 2, 2, 2, 0, 2,
      1, 8, 2, 0, 1, 1, 8, 2, 2, 1, 0, 3, 0, 0, 0, 3, 6, 0, 11, 5, 4, 2, 1, 0, 2, 3, 5, 0, 0,
      3, 5],
     (4.8078751064993126, 23.285914733629799), 9.3643397615023805),
    ("x <- rep(4L, 9)", [4] * 9, (0.9181800019485622, 4.5639601988255709), 8.1474735223281876),
    ("x <- 5L", [5], (0.10678083419011695, 0.53410514444611212), 1.0183872098781728),
]

# set.seed(5); x <- rpois(30, 300).  R: poisson.m(x) = 9.7587773701549114 2735.2103362992925
# (wrong: see test_r_recursion_is_unstable_stable_is_exact), poisson.e(x) = 13.358471865893087.
X300 = [285, 290, 301, 329, 289, 302, 285, 302, 321, 286, 299, 331, 329, 308, 315, 316, 325,
        312, 314, 294, 334, 294, 285, 283, 338, 321, 325, 316, 282, 324]
R300_M = (9.7587773701549114, 2735.2103362992925)
R300_E = 13.358471865893087

REL_R = 1e-12


def stats1(x, **kw):
    """Statistics of one sample as floats."""
    return {k: float(v[0]) for k, v in poisson_statistics(np.asarray(x), **kw).items()}


@pytest.mark.parametrize("cmd, x, m, e", R_CASES, ids=[c[0] for c in R_CASES])
def test_agrees_with_R(cmd, x, m, e):
    s = stats1(x)
    assert s["m-cvm"] == pytest.approx(m[0], rel=REL_R)
    assert s["m-ad"] == pytest.approx(m[1], rel=REL_R)
    assert s["energy"] == pytest.approx(e, rel=REL_R)


def test_agrees_with_R_large_lambda():
    # R's M values here are numerically wrong, but they are R's: reproduced operation by
    # operation (the recursion uses only +, -, *, / on the same operands, so bit for bit).
    s = stats1(X300)
    assert s["m-cvm"] == pytest.approx(R300_M[0], rel=REL_R)
    assert s["m-ad"] == pytest.approx(R300_M[1], rel=REL_R)
    assert s["energy"] == pytest.approx(R300_E, rel=1e-11)  # E/n ~ 0.4 from terms ~ 20


def test_all_zeros_like_R():
    # R: x <- integer(7); poisson.m(x) -> 0 NaN; poisson.e(x) -> 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = poisson_statistics(np.zeros((2, 7), dtype=np.int64))
    np.testing.assert_array_equal(s["m-cvm"], [0.0, 0.0])
    assert np.isnan(s["m-ad"]).all()
    np.testing.assert_array_equal(s["energy"], [0.0, 0.0])


def test_energy_large_lambda_finite_where_R_overflows():
    # R: set.seed(1); x <- rpois(10, 400); poisson.e(x) is NaN (besselI overflows).
    rng = np.random.default_rng(7)
    x = rng.poisson(400.0, 40)
    assert stats1(x, which=("energy",))["energy"] == pytest.approx(energy_reference(x),
                                                                     rel=1e-9)


def test_support_end_matches_R_qpois():
    # R: qpois(1 - 1e-10, c(26.03, 101.23758050613105, 275.53449750412256, 0, 0.5, 2.25))
    #    -> 64 171 388 0 10 17  (the first three sit within 2e-15 of the boundary, where
    #    R's fuzz p * (1 - 8 * DBL_EPSILON) decides)
    lam = [26.03, 101.23758050613105, 275.53449750412256, 0.0, 0.5, 2.25]
    np.testing.assert_array_equal(poisson_support_end(lam), [64, 171, 388, 0, 10, 17])


# -- independent reference for the energy statistic --------------------------------------

def energy_reference(x):
    """E by direct truncated sums: E|x-X| = sum_k |x-k| p(k), E|X-X'| a double sum."""
    x = np.asarray(x, dtype=np.int64)
    n = len(x)
    lam = x.mean()
    k = np.arange(int(lam + 20 * np.sqrt(lam) + 40))  # P(X >= len(k)) < 1e-40
    p = poisson.pmf(k, lam)
    e1 = float(np.sum(np.abs(x[:, None] - k[None, :]) * p[None, :])) / n  # sum_i E|x_i - X|
    e2 = float(np.sum(np.abs(k[:, None] - k[None, :]) * p[:, None] * p[None, :]))
    e3 = int(np.abs(x[:, None] - x[None, :]).sum()) / n**2
    return n * (2 * e1 - e2 - e3)


@pytest.mark.parametrize("lam, n, seed", [(0.3, 25, 1), (2.0, 40, 2), (7.5, 30, 3),
                                          (40.0, 20, 4), (150.0, 15, 5)])
def test_energy_against_direct_sums(lam, n, seed):
    x = np.random.default_rng(seed).poisson(lam, n)
    assert stats1(x, which=("energy",))["energy"] == pytest.approx(energy_reference(x),
                                                                     rel=1e-10)


def test_energy_sort_path_against_direct_sums():
    # A far outlier makes the value grid wider than _GRID_MAX and n: the sort-based path.
    x = np.random.default_rng(8).poisson(2.0, 1000)
    x[0] = 6000
    assert 6001 > max(gp._GRID_MAX, len(x))
    assert stats1(x, which=("energy",))["energy"] == pytest.approx(energy_reference(x),
                                                                     rel=1e-10)


def test_energy_paths_agree(monkeypatch):
    X = np.random.default_rng(11).poisson(3.0, (6, 50))
    X[:, 0] += 100  # value grid ~110 wide: wider than n = 50
    grid = poisson_statistics(X, which=("energy",))["energy"]
    monkeypatch.setattr(gp, "_GRID_MAX", 0)  # now wider than max(_GRID_MAX, n): sort path
    sort_path = poisson_statistics(X, which=("energy",))["energy"]
    np.testing.assert_allclose(sort_path, grid, rtol=1e-13, atol=0)


# -- batch ------------------------------------------------------------------------------

def test_batch_equals_rows_bitwise():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.poisson(lam, 60) for lam in (0.0, 0.2, 1.0, 4.0, 25.0, 90.0)]
                  + [rng.geometric(0.3, 60) - 1])
    for mode in ("r", "stable"):
        batch = poisson_statistics(X, m_recursion=mode)
        again = poisson_statistics(X.copy(), m_recursion=mode)
        for name in gp.STATISTICS:
            assert batch[name].shape == (X.shape[0],) and batch[name].dtype == np.float64
            rows = [poisson_statistics(row, m_recursion=mode)[name][0] for row in X]
            np.testing.assert_array_equal(batch[name], rows)
            np.testing.assert_array_equal(batch[name], again[name])


def test_row_chunks_do_not_change_results(monkeypatch):
    X = np.random.default_rng(5).poisson(6.0, (9, 40))
    whole = poisson_statistics(X)
    monkeypatch.setattr(gp, "_CHUNK_ELEMENTS", 1)  # one row per chunk
    chunked = poisson_statistics(X)
    for name in gp.STATISTICS:
        np.testing.assert_array_equal(whole[name], chunked[name])


def test_one_dimensional_input_and_which():
    x = np.array(R_CASES[0][1])
    s = poisson_statistics(x, which=("m-ad", "energy"))
    assert list(s) == ["m-ad", "energy"]
    assert s["energy"].shape == (1,)
    with pytest.raises(ValueError, match="unknown"):
        poisson_statistics(x, which=("cvm",))
    with pytest.raises(ValueError, match="m_recursion"):
        poisson_statistics(x, m_recursion="exact")


# -- R's recursion versus the stable one --------------------------------------------------

def m_exact(x):
    """M-CvM, M-AD with F-hat by exact rational arithmetic (R's recursion, clipping)."""
    x = [int(v) for v in x]
    n = len(x)
    lam = Fraction(sum(x), n)
    lamf = float(lam)
    Q = int(poisson_support_end(lamf))

    def mhat(k):
        return Fraction(sum(abs(v - k) for v in x), n)

    Fh = [(mhat(1) + 1 - lam) / 2]
    for j in range(1, Q + 1):
        f = (mhat(j + 1) - (j + 1 - lam) * (2 * Fh[-1] - 1)) / (2 * (j + 1))
        Fh.append(min(Fh[-1] + max(f, Fraction(0)), Fraction(1)))
    Fh = np.array([float(v) for v in Fh])
    cdf = pdtr(np.arange(Q + 1), lamf)
    cdf[0] = np.exp(-lamf)
    f = np.diff(np.r_[0.0, cdf])
    d2f = (Fh - cdf) ** 2 * f
    return n * d2f.sum(), n * (d2f / (cdf * (1 - cdf))).sum()


@pytest.mark.parametrize("x", [c[1] for c in R_CASES] + [X300],
                         ids=[c[0] for c in R_CASES] + ["rpois(30, 300)"])
def test_stable_recursion_is_exact(x):
    s = stats1(x, m_recursion="stable")
    cvm, ad = m_exact(x)
    assert s["m-cvm"] == pytest.approx(cvm, rel=1e-12)
    assert s["m-ad"] == pytest.approx(ad, rel=1e-12)


def test_r_recursion_is_unstable_stable_is_exact():
    # Exact values for set.seed(5); x <- rpois(30, 300): M-CvM 0.6455, M-AD 3.427 -- R gives
    # 9.76 and 2735.  Stable and R-mode agree where R is accurate (R_CASES above).
    cvm, ad = m_exact(X300)
    assert cvm == pytest.approx(0.645485601228811, rel=1e-9)
    assert ad == pytest.approx(3.4272583637956693, rel=1e-9)
    assert stats1(X300)["m-cvm"] > 10 * cvm
    for cmd, x, m, e in R_CASES:
        s = stats1(x, m_recursion="stable")
        assert s["m-cvm"] == pytest.approx(m[0], rel=1e-12)
        assert s["m-ad"] == pytest.approx(m[1], rel=1e-12)


# -- large lambda: the M statistics by a high-precision reference -------------------------

def m_mpmath(x, dps=40):
    """M-CvM, M-AD by mpmath at ``dps`` digits: R's recursion (the definition) for F-hat,
    F(j) and f(j) = exp(-lam) lam^j / j! from the recurrence f(j) = f(j-1) lam / j, summed
    from lo = max(0, lam - 40 sqrt(lam)) (the terms below add up to less than F(lo - 1)^2 <
    1e-600 when min x >= lo; otherwise the sum starts at 0) up to Q.  F-hat is 0 below
    min x exactly (m(k) = lam - k for k <= min x makes the numerator 0), so the recursion is
    started there: from 0 it would amplify rounding by lam^j / j!, which needs ``dps`` of
    about lam / 2.3 digits."""
    import mpmath as mp

    x = [int(v) for v in x]
    n = len(x)
    with mp.workdps(dps):
        lam = mp.mpf(sum(x)) / n
        Q = int(poisson_support_end(sum(x) / n))
        lo = max(0, int(mp.floor(lam - 40 * mp.sqrt(lam))))
        if min(x) < lo:
            lo = 0

        def mh(k):
            return mp.mpf(sum(abs(v - k) for v in x)) / n

        F = mp.gammainc(lo, lam, mp.inf, regularized=True) if lo > 0 else mp.mpf(0)
        f = mp.exp(-lam + lo * mp.log(lam) - mp.loggamma(lo + 1))
        cv = ad = Fh = mp.mpf(0)
        for j in range(lo, Q + 1):
            if j > lo:
                f = f * lam / j
            F = F + f
            if j < min(x):
                Fh = mp.mpf(0)
            elif j == 0:
                Fh = (mh(1) + 1 - lam) / 2
            else:
                fh = (mh(j + 1) - (j + 1 - lam) * (2 * Fh - 1)) / (2 * (j + 1))
                Fh = min(Fh + max(fh, 0), mp.mpf(1))
            t = (Fh - F) ** 2 * f
            cv += t
            ad += t / (F * (1 - F))
        return float(n * cv), float(n * ad)


@pytest.mark.parametrize("lam, low, dps", [(30.0, None, 40), (2000.0, None, 40),
                                           (2000.0, 1700, 40), (2000.0, 0, 1000)],
                         ids=["lam30", "lam2000", "lam2000-low-1700", "lam2000-low-0"])
def test_m_statistics_large_lambda_against_mpmath(lam, low, dps):
    # Issue 30: M-AD was NaN from lam-hat ~ 745 on (F(0) = exp(-lam) underflows: 0/0) and
    # the cost grew like lam.  A count far below the mean (low) makes the far left tail,
    # where F underflows, count in M-AD.
    x = np.random.default_rng(1).poisson(lam, 30)
    if low is not None:
        x[0] = low
    cvm, ad = m_mpmath(x, dps)
    s = stats1(x, which=("m-cvm", "m-ad"), m_recursion="stable")
    assert s["m-cvm"] == pytest.approx(cvm, rel=1e-12)
    assert s["m-ad"] == pytest.approx(ad, rel=1e-12)


def test_m_statistics_lambda_one_million_against_mpmath():
    # f(j) is F(j) - F(j - 1), as R: relative error ~ eps F/f ~ eps sqrt(lam) near the mean
    x = np.random.default_rng(2).poisson(1e6, 30)
    cvm, ad = m_mpmath(x)
    s = stats1(x, which=("m-cvm", "m-ad"), m_recursion="stable")
    assert s["m-cvm"] == pytest.approx(cvm, rel=1e-11)
    assert s["m-ad"] == pytest.approx(ad, rel=1e-11)


@pytest.mark.parametrize("lam", [400.0, 2000.0, 1e6, 2.0**31])
def test_m_window_skips_only_negligible_terms(lam):
    # the stable sums start at min(min x, J), F(J - 1) <= 1e-160, and J is within
    # 30 sd of the mean: O(sqrt(lam)) steps instead of O(lam)
    J = int(gp._window_start(np.array([[2**40]]), np.array([lam]))[0])
    assert pdtr(J - 1, lam) <= 1e-160 or J == 0
    assert J >= lam - 30 * np.sqrt(lam)
