"""Input of homogeneity's tests: samples or grouped data (labels, ``by``, strata) checked
and converted once, for the threads backend and for Dask (:class:`_Setup`).
"""
from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .._core import _dask, _engine, _group_sums, _sequential
from .._core._frames import grouped_data, match_columns, select_frame
from .._core._group_sums import DEFAULT_MEMORY_BUDGET
from .._core._metrics import resolve_metric
from .._core._validation import (Labels, align_labels, as_data, as_labels, as_square_matrix,
    check_n_threads, seeded_rng, short_list)


# -- input handling ----------------------------------------------------------

def _check_budget(memory_budget):
    if (not isinstance(memory_budget, numbers.Real) or isinstance(memory_budget, bool)
            or not memory_budget > 0):
        raise ValueError(f"`memory_budget` must be a positive number of bytes; got {memory_budget!r}.")
    return float(memory_budget)


def _check_method(method):
    if method not in ("auto", "sorted", "pairwise", "streamed"):
        raise ValueError(f"`method` must be 'auto', 'sorted', 'pairwise' or 'streamed'; got {method!r}.")
    return method


def _check_exact(exact):
    if exact not in (None, True, False):
        raise ValueError(f"`exact` must be None, True or False; got {exact!r}.")
    return exact


def _samples_data(samples, name):
    """Stack several samples into one array with group codes 0..k-1 (and the columns used)."""
    samples, cols = match_columns(samples, [f"samples[{i}]" for i in range(len(samples))])
    arrays = []
    for i, s in enumerate(samples):
        arr, _ = as_data(s, f"samples[{i}]")
        arrays.append(arr)
    d = {a.shape[1] for a in arrays}
    if len(d) > 1:
        dims = [a.shape[1] for a in arrays]
        raise ValueError(f"all samples must have the same number of features; got {dims}.")
    dtype = np.float32 if all(a.dtype == np.float32 for a in arrays) else np.float64
    X = np.ascontiguousarray(np.concatenate([a.astype(dtype, copy=False) for a in arrays]))
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.intp)
    codes = np.repeat(np.arange(len(arrays), dtype=np.intp), sizes)
    return X, Labels(codes, list(range(len(arrays))), sizes), cols


def _factor_labels(labels, n):
    """A list of :class:`Labels`, one per factor, from a DataFrame of factors."""
    return [as_labels(labels[c], n, f"labels[{c!r}]") for c in labels.columns], list(labels.columns)


def _grouped_input(samples, labels, by, columns, dropna, numeric_only, fname, allow_factors=False):
    """Resolve the call forms into (X, [Labels per factor], factor names, columns used)."""
    if not samples:
        raise TypeError(f"`{fname}` needs data: several samples, `X, labels=` or `df, by=`.")
    if labels is not None or by is not None:
        if len(samples) != 1:
            raise TypeError(f"with `labels=` or `by=`, pass the data as one argument; got {len(samples)}.")
        X = samples[0]
        if allow_factors and isinstance(labels, pd.DataFrame) and by is None:
            if labels.shape[1] == 1:
                labels = labels.iloc[:, 0]
            else:
                X, cols, _ = select_frame(X, columns, "X", numeric_only)
                labels = align_labels(X, labels)
                if dropna:
                    raise TypeError("`dropna=True` is not available with a DataFrame of factors as "
                                    "`labels`; drop the rows first, or use `df, by=[...]`.")
                arr, _ = as_data(X, "X")
                labs, names = _factor_labels(labels, arr.shape[0])
                return arr, labs, names, cols
        multi = isinstance(by, (list, tuple)) and len(by) > 1
        if multi and not allow_factors:
            raise ValueError(f"`{fname}` takes a single grouping column; got `by={list(by)!r}` "
                             "(use `disco` for several factors).")
        if isinstance(by, (list, tuple)) and len(by) == 1:
            by = by[0]
        data = grouped_data(X, labels, by=by, columns=columns, dropna=dropna,
                            numeric_only=numeric_only)
        if multi:
            # grouped_data has encoded each row's tuple of factor levels; split it.
            names = list(by)
            labs = []
            for f, col in enumerate(names):
                levels = np.array([g[f] for g in data.labels.groups], dtype=object)
                labs.append(as_labels(levels[data.labels.codes], data.X.shape[0], f"by[{col!r}]"))
            return data.X, labs, names, data.columns
        name = by if by is not None else (labels.name if isinstance(labels, pd.Series) else None)
        return data.X, [data.labels], [name], data.columns
    if columns is not None:
        raise TypeError("`columns` needs a DataFrame with `by=`.")
    if len(samples) < 2:
        raise ValueError(f"`{fname}` needs at least two samples (or `X, labels=` / `df, by=`); "
                         "got 1 sample.")
    X, lab, cols = _samples_data(samples, "samples")
    return X, [lab], [None], cols


