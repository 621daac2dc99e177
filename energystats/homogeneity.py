r"""Permutation tests of equal distributions: the k-sample energy test and DISCO.

Both tests take the same three call forms:

* several samples: ``energy_test(a, b, c)``;
* data and labels: ``energy_test(X, labels=y)``;
* a DataFrame and its grouping column(s): ``energy_test(df, by="group")``
  (``columns`` default to every column except ``by``; a non-numeric one is
  an error unless ``numeric_only=True`` leaves it out).

The null distribution comes from random relabellings that keep the group
sizes (the p-value rule of the docs' conventions page; Phipson and Smyth 2010),
or from all distinct relabellings when there are no more of them than
``n_resamples`` (an exact test).  The relabellings are evaluated by
a batched engine (:mod:`energystats._permutation`), never by calling the
statistic once per relabelling from Python.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _permutation
from ._metrics import resolve_metric
from ._permutation import DEFAULT_MEMORY_BUDGET
from ._validation import (Labels, align_labels, as_data, as_labels, as_square_matrix, check_int,
                          check_n_threads, seeded_rng, short_list)
from . import _engine
from .decomposition import dispersion_from_sums
from .distance import nonnegative
from .frames import grouped_data, match_columns, select_frame

__all__ = ["energy_test", "EnergyTestResult", "disco", "DiscoResult"]


# -- results -----------------------------------------------------------------

def _fmt_p(p):
    return "None" if p is None else f"{p:.4g}"


def _fmt_se(se):
    return "" if se is None or not np.all(np.asarray(se) > 0) else f" (MC s.e. {np.max(se):.2g})"


def _fmt_seed(seed):
    return "" if seed is None else f", seed={seed}"


@dataclass(frozen=True)
class EnergyTestResult:
    r"""Result of :func:`energy_test`.

    Attributes
    ----------
    statistic : float
        :math:`\sum_{i<j} \frac{n_i n_j}{n_i + n_j} E(C_i, C_j)` (R ``energy``'s
        ``eqdist.etest`` statistic; V-statistics, no square root).
    pvalue : float or None
        Permutation p-value; ``None`` when ``n_resamples=0``.
    null_distribution : ndarray, shape (n_resamples,)
        The statistic on each relabelling (all of them when ``exact``).
    n_resamples : int
        Number of relabellings in ``null_distribution``.
    exact : bool
        True when every distinct relabelling was enumerated (exact p-value).
    sizes : ndarray of int, shape (k,)
    groups : list
        Group names, in the order of ``sizes``.
    energy_distances : ndarray, shape (k, k)
        The pairwise energy distances :math:`E(C_i, C_j)` of the observed groups.
    engine : str
        How the relabellings were evaluated: 'sorted' (1-D, O(n·k) each),
        'matrix' (n×n matrix and BLAS batches), 'blocked' (the same with the
        matrix recomputed in row blocks) or 'streamed' (one streamed
        reduction per relabelling).
    pvalue_se : float or None
        Monte Carlo standard error of ``pvalue``,
        :math:`\sqrt{p(1-p)/R}`; 0 for an exact p-value.
    seed : int or None
        Seed of the random relabellings: the one given as ``rng``, or the one
        drawn when ``rng=None`` (pass it back as ``rng=`` to repeat the run).
        None when ``rng`` was a Generator or no relabelling was drawn.
    columns : list or None
        The DataFrame columns used as data (None for array input).
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    n_resamples: int
    exact: bool
    sizes: np.ndarray
    groups: list
    energy_distances: np.ndarray = field(repr=False)
    engine: str = "matrix"
    pvalue_se: float | None = None
    seed: int | None = None
    columns: list | None = None

    def __repr__(self):
        return (f"EnergyTestResult(statistic={self.statistic:.6g}, pvalue={_fmt_p(self.pvalue)}"
                f"{_fmt_se(self.pvalue_se)}, n_resamples={self.n_resamples}, exact={self.exact}, "
                f"sizes={list(map(int, self.sizes))}, groups={short_list(self.groups)}"
                f"{_fmt_seed(self.seed)})")

    def to_frame(self):
        """The k×k energy distances :math:`E(C_i, C_j)` as a labelled DataFrame."""
        idx = pd.Index(self.groups, name="group")
        return pd.DataFrame(self.energy_distances, index=idx, columns=idx.rename(None))


