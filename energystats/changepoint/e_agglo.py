"""E-Agglo (:func:`e_agglo`): agglomerative energy change points as R ``ecp``'s ``e.agglo``
computes them (Matteson & James 2014; James & Matteson 2014), with a default penalty."""
from __future__ import annotations

import math
import numbers

import numpy as np
import pandas as pd

from .._core import _memory
from .._core._engine import Scale, group_sum_matrix, normalise, pairwise_values
from .._core._metrics import resolve_metric
from .._core._validation import as_labels, check_n_threads, warn
from ._results import EAggloResult, index_labels
from .._core._input import time_series
from .e_divisive import check_exponent

__all__ = ["e_agglo"]

#: the definitions of the goodness of fit and of its update after a merge
DEFINITIONS = ("ecp", "u-statistic")

#: the largest k×k table of block sums (bytes) one Dask tile task may return
DASK_SUMS_BYTES = 2**26

#: below this many rows e_agglo warns: on iid normal series the default penalty reported
#: change points in 54 % of series of 3 rows, 15 % of 10 rows, 6 % of 20 to 30 rows
MIN_ROWS = 20


def _initial_bounds(member, T):
    """The boundaries 0 = b_0 < … < b_k = T of the initial segments (``member``: one label
    per row, each label's rows contiguous)."""
    if member is None:
        return np.arange(T + 1, dtype=np.intp)
    lab = as_labels(member, T, "member")
    codes = np.asarray(lab.codes)
    change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    run_codes = codes[np.concatenate([[0], change])]
    counts = np.bincount(run_codes)
    if np.any(counts > 1):
        again = int(np.flatnonzero(counts > 1)[0])
        raise ValueError(f"`member` must give each segment as one contiguous run of rows; the "
                         f"label {lab.groups[again]!r} appears in {int(counts[again])} "
                         f"separate runs.")
    return np.concatenate([[0], change, [T]]).astype(np.intp)


def _check_penalty(penalty):
    """'auto', None, a number >= 0 or a callable; returns the kind."""
    if isinstance(penalty, str) and penalty == "auto":
        return "auto"
    if penalty is None:
        return "none"
    if callable(penalty):
        return "callable"
    if (isinstance(penalty, numbers.Real) and not isinstance(penalty, bool) and np.isfinite(penalty)
            and penalty >= 0):
        return "number"
    raise ValueError(f"`penalty` must be 'auto', None, a non-negative number (per change point) "
                     f"or a callable of the change points; got {penalty!r}.")


def _refuse_dask_input(X):
    from .._core import _dask

    if _dask.is_dask(X):
        raise TypeError("e_agglo keeps the series in memory (with backend='dask' the block "
                        "sums of the initial segments are the tasks): compute the input first "
                        "(`x.compute()`).")


def _backend(backend, k0, T):
    """Whether the block sums run on Dask (``backend`` checked)."""
    from .._core import _dask

    dask_backend = _dask.use_dask(backend, True, ())
    if dask_backend and k0 == T:
        raise ValueError("e_agglo with backend='dask' needs coarser initial segments (`member`): "
                         f"from one segment per row (T = {T}) the {T}×{T} distance matrix is the "
                         "merge's own state and stays in this process; use the threads.")
    if dask_backend and 8.0 * k0 * k0 > DASK_SUMS_BYTES:
        raise ValueError(f"e_agglo with backend='dask' and {k0} initial segments: every tile task "
                         f"would return a {k0}×{k0} table ({8.0 * k0 * k0 / 2**20:.0f} MiB; at most "
                         f"{DASK_SUMS_BYTES // 2**20} MiB); start from fewer, longer segments or use "
                         "the threads.")
    return dask_backend


