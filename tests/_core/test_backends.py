"""The Dask backend (energystats._core._dask and the concepts' Dask drivers): same numbers as the threads backend, lazy input
never materialised by validation, p-values independent of workers and chunking.

The cluster is a module-scoped ``distributed.LocalCluster(n_workers=2, threads_per_worker=1,
processes=True)``: tasks run in other processes, so every task and its arguments are pickled
as on a real cluster.
"""
import sys

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core import _dask
from energystats.dependence import matrix, mutual, partial
from energystats._core._metrics import resolve_metric

from ..reference import ref_group_sums

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
import dask  # noqa: E402
from dask.delayed import Delayed  # noqa: E402

pytestmark = pytest.mark.dask


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 128 rows (statistics) and 256 rows (permutation tiles): many tiles on small data."""
    monkeypatch.setattr(_dask, "TILE_WORK", 128.0**2)
    monkeypatch.setattr(_dask, "PERM_ROWS", 256)


def _data(seed=0, n=700, m=530, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(m, d)) + 0.15


METRICS = [("energy", 1.0, 1.0), ("energy", 0.5, 1.0), ("energy", 2.0, 1.0), ("laplacian", 1.0, 0.7),
           ("gaussian", 1.0, 1.3)]


# -- statistics -----------------------------------------------------------------------

class TestStatistics:
    def test_blocks_cover_tiles(self, small_blocks):
        assert _dask.block_rows(700, 3) == 128
        assert _dask.block_rows(700, 3, perm=True) == 256
        assert _dask.block_rows(50, 3) == 50

    @pytest.mark.parametrize("metric, exponent, sigma", METRICS)
    def test_group_sums_equal_double_loop(self, client, small_blocks, metric, exponent, sigma):
        x, y = _data(n=180, m=150)
        X = np.vstack([x, y])
        codes = np.random.default_rng(1).integers(0, 3, X.shape[0])
        met = resolve_metric(metric, exponent, sigma)
        data = _dask.as_dask_data(da.from_array(X, chunks=(97, 3)))
        M, scale = dask.compute(*_dask.lazy_group_sums(data, codes, 3, met))
        assert len(_dask._blocks(data, _dask.block_rows(data.n, data.d))[0]) == 3  # 6 tiles
        ref = np.array(ref_group_sums(X, codes, metric, exponent if metric == "energy" else sigma)[2])
        np.testing.assert_allclose(scale.apply(M), ref, rtol=1e-12)
        assert np.array_equal(M, M.T)

    @pytest.mark.parametrize("metric, exponent, sigma", METRICS)
    @pytest.mark.parametrize("estimator", ["V", "U"])
    def test_energy_distance(self, client, small_blocks, metric, exponent, sigma, estimator):
        x, y = _data()
        kw = dict(metric=metric, exponent=exponent, sigma=sigma, estimator=estimator)
        want = es.energy_distance(x, y, **kw)
        got = es.energy_distance(da.from_array(x, chunks=(200, 3)), da.from_array(y, chunks=(111, 3)), **kw)
        assert got == pytest.approx(want, rel=1e-12)
        assert es.energy_distance(x, y, backend="dask", **kw) == pytest.approx(want, rel=1e-12)

    def test_float32_and_integers(self, client, small_blocks):
        x, y = _data()
        x32, y32 = x.astype(np.float32), y.astype(np.float32)
        assert es.energy_distance(da.from_array(x32, chunks=100), y32) == pytest.approx(
            es.energy_distance(x32, y32), rel=1e-12)
        xi, yi = np.round(10 * x).astype(np.int64), np.round(10 * y).astype(np.int32)
        assert es.energy_distance(da.from_array(xi, chunks=100), da.from_array(yi)) == pytest.approx(
            es.energy_distance(xi, yi), rel=1e-12)

    def test_extreme_magnitudes(self, client, small_blocks):
        x, y = _data()
        for s in (1e-300, 1e300):
            assert es.energy_distance(da.from_array(x * s, chunks=100), y * s) == pytest.approx(
                es.energy_distance(x * s, y * s), rel=1e-12)

    @pytest.mark.parametrize("metric, exponent, sigma", METRICS[:1] + METRICS[3:])
    def test_dispersion(self, client, small_blocks, metric, exponent, sigma):
        x, y = _data()
        X = np.vstack([x, y])
        lab = np.random.default_rng(2).choice(["a", "b", "c", "d"], X.shape[0])
        kw = dict(metric=metric, exponent=exponent, sigma=sigma)
        want = es.dispersion(X, lab, **kw)
        got = es.dispersion(da.from_array(X, chunks=(150, 3)), lab, **kw)
        for f in ("W", "S", "T", "F"):
            assert getattr(got, f) == pytest.approx(getattr(want, f), rel=1e-12), f
        np.testing.assert_allclose(got.g, want.g, rtol=1e-12)
        assert got.groups == want.groups and np.array_equal(got.sizes, want.sizes)

    def test_dask_dataframe_by(self, client, small_blocks):
        x, y = _data()
        df = pd.DataFrame(np.vstack([x, y]), columns=["u", "v", "w"])
        df["g"] = ["x"] * len(x) + ["y"] * len(y)
        df["note"] = "text"
        ddf = dd.from_pandas(df, npartitions=4)
        want = es.energy_distance(df, by="g", numeric_only=True)
        assert es.energy_distance(ddf, by="g", numeric_only=True) == pytest.approx(want, rel=1e-12)
        res = es.dispersion(ddf, by="g", columns=["u", "w"])
        ref = es.dispersion(df, by="g", columns=["u", "w"])
        assert res.columns == ["u", "w"] and res.W == pytest.approx(ref.W, rel=1e-12)
        with pytest.raises(TypeError, match="not numeric"):
            es.dispersion(ddf, by="g")


# -- laziness -------------------------------------------------------------------------

def _exploding(n, d):
    def boom():
        raise RuntimeError("the input was computed")

    return da.from_delayed(dask.delayed(boom)(), shape=(n, d), dtype=np.float64)


class TestLazy:
    def test_validation_never_computes_input(self, client, small_blocks):
        bad = _exploding(300, 3)
        y = np.zeros((40, 3))
        lab = np.arange(300) % 2
        lazy = [es.energy_distance(bad, y, compute=False),
                es.energy_distance(bad, y, estimator="U", compute=False),
                es.dispersion(bad, lab, compute=False),
                es.energy_test(bad, y, rng=1, compute=False),
                es.energy_test(bad, labels=lab, strata=np.arange(300) % 3, rng=1, compute=False),
                es.disco(bad, labels=lab, rng=1, compute=False)]
        for obj in lazy:
            assert isinstance(obj, Delayed)
            with pytest.raises(RuntimeError, match="the input was computed"):
                obj.compute()

    def test_compute_false_gives_the_result(self, client, small_blocks):
        x, y = _data()
        lazy = es.energy_test(da.from_array(x, chunks=100), y, rng=4, n_resamples=99, compute=False)
        assert isinstance(lazy, Delayed)
        res = lazy.compute()
        assert isinstance(res, es.EnergyTestResult) and res.engine == "dask"
        assert res.pvalue == es.energy_test(x, y, rng=4, n_resamples=99).pvalue

    def test_non_finite_found_in_the_tasks(self, client, small_blocks):
        x, y = _data()
        x[417, 1] = np.nan
        with pytest.raises(ValueError, match=r"`x` contains NaN .*first row 417"):
            es.energy_distance(da.from_array(x, chunks=100), y)
        y[3, 0] = np.inf
        with pytest.raises(ValueError, match=r"`samples\[1\]` contains inf"):
            es.energy_test(x[:400], da.from_array(y, chunks=50), rng=0)


# -- permutation tests ------------------------------------------------------------------

def _same(got, want):
    """Two results equal field by field (arrays to the bit)."""
    import dataclasses

    assert type(got) is type(want)
    for f in dataclasses.fields(want):
        a, b = getattr(got, f.name), getattr(want, f.name)
        if isinstance(b, np.ndarray):
            assert np.array_equal(a, b), f.name
        else:
            assert a == b, f.name
    return True


def _close_null(got, want, scale):
    """Null distributions equal up to the statistic's rounding (its terms are of size ``scale``)."""
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * scale)


