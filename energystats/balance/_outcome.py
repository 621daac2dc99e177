"""Outcome models of the augmented effect estimator, and their cross-fitting.

* :class:`EnergyKernelRidge` — kernel ridge regression on the kernel that the Euclidean
  distance induces, :math:`k(x, x') = \\tfrac12[\\bar\\rho(x) + \\bar\\rho(x') - \\rho(x, x')
  - \\bar{\\bar\\rho}]` (the distance-induced kernel of Sejdinovic et al. 2013, centred at the
  landmarks' mean), with an unpenalised intercept and the penalty chosen by exact
  leave-one-out cross-validation over a grid.  It is ridge regression on the features
  :math:`\\Phi = k(x, L) K_{LL}^{+1/2}` of ``L`` landmark rows (all rows up to
  ``MAX_LANDMARKS``, a seeded sample above it: the Nyström approximation), so with every row a
  landmark it is exact kernel ridge regression, and the norm of a fit in the kernel's space is
  the Euclidean norm of its coefficients.
* :class:`LinearOutcome` — least squares with an intercept.
* :func:`resolve_model` — the ``outcome_model=`` argument checked; a scikit-learn regressor is
  cloned for every fit.
* :func:`cross_fit` — each row's prediction from the model of every level fitted on the other
  folds' rows of that level (the model for a row never saw that row).
"""
from __future__ import annotations

import copy

import numpy as np

from .._core._validation import is_int
from . import _forms

__all__ = ["EnergyKernelRidge", "LinearOutcome", "resolve_model", "cross_fit", "make_folds",
           "residual_norm", "MODEL_NAMES"]

#: the rows of a fit beyond which a seeded sample of this many rows are its landmarks
MAX_LANDMARKS = 1500
#: the penalty grid: tau times the mean squared singular value of the features
TAUS = np.logspace(-6, 2, 33)
MODEL_NAMES = ("kernel", "linear")


def _cross_distances(A, B):
    from .._core._engine import pairwise_values
    from .._core._metrics import resolve_metric

    return pairwise_values(np.ascontiguousarray(A), np.ascontiguousarray(B),
                           resolve_metric("energy", 1.0), 1)


def ridge_loo(F, y):
    """``(loo, penalty, coef, intercept)``: ridge regression of ``y`` on the features ``F`` with
    an unpenalised intercept, the penalty the one of ``TAUS`` x (the mean positive squared
    singular value of the centred ``F``) with the least exact leave-one-out squared error
    ``loo``."""
    n = F.shape[0]
    fmean, ymean = F.mean(axis=0), float(y.mean())
    Fc, yc = F - fmean, y - ymean
    # the thin SVD of Fc from its m x m Gram matrix (two matrix products, no n x m SVD):
    # Fc = U diag(sv) W', the directions with no weight dropped
    s2, W = np.linalg.eigh(Fc.T @ Fc)
    keep = s2 > (s2.max() if s2.size else 0.0) * 1e-10
    s2, W = s2[keep], W[:, keep]
    sv = np.sqrt(s2)
    U = (Fc @ W) / sv[None, :]
    c = U.T @ yc
    scale = float(s2.mean()) if s2.size else 1.0     # the mean positive squared value
    best = None
    U2 = U * U
    for tau in TAUS:
        lam = tau * scale
        f = s2 / (s2 + lam)
        h = 1.0 / n + U2 @ f
        fit = U @ (f * c)
        with np.errstate(divide="ignore", invalid="ignore"):
            loo = float(np.sum(((yc - fit) / (1.0 - h)) ** 2))
        if np.isfinite(loo) and (best is None or loo < best[0]):
            best = (loo, lam)
    loo, lam = best if best is not None else (np.inf, TAUS[-1] * scale)
    coef = W @ (sv / (s2 + lam) * c) if sv.size else np.zeros(F.shape[1])
    return loo, lam, coef, ymean - float(fmean @ coef)


