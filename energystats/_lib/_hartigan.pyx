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

Cancellation (Ctrl-C): the kernels read a process-wide flag every few
hundred points (:func:`cancel` sets it, :func:`reset` clears it) and stop
early when it is set; a kernel that saw the flag raises
:class:`KeyboardInterrupt` instead of returning, so a half-done partition is
never taken for a result.  The flag is set by :mod:`energystats._interrupt`
when the main thread receives Ctrl-C, and cleared by it once the workers
have returned.

This module also holds two kernels of :func:`energystats.energy_linkage` and
spectral clustering that must run without the GIL, so that the main thread
can honour Ctrl-C meanwhile: Ward's nearest-neighbour chain
(:func:`ward_nn_chain`, cancellable) and the top-k eigenpairs by LAPACK
``dsyevr`` (:func:`eigh_top`, not cancellable).
"""
import numpy as np

cimport cython
from cpython.pycapsule cimport PyCapsule_GetName, PyCapsule_GetPointer
from cython.parallel cimport prange
from cython cimport floating
from libc.math cimport INFINITY, fabs, ldexp, sqrt
from libc.stdint cimport int64_t

from energystats._lib._pairwise cimport es_move_cols, es_simd_init, rho_block
from energystats._lib import simd_cap

es_simd_init(simd_cap())  # this module's copy of the pair kernels' dispatch (_simd.h)

ctypedef Py_ssize_t intp

cdef extern from *:
    """
    /* process-wide cancel flag: written by cancel()/reset() from any thread,
       read by the kernels between chunks of work */
    static volatile int energystats_cancel_flag = 0;
    static inline int energystats_cancelled(void) { return energystats_cancel_flag; }
    static inline void energystats_set_cancel(int v) { energystats_cancel_flag = v; }
    """
    int energystats_cancelled() noexcept nogil
    void energystats_set_cancel(int v) noexcept nogil

cdef enum:
    CHECK_MASK = 255  # the flag is read every CHECK_MASK + 1 points of a sweep

#: points between two reads of the cancel flag in a sweep
CHECK_EVERY = CHECK_MASK + 1


def cancel():
    """Ask every running kernel to stop early (each then raises KeyboardInterrupt)."""
    energystats_set_cancel(1)


def reset():
    """Clear the cancel flag (after the cancelled kernels have returned)."""
    energystats_set_cancel(0)


def cancelled():
    """Whether the cancel flag is set."""
    return bool(energystats_cancelled())


cdef int _raise_cancelled() except -1:
    raise KeyboardInterrupt("energystats: the computation was cancelled")


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
        if energystats_cancelled():  # O(n) work per row: one read of the flag is free
            continue
        for l in range(k):
            QX[i, l] = 0.0
        for m in range(n):
            QX[i, labels[m]] += G[i, m]
    for i in range(n):
        l = labels[i]
        sizes[l] += 1
        Q[l] += QX[i, l]


cdef double _objective(const double[::1] Q, const intp[::1] sizes, intp k) noexcept nogil:
    cdef intp l
    cdef double s = 0.0
    for l in range(k):
        if sizes[l] > 0:
            s += Q[l] / sizes[l]
    return s


@cython.boundscheck(False)
@cython.wraparound(False)
def centre_gram(double[:, ::1] D,           # IN/OUT n×n distances -> centred Gram matrix
                const double[::1] r,        # IN row means of D
                double mu,                  # IN their mean
                int n_threads):
    """``D[i, m] = ((D[i, m] - (r[i] + r[m])) + mu) * -0.5`` in place (the arithmetic of
    :func:`_gram_piece`, so the matrix and streamed engines hold the same bits)."""
    cdef intp n = D.shape[0], i, m
    cdef double ri
    if D.shape[1] != n or r.shape[0] != n:
        raise ValueError(f"`D` must be n×n and `r` of length n; got ({D.shape[0]}, {D.shape[1]}) "
                         f"and {r.shape[0]}.")
    if n == 0:
        return
    with nogil:
        for i in prange(n, num_threads=max(1, n_threads), schedule="static"):
            ri = r[i]
            for m in range(n):
                D[i, m] = ((D[i, m] - (ri + r[m])) + mu) * -0.5


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
    if energystats_cancelled():
        _raise_cancelled()


# -- without the n×n matrix: rows of G computed from the data when needed ----------------

cdef enum:
    ROW_COLS = 256  # columns of one piece of a row (the pairwise kernels' column block)


cdef struct GramRow:
    # what a row of the centred Gram matrix -1/2 J D J is computed from
    const void* X          # (n, d) data in working units, float32 or float64
    const void* XT         # (d, n) the same, transposed
    bint single            # float32 data
    intp n, d
    int metric
    double param
    double mult            # D in original units = ldexp(D_working * mult, whole) (Scale.apply)
    int whole
    double pow2            # 2^whole when |whole| <= 1000
    const double* r        # row means of D
    double mu              # mean of r


cdef inline void _rho_piece(GramRow* g, intp i, intp j0, intp j1, double* out) noexcept nogil:
    if g.single:
        rho_block(&(<const float*> g.X)[i * g.d], <const float*> g.XT, g.n, g.d, j0, j1, out,
                  g.metric, g.param)
    else:
        rho_block(&(<const double*> g.X)[i * g.d], <const double*> g.XT, g.n, g.d, j0, j1, out,
                  g.metric, g.param)


cdef inline void _gram_piece(GramRow* g, intp i, intp j0, intp j1, double* out) noexcept nogil:
    """``out[m - j0] = G[i, m]`` for m in [j0, j1), every bit as
    :func:`energystats._cluster_engine.centred_gram` of the n×n matrix of
    :func:`energystats._engine.pairwise_values` gives it."""
    cdef intp m, a, e
    cdef double ri = g.r[i]
    a = j0
    while a < j1:  # in pieces of ROW_COLS columns: the squared distances stay in L1
        e = a + ROW_COLS
        if e > j1:
            e = j1
        _rho_piece(g, i, a, e, &out[a - j0])
        a = e
    if g.mult != 1.0 or g.whole != 0:  # Scale.apply: back to the original units
        if -1000 <= g.whole <= 1000:
            # x·2^w is exactly ldexp(x, w) (both round the exact product once) when 2^w is a
            # double; a multiplication vectorises, a call of ldexp does not
            for m in range(j1 - j0):
                out[m] = (out[m] * g.mult) * g.pow2
        else:
            for m in range(j1 - j0):
                out[m] = ldexp(out[m] * g.mult, g.whole)
    for m in range(j1 - j0):
        out[m] = ((out[m] - (ri + g.r[j0 + m])) + g.mu) * -0.5


cdef void _gram_row(GramRow* g, intp i, double* out, int n_threads) noexcept nogil:
    """Row i of G into ``out`` (its pieces shared by ``n_threads`` threads)."""
    cdef intp nb = (g.n + ROW_COLS - 1) // ROW_COLS
    cdef intp b, j0, j1
    if n_threads <= 1:
        _gram_piece(g, i, 0, g.n, out)
        return
    for b in prange(nb, num_threads=n_threads, schedule="static"):
        j0 = b * ROW_COLS
        j1 = j0 + ROW_COLS
        if j1 > g.n:
            j1 = g.n
        _gram_piece(g, i, j0, j1, &out[j0])


cdef GramRow _gram_setup(const floating[:, ::1] X, const floating[:, ::1] XT, int metric,
                         double param, double mult, int whole, const double[::1] r, double mu):
    cdef GramRow g
    g.X = <const void*> &X[0, 0]
    g.XT = <const void*> &XT[0, 0]
    g.single = floating is float
    g.n = X.shape[0]
    g.d = X.shape[1]
    g.metric = metric
    g.param = param
    g.mult = mult
    g.whole = whole
    g.pow2 = ldexp(1.0, whole) if -1000 <= whole <= 1000 else 0.0
    g.r = &r[0]
    g.mu = mu
    return g


def gram_rows(const floating[:, ::1] X,     # IN (n, d) data in working units
              const floating[:, ::1] XT,    # IN (d, n) the same, transposed
              int metric, double param,
              double mult, int whole,       # IN the Scale back to original units
              const double[::1] r,          # IN (n,) row means of D
              double mu,                    # IN mean of r
              const intp[::1] rows,         # IN the rows wanted
              double[:, ::1] out,           # OUT (len(rows), n)
              int n_threads):
    """Rows ``rows`` of the centred Gram matrix, computed from the data (O(n·d) each)."""
    cdef GramRow g = _gram_setup(X, XT, metric, param, mult, whole, r, mu)
    cdef intp t, nr = rows.shape[0]
    with nogil:
        if nr >= 4 * n_threads:  # a row per thread
            for t in prange(nr, num_threads=n_threads, schedule="dynamic", chunksize=4):
                _gram_piece(&g, rows[t], 0, g.n, &out[t, 0])
        else:
            for t in range(nr):
                _gram_row(&g, rows[t], &out[t, 0], n_threads)


# -- the sweeps, on rows of G read from the matrix or computed from the data ---------------

cdef struct RowSource:
    # where a move finds row i of G (and G_ii): the n×n matrix, or the data (GramRow)
    const double* G         # the n×n matrix, or NULL
    intp n
    GramRow* gram           # with G NULL: computes the rows into buf
    const double* diag      # with G NULL: the diagonal of G
    double* buf             # with G NULL: n doubles
    int n_threads           # threads computing one row


cdef inline double _gii(RowSource* s, intp i) noexcept nogil:
    if s.G != NULL:
        return s.G[i * s.n + i]
    return s.diag[i]


cdef inline const double* _row(RowSource* s, intp i) noexcept nogil:
    if s.G != NULL:
        return s.G + i * s.n  # row i (G symmetric): contiguous, unlike column i
    _gram_row(s.gram, i, s.buf, s.n_threads)
    return s.buf


cdef inline void _move(RowSource* s, intp[::1] labels, double[:, ::1] QX, double[::1] Q,
                       intp[::1] sizes, intp i, intp j, intp l) noexcept nogil:
    """Move point i from cluster j to cluster l, updating the bookkeeping in O(n)."""
    cdef intp k = QX.shape[1]
    cdef double gii = _gii(s, i)
    cdef const double* gi = _row(s, i)
    Q[j] = Q[j] - 2.0 * QX[i, j] + gii
    Q[l] = Q[l] + 2.0 * QX[i, l] + gii
    es_move_cols(&QX[0, 0], s.n, k, j, l, gi)  # QX[:, j] -= gi; QX[:, l] += gi (vector lanes)
    sizes[j] -= 1
    sizes[l] += 1
    labels[i] = l


cdef void _hartigan_sweeps(RowSource* s, intp[::1] labels, intp k, double[:, ::1] QX,
                           double[::1] Q, intp[::1] sizes, intp max_iter, double tol,
                           intp max_moves, intp* out) noexcept nogil:
    """Hartigan's sweeps; ``out`` = (sweeps, moves, converged, halted)."""
    cdef intp n = s.n
    cdef intp i, j, l, best, sweep = 0, moves = 0, moved
    cdef double gii, base, d, dbest
    cdef bint converged = False, stop = False, halted = False
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
            if (i & CHECK_MASK) == 0 and energystats_cancelled():
                halted = True
                break
            j = labels[i]
            if sizes[j] <= 1:
                continue
            gii = _gii(s, i)
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
                if s.G == NULL and energystats_cancelled():  # a computed row costs O(n d)
                    halted = True
                    break
                _move(s, labels, QX, Q, sizes, i, j, best)
                moved += 1
                moves += 1
                if max_moves >= 0 and moves >= max_moves:
                    stop = True
                    break
        if halted:
            break
        if moved == 0:
            converged = True
            break
    out[0], out[1], out[2], out[3] = sweep, moves, converged, halted


