"""Private drivers of energy clustering.

After França, Rizzo and Vogelstein (2021), "Kernel k-Groups via Hartigan's
Method", IEEE TPAMI 43(12); the exact 1-D solver uses the sorted formulas of
the docs' guide page "One-dimensional data".

Inputs are validated by :mod:`energystats.clustering`.  Here we build the
centred Gram matrix, seed, run the compiled Hartigan / Lloyd kernels over
restarts (in threads, the kernels release the GIL), and the spectral and
exact 1-D solvers.

Ctrl-C: the local searches run through :mod:`energystats._core._interrupt`; on
Ctrl-C the compiled kernels are cancelled (they read a flag every 256
points), the workers return, the flag is reset and KeyboardInterrupt is
re-raised -- within about a second, whatever the size.  Every n×n
allocation is checked first (:func:`energystats._core._memory.check_fits`).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._core import _engine, _interrupt
from .._lib import _hartigan
from .._core._memory import check_fits, format_bytes

__all__ = [
    "semimetric_matrix", "centred_gram", "fit_partition", "kmeanspp_labels",
    "random_labels", "exact_1d", "group_sums_from_gram", "canonical_labels",
]

ALGORITHMS = ("hartigan", "lloyd", "spectral", "exact-1d")


#: bytes of one block of rows of rho computed at a time by :func:`semimetric_rows`
BLOCK_BYTES = 32 * 2**20
#: fewest rows per block: each block costs O(n d) of set-up besides its rows
MIN_BLOCK_ROWS = 256


def block_rows(n):
    """Rows per block of :func:`semimetric_rows` for n columns."""
    return int(max(1, min(n, max(MIN_BLOCK_ROWS, BLOCK_BYTES // (8 * max(n, 1))))))


def semimetric_rows(X, metric, n_threads, upper=False):
    """Yield ``(i0, R)``: rows ``i0:i0 + len(R)`` of the n×n matrix of rho, block by block.

    Each row equals, bit for bit, that row of ``pairwise_values(X, X)``: the
    working units of :func:`energystats._core._engine.normalise` depend on the
    largest magnitude of ``X`` and the block together, which is that of
    ``X``.  With ``upper=True`` and a callable metric (whose calls are the
    cost) ``R`` holds only the columns ``i0:``; every other metric gives all
    the columns.
    """
    n = X.shape[0]
    rows = block_rows(n)
    for i0 in range(0, n, rows):
        i1 = min(n, i0 + rows)
        Y = X[i0:] if (upper and metric.kind == "callable") else X
        yield i0, _engine.pairwise_values(X[i0:i1], Y, metric, n_threads)


def block_bytes(n, d):
    """Transient bytes of one block of :func:`semimetric_rows`: the rows and one copy of
    them, the data in working units and transposed."""
    return 2 * 8 * block_rows(n) * n + 3 * 8 * n * d


def semimetric_bytes(n, d):
    """Peak bytes of :func:`semimetric_matrix`: the matrix and the data's working copies."""
    return 8 * n * n + 3 * 8 * n * d


def too_big_advice(d):
    """What to do when an n×n matrix (or its condensed half) does not fit, for d features."""
    one_d = (" For 1-D data with metric='energy' and exponent=1, "
             "EnergyClustering(algorithm='exact-1d') needs no n×n matrix.") if d == 1 else ""
    return ("Cluster a random sample of the rows instead (the memory grows as n²: half the "
            f"rows need a quarter of it).{one_d}")


def semimetric_matrix(X, metric, n_threads):
    """n×n matrix of rho (a fresh float64 array the caller may overwrite).

    Checks first that it fits (:func:`energystats._core._memory.check_fits`): a
    MemoryError at once, with advice, instead of one after minutes of work.
    """
    n = X.shape[0]
    d = 0 if metric.kind == "precomputed" else X.shape[1]
    check_fits(semimetric_bytes(n, d),
               f"the {n}×{n} matrix of distances (float64) of energy clustering", too_big_advice(d))
    if metric.kind == "precomputed":
        return np.array(X, dtype=np.float64, order="C", copy=True)
    return _engine.pairwise_values(X, X, metric, n_threads)


