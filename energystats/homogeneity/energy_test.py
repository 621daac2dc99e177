"""The k-sample energy test (:func:`energy_test`): permutation, exact and asymptotic p-values.
"""
from __future__ import annotations

import numpy as np

from .._core import _asymptotic, _permutation, _sequential
from .._core._group_sums import DEFAULT_MEMORY_BUDGET
from .._core._grouped import _EnergyStatistic, _Unit
from .._core._validation import warn
from ._dask import _dask_energy_asymptotic, _dask_test
from ._finish import _energy_gamma_finish, _energy_test_finish, _pooled_dvar_u
from ._projection import DEFAULT_PROJECTIONS, check_projection_options, projection_test
from ._setup import _prepare_any

__all__ = ["energy_test"]


# -- public functions --------------------------------------------------------

def energy_test(*samples, labels=None, by=None, columns=None, strata=None, dropna=False,
                numeric_only=False, n_resamples=999, metric="energy", exponent=1.0, sigma=1.0,
                check_negative_type=True,
                rng=None, exact=None, method="auto", memory_budget=DEFAULT_MEMORY_BUDGET,
                progress="auto", n_threads=None, backend=None, compute=True, pvalue_method="full",
                sequential_h=10, alpha=0.05, estimator="V", n_projections=DEFAULT_PROJECTIONS):
    r"""Energy test of equal distributions for k ≥ 2 samples (permutation test).

    Parameters
    ----------
    *samples : array_like
        Either k ≥ 2 samples, each of shape (n_j, d) or (n_j,) with the same
        d; or one array / DataFrame ``X`` of shape (n, d) together with
        ``labels`` or ``by``.  With ``metric='precomputed'``, ``X`` is the
        n×n semimetric matrix and ``labels`` is required.
    labels : array_like of shape (n,), optional
        Group of each row of ``X``.  A Series is aligned with an indexed
        ``X`` (Series/DataFrame) by its index (a mismatch is an error);
        arrays and lists are taken by position.
    by : str, optional
        With a DataFrame ``X``: the grouping column.
    columns : list, optional
        With a DataFrame ``X``: the columns used (default: every column
        except ``by`` and ``strata``).
    strata : str or array_like of shape (n,), optional
        Strata of the rows (a column name of the DataFrame ``X``, or one
        entry per row, a Series aligned by index): rows are relabelled only
        within their stratum (blocked designs, repeated measures), and the
        statistic compares groups only within strata (see Notes).
    dropna : bool, default False
        Drop rows with missing values in ``by`` (and ``strata``) or the used columns instead of
        raising an error that counts them.
    numeric_only : bool, default False
        With a DataFrame ``X`` and ``columns=None``: leave out wholly
        non-numeric columns (text, categorical, datetime) instead of raising
        an error that names them; ``columns`` in the result records what was
        used.  A column of numbers with stray text cells is always an error
        naming the row and the value.
    n_resamples : int, default 999
        Number of random relabellings R, from 0 to 10⁹; ``0`` returns the
        statistic only (``pvalue=None``).
    metric : str or callable, default 'energy'
        The semimetric rho (as in :func:`energystats.pairwise`), or 'precomputed'.
        Also SciPy's names of a metric of negative type ('euclidean', 'sqeuclidean',
        'cityblock', 'hamming', 'canberra', 'chebyshev' with at most 2 features), and
        ``(name, {parameter: value})`` for 'seuclidean', 'mahalanobis' and 'minkowski';
        see the guide page "Choosing a semimetric".
    exponent : float, default 1.0
        ``metric='energy'``: rho = ‖x − y‖^exponent, 0 < exponent ≤ 2.
    sigma : float, default 1.0
        Bandwidth of 'laplacian' and 'gaussian'.
    check_negative_type : bool, default True
        False accepts SciPy's names refused because the energy statistics are not
        valid with them (as in :func:`energystats.pairwise`).
    rng : int, numpy.random.Generator or None
        Source of the relabellings.  The same seed gives the same relabellings
        (hence the same p-value) on every platform and thread count, and on
        the Dask backend (which copies a Generator into its graph and does
        not advance it).  With ``None`` a seed is drawn and recorded in the
        result's ``seed``.
    exact : bool or None, default None
        ``None``: enumerate all distinct relabellings when there are at most
        ``n_resamples`` of them; ``True``: always enumerate (error above
        10⁶); ``False``: always draw at random.
    method : {'auto', 'sorted', 'pairwise', 'streamed', 'projection'}, default 'auto'
        How relabellings are evaluated.  'auto' uses 'sorted' for 1-D data
        with ``metric='energy', exponent=1`` and 'pairwise' otherwise.
        'pairwise' keeps the n×n matrix in memory when it fits
        ``memory_budget`` and works in row blocks otherwise (see Notes);
        'streamed' evaluates each relabelling by a streamed reduction.
        'projection' (large n): a different statistic, the mean over
        ``n_projections`` random directions of the one-dimensional statistic
        times :math:`c_d` (Baringhaus and Franz 2004), O(K·n log n) and then
        O(K·n·k) per relabelling; an exact permutation test given the
        directions (see Notes).  Only with ``metric='energy', exponent=1``,
        V statistic, ``pvalue_method='full'``, no ``strata``, no Dask.
    memory_budget : float, default 512 MiB
        Bytes allowed for the working memory: the n×n matrix (or a row block
        of it) plus a batch of relabellings with their k×k sums.  Lowered to
        80 % of the memory available when that is less; a
        :class:`MemoryError` saying how much is needed is raised before any
        work when not even one relabelling fits.  A callable ``metric``
        always forms the n×n matrix.
    progress : 'auto', bool or file-like, default 'auto'
        Show progress with the estimated time left: 'auto' on ``sys.stderr``
        when it is a terminal or a Jupyter notebook's output (silent in scripts,
        pipes and tests); True on ``sys.stderr`` whatever it is; or on the given
        stream.  Redrawn in place on a terminal or in a notebook, a line every 5 s
        otherwise.
    n_threads : int or None
        Threads for the compiled kernels and BLAS (None: all available; with
        the Dask backend, threads per task, default 1).
    backend : {None, 'threads', 'dask'}, default None
        Where the pair sums are computed: this process's threads, or a Dask
        graph of tile tasks (on the current ``distributed.Client``, else Dask's
        local scheduler).  None: 'dask' when the data are a Dask collection,
        else 'threads'.  Same numbers either way (see the guide page "Scaling
        out": the same relabellings from the same ``rng``); needs the ``dask`` extra.
    compute : bool, default True
        With the Dask backend, ``False`` returns a
        :class:`dask.delayed.Delayed` of the result instead of computing it.
    pvalue_method : {'full', 'sequential', 'decision', 'asymptotic'}, default 'full'
        'full': all ``n_resamples`` relabellings, p = (1 + #{T* ≥ T}) / (R + 1).
        'sequential' (Besag & Clifford 1991, "Sequential Monte Carlo
        p-values"): stop at the ``sequential_h``-th relabelling whose
        statistic reaches the observed one, p = h / L after L relabellings;
        with fewer than h among all ``n_resamples``, p = (g + 1) / (R + 1).
        A valid p-value (P(p ≤ u) ≤ u under the null hypothesis); large
        p-values cost about h / p relabellings.  'decision' (Gandy 2009,
        "Sequential implementation of Monte Carlo tests with uniformly
        bounded resampling risk"): stop as soon as it is clear whether the
        permutation p-value is above or below ``alpha`` (wrong with
        probability at most 10⁻³ whatever the p-value); ``decision`` in the
        result says which ('p <= alpha', 'p > alpha', or None when
        ``n_resamples`` came first), and ``pvalue`` is then only the estimate
        from the relabellings used.  Both draw random relabellings (never
        enumerate) and are not available on the Dask backend.
        'asymptotic': no relabellings; the upper tail of a gamma law
        matched to the mean and variance of the statistic's limit law under
        the null hypothesis (see Notes).  Opt-in: its level is measured,
        not guaranteed (the validity table is on the guide's testing page);
        not with ``strata`` or ``exact=True``; on the Dask backend the group
        sums and the distance variance are Dask tasks.
    sequential_h : int, default 10
        The number of exceedances that stops 'sequential'.
    alpha : float, default 0.05
        The level that 'decision' decides against.
    estimator : {'V', 'U'}, default 'V'
        How the within-group means :math:`g(C_j, C_j)` are taken, in the
        statistic and in every relabelling's statistic alike: 'V' over all
        :math:`n_j^2` pairs (R ``energy``'s ``eqdist.etest``), 'U' over the
        :math:`n_j(n_j - 1)` distinct pairs (dcor's
        ``estimation_stat='u_statistic'``; the order of hyppo's default
        ``bias=False`` statistic for two samples).  With unequal group sizes
        the two order the relabellings differently, so their p-values differ
        (see Notes).  'U' needs at least 2 points in every group (within
        every stratum) and is not available with ``pvalue_method='asymptotic'``.
    n_projections : int, default 100
        ``method='projection'``: the number K of random directions (1-D data:
        one, the data themselves).

    Returns
    -------
    EnergyTestResult
        ``statistic``, ``pvalue``, ``null_distribution``, ``n_resamples``,
        ``exact``, ``sizes``, ``groups``, ``energy_distances``, ``engine``,
        ``pvalue_se``, ``seed``, ``columns``, ``pvalue_method``, ``decision``,
        ``estimator``; ``.to_frame()`` is the test's one-row table and
        ``.to_frame(kind="energy_distances")`` the labelled k×k matrix.

    Notes
    -----
    With :math:`g(A, B) = \frac{1}{|A||B|}\sum_{a\in A}\sum_{b\in B}\rho(a, b)`
    and the (V-statistic) energy distance
    :math:`E(A, B) = 2g(A, B) - g(A, A) - g(B, B)` (no square root), the
    statistic is that of R ``energy``'s ``eqdist.etest``:

    .. math::

        \mathcal{E} = \sum_{i<j} \frac{n_i n_j}{n_i + n_j}\, E(C_i, C_j).

    For two samples it is ``2 S`` with ``S`` the DISCO between component.
    The p-value of R random relabellings (group sizes kept) is
    :math:`(1 + \#\{\mathcal{E}^* \ge \mathcal{E}\}) / (R + 1)`; R's
    ``eqdist.etest`` counts strictly greater values instead.  When all N
    distinct relabellings are enumerated, the p-value is the exact
    :math:`\#\{\mathcal{E}^* \ge \mathcal{E}\} / N`.

    With ``estimator='U'`` the within-group means are over distinct pairs,
    :math:`g_U(A, A) = \frac{1}{|A|(|A| - 1)}\sum_{a \ne a'} \rho(a, a')`,
    and :math:`E_U(A, B) = 2g(A, B) - g_U(A, A) - g_U(B, B)` (unbiased for
    the energy distance of the two laws, so it can be negative) replaces
    :math:`E` in the statistic and in ``energy_distances``.  For two samples
    of sizes m and n (N = m + n) a relabelling changes the statistic through
    the within sums only: V weighs them as :math:`S_{11}/m + S_{22}/n`
    (up to a common factor), U as :math:`S_{11}/(m-1) + S_{22}/(n-1)`, so
    with m ≠ n the order of the relabellings, hence the p-value, differs.

    Ties: a relabelling whose statistic equals the observed one exactly is
    computed with different rounding by different engines, so ":math:`\ge`"
    allows the statistic's rounding error: each group-pair sum may be off by
    64 eps times the sum over all pairs (2nT, T the total dispersion), carried
    through the statistic's formula (about 512 eps·T for two equal groups).
    Tied relabellings then count whatever ``method``, ``memory_budget`` or
    thread count (measured differences: at most 28 eps·T up to n = 1500),
    and one seed gives one p-value.

    With ``strata``, rows are relabelled within their stratum only (the
    group sizes within every stratum kept) and the statistic is the sum over
    strata of the statistic within each stratum,
    :math:`\sum_s \sum_{i<j} \frac{n_{is} n_{js}}{n_{is} + n_{js}} E(C_{is}, C_{js})`:
    differences between strata do not count, so the test asks "do the
    groups differ within strata?" (valid when the rows are exchangeable
    within each stratum under the null hypothesis).

    Asymptotic p-value (``pvalue_method='asymptotic'``): the statistic is a
    quadratic form of the group indicators in the double-centred pooled
    distance matrix, so under the null hypothesis it converges to
    :math:`\sum_{j,l} \lambda_j \mu_l Z_{jl}^2` (:math:`Z_{jl}` standard
    normal), with :math:`\lambda_j` the eigenvalues of the pooled law's
    double-centred kernel (the spectral decomposition of Baringhaus and
    Franz) and :math:`\mu_l` those of
    :math:`Q = \sum_{i<j} \frac{n_i n_j}{n_i + n_j} v_{ij} v_{ij}^\top`,
    :math:`v_{ij} = e_i/\sqrt{n_i} - e_j/\sqrt{n_j}`.  Its mean is
    :math:`\binom{k}{2} \sum_j \lambda_j`, :math:`\sum_j \lambda_j =
    E\rho(Z, Z')` estimated by the mean of :math:`\rho` over distinct pooled
    rows (the exact mean over relabellings), and its variance
    :math:`2 \lVert Q \rVert_F^2 \sum_j \lambda_j^2`, with
    :math:`\sum_j \lambda_j^2` the pooled distance variance estimated
    without bias (U-statistic, R's ``dcovU(z, z)``; one streamed pass, no
    n×n matrix).  The p-value is the upper tail of the gamma law with that
    mean and variance.

    Evaluation: the pairwise matrix is computed once (compiled, all threads);
    batches of relabellings, sized to ``memory_budget``, are then evaluated by
    one compiled pass summing the matrix under the groups' bit masks (two
    groups; three with AVX-512) or through BLAS products :math:`L^\top D`
    (``L`` the one-hot group matrices).  When the n×n matrix does not fit the budget, it is
    recomputed in tiles for every batch (engine 'tiled', or 'blocked' in row
    blocks with 32 groups or more: one extra O(n²·d) pass per batch, memory a
    tile or row block plus the batch); if not even that fits, each relabelling is evaluated by a streamed compiled reduction
    (engine 'streamed': O(n·d) memory, O(n²·d) time per relabelling — slow
    but never out of memory).  In 1-D with :math:`\rho = |x - y|`, the pooled sample is sorted
    once and each relabelling costs O(n·k): O(n log n + R·n) in all.

    Projections (``method='projection'``): for u uniform on the unit sphere,
    :math:`\lVert x - y \rVert = c_d\, E_u |u^\top (x - y)|` with
    :math:`c_d = \sqrt{\pi}\, \Gamma((d+1)/2) / \Gamma(d/2)` (Baringhaus and
    Franz 2004), so :math:`c_d` times the mean over K random directions of
    the statistic of the projected samples is an unbiased estimate of
    :math:`\mathcal{E}` (it tends to :math:`\mathcal{E}` as K grows).  The
    same K directions serve the observed labels and every relabelling, so
    the p-value is that of an exact permutation test of this statistic
    whatever K; what is lost against the pairwise statistic is power, the
    more so the fewer directions and the more the difference lies along few
    of them (measured on the testing guide page).  Use it when the
    pairwise sums do not fit the time: n in the tens of thousands and
    beyond.  The directions are drawn from ``rng`` before the relabellings,
    so ``seed`` repeats both.

    References
    ----------
    .. [1] Székely, G. J. and Rizzo, M. L. (2004). Testing for equal
       distributions in high dimension. InterStat, November (5).
    .. [2] Rizzo, M. L. and Székely, G. J. (2010). DISCO analysis: A
       nonparametric extension of analysis of variance. Ann. Appl. Stat.
       4(2), 1034–1055.
    .. [3] Baringhaus, L. and Franz, C. (2004). On a new multivariate
       two-sample test. J. Multivariate Anal. 88(1), 190–206.

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(30, 2))
    >>> y = rng.normal(loc=2.0, size=(30, 2))
    >>> res = es.energy_test(x, y, n_resamples=199, rng=1)
    >>> round(res.statistic, 3)
    45.368
    >>> res.pvalue
    0.005

    The same test from a DataFrame with a grouping column:

    >>> import pandas as pd
    >>> df = pd.DataFrame(np.vstack([x, y]), columns=["u", "v"])
    >>> df["group"] = ["x"] * 30 + ["y"] * 30
    >>> es.energy_test(df, by="group", n_resamples=0)
    EnergyTestResult(statistic=45.36..., pvalue=None, n_resamples=0, exact=False, sizes=[30, 30], groups=['x', 'y'])

    Blocks that shift the response hide a group effect from the plain test;
    comparing the groups within blocks finds it:

    >>> block = np.repeat([0, 1, 2], 20)
    >>> group = np.tile([0, 1], 30)
    >>> z = np.random.default_rng(5).normal(size=60) + 4.0 * block + 1.0 * group
    >>> es.energy_test(z, labels=group, rng=0).pvalue
    0.433
    >>> es.energy_test(z, labels=group, strata=block, rng=0).pvalue
    0.008

    The U-statistic form (dcor's ``estimation_stat='u_statistic'``):

    >>> res = es.energy_test(x, y[:10], n_resamples=199, rng=1, estimator="U")
    >>> res.estimator, round(res.statistic, 3), res.pvalue
    ('U', 25.038, 0.005)
    """
    projection = isinstance(method, str) and method == "projection"
    st = _prepare_any(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                      n_resamples, rng, "auto" if projection else method, memory_budget, progress,
                      n_threads, exact, "energy_test", strata, backend, compute,
                      check_negative_type=check_negative_type)
    if projection:
        check_projection_options(n_projections, st, exponent, estimator, pvalue_method, exact)
    lab = st.labs[0]
    unit = _Unit(lab, [] if st.strata is None else [st.strata.codes])
    if unit.layout.df_between < 1:
        raise ValueError("`strata`: no stratum holds two groups, so there is nothing to compare.")
    unit.layout.warn_idle("strata")
    _warn_single_rows(lab, st.strata)
    stat = _energy_statistic(unit.layout, estimator, st.strata is not None)
    _sequential.check_rule_options(sequential_h, alpha)  # checked even where unused
    if projection:
        return projection_test(st, unit, stat, n_projections, progress)
    if pvalue_method == _asymptotic.ASYMPTOTIC:
        if estimator == "U":
            raise ValueError("`pvalue_method='asymptotic'` is the limit law of the V statistic; "
                             "with `estimator='U'` use a permutation p-value ('full', "
                             "'sequential' or 'decision').")
        _asymptotic.check_options("energy_test", exact, st.strata)
        if st.dask:
            return _dask_energy_asymptotic(st, unit, stat, compute)
        return _energy_test_asymptotic(st, unit, stat)
    rule = _sequential.make_rule(pvalue_method, st.R, h=sequential_h, alpha=alpha, exact=exact,
                                 dask=st.dask, also=(_asymptotic.ASYMPTOTIC,))
    if st.dask:
        return _dask_test(st, [unit], [stat], exact, "energy", compute)
    engine = st.engine(unit.k, unit.layout.sizes.astype(np.intp))
    observed, null, is_exact, obs_M = _permutation.permutation_null(
        [engine], unit.cells, [unit.identity], stat, n_resamples=st.R, rng=st.gen, exact=exact,
        progress=progress, strata=unit.strata, rule=rule, tolerance=stat.tolerance)
    return _energy_test_finish(st, unit, stat, observed, null, is_exact, obs_M, engine.name, rule)


