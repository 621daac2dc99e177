"""The balance table: per-covariate and overall balance before and after weighting, as
R ``cobalt``'s ``bal.tab`` reports it (its conventions and our differences: the
documentation's conventions page, "Balance table (cobalt's conventions)")."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core._metrics import resolve_metric
from .._core._validation import check_n_threads, short_list
from .._core._validation import warn as _warn
from .._core._weights import weighted_dcov_means, weighted_group_sums
from . import _forms
from ._design import align_weights, column_shifts, expand_factors, pow2_shift

__all__ = ["balance_table", "BalanceTableResult", "BalanceWarning"]

KINDS = ("auto", "categorical", "continuous")
ESTIMANDS = ("ATE", "ATT", "ATC")
#: the warnings' rules: a level's Kish ESS after weighting below this fraction of its rows ...
ESS_FRACTION = 0.1
#: ... and an |SMD| (|correlation| for a continuous treatment) after weighting above this,
#: unless ``thresholds`` gives one for 'smd' ('corr')
IMBALANCE = 0.1
#: the statistics that take a threshold, with the range of the threshold
THRESHOLDS = {"smd": (0.0, np.inf), "var_ratio": (1.0, np.inf), "ks": (0.0, 1.0),
              "corr": (0.0, 1.0)}
LIST_HEAD = 5  # covariates named in a warning before "... and N more"


class BalanceWarning(UserWarning):
    """The weights leave the sample unbalanced or thin: a level's effective sample size is
    small, a covariate's standardised mean difference (or correlation) is large after
    weighting, or two levels' ranges of a covariate do not overlap (:func:`balance_table`)."""


@notebook_display
@dataclass(frozen=True)
class BalanceTableResult:
    r"""Result of :func:`balance_table`.

    Attributes
    ----------
    table : DataFrame
        One row per covariate (a factor gives one row per level, ``col_level``).  ``type``:
        'binary' (two distinct values, or a factor's level) or 'contin.'.  Categorical
        treatment: ``smd`` (standardised mean difference; for a binary covariate the raw
        difference in proportions), ``var_ratio`` (the larger group variance over the smaller
        one; NaN for a binary covariate) and ``ks`` (Kolmogorov-Smirnov distance of the
        weighted distribution functions), each ``_before`` (base weights) and ``_after``
        (``weights``; only when given); for more than 2 levels each is the largest over the
        compared pairs of levels.  Continuous treatment: ``corr_before``/``corr_after``, the
        weighted Pearson correlation of treatment and covariate.  With ``thresholds``:
        ``<stat>_balanced`` (nullable boolean: ``|stat| < threshold`` "after", or "before"
        without weights; NA where the statistic is NaN).
    kind : str
        'categorical' or 'continuous'.
    energy_before, energy_after : float
        Categorical: the weighted energy distance between the levels' standardised
        covariates (the largest over pairs of levels for more than 2).  Continuous: the
        weighted distance correlation of treatment and standardised covariates.
        ``energy_after`` is NaN without ``weights``.
    ess : DataFrame
        Per level (one row 'all' for a continuous treatment): ``n``, ``ess_before``,
        ``ess_after`` (Kish's :math:`(\sum w)^2/\sum w^2`).
    estimand : str or None
        'ATE', 'ATT' or 'ATC', which chose the SMD's denominator (None: continuous).
    focal : object or None
        The focal level ('ATT'/'ATC'), whose standard deviation is the denominator.
    thresholds : dict
        The ``thresholds`` used for the ``_balanced`` columns ({} without).
    warning_rules : dict
        The rules of the :class:`BalanceWarning`: ``ess_fraction`` and ``smd`` (or ``corr``).
    issues : tuple of str
        What the warning said (also with ``warn=False``); empty when nothing was found or
        without ``weights``.
    formula : str or None
        The formula of a formula call (``X`` = 'treat ~ ...'), else None.
    """

    table: pd.DataFrame
    kind: str
    energy_before: float
    energy_after: float
    ess: pd.DataFrame
    estimand: str | None = None
    focal: object = None
    thresholds: dict = field(default_factory=dict)
    warning_rules: dict = field(default_factory=dict)
    issues: tuple = ()
    formula: str | None = None

    def to_frame(self):
        """The per-covariate table."""
        return self.table

    def plot(self, ax=None, stat=None, threshold=None):
        """A Love plot: ``|stat|`` of each covariate before and after weighting (matplotlib,
        imported here).  ``stat`` defaults to 'smd' ('corr' for a continuous treatment); a
        dashed line marks ``threshold`` (default: the table's threshold for ``stat``, else 0.1
        for 'smd' and 'corr', none for the others).  Binary covariates' 'smd' is the raw
        difference in proportions.  Returns the Axes."""
        from .._core._plot import axes

        stat = stat or ("corr" if self.kind == "continuous" else "smd")
        cols = [c for c in (f"{stat}_before", f"{stat}_after") if c in self.table.columns]
        if not cols:
            stats = [c[:-len("_before")] for c in self.table.columns if c.endswith("_before")]
            raise ValueError(f"`stat` must name a statistic of the table ({sorted(stats)}); "
                             f"got {stat!r}.")
        if threshold is None:
            threshold = self.thresholds.get(stat, IMBALANCE if stat in ("smd", "corr") else None)
        ax = axes(ax, "BalanceTableResult.plot", (5, 0.35 * len(self.table) + 1.2))
        y = np.arange(len(self.table))
        for c, marker in zip(cols, ("o", "s")):
            ax.scatter(np.abs(self.table[c].to_numpy(dtype=float)), y, marker=marker,
                       label=c.rsplit("_", 1)[1])
        if threshold is not None:
            ax.axvline(threshold, color="grey", linestyle="--", linewidth=1)
        ax.set_yticks(y)
        ax.set_yticklabels([str(i) for i in self.table.index])
        binary = stat == "smd" and (self.table["type"] == "binary").any()
        ax.set_xlabel(f"|{stat}|" + (" (binary covariates: raw difference)" if binary else ""))
        ax.legend()
        return ax

    def __repr__(self):
        return (f"BalanceTableResult(kind={self.kind!r}, estimand={self.estimand!r}, "
                f"energy_before={self.energy_before:.4g}, energy_after={self.energy_after:.4g}, "
                f"covariates={len(self.table)}, issues={len(self.issues)})")


