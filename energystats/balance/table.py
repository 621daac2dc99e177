"""The balance table: per-covariate and overall balance before and after weighting, as
R ``cobalt``'s ``bal.tab`` reports it."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from .._core._metrics import resolve_metric
from .._core._validation import check_n_threads
from .._core._weights import weighted_dcov_means, weighted_group_sums
from . import _forms

__all__ = ["balance_table", "BalanceTableResult"]

KINDS = ("auto", "categorical", "continuous")


@dataclass(frozen=True)
class BalanceTableResult:
    r"""Result of :func:`balance_table`.

    Attributes
    ----------
    table : DataFrame
        One row per covariate.  Categorical treatment: ``smd`` (standardised mean
        difference), ``var_ratio`` (variance ratio, the larger group variance over the
        smaller one) and ``ks`` (Kolmogorov-Smirnov distance of the weighted distribution
        functions), each ``_before`` (base weights) and ``_after`` (``weights``; only when
        given); for more than 2 levels each is the largest over the pairs of levels.
        Continuous treatment: ``corr_before``/``corr_after``, the weighted Pearson
        correlation of treatment and covariate.
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
    """

    table: pd.DataFrame
    kind: str
    energy_before: float
    energy_after: float
    ess: pd.DataFrame

    def to_frame(self):
        """The per-covariate table."""
        return self.table

    def plot(self, ax=None, stat=None, threshold=0.1):
        """A Love plot: ``|stat|`` of each covariate before and after weighting (matplotlib,
        imported here).  ``stat`` defaults to 'smd' ('corr' for a continuous treatment);
        a dashed line marks ``threshold``.  Returns the Axes."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("BalanceTableResult.plot needs matplotlib: pip install matplotlib.") \
                from None
        stat = stat or ("corr" if self.kind == "continuous" else "smd")
        cols = [c for c in (f"{stat}_before", f"{stat}_after") if c in self.table.columns]
        if not cols:
            raise ValueError(f"`stat` must name a statistic of the table "
                             f"({sorted({c.rsplit('_', 1)[0] for c in self.table.columns})}); "
                             f"got {stat!r}.")
        if ax is None:
            _, ax = plt.subplots(figsize=(5, 0.35 * len(self.table) + 1.2))
        y = np.arange(len(self.table))
        for c, marker in zip(cols, ("o", "s")):
            ax.scatter(np.abs(self.table[c].to_numpy()), y, marker=marker,
                       label=c.rsplit("_", 1)[1])
        ax.axvline(threshold, color="grey", linestyle="--", linewidth=1)
        ax.set_yticks(y)
        ax.set_yticklabels([str(i) for i in self.table.index])
        ax.set_xlabel(f"|{stat}|")
        ax.legend()
        return ax

    def __repr__(self):
        return (f"BalanceTableResult(kind={self.kind!r}, energy_before={self.energy_before:.4g}, "
                f"energy_after={self.energy_after:.4g}, covariates={len(self.table)})")


def _wmean_var(x, w):
    """Weighted mean and the unbiased weighted variance of ``cobalt`` (reliability weights)."""
    sw = w.sum()
    m = (w @ x) / sw
    denom = sw - (w @ w) / sw
    v = (w @ (x - m) ** 2) / denom if denom > 0 else np.nan
    return m, v


def _wks(x, wa, wb):
    """Largest distance of the weighted distribution functions of ``x`` under ``wa`` and ``wb``
    (each a weight vector that is zero outside its group)."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    diff = np.cumsum(wa[order] / wa.sum() - wb[order] / wb.sum())
    last = np.r_[xs[1:] != xs[:-1], True]       # the cdf at the last of tied values
    return float(np.abs(diff[last]).max())


def _categorical_stats(Z, codes, k, w, s, names=None):
    """Per covariate: (smd, var_ratio, ks), each the largest over the pairs of levels; the
    SMD's denominator is the pooled base-weighted standard deviation sqrt((v_g + v_h)/2)."""
    d = Z.shape[1]
    out = np.zeros((d, 3))
    undefined = set()
    for g, h in combinations(range(k), 2):
        ig, ih = codes == g, codes == h
        for j in range(d):
            x = Z[:, j]
            mg, vg = _wmean_var(x[ig], w[ig])
            mh, vh = _wmean_var(x[ih], w[ih])
            _, sg = _wmean_var(x[ig], s[ig])
            _, sh = _wmean_var(x[ih], s[ih])
            ks = _wks(x, np.where(ig, w, 0.0), np.where(ih, w, 0.0))
            out[j, 2] = max(out[j, 2], ks)
            if np.isnan([vg, vh, sg, sh]).any():
                # a level with at most one positive weight: its weighted variance is undefined
                # (reliability weights), so are its SMD and variance ratio -- NaN, never 0 or 1
                undefined.update(lv for lv, v in ((g, vg), (h, vh), (g, sg), (h, sh)) if np.isnan(v))
                out[j, :2] = np.nan
                continue
            pooled = np.sqrt((sg + sh) / 2)
            smd = (mh - mg) / pooled if pooled > 0 else 0.0
            vr = max(vg, vh) / min(vg, vh) if min(vg, vh) > 0 else (1.0 if vg == vh else np.inf)
            if np.isnan(out[j, 0]):
                continue
            if abs(smd) > abs(out[j, 0]):
                out[j, 0] = smd
            out[j, 1] = max(out[j, 1], vr)
    if undefined:
        from .._core._permutation import DegenerateStatisticWarning
        from .._core._validation import warn

        named = [names[g] if names is not None else g for g in sorted(undefined)]
        warn(f"`balance_table`: level(s) {named} of the treatment have at most one positive weight "
             "(before or after weighting): their weighted variance is undefined, so the SMD and "
             "variance ratio are NaN; the KS distance is given.", DegenerateStatisticWarning)
    return out


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


