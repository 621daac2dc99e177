"""DISCO, the distance-components analysis (:func:`disco`): one or several factors, conditional
and marginal tests.
"""
from __future__ import annotations

import numpy as np

from .._core import _permutation, _sequential
from .._core._group_sums import DEFAULT_MEMORY_BUDGET
from .._core._grouped import _DiscoStatistic, _MarginalDisco, _Unit, _combine
from .._core._validation import Labels
from ._dask import _dask_test
from ._finish import _CellsToFactors, _disco_finish, _marginal_finish
from ._setup import _prepare_any

__all__ = ["disco"]


def disco(*samples, labels=None, by=None, columns=None, strata=None, conditional=True, dropna=False,
          numeric_only=False, n_resamples=999, metric="energy", exponent=1.0, sigma=1.0,
          check_negative_type=True, rng=None,
          exact=None, method="auto", memory_budget=DEFAULT_MEMORY_BUDGET, progress="auto",
          n_threads=None, backend=None, compute=True, pvalue_method="full", sequential_h=10,
          alpha=0.05):
    r"""DISCO: distance-components analysis of k ≥ 2 groups (permutation F test).

    Parameters
    ----------
    *samples, labels, columns, dropna, numeric_only, n_resamples, metric, exponent, sigma, check_negative_type, rng, exact, method, memory_budget, progress, n_threads, backend, compute
        As in :func:`energy_test` (on Dask too with several factors: a Dask
        DataFrame with ``by=[...]``, or a DataFrame of factors as ``labels``).  ``labels`` may also be a DataFrame with
        one column per factor.
    by : str or list of str, optional
        With a DataFrame ``X``: the grouping column, or several columns for a
        multi-factor analysis.
    strata : str or array_like, optional
        As in :func:`energy_test`: groups compared and relabelled within strata.
    pvalue_method, sequential_h, alpha
        As in :func:`energy_test` ('full', 'sequential' or 'decision'); the
        last two stop relabelling early.  With several factors each factor has
        its own rule, fixed in advance like the one-factor rule: tested
        conditionally, a factor that stops skips the rest of its relabellings
        (the next factor gets those of the full run); with
        ``conditional=False`` the factors share the relabellings, which stop
        when every factor's rule has stopped.  Either way each factor's
        p-value (or decision) is its rule applied to the full run's
        relabellings, and ``n_resamples`` counts them per factor.
    conditional : bool, default True
        With several factors: test each factor given the others (relabelled
        within the cells of the other factors); ``False`` gives R
        ``energy``'s marginal tests (each factor as if alone).  See Notes.

    Returns
    -------
    DiscoResult
        ``statistic`` (F), ``pvalue``, ``between`` (S), ``within``,
        ``total`` (T), degrees of freedom; ``.to_frame()`` is the table (R
        ``energy``'s columns Df, Sum Dist, Mean Dist, F-ratio, p-value as
        ``df``, ``dispersion``, ``mean_dispersion``, ``F``, ``pvalue``; R's
        factor row "factors" is ``Between`` with one factor) and the result
        prints as one.

    Notes
    -----
    With the V-statistics of Rizzo and Székely (2010) (no square root),

    .. math::

        W = \sum_j \frac{n_j}{2} g(C_j, C_j), \quad
        S = \sum_{i<j} \frac{n_i n_j}{2n}\,E(C_i, C_j), \quad
        T = \frac{n}{2} g(X, X) = S + W, \quad
        F = \frac{S / (k - 1)}{W / (n - k)},

    with degrees of freedom :math:`k - 1`, :math:`n - k`, :math:`n - 1`.
    The p-value is that of ``F`` over relabellings, as in
    :func:`energy_test` (R's ``disco`` counts strictly greater values).
    For two groups ``S`` is half the :func:`energy_test` statistic.

    **Strata** (``strata=``): the groups are compared within each stratum
    and relabelled within it.  With cells :math:`C_{is}` (group i in stratum
    s), :math:`S = \sum_s S_s` (each stratum's between component),
    :math:`W = \sum_{i,s} \frac{n_{is}}{2} g(C_{is}, C_{is})` and
    :math:`F = \frac{S / \sum_s (k_s - 1)}{W / (n - \#\text{cells})}`; then
    :math:`T = S_{\text{strata}} + S + W`.

    **Several factors** (``by`` a list, or a DataFrame of ``labels``):

    * ``conditional=True`` (default): each factor is tested *given the
      others*: its groups are compared within the cells of the other factors
      (as with ``strata`` = those cells) and relabelled within them, so an
      effect of another factor, even one associated with it, does not make
      it significant.  Its null hypothesis: within every cell of the other
      factors, the distribution does not depend on this factor.  So its row
      tests the factor together with its interactions with the others
      (``a + a:b``), with degrees of freedom the cells of all factors less
      the cells of the others (a 3-level factor given a 2-level one: 6 - 2 =
      4, where R's table has 2), and its F divides by the Within row: the
      dispersion within the cells of all factors, :math:`n -` cells degrees
      of freedom.  The rows do not add up to Total.  Random relabellings
      only (each factor has its own).
    * ``conditional=False``: R ``energy``'s ``disco(x, factors)`` table, with
      *marginal* tests: each factor gets its one-way between component
      :math:`S_f`, its one-way F (as if that factor alone grouped the data,
      with :math:`W_f = T - S_f` and :math:`n - k_f` degrees of freedom) and
      its permutation p-value; the Within row is :math:`T - \sum_f S_f` with
      :math:`n - 1 - \sum_f (k_f - 1)` degrees of freedom.  Each p-value
      tests "this factor alone is unrelated to the response": when factors
      are associated, an effect of one makes the others significant too.
      One random permutation of the rows serves all factors (R permutes
      each factor separately).

    The result's ``test`` says which ('one-way', 'stratified', 'conditional'
    or 'marginal'), and so does its printout; with several factors or strata
    ``to_frame()`` has a ``tests`` column (:meth:`DiscoResult.row_tests`)
    that says, row by row, what is tested and how df and F are formed.

    References
    ----------
    .. [1] Rizzo, M. L. and Székely, G. J. (2010). DISCO analysis: A
       nonparametric extension of analysis of variance. Ann. Appl. Stat.
       4(2), 1034–1055.

    Examples
    --------
    >>> import energystats as es
    >>> from energystats.datasets import load_iris
    >>> iris = load_iris()
    >>> res = es.disco(iris, by="species", n_resamples=199, rng=0)
    >>> res.to_frame().round(3)
                df  dispersion  mean_dispersion        F  pvalue  pvalue_se
    component
    Between      2     119.237           59.619  124.597   0.005      0.005
    Within     147      70.338            0.478      NaN     NaN        NaN
    Total      149     189.576              NaN      NaN     NaN        NaN
    >>> round(res.between + res.within - res.total, 9)
    0.0

    Two associated factors, only ``b`` acting: tested given ``b``, ``a`` shows
    nothing; R's marginal test of ``a`` "finds" ``b``'s effect:

    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> b = rng.integers(0, 2, 60)
    >>> a = np.where(rng.random(60) < 0.85, b, 1 - b)
    >>> df = pd.DataFrame({"y": rng.normal(size=60) + 2 * b, "a": a, "b": b})
    >>> es.disco(df, by=["a", "b"], rng=1).pvalue.round(3)
    array([0.839, 0.001])
    >>> es.disco(df, by=["a", "b"], rng=1, conditional=False).pvalue.round(3)
    array([0.001, 0.001])
    """
    if conditional not in (True, False):
        raise ValueError(f"`conditional` must be True or False; got {conditional!r}.")
    st = _prepare_any(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                      n_resamples, rng, method, memory_budget, progress, n_threads, exact, "disco",
                      strata, backend, compute, allow_factors=True,
                      check_negative_type=check_negative_type)
    labs, names = st.labs, st.names
    single = len(labs) == 1
    n = int(labs[0].sizes.sum())
    # one stopping rule per factor (None: every relabelling)
    rules = [_sequential.make_rule(pvalue_method, st.R, h=sequential_h, alpha=alpha, exact=exact,
                                   dask=st.dask) for _ in labs]
    if rules[0] is None:
        rules = None
    if not single and not conditional:
        if st.strata is not None:
            raise ValueError("`conditional=False` (R's marginal tests) is not available with "
                             "`strata`; use `conditional=True`, or one factor at a time.")
        return _marginal_disco(st, n, progress, compute, rules)
    if not single and exact:
        raise ValueError("`exact=True` is not available for several factors tested conditionally "
                         "(each factor has its own set of relabellings); use random relabellings.")
    strata_codes = [] if st.strata is None else [st.strata.codes]
    units = [_Unit(lab, strata_codes + [o.codes for j, o in enumerate(labs) if j != f])
             for f, lab in enumerate(labs)]
    for unit, name in zip(units, names):
        if unit.layout.df_between < 1:
            what = "the other factors' cells" if not single else "stratum"
            raise ValueError(f"{'the factor ' + repr(name) if name is not None else 'the grouping'} "
                             f"has a single level within every {what}, so it cannot be tested.")
        unit.layout.warn_idle("strata" if single else
                              f"cells of the factors other than {name!r}"
                              + ("" if st.strata is None else " and of the strata"))
    df_within = units[0].layout.df_within
    if df_within < 1:
        cells = "groups" if units[0].strata is None else "cells (groups within strata)"
        raise ValueError(f"`disco` needs within-group degrees of freedom n - (number of {cells}) "
                         f">= 1 for its F ratio; got {df_within} (n={n}, {units[0].k} {cells}): "
                         "too many groups of one point.")
    if st.dask:
        return _dask_test(st, units, [_DiscoStatistic(u.layout) for u in units],
                          exact if single else False, "disco", compute)
    parts, engine, D = [], None, None
    for f, unit in enumerate(units):
        engine = st.engine(unit.k, unit.layout.sizes.astype(np.intp), D=D)
        D = getattr(engine, "D", None)
        stat = _DiscoStatistic(unit.layout)
        # a factor that stops early skips the rest of its relabellings, so the next factor's
        # are those of the full run (each factor's result is its rule applied to the full run)
        o, nl, is_exact, obs_M = _permutation.permutation_null(
            [engine], unit.cells, [unit.identity], stat, n_resamples=st.R, rng=st.gen,
            exact=exact if single else False, progress=progress, strata=unit.strata,
            rule=None if rules is None else rules[f], tolerance=stat.tolerance,
            skip_rest=f < len(units) - 1, key=stat.key)
        parts.append((stat, o, nl, obs_M))
    return _disco_finish(st, units, parts, is_exact, engine.name, rules)


