"""Results of homogeneity's tests: :class:`EnergyTestResult` and :class:`DiscoResult`.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core import _sequential
from .._core._validation import short_list

__all__ = ["EnergyTestResult", "DiscoResult", "PermanovaResult"]


# -- results -----------------------------------------------------------------

def _fmt_p(p):
    return "None" if p is None else f"{p:.4g}"


def _fmt_se(se):
    return "" if se is None or not np.all(np.asarray(se) > 0) else f" (MC s.e. {np.max(se):.2g})"


def _fmt_seed(seed):
    return "" if seed is None else f", seed={seed}"


@notebook_display
@dataclass(frozen=True)
class EnergyTestResult:
    r"""Result of :func:`energy_test`.

    Attributes
    ----------
    statistic : float
        :math:`\sum_{i<j} \frac{n_i n_j}{n_i + n_j} E(C_i, C_j)` (R ``energy``'s
        ``eqdist.etest`` statistic; V-statistics, no square root; with
        ``estimator='U'``, :math:`E_U` instead of :math:`E`).
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
        How the relabellings were evaluated: 'projection' (``method='projection'``: the
        statistic and every relabelling's on ``n_projections`` random projections),
        'sorted' (1-D, O(n·k) each),
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
    estimator : str
        'V' or 'U': how the within-group means were taken, in ``statistic``,
        ``null_distribution`` and ``energy_distances`` alike (see
        :func:`energy_test`).
    n_projections : int or None
        With ``method='projection'``: the number of random directions (None otherwise).
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
    estimator: str = "V"
    n_projections: int | None = None

    def __repr__(self):
        st = "" if self.strata is None else f", strata={len(self.strata)}"
        seq = "" if self.pvalue_method == "full" else f", pvalue_method={self.pvalue_method!r}"
        if self.estimator != "V":
            seq += f", estimator={self.estimator!r}"
        if self.pvalue_method == "decision":
            seq += f", decision={self.decision!r}"
        if self.n_projections is not None:
            seq += f", n_projections={self.n_projections}"
        return (f"EnergyTestResult(statistic={self.statistic:.6g}, pvalue={_fmt_p(self.pvalue)}"
                f"{_fmt_se(self.pvalue_se)}, n_resamples={self.n_resamples}, exact={self.exact}, "
                f"sizes={list(map(int, self.sizes))}, groups={short_list(self.groups)}{st}"
                f"{_fmt_seed(self.seed)}{seq})")

    def to_frame(self, kind="test"):
        """Tidy DataFrame.

        ``kind='test'`` (the default): the test's table, one row ``'energy test'``
        with columns ``statistic``, ``pvalue``, ``pvalue_se`` (NaN when there is no
        p-value or no Monte Carlo error), ``n_resamples``, ``exact``,
        ``pvalue_method``, ``estimator``, ``seed`` (<NA> when none), ``n_groups``
        and ``n_samples``; with ``pvalue_method='decision'`` also ``decision``, and
        with strata ``n_strata``.  ``kind='energy_distances'``: the k×k matrix
        ``energy_distances`` (:math:`E(C_i, C_j)`, V- or U-statistics as
        ``estimator`` says, no square root) labelled by the groups.

        ``to_frame()`` used to return the matrix (a change of behaviour, see the
        changelog); the matrix is now ``to_frame(kind='energy_distances')``.

        Examples
        --------
        >>> import numpy as np, energystats as es
        >>> rng = np.random.default_rng(0)
        >>> a, b = rng.normal(size=(20, 2)), rng.normal(size=(15, 2)) + 1.0
        >>> res = es.energy_test(a, b, n_resamples=199, rng=1)
        >>> res.to_frame()[["statistic", "pvalue", "n_resamples", "seed"]].round(4)
                     statistic  pvalue  n_resamples  seed
        test
        energy test    13.7696   0.005          199     1
        >>> res.to_frame(kind="energy_distances").round(4)
                    0       1
        group
        0      0.0000  1.6065
        1      1.6065  0.0000
        """
        if kind == "energy_distances":
            idx = pd.Index(self.groups, name="group")
            return pd.DataFrame(self.energy_distances, index=idx, columns=idx.rename(None))
        if kind != "test":
            raise ValueError(f"`kind` must be 'test' or 'energy_distances'; got {kind!r}.")
        nan = float("nan")
        row = {"statistic": [float(self.statistic)],
               "pvalue": [nan if self.pvalue is None else float(self.pvalue)],
               "pvalue_se": [nan if self.pvalue_se is None else float(self.pvalue_se)],
               "n_resamples": [int(self.n_resamples)], "exact": [bool(self.exact)],
               "pvalue_method": [self.pvalue_method], "estimator": [self.estimator],
               "seed": pd.array([self.seed], dtype="Int64"),
               "n_groups": [len(self.sizes)], "n_samples": [int(np.sum(self.sizes))]}
        if self.pvalue_method == "decision":
            row["decision"] = [self.decision]
        if self.strata is not None:
            row["n_strata"] = [len(self.strata)]
        return pd.DataFrame(row, index=pd.Index(["energy test"], name="test"))


@notebook_display
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
        Factor names (``['Between']`` for a single factor, named or not: the row R
        ``energy`` prints as ``factors``).
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
        columns ``df``, ``dispersion``, ``mean_dispersion`` (``dispersion / df``; NaN on
        Total), ``F``, ``pvalue`` and ``pvalue_se``.

        R ``energy``'s ``print(disco(...))`` has the columns Df, Sum Dist, Mean Dist,
        F-ratio and p-value: they are ``df``, ``dispersion``, ``mean_dispersion``, ``F``
        and ``pvalue``; ``pvalue_se`` is ours.  With one factor R names its row after the
        argument (``factors``) and this table ``Between``; with several factors both
        name the rows after the factors (R's names are the data frame's columns).  R's
        numbers are those of ``conditional=False`` (see :func:`disco`).

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
                   # R's "Mean Dist": Sum Dist / Df, blank (NaN) on Total as in R's printout
                   "mean_dispersion": list(S / dfb) + [self.within / self.df_within, np.nan],
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


@notebook_display
@dataclass(frozen=True)
class PermanovaResult:
    r"""Result of :func:`permanova`, with scikit-bio's fields.

    Attributes
    ----------
    sample_size : int
        Number of objects n.
    n_groups : int
        Number of groups k.
    statistic : float
        The pseudo-F, :math:`\frac{(SS_T - SS_W)/(k-1)}{SS_W/(n-k)}` (DISCO's F
        on the squared dissimilarities).
    pvalue : float or None
        Permutation p-value; ``None`` when ``permutations=0`` (scikit-bio:
        NaN, as in :meth:`to_frame`).
    n_permutations : int
        Number of relabellings in ``null_distribution`` (all of them when
        ``exact``).
    exact : bool
        True when every distinct relabelling was enumerated.
    seed : int or None
        Seed of the random relabellings (as in :class:`DiscoResult`).
    groups : list
        Group names, in the order of ``sizes``.
    sizes : ndarray of int, shape (k,)
    null_distribution : ndarray, shape (n_permutations,)
        The pseudo-F of each relabelling.
    disco : DiscoResult
        The underlying DISCO (index 2): ``between`` is :math:`SS_A`,
        ``within`` :math:`SS_W`, ``total`` :math:`SS_T`.
    method_name : str
        'PERMANOVA'.
    test_statistic_name : str
        'pseudo-F'.
    """

    sample_size: int
    n_groups: int
    statistic: float
    pvalue: float | None
    n_permutations: int
    exact: bool
    seed: int | None
    groups: list
    sizes: np.ndarray
    null_distribution: np.ndarray = field(repr=False)
    disco: DiscoResult = field(repr=False)
    method_name: str = "PERMANOVA"
    test_statistic_name: str = "pseudo-F"

    def to_frame(self):
        """scikit-bio's table: rows 'method name', 'test statistic name', 'sample size',
        'number of groups', 'test statistic', 'p-value' (NaN without permutations) and
        'number of permutations'; one column 'PERMANOVA results' (its Series is scikit-bio's
        result)."""
        idx = ["method name", "test statistic name", "sample size", "number of groups",
               "test statistic", "p-value", "number of permutations"]
        vals = [self.method_name, self.test_statistic_name, self.sample_size, self.n_groups,
                self.statistic, np.nan if self.pvalue is None else self.pvalue,
                self.n_permutations]
        return pd.DataFrame({"PERMANOVA results": pd.Series(vals, index=idx, dtype=object)})

    def __repr__(self):
        ex = ", exact=True" if self.exact else ""
        return (f"PermanovaResult(pseudo-F={self.statistic:.6g}, pvalue={_fmt_p(self.pvalue)}, "
                f"sample_size={self.sample_size}, n_groups={self.n_groups}, "
                f"n_permutations={self.n_permutations}{ex}{_fmt_seed(self.seed)})")
