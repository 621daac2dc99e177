"""The permutation test of the bias-corrected distance correlation (statistic='bcdcor' with
permutations; hyppo's ``Dcorr(bias=False).test(auto=False)``)."""
import itertools

import numpy as np
import pytest

import energystats as es


def _ref_u_dcor(x, y):
    # R*_n from the U-centred matrices, written out with plain loops
    n = len(x)
    a = np.array([[np.linalg.norm(x[i] - x[j]) for j in range(n)] for i in range(n)])
    b = np.array([[np.linalg.norm(y[i] - y[j]) for j in range(n)] for i in range(n)])

    def u(d):
        r = d.sum(axis=1)
        out = np.empty_like(d)
        for i in range(n):
            for j in range(n):
                out[i, j] = 0.0 if i == j else (d[i, j] - r[i] / (n - 2) - r[j] / (n - 2)
                                                + r.sum() / ((n - 1) * (n - 2)))
        return out

    A, B = u(a), u(b)
    return (A * B).sum() / np.sqrt((A * A).sum() * (B * B).sum())


def test_exact_null_is_every_permutations_statistic():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(6, 2)), rng.normal(size=(6, 1))
    res = es.independence_test(x, y, statistic="bcdcor", exact=True)
    ref = sorted(6 * _ref_u_dcor(x, y[list(p)]) for p in itertools.permutations(range(6)))
    np.testing.assert_allclose(np.sort(res.null_distribution), ref, rtol=1e-10, atol=1e-12)
    assert res.statistic == pytest.approx(6 * _ref_u_dcor(x, y), rel=1e-12)
    expected = (np.sum(np.asarray(ref) >= res.statistic - 1e-12)) / 720   # exact: no +1
    assert res.pvalue == pytest.approx(expected)


def test_differs_from_the_v_statistic_test():
    rng = np.random.default_rng(2)
    x = rng.normal(size=30)
    y = x ** 2 + rng.normal(size=30)
    u = es.independence_test(x, y, statistic="bcdcor", n_resamples=199, rng=3)
    v = es.independence_test(x, y, statistic="dcor", n_resamples=199, rng=3)
    assert not np.allclose(u.null_distribution / 30, v.null_distribution)


def test_hyppo_statistic_and_its_linear_case():
    hyppo = pytest.importorskip("hyppo")
    from hyppo.independence import Dcorr
    from hyppo.tools import linear

    np.random.seed(123456789)
    x, y = linear(100, 1)
    res = es.independence_test(x, y, statistic="bcdcor", n_resamples=999, rng=0)
    assert res.statistic / 100 == pytest.approx(Dcorr(bias=False).statistic(x, y), rel=1e-12)
    assert round(res.statistic / 100, 2) == 1.0          # hyppo's test_linear_oned: 1.0
    assert res.pvalue == pytest.approx(1 / 1000)          # and p = 1/1000


def test_refusals():
    x = np.random.default_rng(0).normal(size=(40, 2))
    with pytest.raises(ValueError, match="U-centred matrices .* `memory_budget`"):
        es.independence_test(x, x[:, :1], statistic="bcdcor", n_resamples=9, rng=0,
                             memory_budget=1000)
