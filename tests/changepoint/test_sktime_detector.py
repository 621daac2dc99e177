"""SktimeDetector, the change-point estimators as an sktime detector: sktime's own estimator
checks, the change points of e_divisive / e_agglo / e_cp3o as sktime's "ilocs" (0-based first
rows of the new segments), predict changing no state, and the refusals; without sktime, the
ImportError that says what to install."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats.changepoint import EAgglo, ECp3o, EDivisive


def _series(T, d, changes, seed, shift=3.0):
    Z = np.random.default_rng(seed).normal(size=(T, d))
    for c in changes:
        Z[c:] += shift
    return pd.DataFrame(Z, columns=[f"x{j}" for j in range(d)])


def test_without_sktime_creating_it_says_what_to_install():
    code = textwrap.dedent("""
        import sys
        sys.modules["sktime"] = None          # import sktime -> ImportError
        from energystats.changepoint import SktimeDetector, EAgglo
        try:
            SktimeDetector(EAgglo())
        except ImportError as e:
            print("IMPORTERROR", e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "IMPORTERROR" in out.stdout
    assert 'pip install "energy-statistics[sktime]"' in out.stdout


sktime = pytest.importorskip("sktime")
from sktime.detection.base import BaseDetector  # noqa: E402

from energystats.changepoint import SktimeDetector  # noqa: E402


@pytest.mark.filterwarnings("ignore::UserWarning")  # sktime's series are 10-50 rows: our
def test_sktime_estimator_checks_pass():               # short-series and min_size warnings
    from sktime.utils import check_estimator

    results = check_estimator(SktimeDetector, raise_exceptions=False, verbose=False)
    failed = {k: v for k, v in results.items() if v != "PASSED"}
    assert len(results) > 50                 # sktime ran its battery, not an empty set
    assert not failed, failed


def test_is_an_sktime_change_point_detector():
    det = SktimeDetector(EAgglo())
    assert isinstance(det, BaseDetector)
    assert det.get_tag("task") == "change_point_detection"
    assert det.get_tag("learning_type") == "unsupervised"
    assert es.SktimeDetector is SktimeDetector


@pytest.mark.parametrize("make, function, kwargs", [
    (lambda: EDivisive(min_size=20, n_resamples=99, random_state=4), es.e_divisive,
     dict(min_size=20, n_resamples=99, rng=4)),
    (lambda: EAgglo(), es.e_agglo, {}),
    (lambda: ECp3o(max_changepoints=4), es.e_cp3o, dict(max_changepoints=4)),
])
def test_ilocs_are_the_functions_change_points(make, function, kwargs):
    X = _series(240, 2, (80, 160), 7)
    det = SktimeDetector(make()).fit(X)
    ref = function(X, **kwargs)
    got = det.predict(X)
    assert list(got.columns) == ["ilocs"]
    cps = ref.changepoints.tolist()
    assert got["ilocs"].tolist() == cps
    assert len(cps) == 2 and abs(cps[0] - 80) <= 2 and abs(cps[1] - 160) <= 2
    assert det.breakpoints_ == cps + [240]
    assert det.estimator_.result_.changepoints.tolist() == cps
    # sktime's segments from those ilocs are the function's segments
    seg = BaseDetector.change_points_to_segments(got["ilocs"], 0, len(X))
    assert [(i.left, i.right) for i in seg.index] == [(0, cps[0]), (cps[0], cps[1]), (cps[1], 240)]


def test_the_wrapped_estimator_is_not_modified():
    est = EDivisive(min_size=20, n_resamples=49, random_state=0)
    det = SktimeDetector(est).fit(_series(150, 1, (75,), 0))
    assert "result_" not in vars(est) and "signal_" not in vars(est)
    assert det.estimator_ is not est
    assert det.estimator_.get_params() == est.get_params()


def test_predict_on_another_series_runs_on_it_and_changes_nothing():
    X, X2 = _series(200, 1, (100,), 1), _series(200, 1, (60,), 2)
    det = SktimeDetector(EDivisive(min_size=20, n_resamples=49, random_state=3)).fit(X)
    before = (det.breakpoints_, det.estimator_)
    got = det.predict(X2)["ilocs"].tolist()
    assert got == es.e_divisive(X2, min_size=20, n_resamples=49, rng=3).changepoints.tolist()
    assert got == [60]
    assert (det.breakpoints_, det.estimator_) == before
    assert det.predict(X)["ilocs"].tolist() == [100]


@pytest.mark.filterwarnings("ignore::energystats.ChangePointWarning")  # the draw is not fixed
def test_the_fit_series_keeps_the_fit_result_without_a_seed(monkeypatch):
    # random_state=None: a new seed per run; predict on the fit series returns fit's result
    # and runs nothing (a run would draw again); another series runs a copy
    from energystats.changepoint import sktime_detector

    X = _series(150, 1, (75,), 5)
    det = SktimeDetector(EDivisive(min_size=20, n_resamples=49)).fit(X)
    assert isinstance(det.estimator_.result_.seed, int)

    def no_run(estimator):
        raise AssertionError("the estimator ran again")

    monkeypatch.setattr(sktime_detector, "_copy", no_run)
    assert det.predict(X.copy())["ilocs"].tolist() == det.breakpoints_[:-1]
    X2 = X.copy()
    X2.iloc[3, 0] += 1.0
    with pytest.raises(AssertionError, match="ran again"):
        det.predict(X2)


def test_no_change_is_an_empty_frame():
    X = _series(120, 1, (), 0)
    got = SktimeDetector(EDivisive(min_size=20, n_resamples=49, random_state=0)).fit(X).predict(X)
    assert list(got.columns) == ["ilocs"] and len(got) == 0


@pytest.mark.parametrize("bad", [None, "EDivisive", object(), EDivisive])
def test_refuses_anything_but_the_estimators(bad):
    with pytest.raises(TypeError, match="`estimator` must be an EDivisive, EAgglo or ECp3o"):
        SktimeDetector(bad)


def test_the_estimators_errors_reach_the_user():
    X = _series(50, 1, (), 0)
    X.iloc[7, 0] = np.nan
    with pytest.raises(ValueError, match="signal"):
        SktimeDetector(EAgglo()).fit(X)
