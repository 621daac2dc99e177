r"""Statistics of the Poisson goodness-of-fit tests (private; numpy/scipy only).

The three statistics of R ``energy``'s ``poisson.tests`` (``poisson.e``,
``poisson.m``), evaluated for a batch of samples at once so that a parametric
bootstrap can score all its replicates in one call:

``"energy"``
    The energy statistic of Székely and Rizzo (2004),

    .. math::

        E_n = n\Bigl(\frac{2}{n}\sum_{i} \mathrm{E}|x_i - X|
              - \mathrm{E}|X - X'|
              - \frac{1}{n^2}\sum_{i,j}|x_i - x_j|\Bigr),
        \qquad X, X' \overset{iid}{\sim} \mathrm{Poisson}(\hat\lambda),
        \quad \hat\lambda = \bar x,

    with :math:`\mathrm{E}|x - X| = 2xF(x) - 2\hat\lambda F(x-1) + \hat\lambda - x`
    (:math:`F` the Poisson(:math:`\hat\lambda`) CDF, :math:`F(-1) = 0`) and
    :math:`\mathrm{E}|X - X'| = 2\hat\lambda e^{-2\hat\lambda}
    (I_0(2\hat\lambda) + I_1(2\hat\lambda))`.

``"m-cvm"``, ``"m-ad"``
    The mean-distance (M) statistics, Cramér–von Mises and Anderson–Darling
    type, defined in :func:`poisson_statistics`.

Reference: G. J. Székely and M. L. Rizzo (2004), "Mean distance test of Poisson
distribution", *Statistics & Probability Letters* 67(3), 241-247,
doi:10.1016/j.spl.2004.01.005.
"""
from __future__ import annotations

import numpy as np
from scipy.special import i0e, i1e, pdtr, pdtrik

__all__ = ["poisson_statistics", "poisson_support_end", "STATISTICS"]

STATISTICS = ("energy", "m-cvm", "m-ad")

#: The M statistics sum over j = 0..Q, Q the (1 - 1e-10)-quantile of Poisson(lambda-hat).
_P_UPPER = 1.0 - 1e-10
#: R (4.2) ``qpois`` accepts y when F(y) >= p (1 - 8 DBL_EPSILON) (its left-continuity fuzz);
#: checked against ``qpois(1 - 1e-10, lambda)`` at 500 000 values of lambda in (0, 300].
_P_SEARCH = _P_UPPER * (1.0 - 8.0 * np.finfo(np.float64).eps)

#: Row chunks keep each (rows x support) work array at about this many elements.
_CHUNK_ELEMENTS = 1 << 22
#: The energy statistic walks the value grid column by column when it is no wider than
#: this (or than n); wider grids (far outliers) take the sort-based path.
_GRID_MAX = 4096
#: The stable M sums start where F(j - 1; λ̂) exceeds this (or at the smallest count): the
#: terms left out add up to less than its square (see ``_window_start``).
_F_NEGLIGIBLE = 1e-160


