"""Balance: weights that make covariate distributions alike, and the table that checks them.

* :mod:`.weights` — :func:`energy_balancing_weights` (Huling and Mak 2024) for binary and
  multi-category treatments, :func:`independence_weights` (Huling, Greifer and Chen 2023)
  for continuous ones;
* :mod:`.table` — :func:`balance_table`, the per-covariate and overall balance before and
  after weighting;
* :mod:`.effect` — :func:`weighted_effect`, the effect the weights estimate, with a
  resampling (half-samples that solve the weights again, or a bootstrap) or sandwich
  standard error and interval;
* private: ``_forms`` (inputs, standardisation, the quadratic forms), ``_programme`` (the
  energy balancing programme from checked inputs, exact constraints), ``_qp`` (the QP
  solvers, imported on call, and the KKT residual), ``_firstorder`` (the exact programme
  without an n×n matrix: projected conjugate gradients on streamed products), ``_cells``
  (the cell approximation), ``_design`` (factor expansion, alignment, working units),
  ``_dask`` (the effect's resamples as Dask tasks).
"""
from __future__ import annotations

from .effect import EffectResult, weighted_effect
from .table import BalanceTableResult, BalanceWarning, balance_table
from .weights import (BalancingWeightsResult, IndependenceWeightsResult, energy_balancing_weights,
                      independence_weights)

__all__ = ["energy_balancing_weights", "independence_weights", "balance_table",
           "BalancingWeightsResult", "IndependenceWeightsResult", "BalanceTableResult",
           "BalanceWarning", "weighted_effect", "EffectResult"]
