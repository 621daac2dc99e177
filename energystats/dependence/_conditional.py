"""Engine of the conditional distance covariance and correlation (:mod:`.conditional`): the
bandwidth rules, the Gaussian kernel weights, the per-point sums by row blocks of the weight
matrix, and the draws of the local bootstrap.

Everything here takes checked float64 arrays and plain numbers; the public module validates.
"""
from __future__ import annotations

import math

import numpy as np

from .._core import _group_sums

#: the bandwidth rules, by name (see :func:`rule_bandwidth`)
BANDWIDTH_RULES = ("half-scott", "scott", "silverman", "nrd0")

#: n×n float64 matrices held at once by the statistic (distances of x and y, their
#: product and squares, the weights) and by the bootstrap (the resampled copies)
MATRICES_HELD = 7

#: the most memory the conditional statistics may take (bytes): above it they refuse at once
MAX_BYTES = 4 * 2**30

#: a local distance variance below this multiple of the size of its terms counts as rounding
#: noise, i.e. 0: its three sums carry rounding errors of a few eps of their size (n eps at
#: worst), so below 64 eps of it few of its digits, if any, are right
LOCAL_FLOOR = 64 * np.finfo(float).eps


def rule_bandwidth(Z, rule):
    """Per-column bandwidths of ``Z`` (n, d) by ``rule``: 'scott' :math:`\\hat\\sigma_j
    n^{-1/(d+4)}`, 'half-scott' half of it, 'silverman' :math:`\\hat\\sigma_j (n(d+2)/4)^{-1/(d+4)}` (hyppo's;
    the factors of scipy.stats.gaussian_kde, applied to each column's :math:`\\hat\\sigma`,
    divisor n - 1), 'nrd0' R's ``bw.nrd0`` on each column,
    :math:`0.9\\min(\\hat\\sigma, \\mathrm{IQR}/1.34) n^{-1/5}` (with R's fall-backs when that
    minimum is 0)."""
    n, d = Z.shape
    # each column's standard deviation in units of a power of two of its largest magnitude
    # (exact to scale back), so that no square overflows (z x 1e300) or underflows (z x 1e-300)
    top = np.max(np.abs(Z), axis=0) if n else np.zeros(d)
    shift = np.where(top > 0, np.frexp(np.where(top > 0, top, 1.0))[1], 0)
    sd = np.ldexp((np.ldexp(Z, -shift[None, :])).std(axis=0, ddof=1), shift)
    if rule == "scott":
        return sd * n ** (-1.0 / (d + 4))
    if rule == "half-scott":
        return 0.5 * sd * n ** (-1.0 / (d + 4))
    if rule == "silverman":
        return sd * (n * (d + 2) / 4.0) ** (-1.0 / (d + 4))
    q75, q25 = np.percentile(Z, [75, 25], axis=0)
    lo = np.minimum(sd, (q75 / 1.34 - q25 / 1.34))
    out = np.empty(d)
    for j in range(d):  # R: lo <- min(sd, IQR/1.34); if 0: sd, then |x[1]|, then 1
        v = lo[j] if lo[j] > 0 else sd[j] if sd[j] > 0 else abs(Z[0, j]) if Z[0, j] != 0 else 1.0
        out[j] = 0.9 * v * n ** -0.2
    return out


def kernel_weights(Z, h):
    """``(W, base, e)``: the rows of the Gaussian kernel matrix of ``Z`` with bandwidths ``h``
    normalised to sum 1, :math:`W_{ik} = K_H(z_i - z_k) / \\sum_l K_H(z_i - z_l)`, and the
    weights :math:`\\omega(z_i) = 12\\hat f(z_i)^4 = \\mathrm{base}_i\\, 2^e`, with the kernel
    density estimate :math:`\\hat f(z_i) = n^{-1}\\sum_l K_H(z_i - z_l)` and
    :math:`K_H(u) = \\prod_j (2\\pi)^{-1/2} h_j^{-1} \\exp(-u_j^2 / (2 h_j^2))`.

    The powers of two of the bandwidths are kept apart (``e``): :math:`\\omega` goes as
    :math:`h^{-4d}`, far outside float64 for data of magnitude :math:`2^{\\pm 300}`, while
    ``base`` stays near :math:`(n\\prod_j m_j)^{-4}` with :math:`h_j = m_j 2^{e_j}`,
    :math:`m_j \\in [0.5, 1)`."""
    from scipy.spatial.distance import cdist

    n, d = Z.shape
    U = Z / h
    W = cdist(U, U, "sqeuclidean")
    W *= -0.5
    np.exp(W, out=W)  # the diagonal is exp(0) = 1: every row sum is at least 1
    rows = W.sum(axis=1)
    W /= rows[:, None]
    m, ex = np.frexp(h)
    k = 1.0 / (n * (2 * math.pi) ** (0.5 * d) * float(np.prod(m)))
    return W, 12.0 * (rows * k) ** 4, -4 * int(np.sum(ex))


