"""Asymptotic p-values: tests that need no resampling, only where the theory gives a limit.

Chosen by a test's ``pvalue_method="asymptotic"``, never switched on by
default.  Two approximations:

* **Independence, the χ² test of distance correlation** (Shen, Panda &
  Vogelstein 2022, "The chi-square test of distance correlation", J. Comput.
  Graph. Stat. 31(1)).  With :math:`R^*_n` the bias-corrected distance
  correlation (R ``energy``'s ``bcdcor``), under independence
  :math:`n R^*_n` converges to :math:`\\sum_k w_k (Z_k^2 - 1)` with weights
  summing to one, whose upper tail the centred :math:`\\chi^2_1 - 1` dominates;
  the p-value is :math:`P(\\chi^2_1 \\ge n R^*_n + 1)`.
* **Equal distributions, a moment-matched gamma for the k-sample energy
  statistic.**  Written as a quadratic form of the group indicators in the
  double-centred pooled distance matrix, the statistic converges under the
  null hypothesis to :math:`\\sum_{j,l} \\lambda_j \\mu_l Z_{jl}^2`: the
  :math:`\\lambda_j` are the eigenvalues of the pooled distribution's
  double-centred distance kernel (as in Baringhaus & Franz's spectral
  approach), the :math:`\\mu_l` those of the k×k matrix
  :math:`Q = \\sum_{g<h} \\frac{n_g n_h}{n_g + n_h} v_{gh} v_{gh}^\\top`,
  :math:`v_{gh} = e_g/\\sqrt{n_g} - e_h/\\sqrt{n_h}`.  Its mean is
  :math:`\\binom{k}{2} \\sum_j \\lambda_j` with :math:`\\sum_j \\lambda_j =
  E\\rho(X, X')`, estimated by the mean distance between distinct rows (the
  exact mean of the statistic over relabellings), and its variance
  :math:`2 \\lVert Q \\rVert_F^2 \\sum_j \\lambda_j^2` with
  :math:`\\sum_j \\lambda_j^2` the pooled sample's distance variance,
  estimated without bias by the U-statistic (R ``energy``'s
  ``dcovU(z, z)``).  The p-value is the upper tail of the gamma law with that
  mean and variance.

Both are validated by simulation (``benchmarks/asymptotic_validity.py``,
recorded in ``docs/benchmarks/asymptotic_validity.txt``).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["ASYMPTOTIC", "check_options", "chi2_dcor_pvalue", "energy_moments", "gamma_pvalue",
           "group_form"]

ASYMPTOTIC = "asymptotic"


def check_options(fname, exact=None, strata=None):
    """The options an asymptotic p-value cannot honour are errors, not silently ignored."""
    if exact:
        raise ValueError(f"{fname}: `pvalue_method='asymptotic'` uses no resampling; it cannot be "
                         "combined with `exact=True`.")
    if strata is not None:
        raise ValueError(f"{fname}: `pvalue_method='asymptotic'` has no stratified form (the limit "
                         "is for exchangeable rows); use a permutation p-value with `strata`.")


def chi2_dcor_pvalue(n, dcor_u):
    """:math:`P(\\chi^2_1 \\ge n R^*_n + 1)` (NaN for a NaN correlation)."""
    from scipy import stats

    if not math.isfinite(dcor_u):
        return float("nan")
    return float(stats.chi2.sf(n * dcor_u + 1.0, 1))


def group_form(sizes):
    """``(trace, squared Frobenius norm)`` of the k×k matrix Q of the group sizes (module
    docstring); the trace is k(k − 1)/2 whatever the sizes."""
    n = np.asarray(sizes, dtype=np.float64)
    k = n.size
    Q = np.zeros((k, k))
    for g in range(k):
        for h in range(g + 1, k):
            v = np.zeros(k)
            v[g], v[h] = 1.0 / math.sqrt(n[g]), -1.0 / math.sqrt(n[h])
            Q += (n[g] * n[h] / (n[g] + n[h])) * np.outer(v, v)
    return float(np.trace(Q)), float(np.sum(Q * Q))


def energy_moments(sizes, mean_distance, dvar_u):
    """Mean and variance of the energy statistic's limit law (module docstring) from the group
    sizes, the mean distance between distinct pooled rows and the pooled U distance variance."""
    tr, fro2 = group_form(sizes)
    return tr * mean_distance, 2.0 * fro2 * dvar_u


def gamma_pvalue(statistic, mean, var):
    """Upper tail at ``statistic`` of the gamma law with this mean and variance; NaN (with a
    warning) when the moments do not define one (no spread in the pooled sample)."""
    from scipy import stats

    from ._permutation import DegenerateStatisticWarning
    from ._validation import warn

    if not (mean > 0 and var > 0 and math.isfinite(mean) and math.isfinite(var)):
        warn(f"the asymptotic p-value is undefined: the limit law's estimated mean ({mean!r}) and "
             f"variance ({var!r}) must be positive (the pooled sample has no spread, or is too small "
             "for the unbiased variance estimate); p-value NaN. Use a permutation p-value.",
             DegenerateStatisticWarning)
        return float("nan")
    shape = mean * mean / var
    return float(stats.gamma.sf(statistic, shape, scale=var / mean))
