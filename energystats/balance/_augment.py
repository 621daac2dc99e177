"""The augmented (doubly robust) balancing estimator, its influence-function variance and its
bias bound.

For a treatment level g with balancing weights :math:`\\gamma_i = w_i / \\sum_{j \\in g} w_j` on
its rows, target masses :math:`v` (the base-weighted sample for 'ATE', the focal level for
'ATT'/'ATC', or the ``target`` rows) and a cross-fitted outcome model :math:`\\hat m_g`,

.. math::

    \\hat\\mu_g = \\sum_t v_t \\hat m_g(x_t) + \\sum_{i \\in g} \\gamma_i (y_i - \\hat m_g(x_i)),

the augmented minimax linear estimator of Hirshberg and Wager (2021) with the energy balancing
weights, cross-fitted as in Chernozhukov et al. (2018).  A contrast is
:math:`\\hat\\tau = \\hat\\mu_g - \\hat\\mu_r`.  Its influence-function variance treats the weights
as fixed (their estimation is a second-order term of the augmented estimator when the outcome
model is consistent):

.. math::

    \\phi_i = v_i (\\hat d_i - \\bar d) + \\gamma^g_i e^g_i - \\gamma^r_i e^r_i, \\qquad
    \\widehat{\\mathrm{Var}} = \\tfrac{n}{n-1} \\sum_i (\\phi_i - \\bar\\phi)^2,

:math:`\\hat d = \\hat m_g - \\hat m_r`, :math:`\\bar d = \\sum_t v_t \\hat d_t`, plus
:math:`\\mathrm{var}(\\hat d_T) / m` for ``m`` separate target rows.

The bias bound (SPEC §11): for a function f in the distance-induced kernel's space H,
:math:`|\\sum_i \\gamma_i f(x_i) - \\sum_t v_t f(x_t)| \\le \\|f\\|_H \\sqrt{E_g / 2}`, E_g the
weighted energy distance of level g to the target; applied to the residual function
:math:`m_g - \\hat m_g`, with its norm estimated by the norm of the kernel ridge fit of the
level's cross-fitted residuals (:func:`._outcome.residual_norm`).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["augmented_means", "contrast_variance", "bias_bound", "bias_aware_halfwidth"]


def _gammas(w, codes, g):
    sel = (codes == g) & (w > 0)
    gam = np.zeros(w.size)
    gam[sel] = w[sel] / w[sel].sum()
    return gam


def augmented_means(y, w, codes, k, v, pred, pred_T):
    """``(mu, resid)``: each level's augmented mean; ``resid[g]`` the residuals
    ``y - pred[g]`` (meaningful on the level's rows).  ``v``: the target masses of the sample's
    rows, or None when ``pred_T`` (the target rows' predictions, equal masses) is the target."""
    mu = np.empty(k)
    resid = y[None, :] - pred
    for g in range(k):
        gam = _gammas(w, codes, g)
        target = float(pred_T[g].mean()) if v is None else float(v @ pred[g])
        mu[g] = target + float(gam @ resid[g])
    return mu, resid


def contrast_variance(w, codes, g, r, v, pred, pred_T, resid):
    """The influence-function variance of ``mu[g] - mu[r]`` (module docstring)."""
    n = w.size
    phi = _gammas(w, codes, g) * resid[g] - _gammas(w, codes, r) * resid[r]
    extra = 0.0
    if v is None:
        dT = pred_T[g] - pred_T[r]
        m = dT.size
        extra = float(np.var(dT, ddof=1)) / m if m > 1 else 0.0
    else:
        d = pred[g] - pred[r]
        phi = phi + v * (d - float(v @ d))
    return n / (n - 1) * float(np.sum((phi - phi.mean()) ** 2)) + extra


def bias_bound(norms, energies, g, r):
    """``||r_g|| sqrt(E_g / 2) + ||r_r|| sqrt(E_r / 2)``: the bound on the conditional bias of
    the contrast ``g - r`` for residual functions of the estimated norms."""
    return float(norms[g] * math.sqrt(max(energies[g], 0.0) / 2)
                 + norms[r] * math.sqrt(max(energies[r], 0.0) / 2))


def bias_aware_halfwidth(bound, se, confidence):
    """Armstrong and Kolesár's (2021) half-width ``cv(B/se) * se``: ``cv(b)`` solves
    ``P(|N(b, 1)| <= c) = confidence``, so the interval covers whenever the bias is at most
    ``bound``.  ``cv(0)`` is the normal quantile; for large b, ``cv(b) ≈ b + z_{confidence}``."""
    from scipy.optimize import brentq
    from scipy.special import ndtr

    if not (se > 0 and np.isfinite(se)):
        return float("nan")
    b = bound / se
    f = lambda c: ndtr(c - b) - ndtr(-c - b) - confidence  # noqa: E731
    return float(brentq(f, 0.0, b + 10.0, xtol=1e-12)) * se
