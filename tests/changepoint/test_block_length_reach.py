"""The automatic block length sees dependence beyond the first lags (issue 50): a seasonal
AR(12) series, whose lags 1..11 are uncorrelated, gets blocks spanning its seasonal
dependence, where Politis and White's first run of insignificant lags stops at lag 0; and
independent rows still get blocks of about one row."""
import numpy as np

from energystats._core import _blocks
from energystats.changepoint._blocks import auto_block_length


def _seasonal(seed, n=480, s=12, phi=0.6):
    g = np.random.default_rng(seed)
    e = g.normal(size=n + 20 * s)
    x = np.zeros(e.size)
    for t in range(s, x.size):
        x[t] = phi * x[t - s] + e[t]
    return x[20 * s:]


def test_seasonal_series_get_blocks_of_several_periods():
    lengths = [auto_block_length(_seasonal(k)[:, None], [(0, 480)]) for k in range(10)]
    assert min(lengths) >= 24, lengths          # at least two seasonal periods


def test_the_reach_is_what_sees_it(monkeypatch):
    """Reverted to the first-lags rule (no reach), the same series get short blocks: red."""
    monkeypatch.setattr(_blocks, "seasonal_reach", lambda x, acov, n: 0)
    lengths = [auto_block_length(_seasonal(k)[:, None], [(0, 480)]) for k in range(10)]
    assert max(lengths) < 24, lengths


def test_independent_rows_keep_short_blocks():
    g = np.random.default_rng(3)
    lengths = [auto_block_length(g.normal(size=(500, 1)), [(0, 500)]) for _ in range(40)]
    assert np.median(lengths) <= 6 and max(lengths) <= 12, lengths


def test_reach_against_a_loop():
    g = np.random.default_rng(4)
    x = _seasonal(1, n=400)
    x = x - x.mean()
    n = x.size
    acov = np.array([x[:n - k] @ x[k:] / n for k in range(3)])
    from scipy.stats import norm
    z = norm.ppf(1 - 0.005 / (n // 4))
    rho = [float(x[:n - k] @ x[k:] / (x @ x)) for k in range(1, n // 4 + 1)]
    want = 0
    for k in range(1, n // 4 + 1):
        se = np.sqrt((1 + 2 * sum(r * r for r in rho[:k - 1])) / n)
        if abs(rho[k - 1]) > z * se:
            want = k
    assert _blocks.seasonal_reach(x, acov, n) == want
    assert _blocks.seasonal_reach(g.normal(size=3), np.array([1.0]), 3) == 0


def test_the_rule_inputs_are_recorded():
    """The result records what the block length came from (issue 50 item 1): per column the
    Politis-White lengths and lags; the block is the rule applied to them."""
    import math
    import warnings

    import energystats as es

    x = _seasonal(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # the seasonal warning: not the point here
        res = es.e_divisive(x, resampling="block", n_resamples=19, rng=1)
        cross = es.cross_distance_correlation_test(x, np.random.default_rng(5).normal(size=480),
                                                   n_resamples=19, rng=1)
    rule = res.block_rules[0]
    col = rule["columns"][0]
    assert col["reach"] >= 12 and col["m_hat"] < col["reach"]
    want = max(rule["factor"] * col["length"], rule["squares_factor"] * col["length_squares"])
    assert res.block_sizes[0] == min(math.ceil(want), rule["cap"]) == rule["block"]
    crule = cross.block_rule
    assert len(crule["columns"]) == 2 and crule["cap"] == 120
    want = max(max(crule["factor"] * c["length"], crule["squares_factor"] * c["length_squares"])
               for c in crule["columns"])
    assert cross.block_length == min(math.ceil(want), 120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = es.cross_distance_correlation_test(x, x[::-1].copy(), block_length=10,
                                                   n_resamples=19, rng=1)
    assert fixed.block_rule is None