@dataclass(frozen=True)
class DiscoResult:
    r"""Result of :func:`disco`: a distance-components (ANOVA-like) table.

    With one factor the fields are scalars; with several factors (``by`` a
    list) ``statistic``, ``pvalue``, ``between`` and ``df_between`` hold one
    entry per factor, in the order of ``factors``.

    Attributes
    ----------
    statistic : float or ndarray
        The DISCO ratio :math:`F = \frac{S/(k-1)}{W/(n-k)}` of each factor.
    pvalue : float, ndarray or None
        Permutation p-value of ``F``; ``None`` when ``n_resamples=0``.
    between : float or ndarray
        Between-group component :math:`S` of each factor.
    within : float
        Within component: :math:`W` for one factor; :math:`T - \sum_f S_f`
        with several factors (R ``energy``'s convention).
    total : float
        Total dispersion :math:`T = \frac{n}{2} g(X, X)`.
    df_between : int or ndarray
        :math:`k_f - 1` per factor.
    df_within : int
        :math:`n - 1 - \sum_f (k_f - 1)`.
    df_total : int
        :math:`n - 1`.
    factors : list
        Factor names (``['Between']`` for a single unnamed factor).
    null_distribution : ndarray, shape (n_resamples,) or (n_resamples, n_factors)
    n_resamples : int
    exact : bool
    sizes : list of ndarray
        Group sizes of each factor.
    groups : list of list
        Group names of each factor.
    engine : str
    pvalue_se : float, ndarray or None
        Monte Carlo standard error of ``pvalue`` (0 when exact).
    seed : int or None
        Seed of the random relabellings (see :class:`EnergyTestResult`).
    columns : list or None
        The DataFrame columns used as data (None for array input).
    """

    statistic: float | np.ndarray
    pvalue: float | np.ndarray | None
    between: float | np.ndarray
    within: float
    total: float
    df_between: int | np.ndarray
    df_within: int
    df_total: int
    factors: list
    null_distribution: np.ndarray = field(repr=False)
    n_resamples: int = 0
    exact: bool = False
    sizes: list = field(default_factory=list, repr=False)
    groups: list = field(default_factory=list, repr=False)
    engine: str = "matrix"
    pvalue_se: float | np.ndarray | None = None
    seed: int | None = None
    columns: list | None = None

    def to_frame(self):
        """ANOVA-style table: one row per factor, then Within and Total;
        columns ``df``, ``dispersion``, ``F``, ``pvalue`` and ``pvalue_se``."""
        S = np.atleast_1d(self.between).astype(float)
        F = np.atleast_1d(self.statistic).astype(float)
        dfb = np.atleast_1d(self.df_between).astype(int)
        if self.pvalue is None:
            p = se = np.full(S.size, np.nan)
        else:
            p = np.atleast_1d(self.pvalue).astype(float)
            se = np.atleast_1d(self.pvalue_se).astype(float) * np.ones(S.size)
        nan = [np.nan, np.nan]
        return pd.DataFrame(
            {"df": list(dfb) + [self.df_within, self.df_total],
             "dispersion": list(S) + [self.within, self.total],
             "F": list(F) + nan,
             "pvalue": list(p) + nan,
             "pvalue_se": list(se) + nan},
            index=pd.Index(list(self.factors) + ["Within", "Total"], name="component"),
        )

    def __repr__(self):
        how = ("no permutations" if self.n_resamples == 0 else
               f"exact, {self.n_resamples} relabellings" if self.exact else
               f"{self.n_resamples} random relabellings")
        if self.seed is not None and self.n_resamples and not self.exact:
            how += f", seed {self.seed}"
        table = self.to_frame().to_string(float_format=lambda v: f"{v:.6g}", na_rep="")
        return f"DISCO (distance components; F test, {how})\n{table}"


# -- input handling ----------------------------------------------------------

def _check_budget(memory_budget):
    if (not isinstance(memory_budget, numbers.Real) or isinstance(memory_budget, bool)
            or not memory_budget > 0):
        raise ValueError(f"`memory_budget` must be a positive number of bytes; got {memory_budget!r}.")
    return float(memory_budget)


def _check_method(method):
    if method not in ("auto", "sorted", "pairwise", "streamed"):
        raise ValueError(f"`method` must be 'auto', 'sorted', 'pairwise' or 'streamed'; got {method!r}.")
    return method


def _check_exact(exact):
    if exact not in (None, True, False):
        raise ValueError(f"`exact` must be None, True or False; got {exact!r}.")
    return exact


