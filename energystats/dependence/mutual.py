"""The test of mutual independence of several variables (:func:`mutual_independence_test`).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core import _dask, _sequential
from .._core._input import variable
from .._core._pair_sums import _constancy
from ._centring import _squared_distances
from ._result import _ratio

__all__ = ["mutual_independence_test", "MutualIndependenceTestResult"]


# -- mutual independence ------------------------------------------------------------

@notebook_display
@dataclass(frozen=True)
class MutualIndependenceTestResult:
    r"""Result of :func:`mutual_independence_test`.

    Attributes
    ----------
    statistic : float
        :math:`\sum_{k=1}^{d-1} R^*_n(X_k, [X_{k+1}, \dots, X_d])`.
    pvalue : float or None
    null_distribution : ndarray
        The statistic of data sets with every variable's rows permuted independently.
    estimates : ndarray, shape (d - 1,)
        The terms :math:`R^*_n(X_k, [X_{k+1}, \dots, X_d])`.
    names : list
        The variables (column names, or ``'x0'``, ``'x1'``, …).
    n_resamples : int
    pvalue_se : float or None
    seed : int or None
    pvalue_method : str
        'full', 'sequential' or 'decision'; with the last two
        ``n_resamples`` counts the replicates used (``pvalue_se`` None).
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    estimates: np.ndarray
    names: list
    n_resamples: int
    pvalue_se: float | None = None
    seed: int | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """One row per term R*(X_k, rest) and a row with the sum and its p-value."""
        idx = [f"R*({a}, {'+'.join(map(str, self.names[i + 1:]))})" for i, a in enumerate(self.names[:-1])]
        rows = pd.DataFrame({"estimate": list(self.estimates) + [self.statistic],
                             "pvalue": [np.nan] * len(idx) + [self.pvalue],
                             "pvalue_se": [np.nan] * len(idx) + [self.pvalue_se]},
                            index=pd.Index(idx + ["sum"], name="term"))
        return rows


def _u_centred_fast(a):
    """U-centred matrix (in place, no argument checks): the replicate loop's version."""
    n = a.shape[0]
    r = a.sum(axis=1)
    a -= r[:, None] / (n - 2)
    a -= r[None, :] / (n - 2)
    a += r.sum() / ((n - 1) * (n - 2))
    np.fill_diagonal(a, 0.0)
    return a


def _bcdcor_from_sq(qa, qb, exponent):
    power = np.sqrt if exponent == 1 else (lambda q: q ** (exponent / 2))
    A, B = _u_centred_fast(power(qa)), _u_centred_fast(power(qb))
    # zero diagonals: the full dot products are the sums over i != j; not BLAS, whose threads
    # split the sum (the bits would depend on the BLAS threads: a Dask worker runs one)
    ab, aa, bb = (float(np.einsum("ij,ij->", u, v)) for u, v in ((A, B), (A, A), (B, B)))
    return _ratio(ab, aa, bb)


