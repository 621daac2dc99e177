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

import itertools
import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import _asymptotic, _permutation, _sequential, backends
from ._metrics import resolve_metric
from ._permutation import DEFAULT_MEMORY_BUDGET
from ._validation import (Labels, align_labels, as_data, as_labels, as_square_matrix,
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
        Permutation p-value (or, with ``pvalue_method='asymptotic'``, the
        gamma approximation's); ``None`` when ``n_resamples=0``.
    null_distribution : ndarray, shape (n_resamples,)
        The statistic on each relabelling (all of them when ``exact``; none
        with 'asymptotic').
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
        'matrix' (n×n matrix and BLAS batches), 'tiled' (the matrix
        recomputed in tiles for every batch), 'blocked' (recomputed in row
        blocks), 'streamed' (one streamed reduction per relabelling) or
        'dask' (tiles as Dask tasks).
    pvalue_se : float or None
        Monte Carlo standard error of ``pvalue``,
        :math:`\sqrt{p(1-p)/R}`; 0 for an exact p-value.
    seed : int or None
        Seed of the random relabellings: the one given as ``rng``, or the one
        drawn when ``rng=None`` (pass it back as ``rng=`` to repeat the run).
        None when ``rng`` was a Generator or no relabelling was drawn.
    columns : list or None
        The DataFrame columns used as data (None for array input).
    strata : list or None
        The strata within which the rows were relabelled (their names), or
        None; with strata the statistic is summed over strata (see Notes of
        :func:`energy_test`).
    strata_name : str or None
        The strata column, when given by name.
    pvalue_method : str
        'full', 'sequential', 'decision' or 'asymptotic' (see
        :func:`energy_test`); with 'sequential' and 'decision'
        ``n_resamples`` counts the relabellings used before the stop, and
        ``pvalue_se`` is None except for 'full'.
    decision : str or None
        With ``pvalue_method='decision'``: 'p <= alpha', 'p > alpha', or None
        when ``n_resamples`` relabellings did not settle it.
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
    strata: list | None = None
    strata_name: str | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def __repr__(self):
        st = "" if self.strata is None else f", strata={len(self.strata)}"
        seq = "" if self.pvalue_method == "full" else f", pvalue_method={self.pvalue_method!r}"
        if self.pvalue_method == "decision":
            seq += f", decision={self.decision!r}"
        return (f"EnergyTestResult(statistic={self.statistic:.6g}, pvalue={_fmt_p(self.pvalue)}"
                f"{_fmt_se(self.pvalue_se)}, n_resamples={self.n_resamples}, exact={self.exact}, "
                f"sizes={list(map(int, self.sizes))}, groups={short_list(self.groups)}{st}"
                f"{_fmt_seed(self.seed)}{seq})")

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
        With several factors and 'sequential' or 'decision', each factor's
        column holds its own relabellings and then NaN (its rule stopped).
    n_resamples : int or ndarray
        Relabellings used; one per factor (int ndarray) with several factors
        and 'sequential' or 'decision'.
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
    test : str
        What each p-value tests: 'one-way' (one factor), 'stratified' (one
        factor, relabelled within strata), 'conditional' (several factors,
        each relabelled within the cells of the others, the default) or
        'marginal' (several factors, each as if alone: R ``energy``'s table).
    strata : list or None
        Names of the strata (``strata=``), or None.
    strata_name : str or None
        The strata column, when given by name.
    pvalue_method : str
        'full', 'sequential' or 'decision' (see :func:`disco`); with the last
        two ``n_resamples`` counts the relabellings used and ``pvalue_se`` is
        None.
    decision : str, list or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled);
        a list of them, one per factor, with several factors.
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
    test: str = "one-way"
    strata: list | None = None
    strata_name: str | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """ANOVA-style table: one row per factor, then Within and Total;
        columns ``df``, ``dispersion``, ``F``, ``pvalue`` and ``pvalue_se``.

        With several factors or with strata, a last column ``tests`` says what each row
        tests and how its df and F are formed (see :meth:`row_tests`); a one-way table
        has none (Between: the groups, df k - 1, F = (S/(k-1)) / (W/(n-k)); Within: W,
        df n - k; Total: T = S + W, df n - 1).
        """
        S = np.atleast_1d(self.between).astype(float)
        F = np.atleast_1d(self.statistic).astype(float)
        dfb = np.atleast_1d(self.df_between).astype(int)
        if self.pvalue is None:
            p = se = np.full(S.size, np.nan)
        else:
            p = np.atleast_1d(self.pvalue).astype(float)
            se = np.atleast_1d(self.pvalue_se).astype(float) * np.ones(S.size)
        nan = [np.nan, np.nan]
        columns = {"df": list(dfb) + [self.df_within, self.df_total],
                   "dispersion": list(S) + [self.within, self.total],
                   "F": list(F) + nan,
                   "pvalue": list(p) + nan,
                   "pvalue_se": list(se) + nan}
        tests = self.row_tests()
        if tests is not None:
            columns["tests"] = tests
        return pd.DataFrame(columns,
                            index=pd.Index(list(self.factors) + ["Within", "Total"], name="component"))

    def row_tests(self):
        """What each row of :meth:`to_frame` tests and how its df and F are formed: a list of
        texts (factors, Within, Total), or None for a one-way table (one factor, no strata).

        * ``'conditional'``: a factor ``a`` given ``b`` is compared within the cells of
          ``b``, so its row tests ``a + a:b`` (the factor and its interaction with the
          others): df = cells of all factors - cells of the others; F divides by the
          Within row (the cells of all factors).
        * ``'marginal'`` (``conditional=False``, R ``energy``'s ``disco`` table): each
          factor alone, df = k_f - 1, F over its own W = Total - S_f with n - k_f df;
          Within = Total - sum of S_f, which no F uses.
        * ``'stratified'``: the groups compared within strata: df = cells - strata.

        Examples
        --------
        >>> import numpy as np, pandas as pd, energystats as es
        >>> df = pd.DataFrame({"y": np.arange(24.0) % 7, "a": np.repeat([0, 1, 2], 8),
        ...                    "b": np.tile([0, 1], 12)})
        >>> res = es.disco(df, by=["a", "b"], n_resamples=0)
        >>> for row, text in zip(res.to_frame().index, res.row_tests()):
        ...     print(f"{row}: {text}")
        a: a given b (a + a:b): the groups of a compared within the 2 cells of b; df = 6 cells - 2; F = (S/4) / (Within/18)
        b: b given a (b + a:b): the groups of b compared within the 3 cells of a; df = 6 cells - 3; F = (S/3) / (Within/18)
        Within: within the 6 cells of a, b: df = 24 - 6; the denominator of every F
        Total: df = 24 - 1; the rows do not add up to Total
        """
        if self.test == "one-way":
            return None
        n = int(self.df_total) + 1
        dfb = [int(v) for v in np.atleast_1d(self.df_between)]
        dfw = int(self.df_within)
        cells = n - dfw
        names = [str(f) for f in self.factors]
        strata = None
        if self.strata is not None:
            strata = f"the strata of {self.strata_name!r}" if self.strata_name is not None else "the strata"
        if self.test == "stratified":
            m = cells - dfb[0]
            return [f"the groups compared within {strata.replace('the strata', f'the {m} strata', 1)}: "
                    f"df = {cells} cells - {m} strata; F = (S/{dfb[0]}) / (Within/{dfw})",
                    f"within the {cells} cells (groups within strata): df = {n} - {cells}; the "
                    "denominator of F",
                    f"df = {n} - 1; Total = the strata's between component + Between + Within"]
        if self.test == "marginal":
            within = "Total - " + " - ".join(f"S_{f}" for f in names)
            return ([f"{f} alone (marginal, R energy's disco; conditional=False): df = {d + 1} levels - 1; "
                     f"F = (S/{d}) / ((Total - S)/{n - d - 1})" for f, d in zip(names, dfb)]
                    + [f"{within}: df = {n} - 1 - {' - '.join(map(str, dfb))}; no F uses it",
                       f"df = {n} - 1"])
        rows = []
        for f, d in zip(names, dfb):
            others = [o for o in names if o != f]
            given = ", ".join(others) + ("" if strata is None else f" and {strata}")
            if len(others) < 3:  # the factor and its interactions with every set of the others
                sets = [c for r in range(1, len(others) + 1) for c in itertools.combinations(others, r)]
                terms = " + ".join([f] + [":".join(o for o in names if o == f or o in c) for c in sets])
            else:
                terms = f"{f} + its interactions with {', '.join(others)}"
            if strata is not None:
                terms += ", within strata"
            m = cells - d
            rows.append(f"{f} given {given} ({terms}): the groups of {f} compared within the {m} cells "
                        f"of {given}; df = {cells} cells - {m}; F = (S/{d}) / (Within/{dfw})")
        everything = ", ".join(names) + ("" if strata is None else f" and {strata}")
        return rows + [f"within the {cells} cells of {everything}: df = {n} - {cells}; the "
                       "denominator of every F",
                       f"df = {n} - 1; the rows do not add up to Total"]

    def __repr__(self):
        counts = np.atleast_1d(self.n_resamples)  # one per factor when they stopped one by one
        used = _sequential.used_text(counts)
        how = ("no permutations" if not counts.any() else
               f"exact, {used} relabellings" if self.exact else
               f"{used} random relabellings" + (" (per factor)" if counts.size > 1 else ""))
        if self.seed is not None and counts.any() and not self.exact:
            how += f", seed {self.seed}"
        if self.pvalue_method == "sequential":
            how += ", stopped sequentially (Besag & Clifford)"
        elif self.pvalue_method == "decision":
            how += (f", decision: {self.decision}" if isinstance(self.decision, (str, type(None))) else
                    ", decisions: " + "; ".join(map(str, self.decision)))
        what = {"one-way": "",
                "stratified": "\nthe factor's groups compared within each stratum (relabelled within strata)",
                "conditional": "\neach factor tested given the others (relabelled within the cells of "
                               "the other factors); the rows are not additive; conditional=False gives "
                               "R energy's table",
                "marginal": "\neach factor tested alone (marginal tests, conditional=False: R energy's "
                            "disco table)"}[self.test]
        if self.strata is not None:
            nm = f" of {self.strata_name!r}" if self.strata_name is not None else ""
            what += f"\nrelabelled within {len(self.strata)} strata{nm}"
        frame = self.to_frame()
        notes = ""
        if "tests" in frame.columns:  # one line per row under the table (too wide as a column)
            notes = "".join(f"\n  {row}: {text}" for row, text in zip(frame.index, frame.pop("tests")))
            notes = "\nrows:" + notes
        table = frame.to_string(float_format=lambda v: f"{v:.6g}", na_rep="")
        return f"DISCO (distance components; F test, {how}){what}\n{table}{notes}"


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


def _strata_input(samples, labels, by, columns, dropna, numeric_only, fname, allow_factors, strata):
    """The call forms with ``strata=``: (X, [Labels per factor], names, columns, strata Labels or
    None, strata name)."""
    if strata is None:
        return (*_grouped_input(samples, labels, by, columns, dropna, numeric_only, fname,
                                allow_factors), None, None)
    if by is not None:
        X = samples[0] if len(samples) == 1 else None
        if not isinstance(X, pd.DataFrame):
            raise TypeError("`by=` needs the data as one DataFrame.")
        by_cols = list(by) if isinstance(by, (list, tuple)) else [by]
        if isinstance(strata, str):
            if strata not in X.columns:
                raise KeyError(f"`strata`: column {strata!r} not found in `X`; it has "
                               f"{short_list(X.columns)}.")
            if strata in by_cols:
                raise ValueError(f"`strata` {strata!r} is also a factor in `by`.")
            scol = strata
        else:
            scol = "__strata__"
            while scol in X.columns:
                scol += "_"
            values = align_labels(X, strata, "strata")
            if len(values) != len(X):
                raise ValueError(f"`strata` must have one entry per row of `X` ({len(X)}); "
                                 f"got {len(values)}.")
            X = X.assign(**{scol: np.asarray(values, dtype=object)})
        Xa, labs, names, cols = _grouped_input((X,), None, by_cols + [scol], columns, dropna,
                                               numeric_only, fname, True)
        return Xa, labs[:-1], names[:-1], cols, labs[-1], strata if isinstance(strata, str) else None
    if isinstance(strata, str):
        if labels is None or len(samples) != 1 or not isinstance(samples[0], pd.DataFrame):
            raise TypeError("`strata` as a column name needs a DataFrame `X` with `by=` or `labels=`.")
        X = samples[0]
        if strata not in X.columns:
            raise KeyError(f"`strata`: column {strata!r} not found in `X`; it has {short_list(X.columns)}.")
        values = X[strata]
        if columns is None:
            columns = [c for c in X.columns if c != strata]
        samples = (X,)
    else:
        values = strata
    if dropna:
        raise TypeError("`dropna=True` with `strata` needs the `df, by=` form (so that the same rows "
                        "are dropped from the data, the groups and the strata).")
    Xa, labs, names, cols = _grouped_input(samples, labels, by, columns, dropna, numeric_only, fname,
                                           allow_factors)
    if labels is not None and len(samples) == 1:
        values = align_labels(samples[0], values, "strata")
    n = Xa.shape[0]
    if isinstance(values, str) or np.ndim(values) != 1 or len(values) != n:
        raise ValueError(f"`strata` must be a column name or have one entry per row ({n}); got "
                         f"{type(values).__name__} of shape {np.shape(values)}.")
    return (Xa, labs, names, cols, as_labels(values, n, "strata"),
            strata if isinstance(strata, str) else None)


def _check_groups(labs, names, fname):
    n = int(labs[0].sizes.sum())
    for lab, name in zip(labs, names):
        what = "groups" if name is None else f"groups of {name!r}"
        if lab.k < 2:
            raise ValueError(f"need at least 2 {what}; got {lab.k} ({short_list(lab.groups)}).")


class _Setup:
    """Everything a test needs once the input is checked (see :func:`_prepare`)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def engine(self, k, sizes, share=1, D=None):
        return _permutation.build_engine(self.X, k, sizes, self.metric, self.n_threads,
                                         method=self.method, memory_budget=self.budget,
                                         share=share, D=D)


def _prepare(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
             n_resamples, rng, method, memory_budget, n_threads, exact, fname, allow_factors=False,
             strata=None):
    met = resolve_metric(metric, exponent, sigma)
    R = _sequential.check_resamples(n_resamples)
    gen, seed = seeded_rng(rng)
    _check_method(method)
    budget = _check_budget(memory_budget)
    nt = check_n_threads(n_threads)
    _check_exact(exact)
    X, labs, names, cols, strata_lab, strata_name = _strata_input(
        samples, labels, by, columns, dropna, numeric_only, fname, allow_factors, strata)
    if met.kind == "precomputed":
        if labels is None:
            raise TypeError("metric='precomputed' needs the n×n matrix as `X` and `labels=`.")
        X = as_square_matrix(X, "X")
    # working units: no squared distance can overflow or underflow; converted back at the end
    X, met, scale = _engine.normalise(met, X)
    _check_groups(labs, names, fname)
    return _Setup(X=X, labs=labs, names=names, cols=cols, strata=strata_lab, strata_name=strata_name,
                  metric=met, n_threads=nt, method=method, budget=budget, R=R, gen=gen, seed=seed,
                  scale=scale, exact=exact, user_metric=(metric, exponent, sigma), dask=False)


def _prepare_any(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                 n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname, strata,
                 backend, compute, allow_factors=False):
    """:func:`_prepare` or, for the Dask backend, :func:`_prepare_dask`."""
    if not backends.use_dask(backend, compute, samples + (labels, strata)):
        return _prepare(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                        n_resamples, rng, method, memory_budget, n_threads, exact, fname,
                        allow_factors=allow_factors, strata=strata)
    return _prepare_dask(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                         n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname,
                         strata, allow_factors)


def _prepare_dask(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                  n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname, strata,
                  allow_factors=False):
    """:func:`_prepare` for the Dask backend: the data stay lazy (:mod:`energystats.backends`)."""
    met = resolve_metric(metric, exponent, sigma)
    if met.kind != "builtin":
        raise TypeError(f"backend='dask' needs a built-in metric ('energy', 'laplacian', 'gaussian'); "
                        f"got {met.name!r}.")
    R = _sequential.check_resamples(n_resamples)
    gen, seed = seeded_rng(rng)
    _check_method(method)
    _check_budget(memory_budget)
    backends.check_dask_options(method, memory_budget, DEFAULT_MEMORY_BUDGET, progress)
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    _check_exact(exact)
    if not any(backends.is_dask(v) for v in samples + (labels, strata)):
        # in memory already: the threads backend's input layer (columns matched by name, labels
        # aligned on the index, dropna), then the arrays go to Dask
        X, labs, names, cols, strata_lab, _ = _strata_input(samples, labels, by, columns, dropna,
                                                           numeric_only, fname, allow_factors, strata)
        data = backends.as_dask_data(X, "X")
    else:
        data, found, cols, strata_lab = backends.grouped_input(samples, labels, by, columns, strata,
                                                               dropna, numeric_only, fname, factors=True)
        labs, names = [f[0] for f in found], [f[1] for f in found]
        if len(labs) > 1 and not allow_factors:
            raise ValueError(f"`{fname}` takes a single grouping column; got `by={list(by)!r}` "
                             "(use `disco` for several factors).")
        if len(labs) == 1 and isinstance(by, str):
            names = [by]
    _check_groups(labs, names, fname)
    return _Setup(X=data, labs=labs, names=names, cols=cols, strata=strata_lab,
                  strata_name=strata if isinstance(strata, str) else None, metric=met, n_threads=nt,
                  method=method, budget=None, R=R, gen=gen, seed=seed, scale=None, exact=exact,
                  user_metric=(metric, exponent, sigma), dask=True)


def _dask_test(st, units, stats, exact, kind, compute, extra=None):
    """A test on the Dask backend: the graph of its result (computed unless ``compute=False``).

    One permutation null per unit (a factor tested conditionally), each drawn
    from the Generator where the previous one left it, as the threads
    backend draws them.
    """
    Ms, nulls, gen, is_exact = [], [], st.gen, False
    for unit, stat in zip(units, stats):
        is_exact = _permutation.decide_exact(unit.cells, unit.k, unit.strata, st.R, exact)
        M, scale = backends.lazy_group_sums(st.X, unit.cells, unit.k, st.metric, st.n_threads)
        batches = None
        if is_exact:
            batches = list(_permutation.enumerate_relabellings(unit.cells, unit.k, 4096, unit.strata))
        null = None
        if is_exact or st.R > 0:
            null, gen = backends.lazy_permutation_null(
                st.X, st.metric, unit.cells, unit.k, unit.layout.sizes, stat, R=st.R, gen=gen,
                exact_batches=batches, strata=unit.strata, n_threads=st.n_threads)
        Ms.append(M)
        nulls.append(null)
    light = _Setup(**{**st.__dict__, "X": None})  # the graph carries no data
    return backends.finish(_dask_finish, kind, light, units, stats, Ms, scale, nulls, is_exact, extra,
                           compute=compute)


def _dask_finish(kind, st, units, stats, Ms, scale, nulls, is_exact, extra):
    st = _Setup(**{**st.__dict__, "scale": scale})
    parts = []
    for stat, M, null in zip(stats, Ms, nulls):
        observed = stat([M[None]])[0]
        if null is None:
            null = np.empty((0,) + np.shape(observed))
        parts.append((stat, observed, null, [M]))
    if kind == "energy":
        stat, observed, null, obs_M = parts[0]
        return _energy_test_finish(st, units[0], stat, observed, null, is_exact, obs_M, "dask")
    if kind == "marginal":
        stat, observed, null, obs = parts[0]
        return _marginal_finish(st, stat.marginal, stat.factor_sums(obs[0][None]), observed, null,
                                is_exact, "dask", *extra)
    return _disco_finish(st, units, parts, is_exact, "dask")


def _combine(code_arrays):
    """Cells of several codings of the rows: cell codes (n,) and each cell's codes (K, len)."""
    combo = np.stack(code_arrays, axis=1)
    uniq, inv = np.unique(combo, axis=0, return_inverse=True)
    return np.ascontiguousarray(inv.ravel(), dtype=np.intp), uniq


class _Layout:
    """The cells of one test: each cell's group (level of the tested factor), stratum and size.

    Statistics compare groups only within a stratum; without strata there is
    one stratum and the cells are the groups.
    """

    def __init__(self, group, stratum, sizes):
        self.group = np.asarray(group, dtype=np.intp)
        self.stratum = np.asarray(stratum, dtype=np.intp)
        self.sizes = np.asarray(sizes, dtype=np.float64)
        self.K = self.sizes.size
        iu, ju = np.triu_indices(self.K, 1)
        same = self.stratum[iu] == self.stratum[ju]
        self.iu, self.ju = iu[same], ju[same]
        self.n = float(self.sizes.sum())
        n_stratum = np.bincount(self.stratum, weights=self.sizes)
        self.n_stratum = n_stratum[self.stratum]
        self.n_strata = int(np.count_nonzero(n_stratum))
        self.df_between = self.K - self.n_strata  # Σ_s (groups in s − 1)
        self.df_within = int(self.n) - self.K
        groups_in = np.bincount(self.stratum, minlength=n_stratum.size)
        #: rows in strata holding a single group: they take no part in any comparison
        self.idle_rows = int(np.sum(n_stratum[(groups_in == 1)]))
        self.idle_strata = int(np.sum(groups_in == 1))

    def warn_idle(self, what):
        """Say so when some strata hold a single group (their rows compare with nothing)."""
        from ._validation import warn

        if self.idle_strata and self.n_strata > 1:
            warn(f"{self.idle_strata} of the {self.n_strata} {what} hold a single group, so their "
                 f"{self.idle_rows} rows take no part in the comparison (they are kept, and "
                 "relabelled with their stratum, which changes nothing).", UserWarning)

    def pair_sensitivity(self, weights):
        """Σ over the pairs of |∂ Σ w E / ∂ M| (each M entry perturbed on its own)."""
        ni, nj = self.sizes[self.iu], self.sizes[self.ju]
        return float(np.sum(weights * (2.0 / (ni * nj) + 1.0 / ni**2 + 1.0 / nj**2)))

    def energy_distances(self, M):
        """``E`` of every pair of cells in a stratum, shape (B, pairs), from sums ``M`` (B, K, K)."""
        g = M / np.outer(self.sizes, self.sizes)
        d = np.diagonal(g, axis1=1, axis2=2)
        return 2.0 * g[:, self.iu, self.ju] - d[:, self.iu] - d[:, self.ju]


class _Unit:
    """One permutation test: the tested factor's cells within strata, their relabellings and layout."""

    def __init__(self, lab, other_codes):
        if not other_codes:
            self.cells = np.ascontiguousarray(lab.codes, dtype=np.intp)
            self.layout = _Layout(np.arange(lab.k), np.zeros(lab.k, dtype=np.intp), lab.sizes)
            self.strata = None
        else:
            self.cells, uniq = _combine([lab.codes] + list(other_codes))
            _, stratum = np.unique(uniq[:, 1:], axis=0, return_inverse=True)
            stratum = np.ascontiguousarray(stratum.ravel(), dtype=np.intp)
            sizes = np.bincount(self.cells, minlength=uniq.shape[0])
            self.layout = _Layout(uniq[:, 0], stratum, sizes)
            self.strata = _permutation.Strata(stratum[self.cells])
        self.k = self.layout.K
        self.identity = np.arange(self.k, dtype=np.intp)


class _EnergyStatistic:
    """The k-sample energy statistic, summed over strata, from the cells' group sums."""

    def __init__(self, layout):
        self.layout = layout
        ni, nj = layout.sizes[layout.iu], layout.sizes[layout.ju]
        self.w = ni * nj / (ni + nj)

    def __call__(self, Ms):
        return self.layout.energy_distances(Ms[0]) @ self.w

    def tolerance(self, obs_Ms):
        """Rounding error of the statistic: each sum's allowed error through the formula."""
        return _permutation.sum_error(obs_Ms[0]) * self.layout.pair_sensitivity(self.w)


class _DiscoStatistic:
    """DISCO F of one factor (within strata) from the cells' group sums."""

    def __init__(self, layout, df_within=None):
        self.layout = L = layout
        ni, nj = L.sizes[L.iu], L.sizes[L.ju]
        self.v = ni * nj / (2.0 * L.n_stratum[L.iu])
        self.df_between = L.df_between
        self.df_within = L.df_within if df_within is None else df_within

    def components(self, M):
        """Between (within strata) and within-cell dispersions ``S``, ``W`` of sums ``M`` (B, K, K)."""
        S = self.layout.energy_distances(M) @ self.v
        # a sum of non-negative terms (rho >= 0 is checked): a negative value is the rounding
        # of a sum recovered by subtraction, and W = 0 must give F = inf, not a huge F of either sign
        W = np.maximum(np.diagonal(M, axis1=1, axis2=2) @ (0.5 / self.layout.sizes), 0.0)
        return S, W

    def values(self, M):
        S, W = self.components(M)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (S / self.df_between) / (W / self.df_within)

    def __call__(self, Ms):
        return self.values(Ms[0])

    def key(self, F):
        """F as ``S / (S + W)``, the increasing function of F in which relabellings are
        compared (:func:`energystats._permutation.pvalue_from_null`): ``S + W`` is the same
        for every relabelling (T, less the strata's between component), so the order is that
        of F, and its rounding error is bounded by the summed terms whatever W, whereas F's
        grows without bound as W → 0.  F = inf (W = 0 < S) is 1, the largest value."""
        F = np.asarray(F, dtype=np.float64)
        r = F * (self.df_between / self.df_within)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(np.isposinf(r), 1.0, r / (1.0 + r))

    def tolerance(self, obs_Ms):
        """Rounding error of ``key(F)``: each sum's allowed error (:func:`sum_error`, a multiple
        of eps times the sum of all pairs) through ``S / (S + W)``, first order.  Bounded by
        ``(tS + tW) / (S + W)``: scaled by the total dispersion, never by W (which can be 0)."""
        M = obs_Ms[0]
        eps_M = _permutation.sum_error(M)
        tS = eps_M * self.layout.pair_sensitivity(self.v)
        tW = eps_M * float(np.sum(0.5 / self.layout.sizes))
        S, W = (float(c[0]) for c in self.components(M[None]))
        if not S + W > 0:
            return 0.0  # all points identical within strata: F = 0/0 has no p-value
        return (W * tS + abs(S) * tW) / (S + W) ** 2


class _MarginalDisco:
    """R ``energy``'s several-factor DISCO: each factor's one-way F, all from one relabelling."""

    def __init__(self, labs):
        self.parts = [_DiscoStatistic(_Layout(np.arange(lab.k), np.zeros(lab.k, dtype=np.intp),
                                              lab.sizes)) for lab in labs]

    def __call__(self, Ms):
        return np.stack([p.values(M) for p, M in zip(self.parts, Ms)], axis=1)

    def tolerance(self, obs_Ms):
        return np.array([p.tolerance([M]) for p, M in zip(self.parts, obs_Ms)])

    def key(self, F):
        """Each factor's :meth:`_DiscoStatistic.key`, column by column (last axis)."""
        return _column_keys(self.parts)(F)


def _column_keys(stats):
    """The keys of several DISCO statistics, one per column (last axis) of an array of F."""
    def key(F):
        F = np.asarray(F, dtype=np.float64)
        return np.stack([st.key(F[..., f]) for f, st in enumerate(stats)], axis=-1)
    return key


# -- public functions --------------------------------------------------------

def energy_test(*samples, labels=None, by=None, columns=None, strata=None, dropna=False,
                numeric_only=False, n_resamples=999, metric="energy", exponent=1.0, sigma=1.0,
                rng=None, exact=None, method="auto", memory_budget=DEFAULT_MEMORY_BUDGET,
                progress=False, n_threads=None, backend=None, compute=True, pvalue_method="full",
                sequential_h=10, alpha=0.05):
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
    metric : {'energy', 'laplacian', 'gaussian', 'precomputed'} or callable
        The semimetric rho (as in :func:`energystats.pairwise`).
    exponent : float, default 1.0
        ``metric='energy'``: rho = ‖x − y‖^exponent, 0 < exponent ≤ 2.
    sigma : float, default 1.0
        Bandwidth of 'laplacian' and 'gaussian'.
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

    Returns
    -------
    EnergyTestResult
        ``statistic``, ``pvalue``, ``null_distribution``, ``n_resamples``,
        ``exact``, ``sizes``, ``groups``, ``energy_distances``, ``engine``,
        ``pvalue_se``, ``seed``, ``columns``, ``pvalue_method``, ``decision``.

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
    """
    st = _prepare_any(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                      n_resamples, rng, method, memory_budget, progress, n_threads, exact,
                      "energy_test", strata, backend, compute)
    lab = st.labs[0]
    unit = _Unit(lab, [] if st.strata is None else [st.strata.codes])
    if unit.layout.df_between < 1:
        raise ValueError("`strata`: no stratum holds two groups, so there is nothing to compare.")
    unit.layout.warn_idle("strata")
    stat = _EnergyStatistic(unit.layout)
    _sequential.check_rule_options(sequential_h, alpha)  # checked even where unused
    if pvalue_method == _asymptotic.ASYMPTOTIC:
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


def _energy_test_asymptotic(st, unit, stat):
    """:func:`energy_test` with the moment-matched gamma p-value (:mod:`energystats._asymptotic`):
    the observed sums, and the pooled sample's U distance variance by a streamed pass."""
    from . import dependence

    engine = st.engine(unit.k, unit.layout.sizes.astype(np.intp))
    observed, null, _, obs_M = _permutation.permutation_null(
        [engine], unit.cells, [unit.identity], stat, n_resamples=0, rng=st.gen, exact=False)
    from ._engine import Scale

    VU, sx, _ = dependence._sums(st.X, st.X, st.metric, st.n_threads)
    # obs_M is in the units of st.X itself (the engine's working units)
    dvar_u = _pooled_dvar_u(VU, sx, Scale(), unit.layout.n, st.metric)
    return _energy_gamma_finish(st, unit, stat, observed, null, obs_M, engine.name, dvar_u)


def _dask_energy_asymptotic(st, unit, stat, compute):
    """:func:`_energy_test_asymptotic` on the Dask backend: the group sums and the pooled
    distance variance as the backend's tile and row-range tasks."""
    M, scale = backends.lazy_group_sums(st.X, unit.cells, unit.k, st.metric, st.n_threads)
    VU, sx, sy = backends.lazy_dependence_sums(st.X, st.X, st.metric, st.n_threads)
    light = _Setup(**{**st.__dict__, "X": None})  # the graph carries no data
    return backends.finish(_dask_energy_gamma_finish, light, unit, stat, M, scale, VU, sx, sy,
                           compute=compute)


def _dask_energy_gamma_finish(st, unit, stat, M, scale, VU, sx, sy):
    st = _Setup(**{**st.__dict__, "scale": scale})
    observed = stat([M[None]])[0]
    null = np.empty((0,) + np.shape(observed))
    dvar_u = _pooled_dvar_u(VU, sx, scale, unit.layout.n, st.metric)
    return _energy_gamma_finish(st, unit, stat, observed, null, [M], "dask", dvar_u)


def _pooled_dvar_u(VU, sx, target, n, metric):
    """The pooled sample's U distance variance from its dependence sums ``VU`` (in the working
    units of ``sx``), in the units of ``target``: rho in the units a Scale maps from is
    rho × 2**(shift · degree) in data units, and the variance has degree 2."""
    from . import dependence
    from ._engine import Scale

    dvar_u = dependence._stats_result(VU, Scale(), Scale(), n, metric, None, None).dvar_x_u
    power = sx.shift * sx.degree - target.shift * target.degree
    return dvar_u * 2.0 ** (2.0 * power) if power != 0.0 else dvar_u


def _energy_gamma_finish(st, unit, stat, observed, null, obs_M, engine_name, dvar_u):
    """The gamma p-value from the observed group sums and the pooled sample's U distance
    variance, both in the working units of rho (the p-value does not depend on the unit)."""
    N = unit.layout.n
    mean_distance = math.fsum(obs_M[0].ravel()) / (N * (N - 1.0))
    mean, var = _asymptotic.energy_moments(unit.layout.sizes, mean_distance, dvar_u)
    p = _asymptotic.gamma_pvalue(float(observed), mean, var)
    return _energy_test_finish(st, unit, stat, observed, null, False, obs_M, engine_name,
                               asymptotic=p)


def _energy_test_finish(st, unit, stat, observed, null, is_exact, obs_M, engine_name, rule=None,
                        asymptotic=None):
    """The :class:`EnergyTestResult` from the observed sums and the null distribution (or, with
    ``asymptotic``, that p-value)."""
    lab = st.labs[0]
    # pooled group sums (cells summed over strata) give the groups' energy distances
    A = np.zeros((unit.k, lab.k))
    A[np.arange(unit.k), unit.layout.group] = 1.0
    M = A.T @ obs_M[0] @ A
    nn = lab.sizes.astype(np.float64)
    g = M / np.outer(nn, nn)
    gd = np.diag(g)
    E = 2.0 * g - gd[:, None] - gd[None, :]
    if st.metric.kind == "builtin":  # negative type: E >= 0 (rounding)
        E = nonnegative(E, 2.0 * np.abs(g) + np.abs(gd[:, None]) + np.abs(gd[None, :]))
    np.fill_diagonal(E, 0.0)
    pvalue = asymptotic
    if null.shape[0] > 0:
        pvalue = float(_permutation.pvalue_from_null(observed, null, is_exact,
                                                     tol=stat.tolerance(obs_M)))
        pvalue = _sequential.final_pvalue(pvalue, rule)
    R_used = int(null.shape[0])
    method = "full" if rule is None else rule.name
    if asymptotic is not None:
        method = _asymptotic.ASYMPTOTIC
    scale = st.scale
    return EnergyTestResult(float(scale.apply(observed)), pvalue, scale.apply(null), R_used,
                            bool(is_exact), lab.sizes.copy(), list(lab.groups), scale.apply(E),
                            engine_name,
                            pvalue_se=None if rule is not None or asymptotic is not None else
                            _permutation.pvalue_se(pvalue, R_used, is_exact),
                            seed=st.seed if R_used and not is_exact else None, columns=st.cols,
                            strata=None if st.strata is None else list(st.strata.groups),
                            strata_name=st.strata_name,
                            pvalue_method=method,
                            decision=None if rule is None else rule.decision)


def disco(*samples, labels=None, by=None, columns=None, strata=None, conditional=True, dropna=False,
          numeric_only=False, n_resamples=999, metric="energy", exponent=1.0, sigma=1.0, rng=None,
          exact=None, method="auto", memory_budget=DEFAULT_MEMORY_BUDGET, progress=False,
          n_threads=None, backend=None, compute=True, pvalue_method="full", sequential_h=10,
          alpha=0.05):
    r"""DISCO: distance-components analysis of k ≥ 2 groups (permutation F test).

    Parameters
    ----------
    *samples, labels, columns, dropna, numeric_only, n_resamples, metric, exponent, sigma, rng, exact, method, memory_budget, progress, n_threads, backend, compute
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
                df  dispersion        F  pvalue  pvalue_se
    component
    Between      2     119.237  124.597   0.005      0.005
    Within     147      70.338      NaN     NaN        NaN
    Total      149     189.576      NaN     NaN        NaN
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
                      strata, backend, compute, allow_factors=True)
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


def _disco_finish(st, units, parts, is_exact, engine_name, rules=None):
    """The :class:`DiscoResult` from each factor's (statistic, observed, null, observed sums)."""
    single = len(units) == 1
    n = int(st.labs[0].sizes.sum())
    df_within = units[0].layout.df_within
    obs, nulls, tols, S, W = [], [], [], [], None
    stats = [part[0] for part in parts]
    for stat, o, nl, obs_M in parts:
        obs.append(float(o))
        nulls.append(nl)
        tols.append(stat.tolerance(obs_M))
        Sf, Wf = stat.components(obs_M[0][None])
        S.append(float(Sf[0]))
        W = float(Wf[0])
    T = float(np.sum(obs_M[0])) / (2.0 * n)
    F = np.array(obs)
    if single:
        null = nulls[0]
    else:  # the factors' nulls side by side; with early stops, NaN after each one's last
        null = np.full((max(nl.shape[0] for nl in nulls), len(nulls)), np.nan)
        for f, nl in enumerate(nulls):
            null[:nl.shape[0], f] = nl
    pvalue = None
    if null.shape[0] > 0:
        if rules is not None:  # each factor's rule on its own relabellings
            pvalue = np.array([_sequential.final_pvalue(float(_permutation.pvalue_from_null(
                F[f], nulls[f], is_exact, what="F", tol=tols[f], key=stats[f].key)), rule)
                for f, rule in enumerate(rules)])
        else:
            pvalue = np.atleast_1d(_permutation.pvalue_from_null(
                F if not single else F[0], null, is_exact, what="F",
                tol=np.array(tols) if not single else tols[0],
                key=_column_keys(stats) if not single else stats[0].key))
    if single:
        test = "one-way" if st.strata is None else "stratified"
    else:
        test = "conditional"
    scale = st.scale
    return _disco_result(st, n, F, pvalue, scale.apply(np.array(S)), scale.apply(W), scale.apply(T),
                         np.array([u.layout.df_between for u in units]), df_within, null, is_exact,
                         engine_name, test, rules)


class _CellsToFactors:
    """:class:`_MarginalDisco` from the group sums of the cells (each factor's sums are sums of
    the cells' sums: ``M_f = A_fᵀ M A_f``, ``A_f`` the one-hot map of cells to levels)."""

    def __init__(self, marginal, maps, ks):
        self.marginal = marginal
        self.A = [np.eye(kf)[m] for m, kf in zip(maps, ks)]

    def factor_sums(self, M):
        return [np.einsum("cg,bcd,dh->bgh", A, M, A) for A in self.A]

    def __call__(self, Ms):
        return self.marginal(self.factor_sums(Ms[0]))


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


def _marginal_finish(st, stat, obs_M, observed, null, is_exact, engine_name, n, dfb, df_within,
                     rules=None):
    """The marginal :class:`DiscoResult` from each factor's observed sums and the null."""
    labs = st.labs
    obs_M = [M[0] if M.ndim == 3 else M for M in obs_M]
    parts = [dispersion_from_sums(M, lab.sizes, lab.groups) for M, lab in zip(obs_M, labs)]
    T = parts[0].T
    S = np.array([p.S for p in parts])
    F = np.atleast_1d(np.asarray(observed, dtype=float))
    pvalue = None
    if null.shape[0] > 0:
        tol = stat.tolerance(obs_M)
        if rules is not None:  # each factor's rule on its own prefix of the relabellings
            tol = np.broadcast_to(tol, F.shape)
            pvalue = np.array([_sequential.final_pvalue(float(_permutation.pvalue_from_null(
                F[f], null[:rule.used, f], is_exact, what="F", tol=tol[f],
                key=stat.parts[f].key)), rule)
                for f, rule in enumerate(rules)])
        else:
            pvalue = np.atleast_1d(_permutation.pvalue_from_null(observed, null, is_exact, what="F",
                                                                 tol=tol, key=stat.key))
    scale = st.scale
    return _disco_result(st, n, F, pvalue, scale.apply(S), scale.apply(T - float(S.sum())),
                         scale.apply(T), dfb, df_within, null, is_exact, engine_name, "marginal", rules)


def _disco_result(st, n, F, pvalue, S, within, T, dfb, df_within, null, is_exact, engine, test,
                  rules=None):
    labs = st.labs
    single = len(labs) == 1
    R_used = int(null.shape[0])
    if rules is None:
        used, decision = R_used, None
    elif single:
        used, decision = rules[0].used, rules[0].decision
    else:  # each factor's rule stopped on its own
        used = np.array([rule.used for rule in rules])
        decision = [rule.decision for rule in rules]
    se = None if rules is not None else _permutation.pvalue_se(pvalue, R_used, is_exact)
    factors = ["Between"] if single else [str(nm) for nm in st.names]
    return DiscoResult(
        statistic=float(F[0]) if single else F,
        pvalue=(None if pvalue is None else float(pvalue[0]) if single else pvalue.astype(float)),
        between=float(S[0]) if single else S,
        within=float(within), total=float(T),
        df_between=int(dfb[0]) if single else dfb,
        df_within=int(df_within), df_total=n - 1,
        factors=factors, null_distribution=null, n_resamples=used,
        exact=bool(is_exact), sizes=[lab.sizes.copy() for lab in labs],
        groups=[list(lab.groups) for lab in labs], engine=engine,
        pvalue_se=(None if se is None else float(np.atleast_1d(se)[0]) if single else se),
        seed=st.seed if R_used and not is_exact else None, columns=st.cols, test=test,
        strata=None if st.strata is None else list(st.strata.groups),
        strata_name=st.strata_name, pvalue_method="full" if rules is None else rules[0].name,
        decision=decision)
