"""E-Divisive with ``backend="dask"``: the permuted re-searches as tasks give the same bits as
the threads (change points, statistics, p-values, permutations used), for both resampling
schemes and the early-stopping rules; and the backend's errors.

The cluster is a module-scoped ``distributed.LocalCluster(n_workers=2, threads_per_worker=1,
processes=True)``, as in ``tests/_core/test_backends.py``: the tasks and the Generators they
carry are pickled as on a real cluster.
"""
import sys

import numpy as np
import pytest

import energystats as es
from energystats._lib import _changepoint as K
from energystats.changepoint import _dask as cp_dask

pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

pytestmark = pytest.mark.dask


@pytest.fixture
def small_tasks(monkeypatch):
    """About 3 permutations of a T = 150 re-search per task: many tasks, and rounds whose
    draws continue one another across tasks."""
    monkeypatch.setattr(cp_dask, "TASK_CELLS", 3.5e4)


def _series(seed=3):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(0, 1, (60, 2)), rng.normal(1.5, 1, (50, 2)),
                           rng.normal(0, 1, (40, 2))])


FIELDS = ("changepoints", "order_found", "statistics", "pvalues", "n_resamples", "decisions",
          "rejected", "rejected_statistic", "rejected_pvalue", "block_sizes", "seed")


def _same(got, want):
    for f in FIELDS:
        a, b = getattr(got, f), getattr(want, f)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f   # exact, not approx
        else:
            assert a == b, f


class TestEDivisiveDask:
    @pytest.mark.parametrize("kappa", ["search", "end"])
    def test_same_bits_as_threads(self, client, small_tasks, kappa):
        x = _series()
        size = cp_dask.per_task(99, [(0, 150)])   # several tasks, the last one partial
        assert size % max(1, K.lanes()) == 0 and 99 % size and size < 99
        want = es.e_divisive(x, min_size=15, n_resamples=99, rng=5, kappa=kappa)
        got = es.e_divisive(x, min_size=15, n_resamples=99, rng=5, kappa=kappa, backend="dask")
        assert len(want.changepoints) == 2 and want.rejected is not None  # three tests ran
        _same(got, want)

    @pytest.mark.parametrize("block_size", [None, 4])
    def test_block_permutations(self, client, small_tasks, block_size):
        x = _series(seed=4)
        kw = dict(min_size=15, n_resamples=59, rng=11, resampling="block", block_size=block_size)
        want = es.e_divisive(x, **kw)
        got = es.e_divisive(x, backend="dask", n_threads=2, **kw)
        assert len(want.block_sizes) >= 2
        _same(got, want)

    @pytest.mark.parametrize("method", ["sequential", "decision"])
    @pytest.mark.parametrize("resampling", ["permutation", "block"])
    def test_early_stopping(self, client, small_tasks, method, resampling):
        """Rounds of 16, 32, ... on Dask, the rule between them: it stops on the same
        permutation as on the threads (which batch otherwise)."""
        x = _series()
        kw = dict(min_size=15, n_resamples=199, rng=7, pvalue_method=method, resampling=resampling)
        want = es.e_divisive(x, **kw)
        got = es.e_divisive(x, backend="dask", **kw)
        assert min(want.n_resamples) < 199   # a rule stopped early (not at a round's end)
        assert all(n % 16 for n in want.n_resamples if n < 199)
        _same(got, want)

    def test_rounds_draw_on(self, client, monkeypatch):
        """A round's draws continue from where the previous round's last task left the
        Generator (one permutation a task; rounds 16, 32, ...)."""
        monkeypatch.setattr(cp_dask, "TASK_CELLS", 1.0)
        x = np.random.default_rng(4).normal(size=(150, 2))  # no change: p about 0.15
        kw = dict(min_size=15, n_resamples=199, rng=2, pvalue_method="sequential")
        want = es.e_divisive(x, **kw)
        assert want.n_resamples == (65,)   # the rule stopped in the third round (16 + 32 + 64)
        _same(es.e_divisive(x, backend="dask", **kw), want)

    def test_untested_splits_need_no_dask(self, client):
        x = _series()
        with pytest.raises(ValueError, match="`backend`: for the permutation tests"):
            es.e_divisive(x, min_size=15, n_changepoints=2, backend="dask")
        fixed = es.e_divisive(x, min_size=15, n_changepoints=2, backend="threads")
        assert fixed.changepoints.tolist() == [61, 110]

    # -- input validation --
    def test_errors(self, client):
        x = _series()
        with pytest.raises(ValueError, match="`backend` must be None, 'threads' or 'dask'"):
            es.e_divisive(x, backend="spark")
        with pytest.raises(ValueError, match="progress"):
            es.e_divisive(x, backend="dask", progress=True)
        with pytest.raises(TypeError, match="`X` is a Dask collection.*compute it first"):
            es.e_divisive(da.from_array(x), backend="dask")

    def test_without_dask(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "dask", None)
        x = _series()
        with pytest.raises(ImportError, match=r'pip install "energy-statistics\[dask\]"'):
            es.e_divisive(x, min_size=15, n_resamples=19, backend="dask")
        assert es.e_divisive(x, min_size=15, n_resamples=99, rng=5).changepoints.tolist() == [61, 110]