def centred_gram(D, n_threads=1):
    r"""Overwrite ``D`` by the doubly centred Gram matrix :math:`-\tfrac12 J D J`.

    Its kernel generates the same semimetric as that of
    :func:`energystats.gram_matrix` (base point at the
    centroid in feature space), so W, S and every clustering are unchanged,
    while the entries stay of the order of rho: no cancellation from a far
    base point.
    """
    r = D.mean(axis=1)
    mu = float(r.mean())
    # G_ij = ((D_ij - (r_i + r_j)) + mu) * -1/2 in one pass, rows shared by the threads;
    # (r_i + r_j) is computed identically for (i, j) and (j, i): G stays exactly symmetric
    _hartigan.centre_gram(D, r, mu, _engine.effective_threads(n_threads, float(D.size)))
    return D


def tolerance(G):
    """Smallest objective gain that counts as a move (guards against rounding loops)."""
    n = G.shape[0]
    scale = max(float(np.max(np.abs(np.diagonal(G)))), np.finfo(float).tiny)
    return 16.0 * np.finfo(float).eps * (n + 1) * scale


def canonical_labels(labels, k):
    """Relabel clusters 0..k-1 in order of first appearance."""
    labels = np.asarray(labels, dtype=np.intp)
    _, first = np.unique(labels, return_index=True)
    order = np.argsort(first, kind="stable")
    mapping = np.empty(max(k, labels.max() + 1), dtype=np.intp)
    mapping[np.unique(labels)[order]] = np.arange(order.size)
    return mapping[labels]


def random_labels(n, k, rng):
    """Uniform random labels with every cluster non-empty (needs n >= k)."""
    labels = rng.integers(0, k, size=n).astype(np.intp)
    labels[rng.permutation(n)[:k]] = np.arange(k)
    return labels


def kmeanspp_labels(G, k, rng):
    r"""k-means++ seeding in feature space (Arthur & Vassilvitskii 2007).

    Squared distances :math:`G_{ii} + G_{jj} - 2G_{ij}`; the first centre is
    uniform, each next one drawn with probability proportional to the
    squared distance to the nearest centre.  Every point then joins its
    nearest centre; each centre keeps its own point, so no cluster is empty.
    """
    return _kmeanspp(np.diagonal(G), lambda i: G[i], k, rng)


def _kmeanspp(diag, row, k, rng):
    """k-means++ from the diagonal of G and a function giving its rows (see :func:`kmeanspp_labels`)."""
    n = diag.shape[0]
    centres = np.empty(k, dtype=np.intp)
    centres[0] = rng.integers(n)
    best = np.maximum(diag + diag[centres[0]] - 2.0 * row(centres[0]), 0.0)
    labels = np.zeros(n, dtype=np.intp)
    for c in range(1, k):
        p = best.copy()
        p[centres[:c]] = 0.0
        total = p.sum()
        if total > 0:
            nxt = rng.choice(n, p=p / total)
        else:  # all remaining points coincide with centres
            free = np.setdiff1d(np.arange(n), centres[:c])
            nxt = rng.choice(free)
        centres[c] = nxt
        d = np.maximum(diag + diag[nxt] - 2.0 * row(nxt), 0.0)
        closer = d < best
        labels[closer] = c
        best = np.where(closer, d, best)
    labels[centres] = np.arange(k)
    return labels


def _initial_labels(G, k, init, rng):
    if isinstance(init, np.ndarray):
        return init.copy()
    if init == "k-means++":
        return kmeanspp_labels(G, k, rng)
    return random_labels(G.shape[0], k, rng)


def initial_bookkeeping(G, labels, k):
    """``QX = G Z`` (one BLAS call, GIL released), ``Q_l`` and the sizes."""
    n = G.shape[0]
    Z = np.zeros((n, k))
    Z[np.arange(n), labels] = 1.0
    QX = np.ascontiguousarray(G @ Z)
    Q = np.bincount(labels, weights=QX[np.arange(n), labels], minlength=k).astype(np.float64)
    sizes = np.bincount(labels, minlength=k).astype(np.intp)
    return QX, Q, sizes


def _check_stop(stop):
    if stop is not None and stop.is_set():
        raise KeyboardInterrupt("energystats: the computation was cancelled")