def poisson_support_end(lam):
    r"""End :math:`Q` of the support over which R's M statistics sum.

    Parameters
    ----------
    lam : array_like of float
        Poisson means :math:`\lambda \ge 0`.

    Returns
    -------
    ndarray of int64
        :math:`Q(\lambda) = \min\{y \ge 0 : F(y; \lambda) \ge p\,(1 - 8\epsilon)\}`
        with :math:`p = 1 - 10^{-10}` and :math:`\epsilon` the double-precision
        machine epsilon: R's ``qpois(1 - 1e-10, lambda)`` (R 4.2), fuzz included.
        :math:`Q(0) = 0`.
    """
    lam = np.asarray(lam, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        y = np.ceil(pdtrik(_P_SEARCH, lam))
    y = np.where(np.isfinite(y) & (lam > 0), np.maximum(y, 0.0), 0.0)
    # pdtrik inverts the continuous incomplete gamma; step to the exact discrete quantile.
    for _ in range(64):
        down = (y > 0) & (pdtr(np.maximum(y - 1, 0), lam) >= _P_SEARCH)
        up = (lam > 0) & (pdtr(y, lam) < _P_SEARCH)
        if not (down.any() or up.any()):
            break
        y = y - down + up
    return y.astype(np.int64)


def poisson_statistics(X, which=STATISTICS, m_recursion="r"):
    r"""Poisson goodness-of-fit statistics of R ``energy`` for a batch of samples.

    Each row of `X` is one sample :math:`x_1, \dots, x_n` of counts;
    :math:`\hat\lambda = \bar x` is estimated per row.  The values agree with R
    ``energy`` 1.7.11's ``poisson.e`` (``"energy"``) and ``poisson.m``
    (``"m-cvm"``, ``"m-ad"``) to about 1e-12 relative (the energy statistic is
    better than R's for :math:`\hat\lambda \gtrsim 356`, where R overflows; see Notes).

    Parameters
    ----------
    X : array_like of int, shape (B, n) or (n,)
        B samples of n non-negative integers, one sample per row.  Not
        validated (integer, finite, non-negative is the caller's job).  A 1-D
        array is one sample: it is treated as shape (1, n), and the returned
        arrays have length 1.
    which : sequence of str
        Any of ``"energy"``, ``"m-cvm"``, ``"m-ad"``.
    m_recursion : {"r", "stable"}
        How the M-estimates :math:`\hat F(j)` are computed (see Notes).
        ``"r"`` (default) repeats R's floating-point operations and so R's
        numbers, which are inaccurate for large :math:`\hat\lambda` (from about
        50-150 on, depending on the sample).  ``"stable"`` evaluates the same
        definition in an equivalent, numerically stable form.  Not used by
        ``"energy"``.

    Returns
    -------
    dict of str to ndarray of float64, shape (B,)
        One entry per name in `which`.

    Notes
    -----
    **Energy statistic** (``poisson.e``):

    .. math::

        E_n = n\Bigl(\frac{2}{n}\sum_{i=1}^n g(x_i) - \mathrm{E}|X-X'|
              - \frac{2}{n^2}\sum_{i=1}^n (2i - 1 - n)\, x_{(i)}\Bigr),

    :math:`g(x) = \mathrm{E}|x-X| = 2xF(x) - 2\hat\lambda F(x-1) + \hat\lambda - x`,
    :math:`\mathrm{E}|X-X'| = 2\hat\lambda\,[\mathrm{i0e}(2\hat\lambda) +
    \mathrm{i1e}(2\hat\lambda)]` (exponentially scaled Bessel functions,
    :math:`\mathrm{i}\nu\mathrm{e}(a) = e^{-a} I_\nu(a)`), and
    :math:`x_{(1)} \le \dots \le x_{(n)}`, so that the last sum is
    :math:`\tfrac{1}{n^2}\sum_{i,j}|x_i - x_j|` (computed exactly, in integers).
    R evaluates :math:`a e^{-a}(I_0(a) + I_1(a))` unscaled, which gives ``-Inf``
    for :math:`\hat\lambda` above about 356 and ``NaN`` above about 372; here the
    statistic stays finite.  :math:`\hat\lambda = 0` (all zeros) gives 0, as in R.

    **M statistics** (``poisson.m``).  Let
    :math:`\hat m(k) = \frac1n\sum_i |x_i - k|` (the empirical mean distance),
    :math:`F(j) = F(j;\hat\lambda)`, :math:`f(j) = F(j) - F(j-1)` the fitted
    Poisson CDF and probabilities, and :math:`Q` the
    :math:`(1-10^{-10})`-quantile of Poisson(:math:`\hat\lambda`)
    (:func:`poisson_support_end`).  For a Poisson(:math:`\lambda`) variable the
    mean distance satisfies :math:`m(1) = 2F(0) - 1 + \lambda` and, for
    :math:`j \ge 1`, :math:`m(j+1) = (j + 1 - \lambda)(2F(j-1) - 1) + 2(j+1) f(j)`
    (from :math:`\mathrm{E}|k - X| = (k - \lambda)(2F(k) - 1) + 2\lambda f(k)` and
    :math:`(j+1) f(j+1) = \lambda f(j)`).  Solving them with :math:`\hat m`
    in place of :math:`m` gives the M-estimates of the CDF,

    .. math::

        \hat F(0) = \tfrac12\bigl(\hat m(1) + 1 - \hat\lambda\bigr), \qquad
        \hat f(j) = \max\Bigl(0,\ \frac{\hat m(j+1) - (j + 1 - \hat\lambda)
                    (2\hat F(j-1) - 1)}{2(j+1)}\Bigr), \qquad
        \hat F(j) = \min\bigl(1,\ \hat F(j-1) + \hat f(j)\bigr)

    (:math:`j = 1, \dots, Q`; the clipping acts on the running values), and

    .. math::

        \text{M-CvM} = n\sum_{j=0}^{Q} \bigl(\hat F(j) - F(j)\bigr)^2 f(j),
        \qquad
        \text{M-AD} = n\sum_{j=0}^{Q} \frac{\bigl(\hat F(j) - F(j)\bigr)^2 f(j)}
                                          {F(j)\,(1 - F(j))},

    with :math:`f(0) = F(0) = e^{-\hat\lambda}` and :math:`f(j) = F(j) - F(j-1)`
    taken as a difference of CDF values, as R does.

    The recursion is ill-conditioned below the mean: an error in
    :math:`\hat F(j-1)` enters :math:`\hat F(j)` multiplied by
    :math:`\hat\lambda/(j+1)`, so it grows like :math:`\hat\lambda^j/(j+1)!`.
    With ``m_recursion="r"`` it is evaluated with R's floating-point operations
    (:math:`\hat m(k)` an exact integer sum divided by n), which reproduces R's
    numbers bit for bit.  Its numerator adds terms of size :math:`\hat\lambda`
    that cancel (exactly, below :math:`\min x_i`, where :math:`\hat F = 0`), and
    the amplified rounding errors make the M statistics inaccurate for some
    samples from :math:`\hat\lambda \approx 50` (relative error 1e-9 seen) and
    wrong by orders of magnitude for many samples from
    :math:`\hat\lambda \approx 150` (R gives M-CvM 9.76, M-AD 2735 for
    ``set.seed(5); rpois(30, 300)``; the exact values are 0.6455 and 3.427).
    ``m_recursion="stable"`` uses the identity
    :math:`n(\hat m(j+1) + j + 1 - \hat\lambda) = 2G(j)`,
    :math:`G(j) = \sum_{l \le j} \#\{i : x_i \le l\}` (an exact integer), so
    that, clipping included,

    .. math::

        \hat F(0) = \frac{G(0)}{n}, \qquad
        \hat F(j) = \min\Bigl(1,\ \max\Bigl(\hat F(j-1),\
                    \frac{G(j)/n + \hat\lambda \hat F(j-1)}{j+1}\Bigr)\Bigr),

    a sum of non-negative terms below the mean and a contraction
    (factor :math:`\hat\lambda/(j+1) < 1`) above it; it agrees with exact
    rational arithmetic to rounding error.
    For :math:`\hat\lambda = 0` (all zeros) :math:`Q = 0`, M-CvM = 0 and
    M-AD = 0/0 = NaN, as in R.

    With ``m_recursion="stable"`` the sums start at :math:`j_0 = \min(\min_i x_i, J)`,
    :math:`J` (within one of) the largest integer with :math:`F(J - 1) \le 10^{-160}`: below
    :math:`\min_i x_i` the estimate :math:`\hat F` is exactly 0, so the terms left out are
    :math:`F^2 f` and :math:`F f/(1 - F)`, together below :math:`10^{-320}`.  Where
    :math:`F(j) < 10^{-160}` (only below :math:`J`, reached when a count lies that far
    below the mean) M-AD's :math:`f(j)/F(j)` is taken from
    :math:`F(j)/f(j) = 1 + (j/\hat\lambda)\,F(j-1)/f(j-1)` rather than from the CDF
    values, which underflow (R, and ``m_recursion="r"``, give NaN there: from
    :math:`\hat\lambda \approx 745` on, where :math:`F(0) = e^{-\hat\lambda}` is 0).  The cost
    is a Python loop of :math:`Q - j_0 + 1` vector steps over the rows: about
    :math:`33\sqrt{\hat\lambda}` for a Poisson sample (``"r"``: :math:`Q + 1 \approx
    \hat\lambda + 6.4\sqrt{\hat\lambda}`).

    **R's tests** (``poisson.tests``, ``poisson.mtest``, ``poisson.etest``,
    energy 1.7.11).  A parametric bootstrap by ``boot::boot(sim = "parametric")``:
    each of the R replicates is ``rpois(n, lambda)`` with ``lambda = mean(x)`` of
    the observed sample (fixed); the statistic of a replicate re-estimates
    :math:`\hat\lambda` as that replicate's mean.  With ``test = "all"`` one
    bootstrap scores all three statistics on the same replicates.  The p-value
    of statistic :math:`t_0` is ``1 - mean(t < t0)``, i.e.
    :math:`\#\{b : t_b \ge t_0\}/R` -- no +1 in numerator or denominator, ties
    count as exceedances; it is NA when R = 0 or a replicate statistic is NaN
    (M-AD of an all-zero sample).  ``poisson.mtest`` reports M-CvM and its
    p-value only; ``poisson.etest`` the energy statistic.
    """
    X = np.asarray(X)
    if X.ndim == 1:
        X = X[np.newaxis, :]
    X = X.astype(np.int64, copy=False)
    which = tuple(which)
    unknown = [w for w in which if w not in STATISTICS]
    if unknown:
        raise ValueError(f"unknown statistic(s) {unknown}; choose from {STATISTICS}")
    B, n = X.shape
    S = X.sum(axis=1)
    lam = S / n
    out = {}
    if "energy" in which:
        out["energy"] = _energy(X, S, lam)
    if m_recursion not in ("r", "stable"):
        raise ValueError(f"m_recursion must be 'r' or 'stable'; got {m_recursion!r}")
    if "m-cvm" in which or "m-ad" in which:
        cvm, ad = _mean_distance(X, S, lam, m_recursion == "stable")
        if "m-cvm" in which:
            out["m-cvm"] = cvm
        if "m-ad" in which:
            out["m-ad"] = ad
    return {w: out[w] for w in which}


def _row_chunks(B, width):
    """Row slices whose (rows x width) arrays hold about ``_CHUNK_ELEMENTS`` elements."""
    step = max(1, _CHUNK_ELEMENTS // max(int(width), 1))
    return [slice(a, min(a + step, B)) for a in range(0, B, step)]


def _counts(Xc, lo, width):
    """Per-row counts of the values ``lo .. lo + width - 1`` (values clipped into range)."""
    rows = Xc.shape[0]
    v = np.clip(Xc - lo, 0, width - 1)
    v += (np.arange(rows, dtype=np.int64) * width)[:, None]
    return np.bincount(v.ravel(), minlength=rows * width).reshape(rows, width)


def _energy(X, S, lam):
    """Energy statistic of each row (see :func:`poisson_statistics`)."""
    B, n = X.shape
    two_lam = 2.0 * lam
    exx = two_lam * (i0e(two_lam) + i1e(two_lam))
    lo, hi = int(X.min()), int(X.max())
    width = hi - lo + 1
    sum_g = np.empty(B)
    pair = np.empty(B)  # sum_i (2i - 1 - n) x_(i) = sum_{i<j} |x_i - x_j|, exact
    if width <= max(_GRID_MAX, n):
        # Walk the grid of values in increasing order: a value absent from a row adds an
        # exact 0.0 to its sum, so a row's result does not depend on the other rows.
        for sl in _row_chunks(B, width):
            c = _counts(X[sl], lo, width)
            lm = lam[sl]
            Fprev = pdtr(lo - 1, lm) if lo > 0 else np.zeros_like(lm)
            acc = np.zeros_like(lm)
            below = np.zeros(c.shape[0], dtype=np.int64)    # count of values < v
            below_s = np.zeros(c.shape[0], dtype=np.int64)  # their sum
            pr = np.zeros(c.shape[0], dtype=np.int64)
            for col in range(width):
                v = lo + col
                F = pdtr(v, lm)
                g = 2.0 * v * F - 2.0 * lm * Fprev + lm - v
                cv = c[:, col]
                acc += cv * g
                pr += cv * (v * below - below_s)
                below += cv
                below_s += cv * v
                Fprev = F
            sum_g[sl] = acc
            pair[sl] = pr
    else:
        for sl in _row_chunks(B, n):
            Xc = X[sl]
            lm = lam[sl][:, None]
            F = pdtr(Xc, lm)
            F1 = np.where(Xc > 0, pdtr(np.maximum(Xc - 1, 0), lm), 0.0)
            g = 2.0 * Xc * F - 2.0 * lm * F1 + lm - Xc
            sum_g[sl] = g.sum(axis=1)
            y = np.sort(Xc, axis=1)
            K = np.arange(1 - n, n, 2, dtype=np.int64)
            pair[sl] = (y * K).sum(axis=1)
    # R: meanxx = 2 * sum(K * y) / n^2, K = (1-n, 3-n, ..., n-1): sum(K * y) = pair.
    meanxx = 2.0 * pair / float(n * n)
    return n * (2.0 * (sum_g / n) - exx - meanxx)


def _window_start(X, lam):
    """First j of the M sums that the stable recursion evaluates, per row: J(λ̂), or the
    smallest count if that is smaller -- J (within one of) the largest j with F(j - 1; λ̂) <=
    ``_F_NEGLIGIBLE`` (0 when F(0) = e^(-λ̂) is not negligible).  Below min x_i the M-estimate F̂ is exactly 0, so a
    skipped term j < J is F(j)^2 f(j) (M-CvM) or F(j) f(j) / (1 - F(j)) (M-AD), and all of
    them together are below F(J - 1)^2 / (1 - F(J - 1)) < 1e-320: they cannot change a
    double."""
    lam = np.asarray(lam, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        k = np.floor(pdtrik(_F_NEGLIGIBLE, lam))
    J = np.where(np.isfinite(k) & (k > 0), k, 0.0)
    # pdtrik inverts the continuous incomplete gamma: step down until F(J - 1) is negligible
    for _ in range(64):
        high = (J > 0) & (pdtr(np.maximum(J - 1, 0), lam) > _F_NEGLIGIBLE)
        if not high.any():
            break
        J = J - high
    return np.minimum(X.min(axis=1), J.astype(np.int64))


def _ratio_cdf_pmf(j, lam):
    """F(j)/f(j) for Poisson(λ) (j >= 0 integers, λ > 0): the series
    sum_i j (j - 1) ... (j - i + 1) / λ^i of positive terms, to rounding error (used only where
    F(j) underflows, far below the mean, where j/λ < 1 and the terms fall geometrically)."""
    j = np.asarray(j, dtype=np.float64)
    lam = np.asarray(lam, dtype=np.float64)
    total = np.ones_like(j)
    term = np.ones_like(j)
    i = 0
    while True:
        term = term * np.maximum(j - i, 0.0) / lam
        total = total + term
        i += 1
        if not (term > 1e-17 * total).any():
            return total


def _mean_distance(X, S, lam, stable=False):
    """M-CvM and M-AD of each row (see :func:`poisson_statistics`)."""
    B, n = X.shape
    Q = poisson_support_end(lam)
    cvm = np.empty(B)
    ad = np.empty(B)
    # the stable recursion starts each row at its window (see _window_start); R's at j = 0
    J0 = _window_start(X, lam) if stable else np.zeros(B, dtype=np.int64)
    width = int((Q - J0).max()) + 2
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        for sl in _row_chunks(B, width):
            lm, Qc, Sc, Jc = lam[sl], Q[sl], S[sl], J0[sl]
            qm, js = int(Qc.max()), int(Jc.min())
            # C(j) = #{x_i <= j} for j = js..qm (column j - js; values below js in column 0)
            C = np.cumsum(_counts(X[sl], js, qm - js + 2)[:, : qm - js + 1], axis=1)
            if stable:
                # G(j) = sum_{l<=j} C(l) = n (m(j+1) + j + 1 - lambda) / 2, exact; the part
                # below js is sum_i max(0, js - x_i).
                G0 = np.maximum(js - X[sl], 0).sum(axis=1)
                G = (G0[:, None] + np.cumsum(C, axis=1)) / n
            else:
                # T(k) = sum_i |x_i - k| = S + sum_{j<k} (2 C(j) - n), exact; column k-1: T(k).
                T = Sc[:, None] + np.cumsum(2 * C - n, axis=1)
                m = T / n  # as R: an exact integer sum divided by n
            cdf = pdtr(np.arange(js, qm + 1, dtype=np.float64), lm[:, None])  # F(js..qm)
            # F/f where F underflows (rows whose smallest count lies far below the mean)
            deep = cdf < _F_NEGLIGIBLE
            ratio = None
            if stable and deep.any():
                ratio = _ratio_cdf_pmf(np.maximum(Jc, js), lm)
            if js == 0:
                if stable:
                    Fh = G[:, 0]
                else:
                    Fh = (m[:, 0] + 1.0 - lm) / 2.0  # j = 0
                cdf0 = np.exp(-lm)
                d = Fh - cdf0
                on = Jc == 0
                cv = np.where(on, d * d * cdf0, 0.0)
                a = np.where(on, d * d * cdf0 / (cdf0 * (1.0 - cdf0)), 0.0)
                if ratio is not None:
                    a = np.where(on & deep[:, 0], d * d / ratio, a)
                first = 1
            else:
                Fh = np.zeros(lm.shape)
                cdf0 = pdtr(js - 1.0, lm)
                cv = np.zeros(lm.shape)
                a = np.zeros(lm.shape)
                first = js
            for j in range(first, qm + 1):
                k = j + 1
                c = j - js
                if stable:
                    Fh = np.maximum(Fh, (G[:, c] + lm * Fh) / k)
                else:
                    f = (m[:, c] - (k - lm) * (2.0 * Fh - 1.0)) / (2.0 * k)
                    Fh = Fh + np.where(f < 0.0, 0.0, f)
                Fh = np.where(Fh > 1.0, 1.0, Fh)
                cdf1 = cdf[:, c]
                d = Fh - cdf1
                w = d * d * (cdf1 - cdf0)
                on = (j >= Jc) & (j <= Qc)
                cv = np.where(on, cv + w, cv)
                wa = w / (cdf1 * (1.0 - cdf1))
                if ratio is not None:
                    # F(j)/f(j) = 1 + (j/λ) F(j-1)/f(j-1), started at the row's window
                    ratio = np.where(j > Jc, 1.0 + (j / lm) * ratio, ratio)
                    wa = np.where(deep[:, c], d * d / (ratio * (1.0 - cdf1)), wa)
                a = np.where(on, a + wa, a)
                cdf0 = cdf1
            cvm[sl] = cv * n
            ad[sl] = a * n
    return cvm, ad
