"""Sample weights of the energy statistics (below every concept): their validation, a
DataFrame column named as the weights, and the weighted streamed sums.

Each point carries the mass ``w_i / Σ w`` of its sample (V-statistics); the sums are streamed
through the compiled kernels of :mod:`energystats._lib._weighted` (no n×n matrix for the
built-in metrics) in working units (:func:`energystats._core._engine.normalise`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import _engine
from ._validation import _short

__all__ = ["as_weights", "weight_column", "weighted_group_sums", "weighted_dcov_means",
           "weighted_cell_centred_sums"]

#: pairs × features of one kernel call: short enough that Ctrl-C is honoured between calls
CALL_WORK = 5e8


def as_weights(w, n, name="weights", index=None):
    """``w`` as a float64 array of length n: finite, non-negative, not all zero.

    A Series is taken by position when ``index`` (the data's pandas index) is None, and must
    carry the same index as the data otherwise (no silent realignment)."""
    if isinstance(w, pd.DataFrame):
        raise TypeError(f"`{name}` must be one value per row (1-D); got a DataFrame with "
                        f"{w.shape[1]} column(s). Name a column with `{name}=\"col\"`.")
    if isinstance(w, pd.Series) and index is not None and not w.index.equals(index):
        raise ValueError(f"`{name}` is a Series whose index differs from the data's: the weights "
                         "must be given row for row. Align it first (e.g. `w.loc[X.index]`) or "
                         "pass an array.")
    arr = np.asarray(w.to_numpy() if isinstance(w, pd.Series) else w)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"`{name}` must be real numbers (int or float); got dtype {arr.dtype}.")
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D, one weight per row; got shape {arr.shape}.")
    if arr.shape[0] != n:
        raise ValueError(f"`{name}` must have one weight per row ({n}); got {arr.shape[0]}.")
    arr = np.array(arr, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise ValueError(f"`{name}` must be finite; got {float(arr[bad[0]])!r} at position {bad[0]} "
                         f"({bad.size} non-finite value(s)).")
    bad = np.flatnonzero(arr < 0)
    if bad.size:
        raise ValueError(f"`{name}` must be non-negative; got {float(arr[bad[0]])!r} at position {bad[0]} "
                         f"({bad.size} negative value(s)).")
    if not np.any(arr > 0):
        raise ValueError(f"`{name}` must not all be 0 (the weighted statistic would be 0/0); "
                         f"got {n} zero weight(s).")
    with np.errstate(over="ignore"):
        total = float(np.sum(arr))
    if not math.isfinite(total):  # non-negative weights: every partial sum is below the total
        raise ValueError(f"`{name}` must have a finite sum; got weights up to {float(arr.max())!r} "
                         "whose sum overflows float64. Rescale them (only their ratios matter, "
                         "except in dispersion, where they count rows).")
    return arr


def weight_column(X, weights, name="x", wname="weights", columns=None):
    """``(X, weights, column)``: with ``weights`` a column name of the DataFrame ``X``, X without
    that column (it is not a variable), the column's values and its name; else unchanged."""
    if not isinstance(weights, str):
        return X, weights, None
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"`{wname}={_short(weights)!s}` names a column, which needs `{name}` to be a "
                        f"pandas DataFrame; got {type(X).__name__}.")
    if weights not in X.columns:
        raise KeyError(f"`{wname}`: column {weights!r} not found in `{name}`; it has "
                       f"{list(X.columns)[:8]}.")
    if columns is not None and weights in list(columns):
        raise ValueError(f"`{wname}`: column {weights!r} is the weights and cannot also be among "
                         f"`columns`.")
    return X.drop(columns=[weights]), X[weights], weights


# -- weighted sums ---------------------------------------------------------------

