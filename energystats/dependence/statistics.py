"""Distance covariance and correlation (Székely, Rizzo and Bakirov 2007): :func:`distance_stats`,
:func:`distance_covariance`, :func:`distance_correlation` and their squares.
"""
from __future__ import annotations

import pandas as pd

from .._core import _dask, _dask_pair_sums
from .._core._input import paired_variables
from .._core._metrics import compiled_only, resolve_metric
from .._core._pair_sums import _constancy, _sums
from .._core._validation import as_square_matrix, check_n_threads
from ._input import _check_estimator
from ._result import _check_constant, _finish, _stats_result

__all__ = ["distance_covariance", "distance_correlation", "distance_covariance_sqr",
           "distance_correlation_sqr", "distance_stats"]


def _stats(x, y, data, exponent, metric, sigma, n_threads, need_u=False, method="auto", backend=None,
           compute=True, weights=None, check_negative_type=True):
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    if weights is not None:
        if _dask.use_dask(backend, compute, (x, y)):
            raise TypeError("`weights` are not available with backend='dask'; use the threads "
                            "backend (in-memory data).")
        return _weighted_stats(x, y, data, met, n_threads, need_u, method, weights)
    if _dask.use_dask(backend, compute, (x, y)):
        return _stats_dask(x, y, data, met, n_threads, need_u, method)
    nt = check_n_threads(n_threads)
    if met.kind == "precomputed":
        X, Y = as_square_matrix(x, "x"), as_square_matrix(y, "y")
        if X.shape != Y.shape:
            raise ValueError(f"`x` and `y` must be distance matrices of the same n; got {X.shape} "
                             f"and {Y.shape}.")
        cx = cy = None
    else:
        X, Y, cx, cy = paired_variables(x, y, data)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"distance covariance needs at least 2 paired samples; got {n}.")
    if need_u and n < 4:
        raise ValueError(f"the U-statistics (estimator='U') need at least 4 paired samples "
                         f"(they divide by n(n-3)); got n={n}.")
    constant = (_constancy(X, met.kind == "precomputed"), _constancy(Y, met.kind == "precomputed"))
    return _stats_result(*_sums(X, Y, met, nt, method), n, met, cx, cy, constant=constant)


def _weighted_stats(x, y, data, met, n_threads, need_u, method, weights):
    """:func:`_stats` with sample weights: dCov² by weighted double centring (V only)."""
    import math

    import numpy as np

    from .._core._weights import as_weights, weighted_dcov_means

    if need_u:
        raise ValueError("`estimator='U'` is not available with `weights`: the weighted statistics "
                         "are V-statistics (estimator='V').")
    if method == "sorted":
        raise ValueError("`method='sorted'` is not available with `weights`; use method='auto' "
                         "(the streamed pass).")
    nt = check_n_threads(n_threads)
    wcol, index = None, None
    if isinstance(weights, str):
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"`weights={weights!r}` names a column, which needs `data=` to be a "
                            f"pandas DataFrame; got {type(data).__name__}.")
        if weights not in data.columns:
            raise KeyError(f"`weights`: column {weights!r} not found in `data`; it has "
                           f"{list(data.columns)[:8]}.")
        for v, name in ((x, "x"), (y, "y")):
            if (isinstance(v, str) and v == weights) or (isinstance(v, (list, tuple)) and weights in v):
                raise ValueError(f"`weights`: column {weights!r} is the weights and cannot also be "
                                 f"among the columns of `{name}`.")
        wcol, weights = weights, data[weights]
    if met.kind == "precomputed":
        X, Y = as_square_matrix(x, "x"), as_square_matrix(y, "y")
        if X.shape != Y.shape:
            raise ValueError(f"`x` and `y` must be distance matrices of the same n; got {X.shape} "
                             f"and {Y.shape}.")
        cx = cy = None
    else:
        X, Y, cx, cy, index = paired_variables(x, y, data, with_index=True)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"distance covariance needs at least 2 paired samples; got {n}.")
    w = as_weights(weights, n, "weights", index)
    pos = w > 0  # constancy among the points that carry mass
    pre = met.kind == "precomputed"
    constant = (_constancy(X[np.ix_(pos, pos)] if pre else X[pos], pre),
                _constancy(Y[np.ix_(pos, pos)] if pre else Y[pos], pre))
    total = math.fsum(w)
    sums, sx, sy = weighted_dcov_means(X, Y, w / total, met, nt)
    return _stats_result((sums, None), sx, sy, n, met, cx, cy, constant=constant,
                         weights=wcol if wcol is not None else "array", weight_total=total)