def _strata_input(samples, labels, by, columns, dropna, numeric_only, fname, allow_factors, strata):
    """The call forms with ``strata=``: (X, [Labels per factor], names, columns, strata Labels or
    None, strata name)."""
    if strata is None:
        return (*_grouped_input(samples, labels, by, columns, dropna, numeric_only, fname,
                                allow_factors), None, None)
    if by is not None:
        X = samples[0] if len(samples) == 1 else None
        if not isinstance(X, pd.DataFrame):
            raise TypeError("`by=` needs the data as one DataFrame.")
        by_cols = list(by) if isinstance(by, (list, tuple)) else [by]
        if isinstance(strata, str):
            if strata not in X.columns:
                raise KeyError(f"`strata`: column {strata!r} not found in `X`; it has "
                               f"{short_list(X.columns)}.")
            if strata in by_cols:
                raise ValueError(f"`strata` {strata!r} is also a factor in `by`.")
            scol = strata
        else:
            scol = "__strata__"
            while scol in X.columns:
                scol += "_"
            values = align_labels(X, strata, "strata")
            if len(values) != len(X):
                raise ValueError(f"`strata` must have one entry per row of `X` ({len(X)}); "
                                 f"got {len(values)}.")
            X = X.assign(**{scol: np.asarray(values, dtype=object)})
        Xa, labs, names, cols = _grouped_input((X,), None, by_cols + [scol], columns, dropna,
                                               numeric_only, fname, True)
        return Xa, labs[:-1], names[:-1], cols, labs[-1], strata if isinstance(strata, str) else None
    if isinstance(strata, str):
        if labels is None or len(samples) != 1 or not isinstance(samples[0], pd.DataFrame):
            raise TypeError("`strata` as a column name needs a DataFrame `X` with `by=` or `labels=`.")
        X = samples[0]
        if strata not in X.columns:
            raise KeyError(f"`strata`: column {strata!r} not found in `X`; it has {short_list(X.columns)}.")
        values = X[strata]
        if columns is None:
            columns = [c for c in X.columns if c != strata]
        samples = (X,)
    else:
        values = strata
    if dropna:
        raise TypeError("`dropna=True` with `strata` needs the `df, by=` form (so that the same rows "
                        "are dropped from the data, the groups and the strata).")
    Xa, labs, names, cols = _grouped_input(samples, labels, by, columns, dropna, numeric_only, fname,
                                           allow_factors)
    if labels is not None and len(samples) == 1:
        values = align_labels(samples[0], values, "strata")
    n = Xa.shape[0]
    if isinstance(values, str) or np.ndim(values) != 1 or len(values) != n:
        raise ValueError(f"`strata` must be a column name or have one entry per row ({n}); got "
                         f"{type(values).__name__} of shape {np.shape(values)}.")
    return (Xa, labs, names, cols, as_labels(values, n, "strata"),
            strata if isinstance(strata, str) else None)


def _check_groups(labs, names, fname):
    n = int(labs[0].sizes.sum())
    for lab, name in zip(labs, names):
        what = "groups" if name is None else f"groups of {name!r}"
        if lab.k < 2:
            raise ValueError(f"need at least 2 {what}; got {lab.k} ({short_list(lab.groups)}).")


