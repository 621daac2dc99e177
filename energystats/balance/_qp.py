"""The quadratic programme of the balancing weights, and its KKT residual.

Every problem here has one form: minimise ``x' A x - 2 b' x`` over ``x`` in a
product of probability simplices (``x >= 0``, the entries of each block
summing to 1), with ``A`` symmetric positive semidefinite (built from a
double-centred distance matrix, see :mod:`._forms`).

Two solvers of the package index are supported, both imported on call:

* ``"osqp"`` (Stellato et al. 2020, "OSQP: an operator splitting solver for
  quadratic programs"), what R ``WeightIt`` uses, the default (``pip install
  energy-statistics[balance]``): first-order (ADMM), run here with tight
  tolerances and solution polishing, which solves the KKT system of the
  active set found and so returns zeros as zeros (KKT residual ~1e-14);
* ``"clarabel"`` (Goulart and Chen 2024, "Clarabel: An interior-point solver
  for conic programs with quadratic objectives"): an interior-point method,
  whose points stay strictly inside the simplex (KKT residual ~1e-8 to 1e-5).

Whichever ran, :func:`kkt_residual` measures the returned point against the
optimality conditions, independently of the solver's own report.
"""
from __future__ import annotations

import numpy as np

__all__ = ["SOLVERS", "solve_simplex_qp", "kkt_residual", "project_simplices", "require_solver"]

SOLVERS = ("osqp", "clarabel")

_INSTALL = "pip install energy-statistics[balance]"


def require_solver(solver):
    """Import the solver module named ``solver``, or raise an ImportError that says how to get it."""
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ValueError(f"`solver` must be one of {', '.join(map(repr, SOLVERS))}; got {solver!r}.")
    try:
        if solver == "clarabel":
            import clarabel as mod
        else:
            import osqp as mod
    except ImportError:
        raise ImportError(f"`solver={solver!r}` needs the package {solver!r}, which is not installed: "
                          f"{_INSTALL} (or pip install {solver}).") from None
    return mod


def project_simplices(v, blocks):
    """Euclidean projection of ``v`` onto the product of the unit simplices of ``blocks``
    (Held, Wolfe and Crowder 1974; the sort-based form of Duchi et al. 2008)."""
    out = np.empty_like(v)
    for idx in blocks:
        y = v[idx]
        s = np.sort(y)[::-1]
        css = np.cumsum(s) - 1.0
        k = np.arange(1, y.size + 1)
        rho = np.flatnonzero(s - css / k > 0)[-1]
        out[idx] = np.maximum(y - css[rho] / (rho + 1), 0.0)
    return out


def kkt_residual(A, b, x, blocks):
    """The natural residual ``max |x - P(x - g)|`` with ``g`` the gradient ``2(Ax - b)`` scaled
    by its largest entry, ``P`` the projection on the simplices: zero exactly at a KKT point
    (stationarity, feasibility and complementarity together), and of the size of the
    violation near one."""
    g = 2.0 * (A @ x - b)
    scale = max(float(np.abs(g).max()), np.finfo(float).tiny)
    g = g / scale
    return float(np.abs(x - project_simplices(x - g, blocks)).max())


def _upper_csc(A, factor):
    """``factor * A``'s upper triangle (A symmetric) in CSC form, built without a dense
    temporary: column j of the upper triangle is row j of the lower one."""
    from scipy import sparse

    n = A.shape[0]
    lengths = np.arange(1, n + 1)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    data = A[np.tri(n, dtype=bool)]
    data *= factor
    idx_t = np.int32 if indptr[-1] < 2**31 else np.int64
    indices = (np.arange(indptr[-1], dtype=np.int64) - np.repeat(indptr[:-1], lengths)).astype(idx_t)
    return sparse.csc_matrix((data, indices, indptr.astype(idx_t)), shape=(n, n))


def _constraints(n, blocks):
    from scipy import sparse

    rows = np.concatenate([np.full(len(idx), g) for g, idx in enumerate(blocks)])
    cols = np.concatenate(blocks)
    E = sparse.csc_matrix((np.ones(cols.size), (rows, cols)), shape=(len(blocks), n))
    return E


def solve_simplex_qp(A, b, blocks, solver="osqp", *, tol=1e-9, max_iter=None):
    """``(x, info)``: the minimiser of ``x'Ax - 2b'x`` on the simplices of ``blocks`` (index
    arrays partitioning ``0..n-1``), clipped to ``x >= 0`` and each block renormalised to sum
    1 (the solver's last digits); ``info`` holds the solver's status and iterations.

    A solver that does not reach its tolerance raises a RuntimeError naming the status.
    """
    from scipy import sparse

    mod = require_solver(solver)
    n = A.shape[0]
    P = _upper_csc(A, 2.0)
    q = -2.0 * np.asarray(b, dtype=np.float64)
    E = _constraints(n, blocks)
    k = len(blocks)
    if solver == "clarabel":
        Amat = sparse.vstack([E, -sparse.identity(n, format="csc")], format="csc")
        rhs = np.concatenate([np.ones(k), np.zeros(n)])
        settings = mod.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
        settings.tol_ktratio = 1e-7
        if max_iter is not None:
            settings.max_iter = int(max_iter)
        cones = [mod.ZeroConeT(k), mod.NonnegativeConeT(n)]
        sol = mod.DefaultSolver(P, q, Amat, rhs, cones, settings).solve()
        status = str(sol.status)
        if "Solved" not in status:  # Solved or AlmostSolved
            raise RuntimeError(f"the QP solver clarabel stopped with status {status} after "
                               f"{sol.iterations} iterations; try `solver='osqp'` or a `lam` > 0.")
        x = np.asarray(sol.x, dtype=np.float64)
        info = {"solver": "clarabel", "status": status, "iterations": int(sol.iterations)}
    else:
        Amat = sparse.vstack([E, sparse.identity(n, format="csc")], format="csc")
        lo = np.concatenate([np.ones(k), np.zeros(n)])
        hi = np.concatenate([np.ones(k), np.full(n, np.inf)])
        prob = mod.OSQP()
        prob.setup(P, q, Amat, lo, hi, verbose=False, eps_abs=tol, eps_rel=tol, polishing=True,
                   max_iter=int(max_iter or 200000))
        sol = prob.solve(raise_error=False)
        status = str(sol.info.status)
        if status.lower() != "solved":  # not "solved inaccurate", nor "unsolved"
            raise RuntimeError(f"the QP solver osqp stopped with status {status!r} after "
                               f"{sol.info.iter} iterations; try `solver='clarabel'` or a `lam` > 0.")
        x = np.asarray(sol.x, dtype=np.float64)
        info = {"solver": "osqp", "status": status, "iterations": int(sol.info.iter),
                "polished": int(sol.info.status_polish) == 1}
    x = np.maximum(x, 0.0)
    for idx in blocks:
        x[idx] /= x[idx].sum()
    return x, info
