"""Inputs and quadratic forms shared by the balancing weights and the balance table.

The weighted energy distance of two weighted samples with masses ``u`` and
``v`` (each summing to 1) on the points of one distance matrix ``D`` is
``E = 2 u'Dv - u'Du - v'Dv = -(u - v)' D (u - v)`` (Székely and Rizzo 2013,
"Energy statistics: A class of statistics based on distances"), and since
``u - v`` sums to zero, ``E = -(u - v)' C (u - v)`` with ``C = H D H`` the
double-centred matrix (``H = I - 11'/N``): ``-C`` is positive semidefinite
for the Euclidean distance, so every objective below is a convex quadratic
form.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .._core import _memory
from .._core._engine import pairwise_values
from .._core._formula import formula_design, is_formula
from .._core._input import sample_matrix
from .._core._metrics import resolve_metric
from .._core._validation import (align_labels, as_data, as_labels, check_n_threads,
                                  foreign_to_pandas, short_list)
from . import _design

__all__ = ["formula_inputs", "formula_fields", "outcome_column", "covariates_and_treatment",
           "check_base_weights", "check_weights", "standardise", "distance_matrix", "double_centre", "weighted_dcor", "ess",
           "check_budget", "peak_matrices", "STANDARDIZE"]

STANDARDIZE = ("studentized", "mahalanobis", None)


def formula_inputs(X, treatment, data, fname):
    """``(X, treatment, design)``: a formula ``X`` ('treatment ~ covariates', with ``data=``)
    as its right side's design (a DataFrame on the index of ``data``, factors expanded as a
    DataFrame ``X``'s) and its left side's column, with the :class:`FormulaDesign`; other
    ``X`` as given (and ``design`` None)."""
    if not is_formula(X):
        if data is not None:
            raise TypeError(f"`data` is for a formula `X` such as 'treat ~ age + C(race)'; got "
                            f"`X` of type {type(X).__name__}: pass the covariates or the formula.")
        if treatment is None:
            raise TypeError(f"`{fname}` needs `treatment` (or a formula 'treatment ~ covariates' "
                            "as `X`, with `data=`).")
        return X, treatment, None
    if treatment is not None:
        hint = " (pass the weights by keyword, `weights=`)" if fname == "balance_table" else ""
        raise TypeError(f"`X` is a formula ({X!r}), whose left side is the treatment; got "
                        f"`treatment` too: drop it{hint}.")
    form = formula_design(X, data, factors=_design.expand_factors, name="X", lhs="one")
    return form.rhs, form.lhs.iloc[:, 0], form


def formula_fields(form):
    """The result's fields that record a formula call: the formula and the data frame."""
    return {} if form is None else {"formula": form.formula, "data": form.data}


def outcome_column(outcome, data, weights):
    """``outcome`` as given, or, when it is a column name, that column of ``data`` (by default
    the data frame the weights were solved on, kept by a formula call); a name that is not a
    column is a KeyError naming ``outcome``."""
    if not isinstance(outcome, str):
        if data is not None:
            raise TypeError("`data` is for an `outcome` given as a column name; got `outcome` of "
                            f"type {type(outcome).__name__}.")
        return outcome
    where = "`data`"
    if data is None:
        data, where = getattr(weights, "data", None), "the data the weights were solved on"
        if data is None:
            raise TypeError(f"`outcome`={outcome!r} is a column name, but there is no data frame "
                            "to read it from: the weights were not solved from a formula with "
                            "`data=`. Pass `data=` (a DataFrame with that column, rows as the "
                            "weights'), or the outcome itself.")
    data = foreign_to_pandas(data, "data")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`data` must be a DataFrame; got {type(data).__name__}.")
    if outcome not in data.columns:
        raise KeyError(f"`outcome`: column {outcome!r} not found in {where}; it has "
                       f"{short_list(data.columns)}.")
    return data[outcome]


def covariates_and_treatment(X, treatment, name="treatment"):
    """``(Z, t, index, columns)``: the covariates as a float64 array and the treatment as a 1-D
    object (a column of ``X`` named by ``treatment`` is taken out of the covariates).  Factor
    columns of a DataFrame (category, bool, text) become 0/1 columns named ``col_level``
    (:func:`._design.expand_factors`, cobalt's rule: one column for a two-level factor, one
    per level otherwise); ``columns`` are the names after that."""
    if isinstance(treatment, str) and isinstance(X, pd.DataFrame):
        if treatment not in X.columns:
            raise KeyError(f"`{name}`: column {treatment!r} not found in `X`; it has "
                           f"{list(X.columns)[:8]}.")
        t = X[treatment]
        X = X.drop(columns=[treatment])
    else:
        t = align_labels(X, treatment, name) if isinstance(treatment, pd.Series) else treatment
    X, _ = _design.expand_factors(X)
    s = sample_matrix(X, dtype=np.float64)
    if s.X.shape[0] < 2:
        raise ValueError(f"`X` must have at least 2 rows; got {s.X.shape[0]}.")
    return s.X, t, s.index, s.columns