class TestEAggloDask:
    """E-Agglo's block sums of coarser initial segments as Dask tiles."""

    def _case(self):
        rng = np.random.default_rng(11)
        x = np.concatenate([rng.normal(0, 1, (900, 2)), rng.normal(1.0, 1, (600, 2)),
                            rng.standard_t(3, (500, 2))])
        return x, np.repeat(np.arange(40), 50)

    @pytest.mark.parametrize("definition", ["ecp", "u-statistic"])
    def test_same_path_as_threads(self, client, definition, monkeypatch):
        from distributed import get_task_stream

        from energystats._core import _dask as core_dask

        monkeypatch.setattr(core_dask, "TILE_WORK", 2e5)  # several row blocks: many tiles
        x, member = self._case()
        # other bits, other task keys: the scheduler may still hold the other case's results
        x = x + (definition == "ecp")
        want = es.e_agglo(x, member=member, definition=definition)
        with get_task_stream(client) as stream:
            got = es.e_agglo(x, member=member, definition=definition, backend="dask")
        tiles = [t for t in stream.data if str(t["key"]).strip("('").startswith("_tile_sums")]
        assert len(tiles) > 3            # the sums ran as tiles on the cluster's workers
        assert want.changepoints.tolist() == [900, 1500]
        assert got.changepoints.tolist() == want.changepoints.tolist()
        assert ([c.tolist() for c in got.path_changepoints]
                == [c.tolist() for c in want.path_changepoints])
        # the tiles add their sums in another order than the streamed kernel's stripes
        np.testing.assert_allclose(got.path["fit"], want.path["fit"], rtol=1e-12)
        assert got.penalty == pytest.approx(want.penalty, rel=1e-12)

    def test_refusals(self, client):
        x, member = self._case()
        with pytest.raises(ValueError, match=r"backend='dask' needs coarser initial segments"):
            es.e_agglo(x[:100], backend="dask")
        with pytest.raises(TypeError, match=r"e_agglo keeps the series in memory"):
            es.e_agglo(da.from_array(x, chunks=(500, 2)), member=member, backend="dask")
        with pytest.raises(ValueError, match=r"`backend` must be None, 'threads' or 'dask'"):
            es.e_agglo(x, member=member, backend="cluster")
        with pytest.raises(ValueError, match=r"3000 initial segments: every tile task would "
                                             r"return a 3000×3000 table \(69 MiB; at most 64"):
            es.e_agglo(np.zeros((6000, 1)), member=np.repeat(np.arange(3000), 2), backend="dask")