def initial_tables(G, label_sets, k):
    """``[G @ Z_s for every labelling s]`` (Z one-hot, n×k each) by one matrix product: one
    pass over G for all the restarts, not one each (G is read from memory; at n = 5000 a
    pass takes about 20 ms, and the restarts' own work is of the same order)."""
    n = G.shape[0]
    Z = np.zeros((n, k * len(label_sets)))
    for t, labels in enumerate(label_sets):
        Z[np.arange(n), k * t + np.asarray(labels)] = 1.0
    QX = G @ Z
    return [np.ascontiguousarray(QX[:, k * t:k * (t + 1)]) for t in range(len(label_sets))]


def run_kernel(G, labels, k, algorithm, max_iter, tol, n_threads=1, stop=None, QX=None):
    """One local search from ``labels``; returns (labels, objective, n_iter).

    The objective ``sum_l Q_l / n_l`` comes from the incrementally updated
    bookkeeping (relative drift ~1e-13); final statistics are recomputed from
    the labels by the caller.  ``stop`` (a :class:`threading.Event`) set means
    cancelled: KeyboardInterrupt before the kernel starts.  ``QX``: the table
    ``G Z`` of ``labels`` when already computed (:func:`initial_tables`; it is
    updated in place).
    """
    labels = np.ascontiguousarray(labels, dtype=np.intp)
    if QX is None:
        QX, Q, sizes = initial_bookkeeping(G, labels, k)
    else:
        n = G.shape[0]
        Q = np.bincount(labels, weights=QX[np.arange(n), labels], minlength=k).astype(np.float64)
        sizes = np.bincount(labels, minlength=k).astype(np.intp)
    _check_stop(stop)  # the kernel reads the flag, but it may have been reset meanwhile
    if algorithm == "hartigan":
        it, _, _ = _hartigan.hartigan(G, labels, k, QX, Q, sizes, max_iter, tol,
                                      initialise=False, refresh=False, n_threads=n_threads)
    else:
        it, _, _ = _hartigan.lloyd(G, labels, k, QX, Q, sizes, max_iter, tol,
                                   initialise=False, refresh=False, n_threads=n_threads)
    return labels, float(_hartigan.objective(Q, sizes, k)), int(it)


