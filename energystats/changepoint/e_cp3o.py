"""E-cp3o (:func:`e_cp3o`): a fixed number of energy change points by dynamic programming, as
R ``ecp``'s ``e.cp3o`` finds them (Zhang, James & Matteson 2017), with ecp's choice among
1 … K change points."""
from __future__ import annotations

import numbers

import numpy as np

from .._core import _interrupt, _memory
from .._core._engine import normalise
from .._core._input import time_series
from .._core._metrics import resolve_metric
from .._core._validation import check_n_threads, warn
from .._lib import _changepoint as _kernel
from ._results import ChangePointWarning, ECp3oResult, index_labels, segment_labels
from .e_divisive import check_exponent

__all__ = ["e_cp3o"]

SEARCHES = ("ecp", "exact")
#: the exact programme keeps K·T² values and takes K·T³/6 steps: for short series only
EXACT_MAX_ROWS = 1000
#: the largest number of change points tried by default
DEFAULT_MAX = 5


def _check_int(name, value, lo, hi, rule):
    if not (isinstance(value, numbers.Integral) and not isinstance(value, bool) and lo <= value <= hi):
        raise ValueError(f"`{name}` must be an integer in [{lo}, {hi}] ({rule}); got {value!r}.")
    return int(value)


def window_sums(Zw, delta, alpha):
    """The inputs of the programme: ``d1[i] = ρ(Z_i, Z_{i+1})`` and, for every row s with
    δ−1 ≤ s ≤ T−δ−1, the sums of ρ within rows s−δ+1 … s (``wl``), within rows s+1 … s+δ
    (``wr``) and between the two windows (``bt``); 0 elsewhere.  Every window sum is summed
    directly (no difference of running sums), band by band of lags, O(T·δ²)."""
    T = Zw.shape[0]

    def lag(l):                                   # ρ(Z_i, Z_{i+l}), i = 0 … T-l-1
        diff = Zw[l:] - Zw[:-l]
        sq = np.einsum("ij,ij->i", diff, diff)
        return sq if alpha == 2.0 else (np.sqrt(sq) if alpha == 1.0 else sq ** (alpha / 2.0))

    def run(v, width, start, stop):               # Σ v[j … j+width-1] for j = start … stop-1
        view = np.lib.stride_tricks.sliding_window_view(v, width)
        return view[start:stop].sum(axis=1)

    wl = np.zeros(T)
    bt = np.zeros(T)
    lo, hi = delta - 1, T - delta                 # s = lo … hi-1 have both windows inside
    for l in range(1, 2 * delta):
        v = lag(l)
        if l < delta:                             # pairs within the left window ending at s
            wl[lo:] += run(v, delta - l, 0, T - delta + 1)
        # pairs across s at lag l: i from max(s-δ+1, s+1-l) to min(s, s+δ-l)
        if l <= delta:
            bt[lo:hi] += run(v, l, lo + 1 - l, hi + 1 - l)
        else:
            bt[lo:hi] += run(v, 2 * delta - l, 0, hi - lo)
    wr = np.zeros(T)
    wr[: T - delta] = wl[delta:]                  # the window after s is the one ending at s+δ
    return lag(1), wl, wr, bt


def ecp_number(gof):
    """ecp's choice of the number of change points from the fits with 1 … K changes: with
    f_k = gof_{k+1} − gof_k and u = mean(f) + sd(f)/2 (sample SD; 0 for one difference), the
    number is one more than the count of leading f_k ≥ u."""
    f = np.diff(np.asarray(gof, dtype=np.float64))
    if f.size == 0:
        return 1
    u = f.mean() + 0.5 * (f.std(ddof=1) if f.size > 1 else 0.0)
    k = 0
    while k < f.size and f[k] >= u:
        k += 1
    return k + 1


def _backtrack(A, k, T):
    """The k+1 boundaries (last rows of the segments before each change) of row k of A."""
    s = int(A[k, T - 1])
    out = [s]
    for kk in range(k - 1, -1, -1):
        s = int(A[kk, s])
        out.append(s)
    return np.array(out[::-1], dtype=np.intp)


