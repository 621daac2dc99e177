r"""The energy decomposition W + S = T of a partition and the DISCO ratio F.

Rizzo and Székely (2010), "DISCO analysis: A nonparametric extension of analysis of
variance", Ann. Appl. Stat. 4(2); Székely and Rizzo (2013), "Energy statistics: A
class of statistics based on distances", J. Stat. Plan. Inference 143(8).

The module is named for the decomposition so that it does not shadow the
public function :func:`energystats.dispersion`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ._core import _engine, _dask
from ._core._metrics import resolve_metric
from ._core._validation import as_square_matrix, check_n_threads
from ._core._frames import grouped_data

__all__ = ["dispersion", "DispersionResult", "dispersion_from_sums"]


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
    """

    W: float
    S: float
    T: float
    F: float
    sizes: np.ndarray
    groups: list
    g: np.ndarray = field(repr=False)
    columns: list | None = field(default=None, repr=False)

    @property
    def n_samples(self):
        return int(np.sum(self.sizes))

    @property
    def k(self):
        return len(self.groups)

    @property
    def df(self):
        """Degrees of freedom (between, within, total) = (k − 1, n − k, n − 1)."""
        n, k = self.n_samples, self.k
        return k - 1, n - k, n - 1

    def to_frame(self, kind="components"):
        """Tidy DataFrame.

        ``kind='components'``: rows Between/Within/Total with columns ``df``,
        ``dispersion`` and ``F``.  ``kind='g'``: the k×k matrix ``g`` labelled
        by the groups.  ``kind='groups'``: one row per group with its size
        and within-group mean :math:`g(C_j, C_j)`.
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
            return pd.DataFrame({"size": self.sizes, "g_within": np.diag(self.g)},
                                index=pd.Index(self.groups, name="group"))
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


def dispersion(X, labels=None, *, by=None, columns=None, dropna=False, numeric_only=False,
               metric="energy", exponent=1.0, sigma=1.0, method="auto", n_threads=None, backend=None,
               compute=True):
    r"""Energy dispersion of a partition: W (within), S (between), T (total), F.

    Parameters
    ----------
    X : array_like or DataFrame, shape (n_samples, n_features)
        Data; with ``metric='precomputed'`` an n×n semimetric matrix.
    labels : array_like of shape (n_samples,), optional
        Group of each row: ints, strings, a Categorical or a Series.  A
        Series is aligned with an indexed ``X`` by its index (a mismatch is
        an error); arrays and lists are taken by position.
    by : str or list of str, optional
        With a DataFrame ``X``: the grouping column(s) instead of ``labels``.
    columns : list, optional
        With a DataFrame ``X``: the columns used (default: every column but
        ``by``).
    dropna : bool, default False
        With a DataFrame ``X``: drop rows with missing values in the used
        columns or the grouping instead of raising an error.
    numeric_only : bool, default False
        With a DataFrame ``X`` and ``columns=None``: leave wholly non-numeric
        columns out instead of raising an error that names them (the result's
        ``columns`` records what was used).
    metric : {'energy', 'laplacian', 'gaussian', 'precomputed'} or callable
        The semimetric rho (as in :func:`energystats.pairwise`).
    exponent, sigma, n_threads
        As in :func:`energystats.pairwise`.
    method : {'auto', 'sorted', 'pairwise'}, default 'auto'
        'auto' uses the O(n log n) sorted formulas for 1-D data with
        ``metric='energy', exponent=1`` (docs: guide, "One-dimensional data").
    backend : {None, 'threads', 'dask'}, default None
        Where the pair sums are computed: this process's threads, or a Dask
        graph of tile tasks (on the current ``distributed.Client``, else Dask's
        local scheduler).  None: 'dask' when the data are a Dask collection,
        else 'threads'.  Same numbers either way (see the guide page "Scaling
        out"); needs the ``dask`` extra.
    compute : bool, default True
        With the Dask backend, ``False`` returns a
        :class:`dask.delayed.Delayed` of the result instead of computing it.

    Returns
    -------
    DispersionResult
        Fields ``W``, ``S``, ``T``, ``F``, ``sizes``, ``groups``, ``g``;
        ``.to_frame()`` gives the table.

    Notes
    -----
    With :math:`g(C_i, C_j) = \frac{1}{n_i n_j}\sum_{x\in C_i}\sum_{y\in C_j}\rho(x,y)`
    (V-statistics; no square root is taken),

    .. math::

        W = \sum_j \frac{n_j}{2} g(C_j, C_j), \quad
        S = \sum_{i<j} \frac{n_i n_j}{2n}\,[2g(C_i,C_j) - g(C_i,C_i) - g(C_j,C_j)], \quad
        T = \frac{n}{2} g(X, X),

    and :math:`W + S = T` for every partition.  ``S`` is computed from its own
    formula, not as ``T - W``.  Groups of one point are allowed (their
    :math:`g(C, C) = 0`).  This matches the between/within decomposition of R
    ``energy::disco``.  The k×k sums are streamed: no n×n matrix is formed
    for built-in metrics.

    References
    ----------
    .. [1] Rizzo, M. L. and Székely, G. J. (2010). DISCO analysis: A
       nonparametric extension of analysis of variance. Ann. Appl. Stat. 4(2).
    .. [2] França, G., Rizzo, M. L. and Vogelstein, J. T. (2021). Kernel
       k-Groups via Hartigan's Method. eqs. 4–5.

    Examples
    --------
    >>> import energystats as es
    >>> res = es.dispersion([0.0, 1.0, 5.0, 6.0], ["a", "a", "b", "b"])
    >>> res
    DispersionResult(W=1, S=4.5, T=5.5, F=9, sizes=[2, 2], groups=['a', 'b'])
    >>> res.W + res.S == res.T
    True
    """
    met = resolve_metric(metric, exponent, sigma)
    if _dask.use_dask(backend, compute, (X, labels)):
        return _dispersion_dask(X, labels, by, columns, dropna, numeric_only, met, method, n_threads,
                                compute)
    nt = check_n_threads(n_threads)
    data = grouped_data(X, labels, by=by, columns=columns, dropna=dropna, numeric_only=numeric_only)
    Xa = data.X
    if met.kind == "precomputed":
        Xa = as_square_matrix(Xa, "X")
    sorted_path = met.kind != "precomputed" and _engine.use_sorted_path(Xa, met, method)
    M, scale = _engine.group_sum_matrix(Xa, data.labels.codes, data.labels.k, met, nt,
                                        sorted_path=sorted_path, working_units=True)
    res = dispersion_from_sums(M, data.labels.sizes, data.labels.groups)
    _warn_undefined_f(res)
    return replace(rescale(res, scale), columns=data.columns)


def _warn_undefined_f(res):
    """F needs k ≥ 2 groups and n > k points (W, S and T are defined regardless): say so
    instead of a silent NaN, as SciPy warns for its degenerate inputs."""
    from ._core._permutation import DegenerateStatisticWarning
    from ._core._validation import warn

    n, k = res.n_samples, res.k
    if k < 2 or n <= k:
        why = f"{k} group" if k < 2 else f"n = k = {n} (every group a single point)"
        warn(f"`dispersion`: F is NaN: it needs at least 2 groups and more points than groups; "
             f"got {why}. W, S and T are given.", DegenerateStatisticWarning)


def _dispersion_dask(X, labels, by, columns, dropna, numeric_only, met, method, n_threads, compute):
    """:func:`dispersion` on the Dask backend (:mod:`energystats._core._dask`)."""
    if met.kind != "builtin":
        raise TypeError(f"backend='dask' needs a built-in metric ('energy', 'laplacian', 'gaussian'); "
                        f"got {met.name!r}.")
    if method not in ("auto", "pairwise"):
        raise ValueError(f"`method={method!r}` is not available with backend='dask' (its tiles are the "
                         "'pairwise' method); use method='auto'.")
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    if labels is None and by is None:
        raise TypeError("`labels` (or `by=` with a DataFrame) is required.")
    if not _dask.is_dask(X) and not _dask.is_dask(labels):
        # in memory already: the threads backend's input layer (labels aligned on the index, dropna)
        g = grouped_data(X, labels, by=by, columns=columns, dropna=dropna, numeric_only=numeric_only)
        data, lab, cols = _dask.as_dask_data(g.X, "X"), g.labels, g.columns
    else:
        data, lab, cols, _ = _dask.grouped_input((X,), labels, by, columns, None, dropna,
                                                    numeric_only, "dispersion")
    M, scale = _dask.lazy_group_sums(data, lab.codes, lab.k, met, nt)
    return _dask.finish(_dispersion_finish, M, scale, lab.sizes, list(lab.groups), cols,
                           compute=compute)


def _dispersion_finish(M, scale, sizes, groups, cols):
    return replace(rescale(dispersion_from_sums(M, sizes, groups), scale), columns=cols)


def rescale(res, scale):
    """A :class:`DispersionResult` from working units to the data's units (F is scale-free)."""
    if scale.identity:
        return res
    return replace(res, W=scale.apply(res.W), S=scale.apply(res.S), T=scale.apply(res.T),
                   g=scale.apply(res.g))