cdef void _lloyd_iterations(RowSource* s, intp[::1] labels, intp k, double[:, ::1] QX,
                            double[::1] Q, intp[::1] sizes, intp max_iter, double tol,
                            intp[::1] target, int n_threads, intp* out) noexcept nogil:
    """Lloyd's iterations; ``out`` = (iterations, moves, converged, halted)."""
    cdef intp n = s.n
    cdef intp i, j, l, best, it = 0, moves = 0, moved
    cdef double dcur, d, dbest
    cdef bint converged = False, halted = False
    while it < max_iter:
        if energystats_cancelled():
            halted = True
            break
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
            if (i & CHECK_MASK) == 0 and energystats_cancelled():
                halted = True
                break
            j = labels[i]
            l = target[i]
            if l != j and sizes[j] > 1:
                _move(s, labels, QX, Q, sizes, i, j, l)
                moved += 1
        if halted:
            break
        moves += moved
        if moved == 0:
            converged = True
            break
        for l in range(k):
            Q[l] = 0.0
        for i in range(n):
            Q[labels[i]] += QX[i, labels[i]]
    out[0], out[1], out[2], out[3] = it, moves, converged, halted


cdef RowSource _matrix_source(const double[:, ::1] G) noexcept nogil:
    cdef RowSource s
    s.G = &G[0, 0]
    s.n = G.shape[0]
    s.gram = NULL
    s.diag = NULL
    s.buf = NULL
    s.n_threads = 1
    return s


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

    Returns ``(n_sweeps, n_moves, converged)``; raises KeyboardInterrupt when
    cancelled (:func:`cancel`), leaving the arrays half updated.
    """
    cdef RowSource s
    cdef intp out[4]
    if G.shape[0] == 0:
        return 0, 0, True
    s = _matrix_source(G)
    with nogil:
        if initialise:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
        _hartigan_sweeps(&s, labels, k, QX, Q, sizes, max_iter, tol, max_moves, out)
        if refresh and not out[3]:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
    if out[3] or energystats_cancelled():
        _raise_cancelled()
    return out[0], out[1], bool(out[2])


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
    cluster is skipped.  Returns ``(n_iter, n_moves, converged)``; raises
    KeyboardInterrupt when cancelled (:func:`cancel`).
    """
    cdef RowSource s
    cdef intp out[4]
    cdef intp[::1] target = np.empty(G.shape[0], dtype=np.intp)
    if G.shape[0] == 0:
        return 0, 0, True
    s = _matrix_source(G)
    with nogil:
        if initialise:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
        _lloyd_iterations(&s, labels, k, QX, Q, sizes, max_iter, tol, target, n_threads, out)
        if refresh and not out[3]:
            _init_bookkeeping(G, labels, k, QX, Q, sizes, n_threads)
    if out[3] or energystats_cancelled():
        _raise_cancelled()
    return out[0], out[1], bool(out[2])