def _block_sums(Zw, met, bounds, nt, dask_backend):
    """The k×k sums of ρ over the ordered pairs of rows of the initial segments (each
    segment's within sum on the diagonal), in the working units of ``Zw``: the T×T matrix
    itself with one segment per row, else streamed (threads or Dask tiles), no T×T matrix."""
    T, k0 = Zw.shape[0], bounds.size - 1
    if k0 == T:
        _memory.check_fits(8.0 * T * T, f"the {T}×{T} distance matrix of e_agglo",
                           "Start from coarser segments (`member`), or use e_divisive, which "
                           "needs no T×T matrix.")
        return pairwise_values(Zw, Zw, met, nt)
    codes = np.repeat(np.arange(k0, dtype=np.intp), np.diff(bounds))
    if not dask_backend:
        M, shift = group_sum_matrix(Zw, codes, k0, met, nt, working_units=True)
        return shift.apply(M)     # Zw is in working units already: the identity, exactly
    from .._core import _dask

    M, shift = _dask.dask_compute(*_dask.lazy_group_sums(_dask.as_dask_data(Zw), codes, k0,
                                                         met, nt))
    return shift.apply(M)


def _callable_value(penalty, cps):
    v = penalty(np.asarray(cps, dtype=np.intp))
    if not (isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v)):
        raise ValueError(f"`penalty` must return a finite number; got {v!r} for change points "
                         f"{list(map(int, cps))}.")
    return float(v)


# -- ecp's definition ----------------------------------------------------------------------

def _ecp_distances(M, sizes):
    """ecp's initial distances, in place of the block sums ``M`` (k×k, ordered pairs, the
    diagonal holding each segment's within sum): D_ab = 2 M_ab/(n_a n_b) − M_aa/n_a² − M_bb/n_b²,
    with no n_a n_b/(n_a + n_b) factor; 0 on the diagonal."""
    w = np.diag(M) / (sizes * sizes)
    M /= sizes[:, None]
    M /= sizes[None, :]
    M *= 2.0
    M -= w[:, None]
    M -= w[None, :]
    np.fill_diagonal(M, 0.0)
    return M


def _ecp_path(D, sizes, starts):
    """ecp's merge path from the distances ``D`` (modified in place: a merged cluster takes
    the row and column of its left member).

    The clusters stay in cyclic order (the last is the left neighbour of the first).  The fit
    is Σ_c [D(c, left(c)) + D(c, right(c))]; merging A with its right neighbour B gives
    fit − 2[D(A,B) + D(A,L) + D(B,R)] + 2 D(A∪B, L) + 2 D(A∪B, R) with L = left(A),
    R = right(B) and D(A∪B, C) = ((n_A+n_C) D(A,C) + (n_B+n_C) D(B,C) − n_C D(A,B)) /
    (n_A+n_B+n_C); the largest is merged, ties to the smallest ecp cluster number (the
    initial ones 0…N−1 in row order, then N, N+1, … in order of creation).  The arithmetic
    follows ecp's order of operations, so that the comparisons are those of ecp.

    Returns (fits, change points per row, merged boundary per row, wrapped per row)."""
    N = sizes.size
    n = sizes.astype(np.float64)
    start = np.asarray(starts, dtype=np.intp)
    order = np.arange(N)                  # alive slots, cyclic order
    number = np.arange(N)                 # ecp's cluster number of each slot (ties)
    fit = 0.0
    for i in range(N):                    # ecp's order of summation
        fit = fit + D[i, (i - 1) % N] + D[i, (i + 1) % N]
    fits, cps, merged, wrapped = [fit], [start[1:].copy()], [-1], [False]
    new_number = N
    while order.size > 1:
        I = order
        J = np.roll(order, -1)
        L = np.roll(order, 1)
        R = np.roll(order, -2)
        n1, n2, nl, nr = n[I], n[J], n[L], n[R]
        dij, dil, djr = D[I, J], D[I, L], D[J, R]
        g = fit - 2.0 * (dij + dil + djr)
        g = g + 2.0 * (((n1 + nl) * dil + (n2 + nl) * D[J, L] - nl * dij) / (n1 + n2 + nl))
        g = g + 2.0 * (((n1 + nr) * D[I, R] + (n2 + nr) * djr - nr * dij) / (n1 + n2 + nr))
        top = g.max()
        hits = np.flatnonzero(g == top)
        p = int(hits[np.argmin(number[I[hits]])]) if hits.size > 1 else int(hits[0])
        i, j = int(I[p]), int(J[p])
        a, b, d_ij = n[i], n[j], D[i, j]
        others = order[(order != i) & (order != j)]
        n3 = n[others]
        tot = a + b + n3
        row = ((tot - b) * D[i, others] + (tot - a) * D[j, others] - n3 * d_ij) / tot
        D[i, others] = row
        D[others, i] = row
        n[i] = a + b
        number[i] = new_number
        new_number += 1
        order = order[order != j]
        fit = float(top)
        alive = np.sort(start[order])
        fits.append(fit)
        merged.append(int(start[j]))
        if order.size == 1:               # one cluster: no change point (ecp would list the
            cps.append(np.empty(0, dtype=np.intp))  # start of a wrapped cluster)
            wrapped.append(False)
        else:
            cps.append(alive[alive != 0])
            wrapped.append(bool(alive[0] != 0))
    return fits, cps, merged, wrapped


