"""EDivisive and EAgglo, the ruptures-style estimators: the change points of e_divisive and
e_agglo after the documented conversion (breakpoints = the change points, 0-based first rows of
the new segments, then n_samples), the parameters, the not-fitted error; with ruptures
installed, its own piecewise-constant signals, metrics and display."""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats.changepoint import EAgglo, EDivisive
from energystats.changepoint.estimators import NotFittedError


def _series(T, d, changes, seed, shift=2.0):
    Z = np.random.default_rng(seed).normal(size=(T, d))
    for c in changes:
        Z[c:] += shift
    return Z[:, 0] if d == 1 else Z


def _check_breakpoints(bkps, n_samples):
    """ruptures' convention: a list of Python ints, strictly increasing, ending with n_samples."""
    assert isinstance(bkps, list)
    assert all(type(b) is int for b in bkps), [type(b) for b in bkps]
    assert bkps[-1] == n_samples
    assert bkps == sorted(set(bkps))
    assert bkps[0] > 0


def _segments_of(bkps, n_samples):
    """The segment of every row read from breakpoints (segment i is rows bkps[i-1]:bkps[i])."""
    return np.searchsorted(bkps, np.arange(n_samples), side="right")


#: (T, d, changes, seed): univariate and multivariate, with and without changes; none of them
#: makes e_divisive warn with min_size=20, n_resamples=99, rng=seed (seed 1 of the first design
#: would: a seasonal lag in its residuals)
DESIGNS = [(150, 1, (50, 100), 0), (150, 1, (50, 100), 2), (150, 3, (60,), 1),
           (200, 2, (70, 140), 3), (120, 1, (), 0), (120, 2, (), 1)]


class TestEDivisive:
    @pytest.mark.parametrize("T, d, changes, seed", DESIGNS)
    def test_tested_search_is_e_divisive(self, T, d, changes, seed):
        X = _series(T, d, changes, seed)
        est = EDivisive(min_size=20, n_resamples=99, random_state=seed).fit(X)
        bkps = est.predict()
        ref = es.e_divisive(X, min_size=20, n_resamples=99, rng=seed)
        _check_breakpoints(bkps, T)
        assert bkps == ref.changepoints.tolist() + [T]
        # the same result object's content (p-values kept for the user)
        np.testing.assert_array_equal(est.result_.pvalues, ref.pvalues)
        np.testing.assert_array_equal(est.result_.statistics, ref.statistics)
        assert est.result_.seed == ref.seed == seed
        # breakpoints are the ends of the function's segments, and give its labels
        assert ref.to_frame()["end"].tolist() == bkps
        np.testing.assert_array_equal(_segments_of(bkps, T), ref.labels)
        if not changes:
            assert bkps == [T]
        else:
            assert len(bkps) == len(changes) + 1

    @pytest.mark.parametrize("n_bkps", [0, 1, 2, 3])
    def test_n_bkps_is_n_changepoints(self, n_bkps):
        X = _series(200, 2, (70, 140), 3)
        # the tests' settings are set but unused with n_bkps (the function would refuse them)
        est = EDivisive(min_size=20, n_resamples=49, random_state=5, sig_level=0.01).fit(X)
        bkps = est.predict(n_bkps=n_bkps)
        ref = es.e_divisive(X, min_size=20, n_changepoints=n_bkps)
        _check_breakpoints(bkps, 200)
        assert len(bkps) == n_bkps + 1
        assert bkps == ref.changepoints.tolist() + [200]
        assert est.result_.pvalues is None
        np.testing.assert_array_equal(est.result_.order_found, ref.order_found)

    def test_n_changepoints_parameter(self):
        X = _series(150, 1, (50, 100), 0)
        fixed = EDivisive(min_size=20, n_changepoints=2).fit(X)
        assert fixed.predict() == EDivisive(min_size=20).fit(X).predict(n_bkps=2) \
            == es.e_divisive(X, min_size=20, n_changepoints=2).changepoints.tolist() + [150]
        assert fixed.predict(n_bkps=1) == [100, 150]   # n_bkps overrides the parameter
        # the parameters go to the function as set: its refusal of test settings stands
        with pytest.raises(ValueError, match="`rng`"):
            EDivisive(min_size=20, n_changepoints=2, random_state=0).fit(X).predict()

    def test_other_parameters_pass_through(self):
        X = _series(160, 2, (80,), 4)
        kw = dict(min_size=15, kappa="end", metric="laplacian", sigma=2.0, n_resamples=49,
                  pvalue_method="sequential")
        bkps = EDivisive(random_state=3, **kw).fit_predict(X)
        ref = es.e_divisive(X, rng=3, **kw)
        assert bkps == ref.changepoints.tolist() + [160]
        assert bkps == [80, 160]

    def test_dataframe_breakpoints_are_positions(self):
        X = _series(150, 3, (60,), 1)
        df = pd.DataFrame(X, columns=["a", "b", "c"],
                          index=pd.date_range("2026-01-01", periods=150, freq="D"))
        est = EDivisive(min_size=20, n_resamples=99, random_state=1, columns=["a", "c"])
        bkps = est.fit(df).predict()
        ref = es.e_divisive(df, min_size=20, n_resamples=99, rng=1, columns=["a", "c"])
        assert (est.n_samples_, est.n_features_in_) == (150, 2)
        assert bkps == ref.changepoints.tolist() + [150]
        assert est.result_.changepoint_labels == [df.index[b] for b in bkps[:-1]]
        assert est.result_.columns == ["a", "c"]

    def test_warning_reaches_the_caller(self):
        # a change 22 rows from the start with min_size=30: the constraint binds
        X = _series(100, 1, (22,), 0)
        with pytest.warns(es.ChangePointWarning, match="min_size = 30") as rec:
            bkps = EDivisive(n_resamples=49, random_state=0).fit_predict(X)
        assert rec[0].filename == __file__       # e_divisive's stack level: the user's line
        with pytest.warns(es.ChangePointWarning, match="min_size = 30"):
            ref = es.e_divisive(X, n_resamples=49, rng=0)
        assert bkps == ref.changepoints.tolist() + [100]

    def test_random_state_none_draws_a_recorded_seed(self):
        X = _series(150, 1, (50, 100), 0)
        est = EDivisive(min_size=20, n_resamples=49).fit(X)
        bkps = est.predict()
        seed = est.result_.seed
        assert isinstance(seed, int)
        again = EDivisive(min_size=20, n_resamples=49, random_state=seed).fit(X)
        assert again.predict() == bkps
        np.testing.assert_array_equal(again.result_.pvalues, est.result_.pvalues)


