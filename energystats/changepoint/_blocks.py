"""Block permutations for serially dependent series, and the automatic block length.

Under serial dependence the rows of a segment are not exchangeable, and permuting them one
by one breaks the dependence that the observed series has: the permuted maxima of Q̂ are
then too small and the test rejects far too often (AR(1) noise with φ = 0.5 and no change:
90 % of series at T = 500 got a change point).  The block permutation principle of Kirch
(2007, "Block permutation principles for the change analysis of dependent data", Journal of
Statistical Planning and Inference 137(7)) permutes *blocks* of consecutive rows instead:
within every segment the rows are cut into blocks of length L (the first block of a random
length 1..L, so that the cuts do not sit at fixed places) and the order of the blocks is
permuted; each block keeps its rows' order and so the dependence within it.  For a
stationary, weakly dependent segment the permuted statistics then approximate the null
distribution as L grows with T (L → ∞, L/T → 0), which single-row permutation does not.

The block length, when not given, is twice the length that the rule of Politis and White
(2004, "Automatic block-length selection for the dependent bootstrap", Econometric Reviews
23(1)), with the correction of Patton, Politis and White (2009, Econometric Reviews 28(4)),
gives the circular block bootstrap, computed on the residuals of the current segmentation
with the split being tested (each segment's rows minus its mean: a change left in them
would look like dependence), or three times the length for their squares, column by
column; the largest is used (see :data:`BLOCK_FACTOR` and :data:`SQUARES_FACTOR`).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["auto_block_length", "draw_block_permutations", "lag1_autocorrelation"]


def _flat_top(t):
    """The trapezoidal flat-top lag window of Politis and Romano (1995)."""
    t = np.abs(t)
    return np.where(t <= 0.5, 1.0, np.where(t <= 1.0, 2.0 * (1.0 - t), 0.0))


def _one_column(x):
    """Politis-White-Patton block length of the circular block bootstrap for one series."""
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


def _residuals(Z, segments):
    """The rows minus their segment's mean, segment after segment."""
    return np.vstack([Z[a:b] - Z[a:b].mean(axis=0) for a, b in segments])


#: the block length is this multiple of the Politis-White-Patton length of the residuals: that
#: length is optimal for the variance of a mean, while the size distortion of the permutation
#: test keeps falling as the blocks grow (measured: AR(1), phi = 0.5, T = 500: level 0.087 at
#: 1x, 0.040 at 2x; benchmarks/changepoint_level.py)
BLOCK_FACTOR = 2.0
#: ... and at least this multiple of the length for the squared residuals (dependence in the
#: variance: GARCH(1,1), T = 500: level 0.103 with blocks of 11, 0.06 with 20, 0.04 with 35)
SQUARES_FACTOR = 3.0


def auto_block_length(Z, segments):
    """The block length L (an int >= 1) for the segmentation ``segments`` of ``Z``: the
    largest over the columns of :data:`BLOCK_FACTOR` times the Politis-White-Patton length
    of the residuals and :data:`SQUARES_FACTOR` times that of their squares (dependence in
    the variance, as in a GARCH series, shows there), rounded up, and at most a third of the
    shortest segment."""
    E = _residuals(Z, segments)
    L = max(max(BLOCK_FACTOR * _one_column(E[:, j]), SQUARES_FACTOR * _one_column(E[:, j] ** 2))
            for j in range(E.shape[1]))
    shortest = min(b - a for a, b in segments)
    return int(max(1, min(math.ceil(L), shortest // 3)))


def lag1_autocorrelation(Z, segments):
    """The largest |lag-1 autocorrelation| over the columns of the residuals within the
    segments (pairs of rows inside one segment only); 0 for constant columns."""
    num = np.zeros(Z.shape[1])
    den = np.zeros(Z.shape[1])
    for a, b in segments:
        e = Z[a:b] - Z[a:b].mean(axis=0)
        num += np.sum(e[1:] * e[:-1], axis=0)
        den += np.sum(e * e, axis=0)
    ok = den > 0
    return float(np.max(np.abs(num[ok] / den[ok]))) if ok.any() else 0.0


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
