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

__all__ = ["SOLVERS", "ENERGY_SOLVERS", "solve_simplex_qp", "kkt_residual", "project_simplices",
           "require_solver", "check_energy_solver"]

SOLVERS = ("osqp", "clarabel")
#: the values of ``solver`` for the energy balancing weights: the QP solvers, the matrix-free
#: first-order solver (:mod:`._firstorder`) and 'auto' (:func:`._programme.resolve_solver`)
ENERGY_SOLVERS = ("auto", "firstorder") + SOLVERS

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


def check_energy_solver(solver):
    """``solver`` of :func:`~energystats.energy_balancing_weights` checked: one of
    :data:`ENERGY_SOLVERS`; a QP solver named explicitly must be installed."""
    if not isinstance(solver, str) or solver not in ENERGY_SOLVERS:
        raise ValueError(f"`solver` must be one of {', '.join(map(repr, ENERGY_SOLVERS))}; "
                         f"got {solver!r}.")
    if solver in SOLVERS:
        require_solver(solver)
    return solver


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


def kkt_residual(A, b, x, blocks, eq=None):
    """The natural residual of the programme's KKT conditions at ``x``, with the gradient
    ``g = 2(Ax - b)`` scaled by its largest entry (or by 1e-8 of its terms' bound ``2(max|A| sum|x| + max|b|)``
    where it cancels below that, as at an interior optimum): zero exactly at a KKT point (stationarity,
    feasibility and complementarity together), and of the size of the violation near one.

    Without equality constraints beyond the simplices it is ``max |x - P(x - g)|``, ``P`` the
    projection on the simplices.  With ``eq = (M, c)`` (rows ``M x = c``) the multipliers of
    all equality rows (the simplices' sums and ``M``) are fitted by least squares on the
    entries of ``x`` that are clearly positive (where the gradient of the Lagrangian must
    vanish), and the residual is the largest of ``|min(x_i, g_i + (E'ν + M'μ)_i)|`` (the
    natural residual of the bounds, given those multipliers) and the equalities' violation
    ``max |M x - c|`` relative to ``max |M|``."""
    Ax = A @ x
    g = 2.0 * (Ax - b)
    # relative to the gradient, or to its terms where it cancels (an interior optimum, whose
    # gradient is rounding noise): the problem's own scale, not an absolute one
    terms = 2.0 * (float(np.abs(A).max()) * float(np.abs(x).sum()) + float(np.abs(b).max()))
    scale = max(float(np.abs(g).max()), 1e-8 * terms, np.finfo(float).tiny)
    g = g / scale
    if eq is None:
        return float(np.abs(x - project_simplices(x - g, blocks)).max())
    M, c = eq
    rows = np.zeros((len(blocks) + M.shape[0], x.size))
    for j, idx in enumerate(blocks):
        rows[j, idx] = 1.0
    rows[len(blocks):] = M
    free = np.zeros(x.size, dtype=bool)
    for idx in blocks:
        free[idx] = x[idx] > 1e-3 * x[idx].max()
    mult = np.linalg.lstsq(rows[:, free].T, -g[free], rcond=None)[0]
    lag = g + rows.T @ mult
    bounds = float(np.abs(np.minimum(x, lag)).max())
    feas = float(np.abs(M @ x - c).max()) / max(float(np.abs(M).max()), np.finfo(float).tiny)
    return max(bounds, feas)


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


#: from this many variables on, the QP is solved in a child process (:mod:`.._core._workers`):
#: OSQP's setup factorises the KKT matrix holding the GIL (4 s measured at 3 000 variables;
#: it grows as n³, so about half a second at 1 500), and only there can Ctrl-C stop it at once.
#: The child holds its own copy of the QP's matrix: one n×n float64 matrix more than
#: ``_forms.PEAK_MATRICES`` counts (measured in one process)
ISOLATE_N = 1500


def solve_simplex_qp(A, b, blocks, solver="osqp", *, eq=None, tol=1e-9, max_iter=None,
                     isolate=None):
    """``(x, info)``: the minimiser of ``x'Ax - 2b'x`` on the simplices of ``blocks`` (index
    arrays partitioning ``0..n-1``), and on ``M x = c`` with ``eq = (M, c)``, clipped to
    ``x >= 0`` and each block renormalised to sum 1 (the solver's last digits); ``info``
    holds the solver's status and iterations.

    The programme is handed to the solver in working units: ``A`` and ``b`` times one power
    of two, their largest entry in [0.5, 1).  That leaves the minimiser unchanged, and the
    solvers' tolerances (absolute as well as relative) then mean the same whatever the
    scale of the data.  With ``isolate`` (by default from :data:`ISOLATE_N` variables on)
    the solver runs in a child process, so that Ctrl-C stops it at once.

    A solver that does not reach its tolerance raises a RuntimeError naming the status; an
    interrupted one, KeyboardInterrupt.
    """
    require_solver(solver)
    top = max(float(np.max(np.abs(A))), float(np.max(np.abs(b))) if len(b) else 0.0)
    shift = int(np.frexp(top)[1]) if top > 0 and np.isfinite(top) else 0
    if not np.isfinite(top):
        raise FloatingPointError("the balancing programme's matrix is not finite (an overflow "
                                 "in forming it); this is a bug: please report it.")
    args = (A, b, blocks, solver, eq, tol, max_iter, shift)
    from .._core import _interrupt, _workers

    if isolate is None:   # a worker process is ended by its parent on Ctrl-C already
        isolate = A.shape[0] >= ISOLATE_N and not _workers.in_worker()
    if isolate:
        return _workers.run_tasks(_solve_task, None, [args], 1)[0]
    with _interrupt.deferred_sigint() as pending:   # no Ctrl-C lost inside the libraries
        return _solve(*args, pending=pending)


