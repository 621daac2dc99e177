r"""The energy balancing programme solved matrix-free: no n×n matrix, O(n) memory.

The programme of :mod:`._programme` minimises :math:`f(x) = x'Ax - 2b'x` over a product of
probability simplices, with ``A`` built from the double-centred distance matrix
:math:`K = -HDH` (``H = I - 11'/N``) of all ``N`` rows (the optimised levels' units, the
focal level's or the target's).  Here ``A`` is never formed.  Its products with a vector
are streamed through the compiled pair kernel (:func:`energystats._lib._matvec.sym_group_matvec`:
each distance formed once, in tiles used for their rows and their columns; each row's sum
in a fixed order with Neumaier compensation, the same bits as the full rows of
:func:`energystats._lib._matvec.group_matvec` and for any number of threads): one pass over
the ``N²/2`` pairs (in calls of a few blocks, between which Ctrl-C is honoured) returns
:math:`D x_h` for every block ``h`` at once, and with the distance matrix's row means
``r = D1/N`` (one pass, once)

.. math::

    (K v)_i = -\bigl[(Dv)_i - \bar v N r_i - r'v + \bar v N \bar r\bigr],
    \qquad \bar v = 1'v/N, \; \bar r = 1'r/N .

The method is a projected, preconditioned conjugate gradient with active-set restarts:
conjugate gradients (Hestenes and Stiefel 1952, "Methods of conjugate gradients for solving
linear systems") on the face of the current active set (the zero weights held at zero, each
block's sum held fixed), preconditioned by a Nyström approximation of ``A`` from a few
hundred of its columns (Frangella, Tropp and Udell 2023, "Randomized Nyström
preconditioning", :func:`nystrom_preconditioner`); when a step would leave the feasible
set, the full step projected onto the simplices (Euclidean projection: Held, Wolfe and
Crowder 1974; the sort-based form of Duchi et al. 2008) where it cuts at least
``MIN_CLIP`` weights and decreases :math:`f`, else the step to the first bound, after which
the conjugate gradients restart on the new face; when the face is solved but the KKT
conditions are not, a projected-gradient step of length :math:`1/L` releases the bounds
whose multipliers have the wrong sign (the scheme of Polyak 1969, "The conjugate gradient
method in extremal problems", and of Moré and Toraldo 1991, "On the solution of large
quadratic programming problems with bound constraints", SIAM J. Optim. 1(1), whose
gradient-projection phase is replaced by the projected step).  ``L`` is twice the largest
eigenvalue of ``A`` on the simplices' tangent space, estimated by 20 power iterations (and
raised by 5%).  The balancing programmes' optima are mostly interior (a few percent of
zero weights), where conjugate gradients beat accelerated projected gradient with
adaptive restart (Beck and Teboulle 2009, "A fast iterative shrinkage-thresholding
algorithm for linear inverse problems"; O'Donoghue and Candès 2015, "Adaptive restart for
accelerated gradient schemes"): on 'ATE' with d = 10 the latter needed 1 150 products at
n = 3 000, this solver 194 at n = 2 000 and 210 at n = 4 000 (then with 400 landmarks).
Low-dimensional covariates are its hard case: with d = 1 the spectrum of ``K`` decays
like :math:`k^{-2}` and n = 1 000 took 2 700 products.

It stops when the natural KKT residual of :func:`._qp.kkt_residual`, formed from the
streamed gradient, is at most ``tol`` (1e-6 by default) relative to the gradient's
largest entry; the floor of that scale (1e-8 of the gradient's terms, for an optimum
whose gradient cancels) uses an upper bound of :math:`\max|A_{ij}|`
(:func:`entry_bound`) instead of the matrix's largest entry.
"""
from __future__ import annotations

import numpy as np

from .._core._metrics import resolve_metric
from .._core._validation import check_n_threads
from . import _qp

__all__ = ["StreamedDistances", "Operator", "entry_bound", "nystrom_preconditioner",
           "solve_firstorder", "TOL", "MAX_MATVECS", "LANDMARKS"]

#: the KKT residual (relative, as in :func:`._qp.kkt_residual`) at which the solver stops
TOL = 1e-6
#: the most matrix–vector products before the solver gives up (a RuntimeError)
MAX_MATVECS = 20000
#: rows of one call of the compiled kernel: short calls, so that Ctrl-C gets through
CALL_PAIRS = 2**25
#: a step that leaves the feasible set is projected (and tried: one product) when it would
#: cut at least this many weights to zero, and otherwise stopped at the first bound (no
#: product): measured on 'ATE' at n = 2 000 and 4 000, d = 10 (products 334 -> 194 and
#: 267 -> 210 against 1, no better with 8 or 16)
MIN_CLIP = 4