def check_weights(w, n, name):
    """``w`` as a float64 vector of length ``n``: finite, non-negative, not all zero."""
    if isinstance(w, pd.DataFrame):
        raise TypeError(f"`{name}` must be 1-D; got a DataFrame.")
    arr = np.asarray(w.to_numpy() if isinstance(w, pd.Series) else w)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be numeric; got an array of dtype {arr.dtype}.")
    arr = arr.astype(np.float64)
    if arr.ndim == 2 and 1 in arr.shape:  # a column or row vector
        arr = arr.ravel()
    if arr.ndim != 1 or arr.size != n:
        raise ValueError(f"`{name}` must have one entry per row ({n}); got shape {np.shape(w)}.")
    bad = ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"`{name}` must be finite; got {float(arr[i])!r} at position {i} "
                         f"({int(bad.sum())} such value(s)).")
    neg = arr < 0
    if neg.any():
        i = int(np.flatnonzero(neg)[0])
        raise ValueError(f"`{name}` must be non-negative; got {float(arr[i])!r} at position {i} "
                         f"({int(neg.sum())} negative value(s)).")
    if not (arr > 0).any():
        raise ValueError(f"`{name}` must not be all zero; got {n} zeros.")
    return arr


def check_base_weights(base_weights, n, codes=None, groups=None):
    """Base weights (None: all 1), checked; with ``codes`` every group must carry weight."""
    if base_weights is None:
        return np.ones(n)
    s = check_weights(base_weights, n, "base_weights")
    if codes is not None:
        tot = np.bincount(codes, weights=s, minlength=len(groups))
        zero = [groups[g] for g in np.flatnonzero(tot == 0)]
        if zero:
            raise ValueError(f"`base_weights` must not be all zero within a treatment group; they are "
                             f"in group(s) {short_list(zero)}.")
    return s


def treatment_groups(t, n, name="treatment"):
    """The treatment as :class:`Labels`, with at least 2 levels and 2 rows in each."""
    lab = as_labels(t, n, name)
    if lab.k < 2:
        raise ValueError(f"`{name}` must have at least 2 levels; got one ({lab.groups[0]!r}) for all "
                         f"{n} rows.")
    small = [(g, int(c)) for g, c in zip(lab.groups, lab.sizes) if c < 2]
    if small:
        raise ValueError(f"`{name}`: every level needs at least 2 rows; level(s) {short_list(small)} "
                         "(level, rows) have fewer.")
    return lab


def standardise(Z, standardize, s, extra=None):
    """Covariates (and ``extra`` rows, e.g. a target sample) in the units of ``standardize``,
    computed from the base-weighted sample ``Z``: 'studentized' divides each column by its
    standard deviation, 'mahalanobis' whitens by the Cholesky factor of the covariance matrix,
    None leaves them as they are."""
    if standardize not in STANDARDIZE:
        raise ValueError(f"`standardize` must be 'studentized', 'mahalanobis' or None; got "
                         f"{standardize!r}.")
    if standardize is None:
        return Z, extra
    # each column times a power of two first (exact, and the standardised result is the same),
    # so that the squares of the variance neither overflow (1e300) nor underflow (1e-300)
    shift = _design.column_shifts(Z)
    Z = np.ldexp(Z, -shift)
    extra = None if extra is None else np.ldexp(extra, -shift)
    p = s / s.sum()
    mean = p @ Z
    C = Z - mean
    cov = (C * p[:, None]).T @ C
    if standardize == "studentized":
        sd = np.sqrt(np.diag(cov))
        if not np.all(sd > 0):
            cols = [int(j) for j in np.flatnonzero(~(sd > 0))]
            raise ValueError(f"`X`: column(s) at position(s) {short_list(cols)} are constant and cannot be "
                             "studentized (they add nothing to the distances); drop them.")
        f = lambda A: (A - mean) / sd  # noqa: E731
    else:
        try:
            L = np.linalg.cholesky(cov)
        except np.linalg.LinAlgError:
            raise ValueError("`X`: the covariance matrix of the covariates is singular (a column is "
                             "constant or a linear combination of others), so "
                             "`standardize='mahalanobis'` is undefined; drop the redundant "
                             "columns or use 'studentized'.") from None
        f = lambda A: np.linalg.solve(L, (A - mean).T).T  # noqa: E731
    return np.ascontiguousarray(f(Z)), (None if extra is None else np.ascontiguousarray(f(extra)))


