"""Homogeneity of distributions: the k-sample energy test, DISCO and the W/S/T dispersion.

* :mod:`.energy_test` — :func:`energy_test` (permutation, exact, asymptotic);
* :mod:`.disco` — :func:`disco`, distance components for one or several factors;
* :mod:`.dispersion` — :func:`dispersion`, the W/S/T decomposition;
* :mod:`.permanova` — :func:`permanova`, DISCO with index 2 under scikit-bio's name and fields;
* private: ``_setup`` (input), ``_finish`` and ``_results`` (results), ``_dask`` (the Dask driver).

The grouped statistics and the decomposition of one group-sum matrix live below the concepts,
in :mod:`energystats._core._grouped`.
"""
from __future__ import annotations

# the functions are bound after their modules (a module named like its function would
# otherwise shadow it as the package's attribute)
from ._results import DiscoResult, EnergyTestResult, PermanovaResult
from .disco import disco
from .dispersion import DispersionResult, dispersion
from .energy_test import energy_test
from .permanova import permanova

__all__ = ["energy_test", "EnergyTestResult", "disco", "DiscoResult", "dispersion", "DispersionResult",
           "permanova", "PermanovaResult"]