def _marginal_disco(st, n, progress, compute=True, rules=None):
    """R ``energy``'s several-factor table: one-way components, one relabelling for all factors."""
    labs = st.labs
    cells, uniq = _combine([lab.codes for lab in labs])
    maps = [np.ascontiguousarray(uniq[:, f], dtype=np.intp) for f in range(len(labs))]
    dfb = np.array([lab.k - 1 for lab in labs])
    df_within = int(n - 1 - dfb.sum())
    if df_within < 1:
        raise ValueError(f"`disco` needs within-group degrees of freedom n - 1 - sum(k_f - 1) "
                         f">= 1 for its F ratio; got {df_within} (n={n}, groups per factor "
                         f"{[lab.k for lab in labs]}): too many groups of one point.")
    stat = _MarginalDisco(labs)
    if st.dask:
        unit = _Unit(Labels(cells, list(range(uniq.shape[0])), np.bincount(cells, minlength=uniq.shape[0])),
                     [])
        return _dask_test(st, [unit], [_CellsToFactors(stat, maps, [lab.k for lab in labs])],
                          st.exact, "marginal", compute, extra=(n, dfb, df_within))
    share = len(labs)  # the factors' batches run side by side: each gets its share of the budget
    engines = [st.engine(labs[0].k, labs[0].sizes, share=share)]
    for lab in labs[1:]:
        # the n×n matrix, when there is one, is shared between factors
        engines.append(st.engine(lab.k, lab.sizes, share=share, D=getattr(engines[0], "D", None)))
    # with stopping rules, one per factor on the shared relabellings: they stop when all have,
    # each factor's null cut where its own rule stopped
    observed, null, is_exact, obs_M = _permutation.permutation_null(
        engines, cells, maps, stat, n_resamples=st.R, rng=st.gen, exact=st.exact, progress=progress,
        rule=None if rules is None else _sequential.RuleSet(rules),
        tolerance=None if rules is None else stat.tolerance, key=stat.key)
    if rules is not None:
        for f, rule in enumerate(rules):
            null[rule.used:, f] = np.nan
    return _marginal_finish(st, stat, obs_M, observed, null, is_exact, engines[0].name, n, dfb,
                            df_within, rules)