# -- per-covariate statistics ------------------------------------------------------------------

def _level_moments(Z, codes, k, v):
    """Per level and column: the weighted means and the unbiased weighted variances of
    ``cobalt`` (reliability weights, :math:`\\sum v (x - m)^2 / (V_1 - V_2/V_1)`); NaN variance
    for a level with at most one positive weight.  ``Z`` in working units, ``v`` at most 1."""
    M = np.empty((k, Z.shape[1]))
    V = np.empty((k, Z.shape[1]))
    for g in range(k):
        sel = codes == g
        x, u = Z[sel], v[sel]
        sw = u.sum()
        M[g] = (u @ x) / sw
        denom = sw - (u @ u) / sw
        V[g] = (u @ (x - M[g]) ** 2) / denom if denom > 0 and (u > 0).sum() > 1 else np.nan
    return M, V


def _wmean_var(x, w):
    """Weighted mean and the unbiased weighted variance of ``cobalt`` (reliability weights)."""
    M, V = _level_moments(x[:, None], np.zeros(len(x), dtype=np.intp), 1, w)
    return M[0, 0], V[0, 0]


def _wks(x, wa, wb):
    """Largest distance of the weighted distribution functions of ``x`` under ``wa`` and ``wb``
    (each a weight vector that is zero outside its group)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    diff = np.cumsum(wa[order] / wa.sum() - wb[order] / wb.sum())
    last = np.r_[xs[1:] != xs[:-1], True]       # the cdf at the last of tied values
    return float(np.abs(diff[last]).max())


def _binary_coded(Z):
    """The columns with exactly two distinct values, and ``Z`` with those coded 0/1 as
    ``cobalt``'s ``binarize`` does: 0 stays 0 when it is one of the two values, else the
    smaller value becomes 0 (the other 1)."""
    binary = np.zeros(Z.shape[1], dtype=bool)
    C = Z.copy()
    for j in range(Z.shape[1]):
        u = np.unique(Z[:, j])
        if u.size == 2:
            binary[j] = True
            C[:, j] = (Z[:, j] != (0.0 if 0.0 in u else u[0])).astype(np.float64)
    return binary, C


def _denominators(Z, codes, k, s, focal_code):
    """The SMD's denominator per column, from the base-weighted sample: the focal level's
    standard deviation ('ATT'/'ATC'), else the pooled :math:`\\sqrt{\\text{mean}_g s_g^2}`;
    where that is 0 or undefined, the whole sample's (as ``cobalt``); NaN where that is 0 too."""
    _, V = _level_moments(Z, codes, k, s)
    den = np.sqrt(V[focal_code] if focal_code is not None else V.mean(axis=0))
    bad = ~(np.isfinite(den) & (den > 0))
    if bad.any():
        _, V_all = _level_moments(Z[:, bad], np.zeros(len(codes), dtype=np.intp), 1, s)
        den[bad] = np.sqrt(V_all[0])
        den[bad & ~(den > 0)] = np.nan
    return den