def _rows_sums(W, mats, rows, corr):
    """Per-point sums for the points ``rows`` (a contiguous run of indices): columns
    ``(S1, mA, mB, S3)`` of the (x, y) pair, then with ``corr`` the same of (x, x) and (y, y)
    folded into ``(S1xx, S3xx, S1yy, S3yy)``."""
    A, B, C = mats[:3]
    Wb = W[rows[0]:rows[-1] + 1]
    RA = Wb @ A
    RB = Wb @ B
    out = [np.einsum("ij,ij->i", Wb @ C, Wb), np.einsum("ij,ij->i", RA, Wb),
           np.einsum("ij,ij->i", RB, Wb), np.einsum("ij,ij,ij->i", RA, RB, Wb)]
    if corr:
        A2, B2 = mats[3:]
        out += [np.einsum("ij,ij->i", Wb @ A2, Wb), np.einsum("ij,ij,ij->i", RA, RA, Wb),
                np.einsum("ij,ij->i", Wb @ B2, Wb), np.einsum("ij,ij,ij->i", RB, RB, Wb)]
    return np.column_stack(out)


def local_sums(W, A, B, corr, n_threads):
    """The per-point sums (:func:`_rows_sums`) of the distance matrices ``A``, ``B``.  Row
    blocks of W are BLAS products run on one BLAS thread each, shared among ``n_threads``
    Python threads, the blocks fixed by n alone: the same bits for any ``n_threads``.

    The sums are of the distances themselves, not of a globally centred copy (which the
    weighted centring would allow): where the weights at z_i sit on few points, the
    distances among those are small (zero diagonal), so are the three sums, and their
    combination keeps its relative precision; centred entries would make them O(1) and lose
    it (seen: 1e-5 relative at a point whose value is 1e-9 of the largest)."""
    n = W.shape[0]
    mats = [A, B, A * B]
    if corr:
        mats += [A * A, B * B]
    chunk = _group_sums.chunk_size((3 + 2 * corr) * float(n) * n)
    return _group_sums.map_chunks(lambda rows, _nt: _rows_sums(W, mats, rows, corr),
                                  np.arange(n), n_threads, chunk)


def cdcov_from_sums(S):
    """Per-point :math:`\\mathcal{V}^2(x, y \\mid z_i) = S_1 + m_A m_B - 2 S_3` and the size of
    its terms (for the rounding floor)."""
    S1, mA, mB, S3 = S[:, 0], S[:, 1], S[:, 2], S[:, 3]
    return S1 + mA * mB - 2.0 * S3, np.abs(S1) + np.abs(mA * mB) + 2.0 * np.abs(S3)


def local_variances(S):
    """Per-point distance variances of x and of y given z_i, and which are rounding noise."""
    mA, mB = S[:, 1], S[:, 2]
    vx = S[:, 4] + mA * mA - 2.0 * S[:, 5]
    vy = S[:, 6] + mB * mB - 2.0 * S[:, 7]
    noise = ((vx <= LOCAL_FLOOR * (np.abs(S[:, 4]) + mA * mA + 2.0 * np.abs(S[:, 5])))
             | (vy <= LOCAL_FLOOR * (np.abs(S[:, 6]) + mB * mB + 2.0 * np.abs(S[:, 7]))))
    return vx, vy, noise


def times_pow2(v, p):
    """``v · 2**p`` (v a float or an array, p real), one rounding of the fraction of p."""
    whole = math.floor(p)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(np.asarray(v, dtype=np.float64) * 2.0 ** (p - whole), whole)
    return float(out) if np.ndim(out) == 0 else out


def draw_local(cumW, U):
    """For each point i, the index k with :math:`\\sum_{l<k} W_{il} \\le U_i < \\sum_{l\\le k}
    W_{il}`: a draw from the kernel-weighted empirical distribution at z_i (``cumW`` the
    row-wise cumulative sums of W with last column 1)."""
    return np.sum(cumW <= U[:, None], axis=1)
