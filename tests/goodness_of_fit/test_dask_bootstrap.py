"""The goodness-of-fit tests with ``backend="dask"``: the parametric bootstrap's batches as
tasks give the same bits as this process (null distribution, p-value, replicates used), with
the early-stopping rules too; and the backend's errors.

The cluster is a module-scoped ``distributed.LocalCluster(n_workers=2, threads_per_worker=1,
processes=True)``, as in ``tests/_core/test_backends.py``: the tasks, the SciPy laws and the
Generators they carry are pickled as on a real cluster.
"""
import sys

import numpy as np
import pytest

import energystats as es
from energystats.goodness_of_fit import _dask as gof_dask

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

pytestmark = pytest.mark.dask


@pytest.fixture
def small_tasks(monkeypatch):
    """A few replicates per task: many tasks, whose draws continue one another."""
    monkeypatch.setattr(gof_dask, "TASK_WORK", 1000)


def _same(got, want):
    assert np.array_equal(got.null_distribution, want.null_distribution)   # exact, not approx
    assert got.pvalue == want.pvalue and got.statistic == want.statistic
    assert got.n_resamples == want.n_resamples and got.seed == want.seed
    assert got.pvalue_se == want.pvalue_se
    assert getattr(got, "decision", None) == getattr(want, "decision", None)


RNG = np.random.default_rng(3)
X1, X3, XG, XP = (RNG.normal(size=120), RNG.normal(size=(60, 3)), RNG.gamma(2.0, 3.0, size=80),
                  RNG.poisson(3.0, size=90))


class TestNormalityDask:
    @pytest.mark.parametrize("x", [X1, X3], ids=["d=1", "d=3"])
    def test_same_bits(self, client, small_tasks, x):
        assert gof_dask.per_task(99, x.size) < 99  # several tasks
        _same(es.normality_test(x, n_resamples=99, rng=5, backend="dask"),
              es.normality_test(x, n_resamples=99, rng=5))

    @pytest.mark.parametrize("method,seed", [("sequential", 5), ("decision", 9)])
    def test_early_stopping(self, client, small_tasks, method, seed):
        want = es.normality_test(X1, n_resamples=199, rng=seed, pvalue_method=method)
        assert 16 < want.n_resamples < 199 and want.n_resamples % 16  # stopped inside a round
        _same(es.normality_test(X1, n_resamples=199, rng=seed, pvalue_method=method,
                                backend="dask"), want)

    def test_one_task_and_a_generator(self, client):
        """A bootstrap below one task's work is one task; a Generator is copied, not advanced."""
        assert gof_dask.per_task(99, 120) == 99
        gen = np.random.default_rng(8)
        got = es.normality_test(X1, n_resamples=99, rng=gen, backend="dask")
        assert gen.bit_generator.state == np.random.default_rng(8).bit_generator.state
        _same(got, es.normality_test(X1, n_resamples=99, rng=np.random.default_rng(8)))

    # -- input validation --
    def test_errors(self, client):
        with pytest.raises(ValueError, match="`backend` must be None, 'threads' or 'dask'"):
            es.normality_test(X1, backend="spark")
        with pytest.raises(ValueError, match="method='limit'"):
            es.normality_test(X1, method="limit", backend="dask")
        with pytest.raises(TypeError, match="`x` is a Dask collection.*compute it first"):
            es.normality_test(da.from_array(X1), backend="dask")
        with pytest.raises(TypeError, match="`x` is a Dask collection"):
            es.gof_test(da.from_array(XG), "gamma", backend="dask")


class TestGofDask:
    @pytest.mark.parametrize("dist,known", [("gamma", {"loc": 0}), ("expon", None),
                                            ("poisson", None)])
    def test_same_bits(self, client, small_tasks, dist, known):
        x = XP if dist == "poisson" else XG
        kw = dict(known_params=known, n_resamples=99, rng=7)
        _same(es.gof_test(x, dist, backend="dask", **kw), es.gof_test(x, dist, **kw))

    def test_early_stopping(self, client, small_tasks):
        kw = dict(known_params={"loc": 0}, n_resamples=199, rng=5, pvalue_method="decision")
        want = es.gof_test(XG, "gamma", **kw)
        assert want.n_resamples < 199 and want.decision is not None
        _same(es.gof_test(XG, "gamma", backend="dask", **kw), want)


class TestPoissonDask:
    def test_all_share_the_replicates(self, client, small_tasks):
        want = es.poisson_test(XP, statistic="all", n_resamples=99, rng=4)
        got = es.poisson_test(XP, statistic="all", n_resamples=99, rng=4, backend="dask")
        for w in ("energy", "m-cvm", "m-ad"):
            _same(got[w], want[w])

    def test_early_stopping(self, client, small_tasks):
        kw = dict(statistic="m-ad", n_resamples=199, rng=4, pvalue_method="sequential")
        want = es.poisson_test(XP, **kw)
        assert want.n_resamples < 199
        _same(es.poisson_test(XP, backend="dask", **kw), want)

    def test_no_resamples(self, client):
        got = es.poisson_test(XP, n_resamples=0, backend="dask")
        assert got.pvalue is None and got.null_distribution.size == 0


def test_without_dask(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    for call in (lambda: es.normality_test(X1, backend="dask"),
                 lambda: es.gof_test(XG, "expon", backend="dask"),
                 lambda: es.poisson_test(XP, backend="dask")):
        with pytest.raises(ImportError, match=r'pip install "energy-statistics\[dask\]"'):
            call()
    assert es.normality_test(X1, n_resamples=19, rng=1).n_resamples == 19
