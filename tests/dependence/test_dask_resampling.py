"""``backend="dask"`` for the resampling tests that keep their data in memory —
``conditional_independence_test``, ``adcf_test``, ``cross_distance_correlation_test`` and
``independence_coefficient_test``: their resamples as tasks give the same bits as the threads
(null distributions, p-values) for the same seed, over several tasks; ``compute=False`` gives a
Delayed of the same result; Dask input is refused.

The cluster is the module-scoped two-worker ``LocalCluster(processes=True)`` of
``tests/conftest.py``: the tasks, the engines and the Generators are pickled as on a real
cluster.
"""
import warnings

import numpy as np
import pytest

import energystats as es
from energystats.dependence import _dask as dep_dask

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

pytestmark = pytest.mark.dask


@pytest.fixture
def small_tasks(monkeypatch):
    """A few resamples per task: many tasks, the last one partial."""
    monkeypatch.setattr(dep_dask, "LAGS_TASK_WORK", 2e5)


def _same(got, want, fields):
    for f in fields:
        a, b = getattr(got, f), getattr(want, f)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), f
        else:
            assert a == b, f


def _ar1(g, n, phi):
    x = np.zeros(n)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + g.normal()
    return x


TS_FIELDS = ("statistic", "pvalue", "pvalues", "critical_values", "null_distribution",
             "n_resamples", "seed")


def test_adcf_same_bits_as_threads(client, small_tasks):
    x = _ar1(np.random.default_rng(0), 150, 0.3)
    assert dep_dask.LAGS_TASK_WORK // (150 * 150 * 3) < 59     # several tasks
    want = es.adcf_test(x, lags=3, n_resamples=59, rng=4)
    got = es.adcf_test(x, lags=3, n_resamples=59, rng=4, backend="dask")
    _same(got, want, TS_FIELDS)
    assert want.pvalue < 0.05                                 # a dependent series


@pytest.mark.parametrize("resampling", ["block", "permutation"])
def test_cross_same_bits_as_threads(client, small_tasks, resampling):
    g = np.random.default_rng(1)
    x = _ar1(g, 140, 0.5)
    y = np.roll(x, 2) + g.normal(size=140)
    kw = dict(lags=[-1, 0, 1, 2], n_resamples=49, rng=9, resampling=resampling)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                       # the series' own diagnostics
        want = es.cross_distance_correlation_test(x, y, **kw)
        got = es.cross_distance_correlation_test(x, y, backend="dask", **kw)
    _same(got, want, TS_FIELDS + ("block_length",))


def test_conditional_same_bits_as_threads(client, small_tasks):
    g = np.random.default_rng(2)
    z = g.normal(size=70)
    x, y = z + 0.5 * g.normal(size=70), z ** 2 + 0.5 * g.normal(size=70)
    assert dep_dask._boot_per_task(70, 45) < 45               # several tasks
    want = es.conditional_independence_test(x, y, z, n_resamples=45, rng=3)
    got = es.conditional_independence_test(x, y, z, n_resamples=45, rng=3, backend="dask",
                                           n_threads=2)
    _same(got, want, ("statistic", "pvalue", "pvalue_se", "null_distribution", "n_resamples",
                      "seed", "bandwidth"))


def test_conditional_generator_rng_not_advanced(client, small_tasks):
    # a Generator is copied into the graph, as the other Dask tests take it; the threads
    # advance it, so both start from copies of one state
    g = np.random.default_rng(5)
    z = g.normal(size=50)
    x, y = z + g.normal(size=50), z + g.normal(size=50)
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    want = es.conditional_independence_test(x, y, z, n_resamples=30, rng=a)
    got = es.conditional_independence_test(x, y, z, n_resamples=30, rng=b, backend="dask")
    assert np.array_equal(got.null_distribution, want.null_distribution)


@pytest.mark.parametrize("n, R", [(30, 59), (5, 200)])     # random; every permutation (5! <= R)
def test_independence_coefficient_same_bits_as_threads(client, n, R, monkeypatch):
    from energystats.dependence import mvi

    monkeypatch.setattr(mvi, "_BLOCK", 30 * 30 * 7)           # about 7 permutations a batch
    g = np.random.default_rng(6)
    x = g.normal(size=(n, 2))
    y = x[:, :1] ** 2 + 0.5 * g.normal(size=(n, 1))
    want = es.independence_coefficient_test(x, y, n_resamples=R, rng=2)
    got = es.independence_coefficient_test(x, y, n_resamples=R, rng=2, backend="dask")
    _same(got, want, ("statistic", "pvalue", "pvalue_se", "null_distribution", "n_resamples",
                      "exact", "seed"))
    assert want.exact == (n == 5)


def test_compute_false_gives_a_delayed_of_the_result(client, small_tasks):
    x = _ar1(np.random.default_rng(7), 100, 0.2)
    lazy = es.adcf_test(x, lags=2, n_resamples=19, rng=1, backend="dask", compute=False)
    assert hasattr(lazy, "compute")
    _same(lazy.compute(), es.adcf_test(x, lags=2, n_resamples=19, rng=1), TS_FIELDS)
    g = np.random.default_rng(8)
    x, y = g.normal(size=(12, 1)), g.normal(size=(12, 1))
    lazy = es.independence_coefficient_test(x, y, n_resamples=0, backend="dask", compute=False)
    assert lazy.compute().pvalue is None


@pytest.mark.parametrize("call", [
    lambda v: es.adcf_test(v, lags=1, n_resamples=9, backend="dask"),
    lambda v: es.cross_distance_correlation_test(v, v, lags=1, n_resamples=9, backend="dask"),
    lambda v: es.conditional_independence_test(v, v, v, n_resamples=9, backend="dask"),
    lambda v: es.independence_coefficient_test(v, v, n_resamples=9, backend="dask"),
])
def test_dask_input_is_refused(call):
    v = da.from_array(np.random.default_rng(0).normal(size=40), chunks=20)
    with pytest.raises(TypeError, match="holds its n×n matrices in memory"):
        call(v)


def test_bad_backend_and_compute():
    x = np.random.default_rng(0).normal(size=40)
    with pytest.raises(ValueError, match="`backend` must be None, 'threads' or 'dask'"):
        es.adcf_test(x, lags=1, n_resamples=9, backend="spark")
    with pytest.raises(ValueError, match="`compute=False` .* needs backend='dask'"):
        es.adcf_test(x, lags=1, n_resamples=9, compute=False)