def mutual_independence_test(*variables, data=None, n_resamples=999, exponent=1.0, rng=None,
                             pvalue_method="full", sequential_h=10, alpha=0.05, backend=None,
                             compute=True):
    r"""Permutation test of mutual independence of d ≥ 2 variables (Székely and Rizzo).

    Parameters
    ----------
    *variables : array_like, DataFrame, or column name(s) with ``data``
        Either one 2-D array or DataFrame whose columns are the variables (as
        R ``energy``'s ``mutualIndep.test``), or several variables (each 1-D
        or 2-D, the same number of rows).
    data : DataFrame, optional
        With column names as variables.
    n_resamples : int, default 999
    exponent : float, default 1.0
        Exponent of the Euclidean distance, 0 < exponent < 2.
    rng : None, int or numpy.random.Generator
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop permuting early, as in :func:`independence_test`.
    backend : {None, 'threads', 'dask'}, default None
        'dask' (chosen for Dask arrays): one task forms the variables'
        distance matrices (8 d n² bytes, held by every worker that runs a
        batch) and each batch of replicates is a task; the permutations are
        drawn from ``rng`` as on threads, so the null distribution and the
        p-value are the same bits, whatever the workers and the chunking.
        Dask input is taken as dask arrays (one 2-D array, a variable per
        column, or several); ``pvalue_method`` must be 'full'.
    compute : bool, default True
        With the Dask backend, False returns a Delayed of the result.

    Returns
    -------
    MutualIndependenceTestResult

    Notes
    -----
    The statistic is :math:`\sum_{k=1}^{d-1} R^*_n(X_k, [X_{k+1}, \dots, X_d])`,
    bias-corrected distance correlations of each variable with the ones after
    it; it is 0 in the population exactly when the variables are mutually
    independent.  A replicate permutes the rows of every variable
    independently and recomputes the whole statistic, so it is the statistic
    of one data set drawn from the permutation null.  (R's
    ``mutualIndep.test`` permutes, for each term, only :math:`X_k` against the
    unpermuted rest, with one permutation for all terms, and counts strictly
    greater values.)  n×n matrices: O(d n²) time per replicate.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=200), rng.normal(size=200)
    >>> c = np.sign(a * b) * rng.exponential(size=200)   # each pair independent, the three not
    >>> [round(es.independence_test(u, v, rng=1).pvalue, 2) for u, v in ((a, b), (a, c), (b, c))]
    [0.22, 0.07, 0.22]
    >>> es.mutual_independence_test(a, b, c, n_resamples=199, rng=1).pvalue
    0.005
    """
    from .._core._validation import seeded_rng

    R = _sequential.check_resamples(n_resamples)
    dask = _dask.use_dask(backend, compute, variables + (data,))
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha, dask=dask)
    gen, seed = seeded_rng(rng)
    from .._core._metrics import _check_exponent

    exponent = _check_exponent(exponent)  # the one validator: '1' and True are refused
    if dask:
        return _mutual_dask(variables, data, exponent, R, gen, seed, compute)
    blocks, names = _mutual_variables(variables, data)
    sq, est = _mutual_prepare(blocks, names, exponent)
    n, d = sq[0].shape[0], len(sq)
    if R == 0:
        return _mutual_finish(est, names, n, None, R, seed)
    tol = _mutual_tol(d, n)

    def replicates(r0, m):  # in draw order: every variable's rows permuted, one after another
        perms, _ = _mutual_draw(gen, n, d, m, advance=True)
        return _mutual_replicates(sq, perms, exponent)

    # batches of at most 2**22 indices of permutations (32 MiB): the values do not depend on them
    cap = int(max(1, min(R, 2**22 // (d * n))))
    null = _sequential.collect(R, cap, replicates, float(np.sum(est)), tol, rule)
    return _mutual_finish(est, names, n, null, R, seed, rule)


def _mutual_variables(variables, data):
    """The variables of :func:`mutual_independence_test` (threads input layer) and their names."""
    blocks, names = [], []
    if len(variables) == 1 and not (data is not None and isinstance(variables[0], str)):
        X, cols, _ = variable(variables[0], data, "variables[0]")
        if X.shape[1] < 2:
            raise ValueError("one variable given: pass a 2-D array (one column per variable) or "
                             "several variables.")
        blocks = [X[:, [j]] for j in range(X.shape[1])]
        names = cols if cols is not None else [f"x{j}" for j in range(X.shape[1])]
    else:
        for j, v in enumerate(variables):
            X, cols, _ = variable(v, data, f"variables[{j}]")
            blocks.append(X)
            names.append(v if isinstance(v, str) else ("+".join(map(str, cols)) if cols else f"x{j}"))
    _mutual_shapes([b.shape[0] for b in blocks])
    return blocks, list(names)


def _mutual_shapes(rows):
    d = len(rows)
    if d < 2:
        raise ValueError(f"mutual independence needs at least 2 variables; got {d}.")
    if any(r != rows[0] for r in rows):
        raise ValueError(f"all variables must have the same number of rows; got {rows}.")
    if rows[0] < 4:
        raise ValueError(f"bias-corrected distance correlations need n >= 4; got n={rows[0]}.")


def _mutual_prepare(blocks, names, exponent, split=False):
    """``(sq, est)``: the variables' squared-distance matrices in common working units and the
    terms of the statistic.  ``split``: ``blocks`` is one 2-D array, a variable per column."""
    from .._core import _memory

    if split:
        blocks = [blocks[0][:, [j]] for j in range(blocks[0].shape[1])]
    n, d = blocks[0].shape[0], len(blocks)
    _memory.check_fits(8.0 * n * n * (d + 6), f"the {d} {n}×{n} distance matrices",
                       "Use a random subsample of the rows.")
    # working units: one power of two for all variables (the distances of the concatenated
    # variables must keep their relative scales; dCor is invariant to a common scale)
    centred = [np.asarray(b, dtype=np.float64) - np.asarray(b, dtype=np.float64).mean(axis=0) for b in blocks]
    for j, b in enumerate(blocks):
        if _constancy(np.asarray(b), False):  # from the data: a rounded mean leaves c ≠ 0
            raise ValueError(f"`variables`: variable {names[j]!r} is constant: its distance "
                             "correlations are undefined (0/0); leave it out.")
    e = math.frexp(max(float(np.max(np.abs(c))) for c in centred))[1]
    sq = [_squared_distances(np.ldexp(c, -e)) for c in centred]
    return sq, _mutual_statistic(sq, exponent)


def _mutual_statistic(mats, exponent):
    """The terms R*_n(X_k, [X_{k+1}, …, X_d]) from the variables' squared-distance matrices."""
    d, n = len(mats), mats[0].shape[0]
    tails = [None] * d
    acc = np.zeros((n, n))
    for k in range(d - 1, 0, -1):
        acc = acc + mats[k]
        tails[k] = acc
    return np.array([_bcdcor_from_sq(mats[k], tails[k + 1], exponent) for k in range(d - 1)])


def _mutual_tol(d, n):
    # each term is a ratio of U-products of magnitude <= 1: rounding of a few hundred eps
    return (d - 1) * 64 * n * np.finfo(float).eps


def _mutual_draw(gen, n, d, count, advance=False):
    """``(perms, gen)``: ``count`` replicates' permutations, shape (count, d, n), drawn as
    ``gen.permutation(n)`` for each variable in turn, replicate after replicate (on a copy of
    ``gen`` unless ``advance``)."""
    g = gen if advance else copy.deepcopy(gen)
    perms = np.empty((count, d, n), dtype=np.intp)
    for r in range(count):
        for k in range(d):
            perms[r, k] = g.permutation(n)
    return perms, g


def _mutual_replicates(sq, perms, exponent):
    """The statistic of each replicate: every variable's rows and columns permuted."""
    out = np.empty(perms.shape[0])
    for r in range(perms.shape[0]):
        out[r] = float(np.sum(_mutual_statistic([q[np.ix_(p, p)] for q, p in zip(sq, perms[r])],
                                                exponent)))
    return out


def _mutual_finish(est, names, n, null, R, seed, rule=None):
    from .._core._permutation import pvalue_from_null, pvalue_se

    obs = float(np.sum(est))
    if null is None:
        return MutualIndependenceTestResult(obs, None, np.empty(0), est, list(names), 0)
    tol = _mutual_tol(len(est) + 1, n)
    p = _sequential.final_pvalue(float(pvalue_from_null(obs, null, False, tol=tol)), rule)
    if rule is None:
        return MutualIndependenceTestResult(obs, p, null, est, list(names), R, pvalue_se(p, R, False),
                                            seed)
    return MutualIndependenceTestResult(obs, p, null, est, list(names), int(null.shape[0]), None, seed,
                                        rule.name, rule.decision)


#: elements of the permuted n×n matrices of one Dask task of the mutual test (about 0.2 s)
MUTUAL_TASK_WORK = 2e7


def _mutual_dask(variables, data, exponent, R, gen, seed, compute):
    """:func:`mutual_independence_test` on Dask: a task forms the matrices, then a task per
    batch of replicates, their permutations drawn as on threads (the same bits)."""
    import dask

    if not any(_dask.is_dask(v) for v in variables + (data,)):
        blocks, names = _mutual_variables(variables, data)  # in memory: the threads input layer
        V, split = [_dask.as_dask_data(b, str(nm)) for b, nm in zip(blocks, names)], False
    else:
        if data is not None:
            raise TypeError("`data=` (column names) is not available with Dask input; pass the "
                            "variables as Dask arrays.")
        V = [_dask.as_dask_data(v, f"variables[{j}]") for j, v in enumerate(variables)]
        split = len(V) == 1
        if split and V[0].d < 2:
            raise ValueError("one variable given: pass a 2-D array (one column per variable) or "
                             "several variables.")
        names = [f"x{j}" for j in range(V[0].d if split else len(V))]
        _mutual_shapes([V[0].n] * V[0].d if split else [v.n for v in V])
    n, d = V[0].n, len(names)
    prep = dask.delayed(_mutual_prepare, nout=2, pure=True)([_dask.lazy_whole(v) for v in V],
                                                           names, exponent, split)
    sq, est = prep
    null = None
    if R > 0:
        B = int(max(1, min(R, MUTUAL_TASK_WORK // (d * n * n))))
        batches = _dask.lazy_draws(gen, R, B, _mutual_draw, n, d)
        rep = dask.delayed(_mutual_replicates, pure=True)
        null = dask.delayed(np.concatenate, pure=True)([rep(sq, b, exponent) for b in batches])
    return _dask.finish(_mutual_finish, est, names, n, null, R, seed, compute=compute)
