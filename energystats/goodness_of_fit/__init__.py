"""Energy goodness-of-fit tests: normality, the Poisson law and one-dimensional SciPy families.

* :mod:`.normality` — :func:`normality_test`;
* :mod:`.poisson` — :func:`poisson_test`;
* :mod:`.distributions` — :func:`gof_test` for a SciPy family;
* private: ``_bootstrap`` (the parametric bootstrap), ``_results``, ``_families`` (the
  family table), ``_limit`` (the limit law), ``_poisson`` (the Poisson statistics).
"""
from __future__ import annotations

from ._families import ALIASES  # the family names' aliases: also the CLI's
from ._results import GoodnessOfFitResult, PoissonTestsResult
from .distributions import gof_test
from .normality import normality_test
from .poisson import poisson_test

__all__ = ["GoodnessOfFitResult", "PoissonTestsResult", "normality_test", "poisson_test", "gof_test"]
