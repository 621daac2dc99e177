"""The energy balancing weights' quadratic programme, built from validated inputs.

:func:`solve_energy` is the whole computation of :func:`.weights.energy_balancing_weights`
after its arguments are checked, written as a function of one :class:`EnergyInputs` record
so that the bootstrap of :mod:`.effect` can solve it again on resampled rows.  It works in
working units: with ``standardize=None`` the covariates are multiplied by one power of
two (exact: the geometry is kept) so that no distance over- or underflows, the ridge
penalty by the same power, and the reported energies and objective are scaled back.

Exact constraints (WeightIt's ``moments`` and ``quantile``): each optimised level's
weighted mean of every constrained feature equals the target's,
``sum_u x_u F_u = sum_u t_u F_u``, a linear equality in the QP.  The features are formed in
per-column studentized units (base-weighted), which span the same polynomials as the raw
covariates and keep the rows of the constraints well scaled: the covariates' powers
``1..moments`` (a column with ``m`` distinct values contributes at most ``m - 1`` powers,
the others being combinations of them) and the indicators ``1{x_j <= q_j}`` of the
target's weighted ``quantiles``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core._validation import Labels
from . import _cells, _design, _firstorder, _forms, _qp

__all__ = ["EnergyInputs", "IndependenceInputs", "solve_energy", "exact_features", "resolve_solver"]


@dataclass(frozen=True)
class EnergyInputs:
    """The validated inputs of :func:`.weights.energy_balancing_weights`: the covariates as
    given (float64, before standardisation), the treatment as :class:`Labels`, the base
    weights, the target rows (or None), the focal level and the options."""

    Z: np.ndarray
    lab: Labels
    s: np.ndarray
    T: np.ndarray | None
    estimand: str
    focal: object
    improved: bool
    lam: float
    standardize: str | None
    moments: int | None
    quantiles: object
    cells: int | None


@dataclass(frozen=True)
class IndependenceInputs:
    """The validated inputs of :func:`.weights.independence_weights`: covariates and
    treatment as given (float64, before standardisation), base weights and options."""

    Z: np.ndarray
    a: np.ndarray
    s: np.ndarray
    lam: float
    standardize: str | None
    dimension_adj: bool
    cells: int | None


def _weighted_quantile(x, p, q):
    """The smallest value of ``x`` whose weighted cdf (masses ``p``) reaches ``q``."""
    order = np.argsort(x, kind="stable")
    cdf = np.cumsum(p[order]) / p.sum()
    return float(x[order][min(int(np.searchsorted(cdf, q * (1 - 1e-12))), x.size - 1)])


def exact_features(pts, s_ref, tmass_rows, moments, quantiles):
    """The constrained features of every row of ``pts`` (covariates, and target rows below
    them), in per-column studentized units of the base-weighted sample ``s_ref`` (its rows
    are the first ``len(s_ref)`` of ``pts``); the target's masses per row ``tmass_rows`` fix
    the quantiles.  ``quantiles`` is a list of probabilities for every column or a dict
    ``{column position: [probabilities]}``.  Returns (F, names)."""
    n = s_ref.size
    shift = _design.column_shifts(pts)
    U = np.ldexp(pts, -shift)
    p = s_ref / s_ref.sum()
    mean = p @ U[:n]
    sd = np.sqrt(p @ (U[:n] - mean) ** 2)
    cols, names = [], []
    for j in range(pts.shape[1]):
        if not sd[j] > 0:
            continue                      # a constant column: every moment balanced already
        u = (U[:, j] - mean[j]) / sd[j]
        if moments:
            distinct = np.unique(U[:n, j][s_ref > 0]).size
            for k in range(1, min(moments, distinct - 1) + 1):
                cols.append(u ** k)
                names.append((j, f"power {k}"))
        probs = quantiles.get(j, ()) if isinstance(quantiles, dict) else (quantiles or ())
        for q in probs:
            thr = _weighted_quantile(u, tmass_rows, q)
            cols.append((u <= thr).astype(np.float64))
            names.append((j, f"quantile {q:g}"))
    F = np.column_stack(cols) if cols else np.zeros((pts.shape[0], 0))
    return F, names


def _constraints(F_units, tmass, members):
    """Rows ``M`` and right-hand sides ``c`` of ``sum_u x_u F_u = sum_u t_u F_u`` for every
    optimised level (``members``: the units of each, in the order of the QP's variables)."""
    target = tmass @ F_units
    q = F_units.shape[1]
    nvar = sum(len(mb) for mb in members)
    M = np.zeros((q * len(members), nvar))
    start = 0
    for g, mb in enumerate(members):
        M[g * q:(g + 1) * q, start:start + len(mb)] = F_units[mb].T
        start += len(mb)
    return M, np.tile(target, len(members))


def solve_energy(inp, solver, memory_budget, n_threads, gen=None):
    """``(w, fields)``: the weights of every row and the result's fields (energies, objective,
    ESS, KKT residual, solver, cells), for the inputs ``inp``."""
    lab, s, T = inp.lab, inp.s, inp.T
    n, m = inp.Z.shape[0], (0 if T is None else T.shape[0])
    focal = inp.focal
    fixed = [lab.k] + ([] if focal is None else [lab.groups.index(focal)])
    solver = resolve_solver(inp, solver, n + m, memory_budget)
    if solver == "firstorder":
        pass                  # O(n) memory: nothing to check
    elif inp.cells is None:
        _forms.check_budget(n + m, _forms.peak_matrices("balancing", solver), memory_budget,
                            "energy_balancing_weights")
    else:  # at most this many cells: refused before the k-means
        live = np.bincount(lab.codes[s > 0], minlength=lab.k)
        most = sum(1 if g in fixed else min(int(live[g]), inp.cells)
                   for g in range(lab.k)) + (m > 0)
        _forms.check_budget(most, _forms.peak_matrices("balancing", solver), memory_budget,
                            "energy_balancing_weights (cells)", cells=True)
    Z, T = _forms.standardise(inp.Z, inp.standardize, s, T)
    shift = 0 if inp.standardize is not None else \
        max(_design.pow2_shift(a) for a in (Z, T) if a is not None)
    if shift:   # raw units: one power of two for all, exact; scaled back below
        Z, T = np.ldexp(Z, -shift), (None if T is None else np.ldexp(T, -shift))
    pts = Z if T is None else np.vstack([Z, T])
    s_all = s if T is None else np.concatenate([s, np.ones(m)])
    if solver == "firstorder":
        return _solve_streamed(inp, pts, s_all, shift, n_threads)
    if inp.cells is None:   # one unit per row
        D = _forms.distance_matrix(pts, n_threads)
        ucode = np.concatenate([lab.codes, np.full(m, -1)])
        umass, pen, cell = s_all, np.ones(n + m), None
    else:                   # one unit per cell; the target's cell gets code -1
        codes_all = np.concatenate([lab.codes, np.full(m, lab.k)])
        cell, ucode = _cells.kmeans_cells(pts, codes_all, lab.k + (m > 0), inp.cells, s_all,
                                          gen, fixed=fixed)
        D, umass, pen = _cells.cell_distances(pts, cell, ucode.size, s_all, n_threads)
        ucode = np.where(ucode == lab.k, -1, ucode)
    K = _forms.double_centre(D)
    K *= -1.0                                      # positive semidefinite
    U = ucode.size
    tmass = np.zeros(U)
    if T is not None:
        tmass[ucode == -1] = umass[ucode == -1] / m
    elif focal is None:
        tmass[:] = umass / s.sum()
    else:
        f = ucode == lab.groups.index(focal)
        tmass[f] = umass[f] / umass[f].sum()
    improved = bool(inp.improved) and inp.estimand == "ATE"  # between-level terms: ATE only
    opt = [g for g in range(lab.k) if focal is None or lab.groups[g] != focal]
    members = [np.flatnonzero(ucode == g) for g in opt]
    idx = np.concatenate(members)
    bounds = np.cumsum([0] + [len(mb) for mb in members])
    blocks = [np.arange(bounds[i], bounds[i + 1]) for i in range(len(opt))]
    A = K[np.ix_(idx, idx)]
    cut = [slice(bounds[i], bounds[i + 1]) for i in range(len(opt))]
    for i, bi in enumerate(cut):
        for j, bj in enumerate(cut):
            if i == j and improved:
                A[bi, bi] *= len(opt)          # E(g, target) and the k - 1 terms E(g, h)
            elif i != j:
                A[bi, bj] *= -1.0 if improved else 0.0
    # the ridge: lam * sum_i (w_i / n)^2 with w_i = n_g x_i, x_i = y_u s_i / s(u) in a cell
    n_opt = np.repeat([lab.sizes[g] for g in opt], [len(mb) for mb in members])
    A[np.diag_indices_from(A)] += np.ldexp(inp.lam, -shift) * (n_opt / n) ** 2 * pen[idx]
    Kt = K @ tmass
    b = Kt[idx]
    eq = _exact_constraints(inp, pts, s, s_all, tmass, ucode, umass, cell, members)
    x, info = _qp.solve_simplex_qp(A, b, blocks, solver, eq=eq)
    const = len(opt) * float(tmass @ Kt)
    objective = float(x @ (A @ x) - 2.0 * (b @ x) + const)
    kkt = _qp.kkt_residual(A, b, x, blocks, eq=eq)
    del A
    y = np.zeros(U)
    y[idx] = x
    w = _row_weights(y, lab, s, cell, umass, n, focal)
    before, after = _energies(w, lab, ucode, umass, tmass, K, cell, n)
    return w, dict(energy_before=np.ldexp(before, shift), energy_after=np.ldexp(after, shift),
                   objective=float(np.ldexp(objective, shift)), kkt_residual=kkt,
                   solver=info["solver"], improved=improved,
                   ess=np.array([_forms.ess(w[lab.codes == g]) for g in range(lab.k)]),
                   cells=None if cell is None else U,
                   cell_labels=None if cell is None else cell[:n].copy(),
                   n_constraints=0 if eq is None else eq[0].shape[0],
                   iterations=int(info.get("iterations", 0)))


def resolve_solver(inp, solver, n_points, memory_budget):
    """The solver that runs for ``solver`` ('auto', 'firstorder' or a QP solver's name).

    'auto': OSQP with ``cells`` or where its n×n matrices fit ``memory_budget`` (and the
    machine), the first-order solver otherwise or when OSQP is not installed, unless the programme has exact constraints,
    which only the QP solvers take (then the QP's MemoryError).  'firstorder' refuses
    ``cells`` and the exact constraints with a ValueError."""
    exact = bool(inp.moments) or bool(inp.quantiles)
    if solver == "firstorder":
        if inp.cells is not None:
            raise ValueError(f"`cells` is an approximation for the QP solvers; "
                             f"`solver='firstorder'` solves the exact programme in O(n) memory "
                             f"without it. Got cells={inp.cells!r}: drop `cells` or pass "
                             "`solver='auto'`.")
        if exact:
            name = "moments" if inp.moments else "quantiles"
            raise ValueError(f"`{name}`: the exact constraints (`moments`, `quantiles`) are "
                             "taken by the QP solvers only, not by `solver='firstorder'`; pass "
                             "`solver='osqp'` (or 'auto'), or `cells` for large n.")
        return solver
    if solver != "auto":
        return solver
    if inp.cells is not None or exact:
        return "osqp"
    import importlib.util

    if importlib.util.find_spec("osqp") is None:
        return "firstorder"     # the package's own solver: the result's `solver` says so
    try:
        _forms.check_budget(n_points, _forms.peak_matrices("balancing", "osqp"), memory_budget,
                            "energy_balancing_weights")
    except MemoryError:
        return "firstorder"
    return "osqp"


def _solve_streamed(inp, pts, s_all, shift, n_threads):
    """:func:`solve_energy` without an n×n matrix: the programme's products streamed
    (:mod:`._firstorder`), ``pts`` the working-unit rows (covariates, then the target's)."""
    lab, s, focal = inp.lab, inp.s, inp.focal
    n, N = lab.codes.size, pts.shape[0]
    opt = [g for g in range(lab.k) if focal is None or lab.groups[g] != focal]
    members = [np.flatnonzero(lab.codes == g) for g in opt]
    idx = np.concatenate(members)
    rest = np.flatnonzero(~np.isin(np.arange(n), idx))        # the focal level's rows
    order = np.concatenate([idx, rest, np.arange(n, N)])      # variables first
    dist = _firstorder.StreamedDistances(pts[order], n_threads)
    umass = s_all[order]
    bounds = np.cumsum([0] + [len(mb) for mb in members])
    n_opt = int(bounds[-1])
    tmass = np.zeros(N)
    if N > n:
        tmass[n:] = 1.0 / (N - n)
    elif focal is None:
        tmass[:n] = umass[:n] / s.sum()
    else:
        tmass[n_opt:n] = umass[n_opt:n] / umass[n_opt:n].sum()
    Kt = dist.kdot(tmass, [0, N])[:, 0]
    b = Kt[:n_opt]
    improved = bool(inp.improved) and inp.estimand == "ATE"
    sizes = np.repeat([lab.sizes[g] for g in opt], np.diff(bounds))
    ridge = np.ldexp(inp.lam, -shift) * (sizes / n) ** 2
    cd, co = (len(opt), -1.0) if improved else (1.0, 0.0)
    op = _firstorder.Operator(dist, bounds, cd, co, ridge)
    x0 = np.concatenate([umass[bounds[h]:bounds[h + 1]] / umass[bounds[h]:bounds[h + 1]].sum()
                         for h in range(len(opt))])
    x, info = _firstorder.solve_firstorder(
        op, b, bounds, x0, entry_bound=_firstorder.entry_bound(dist, cd, co, ridge),
        precond=_firstorder.nystrom_preconditioner(dist, bounds, cd, co, ridge))
    const = len(opt) * float(tmass @ Kt)
    objective = float(x @ op(x) - 2.0 * (b @ x) + const)
    y = np.zeros(N)
    y[order[:n_opt]] = x
    w = _row_weights(y, lab, s, None, s_all, n, focal)
    # each level's energy distance to the target, before and after: (u - t)' K (u - t)
    levels = opt + ([] if focal is None else [lab.groups.index(focal)])
    lb = np.concatenate([bounds, [n]]) if focal is not None else bounds
    before, after = np.zeros(lab.k), np.zeros(lab.k)
    for vec, out in ((umass, before), (w[order[:n]], after)):
        u = np.zeros(N)
        u[:n] = vec[:n]
        for h in range(len(levels)):
            u[lb[h]:lb[h + 1]] /= u[lb[h]:lb[h + 1]].sum()
        KU = dist.kdot(u, lb)
        for h, g in enumerate(levels):
            uh = u[lb[h]:lb[h + 1]]
            form = float(uh @ KU[lb[h]:lb[h + 1], h]) - 2.0 * float(uh @ Kt[lb[h]:lb[h + 1]]) \
                + float(tmass @ Kt)
            out[g] = max(form, 0.0)
    if focal is not None:     # its masses are the target's: exactly 0, not a rounding residue
        before[lab.groups.index(focal)] = after[lab.groups.index(focal)] = 0.0
    return w, dict(energy_before=np.ldexp(before, shift), energy_after=np.ldexp(after, shift),
                   objective=float(np.ldexp(objective, shift)),
                   kkt_residual=float(info["kkt_residual"]), solver="firstorder",
                   improved=improved,
                   ess=np.array([_forms.ess(w[lab.codes == g]) for g in range(lab.k)]),
                   cells=None, cell_labels=None, n_constraints=0,
                   iterations=int(info["matvecs"]))


def _exact_constraints(inp, pts, s, s_all, tmass, ucode, umass, cell, members):
    """``(M, c)`` of the ``moments``/``quantiles`` constraints on the QP's variables, or
    None without them."""
    if not inp.moments and not inp.quantiles:
        return None
    n_rows = pts.shape[0]
    row_unit = np.arange(n_rows) if cell is None else cell
    live = row_unit >= 0
    # the target's mass of each row: its unit's mass spread in proportion to base weights
    tm_rows = np.zeros(n_rows)
    tm_rows[live] = tmass[row_unit[live]] * s_all[live] / umass[row_unit[live]]
    F, _ = exact_features(pts, s, tm_rows, inp.moments, inp.quantiles)
    if F.shape[1] == 0:
        return None
    # each unit's features: the base-weighted mean over its rows
    U = ucode.size
    Fu = np.zeros((U, F.shape[1]))
    for j in range(F.shape[1]):
        Fu[:, j] = np.bincount(row_unit[live], weights=s_all[live] * F[live, j], minlength=U)
    Fu /= umass[:, None]
    return _constraints(Fu, tmass, members)


def _row_weights(y, lab, s, cell, umass, n, focal):
    """The weight of every row from the units' masses ``y`` (mean 1 within each level)."""
    size = lab.sizes[lab.codes].astype(np.float64)
    if cell is None:
        w = y[:n] * size
    else:
        c = cell[:n]
        w = np.zeros(n)
        ok = c >= 0
        w[ok] = size[ok] * y[c[ok]] * s[ok] / umass[c[ok]]
    if focal is not None:
        f = lab.codes == lab.groups.index(focal)
        w[f] = s[f] / s[f].sum() * f.sum()
    return w


def _energies(w, lab, ucode, umass, tmass, K, cell, n):
    """Each level's energy distance to the target with the base weights and with ``w``."""
    U = ucode.size
    row_unit = np.arange(n) if cell is None else cell[:n]
    live = row_unit >= 0
    before, after = [], []
    for g in range(lab.k):
        ug = ucode == g
        u0 = np.zeros(U)
        u0[ug] = umass[ug] / umass[ug].sum()
        sel = live & (lab.codes == g)
        u1 = np.bincount(row_unit[sel], weights=w[sel], minlength=U)
        u1 /= u1.sum()
        # K = -C: E(u, v) = (u - v)' K (u - v)
        before.append(max(float((u0 - tmass) @ K @ (u0 - tmass)), 0.0))
        after.append(max(float((u1 - tmass) @ K @ (u1 - tmass)), 0.0))
    return np.array(before), np.array(after)