def _categorical_stats(Z, binary, codes, k, v, den, pairs):
    """Per covariate (smd, var_ratio, ks) under the weights ``v``, each the largest over
    ``pairs``; the set of levels whose variance is undefined (for a continuous covariate)."""
    d = Z.shape[1]
    M, V = _level_moments(Z, codes, k, v)
    out = np.zeros((d, 3))
    undefined = set()
    for g, h in pairs:
        diff = M[h] - M[g]
        smd = np.where(binary, diff, diff / np.where(np.isnan(den), 1.0, den))
        smd = np.where(np.isnan(den) & ~binary, 0.0, smd)  # a constant column: no difference
        vg, vh = V[g], V[h]
        lo, hi = np.minimum(vg, vh), np.maximum(vg, vh)
        with np.errstate(divide="ignore", invalid="ignore"):
            vr = np.where(lo > 0, hi / lo, np.where(hi == lo, 1.0, np.inf))
        nan_v = (np.isnan(vg) | np.isnan(vh)) & ~binary
        if nan_v.any():
            undefined.update(lv for lv, vv in ((g, vg), (h, vh)) if np.isnan(vv[~binary]).any())
        vr = np.where(binary, np.nan, np.where(nan_v, np.nan, vr))
        bigger = np.abs(smd) > np.abs(out[:, 0])
        out[:, 0] = np.where(np.isnan(out[:, 0]) | np.isnan(smd), np.nan,
                             np.where(bigger, smd, out[:, 0]))
        out[:, 1] = np.where(np.isnan(out[:, 1]) | np.isnan(vr), np.nan, np.maximum(out[:, 1], vr))
        ig, ih = codes == g, codes == h
        wa, wb = np.where(ig, v, 0.0), np.where(ih, v, 0.0)
        out[:, 2] = np.maximum(out[:, 2], [_wks(Z[:, j], wa, wb) for j in range(d)])
    return out, undefined


def _wcorr(a, x, w):
    ma, va = _wmean_var(a, w)
    mx, vx = _wmean_var(x, w)
    cov = (w @ ((a - ma) * (x - mx))) / w.sum()
    sa, sx = np.sqrt((w @ (a - ma) ** 2) / w.sum()), np.sqrt((w @ (x - mx) ** 2) / w.sum())
    return float(cov / (sa * sx)) if sa > 0 and sx > 0 else 0.0


def _is_continuous(t, kind):
    if kind == "continuous":
        return True
    if kind == "categorical":
        return False
    arr = np.asarray(t.to_numpy() if isinstance(t, pd.Series) else t)
    return arr.dtype.kind == "f" and len(np.unique(arr[~np.isnan(arr)])) > 10


# -- arguments ---------------------------------------------------------------------------------

def _check_estimand(estimand):
    if not isinstance(estimand, str) or estimand.upper() not in ESTIMANDS:
        raise ValueError(f"`estimand` must be one of 'ATE', 'ATT', 'ATC'; got {estimand!r}.")
    return estimand.upper()


def _focal_level(estimand, focal, groups):
    """The focal level of 'ATT'/'ATC' (None for 'ATE'), by the rule of
    :func:`energy_balancing_weights`: with levels 0/1 or False/True, 1/True for 'ATT' and
    0/False for 'ATC' unless given."""
    if estimand == "ATE":
        if focal is not None:
            raise ValueError(f"`focal` is for estimand 'ATT' or 'ATC'; got focal={focal!r} with 'ATE'.")
        return None
    if focal is None:
        if list(groups) in ([0, 1], [False, True]):
            return groups[1] if estimand == "ATT" else groups[0]
        raise ValueError(f"`focal` is required with estimand {estimand!r} unless the treatment levels "
                         f"are 0/1 or False/True; the levels are {short_list(groups)}. Pass the level "
                         f"whose standard deviation is the SMD's denominator "
                         f"({'the treated' if estimand == 'ATT' else 'the controls'}).")
    if focal not in list(groups):
        raise ValueError(f"`focal` must be one of the treatment levels {short_list(groups)}; got {focal!r}.")
    return focal