class TestPermutation:
    @pytest.mark.parametrize("metric, exponent, sigma", [METRICS[0], METRICS[3]])
    def test_energy_test_equals_threads(self, client, small_blocks, metric, exponent, sigma):
        x, y = _data(n=400, m=300)
        kw = dict(metric=metric, exponent=exponent, sigma=sigma, n_resamples=199, rng=7)
        want = es.energy_test(x, y, **kw)
        got = es.energy_test(da.from_array(x, chunks=(130, 3)), y, **kw)
        assert got.statistic == pytest.approx(want.statistic, rel=1e-12)
        assert got.pvalue == want.pvalue and got.seed == want.seed == 7
        _close_null(got.null_distribution, want.null_distribution, want.statistic + 1)
        np.testing.assert_allclose(got.energy_distances, want.energy_distances, rtol=1e-12, atol=0)

    def test_three_groups_strata_and_disco(self, client, small_blocks):
        x, y = _data(n=400, m=300)
        X = np.vstack([x, y])
        rng = np.random.default_rng(3)
        lab = rng.integers(0, 3, X.shape[0])
        lab[:50] = 0  # unequal sizes: the largest group is not the last code
        strata = rng.integers(0, 2, X.shape[0])
        Xd = da.from_array(X, chunks=(233, 3))
        for f, kw in [(es.energy_test, dict(labels=lab)), (es.energy_test, dict(labels=lab, strata=strata)),
                      (es.disco, dict(labels=lab)), (es.disco, dict(labels=lab, strata=strata))]:
            want = f(X, n_resamples=99, rng=11, **kw)
            got = f(Xd, n_resamples=99, rng=11, **kw)
            assert got.statistic == pytest.approx(want.statistic, rel=1e-12)
            assert got.pvalue == want.pvalue
            _close_null(got.null_distribution, want.null_distribution, abs(want.statistic) + 1)
        res = es.disco(Xd, labels=lab, n_resamples=0)
        ref = es.disco(X, labels=lab, n_resamples=0)
        assert res.pvalue is None and res.null_distribution.shape == (0,)
        for f in ("between", "within", "total"):
            assert getattr(res, f) == pytest.approx(getattr(ref, f), rel=1e-12)

    @pytest.mark.parametrize("conditional", [True, False])
    def test_disco_several_factors(self, client, small_blocks, conditional):
        rng = np.random.default_rng(12)
        n = 300
        b = rng.integers(0, 2, n)
        a = np.where(rng.random(n) < 0.85, b, 1 - b)
        df = pd.DataFrame({"y": rng.normal(size=n) + 1.5 * b, "z": rng.normal(size=n), "a": a, "b": b,
                           "c": rng.integers(0, 3, n)})
        kw = dict(by=["a", "b", "c"], columns=["y", "z"], n_resamples=99, rng=5, conditional=conditional)
        want = es.disco(df, **kw)
        for data in (df, dd.from_pandas(df, npartitions=3)):
            got = es.disco(data, backend="dask", **kw)
            assert np.array_equal(got.pvalue, want.pvalue)  # the same relabellings, factor after factor
            np.testing.assert_allclose(got.statistic, want.statistic, rtol=1e-12)
            _close_null(got.null_distribution, want.null_distribution, float(np.max(want.statistic)) + 1)
            assert got.test == want.test and got.factors == want.factors
        X = df[["y", "z"]].to_numpy()
        got = es.disco(da.from_array(X, chunks=(100, 2)), labels=df[["a", "b"]], n_resamples=99, rng=5,
                       conditional=conditional)
        want = es.disco(X, labels=df[["a", "b"]], n_resamples=99, rng=5, conditional=conditional)
        assert np.array_equal(got.pvalue, want.pvalue) and got.factors == ["a", "b"]

    def test_warnings_reach_the_caller(self, client):
        # formed in a worker process, a warning would stay there: the result is finished here
        from energystats._core._permutation import DegenerateStatisticWarning

        X = np.zeros((20, 2))  # W = 0: F = 0/0
        with pytest.warns(DegenerateStatisticWarning, match="not finite"):
            res = es.disco(da.from_array(X, chunks=(7, 2)), labels=np.arange(20) % 2, n_resamples=9, rng=0)
        assert res.pvalue is None or np.isnan(res.pvalue)

    def test_exact_enumeration(self, client):
        a, b = np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.5])
        want = es.energy_test(a, b)
        got = es.energy_test(a, b, backend="dask")
        assert got.exact and want.exact and got.pvalue == want.pvalue == 0.1
        np.testing.assert_allclose(got.null_distribution, want.null_distribution, rtol=1e-13)

    def test_same_pvalue_any_workers_and_chunking(self, client, small_blocks):
        x, y = _data(seed=5, n=400, m=380)
        y[:, 0] -= 0.1  # a p-value away from the extremes
        res = [es.energy_test(da.from_array(x, chunks=c), da.from_array(y, chunks=c), n_resamples=199,
                              rng=2024) for c in ((400, 3), (61, 1))]
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      dashboard_address=":0", silence_logs=40) as one, \
                distributed.Client(one, set_as_default=False) as c1:
            lazy = es.energy_test(da.from_array(x, chunks=(97, 3)), y, n_resamples=199, rng=2024,
                                  compute=False)
            res.append(c1.compute(lazy).result())
        assert 0.01 < res[0].pvalue < 0.99
        for r in res[1:]:
            assert r.pvalue == res[0].pvalue
            assert np.array_equal(r.null_distribution, res[0].null_distribution)  # the same bits
            assert r.statistic == res[0].statistic

    def test_batches_equal_one_batch(self, client, small_blocks, monkeypatch):
        x, y = _data(n=300, m=200)
        want = es.energy_test(da.from_array(x), y, n_resamples=150, rng=9)
        monkeypatch.setattr(_dask, "PERM_BATCH_BYTES", 8 * 256 * 7)  # 7 relabellings a batch
        assert _dask.perm_batch_size(500, 2, 150) == 7
        got = es.energy_test(da.from_array(x), y, n_resamples=150, rng=9)
        # the same relabellings; products of other shapes round differently
        assert got.pvalue == want.pvalue
        _close_null(got.null_distribution, want.null_distribution, want.statistic + 1)

    def test_generator_rng(self, client, small_blocks):
        x, y = _data(n=200, m=150)
        want = es.energy_test(x, y, n_resamples=99, rng=np.random.default_rng(8))
        got = es.energy_test(x, y, n_resamples=99, rng=np.random.default_rng(8), backend="dask")
        assert got.pvalue == want.pvalue and got.seed is None
        # the graph holds its own copy of the Generator: using it afterwards changes nothing
        gen = np.random.default_rng(8)
        lazy = es.energy_test(x, y, n_resamples=99, rng=gen, backend="dask", compute=False)
        state = gen.bit_generator.state
        gen.random(10)
        assert lazy.compute().pvalue == want.pvalue
        assert gen.bit_generator.state != state  # (it was advanced by the user, not by the graph)