def _warn_single_rows(lab, strata):
    """A group of one row has no within-group distances: the test then asks only whether that
    one point is unusual among the others; say so (with two groups and no strata its p-value
    is at least 1/N: N relabellings, one per point left alone)."""
    one = [g for g, m in zip(lab.groups, lab.sizes) if m == 1]
    if one:
        N = int(lab.sizes.sum())
        bound = (f" (its p-value is at least 1/{N})" if strata is None and lab.k == 2 else "")
        warn(f"`energy_test`: group(s) {one[:5]} hold a single row: a one-row sample has no "
             "within-sample distances, so for it the test only asks whether that point is "
             f"unusual among the others{bound}, not whether two distributions differ.",
             UserWarning)


class _EnergyStatisticU(_EnergyStatistic):
    """The k-sample energy statistic with U-statistic within-group means (over distinct pairs;
    rho(x, x) = 0, so the diagonal group sums are sums over distinct pairs already)."""

    estimator = "U"

    def __init__(self, layout):
        super().__init__(layout)
        s = layout.sizes
        self.within = s * np.maximum(s - 1.0, 1.0)  # cells of one point take no part (checked)

    def energy_distances(self, M):
        """``E_U`` of every pair of cells in a stratum, shape (B, pairs), from sums ``M`` (B, K, K)."""
        L = self.layout
        g = M[:, L.iu, L.ju] / (L.sizes[L.iu] * L.sizes[L.ju])
        d = np.diagonal(M, axis1=1, axis2=2) / self.within
        return 2.0 * g - d[:, L.iu] - d[:, L.ju]

    def __call__(self, Ms):
        return self.energy_distances(Ms[0]) @ self.w

    def tolerance(self, obs_Ms):
        """Rounding error of the statistic: each sum's allowed error through the formula."""
        L = self.layout
        ni, nj = L.sizes[L.iu], L.sizes[L.ju]
        sens = float(np.sum(self.w * (2.0 / (ni * nj) + 1.0 / self.within[L.iu]
                                      + 1.0 / self.within[L.ju])))
        return _permutation.sum_error(obs_Ms[0]) * sens


