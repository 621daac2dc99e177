"""weighted_effect with ``backend="dask"``: one task per resample, each seeded by its own child
of the run's SeedSequence, gives the same bits as the local run (the resamples' estimates,
the standard error and the interval), for half-samples and the bootstrap, a continuous
treatment and failed resamples; and the backend's errors.

The cluster is a module-scoped ``distributed.LocalCluster(n_workers=2, threads_per_worker=1,
processes=True)``, as in ``tests/_core/test_backends.py``: the inputs and seeds are pickled
as on a real cluster.
"""
import sys
import warnings

import numpy as np
import pytest

import energystats as es
from energystats.balance import effect as effect_mod

pytest.importorskip("osqp")
pytest.importorskip("distributed")

pytestmark = pytest.mark.dask


def _study(n=80, seed=5, k=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    t = np.clip(np.floor(X[:, 0] + rng.normal(size=n) + k / 2), 0, k - 1).astype(int)
    y = 1.0 * t + X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
    return X, t, y


def _same(got, want):
    for f in ("boot", "estimate", "std_error", "ci_low", "ci_high", "pvalue"):
        assert np.array_equal(getattr(got, f), getattr(want, f)), f   # exact, not approx
    assert (got.seed, got.n_boot, got.n_failed) == (want.seed, want.n_boot, want.n_failed)


class TestWeightedEffectDask:
    @pytest.mark.parametrize("se,ci", [("subsample", "normal"), ("bootstrap", "percentile")])
    def test_same_bits_as_the_local_run(self, client, se, ci):
        X, t, y = _study()
        res = es.energy_balancing_weights(X, t)
        kw = dict(se=se, ci_method=ci, n_boot=24, rng=2)
        _same(es.weighted_effect(y, res, outcome_model=None, backend="dask", **kw),
              es.weighted_effect(y, res, outcome_model=None, n_threads=1, **kw))

    def test_same_bits_as_worker_processes(self, client, monkeypatch):
        X, t, y = _study(k=3, seed=6, n=90)
        res = es.energy_balancing_weights(X, t, cells=10, rng=3)   # resamples draw cells too
        monkeypatch.setattr(effect_mod, "PARALLEL_AFTER_S", 0.0)   # always the workers
        local = es.weighted_effect(y, res, covariates=True, n_boot=20, rng=4, n_threads=2)
        _same(es.weighted_effect(y, res, covariates=True, n_boot=20, rng=4, backend="dask"),
              local)

    def test_continuous_treatment(self, client):
        rng = np.random.default_rng(1)
        X = rng.normal(size=(70, 2))
        a = X[:, 0] + rng.normal(size=70)
        y = 0.5 * a + X[:, 1] + rng.normal(size=70)
        res = es.independence_weights(X, a)
        _same(es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=7, backend="dask"),
              es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=7, n_threads=1))

    def test_failed_resamples_are_counted_the_same(self, client, monkeypatch):
        X, t, y = _study()
        res = es.energy_balancing_weights(X, t)
        original = effect_mod._replicate

        def failing(common, seed_seq):
            if seed_seq.spawn_key[-1] % 20 == 3:
                return None
            return original(common, seed_seq)

        monkeypatch.setattr(effect_mod, "_replicate", failing)
        with pytest.warns(es.BalanceWarning, match="2 of 40"):
            want = es.weighted_effect(y, res, outcome_model=None, n_boot=40, rng=1, n_threads=1)
        with pytest.warns(es.BalanceWarning, match="2 of 40"):
            got = es.weighted_effect(y, res, outcome_model=None, n_boot=40, rng=1, backend="dask")
        _same(got, want)

    # -- input validation --
    def test_errors(self, client):
        X, t, y = _study()
        res = es.energy_balancing_weights(X, t)
        with pytest.raises(ValueError, match="`backend` must be None, 'threads' or 'dask'"):
            es.weighted_effect(y, res, outcome_model=None, backend="spark")
        with pytest.raises(ValueError, match="se='sandwich' there are none"):
            es.weighted_effect(y, res, outcome_model=None, se="sandwich", backend="dask")
        with pytest.raises(ValueError, match="`n_threads`"):
            es.weighted_effect(y, res, outcome_model=None, n_threads=2, backend="dask")
        with pytest.raises(ValueError, match="progress"):
            es.weighted_effect(y, res, outcome_model=None, progress=True, backend="dask")


def test_without_dask(monkeypatch):
    X, t, y = _study()
    res = es.energy_balancing_weights(X, t)
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r'pip install "energy-statistics\[dask\]"'):
        es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=1, backend="dask")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=1, n_threads=1).n_boot == 20