def _check_thresholds(thresholds, continuous):
    if thresholds is None:
        return {}
    if not isinstance(thresholds, Mapping):
        raise TypeError(f"`thresholds` must be a dict such as {{'smd': 0.1, 'var_ratio': 2, "
                        f"'ks': 0.1}}; got {type(thresholds).__name__}.")
    allowed = ("corr",) if continuous else ("smd", "var_ratio", "ks")
    out = {}
    for key, value in thresholds.items():
        if key not in allowed:
            other = key in THRESHOLDS
            raise ValueError(f"`thresholds`: key {key!r} is not a statistic of a "
                             f"{'continuous' if continuous else 'categorical'} treatment's table"
                             f"{' (it is for the other kind)' if other else ''}; the keys are "
                             f"{list(allowed)}.")
        lo, hi = THRESHOLDS[key]
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                         np.floating)) \
                or not (np.isfinite(value) and lo <= value <= hi):
            rule = f"a number in [{lo:g}, {hi:g}]" if np.isfinite(hi) else f"a finite number >= {lo:g}"
            raise ValueError(f"`thresholds[{key!r}]` must be {rule}; got {value!r}.")
        out[key] = float(value)
    return out


def _unpack_weights(weights, X):
    """``(weights, estimand, focal)``: a weights result's weights (as a Series on its index when
    ``X`` is a DataFrame, to be aligned), estimand and focal level; other input as it is."""
    if weights is None or isinstance(weights, pd.Series) or not hasattr(weights, "weights"):
        return weights, None, None
    w = weights.weights
    index = getattr(weights, "index", None)
    if index is not None and isinstance(X, pd.DataFrame) and len(index) == len(w):
        w = pd.Series(w, index=index)
    return w, getattr(weights, "estimand", None), getattr(weights, "focal", None)


def _short(names):
    names = [str(c) for c in names]
    head = ", ".join(names[:LIST_HEAD])
    return head + (f" ... and {len(names) - LIST_HEAD} more" if len(names) > LIST_HEAD else "")


# -- the table ---------------------------------------------------------------------------------

