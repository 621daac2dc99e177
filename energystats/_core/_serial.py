"""Serial dependence of the rows of a sample: the check that the tests for independent rows
run before they permute them.

A permutation test of independence treats the rows as exchangeable.  Two series that are each
autocorrelated (two independent random walks, two AR(1) series) look dependent to it: their
distance covariance is inflated by the slow drift they share with *any* other slow series, and
the test rejects far more often than its level (the "spurious dependence" of Granger and
Newbold 1974).  :func:`lag1_autocorrelations` measures each column's lag-1 autocorrelation in
row order; :func:`serial_dependence_note` says, in words, when both variables carry
significant autocorrelation (beyond ``STRONG`` standard errors of the iid value, or ``TIMED``
when the rows carry a DatetimeIndex/PeriodIndex), and is None otherwise.  Under independent
rows, ``sqrt(n) r_1`` is approximately N(0, 1) for each column, so a note on data with
independent rows needs both variables past the threshold: with ``STRONG`` = 3.5 about
(2 · 2.3e-4)² per pair of columns, with ``TIMED`` = 2.5 about (2 · 6.2e-3)².
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["SeriesDependenceWarning", "lag1_autocorrelations", "is_time_index",
           "serial_dependence_note", "adf_t", "kpss_eta", "local_whittle_d", "seasonal_peak",
           "series_findings"]

#: standard errors of the iid lag-1 autocorrelation (1/sqrt(n)) past which a variable counts as
#: serially dependent: without a time index, and with one
STRONG, TIMED = 3.5, 2.5
#: fewer rows than this: no check (the autocorrelation's normal approximation is poor)
MIN_ROWS = 20


class SeriesDependenceWarning(UserWarning):
    """The rows of a sample are serially dependent where the method assumes independent rows
    (or exchangeable ones), or a series' dependence is beyond what a time-series method's
    resampling can see; the message names what was seen, with the figure, and what to do."""


def _centred_unit(x):
    """``x`` (1-D) centred and divided by its largest deviation, or None when it is constant:
    scaled by a power of two of its largest magnitude first, so that neither the mean (values
    near 1e308) nor the squares (1e+-300) overflow or underflow."""
    x = np.asarray(x, dtype=np.float64)
    big = float(np.max(np.abs(x))) if x.size else 0.0
    if not big > 0:
        return None
    x = np.ldexp(x, -int(np.frexp(big)[1]))
    x = x - x.mean()
    top = float(np.max(np.abs(x)))
    return x / top if top > 0 else None


def lag1_autocorrelations(A):
    """The lag-1 autocorrelation of each column of ``A`` (n, d) in row order (0 for a constant
    column): ``sum (a_t - m)(a_{t+1} - m) / sum (a_t - m)^2``."""
    A = np.asarray(A, dtype=np.float64)
    A = A[:, None] if A.ndim == 1 else A
    # each column times a power of two first (its mean cannot overflow), then in units of its
    # largest deviation, so that no square overflows or underflows
    big = np.max(np.abs(A), axis=0) if A.shape[0] else np.zeros(A.shape[1])
    A = np.ldexp(A, -np.frexp(np.where(big > 0, big, 1.0))[1])
    C = A - A.mean(axis=0)
    top = np.max(np.abs(C), axis=0)
    top[top == 0] = 1.0
    C = C / top
    den = np.sum(C * C, axis=0)
    num = np.sum(C[1:] * C[:-1], axis=0)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def is_time_index(index):
    return isinstance(index, (pd.DatetimeIndex, pd.PeriodIndex))


def serial_dependence_note(X, Y, index=None, names=("x", "y")):
    """A sentence naming the serial dependence of both variables, or None (see the module)."""
    n = np.shape(X)[0]
    if n < MIN_ROWS:
        return None
    timed = is_time_index(index)
    limit = (TIMED if timed else STRONG) / math.sqrt(n)
    r = [lag1_autocorrelations(V) for V in (X, Y)]
    worst = [float(np.max(np.abs(v))) for v in r]
    if min(worst) <= limit:
        return None
    where = "rows indexed by time" if timed else "rows"
    return (f"{names[0]} and {names[1]} are both serially dependent (largest lag-1 autocorrelation "
            f"{worst[0]:.2f} and {worst[1]:.2f} in the order of the {where}, n = {n}; independent "
            f"rows in random order give |r| < {limit:.2f} almost always; rows sorted by a variable "
            "give large ones too). The permutation test assumes independent, "
            "exchangeable rows and rejects far too often for two autocorrelated series, even "
            "independent ones (spurious dependence). Use cross_distance_correlation_test (block "
            "resampling), `perm_blocks=` for blocks of rows, or difference the series first.")


# -- the dependence a block resampler cannot see ------------------------------------------------

#: the Dickey-Fuller test's 5 % critical value for the t statistic of a regression with a
#: constant (asymptotic; MacKinnon 2010): above it a unit root is not rejected
ADF_CRITICAL = -2.86
#: the KPSS test's 5 % critical value for level stationarity (Kwiatkowski, Phillips, Schmidt
#: and Shin 1992, Table 1): above it stationarity is rejected.  A unit root is reported only
#: when both agree (ADF does not reject a unit root, KPSS rejects stationarity): ADF alone
#: took 24 % of stationary AR(1) series with phi = 0.5 and 80 rows for random walks, both 7 %;
#: on random walks of 200 rows ADF alone reports 95 %, both 92 %
KPSS_CRITICAL = 0.463
#: one-sided 1 % normal quantile: the local Whittle d-hat past it (in its standard errors)
#: counts as long memory, as does a seasonal lag past the Bonferroni 1 % limit
LONG_MEMORY_Z = 2.326
#: ... and d-hat at least this large (a tiny d on a very long series is no trap)
LONG_MEMORY_D = 0.1
#: the largest order of the AR prewhitening before the memory is estimated (AR(1): an AR(1)
#: observed with noise read as long memory in 45-72 % of series; AR(p <= 2) by AIC: 4-8 %)
PREWHITEN_ORDER = 2
#: the diagnostics need this many rows (fewer: the result says that nothing was checked)
MIN_SERIES = 50


def adf_t(x):
    """The augmented Dickey-Fuller t statistic of ``x`` (1-D): ``Δx_t = a + b x_{t-1} +
    Σ_{j≤p} c_j Δx_{t-j} + e_t`` with ``p = ⌊(n - 1)^{1/3}⌋`` lagged differences (Said and
    Dickey 1984), ``b̂ / se(b̂)``; +inf for a constant series (no evidence against a unit root
    is no evidence at all, and the caller skips constants)."""
    x = _centred_unit(x)            # units of the largest deviation: no square overflows
    if x is None:
        return math.inf
    n = x.size
    p = int(round((n - 1) ** (1.0 / 3.0)))
    while p ** 3 > n - 1:           # the exact integer cube root (a float root of 64 is 3.99...)
        p -= 1
    while (p + 1) ** 3 <= n - 1:
        p += 1
    dx = np.diff(x)                 # dx[t] = x[t+1] - x[t]
    rows = dx.size - p
    A = np.empty((rows, 2 + p))
    A[:, 0] = 1.0
    A[:, 1] = x[p:n - 1]
    for j in range(1, p + 1):
        A[:, 1 + j] = dx[p - j:dx.size - j]
    y = dx[p:]
    beta, _, rank, _ = np.linalg.lstsq(A, y, rcond=None)
    if rank < A.shape[1] or rows <= A.shape[1]:
        return math.inf
    resid = y - A @ beta
    s2 = float(resid @ resid) / (rows - A.shape[1])
    cov = s2 * np.linalg.inv(A.T @ A)
    se = math.sqrt(cov[1, 1]) if cov[1, 1] > 0 else 0.0
    return float(beta[1] / se) if se > 0 else (-math.inf if beta[1] < 0 else math.inf)


def kpss_eta(x):
    """The KPSS statistic of level stationarity of ``x`` (1-D; Kwiatkowski et al. 1992):
    ``η = Σ_t S_t² / (n² σ̂²)``, S_t the partial sums of the demeaned series and σ̂² its long-run
    variance by Bartlett weights over ``l = ⌊4 (n/100)^{1/4}⌋`` lags (Schwert's short rule);
    0 for a constant series."""
    e = _centred_unit(x)
    if e is None:
        return 0.0
    n = e.size
    lags = int(4.0 * (n / 100.0) ** 0.25)
    s2 = float(e @ e) / n
    for j in range(1, min(lags, n - 1) + 1):
        s2 += 2.0 * (1.0 - j / (lags + 1.0)) * float(e[j:] @ e[:-j]) / n
    if not s2 > 0:
        return math.inf
    S = np.cumsum(e)
    return float(S @ S) / (n * n * s2)


def _prewhiten(x, pmax=PREWHITEN_ORDER):
    """``x`` (centred) filtered by its Yule-Walker AR(p) fit, ``p`` in 0 … ``pmax`` by AIC:
    the short-range autocorrelation taken out before the memory is estimated."""
    from scipy.linalg import solve_toeplitz

    n = x.size
    f = np.fft.rfft(x, 2 * n)
    acov = np.fft.irfft(f.real ** 2 + f.imag ** 2, 2 * n)[:pmax + 1] / n
    best = (n * math.log(acov[0]), 0, np.zeros(0))
    for p in range(1, pmax + 1):
        a = solve_toeplitz(acov[:p], acov[1:p + 1])
        s2 = float(acov[0] - a @ acov[1:p + 1])
        if s2 > 0 and n * math.log(s2) + 2 * p < best[0]:
            best = (n * math.log(s2) + 2 * p, p, a)
    _, p, a = best
    e = x[p:].copy()
    for j in range(1, p + 1):
        e -= a[j - 1] * x[p - j:n - j]
    return e


def local_whittle_d(x):
    """``(d̂, se)``: Robinson's (1995) local Whittle estimate of the memory parameter ``d`` of
    ``x`` after prewhitening by an AR(p) fit (``p`` ≤ 2 by AIC, so that short-range
    autocorrelation — an AR(1), an AR(1) observed with noise — is not taken for long memory),
    on the first ``m = ⌊n^0.65⌋`` Fourier frequencies, with its standard error ``1/(2√m)``."""
    from scipy.optimize import minimize_scalar

    x = _centred_unit(x)
    if x is None:
        return 0.0, math.inf
    e = _prewhiten(x)
    n = e.size
    m = max(4, int(n ** 0.65))
    f = np.fft.rfft(e - e.mean())[1:m + 1]
    I = (f.real ** 2 + f.imag ** 2)
    lam = 2.0 * math.pi * np.arange(1, I.size + 1) / n
    loglam = np.log(lam)
    if not np.any(I > 0):
        return 0.0, math.inf

    def objective(d):
        return math.log(float(np.mean(np.exp(2.0 * d * loglam) * I))) - 2.0 * d * float(loglam.mean())
    d = float(minimize_scalar(objective, bounds=(-0.49, 0.99), method="bounded",
                              options={"xatol": 1e-6}).x)
    return d, 1.0 / (2.0 * math.sqrt(I.size))


def seasonal_peak(x):
    """``(lag, r)``: the lag ``k`` in 2 … ⌊n/4⌋ whose autocorrelation (of the normal scores
    of the values) is largest in size among
    those past the Bonferroni 1 % limit with Bartlett's standard errors (as
    :func:`._blocks.seasonal_reach`) **and** larger in size than the lag-1 autocorrelation (an
    AR series' own decay never is); None when there is none."""
    from scipy.special import ndtri

    from scipy.stats import rankdata

    x = np.asarray(x, dtype=np.float64)
    n, last = x.size, x.size // 4
    if last < 2 or np.all(x == x[0]):
        return None
    # on the normal scores of the values (their mid-ranks): heavy tails (t(3)) make the
    # autocorrelations of the raw values stray beyond Bartlett's limits
    x = ndtri((rankdata(x) - 0.5) / n)
    x = x - x.mean()
    f = np.fft.rfft(x, 2 * n)
    acov = np.fft.irfft(f.real ** 2 + f.imag ** 2, 2 * n)[:last + 1]
    rho = acov[1:] / acov[0]
    z = float(ndtri(1.0 - 0.005 / last))
    cum = np.concatenate([[0.0], np.cumsum(rho[:-1] ** 2)])
    se = np.sqrt((1.0 + 2.0 * cum) / n)
    ok = (np.abs(rho) > z * se) & (np.abs(rho) > abs(rho[0]))
    ok[0] = False
    if not ok.any():
        return None
    k = int(np.argmax(np.where(ok, np.abs(rho), -1.0)))
    return k + 1, float(rho[k])


def series_findings(E, names, *, use=None, unit_root=None, block_arg="block_size"):
    """What a block resampler cannot handle in the columns of ``E`` (n, d; residuals or raw
    series), as ``(findings, figures)``: ``findings`` a list of ``(kind, sentence)`` with
    kind 'unit root', 'long memory', 'seasonal' or 'too short'; ``figures`` a dict with the
    rows, the largest ADF t and the largest d-hat over the columns checked.  ``use`` (a
    boolean mask) leaves columns out (the caller's constants: residuals of exact segment
    means are rounding noise), ``unit_root`` limits the unit-root finding to the columns it
    marks; ``block_arg`` is the name of the caller's block-length argument."""
    E = np.asarray(E, dtype=np.float64)
    E = E[:, None] if E.ndim == 1 else E
    n, d = E.shape
    if n < MIN_SERIES:
        return ([("too short", f"the series has {n} rows; the unit-root, long-memory and "
                 f"seasonality checks need at least {MIN_SERIES}, so none was made")],
                {"rows": n})
    use = np.ones(d, bool) if use is None else np.asarray(use, bool)
    unit_root = np.ones(d, bool) if unit_root is None else np.asarray(unit_root, bool)
    out, fig = [], {"rows": n}
    cols = [j for j in range(d) if use[j] and np.any(E[:, j] != E[0, j])]
    ts = {j: adf_t(E[:, j]) for j in cols}
    kp = {j: kpss_eta(E[:, j]) for j in cols if unit_root[j]}
    lw = {j: local_whittle_d(E[:, j]) for j in cols}
    sp = {j: seasonal_peak(E[:, j]) for j in cols}
    if cols:
        fig["adf_t"] = max(ts.values())
        fig["d_hat"] = max(v[0] for v in lw.values())
    for j in cols:
        name = names[j] if j < len(names) else f"column {j}"
        if unit_root[j] and ts[j] > ADF_CRITICAL and kp[j] > KPSS_CRITICAL:
            out.append(("unit root", f"{name} looks integrated (augmented Dickey-Fuller t = "
                        f"{ts[j]:.2f}, a unit root not rejected at 5 %: critical value "
                        f"{ADF_CRITICAL}; KPSS eta = {kp[j]:.2f}, stationarity rejected at 5 %: "
                        f"critical value {KPSS_CRITICAL}); difference it (np.diff) before "
                        "testing"))
        dh, se = lw[j]
        if dh / se > LONG_MEMORY_Z and dh >= LONG_MEMORY_D:
            out.append(("long memory", f"{name} shows long memory (local Whittle d = {dh:.2f} ± "
                        f"{se:.2f} after AR prewhitening); blocks of any practical length "
                        "miss part of it: fractionally difference the series or read the p-value "
                        "as too small"))
        if sp[j] is not None:
            k, r = sp[j]
            out.append(("seasonal", f"{name} has a strong autocorrelation at lag {k} (r = "
                        f"{r:.2f}, beyond lag 1's): seasonality the blocks cut through; take "
                        f"seasonal differences (x_t - x_(t-{k})) or pass {block_arg}= of several "
                        f"periods"))
    return out, fig