def _energy_statistic(layout, estimator, stratified):
    """The statistic of ``estimator`` ('V' or 'U'; checked here) on the cells of ``layout``."""
    if estimator not in ("V", "U"):
        raise ValueError(f"`estimator` must be 'V' or 'U'; got {estimator!r}.")
    if estimator == "V":
        return _EnergyStatistic(layout)
    cells = np.union1d(layout.iu, layout.ju)
    small = cells[layout.sizes[cells] < 2]
    if small.size:
        where = " within a stratum" if stratified else ""
        raise ValueError(f"`estimator='U'` needs at least 2 points in every group{where} (it "
                         f"averages over distinct pairs); got {small.size} group(s){where} of "
                         f"{int(layout.sizes[small[0]])} point.")
    return _EnergyStatisticU(layout)


def _energy_test_asymptotic(st, unit, stat):
    """:func:`energy_test` with the moment-matched gamma p-value (:mod:`energystats._core._asymptotic`):
    the observed sums, and the pooled sample's U distance variance by a streamed pass."""
    from .._core import _pair_sums

    engine = st.engine(unit.k, unit.layout.sizes.astype(np.intp))
    observed, null, _, obs_M = _permutation.permutation_null(
        [engine], unit.cells, [unit.identity], stat, n_resamples=0, rng=st.gen, exact=False)
    from .._core._engine import Scale

    VU, sx, _ = _pair_sums._sums(st.X, st.X, st.metric, st.n_threads)
    # obs_M is in the units of st.X itself (the engine's working units)
    dvar_u = _pooled_dvar_u(VU, sx, Scale(), unit.layout.n, st.metric)
    return _energy_gamma_finish(st, unit, stat, observed, null, obs_M, engine.name, dvar_u)
