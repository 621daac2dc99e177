r"""Energy hierarchical clustering (Székely & Rizzo 2005), as a SciPy linkage matrix."""
from __future__ import annotations

import numpy as np

from . import _engine as _ce
from .._core import _interrupt
from .._lib import _hartigan
from .._core._memory import check_fits
from .._core._metrics import resolve_metric
from .._core._validation import check_n_threads
from .._core._input import sample_matrix

__all__ = ["energy_linkage"]


def energy_linkage(X, *, columns=None, numeric_only=False, metric="energy", exponent=1.0,
                   sigma=1.0, check_negative_type=True,
                   n_threads=None):
    r"""Agglomerative energy clustering; returns a SciPy-compatible linkage matrix.

    At every step the two clusters with the smallest energy cluster distance

    .. math::

        e(C_i, C_j) = \frac{n_i n_j}{n_i + n_j}\,\mathcal{E}(C_i, C_j),
        \qquad \mathcal{E} = 2g(C_i, C_j) - g(C_i, C_i) - g(C_j, C_j),

    are merged (V-statistics, no square root; for two points
    :math:`e = \rho(x, y)`).  The distance to a merged cluster follows the
    Lance–Williams recurrence with Ward's coefficients, which is exact for
    :math:`e` (Székely & Rizzo 2005):

    .. math::

        e(C_i \cup C_j, C_k) = \frac{(n_i + n_k)\, e(C_i, C_k) + (n_j + n_k)\, e(C_j, C_k)
        - n_k\, e(C_i, C_j)}{n_i + n_j + n_k}.

    Parameters
    ----------
    X : array_like or DataFrame, shape (n_samples, n_features)
        Data; with ``metric='precomputed'`` an n×n semimetric matrix.
    columns : list, optional
        With a DataFrame ``X``: the columns to use (default: all, which must
        be numeric).
    numeric_only : bool, default False
        With a DataFrame ``X`` and ``columns=None``: leave wholly non-numeric
        columns out instead of raising an error that names them.
    metric, exponent, sigma, n_threads, check_negative_type
        As in :func:`energystats.pairwise`; ``'precomputed'`` is accepted.

    Returns
    -------
    ndarray of float64, shape (n_samples - 1, 4)
        SciPy linkage matrix: merged cluster ids (original points 0..n-1, the
        cluster formed at row ``r`` is ``n + r``), the merge height
        :math:`e(C_i, C_j)`, and the size of the new cluster; rows by
        non-decreasing height.  Use it with :func:`scipy.cluster.hierarchy.fcluster`
        or ``dendrogram``.

    Notes
    -----
    The heights equal those of R ``energy::energy.hclust(dist(x))`` (which is
    ``hclust(d^alpha, method = "ward.D")``).  The merges are computed by the
    nearest-neighbour chain of SciPy's ``linkage(method='ward')``, step for
    step (the same linkage matrix, bit for bit), run on :math:`\sqrt{\rho}`,
    whose internal recurrence on squared values is the one above; heights are
    squared back.  O(n²) time; the memory is one condensed vector of the
    n(n-1)/2 distances (4 n² bytes, built block of rows by block, updated in
    place), checked before any work: a MemoryError says at once when it does
    not fit.  Ctrl-C stops the computation within about a second.

    References
    ----------
    .. [1] Székely, G. J. and Rizzo, M. L. (2005). Hierarchical clustering via
       joint between-within distances: extending Ward's minimum variance
       method. Journal of Classification 22(2), 151–183.

    Examples
    --------
    >>> import energystats as es
    >>> from scipy.cluster.hierarchy import fcluster
    >>> Z = es.energy_linkage([0.0, 1.0, 10.0, 12.0])
    >>> Z
    array([[ 0. ,  1. ,  1. ,  2. ],
           [ 2. ,  3. ,  2. ,  2. ],
           [ 4. ,  5. , 19.5,  4. ]])
    >>> fcluster(Z, 2, criterion="maxclust")
    array([1, 1, 2, 2], dtype=int32)
    """
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    nt = check_n_threads(n_threads)
    A = sample_matrix(X, columns=columns, numeric_only=numeric_only,
                      precomputed=met.kind == "precomputed").X
    n = A.shape[0]
    if n < 2:
        raise ValueError(f"`X` must have at least 2 samples to build a hierarchy; got {n}.")
    d = 0 if met.kind == "precomputed" else A.shape[1]
    check_fits(linkage_bytes(n, d, met.kind),
               f"energy_linkage of {n} points (the condensed vector of their n(n-1)/2 distances, float64)",
               _ce.too_big_advice(d))
    y = condensed_sqrt_rho(A, met, nt)
    Z = ward_linkage(y, n)
    Z[:, 2] = Z[:, 2] ** 2
    return Z


