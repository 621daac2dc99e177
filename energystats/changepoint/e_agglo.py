"""E-Agglo (:func:`e_agglo`): agglomerative energy change points (Matteson & James 2014, §3.2)."""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .._core import _memory
from .._core._engine import pairwise_values
from .._core._metrics import resolve_metric
from .._core._validation import as_labels, check_n_threads
from ._results import EAggloResult, index_labels, segment_labels
from .e_divisive import check_exponent, series_input

__all__ = ["e_agglo"]


def _initial_bounds(member, T):
    """The boundaries 0 = b_0 < … < b_k = T of the initial segments (``member``: one label
    per row, each label's rows contiguous)."""
    if member is None:
        return np.arange(T + 1, dtype=np.intp)
    lab = as_labels(member, T, "member")
    codes = np.asarray(lab.codes)
    change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    run_codes = codes[np.concatenate([[0], change])]
    if np.unique(run_codes).size != run_codes.size:
        again = run_codes[np.flatnonzero(np.bincount(run_codes) > 1)[0] == run_codes]
        first = lab.groups[int(again[0])] if hasattr(lab, "groups") else again[0]
        raise ValueError(f"`member` must give each segment as one contiguous run of rows; the "
                         f"label {first!r} appears in {np.count_nonzero(run_codes == again[0])} "
                         f"separate runs.")
    return np.concatenate([[0], change, [T]]).astype(np.intp)


def _penalty_fn(penalty):
    if penalty is None:
        return lambda cps: 0.0
    if callable(penalty):
        def fn(cps):
            v = penalty(np.asarray(cps, dtype=np.intp))
            if not (isinstance(v, numbers.Real) and np.isfinite(v)):
                raise ValueError(f"`penalty` must return a finite number; got {v!r} for change "
                                 f"points {list(map(int, cps))}.")
            return float(v)
        return fn
    if (isinstance(penalty, numbers.Real) and not isinstance(penalty, bool) and np.isfinite(penalty)
            and penalty >= 0):
        lam = float(penalty)
        return lambda cps: lam * len(cps)
    raise ValueError(f"`penalty` must be None, a non-negative number (per change point) or a "
                     f"callable of the change points; got {penalty!r}.")


def _q(M_ab, n, m, wa, wb):
    """Q̂ from the between sum and the within sums (a one-row segment's within average is 0)."""
    ta = np.where(n > 1, wa / np.maximum(n - 1, 1), 0.0)
    tb = np.where(m > 1, wb / np.maximum(m - 1, 1), 0.0)
    return 2.0 * (M_ab - m * ta - n * tb) / (n + m)


