"""Standard errors and coverage of ``weighted_effect``'s default intervals by simulation (a
small, fixed-seed version of ``benchmarks/effect_coverage.py``; docs/benchmarks/
effect_coverage.txt has the full run): the confounded design of docs/guide/balance.rst, true
effect 1, ATE energy balancing weights, the difference of weighted means
(``outcome_model=None``; the augmented default is tested in test_augmented.py); its default
half-sampling (``se='subsample'``, normal interval) against the with-replacement bootstrap.

What it can honestly promise on 40 data sets of n = 100: the half-sample standard error is
of the size of the Monte Carlo SD of the estimates, and its interval covers at least as
often as the bootstrap's (which is too narrow).  It cannot promise 95 %: the estimate is
biased by about one SD at this n, so even the oracle interval (estimate ± 1.96 Monte Carlo
SD) misses on the high side; that claim is an xfail."""
import functools
import math

import numpy as np
import pytest

import energystats as es

REPS, N, N_BOOT, SEED0 = 40, 100, 40, 2000
NOMINAL = 0.95
Z = 1.959963984540054
#: |coverage - 0.95| <= 3 binomial SE at the nominal level (3 * 0.0345 = 0.103 for 40 sets)
BAND = 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / REPS)
#: an equal-tailed interval misses on each side 2.5 % of the time: <= 0.025 + 3 binomial SE
#: (0.099 of 40 sets: 3 misses on a side pass, 4 fail)
TAIL = (1 - NOMINAL) / 2
TAIL_BAND = 3 * math.sqrt(TAIL * (1 - TAIL) / REPS)
#: the mean standard error over the Monte Carlo SD of the estimates: the SD of 40 estimates
#: alone is uncertain by about 11 % (1/sqrt(2·39)), so about 2 of its SE either way
SE_RATIO = (0.8, 1.25)


