"""The energy tests of the Poisson law (:func:`poisson_test`).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from .._core import _sequential
from .._core._validation import seeded_rng
from ._bootstrap import BATCH_DOUBLES, _bootstrap, _pvalue, _resamples, _rule_fields, _sample
from ._dask import backend_iv
from ._results import GoodnessOfFitResult, PoissonTestsResult

__all__ = ["poisson_test"]


# -- Poisson ------------------------------------------------------------------------------------

_POISSON_STATS = ("energy", "m-cvm", "m-ad")


def _counts(x, columns, name="x"):
    X, used = _sample(x, columns, name, allow_2d=False)
    v = X[:, 0]
    bad = (v < 0) | (v != np.round(v))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must hold non-negative integer counts; value {v[i]:g} at "
                         f"position {i} is not ({int(bad.sum())} such value(s)).")
    if v.max(initial=0) > 2**31:
        raise ValueError(f"`{name}` has counts up to {v.max():g}; counts above 2**31 are not supported.")
    return v.astype(np.int64), used


def _draw_counts(gen, k, lam, n):
    return gen.poisson(lam, size=(k, n)).astype(np.int64)


def _statistics_table(X, nt, copy, which):
    """The statistics ``which`` of each row of ``X``: one column each."""
    from ._poisson import poisson_statistics

    got = poisson_statistics(X, which, m_recursion="stable")
    return np.column_stack([got[w] for w in which])


def _statistic(X, nt, copy, w):
    return _statistics_table(X, nt, copy, (w,))[:, 0]


def _dask_nulls(R, gen, lam, n, which):
    """Every statistic's bootstrap null on the Dask backend (the replicates shared)."""
    from ._dask import table

    if R == 0:
        return {w: np.empty(0) for w in which}
    T = table(R, gen, partial(_draw_counts, lam=lam, n=n), partial(_statistics_table, which=which),
              1, n)
    return {w: np.ascontiguousarray(T[:, j]) for j, w in enumerate(which)}