def linkage_bytes(n, d, kind):
    """Peak bytes of :func:`energy_linkage` beyond its input (the constant checked with tracemalloc)."""
    nbytes = 8 * (n * (n - 1) // 2) + 64 * n  # the condensed vector, Z and the work arrays
    if kind == "builtin":
        nbytes += _ce.block_bytes(n, d)
    elif kind == "callable":
        nbytes += 8 * _ce.block_rows(n) * n
    return nbytes


_NOT_FINITE = "The condensed distance matrix must contain only finite values."


def condensed_sqrt_rho(A, met, n_threads):
    r"""The condensed vector of :math:`\sqrt{\max(\rho, 0)}` (upper triangle, row by row).

    Built block of rows by block (never the n×n matrix unless it is the
    input), equal bit for bit to ``sqrt(maximum(squareform(D), 0))`` of the
    full matrix ``D``.  Ctrl-C is honoured between blocks.
    """
    n = A.shape[0]
    y = np.empty(n * (n - 1) // 2)
    if met.kind == "precomputed":
        rows = _ce.block_rows(n)
        blocks = ((i0, A[i0:i0 + rows]) for i0 in range(0, n, rows))
    else:
        blocks = _ce.semimetric_rows(A, met, n_threads, upper=True)

    def off(i):  # position of row i's first pair (i, i + 1) in y; off(n) == len(y)
        return i * n - i * (i + 1) // 2

    for i0, R in blocks:
        i1 = i0 + R.shape[0]
        c0 = i0 if R.shape[1] < n else 0  # R's first column (upper=True callables start at i0)
        if met.kind == "callable" and np.any(R[np.arange(i1 - i0), np.arange(i0, i1) - c0] != 0):
            raise ValueError("the `metric` callable must give rho(x, x) = 0.")
        for i in range(i0, min(i1, n - 1)):
            np.maximum(R[i - i0, i + 1 - c0:], 0.0, out=y[off(i):off(i + 1)])
        seg = y[off(i0):off(i1)]
        np.sqrt(seg, out=seg)
        if not np.isfinite(seg).all():
            raise ValueError(_NOT_FINITE)
    return y


def ward_linkage(y, n):
    """SciPy's ``linkage(y, method='ward')`` (bit for bit), in place on ``y``, honouring Ctrl-C.

    The nearest-neighbour chain runs without the GIL in a worker
    (:func:`energystats._lib._hartigan.ward_nn_chain`) and reads the cancel
    flag at every step; on Ctrl-C it stops and KeyboardInterrupt is raised.
    SciPy's own ``linkage`` holds the GIL throughout, so Ctrl-C would wait
    for its end.  ``y`` is overwritten.
    """
    Z = np.empty((n - 1, 4))
    size = np.ones(n, dtype=np.intc)
    chain = np.empty(n, dtype=np.intc)
    _interrupt.call(_hartigan.ward_nn_chain, y, n, Z, size, chain,
                    cancel=_hartigan.cancel, reset=_hartigan.reset, inline=n <= _ce.SHORT_N)
    Z = np.ascontiguousarray(Z[np.argsort(Z[:, 2], kind="mergesort")])
    _hartigan.label_linkage(Z, n)
    return Z
