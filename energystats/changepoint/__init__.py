"""Change points of a series by energy statistics (Matteson & James 2014).

* :mod:`.e_divisive` — :func:`e_divisive`, hierarchical splits tested by permutation;
* :mod:`.e_agglo` — :func:`e_agglo`, merging adjacent segments;
* :mod:`.e_cp3o` — :func:`e_cp3o`, a fixed number of change points by dynamic programming
  on windowed E-statistics (R ``ecp``'s ``e.cp3o``);
* :mod:`.estimators` — :class:`EDivisive`, :class:`EAgglo` and :class:`ECp3o`, their ruptures-style
  estimators (``fit(signal).predict()`` gives breakpoints ending with ``n_samples``);
* :mod:`.sktime_detector` — :class:`SktimeDetector`, any of them as an sktime detector (imported
  on first use: sktime is optional and slow to import);
* private: ``_search`` (the drivers of the compiled split search and of the permuted
  re-search), ``_results`` (:class:`EDivisiveResult`, :class:`EAggloResult`).

The kernels are in :mod:`energystats._lib._changepoint`.
"""
from __future__ import annotations

# the functions are bound after their modules (a module named like its function would
# otherwise shadow it as the package's attribute)
from ._results import ChangePointWarning, EAggloResult, ECp3oResult, EDivisiveResult
from .e_agglo import e_agglo
from .e_cp3o import e_cp3o
from .e_divisive import e_divisive
from .estimators import EAgglo, ECp3o, EDivisive

__all__ = ["e_divisive", "EDivisiveResult", "e_agglo", "EAggloResult", "ChangePointWarning",
           "EDivisive", "EAgglo", "ECp3o", "e_cp3o", "ECp3oResult", "SktimeDetector"]


def __getattr__(name):
    # SktimeDetector's module imports sktime when it is installed (seconds): only on first use
    if name == "SktimeDetector":
        from .sktime_detector import SktimeDetector

        globals()[name] = SktimeDetector
        return SktimeDetector
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