def e_cp3o(X, *, n_changepoints=None, max_changepoints=None, delta=29, exponent=1.0,
           search="ecp", columns=None, n_threads=None):
    r"""Change points by dynamic programming on windowed E-statistics (R ``ecp``'s ``e.cp3o``).

    For every number k = 1 … K of change points the segmentation of the rows 0 … T−1 that
    maximises the goodness of fit

    .. math::

        G(\tau_1, \dots, \tau_k) = \sum_{i=1}^{k} \hat E(\tau_{i-1}, \tau_i, \tau_{i+1}),
        \qquad \tau_0 = -1,\ \tau_{k+1} = T - 1,

    the sum over adjacent pairs of segments of an approximate scaled energy statistic. With
    u < s < t, the left segment rows u+1 … s and the right one s+1 … t, ρ(x, y) = ‖x − y‖^α,

    .. math::

        \hat E(u, s, t) = \frac{(s-u)(t-s)}{(t-u)^2}\Big(\frac{2}{\delta^2} B_s
            - \hat W_L - \hat W_R\Big),

    where B_s sums ρ over the δ rows before s (s included) × the δ rows after it, and each
    segment's mean within distance Ŵ is estimated from the δ(δ−1)/2 pairs within its window
    next to s plus its consecutive pairs ρ(Z_{i−1}, Z_i) beyond the window — the "complete
    portion in a window, linear portion elsewhere" approximation of Zhang, James & Matteson
    (2017) that makes each evaluation O(1). Segments have at least δ + 1 rows.

    ``search='ecp'`` (default) is ecp's programme, O(K·T²): the best fit of rows 0 … t with
    k+1 changes is the best fit of rows 0 … s with k changes plus Ê of its last segment
    against the new one — the last segment is not re-chosen for the new one, so the fit is
    not always the exact maximum of G (measured: see the guide). ``search='exact'`` maximises G
    exactly over every segmentation (O(K·T³), series of up to 1 000 rows). ecp also prunes
    candidates by a random bound (its ``eps``); this search prunes nothing, so it is
    deterministic and never drops the best candidate.

    The number of change points is ``n_changepoints`` when given; otherwise ecp's rule picks
    it among 1 … ``max_changepoints`` from the increases f_k = G_{k+1} − G_k of the best fits:
    one more than the number of leading increases at least mean(f) + sd(f)/2. **This is not
    a test**: e-cp3o always returns at least one change point, and with K = 2 always two (one
    increase is its own threshold). To ask whether a change is there, use
    :func:`energystats.e_divisive` (permutation or block tests).

    Parameters
    ----------
    X : array_like or pandas.Series or pandas.DataFrame
        The series, one row per time point (T × d, or 1-D). A DatetimeIndex/PeriodIndex must
        be in time order; non-numeric columns are refused (select them with ``columns``).
    n_changepoints : int, optional
        Return exactly this many change points (1 … T // (δ+1) − 1).
    max_changepoints : int, optional
        K, the most change points tried when ``n_changepoints`` is not given (default
        min(5, T // (δ+1) − 1); ecp's ``K``, whose default there is 1).
    delta : int, default 29
        δ ≥ 2, the window (ecp's ``delta``); segments have at least δ + 1 rows.
    exponent : float, default 1.0
        α in (0, 2) (ecp allows 2, where the statistic compares means only).
    search : {'ecp', 'exact'}, default 'ecp'
    columns : list, optional
        The DataFrame columns to use (default: all; each must be numeric).
    n_threads : int, optional
        Threads for the programme (default: all cores); the result does not depend on it.

    Returns
    -------
    ECp3oResult
        ``changepoints`` (first rows of the new segments, ascending; ecp's ``estimates``
        in its 1-based "end of segment" convention are the same numbers), ``gof`` (the best
        G for 1 … K change points; ecp's ``gofM``), ``path_changepoints`` (ecp's ``cpLoc``),
        ``n_changepoints``, ``chosen_by`` ('fixed' or 'ecp rule'), ``to_frame()``.

    References
    ----------
    W. Zhang, N. A. James and D. S. Matteson (2017), "Pruning and nonparametric multiple change
    point detection", IEEE International Conference on Data Mining Workshops (ICDMW).

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> rng = np.random.default_rng(3)
    >>> x = np.concatenate([rng.normal(0, 1, 200), rng.normal(3, 1, 200), rng.normal(0, 1, 200)])
    >>> res = es.e_cp3o(x, max_changepoints=4)
    >>> res.changepoints.tolist(), res.chosen_by
    ([200, 400], 'ecp rule')
    >>> es.e_cp3o(x, n_changepoints=1).changepoints.tolist()
    [400]
    """
    Z, index, cols = time_series(X, columns)
    T = Z.shape[0]
    alpha = check_exponent(exponent)
    nt = check_n_threads(n_threads)
    if not (isinstance(search, str) and search in SEARCHES):
        raise ValueError(f"`search` must be 'ecp' or 'exact'; got {search!r}.")
    delta = _check_int("delta", delta, 2, max(2, (T - 2) // 2), "the window, one less than the "
                       f"smallest segment; two segments of delta+1 rows must fit in T = {T}")
    if T < 2 * (delta + 1):
        raise ValueError(f"`X` has T = {T} rows: e_cp3o needs at least 2·(delta+1) = "
                         f"{2 * (delta + 1)} rows for one change point (delta = {delta}).")
    most = T // (delta + 1) - 1
    if n_changepoints is not None:
        k_fixed = _check_int("n_changepoints", n_changepoints, 1, most,
                             f"segments of at least delta+1 = {delta + 1} rows in T = {T}")
        K = k_fixed
    else:
        k_fixed = None
        K = (min(DEFAULT_MAX, most) if max_changepoints is None else
             _check_int("max_changepoints", max_changepoints, 1, most,
                        f"segments of at least delta+1 = {delta + 1} rows in T = {T}"))
    if search == "exact" and T > EXACT_MAX_ROWS:
        raise ValueError(f"`search='exact'` takes K·T³ steps: series of at most "
                         f"{EXACT_MAX_ROWS} rows; got T = {T}. Use search='ecp'.")
    width = 2 * delta - 1
    need = 8.0 * T * (width + 8) + (16.0 * K * T * T if search == "exact" else 16.0 * K * T)
    _memory.check_fits(need, "the window sums and the programme of e_cp3o",
                       "Use a smaller `delta` or fewer change points.")
    if not np.all(np.isfinite(Z)):
        raise ValueError("`X` must be finite (no NaN or inf).")
    Zw, _met, scale = normalise(resolve_metric("energy", alpha), Z)
    d1, wl, wr, bt = window_sums(np.ascontiguousarray(Zw, dtype=np.float64), delta, alpha)
    if not np.any(d1 > 0):
        warn("`X` is constant: every fit is 0, so the change points returned follow the tie "
             "rule (smallest positions), not the data.", ChangePointWarning)
    gof_w, bounds = _run(search, d1, wl, wr, bt, delta, K, T, nt)
    gof = np.asarray(scale.apply(gof_w), dtype=np.float64).reshape(-1)
    if k_fixed is not None:
        number, chosen_by = k_fixed, "fixed"
    else:
        number, chosen_by = ecp_number(gof_w), "ecp rule"
    paths = [b + 1 for b in bounds]               # first rows of the new segments
    cps = paths[number - 1]
    return ECp3oResult(
        changepoints=cps, changepoint_labels=index_labels(cps, index),
        labels=segment_labels(cps, T), n_changepoints=number, gof=gof,
        path_changepoints=paths, chosen_by=chosen_by, max_changepoints=K, delta=delta,
        exponent=alpha, search=search, columns=cols, index=index, data=Z)


def _run(search, d1, wl, wr, bt, delta, K, T, nt):
    """The fits (working units) and the boundaries (last rows before each change) for
    k = 1 … K change points."""
    if search == "exact":
        gof, bounds, cancelled = _interrupt.call(_kernel.cp3o_exact, d1, wl, wr, bt, delta, K,
                                                 nt, cancel=_kernel.cancel, reset=_kernel.reset)
        if cancelled:
            raise KeyboardInterrupt
        return gof, bounds
    F = np.full((K, T), -np.inf)
    A = np.full((K, T), -1, dtype=np.intp)
    if _interrupt.call(_kernel.cp3o_path, d1, wl, wr, bt, delta, F, A, nt,
                       cancel=_kernel.cancel, reset=_kernel.reset):
        raise KeyboardInterrupt
    return F[:, T - 1].copy(), [_backtrack(A, k, T) for k in range(K)]

