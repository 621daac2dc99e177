"""Dependence: distance covariance and correlation (Székely, Rizzo and Bakirov 2007) and their tests.

* :mod:`.statistics` — :func:`distance_stats`, :func:`distance_covariance`,
  :func:`distance_correlation` and their squares;
* :mod:`.independence` — :func:`independence_test`, :func:`distance_correlation_ttest`;
* :mod:`.partial` — partial distance covariance and correlation and their test;
* :mod:`.mutual` — :func:`mutual_independence_test`;
* :mod:`.matrix` — :func:`distance_correlation_matrix`;
* :mod:`.screening` — :func:`distance_correlation_screen` (DC-SIS);
* :mod:`.scores` — :func:`distance_correlation_scores` (for scikit-learn's univariate selectors);
* :mod:`.selector` — :class:`DistanceCorrelationSelector` (DC-SIS as a scikit-learn selector;
  imported on first use, so that this package does not import scikit-learn);
* :mod:`.mvi` — :func:`independence_coefficient` and :func:`independence_coefficient_test`
  (R ``mvI``, ``mvI.test``; Bakirov, Rizzo and Székely 2006);
* :mod:`.conditional` — :func:`conditional_distance_correlation` and
  :func:`conditional_independence_test` (Wang et al. 2015; engine in ``_conditional``);
* :mod:`.timeseries` — :func:`auto_distance_correlation` (ADCF),
  :func:`cross_distance_correlation`, :func:`adcf_test`, :func:`cross_distance_correlation_test`;
* private: ``_input``, ``_result``, ``_centring`` (with the public :func:`u_center`,
  :func:`d_center`, :func:`u_product`), ``_products`` (permutation engines), ``_dask``.

The pair sums themselves are below the concepts, in :mod:`energystats._core._pair_sums`.
"""
from __future__ import annotations

from ._centring import d_center, u_center, u_product
from ._result import DistanceStatsResult
from .conditional import (ConditionalDistanceCorrelationResult, ConditionalIndependenceTestResult,
                          conditional_distance_correlation, conditional_independence_test)
from .independence import (DistanceCorrelationTTestResult, IndependenceTestResult,
                           distance_correlation_ttest, independence_test)
from .matrix import DistanceCorrelationMatrixResult, distance_correlation_matrix
from .mutual import MutualIndependenceTestResult, mutual_independence_test
from .partial import (PartialDistanceTestResult, partial_distance_correlation,
                      partial_distance_correlation_test, partial_distance_covariance)
from .mvi import (IndependenceCoefficientTestResult, independence_coefficient,
                  independence_coefficient_test)
from .screening import ScreeningResult, distance_correlation_screen
from .scores import distance_correlation_scores
from .statistics import (distance_correlation, distance_correlation_sqr, distance_covariance,
                         distance_covariance_sqr, distance_stats)
from .timeseries import (ADCFTestResult, CrossDistanceCorrelationTestResult, adcf_test,
                         auto_distance_correlation, cross_distance_correlation,
                         cross_distance_correlation_test)

__all__ = ["distance_covariance", "distance_correlation", "distance_covariance_sqr",
           "distance_correlation_sqr", "distance_stats", "DistanceStatsResult",
           "independence_test", "IndependenceTestResult", "distance_correlation_ttest",
           "DistanceCorrelationTTestResult", "u_center", "d_center", "u_product",
           "partial_distance_covariance", "partial_distance_correlation",
           "partial_distance_correlation_test", "PartialDistanceTestResult",
           "mutual_independence_test", "MutualIndependenceTestResult",
           "distance_correlation_matrix", "DistanceCorrelationMatrixResult",
           "distance_correlation_screen", "distance_correlation_scores", "ScreeningResult",
           "DistanceCorrelationSelector",
           "independence_coefficient", "independence_coefficient_test",
           "IndependenceCoefficientTestResult",
           "auto_distance_correlation", "cross_distance_correlation", "adcf_test",
           "cross_distance_correlation_test", "ADCFTestResult",
           "CrossDistanceCorrelationTestResult",
           "conditional_distance_correlation", "ConditionalDistanceCorrelationResult",
           "conditional_independence_test", "ConditionalIndependenceTestResult"]


#: public names defined in modules imported on first use (PEP 562): name -> module
_LAZY = {"DistanceCorrelationSelector": ".selector"}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