def hartigan_streamed(const floating[:, ::1] X,   # IN (n, d) data in working units
                      const floating[:, ::1] XT,  # IN (d, n) the same, transposed
                      int metric, double param, double mult, int whole,
                      const double[::1] r,        # IN (n,) row means of D
                      double mu,                  # IN mean of r
                      const double[::1] gdiag,    # IN (n,) the diagonal of G
                      intp[::1] labels,           # IN/OUT codes 0..k-1, every cluster non-empty
                      intp k,
                      double[:, ::1] QX,          # IN/OUT n×k bookkeeping
                      double[::1] Q,              # IN/OUT k
                      intp[::1] sizes,            # IN/OUT k
                      intp max_iter,
                      double tol,
                      bint lloyd=False,
                      int n_threads=1):
    """:func:`hartigan` (or, with ``lloyd``, :func:`lloyd`) without the n×n matrix.

    The same sweeps, decisions and bookkeeping, operation for operation; the
    row of G a move needs is computed from the data (O(n·d)) instead of
    read, with the very arithmetic that builds the matrix, so the partition
    is the same, bit for bit.  Memory: the n×k table and one row.  Returns
    ``(n_sweeps, n_moves, converged)``; raises KeyboardInterrupt when cancelled.
    """
    cdef GramRow g = _gram_setup(X, XT, metric, param, mult, whole, r, mu)
    cdef RowSource s
    cdef intp out[4]
    cdef intp n = X.shape[0]
    cdef double[::1] row = np.empty(max(n, 1))
    cdef intp[::1] target = np.empty(max(n, 1), dtype=np.intp)
    if n == 0:
        return 0, 0, True
    s.G = NULL
    s.n = n
    s.gram = &g
    s.diag = &gdiag[0]
    s.buf = &row[0]
    s.n_threads = n_threads
    with nogil:
        if lloyd:
            _lloyd_iterations(&s, labels, k, QX, Q, sizes, max_iter, tol, target, n_threads, out)
        else:
            _hartigan_sweeps(&s, labels, k, QX, Q, sizes, max_iter, tol, -1, out)
    if out[3] or energystats_cancelled():
        _raise_cancelled()
    return out[0], out[1], bool(out[2])