# -- the 'u-statistic' definition (this package's before 0.1: exact Q̂, linear neighbours) --

def _q(M_ab, n, m, wa, wb):
    """Q̂ from the between sum and the within sums (a one-row segment's within average is 0)."""
    ta = np.where(n > 1, wa / np.maximum(n - 1, 1), 0.0)
    tb = np.where(m > 1, wb / np.maximum(m - 1, 1), 0.0)
    return 2.0 * (M_ab - m * ta - n * tb) / (n + m)


def _u_path(M, sizes, starts):
    """Greedy merging of linearly adjacent segments maximising Ŝ = Σ Q̂(C_i, C_{i+1}), Q̂ with
    U-type within averages recomputed exactly from the block sums ``M`` (modified in place);
    ties to the leftmost merge."""
    sizes = sizes.astype(np.float64)
    W = np.diag(M).copy() / 2.0          # within sums Σ_{i<j in a}
    seg_start = np.asarray(starts, dtype=np.intp)
    alive = list(range(sizes.size))      # current segments, in row order

    def s_terms(idx):
        a, b = np.asarray(idx[:-1]), np.asarray(idx[1:])
        return _q(M[a, b], sizes[a], sizes[b], W[a], W[b])

    terms = s_terms(alive) if len(alive) > 1 else np.empty(0)
    fits = [float(terms.sum())]
    cps = [seg_start[1:].copy()]
    merged = [-1]
    while len(alive) > 1:
        idx = np.asarray(alive)
        k = idx.size
        a, b = idx[:-1], idx[1:]                     # candidate merges: a ∪ b
        nab = sizes[a] + sizes[b]
        wab = W[a] + W[b] + M[a, b]
        gain = -terms.copy()                         # the term between a and b disappears
        l, la = idx[:-2], np.arange(1, k - 1)        # left neighbour: Q(l, a) -> Q(l, a ∪ b)
        gain[la] += _q(M[l, a[la]] + M[l, b[la]], sizes[l], nab[la], W[l], wab[la]) - terms[la - 1]
        r, rb = idx[2:], np.arange(0, k - 2)         # right neighbour: Q(b, r) -> Q(a ∪ b, r)
        gain[rb] += _q(M[a[rb], r] + M[b[rb], r], nab[rb], sizes[r], wab[rb], W[r]) - terms[rb + 1]
        j = int(np.argmax(gain))                     # the first on ties
        ia, ib = int(a[j]), int(b[j])
        merged.append(int(seg_start[ib]))
        M[ia, :] += M[ib, :]
        M[:, ia] += M[:, ib]
        W[ia] = wab[j]
        sizes[ia] = nab[j]
        alive.pop(j + 1)
        terms = s_terms(alive) if len(alive) > 1 else np.empty(0)
        fits.append(float(terms.sum()))
        cps.append(np.asarray([seg_start[s] for s in alive[1:]], dtype=np.intp))
    return fits, cps, merged, [False] * len(fits)


def _labels(cps, wrapped, T):
    """The cluster of every row: segments numbered in row order, the last one numbered 0 when
    it is the same cluster as the first (ecp's ``cluster`` minus 1)."""
    labels = np.zeros(T, dtype=np.intp)
    for c in cps:
        labels[c:] += 1
    if wrapped and len(cps):
        labels[cps[-1]:] = 0
    return labels