def _samples_data(samples, name):
    """Stack several samples into one array with group codes 0..k-1 (and the columns used)."""
    samples, cols = match_columns(samples, [f"samples[{i}]" for i in range(len(samples))])
    arrays = []
    for i, s in enumerate(samples):
        arr, _ = as_data(s, f"samples[{i}]")
        arrays.append(arr)
    d = {a.shape[1] for a in arrays}
    if len(d) > 1:
        dims = [a.shape[1] for a in arrays]
        raise ValueError(f"all samples must have the same number of features; got {dims}.")
    dtype = np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64
    X = np.ascontiguousarray(np.concatenate([a.astype(dtype, copy=False) for a in arrays]))
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.intp)
    codes = np.repeat(np.arange(len(arrays), dtype=np.intp), sizes)
    return X, Labels(codes, list(range(len(arrays))), sizes), cols


def _factor_labels(labels, n):
    """A list of :class:`Labels`, one per factor, from a DataFrame of factors."""
    return [as_labels(labels[c], n, f"labels[{c!r}]") for c in labels.columns], list(labels.columns)


def _grouped_input(samples, labels, by, columns, dropna, numeric_only, fname, allow_factors=False):
    """Resolve the call forms into (X, [Labels per factor], factor names, columns used)."""
    if not samples:
        raise TypeError(f"`{fname}` needs data: several samples, `X, labels=` or `df, by=`.")
    if labels is not None or by is not None:
        if len(samples) != 1:
            raise TypeError(f"with `labels=` or `by=`, pass the data as one argument; got {len(samples)}.")
        X = samples[0]
        if allow_factors and isinstance(labels, pd.DataFrame) and by is None:
            if labels.shape[1] == 1:
                labels = labels.iloc[:, 0]
            else:
                X, cols, _ = select_frame(X, columns, "X", numeric_only)
                labels = align_labels(X, labels)
                if dropna:
                    raise TypeError("`dropna=True` is not available with a DataFrame of factors as "
                                    "`labels`; drop the rows first, or use `df, by=[...]`.")
                arr, _ = as_data(X, "X")
                labs, names = _factor_labels(labels, arr.shape[0])
                return arr, labs, names, cols
        multi = isinstance(by, (list, tuple)) and len(by) > 1
        if multi and not allow_factors:
            raise ValueError(f"`{fname}` takes a single grouping column; got `by={list(by)!r}` "
                             "(use `disco` for several factors).")
        if isinstance(by, (list, tuple)) and len(by) == 1:
            by = by[0]
        data = grouped_data(X, labels, by=by, columns=columns, dropna=dropna,
                            numeric_only=numeric_only)
        if multi:
            # grouped_data has encoded each row's tuple of factor levels; split it.
            names = list(by)
            labs = []
            for f, col in enumerate(names):
                levels = np.array([g[f] for g in data.labels.groups], dtype=object)
                labs.append(as_labels(levels[data.labels.codes], data.X.shape[0], f"by[{col!r}]"))
            return data.X, labs, names, data.columns
        name = by if by is not None else (labels.name if isinstance(labels, pd.Series) else None)
        return data.X, [data.labels], [name], data.columns
    if columns is not None:
        raise TypeError("`columns` needs a DataFrame with `by=`.")
    if len(samples) < 2:
        raise ValueError(f"`{fname}` needs at least two samples (or `X, labels=` / `df, by=`); "
                         "got 1 sample.")
    X, lab, cols = _samples_data(samples, "samples")
    return X, [lab], [None], cols


def _check_groups(labs, names, fname):
    n = int(labs[0].sizes.sum())
    for lab, name in zip(labs, names):
        what = "groups" if name is None else f"groups of {name!r}"
        if lab.k < 2:
            raise ValueError(f"need at least 2 {what}; got {lab.k} ({short_list(lab.groups)}).")
    if fname == "disco":
        df_within = n - 1 - sum(lab.k - 1 for lab in labs)
        if df_within < 1:
            raise ValueError(f"`disco` needs within-group degrees of freedom n - 1 - sum(k_f - 1) "
                             f">= 1 for its F ratio; got {df_within} (n={n}, groups per factor "
                             f"{[lab.k for lab in labs]}): too many groups of one point.")