def _stats_dask(x, y, data, met, n_threads, need_u, method):
    """:func:`_stats` on the Dask backend: a Delayed :class:`DistanceStatsResult`."""
    if met.kind != "builtin":
        raise TypeError(compiled_only("backend='dask'", met))
    cx = cy = None
    if not _dask.is_dask(x) and not _dask.is_dask(y) and not _dask.is_dask(data):
        x, y, cx, cy = paired_variables(x, y, data)  # in memory: the threads input layer (names, indexes)
    elif data is not None:
        raise TypeError("`data=` (column names) is not available with Dask input; pass the "
                        "columns as Dask arrays (e.g. `ddf[cols].to_dask_array(lengths=True)`).")
    if method == "sorted":
        raise ValueError("`method='sorted'` is not available with backend='dask' (its passes are the "
                         "'pairwise' method); use method='auto'.")
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    X, Y = _dask.as_dask_data(x, "x"), _dask.as_dask_data(y, "y")
    n = X.n
    if Y.n != n:
        raise ValueError(f"`x` and `y` must have the same number of rows (paired samples); got "
                         f"{n} and {Y.n}.")
    if n < 2:
        raise ValueError(f"distance covariance needs at least 2 paired samples; got {n}.")
    if need_u and n < 4:
        raise ValueError(f"the U-statistics (estimator='U') need at least 4 paired samples "
                         f"(they divide by n(n-3)); got n={n}.")
    import dask

    VU, sx, sy, prep, _ = _dask_pair_sums.lazy_dependence_sums(X, Y, met, nt, parts=True)
    constant = dask.delayed(lambda p: p["constant"], pure=True)(prep)
    return dask.delayed(_stats_result, pure=True)(VU, sx, sy, n, met, cx, cy, constant)


# -- public functions ------------------------------------------------------------

