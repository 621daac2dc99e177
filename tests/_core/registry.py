"""One registry of the package's public entry points, for the cross-cutting tests.

Every function and estimator in ``energystats.__all__`` (the result and warning
classes aside) has an :class:`Entry` here: a small call on a 16×3 float array
``X`` and the markers of which guarantees apply to it.  ``test_registry.py``
fails when a public name is missing from :data:`REGISTRY`, so a new entry point
is covered by the seed, magnitude, ties, fork-safety and memory tests as soon as
it is exported.

An entry's ``fields`` map what is compared (an attribute of the result, or
``""`` for the returned value itself) to its *degree*: scaling all the data by
``c`` scales that field by ``c**degree`` (exponent 1 distances: degree 1; a
squared distance covariance: degree 2; correlations, p-values, labels: 0).
Scaling by ``c = 2**k`` is exact in floating point, so the fields must agree to
rounding at any ``k`` that neither overflows nor underflows.

Interrupts are not parametrised here: a long call cannot be set up cheaply for
every entry.  ``Entry.interrupt`` names the test of an entry's Ctrl-C guarantee
(the long compiled calls of the clustering and change-point entries in
``tests/_core/test_interrupt.py``, the long homogeneity calls in
``tests/_core/test_edges.py``, the balancing solver's sweep in
``tests/balance/test_qp_interrupt.py``), and ``test_registry.py`` checks that
each named test exists.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Callable

import numpy as np

import energystats as es

__all__ = ["Entry", "REGISTRY", "public_entry_points", "values"]

N = 16                    # rows of the registry's data: every call stays tiny
NR = 19                   # resamples of the randomised calls


@dataclass(frozen=True)
class Entry:
    #: ``call(X, seed)`` runs the entry point on data built from ``X`` (16×3 floats);
    #: ``seed`` is passed as ``rng``/``random_state`` where the entry draws randomness
    call: Callable
    #: compared quantities: attribute name (``""``: the returned value) -> degree in the data's scale
    fields: dict
    #: draws randomness: same seed -> same result, and the result records the seed (``seed``)
    random: bool = False
    #: the ``fields`` scale as declared at X·2**k (False: the data are not on a ratio scale)
    magnitudes: bool = True
    #: ``memory(X, budget)`` calls the entry with ``memory_budget=budget`` (None: no budget argument)
    memory: Callable | None = None
    #: the test of its Ctrl-C guarantee, ``file::[Class::]test`` under ``tests/`` (checked to
    #: exist by ``test_registry.py``); None: no Ctrl-C test names this entry
    interrupt: str | None = None
    #: why a guarantee does not apply
    notes: str = field(default="")


def _predicted(estimator, X):
    """A ruptures-style estimator's full result after ``fit(X).predict()``."""
    estimator.fit(X).predict()
    return estimator.result_


