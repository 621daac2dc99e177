"""The point estimates of :func:`.effect.weighted_effect` on one (re)sample of rows.

:class:`Setup` is everything about a call that does not change between resamples (the kind of
treatment, the levels, the reference, the outcome model); :func:`point` computes the
estimates of one sample: the difference of weighted means, the weighted least squares with
covariates (``outcome_model='linear'``), or the cross-fitted augmented estimator
(:mod:`._augment`, ``outcome_model='kernel'`` or a regressor), with what the standard error
and the bias bound need.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _augment, _forms, _outcome

__all__ = ["Setup", "Point", "point", "target_masses"]


@dataclass(frozen=True)
class Setup:
    kind: str                 # 'categorical' or 'continuous'
    k: int                    # levels (0 for continuous)
    ref: int | None
    focal_code: int | None
    model: str | None         # None, 'linear', 'kernel' or 'regressor'
    model_spec: object        # what resolve_model takes ('kernel' or the regressor)
    n_folds: int
    standardize: str | None   # the weights' standardisation (the kernel model's units)
    y_shift: int = 0          # the outcome's working units: y_user = y * 2**y_shift


@dataclass
class Point:
    estimate: np.ndarray            # one per contrast
    means: np.ndarray | None        # one per level (categorical)
    variance: np.ndarray | None     # sandwich or influence-function variance per contrast
    plain: np.ndarray | None        # the difference of weighted means (augmented runs)
    resid: np.ndarray | None        # (k, n) cross-fitted residuals (augmented runs)
    fold: np.ndarray | None


# -- the difference of weighted means and the weighted least squares --------------------------


def _wls(D, y, w):
    """Weighted least squares of ``y`` on the columns of ``D``: ``(beta, cov)``, ``cov`` the
    HC0 sandwich ``(D'WD)^-1 D'W diag(e²) W D (D'WD)^-1`` (the weights held fixed)."""
    sw = np.sqrt(w)
    beta, *_ = np.linalg.lstsq(D * sw[:, None], y * sw, rcond=None)
    e = y - D @ beta
    bread = np.linalg.pinv(D.T @ (D * w[:, None]))
    meat = (D * (w * e)[:, None]).T @ (D * (w * e)[:, None])
    return beta, bread @ meat @ bread


def _level_means(y, w, codes, k, C, centre, want_cov):
    """Per level: the weighted mean outcome, or with covariates ``C`` the intercept of the
    level's WLS on ``C - centre`` (its prediction at the target's covariate means); and the
    HC0 variance of each (levels are independent: a diagonal)."""
    means, var = np.empty(k), np.empty(k)
    for g in range(k):
        sel = (codes == g) & (w > 0)
        wg, yg = w[sel], y[sel]
        if C is None:
            D = np.ones((wg.size, 1))
        else:
            D = np.column_stack([np.ones(wg.size), C[sel] - centre])
        beta, cov = _wls(D, yg, wg) if want_cov else (_wls(D, yg, wg)[0], None)
        means[g] = beta[0]
        var[g] = cov[0, 0] if want_cov else np.nan
    return means, var


def centre_of(setup, C, s, codes, T):
    """The covariate means at which the adjusted levels are compared: the target's (the
    base-weighted sample for 'ATE', the focal level for 'ATT'/'ATC', the ``target`` rows)."""
    if C is None:
        return None
    if setup.kind == "categorical" and T is not None:
        return T.mean(axis=0)
    sel = np.ones(len(s), dtype=bool) if setup.focal_code is None else codes == setup.focal_code
    return (s[sel] @ C[sel]) / s[sel].sum()


def target_masses(setup, s, codes, T):
    """The target's masses on the sample's rows (None when the target is the ``T`` rows)."""
    if T is not None:
        return None
    if setup.focal_code is None:
        return s / s.sum()
    v = np.where(codes == setup.focal_code, s, 0.0)
    return v / v.sum()


def _contrast(values, setup):
    return np.array([values[g] - values[setup.ref] for g in range(setup.k) if g != setup.ref])


# -- one sample ---------------------------------------------------------------------------------


def point(setup, y, w, codes, a, s, C, Z, T, gen, want_var=False, tick=None):
    """The estimates of one sample (``C``: the covariates of the linear adjustment or of the
    outcome model as given; ``Z``: the weights' covariates; ``T``: the target rows or None;
    ``gen``: the folds' generator)."""
    if setup.kind == "continuous":
        D = np.column_stack([np.ones(y.size), a] + ([] if C is None else [C - C.T @ s / s.sum()]))
        keep = w > 0
        beta, cov = _wls(D[keep], y[keep], w[keep])
        return Point(beta[1:2], None, np.diag(cov)[1:2] if want_var else None, None, None, None)
    if setup.model in (None, "linear"):
        centre = centre_of(setup, C if setup.model else None, s, codes, T)
        means, var = _level_means(y, w, codes, setup.k, C if setup.model else None, centre,
                                  want_var)
        v = (np.array([var[g] + var[setup.ref] for g in range(setup.k) if g != setup.ref])
             if want_var else None)
        return Point(_contrast(means, setup), means, v, None, None, None)
    return _augmented(setup, y, w, codes, s, C, Z, T, gen, want_var, tick)


def model_units(setup, Z, s, T, C):
    """The outcome model's covariates (and the target rows in the same units): the weights'
    covariates in the weights' standardisation, or ``C`` as given."""
    if C is not None:
        return C, None if T is None else T
    return _forms.standardise(Z, setup.standardize, s, T)


def _augmented(setup, y, w, codes, s, C, Z, T, gen, want_var, tick=None):
    X, XT = model_units(setup, Z, s, T, C)
    name, factory = _outcome.resolve_model(setup.model_spec)
    fold = _outcome.make_folds(codes, setup.k, setup.n_folds, gen)
    pred, pred_T = _outcome.cross_fit(factory, name, X, y, codes, range(setup.k), fold,
                                      setup.n_folds, XT, setup.y_shift, tick)
    v = target_masses(setup, s, codes, T)
    mu, resid = _augment.augmented_means(y, w, codes, setup.k, v, pred, pred_T)
    plain, _ = _level_means(y, w, codes, setup.k, None, None, False)
    var = None
    if want_var:
        var = np.array([_augment.contrast_variance(w, codes, g, setup.ref, v, pred, pred_T, resid)
                        for g in range(setup.k) if g != setup.ref])
    return Point(_contrast(mu, setup), mu, var, _contrast(plain, setup), resid, fold)


def residual_norms(setup, Z, s, T, codes, resid, tick=None):
    """Each level's residual norm in the kernel's space, on the weights' covariates in the
    weights' units (those of the energies the weights report)."""
    X, _ = _forms.standardise(Z, setup.standardize, s, T)
    norms = np.empty(setup.k)
    for g in range(setup.k):
        norms[g] = _outcome.residual_norm(X[codes == g], resid[g][codes == g])
        if tick is not None:
            tick()
    return norms
