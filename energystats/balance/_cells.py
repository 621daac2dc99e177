"""The cell approximation of the balancing weights, for n beyond the memory budget.

The exact programmes (:mod:`.weights`) have one variable per row and hold n×n matrices.
With ``cells=K`` the rows of each treatment level (for the independence weights, all rows)
are grouped into at most K cells by k-means on the covariates in the units of
``standardize`` (the focal level of 'ATT'/'ATC' and a ``target`` sample, whose masses are
fixed, are one cell each, which is exact), and the weights are constrained to be
proportional to the base weights within a cell: ``w_i = n_g y_c s_i / s(c)`` for row ``i``
of cell ``c`` (level ``g``), with one variable ``y_c`` per cell.  Every mass the programme uses (the levels', the
target's) is then a combination of the cells' distributions, so the energy distances are
exact quadratic forms in ``y`` whose matrix holds the cell sums of the distances,
``G[a, b] = Σ_{i∈a, j∈b} s_i s_j ρ(x_i, x_j) / (s(a) s(b))``, streamed through the
compiled kernels (O(n² d) time, O(K²) memory).  The programme solved is therefore the exact
programme restricted to cell-constant weights: its objective is never below the exact
optimum (a restriction), and the reported energy distances are those of the returned
weights on all rows, not an estimate.  What is approximate is only the optimum itself.
"""
from __future__ import annotations

import numpy as np

from .._core._metrics import resolve_metric
from .._core._validation import check_n_threads
from .._core._weights import weighted_cell_centred_sums, weighted_group_sums

__all__ = ["check_cells", "kmeans_cells", "cell_distances", "cell_dependence_matrices"]

#: Lloyd iterations of the k-means that forms the cells (stops earlier when no row moves;
#: SciPy's ``kmeans2`` also runs 10)
MAX_ITER = 10


def check_cells(cells, rng=None):
    """``cells`` as an int >= 2 (or None, and then ``rng`` must be None: nothing is random)."""
    if cells is None:
        if rng is not None:
            raise ValueError(f"`rng` is the seed of the k-means of `cells`; the exact programme "
                             f"(cells=None) involves no randomness. Got rng={rng!r}: drop it or "
                             "pass `cells`.")
        return None
    if isinstance(cells, (bool, np.bool_)) or not isinstance(cells, (int, np.integer)) or cells < 2:
        raise ValueError(f"`cells` must be None (the exact programme) or an integer >= 2, the "
                         f"largest number of cells of a treatment level (of all rows for "
                         f"independence weights); got {cells!r}.")
    return int(cells)


