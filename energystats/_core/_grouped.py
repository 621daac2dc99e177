"""Statistics of grouped data from the k×k group-sum matrices (below every concept).

The layout of groups within strata, the units a test relabels, the k-sample energy and
DISCO statistics evaluated on batches of group-sum matrices with their rounding
allowances, and the W/S/T dispersion decomposition (:class:`DispersionResult`) of one
group-sum matrix: shared by homogeneity's tests and clustering's significance test.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ._display import notebook_display
from . import _permutation

__all__ = ["DispersionResult", "dispersion_from_sums"]


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
        compared (:func:`energystats._core._permutation.pvalue_from_null`): ``S + W`` is the same
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
        total = S + W  # each share below is at most 1: no square of a sum that can overflow
        return (W / total) * (tS / total) + (abs(S) / total) * (tW / total)


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


@notebook_display
@dataclass(frozen=True)
class DispersionResult:
    r"""Energy decomposition of a partition: :math:`W + S = T`.

    Attributes
    ----------
    W : float
        Within-group dispersion :math:`\sum_j \frac{n_j}{2} g(C_j, C_j)`.
    S : float
        Between-group statistic
        :math:`\sum_{i<j} \frac{n_i n_j}{2n}[2g(C_i,C_j) - g(C_i,C_i) - g(C_j,C_j)]`.
    T : float
        Total dispersion :math:`\frac{n}{2} g(X, X)`.
    F : float
        DISCO ratio :math:`\frac{S/(k-1)}{W/(n-k)}` (NaN, with a
        :class:`~energystats.DegenerateStatisticWarning`, when k < 2 or n = k;
        ``inf`` when W = 0 < S).
    sizes : ndarray of int, shape (k,)
    groups : list
        Group names, in the order of ``sizes`` and of the rows of ``g``.
    g : ndarray, shape (k, k)
        Mean semimetric values :math:`g(C_i, C_j)`.
    columns : list or None
        The DataFrame columns used as data (None for array input).
    weights : str or None
        None without sample weights; with them, the name of the weights'
        DataFrame column (not a variable) or ``"array"``.
    weight_totals : ndarray of float, shape (k,), or None
        With weights: each group's total weight :math:`N_j`, which takes the
        place of :math:`n_j` above (and :math:`N = \sum_j N_j` that of n, also
        in F and ``df``).
    """

    W: float
    S: float
    T: float
    F: float
    sizes: np.ndarray
    groups: list
    g: np.ndarray = field(repr=False)
    columns: list | None = field(default=None, repr=False)
    weights: str | None = field(default=None, repr=False)
    weight_totals: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_samples(self):
        return int(np.sum(self.sizes))

    @property
    def k(self):
        return len(self.groups)

    @property
    def df(self):
        """Degrees of freedom (between, within, total) = (k − 1, n − k, n − 1) (with weights,
        N = the total weight in place of n)."""
        n, k = self.n_samples, self.k
        if self.weight_totals is not None:
            n = float(np.sum(self.weight_totals))
        return k - 1, n - k, n - 1

    def to_frame(self, kind="components"):
        """Tidy DataFrame.

        ``kind='components'``: rows Between/Within/Total with columns ``df``,
        ``dispersion`` and ``F``.  ``kind='g'``: the k×k matrix ``g`` labelled
        by the groups.  ``kind='groups'``: one row per group with its size
        and within-group mean :math:`g(C_j, C_j)` (with weights also its total
        weight ``weight_total``).
        """
        if kind == "components":
            df_b, df_w, df_t = self.df
            return pd.DataFrame(
                {"df": [df_b, df_w, df_t], "dispersion": [self.S, self.W, self.T],
                 "F": [self.F, np.nan, np.nan]},
                index=pd.Index(["Between", "Within", "Total"], name="component"),
            )
        if kind == "g":
            idx = pd.Index(self.groups, name="group")
            return pd.DataFrame(self.g, index=idx, columns=idx.rename(None))
        if kind == "groups":
            cols = {"size": self.sizes, "g_within": np.diag(self.g)}
            if self.weight_totals is not None:  # with weights: N_j, which stands for n_j
                cols = {"size": self.sizes, "weight_total": self.weight_totals, "g_within": np.diag(self.g)}
            return pd.DataFrame(cols, index=pd.Index(self.groups, name="group"))
        raise ValueError(f"`kind` must be 'components', 'g' or 'groups'; got {kind!r}.")

    def __repr__(self):
        return (f"DispersionResult(W={self.W:.6g}, S={self.S:.6g}, T={self.T:.6g}, "
                f"F={self.F:.6g}, sizes={list(map(int, self.sizes))}, groups={self.groups})")


def dispersion_from_sums(M, sizes, groups):
    """Build a :class:`DispersionResult` from the k×k group-sum matrix ``M``."""
    sizes = np.asarray(sizes, dtype=np.intp)
    n, k = int(sizes.sum()), sizes.size
    nn = sizes.astype(np.float64)
    g = M / np.outer(nn, nn)
    gd = np.diag(g)
    W = float(np.sum(nn / 2.0 * gd))
    E = 2.0 * g - gd[:, None] - gd[None, :]
    iu = np.triu_indices(k, 1)
    S = float(np.sum((np.outer(nn, nn) / (2.0 * n) * E)[iu]))
    T = float(M.sum() / (2.0 * n))
    if k < 2 or n <= k:
        F = float("nan")
    elif W > 0:
        F = (S / (k - 1)) / (W / (n - k))
    else:
        F = float("inf") if S > 0 else float("nan")
    return DispersionResult(W, S, T, float(F), sizes, list(groups), g)


def rescale(res, scale):
    """A :class:`DispersionResult` from working units to the data's units (F is scale-free)."""
    if scale.identity:
        return res
    return replace(res, W=scale.apply(res.W), S=scale.apply(res.S), T=scale.apply(res.T),
                   g=scale.apply(res.g))