def e_agglo(X, *, member=None, exponent=1.0, penalty="auto", definition="ecp", columns=None,
            n_threads=None, backend=None):
    r"""E-Agglo: change points of a multivariate series by merging neighbouring segments.

    The agglomerative method of Matteson and James (2014) as R ``ecp`` 3.1's ``e.agglo``
    computes it (James and Matteson 2014): from an initial segmentation, merge at each step
    the pair of neighbouring segments whose merge gives the largest goodness of fit, down to
    one segment; return the segmentation on that path with the largest fit minus
    ``penalty``, and the whole path.  Segments are neighbours cyclically, as in ``ecp``: the
    last and the first may merge, and a cluster may then hold the first and the last rows.

    Parameters
    ----------
    X : array_like of shape (T, d) or (T,), pandas Series or DataFrame
        The series, rows in time order (T ≥ 2; a warning below 20 rows); an index is carried
        into the result.
    member : array_like of shape (T,), optional
        The initial segment of each row (each segment a contiguous run of rows; at least 2
        segments).  Default: one segment per row (``ecp``'s ``member = 1:nrow(X)``).
    exponent : float, default 1.0
        α in :math:`\lVert x - y \rVert^\alpha`, in (0, 2) (``ecp``'s ``alpha``).
    penalty : 'auto', None, float or callable, default 'auto'
        What is *subtracted* from the fit of each segmentation on the path before the
        largest is taken.  'auto': :math:`\lambda` per change point with
        :math:`\lambda = 4 \hat m \bar h (1 + 2\log T)` ('ecp'; :math:`2 \hat m \log T` with
        'u-statistic'), :math:`\hat m` the mean of :math:`\lVert Z_i - Z_j\rVert^\alpha`
        over the pairs of rows and :math:`\bar h` the mean of :math:`1/n_i` over the initial
        segments (see Notes).  A number :math:`\lambda \ge 0`: :math:`\lambda` per change
        point, in the units of ``fit`` (a larger :math:`\lambda` never gives more change
        points).  A callable: takes the change points (an int array) and returns the
        penalty, a finite number.  None or 0: no penalty — ``ecp``'s default
        ``penalty = function(cps){0}``, which returns nearly every initial boundary when
        the initial segments are single rows.
    definition : {'ecp', 'u-statistic'}, default 'ecp'
        'ecp': ``ecp``'s goodness of fit and its update (Notes).  'u-statistic': the sum of
        :math:`\hat Q` of :func:`energystats.e_divisive` (U-type within averages, scaled by
        :math:`nm/(n+m)`) between linearly adjacent segments, recomputed exactly after every
        merge (this package's definition before it followed ``ecp``).
    columns : list, optional
        With a DataFrame ``X``: the columns used.
    n_threads : int or None
        Threads of the pairwise distances (with ``backend='dask'``: of each task).
    backend : {None, 'threads', 'dask'}, default None (threads)
        'dask': the block sums of coarser initial segments (``member``) as tiles on the
        current Dask cluster (the series stays in memory; Dask input is refused).  Only
        there does it help: the sums are the O(T²) work, the merges O(k²) for k initial
        segments.  With one segment per row the T×T matrix is the merge's own state, so
        'dask' is refused there, and from more than 2 896 segments (each task would return
        a k×k table over 64 MiB).

    Returns
    -------
    EAggloResult
        ``changepoints``, ``changepoint_labels``, ``labels`` (the cluster of each row: the
        first and the last segments share label 0 when they were merged), ``fit``,
        ``penalised_fit``, ``path`` (a DataFrame: ``n_changepoints``, ``merged``, ``fit``,
        ``penalised_fit``, ``wrapped``), ``path_changepoints``, ``penalty`` (λ per change
        point, in the units of ``fit``; the callable when one was given), ``definition``;
        :meth:`~EAggloResult.to_frame`, :meth:`~EAggloResult.plot`.

    Warns
    -----
    UserWarning
        Below 20 rows: the default penalty's calibration does not hold there (on iid normal
        series it reported change points in 54 % of series of 3 rows and 15 % of 10 rows).

    Notes
    -----
    'ecp'.  With :math:`\rho(x, y) = \lVert x - y\rVert^\alpha` and initial segments
    :math:`C_a` of :math:`n_a` rows, the distance between two of them is

    .. math::

        D(C_a, C_b) = \frac{2}{n_a n_b}\sum_{x \in C_a, y \in C_b} \rho(x, y)
        - \frac{1}{n_a^2}\sum_{x, x' \in C_a} \rho(x, x')
        - \frac{1}{n_b^2}\sum_{y, y' \in C_b} \rho(y, y')

    (the V-statistic :math:`\mathcal E` of :func:`energystats.energy_distance`, without the
    factor :math:`n_a n_b/(n_a+n_b)`).  The goodness of fit of the clusters
    :math:`C_1, \dots, C_k` in cyclic order (:math:`C_0 = C_k`, :math:`C_{k+1} = C_1`) is

    .. math::

        F = \sum_{c=1}^{k} \bigl[D(C_c, C_{c-1}) + D(C_c, C_{c+1})\bigr],

    and after a merge the distances to every other cluster :math:`C` follow the recursion

    .. math::

        D(A \cup B, C) = \frac{(n_A + n_C) D(A, C) + (n_B + n_C) D(B, C) - n_C D(A, B)}
        {n_A + n_B + n_C}.

    Each step merges the neighbours whose merge gives the largest :math:`F` (ties: ``ecp``'s
    smallest cluster number); the fit of the last row (one cluster) is what the update
    gives, not 0.  The chosen segmentation is the *first* maximum of
    :math:`F - \mathrm{penalty}` along the path (R's ``which.max``).  One cluster has no
    change point (``ecp`` lists the start of a wrapped cluster there).

    The default penalty.  Under no change (independent rows),
    :math:`\mathrm E\,D(C_a, C_b) = m (1/n_a + 1/n_b)` with
    :math:`m = \mathrm E\lVert X - X'\rVert^\alpha`, whatever the sizes (the V-statistic's
    bias), so every neighbouring pair adds about :math:`4 m \bar h` to :math:`F`; and for
    α = 2 and Gaussian rows :math:`\frac{n_a n_b}{n_a+n_b} D / m` is exactly
    :math:`\chi^2_1`, whose maximum over T positions stays below :math:`2 \log T` (the
    universal threshold).  Hence :math:`\lambda = 4 \hat m \bar h (1 + 2 \log T)`: the null
    mean of a pair plus :math:`2\log T` of its spread, per change point.  It is a rule for
    an estimate, not a test: on iid series of 200 to 1000 rows it reported change points in
    0 to 10 % of normal series and more with heavy tails or serial dependence (see the
    guide).  A change found only without a penalty is not supported by the data.

    A constant series has no change point with 'auto' (every fit is 0 there).

    Working units: the series is multiplied by a power of two (the largest magnitude in
    [0.5, 1)) before the distances are formed; ``fit``, ``penalised_fit`` and the path are
    converted back (overflow gives inf), and a number or callable ``penalty`` is converted
    into working units, so the change points do not depend on the magnitude of ``X``.

    With one initial segment per row the T×T distance matrix is formed once (O(T²) memory;
    a :class:`MemoryError` says so before allocating when it cannot fit); from coarser
    initial segments only their k×k block sums are kept, streamed from the rows (O(T²)
    work, O(k²) memory, on threads or as Dask tiles).  Each merge then costs O(k) for k
    clusters.

    References
    ----------
    .. [1] Matteson, D. S. and James, N. A. (2014). A nonparametric approach for multiple
       change point analysis of multivariate data. J. Amer. Statist. Assoc. 109(505),
       334–345.
    .. [2] James, N. A. and Matteson, D. S. (2014). ecp: An R package for nonparametric
       multiple change point analysis of multivariate data. J. Stat. Softw. 62(7), 1–25.

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> rng = np.random.default_rng(1)
    >>> x = np.concatenate([rng.normal(0, 1, 40), rng.normal(3, 1, 40)])
    >>> res = es.e_agglo(x)
    >>> res.changepoints.tolist(), round(res.penalty, 2)
    ([40], 74.73)
    >>> es.e_agglo(x, member=np.repeat(np.arange(16), 5)).path["n_changepoints"].tolist()[:3]
    [15, 14, 13]

    Without a penalty (``ecp``'s default), noise from one segment per row is cut nearly
    everywhere:

    >>> noise = rng.normal(size=100)
    >>> es.e_agglo(noise).changepoints.tolist(), es.e_agglo(noise, penalty=0).changepoints.size
    ([], 67)
    """
    _refuse_dask_input(X)
    Z, index, cols = time_series(X, columns)
    T = Z.shape[0]
    alpha = check_exponent(exponent)
    nt = check_n_threads(n_threads)
    kind = _check_penalty(penalty)
    if not (isinstance(definition, str) and definition in DEFINITIONS):
        raise ValueError(f"`definition` must be 'ecp' or 'u-statistic'; got {definition!r}.")
    bounds = _initial_bounds(member, T)
    starts = bounds[:-1]
    k0 = starts.size
    if k0 < 2:
        raise ValueError(f"E-Agglo needs at least 2 initial segments to merge; got {k0} "
                         f"(T = {T} rows" + (")." if member is None else ", `member` with one "
                                                                        "label)."))
    if T < MIN_ROWS:
        warn(f"e_agglo on T = {T} rows: below {MIN_ROWS} rows the change points are not "
             f"reliable (with the default penalty, iid normal series of 3 and 10 rows got "
             f"change points in 54 % and 15 % of cases); treat them as exploratory.")
    dask_backend = _backend(backend, k0, T)
    # working units: the series times 2**-e, the largest magnitude in [0.5, 1); the
    # distances then neither overflow nor underflow, and `scale` converts back exactly
    Zw, met, scale = normalise(resolve_metric("energy", alpha), Z)
    M = _block_sums(Zw, met, bounds, nt if n_threads is not None or not dask_backend else 1,
                    dask_backend)
    m_hat = float(M.sum()) / (T * (T - 1))          # mean ρ over the pairs of rows
    sizes = np.diff(bounds).astype(np.float64)
    if definition == "ecp":
        if k0 == T:                                  # one row per segment: D = 2ρ
            M *= 2.0
        else:
            _ecp_distances(M, sizes)
        fits, cps, merged, wrapped = _ecp_path(M, sizes, starts)
        lam_w = 4.0 * m_hat * float(np.mean(1.0 / sizes)) * (1.0 + 2.0 * math.log(T))
    else:
        fits, cps, merged, wrapped = _u_path(M, sizes, starts)
        lam_w = 2.0 * m_hat * math.log(T)
    del M
    to_working = Scale(-scale.shift, scale.degree)   # original units -> working units
    fits_w = np.asarray(fits, dtype=np.float64)
    counts = np.array([c.size for c in cps])
    if kind == "auto":
        # a constant series (every distance 0): every fit is 0 and λ is 0; no change point
        pen_w = lam_w * counts if m_hat > 0 else np.where(counts > 0, np.inf, 0.0)
        reported = scale.apply(lam_w)
    elif kind == "none":
        pen_w = np.zeros_like(fits_w)
        reported = 0.0
    elif kind == "number":
        lam = float(penalty)
        pen_w = np.zeros_like(fits_w)
        with np.errstate(over="ignore"):
            pen_w[counts > 0] = to_working.apply(lam) * counts[counts > 0]
        reported = lam
    else:
        pen_w = np.array([to_working.apply(_callable_value(penalty, c)) for c in cps])
        reported = penalty
    with np.errstate(invalid="ignore"):
        scores = fits_w - pen_w
    top = np.nanmax(scores)
    ties = np.flatnonzero(scores == top)
    choice = int(ties[0] if definition == "ecp" else ties[-1])  # ecp: R's which.max
    chosen = cps[choice]
    frame = pd.DataFrame({"n_changepoints": counts, "merged": merged,
                          "fit": scale.apply(fits_w), "penalised_fit": scale.apply(scores),
                          "wrapped": wrapped})
    return EAggloResult(
        changepoints=chosen, changepoint_labels=index_labels(chosen, index),
        labels=_labels(chosen, wrapped[choice], T), fit=float(frame["fit"].iloc[choice]),
        penalised_fit=float(frame["penalised_fit"].iloc[choice]), path=frame,
        path_changepoints=cps, exponent=alpha, columns=cols, index=index, data=Z,
        penalty=reported, definition=definition)