def _nearest(Z, C):
    """Index of the nearest row of ``C`` for every row of ``Z`` (the argmin over ``c`` of
    ``|c|² - 2 z·c``, which differs from the squared distance by ``|z|²``)."""
    cc = np.einsum("ij,ij->i", C, C)
    out = np.empty(Z.shape[0], dtype=np.intp)
    step = max(1, 2**20 // max(C.shape[0], 1))
    buf = np.empty((min(step, Z.shape[0]), C.shape[0]))
    for r0 in range(0, Z.shape[0], step):
        r1 = min(Z.shape[0], r0 + step)
        g = np.matmul(Z[r0:r1], C.T, out=buf[:r1 - r0])
        g *= -2.0
        g += cc
        np.argmin(g, axis=1, out=out[r0:r1])
    return out


def kmeans(Z, k, rng):
    """Labels 0..m-1 (m <= k, no empty cell) of a k-means partition of the rows of ``Z``:
    k-means++ seeding (Arthur and Vassilvitskii 2007) then Lloyd iterations.  Every row is its
    own cell when ``k >= len(Z)``."""
    n = Z.shape[0]
    if k >= n:
        return np.arange(n, dtype=np.intp)
    first = int(rng.integers(n))
    centres = [Z[first]]
    d2 = np.maximum(((Z - Z[first]) ** 2).sum(axis=1), 0.0)
    for _ in range(1, k):
        cum = np.cumsum(d2)
        if not cum[-1] > 0:  # every row sits on a centre already
            break
        i = min(int(np.searchsorted(cum, rng.random() * cum[-1], side="right")), n - 1)
        centres.append(Z[i])
        np.minimum(d2, ((Z - Z[i]) ** 2).sum(axis=1), out=d2)
    C = np.array(centres)
    labels = _nearest(Z, C)
    for _ in range(MAX_ITER):
        counts = np.bincount(labels, minlength=C.shape[0])
        sums = np.zeros_like(C)
        np.add.at(sums, labels, Z)
        keep = counts > 0
        C[keep] = sums[keep] / counts[keep, None]
        new = _nearest(Z, C)
        if np.array_equal(new, labels):
            break
        labels = new
    return np.unique(labels, return_inverse=True)[1].astype(np.intp)


def kmeans_cells(Z, codes, k, cells, s, rng, fixed=()):
    """``(cell, cell_code)``: a cell label per row (-1 for rows with base weight 0, which get
    weight 0) numbered level by level, and the level of each cell.  The levels in ``fixed``
    (whose masses the programme does not change) are one cell each."""
    cell = np.full(Z.shape[0], -1, dtype=np.intp)
    cell_code, nxt = [], 0
    for g in range(k):
        rows = np.flatnonzero((codes == g) & (s > 0))
        if rows.size == 0:
            continue
        lab = np.zeros(rows.size, dtype=np.intp) if g in fixed else kmeans(Z[rows], cells, rng)
        cell[rows] = lab + nxt
        m = int(lab.max()) + 1
        cell_code.append(np.full(m, g, dtype=np.intp))
        nxt += m
    return cell, np.concatenate(cell_code)


def cell_distances(Z, cell, K, s, n_threads):
    """``(G, mass, pen)``: the K×K cell-averaged Euclidean distances
    ``G[a, b] = Σ_{i∈a, j∈b} s_i s_j ρ(x_i, x_j) / (s(a) s(b))`` (streamed), each cell's base
    weight ``s(a)`` and ``Σ_{i∈a} s_i² / s(a)²`` (the ridge penalty's factor)."""
    rows = np.flatnonzero(cell >= 0)
    S, scale = weighted_group_sums(np.ascontiguousarray(Z[rows]), cell[rows], K, s[rows],
                                   resolve_metric("energy", 1.0), check_n_threads(n_threads))
    S = scale.apply(S, inplace=True)
    mass = np.bincount(cell[rows], weights=s[rows], minlength=K)
    pen = np.bincount(cell[rows], weights=s[rows] ** 2, minlength=K) / mass ** 2
    S /= mass[:, None]
    S /= mass[None, :]
    return S, mass, pen


def cell_dependence_matrices(a, Z, cell, K, s, n_threads):
    """``(P, Ca, Cx, mass, pen)`` for the independence weights: the K×K cell averages of the
    Hadamard product of the two distance matrices double-centred by the base-weighted sample,
    of each centred matrix, and the cells' base weights and penalty factors (as in
    :func:`cell_distances`)."""
    rows = np.flatnonzero(cell >= 0)
    p = s / s.sum()
    P, Sa, Sx = weighted_cell_centred_sums(np.ascontiguousarray(a[rows]),
                                           np.ascontiguousarray(Z[rows]), cell[rows], K, s[rows],
                                           p[rows], resolve_metric("energy", 1.0),
                                           check_n_threads(n_threads))
    mass = np.bincount(cell[rows], weights=s[rows], minlength=K)
    pen = np.bincount(cell[rows], weights=s[rows] ** 2, minlength=K) / mass ** 2
    z = mass / mass.sum()
    for G in (P, Sa, Sx):  # cell averages, in place
        G /= mass[:, None]
        G /= mass[None, :]
    for G in (Sa, Sx):  # the cell average of H_p D H_p' (H_p = I - 1 p') is H_z G H_z'
        r = G @ z
        g = float(z @ r)
        G -= r[None, :]
        G -= r[:, None]
        G += g
    return P, Sa, Sx, mass, pen
