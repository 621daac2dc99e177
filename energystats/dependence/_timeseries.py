"""Drivers of the time-series dependence statistics (:mod:`.timeseries`): the lag windows, the
per-lag distance statistics from one n×n distance matrix per series, and the permuted
statistics of the tests.

Lag ``j`` pairs the leading series at time t with the lagged one at time t − j over the
``m = n − |j|`` times where both exist: for ``j ≥ 0`` the rows ``j … n−1`` of the leading
series with the rows ``0 … m−1`` of the lagged one, for ``j < 0`` the rows ``0 … m−1`` with
``|j| … n−1``.  Every window of a distance matrix is a contiguous square block of it, so a
permuted series' windows are blocks (views) of the one gathered matrix ``D[π][:, π]``: per
permutation one gather and, per lag, a few passes over a block (row sums, sum of squares,
the cross products ``Σ a_ik b_ik``).
"""
from __future__ import annotations

import numpy as np

from .._core import _memory

__all__ = ["windows", "lag_statistics", "PermutedLags"]


def windows(n, j):
    """``(lead, lagged)``: the row slices of lag ``j`` (see the module docstring)."""
    m = n - abs(j)
    return (slice(j, n), slice(0, m)) if j >= 0 else (slice(0, m), slice(-j, n))


def _double_centred(a):
    """The double-centred copy of the symmetric matrix ``a`` (V-statistic centring)."""
    r = a.mean(axis=1)
    return a - r[:, None] - r[None, :] + r.mean()


def _u_centred(a):
    """The U-centred copy of ``a`` (Székely and Rizzo 2014): divisors n − 2 and (n−1)(n−2),
    zero diagonal."""
    m = a.shape[0]
    r = a.sum(axis=1)
    A = a - r[:, None] / (m - 2) - r[None, :] / (m - 2) + r.sum() / ((m - 1) * (m - 2))
    np.fill_diagonal(A, 0.0)
    return A


def lag_statistics(DX, DY, lags, estimator="V"):
    """Per lag: ``(dcov_sqr, dvar_x_sqr, dvar_y_sqr, dcor_sqr)`` of the leading series (distances
    ``DX``) at t against the lagged one (``DY``) at t − j, as four arrays over ``lags``.

    ``estimator='V'``: the V-statistics (divisor m², double centring); ``'U'``: the
    U-statistics (divisor m(m − 3), U-centring) and the bias-corrected dCor² (may be negative).
    A dCor² whose distance variances are not both positive is NaN."""
    n = DX.shape[0]
    out = np.empty((4, len(lags)))
    for k, j in enumerate(lags):
        lead, lagged = windows(n, j)
        m = n - abs(j)
        if estimator == "V":
            A, B, div = _double_centred(DX[lead, lead]), _double_centred(DY[lagged, lagged]), m * m
        else:
            A, B, div = _u_centred(DX[lead, lead]), _u_centred(DY[lagged, lagged]), m * (m - 3)
        cov, vx, vy = (float(np.vdot(P, Q)) / div for P, Q in ((A, B), (A, A), (B, B)))
        den = vx * vy
        out[:, k] = cov, vx, vy, (cov / np.sqrt(den) if den > 0 else np.nan)
    if estimator == "V":
        out[3] = np.clip(out[3], 0.0, 1.0)
    return out


def _block_moments(W):
    """Row sums, total and sum of squares of the square block ``W``."""
    r = W.sum(axis=1)
    return r, float(r.sum()), float(np.einsum("ik,ik->", W, W))


def _centred_square_sum(r, total, sq, m):
    """``Σ A_ik²`` of the double-centred block from its row sums, total and sum of squares."""
    return sq - 2.0 * float(r @ r) / m + total * total / (m * m)


class PermutedLags:
    """The per-lag V-statistics ``(n − |j|)·dCov²`` and ``dCor`` of a series pair after a
    permutation ``π`` of the rows of the lagged series (``y[π]``, or with ``auto=True`` the
    series ``x[π]`` against itself), for every lag at once.

    The leading series' centred windows are fixed (formed once) unless ``auto``; the
    permuted series' windows are blocks of ``D[π][:, π]`` and enter by their raw entries
    (``Σ A_ik b_ik = Σ A_ik B_ik`` when A is centred) and their row sums."""

    def __init__(self, DX, DY, lags, auto=False):
        self.DX, self.DY, self.lags, self.auto = DX, DY, list(lags), auto
        n = self.n = DX.shape[0]
        _memory.check_fits(8.0 * n * n * (5 if auto else 4 + len(self.lags)),
                           f"the {n}×{n} matrices of the time-series test",
                           "Test a shorter stretch of the series.")
        self.A, self.AA = [], []
        if not auto:
            for j in self.lags:
                lead, _ = windows(n, j)
                A = _double_centred(DX[lead, lead])
                self.A.append(A)
                self.AA.append(float(np.vdot(A, A)))

    def __call__(self, perm):
        """``(stats, dcor)``: two arrays over the lags for the permutation ``perm``."""
        n = self.n
        G = self.DY[np.ix_(perm, perm)]
        stats = np.empty(len(self.lags))
        dcor = np.empty(len(self.lags))
        for k, j in enumerate(self.lags):
            lead, lagged = windows(n, j)
            m = n - abs(j)
            Gb = G[lagged, lagged]
            rb, tb, qb = _block_moments(Gb)
            bb = _centred_square_sum(rb, tb, qb, m)
            if self.auto:
                Ga = G[lead, lead]
                ra, ta, qa = _block_moments(Ga)
                aa = _centred_square_sum(ra, ta, qa, m)
                raw = float(np.einsum("ik,ik->", Ga, Gb))
                ab = raw - 2.0 * float(ra @ rb) / m + ta * tb / (m * m)
            else:
                aa = self.AA[k]
                ab = float(np.einsum("ik,ik->", self.A[k], Gb))
            stats[k] = ab / m  # (n - |j|) dCov², dCov² = Σ A B / m²
            den = aa * bb
            dcor[k] = np.sqrt(max(ab, 0.0) / np.sqrt(den)) if den > 0 else np.nan
        return stats, dcor

    def run(self, perms):
        """The permuted ``(stats, dcor)`` for every row of ``perms`` (R, n): two (R, L) arrays."""
        R = perms.shape[0]
        stats = np.empty((R, len(self.lags)))
        dcor = np.empty((R, len(self.lags)))
        for r in range(R):
            stats[r], dcor[r] = self(perms[r])
        return stats, dcor
