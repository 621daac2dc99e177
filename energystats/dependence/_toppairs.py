"""The strongest pairs of a wide table's distance correlations, without its p×p matrix
(``distance_correlation_matrix(..., top=k)``).

The same centred vectors and BLAS products as the full matrix (one block of columns against
another), in two passes: the columns' norms, then each block pair's products divided by the
norms, of which only the ``k`` largest seen so far are kept.  Memory: two blocks of centred
vectors and O(k + block²), never p² (a 10 000-column matrix alone takes 800 MB, and the
result holds three).
"""
from __future__ import annotations

import numpy as np

__all__ = ["top_pairs"]


def _keep(vals, rows, cols, top):
    """The ``top`` largest of ``vals`` with their (row, col), ties by position (stable)."""
    if vals.size <= top:
        order = np.argsort(-vals, kind="stable")
    else:
        part = np.argpartition(-vals, top - 1)[:top]
        order = part[np.argsort(-vals[part], kind="stable")]
    return vals[order], rows[order], cols[order]


def top_pairs(build, p, m, block, top):
    """``(i, j, r)``: the ``top`` pairs i < j with the largest ``r = <V_i, V_j> / (|V_i| |V_j|)``,
    in decreasing order (ties by i, then j), where ``build(j0, V)`` fills the rows of ``V``
    (shape (b, m)) with the centred vectors of columns j0..j0+b−1.  NaN where a norm is 0."""
    norms = np.empty(p)
    Vi = np.empty((min(block, p), m))
    Vj = np.empty_like(Vi)
    for i0 in range(0, p, block):
        bi = min(block, p - i0)
        build(i0, Vi[:bi])
        norms[i0:i0 + bi] = np.sqrt(np.einsum("ij,ij->i", Vi[:bi], Vi[:bi]))
    best = (np.empty(0), np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp))
    for i0 in range(0, p, block):
        bi = min(block, p - i0)
        build(i0, Vi[:bi])
        for j0 in range(i0, p, block):
            bj = min(block, p - j0)
            if j0 == i0:
                G = Vi[:bi] @ Vi[:bi].T
            else:
                build(j0, Vj[:bj])
                G = Vi[:bi] @ Vj[:bj].T
            with np.errstate(divide="ignore", invalid="ignore"):
                R = G / np.outer(norms[i0:i0 + bi], norms[j0:j0 + bj])
            ii, jj = np.meshgrid(np.arange(i0, i0 + bi), np.arange(j0, j0 + bj), indexing="ij")
            keep = ii < jj
            vals, rows, cols = R[keep], ii[keep], jj[keep]
            # a pair with a zero norm has no correlation: last, whatever its NaN
            vals = np.where(np.isnan(vals), -np.inf, vals)
            merged = (np.concatenate([best[0], vals]), np.concatenate([best[1], rows]),
                      np.concatenate([best[2], cols]))
            # keep the order (i, j) among equal values: sort the candidates by position first
            pos = np.lexsort((merged[2], merged[1]))
            best = _keep(merged[0][pos], merged[1][pos], merged[2][pos], top)
    r = np.where(np.isinf(best[0]) & (best[0] < 0), np.nan, best[0])
    return best[1], best[2], r