# -- input validation --------------------------------------------------------------------

class TestInput:
    def test_pandas_input_goes_through_the_threads_input_layer(self, client):
        rng = np.random.default_rng(10)
        df = pd.DataFrame(rng.normal(size=(80, 2)), columns=["p", "q"])
        df.iloc[40:] += 2.0
        labels = pd.Series(np.repeat(["a", "b"], 40), index=df.index).sample(frac=1, random_state=1)
        for f in (es.dispersion,):
            assert f(df, labels, backend="dask").W == f(df, labels).W  # aligned on the index
        assert es.energy_test(df, labels=labels, rng=2, backend="dask").pvalue == \
            es.energy_test(df, labels=labels, rng=2).pvalue
        a, b = df.iloc[:40], df.iloc[40:][["q", "p"]]  # columns matched by name
        assert es.energy_distance(a, b, backend="dask") == pytest.approx(es.energy_distance(a, b), rel=1e-12)
        assert es.distance_stats("p", "q", data=df, backend="dask") == es.distance_stats("p", "q", data=df)

    def test_errors(self, client):
        x, y = _data(n=50, m=40)
        xd = da.from_array(x)
        with pytest.raises(TypeError, match="backend='threads'. got Dask input"):
            es.energy_distance(xd, y, backend="threads")
        with pytest.raises(ValueError, match="`compute=False` .* needs backend='dask'"):
            es.energy_distance(x, y, compute=False)
        with pytest.raises(ValueError, match="`backend` must be"):
            es.dispersion(x, np.arange(50) % 2, backend="spark")
        with pytest.raises(ValueError, match="method='sorted'"):
            es.energy_distance(xd[:, :1], y[:, :1], method="sorted")
        with pytest.raises(TypeError, match="built-in metric"):
            es.energy_test(xd, y, metric=lambda a, b: float(np.abs(a - b).sum()))
        with pytest.raises(ValueError, match="memory_budget"):
            es.energy_test(xd, y, memory_budget=2**20)
        with pytest.raises(ValueError, match="progress"):
            es.energy_test(xd, y, progress=True)
        with pytest.raises(ValueError, match="takes a single grouping column"):
            ddf = dd.from_pandas(pd.DataFrame({"u": np.arange(6.0), "g": list("ababab"), "h": list("aabbcc")}),
                                 npartitions=2)
            es.energy_test(ddf, by=["g", "h"])
        with pytest.raises(TypeError, match="dropna"):
            es.energy_test(xd, labels=np.arange(50) % 2, dropna=True)
        with pytest.raises(TypeError, match="must be numeric"):
            es.energy_distance(da.from_array(np.array([["a"], ["b"]])), y[:, :1])
        with pytest.raises(ValueError, match="same number of features"):
            es.energy_distance(xd, y[:, :2])
        unknown = xd[xd[:, 0] > 0]
        with pytest.raises(ValueError, match="unknown chunk sizes"):
            es.energy_distance(unknown, y)
        with pytest.raises(TypeError, match="`D` is a Dask collection, and this call has no Dask backend"):
            es.u_center(da.from_array(np.zeros((5, 5))))
        with pytest.raises(TypeError, match="is a Dask collection"):
            es.normality_test(xd[:, 0])
        with pytest.raises(ValueError, match="2 groups"):
            ddf = dd.from_pandas(pd.DataFrame({"u": np.arange(6.0), "g": list("abcabc")}), npartitions=2)
            es.energy_distance(ddf, by="g")

    def test_without_dask(self, monkeypatch):
        monkeypatch.setitem(sys.modules, "dask", None)
        with pytest.raises(ImportError, match=r'pip install "energy-statistics\[dask\]"'):
            es.energy_distance(np.zeros(3), np.ones(3), backend="dask")
        assert es.energy_distance(np.zeros(3), np.ones(3)) == 2.0  # the threads backend is unaffected