def simulate(seed, n):
    """X ~ N(0, I_4); logit P(t = 1) = -0.3 + 0.8 x0 + 0.6 x1² - 0.5 x2 x3;
    y = t + x0 + x1² + 0.5 x2 x3 + N(0, 1): the effect is 1 (docs/guide/balance.rst)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    lin = -0.3 + 0.8 * X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.5 * X[:, 2] * X[:, 3]
    t = (rng.uniform(size=n) < 1 / (1 + np.exp(-lin))).astype(int)
    y = t + X[:, 0] + X[:, 1] ** 2 + 0.5 * X[:, 2] * X[:, 3] + rng.normal(size=n)
    return X, t, y


@functools.lru_cache(maxsize=None)
def intervals():
    """Of the REPS data sets, each an array: ``estimate``, the default's ``(std_error, ci_low,
    ci_high)`` and the bootstrap's ``(std_error, ci_low, ci_high)`` (percentile; the same
    n_boot and seed)."""
    rows = []
    for r in range(REPS):
        X, t, y = simulate(SEED0 + r, N)
        res = es.energy_balancing_weights(X, t, estimand="ATE")
        h = es.weighted_effect(y, res, outcome_model=None, n_boot=N_BOOT, rng=SEED0 + r,
                               n_threads=1)
        assert (h.se_method, h.ci_method, h.n_failed) == ("subsample", "normal", 0)
        b = es.weighted_effect(y, res, outcome_model=None, se="bootstrap", ci_method="percentile", n_boot=N_BOOT,
                               rng=SEED0 + r, n_threads=1)
        assert b.n_failed == 0 and b.estimate[0] == h.estimate[0]
        rows.append((h.estimate[0], h.std_error[0], h.ci_low[0], h.ci_high[0],
                     b.std_error[0], b.ci_low[0], b.ci_high[0]))
    est, *rest = (np.array(c) for c in zip(*rows))
    return est, tuple(rest[:3]), tuple(rest[3:])


def coverage(lo, hi, truth=1.0):
    return float(np.mean((lo <= truth) & (truth <= hi)))


def assert_in_band(cov):
    assert abs(cov - NOMINAL) <= BAND, (
        f"coverage {cov:.3f} of {REPS} data sets is outside 0.95 ± {BAND:.3f} (3 binomial SE)")


def assert_tails_in_band(lo, hi, truth=1.0):
    """The intervals wholly below and wholly above the truth: each at most 2.5 % + 3 SE."""
    for side, miss in (("below", np.mean(hi < truth)), ("above", np.mean(lo > truth))):
        assert miss <= TAIL + TAIL_BAND, (
            f"{miss:.3f} of {REPS} intervals lie wholly {side} the effect, more than "
            f"0.025 + {TAIL_BAND:.3f} (3 binomial SE)")


def assert_se_ratio(se, est):
    ratio = float(np.mean(se) / np.std(est, ddof=1))
    assert SE_RATIO[0] <= ratio <= SE_RATIO[1], (
        f"mean SE / Monte Carlo SD = {ratio:.2f}, outside {SE_RATIO}")


@pytest.mark.slow
class TestWeightedEffectCoverage:
    # measured on these 40 sets (n = 100, 40 resamples): bias +0.320, Monte Carlo SD 0.270;
    # mean SE: half-sample 0.315 (ratio 1.17), bootstrap 0.242 (0.90); coverage: half-sample
    # normal 0.850, bootstrap normal 0.700, bootstrap percentile 0.575, oracle 0.850; every
    # miss above 1.  The SE band alone would pass the half-sample SE times sqrt(1/2) (0.83;
    # the sqrt(b/n) of subsampling theory in place of sqrt(b/(n-b))): its interval covers
    # 0.650, below the bootstrap's, which the comparison catches.  Seeds 3000, 4000, 5000:
    # ratios 1.07 / 1.05 / 1.11 (bootstrap 0.86 / 0.83 / 0.85), half-sample coverage 0.80 /
    # 0.90 / 0.90 against the bootstrap normal interval's 0.70 / 0.75 / 0.70.

    def test_the_half_sample_se_is_the_size_of_the_monte_carlo_sd(self):
        est, (se, _, _), _ = intervals()
        assert_se_ratio(se, est)

    def test_the_default_interval_covers_at_least_as_often_as_the_bootstrap(self):
        est, (_, lo, hi), (bse, blo, bhi) = intervals()
        cov = coverage(lo, hi)
        assert cov >= coverage(blo, bhi), "the bootstrap percentile interval covers more often"
        assert cov >= coverage(est - Z * bse, est + Z * bse), (
            "the bootstrap normal interval covers more often")

    @pytest.mark.xfail(strict=True, reason=(
        "measured: the default (half-sample normal) interval misses the effect on 6 of these "
        "40 sets, all 6 above it (a 95 % equal-tailed interval: about 1 on each side; the "
        "band allows 3). Its coverage 0.850 is inside 0.95 ± 3 SE only because 40 sets cannot "
        "tell 0.85 from 0.95; the bootstrap's is 0.700 (normal) and 0.575 (percentile). The "
        "cause is the bias, not the standard error: the difference of weighted means is "
        "biased upwards by about one SD at n = 100 (bias +0.32, Monte Carlo SD 0.27; "
        "half-sample SE 0.315), and the oracle interval estimate ± 1.96 Monte Carlo SD covers "
        "0.850 too, all misses above. docs/benchmarks/effect_coverage.txt has n = 300. "
        "Strict: when it passes, drop the marker."))
    def test_the_default_interval_reaches_the_nominal_coverage(self):
        _, (_, lo, hi), _ = intervals()
        assert_in_band(coverage(lo, hi))
        assert_tails_in_band(lo, hi)

    def test_the_bands_reject_a_too_narrow_interval(self):
        # the checks have power: estimate ± 0.1·SE (a broken resampling) is far outside them
        est, (se, _, _), _ = intervals()
        with pytest.raises(AssertionError, match="outside 0.95"):
            assert_in_band(coverage(est - 0.1 * se, est + 0.1 * se))
        with pytest.raises(AssertionError, match="wholly"):
            assert_tails_in_band(est - 0.1 * se, est + 0.1 * se)
        with pytest.raises(AssertionError, match="outside"):
            assert_se_ratio(0.1 * se, est)
        with pytest.raises(AssertionError, match="outside"):
            assert_se_ratio(2 * se, est)

    def test_the_bands_accept_an_interval_of_the_right_size(self):
        # and no more than that: the oracle interval with the bias removed (the estimates
        # less their mean bias, ± 1.96 Monte Carlo SD) covers 0.925 of these sets, inside
        # both bands
        est, _, _ = intervals()
        centred, sd = est - (est.mean() - 1.0), est.std(ddof=1)
        assert_in_band(coverage(centred - Z * sd, centred + Z * sd))
        assert_tails_in_band(centred - Z * sd, centred + Z * sd)
        assert_se_ratio(np.full(REPS, sd), est)