#: n×n float64 matrices at the peak of one call with n rows (or cells), the QP solver's own
#: included: the growth of the resident memory measured at n = 3 000, d = 10 (and on 3 000
#: cells of n = 40 000), rounded up
PEAK_MATRICES = {("balancing", "osqp"): 8, ("balancing", "clarabel"): 11,
                 ("independence", "osqp"): 12, ("independence", "clarabel"): 15}


def peak_matrices(what, solver):
    """The n×n float64 matrices that :func:`check_budget` counts for ``what`` and ``solver``
    ('auto' counts as OSQP, its choice where the matrices fit; the first-order solver of the
    balancing weights holds none)."""
    if solver == "firstorder" and what == "balancing":
        return 0
    return PEAK_MATRICES[(what, "osqp" if solver in ("auto", "firstorder") else solver)]


def check_budget(n, matrices, memory_budget, what, cells=False):
    """A MemoryError naming the need, the budget and the remedy when ``matrices`` n×n float64
    arrays exceed ``memory_budget`` (bytes); ``cells``: n counts cells, not rows."""
    if isinstance(memory_budget, bool) or not isinstance(memory_budget, (int, float, np.integer,
                                                                          np.floating)) \
            or not memory_budget > 0:
        raise ValueError(f"`memory_budget` must be a number of bytes > 0; got {memory_budget!r}.")
    need = 8.0 * n * n * matrices
    if need > memory_budget:
        unit = "cells" if cells else "rows"
        remedy = ("pass a smaller `cells`" if cells else
                  "pass `cells=K` (for instance 1000) to solve it on K k-means cells per treatment "
                  "level, with weights constant within a cell, in O(K²) memory (the guide page "
                  "'Balancing weights' measures what this costs)"
                  + (", or `solver='firstorder'` (or 'auto'), the exact programme in O(n) "
                     "memory" if what == "energy_balancing_weights" else ""))
        raise MemoryError(
            f"{what} needs about {matrices} {n}×{n} float64 matrices at its peak ({n} {unit}; "
            f"its own and the QP solver's), about {_memory.format_bytes(need)}, above "
            f"`memory_budget` = "
            f"{_memory.format_bytes(memory_budget)}. The quadratic programme has one variable per "
            f"{unit[:-1]} and needs all their pairwise distances: raise `memory_budget` if the "
            f"memory is there, or {remedy}.")
    _memory.check_fits(need, f"{what} ({matrices} {n}×{n} matrices)")


def distance_matrix(Z, n_threads=None):
    """Euclidean distances of the rows of ``Z`` (float64), through the package's kernels."""
    return pairwise_values(Z, Z, resolve_metric("energy", 1.0), check_n_threads(n_threads))


def double_centre(D):
    """``H D H`` in place (``H = I - 11'/N``), returned."""
    r = D.mean(axis=0)
    D -= r[None, :]
    D -= r[:, None]
    D += r.mean()
    return D


def weighted_dcor(Da, Db, w):
    """Weighted distance correlation (V-statistic, masses ``w / sum(w)``, double centring by the
    weighted means) of the two samples whose distance matrices are ``Da`` and ``Db``."""
    p = w / w.sum()

    def centre(D):
        r = D @ p
        return D - r[None, :] - r[:, None] + p @ r

    A, B = centre(Da), centre(Db)
    cov = p @ (A * B) @ p
    va, vb = p @ (A * A) @ p, p @ (B * B) @ p
    if va <= 0 or vb <= 0:
        return 0.0
    return float(np.sqrt(max(cov, 0.0) / np.sqrt(va * vb)))


def ess(w):
    """Kish's effective sample size ``(sum w)^2 / sum w^2``."""
    return float(w.sum() ** 2 / (w @ w))


def as_treatment_values(t, n, name="treatment"):
    """A continuous treatment as an (n, 1) float64 array."""
    arr, _ = as_data(t, name, dtype=np.float64)
    if arr.shape != (n, 1):
        raise ValueError(f"`{name}` must be 1-D with one entry per row ({n}); got shape {arr.shape}.")
    if np.ptp(arr) == 0:
        raise ValueError(f"`{name}` is constant ({arr[0, 0]!r} for all {n} rows); there is no "
                         "treatment variation to balance.")
    return arr