def distance_stats(x, y=None, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                   check_negative_type=True, method="auto",
                   weights=None, affine=False, n_threads=None, backend=None, compute=True):
    r"""Distance covariance, variances and correlation of paired samples, V and U forms.

    Parameters
    ----------
    x, y : array_like, Series, DataFrame, or column name(s) with ``data``
        Paired samples, shape (n, p) and (n, q) (1-D for one feature);
        rows are pairs.  With ``metric='precomputed'``, the n×n distance
        matrices of x and of y.  With ``data``, also formulas (the
        ``formula`` extra, formulaic): ``x='y1 + y2 ~ a + C(g)'`` with ``y``
        left out (the left side is y, the right side's design x), or a
        one-sided ``'~ a + np.log(b)'`` for either; a factor becomes one
        0/1 column per level, no intercept, the design's columns recorded.
    data : DataFrame, optional
        With column names or formulas as ``x``/``y``: the table they are
        taken from.
    exponent : float, default 1.0
        :math:`\alpha` in :math:`\|x - y\|^{\alpha}`, :math:`0 < \alpha < 2`
        for a consistent test of independence (R's ``index``).
    metric : str or callable, default 'energy'
        The semimetric, applied to x and to y (as in :func:`energystats.pairwise`), or
        'precomputed'.
        Also SciPy's names of a metric of negative type ('euclidean', 'sqeuclidean',
        'cityblock', 'hamming', 'canberra', 'chebyshev' with at most 2 features);
        see the guide page "Choosing a semimetric".
    sigma : float, default 1.0
        Bandwidth of 'laplacian' and 'gaussian'.
    check_negative_type : bool, default True
        False accepts SciPy's names refused because the energy statistics are not
        valid with them (as in :func:`energystats.pairwise`).
    method : {'auto', 'sorted', 'pairwise'}, default 'auto'
        'sorted': for 1-D x and y with ``exponent=1``, the O(n log n)
        algorithm of Huo and Székely (2016) (sorting and Fenwick trees, on
        centred data, compensated sums); 'pairwise': the streamed O(n²)
        pass; 'auto': 'sorted' from 10 000 rows on (where it applies), else
        'pairwise'.  The sorted path combines three sums whose difference is
        about n times smaller than they are: it agrees with the pairwise
        pass to 1e-11 relative or better at n = 2000 and to about 1e-10 (V)
        and 1e-9 (U) at n = 20 000.
    weights : array_like or str, optional
        Sample weights of the pairs (rows): finite, non-negative, not all
        zero; a string names a column of ``data`` (not a variable; the
        result's ``weights`` records it).  Each pair has the mass
        :math:`p_i = w_i / \sum w`; the distance matrices are double-centred
        with these masses, :math:`A_{ij} = a_{ij} - \sum_k p_k a_{ik} -
        \sum_k p_k a_{kj} + \sum_{kl} p_k p_l a_{kl}`, and
        :math:`\mathcal{V}^2_w = \sum_{ij} p_i p_j A_{ij} B_{ij}` (likewise the
        distance variances; dCor² their ratio).  Integer weights give the
        statistics of the data with each row repeated that many times:
        the weights count as frequencies, and ``test_statistic`` is
        :math:`N \mathcal{V}^2_w` with :math:`N = \sum w` (the result's
        ``weight_total``; ``n_samples`` is the number of rows), the only
        field that a common factor of the weights changes.
        V-statistics only (the U fields are NaN, ``estimator='U'`` an error);
        the streamed O(n²) pass (no ``method='sorted'``); not on the Dask
        backend.
    affine : bool, default False
        True: the statistics of the samples whitened by their covariances, the
        affinely invariant forms (see :func:`distance_correlation`).
    n_threads : int, optional
        Threads of the compiled kernels (with the Dask backend: per task, default 1).
    backend : {None, 'threads', 'dask'}, default None
        Where the two passes run: this process's threads, or Dask tasks over
        ranges of rows (each task holds x and y, O(n·(p + q)), never an n×n
        matrix).  None: 'dask' when ``x`` or ``y`` is a Dask array.  The
        same kernels on the same rows: the same bits as the threads backend.
        Column names with ``data=`` and ``method='sorted'`` are not
        available on Dask; see the guide page "Scaling out".
    compute : bool, default True
        With the Dask backend, ``False`` returns a
        :class:`dask.delayed.Delayed` of the result.

    Returns
    -------
    DistanceStatsResult
        V-statistics (squares, with their roots as properties ``dcov``,
        ``dcor``) and U-statistics; ``.to_frame()`` tabulates them.

    Notes
    -----
    See the module docstring for the formulas.  Every value is formed in
    working units (each variable, or distance matrix, times a power of two
    that brings its largest entry into [0.5, 1)) and scaled back once: the
    roots ``dcov``, ``dvar_x``, ``dvar_y`` are right wherever they are
    themselves floats, and the squares and U-statistics overflow to inf or
    underflow to 0 only where their true values lie beyond float64.  No n×n
    matrix is formed for the metrics with a compiled kernel ('energy', 'laplacian', 'gaussian',
    'cityblock'; not SciPy's cdist names): row sums in a first pass, then the centred products
    pair by pair in a second (compensated sums; the same bits for any thread
    count).

    References
    ----------
    .. [1] Székely, G. J., Rizzo, M. L. and Bakirov, N. K. (2007). Measuring
       and testing dependence by correlation of distances. Ann. Statist.
       35(6), 2769–2794.
    .. [2] Székely, G. J. and Rizzo, M. L. (2014). Partial distance
       correlation with methods for dissimilarities. Ann. Statist. 42(6),
       2382–2412.

    Examples
    --------
    >>> import energystats as es
    >>> from energystats.datasets import load_iris
    >>> iris = load_iris()
    >>> x, y = iris.iloc[:50, :4].to_numpy(), iris.iloc[50:100, :4].to_numpy()
    >>> res = es.distance_stats(x, y)
    >>> round(res.dcov, 7), round(res.dcor, 7), round(res.dcov_u, 9), round(res.dcor_u, 7)
    (0.1025087, 0.3060479, -0.002748351, -0.0271709)
    >>> w = es.distance_stats([1, 2, 3], [1, 3, 2], weights=[2, 1, 1])  # = rows 1, 1, 2, 3
    >>> round(w.dcov_sqr, 12) == round(es.distance_stats([1, 1, 2, 3], [1, 1, 3, 2]).dcov_sqr, 12)
    True
    """
    if method not in ("auto", "sorted", "pairwise"):
        raise ValueError(f"`method` must be 'auto', 'sorted' or 'pairwise'; got {method!r}.")
    if affine:
        x, y = _affine_pair(x, y, data, metric, weights, backend, compute)
        data = None
    return _finish(_stats(x, y, data, exponent, metric, sigma, n_threads,
                          check_negative_type=check_negative_type, method=method, backend=backend,
                          compute=compute, weights=weights), lambda r: r, compute)


