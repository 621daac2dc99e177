"""Results of the goodness-of-fit tests: :class:`GoodnessOfFitResult`, :class:`PoissonTestsResult`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core._permutation import pvalue_se

__all__ = ["GoodnessOfFitResult", "PoissonTestsResult"]


@notebook_display
@dataclass(frozen=True)
class GoodnessOfFitResult:
    r"""Result of :func:`normality_test`, :func:`poisson_test` and :func:`gof_test`.

    Attributes
    ----------
    statistic : float
        The test statistic (:math:`\mathcal{E}_n` for ``statistic_name='energy'``).
    pvalue : float or None
        Bootstrap p-value :math:`(1 + \#\{T^* \ge T\})/(R + 1)`, or the limit p-value
        (``method='limit'``); None with ``n_resamples=0``.
    null_distribution : ndarray, shape (n_resamples,)
        The statistic of each bootstrap sample (parameters re-estimated on each).
    distribution : str
        The hypothesised family ('normal', 'multivariate normal', 'poisson' or a SciPy name).
    params : dict
        Its parameters: estimated from the data (names in ``fitted``) or given.
    fitted : tuple of str
        The parameters estimated from the data (and re-estimated in every replicate).
    method : str
        'bootstrap' (parametric bootstrap), 'limit' (limit distribution) or 'none'.
    statistic_name : str
        'energy', 'm-cvm' or 'm-ad'.
    n_resamples : int
    n_samples, n_features : int
    pvalue_se : float or None
        Monte Carlo standard error of a bootstrap p-value.
    seed : int or None
    columns : list or None
        DataFrame columns (or the Series name) used.
    pvalue_method : str
        'full', 'sequential' or 'decision' (bootstrap stopped early, see
        :func:`energystats.energy_test`); with the last two ``n_resamples``
        counts the replicates used and ``pvalue_se`` is None.
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    distribution: str
    params: dict
    fitted: tuple
    method: str
    statistic_name: str
    n_resamples: int
    n_samples: int
    n_features: int = 1
    pvalue_se: float | None = None
    seed: int | None = None
    columns: list | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """One row: distribution, statistic, p-value, its Monte Carlo error, method, R, n, and
        the parameters (``param_<name>`` columns)."""
        row = {"distribution": [self.distribution], "statistic_name": [self.statistic_name],
               "statistic": [self.statistic], "pvalue": [self.pvalue],
               "pvalue_se": [self.pvalue_se], "method": [self.method],
               "n_resamples": [self.n_resamples], "n_samples": [self.n_samples],
               "n_features": [self.n_features]}
        for k, v in self.params.items():
            if np.ndim(v) == 0:
                row[f"param_{k}"] = [v]
        return pd.DataFrame(row, index=pd.Index(["goodness of fit"], name="test"))

    def __repr__(self):
        p = "None" if self.pvalue is None else f"{self.pvalue:.4g}"
        return (f"GoodnessOfFitResult(statistic={self.statistic:.6g}, pvalue={p}, "
                f"distribution={self.distribution!r}, method={self.method!r}, "
                f"n_resamples={self.n_resamples})")


@notebook_display
@dataclass(frozen=True)
class PoissonTestsResult:
    """Result of ``poisson_test(..., statistic='all')``: one :class:`GoodnessOfFitResult` per
    statistic, all from the same bootstrap samples (as R ``energy``'s ``poisson.tests``)."""

    results: dict

    def __getitem__(self, name):
        return self.results[name]

    def to_frame(self):
        """One row per statistic."""
        frames = [r.to_frame().set_axis([name], axis=0) for name, r in self.results.items()]
        return pd.concat(frames).rename_axis("statistic")
