# cython: language_level=3
"""Energy clustering kernels on a Gram matrix.

Hartigan's method (França, Rizzo and Vogelstein 2021, "Kernel k-Groups via
Hartigan's Method", IEEE TPAMI 43(12): Algorithm 1, eq. 19) and kernel
k-means (Lloyd) share one piece of bookkeeping:

* ``QX[i, l] = Q_l(x_i) = sum_{y in C_l} K(x_i, y)`` — the n×k matrix;
* ``Q[l] = Q_l = sum_{x, y in C_l} K(x, y)`` and ``sizes[l] = n_l``.

Moving point ``i`` from ``j`` to ``l`` changes column ``j`` of ``QX`` by
``-G[:, i]`` and column ``l`` by ``+G[:, i]`` (O(n)), and

    Q_j <- Q_j - 2 Q_j(x_i) + G_ii,      Q_l <- Q_l + 2 Q_l(x_i) + G_ii.

A Hartigan decision for one point costs O(k):

    dQ(j -> l) = [Q_j/n_j - 2 Q_j(x_i) + G_ii] / (n_j - 1)
               - [Q_l/n_l - 2 Q_l(x_i) - G_ii] / (n_l + 1).

So a sweep costs O(n k) plus O(n) per move.  ``W = trace(G) - sum_l Q_l / n_l``.

Every kernel takes validated arrays (G symmetric float64 n×n, C-contiguous;
labels in 0..k-1 with every cluster non-empty) and runs without the GIL.
Arguments are marked ``# IN`` / ``# OUT`` / ``# IN/OUT``.
"""
import numpy as np

cimport cython
from cython.parallel cimport prange
from libc.math cimport fabs

ctypedef Py_ssize_t intp


cdef void _init_bookkeeping(const double[:, ::1] G, const intp[::1] labels, intp k,
                            double[:, ::1] QX, double[::1] Q, intp[::1] sizes,
                            int n_threads) noexcept nogil:
    """QX = G Z, Q_l = sum_{i in C_l} QX[i, l], sizes — O(n²)."""
    cdef intp n = G.shape[0]
    cdef intp i, m, l
    for l in range(k):
        Q[l] = 0.0
        sizes[l] = 0
    for i in prange(n, num_threads=n_threads, schedule="static"):
        for l in range(k):
            QX[i, l] = 0.0
        for m in range(n):
            QX[i, labels[m]] += G[i, m]
    for i in range(n):
        l = labels[i]
        sizes[l] += 1
        Q[l] += QX[i, l]


cdef inline void _move(const double[:, ::1] G, intp[::1] labels, double[:, ::1] QX,
                       double[::1] Q, intp[::1] sizes, intp i, intp j, intp l) noexcept nogil:
    """Move point i from cluster j to cluster l, updating the bookkeeping in O(n)."""
    cdef intp n = G.shape[0]
    cdef intp m
    cdef double gii = G[i, i]
    Q[j] = Q[j] - 2.0 * QX[i, j] + gii
    Q[l] = Q[l] + 2.0 * QX[i, l] + gii
    cdef const double* gi = &G[i, 0]  # row i (G symmetric): contiguous, unlike column i
    cdef double* qx = &QX[0, 0]
    cdef intp k = QX.shape[1]
    for m in range(n):
        qx[m * k + j] -= gi[m]
        qx[m * k + l] += gi[m]
    sizes[j] -= 1
    sizes[l] += 1
    labels[i] = l


cdef double _objective(const double[::1] Q, const intp[::1] sizes, intp k) noexcept nogil:
    cdef intp l
    cdef double s = 0.0
    for l in range(k):
        if sizes[l] > 0:
            s += Q[l] / sizes[l]
    return s


def init_bookkeeping(const double[:, ::1] G,      # IN  n×n Gram matrix
                     const intp[::1] labels,      # IN  codes 0..k-1
                     intp k,
                     double[:, ::1] QX,           # OUT n×k
                     double[::1] Q,               # OUT k
                     intp[::1] sizes,             # OUT k
                     int n_threads=1):
    """Fill the bookkeeping ``QX``, ``Q``, ``sizes`` from scratch (O(n²))."""
    with nogil:
        _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)