#: (T, d, changes, seed, e_agglo's arguments)
AGGLO_DESIGNS = [(80, 1, (40,), 1, {}), (120, 2, (40, 80), 2, {}), (100, 3, (), 3, {}),
                 (150, 1, (50, 100), 4, {"member": np.arange(150) // 5}),
                 (120, 2, (60,), 5, {"definition": "u-statistic"}),
                 (100, 1, (50,), 6, {"penalty": 0.0}),
                 (90, 1, (30, 60), 7, {"penalty": lambda cps: 20.0 * len(cps), "exponent": 0.5})]


class TestEAgglo:
    @pytest.mark.parametrize("T, d, changes, seed, kwargs", AGGLO_DESIGNS)
    def test_default_is_e_agglo(self, T, d, changes, seed, kwargs):
        X = _series(T, d, changes, seed)
        est = EAgglo(**kwargs).fit(X)
        bkps = est.predict()
        ref = es.e_agglo(X, **kwargs)
        _check_breakpoints(bkps, T)
        assert bkps == ref.changepoints.tolist() + [T]
        assert ref.to_frame()["end"].tolist() == bkps
        assert est.result_.fit == ref.fit and est.result_.penalised_fit == ref.penalised_fit
        np.testing.assert_array_equal(est.result_.path_changepoints[est.path_row_],
                                      ref.changepoints)
        if not changes:
            assert bkps == [T]

    @pytest.mark.parametrize("T, d, changes, seed, kwargs", AGGLO_DESIGNS[:5])
    def test_n_bkps_picks_the_path(self, T, d, changes, seed, kwargs):
        X = _series(T, d, changes, seed)
        est = EAgglo(**kwargs).fit(X)
        default = est.predict()
        # with a penalty per change point, the default is the best fit with its count
        assert est.predict(n_bkps=len(default) - 1) == default
        path = est.result_.path
        counts, fits = path["n_changepoints"].to_numpy(), path["fit"].to_numpy()
        for k in sorted(set(counts.tolist()))[:6]:
            bkps = est.predict(n_bkps=k)
            _check_breakpoints(bkps, T)
            assert len(bkps) == k + 1
            rows = np.flatnonzero(counts == k)
            best = rows[fits[rows] == fits[rows].max()][0]
            assert est.path_row_ == best
            assert bkps == est.result_.path_changepoints[best].tolist() + [T]

    @pytest.mark.parametrize("seed, k, rows, best", [(3, 27, [52, 53], 53),
                                                     (1, 28, [51, 52], 51)])
    def test_n_bkps_held_twice_takes_the_larger_fit(self, seed, k, rows, best):
        # ecp's merge of the last segment with the first removes no boundary: the path then
        # holds one set of change points twice (unwrapped, then wrapped); in these two series
        # (found by a search over seeds) the larger fit is the wrapped row, then the other
        X = _series(80, 1, (40,), seed)
        est = EAgglo().fit(X)
        bkps = est.predict(n_bkps=k)
        path = est.result_.path
        assert np.flatnonzero(path["n_changepoints"].to_numpy() == k).tolist() == rows
        assert path["wrapped"].iloc[rows].tolist() == [False, True]
        assert path["fit"].iloc[best] == path["fit"].iloc[rows].max()
        assert path["fit"].iloc[rows[0]] != path["fit"].iloc[rows[1]]
        assert est.path_row_ == best
        assert bkps == est.result_.path_changepoints[best].tolist() + [80]

    def test_n_bkps_not_on_the_path(self):
        # two wrapped clusters have two boundaries, and one cluster none: no row has one
        s = np.r_[np.zeros(30), np.full(30, 5.0), np.zeros(30)] \
            + np.random.default_rng(3).normal(0, 0.5, 90)
        est = EAgglo(member=np.arange(90) // 5).fit(s)
        with pytest.raises(ValueError, match=r"`n_bkps` must be a number of change points on "
                                             r"the merge path, one of \[0, 2, 3, .*, 17\]; got 1"):
            est.predict(n_bkps=1)
        assert est.predict(n_bkps=0) == [90] and est.predict(n_bkps=2) == [30, 60, 90]
        with pytest.raises(ValueError, match=r"one of \[0, 2, .*, 17\]; got 18"):
            est.predict(n_bkps=18)

    def test_wrapped_segmentation_gives_boundaries(self):
        # the series returns to its start: ecp's cyclic merge makes the ends one cluster
        s = np.r_[np.zeros(30), np.full(30, 5.0), np.zeros(30)] \
            + np.random.default_rng(3).normal(0, 0.5, 90)
        est = EAgglo(member=np.arange(90) // 5).fit(s)
        assert est.predict() == [30, 60, 90]
        assert est.result_.labels[[0, 89]].tolist() == [0, 0]
        assert bool(est.result_.path["wrapped"].iloc[est.path_row_])


# -- both estimators --------------------------------------------------------------------------

ESTIMATORS = [pytest.param(EDivisive, es.e_divisive, {"rng": "random_state"}, id="EDivisive"),
              pytest.param(EAgglo, es.e_agglo, {}, id="EAgglo")]


def _small(cls):
    """A fast estimator and its series (no warning)."""
    if cls is EDivisive:
        return EDivisive(min_size=20, n_resamples=19, random_state=0), _series(120, 2, (60,), 1)
    return EAgglo(), _series(80, 1, (40,), 1)


@pytest.mark.parametrize("cls, function, renamed", ESTIMATORS)
class TestParameters:
    def test_signature_is_the_function_s(self, cls, function, renamed):
        fun = {renamed.get(p.name, p.name): p
               for p in list(inspect.signature(function).parameters.values())[1:]}
        est = {p.name: p for p in list(inspect.signature(cls.__init__).parameters.values())[1:]}
        assert list(est) == list(fun)
        for name, p in est.items():
            assert p.kind is p.KEYWORD_ONLY and fun[name].kind is p.KEYWORD_ONLY
            assert p.default is fun[name].default or p.default == fun[name].default, name

    def test_get_params_round_trip(self, cls, function, renamed):
        defaults = cls()
        params = defaults.get_params()
        for name, value in params.items():
            assert getattr(defaults, name) is value
        est = cls(**params)
        assert est.get_params() == params
        changed = {"exponent": 0.5, "n_threads": 1}
        assert est.set_params(**changed) is est
        assert {k: getattr(est, k) for k in changed} == changed
        assert est.get_params() == {**params, **changed}
        with pytest.raises(ValueError, match="Invalid parameter 'alpha'"):
            est.set_params(alpha=1.0)
        assert repr(est) == f"{cls.__name__}(exponent=0.5, n_threads=1)"
        assert repr(cls()) == f"{cls.__name__}()"

    def test_sklearn_clone(self, cls, function, renamed):
        base = pytest.importorskip("sklearn.base")
        est = cls(exponent=0.7, columns=["a"])
        twin = base.clone(est)
        assert twin is not est and twin.get_params() == est.get_params()

    def test_predict_before_fit(self, cls, function, renamed):
        est, X = _small(cls)
        with pytest.raises(NotFittedError, match=rf"This {cls.__name__} instance is not fitted "
                                                 r"yet: call `fit\(signal\)` before `predict`"):
            est.predict()
        assert issubclass(NotFittedError, ValueError)
        assert not hasattr(est, "result_") and not hasattr(est, "signal_")

    def test_fit_returns_self_and_keeps_no_result(self, cls, function, renamed):
        est, X = _small(cls)
        assert est.fit(X) is est
        assert est.signal_ is X
        assert est.n_samples_ == X.shape[0]
        assert est.n_features_in_ == (1 if X.ndim == 1 else X.shape[1])
        assert not hasattr(est, "result_")
        bkps = est.predict()
        assert hasattr(est, "result_")
        assert est.fit_predict(X) == bkps
        est.fit(X[:-20])                                  # a new series: the old result goes
        assert not hasattr(est, "result_") and not hasattr(est, "path_row_")

    def test_fit_checks_the_signal(self, cls, function, renamed):
        est, X = _small(cls)
        X = np.array(X, dtype=float)
        X[5] = np.nan
        with pytest.raises(ValueError, match="signal"):
            est.fit(X)
        assert not hasattr(est, "signal_")

    @pytest.mark.parametrize("n_bkps", [-1, 1.5, True, "2"])
    def test_n_bkps_checked(self, cls, function, renamed, n_bkps):
        est, X = _small(cls)
        with pytest.raises(ValueError, match=r"`n_bkps` must be None or a non-negative integer"):
            est.fit(X).predict(n_bkps=n_bkps)


# -- with ruptures: its signals, metrics and display --------------------------------------------

def _pw_constant(n_samples, n_features, n_bkps, seed):
    rpt = pytest.importorskip("ruptures")
    # clear changes: every jump 3 to 5 noise standard deviations
    return rpt.pw_constant(n_samples, n_features, n_bkps, noise_std=1.0, delta=(3, 5), seed=seed)


def _scores(true, bkps):
    from ruptures.metrics import hausdorff, precision_recall, randindex

    return hausdorff(true, bkps), precision_recall(true, bkps, margin=5), randindex(true, bkps)


class TestRuptures:
    @pytest.mark.parametrize("n_features, n_bkps, seed", [(1, 2, 0), (1, 2, 4), (3, 2, 1),
                                                          (2, 3, 2)])
    def test_e_divisive_on_pw_constant(self, n_features, n_bkps, seed):
        signal, true = _pw_constant(300 if n_bkps == 2 else 400, n_features, n_bkps, seed)
        bkps = EDivisive(n_resamples=99, random_state=seed).fit_predict(signal)
        h, (precision, recall), ri = _scores(true, bkps)
        assert h <= 3 and precision == recall == 1.0 and ri >= 0.98, (true, bkps)
        # fixing the number of changes finds the same ones
        assert EDivisive().fit_predict(signal, n_bkps=n_bkps) == bkps

    @pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
    def test_e_agglo_on_pw_constant(self, seed):
        signal, true = _pw_constant(300, 3, 2, seed)
        est = EAgglo().fit(signal)
        for bkps in (est.predict(), est.predict(n_bkps=2)):
            h, (precision, recall), ri = _scores(true, bkps)
            assert h <= 3 and precision == recall == 1.0 and ri >= 0.98, (true, bkps)

    def test_metrics_refuse_a_partition_without_n_samples(self):
        # what the trailing n_samples is for: ruptures' metrics compare partitions of one series
        pytest.importorskip("ruptures")
        from ruptures.metrics import hausdorff
        from ruptures.metrics.sanity_check import BadPartitions

        signal, true = _pw_constant(300, 1, 2, 0)
        bkps = EDivisive(n_resamples=99, random_state=0).fit_predict(signal)
        with pytest.raises(BadPartitions):
            hausdorff(true, bkps[:-1])
        assert hausdorff(true, bkps) == 0.0

    def test_agrees_with_binseg(self):
        rpt = pytest.importorskip("ruptures")
        from ruptures.metrics import hausdorff

        signal, true = _pw_constant(300, 2, 2, 3)
        ours = EDivisive().fit_predict(signal, n_bkps=2)
        theirs = rpt.Binseg(model="l2", min_size=30).fit(signal).predict(n_bkps=2)
        assert hausdorff(ours, theirs) <= 3, (ours, theirs)

    def test_display_accepts_the_breakpoints(self):
        pytest.importorskip("ruptures")
        matplotlib = pytest.importorskip("matplotlib")
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import ruptures as rpt

        signal, true = _pw_constant(200, 2, 2, 5)
        bkps = EAgglo().fit_predict(signal)
        fig, axes = rpt.display(signal, true, bkps)
        try:
            assert len(axes) == 2
            # one dashed line per computed change point, n_samples excluded, on every axis
            dashed = [ln for ln in axes[0].get_lines() if ln.get_linestyle() == "--"]
            assert len(dashed) == len(bkps) - 1
        finally:
            plt.close(fig)


# -- ECp3o ------------------------------------------------------------------------------

def _three_segments(seed=3):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(0, 1, 200), rng.normal(3, 1, 200), rng.normal(0, 1, 200)])


def test_ecp3o_reproduces_e_cp3o():
    from energystats.changepoint import ECp3o

    x = _three_segments()
    for kw in (dict(max_changepoints=4), dict(n_changepoints=3), dict(delta=15, search="exact")):
        est = ECp3o(**kw)
        bkps = est.fit_predict(x)
        res = es.e_cp3o(x, **kw)
        assert bkps == res.changepoints.tolist() + [600]
        assert all(type(b) is int for b in bkps)
        np.testing.assert_array_equal(est.result_.gof, res.gof)


def test_ecp3o_n_bkps_fixes_the_number_and_zero_is_refused():
    from energystats.changepoint import ECp3o

    x = _three_segments()
    est = ECp3o(max_changepoints=4).fit(x)
    assert est.predict(n_bkps=1) == es.e_cp3o(x, n_changepoints=1).changepoints.tolist() + [600]
    assert len(est.predict(n_bkps=3)) == 4 and est.result_.chosen_by == "fixed"
    with pytest.raises(ValueError, match="at least 1 for e-cp3o"):
        est.predict(n_bkps=0)
    with pytest.raises(ValueError, match="n_bkps"):
        est.predict(n_bkps=-1)


def test_ecp3o_before_fit_and_params():
    from energystats.changepoint import ECp3o
    from energystats.changepoint.estimators import NotFittedError

    with pytest.raises(NotFittedError, match="predict"):
        ECp3o().predict()
    est = ECp3o(delta=10)
    assert est.get_params()["delta"] == 10 and repr(est) == "ECp3o(delta=10)"
    assert est.set_params(max_changepoints=3).max_changepoints == 3


def test_ecp3o_with_ruptures_metrics():
    rpt = pytest.importorskip("ruptures")
    import ruptures.metrics  # noqa: F401  (not loaded by `import ruptures`)
    from energystats.changepoint import ECp3o

    signal, truth = rpt.pw_constant(600, 2, 3, noise_std=1.0, delta=(60, 200), seed=4)
    signal = signal + 0.0
    signal[:, 0] += 4.0 * np.repeat(np.arange(4) % 2, np.diff([0] + truth))
    bkps = ECp3o().fit(signal).predict(n_bkps=3)
    assert bkps[-1] == truth[-1] == 600
    assert rpt.metrics.hausdorff(truth, bkps) <= 10
