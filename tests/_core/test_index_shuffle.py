"""Every pandas argument of every public entry point, its rows shuffled: the entry aligns it by
index (the same answer) or refuses it with the rule in the message — never pairs by position.

Each entry of the registry (``registry.py``) has its pandas calls here: ``CALLS[name]`` lists
``(argument, call)``, ``call(F, shuffled)`` running the entry on the frames of :func:`_frames`
with the named argument's rows shuffled when ``shuffled`` is true.  Paired data (x and y,
covariates and treatment, an outcome and its weights) carry a string index; ordered data (the
time-series functions) a DatetimeIndex, whose shuffle must be refused ("time order").  A public
entry point missing from ``CALLS`` (or from ``NO_PANDAS_PAIRING``, the entries with no pandas
argument whose rows are paired with another's) fails :func:`test_every_entry_is_covered`.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es

from .registry import public_entry_points

N = 40


def _frames():
    g = np.random.default_rng(0)
    idx = pd.Index([f"r{i}" for i in range(N)], name="id")
    X = pd.DataFrame(g.normal(size=(N, 3)), index=idx, columns=["a", "b", "c"])
    F = {"X": X,
         "y": pd.Series(X["a"] + g.normal(size=N), index=idx, name="y"),
         "z": pd.Series(g.normal(size=N), index=idx, name="z"),
         "labels": pd.Series(np.repeat([0, 1], N // 2), index=idx, name="g"),
         "t": pd.Series((X["a"] + g.normal(size=N) > 0).astype(int), index=idx, name="t"),
         "w": pd.Series(np.linspace(1.0, 2.0, N), index=idx, name="w"),
         "strata": pd.Series(np.tile([0, 1], N // 2), index=idx, name="s")}
    when = pd.date_range("2020-01-01", periods=N, freq="D")
    F["ts"] = pd.DataFrame(g.normal(size=(N, 2)), index=when, columns=["u", "v"])
    F["ts2"] = pd.Series(g.normal(size=N), index=when, name="w2")
    return F


def _shuffle(obj):
    return obj.sample(frac=1.0, random_state=7)


def _get(F, name, shuffled, which):
    return _shuffle(F[name]) if shuffled and name == which else F[name]


def _fields(result, *names):
    return [np.asarray(getattr(result, n), dtype=float) for n in names]


def _weights_result(F):
    return es.energy_balancing_weights(F["X"], F["t"])


#: name -> [(argument shuffled, call(F, which))]; ``call`` gets the frames and the name of the
#: frame to shuffle (or None); it returns an array or a list of arrays to compare
CALLS = {
    "energy_test": [(a, lambda F, s: _fields(es.energy_test(
        F["X"], labels=_get(F, "labels", s, "labels"), strata=_get(F, "strata", s, "strata"),
        n_resamples=0), "statistic")) for a in ("labels", "strata")],
    "disco": [("labels", lambda F, s: _fields(es.disco(
        F["X"], labels=pd.DataFrame({"g": _get(F, "labels", s, "labels"), "h": F["strata"]}),
        n_resamples=0), "statistic"))],
    "dispersion": [("labels", lambda F, s: _fields(es.dispersion(
        F["X"], _get(F, "labels", s, "labels")), "W", "S"))],
    "weighted_effect": [(a, lambda F, s: _fields(es.weighted_effect(
        _get(F, "y", s, "y"), _weights_result(F), covariates=_get(F, "X", s, "X"),
        outcome_model="linear", n_boot=20, rng=0, progress=False), "estimate"))
        for a in ("y", "X")],
    "energy_balancing_weights": [(a, lambda F, s: es.energy_balancing_weights(
        F["X"], _get(F, "t", s, "t"), base_weights=_get(F, "w", s, "w")).weights)
        for a in ("t", "w")],
    "independence_weights": [("y", lambda F, s: es.independence_weights(
        F["X"][["b", "c"]], _get(F, "y", s, "y")).weights)],
    "balance_table": [(a, lambda F, s: es.balance_table(
        F["X"], _get(F, "t", s, "t"), weights=_get(F, "w", s, "w")).to_frame()
        .select_dtypes("number").to_numpy()) for a in ("t", "w")],
    "clustering_accuracy": [("t", lambda F, s: es.clustering_accuracy(
        F["labels"], _get(F, "t", s, "t")))],
    "DistanceCorrelationSelector": [("y", lambda F, s: es.DistanceCorrelationSelector(k=2).fit(
        F["X"], _get(F, "y", s, "y")).scores_)],
    "distance_correlation_scores": [("y", lambda F, s: es.distance_correlation_scores(
        F["X"], _get(F, "y", s, "y"))[0])],
    "distance_correlation_screen": [("y", lambda F, s: _fields(es.distance_correlation_screen(
        F["X"], _get(F, "y", s, "y"), top=2, n_resamples=9, rng=0), "statistic"))],
}

# x ⟂ y functions: (x, y) paired, y shuffled
for _name, _kw in [("distance_covariance", {}), ("distance_covariance_sqr", {}),
                   ("distance_correlation", {}), ("distance_correlation_sqr", {}),
                   ("independence_coefficient", {})]:
    CALLS[_name] = [("y", lambda F, s, f=getattr(es, _name): f(F["X"][["a"]], _get(F, "y", s, "y")))]
CALLS["distance_stats"] = [("y", lambda F, s: _fields(es.distance_stats(
    F["X"], _get(F, "y", s, "y")), "dcov", "dcor"))]
CALLS["distance_correlation_ttest"] = [("y", lambda F, s: _fields(es.distance_correlation_ttest(
    F["X"], _get(F, "y", s, "y")), "statistic"))]
CALLS["independence_coefficient_test"] = [("y", lambda F, s: _fields(
    es.independence_coefficient_test(F["X"][["a"]], _get(F, "y", s, "y"), n_resamples=9, rng=0),
    "statistic"))]
CALLS["independence_test"] = [(a, lambda F, s: _fields(es.independence_test(
    F["X"], _get(F, "y", s, "y"), strata=_get(F, "strata", s, "strata"), n_resamples=9, rng=0),
    "statistic")) for a in ("y", "strata")]
# x ⟂ y | z
for _name, _extra in [("conditional_distance_correlation", {}),
                      ("conditional_independence_test", dict(n_resamples=9, rng=0)),
                      ("partial_distance_covariance", {}), ("partial_distance_correlation", {}),
                      ("partial_distance_correlation_test", dict(n_resamples=9, rng=0))]:
    def _call(F, s, f=getattr(es, _name), kw=_extra):
        r = f(F["X"][["a"]], _get(F, "y", s, "y"), _get(F, "z", s, "z"), **kw)
        return _fields(r, "statistic") if hasattr(r, "statistic") else r
    CALLS[_name] = [("y", _call), ("z", _call)]
# time series: a shuffled DatetimeIndex is refused, whichever argument
for _name, _call in [
        ("auto_distance_correlation", lambda F, s: es.auto_distance_correlation(
            _get(F, "ts2", s, "ts2"), lags=2)),
        ("adcf_test", lambda F, s: _fields(es.adcf_test(_get(F, "ts2", s, "ts2"), lags=2,
                                                        n_resamples=9, rng=0), "statistic")),
        ("e_divisive", lambda F, s: es.e_divisive(_get(F, "ts2", s, "ts2"), min_size=5,
                                                  n_resamples=9, rng=0).changepoints),
        ("e_agglo", lambda F, s: es.e_agglo(_get(F, "ts2", s, "ts2")).changepoints),
        ("e_cp3o", lambda F, s: es.e_cp3o(_get(F, "ts2", s, "ts2"), delta=3).changepoints),
        ("EDivisive", lambda F, s: es.EDivisive(min_size=5, n_resamples=9, random_state=0)
         .fit_predict(_get(F, "ts2", s, "ts2"))),
        ("EAgglo", lambda F, s: es.EAgglo().fit_predict(_get(F, "ts2", s, "ts2"))),
        ("ECp3o", lambda F, s: es.ECp3o(delta=3).fit_predict(_get(F, "ts2", s, "ts2"))),
        ("SktimeDetector", lambda F, s: es.SktimeDetector(es.ECp3o(delta=3)).fit(
            _get(F, "ts2", s, "ts2")).breakpoints_)]:
    CALLS[_name] = [("ts2", _call)]
for _name in ("cross_distance_correlation", "cross_distance_correlation_test"):
    def _cross(F, s, f=getattr(es, _name)):
        kw = dict(n_resamples=9, rng=0) if f.__name__.endswith("test") else {}
        r = f(_get(F, "ts", s, "ts")["u"], _get(F, "ts2", s, "ts2"), lags=2, **kw)
        return _fields(r, "statistic") if hasattr(r, "statistic") else r
    CALLS[_name] = [("ts", _cross), ("ts2", _cross)]

#: entries whose only data argument is one table (or matrix) of rows, or two samples that are
#: not paired row by row (pairwise's x and y, energy_distance's samples): nothing to align, and
#: a row shuffle is not an alignment question (their order invariance is tested with them)
NO_PANDAS_PAIRING = {
    "pairwise", "energy_distance", "gram_matrix", "is_negative_type", "permanova", "distance_correlation_matrix",
    "mutual_independence_test", "d_center", "u_center", "u_product", "gof_test",
    "normality_test", "poisson_test", "energy_clustering", "EnergyClustering",
    "energy_linkage", "cluster_test"}

ORDERED = {"auto_distance_correlation", "adcf_test", "e_divisive", "e_agglo", "e_cp3o",
           "EDivisive", "EAgglo", "ECp3o", "SktimeDetector", "cross_distance_correlation",
           "cross_distance_correlation_test"}


def test_every_entry_is_covered():
    public = public_entry_points()
    missing = public - set(CALLS) - NO_PANDAS_PAIRING
    assert not missing, f"entries with no pandas shuffle case here: {sorted(missing)}"
    assert not (set(CALLS) & NO_PANDAS_PAIRING)
    assert not (set(CALLS) | NO_PANDAS_PAIRING) - public


CASES = [(name, arg, call) for name, calls in sorted(CALLS.items()) for arg, call in calls]


def _same(a, b):
    a = a if isinstance(a, list) else [a]
    b = b if isinstance(b, list) else [b]
    return all(np.allclose(np.asarray(u, float), np.asarray(v, float), rtol=1e-9, atol=1e-12,
                           equal_nan=True) for u, v in zip(a, b))


@pytest.mark.parametrize("name, arg, call", CASES, ids=[f"{n}-{a}" for n, a, _ in CASES])
def test_a_shuffled_pandas_argument_is_aligned_or_refused(name, arg, call):
    F = _frames()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # small data: the entries' own cautions
        before = call(F, None)
        try:
            after = call(F, arg)
        except (ValueError, TypeError) as e:
            rule = ("sorted monotonically increasing" if name == "SktimeDetector"  # sktime's own
                    else "time order" if name in ORDERED else "index")
            assert rule in str(e), f"{name}: refused without the rule: {e}"
            return
    assert name not in ORDERED, f"{name}: a shuffled DatetimeIndex was accepted"
    assert _same(before, after), f"{name}: `{arg}` shuffled changed the answer (paired by position?)"


def test_the_check_catches_pairing_by_position():
    # the comparison has power: y shuffled by position (index dropped) changes dCor
    F = _frames()
    a = es.distance_correlation(F["X"][["a"]], F["y"])
    b = es.distance_correlation(F["X"][["a"]], _shuffle(F["y"]).to_numpy())
    assert not _same(a, b)
