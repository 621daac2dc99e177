"""Blocks of consecutive rows for serially dependent series: the automatic block length of
Politis and White, block permutations, and the lag-1 autocorrelation.

Under serial dependence the rows of a series are not exchangeable, and permuting them one by
one destroys the dependence that the observed series has.  The block permutation principle
(Kirch 2007, "Block permutation principles for the change analysis of dependent data",
Journal of Statistical Planning and Inference 137(7)) permutes *blocks* of consecutive rows
instead: the rows are cut into blocks of length L (the first block of a random length 1..L,
so that the cuts do not sit at fixed places) and the order of the blocks is permuted; each
block keeps its rows' order and so the dependence within it.

:func:`politis_white` is the length that the rule of Politis and White (2004, "Automatic
block-length selection for the dependent bootstrap", Econometric Reviews 23(1)), with the
correction of Patton, Politis and White (2009, Econometric Reviews 28(4)), gives the circular
block bootstrap of one series; :func:`block_length` takes multiples of it over the columns
of a matrix and of their squares (dependence in the variance, as in a GARCH series, shows
there).  The concepts (change points, time-series dependence) choose the multiples.

This module knows no concept: the segments are plain ``(start, end)`` pairs of row positions.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["politis_white", "seasonal_reach", "block_length", "draw_block_permutations", "lag1_autocorrelation",
           "lag1_autocorrelations"]


def _flat_top(t):
    """The trapezoidal flat-top lag window of Politis and Romano (1995)."""
    t = np.abs(t)
    return np.where(t <= 0.5, 1.0, np.where(t <= 1.0, 2.0 * (1.0 - t), 0.0))


def politis_white(x, reach=True, info=None):
    """Politis-White-Patton block length (a float in [1, min(3√n, n/3)]) of the circular block
    bootstrap for one series ``x`` (1-D); 1.0 for a constant series.  ``info`` (a dict), when
    given, receives the rule's inputs: ``m_hat`` (the lag of the first run of insignificant
    autocorrelations) and ``reach`` (the last significant lag up to n/4, 0 without ``reach``)."""
    n = x.size
    x = x - x.mean()
    var = float(x @ x) / n
    if not var > 0:
        return 1.0
    kn = max(5, math.ceil(math.sqrt(math.log10(n))))
    m_max = math.ceil(math.sqrt(n)) + kn
    b_max = math.ceil(min(3.0 * math.sqrt(n), n / 3.0))
    c = 2.0 * math.sqrt(math.log10(n) / n)
    lags = min(m_max + kn, n - 1)
    acov = np.array([float(x[:n - k] @ x[k:]) / n for k in range(lags + 1)])
    rho = acov / acov[0]
    # m-hat: the smallest m after which kn consecutive autocorrelations are insignificant
    m_hat = None
    for m in range(0, lags - kn + 1):
        if np.all(np.abs(rho[m + 1:m + 1 + kn]) < c):
            m_hat = m
            break
    if m_hat is None:
        m_hat = m_max
    # the whole dependence structure: the last lag up to n/4 whose autocorrelation is
    # significant over all those lags at once (Bonferroni, 1 %), so that a seasonal lag (12 of
    # monthly data: lags 1..11 insignificant) or the slow decay of long memory is seen where
    # the rule's first run of insignificant lags stops early
    far = seasonal_reach(x, acov, n) if reach else 0
    if info is not None:
        info.update(m_hat=int(m_hat), reach=int(far))
    if far > m_hat:
        m_hat = far
        lags = min(2 * m_hat, n - 1)
        acov = np.concatenate([acov, [float(x[:n - k] @ x[k:]) / n
                                      for k in range(acov.size, lags + 1)]])
    M = min(2 * max(m_hat, 1), lags)
    k = np.arange(-M, M + 1)
    lam = _flat_top(k / M)
    R = acov[np.abs(k)]
    G = float(np.sum(lam * np.abs(k) * R))
    g0 = float(np.sum(lam * R))
    D_cb = (4.0 / 3.0) * g0 ** 2
    if not D_cb > 0:
        return 1.0
    b = (2.0 * G ** 2 / D_cb) ** (1.0 / 3.0) * n ** (1.0 / 3.0)
    return float(min(max(b, 1.0), b_max))


def seasonal_reach(x, acov, n):
    """The last lag ``k`` in 1 … ⌊n/4⌋ with ``|ρ_k| > z se_k``, Bartlett's standard error
    ``se_k = √((1 + 2 Σ_{j<k} ρ_j²)/n)`` and ``z`` the two-sided 1 %
    Bonferroni quantile over those lags (0 when none): under independence no lag passes with
    probability about 0.99 or more.  ``x`` centred, ``acov`` its first autocovariances (divisor n)."""
    from scipy.special import ndtri

    top = n // 4
    if top < 2 or not acov[0] > 0:
        return 0
    z = float(ndtri(1.0 - 0.005 / top))
    full = np.empty(top + 1)
    have = min(acov.size, top + 1)
    full[:have] = acov[:have]
    for k in range(have, top + 1):
        full[k] = float(x[:n - k] @ x[k:]) / n
    rho = full[1:] / full[0]
    # Bartlett's standard error of lag k: sqrt((1 + 2 sum_{j<k} rho_j^2) / n), so that the slow
    # decay of an AR series' own autocorrelations is not taken for far dependence
    cum = np.concatenate([[0.0], np.cumsum(rho[:-1] ** 2)])
    hit = np.flatnonzero(np.abs(rho) > z * np.sqrt((1.0 + 2.0 * cum) / n))
    return int(hit[-1] + 1) if hit.size else 0


def block_length(E, factor, squares_factor, cap, rule=None):
    """The block length (an int in [1, max(1, cap)]): the largest over the columns of ``E``
    (n, d) of ``factor`` times :func:`politis_white` of the column and ``squares_factor``
    times that of its squares (their first lags only: the squares of heavy-tailed rows have
    outlying far autocorrelations), rounded up.  ``rule`` (a dict), when given, receives the
    rule's inputs: per column the two lengths and the lags they came from, the factors and
    the cap."""
    cols = []
    for j in range(E.shape[1]):
        a, b = {}, {}
        cols.append({"length": politis_white(E[:, j], info=a),
                     "length_squares": politis_white(E[:, j] ** 2, reach=False, info=b),
                     "m_hat": a.get("m_hat", 0), "reach": a.get("reach", 0),
                     "m_hat_squares": b.get("m_hat", 0)})
    L = max(max(factor * c["length"], squares_factor * c["length_squares"]) for c in cols)
    out = int(max(1, min(math.ceil(L), cap)))
    if rule is not None:
        rule.update(columns=cols, factor=factor, squares_factor=squares_factor, cap=int(cap),
                    block=out)
    return out


def lag1_autocorrelations(Z, segments):
    """Each column's signed lag-1 autocorrelation of the residuals within the segments (each
    segment's rows minus their mean; pairs of rows inside one segment only); 0 for a constant
    column."""
    num = np.zeros(Z.shape[1])
    den = np.zeros(Z.shape[1])
    for a, b in segments:
        e = Z[a:b] - Z[a:b].mean(axis=0)
        num += np.sum(e[1:] * e[:-1], axis=0)
        den += np.sum(e * e, axis=0)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def lag1_autocorrelation(Z, segments):
    """The largest |lag-1 autocorrelation| over the columns of the residuals within the
    segments (:func:`lag1_autocorrelations`); 0 for constant columns."""
    r = lag1_autocorrelations(Z, segments)
    return float(np.max(np.abs(r))) if r.size else 0.0


def draw_block_permutations(gen, T, segments, count, L):
    """``count`` block permutations of the rows 0 … T−1 within each of ``segments``: the
    segment's rows cut at ``a + r, a + r + L, …`` (``r`` uniform in 1 … L), the blocks put in
    a uniformly random order, each keeping its rows' order.  With ``L = 1`` every row is a
    block: a uniform permutation (drawn from another stream of numbers than the plain
    permutation test's)."""
    perms = np.empty((count, T), dtype=np.intp)
    base = np.arange(T, dtype=np.intp)
    for r in range(count):
        p = base.copy()
        for a, b in segments:
            n = b - a
            first = int(gen.integers(1, L + 1)) if L > 1 else 1
            cuts = np.r_[0, np.arange(min(first, n), n, L), n] if n > first else np.r_[0, n]
            cuts = np.unique(cuts)
            order = gen.permutation(cuts.size - 1)
            p[a:b] = a + np.concatenate([np.arange(cuts[i], cuts[i + 1]) for i in order])
        perms[r] = p
    return perms
