"""The energy goodness-of-fit test of a one-dimensional SciPy family (:func:`gof_test`).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .._core import _sequential
from .._core._validation import check_n_threads, seeded_rng
from .._lib import _gof
from ._bootstrap import (BATCH_DOUBLES, _bootstrap, _dask_threads, _pow2_exponent, _pvalue,
    _resamples, _rule_fields, _sample, _sorted_rows)
from ._dask import backend_iv
from ._families import Family, resolve
from ._results import GoodnessOfFitResult

__all__ = ["gof_test"]


# -- any SciPy distribution -----------------------------------------------------------------------

def _energy_1d(family, Y, params, nt, copy=True):
    """E_n and error scale of each row of ``Y`` for the row's parameters (``Y`` sorted in
    place when ``copy=False``)."""
    Y = _sorted_rows(np.array(Y, dtype=np.float64, order="C", copy=copy or None), nt)
    G, md = family.terms(Y, params)
    out, bound = np.empty(Y.shape[0]), np.empty(Y.shape[0])
    _gof.energy_rows(Y, np.ascontiguousarray(G), np.ascontiguousarray(md, dtype=np.float64),
                     out, bound, nt if Y.size >= 100_000 else 1)
    if "scale" in params:  # the statistic of (y − loc)/scale against the standard law
        scale = np.broadcast_to(np.asarray(params["scale"], dtype=np.float64), out.shape)
        out, bound = out / scale, bound / scale
    return out, bound


def _draw_law(gen, k, law, n):
    return np.asarray(law.rvs(size=(k, n), random_state=gen), dtype=np.float64)


def _statistics_law(Z, nt, copy, family, known):
    return _energy_1d(family, Z, family.fit_rows(Z, known), nt, copy=copy)[0]


def gof_test(x, dist, *, known_params=None, fit=True, n_resamples=999, rng=None, columns=None,
             n_threads=None, pvalue_method="full", sequential_h=10, alpha=0.05, backend=None):
    r"""Energy goodness-of-fit test of a univariate sample against a SciPy distribution.

    .. math::

        \mathcal{E}_n = 2\sum_i E|y_i - Z| - n\,E|Z - Z'| - \frac{1}{n}\sum_{i,j}|y_i - y_j|,

    with :math:`E|y - Z| = y(2F(y) - 1) + EZ - 2E[Z\,1\{Z \le y\}]` and
    :math:`E|Z - Z'| = 2\int F(1 - F)\,dz` (Székely and Rizzo 2013, "Energy statistics: a
    class of statistics based on distances", *J. Statist. Plann. Inference* 143, §6); the
    law needs a finite mean.  For a continuous SciPy law (``loc``, ``scale``) the statistic
    is that of the standardised sample :math:`(x_i - \mathrm{loc})/\mathrm{scale}` against
    the standard law, so it has no units.  (For ``norm`` SciPy's fit takes the maximum
    likelihood standard deviation, divisor n; with ``known_params`` set to the sample mean
    and the n − 1 standard deviation the statistic is R ``energy``'s ``normal.e`` —
    :func:`normality_test` is that test.)  Closed forms are used for the normal, exponential, uniform,
    gamma, lognormal, Pareto, Weibull and beta families, sums over the support for discrete
    laws (Poisson, geometric, binomial, ...), numerical integration for other continuous
    laws (slow).

    Parameters
    ----------
    x : array_like (n,), Series, or one-column DataFrame
    dist : str, scipy.stats distribution, or frozen distribution
        A name ('normal', 'exponential', 'gamma', 'uniform', 'lognormal', 'pareto',
        'weibull', 'beta', 'poisson', 'geometric', 'binomial' or any ``scipy.stats`` name),
        a distribution such as ``scipy.stats.gamma`` (parameters fitted), or a frozen one
        such as ``scipy.stats.gamma(2.0)`` (a fully specified hypothesis: nothing fitted).
    known_params : dict, optional
        Parameters held fixed (SciPy names: shapes, ``loc``, ``scale``), e.g.
        ``{"loc": 0}`` for a two-parameter gamma; the others are estimated by maximum
        likelihood (SciPy's ``fit``; closed forms for the Poisson mean, the geometric and
        binomial probability — the binomial ``n`` must be known; discrete ``loc`` is 0
        unless given).
    fit : bool
        False: every parameter must be given (``known_params`` or a frozen ``dist``).
    n_resamples : int
        Parametric bootstrap samples from the fitted law, each refitted (as
        ``scipy.stats.goodness_of_fit``); 0 for the statistic only.
    rng : None, int or numpy.random.Generator
        Replicate r is row r of ``law.rvs(size=(n_resamples, n), random_state=rng)``
        (drawn in batches; the same values).
    columns : str or list of one str, optional
    n_threads : int, optional
        Threads of the statistics (on the Dask backend, threads per task, default 1).
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop the bootstrap early, as in :func:`energystats.energy_test`.
    backend : {None, 'threads', 'dask'}, default None
        Where the bootstrap runs.  None and 'threads': this process.  'dask': tasks on the
        current Dask scheduler (a ``distributed.Client`` if one is active), ``n_threads``
        threads each (default 1). A chain of small tasks draws the samples from ``rng``
        batch after batch as this process does, and each batch of about 4·10⁶ values drawn
        is one task that computes its statistics; with 'sequential' or 'decision' the
        replicates run in rounds of 16, 32, 64, ... between which the rule looks at them in
        draw order.  The null distribution and p-value are the same bits as here for the
        same ``rng`` (a Generator given is copied, not advanced).  The sample stays in
        memory (Dask input is refused).  A bootstrap below one task's work is one task,
        Dask's overhead only (measured for :func:`normality_test`:
        ``docs/benchmarks/dask_resampling.txt``).

    Returns
    -------
    GoodnessOfFitResult

    Notes
    -----
    With every parameter known the bootstrap is a plain Monte Carlo test of a simple
    hypothesis.  With parameters estimated the p-value is exact for location–scale families
    fitted by equivariant estimators (normal, exponential, uniform with loc and scale both
    free) and a parametric-bootstrap approximation otherwise.  SciPy's ``fit`` estimates
    ``loc`` too unless it is given: for positive families (gamma, Weibull, lognormal, ...)
    ``known_params={"loc": 0}`` gives the usual two-parameter family and a much more stable
    fit.

    For a continuous law the data (and a given ``loc`` or ``scale``) are first multiplied by
    the power of two :math:`2^{-e}` that brings the largest :math:`|x|` into [1, 2) (exact)
    and the fitted ``loc`` and ``scale`` are reported in the data's units: the statistic
    and p-value of :math:`x` and :math:`c\,x` (:math:`c > 0`) agree to rounding when
    the family is location–scale and whatever is held fixed scales with the data
    (``loc=0``).  Discrete families are not scale invariant.

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> x = np.random.default_rng(0).gamma(2.0, 3.0, size=100)
    >>> res = es.gof_test(x, "gamma", known_params={"loc": 0}, n_resamples=99, rng=1)
    >>> sorted(res.fitted), bool(res.pvalue > 0.05)
    (['a', 'scale'], True)
    """
    on_dask = backend_iv(backend, x, "gof_test")
    dist_obj, frozen, name = resolve(dist)
    family = Family(dist_obj)
    X, used = _sample(x, columns, allow_2d=False)
    v = X[:, 0]
    n = v.size
    if n < 2:
        raise ValueError(f"`x` needs at least 2 observations; got {n}.")
    if family.discrete:
        bad = v != np.round(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"`x` must hold integers for the discrete distribution {name!r}; "
                             f"value {v[i]:g} at position {i} is not.")
    known = {} if known_params is None else dict(known_params)
    if not isinstance(known, dict):
        raise TypeError(f"`known_params` must be a dict; got {type(known_params).__name__}.")
    unknown = [k for k in known if k not in family.param_names]
    if unknown:
        raise ValueError(f"`known_params` {unknown} are not parameters of {name!r} "
                         f"(parameters: {family.param_names}).")
    if frozen is not None:
        if known:
            raise ValueError("`known_params` cannot be combined with a frozen `dist`, whose "
                             "parameters are all fixed.")
        shapes = dict(zip(family.shapes, frozen.args))
        rest = list(frozen.args[len(family.shapes):])
        base = dict(zip([p for p in family.param_names if p not in family.shapes], rest))
        known = {**{p: (0.0 if p == "loc" else 1.0) for p in family.param_names
                    if p not in family.shapes}, **shapes, **base, **frozen.kwds}
        missing = [p for p in family.param_names if p not in known]
        if missing:
            raise ValueError(f"the frozen `dist` does not fix {missing}.")
    elif family.discrete and "loc" not in known:
        known["loc"] = 0.0
    if not fit:
        missing = [p for p in family.param_names if p not in known]
        if missing:
            raise ValueError(f"`fit=False` needs every parameter of {name!r} given; missing "
                             f"{missing} (pass them in `known_params` or freeze `dist`).")
    R = _resamples(n_resamples)
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha)
    nt = check_n_threads(n_threads)
    fitted = tuple(p for p in family.param_names if p not in known)
    if fitted and not family.discrete and not hasattr(dist_obj, "fit"):
        raise TypeError(f"`dist` {name!r} has no fit method; give its parameters.")
    # A continuous law's statistic is that of (x − loc)/scale: compute it on x 2**-e (exact,
    # see _pow2_exponent) with loc and scale in those units, reported back in x's units.
    e = 0 if family.discrete else _pow2_exponent(v)
    v = np.ldexp(v, -e)
    known = {k: (float(np.ldexp(val, -e)) if k in ("loc", "scale") else val)
             for k, val in known.items()}

    def units(p):
        return {k: float(np.ldexp(val, e) if k in ("loc", "scale") else val)
                for k, val in p.items()}

    params = family.fit(v, known)
    law = family.frozen(params)
    mu = float(law.mean())
    if not np.isfinite(mu):
        raise ValueError(f"`x`: {name} with parameters {units(params)} (fitted to `x`, or as "
                         "given) has no finite mean: the energy statistic needs E|Z| < ∞.")
    stat, bound = (float(a[0]) for a in _energy_1d(family, v[None, :], params, nt))
    gen, seed = seeded_rng(rng)
    null = _bootstrap(R, max(1, min(R, BATCH_DOUBLES // (4 * n))), gen,
                      partial(_draw_law, law=law, n=n),
                      partial(_statistics_law, family=family, known=known), stat, bound, rule,
                      n_threads=nt, dask=_dask_threads(on_dask, n_threads, nt), work=n)
    p, se = _pvalue(stat, bound, null, R, rule)
    return GoodnessOfFitResult(
        statistic=stat, pvalue=p, null_distribution=null, distribution=name,
        params=units(params), fitted=fitted,
        method="bootstrap" if R else "none", statistic_name="energy",
        n_resamples=int(null.shape[0]), n_samples=n, pvalue_se=se, seed=seed, columns=used,
        **_rule_fields(rule, stat))
