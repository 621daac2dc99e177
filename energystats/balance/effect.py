"""Treatment effects from balancing weights, with standard errors and confidence intervals."""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._core._dask import use_dask
from .._core._validation import check_n_threads, is_int, seeded_rng, short_list
from . import _design, _programme

__all__ = ["weighted_effect", "EffectResult"]

SE_METHODS = ("subsample", "bootstrap", "sandwich", None)
RESAMPLED = ("subsample", "bootstrap")
CI_METHODS = ("percentile", "normal")
#: the share of bootstrap resamples whose weights may fail (a level whose resampled rows
#: leave a covariate constant, say) before the bootstrap is refused
MAX_FAILED = 0.05
#: the bootstrap runs in worker processes when the first resample says the rest would take
#: longer than this (seconds) in this process
PARALLEL_AFTER_S = 2.0


@dataclass(frozen=True)
class EffectResult:
    r"""Result of :func:`weighted_effect`.

    Attributes
    ----------
    estimate : ndarray, shape (c,)
        One effect per contrast: the weighted (or regression-adjusted) mean outcome of a
        level minus that of ``reference``; for a continuous treatment one slope.
    std_error : ndarray, shape (c,)
        From the resamples' estimates (their standard deviation, times
        :math:`\sqrt{b/(n-b)}` for half-samples), or the HC0 sandwich standard error of
        weighted least squares with the weights treated as fixed (``se='sandwich'``); NaN
        with ``se=None``.
    ci_low, ci_high : ndarray, shape (c,)
        The ``confidence`` interval: ``estimate ± z·std_error`` (``ci_method='normal'``),
        or from the resamples' quantiles; NaN with ``se=None``.
    pvalue : ndarray, shape (c,)
        Two-sided p-value of no effect from the normal approximation
        :math:`2\Phi(-|\text{estimate}|/\text{std\_error})`.
    contrasts : list of str
        ``'level - reference'`` for each contrast, or ``['slope']``.
    estimand : str
        'ATE', 'ATT', 'ATC' of the weights, or 'dose-response slope'.
    means : DataFrame or None
        Per treatment level: the weighted (adjusted) mean outcome and the rows; None for a
        continuous treatment.
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
        The seed of the resamples (pass it back as ``rng`` to repeat them bit for bit).
    covariates : list or None
        The covariates of the regression adjustment (None: the difference of weighted
        means).
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

    def to_frame(self):
        """One row per contrast: estimate, std_error, ci_low, ci_high, pvalue."""
        return pd.DataFrame({"estimate": self.estimate, "std_error": self.std_error,
                             "ci_low": self.ci_low, "ci_high": self.ci_high,
                             "pvalue": self.pvalue},
                            index=pd.Index(self.contrasts, name="contrast"))

    def __repr__(self):
        parts = ", ".join(f"{c}: {e:.4g} [{lo:.4g}, {hi:.4g}]" for c, e, lo, hi in
                          zip(self.contrasts, self.estimate, self.ci_low, self.ci_high))
        return (f"EffectResult({self.estimand}; {parts}; se={self.se_method!r}, "
                f"{self.confidence:.0%} {self.ci_method} CI)")


# -- the estimators -----------------------------------------------------------------------------


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


def _estimate(y, w, kind, codes, k, ref, a, C, centre, want_cov=False):
    """``(estimates, variances, means)`` of one (re)sample."""
    if kind == "continuous":
        D = np.column_stack([np.ones(y.size), a] + ([] if C is None else [C - centre]))
        keep = w > 0
        beta, cov = _wls(D[keep], y[keep], w[keep])
        return beta[1:2], (np.diag(cov)[1:2] if want_cov else None), None
    means, var = _level_means(y, w, codes, k, C, centre, want_cov)
    others = [g for g in range(k) if g != ref]
    est = np.array([means[g] - means[ref] for g in others])
    v = np.array([var[g] + var[ref] for g in others]) if want_cov else None
    return est, v, means


def _centre(kind, inputs, C, s, codes, focal_code):
    """The covariate means at which the adjusted levels are compared: the target's (the
    base-weighted sample for 'ATE', the focal level for 'ATT'/'ATC', the ``target`` rows)."""
    if C is None:
        return None
    if kind == "categorical" and inputs.T is not None:
        return inputs.T.mean(axis=0)
    sel = np.ones(len(s), dtype=bool) if focal_code is None else codes == focal_code
    return (s[sel] @ C[sel]) / s[sel].sum()


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
    """One bootstrap resample: rows drawn, weights solved again, the effect estimated.
    Returns the estimates, or None when the weights could not be solved."""
    inputs, solver, y, C, strata, est_args, half = common
    gen = np.random.default_rng(seed_seq)
    m = 0 if getattr(inputs, "T", None) is None else inputs.T.shape[0]
    rows, trows = _draw(gen, strata, m, half)
    try:
        w = _refit(inputs, solver, rows, trows, gen)
    except (ValueError, RuntimeError, FloatingPointError):
        return None
    kind, k, ref, focal_code = est_args
    if kind == "continuous":
        codes, a = None, inputs.a[rows, 0]
        s = inputs.s[rows]
    else:
        codes, a, s = inputs.lab.codes[rows], None, inputs.s[rows]
    Cr = None if C is None else C[rows]
    if C is not None and kind == "categorical" and inputs.T is not None:
        centre = inputs.T[trows].mean(axis=0)
    else:
        centre = None if C is None else _centre(kind, inputs, Cr, s, codes, focal_code)
    est, _, _ = _estimate(y[rows], w, kind, codes, k, ref, a, Cr, centre)
    return est


def _bootstrap(common, n_boot, rng, n_threads, progress, on_dask=False):
    """The estimates of ``n_boot`` resamples (None for failed ones), each from its own child
    seed of ``rng`` (so the same bits whatever the number of workers, or on Dask), and the
    seed."""
    from .._core import _progress

    gen, seed = seeded_rng(rng)
    children = gen.bit_generator.seed_seq.spawn(n_boot)
    if on_dask:
        from ._dask import replicates

        return replicates(_replicate, common, children), seed
    workers = min(check_n_threads(n_threads), n_boot)
    bar = _progress.progress_bar(n_boot, progress, "half-samples" if common[-1] else "bootstrap",
                                 "resample")
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
    return out, seed


# -- the public function ------------------------------------------------------------------------


def _outcome(outcome, index, n):
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
    """``(C, names)``: the covariates of the regression adjustment, or ``(None, None)``."""
    if covariates is None or covariates is False:
        return None, None
    if covariates is True:
        C = inputs.Z
        return C, [f"x{j}" for j in range(C.shape[1])]
    if isinstance(covariates, pd.Series):
        covariates = covariates.to_frame()
    if isinstance(covariates, pd.DataFrame) and index is not None:
        covariates = _design.align_weights(pd.DataFrame(index=index), covariates, "covariates")
    names = ([str(c) for c in covariates.columns] if isinstance(covariates, pd.DataFrame)
             else None)
    C = np.asarray(covariates, dtype=np.float64)
    C = C[:, None] if C.ndim == 1 else C
    if C.ndim != 2 or C.shape[0] != n:
        raise ValueError(f"`covariates` must have one row per row of the weights ({n}); got "
                         f"shape {np.shape(covariates)}.")
    if not np.all(np.isfinite(C)):
        raise ValueError("`covariates` must be finite.")
    return C, names or [f"c{j}" for j in range(C.shape[1])]


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
    if progress not in (False, None):
        raise ValueError("`progress=` is for the threads backend; with backend='dask' use Dask's "
                         "own (the dashboard, or `distributed.progress`).")
    return True


def _check_options(se, ci_method, confidence, n_boot):
    if se not in SE_METHODS:
        raise ValueError(f"`se` must be 'subsample', 'bootstrap', 'sandwich' or None; got "
                         f"{se!r}.")
    if ci_method not in CI_METHODS:
        raise ValueError(f"`ci_method` must be 'normal' or 'percentile'; got {ci_method!r}.")
    if ci_method == "percentile" and se == "sandwich":
        raise ValueError("`ci_method='percentile'` needs resamples; the sandwich gives the "
                         "normal interval (ci_method='normal').")
    if isinstance(confidence, bool) or not isinstance(confidence, (float, int)) \
            or not 0 < confidence < 1:
        raise ValueError(f"`confidence` must be a number strictly between 0 and 1; got "
                         f"{confidence!r}.")
    if se in RESAMPLED and (not is_int(n_boot) or n_boot < 20):
        raise ValueError(f"`n_boot` must be an integer >= 20 (resamples); got {n_boot!r}.")
    return ci_method if se is not None else None


def weighted_effect(outcome, weights, *, covariates=None, reference=None, se="subsample",
                    n_boot=200, confidence=0.95, ci_method="normal", rng=None,
                    n_threads=None, progress=False, backend=None):
    r"""The treatment effect that balancing weights estimate, with its uncertainty.

    For weights from :func:`energy_balancing_weights` (a binary or multi-category
    treatment), each contrast is the weighted mean outcome of a level minus that of
    ``reference``,

    .. math::

        \hat\tau_{g} = \frac{\sum_{i \in g} w_i y_i}{\sum_{i \in g} w_i}
                     - \frac{\sum_{i \in r} w_i y_i}{\sum_{i \in r} w_i},

    the effect on the weights' target population (the whole sample for 'ATE', the focal
    level for 'ATT'/'ATC', or the ``target`` rows), as in Huling and Mak (2024, "Energy
    balancing of covariate distributions", Journal of Causal Inference).  With
    ``covariates`` the level means are replaced by the intercepts of each level's weighted
    least squares of ``y`` on the covariates centred at the target's means (the fully
    interacted regression): the augmented, doubly robust estimator, consistent when either
    the weights balance the covariates or the outcome is linear in them.  For weights from
    :func:`independence_weights` (a continuous treatment) the estimate is the slope of
    ``y`` on the treatment in the weighted least squares (with ``covariates``, in the
    regression on treatment and covariates): the dose-response slope of Huling, Greifer
    and Chen (2023).

    **Standard errors.**  The weights are estimated from the same rows as the outcome
    means, so a valid standard error resamples the rows and *solves the weights again* on
    every resample (Huling and Mak).  ``se='subsample'`` (the default) does that on
    half-samples drawn without replacement within each treatment level (b = ⌊n_g/2⌋ rows
    of each level; all rows for a continuous treatment; half the ``target`` rows), and
    scales the spread of their estimates by :math:`\sqrt{b/(n-b)}` (= 1 here), the
    delete-d jackknife of Shao and Wu (1989, "A general theory for jackknife variance
    estimation", Annals of Statistics 17(3)).  ``se='bootstrap'`` draws n_g rows *with*
    replacement instead — and is too narrow for these weights: the programme gives the
    copies of a drawn row a shared weight (two copies about 0.9 each, three about 0.5, a
    single row 1.5, on one resample), so a resample behaves like its ~63 % distinct rows,
    and the spread of the estimates understates the sampling spread (on an RCT, n = 100:
    bootstrap SE 0.186 against a Monte Carlo SD of 0.217; half-sampling 0.232), the
    failure Abadie and Imbens (2008) showed for matching estimators.  It is kept for
    comparison.  Each resample has its own seed spawned from ``rng``'s (NumPy's
    ``SeedSequence``), so the result is the same bits whatever ``n_threads``.
    ``se='sandwich'`` is the HC0 sandwich of the weighted least squares **with the weights
    held fixed** (R ``lm(..., weights = w)`` with ``sandwich::vcovHC(type = "HC0")``):
    fast, but it ignores that the weights were estimated, which can err either way (for
    balancing weights it is often wider than the resampling ones, since balancing removes
    the covariates' share of the variance); ``se=None`` gives the estimate alone.

    **What the interval covers.**  An interval is centred at the estimate, and the
    estimate of balancing weights is biased in small samples (balance is approximate; the
    guide page "Balancing weights" measures 0.15 at n = 300 and 0.05 at n = 2 000 on its
    confounded design): the coverage of a 95 % normal interval is then below 95 % even
    with the right standard error (there 0.865 against an oracle's 0.850; the subsampling
    percentile interval 0.915).  ``benchmarks/effect_coverage.py`` measures it; the guide
    quotes the numbers.

    Parameters
    ----------
    outcome : array_like or Series, shape (n,)
        The outcome of each row of the weights' data (a Series is aligned with the data's
        index, as the treatment was).
    weights : BalancingWeightsResult or IndependenceWeightsResult
        The result of the weighting, which keeps the inputs the bootstrap needs.
    covariates : None, True or array_like, optional
        None: the difference of weighted means.  True: adjust for the covariates the
        weights balanced (as given, before standardisation).  An array or DataFrame (one
        row per row of the data): adjust for these.
    reference : object, optional
        The level subtracted in every contrast; by default the first level (0, False, or
        the first in sorted order).
    se : {'subsample', 'bootstrap', 'sandwich', None}, default 'subsample'
    n_boot : int, default 200
        Resamples (half-samples or bootstrap samples).  200 gives a standard error within
        about 5 % of its limit; percentile intervals are steadier with 1 000 or more.
    confidence : float, default 0.95
    ci_method : {'normal', 'percentile'}, default 'normal'
        ``estimate ± z·std_error``; or from the quantiles of the resamples' estimates (the
        bootstrap's percentile interval; for half-samples the subsampling interval
        :math:`[\hat\tau - f(q_{hi} - \hat\tau), \hat\tau - f(q_{lo} - \hat\tau)]`,
        f = :math:`\sqrt{b/(n-b)}`).  The sandwich gives the normal one only.
    rng : int, numpy.random.Generator or None
        Seed of the resamples (recorded as the result's ``seed``).
    n_threads : int, optional
        Worker processes of the resampling (each resample's weights solved in one); the
        default uses the idle cores.  Ctrl-C stops them at once.
    progress : bool or file-like, default False
        A progress bar of the resamples on ``sys.stderr`` (or the stream); not with
        ``backend='dask'``.
    backend : {None, 'threads', 'dask'}, default None
        Where the resamples run.  None and 'threads': this process and its worker processes
        (``n_threads``).  'dask': one task per resample on the current Dask scheduler (a
        ``distributed.Client`` if one is active; a resample solves the weights again, tens
        of ms to seconds, well above a task's ~1 ms overhead), each given its own child seed
        as here, so that ``boot``, the standard error and the interval are the same bits as
        the local run for the same ``rng``.  The inputs are one key of the graph, shipped
        once to each worker; ``n_threads`` and ``progress`` are then errors.  Overhead: 50
        half-samples of 300 rows took 0.43 s on a two-worker local cluster against 0.22 s
        here (load 4.8 on two cores; ``docs/benchmarks/dask_resampling.txt``): Dask pays off
        with more cores than this.

    Returns
    -------
    EffectResult

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(2)
    >>> x = rng.normal(size=(150, 2))
    >>> t = (x[:, 0] + rng.normal(size=150) > 0).astype(int)
    >>> y = 2.0 * t + x[:, 0] + rng.normal(size=150)
    >>> res = es.energy_balancing_weights(x, t)
    >>> eff = es.weighted_effect(y, res, n_boot=50, rng=1, n_threads=1)
    >>> eff.to_frame().round(2)
              estimate  std_error  ci_low  ci_high  pvalue
    contrast
    1 - 0         1.78       0.22    1.35      2.2     0.0
    >>> w = res.weights        # the estimate is the difference of the weighted means
    >>> round(float(np.average(y[t == 1], weights=w[t == 1])
    ...             - np.average(y[t == 0], weights=w[t == 0])), 2)
    1.78
    """
    inputs = getattr(weights, "inputs", None)
    if not isinstance(inputs, (_programme.EnergyInputs, _programme.IndependenceInputs)):
        raise TypeError("`weights` must be the result of energy_balancing_weights or "
                        f"independence_weights; got {type(weights).__name__}.")
    ci_method = _check_options(se, ci_method, confidence, n_boot)
    on_dask = _backend_iv(backend, se, n_threads, progress)
    if rng is not None and se not in RESAMPLED:
        raise ValueError(f"`rng` seeds the resamples; with se={se!r} nothing is random. Drop "
                         "it.")
    n = weights.weights.size
    y = _outcome(outcome, weights.index, n)
    C, names = _adjustment(covariates, inputs, weights.index, n)
    w = weights.weights
    if isinstance(inputs, _programme.IndependenceInputs):
        kind, codes, k, ref, focal_code = "continuous", None, 0, None, None
        a, estimand, contrasts, strata = inputs.a[:, 0], "dose-response slope", ["slope"], \
            [np.arange(n)]
        s = inputs.s
    else:
        kind, lab, a = "categorical", inputs.lab, None
        codes, k, s = lab.codes, lab.k, inputs.s
        if reference is None:
            ref = 0
        elif reference in lab.groups:
            ref = lab.groups.index(reference)
        else:
            raise ValueError(f"`reference` must be one of the treatment levels {short_list(lab.groups)}; got "
                             f"{reference!r}.")
        focal_code = None if inputs.focal is None else lab.groups.index(inputs.focal)
        estimand = inputs.estimand
        contrasts = [f"{lab.groups[g]} - {lab.groups[ref]}" for g in range(k) if g != ref]
        strata = [np.flatnonzero(codes == g) for g in range(k)]
    if reference is not None and kind == "continuous":
        raise ValueError("`reference` is for a categorical treatment; the weights are "
                         "independence weights (a continuous treatment).")
    centre = _centre(kind, inputs, C, s, codes, focal_code)
    est, var, means = _estimate(y, w, kind, codes, k, ref, a, C, centre,
                                want_cov=se == "sandwich")
    z = _normal_quantile(0.5 + confidence / 2)
    boot, n_failed, seed = None, 0, None
    if se in RESAMPLED:
        half = se == "subsample"
        common = (inputs, weights.solver, y, C, strata, (kind, k, ref, focal_code), half)
        out, seed = _bootstrap(common, int(n_boot), rng, n_threads, progress, on_dask)
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
                lo, hi = est - f * (qhi - est), est - f * (qlo - est)
            else:
                lo, hi = qlo, qhi
        else:
            lo, hi = est - z * sd, est + z * sd
    elif se == "sandwich":
        sd = np.sqrt(var)
        lo, hi = est - z * sd, est + z * sd
    else:
        sd = lo = hi = np.full(est.shape, np.nan)
    pvalue = np.array([math.erfc(abs(e) / s_ / math.sqrt(2)) if s_ > 0 else np.nan
                       for e, s_ in zip(est, sd)])
    table = None if means is None else pd.DataFrame(
        {"mean": means, "n": np.bincount(codes, minlength=k)},
        index=pd.Index(lab.groups, name="treatment"))
    return EffectResult(est, np.asarray(sd, dtype=float), np.asarray(lo, dtype=float),
                        np.asarray(hi, dtype=float), pvalue, contrasts, estimand, table, se,
                        ci_method, float(confidence), int(n_boot) if se in RESAMPLED else 0,
                        n_failed, boot, seed, names)


def _check_failed(n_failed, total):
    from .._core._validation import warn
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