def distance_covariance_sqr(x, y=None, *, data=None, estimator="V", exponent=1.0, metric="energy",
                            sigma=1.0, check_negative_type=True, weights=None, n_threads=None,
                            backend=None, compute=True):
    r"""Squared distance covariance: :math:`\mathcal{V}^2_n(x, y)` (V) or :math:`\Omega_n(x, y)` (U).

    ``estimator='V'`` is the square of R ``energy``'s ``dcov``; ``'U'`` is R's
    ``dcovU`` (unbiased, may be negative; n ≥ 4).  Other parameters as in
    :func:`distance_stats`.

    Examples
    --------
    >>> import energystats as es
    >>> x, y = [1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]
    >>> round(es.distance_covariance_sqr(x, y), 7), round(es.distance_covariance_sqr(x, y, estimator="U"), 5)
    (0.6851852, -0.88889)
    """
    _check_estimator(estimator)
    res = _stats(x, y, data, exponent, metric, sigma, n_threads,
                 check_negative_type=check_negative_type, need_u=estimator == "U",
                 backend=backend, compute=compute, weights=weights)
    return _finish(res, lambda r: r.dcov_sqr if estimator == "V" else r.dcov_u, compute)


def distance_correlation_sqr(x, y=None, *, data=None, estimator="V", exponent=1.0, metric="energy",
                             sigma=1.0, check_negative_type=True, weights=None, n_threads=None,
                             backend=None, compute=True):
    r"""Squared distance correlation :math:`\mathcal{R}^2_n` (V) or the bias-corrected one (U).

    ``estimator='U'`` is R ``energy``'s ``bcdcor`` (may be negative).  A
    constant ``x`` or ``y`` (distance variance 0) is an error: the ratio is
    0/0.  Other parameters as in :func:`distance_stats`.

    Examples
    --------
    >>> import energystats as es
    >>> x, y = [1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]
    >>> round(es.distance_correlation_sqr(x, y), 7), round(es.distance_correlation_sqr(x, y, estimator="U"), 5)
    (0.3066099, -0.41613)
    """
    _check_estimator(estimator)
    res = _stats(x, y, data, exponent, metric, sigma, n_threads,
                 check_negative_type=check_negative_type, need_u=estimator == "U",
                 backend=backend, compute=compute, weights=weights)

    def pick(r):
        _check_constant(r, "distance correlation")
        return r.dcor_sqr if estimator == "V" else r.dcor_u

    return _finish(res, pick, compute)


