"""The W/S/T dispersion decomposition of grouped data (:func:`dispersion`).
"""
from __future__ import annotations

from dataclasses import replace

from .._core import _dask, _engine
from .._core._frames import grouped_data
from .._core._input import condensed_as_square
from .._core._grouped import DispersionResult, dispersion_from_sums, rescale
from .._core._metrics import resolve_metric
from .._core._validation import as_square_matrix, check_n_threads
from ._dask import _dispersion_dask

__all__ = ["dispersion", "DispersionResult", "dispersion_from_sums"]


def dispersion(X, labels=None, *, by=None, columns=None, dropna=False, numeric_only=False,
               metric="energy", exponent=1.0, sigma=1.0, check_negative_type=True, method="auto",
               weights=None, n_threads=None,
               backend=None, compute=True):
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
    metric : str or callable, default 'energy'
        The semimetric rho (as in :func:`energystats.pairwise`), or 'precomputed'.
        Also SciPy's names of a metric of negative type ('euclidean', 'sqeuclidean',
        'cityblock', 'hamming', 'canberra', 'chebyshev' with at most 2 features);
        see the guide page "Choosing a semimetric".
    exponent, sigma, n_threads, check_negative_type
        As in :func:`energystats.pairwise`.
    method : {'auto', 'sorted', 'pairwise'}, default 'auto'
        'auto' uses the O(n log n) sorted formulas for 1-D data with
        ``metric='energy', exponent=1`` (docs: guide, "One-dimensional data").
    weights : array_like or str, optional
        Sample (frequency) weights of the rows: finite, non-negative, not all
        zero in any group.  A string names a column of the DataFrame ``X``,
        which is then not a variable.  Each point has the mass
        :math:`w_i / N_j` in its group, :math:`N_j = \sum_{i \in C_j} w_i`
        takes the place of :math:`n_j` and :math:`N = \sum_j N_j` that of n
        (also in F and its degrees of freedom): integer weights give the
        decomposition of the data with each row repeated that many times.
        The streamed O(n²) pass (the sorted 1-D formulas have no weights);
        not with ``dropna=True`` or on the Dask backend.  The result records
        them (``weights``, ``weight_totals``).
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
    for the metrics with a compiled kernel ('energy' and its SciPy names,
    'laplacian', 'gaussian', 'cityblock'; the other SciPy names go through
    the matrix).

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
    >>> es.dispersion([0.0, 1.0, 5.0, 6.0], ["a", "a", "b", "b"], weights=[1, 2, 1, 1])
    DispersionResult(W=1.16667, S=5.23333, T=6.4, F=13.4571, sizes=[2, 2], groups=['a', 'b'])
    """
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    if weights is not None:
        if _dask.use_dask(backend, compute, (X, labels)):
            raise TypeError("`weights` are not available with backend='dask'; use the threads "
                            "backend (in-memory data).")
        return _weighted_dispersion(X, labels, by, columns, dropna, numeric_only, met, method,
                                    weights, n_threads)
    if _dask.use_dask(backend, compute, (X, labels)):
        return _dispersion_dask(X, labels, by, columns, dropna, numeric_only, met, method, n_threads,
                                compute)
    nt = check_n_threads(n_threads)
    if met.kind == "precomputed":  # a condensed vector: n points, not pairs
        X = condensed_as_square(X)
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


def _weighted_dispersion(X, labels, by, columns, dropna, numeric_only, met, method, weights,
                         n_threads):
    """:func:`dispersion` with sample weights (frequency weights; masses w_i / N_j in group j)."""
    import math

    import numpy as np

    from .._core._weights import as_weights, weight_column, weighted_group_sums

    if dropna:
        raise TypeError("`weights` with `dropna=True` is not available: drop the rows with missing "
                        "values (and their weights) first.")
    nt = check_n_threads(n_threads)
    if met.kind == "precomputed":  # a condensed vector: n points, not pairs
        X = condensed_as_square(X)
    X, weights, wcol = weight_column(X, weights, "X", "weights", columns)
    data = grouped_data(X, labels, by=by, columns=columns, dropna=False, numeric_only=numeric_only)
    Xa = data.X
    if met.kind == "precomputed":
        Xa = as_square_matrix(Xa, "X")
    elif _engine.use_sorted_path(Xa, met, method) and method == "sorted":
        raise ValueError("`method='sorted'` is not available with `weights`; use method='auto' "
                         "(the streamed pass).")
    lab = data.labels
    w = as_weights(weights, Xa.shape[0], "weights", data.index)
    totals = np.array([math.fsum(w[lab.codes == j]) for j in range(lab.k)])
    if np.any(totals == 0):
        j = int(np.flatnonzero(totals == 0)[0])
        raise ValueError(f"`weights` must not all be 0 within a group; group {lab.groups[j]!r} has "
                         f"only zero weights.")
    g, scale = weighted_group_sums(Xa, lab.codes, lab.k, w / totals[lab.codes], met, nt)
    N, k = float(math.fsum(totals)), lab.k
    gd = np.diag(g)
    W = float(np.sum(totals / 2.0 * gd))
    E = 2.0 * g - gd[:, None] - gd[None, :]
    iu = np.triu_indices(k, 1)
    # N_i N_j / N as N_i (N_j / N): the weights may have any common scale (only N - k in F
    # sees it), and N_i N_j itself overflows (weights ~1e300) or underflows (~1e-300)
    NN = np.outer(totals, totals / N)
    S = float(np.sum((NN / 2.0 * E)[iu]))
    T = float(np.sum(NN * g) / 2.0)
    if k < 2 or N <= k:
        F = float("nan")
    elif W > 0:
        F = (S / (k - 1)) / (W / (N - k))
    else:
        F = float("inf") if S > 0 else float("nan")
    res = DispersionResult(W, S, T, float(F), np.asarray(lab.sizes, dtype=np.intp), list(lab.groups),
                           g, weights=wcol if wcol is not None else "array", weight_totals=totals)
    _warn_undefined_f(res, N)
    return replace(rescale(res, scale), columns=data.columns)


def _warn_undefined_f(res, n=None):
    """F needs k ≥ 2 groups and n > k points (W, S and T are defined regardless): say so
    instead of a silent NaN, as SciPy warns for its degenerate inputs."""
    from .._core._permutation import DegenerateStatisticWarning
    from .._core._validation import warn

    n, k = (res.n_samples if n is None else n), res.k
    if k < 2 or n <= k:
        if k < 2:
            why = f"{k} group"
        elif res.weight_totals is not None:  # weights count as frequencies: N = their total
            why = (f"weights totalling N = {n:g} for k = {k} groups (weights count as "
                   f"frequencies, so F's degrees of freedom are k - 1 and N - k; scale the "
                   f"weights, e.g. to a mean of 1, for the F of n = {res.n_samples} points)")
        else:
            why = f"n = k = {n} (every group a single point)"
        warn(f"`dispersion`: F is NaN: it needs at least 2 groups and more points than groups; "
             f"got {why}. W, S and T are given.", DegenerateStatisticWarning)
    elif res.W == 0 and res.S == 0:
        warn("`dispersion`: F is NaN (0/0): every distance is 0 (all rows identical), so there "
             "is no dispersion within or between the groups. W, S and T are given (all 0).",
             DegenerateStatisticWarning)
