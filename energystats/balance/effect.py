"""Treatment effects from balancing weights, with standard errors and confidence intervals."""
from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core._dask import use_dask
from .._core._permutation import DegenerateStatisticWarning
from .._core._validation import align_labels, check_n_threads, is_int, seeded_rng, short_list, warn
from . import _augment, _design, _effect_point, _forms, _outcome, _programme

__all__ = ["weighted_effect", "EffectResult"]

SE_METHODS = ("auto", "influence", "subsample", "bootstrap", "sandwich", None)
RESAMPLED = ("subsample", "bootstrap")
CI_METHODS = ("percentile", "normal", "bias-aware")
#: the share of bootstrap resamples whose weights may fail (a level whose resampled rows
#: leave a covariate constant, say) before the bootstrap is refused
MAX_FAILED = 0.05
#: the bootstrap runs in worker processes when the first resample says the rest would take
#: longer than this (seconds) in this process
PARALLEL_AFTER_S = 2.0


@notebook_display
@dataclass(frozen=True)
class EffectResult:
    r"""Result of :func:`weighted_effect`.

    Attributes
    ----------
    estimate : ndarray, shape (c,)
        One effect per contrast: the augmented, weighted or regression-adjusted mean outcome
        of a level minus that of ``reference``; for a continuous treatment one slope.
    std_error : ndarray, shape (c,)
        The influence-function standard error (``se='influence'``), from the resamples'
        estimates (their standard deviation, times :math:`\sqrt{b/(n-b)}` for
        half-samples), or the HC0 sandwich standard error of weighted least squares with the
        weights treated as fixed (``se='sandwich'``); NaN with ``se=None``, and NaN (with a
        ``DegenerateStatisticWarning``) when the outcome is constant.
    ci_low, ci_high : ndarray, shape (c,)
        The ``confidence`` interval: ``estimate ± z·std_error`` (``ci_method='normal'``),
        ``estimate ± cv(bias_bound/std_error)·std_error`` (``'bias-aware'``), or from the
        resamples' quantiles; NaN with ``se=None``.
    pvalue : ndarray, shape (c,)
        Two-sided p-value of no effect from the normal approximation
        :math:`2\Phi(-|\text{estimate}|/\text{std\_error})`.
    contrasts : list of str
        ``'level - reference'`` for each contrast, or ``['slope']``.
    estimand : str
        'ATE', 'ATT', 'ATC' of the weights, or 'dose-response slope'.
    means : DataFrame or None
        Per treatment level: the augmented (weighted, adjusted) mean outcome and the rows;
        None for a continuous treatment.
    se_method, ci_method : str or None
    confidence : float
    n_boot : int
        Resamples asked for (0 without resampling).
    n_failed : int
        Resamples whose weights could not be solved (left out, with a warning).
    boot : ndarray, shape (n_boot - n_failed, c), or None
        The estimates of the resamples (half-samples or bootstrap samples), in the order
        of their seeds.
    seed : int or None
        The seed of the resamples and of the cross-fitting folds (pass it back as ``rng`` to
        repeat them bit for bit).
    covariates : list or None
        The covariates of the outcome model (None: the difference of weighted means).
    outcome_model : str or None
        'kernel', 'linear', the regressor's class name, or None (the difference of weighted
        means).
    n_folds : int
        Cross-fitting folds (0 without cross-fitting: None and 'linear').
    bias_bound : ndarray, shape (c,)
        The bound on the conditional bias of each contrast for residual functions of the
        estimated norm (module :mod:`energystats.balance._augment`); NaN where not computed
        (no outcome model fitted by cross-fitting, or a continuous treatment).
    unaugmented : ndarray, shape (c,)
        The difference of weighted means of the same weights (NaN without augmentation).
    augmentation_share : ndarray, shape (c,)
        ``(estimate - unaugmented) / |unaugmented|``: the share of the weighted difference
        that the augmentation moved (NaN without augmentation or when it is 0).
    fold : ndarray, shape (n,), or None
        Each row's cross-fitting fold.
    """

    estimate: np.ndarray
    std_error: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    pvalue: np.ndarray
    contrasts: list
    estimand: str
    means: object
    se_method: str | None
    ci_method: str | None
    confidence: float
    n_boot: int
    n_failed: int
    boot: np.ndarray | None
    seed: int | None
    covariates: list | None
    outcome_model: str | None = None
    n_folds: int = 0
    bias_bound: np.ndarray | None = None
    unaugmented: np.ndarray | None = None
    augmentation_share: np.ndarray | None = None
    fold: np.ndarray | None = field(default=None, repr=False)

    def to_frame(self):
        """One row per contrast: estimate, std_error, ci_low, ci_high, pvalue; with an
        augmented estimate also bias_bound, unaugmented and augmentation_share."""
        cols = {"estimate": self.estimate, "std_error": self.std_error,
                "ci_low": self.ci_low, "ci_high": self.ci_high, "pvalue": self.pvalue}
        if self.n_folds:
            cols.update(bias_bound=self.bias_bound, unaugmented=self.unaugmented,
                        augmentation_share=self.augmentation_share)
        return pd.DataFrame(cols, index=pd.Index(self.contrasts, name="contrast"))

    def __repr__(self):
        parts = ", ".join(f"{c}: {e:.4g} [{lo:.4g}, {hi:.4g}]" for c, e, lo, hi in
                          zip(self.contrasts, self.estimate, self.ci_low, self.ci_high))
        model = "" if self.outcome_model is None else \
            f"outcome_model={self.outcome_model!r}" + (f" ({self.n_folds} folds)" if self.n_folds else "") + ", "
        return (f"EffectResult({self.estimand}; {parts}; {model}se={self.se_method!r}, "
                f"{self.confidence:.0%} {self.ci_method} CI)")