def hartigan(const double[:, ::1] G,    # IN  n×n Gram matrix
             intp[::1] labels,          # IN/OUT codes 0..k-1, every cluster non-empty
             intp k,
             double[:, ::1] QX,         # IN/OUT n×k bookkeeping
             double[::1] Q,             # IN/OUT k
             intp[::1] sizes,           # IN/OUT k
             intp max_iter,
             double tol,
             intp max_moves=-1,
             bint initialise=True,
             bint refresh=True,
             int n_threads=1):
    """Hartigan sweeps until a sweep moves no point (Algorithm 1 of França et al. 2021).

    A point moves to the cluster of largest ``dQ`` when ``dQ > tol``; a
    singleton never gives up its point.  ``max_moves >= 0`` stops after that
    many moves (a hook for the tests that check the bookkeeping move by move);
    ``initialise`` computes the bookkeeping first, otherwise the given one is
    used; ``refresh`` recomputes it exactly at the end.

    Returns ``(n_sweeps, n_moves, converged)``.
    """
    cdef intp n = G.shape[0]
    cdef intp i, j, l, best, sweep = 0, moves = 0, moved
    cdef double gii, base, d, dbest
    cdef bint converged = False, stop = False
    with nogil:
        if initialise:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
        while sweep < max_iter and not stop:
            sweep += 1
            moved = 0
            # re-sum the Q_l from the columns of QX (O(n)) to keep rounding from drifting
            if sweep > 1:
                for l in range(k):
                    Q[l] = 0.0
                for i in range(n):
                    Q[labels[i]] += QX[i, labels[i]]
            for i in range(n):
                j = labels[i]
                if sizes[j] <= 1:
                    continue
                gii = G[i, i]
                base = (Q[j] / sizes[j] - 2.0 * QX[i, j] + gii) / (sizes[j] - 1)
                best = -1
                dbest = tol
                for l in range(k):
                    if l == j:
                        continue
                    d = base - (Q[l] / sizes[l] - 2.0 * QX[i, l] - gii) / (sizes[l] + 1)
                    if d > dbest:
                        dbest = d
                        best = l
                if best >= 0:
                    _move(G, labels, QX, Q, sizes, i, j, best)
                    moved += 1
                    moves += 1
                    if max_moves >= 0 and moves >= max_moves:
                        stop = True
                        break
            if moved == 0:
                converged = True
                break
        if refresh:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
    return sweep, moves, converged


def lloyd(const double[:, ::1] G,       # IN  n×n Gram matrix
          intp[::1] labels,             # IN/OUT codes 0..k-1, every cluster non-empty
          intp k,
          double[:, ::1] QX,            # IN/OUT n×k
          double[::1] Q,                # IN/OUT k
          intp[::1] sizes,              # IN/OUT k
          intp max_iter,
          double tol,
          bint initialise=True,
          bint refresh=True,
          int n_threads=1):
    """Kernel k-means (Lloyd; Dhillon et al. 2004): batch reassignment to the nearest centroid.

    The squared feature-space distance of ``x_i`` to the centroid of ``C_l``
    is ``G_ii - 2 Q_l(x_i)/n_l + Q_l/n_l²``.  All points are assigned against
    the centroids of the previous iteration; a point moves only when its new
    centroid is closer by more than ``tol``, and a move that would empty a
    cluster is skipped.  Returns ``(n_iter, n_moves, converged)``.
    """
    cdef intp n = G.shape[0]
    cdef intp i, j, l, best, it = 0, moves = 0, moved
    cdef double dcur, d, dbest
    cdef intp[::1] target = np.empty(n, dtype=np.intp)
    cdef bint converged = False
    with nogil:
        if initialise:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
        while it < max_iter:
            it += 1
            # assignment step against the current centroids
            for i in prange(n, num_threads=n_threads, schedule="static"):
                j = labels[i]
                dcur = Q[j] / (<double>sizes[j] * sizes[j]) - 2.0 * QX[i, j] / sizes[j]
                best = j
                dbest = dcur - tol
                for l in range(k):
                    if l == j:
                        continue
                    d = Q[l] / (<double>sizes[l] * sizes[l]) - 2.0 * QX[i, l] / sizes[l]
                    if d < dbest:
                        dbest = d
                        best = l
                target[i] = best
            # update step: apply the moves with O(n) bookkeeping each
            moved = 0
            for i in range(n):
                j = labels[i]
                l = target[i]
                if l != j and sizes[j] > 1:
                    _move(G, labels, QX, Q, sizes, i, j, l)
                    moved += 1
            moves += moved
            if moved == 0:
                converged = True
                break
            for l in range(k):
                Q[l] = 0.0
            for i in range(n):
                Q[labels[i]] += QX[i, labels[i]]
        if refresh:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
    return it, moves, converged


def objective(const double[::1] Q, const intp[::1] sizes, intp k):
    """``sum_l Q_l / n_l`` (so that ``W = trace(G) - objective``)."""
    return _objective(Q, sizes, k)
