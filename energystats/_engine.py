"""Private drivers between the validated public API and the compiled kernels.

Inputs here are already validated (see :mod:`energystats._validation`): finite
C-contiguous float32/float64 arrays, integer group codes in ``0..k-1`` and a
:class:`~energystats._metrics.ResolvedMetric`.  These functions allocate the
outputs, reorder data as the kernels expect and pick the kernel.
"""
from __future__ import annotations

import numpy as np

from ._lib import _pairwise, _sorted1d

__all__ = ["pairwise_values", "group_sum_matrix", "sort_centred", "sorted_group_sums", "use_sorted_path"]


def pairwise_values(X, Y, metric, n_threads):
    """Dense matrix ``rho(X[i], Y[j])`` (float64).  ``X``/``Y`` validated, same dtype."""
    if metric.kind == "callable":
        return _callable_matrix(X, Y, metric.func)
    if Y.dtype != X.dtype:
        X = X.astype(np.float64)
        Y = Y.astype(np.float64)
    out = np.empty((X.shape[0], Y.shape[0]), dtype=np.float64)
    _pairwise.pairwise_matrix(X, np.ascontiguousarray(Y.T), out, metric.code, metric.param, n_threads)
    return out


def _callable_matrix(X, Y, func):
    """rho for a user callable: one Python call per pair (symmetric pairs once)."""
    same = X is Y
    n, m = X.shape[0], Y.shape[0]
    out = np.empty((n, m), dtype=np.float64)
    for i in range(n):
        start = i if same else 0
        for j in range(start, m):
            v = float(func(X[i], Y[j]))
            out[i, j] = v
            if same:
                out[j, i] = v
    if not np.all(np.isfinite(out)):
        raise ValueError("the `metric` callable returned a non-finite value.")
    if same and np.any(np.abs(np.diag(out)) > 0):
        raise ValueError("the `metric` callable must give rho(x, x) = 0.")
    return out


def use_sorted_path(X, metric, method):
    """Whether the O(n log n) 1-D formulas apply (d == 1, energy, exponent 1)."""
    if method not in ("auto", "sorted", "pairwise"):
        raise ValueError(f"`method` must be 'auto', 'sorted' or 'pairwise'; got {method!r}.")
    eligible = metric.kind == "builtin" and metric.is_energy1 and X.ndim == 2 and X.shape[1] == 1
    if method == "sorted" and not eligible:
        raise ValueError(
            "`method='sorted'` needs 1-D data with metric='energy' and exponent=1; "
            f"got {X.shape[1]} feature(s), metric={metric.name!r}."
        )
    return eligible and method != "pairwise"


def sort_centred(x):
    """``(order, xs)``: the stable sort order of 1-D ``x`` and the sorted values, centred.

    The |x − y| sums are translation invariant; centring on the median keeps
    the prefix sums of the sorted kernels free of cancellation.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    order = np.ascontiguousarray(np.argsort(x, kind="stable"), dtype=np.intp)
    xs = x[order]
    xs -= xs[xs.size // 2]
    return order, np.ascontiguousarray(xs)


def sorted_group_sums(x, codes, k):
    """k×k matrix of Σ|x − y| over groups for 1-D ``x`` in O(n log n + n·k)."""
    order, xs = sort_centred(x)
    return _sorted1d.sorted_group_sums(xs, np.ascontiguousarray(codes[order], dtype=np.intp), k)


def group_sum_matrix(X, codes, k, metric, n_threads, *, sorted_path=False):
    """k×k matrix ``M[g, h] = Σ_{x∈C_g, y∈C_h} rho(x, y)`` without an n×n matrix.

    ``metric.kind == 'precomputed'`` takes ``X`` as the n×n matrix itself.
    """
    codes = np.asarray(codes, dtype=np.intp)
    if sorted_path:
        return sorted_group_sums(X[:, 0], codes, k)
    if metric.kind in ("precomputed", "callable"):
        D = X if metric.kind == "precomputed" else _callable_matrix(X, X, metric.func)
        onehot = np.zeros((codes.size, k))
        onehot[np.arange(codes.size), codes] = 1.0
        return onehot.T @ (D @ onehot)
    order = np.argsort(codes, kind="stable")
    Xs = np.ascontiguousarray(X[order])
    cs = np.ascontiguousarray(codes[order])
    bounds = np.zeros(k + 1, dtype=np.intp)
    np.cumsum(np.bincount(cs, minlength=k), out=bounds[1:])
    return _pairwise.group_sums(Xs, np.ascontiguousarray(Xs.T), cs, bounds,
                                metric.code, metric.param, n_threads)
