"""Slow, independent references: plain Python/numpy double loops over SPEC §1–§3.

Nothing here calls energystats; these are the oracles the compiled code is
checked against.
"""
import math

import numpy as np


def ref_rho(x, y, metric="energy", param=1.0):
    """rho(x, y) of SPEC §1 for two points (1-D arrays), by the textbook formula."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    y = np.atleast_1d(np.asarray(y, dtype=float))
    r2 = 0.0
    for a, b in zip(x, y):
        r2 += (a - b) * (a - b)
    r = math.sqrt(r2)
    if metric == "energy":
        return r**param
    if metric == "laplacian":
        return 2.0 - 2.0 * math.exp(-r / (2.0 * param))
    if metric == "gaussian":
        return 2.0 - 2.0 * math.exp(-r2 / (2.0 * param**2))
    raise ValueError(metric)


def as2d(X):
    X = np.asarray(X, dtype=float)
    return X.reshape(-1, 1) if X.ndim == 1 else X


def ref_matrix(X, Y=None, metric="energy", param=1.0):
    X = as2d(X)
    Y = X if Y is None else as2d(Y)
    out = np.empty((len(X), len(Y)))
    for i in range(len(X)):
        for j in range(len(Y)):
            out[i, j] = ref_rho(X[i], Y[j], metric, param)
    return out


def ref_g(A, B, metric="energy", param=1.0):
    """g(A, B) = mean of rho over A × B, by a double loop."""
    A, B = as2d(A), as2d(B)
    total = 0.0
    for a in A:
        for b in B:
            total += ref_rho(a, b, metric, param)
    return total / (len(A) * len(B))


def ref_energy(A, B, metric="energy", param=1.0):
    return 2 * ref_g(A, B, metric, param) - ref_g(A, A, metric, param) - ref_g(B, B, metric, param)


def ref_wst(X, labels, metric="energy", param=1.0):
    """(W, S, T) of SPEC §3 by their defining sums."""
    X = as2d(X)
    labels = np.asarray(labels)
    groups = sorted(set(labels.tolist()), key=str)
    parts = [X[labels == g] for g in groups]
    n = len(X)
    W = sum(len(C) / 2 * ref_g(C, C, metric, param) for C in parts)
    S = 0.0
    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            Ci, Cj = parts[i], parts[j]
            S += len(Ci) * len(Cj) / (2 * n) * (
                2 * ref_g(Ci, Cj, metric, param) - ref_g(Ci, Ci, metric, param) - ref_g(Cj, Cj, metric, param))
    T = n / 2 * ref_g(X, X, metric, param)
    return W, S, T