def poisson_test(x, *, statistic="energy", n_resamples=999, rng=None, columns=None,
                 pvalue_method="full", sequential_h=10, alpha=0.05, backend=None):
    r"""Energy and mean-distance tests that a sample of counts is Poisson.

    With :math:`\hat\lambda = \bar x`, the energy statistic (Székely and Rizzo 2004, "Mean
    distance test of Poisson distribution", *Statist. Probab. Lett.* 67, 241–247) is

    .. math::

        \mathcal{E}_n = n\Big(\frac{2}{n}\sum_i E|x_i - X| - E|X - X'|
                        - \frac{1}{n^2}\sum_{i,j}|x_i - x_j|\Big),

    :math:`E|x - X| = 2xF(x) - 2\hat\lambda F(x - 1) + \hat\lambda - x` and
    :math:`E|X - X'| = 2\hat\lambda e^{-2\hat\lambda}(I_0(2\hat\lambda) + I_1(2\hat\lambda))`
    for :math:`X \sim \mathrm{Poisson}(\hat\lambda)`.  'm-cvm' and 'm-ad' are the
    Cramér–von Mises and Anderson–Darling type statistics of the same paper's mean distance
    characterisation, as R ``energy``'s ``poisson.tests``.

    Parameters
    ----------
    x : array_like of non-negative integers, Series, or one-column DataFrame
    statistic : {'energy', 'm-cvm', 'm-ad', 'all'}
        'all' returns a :class:`PoissonTestsResult` with the three tests on the same
        bootstrap samples.
    n_resamples : int
        Parametric bootstrap samples: Poisson(:math:`\hat\lambda`) samples of size n, with
        :math:`\lambda` re-estimated on each.
    rng : None, int or numpy.random.Generator
        Replicate r is row r of ``rng.poisson(λ̂, (n_resamples, n))``.
    columns : str or list of one str, optional
        The column of a DataFrame.
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop the bootstrap early, as in :func:`energystats.energy_test`;
        one statistic at a time (not with ``statistic='all'``, whose three
        tests share the replicates).
    backend : {None, 'threads', 'dask'}, default None
        Where the bootstrap runs.  None and 'threads': this process.  'dask': tasks on the
        current Dask scheduler (a ``distributed.Client`` if one is active), one thread each.
        A chain of small tasks draws the samples from ``rng`` batch after batch as this
        process does, and each batch of about 4·10⁶ counts is one task that computes its
        statistics (the three of 'all' together); with 'sequential' or 'decision' the
        replicates run in rounds of 16, 32, 64, ... between which the rule looks at them in
        draw order.  The null distributions and p-values are the same bits as here for the
        same ``rng`` (a Generator given is copied, not advanced).  The sample stays in
        memory (Dask input is refused).  A bootstrap below one task's work is one task,
        Dask's overhead only (measured for :func:`normality_test`:
        ``docs/benchmarks/dask_resampling.txt``).

    Returns
    -------
    GoodnessOfFitResult or PoissonTestsResult

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> x = np.random.default_rng(0).poisson(3.0, size=80)
    >>> res = es.poisson_test(x, n_resamples=199, rng=1)
    >>> bool(res.params["mu"] == x.mean()), bool(res.pvalue > 0.05)
    (True, True)
    """
    from ._poisson import poisson_statistics

    on_dask = backend_iv(backend, x, "poisson_test")
    which = _POISSON_STATS if statistic == "all" else (statistic,)
    if statistic != "all" and statistic not in _POISSON_STATS:
        raise ValueError(f"`statistic` must be one of 'energy', 'm-cvm', 'm-ad', 'all'; got "
                         f"{statistic!r}.")
    v, used = _counts(x, columns)
    n = v.size
    if n < 2:
        raise ValueError(f"`x` needs at least 2 counts; got {n}.")
    R = _resamples(n_resamples)
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha)
    if rule is not None and statistic == "all":
        raise ValueError(f"`pvalue_method={pvalue_method!r}` stops one test's bootstrap; with "
                         "statistic='all' the three tests share it, so use 'full' (or one "
                         "statistic).")
    lam = float(v.mean())
    # M statistics by the recursion without cancellation: R's (m_recursion="r") loses digits
    # as λ̂ grows (relative error ~1e-9 at λ̂ = 50, wrong at λ̂ ≥ 150); the two agree to 1e-12
    # for small λ̂
    obs = poisson_statistics(v[None, :], which, m_recursion="stable")
    gen, seed = seeded_rng(rng)
    m = max(1, min(R, BATCH_DOUBLES // n))
    if rule is None and on_dask:
        null = _dask_nulls(R, gen, lam, n, which)
    elif rule is None:
        null = {w: np.empty(R) for w in which}
        for r0 in range(0, R, m):
            k = min(m, R - r0)
            got = poisson_statistics(gen.poisson(lam, size=(k, n)).astype(np.int64), which,
                                     m_recursion="stable")
            for w in which:
                null[w][r0:r0 + k] = got[w]
    else:
        (w,) = which
        t = float(np.asarray(obs[w]).ravel()[0])
        null = {w: _bootstrap(R, m, gen, partial(_draw_counts, lam=lam, n=n),
                              partial(_statistic, w=w), t, abs(t) + n * (1.0 + lam), rule,
                              dask=1 if on_dask else None, work=n)}
    results = {}
    for w in which:
        t = float(np.asarray(obs[w]).ravel()[0])
        p, se = _pvalue(t, abs(t) + n * (1.0 + lam), null[w], R, rule,
                        what="energy statistic" if w == "energy" else f"{w.upper()} statistic")
        results[w] = GoodnessOfFitResult(
            statistic=t, pvalue=p, null_distribution=null[w], distribution="poisson",
            params={"mu": lam}, fitted=("mu",), method="bootstrap" if R else "none",
            statistic_name=w, n_resamples=int(null[w].shape[0]), n_samples=n, pvalue_se=se,
            seed=seed, columns=used, **_rule_fields(rule, t))
    return PoissonTestsResult(results) if statistic == "all" else results[statistic]