def balance_table(X, treatment=None, weights=None, *, data=None, base_weights=None, estimand=None,
                  focal=None, thresholds=None, warn=True, treatment_kind="auto",
                  standardize="studentized", n_threads=None):
    r"""Covariate balance before and after weighting, with R ``cobalt``'s conventions.

    What ``cobalt``'s ``bal.tab`` reports: per covariate, the standardised mean difference
    (SMD; a binary covariate's raw difference in proportions), the variance ratio and the
    weighted Kolmogorov-Smirnov distance; overall, the weighted energy distance between the
    levels (Huling and Mak 2024, "Energy balancing of covariate distributions"), or for a
    continuous treatment the weighted Pearson correlation per covariate and the weighted
    distance correlation overall; and Kish's effective sample size per level.

    Parameters
    ----------
    X : array_like, DataFrame or str, shape (n, d)
        Covariates (a DataFrame may also hold the treatment column).  DataFrame columns of
        dtype category, bool, object or string are factors: one 0/1 row per level, named
        ``col_level`` (a factor with two levels: its second level's row only, as ``cobalt``);
        a missing value in a factor is an error.  Or a formula ``'treat ~ age + C(race)'``
        with ``data=``, read as by :func:`energy_balancing_weights` (the left side the
        treatment, factors as in a DataFrame, formulaic's transforms and interactions, no
        intercept; needs ``pip install energy-statistics[formula]``).
    treatment : array_like, Series or str
        Treatment of each row, or a column of ``X``.  A Series is aligned with a DataFrame
        ``X`` by index.  Not with a formula.
    weights : array_like, Series or result, optional
        The weights to assess (finite, non-negative, not all zero in a level), or a
        :class:`BalancingWeightsResult`/:class:`IndependenceWeightsResult`.  A Series (and a
        result of DataFrame input, through its ``index``) is aligned with a DataFrame ``X``
        by index, as the treatment is: the same labels in any order are reordered, other
        labels are an error.  Without weights only the "before" columns are filled.
    data : DataFrame, optional
        The columns of a formula ``X`` (the weights are aligned with its index).
    base_weights : array_like or Series, optional
        Sampling weights: the "before" state (aligned as ``weights``).
    estimand : {'ATE', 'ATT', 'ATC'}, optional
        Chooses the SMD's denominator (``cobalt``'s ``s.d.denom``): 'ATT'/'ATC' the focal
        level's standard deviation, 'ATE' the pooled one.  Default: the estimand of a
        :class:`BalancingWeightsResult` given as ``weights``, else 'ATE'.
    focal : object, optional
        The focal level of 'ATT'/'ATC' (the treated for 'ATT', the controls for 'ATC');
        with levels 0/1 or False/True it defaults to 1/True for 'ATT' and 0/False for 'ATC'.
        Default: the result's focal level when its estimand is used.  With a focal level and
        more than 2 levels, each other level is compared with it (not every pair).
    thresholds : dict, optional
        Balance thresholds, as ``cobalt``'s ``thresholds``: keys 'smd' (>= 0), 'var_ratio'
        (>= 1) and 'ks' (in [0, 1]), or 'corr' (in [0, 1]) for a continuous treatment.  Each
        adds a column ``<stat>_balanced``: ``|stat| < threshold`` after weighting (before,
        without weights), NA where the statistic is NaN.
    warn : bool
        Emit the :class:`BalanceWarning` (see Notes); its text is in the result's ``issues``
        either way.
    treatment_kind : {'auto', 'categorical', 'continuous'}
        'auto': continuous when the treatment has a floating dtype and more than 10
        distinct values, else categorical (the result's ``kind`` says which was used).
    standardize : {'studentized', 'mahalanobis', None}
        Units of the covariates in the energy distance and distance correlation.
    n_threads : int, optional
        Threads of the distance kernels.  The overall statistics are streamed (no n×n
        matrix), in O(n² d) time.

    Returns
    -------
    BalanceTableResult
        ``table`` columns: ``type``, then ``smd``, ``var_ratio``, ``ks`` (continuous
        treatment: ``corr``), each ``_before`` and ``_after``, then the ``_balanced`` columns.

    Notes
    -----
    With :math:`\bar x_g` the (base-)weighted mean of level :math:`g` and :math:`s_g^2` the
    unbiased weighted variance of ``cobalt`` (reliability weights,
    :math:`\sum_i w_i (x_i - \bar x_g)^2 / (W_1 - W_2/W_1)`, :math:`W_1 = \sum w_i`,
    :math:`W_2 = \sum w_i^2`, over the level's rows),

    .. math::

        \mathrm{SMD} = \frac{\bar x_h - \bar x_g}{s^*}, \qquad
        s^* = \begin{cases} s_f & \text{'ATT', 'ATC' (focal level } f) \\
                            \sqrt{\tfrac{1}{k}\sum_g s_g^2} & \text{'ATE'} \end{cases}

    with :math:`s^*` from the base-weighted sample (square root taken; the whole sample's
    standard deviation where it is 0 or undefined) and the *same* before and after
    weighting; :math:`h` is the later of the two levels in level order (treated minus
    control for 0/1).  A binary covariate (exactly two distinct values, coded 0/1 as
    ``cobalt``'s ``binarize``: 0 stays 0, else the smaller value becomes 0) reports the raw
    difference in proportions and no variance ratio.  The variance ratio is
    :math:`\max(s_g^2, s_h^2)/\min(s_g^2, s_h^2)`, with the variances under the base weights
    ("before") or under ``weights`` ("after").

    Every statistic is invariant to scaling a covariate column or the weights: columns are
    taken in units of a power of two (exact) and weights divided by a power of two near
    their largest, so covariates near 1e±300 and weights near 2**±900 neither overflow nor
    underflow.

    **Warnings** (with ``weights``; one :class:`BalanceWarning` listing every case):
    (a) a level's Kish ESS after weighting below 10 % of its rows, or of the focal level's
    rows when they are fewer (``ESS < 0.1 min(n_g, n_focal)``, with :math:`n_g` the level's
    number of rows; a continuous treatment: of all rows); (b) an ``|SMD|`` (a binary covariate's raw
    difference; ``|corr|`` for a continuous treatment) after weighting above
    ``thresholds['smd']`` (``['corr']``), 0.1 without, naming the covariates (the first 5,
    then how many more); (c) no overlap: a covariate whose ranges ``[min, max]`` over the
    rows of positive weight of two compared levels are disjoint.

    References
    ----------
    Greifer, N. cobalt: Covariate Balance Tables and Plots (R package), ``bal.tab``,
    ``col_w_smd``.  Huling, J. D. and Mak, S. (2024). Energy balancing of covariate
    distributions. Journal of Causal Inference 12(1).

    Examples
    --------
    >>> import numpy as np, pandas as pd, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"age": rng.normal(50, 10, 80).round(),
    ...                    "smoker": rng.integers(0, 2, 80),
    ...                    "region": rng.choice(["north", "south", "west"], 80)})
    >>> t = (df["age"] + rng.normal(0, 10, 80) > 50).astype(int)
    >>> bt = es.balance_table(df, t, thresholds={"smd": 0.1})
    >>> bt.table.round(3)
                     type  smd_before  var_ratio_before  ks_before  smd_balanced
    covariate
    age           contin.       1.048             1.464      0.554         False
    smoker         binary      -0.053               NaN      0.053          True
    region_north   binary       0.015               NaN      0.015          True
    region_south   binary      -0.107               NaN      0.107         False
    region_west    binary       0.091               NaN      0.091          True

    With weights, the "after" columns; an ATT result sets the denominator (the treated's
    standard deviation):

    >>> X = df[["age", "smoker"]]
    >>> res = es.energy_balancing_weights(X, t, estimand="ATT")
    >>> bt = es.balance_table(X, t, res)
    >>> bt.estimand, bt.focal, list(bt.table.columns)
    ('ATT', 1, ['type', 'smd_before', 'smd_after', 'var_ratio_before', 'var_ratio_after', 'ks_before', 'ks_after'])
    >>> bool(bt.energy_after < bt.energy_before)
    True

    From a formula (formulaic), the table of the same columns:

    >>> bt = es.balance_table("t ~ age + smoker", data=df.assign(t=t), weights=res)
    >>> bt.formula, list(bt.table.index)
    ('t ~ age + smoker', ['age', 'smoker'])
    """
    if treatment_kind not in KINDS:
        raise ValueError(f"`treatment_kind` must be one of 'auto', 'categorical', 'continuous'; got "
                         f"{treatment_kind!r}.")
    if not isinstance(warn, (bool, np.bool_)):
        raise TypeError(f"`warn` must be True or False; got {warn!r}.")
    X, treatment, form = _forms.formula_inputs(X, treatment, data, "balance_table")
    weights, res_estimand, res_focal = _unpack_weights(weights, X)
    X, treatment = _split_treatment(X, treatment)
    X, _ = expand_factors(X)
    weights = align_weights(X, weights, "weights")
    base_weights = align_weights(X, base_weights, "base_weights")
    Z, t, index, columns = _forms.covariates_and_treatment(X, treatment)
    n, d = Z.shape
    names = columns if columns is not None else [f"x{j}" for j in range(d)]
    # working units: weights over a power of two near their largest, columns likewise (exact)
    s, w = _working_weights(base_weights, weights, n)
    Zw = np.ldexp(Z, -column_shifts(Z)[None, :])
    binary, C = _binary_coded(Zw)
    continuous = _is_continuous(t, treatment_kind)
    limits = _check_thresholds(thresholds, continuous)
    # the energy of the standardised covariates is scale-free: from the working units
    Zs, _ = _forms.standardise(Z if standardize is None else Zw, standardize, s)
    nt = check_n_threads(n_threads)
    met = resolve_metric("energy", 1.0)
    rows = pd.Index(names, name="covariate")
    data = {"type": np.where(binary, "binary", "contin.")}
    issues = []
    if continuous:
        _refuse_estimand(estimand, focal)
        corr, e0, e1, ess = _continuous_stats(t, n, C, s, w, Zs, met, nt)
        data.update(corr)
        table = pd.DataFrame(data, index=rows)
        rules = {"ess_fraction": ESS_FRACTION, "corr": limits.get("corr", IMBALANCE)}
        if w is not None:
            issues = _issues(table, ess, rules, "corr", [])
        return _finish(table, "continuous", e0, e1, ess, None, None, limits, rules, issues, warn,
                       form)
    lab = _forms.treatment_groups(t, n)
    _check_levels(lab, s, w)
    estimand, focal = _estimand_focal(estimand, focal, res_estimand, res_focal, lab.groups)
    fc = None if focal is None else list(lab.groups).index(focal)
    pairs = _compared_pairs(fc, lab.k)
    data.update(_categorical_columns(Zw, C, binary, lab, s, w, fc, pairs))
    ess = _level_ess(lab, s, w)
    table = pd.DataFrame(data, index=rows)
    rules = {"ess_fraction": ESS_FRACTION, "smd": limits.get("smd", IMBALANCE)}
    if w is not None:
        issues = _issues(table, ess, rules, "smd",
                         _no_overlap(Zw, lab, w, pairs, names), focal)
    return _finish(table, "categorical", _level_energy(Zs, lab, s, met, nt),
                   np.nan if w is None else _level_energy(Zs, lab, w, met, nt), ess,
                   estimand, focal, limits, rules, issues, warn, form)


