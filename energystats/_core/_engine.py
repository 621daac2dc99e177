"""Private drivers between the validated public API and the compiled kernels.

Inputs here are already validated (see :mod:`energystats._core._validation`): finite
C-contiguous float32/float64 arrays, integer group codes in ``0..k-1`` and a
:class:`~energystats._core._metrics.ResolvedMetric`.  These functions allocate the
outputs, reorder data as the kernels expect and pick the kernel.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import _memory
from .._lib import _pairwise, _sorted1d

__all__ = ["pairwise_values", "group_sum_matrix", "sort_centred", "sorted_group_sums", "use_sorted_path",
           "normalise", "Scale"]


# -- exact at any magnitude ------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Scale:
    """rho in original units = rho in working units × 2**(shift · degree).

    ``degree`` is the exponent of ``metric='energy'`` (rho is homogeneous of that
    degree) and 0 for the bounded metrics, whose sigma is scaled with the data.
    """

    shift: int = 0
    degree: float = 0.0

    @property
    def identity(self):
        return self.shift == 0 or self.degree == 0.0

    def apply(self, values, inplace=False):
        """``values`` (working units) in original units, as float64; overflow gives inf.

        ``inplace=True`` overwrites ``values`` (a float64 array) instead of
        allocating a copy.
        """
        if self.identity:
            return values
        mult, whole = self.factors()
        with np.errstate(over="ignore", under="ignore"):
            if inplace:
                values *= mult
                return np.ldexp(values, whole, out=values)
            out = np.ldexp(np.asarray(values, dtype=np.float64) * mult, whole)
        return float(out) if np.ndim(out) == 0 else out

    def factors(self):
        """``(mult, whole)``: original = ``ldexp(working * mult, whole)``, ``mult`` in [1, 2)."""
        if self.identity:
            return 1.0, 0
        p = self.shift * self.degree
        whole = math.floor(p)
        return 2.0 ** (p - whole), int(whole)


def _max_abs(*arrays):
    m = 0.0
    for A in arrays:
        if A.size:
            m = max(m, float(A.max()), -float(A.min()))
    return m


def normalise(metric, *arrays):
    """Data in working units where no squared distance can overflow or underflow.

    Every array is multiplied by the same power of two, 2**-e, chosen so that
    the largest magnitude lies in [0.5, 1): exact (no digit changes) for every
    value that stays a normal float.  The energy metric is homogeneous,
    ``rho(cx, cy) = c**exponent rho(x, y)`` (cityblock: ``c rho(x, y)``), and
    the Laplacian and Gaussian metrics are unchanged when sigma is scaled with
    the data, so results in working units convert back exactly
    (``Scale.apply``).  float32 data are left alone: their squares cannot leave the double range.  Returns
    ``(arrays..., metric, Scale)``.
    """
    if metric.kind != "builtin" or any(A.dtype != np.float64 for A in arrays):
        return (*arrays, metric, Scale())
    m = _max_abs(*arrays)
    if m == 0.0:
        return (*arrays, metric, Scale())
    e = math.frexp(m)[1]  # m = f * 2**e with f in [0.5, 1)
    if e == 0:
        return (*arrays, metric, Scale())
    if metric.name in ("energy", "cityblock"):  # homogeneous of degree `param` (cityblock: 1)
        scale = Scale(e, metric.param)
    else:
        try:
            sigma = math.ldexp(metric.param, -e)
        except OverflowError:  # subnormal data: sigma would leave the float range
            sigma = math.inf
        if not (sigma >= 2.2250738585072014e-308 and math.isfinite(sigma)):
            return (*arrays, metric, Scale())  # sigma leaves the range: keep the data as they are
        metric = dataclasses.replace(metric, param=sigma)
        scale = Scale(e, 0.0)
    return (*(np.ldexp(A, -e) for A in arrays), metric, scale)


def aligned_empty(n, m):
    """An uninitialised C-contiguous (n, m) float64 array starting on a 64-byte boundary (when m
    is a multiple of 8, every row then does: vector kernels that load a row's values eight at a
    time never split a load across two cache lines)."""
    buf = np.empty(n * m + 8)
    off = (-buf.ctypes.data % 64) // 8
    return buf[off:off + n * m].reshape(n, m)


def pairwise_values(X, Y, metric, n_threads, *, aligned=False):
    """Dense matrix ``rho(X[i], Y[j])`` (float64).  ``X``/``Y`` validated, same dtype.

    ``aligned``: the matrix starts on a 64-byte boundary (:func:`aligned_empty`)."""
    if metric.kind == "callable":
        return _callable_matrix(X, Y, metric.func)
    if Y.dtype != X.dtype:
        X = X.astype(np.float64)
        Y = Y.astype(np.float64)
    X, Y, metric, scale = normalise(metric, X, Y)
    n, m, d = X.shape[0], Y.shape[0], X.shape[1]
    if 8.0 * n * m > _memory.MiB * 64:
        _memory.check_fits(8.0 * n * m, f"the {n}×{m} matrix of pairwise values",
                           "The statistics and tests (energy_distance, dispersion, energy_test, disco) "
                           "never form it: they stream the sums; otherwise work on a sample of the rows.")
    out = aligned_empty(n, m) if aligned else np.empty((n, m), dtype=np.float64)
    if metric.kind == "scipy":
        return _scipy_matrix(X, Y, metric, out)
    YT = np.ascontiguousarray(Y.T)
    nt = effective_threads(n_threads, float(n) * m * d)
    rows = int(max(1, CALL_WORK // max(m * d, 1)))  # calls short enough to honour Ctrl-C
    mult, whole = scale.factors()
    for i0 in range(0, n, rows):  # the scale applied piece by piece, in cache (Scale.apply's bits)
        _pairwise.pairwise_matrix(X[i0:i0 + rows], YT, out[i0:i0 + rows], metric.code, metric.param, nt,
                                  mult, whole)
    return out


#: values in one tile of SciPy's cdist (8 MiB): each pair's value is the same for any tiling
SCIPY_TILE_VALUES = 2**20


def _scipy_matrix(X, Y, metric, out):
    """rho by ``scipy.spatial.distance.cdist(..., metric.name, **metric.scipy_kwargs())`` in tiles
    of rows (each pair's value does not depend on the tiling), into ``out``; non-finite values are
    an error."""
    from scipy.spatial.distance import cdist

    from ._metrics import check_features

    check_features(metric, X.shape[1])  # V, VI of the data's size; 'max2' metrics' feature limit
    kwargs = metric.scipy_kwargs()      # V, VI, p: given, never computed per tile
    X64, Y64 = (np.asarray(A, dtype=np.float64) for A in (X, Y))
    rows = max(1, SCIPY_TILE_VALUES // max(Y.shape[0], 1))
    for i0 in range(0, X.shape[0], rows):
        out[i0:i0 + rows] = cdist(X64[i0:i0 + rows], Y64, metric.name, **kwargs)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"metric={metric.name!r} gave a non-finite value (SciPy's cdist: an "
                         "overflow, or e.g. 'cosine' of a zero row).")
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


def group_sum_matrix(X, codes, k, metric, n_threads, *, sorted_path=False, working_units=False):
    """k×k matrix ``M[g, h] = Σ_{x∈C_g, y∈C_h} rho(x, y)`` without an n×n matrix.

    ``metric.kind == 'precomputed'`` takes ``X`` as the n×n matrix itself.
    With ``working_units=True`` returns ``(M, scale)``: the sums in the working
    units of :func:`normalise` (finite for any finite data) and the
    :class:`Scale` that converts a statistic homogeneous of degree one in
    rho back (``scale.apply``); statistics should be formed first and
    converted last, so that large sums cannot overflow on the way.
    """
    codes = np.asarray(codes, dtype=np.intp)
    X, metric, scale = normalise(metric, X)
    M = _group_sums(X, codes, k, metric, n_threads, sorted_path)
    return (M, scale) if working_units else scale.apply(M)


def _group_sums(X, codes, k, metric, n_threads, sorted_path):
    if sorted_path:
        return sorted_group_sums(X[:, 0], codes, k)
    if metric.kind in ("precomputed", "callable", "scipy"):
        # no compiled code for a callable or a SciPy metric (cdist in tiles): the n×n matrix
        D = X if metric.kind == "precomputed" else pairwise_values(X, X, metric, n_threads)
        onehot = np.zeros((codes.size, k))
        onehot[np.arange(codes.size), codes] = 1.0
        return onehot.T @ (D @ onehot)
    order = np.argsort(codes, kind="stable")
    Xs = np.ascontiguousarray(X[order])
    cs = np.ascontiguousarray(codes[order])
    bounds = np.zeros(k + 1, dtype=np.intp)
    np.cumsum(np.bincount(cs, minlength=k), out=bounds[1:])
    return streamed_group_sums(Xs, cs, bounds, metric, n_threads)


#: work (pairs × features) of one call of the streamed kernel: about a quarter of a second
#: on one core, so that Ctrl-C is honoured between calls within about a second
CALL_WORK = 1e9
#: below this much work (pairs × features) the kernels run on one thread: starting a team
#: costs more than it saves (measured with benchmarks/bench_threads.py)
PARALLEL_MIN_WORK = 1e6
#: cap on the bytes of the per-stripe k×k accumulators of one call
STRIPE_BYTES = 32 * 2**20


def effective_threads(n_threads, work):
    """``n_threads``, or 1 when ``work`` (pairs × features) is too small to share."""
    return 1 if work < PARALLEL_MIN_WORK else n_threads


def stripe_plan(n, d, k):
    """``(n_stripes, per_call)`` for :func:`streamed_group_sums`, from the data's shape alone.

    Neither depends on the number of threads, so the order in which the
    partial sums are added, hence every bit of the result, is the same for
    any ``n_threads``.
    """
    nblocks = -(-n // _pairwise.ROW_BLOCK_SIZE)
    work = 0.5 * n * n * max(d, 1)
    n_stripes = int(min(nblocks, max(16, math.ceil(work / (CALL_WORK / 8)))))
    per_call = int(max(1, min(n_stripes, CALL_WORK / max(work / n_stripes, 1.0),
                              STRIPE_BYTES // (16 * k * k))))
    return n_stripes, per_call


def streamed_group_sums(Xs, cs, bounds, metric, n_threads):
    """The streamed kernel, stripe by stripe, in calls short enough to be interrupted."""
    n, d = Xs.shape
    k = bounds.size - 1
    XT = np.ascontiguousarray(Xs.T)
    n_stripes, per_call = stripe_plan(n, d, k)
    need = 8.0 * k * k * (2 * per_call + 3)  # the stripes' sums and compensations, the result
    if need > 64 * _memory.MiB:
        _memory.check_fits(need, f"the k×k group sums of {k} groups",
                           "Thousands of groups make every k×k table large: merge groups, or "
                           "work on fewer of them at a time.")
    nt = min(effective_threads(n_threads, 0.5 * n * n * d), per_call)  # a thread per stripe at most
    upper = np.zeros((k, k))
    for s0 in range(0, n_stripes, per_call):
        c = min(per_call, n_stripes - s0)
        acc = np.zeros((c, k, k))
        comp = np.zeros((c, k, k))
        _pairwise.group_sums(Xs, XT, cs, bounds, metric.code, metric.param, s0, n_stripes,
                             acc, comp, nt)
        upper += (acc + comp).sum(axis=0)  # a KeyboardInterrupt surfaces here, between calls
    return upper + upper.T
