r"""Energy hierarchical clustering (Székely & Rizzo 2005), as a SciPy linkage matrix."""
from __future__ import annotations

import numpy as np

from . import _cluster_engine as _ce
from ._metrics import resolve_metric
from ._validation import as_data, as_square_matrix, check_n_threads
from .frames import select_frame

__all__ = ["energy_linkage"]


def energy_linkage(X, *, columns=None, numeric_only=False, metric="energy", exponent=1.0, sigma=1.0,
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
    metric, exponent, sigma, n_threads
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
    ``hclust(d^alpha, method = "ward.D")``).  The merges are computed by
    SciPy's nearest-neighbour chain (``method='ward'``) run on
    :math:`\sqrt{\rho}`, whose internal recurrence on squared values is the one
    above; heights are squared back.  O(n²) memory and time.

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
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    met = resolve_metric(metric, exponent, sigma)
    nt = check_n_threads(n_threads)
    X = select_frame(X, columns, numeric_only=numeric_only)[0]
    if met.kind == "precomputed":
        A = as_square_matrix(X, "X")
    else:
        A, _ = as_data(X, "X")
    if A.shape[0] < 2:
        raise ValueError(f"`X` must have at least 2 samples to build a hierarchy; got {A.shape[0]}.")
    D = _ce.semimetric_matrix(A, met, nt)
    np.fill_diagonal(D, 0.0)
    y = np.sqrt(np.maximum(squareform(D, checks=False), 0.0))
    Z = linkage(y, method="ward")
    Z[:, 2] = Z[:, 2] ** 2
    return Z