def _split_treatment(X, treatment):
    """``(X, treatment)``: a treatment named as a column of the DataFrame ``X`` taken out of it."""
    if isinstance(X, pd.DataFrame) and isinstance(treatment, str):
        if treatment not in X.columns:
            _forms.covariates_and_treatment(X, treatment)      # its KeyError names the column
        X, treatment = X.drop(columns=[treatment]), X[treatment]
    return X, treatment


def _working_weights(base_weights, weights, n):
    """The checked base weights and weights (None: none) over a power of two near their largest."""
    s = _forms.check_base_weights(base_weights, n)
    w = None if weights is None else _forms.check_weights(weights, n, "weights")
    s = np.ldexp(s, -pow2_shift(s))
    w = None if w is None else np.ldexp(w, -pow2_shift(w))
    return s, w


def _refuse_estimand(estimand, focal):
    """``estimand`` and ``focal`` given with a continuous treatment are an error."""
    if estimand is not None or focal is not None:
        raise ValueError("`estimand` and `focal` are for a categorical treatment (they choose "
                         f"the SMD's denominator); got estimand={estimand!r}, focal={focal!r} "
                         "with a continuous one.")


def _continuous_stats(t, n, C, s, w, Zs, met, nt):
    """A continuous treatment's correlation columns, distance correlations and ESS table."""
    data = {}
    a = _forms.as_treatment_values(t, n)
    a = np.ldexp(a, -pow2_shift(a))
    data["corr_before"] = [_wcorr(a[:, 0], C[:, j], s) for j in range(C.shape[1])]
    if w is not None:
        data["corr_after"] = [_wcorr(a[:, 0], C[:, j], w) for j in range(C.shape[1])]
    As = _forms.standardise(a, "studentized", s)[0]
    e0 = _weighted_dcor(As, Zs, s, met, nt)
    e1 = np.nan if w is None else _weighted_dcor(As, Zs, w, met, nt)
    ess = pd.DataFrame({"n": [n], "ess_before": [_forms.ess(s)],
                        "ess_after": [np.nan if w is None else _forms.ess(w)]},
                       index=pd.Index(["all"], name="treatment"))
    return data, e0, e1, ess