def _prepare(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
             n_resamples, rng, method, memory_budget, n_threads, exact, fname, allow_factors=False):
    met = resolve_metric(metric, exponent, sigma)
    R = check_int(n_resamples, "n_resamples", 0)
    gen, seed = seeded_rng(rng)
    _check_method(method)
    budget = _check_budget(memory_budget)
    nt = check_n_threads(n_threads)
    _check_exact(exact)
    X, labs, names, cols = _grouped_input(samples, labels, by, columns, dropna, numeric_only,
                                          fname, allow_factors)
    if met.kind == "precomputed":
        if labels is None:
            raise TypeError("metric='precomputed' needs the n×n matrix as `X` and `labels=`.")
        X = as_square_matrix(X, "X")
    # working units: no squared distance can overflow or underflow; converted back at the end
    X, met, scale = _engine.normalise(met, X)
    _check_groups(labs, names, fname)
    # Cells: the combination of all factors' levels of each row.
    if len(labs) == 1:
        cell_codes = labs[0].codes
        maps = [np.arange(labs[0].k, dtype=np.intp)]
    else:
        combo = np.stack([lab.codes for lab in labs], axis=1)
        uniq, cell_codes = np.unique(combo, axis=0, return_inverse=True)
        cell_codes = np.ascontiguousarray(cell_codes.ravel(), dtype=np.intp)
        maps = [np.ascontiguousarray(uniq[:, f], dtype=np.intp) for f in range(len(labs))]
    share = len(labs)  # the factors' batches run side by side: each gets its share of the budget
    engines = [_permutation.build_engine(X, labs[0].k, labs[0].sizes, met, nt, method=method,
                                         memory_budget=budget, share=share)]
    for lab in labs[1:]:
        # the n×n matrix, when there is one, is shared between factors
        engines.append(_permutation.build_engine(X, lab.k, lab.sizes, met, nt, method=method,
                                                 memory_budget=budget, share=share,
                                                 D=getattr(engines[0], "D", None)))
    return X, labs, names, cell_codes, maps, engines, R, gen, seed, cols, scale


def _energy_statistic(sizes):
    """Vectorised eqdist statistic from group sums ``M`` (B, k, k)."""
    nn = np.asarray(sizes, dtype=np.float64)
    k = nn.size
    iu, ju = np.triu_indices(k, 1)
    w = (nn[iu] * nn[ju]) / (nn[iu] + nn[ju])
    outer = np.outer(nn, nn)

    def stat(Ms):
        g = Ms[0] / outer
        d = np.diagonal(g, axis1=1, axis2=2)
        E = 2.0 * g[:, iu, ju] - d[:, iu] - d[:, ju]
        return E @ w

    return stat


def _disco_statistic(labs):
    """Vectorised DISCO F for each factor from group sums (one list entry per factor)."""
    parts = []
    for lab in labs:
        nn = lab.sizes.astype(np.float64)
        n, k = nn.sum(), nn.size
        iu, ju = np.triu_indices(k, 1)
        parts.append((nn, n, k, iu, ju, np.outer(nn, nn)))

    def stat(Ms):
        cols = []
        for M, (nn, n, k, iu, ju, outer) in zip(Ms, parts):
            g = M / outer
            d = np.diagonal(g, axis1=1, axis2=2)
            W = d @ (nn / 2.0)
            E = 2.0 * g[:, iu, ju] - d[:, iu] - d[:, ju]
            S = E @ (outer[iu, ju] / (2.0 * n))
            with np.errstate(divide="ignore", invalid="ignore"):
                F = (S / (k - 1)) / (W / (n - k))
            cols.append(F)
        return cols[0] if len(cols) == 1 else np.stack(cols, axis=1)

    return stat


# -- public functions --------------------------------------------------------