def _split2(X):
    return X[: N // 2], X[N // 2:]


def _split3(X):
    return X[:5], X[5:10], X[10:]


def _xyz(X):
    return X[:, :1], X[:, 1:2], X[:, 2:]


def _counts(X):
    return np.floor(np.abs(X[:, 0]) * 3).astype(np.int64)


def _fit_estimator(X, seed):
    m = es.EnergyClustering(2, random_state=seed).fit(X)
    return m


def _linkage(X, seed):
    Z = es.energy_linkage(X)                      # merged clusters, their sizes: degree 0; heights: 1
    return SimpleNamespace(merges=Z[:, [0, 1, 3]], heights=Z[:, 2])


REGISTRY: dict[str, Entry] = {
    # -- distance ------------------------------------------------------------------------
    "pairwise": Entry(lambda X, s: es.pairwise(X), {"": 1}),
    "gram_matrix": Entry(lambda X, s: es.gram_matrix(X), {"": 1}),
    "is_negative_type": Entry(lambda X, s: es.is_negative_type(es.pairwise(X)), {"": 0}),
    # -- homogeneity ---------------------------------------------------------------------
    "energy_distance": Entry(lambda X, s: es.energy_distance(*_split2(X)), {"": 1},
                             interrupt="_core/test_edges.py::test_ctrl_c_interrupts_a_long_call"),
    "energy_test": Entry(
        lambda X, s: es.energy_test(*_split2(X), n_resamples=NR, rng=s),
        {"statistic": 1, "pvalue": 0, "null_distribution": 1}, random=True,
        memory=lambda X, b: es.energy_test(*_split2(X), n_resamples=NR, rng=0, memory_budget=b),
        interrupt="_core/test_edges.py::test_ctrl_c_interrupts_a_long_call"),
    "disco": Entry(
        lambda X, s: es.disco(*_split3(X), n_resamples=NR, rng=s),
        {"statistic": 0, "pvalue": 0, "between": 1, "within": 1}, random=True,
        memory=lambda X, b: es.disco(*_split3(X), n_resamples=NR, rng=0, memory_budget=b)),
    "permanova": Entry(
        lambda X, s: es.permanova(es.pairwise(X), np.repeat([0, 1], N // 2), n_resamples=NR,
                                  rng=s),
        {"statistic": 0, "pvalue": 0, "null_distribution": 0}, random=True),
    "dispersion": Entry(lambda X, s: es.dispersion(X, np.repeat([0, 1], N // 2)),
                        {"F": 0, "W": 1, "S": 1, "T": 1}),
    # -- dependence ----------------------------------------------------------------------
    "distance_covariance": Entry(lambda X, s: es.distance_covariance(*_xyz(X)[:2]), {"": 1}),
    "distance_covariance_sqr": Entry(lambda X, s: es.distance_covariance_sqr(*_xyz(X)[:2]),
                                     {"": 2}),
    "distance_correlation": Entry(lambda X, s: es.distance_correlation(*_xyz(X)[:2]), {"": 0}),
    "distance_correlation_sqr": Entry(lambda X, s: es.distance_correlation_sqr(*_xyz(X)[:2]),
                                      {"": 0}),
    "distance_stats": Entry(lambda X, s: es.distance_stats(*_xyz(X)[:2]),
                            {"dcov": 1, "dcov_sqr": 2, "dcor": 0, "dcor_u": 0, "dvar_x": 1}),
    "distance_correlation_ttest": Entry(
        lambda X, s: es.distance_correlation_ttest(*_xyz(X)[:2]),
        {"statistic": 0, "pvalue": 0, "estimate": 0}),
    "distance_correlation_screen": Entry(
        lambda X, s: es.distance_correlation_screen(X[:, :2], X[:, 2], top=1, pvalue="permutation",
                                                    n_resamples=NR, adjust=None, rng=s),
        {"statistic": 0, "pvalue": 0}, random=True,
        notes="streamed over the features (no n×n matrix), so no memory budget"),
    "distance_correlation_scores": Entry(
        lambda X, s: SimpleNamespace(**dict(zip(("scores", "pvalues"),
                                                es.distance_correlation_scores(X[:, :2], X[:, 2])))),
        {"scores": 0, "pvalues": 0}),
    "DistanceCorrelationSelector": Entry(
        lambda X, s: es.DistanceCorrelationSelector(k=2, n_rounds=2).fit(X[:, :2], X[:, 2]),
        {"scores_": 0, "pvalues_": 0, "ranking_": 0}),
    "independence_coefficient": Entry(lambda X, s: es.independence_coefficient(*_xyz(X)[:2]), {"": 0},
                                      notes="O(n⁴) by its definition (no O(n²) form is known), "
                                            "refused past n = 447 instead of a memory budget"),
    "independence_coefficient_test": Entry(
        lambda X, s: es.independence_coefficient_test(*_xyz(X)[:2], n_resamples=NR, rng=s),
        {"statistic": 0, "pvalue": 0, "null_distribution": 0, "estimate": 0}, random=True),
    "auto_distance_correlation": Entry(lambda X, s: es.auto_distance_correlation(X[:, 0], lags=3),
                                       {"": 0}),
    "cross_distance_correlation": Entry(
        lambda X, s: es.cross_distance_correlation(X[:, 0], X[:, 1:], lags=2), {"": 0}),
    "adcf_test": Entry(lambda X, s: es.adcf_test(X[:, 0], lags=3, n_resamples=NR, rng=s),
                       {"statistic": 2, "pvalue": 0}, random=True),
    "cross_distance_correlation_test": Entry(
        lambda X, s: es.cross_distance_correlation_test(X[:, 0], X[:, 1:], lags=2, n_resamples=NR,
                                                        rng=s),
        {"statistic": 2, "pvalue": 0, "valid": 0, "block_length": 0}, random=True),
    "conditional_distance_correlation": Entry(
        lambda X, s: es.conditional_distance_correlation(*_xyz(X)), {"statistic": 0, "test_statistic": -2},
        notes="T = mean of 12 f(z)^4 cdCov^2: degree 2 from x and y, -4 from the density of z"),
    "conditional_independence_test": Entry(
        lambda X, s: es.conditional_independence_test(*_xyz(X), n_resamples=NR, rng=s),
        {"statistic": -2, "pvalue": 0}, random=True),
    "distance_correlation_matrix": Entry(
        lambda X, s: es.distance_correlation_matrix(X), {"dcor": 0},
        memory=lambda X, b: es.distance_correlation_matrix(X, memory_budget=b)),
    "independence_test": Entry(
        lambda X, s: es.independence_test(*_xyz(X)[:2], n_resamples=NR, rng=s),
        {"statistic": 2, "pvalue": 0, "null_distribution": 2}, random=True,
        memory=lambda X, b: es.independence_test(*_xyz(X)[:2], n_resamples=NR, rng=0,
                                                 memory_budget=b)),
    "mutual_independence_test": Entry(
        lambda X, s: es.mutual_independence_test(*_xyz(X), n_resamples=NR, rng=s),
        {"statistic": 0, "pvalue": 0, "estimates": 0}, random=True),     # sums of bias-corrected dcor
    "partial_distance_covariance": Entry(lambda X, s: es.partial_distance_covariance(*_xyz(X)),
                                         {"": 2}),
    "partial_distance_correlation": Entry(
        lambda X, s: es.partial_distance_correlation(*_xyz(X)), {"": 0}),
    "partial_distance_correlation_test": Entry(
        lambda X, s: es.partial_distance_correlation_test(*_xyz(X), n_resamples=NR, rng=s),
        {"statistic": 0, "pvalue": 0, "partial_dcov": 2}, random=True),
    "d_center": Entry(lambda X, s: es.d_center(es.pairwise(X)), {"": 1}),
    "u_center": Entry(lambda X, s: es.u_center(es.pairwise(X)), {"": 1}),
    "u_product": Entry(lambda X, s: es.u_product(es.u_center(es.pairwise(X[:, :1])),
                                                  es.u_center(es.pairwise(X[:, 1:]))), {"": 2}),
    # -- goodness of fit -----------------------------------------------------------------
    "gof_test": Entry(lambda X, s: es.gof_test(X[:, 0], "normal", n_resamples=NR, rng=s),
                      {"statistic": 0, "pvalue": 0}, random=True),
    "normality_test": Entry(lambda X, s: es.normality_test(X, n_resamples=NR, rng=s),
                            {"statistic": 0, "pvalue": 0}, random=True),
    "poisson_test": Entry(lambda X, s: es.poisson_test(_counts(X), n_resamples=NR, rng=s),
                          {"statistic": 0, "pvalue": 0}, random=True, magnitudes=False,
                          notes="counts: scaling the data is not a Poisson sample"),
    # -- clustering ----------------------------------------------------------------------
    "energy_clustering": Entry(lambda X, s: es.energy_clustering(X, 2, rng=s),
                               {"labels": 0, "W": 1, "S": 1}, random=True,
                               interrupt="_core/test_interrupt.py::TestCtrlC::test_kernel_that_never_converges"),
    "EnergyClustering": Entry(_fit_estimator, {"labels_": 0, "W_": 1, "S_": 1}, random=True,
                              interrupt="_core/test_interrupt.py::TestCtrlC::test_hartigan_restarts_in_threads",
                              notes="an estimator: records random_state, not seed"),
    "energy_linkage": Entry(_linkage, {"merges": 0, "heights": 1},
                            interrupt="_core/test_interrupt.py::TestCtrlC::test_energy_linkage_during_merges"),
    "cluster_test": Entry(lambda X, s: es.cluster_test(X, 2, n_resamples=NR, rng=s),
                          {"statistic": 0, "pvalue": 0, "labels": 0}, random=True,
                          interrupt="_core/test_interrupt.py::TestCtrlC::test_cluster_test_reference_fits_in_threads"),
    # -- balance (needs the [balance] extra: osqp) ------------------------------------------
    "energy_balancing_weights": Entry(
        lambda X, s: es.energy_balancing_weights(X[:, :2], X[:, 2] > 0), {"weights": 0, "objective": 0},
        # the QP named: with solver='auto' a budget too small for it hands the programme to
        # the first-order solver, equal to solver tolerance, not to rounding
        # (tests/balance/test_firstorder.py checks that path)
        memory=lambda X, b: es.energy_balancing_weights(X[:, :2], X[:, 2] > 0, memory_budget=b,
                                                        solver="osqp"),
        interrupt="balance/test_qp_interrupt.py::test_no_signal_lost",
        notes="studentized covariates: the weights and the objective do not change with the scale"),
    "independence_weights": Entry(
        lambda X, s: es.independence_weights(X[:, :2], X[:, 2]), {"weights": 0, "objective": 0},
        memory=lambda X, b: es.independence_weights(X[:, :2], X[:, 2], memory_budget=b)),
    "weighted_effect": Entry(
        lambda X, s: es.weighted_effect(X[:, 1], es.energy_balancing_weights(X[:, 2:], X[:, 0] > 0),
                                        n_boot=20, rng=s, n_threads=1),
        {"estimate": 1, "std_error": 1, "ci_low": 1, "ci_high": 1, "pvalue": 0, "bias_bound": 1,
         "unaugmented": 1, "augmentation_share": 0}, random=True,
        interrupt="balance/test_qp_interrupt.py::test_no_signal_lost",
        notes="the outcome and the covariates scale together: the effect, its SE, interval and "
              "bias bound have the outcome's units; the weights and the kernel outcome model "
              "(studentized covariates) do not change"),
    "balance_table": Entry(
        lambda X, s: es.balance_table(X[:, :2], X[:, 2] > 0, np.where(X[:, 0] > 0, 2.0, 1.0)),
        {"table": 0, "energy_before": 0, "energy_after": 0},
        notes="streamed (no n×n matrix), so no memory budget"),
    # -- change points -------------------------------------------------------------------
    "e_divisive": Entry(lambda X, s: es.e_divisive(X, min_size=3, n_resamples=NR, rng=s),
                        {"changepoints": 0, "statistics": 1, "pvalues": 0}, random=True),
    "e_agglo": Entry(lambda X, s: es.e_agglo(X, member=np.repeat(np.arange(8), 2)),
                     {"changepoints": 0, "fit": 1, "penalised_fit": 1}),
    "EDivisive": Entry(lambda X, s: _predicted(es.EDivisive(min_size=3, n_resamples=NR,
                                                            random_state=s), X),
                       {"changepoints": 0, "statistics": 1, "pvalues": 0}, random=True,
                       notes="the estimator's result_ after predict (e_divisive's result)"),
    "EAgglo": Entry(lambda X, s: _predicted(es.EAgglo(member=np.repeat(np.arange(8), 2)), X),
                    {"changepoints": 0, "fit": 1, "penalised_fit": 1}),
    "ECp3o": Entry(lambda X, s: _predicted(es.ECp3o(max_changepoints=3, delta=2), X),
                   {"changepoints": 0, "gof": 1},
                   interrupt="_core/test_interrupt.py::TestCtrlC::test_e_cp3o_programme"),
    "SktimeDetector": Entry(
        lambda X, s: es.SktimeDetector(es.ECp3o(max_changepoints=3, delta=2)).fit(X).estimator_.result_,
        {"changepoints": 0, "gof": 1},
        interrupt="_core/test_interrupt.py::TestCtrlC::test_e_cp3o_programme",
        notes="sktime's wrapper of the three estimators (tests/changepoint/test_sktime_detector.py)"),
    "e_cp3o": Entry(lambda X, s: es.e_cp3o(X, max_changepoints=3, delta=2),
                    {"changepoints": 0, "gof": 1, "n_changepoints": 0},
                    interrupt="_core/test_interrupt.py::TestCtrlC::test_e_cp3o_programme",
                    notes="no randomness: ecp's probabilistic pruning is not used"),
    "clustering_accuracy": Entry(
        lambda X, s: es.clustering_accuracy((X[:, 0] > 0).astype(int), (X[:, 1] > 0).astype(int)),
        {"": 0}),
}


def public_entry_points():
    """The names in ``energystats.__all__`` that are functions or estimators."""
    names = set()
    for name in es.__all__:
        obj = getattr(es, name)
        if isinstance(obj, type) and (issubclass(obj, Warning) or name.endswith("Result")):
            continue
        names.add(name)
    return names


def values(entry, result):
    """The entry's compared fields of ``result``, as float arrays."""
    out = {}
    for name in entry.fields:
        v = result if name == "" else getattr(result, name)
        if hasattr(v, "select_dtypes"):      # a table: its numeric columns (not 'type')
            v = v.select_dtypes("number")
        out[name] = np.asarray(v, dtype=float)
    return out
