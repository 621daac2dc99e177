"""Slow, independent references: plain Python/numpy double loops over SPEC §1–§3.

Nothing here calls energystats; these are the oracles the compiled code is
checked against.
"""
import math
import sys

import numpy as np


def ref_rho(x, y, metric="energy", param=1.0):
    """rho(x, y) of SPEC §1 for two points (1-D arrays), by the textbook formula."""
    x = np.atleast_1d(np.asarray(x, dtype=float))
    y = np.atleast_1d(np.asarray(y, dtype=float))
    if metric == "cityblock":  # SciPy's name; no parameter
        return float(sum(abs(a - b) for a, b in zip(x, y)))
    r2 = 0.0
    for a, b in zip(x, y):
        r2 += (a - b) * (a - b)
    m = max(abs(a - b) for a, b in zip(x, y))
    if m > 0.0 and not sys.float_info.min <= r2 < math.inf:
        # the squares underflowed or overflowed: r = m s with s the norm of (x − y) / m
        s = math.sqrt(sum(((a - b) / m) ** 2 for a, b in zip(x, y)))
        if metric == "energy":
            return m**param * s**param  # r itself may be subnormal (few digits)
        r = m * s
        r2 = r * r
    else:
        r = math.sqrt(r2)
    if metric == "energy":
        return r2 if param == 2 else r**param
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


# -- group sums and the statistics built from them (SPEC §3), in pure Python --------

def ref_group_sums(X, labels, metric="energy", param=1.0):
    """``(groups, sizes, M)``: the groups in sorted order, their sizes, and the k×k
    list of lists ``M[i][j] = Σ_{x∈C_i} Σ_{y∈C_j} rho(x, y)`` by a double loop over
    the points (rho by :func:`ref_rho`, each sum exactly rounded by ``math.fsum``)."""
    X = as2d(X)
    labels = np.asarray(labels).tolist()
    groups = sorted(set(labels))
    index = {g: i for i, g in enumerate(groups)}
    k = len(groups)
    sizes = [labels.count(g) for g in groups]
    terms = [[[] for _ in range(k)] for _ in range(k)]
    for p in range(len(X)):
        for q in range(len(X)):
            terms[index[labels[p]]][index[labels[q]]].append(ref_rho(X[p], X[q], metric, param))
    M = [[math.fsum(terms[i][j]) for j in range(k)] for i in range(k)]
    return groups, sizes, M


def ref_stats(M, sizes):
    """Everything SPEC §3 defines from group sums ``M`` (k×k) and ``sizes``, term by term.

    Returns a dict: ``g`` (k×k), ``E`` (k×k energy distances
    ``2 g_ij − g_ii − g_jj``), ``W``, ``S``, ``T``, ``F`` (DISCO
    ``(S/(k−1)) / (W/(n−k))``; NaN when k < 2 or n = k, ``inf`` when
    W = 0 < S) and ``energy`` (the k-sample energy statistic
    ``Σ_{i<j} n_i n_j/(n_i+n_j) E(C_i, C_j)`` of R ``eqdist.etest``).
    """
    k = len(sizes)
    n = sum(sizes)
    g = [[M[i][j] / (sizes[i] * sizes[j]) for j in range(k)] for i in range(k)]
    E = [[2 * g[i][j] - g[i][i] - g[j][j] for j in range(k)] for i in range(k)]
    W = math.fsum(sizes[j] / 2 * g[j][j] for j in range(k))
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    S = math.fsum(sizes[i] * sizes[j] / (2 * n) * E[i][j] for i, j in pairs)
    T = math.fsum(math.fsum(row) for row in M) / (2 * n)
    energy = math.fsum(sizes[i] * sizes[j] / (sizes[i] + sizes[j]) * E[i][j] for i, j in pairs)
    if k < 2 or n <= k:
        F = math.nan
    elif W > 0:
        F = (S / (k - 1)) / (W / (n - k))
    else:
        F = math.inf if S > 0 else math.nan
    return {"g": g, "E": E, "W": W, "S": S, "T": T, "F": F, "energy": energy}


