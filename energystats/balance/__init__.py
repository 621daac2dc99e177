"""Balance: weights that make covariate distributions alike, and the table that checks them.

* :mod:`.weights` — :func:`energy_balancing_weights` (Huling and Mak 2024) for binary and
  multi-category treatments, :func:`independence_weights` (Huling, Greifer and Chen 2023)
  for continuous ones;
* :mod:`.table` — :func:`balance_table`, the per-covariate and overall balance before and
  after weighting;
* private: ``_forms`` (inputs, standardisation, the quadratic forms), ``_qp`` (the QP
  solvers, imported on call, and the KKT residual), ``_design`` (factor expansion, weights
  aligned by index, working units).
"""
from __future__ import annotations

from .table import BalanceTableResult, BalanceWarning, balance_table
from .weights import (BalancingWeightsResult, IndependenceWeightsResult, energy_balancing_weights,
                      independence_weights)

__all__ = ["energy_balancing_weights", "independence_weights", "balance_table",
           "BalancingWeightsResult", "IndependenceWeightsResult", "BalanceTableResult",
           "BalanceWarning"]