def e_agglo(X, *, member=None, exponent=1.0, penalty=None, columns=None, n_threads=None):
    r"""E-Agglo: change points of a multivariate series by merging adjacent segments.

    The agglomerative method of Matteson and James (2014, §3.2): from an initial
    segmentation, merge at each step the adjacent pair of segments whose merge gives the
    largest goodness-of-fit :math:`\hat S` (the sum of :math:`\hat Q` between adjacent
    segments), down to one segment; return the segmentation on that path maximising the
    penalised :math:`\hat S`, and the whole path.

    Parameters
    ----------
    X : array_like of shape (T, d) or (T,), pandas Series or DataFrame
        The series, rows in time order; an index is carried into the result.
    member : array_like of shape (T,), optional
        The initial segment of each row (each segment a contiguous run of rows).  Default:
        one segment per row.
    exponent : float, default 1.0
        α in :math:`\lVert x - y \rVert^\alpha`, in (0, 2).
    penalty : None, float or callable, optional
        What is subtracted from :math:`\hat S` when choosing along the path: a number λ ≥ 0
        (λ per change point; a larger λ never gives more change points), or a callable
        taking the change points (an int array) and returning a number.  None: no penalty.
    columns : list, optional
        With a DataFrame ``X``: the columns used.
    n_threads : int or None
        Threads of the pairwise distances.

    Returns
    -------
    EAggloResult
        ``changepoints``, ``changepoint_labels``, ``labels``, ``fit``, ``penalised_fit``,
        ``path`` (a DataFrame: ``n_changepoints``, ``merged``, ``fit``,
        ``penalised_fit``), ``path_changepoints``; :meth:`~EAggloResult.to_frame`,
        :meth:`~EAggloResult.plot`.

    Notes
    -----
    :math:`\hat Q` is that of :func:`energystats.e_divisive` (U-type within averages); a
    one-row segment has no within pair, and its within average is taken as 0.
    :math:`\hat S_k = \sum_{i=1}^{k-1} \hat Q(C_i, C_{i+1})`.  Ties: the leftmost merge;
    along the path, the segmentation with the fewest change points.  The T×T distance
    matrix is formed once (O(T²) memory; a :class:`MemoryError` says so before allocating
    when it cannot fit), then each merge costs O(k) for k current segments.

    References
    ----------
    .. [1] Matteson, D. S. and James, N. A. (2014). A nonparametric approach for multiple
       change point analysis of multivariate data. J. Amer. Statist. Assoc. 109(505),
       334–345.

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0, 1, 40), rng.normal(4, 1, 40)])
    >>> member = np.repeat(np.arange(16), 5)
    >>> res = es.e_agglo(x, member=member)
    >>> res.changepoints.tolist()
    [40]
    >>> res.path["n_changepoints"].tolist()[:3]
    [15, 14, 13]
    """
    Z, index, cols = series_input(X, columns)
    T = Z.shape[0]
    alpha = check_exponent(exponent)
    nt = check_n_threads(n_threads)
    bounds = _initial_bounds(member, T)
    pen = _penalty_fn(penalty)
    starts = bounds[:-1]
    k0 = starts.size
    # the T×T matrix, and (coarser starting segments) its k0×T and k0×k0 block sums
    need = 8.0 * T * T + (0.0 if k0 == T else 8.0 * (k0 * T + k0 * k0))
    _memory.check_fits(need, f"the {T}×{T} distance matrix of e_agglo",
                       "Start from coarser segments (`member`) on a shorter series, or use "
                       "e_divisive, which needs no T×T matrix.")
    D = pairwise_values(Z, Z, resolve_metric("energy", alpha), nt)
    if k0 == T:  # one segment per row: the block sums are D itself
        M = D
    else:
        M = np.add.reduceat(np.add.reduceat(D, starts, axis=0), starts, axis=1)
    del D
    sizes = np.diff(bounds).astype(np.float64)
    W = np.diag(M).copy() / 2.0          # within sums Σ_{i<j in a}
    seg_start = starts.copy()
    alive = list(range(k0))              # current segments, in row order

    def s_terms(idx):
        a, b = np.asarray(idx[:-1]), np.asarray(idx[1:])
        return _q(M[a, b], sizes[a], sizes[b], W[a], W[b])

    terms = s_terms(alive) if k0 > 1 else np.empty(0)
    fit = float(terms.sum())
    cps = [int(seg_start[a]) for a in alive[1:]]
    path = [(len(cps), -1, fit, fit - pen(cps))]
    path_cps = [np.asarray(cps, dtype=np.intp)]
    while len(alive) > 1:
        idx = np.asarray(alive)
        k = idx.size
        a, b = idx[:-1], idx[1:]                     # candidate merges: a ∪ b
        nab = sizes[a] + sizes[b]
        wab = W[a] + W[b] + M[a, b]
        gain = -terms.copy()                         # the term between a and b disappears
        # left neighbour l of a: Q(l, a) -> Q(l, a ∪ b)
        l, la = idx[:-2], np.arange(1, k - 1)
        gain[la] += _q(M[l, a[la]] + M[l, b[la]], sizes[l], nab[la], W[l], wab[la]) - terms[la - 1]
        # right neighbour r of b: Q(b, r) -> Q(a ∪ b, r)
        r, rb = idx[2:], np.arange(0, k - 2)
        gain[rb] += _q(M[a[rb], r] + M[b[rb], r], nab[rb], sizes[r], wab[rb], W[r]) - terms[rb + 1]
        j = int(np.argmax(gain))                     # the first on ties
        ia, ib = int(a[j]), int(b[j])
        merged_at = int(seg_start[ib])
        M[ia, :] += M[ib, :]
        M[:, ia] += M[:, ib]
        W[ia] = wab[j]
        sizes[ia] = nab[j]
        alive.pop(j + 1)
        terms = s_terms(alive) if len(alive) > 1 else np.empty(0)
        fit = float(terms.sum())
        cps = [int(seg_start[s]) for s in alive[1:]]
        path.append((len(cps), merged_at, fit, fit - pen(cps)))
        path_cps.append(np.asarray(cps, dtype=np.intp))
    frame = pd.DataFrame(path, columns=["n_changepoints", "merged", "fit", "penalised_fit"])
    scores = frame["penalised_fit"].to_numpy()
    top = scores.max()
    choice = int(np.flatnonzero(scores == top)[-1])  # the fewest change points on ties
    chosen = path_cps[choice]
    return EAggloResult(
        changepoints=chosen, changepoint_labels=index_labels(chosen, index),
        labels=segment_labels(chosen, T), fit=float(frame["fit"].iloc[choice]),
        penalised_fit=float(top), path=frame, path_changepoints=path_cps, exponent=alpha,
        columns=cols, index=index, data=Z)