def weighted_group_sums(X, codes, k, w, met, n_threads):
    """k×k ``M[g, h] = Σ_{i∈C_g, j∈C_h} w_i w_j ρ(x_i, x_j)`` in working units, and the Scale back.

    ``met.kind == 'precomputed'``: ``X`` is the n×n matrix; a callable or SciPy metric forms it
    (as the unweighted paths do).  No n×n matrix for the compiled metrics (rows of the compiled kernel, added per group in a fixed order: the same
    bits for any number of threads)."""
    from .._lib import _weighted

    codes = np.asarray(codes, dtype=np.intp)
    w = np.asarray(w, dtype=np.float64)
    X, met, scale = _engine.normalise(met, X)
    if met.kind != "builtin":  # precomputed, a callable, or a SciPy metric (cdist in tiles)
        D = X if met.kind == "precomputed" else _engine.pairwise_values(X, X, met, n_threads)
        from ._pair_sums import _matrix_working_units

        D, scale = _matrix_working_units(np.asarray(D, dtype=np.float64))
        onehot = np.zeros((codes.size, k))
        onehot[np.arange(codes.size), codes] = w
        return onehot.T @ (D @ onehot), scale
    order = np.argsort(codes, kind="stable")
    Xs = np.ascontiguousarray(X[order])
    ws = np.ascontiguousarray(w[order])
    cs = codes[order]
    bounds = np.zeros(k + 1, dtype=np.intp)
    np.cumsum(np.bincount(cs, minlength=k), out=bounds[1:])
    n, d = Xs.shape
    XT = np.ascontiguousarray(Xs.T)
    nt = _engine.effective_threads(n_threads, 0.5 * n * n * d)
    step = int(max(1, min(CALL_WORK // max(1.0, n * d), 2**22 // max(k, 1))))
    acc = _GroupAccumulator(k, 1)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        out = np.empty((r1 - r0, k))
        _weighted.weighted_group_rows(Xs, XT, ws, bounds, met.code, met.param, r0, r1, out, nt)
        out *= ws[r0:r1, None]
        acc.add(out, bounds, r0, r1)
    return _symmetrise(acc.total()[0]), scale


class _GroupAccumulator:
    """k×k sums of kernel rows (rows sorted by group, ``bounds`` their groups), ``m`` such
    matrices side by side (row layout ``[..., m h + t, ...]``), added call by call in a fixed
    order with Neumaier compensation: O(m k²) memory however many calls, the same bits for
    any number of threads."""

    def __init__(self, k, m):
        self.k, self.m = k, m
        self.s = np.zeros((m, k, k))
        self.c = np.zeros((m, k, k))

    def add(self, out, bounds, r0, r1):
        k, m = self.k, self.m
        g0 = int(np.searchsorted(bounds, r0, side="right")) - 1
        g1 = int(np.searchsorted(bounds, r1 - 1, side="right")) - 1
        part = np.zeros((m, g1 + 1 - g0, k))
        for g in range(g0, g1 + 1):
            lo, hi = max(bounds[g], r0) - r0, min(bounds[g + 1], r1) - r0
            if hi > lo:
                part[:, g - g0, :] = out[lo:hi].sum(axis=0).reshape(k, m).T
        s, c = self.s[:, g0:g1 + 1, :], self.c[:, g0:g1 + 1, :]  # views: only these rows change
        t = s + part  # Neumaier: the lost low-order part goes to c
        c += np.where(np.abs(s) >= np.abs(part), (s - t) + part, (part - t) + s)
        s[...] = t

    def total(self):
        """The sums, formed in place (the accumulator is spent): the m k×k matrices."""
        self.s += self.c
        self.c = None
        return self.s


def _symmetrise(upper):
    """``upper + upper.T`` in place, one matrix at a time (one k×k temporary)."""
    for M in upper.reshape(-1, *upper.shape[-2:]):
        M += M.T.copy()
    return upper


def _row_means(X, XT, Y, YT, p, code, param_x, param_y, step, nt):
    """``(va, vb, ga, gb)``: the rows' means ``Σ_j p_j a_ij``, ``Σ_j p_j b_ij`` (compiled, in
    calls of ``step`` rows) and the grand means, the centring of the weighted dCov."""
    from .._lib import _weighted

    n = X.shape[0]
    rs = np.empty((n, 2))
    for r0 in range(0, n, step):
        _weighted.weighted_row_sums(X, XT, Y, YT, p, code, param_x, param_y, r0, min(n, r0 + step),
                                    rs, nt)
    va, vb = np.ascontiguousarray(rs[:, 0]), np.ascontiguousarray(rs[:, 1])
    return va, vb, math.fsum(p * va), math.fsum(p * vb)


def weighted_dcov_means(X, Y, p, met, n_threads):
    """``(dCov², dVar²_x, dVar²_y)`` with masses ``p`` (Σ p = 1) by weighted double centring,
    in working units, and the two variables' Scales.

    ``A_ij = a_ij − ā_i − ā_j + ā`` with ``ā_i = Σ_j p_j a_ij``, ``ā = Σ_i p_i ā_i``, and
    ``dCov² = Σ_ij p_i p_j A_ij B_ij``; the centred values are formed pair by pair."""
    from .._lib import _weighted
    from ._pair_sums import _matrix_working_units

    p = np.ascontiguousarray(p, dtype=np.float64)
    if met.kind != "builtin":
        if met.kind == "precomputed":
            a, b = X, Y
        else:
            a, b = (_engine.pairwise_values(X, X, met, n_threads),
                    _engine.pairwise_values(Y, Y, met, n_threads))
        (a, sx), (b, sy) = (_matrix_working_units(np.asarray(a, dtype=np.float64)),
                            _matrix_working_units(np.asarray(b, dtype=np.float64)))
        A, B = _centred(a, p), _centred(b, p)
        P = np.outer(p, p)
        return (float(np.sum(P * A * B)), float(np.sum(P * A * A)), float(np.sum(P * B * B))), sx, sy
    X, met_x, sx = _engine.normalise(met, X)
    Y, met_y, sy = _engine.normalise(met, Y)
    if X.dtype != Y.dtype:
        X, Y = X.astype(np.float64), Y.astype(np.float64)
    X, Y = np.ascontiguousarray(X), np.ascontiguousarray(Y)
    XT, YT = np.ascontiguousarray(X.T), np.ascontiguousarray(Y.T)
    n, d = X.shape[0], X.shape[1] + Y.shape[1]
    nt = _engine.effective_threads(n_threads, float(n) * n * d)
    step = int(max(1, CALL_WORK // max(1.0, n * d)))
    va, vb, ga, gb = _row_means(X, XT, Y, YT, p, met.code, met_x.param, met_y.param, step, nt)
    out = np.empty((n, 3))
    for r0 in range(0, n, step):
        _weighted.weighted_centred_products(X, XT, Y, YT, p, met.code, met_x.param, met_y.param,
                                            va, vb, ga, gb, r0, min(n, r0 + step), out, nt)
    Ad, Bd = -2.0 * va + ga, -2.0 * vb + gb  # the diagonal of the centred matrices (a_ii = 0)
    pp = p * p
    sums = (2.0 * math.fsum(p * out[:, 0]) + math.fsum(pp * Ad * Bd),
            2.0 * math.fsum(p * out[:, 1]) + math.fsum(pp * Ad * Ad),
            2.0 * math.fsum(p * out[:, 2]) + math.fsum(pp * Bd * Bd))
    return sums, sx, sy


def weighted_cell_centred_sums(X, Y, codes, k, w, p, met, n_threads):
    """Three k×k matrices over the groups ``codes`` (the cells of the approximate independence
    weights), in original units: ``P[g, h] = Σ_{i∈C_g, j∈C_h} w_i w_j A_ij B_ij`` with ``A``,
    ``B`` the distance matrices of ``X`` and ``Y`` double-centred by the masses ``p`` (as in
    :func:`weighted_dcov_means`), and the plain sums ``Sa[g, h] = Σ w_i w_j a_ij``, ``Sb``
    alike.  Streamed (built-in metrics only): O(n²) time, O(k²) memory."""
    from .._lib import _weighted

    if met.kind != "builtin":
        raise ValueError("weighted_cell_centred_sums needs a built-in metric")
    codes = np.asarray(codes, dtype=np.intp)
    w = np.asarray(w, dtype=np.float64)
    p = np.ascontiguousarray(p, dtype=np.float64)
    X, met_x, sx = _engine.normalise(met, np.asarray(X, dtype=np.float64))
    Y, met_y, sy = _engine.normalise(met, np.asarray(Y, dtype=np.float64))
    order = np.argsort(codes, kind="stable")
    X, Y = np.ascontiguousarray(X[order]), np.ascontiguousarray(Y[order])
    ws, ps, cs = np.ascontiguousarray(w[order]), np.ascontiguousarray(p[order]), codes[order]
    XT, YT = np.ascontiguousarray(X.T), np.ascontiguousarray(Y.T)
    bounds = np.zeros(k + 1, dtype=np.intp)
    np.cumsum(np.bincount(cs, minlength=k), out=bounds[1:])
    n, d = X.shape[0], X.shape[1] + Y.shape[1]
    nt = _engine.effective_threads(n_threads, float(n) * n * d)
    step = int(max(1, min(CALL_WORK // max(1.0, n * d), 2**22 // max(3 * k, 1))))
    va, vb, ga, gb = _row_means(X, XT, Y, YT, ps, met.code, met_x.param, met_y.param, step, nt)
    acc = _GroupAccumulator(k, 3)
    for r0 in range(0, n, step):
        r1 = min(n, r0 + step)
        out = np.empty((r1 - r0, 3 * k))
        _weighted.weighted_group_centred_rows(X, XT, Y, YT, ws, bounds, met.code, met_x.param,
                                              met_y.param, va, vb, ga, gb, r0, r1, out, nt)
        out *= ws[r0:r1, None]
        acc.add(out, bounds, r0, r1)
    full = _symmetrise(acc.total())  # in place: O(k²) memory stays 2 m k² at the most
    del acc
    diag = np.bincount(cs, weights=ws * ws * (-2.0 * va + ga) * (-2.0 * vb + gb), minlength=k)
    full[0][np.diag_indices(k)] += diag  # i = j: a_ii = b_ii = 0, but A_ii B_ii is not
    P, Sa, Sb = full
    sy.apply(sx.apply(P, inplace=True), inplace=True)
    return P, sx.apply(Sa, inplace=True), sy.apply(Sb, inplace=True)


def _centred(D, p):
    """The weighted double-centred matrix of D (masses p)."""
    r = D @ p
    g = float(p @ r)
    return D - r[:, None] - r[None, :] + g