def distance_covariance(x, y=None, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                        check_negative_type=True, weights=None,
                        n_threads=None, backend=None, compute=True):
    r"""Distance covariance :math:`\mathcal{V}_n(x, y)`, the square root of the V-statistic (R ``dcov``).

    Parameters as in :func:`distance_stats`.

    Examples
    --------
    >>> import energystats as es
    >>> round(es.distance_covariance([1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]), 7)
    0.8277591
    """
    return _finish(_stats(x, y, data, exponent, metric, sigma, n_threads,
                          check_negative_type=check_negative_type, backend=backend,
                          compute=compute,
                          weights=weights), lambda r: r.dcov, compute)


def distance_correlation(x, y=None, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                         check_negative_type=True, weights=None, affine=False,
                         n_threads=None, backend=None, compute=True):
    r"""Distance correlation :math:`\mathcal{R}_n(x, y)`, the square root (R ``dcor``), in [0, 1].

    Parameters as in :func:`distance_stats`, and:

    affine : bool, default False
        True: the affinely invariant distance correlation (Székely, Rizzo and
        Bakirov 2007, §3.2; dcor's ``distance_correlation_af_inv``), the
        distance correlation of :math:`S_x^{-1/2}x` and :math:`S_y^{-1/2}y`
        with :math:`S` each sample's covariance (divisor n − 1) and
        :math:`S^{-1/2}` its symmetric inverse square root.  Unchanged by
        :math:`x \mapsto Ax + b`, :math:`y \mapsto Cy + d` for invertible A, C
        (the plain one only by orthogonal maps and a common scale).  Needs more
        rows than columns in each sample and a nonsingular covariance (else a
        ValueError naming the sample); ``metric='energy'`` only, no
        ``weights``, in-memory data.  The test: :func:`independence_test`
        with ``affine=True``.

    0 characterises independence in the population (for :math:`0 < \alpha < 2`
    and finite moments); 1 only for :math:`y = a + b\,xQ` (Q orthogonal).

    Examples
    --------
    >>> import energystats as es
    >>> round(es.distance_correlation([1, 2, 3, 4, 5, 6], [1, 7, 5, 5, 6, 2]), 7)
    0.5537237
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [1, 2, 3, 4, 5, 6], "b": [1, 7, 5, 5, 6, 2]})
    >>> round(es.distance_correlation("a", "b", data=df), 7)
    0.5537237
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(50, 2)); y = x + rng.normal(size=(50, 2))
    >>> A = np.array([[1.0, 5.0], [0.0, 0.1]])           # an invertible linear map
    >>> a, b = es.distance_correlation(x, y, affine=True), es.distance_correlation(x @ A, y, affine=True)
    >>> bool(abs(a - b) < 1e-12), bool(abs(es.distance_correlation(x @ A, y) - a) < 1e-3)
    (True, False)
    """
    if affine:
        x, y = _affine_pair(x, y, data, metric, weights, backend, compute)
        data = None
    res = _stats(x, y, data, exponent, metric, sigma, n_threads,
                 check_negative_type=check_negative_type, backend=backend, compute=compute,
                 weights=weights)

    def pick(r):
        _check_constant(r, "distance correlation")
        return r.dcor

    return _finish(res, pick, compute)


def _affine_pair(x, y, data, metric, weights, backend, compute):
    """``(x, y)`` whitened for ``affine=True`` (:mod:`._affine`), after the options it excludes."""
    from . import _affine

    if weights is not None:
        raise TypeError("`weights` are not available with `affine=True` (the whitening uses the "
                        "unweighted sample covariance).")
    if _dask.use_dask(backend, compute, (x, y)):
        raise TypeError("`affine=True` is not available with backend='dask'; pass in-memory data.")
    return _affine.whitened_pair(x, y, data, metric)