def energy_test(*samples, labels=None, by=None, columns=None, dropna=False, numeric_only=False,
                n_resamples=999, metric="energy", exponent=1.0, sigma=1.0, rng=None, exact=None, method="auto",
                memory_budget=DEFAULT_MEMORY_BUDGET, progress=False, n_threads=None):
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
        except ``by``).
    dropna : bool, default False
        Drop rows with missing values in ``by`` or the used columns instead of
        raising an error that counts them.
    numeric_only : bool, default False
        With a DataFrame ``X`` and ``columns=None``: leave out wholly
        non-numeric columns (text, categorical, datetime) instead of raising
        an error that names them; ``columns`` in the result records what was
        used.  A column of numbers with stray text cells is always an error
        naming the row and the value.
    n_resamples : int, default 999
        Number of random relabellings R; ``0`` returns the statistic only
        (``pvalue=None``).
    metric : {'energy', 'laplacian', 'gaussian', 'precomputed'} or callable
        The semimetric rho (as in :func:`energystats.pairwise`).
    exponent : float, default 1.0
        ``metric='energy'``: rho = ‖x − y‖^exponent, 0 < exponent ≤ 2.
    sigma : float, default 1.0
        Bandwidth of 'laplacian' and 'gaussian'.
    rng : int, numpy.random.Generator or None
        Source of the relabellings.  The same seed gives the same relabellings
        (hence the same p-value) on every platform and thread count.  With
        ``None`` a seed is drawn and recorded in the result's ``seed``.
    exact : bool or None, default None
        ``None``: enumerate all distinct relabellings when there are at most
        ``n_resamples`` of them; ``True``: always enumerate (error above
        10⁶); ``False``: always draw at random.
    method : {'auto', 'sorted', 'pairwise', 'streamed'}, default 'auto'
        How relabellings are evaluated.  'auto' uses 'sorted' for 1-D data
        with ``metric='energy', exponent=1`` and 'pairwise' otherwise.
        'pairwise' keeps the n×n matrix in memory when it fits
        ``memory_budget`` and works in row blocks otherwise (see Notes);
        'streamed' evaluates each relabelling by a streamed reduction.
    memory_budget : float, default 512 MiB
        Bytes allowed for the working memory: the n×n matrix (or a row block
        of it) plus a batch of relabellings with their k×k sums.  Lowered to
        80 % of the memory available when that is less; a
        :class:`MemoryError` saying how much is needed is raised before any
        work when not even one relabelling fits.  A callable ``metric``
        always forms the n×n matrix.
    progress : bool or file-like, default False
        Show progress with the estimated time left on stderr (or on the given
        stream): redrawn in place on a terminal, a line every 10 s otherwise.
    n_threads : int or None
        Threads for the compiled kernels and BLAS (None: all available).

    Returns
    -------
    EnergyTestResult
        ``statistic``, ``pvalue``, ``null_distribution``, ``n_resamples``,
        ``exact``, ``sizes``, ``groups``, ``energy_distances``, ``engine``,
        ``pvalue_se``, ``seed``, ``columns``.

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
    :math:`(1 + \#\{\mathcal{E}^* \ge \mathcal{E}\}) / (R + 1)`, where
    :math:`\ge` tolerates a relative rounding error of 100·eps (as SciPy);
    R's ``eqdist.etest`` counts strictly greater values instead.  When all N
    distinct relabellings are enumerated, the p-value is the exact
    :math:`\#\{\mathcal{E}^* \ge \mathcal{E}\} / N`.

    Evaluation: the pairwise matrix is computed once (compiled, all threads);
    batches of relabellings are then evaluated through one BLAS product
    :math:`L^\top D` per batch (``L`` the one-hot group matrices), sized to
    ``memory_budget``.  When the n×n matrix does not fit the budget, it is
    recomputed in row blocks for every batch (engine 'blocked': one extra
    O(n²·d) pass per batch, memory one row block plus the batch); if not even
    that fits, each relabelling is evaluated by a streamed compiled reduction
    (engine 'streamed': O(n·d) memory, O(n²·d) time per relabelling — slow
    but never out of memory).  In 1-D with :math:`\rho = |x - y|`, the pooled sample is sorted
    once and each relabelling costs O(n·k): O(n log n + R·n) in all.

    References
    ----------
    .. [1] Székely, G. J. and Rizzo, M. L. (2004). Testing for equal
       distributions in high dimension. InterStat, November (5).
    .. [2] Rizzo, M. L. and Székely, G. J. (2010). DISCO analysis: A
       nonparametric extension of analysis of variance. Ann. Appl. Stat.
       4(2), 1034–1055.

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
    """
    X, labs, names, cells, maps, engines, R, gen, seed, cols, scale = _prepare(
        samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma, n_resamples,
        rng, method, memory_budget, n_threads, exact, "energy_test")
    lab = labs[0]
    observed, null, is_exact, obs_M = _permutation.permutation_null(
        engines, cells, maps, _energy_statistic(lab.sizes), n_resamples=R, rng=gen, exact=exact,
        progress=progress)
    M = obs_M[0]
    nn = lab.sizes.astype(np.float64)
    g = M / np.outer(nn, nn)
    gd = np.diag(g)
    E = 2.0 * g - gd[:, None] - gd[None, :]
    if resolve_metric(metric, exponent, sigma).kind == "builtin":  # negative type: E >= 0 (rounding)
        E = nonnegative(E, 2.0 * np.abs(g) + np.abs(gd[:, None]) + np.abs(gd[None, :]))
    np.fill_diagonal(E, 0.0)
    pvalue = None
    if null.shape[0] > 0:
        pvalue = float(_permutation.pvalue_from_null(observed, null, is_exact))
    R_used = int(null.shape[0])
    return EnergyTestResult(float(scale.apply(observed)), pvalue, scale.apply(null), R_used,
                            bool(is_exact), lab.sizes.copy(), list(lab.groups), scale.apply(E),
                            engines[0].name,
                            pvalue_se=_permutation.pvalue_se(pvalue, R_used, is_exact),
                            seed=seed if R_used and not is_exact else None, columns=cols)


def disco(*samples, labels=None, by=None, columns=None, dropna=False, numeric_only=False,
          n_resamples=999, metric="energy", exponent=1.0, sigma=1.0, rng=None, exact=None, method="auto",
          memory_budget=DEFAULT_MEMORY_BUDGET, progress=False, n_threads=None):
    r"""DISCO: distance-components analysis of k ≥ 2 groups (permutation F test).

    Parameters
    ----------
    *samples, labels, columns, dropna, numeric_only, n_resamples, metric, exponent, sigma, rng, exact, method, memory_budget, progress, n_threads
        As in :func:`energy_test`.  ``labels`` may also be a DataFrame with
        one column per factor.
    by : str or list of str, optional
        With a DataFrame ``X``: the grouping column, or several columns for a
        multi-factor analysis.

    Returns
    -------
    DiscoResult
        ``statistic`` (F), ``pvalue``, ``between`` (S), ``within``,
        ``total`` (T), degrees of freedom; ``.to_frame()`` is the table and
        the result prints as one.

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

    Several factors follow R ``energy``'s ``disco(x, factors)``: each
    factor gets its one-way between component :math:`S_f`, its one-way F
    (as if that factor alone grouped the data, with :math:`W_f = T - S_f`
    and :math:`n - k_f` degrees of freedom) and its permutation p-value; the
    Within row is :math:`T - \sum_f S_f` with
    :math:`n - 1 - \sum_f (k_f - 1)` degrees of freedom.  One random
    permutation of the rows is applied to all factors at once (R permutes
    each factor separately); each factor's p-value is valid on its own.

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
                df  dispersion        F  pvalue  pvalue_se
    component
    Between      2     119.237  124.597   0.005      0.005
    Within     147      70.338      NaN     NaN        NaN
    Total      149     189.576      NaN     NaN        NaN
    >>> round(res.between + res.within - res.total, 9)
    0.0
    """
    X, labs, names, cells, maps, engines, R, gen, seed, cols, scale = _prepare(
        samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma, n_resamples,
        rng, method, memory_budget, n_threads, exact, "disco", allow_factors=True)
    observed, null, is_exact, obs_M = _permutation.permutation_null(
        engines, cells, maps, _disco_statistic(labs), n_resamples=R, rng=gen, exact=exact,
        progress=progress)
    parts = [dispersion_from_sums(M, lab.sizes, lab.groups) for M, lab in zip(obs_M, labs)]
    n = int(labs[0].sizes.sum())
    T = parts[0].T
    S = np.array([p.S for p in parts])
    within = parts[0].W if len(labs) == 1 else T - float(S.sum())
    T, S, within = scale.apply(T), scale.apply(S), scale.apply(within)  # F is scale-free
    dfb = np.array([lab.k - 1 for lab in labs])
    F = np.atleast_1d(np.asarray(observed, dtype=float))
    pvalue = None
    if null.shape[0] > 0:
        pvalue = np.atleast_1d(_permutation.pvalue_from_null(observed, null, is_exact, what="F"))
    single = len(labs) == 1
    R_used = int(null.shape[0])
    se = _permutation.pvalue_se(pvalue, R_used, is_exact)
    factors = ["Between"] if single else [str(nm) for nm in names]
    return DiscoResult(
        statistic=float(F[0]) if single else F,
        pvalue=(None if pvalue is None else float(pvalue[0]) if single else pvalue.astype(float)),
        between=float(S[0]) if single else S,
        within=float(within), total=float(T),
        df_between=int(dfb[0]) if single else dfb,
        df_within=int(n - 1 - dfb.sum()), df_total=n - 1,
        factors=factors, null_distribution=null, n_resamples=int(null.shape[0]),
        exact=bool(is_exact), sizes=[lab.sizes.copy() for lab in labs],
        groups=[list(lab.groups) for lab in labs], engine=engines[0].name,
        pvalue_se=(None if se is None else float(np.atleast_1d(se)[0]) if single else se),
        seed=seed if R_used and not is_exact else None, columns=cols)
