"""Plain NumPy references of the change-point definitions (Matteson & James 2014), for tests.

Double loops over the pairs, O(T³) for one segment: use at T ≤ 60 or so.  Nothing here
calls the package.
"""
from __future__ import annotations

import math

import numpy as np


def rho(x, y, exponent=1.0):
    """‖x − y‖^exponent."""
    return float(np.sqrt(np.sum((np.asarray(x, float) - np.asarray(y, float)) ** 2))) ** exponent


def distances(Z, exponent=1.0):
    """The T×T matrix of ‖Z_i − Z_j‖^exponent by a double loop."""
    Z = np.asarray(Z, dtype=float).reshape(len(Z), -1)
    T = len(Z)
    D = np.zeros((T, T))
    for i in range(T):
        for j in range(i + 1, T):
            D[i, j] = D[j, i] = rho(Z[i], Z[j], exponent)
    return D


def q_blocks(D, a, b, c):
    """Q̂ between rows [a, b) and [b, c), from the block sums of ``D`` (the definition: every
    pair summed afresh; a one-row side has within average 0)."""
    n, m = b - a, c - b
    between = D[a:b, b:c].sum()
    wx = np.triu(D[a:b, a:b], 1).sum()
    wy = np.triu(D[b:c, b:c], 1).sum()
    e = 2.0 * between / (n * m) - (wx / math.comb(n, 2) if n > 1 else 0.0) \
        - (wy / math.comb(m, 2) if m > 1 else 0.0)
    return n * m / (n + m) * e


def q_hat(X, Y, exponent=1.0):
    """Q̂(X, Y; α) = nm/(n+m) · Ê, Ê with U-type within averages."""
    D = distances(np.concatenate([np.asarray(X, float).reshape(len(X), -1),
                                  np.asarray(Y, float).reshape(len(Y), -1)]), exponent)
    return q_blocks(D, 0, len(X), len(X) + len(Y))


def q_table(Z, min_size, exponent=1.0, D=None):
    """{(τ, κ): Q̂(Z[:τ], Z[τ:κ])} for every admissible split (both parts ≥ min_size)."""
    T = len(Z)
    D = distances(Z, exponent) if D is None else D
    return {(t, k): q_blocks(D, 0, t, k)
            for t in range(min_size, T - min_size + 1) for k in range(t + min_size, T + 1)}


def best_split(Z, min_size, exponent=1.0, rtol=1e-9, D=None):
    """(Q, τ, κ): the largest Q̂; among values within ``rtol`` of it, the smallest τ, then κ."""
    table = q_table(Z, min_size, exponent, D)
    if not table:
        return -np.inf, -1, -1
    top = max(table.values())
    tol = rtol * max(1.0, abs(top))
    t, k = min(key for key, v in table.items() if v >= top - tol)
    return table[(t, k)], t, k


def e_divisive_fixed(Z, k, min_size, exponent=1.0):
    """The first ``k`` E-Divisive splits: [(position, Q)] in the order found."""
    bounds = [0, len(Z)]
    D = distances(Z, exponent)
    found = []
    for _ in range(k):
        best = None
        for a, b in zip(bounds[:-1], bounds[1:]):
            q, t, _k = best_split(Z[a:b], min_size, exponent, D=D[a:b, a:b])
            if t >= 0 and (best is None or q > best[0]):
                best = (q, a + t)
        if best is None:
            break
        found.append((best[1], best[0]))
        bounds = sorted(bounds + [best[1]])
    return found


def s_hat(D, bounds):
    """Ŝ: the sum of Q̂ between adjacent segments [b_i, b_{i+1})."""
    return sum(q_blocks(D, a, b, c) for a, b, c in zip(bounds[:-2], bounds[1:-1], bounds[2:]))


def e_agglo(Z, bounds, exponent=1.0, penalty=0.0):
    """Greedy merging from the segmentation ``bounds``: at each step remove the boundary whose
    removal gives the largest Ŝ (the first on ties).  Returns (path, best): path is a list of
    (boundaries, Ŝ) from the start to one segment; best the boundaries maximising
    Ŝ − penalty · (#change points) (fewest change points on ties)."""
    bounds = list(bounds)
    D = distances(Z, exponent)
    path = [(list(bounds), s_hat(D, bounds))]
    while len(bounds) > 2:
        cands = []
        for i in range(1, len(bounds) - 1):
            nb = bounds[:i] + bounds[i + 1:]
            cands.append((s_hat(D, nb), i, nb))
        top = max(c[0] for c in cands)
        s, i, nb = next(c for c in cands if c[0] >= top - 1e-9 * max(1.0, abs(top)))
        bounds = nb
        path.append((list(bounds), s))
    scores = [s - penalty * (len(b) - 2) for b, s in path]
    top = max(scores)
    best = [p for p, sc in zip(path, scores) if sc >= top - 1e-9 * max(1.0, abs(top))][-1][0]
    return path, best