# -- dependence -------------------------------------------------------------------------

@pytest.fixture
def small_rows(monkeypatch):
    monkeypatch.setattr(_dask, "ROWS_WORK", 2e4)  # a dozen tasks per pass on small data


class TestDependence:
    @pytest.mark.parametrize("metric, exponent, sigma", [METRICS[0], METRICS[1], METRICS[3]])
    def test_same_bits_as_threads(self, client, small_rows, metric, exponent, sigma):
        rng = np.random.default_rng(4)
        x = rng.normal(size=(400, 3))
        y = np.column_stack([x[:, 0] ** 2, np.sin(x[:, 1])]) + rng.normal(size=(400, 2))
        kw = dict(metric=metric, exponent=exponent, sigma=sigma)
        want = es.distance_stats(x, y, **kw)
        got = es.distance_stats(da.from_array(x, chunks=(90, 3)), da.from_array(y, chunks=(130, 1)), **kw)
        assert got == want  # the same kernels on the same rows; exact sums of the rows
        for f in (es.distance_covariance, es.distance_correlation):
            assert f(x, y, backend="dask", **kw) == f(x, y, **kw)
        for est in ("V", "U"):
            assert es.distance_covariance_sqr(x, y, estimator=est, backend="dask", **kw) == \
                es.distance_covariance_sqr(x, y, estimator=est, **kw)
            assert es.distance_correlation_sqr(x, y, estimator=est, backend="dask", **kw) == \
                es.distance_correlation_sqr(x, y, estimator=est, **kw)

    def test_ttest(self, client, small_rows):
        rng = np.random.default_rng(7)
        x, y = rng.normal(size=(60, 30)), rng.normal(size=(60, 40))
        y[:, 0] += x[:, 0]
        want = es.distance_correlation_ttest(x, y)
        got = es.distance_correlation_ttest(da.from_array(x, chunks=(20, 30)), y)
        assert (got.statistic, got.pvalue, got.df) == (want.statistic, want.pvalue, want.df)
        lazy = es.distance_correlation_ttest(x, y, backend="dask", compute=False)
        assert isinstance(lazy, Delayed) and lazy.compute().pvalue == want.pvalue

    @pytest.mark.parametrize("statistic", ["dcov", "dcor"])
    def test_independence_test(self, client, small_rows, statistic):
        rng = np.random.default_rng(8)
        x = rng.normal(size=(250, 2))
        y = 0.3 * x[:, :1] ** 2 + rng.normal(size=(250, 1))
        strata = np.arange(250) % 3
        for kw in ({}, {"strata": strata}):
            # the threads backend's streamed kernel (a budget too small for the matrices)
            want = es.independence_test(x, y, statistic=statistic, n_resamples=99, rng=3,
                                        memory_budget=1000, **kw)
            got = es.independence_test(da.from_array(x, chunks=(60, 2)), y, statistic=statistic,
                                       n_resamples=99, rng=3, **kw)
            assert got.pvalue == want.pvalue and got.statistic == want.statistic
            assert np.array_equal(got.null_distribution, want.null_distribution)  # the same bits
            assert got.seed == 3 and got.strata == want.strata
        small = es.independence_test(x[:6], y[:6], backend="dask")
        assert small.exact and small.pvalue == es.independence_test(x[:6], y[:6]).pvalue
        lazy = es.independence_test(x, y, n_resamples=19, rng=1, backend="dask", compute=False)
        assert isinstance(lazy, Delayed) and lazy.compute().n_resamples == 19
        with pytest.raises(ValueError, match="memory_budget"):
            es.independence_test(da.from_array(x), y, memory_budget=2**20)

    @pytest.mark.parametrize("estimator", ["V", "U"])
    def test_dcor_matrix(self, client, estimator):
        rng = np.random.default_rng(9)
        X = rng.normal(size=(150, 7))
        X[:, 3] = X[:, 0] ** 2 + 0.1 * rng.normal(size=150)
        df = pd.DataFrame(X, columns=list("abcdefg"))
        budget = 2 * 8 * 150 * 151 / 2 * 2  # two columns a block: 4 × 4 blocks, 10 tasks
        want = es.distance_correlation_matrix(df, estimator=estimator, pvalue="ttest", memory_budget=budget)
        got = es.distance_correlation_matrix(df, estimator=estimator, pvalue="ttest", memory_budget=budget,
                                             backend="dask")
        # the same blocks and products; BLAS in the worker processes may round a product's last
        # bit otherwise (measured: 3e-17 on dCor, 1e-16 on p-values)
        np.testing.assert_allclose(got.dcor.to_numpy(), want.dcor.to_numpy(), rtol=0, atol=1e-15)
        np.testing.assert_allclose(got.pvalues.to_numpy(), want.pvalues.to_numpy(), rtol=1e-12, atol=1e-15)
        assert list(got.dcor.columns) == list("abcdefg")
        with pytest.raises(TypeError, match="the Dask backend takes the table in memory"):
            es.distance_correlation_matrix(dd.from_pandas(df, npartitions=2))

    # 199 permutations keep the comparison of backends cheap; that no pair can then reach
    # alpha after Holm's adjustment over 21 pairs (the package's warning) is not the point here
    @pytest.mark.filterwarnings("ignore:with 199 permutations and Holm's adjustment:UserWarning")
    def test_dcor_matrix_permutation(self, client, monkeypatch):
        rng = np.random.default_rng(9)
        X = rng.normal(size=(150, 7))
        X[:, 3] = X[:, 0] ** 2 + 0.1 * rng.normal(size=150)
        X[:, 5] += 0.2 * X[:, 1]
        df = pd.DataFrame(X, columns=list("abcdefg"))
        budget = 2 * 8 * 150 * 150 * 3  # three columns a block on threads
        want = es.distance_correlation_matrix(df, pvalue="permutation", n_resamples=199, rng=5,
                                              memory_budget=budget)
        assert 0.02 < np.sort(want.pvalues.to_numpy()[np.triu_indices(7, 1)])[3] < 0.98
        for pairs in (4, 1):  # tasks of 2 × 2 and of 1 × 1 columns: blocks unlike threads'
            monkeypatch.setattr(matrix, "PAIRS_TASK_WORK", 199 * 150 * 150 / 2 * pairs)
            got = es.distance_correlation_matrix(df, pvalue="permutation", n_resamples=199, rng=5,
                                                 memory_budget=budget, backend="dask")
            # the same permutations, the same kernel: the same bits, whatever the blocks
            assert np.array_equal(got.pvalues.to_numpy(), want.pvalues.to_numpy(), equal_nan=True)
            assert np.array_equal(got.adjusted.to_numpy(), want.adjusted.to_numpy(), equal_nan=True)
            assert (got.seed, got.n_resamples, got.exact) == (5, 199, False)
        # each p-value is the pair's independence test with the same seed
        assert got.pvalues.loc["b", "f"] == es.independence_test(df["b"], df["f"], n_resamples=199,
                                                                 rng=5).pvalue
        small = es.distance_correlation_matrix(df.iloc[:6], pvalue="permutation", backend="dask")
        assert small.exact and small.n_resamples == 720
        assert np.array_equal(small.pvalues.to_numpy(), es.distance_correlation_matrix(
            df.iloc[:6], pvalue="permutation").pvalues.to_numpy(), equal_nan=True)

    @pytest.mark.parametrize("metric, exponent, sigma", [METRICS[0], METRICS[1], METRICS[3]])
    def test_partial(self, client, small_rows, metric, exponent, sigma):
        rng = np.random.default_rng(11)
        z = rng.normal(size=(200, 2))
        x = np.column_stack([z[:, 0] + rng.normal(size=200), rng.normal(size=200)])
        y = np.column_stack([z[:, 0] ** 2 + x[:, 1], rng.normal(size=200)])
        kw = dict(metric=metric, exponent=exponent, sigma=sigma)
        # the matrices' projections against their expansion in U-products: equal to rounding
        for f in (es.partial_distance_covariance, es.partial_distance_correlation):
            want = f(x, y, z, **kw)
            got = f(da.from_array(x, chunks=(70, 2)), y, da.from_array(z), **kw)
            assert got == pytest.approx(want, rel=1e-11)
        assert es.partial_distance_covariance(x * 1e150, y, z * 1e-150, backend="dask") == pytest.approx(
            es.partial_distance_covariance(x * 1e150, y, z * 1e-150), rel=1e-11)
        with pytest.warns(UserWarning, match="projection on the complement of z is 0"):
            assert es.partial_distance_correlation(x, y, x, backend="dask") == 0.0
        lazy = es.partial_distance_correlation(x, y, z, backend="dask", compute=False)
        assert isinstance(lazy, Delayed)
        with pytest.raises(ValueError, match="same number of rows"):
            es.partial_distance_covariance(da.from_array(x), y, z[:150])

    def test_partial_test(self, client):
        rng = np.random.default_rng(12)
        z = rng.normal(size=(240, 2))
        x = np.column_stack([z[:, 0] + rng.normal(size=240), rng.normal(size=240)])
        y = np.column_stack([z[:, 0] ** 2 + 0.05 * x[:, 1] + rng.normal(size=240), rng.normal(size=240)])
        for kw in ({}, {"metric": "laplacian", "sigma": 0.7}):
            want = es.partial_distance_correlation_test(x, y, z, n_resamples=199, rng=7, **kw)
            got = es.partial_distance_correlation_test(da.from_array(x, chunks=(70, 2)), y,
                                                       da.from_array(z, chunks=(240, 1)),
                                                       n_resamples=199, rng=7, **kw)
            # the same projections (exact sums), permutations and kernel: the same bits
            assert _same(got, want)
            assert 0.01 < want.pvalue < 0.99
        want = es.partial_distance_correlation_test(x, y, z, n_resamples=199, rng=7)
        for n_resamples in (0, 1):
            assert _same(es.partial_distance_correlation_test(x, y, z, n_resamples=n_resamples, rng=2,
                                                              backend="dask"),
                         es.partial_distance_correlation_test(x, y, z, n_resamples=n_resamples, rng=2))
        # batches of 16 permutations: the same draws, the same values
        old = partial.PARTIAL_TASK_WORK
        partial.PARTIAL_TASK_WORK = 16 * 240 * 240 / 2
        try:
            small = es.partial_distance_correlation_test(x, y, z, n_resamples=199, rng=7, backend="dask")
        finally:
            partial.PARTIAL_TASK_WORK = old
        assert _same(small, want)
        with pytest.warns(UserWarning, match="projection on the complement of z is 0"):
            deg = es.partial_distance_correlation_test(x, y, x, n_resamples=49, rng=1, backend="dask")
        with pytest.warns(UserWarning, match="projection on the complement of z is 0"):
            assert _same(deg, es.partial_distance_correlation_test(x, y, x, n_resamples=49, rng=1))
        lazy = es.partial_distance_correlation_test(x, y, z, n_resamples=199, rng=7, backend="dask",
                                                    compute=False)
        assert isinstance(lazy, Delayed) and _same(lazy.compute(), want)
        with pytest.raises(ValueError, match="not available with backend='dask'"):
            es.partial_distance_correlation_test(da.from_array(x), y, z, pvalue_method="sequential")
        with pytest.raises(TypeError, match="built-in metric"):
            es.partial_distance_correlation_test(x, y, z, metric="precomputed", backend="dask")
        with pytest.raises(ValueError, match="same number of rows"):
            es.partial_distance_correlation_test(da.from_array(x), y, z[:200])

    def test_mutual_test(self, client):
        rng = np.random.default_rng(13)
        a, b = rng.normal(size=120), rng.normal(size=120)
        c = 0.3 * np.sign(a * b) * rng.exponential(size=120) + rng.normal(size=120)
        want = es.mutual_independence_test(a, b, c, n_resamples=199, rng=1)
        assert 0.02 < want.pvalue < 0.98
        X = np.column_stack([a, b, c])
        got = [es.mutual_independence_test(da.from_array(a, chunks=50), b, c, n_resamples=199, rng=1),
               es.mutual_independence_test(da.from_array(X, chunks=(33, 3)), n_resamples=199, rng=1),
               es.mutual_independence_test(X, n_resamples=199, rng=1, backend="dask")]
        for g in got:  # the same matrices, permutations and arithmetic: the same bits
            assert g.pvalue == want.pvalue and g.statistic == want.statistic
            assert np.array_equal(g.estimates, want.estimates)
            assert np.array_equal(g.null_distribution, want.null_distribution)
            assert (g.names, g.n_resamples, g.seed, g.pvalue_se) == (want.names, 199, 1, want.pvalue_se)
        df = pd.DataFrame({"u": a, "v": b, "w": c})
        named = es.mutual_independence_test("u", ["v", "w"], data=df, n_resamples=49, rng=3, backend="dask")
        assert _same(named, es.mutual_independence_test("u", ["v", "w"], data=df, n_resamples=49, rng=3))
        assert named.names == ["u", "v+w"]
        old = mutual.MUTUAL_TASK_WORK
        mutual.MUTUAL_TASK_WORK = 7 * 3 * 120 * 120  # 7 replicates a task
        try:
            batched = es.mutual_independence_test(a, b, c, n_resamples=199, rng=1, backend="dask")
        finally:
            mutual.MUTUAL_TASK_WORK = old
        assert np.array_equal(batched.null_distribution, want.null_distribution)
        assert _same(es.mutual_independence_test(a, b, c, n_resamples=0, backend="dask"),
                     es.mutual_independence_test(a, b, c, n_resamples=0))
        lazy = es.mutual_independence_test(a, b, c, n_resamples=19, rng=2, backend="dask", compute=False)
        assert isinstance(lazy, Delayed) and lazy.compute().n_resamples == 19
        with pytest.raises(ValueError, match="is constant"):
            es.mutual_independence_test(da.from_array(a), np.ones(120), c)
        with pytest.raises(ValueError, match="same number of rows"):
            es.mutual_independence_test(da.from_array(a), b[:100])
        with pytest.raises(ValueError, match="at least 2 variables"):
            es.mutual_independence_test(backend="dask")
        with pytest.raises(ValueError, match="one variable given"):
            es.mutual_independence_test(da.from_array(a))
        with pytest.raises(TypeError, match="`data=`"):
            es.mutual_independence_test(da.from_array(a), b, data=df)
        with pytest.raises(ValueError, match="not available with backend='dask'"):
            es.mutual_independence_test(da.from_array(a), b, pvalue_method="decision")

    def test_tests_same_pvalue_any_workers_and_chunking(self, client):
        rng = np.random.default_rng(14)
        z = rng.normal(size=(150, 1))
        x, y = z + rng.normal(size=(150, 1)), z + rng.normal(size=(150, 1))

        def run(chunks, **kw):
            xd, yd, zd = (da.from_array(v, chunks=(chunks, 1)) for v in (x, y, z))
            return (es.partial_distance_correlation_test(xd, yd, zd, n_resamples=99, rng=4, **kw),
                    es.mutual_independence_test(xd, yd, zd, n_resamples=99, rng=4, **kw))

        res = [run(150), run(37)]
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                      dashboard_address=":0", silence_logs=40) as one, \
                distributed.Client(one, set_as_default=False) as c1:
            lazy = run(61, compute=False)
            res.append(tuple(c1.compute(list(lazy), sync=True)))
        for r in res[1:]:
            for got, want in zip(r, res[0]):
                assert got.pvalue == want.pvalue
                assert np.array_equal(got.null_distribution, want.null_distribution)

    def test_scales_and_float32(self, client, small_rows):
        rng = np.random.default_rng(5)
        x, y = rng.normal(size=(300, 2)), rng.normal(size=(300, 4))
        want = es.distance_stats(x * 1e200, y * 1e-200)
        assert es.distance_stats(da.from_array(x * 1e200), y * 1e-200) == want
        x32, y32 = x.astype(np.float32), y.astype(np.float32)
        assert es.distance_stats(da.from_array(x32), da.from_array(y32)) == es.distance_stats(x32, y32)

    def test_lazy_and_validation(self, client, small_rows):
        bad = _exploding(300, 3)
        y = np.zeros((300, 2))
        for f in (es.distance_stats, es.distance_covariance, es.distance_correlation_sqr):
            obj = f(bad, y, compute=False)
            assert isinstance(obj, Delayed)
            with pytest.raises(RuntimeError, match="the input was computed"):
                obj.compute()
        for obj in (es.partial_distance_correlation_test(bad, y, y[:, :1], compute=False),
                    es.mutual_independence_test(bad, y, compute=False),
                    es.mutual_independence_test(bad, compute=False)):
            assert isinstance(obj, Delayed)
            with pytest.raises(RuntimeError, match="the input was computed"):
                obj.compute()
        x = np.random.default_rng(6).normal(size=(300, 3))
        x[123, 2] = np.nan
        with pytest.raises(ValueError, match=r"`x` contains NaN .*first row 123"):
            es.distance_covariance(da.from_array(x, chunks=100), y)
        with pytest.raises(ValueError, match="is constant"):
            es.distance_correlation(da.from_array(np.nan_to_num(x)), y)  # y is constant
        with pytest.raises(ValueError, match="same number of rows"):
            es.distance_covariance(da.from_array(x), y[:200])
        with pytest.raises(TypeError, match="`data=`"):
            es.distance_covariance("a", "b", data=dd.from_pandas(pd.DataFrame({"a": [1.0], "b": [2.0]}),
                                                               npartitions=1), backend="dask")
        with pytest.raises(ValueError, match="method='sorted'"):
            es.distance_stats(da.from_array(x[:, :1]), y[:, :1], method="sorted")
        with pytest.raises(ValueError, match="at least 4 paired samples"):
            es.distance_covariance_sqr(da.from_array(x[:3]), y[:3], estimator="U")