class _Setup:
    """Everything a test needs once the input is checked (see :func:`_prepare`)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def engine(self, k, sizes, share=1, D=None):
        return _group_sums.build_engine(self.X, k, sizes, self.metric, self.n_threads,
                                         method=self.method, memory_budget=self.budget,
                                         share=share, D=D)


def _prepare(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
             n_resamples, rng, method, memory_budget, n_threads, exact, fname, allow_factors=False,
             strata=None):
    met = resolve_metric(metric, exponent, sigma)
    R = _sequential.check_resamples(n_resamples)
    gen, seed = seeded_rng(rng)
    _check_method(method)
    budget = _check_budget(memory_budget)
    nt = check_n_threads(n_threads)
    _check_exact(exact)
    X, labs, names, cols, strata_lab, strata_name = _strata_input(
        samples, labels, by, columns, dropna, numeric_only, fname, allow_factors, strata)
    if met.kind == "precomputed":
        if labels is None:
            raise TypeError("metric='precomputed' needs the n×n matrix as `X` and `labels=`.")
        X = as_square_matrix(X, "X")
    # working units: no squared distance can overflow or underflow; converted back at the end
    X, met, scale = _engine.normalise(met, X)
    _check_groups(labs, names, fname)
    return _Setup(X=X, labs=labs, names=names, cols=cols, strata=strata_lab, strata_name=strata_name,
                  metric=met, n_threads=nt, method=method, budget=budget, R=R, gen=gen, seed=seed,
                  scale=scale, exact=exact, user_metric=(metric, exponent, sigma), dask=False)


def _prepare_any(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                 n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname, strata,
                 backend, compute, allow_factors=False):
    """:func:`_prepare` or, for the Dask backend, :func:`_prepare_dask`."""
    if not _dask.use_dask(backend, compute, samples + (labels, strata)):
        return _prepare(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                        n_resamples, rng, method, memory_budget, n_threads, exact, fname,
                        allow_factors=allow_factors, strata=strata)
    return _prepare_dask(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                         n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname,
                         strata, allow_factors)


def _prepare_dask(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                  n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname, strata,
                  allow_factors=False):
    """:func:`_prepare` for the Dask backend: the data stay lazy (:mod:`energystats._core._dask`)."""
    met = resolve_metric(metric, exponent, sigma)
    if met.kind != "builtin":
        raise TypeError(f"backend='dask' needs a built-in metric ('energy', 'laplacian', 'gaussian'); "
                        f"got {met.name!r}.")
    R = _sequential.check_resamples(n_resamples)
    gen, seed = seeded_rng(rng)
    _check_method(method)
    _check_budget(memory_budget)
    _dask.check_dask_options(method, memory_budget, DEFAULT_MEMORY_BUDGET, progress)
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    _check_exact(exact)
    if not any(_dask.is_dask(v) for v in samples + (labels, strata)):
        # in memory already: the threads backend's input layer (columns matched by name, labels
        # aligned on the index, dropna), then the arrays go to Dask
        X, labs, names, cols, strata_lab, _ = _strata_input(samples, labels, by, columns, dropna,
                                                           numeric_only, fname, allow_factors, strata)
        data = _dask.as_dask_data(X, "X")
    else:
        data, found, cols, strata_lab = _dask.grouped_input(samples, labels, by, columns, strata,
                                                               dropna, numeric_only, fname, factors=True)
        labs, names = [f[0] for f in found], [f[1] for f in found]
        if len(labs) > 1 and not allow_factors:
            raise ValueError(f"`{fname}` takes a single grouping column; got `by={list(by)!r}` "
                             "(use `disco` for several factors).")
        if len(labs) == 1 and isinstance(by, str):
            names = [by]
    _check_groups(labs, names, fname)
    return _Setup(X=data, labs=labs, names=names, cols=cols, strata=strata_lab,
                  strata_name=strata if isinstance(strata, str) else None, metric=met, n_threads=nt,
                  method=method, budget=None, R=R, gen=gen, seed=seed, scale=None, exact=exact,
                  user_metric=(metric, exponent, sigma), dask=True)