def ref_energy_statistic(X, labels, metric="energy", param=1.0):
    """k-sample energy statistic ``Σ_{i<j} n_i n_j/(n_i+n_j) E(C_i, C_j)`` (R ``eqdist.etest``)."""
    _, sizes, M = ref_group_sums(X, labels, metric, param)
    return ref_stats(M, sizes)["energy"]


def ref_disco_F(X, labels, metric="energy", param=1.0):
    """DISCO ratio ``F = (S/(k−1)) / (W/(n−k))`` of a partition."""
    _, sizes, M = ref_group_sums(X, labels, metric, param)
    return ref_stats(M, sizes)["F"]


def exact_dcov_1d(x, y):
    """Exact V and U distance covariances (squared) of 1-D samples, as ``Fraction`` s.

    Independent of the package: every float is an integer times a common power of
    two, so the sums ``Σ_ij a_ij b_ij``, ``Σ_i a_i. b_i.`` and ``a.. b..`` (with
    ``a_ij = |x_i − x_j|``) are formed in exact integer arithmetic — the pairwise
    products by a pure-Python Fenwick tree over y ranks, in O(n log n) — and the
    centred combinations are exact rationals.
    """
    from fractions import Fraction
    x = [Fraction(v) for v in np.asarray(x, dtype=np.float64).tolist()]
    y = [Fraction(v) for v in np.asarray(y, dtype=np.float64).tolist()]
    den = 1
    for v in x + y:
        den = max(den, v.denominator)  # powers of two: the largest is a common denominator
    X = [int(v * den) for v in x]
    Y = [int(v * den) for v in y]
    n = len(X)

    def row_sums(v):
        order = sorted(range(n), key=lambda i: v[i])
        s = [v[i] for i in order]
        total, prefix, out = sum(s), 0, [0] * n
        for k, i in enumerate(order):
            # Σ_j |v_i − v_j| = v_i (2k − n) − 2 Σ_{l<k} s_l + total, with ties harmless
            out[i] = s[k] * (2 * k - n) - 2 * prefix + total
            prefix += s[k]
        return out

    ra, rb = row_sums(X), row_sums(Y)
    # Σ_{i<j} |x_i − x_j| |y_i − y_j|: visit points by increasing x; Fenwick trees over y ranks
    ranks = {v: r for r, v in enumerate(sorted(set(Y)))}
    m = len(ranks)
    trees = [[0] * (m + 1) for _ in range(4)]  # count, Σx, Σy, Σxy of the points seen

    def add(pos, vals):
        pos += 1
        while pos <= m:
            for t in range(4):
                trees[t][pos] += vals[t]
            pos += pos & -pos

    def prefix(pos):  # positions < pos
        out = [0, 0, 0, 0]
        while pos > 0:
            for t in range(4):
                out[t] += trees[t][pos]
            pos -= pos & -pos
        return out

    tot = [0, 0, 0, 0]
    t1 = 0
    for i in sorted(range(n), key=lambda i: X[i]):
        xi, yi, r = X[i], Y[i], ranks[Y[i]]
        lo = prefix(r)  # earlier points with y < y_i
        hi = [tot[t] - lo[t] for t in range(4)]  # with y >= y_i
        t1 += (xi * yi * lo[0] - xi * lo[2] - yi * lo[1] + lo[3])
        t1 -= (xi * yi * hi[0] - xi * hi[2] - yi * hi[1] + hi[3])
        vals = (1, xi, yi, xi * yi)
        add(r, vals)
        for t in range(4):
            tot[t] += vals[t]
    T1 = 2 * t1  # Σ over all ordered pairs
    T2 = sum(a * b for a, b in zip(ra, rb))
    Sa, Sb = sum(ra), sum(rb)
    scale = Fraction(1, den * den)  # a_ij and b_ij each carry one factor den
    V = Fraction(T1) - Fraction(2 * T2, n) + Fraction(Sa * Sb, n * n)
    U = Fraction(T1) - Fraction(2 * T2, n - 2) + Fraction(Sa * Sb, (n - 1) * (n - 2))
    return V * scale / (n * n), U * scale / (n * (n - 3))


