"""Options of the dependence statistics: the estimator's name.  The variables, pairs and strata
are read by the input layer (:mod:`energystats._core._input`).
"""
from __future__ import annotations


ESTIMATORS = ("V", "U")


def _check_estimator(estimator):
    if estimator not in ESTIMATORS:
        raise ValueError(f"`estimator` must be 'V' or 'U'; got {estimator!r}.")
    return estimator