class StreamedDistances:
    """Products of the Euclidean distance matrix ``D`` of the rows of ``pts`` (N×d, float64)
    with vectors cut into contiguous pieces, streamed through
    :func:`energystats._lib._matvec.sym_group_matvec` (each distance formed once; the same bits
    as the full rows of :func:`energystats._lib._matvec.group_matvec` and for any number of
    threads; O(N d) memory), in calls of about ``CALL_PAIRS`` pairs between which Ctrl-C is
    honoured.

    :meth:`dot` (``w``, ``bounds``) returns the N×k matrix whose column ``h`` is
    ``D (w restricted to rows bounds[h]..bounds[h+1]-1)``; ``matvecs`` counts the calls."""

    def __init__(self, pts, n_threads=None):
        self.X = np.ascontiguousarray(pts, dtype=np.float64)
        self.XT = np.ascontiguousarray(self.X.T)
        self.N = self.X.shape[0]
        self.nt = check_n_threads(n_threads)
        met = resolve_metric("energy", 1.0)
        self.code, self.param = met.code, met.param
        self.step = 4 * int(max(4, CALL_PAIRS // max(1, 4 * self.N)))
        self.matvecs = 0
        self._r = None

    def dot(self, w, bounds):
        from .._lib import _matvec

        N = self.N
        w = np.ascontiguousarray(w, dtype=np.float64)
        bounds = np.ascontiguousarray(bounds, dtype=np.intp)
        self.matvecs += 1
        if bounds[0] == 0:
            return self._dot_symmetric(w, bounds)
        out = np.empty((N, bounds.size - 1))
        for r0 in range(0, N, self.step):                  # Ctrl-C between calls
            r1 = min(N, r0 + self.step)
            _matvec.group_matvec(self.X, self.XT, w, bounds, self.code, self.param, r0, r1,
                                 out[r0:r1], self.nt)
        return out

    def _dot_symmetric(self, w, bounds):
        """:meth:`dot` by :func:`energystats._lib._matvec.sym_group_matvec`: each distance
        formed once, the same bits as the full rows (its blocks of columns: each group's
        columns from its first, BLOCK at a time); Ctrl-C between calls of about CALL_PAIRS."""
        from .._lib import _matvec

        N, B = self.N, _matvec.BLOCK
        starts = [np.arange(bounds[h], bounds[h + 1], B) for h in range(bounds.size - 1)]
        group = np.repeat(np.arange(bounds.size - 1, dtype=np.intp), [s.size for s in starts])
        starts = np.append(np.concatenate(starts), bounds[-1]).astype(np.intp)
        acc = np.zeros((N, bounds.size - 1, 2))
        side = np.empty((max(1, group.size), B))
        pairs = np.cumsum((N - starts[:-1]) * np.diff(starts))   # the pairs of steps 0..J
        J0 = 0
        while J0 < group.size:
            J1 = max(J0 + 1, int(np.searchsorted(pairs, pairs[J0] + CALL_PAIRS)))
            _matvec.sym_group_matvec(self.X, self.XT, w, starts, group, self.code, self.param,
                                     J0, min(J1, group.size), acc, side, self.nt)
            J0 = J1
        return acc[:, :, 0] + acc[:, :, 1]

    @property
    def row_means(self):
        """``r = D1/N`` (one pass, kept)."""
        if self._r is None:
            self._r = self.dot(np.ones(self.N), [0, self.N])[:, 0] / self.N
        return self._r

    def centred(self, Dv, v):
        """``K v = -HDHv`` from ``Dv`` (N×k, one column per column of ``v``) and ``v`` (N×k)."""
        r = self.row_means
        N = self.N
        vbar = v.sum(axis=0) / N
        return -(Dv - np.outer(r, vbar * N) - (r @ v)[None, :] + (vbar * N * r.mean())[None, :])

    def kdot(self, w, bounds):
        """``K`` times the pieces of ``w`` on the ranges ``bounds``: N×k."""
        Dv = self.dot(w, bounds)
        V = np.zeros((self.N, len(bounds) - 1))
        for h in range(len(bounds) - 1):
            V[bounds[h]:bounds[h + 1], h] = w[bounds[h]:bounds[h + 1]]
        return self.centred(Dv, V)


class Operator:
    """``A x`` of the balancing programme (the variables are the first ``bounds[-1]`` rows of
    the streamed points, block ``h`` on ``bounds[h]..bounds[h+1]-1``): the diagonal blocks
    are ``diag_factor`` times ``K``'s, the off-diagonal ones ``off_factor`` times, plus the
    ridge ``ridge`` on the diagonal."""

    def __init__(self, dist, bounds, diag_factor, off_factor, ridge):
        self.dist, self.bounds = dist, np.asarray(bounds, dtype=np.intp)
        self.cd, self.co, self.ridge = float(diag_factor), float(off_factor), ridge
        self.n = int(self.bounds[-1])

    def __call__(self, x):
        w = np.zeros(self.dist.N)
        w[:self.n] = x
        KX = self.dist.kdot(w, self.bounds)[:self.n]          # column h: K x_h
        total = KX.sum(axis=1)
        out = np.empty(self.n)
        for h in range(self.bounds.size - 1):
            sl = slice(self.bounds[h], self.bounds[h + 1])
            own = KX[sl, h]
            out[sl] = self.cd * own + self.co * (total[sl] - own)
        out += self.ridge * x
        return out


def entry_bound(dist, diag_factor, off_factor, ridge):
    """An upper bound of ``max |A_ij|``: ``|K_ij| <= D_ij + r_i + r_j + r̄`` and ``D_ij`` at most
    twice the largest distance to the centroid."""
    X = dist.X
    rad = float(np.sqrt(((X - X.mean(axis=0)) ** 2).sum(axis=1)).max())
    r = dist.row_means
    k = 2.0 * rad + 2.0 * float(r.max()) + float(r.mean())
    return max(abs(diag_factor), abs(off_factor)) * k + float(np.max(ridge, initial=0.0))


#: landmarks of the Nyström preconditioner (at most, and at most n/20: an n×l float64 matrix
#: is held, 64 MB at n = 20 000)
LANDMARKS = 400


def nystrom_preconditioner(dist, bounds, diag_factor, off_factor, ridge, landmarks=LANDMARKS):
    """``v -> P⁻¹ v``: the inverse of a Nyström preconditioner of ``A`` (Frangella, Tropp and
    Udell 2023, "Randomized Nyström preconditioning", SIAM J. Matrix Anal. Appl. 44(2)),
    from ``landmarks`` columns of ``A`` (rows spread evenly over each block; their distances
    to all rows, O(n l) memory, no pass over all pairs): with ``A ≈ U Λ U'`` (rank l),
    ``P⁻¹ = λ_l U Λ⁻¹ U' + (I - UU')``, which maps the top of the spectrum onto ``λ_l``.
    None when the programme is too small to need one."""
    from .._core._engine import pairwise_values

    bounds = np.asarray(bounds, dtype=np.intp)
    n = int(bounds[-1])
    landmarks = min(landmarks, n // 20)                # U: at most n²/20 entries
    if landmarks < 16:
        return None
    sizes = np.diff(bounds)
    per = np.maximum(1, np.round(landmarks * sizes / n).astype(int))
    S = np.concatenate([bounds[h] + np.unique(np.linspace(0, sizes[h] - 1, per[h]).astype(np.intp))
                        for h in range(sizes.size)])
    met = resolve_metric("energy", 1.0)
    C = pairwise_values(dist.X[:n], dist.X[S], met, dist.nt)          # D[:, S]
    r = dist.row_means
    C -= r[:n, None]
    C -= r[None, S]
    C += r.mean()
    C *= -1.0                                                        # K[:, S]
    block = np.repeat(np.arange(sizes.size), sizes)
    C *= np.where(block[:, None] == block[None, S], diag_factor, off_factor)
    ridge = np.broadcast_to(np.asarray(ridge, dtype=np.float64), (n,))
    C[S, np.arange(S.size)] += ridge[S]                               # A[:, S]
    W = C[S]
    W = 0.5 * (W + W.T)
    nu = 1e-10 * max(float(np.trace(W)), np.finfo(float).tiny)
    try:
        L = np.linalg.cholesky(W + nu * np.eye(S.size))
    except np.linalg.LinAlgError:
        return None
    B = np.linalg.solve(L, C.T).T                                     # C L^-T
    del C
    ev, V = np.linalg.eigh(B.T @ B)                                   # B = U diag(sig) V'
    ev, V = ev[::-1], V[:, ::-1]
    keep = ev > 1e-12 * ev[0]
    U = B @ V[:, keep]
    del B
    U /= np.sqrt(ev[keep])
    lam = np.maximum(ev[keep] - nu, np.finfo(float).tiny)
    factor = lam[-1] / lam - 1.0

    def apply(v):
        return v + U @ (factor * (U.T @ v))

    return apply


def _kkt(x, g, blocks, floor):
    """The natural residual of :func:`._qp.kkt_residual` from the gradient ``g``."""
    scale = max(float(np.abs(g).max()), floor, np.finfo(float).tiny)
    return float(np.abs(x - _qp.project_simplices(x - g / scale, blocks)).max()), scale


def _face_project(v, free, bounds):
    """``v`` on the face: zero off ``free``, each block's free entries centred."""
    out = np.where(free, v, 0.0)
    for h in range(bounds.size - 1):
        sl = slice(bounds[h], bounds[h + 1])
        f = free[sl]
        cnt = int(f.sum())
        if cnt:
            out[sl][f] -= out[sl][f].sum() / cnt
    return out


def _lipschitz(op, bounds, iters=20):
    """Twice the largest eigenvalue of ``A`` on the tangent space of the simplices (each
    block's entries sum to zero), by power iteration from a fixed start, raised by 5%."""
    n = int(bounds[-1])
    v = np.cos(np.arange(n) * 0.7 + 0.3)           # deterministic, no rng
    free = np.ones(n, dtype=bool)
    v = _face_project(v, free, bounds)
    lam = 0.0
    for _ in range(iters):
        nv = np.linalg.norm(v)
        if not nv > 0:
            break
        v /= nv
        Av = _face_project(op(v), free, bounds)
        lam = float(v @ Av)
        v = Av
    return 2.0 * 1.05 * max(lam, np.finfo(float).tiny)


def solve_firstorder(op, b, bounds, x0, *, tol=TOL, max_matvecs=MAX_MATVECS, entry_bound=None,
                     precond=None):
    """``(x, info)``: the minimiser of ``x'Ax - 2b'x`` on the simplices of the contiguous
    blocks ``bounds`` (``op(x)`` = ``A x``), from the feasible ``x0``; ``info`` holds the
    solver's name, the KKT residual, the matrix–vector products and the restarts.

    A RuntimeError when ``max_matvecs`` products do not reach ``tol``."""
    bounds = np.asarray(bounds, dtype=np.intp)
    blocks = [np.arange(bounds[h], bounds[h + 1]) for h in range(bounds.size - 1)]
    count = [0]

    def A(v):
        count[0] += 1
        return op(v)

    x = np.array(x0, dtype=np.float64)
    L = _lipschitz(A, bounds)
    floor = 0.0 if entry_bound is None else \
        1e-8 * 2.0 * (entry_bound * float(np.abs(x).sum()) + float(np.abs(b).max()))
    Ax = A(x)
    fresh = True
    restarts = releases = hits = accepted = 0
    res = np.inf
    while True:
        g = 2.0 * (Ax - b)
        res, scale = _kkt(x, g, blocks, floor)
        if res <= tol:
            if fresh:
                break
            Ax, fresh = A(x), True                 # confirm with a product from scratch
            continue
        if count[0] >= max_matvecs:
            raise RuntimeError(f"the first-order solver stopped after {count[0]} matrix-vector "
                               f"products with a KKT residual of {res:.1e} (above {tol:g}); "
                               "try a `lam` > 0, or `cells`.")
        restarts += 1
        free = x > 0
        r = -_face_project(g, free, bounds)
        if float(np.abs(r).max()) <= 0.1 * tol * scale:
            # the face is solved, the KKT conditions are not: release bounds (a projected
            # gradient step, which cannot increase f with the step 1/L)
            x = _qp.project_simplices(x - g / L, blocks)
            Ax, fresh = A(x), True
            releases += 1
            continue
        z = r if precond is None else _face_project(precond(r), free, bounds)
        p = z.copy()
        rho = float(r @ z)
        while True:                                # conjugate gradients on the face
            Ap = A(p)
            pAp = 2.0 * float(p @ Ap)
            if not pAp > 0:
                break
            alpha = rho / pAp
            neg = p < 0
            amax = float(np.min(x[neg] / -p[neg])) if neg.any() else np.inf
            if alpha >= amax:                      # leaves the feasible set
                hits += 1
                better = False
                if int(np.sum(x + alpha * p < 0)) >= MIN_CLIP:
                    xt = _qp.project_simplices(x + alpha * p, blocks)
                    Axt = A(xt)
                    better = float(xt @ Axt - 2.0 * (b @ xt)) < float(x @ Ax - 2.0 * (b @ x))
                if better:
                    x, Ax, fresh = xt, Axt, True
                    accepted += 1
                else:                              # the step to the first bound
                    x = np.maximum(x + amax * p, 0.0)
                    x[neg & (x <= amax * -p * 1e-12)] = 0.0
                    Ax = Ax + amax * Ap
                    fresh = False
                break
            x = x + alpha * p
            Ax = Ax + alpha * Ap
            fresh = False
            r = r - alpha * _face_project(2.0 * Ap, free, bounds)
            if float(np.abs(r).max()) <= 0.1 * tol * scale or count[0] >= max_matvecs:
                break
            z = r if precond is None else _face_project(precond(r), free, bounds)
            rn = float(r @ z)
            p = z + (rn / rho) * p
            rho = rn
        if not fresh and restarts % 20 == 0:       # keep the incremental A x from drifting
            Ax, fresh = A(x), True
    x = np.maximum(x, 0.0)
    for idx in blocks:
        x[idx] /= x[idx].sum()
    return x, {"solver": "firstorder", "status": "solved", "kkt_residual": res,
               "matvecs": count[0], "restarts": restarts, "releases": releases, "hits": hits,
               "accepted": accepted, "lipschitz": L}
