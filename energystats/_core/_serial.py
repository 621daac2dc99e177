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
           "serial_dependence_note"]

#: standard errors of the iid lag-1 autocorrelation (1/sqrt(n)) past which a variable counts as
#: serially dependent: without a time index, and with one
STRONG, TIMED = 3.5, 2.5
#: fewer rows than this: no check (the autocorrelation's normal approximation is poor)
MIN_ROWS = 20


class SeriesDependenceWarning(UserWarning):
    """The rows of a sample are serially dependent where the method assumes independent rows
    (or exchangeable ones), or a series' dependence is beyond what a time-series method's
    resampling can see; the message names what was seen, with the figure, and what to do."""


def lag1_autocorrelations(A):
    """The lag-1 autocorrelation of each column of ``A`` (n, d) in row order (0 for a constant
    column): ``sum (a_t - m)(a_{t+1} - m) / sum (a_t - m)^2``."""
    A = np.asarray(A, dtype=np.float64)
    A = A[:, None] if A.ndim == 1 else A
    C = A - A.mean(axis=0)
    # in units of each column's largest deviation, so that no square overflows or underflows
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
