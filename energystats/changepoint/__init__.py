"""Change points of a series by energy statistics (Matteson & James 2014).

* :mod:`.e_divisive` — :func:`e_divisive`, hierarchical splits tested by permutation;
* :mod:`.e_agglo` — :func:`e_agglo`, merging adjacent segments;
* private: ``_search`` (the drivers of the compiled split search and of the permuted
  re-search), ``_results`` (:class:`EDivisiveResult`, :class:`EAggloResult`).

The kernels are in :mod:`energystats._lib._changepoint`.
"""
from __future__ import annotations

# the functions are bound after their modules (a module named like its function would
# otherwise shadow it as the package's attribute)
from ._results import ChangePointWarning, EAggloResult, EDivisiveResult
from .e_agglo import e_agglo
from .e_divisive import e_divisive

__all__ = ["e_divisive", "EDivisiveResult", "e_agglo", "EAggloResult", "ChangePointWarning"]
