"""energystats: energy statistics with a compiled core.

Energy distance, the W/S/T dispersion decomposition, permutation tests, DISCO
and energy clustering, for arrays and DataFrames (V-statistics; see the
documentation's conventions page for how every number relates to R
``energy``, ``dcor`` and ``scipy.stats``).

The public names are imported on first use (PEP 562), so ``import
energystats`` is cheap and does not import scikit-learn (only the clustering
estimator and the screening selector use it, when it is installed).
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0.dev0"

#: public name -> submodule that defines it
_EXPORTS = {
    "AntiConservativeWarning": "clustering",
    "ClusterTestResult": "clustering",
    "cluster_test": "clustering",
    "EnergyClustering": "clustering",
    "EnergyClusteringResult": "clustering",
    "clustering_accuracy": "clustering",
    "energy_clustering": "clustering",
    "ColumnScaleWarning": "clustering",
    "DispersionResult": "homogeneity",
    "dispersion": "homogeneity",
    "energy_linkage": "clustering",
    "DiscoResult": "homogeneity",
    "EnergyTestResult": "homogeneity",
    "disco": "homogeneity",
    "energy_test": "homogeneity",
    "permanova": "homogeneity",
    "PermanovaResult": "homogeneity",
    "energy_distance": "distance",
    "gram_matrix": "distance",
    "is_negative_type": "distance",
    "pairwise": "distance",
    "DistanceStatsResult": "dependence",
    "distance_correlation": "dependence",
    "distance_correlation_sqr": "dependence",
    "distance_covariance": "dependence",
    "distance_covariance_sqr": "dependence",
    "distance_stats": "dependence",
    "independence_test": "dependence",
    "distance_correlation_ttest": "dependence",
    "u_center": "dependence",
    "d_center": "dependence",
    "u_product": "dependence",
    "partial_distance_covariance": "dependence",
    "partial_distance_correlation": "dependence",
    "partial_distance_correlation_test": "dependence",
    "PartialDistanceTestResult": "dependence",
    "mutual_independence_test": "dependence",
    "MutualIndependenceTestResult": "dependence",
    "distance_correlation_matrix": "dependence",
    "DistanceCorrelationMatrixResult": "dependence",
    "DistanceCorrelationTTestResult": "dependence",
    "IndependenceTestResult": "dependence",
    "distance_correlation_screen": "dependence",
    "distance_correlation_scores": "dependence",
    "DistanceCorrelationSelector": "dependence",
    "independence_coefficient": "dependence",
    "independence_coefficient_test": "dependence",
    "IndependenceCoefficientTestResult": "dependence",
    "auto_distance_correlation": "dependence",
    "cross_distance_correlation": "dependence",
    "adcf_test": "dependence",
    "cross_distance_correlation_test": "dependence",
    "ADCFTestResult": "dependence",
    "CrossDistanceCorrelationTestResult": "dependence",
    "conditional_distance_correlation": "dependence",
    "conditional_independence_test": "dependence",
    "ConditionalDistanceCorrelationResult": "dependence",
    "ConditionalIndependenceTestResult": "dependence",
    "ScreeningResult": "dependence",
    "GoodnessOfFitResult": "goodness_of_fit",
    "PoissonTestsResult": "goodness_of_fit",
    "normality_test": "goodness_of_fit",
    "poisson_test": "goodness_of_fit",
    "gof_test": "goodness_of_fit",
    "energy_balancing_weights": "balance",
    "independence_weights": "balance",
    "balance_table": "balance",
    "BalancingWeightsResult": "balance",
    "IndependenceWeightsResult": "balance",
    "BalanceTableResult": "balance",
    "BalanceWarning": "balance",
    "weighted_effect": "balance",
    "EffectResult": "balance",
    "DataConversionWarning": "_core._validation",
    "DegenerateStatisticWarning": "_core._permutation",
    "SeriesDependenceWarning": "_core._serial",
    "e_divisive": "changepoint",
    "ChangePointWarning": "changepoint",
    "EDivisiveResult": "changepoint",
    "e_agglo": "changepoint",
    "EAggloResult": "changepoint",
    "e_cp3o": "changepoint",
    "ECp3oResult": "changepoint",
    "EDivisive": "changepoint",
    "SktimeDetector": "changepoint",
    "EAgglo": "changepoint",
    "ECp3o": "changepoint",
}

__all__ = sorted(_EXPORTS)


#: subpackages reachable as attributes (``es.datasets.load_nile()``), imported on first use
_SUBMODULES = ("datasets",)


def __getattr__(name):
    if name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
        globals()[name] = value
        return value
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'energystats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | set(_SUBMODULES))