# -- explicit features (a Nyström map): k-means in R^r, O(k·r) per point ------------------

cdef inline double _dot(const double* a, const double* b, intp r) noexcept nogil:
    """a · b with four partial sums (in a fixed order: the same bits on every run)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef intp t = 0
    while t + 4 <= r:
        s0 += a[t] * b[t]
        s1 += a[t + 1] * b[t + 1]
        s2 += a[t + 2] * b[t + 2]
        s3 += a[t + 3] * b[t + 3]
        t += 4
    while t < r:
        s0 += a[t] * b[t]
        t += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double _sqdist(const double[::1] Q, const intp[::1] sizes, intp l, double fs,
                          double gii) noexcept nogil:
    """Squared distance of a point (F_i · F_i = gii, F_i · S_l = fs) to the centroid S_l / n_l."""
    return Q[l] / (<double>sizes[l] * sizes[l]) - 2.0 * fs / sizes[l] + gii


cdef inline double _c2max(const double[::1] Q, const intp[::1] sizes, intp k) noexcept nogil:
    """The largest squared centroid norm Q_l / n_l² (the scale of the rounding allowances)."""
    cdef intp l
    cdef double c2, c2max = 0.0
    for l in range(k):
        c2 = Q[l] / (<double>sizes[l] * sizes[l])
        if c2 > c2max:
            c2max = c2
    return c2max


cdef inline double _add_up(double acc, double step) noexcept nogil:
    """acc + step, rounded up (at least the exact sum), for the path lengths of the centroids."""
    return acc + (step + 2.0 * 2.220446049250313e-16 * (acc + step))


cdef void _audit_bounds(const double* f, const double[:, ::1] S, const double[::1] Q,
                        const intp[::1] sizes, intp k, intp r, intp j, double gii, double u,
                        double lo, double dD, intp* audit) noexcept nogil:
    """Count a skipped visit, and a failed bound when the computed distances contradict u or lo."""
    cdef intp l
    cdef double D, Dmin = INFINITY, Dj = 0.0
    for l in range(k):
        D = _sqdist(Q, sizes, l, _dot(f, &S[l, 0], r), gii)
        if l == j:
            Dj = D
        elif D < Dmin:
            Dmin = D
    audit[0] += 1
    if Dj - dD > u * u or Dmin + dD < lo * lo:
        audit[1] += 1


def hartigan_features(const double[:, ::1] F,   # IN  (n, r) feature vectors, K(x_i, x_j) = F_i · F_j
                      const double[::1] g,      # IN  (n,) F_i · F_i
                      intp[::1] labels,         # IN/OUT codes 0..k-1, every cluster non-empty
                      intp k,
                      double[:, ::1] S,         # OUT (k, r) the clusters' sums of features
                      double[::1] Q,            # OUT (k,) S_l · S_l
                      intp[::1] sizes,          # OUT (k,)
                      intp max_iter,
                      double tol,
                      bint lloyd=False,
                      bint prune=True,
                      intp[::1] audit=None):  # OUT (2,) or None: see below
    """:func:`hartigan` (or :func:`lloyd`) for a kernel given by explicit features.

    ``QX[i, l] = F_i · S_l`` is computed when point i is visited (O(k·r))
    instead of being kept in an n×k table, and a move updates two sums of
    features (O(r)); ``Q_l = S_l · S_l`` is recomputed exactly at every
    sweep.  The decisions are those of :func:`hartigan` with
    ``G = F Fᵀ``.

    With ``prune`` (Hartigan only), a visit is skipped when bounds prove
    that the point would not move, so the decisions, and every bit of the
    result, are those of the full sweep.  At each full visit the point keeps
    an upper bound ``u`` on its distance to its own centroid and a lower
    bound ``lo`` on the distance to the nearest other one (both widened by
    a rounding allowance).  Every move shifts the two centroids it changes
    by at most ``sqrt(D)/(n_l ∓ 1)`` (plus the rounding of the update),
    added to that cluster's running path length ``P_l``; by the triangle
    inequality the distances now are at most ``u + ΔP_own`` and at least
    ``lo − ΔΣ_l P_l``.  The visit is skipped when the largest gain these
    bounds allow, ``n_j/(n_j−1) u² − min_l n_l/(n_l+1) lo²`` plus an
    allowance for the rounding of the gain itself, does not exceed ``tol``
    (the bounds of Hamerly 2010 for Lloyd's algorithm, carried over to
    Hartigan's move rule).  After a few sweeps only the points near a
    boundary are visited, so a sweep reads a small part of ``F``.

    With ``audit`` (for the tests), a visit that would be skipped is made
    anyway, only to check the bounds: ``audit[0]`` counts those visits and
    ``audit[1]`` the bounds that failed (a computed distance outside its
    bound by more than its rounding allowance).  The point is then left as
    a skipped one is, so the run is the pruned run.

    Returns ``(n_sweeps, n_moves, converged, n_visits)`` (``n_visits``: the
    full visits, at most ``n_sweeps · n``); raises KeyboardInterrupt when
    cancelled.
    """
    cdef intp n = F.shape[0], r = F.shape[1]
    cdef intp i, j, l, t, best, sweep = 0, moves = 0, moved, visits = 0
    cdef double gii, base, d, dbest, dcur
    cdef bint converged = False, halted = False
    cdef double[::1] qx = np.empty(k)
    cdef intp[::1] target = np.empty(n, dtype=np.intp)
    # pruning state (see above): bounds, the path lengths they refer to, and the allowances
    cdef double[::1] ub = np.full(n if prune and not lloyd else 0, INFINITY)
    cdef double[::1] lb = np.empty(n if prune and not lloyd else 0)
    cdef double[::1] refo = np.empty(n if prune and not lloyd else 0)
    cdef double[::1] reft = np.empty(n if prune and not lloyd else 0)
    cdef double[::1] P = np.zeros(k)
    cdef double Ptot = 0.0, u, lo, a, bmin, c2max, dD, slack, Dl, Dmin, step, rnd
    cdef double eps = 2.220446049250313e-16
    # relative rounding allowance of a computed squared distance Q/n² − 2 F·S/n + g (the dot
    # products: r terms; Q updated incrementally over at most n moves between recomputations)
    cdef double crel = 1e-9 + 16.0 * (r + n + 8) * eps
    cdef double wide = 1.0 + 1e-12          # for the few roundings of a bound's own arithmetic
    cdef bint auditing = audit is not None
    if auditing:
        if audit.shape[0] != 2:
            raise ValueError(f"`audit` must have length 2; got {audit.shape[0]}.")
        audit[0] = 0
        audit[1] = 0
    with nogil:
        for l in range(k):
            sizes[l] = 0
            for t in range(r):
                S[l, t] = 0.0
        for i in range(n):
            l = labels[i]
            sizes[l] += 1
            for t in range(r):
                S[l, t] += F[i, t]
        while sweep < max_iter:
            if energystats_cancelled():
                halted = True
                break
            sweep += 1
            moved = 0
            for l in range(k):
                Q[l] = _dot(&S[l, 0], &S[l, 0], r)
            if lloyd:
                visits += n
                for i in range(n):
                    j = labels[i]
                    for l in range(k):
                        qx[l] = _dot(&F[i, 0], &S[l, 0], r)
                    dcur = Q[j] / (<double>sizes[j] * sizes[j]) - 2.0 * qx[j] / sizes[j]
                    best = j
                    dbest = dcur - tol
                    for l in range(k):
                        if l == j:
                            continue
                        d = Q[l] / (<double>sizes[l] * sizes[l]) - 2.0 * qx[l] / sizes[l]
                        if d < dbest:
                            dbest = d
                            best = l
                    target[i] = best
                for i in range(n):
                    j = labels[i]
                    l = target[i]
                    if l != j and sizes[j] > 1:
                        for t in range(r):
                            S[j, t] -= F[i, t]
                            S[l, t] += F[i, t]
                        sizes[j] -= 1
                        sizes[l] += 1
                        labels[i] = l
                        moved += 1
            else:
                for i in range(n):
                    if (i & CHECK_MASK) == 0 and energystats_cancelled():
                        halted = True
                        break
                    j = labels[i]
                    if sizes[j] <= 1:
                        continue
                    gii = g[i]
                    if prune and ub[i] < INFINITY:
                        # the bounds now; skip when no move can gain more than tol
                        u = ub[i] + (P[j] - refo[i]) * wide + 4.0 * eps * P[j]
                        lo = lb[i] - (Ptot - reft[i]) * wide - 4.0 * eps * Ptot
                        if lo > 0.0:
                            bmin = INFINITY
                            for l in range(k):
                                if l != j and <double>sizes[l] / (sizes[l] + 1.0) < bmin:
                                    bmin = <double>sizes[l] / (sizes[l] + 1.0)
                            a = <double>sizes[j] / (sizes[j] - 1.0)
                            dD = crel * (gii + _c2max(Q, sizes, k))
                            slack = 8.0 * dD + 1e-12 * (a * u * u + bmin * lo * lo)
                            if a * u * u - bmin * (lo / wide) * (lo / wide) + slack <= tol:
                                if auditing:
                                    _audit_bounds(&F[i, 0], S, Q, sizes, k, r, j, gii, u, lo,
                                                  dD, &audit[0])
                                continue
                    visits += 1
                    for l in range(k):
                        qx[l] = _dot(&F[i, 0], &S[l, 0], r)
                    base = (Q[j] / sizes[j] - 2.0 * qx[j] + gii) / (sizes[j] - 1)
                    best = -1
                    dbest = tol
                    for l in range(k):
                        if l == j:
                            continue
                        d = base - (Q[l] / sizes[l] - 2.0 * qx[l] - gii) / (sizes[l] + 1)
                        if d > dbest:
                            dbest = d
                            best = l
                    if prune:
                        # the allowance of the squared distances to the centroids S_l / n_l
                        c2max = _c2max(Q, sizes, k)
                        dD = crel * (gii + c2max)
                    if best >= 0:
                        l = best
                        if prune:
                            # how far the two centroids move (bounds on the exact shifts of
                            # S_l / n_l: sqrt(D) / (n ∓ 1) plus the rounding of S's update)
                            rnd = 4.0 * eps * (sqrt(max(c2max, 0.0)) + sqrt(gii)) * wide
                            Dl = _sqdist(Q, sizes, j, qx[j], gii)
                            step = sqrt(max(Dl, 0.0) + dD) * wide / (sizes[j] - 1.0) + rnd
                            P[j] = _add_up(P[j], step)
                            Ptot = _add_up(Ptot, step)
                            Dl = _sqdist(Q, sizes, l, qx[l], gii)
                            step = sqrt(max(Dl, 0.0) + dD) * wide / (sizes[l] + 1.0) + rnd
                            P[l] = _add_up(P[l], step)
                            Ptot = _add_up(Ptot, step)
                            ub[i] = INFINITY   # visited in full next time
                        Q[j] = Q[j] - 2.0 * qx[j] + gii
                        Q[l] = Q[l] + 2.0 * qx[l] + gii
                        for t in range(r):
                            S[j, t] -= F[i, t]
                            S[l, t] += F[i, t]
                        sizes[j] -= 1
                        sizes[l] += 1
                        labels[i] = l
                        moved += 1
                    elif prune:
                        ub[i] = sqrt(max(_sqdist(Q, sizes, j, qx[j], gii), 0.0) + dD) * wide
                        Dmin = INFINITY
                        for l in range(k):
                            if l != j:
                                Dl = _sqdist(Q, sizes, l, qx[l], gii)
                                if Dl < Dmin:
                                    Dmin = Dl
                        lb[i] = sqrt(max(Dmin - dD, 0.0)) / wide
                        refo[i] = P[j]
                        reft[i] = Ptot
            if halted:
                break
            moves += moved
            if moved == 0:
                converged = True
                break
        for l in range(k):
            Q[l] = _dot(&S[l, 0], &S[l, 0], r)
    if halted or energystats_cancelled():
        _raise_cancelled()
    return sweep, moves, converged, visits


def objective(const double[::1] Q, const intp[::1] sizes, intp k):
    """``sum_l Q_l / n_l`` (so that ``W = trace(G) - objective``)."""
    return _objective(Q, sizes, k)


# -- Ward's nearest-neighbour chain (energy_linkage) ---------------------------------

cdef inline int64_t _cidx(int64_t n, int64_t i, int64_t j) noexcept nogil:
    """Index of (i, j), i != j, in the condensed (upper-triangle, row-major) vector."""
    if i < j:
        return n * i - (i * (i + 1) / 2) + (j - i - 1)
    return n * j - (j * (j + 1) / 2) + (i - j - 1)


cdef inline double _ward(double d_xi, double d_yi, double d_xy,
                         int size_x, int size_y, int size_i) noexcept nogil:
    # the very expression of SciPy's ``_ward`` (scipy/cluster/_hierarchy_distance_update.pxi),
    # operation for operation, so that the merge heights agree bit for bit
    cdef double t = 1.0 / (size_x + size_y + size_i)
    return sqrt((size_i + size_x) * t * d_xi * d_xi +
                (size_i + size_y) * t * d_yi * d_yi -
                size_i * t * d_xy * d_xy)


def ward_nn_chain(double[::1] D,          # IN/OUT condensed distances (overwritten)
                  int n,
                  double[:, ::1] Z,       # OUT (n - 1, 4) merges in the order found
                  int[::1] size,          # WORK n, all ones on entry
                  int[::1] chain):        # WORK n
    """Ward linkage by the nearest-neighbour chain, without the GIL.

    The nearest-neighbour chain algorithm (Murtagh 1983; Müllner 2011,
    "Modern hierarchical, agglomerative clustering algorithms",
    arXiv:1109.2378), taken in the same order as SciPy's
    ``scipy.cluster.hierarchy.linkage(method='ward')`` (BSD-licensed)
    so that the merges and heights are SciPy's bit for bit (same chain,
    same ties, same Lance–Williams update), but
    in place on ``D`` (SciPy works on a copy) and reading the cancel flag
    at every step of the chain.  ``Z`` gets the merges in the order found, with cluster
    ids as positions; :func:`label_linkage` turns them into a SciPy linkage
    matrix after a stable sort by height.  Raises KeyboardInterrupt when
    cancelled.
    """
    cdef int i, k, x = 0, y = 0, nx, ny, ni, chain_length = 0, tmp
    cdef double dist, current_min
    cdef bint halted = False
    with nogil:
        for k in range(n - 1):
            if chain_length == 0:
                chain_length = 1
                for i in range(n):
                    if size[i] > 0:
                        chain[0] = i
                        break
            # walk the chain of nearest neighbours until two are mutual
            while not halted:
                if energystats_cancelled():  # a chain step costs O(n): one read is free
                    halted = True
                    break
                x = chain[chain_length - 1]
                # prefer the previous element of the chain on ties (no cycles)
                if chain_length > 1:
                    y = chain[chain_length - 2]
                    current_min = D[_cidx(n, x, y)]
                else:
                    current_min = INFINITY
                for i in range(n):
                    if size[i] == 0 or x == i:
                        continue
                    dist = D[_cidx(n, x, i)]
                    if dist < current_min:
                        current_min = dist
                        y = i
                if chain_length > 1 and y == chain[chain_length - 2]:
                    break
                chain[chain_length] = y
                chain_length += 1
            if halted:
                break
            chain_length -= 2
            if x > y:
                tmp = x
                x = y
                y = tmp
            nx = size[x]
            ny = size[y]
            Z[k, 0] = x
            Z[k, 1] = y
            Z[k, 2] = current_min
            Z[k, 3] = nx + ny
            size[x] = 0
            size[y] = nx + ny
            for i in range(n):
                ni = size[i]
                if ni == 0 or i == y:
                    continue
                D[_cidx(n, i, y)] = _ward(D[_cidx(n, i, x)], D[_cidx(n, i, y)],
                                          current_min, nx, ny, ni)
    if halted or energystats_cancelled():
        _raise_cancelled()


cdef inline int _find(int[::1] parent, int x) noexcept nogil:
    """Root of ``x`` in the union-find forest, compressing the path on the way."""
    cdef int root = x, nxt
    while parent[root] != root:
        root = parent[root]
    while parent[x] != root:
        nxt = parent[x]
        parent[x] = root
        x = nxt
    return root


def label_linkage(double[:, ::1] Z,       # IN/OUT (n - 1, 4) merges sorted by height
                  int n):
    """Cluster ids of a linkage matrix by union-find (SciPy's ``label``), in place."""
    cdef int[::1] parent = np.arange(2 * n - 1, dtype=np.intc)
    cdef int[::1] sizes = np.ones(2 * n - 1, dtype=np.intc)
    cdef int i, x, y, rx, ry, next_label = n
    with nogil:
        for i in range(n - 1):
            x = <int>Z[i, 0]
            y = <int>Z[i, 1]
            rx = _find(parent, x)
            ry = _find(parent, y)
            if rx < ry:
                Z[i, 0] = rx
                Z[i, 1] = ry
            else:
                Z[i, 0] = ry
                Z[i, 1] = rx
            parent[rx] = next_label
            parent[ry] = next_label
            sizes[next_label] = sizes[rx] + sizes[ry]
            Z[i, 3] = sizes[next_label]
            next_label += 1


# -- top eigenpairs by LAPACK dsyevr without the GIL (spectral clustering) ----------

ctypedef void (*dsyevr_t)(char *jobz, char *range_, char *uplo, int *n, double *a, int *lda,
                          double *vl, double *vu, int *il, int *iu, double *abstol, int *m,
                          double *w, double *z, int *ldz, int *isuppz, double *work, int *lwork,
                          int *iwork, int *liwork, int *info) noexcept nogil

cdef dsyevr_t _dsyevr_ptr = NULL


cdef dsyevr_t _dsyevr() except NULL:
    """SciPy's LAPACK ``dsyevr`` (the one ``scipy.linalg.eigh`` calls), as a C pointer."""
    global _dsyevr_ptr
    if _dsyevr_ptr is NULL:
        from scipy.linalg import cython_lapack
        cap = cython_lapack.__pyx_capi__["dsyevr"]
        _dsyevr_ptr = <dsyevr_t>PyCapsule_GetPointer(cap, PyCapsule_GetName(cap))
    return _dsyevr_ptr


def eigh_top(const double[:, ::1] G, int k):
    """``scipy.linalg.eigh(G, subset_by_index=[n - k, n - 1])`` without holding the GIL.

    ``G`` symmetric, C-contiguous.  The same LAPACK driver
    (``dsyevr``, lower triangle, range 'I', abstol 0) with the same
    workspace as SciPy, on a copy of ``G``, so the result is that of
    ``eigh`` bit for bit; but SciPy's wrapper holds the GIL for the whole
    O(n³) call, which would keep the main thread from honouring Ctrl-C.
    LAPACK cannot be stopped midway: run this in a daemon thread.
    Returns ``(w, U)``: ascending eigenvalues (k) and eigenvectors (n×k,
    Fortran order, as SciPy gives them).
    """
    from scipy.linalg import lapack
    from numpy.linalg import LinAlgError

    cdef int n = G.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, {n}]; got {k}.")
    cdef dsyevr_t f = _dsyevr()
    work_q, iwork_q, info_q = lapack.dsyevr_lwork(n, lower=1)
    if info_q != 0:
        raise ValueError(f"Internal work array size computation failed: {info_q}")
    cdef int lwork = int(work_q.real), liwork = int(iwork_q)
    # a Fortran-ordered copy, as SciPy's wrapper makes: the lower triangle LAPACK reads is G's
    # own, even were G not exactly symmetric
    cdef double[::1, :] a = np.array(G, dtype=np.float64, order="F", copy=True)
    w_arr = np.empty(n)
    z_arr = np.empty((k, n))               # Fortran n×k, leading dimension n
    cdef double[::1] w = w_arr
    cdef double[:, ::1] z = z_arr
    cdef int[::1] isuppz = np.empty(2 * n, dtype=np.intc)
    cdef double[::1] work = np.empty(max(lwork, 1))
    cdef int[::1] iwork = np.empty(max(liwork, 1), dtype=np.intc)
    cdef char jobz = b"V", rng = b"I", uplo = b"L"
    cdef int il = n - k + 1, iu = n, m = 0, info = 0, lda = n, ldz = n
    cdef double vl = 0.0, vu = 1.0, abstol = 0.0
    with nogil:
        f(&jobz, &rng, &uplo, &n, &a[0, 0], &lda, &vl, &vu, &il, &iu, &abstol, &m,
          &w[0], &z[0, 0], &ldz, &isuppz[0], &work[0], &lwork, &iwork[0], &liwork, &info)
    if info != 0:
        if info < 0:
            raise LinAlgError(f"Illegal value in argument {-info} of internal dsyevr")
        raise LinAlgError("Internal Error.")
    return w_arr[:m], z_arr[:m].T