def _weighted_dcor(As, Zs, v, met, nt):
    """Weighted distance correlation (weighted double centring) of ``As`` and ``Zs``, streamed."""
    (cov, va, vb), _, _ = weighted_dcov_means(As, Zs, v / v.sum(), met, nt)
    return 0.0 if va <= 0 or vb <= 0 else float(np.sqrt(max(cov, 0.0) / np.sqrt(va * vb)))


def _check_levels(lab, s, w):
    """Base weights and weights (if given) must not be all zero within a treatment level."""
    for g, name in enumerate(lab.groups):
        sel = lab.codes == g
        if not (s[sel] > 0).any():
            raise ValueError(f"`base_weights` must not be all zero within a treatment level; they "
                             f"are in level {name!r}.")
        if w is not None and not (w[sel] > 0).any():
            raise ValueError(f"`weights` must not be all zero within a treatment level; they are "
                             f"in level {name!r}.")


def _estimand_focal(estimand, focal, res_estimand, res_focal, groups):
    """The checked estimand and focal level (by default those of a weights result, else 'ATE')."""
    if estimand is None:
        estimand = res_estimand if res_estimand is not None else "ATE"
        focal = res_focal if (focal is None and res_estimand is not None) else focal
    estimand = _check_estimand(estimand)
    return estimand, _focal_level(estimand, focal, groups)


def _compared_pairs(fc, k):
    """The compared pairs of level codes: all of them, or each level with the focal one ``fc``."""
    return list(combinations(range(k), 2)) if fc is None else \
        [(min(fc, g), max(fc, g)) for g in range(k) if g != fc]


def _categorical_columns(Zw, C, binary, lab, s, w, fc, pairs):
    """The smd, var_ratio and ks columns, before and after (with ``w``) weighting."""
    den = _denominators(Zw, lab.codes, lab.k, s, fc)
    before, und0 = _categorical_stats(C, binary, lab.codes, lab.k, s, den, pairs)
    after, und1 = (None, set()) if w is None else \
        _categorical_stats(C, binary, lab.codes, lab.k, w, den, pairs)
    if und0 | und1:
        from .._core._permutation import DegenerateStatisticWarning

        named = [lab.groups[g] for g in sorted(und0 | und1)]
        _warn(f"`balance_table`: level(s) {named} of the treatment have at most one positive weight "
             "(before or after weighting): their weighted variance is undefined, so the variance "
             "ratio is NaN; the SMD (its denominator is from the base weights, and only if the "
             "level has two) and the KS distance are given.", DegenerateStatisticWarning)
    data = {}
    for c, stat in enumerate(("smd", "var_ratio", "ks")):
        data[f"{stat}_before"] = before[:, c]
        if after is not None:
            data[f"{stat}_after"] = after[:, c]
    return data