def _solve_task(_, args):
    """:func:`_solve` in a worker process."""
    return _solve(*args)


def _solve(A, b, blocks, solver, eq, tol, max_iter, shift, pending=lambda: False):
    from scipy import sparse

    mod = require_solver(solver)
    n = A.shape[0]
    P = _upper_csc(A, np.ldexp(2.0, -shift))
    q = np.ldexp(-2.0 * np.asarray(b, dtype=np.float64), -shift)
    E = _constraints(n, blocks)
    k = len(blocks)
    rhs_eq = np.ones(k)
    if eq is not None:
        E = sparse.vstack([E, sparse.csc_matrix(eq[0])], format="csc")
        rhs_eq = np.concatenate([rhs_eq, eq[1]])
    m = E.shape[0]
    if solver == "clarabel":
        Amat = sparse.vstack([E, -sparse.identity(n, format="csc")], format="csc")
        rhs = np.concatenate([rhs_eq, np.zeros(n)])
        settings = mod.DefaultSettings()
        settings.verbose = False
        settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = tol
        settings.tol_ktratio = 1e-7
        if max_iter is not None:
            settings.max_iter = int(max_iter)
        cones = [mod.ZeroConeT(m), mod.NonnegativeConeT(n)]
        sol = mod.DefaultSolver(P, q, Amat, rhs, cones, settings).solve()
        status = str(sol.status)
        if "Solved" not in status:  # Solved or AlmostSolved
            raise RuntimeError(f"the QP solver clarabel stopped with status {status} after "
                               f"{sol.iterations} iterations; "
                               + _advice(status, eq, "osqp"))
        x = np.asarray(sol.x, dtype=np.float64)
        info = {"solver": "clarabel", "status": status, "iterations": int(sol.iterations)}
    else:
        Amat = sparse.vstack([E, sparse.identity(n, format="csc")], format="csc")
        lo = np.concatenate([rhs_eq, np.zeros(n)])
        hi = np.concatenate([rhs_eq, np.full(n, np.inf)])
        prob = mod.OSQP()
        try:
            prob.setup(P, q, Amat, lo, hi, verbose=False, eps_abs=tol, eps_rel=tol,
                       polishing=True, max_iter=int(max_iter or 200000))
        except Exception as exc:  # OSQP's setup errors are bare codes (OSQPException: 4)
            raise RuntimeError(f"the QP solver osqp could not set up the programme ({exc!r}); "
                               "try `solver='clarabel'`.") from None
        if pending():   # a Ctrl-C during the setup: do not start the solve
            raise KeyboardInterrupt
        sol = prob.solve(raise_error=False)
        status = str(sol.info.status)
        if status.lower() == "interrupted" or osqp_caught_sigint():
            raise KeyboardInterrupt     # OSQP's own Ctrl-C handler caught it (see there)
        if status.lower() != "solved":  # not "solved inaccurate", nor "unsolved"
            raise RuntimeError(f"the QP solver osqp stopped with status {status!r} after "
                               f"{sol.info.iter} iterations; " + _advice(status, eq, "clarabel"))
        x = np.asarray(sol.x, dtype=np.float64)
        info = {"solver": "osqp", "status": status, "iterations": int(sol.info.iter),
                "polished": int(sol.info.status_polish) == 1}
    x = np.maximum(x, 0.0)
    for idx in blocks:
        x[idx] /= x[idx].sum()
    return x, info


def osqp_caught_sigint():
    """Whether OSQP's own SIGINT handler caught a signal during the last solve.

    OSQP replaces the SIGINT handler for the whole of its ``solve`` and reads the flag its
    handler sets only between iterations; a Ctrl-C that lands after the last reading (during
    the polishing, or the final residuals) used to be swallowed: the solve returned "solved"
    and no KeyboardInterrupt ever came.  The flag stays set until the next solve starts, so
    it is read here, through the library's exported ``osqp_is_interrupted``, as soon as the
    solve returns.  False where the function cannot be found (an OSQP built without
    interrupts; ``tests/balance/test_qp_interrupt.py`` checks that the installed one has it).
    """
    flag = _osqp_flag()
    return bool(flag is not None and flag())


_OSQP_FLAG = []


def _osqp_flag():
    """``osqp_is_interrupted`` of the loaded OSQP extension (ctypes, looked up once), or None."""
    if not _OSQP_FLAG:
        import ctypes
        import os
        import sys

        mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LAZY", 0)
        found = None
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None) or ""
            if not name.startswith("osqp") or not path.endswith((".so", ".pyd", ".dylib")):
                continue
            try:
                fn = ctypes.CDLL(path, mode=mode).osqp_is_interrupted
            except (OSError, AttributeError):
                continue
            fn.restype, fn.argtypes = ctypes.c_int, []
            found = fn
            break
        _OSQP_FLAG.append(found)
    return _OSQP_FLAG[0]


def _advice(status, eq, other):
    if eq is not None and "infeasible" in status.lower():
        return ("the exact constraints (`moments`/`quantiles`) cannot all hold: a treatment "
                "level does not cover the target's moments or quantiles; ask for fewer.")
    return f"try `solver={other!r}` or a `lam` > 0."