class EnergyKernelRidge:
    """Kernel ridge regression on the distance-induced (energy) kernel; see the module."""

    def __init__(self, max_landmarks=MAX_LANDMARKS, seed=0):
        self.max_landmarks = max_landmarks
        self.seed = seed

    def _features(self, X):
        D = _cross_distances(X, self.landmarks_)
        K = -0.5 * (D - D.mean(axis=1)[:, None] - self.dbar_[None, :] + self.dbarbar_)
        return K @ self.root_

    def fit(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        n = X.shape[0]
        if n > self.max_landmarks:
            pick = np.sort(np.random.default_rng(self.seed).choice(n, self.max_landmarks,
                                                                   replace=False))
            L = X[pick]
        else:
            L = X
        DL = _forms.distance_matrix(np.ascontiguousarray(L), 1)
        self.landmarks_ = np.ascontiguousarray(L)
        self.dbar_ = DL.mean(axis=0)
        self.dbarbar_ = float(self.dbar_.mean())
        KL = -0.5 * _forms.double_centre(DL)
        s, V = np.linalg.eigh(KL)
        keep = s > s.max() * 1e-10 if s.size and s.max() > 0 else np.zeros(s.size, bool)
        # K_LL^{+1/2}: the features' inner products are the kernel's on the landmarks' span
        self.root_ = ((V[:, keep] / np.sqrt(s[keep])[None, :]) @ V[:, keep].T if keep.any()
                      else np.zeros((L.shape[0], L.shape[0])))
        F = self._features(X)
        self.loo_, self.alpha_, self.coef_, self.intercept_ = ridge_loo(F, y)
        self.norm_ = float(np.linalg.norm(self.coef_))
        return self

    def predict(self, X):
        return self._features(np.asarray(X, dtype=np.float64)) @ self.coef_ + self.intercept_


class LinearOutcome:
    """Least squares of ``y`` on ``X`` with an intercept (minimum-norm when rank deficient)."""

    def fit(self, X, y):
        A = np.column_stack([np.ones(X.shape[0]), X])
        beta, *_ = np.linalg.lstsq(A, y, rcond=None)
        self.intercept_, self.coef_ = float(beta[0]), beta[1:]
        return self

    def predict(self, X):
        return X @ self.coef_ + self.intercept_


def resolve_model(outcome_model):
    """``(name, factory)``: the model's name for the result and a function that returns a new,
    unfitted model; a scikit-learn-style regressor must have ``fit`` and ``predict``."""
    if isinstance(outcome_model, str):
        if outcome_model == "kernel":
            return "kernel", lambda seed: EnergyKernelRidge(seed=seed)
        if outcome_model == "linear":
            return "linear", lambda seed: LinearOutcome()
        raise ValueError("`outcome_model` must be 'auto', 'kernel', 'linear', None or a regressor "
                         f"with fit(X, y) and predict(X); got {outcome_model!r}.")
    if not (callable(getattr(outcome_model, "fit", None))
            and callable(getattr(outcome_model, "predict", None))) or isinstance(outcome_model, type):
        raise TypeError("`outcome_model` must be 'auto', 'kernel', 'linear', None or a regressor "
                        "instance with fit(X, y) and predict(X) (scikit-learn's API); got "
                        f"{outcome_model!r}.")

    def factory(seed):
        try:
            from sklearn.base import clone

            return clone(outcome_model)
        except Exception:   # not a scikit-learn estimator (or scikit-learn missing): a copy
            return copy.deepcopy(outcome_model)
    return type(outcome_model).__name__, factory


def check_folds(n_folds, sizes, groups):
    """``n_folds`` an integer >= 2 with at least two rows of every level in every fold's
    training part and one in each fold."""
    if not is_int(n_folds) or n_folds < 2:
        raise ValueError(f"`n_folds` must be an integer >= 2 (the cross-fitting folds); got "
                         f"{n_folds!r}.")
    for g, m in zip(groups, sizes):
        if m < n_folds:
            raise ValueError(f"`n_folds`={n_folds} needs at least {n_folds} rows of every treatment "
                             f"level (each fold holds rows of each level, and each level's model is "
                             f"fitted on the other folds); level {g!r} has {m}. Use fewer folds or "
                             "outcome_model=None.")
    return int(n_folds)


def make_folds(codes, k, n_folds, gen):
    """Each row's fold: within every level a random permutation dealt round-robin, so every
    fold holds ⌊n_g/K⌋ or ⌈n_g/K⌉ rows of level g."""
    fold = np.empty(codes.size, dtype=np.int64)
    for g in range(k):
        idx = np.flatnonzero(codes == g)
        fold[gen.permutation(idx)] = np.arange(idx.size) % n_folds
    return fold


def _checked_predictions(p, rows, name):
    p = np.asarray(p, dtype=np.float64).ravel()
    if p.shape != (rows,):
        raise ValueError(f"`outcome_model` ({name}).predict returned shape {np.shape(p)} for {rows} "
                         "rows; it must return one number per row.")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"`outcome_model` ({name}) predicted non-finite values ({int(np.sum(~np.isfinite(p)))} "
                         "of them) on the held-out fold; the augmented estimate would be NaN. Use "
                         "another model or outcome_model='kernel'.")
    return p


def cross_fit(factory, name, X, y, codes, levels, fold, n_folds, T=None, y_shift=0, tick=None):
    """``(pred, pred_T)``: ``pred[g, i]`` the prediction for row ``i`` of the model of level
    ``levels[g]`` fitted on that level's rows outside row ``i``'s fold; ``pred_T[g]`` the mean of
    the ``n_folds`` models' predictions for the target rows ``T`` (or None).  ``y`` is in working
    units, ``y * 2**y_shift`` the user's: a user's regressor is fitted in the user's units and its
    predictions brought to the working units (exact: a power of two)."""
    own = name in MODEL_NAMES
    to_user = (lambda v: v) if own else (lambda v: np.ldexp(v, y_shift))  # noqa: E731
    back = (lambda p: p) if own else (lambda p: np.ldexp(p, -y_shift))  # noqa: E731
    n = X.shape[0]
    pred = np.empty((len(levels), n))
    pred_T = None if T is None else np.zeros((len(levels), T.shape[0]))
    for j, g in enumerate(levels):
        for k in range(n_folds):
            train = (codes == g) & (fold != k)
            model = factory(k)
            model.fit(X[train], to_user(y[train]))
            held = fold == k
            pred[j, held] = back(_checked_predictions(model.predict(X[held]), int(held.sum()), name))
            if T is not None:
                pred_T[j] += back(_checked_predictions(model.predict(T), T.shape[0], name)) / n_folds
            if tick is not None:
                tick()
    return pred, pred_T


def residual_norm(X, e):
    """The norm, in the distance-induced kernel's space, of the kernel ridge fit (penalty by
    leave-one-out) of the residuals ``e`` on ``X``: the part of the residual function that the
    data can see."""
    if e.size < 3 or not np.any(e != e[0]):
        return 0.0
    return EnergyKernelRidge().fit(X, e).norm_