def _level_ess(lab, s, w):
    """Per level: its rows and Kish's effective sample size before and after weighting."""
    return pd.DataFrame({"n": lab.sizes,
                         "ess_before": [_forms.ess(s[lab.codes == g]) for g in range(lab.k)],
                         "ess_after": [np.nan if w is None else _forms.ess(w[lab.codes == g])
                                       for g in range(lab.k)]},
                        index=pd.Index(lab.groups, name="treatment"))


def _level_energy(Zs, lab, v, met, nt):
    """The largest weighted energy distance between two levels, streamed."""
    tot = np.bincount(lab.codes, weights=v, minlength=lab.k)
    M, scale = weighted_group_sums(Zs, lab.codes, lab.k, v / tot[lab.codes], met, nt)
    M = scale.apply(M)
    return max(max(float(2.0 * M[g, h] - M[g, g] - M[h, h]), 0.0)
               for g, h in combinations(range(lab.k), 2))


def _no_overlap(Z, lab, w, pairs, names):
    """``(covariate, level g, level h)`` for each compared pair whose ranges of the covariate
    over the rows of positive weight are disjoint."""
    out = []
    live = w > 0
    lo = np.array([Z[live & (lab.codes == g)].min(axis=0) for g in range(lab.k)])
    hi = np.array([Z[live & (lab.codes == g)].max(axis=0) for g in range(lab.k)])
    for j, name in enumerate(names):
        for g, h in pairs:
            if hi[g, j] < lo[h, j] or hi[h, j] < lo[g, j]:
                out.append((name, lab.groups[g], lab.groups[h]))
    return out


def ess_floor(n, focal_n=None):
    """The effective sample size below which a level is named: ``ESS_FRACTION`` of its rows,
    or of the focal level's when that is smaller ('ATT'/'ATC': a level of 16 000 controls
    weighted towards 185 treated is well served by an ESS of 170)."""
    return ESS_FRACTION * (n if focal_n is None else min(n, focal_n))


def _issues(table, ess, rules, stat, no_overlap, focal=None):
    """The sentences of the :class:`BalanceWarning` (the rules in its docstring)."""
    issues = []
    focal_n = None if focal is None or focal not in ess.index else int(ess.loc[focal, "n"])
    thin = [(g, r.ess_after, int(r.n)) for g, r in ess.iterrows()
            if r.ess_after < rules["ess_fraction"] / ESS_FRACTION * ess_floor(r.n, focal_n)]
    if thin:
        issues.append("effective sample size after weighting below "
                      f"{rules['ess_fraction']:.0%} of the rows"
                      + (" (of the focal level's, when fewer)" if focal_n is not None else "")
                      + " in "
                      + ", ".join(f"level {g!r} ({e:.1f} of {m})" if g != "all" else
                                  f"the sample ({e:.1f} of {m})" for g, e, m in thin))
    col = table[f"{stat}_after"].to_numpy(dtype=float)
    big = [c for c, v in zip(table.index, col) if abs(v) > rules[stat]]
    if big:
        binary = stat == "smd" and (table.loc[big, "type"] == "binary").any()
        what = ("|SMD|" + (" (binary covariates: |raw difference|)" if binary else "")
                if stat == "smd" else "|correlation|")
        issues.append(f"{what} after weighting above {rules[stat]:g} for {len(big)} "
                      f"covariate(s): {_short(big)}")
    if no_overlap:
        cov = list(dict.fromkeys(c for c, _, _ in no_overlap))
        c0, g, h = no_overlap[0]
        issues.append(f"no overlap: the ranges of {len(cov)} covariate(s) over the rows of "
                      f"positive weight do not intersect between two levels: {_short(cov)} "
                      f"(e.g. {c0!r} between levels {g!r} and {h!r})")
    return issues


def _finish(table, kind, e0, e1, ess, estimand, focal, limits, rules, issues, warn_, form=None):
    """The ``_balanced`` columns, the warning, the result."""
    has_after = any(c.endswith("_after") for c in table.columns)
    for stat, thr in limits.items():
        col = table[f"{stat}_{'after' if has_after else 'before'}"].to_numpy(dtype=float)
        ok = pd.array(np.abs(col) < thr, dtype="boolean")
        ok[np.isnan(col)] = pd.NA
        table[f"{stat}_balanced"] = ok
    if issues and warn_:
        _warn("`balance_table`: " + "; ".join(issues) + ". (Pass warn=False to silence; the "
             "result's `issues` keeps this text.)", BalanceWarning)
    return BalanceTableResult(table, kind, e0, e1, ess, estimand, focal, limits, rules,
                              tuple(issues), None if form is None else form.formula)