# -- energy clustering -------------------------------------------------------------------

class TestClustering:
    def test_same_partition_on_the_cluster(self, client, monkeypatch):
        monkeypatch.setattr(_dask, "ROWS_WORK", 5e4)  # several row ranges
        monkeypatch.setattr(_dask, "TILE_WORK", 128.0**2)
        rng = np.random.default_rng(8)
        X = np.vstack([rng.normal(0, 1, (300, 3)), rng.normal(1.5, 1, (250, 3)), rng.normal(-1, 1, (200, 3))])
        for algorithm in ("hartigan", "lloyd"):
            want = es.EnergyClustering(3, algorithm=algorithm, n_init=3, random_state=4,
                                       engine="matrix").fit(X)
            got = es.EnergyClustering(3, algorithm=algorithm, n_init=3, random_state=4, backend="dask").fit(X)
            assert got.engine_ == "streamed"
            assert np.array_equal(got.labels_, want.labels_) and got.n_iter_ == want.n_iter_
            assert got.W_ == pytest.approx(want.W_, rel=1e-12)
        res = es.energy_clustering(X, 3, n_init=3, rng=4, backend="dask")
        assert res.engine == "streamed" and np.array_equal(res.labels, want.labels_)

    def test_errors(self, client):
        X = np.random.default_rng(9).normal(size=(40, 2))
        with pytest.raises(TypeError, match="holds the data in memory"):
            es.EnergyClustering(2).fit(da.from_array(X))
        with pytest.raises(ValueError, match="Nyström approximation and the n×n matrix"):
            es.EnergyClustering(2, backend="dask", approximation="nystrom").fit(X)
        with pytest.raises(ValueError, match="`backend` must be None, 'threads' or 'dask'"):
            es.EnergyClustering(2, backend="ray").fit(X)
