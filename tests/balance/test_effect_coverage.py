"""Coverage of the bootstrap interval of ``weighted_effect`` by simulation (a small, fixed-seed
version of ``benchmarks/effect_coverage.py``; docs/benchmarks/effect_coverage.txt has the full
run): the confounded design of docs/guide/balance.rst, true effect 1, ATE energy balancing
weights, the difference of weighted means, the bootstrap percentile 95 % interval."""
import functools
import math

import numpy as np
import pytest

import energystats as es

REPS, N, N_BOOT, SEED0 = 40, 100, 40, 2000
NOMINAL = 0.95
#: |coverage - 0.95| <= 3 binomial SE at the nominal level (3 * 0.0345 = 0.103 for 40 sets)
BAND = 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / REPS)


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
    """``(estimate, std_error, ci_low, ci_high)`` of the REPS data sets, each an array."""
    rows = []
    for r in range(REPS):
        X, t, y = simulate(SEED0 + r, N)
        res = es.energy_balancing_weights(X, t, estimand="ATE")
        eff = es.weighted_effect(y, res, n_boot=N_BOOT, rng=SEED0 + r, n_threads=1)
        assert eff.n_failed == 0
        rows.append((eff.estimate[0], eff.std_error[0], eff.ci_low[0], eff.ci_high[0]))
    return tuple(np.array(c) for c in zip(*rows))


def coverage(lo, hi, truth=1.0):
    return float(np.mean((lo <= truth) & (truth <= hi)))


def assert_in_band(cov):
    assert abs(cov - NOMINAL) <= BAND, (
        f"coverage {cov:.3f} of {REPS} data sets is outside 0.95 ± {BAND:.3f} (3 binomial SE)")


@pytest.mark.slow
class TestWeightedEffectCoverage:

    @pytest.mark.xfail(strict=True, reason=(
        "measured: the percentile interval undercovers on this design (0.575 on these 40 "
        "sets; all 17 misses lie above 1). The difference of weighted means is biased "
        "upwards by about one SD at n = 100 (bias +0.32, Monte Carlo SD 0.27), the "
        "resamples shift further up, and the bootstrap SE (mean 0.24) is below the Monte "
        "Carlo SD. docs/benchmarks/effect_coverage.txt has n = 300. Strict: when it "
        "passes, drop the marker."))
    def test_percentile_coverage_of_the_unadjusted_ate(self):
        _, _, lo, hi = intervals()
        assert_in_band(coverage(lo, hi))

    def test_the_band_rejects_a_too_narrow_interval(self):
        # the check has power: estimate ± 0.1·SE (a broken bootstrap) is far outside the band
        est, se, _, _ = intervals()
        with pytest.raises(AssertionError, match="outside 0.95"):
            assert_in_band(coverage(est - 0.1 * se, est + 0.1 * se))

    def test_the_band_accepts_an_interval_of_the_right_size(self):
        # and no more than that: the oracle interval (the estimates less their mean bias, ±
        # 1.96 Monte Carlo SD) covers 0.925 of these sets, inside the band
        est, _, _, _ = intervals()
        centred, sd = est - (est.mean() - 1.0), est.std(ddof=1)
        assert_in_band(coverage(centred - 1.96 * sd, centred + 1.96 * sd))