# -- sample weights (issue 33): each point's mass w_i / Σ w of its sample ------------

def _masses(w):
    w = [float(v) for v in w]
    total = math.fsum(w)
    return [v / total for v in w]


def ref_weighted_g(A, B, u, v, metric="energy", param=1.0):
    """Σ_ij u_i v_j rho(a_i, b_j) with masses u, v (weights normalised), by a double loop."""
    A, B = as2d(A), as2d(B)
    u, v = _masses(u), _masses(v)
    return math.fsum(u[i] * v[j] * ref_rho(A[i], B[j], metric, param)
                     for i in range(len(A)) for j in range(len(B)))


def ref_weighted_energy(A, B, wa, wb, metric="energy", param=1.0):
    """E_w = 2 Σ u_i v_j ρ(a_i, b_j) − Σ u_i u_k ρ(a_i, a_k) − Σ v_j v_l ρ(b_j, b_l)."""
    return (2 * ref_weighted_g(A, B, wa, wb, metric, param) - ref_weighted_g(A, A, wa, wa, metric, param)
            - ref_weighted_g(B, B, wb, wb, metric, param))


def ref_weighted_wst(X, labels, w, metric="energy", param=1.0):
    """(W, S, T, F) with frequency weights: N_j = Σ_{i∈C_j} w_i in place of n_j, masses w_i/N_j."""
    X, labels, w = as2d(X), np.asarray(labels), np.asarray(w, dtype=float)
    groups = list(dict.fromkeys(labels.tolist()))
    parts = [(X[labels == g], w[labels == g]) for g in groups]
    N = [math.fsum(p[1]) for p in parts]
    Ntot, k = math.fsum(N), len(groups)
    g = [[ref_weighted_g(a, b, wa, wb, metric, param) for (b, wb) in parts] for (a, wa) in parts]
    W = math.fsum(N[j] / 2 * g[j][j] for j in range(k))
    S = math.fsum(N[i] * N[j] / (2 * Ntot) * (2 * g[i][j] - g[i][i] - g[j][j])
                  for i in range(k) for j in range(i + 1, k))
    T = math.fsum(N[i] * N[j] * g[i][j] for i in range(k) for j in range(k)) / (2 * Ntot)
    F = (S / (k - 1)) / (W / (Ntot - k)) if k > 1 and Ntot > k and W > 0 else float("nan")
    return W, S, T, F


def ref_weighted_dcov(X, Y, w, metric="energy", param=1.0):
    """(dCov², dVar²_x, dVar²_y) by weighted double centring, every sum a plain loop."""
    a, b = ref_matrix(X, None, metric, param), ref_matrix(Y, None, metric, param)
    p = _masses(w)
    n = len(p)

    def centred(D):
        r = [math.fsum(p[k] * D[i, k] for k in range(n)) for i in range(n)]
        g = math.fsum(p[i] * r[i] for i in range(n))
        return [[D[i, j] - r[i] - r[j] + g for j in range(n)] for i in range(n)]

    A, B = centred(a), centred(b)

    def prod(U, V):
        return math.fsum(p[i] * p[j] * U[i][j] * V[i][j] for i in range(n) for j in range(n))

    return prod(A, B), prod(A, A), prod(B, B)


def metric_kwargs(metric, param):
    """The keyword arguments of a built-in metric with its parameter (``exponent`` of 'energy',
    ``sigma`` of the kernels)."""
    return {"metric": metric, ("exponent" if metric == "energy" else "sigma"): param}