# -- the bootstrap ------------------------------------------------------------------------------


def _refit(inputs, solver, rows, target_rows, gen):
    """The weights of the resampled rows: the programme solved again, the same options."""
    from .weights import energy_balancing_weights, independence_weights

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the resamples' BalanceWarnings: counted, not shown
        if isinstance(inputs, _programme.IndependenceInputs):
            return independence_weights(inputs.Z[rows], inputs.a[rows, 0],
                                        base_weights=inputs.s[rows], lam=inputs.lam,
                                        standardize=inputs.standardize,
                                        dimension_adj=inputs.dimension_adj, solver=solver,
                                        cells=inputs.cells,
                                        rng=gen if inputs.cells else None, n_threads=1).weights
        lab = inputs.lab
        t = np.asarray(lab.groups, dtype=object)[lab.codes[rows]]
        return energy_balancing_weights(
            inputs.Z[rows], t, estimand=inputs.estimand, focal=inputs.focal,
            target=None if inputs.T is None else inputs.T[target_rows],
            improved=inputs.improved, base_weights=inputs.s[rows], lam=inputs.lam,
            standardize=inputs.standardize, moments=inputs.moments, quantiles=inputs.quantiles,
            solver=solver, cells=inputs.cells, rng=gen if inputs.cells else None,
            n_threads=1).weights


