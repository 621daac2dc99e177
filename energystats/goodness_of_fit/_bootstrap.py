"""The parametric bootstrap of the goodness-of-fit tests: samples drawn from the fitted law in
batches, the resampled statistics and their p-value (with the sequential rules).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from .._core import _sequential
from .._core._input import sample_matrix
from .._core._permutation import pvalue_from_null, pvalue_se


#: rounding allowance of a statistic, in units of eps times the sum of its terms' magnitudes:
#: bootstrap replicates within it of the observed value count as ties
TIE_ULPS = 64
#: doubles held by one batch of bootstrap samples (64 MiB)
BATCH_DOUBLES = 2**23


# -- input ------------------------------------------------------------------------------------

def _sample(x, columns, name="x", allow_2d=True):
    """``(array n×d float64, columns used or None)``."""
    if isinstance(columns, str):
        columns = [columns]
    arr, _, used, _ = sample_matrix(x, columns=columns, dtype=np.float64, name=name)
    if isinstance(x, pd.Series) and x.name is not None:
        used = [x.name]
    if not allow_2d and arr.shape[1] != 1:
        raise ValueError(f"`{name}` must be one-dimensional (one column); got {arr.shape[1]} "
                         "columns. Choose one with `columns=`.")
    return arr, used


def _resamples(n_resamples):
    _sequential.check_resamples(n_resamples)
    return int(n_resamples)


def _pvalue(stat, bound, null, R, rule=None, what="energy statistic"):
    if R == 0:
        return None, None
    tol = TIE_ULPS * np.finfo(np.float64).eps * bound
    p = float(pvalue_from_null(stat, null, exact=False, what=what, tol=tol))
    if rule is not None:
        return _sequential.final_pvalue(p, rule), None
    return p, pvalue_se(p, R, False)


def _bootstrap(R, cap, gen, draw, statistics, stat, bound, rule, *, n_threads=1, dask=None,
               work=1):
    """The bootstrap null: ``draw(gen, k)`` gives the next k replicates' samples and
    ``statistics(samples, n_threads, copy)`` their statistics in draw order (the draws fill
    the Generator's stream in order, so the replicates are those of the full run however
    :func:`energystats._core._sequential.collect` batches them; ``copy=False``: the samples
    may be overwritten).  ``dask``: the threads of each Dask task, which then computes a
    batch (:func:`._dask.bootstrap`, ``work`` the units of one replicate); None: here."""
    tol = TIE_ULPS * np.finfo(np.float64).eps * bound
    if dask is not None:
        from ._dask import bootstrap

        return bootstrap(R, gen, draw, statistics, dask, stat, tol, rule, work)
    return _sequential.collect(R, cap, lambda r0, k: statistics(draw(gen, k), n_threads, False),
                               stat, tol, rule)


def _dask_threads(on_dask, n_threads, nt):
    """The threads of a Dask task (one unless ``n_threads`` is given), or None off Dask."""
    if not on_dask:
        return None
    return 1 if n_threads is None else nt


def _rule_fields(rule, stat):
    """The early-stopping fields of a result; no decision next to a statistic that is not
    finite (its p-value is NaN, with a warning): the replicates cannot be compared with it."""
    if rule is None:
        return {}
    return {"pvalue_method": rule.name,
            "decision": rule.decision if np.isfinite(stat) else None}


def _sorted_rows(Z, nt):
    """Sort every row of ``Z`` in place, rows shared between ``nt`` threads (NumPy's sort
    releases the GIL)."""
    if nt <= 1 or Z.shape[0] < 2 or Z.size < 100_000:
        Z.sort(axis=1)
        return Z
    parts = np.array_split(np.arange(Z.shape[0]), nt)
    with ThreadPoolExecutor(nt) as ex:
        list(ex.map(lambda ix: Z[ix[0]:ix[-1] + 1].sort(axis=1), [p for p in parts if p.size]))
    return Z


def _pow2_exponent(X):
    """An exponent e such that ``X * 2**-e`` is exact and its largest |value| lies in [1, 2)
    (e = 0 for all-zero data): the statistics are computed on that copy, so that neither
    squares nor sums overflow (|x| above about 1e154) or lose digits to subnormal numbers
    (|x| below about 1e-154), and X and X·c give the same result for every c > 0 up to the
    rounding of X·c.  Where that would push the smallest nonzero |value| below the normal
    range (data spanning more than about 1e300 between nonzero values) e is raised just
    enough to keep every value exact."""
    a = np.abs(X[np.isfinite(X)])
    a = a[a > 0]
    if a.size == 0:
        return 0
    e = int(np.frexp(a.max())[1]) - 1
    low = int(np.frexp(a.min())[1]) - 1   # a.min() >= 2**low
    return min(e, low + 1022) if e > 0 else e