def fit_partition(G, k, algorithm, init, n_init, max_iter, rng, n_threads):
    """Best of ``n_init`` local searches on the centred Gram matrix ``G``.

    Seeds are drawn from ``rng`` before any work, and the restart with the
    largest objective (lowest W) wins, ties to the earliest; so the result does
    not depend on the number of threads.  Returns (labels, W, n_iter).

    Ctrl-C (in the main thread) stops the restarts within about a second and
    raises KeyboardInterrupt: see :func:`run_restarts`.
    """
    if algorithm == "spectral":
        return _spectral(G, k, init, n_init, max_iter, rng, n_threads)
    tol = tolerance(G)
    trace = float(np.trace(G))
    if isinstance(init, np.ndarray):
        n_init = 1
    seeds = rng.integers(0, 2**63 - 1, size=n_init)
    n = G.shape[0]
    # restarts in groups of at most 2**24 table entries (n×k each): the one-hot matrix, the
    # product and the restarts' copies of it take up to 128 MiB each; a group's tables come
    # from one pass over G (initial_tables), then its local searches run in threads
    group = int(max(1, min(n_init, 2**24 // max(1, n * k))))
    results = []
    for g0 in range(0, n_init, group):
        starts = [_initial_labels(G, k, init, np.random.default_rng(s)) for s in seeds[g0:g0 + group]]
        tables = initial_tables(G, starts, k)

        def one(t, stop):
            return run_kernel(G, starts[t], k, algorithm, max_iter, tol, stop=stop, QX=tables[t])

        results += run_restarts(one, list(range(len(starts))), n_threads, n)
    best = max(range(len(results)), key=lambda r: (results[r][1], -r))
    labels, obj, it = results[best]
    return labels, trace - obj, it


#: up to this many points a local search takes well under 0.1 s: the restarts run in the
#: calling thread (a worker thread costs about a millisecond a fit, which adds up over the
#: reference fits of cluster_test); Ctrl-C is then honoured between restarts
SHORT_N = 2048


def run_restarts(one, seeds, n_threads, n=None):
    """``[one(seed, stop) for seed in seeds]``, in threads when ``n_threads > 1``; Ctrl-C cancels.

    The restarts run in a worker (:func:`energystats._core._interrupt.call`), so the
    main thread honours Ctrl-C at once: it sets ``stop`` (a
    :class:`threading.Event` that ``one`` checks before each kernel) and the
    kernels' cancel flag, lets the workers return (the kernels stop within
    256 points; restarts not begun are dropped), resets the flag and
    re-raises.  Results are in the order of ``seeds`` whatever the threads.
    With ``n <= SHORT_N`` points they run in the calling thread.
    """
    stop = threading.Event()

    def task(seed):
        _check_stop(stop)
        return one(seed, stop)

    def run_all():
        if n_threads > 1 and len(seeds) > 1:
            pool = ThreadPoolExecutor(max_workers=min(n_threads, len(seeds)))
            try:
                futures = [pool.submit(task, s) for s in seeds]
                return [f.result() for f in futures]
            finally:  # after a failure (a cancel) drop the restarts not begun
                pool.shutdown(wait=True, cancel_futures=True)
        return [task(s) for s in seeds]

    def cancel():
        stop.set()
        _hartigan.cancel()

    return _interrupt.call(run_all, cancel=cancel, reset=_hartigan.reset,
                           inline=n is not None and n <= SHORT_N)


def _spectral(G, k, init, n_init, max_iter, rng, n_threads):
    """Top-k eigenvectors of G, then (linear) k-means on the rows, scored by W on G.

    The eigenvectors come from LAPACK ``dsyevr`` exactly as
    ``scipy.linalg.eigh(G, subset_by_index=[n - k, n - 1])`` gives them, but
    without holding the GIL (:func:`energystats._lib._hartigan.eigh_top`) and
    in a daemon thread: Ctrl-C raises KeyboardInterrupt at once, while LAPACK
    (which cannot be stopped) finishes in the background (an exiting process
    waits for it).
    """
    n = G.shape[0]
    # a copy of G for LAPACK, then the n×n matrix U Uᵀ (the copy is freed by then)
    check_fits(8 * n * n + 8 * n * (64 + k), f"spectral clustering of {n} points (an n×n "
               f"copy of the {format_bytes(8 * n * n)} Gram matrix)", too_big_advice(0))
    _, U = _interrupt.call(_hartigan.eigh_top, G, k, inline=n <= SHORT_N // 2)
    L = np.ascontiguousarray(U @ U.T)
    labels, _, it = fit_partition(L, k, "lloyd", init, n_init, max_iter, rng, n_threads)
    _, Q, sizes = initial_bookkeeping(G, labels, k)
    return labels, float(np.trace(G)) - float(_hartigan.objective(Q, sizes, k)), it


# -- without the n×n matrix -------------------------------------------------------

#: with engine='auto', the n×n matrix is used while it takes at most this many bytes
MATRIX_BYTES = 2**30


def choose_engine(engine, n, d):
    """'matrix' or 'streamed' for ``engine`` in ('auto', 'matrix', 'streamed')."""
    if engine == "auto":
        return "matrix" if semimetric_bytes(n, d) <= MATRIX_BYTES else "streamed"
    return engine


class StreamedGram:
    """The centred Gram matrix ``-1/2 J D J`` of ``X``, never formed.

    One pass over the rows of D (block by block, :func:`semimetric_rows`)
    gives its row means ``r`` and their mean ``mu``; any row of G is then
    computed from the data in O(n·d) (:func:`energystats._lib._hartigan.gram_rows`),
    every bit as :func:`centred_gram` would hold it.  Memory O(n·d).
    """

    def __init__(self, X, metric, n_threads, r=None):
        n = X.shape[0]
        if r is None:
            r = self.row_means(X, metric, n_threads)
        self.r = r
        self.mu = float(r.mean())
        # the diagonal as centred_gram computes it (rho(x, x) = 0)
        self.diag = ((0.0 - (r + r)) + self.mu) * -0.5
        Xw, met, scale = _engine.normalise(metric, X)
        self.X, self.XT, self.metric = Xw, np.ascontiguousarray(Xw.T), met
        self.mult, self.whole = scale.factors()
        self.n = n
        self.n_threads = n_threads

    @staticmethod
    def row_means(X, metric, n_threads, a=0, b=None):
        """Row means of D for rows ``a:b`` (block by block: the bits of ``D.mean(axis=1)``)."""
        n = X.shape[0]
        b = n if b is None else b
        r = np.empty(b - a)
        step = block_rows(n)
        for i0 in range(a, b, step):
            D = _engine.pairwise_values(X[i0:min(b, i0 + step)], X, metric, n_threads)
            r[i0 - a:i0 - a + D.shape[0]] = D.mean(axis=1)
        return r

    def rows(self, idx, n_threads=None):
        idx = np.ascontiguousarray(np.atleast_1d(idx), dtype=np.intp)
        out = np.empty((idx.size, self.n))
        _hartigan.gram_rows(self.X, self.XT, self.metric.code, self.metric.param, self.mult, self.whole,
                            self.r, self.mu, idx, out, self.n_threads if n_threads is None else n_threads)
        return out

    def row(self, i):
        return self.rows([i])[0]

    def products(self, label_sets, k, a=0, b=None):
        """``[(G @ Z_s)[a:b] for every labelling s]`` (Z one-hot), in one pass over rows a:b of G."""
        n = self.n
        b = n if b is None else b
        Zs = []
        for labels in label_sets:
            Z = np.zeros((n, k))
            Z[np.arange(n), labels] = 1.0
            Zs.append(Z)
        out = [np.empty((b - a, k)) for _ in label_sets]
        step = block_rows(n)
        for i0 in range(a, b, step):
            Gb = self.rows(np.arange(i0, min(b, i0 + step)))
            for Z, QX in zip(Zs, out):
                QX[i0 - a:i0 - a + Gb.shape[0]] = Gb @ Z
        return out

    def tolerance(self):
        """:func:`tolerance` of G, from its diagonal."""
        return 16.0 * np.finfo(float).eps * (self.n + 1) * max(float(np.max(np.abs(self.diag))),
                                                               np.finfo(float).tiny)

    def start(self, init, k, seed):
        """The initial labelling of the restart seeded by ``seed`` (as :func:`_initial_labels`)."""
        if isinstance(init, np.ndarray):
            return init.copy()
        if init == "k-means++":
            return _kmeanspp(self.diag, self.row, k, np.random.default_rng(seed))
        return random_labels(self.n, k, np.random.default_rng(seed))

    def restart(self, labels, QX, k, algorithm, max_iter, tol, n_threads):
        """One local search from ``labels`` with its n×k table ``QX``: (labels, objective, n_iter)."""
        labels = np.array(labels, dtype=np.intp)
        QX = np.array(QX, dtype=np.float64)  # the kernel updates both in place
        Q = np.bincount(labels, weights=QX[np.arange(self.n), labels], minlength=k).astype(np.float64)
        sizes = np.bincount(labels, minlength=k).astype(np.intp)
        it, _, _ = _hartigan.hartigan_streamed(self.X, self.XT, self.metric.code, self.metric.param,
                                               self.mult, self.whole, self.r, self.mu, self.diag, labels,
                                               k, QX, Q, sizes, max_iter, tol,
                                               lloyd=algorithm == "lloyd", n_threads=n_threads)
        return labels, float(_hartigan.objective(Q, sizes, k)), int(it)


def fit_streamed(X, metric, k, algorithm, init, n_init, max_iter, rng, n_threads):
    """:func:`fit_partition` without the n×n matrix: the same restarts, seeds and partition.

    Returns (labels, n_iter).  The initial labellings of all restarts are
    drawn first, their n×k tables come from one pass over the rows of G,
    then the restarts run (:func:`energystats._lib._hartigan.hartigan_streamed`)
    in parallel threads.
    """
    if algorithm not in ("hartigan", "lloyd"):
        raise ValueError(f"`engine='streamed'` runs algorithm 'hartigan' or 'lloyd'; got {algorithm!r}.")
    gram = StreamedGram(X, metric, n_threads)
    tol = gram.tolerance()
    seeds = restart_seeds(init, n_init, rng)
    starts = [gram.start(init, k, seed) for seed in seeds]
    tables = gram.products(starts, k)
    order = {int(s): t for t, s in enumerate(seeds)}
    per = max(1, n_threads // max(1, min(n_threads, len(seeds))))

    def one(seed, stop):
        t = order[int(seed)]
        _check_stop(stop)
        return gram.restart(starts[t], tables[t], k, algorithm, max_iter, tol, per)

    return best_restart(run_restarts(one, seeds, n_threads, gram.n))


def restart_seeds(init, n_init, rng):
    """The restarts' seeds, drawn before any work (one restart for given initial labels)."""
    return rng.integers(0, 2**63 - 1, size=1 if isinstance(init, np.ndarray) else n_init)


def best_restart(results):
    """(labels, n_iter) of the restart with the largest objective (lowest W), ties to the first."""
    best = max(range(len(results)), key=lambda r: (results[r][1], -r))
    labels, _, it = results[best]
    return labels, it


# -- approximate: k-means on a Nyström feature map of the induced kernel ------------------

class NystromFeatures:
    r"""A rank-r feature map ``F`` (n × r') with ``F Fᵀ ≈`` the kernel that rho induces.

    Landmarks ``L`` (r distinct rows drawn without replacement) define the
    kernel centred at them, :math:`K(x, y) = -\tfrac12(\rho(x, y) - a(x) - a(y) + c)`
    with :math:`a(x)` the mean of :math:`\rho(x, l)` over the landmarks and
    :math:`c` the mean of :math:`a(l)`; it generates rho
    (:math:`K(x,x) + K(y,y) - 2K(x,y) = \rho(x,y)`), so W is that of rho.
    With :math:`K_{LL} = U \Lambda U^\top` (eigenvalues above
    :math:`10^{-10}\lambda_{max}` kept), :math:`F = K_{XL} U \Lambda^{-1/2}`,
    built block by block (Williams and Seeger 2001).
    """

    def __init__(self, X, metric, r, rng, n_threads):
        n = X.shape[0]
        r = min(r, n)
        self.landmarks = np.sort(rng.choice(n, size=r, replace=False))
        L = np.ascontiguousarray(X[self.landmarks])
        DLL = _engine.pairwise_values(L, L, metric, n_threads)
        aL = DLL.mean(axis=1)
        c = float(aL.mean())
        KLL = -0.5 * (DLL - aL[:, None] - aL[None, :] + c)
        lam, U = np.linalg.eigh(0.5 * (KLL + KLL.T))
        keep = lam > 1e-10 * max(float(lam[-1]), np.finfo(float).tiny)
        self.rank = int(keep.sum())
        Mp = U[:, keep] / np.sqrt(lam[keep])
        F = np.empty((n, self.rank))
        step = block_rows(r)
        for i0 in range(0, n, step):
            D = _engine.pairwise_values(X[i0:i0 + step], L, metric, n_threads)
            a = D.mean(axis=1)
            F[i0:i0 + D.shape[0]] = (-0.5 * (D - a[:, None] - aL[None, :] + c)) @ Mp
        self.F = F
        self.g = np.einsum("ij,ij->i", F, F)


def fit_features(F, g, k, algorithm, init, n_init, max_iter, rng, n_threads):
    """Best of ``n_init`` Hartigan (or Lloyd) runs on explicit features; returns (labels, n_iter).

    Seeds and restarts as :func:`fit_partition` (k-means++ on the distances
    ``g_i + g_j - 2 F_i · F_j``); the best run has the largest
    ``Σ_l |S_l|² / n_l`` (the lowest approximate W).
    """
    if algorithm not in ("hartigan", "lloyd"):
        raise ValueError(f"`approximation='nystrom'` runs algorithm 'hartigan' or 'lloyd'; "
                         f"got {algorithm!r}.")
    n, r = F.shape
    k = int(k)
    tol = 16.0 * np.finfo(float).eps * (n + 1) * max(float(np.max(np.abs(g))), np.finfo(float).tiny)
    if isinstance(init, np.ndarray):
        n_init = 1
    seeds = rng.integers(0, 2**63 - 1, size=n_init)

    def one(seed, stop):
        if isinstance(init, np.ndarray):
            labels = init.copy()
        elif init == "k-means++":
            labels = _kmeanspp(g, lambda i: F @ F[i], k, np.random.default_rng(seed))
        else:
            labels = random_labels(n, k, np.random.default_rng(seed))
        labels = np.ascontiguousarray(labels, dtype=np.intp)
        S, Q, sizes = np.empty((k, r)), np.empty(k), np.empty(k, dtype=np.intp)
        _check_stop(stop)
        it, _, _, _ = _hartigan.hartigan_features(F, g, labels, k, S, Q, sizes, max_iter, tol,
                                               lloyd=algorithm == "lloyd")
        return labels, float(_hartigan.objective(Q, sizes, k)), int(it)

    results = run_restarts(one, seeds, n_threads, n)
    best = max(range(len(results)), key=lambda t: (results[t][1], -t))
    labels, _, it = results[best]
    return labels, it


def group_sums_from_gram(G, labels, k):
    r"""k×k matrix :math:`M_{gh} = \sum_{x\in C_g, y\in C_h} \rho(x, y)` from a Gram matrix."""
    Z = np.zeros((G.shape[0], k))
    Z[np.arange(G.shape[0]), labels] = 1.0
    sizes = Z.sum(axis=0)
    dsum = Z.T @ np.diagonal(G)
    return np.outer(dsum, sizes) + np.outer(sizes, dsum) - 2.0 * (Z.T @ (G @ Z))


# -- exact 1-D (sorted formulas; docs: guide, "One-dimensional data") --------

def _prefix(xs):
    n = xs.size
    P1 = np.zeros(n + 1)
    PL = np.zeros(n + 1)
    np.cumsum(xs, out=P1[1:])
    np.cumsum(np.arange(n) * xs, out=PL[1:])
    return P1, PL


def _segment_cost(P1, PL, a, b):
    r"""Within dispersion :math:`\frac{1}{2m}\sum_{x,y}|x-y|` of the sorted segment ``[a, b)``.

    With local ranks :math:`t = l - a`, :math:`\sum_{x,y}|x-y| = 2\sum_t (2t + 1 - m) x_{(t)}`.
    """
    m = b - a
    inner = 2.0 * (PL[b] - PL[a]) + (1.0 - 2.0 * a - m) * (P1[b] - P1[a])
    return inner / m


def exact_1d(x, k):
    """Exact minimum-W partition of 1-D data into k contiguous groups of the sorted data.

    k = 2: every split in O(1) after a sort, O(n log n) in all.  k > 2: a
    dynamic programme over the sorted data, O(k n²) time, blocks of columns.
    Returns (labels, W).
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    n = x.size
    order = np.argsort(x, kind="stable")
    xs = x[order] - np.median(x)
    P1, PL = _prefix(xs)
    if k == 2:
        s = np.arange(1, n)
        W = _segment_cost(P1, PL, 0, s) + _segment_cost(P1, PL, s, n)
        cut = [int(s[np.argmin(W)])]
        Wbest = float(W.min())
    else:
        INF = np.inf
        # best[c][b]: min W of the first b sorted points in c groups
        prev = np.full(n + 1, INF)
        prev[1:] = _segment_cost(P1, PL, 0, np.arange(1, n + 1))
        back = np.zeros((k + 1, n + 1), dtype=np.intp)
        a_all = np.arange(n + 1)
        block = max(1, 2**22 // (n + 1))
        for c in range(2, k + 1):
            cur = np.full(n + 1, INF)
            for b0 in range(c, n + 1, block):
                bs = np.arange(b0, min(n + 1, b0 + block))
                A = a_all[:n, None]
                B = bs[None, :]
                valid = (A >= c - 1) & (A < B)
                with np.errstate(invalid="ignore", divide="ignore"):
                    seg = _segment_cost(P1, PL, A, np.maximum(B, A + 1))
                    cost = np.where(valid, prev[:n, None] + seg, INF)
                arg = np.argmin(cost, axis=0)
                cur[bs] = cost[arg, np.arange(bs.size)]
                back[c, bs] = arg
            prev = cur
        Wbest = float(prev[n])
        cut = []
        b = n
        for c in range(k, 1, -1):
            a = int(back[c, b])
            cut.append(a)
            b = a
        cut = sorted(cut)
    sorted_labels = np.zeros(n, dtype=np.intp)
    for c in cut:
        sorted_labels[c:] += 1
    labels = np.empty(n, dtype=np.intp)
    labels[order] = sorted_labels
    return labels, Wbest