def _draw(gen, strata, m, half):
    """The rows of a resample, within each stratum (each treatment level; one for a
    continuous treatment): ``half``: half of its rows (at least 2) without replacement (and
    half of the ``m`` target rows); else as many rows as it has, with replacement (and ``m``
    target rows)."""
    if half:
        rows = np.concatenate([gen.choice(idx, size=max(2, idx.size // 2), replace=False)
                               for idx in strata])
        trows = None if m == 0 else np.sort(gen.choice(m, size=max(2, m // 2), replace=False))
        return np.sort(rows), trows
    rows = np.concatenate([gen.choice(idx, size=idx.size, replace=True) for idx in strata])
    return np.sort(rows), (None if m == 0 else gen.integers(0, m, size=m))


def _replicate(common, seed_seq):
    """One bootstrap resample: rows drawn, weights solved again, the effect estimated (an
    outcome model fitted again on its own folds).  Returns the estimates, or None when the
    weights could not be solved."""
    inputs, solver, y, C, strata, setup, half = common
    gen = np.random.default_rng(seed_seq)
    m = 0 if getattr(inputs, "T", None) is None else inputs.T.shape[0]
    rows, trows = _draw(gen, strata, m, half)
    if setup.kind == "continuous":
        codes, a = None, inputs.a[rows, 0]
    else:
        codes, a = inputs.lab.codes[rows], None
    T = None if m == 0 else inputs.T[trows]
    try:   # a failed resample (weights or outcome model) is counted, not fatal
        w = _refit(inputs, solver, rows, trows, gen)
        return _effect_point.point(setup, y[rows], w, codes, a, inputs.s[rows],
                                   None if C is None else C[rows], inputs.Z[rows], T,
                                   gen).estimate
    except (ValueError, RuntimeError, FloatingPointError, np.linalg.LinAlgError):
        return None


def _progress_of(progress):
    """``(progress, quiet_if_short)``: 'auto' shows a bar on an interactive stderr for calls
    that turn out to take more than a few seconds; a bool or a stream as given."""
    if isinstance(progress, str):
        if progress != "auto":
            raise ValueError(f"`progress` must be 'auto', True, False or a stream; got {progress!r}.")
        from .._core._progress import interactive

        return (interactive(sys.stderr), True)
    return progress, False


def _bootstrap(common, n_boot, children, n_threads, progress, on_dask=False):
    """The estimates of ``n_boot`` resamples (None for failed ones), each from its own child
    seed ``children[i]`` (so the same bits whatever the number of workers, or on Dask)."""
    from .._core import _progress

    if on_dask:
        from ._dask import replicates

        return replicates(_replicate, common, children)
    workers = min(check_n_threads(n_threads), n_boot)
    progress, quiet = _progress_of(progress)
    desc = "half-samples" if common[-1] else "bootstrap"
    bar = (_progress.Progress(n_boot, desc, "resample", quiet_if_short=True) if quiet and progress
           else _progress.progress_bar(n_boot, progress, desc, "resample"))
    try:
        t0 = time.perf_counter()
        out = [_replicate(common, children[0])]
        if bar is not None:
            bar.update(1)
        # worker processes when the rest would take a while (each costs ~0.3 s to start)
        if workers > 1 and (time.perf_counter() - t0) * (n_boot - 1) > PARALLEL_AFTER_S:
            from .._core._workers import run_tasks

            out += run_tasks(_replicate, common, children[1:], workers,
                             on_result=None if bar is None else (lambda i, v: bar.update(1)))
        else:
            for child in children[1:]:
                out.append(_replicate(common, child))
                if bar is not None:
                    bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return out


# -- the public function ------------------------------------------------------------------------


def _outcome_vector(outcome, index, n):
    """The outcome as a float64 vector of the weights' rows (a Series aligned by index)."""
    if isinstance(outcome, pd.DataFrame):
        if outcome.shape[1] != 1:
            raise ValueError(f"`outcome` must be one column; got a DataFrame with "
                             f"{outcome.shape[1]} columns.")
        outcome = outcome.iloc[:, 0]
    if isinstance(outcome, pd.Series) and index is not None:
        outcome = _design.align_weights(pd.DataFrame(index=index), outcome, "outcome")
    y = np.asarray(outcome.to_numpy() if isinstance(outcome, pd.Series) else outcome)
    if y.dtype.kind not in "biuf":
        raise TypeError(f"`outcome` must be numeric; got dtype {y.dtype}.")
    y = y.astype(np.float64).ravel() if y.ndim == 2 and 1 in y.shape else y.astype(np.float64)
    if y.shape != (n,):
        raise ValueError(f"`outcome` must have one value per row of the weights ({n}); got shape "
                         f"{np.shape(outcome)}.")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise ValueError(f"`outcome` must be finite; got {float(y[bad[0]])!r} at position {bad[0]} "
                         f"({bad.size} such value(s)). Drop those rows before weighting.")
    return y


def _adjustment(covariates, inputs, index, n):
    """``(C, names)``: the covariates of the outcome model as given, or ``(None, None)``
    (the weights' covariates)."""
    if covariates is None or covariates is False:
        return None, None
    if covariates is True:
        C = inputs.Z
        return C, [f"x{j}" for j in range(C.shape[1])]
    if isinstance(covariates, (str, bytes, dict)) or np.ndim(covariates) == 0:
        raise TypeError("`covariates` must be None, True or a numeric array / DataFrame with one "
                        f"row per row of the weights; got {covariates!r}.")
    if isinstance(covariates, pd.Series):
        covariates = covariates.to_frame()
    if isinstance(covariates, pd.DataFrame) and index is not None:
        # by index, as the outcome and the treatment (never by position behind the user's back)
        covariates = align_labels(pd.DataFrame(index=index), covariates, "covariates")
    names = ([str(c) for c in covariates.columns] if isinstance(covariates, pd.DataFrame)
             else None)
    C = np.asarray(covariates)
    if C.dtype.kind not in "biuf":
        raise TypeError(f"`covariates` must be numeric; got dtype {C.dtype} (expand factors into "
                        "indicator columns first).")
    C = C.astype(np.float64)
    C = C[:, None] if C.ndim == 1 else C
    if C.ndim != 2 or C.shape[0] != n:
        raise ValueError(f"`covariates` must have one row per row of the weights ({n}); got "
                         f"shape {np.shape(covariates)}.")
    if not np.all(np.isfinite(C)):
        raise ValueError("`covariates` must be finite.")
    return C, names or [f"c{j}" for j in range(C.shape[1])]


def _outcome_model(outcome_model, covariates, kind):
    """``(model, spec)``: 'auto' resolved (categorical: 'kernel', or 'linear' with
    ``covariates``; continuous: None, or 'linear' with ``covariates``), and checked."""
    if outcome_model == "auto":
        given = covariates is not None and covariates is not False
        if given:
            return "linear", "linear"
        return (None, None) if kind == "continuous" else ("kernel", "kernel")
    if outcome_model is None:
        if covariates is not None and covariates is not False:
            raise ValueError("`covariates` are the outcome model's; with outcome_model=None (the "
                             "difference of weighted means) there is none. Drop one.")
        return None, None
    name, _ = _outcome.resolve_model(outcome_model)     # checks it
    model = name if name in _outcome.MODEL_NAMES else "regressor"
    if kind == "continuous" and model != "linear":
        raise ValueError(f"`outcome_model`={outcome_model!r}: the augmented estimator is built for "
                         "binary and multi-category treatments; for a continuous treatment "
                         "(independence weights) use outcome_model=None (the weighted slope) or "
                         "'linear' (the slope adjusted for the covariates). The guide's page "
                         "'Balancing weights' measures what their intervals cover.")
    return model, outcome_model


def _backend_iv(backend, se, n_threads, progress):
    """Whether the resamples run on Dask (``backend`` checked, with the options that mean
    nothing there; Dask missing is an ImportError that says what to install)."""
    if not use_dask(backend, True, ()):
        return False
    if se not in RESAMPLED:
        raise ValueError(f"`backend='dask'` runs the resamples as tasks; with se={se!r} there "
                         "are none. Drop it.")
    if n_threads is not None:
        raise ValueError("`n_threads` sets this machine's worker processes; with "
                         "backend='dask' each resample is a task on the cluster's workers "
                         "(their weights solved on one thread), so leave it out.")
    if progress not in (False, None, "auto"):
        raise ValueError("`progress=` is for the threads backend; with backend='dask' use Dask's "
                         "own (the dashboard, or `distributed.progress`).")
    return True


def _check_options(se, ci_method, confidence, n_boot, model):
    """``(se, ci_method)`` checked, with se='auto' resolved: the influence function for an
    augmented estimate, half-samples otherwise."""
    if se not in SE_METHODS:
        raise ValueError(f"`se` must be 'auto', 'influence', 'subsample', 'bootstrap', 'sandwich' "
                         f"or None; got {se!r}.")
    augmented = model in ("kernel", "regressor")
    if se == "auto":
        se = "influence" if augmented else "subsample"
    if se == "influence" and not augmented:
        raise ValueError("`se='influence'` is the augmented estimator's (outcome_model='kernel' or "
                         f"a regressor); with outcome_model={model!r} use 'subsample', 'bootstrap' "
                         "or 'sandwich'.")
    if se == "sandwich" and augmented:
        raise ValueError("`se='sandwich'` is weighted least squares' (outcome_model=None or "
                         "'linear'); the augmented estimator's analytic standard error is "
                         "se='influence'.")
    if ci_method not in CI_METHODS:
        raise ValueError(f"`ci_method` must be 'normal', 'bias-aware' or 'percentile'; got "
                         f"{ci_method!r}.")
    if ci_method == "percentile" and se not in RESAMPLED:
        raise ValueError(f"`ci_method='percentile'` needs resamples; se={se!r} gives the normal "
                         "interval (ci_method='normal').")
    if ci_method == "bias-aware" and not augmented:
        raise ValueError("`ci_method='bias-aware'` widens the interval by the bound on the "
                         "augmented estimator's bias; it needs outcome_model='kernel' or a "
                         f"regressor (got outcome_model={model!r}).")
    if isinstance(confidence, bool) or not isinstance(confidence, (float, int)) \
            or not 0 < confidence < 1:
        raise ValueError(f"`confidence` must be a number strictly between 0 and 1; got "
                         f"{confidence!r}.")
    if se in RESAMPLED and (not is_int(n_boot) or n_boot < 20):
        raise ValueError(f"`n_boot` must be an integer >= 20 (resamples); got {n_boot!r}.")
    return se, (ci_method if se is not None else None)


def weighted_effect(outcome, weights, *, data=None, outcome_model="auto", covariates=None,
                    n_folds=5, reference=None, se="auto", n_boot=200, confidence=0.95,
                    ci_method="normal", rng=None, n_threads=None, progress="auto", backend=None):
    r"""The treatment effect that balancing weights estimate, with its uncertainty.

    For weights from :func:`energy_balancing_weights` (a binary or multi-category
    treatment) the default is the **augmented** (doubly robust) estimator: an outcome model
    :math:`\hat m_g` is fitted for each level ``g`` by cross-fitting (``n_folds`` folds drawn
    within each level; the model that predicts a row never saw it), and the level's mean
    outcome on the weights' target population is

    .. math::

        \hat\mu_g = \sum_t v_t \hat m_g(x_t) + \sum_{i \in g} \gamma_i (y_i - \hat m_g(x_i)),
        \qquad \gamma_i = w_i / \textstyle\sum_{j \in g} w_j,

    with :math:`v` the target's masses (the whole sample for 'ATE', the focal level for
    'ATT'/'ATC', or the ``target`` rows); each contrast is :math:`\hat\mu_g - \hat\mu_r`.  This
    is the augmented balancing estimator of Hirshberg and Wager (2021, "Augmented minimax
    linear estimation", Annals of Statistics 49(6)) with the energy balancing weights of
    Huling and Mak (2024, "Energy balancing of covariate distributions", Journal of Causal
    Inference), cross-fitted as in Chernozhukov et al. (2018, "Double/debiased machine
    learning for treatment and structural parameters", The Econometrics Journal 21(1)).  The
    default model (``'kernel'``) is kernel ridge regression on the kernel that the Euclidean
    distance induces on the covariates in the weights' units, with an unpenalised intercept
    and its penalty chosen by exact leave-one-out cross-validation (no tuning by the user;
    above 1 500 rows of a fit, 1 500 seeded landmark rows, the Nyström approximation).
    ``outcome_model='linear'`` is the fully interacted weighted least squares on the
    covariates (the intercept of each level's WLS at the target's covariate means),
    ``outcome_model=None`` the difference of weighted means

    .. math::

        \hat\tau_{g} = \frac{\sum_{i \in g} w_i y_i}{\sum_{i \in g} w_i}
                     - \frac{\sum_{i \in r} w_i y_i}{\sum_{i \in r} w_i},

    and any scikit-learn regressor (an instance with ``fit``/``predict``, cloned for every
    fold) is cross-fitted as the kernel model is.  For weights from
    :func:`independence_weights` (a continuous treatment) the estimate is the slope of ``y``
    on the treatment in the weighted least squares (``outcome_model='linear'``: in the
    regression on treatment and covariates), the dose-response slope of Huling, Greifer and
    Chen (2023); no augmented form is built for it.

    **Standard errors.**  ``se='auto'`` is ``'influence'`` for the augmented estimator and
    ``'subsample'`` otherwise.  ``'influence'``: the variance of the estimator's influence
    function, :math:`\tfrac{n}{n-1}\sum_i(\phi_i - \bar\phi)^2` with
    :math:`\phi_i = v_i(\hat d_i - \bar d) + \gamma^g_i e^g_i - \gamma^r_i e^r_i`
    (:math:`\hat d = \hat m_g - \hat m_r`, :math:`e` the cross-fitted residuals), which holds
    the weights fixed: their estimation is a second-order term of the augmented estimator
    when the outcome model is consistent (Hirshberg and Wager).  ``'subsample'`` resamples
    half of the rows of every level without replacement, *solves the weights again and
    refits the outcome model* on each, and scales the spread of their estimates by
    :math:`\sqrt{b/(n-b)}`, the delete-d jackknife of Shao and Wu (1989, "A general theory
    for jackknife variance estimation", Annals of Statistics 17(3)).  ``'bootstrap'`` draws
    n_g rows *with* replacement instead, and is too narrow for these weights (the programme
    gives the copies of a drawn row a shared weight, so a resample behaves like its ~63 %
    distinct rows; on an RCT, n = 100: bootstrap SE 0.186 against a Monte Carlo SD of 0.217,
    half-sampling 0.232), the failure Abadie and Imbens (2008) showed for matching; it is
    kept for comparison.  ``'sandwich'`` (None and 'linear' only) is the HC0 sandwich of the
    weighted least squares with the weights held fixed (R ``lm(..., weights = w)`` with
    ``sandwich::vcovHC(type = "HC0")``).  Each resample has its own seed spawned from
    ``rng``'s, so the result is the same bits whatever ``n_threads``.

    **Bias and the bias-aware interval.**  Balance is approximate, so the estimate carries a
    bias that a standard error does not see.  For a function f in the space H of the
    distance-induced kernel, :math:`|\sum_i \gamma_i f(x_i) - \sum_t v_t f(x_t)| \le
    \|f\|_H \sqrt{E_g/2}`, :math:`E_g` the weighted energy distance of level g to the target
    (the energy distance is twice the squared maximum mean discrepancy of that kernel;
    Sejdinovic et al. 2013, "Equivalence of distance-based and RKHS-based statistics in
    hypothesis testing", Annals of Statistics 41(5)).  Applied to the residual function
    :math:`m_g - \hat m_g` it bounds the augmented estimator's conditional bias; ``bias_bound``
    reports :math:`\sum_{h \in \{g, r\}} \widehat{\|r_h\|}_H \sqrt{E_h/2}` with
    :math:`\widehat{\|r_h\|}_H` the norm of the kernel ridge fit (penalty by leave-one-out)
    of the level's cross-fitted residuals: the part of the residual function the data can
    see, so the bound is an estimate, not a guarantee.  ``ci_method='bias-aware'`` widens the
    interval to :math:`\hat\tau \pm \mathrm{cv}_\alpha(B/\mathrm{se})\,\mathrm{se}`,
    :math:`\mathrm{cv}_\alpha(b)` the :math:`1-\alpha` quantile of :math:`|N(b, 1)|`
    (Armstrong and Kolesár 2021, "Finite-sample optimal estimation and inference on average
    treatment effects under unconfoundedness", Econometrica 89(3)).  A ``BalanceWarning``
    says when the bound exceeds the standard error.

    **What the interval covers.**  Measured by ``benchmarks/effect_coverage.py`` (the guide
    page "Balancing weights" has the table): on designs where the outcome model is hard to
    learn from the covariates the augmentation removes only part of the bias, and the 95 %
    interval covers less than 95 %.  Read the table before quoting an interval as 95 %.

    Parameters
    ----------
    outcome : array_like, Series or str, shape (n,)
        The outcome of each row of the weights' data (a Series is aligned with the data's
        index, as the treatment was), or the name of a column of ``data``: by default the
        ``data`` of a formula call of the weights (``weights.data``), a KeyError if it is not
        a column there.
    weights : BalancingWeightsResult or IndependenceWeightsResult
        The result of the weighting, which keeps the inputs the resampling needs.
    data : DataFrame, optional
        Where an ``outcome`` given by name is read (rows aligned with the weights' by index,
        or by position for weights of arrays); needed when the weights were not solved from
        a formula with ``data=``, and it replaces the weights' ``data`` when given.
    outcome_model : {'auto', 'kernel', 'linear', None} or regressor, default 'auto'
        'auto': 'kernel' for a categorical treatment ('linear' when ``covariates`` are
        given), None for a continuous one ('linear' with ``covariates``).
    covariates : None, True or array_like, optional
        The outcome model's covariates.  None: the covariates the weights balanced (for
        'kernel' in the weights' standardisation, for 'linear' as given).  True: those as
        given.  An array or DataFrame (one row per row of the data; a DataFrame is aligned
        with the data's index): these.
    n_folds : int, default 5
        Cross-fitting folds of the augmented estimator (at least as many rows of each level).
    reference : object, optional
        The level subtracted in every contrast; by default the first level (0, False, or
        the first in sorted order).
    se : {'auto', 'influence', 'subsample', 'bootstrap', 'sandwich', None}, default 'auto'
    n_boot : int, default 200
        Resamples (half-samples or bootstrap samples).  200 gives a standard error within
        about 5 % of its limit; percentile intervals are steadier with 1 000 or more.
    confidence : float, default 0.95
    ci_method : {'normal', 'bias-aware', 'percentile'}, default 'normal'
        ``estimate ± z·std_error``; the bias-aware interval above (augmented estimator); or
        from the quantiles of the resamples' estimates (for half-samples the subsampling
        interval :math:`[\hat\tau - f(q_{hi} - \hat\tau), \hat\tau - f(q_{lo} - \hat\tau)]`,
        f = :math:`\sqrt{b/(n-b)}`).
    rng : int, numpy.random.Generator or None
        Seed of the cross-fitting folds and of the resamples (recorded as the result's
        ``seed``).
    n_threads : int, optional
        Worker processes of the resampling (each resample's weights solved in one); the
        default uses the idle cores.  Ctrl-C stops them at once.
    progress : 'auto', bool or file-like, default 'auto'
        A progress bar of the resamples: 'auto' shows one on an interactive ``sys.stderr``
        (a terminal or a Jupyter notebook's output) once a call has run for a few seconds
        (silent in pipes and tests); True always on
        ``sys.stderr``, or the stream given; not with ``backend='dask'``.
    backend : {None, 'threads', 'dask'}, default None
        Where the resamples run.  None and 'threads': this process and its worker processes
        (``n_threads``).  'dask': one task per resample on the current Dask scheduler, each
        given its own child seed as here, so that ``boot``, the standard error and the
        interval are the same bits as the local run for the same ``rng``; ``n_threads`` and
        ``progress`` are then errors.  Overhead: 50 half-samples of 300 rows took 0.43 s on a
        two-worker local cluster against 0.22 s here (``docs/benchmarks/dask_resampling.txt``).

    Returns
    -------
    EffectResult

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(2)
    >>> x = rng.normal(size=(300, 2))
    >>> t = (x[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> y = 2.0 * t + x[:, 0] + 0.5 * x[:, 1] ** 2 + rng.normal(size=300)
    >>> res = es.energy_balancing_weights(x, t)
    >>> eff = es.weighted_effect(y, res, rng=1)          # augmented, kernel model, 5 folds
    >>> eff.to_frame()[["estimate", "std_error", "ci_low", "ci_high"]].round(2)
              estimate  std_error  ci_low  ci_high
    contrast
    1 - 0         1.76       0.26    1.25     2.28
    >>> eff.to_frame()[["bias_bound", "unaugmented", "augmentation_share"]].round(3)
              bias_bound  unaugmented  augmentation_share
    contrast
    1 - 0          0.013        1.821              -0.032
    >>> plain = es.weighted_effect(y, res, outcome_model=None, se=None)
    >>> w = res.weights        # without a model: the difference of the weighted means
    >>> bool(np.isclose(plain.estimate[0], np.average(y[t == 1], weights=w[t == 1])
    ...                                    - np.average(y[t == 0], weights=w[t == 0])))
    True

    Weights from a formula keep their ``data``: the outcome by its column's name.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"t": t, "x0": x[:, 0], "x1": x[:, 1], "y": y})
    >>> fres = es.energy_balancing_weights("t ~ x0 + x1", data=df)
    >>> eff = es.weighted_effect("y", fres, outcome_model=None, se=None)
    >>> bool(eff.estimate[0] == plain.estimate[0])
    True
    """
    inputs = _weights_inputs(weights)
    outcome = _forms.outcome_column(outcome, data, weights)
    n = weights.weights.size
    trt = _treatment(inputs, reference, n)
    model, spec = _outcome_model(outcome_model, covariates, trt["kind"])
    se, ci_method = _check_options(se, ci_method, confidence, n_boot, model)
    on_dask = _backend_iv(backend, se, n_threads, progress)
    augmented = model in ("kernel", "regressor")
    if rng is not None and se not in RESAMPLED and not augmented:
        raise ValueError(f"`rng` seeds the resamples and the cross-fitting folds; with se={se!r} "
                         f"and outcome_model={model!r} nothing is random. Drop it.")
    y, shift = _working_outcome(_outcome_vector(outcome, weights.index, n))
    C, names = _adjustment(covariates, inputs, weights.index, n)
    if C is not None and covariates is not True and getattr(inputs, "T", None) is not None:
        raise ValueError("`covariates`: the weights' `target` rows carry only the covariates the "
                         "weights balanced, so an outcome model on other covariates cannot be "
                         "evaluated there; pass covariates=None or True with a `target`.")
    if model == "linear" and C is None:
        C, names = inputs.Z, [f"x{j}" for j in range(inputs.Z.shape[1])]
    setup = _effect_point.Setup(
        trt["kind"], trt["k"], trt["ref"], trt["focal_code"], model, spec,
        _outcome.check_folds(n_folds, trt["sizes"], trt["groups"]) if augmented else 0,
        inputs.standardize, shift)
    gen, seed = seeded_rng(rng) if (se in RESAMPLED or augmented) else (None, None)
    # the folds' seed first, so that the point estimate does not depend on `se` or `n_boot`
    fold_gen = np.random.default_rng(gen.bit_generator.seed_seq.spawn(1)[0]) if augmented else None
    children = gen.bit_generator.seed_seq.spawn(int(n_boot)) if se in RESAMPLED else None
    bar = _fit_progress(setup, progress if not on_dask else False)
    try:
        tick = None if bar is None else (lambda: bar.update(1))
        pt = _effect_point.point(setup, y, weights.weights, trt["codes"], trt["a"], inputs.s, C,
                                 inputs.Z, getattr(inputs, "T", None), fold_gen,
                                 want_var=se in ("sandwich", "influence"), tick=tick)
        bound = _bias_bound(pt, setup, weights, inputs, trt, tick)
    finally:
        if bar is not None:
            bar.close()
    est = pt.estimate
    sd, lo, hi, boot, n_failed = _uncertainty(pt, se, ci_method, confidence, n_boot, children,
                                              (inputs, weights.solver, y, C, trt["strata"], setup),
                                              n, n_threads, progress, on_dask)
    if ci_method == "bias-aware":
        half = np.array([_augment.bias_aware_halfwidth(b, s_, confidence) for b, s_ in zip(bound, sd)])
        lo, hi = est - half, est + half
    est, sd, lo, hi, bound, means, boot, plain = (
        _scale_back(v, shift) for v in (est, sd, lo, hi, bound, pt.means, boot, pt.plain))
    sd, lo, hi, pvalue = _degenerate(y, est, sd, lo, hi)
    _warn_bias(bound, sd, trt["contrasts"])
    table = None if means is None else pd.DataFrame(
        {"mean": means, "n": np.bincount(trt["codes"], minlength=trt["k"])},
        index=pd.Index(trt["groups"], name="treatment"))
    nan = np.full(est.shape, np.nan)
    share = nan if plain is None else np.array(
        [(e - p) / abs(p) if p != 0 else np.nan for e, p in zip(est, plain)])
    return EffectResult(
        est, sd, lo, hi, pvalue, trt["contrasts"], trt["estimand"], table, se, ci_method,
        float(confidence), int(n_boot) if se in RESAMPLED else 0, n_failed, boot, seed,
        names if (model == "linear" or C is not None) else
        (None if model is None else list(getattr(weights, "columns", None) or
                                         [f"x{j}" for j in range(inputs.Z.shape[1])])),
        None if model is None else (model if model != "regressor" else _outcome.resolve_model(spec)[0]),
        setup.n_folds, nan if bound is None else bound, nan if plain is None else plain, share,
        pt.fold)


# -- the steps ----------------------------------------------------------------------------------


def _weights_inputs(weights):
    inputs = getattr(weights, "inputs", None)
    if not isinstance(inputs, (_programme.EnergyInputs, _programme.IndependenceInputs)):
        raise TypeError("`weights` must be the result of energy_balancing_weights or "
                        f"independence_weights; got {type(weights).__name__}.")
    return inputs


def _treatment(inputs, reference, n):
    """The treatment's description: kind, codes, levels, reference, focal level, contrasts
    and the resampling strata."""
    if isinstance(inputs, _programme.IndependenceInputs):
        if reference is not None:
            raise ValueError("`reference` is for a categorical treatment; the weights are "
                             "independence weights (a continuous treatment).")
        return dict(kind="continuous", codes=None, k=0, ref=None, focal_code=None,
                    a=inputs.a[:, 0], estimand="dose-response slope", contrasts=["slope"],
                    strata=[np.arange(n)], sizes=[n], groups=["all"])
    lab = inputs.lab
    if reference is None:
        ref = 0
    elif reference in lab.groups:
        ref = lab.groups.index(reference)
    else:
        raise ValueError(f"`reference` must be one of the treatment levels "
                         f"{short_list(lab.groups)}; got {reference!r}.")
    codes = lab.codes
    return dict(kind="categorical", codes=codes, k=lab.k, ref=ref,
                focal_code=None if inputs.focal is None else lab.groups.index(inputs.focal),
                a=None, estimand=inputs.estimand, groups=list(lab.groups),
                contrasts=[f"{lab.groups[g]} - {lab.groups[ref]}" for g in range(lab.k) if g != ref],
                strata=[np.flatnonzero(codes == g) for g in range(lab.k)],
                sizes=[int(np.sum(codes == g)) for g in range(lab.k)])


def _working_outcome(y):
    """``(y * 2**-shift, shift)``: the outcome in working units (max |y| in [0.5, 1), exact),
    so that no standard error, bound or interval over- or underflows; scaled back once."""
    shift = _design.pow2_shift(y)
    return np.ldexp(y, -shift), shift


def _scale_back(v, shift):
    return None if v is None else np.ldexp(np.asarray(v, dtype=np.float64), shift)


def _uncertainty(pt, se, ci_method, confidence, n_boot, children, common, n, n_threads,
                 progress, on_dask):
    """``(sd, lo, hi, boot, n_failed)`` of the estimates (working units)."""
    est = pt.estimate
    z = _normal_quantile(0.5 + confidence / 2)
    nan = np.full(est.shape, np.nan)
    if se in ("sandwich", "influence"):
        sd = np.sqrt(np.maximum(pt.variance, 0.0))
        return sd, est - z * sd, est + z * sd, None, 0
    if se not in RESAMPLED:
        return nan, nan, nan, None, 0
    half = se == "subsample"
    strata = common[4]
    out = _bootstrap(common + (half,), int(n_boot), children, n_threads, progress, on_dask)
    ok = [v for v in out if v is not None]
    n_failed = len(out) - len(ok)
    _check_failed(n_failed, len(out))
    boot = np.array(ok)
    # half-samples of b of the n rows: Var(estimate) ~ b / (n - b) Var(half-sample estimate)
    # (the delete-d jackknife with d = n - b; Shao and Wu 1989)
    b = sum(max(2, idx.size // 2) for idx in strata)
    f = np.sqrt(b / (n - b)) if half else 1.0
    sd = f * boot.std(axis=0, ddof=1)
    if ci_method == "percentile":
        qlo, qhi = np.quantile(boot, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
        if half:   # the subsampling interval: est - f (q - est), the quantiles reversed
            return sd, est - f * (qhi - est), est - f * (qlo - est), boot, n_failed
        return sd, qlo, qhi, boot, n_failed
    return sd, est - z * sd, est + z * sd, boot, n_failed


def _fit_progress(setup, progress):
    """A progress bar over the outcome model's fits (k levels x (folds + the residual fit)),
    or None: with progress='auto' it shows on an interactive stderr once the fits have run
    a few seconds."""
    from .._core import _progress

    if setup.model not in ("kernel", "regressor"):
        return None
    progress, quiet = _progress_of(progress)
    total = setup.k * (setup.n_folds + 1)
    if quiet:
        return _progress.Progress(total, "outcome model", "fit", quiet_if_short=True) \
            if progress else None
    return _progress.progress_bar(total, progress, "outcome model", "fit")


def _bias_bound(pt, setup, weights, inputs, trt, tick=None):
    """The bias bound of each contrast (working units), or None without augmentation."""
    if pt.resid is None:
        return None
    norms = _effect_point.residual_norms(setup, inputs.Z, inputs.s, getattr(inputs, "T", None),
                                         trt["codes"], pt.resid, tick)
    energies = np.asarray(weights.energy_after, dtype=np.float64)
    return np.array([_augment.bias_bound(norms, energies, g, setup.ref)
                     for g in range(setup.k) if g != setup.ref])


def _degenerate(y, est, sd, lo, hi):
    """``(sd, lo, hi, pvalue)``: a constant outcome, or a standard error of 0, has no p-value
    (NaN, with a DegenerateStatisticWarning), never one from rounding noise."""
    if np.ptp(y) == 0:
        warn("`weighted_effect`: the outcome is constant, so every effect is 0 and has no "
             "standard error, interval or p-value (NaN).", DegenerateStatisticWarning)
        est[:] = 0.0
        nan = np.full(est.shape, np.nan)
        return nan, nan, nan, nan
    zero = (sd == 0)
    if np.any(zero):
        warn(f"`weighted_effect`: the standard error of {int(zero.sum())} contrast(s) is 0 (the "
             "outcome does not vary where it counts), so they have no p-value (NaN).",
             DegenerateStatisticWarning)
    pvalue = np.array([math.erfc(abs(e) / s_ / math.sqrt(2)) if s_ > 0 else np.nan
                       for e, s_ in zip(est, sd)])
    return sd, lo, hi, pvalue


def _warn_bias(bound, sd, contrasts):
    from .table import BalanceWarning

    if bound is None:
        return
    over = [c for c, b, s_ in zip(contrasts, bound, sd) if np.isfinite(s_) and b > s_]
    if over:
        worst = max((float(b / s_) for b, s_ in zip(bound, sd) if np.isfinite(s_) and s_ > 0),
                    default=float("inf"))
        warn(f"`weighted_effect`: the bias bound exceeds the standard error for {short_list(over)} "
             f"(up to {worst:.2g} times): the remaining imbalance may bias the estimate by more "
             "than its sampling error. Use ci_method='bias-aware', or improve the balance "
             "(more moments, `lam`, fewer or transformed covariates).", BalanceWarning)


def _check_failed(n_failed, total):
    from .table import BalanceWarning

    if n_failed > MAX_FAILED * total:
        raise RuntimeError(f"the weights could not be solved on {n_failed} of {total} bootstrap "
                           f"resamples (more than {MAX_FAILED:.0%}): a treatment level is too "
                           "small or a covariate nearly constant within it, so resamples "
                           "leave it constant. Use se='sandwich' (weights held fixed), or "
                           "fewer covariates.")
    if n_failed:
        warn(f"`weighted_effect`: the weights could not be solved on {n_failed} of {total} "
             "bootstrap resamples (a covariate constant in a resampled level, say); they are "
             "left out of the standard error and interval.", BalanceWarning)


def _normal_quantile(p):
    from scipy.special import ndtri

    return float(ndtri(p))