def balance_table(X, treatment, weights=None, *, base_weights=None, treatment_kind="auto",
                  standardize="studentized", n_threads=None):
    r"""Covariate balance before and after weighting.

    What R ``cobalt``'s ``bal.tab`` reports: per covariate, the standardised mean difference
    (denominator: the pooled standard deviation :math:`\sqrt{(s_0^2 + s_1^2)/2}` of the
    base-weighted levels), the variance ratio and the weighted Kolmogorov-Smirnov
    distance; overall, the weighted energy distance between the levels (Huling and Mak
    2024, "Energy balancing of covariate distributions"), or for a continuous treatment the
    weighted Pearson correlation per covariate and the weighted distance correlation
    overall; and Kish's effective sample size per level.

    Parameters
    ----------
    X : array_like or DataFrame, shape (n, d)
        Covariates (a DataFrame may also hold the treatment column).
    treatment : array_like, Series or str
        Treatment of each row, or a column of ``X``.
    weights : array_like or result, optional
        The weights to assess (finite, non-negative, not all zero in a level), or a
        :class:`BalancingWeightsResult`/:class:`IndependenceWeightsResult`.  Without them
        only the "before" columns are filled.
    base_weights : array_like, optional
        Sampling weights: the "before" state.
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

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(60, 2))
    >>> t = (x[:, 0] + rng.normal(size=60) > 0).astype(int)
    >>> bt = es.balance_table(x, t, es.energy_balancing_weights(x, t))
    >>> list(bt.table.columns)
    ['smd_before', 'smd_after', 'var_ratio_before', 'var_ratio_after', 'ks_before', 'ks_after']
    >>> bool(bt.energy_after < bt.energy_before)
    True
    """
    if treatment_kind not in KINDS:
        raise ValueError(f"`treatment_kind` must be one of 'auto', 'categorical', 'continuous'; got "
                         f"{treatment_kind!r}.")
    Z, t, index, columns = _forms.covariates_and_treatment(X, treatment)
    n, d = Z.shape
    names = columns if columns is not None else [f"x{j}" for j in range(d)]
    s = _forms.check_base_weights(base_weights, n)
    if weights is not None and hasattr(weights, "weights") and not isinstance(weights, pd.Series):
        weights = weights.weights
    w = None if weights is None else _forms.check_weights(weights, n, "weights")
    continuous = _is_continuous(t, treatment_kind)
    Zs, _ = _forms.standardise(Z, standardize, s)
    nt = check_n_threads(n_threads)
    met = resolve_metric("energy", 1.0)
    rows = pd.Index(names, name="covariate")
    if continuous:
        a = _forms.as_treatment_values(t, n)
        data = {"corr_before": [_wcorr(a[:, 0], Z[:, j], s) for j in range(d)]}
        if w is not None:
            data["corr_after"] = [_wcorr(a[:, 0], Z[:, j], w) for j in range(d)]
        As = _forms.standardise(a, "studentized", s)[0]

        def dcor(v):  # weighted distance correlation (weighted double centring), streamed
            (cov, va, vb), _, _ = weighted_dcov_means(As, Zs, v / v.sum(), met, nt)
            return 0.0 if va <= 0 or vb <= 0 else float(np.sqrt(max(cov, 0.0) / np.sqrt(va * vb)))

        e0 = dcor(s)
        e1 = np.nan if w is None else dcor(w)
        ess = pd.DataFrame({"n": [n], "ess_before": [_forms.ess(s)],
                            "ess_after": [np.nan if w is None else _forms.ess(w)]},
                           index=pd.Index(["all"], name="treatment"))
        return BalanceTableResult(pd.DataFrame(data, index=rows), "continuous", e0, e1, ess)
    lab = _forms.treatment_groups(t, n)
    for g, name in enumerate(lab.groups):
        sel = lab.codes == g
        if not (s[sel] > 0).any():
            raise ValueError(f"`base_weights` must not be all zero within a treatment level; they "
                             f"are in level {name!r}.")
        if w is not None and not (w[sel] > 0).any():
            raise ValueError(f"`weights` must not be all zero within a treatment level; they are "
                             f"in level {name!r}.")
    before = _categorical_stats(Z, lab.codes, lab.k, s, s, list(lab.groups))
    after = None if w is None else _categorical_stats(Z, lab.codes, lab.k, w, s, list(lab.groups))
    data = {}
    for c, name in enumerate(("smd", "var_ratio", "ks")):
        data[f"{name}_before"] = before[:, c]
        if after is not None:
            data[f"{name}_after"] = after[:, c]

    def energy(v):  # the largest weighted energy distance between two levels, streamed
        tot = np.bincount(lab.codes, weights=v, minlength=lab.k)
        M, scale = weighted_group_sums(Zs, lab.codes, lab.k, v / tot[lab.codes], met, nt)
        M = scale.apply(M)
        return max(max(float(2.0 * M[g, h] - M[g, g] - M[h, h]), 0.0)
                   for g, h in combinations(range(lab.k), 2))

    ess = pd.DataFrame({"n": lab.sizes,
                        "ess_before": [_forms.ess(s[lab.codes == g]) for g in range(lab.k)],
                        "ess_after": [np.nan if w is None else _forms.ess(w[lab.codes == g])
                                      for g in range(lab.k)]},
                       index=pd.Index(lab.groups, name="treatment"))
    return BalanceTableResult(pd.DataFrame(data, index=rows), "categorical", energy(s),
                              np.nan if w is None else energy(w), ess)
