"""Setup of homogeneity's tests: the options checked once and the data (samples or grouped
data with labels, ``by``, strata) read by the input layer
(:func:`energystats._core._input.grouped_input`), for the threads backend and for Dask
(:class:`_Setup`).
"""
from __future__ import annotations

import numbers

from .._core import _dask, _engine, _group_sums, _sequential
from .._core._input import condensed_as_square, grouped_input
from .._core._group_sums import DEFAULT_MEMORY_BUDGET
from .._core._metrics import compiled_only, resolve_metric
from .._core._validation import as_square_matrix, check_n_threads, seeded_rng, short_list


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
    from .._core._validation import check_exact

    return check_exact(exact)


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
             strata=None, check_negative_type=True):
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    R = _sequential.check_resamples(n_resamples)
    gen, seed = seeded_rng(rng)
    _check_method(method)
    budget = _check_budget(memory_budget)
    nt = check_n_threads(n_threads)
    _check_exact(exact)
    if met.kind == "precomputed" and len(samples) == 1:  # a condensed vector: n points, not pairs
        samples = (condensed_as_square(samples[0]),)
    X, labs, names, cols, strata_lab, strata_name = grouped_input(
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
                 backend, compute, allow_factors=False, check_negative_type=True):
    """:func:`_prepare` or, for the Dask backend, :func:`_prepare_dask`."""
    if not _dask.use_dask(backend, compute, samples + (labels, strata)):
        return _prepare(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                        n_resamples, rng, method, memory_budget, n_threads, exact, fname,
                        allow_factors=allow_factors, strata=strata,
                        check_negative_type=check_negative_type)
    return _prepare_dask(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                         n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname,
                         strata, allow_factors, check_negative_type=check_negative_type)


def _prepare_dask(samples, labels, by, columns, dropna, numeric_only, metric, exponent, sigma,
                  n_resamples, rng, method, memory_budget, progress, n_threads, exact, fname, strata,
                  allow_factors=False, check_negative_type=True):
    """:func:`_prepare` for the Dask backend: the data stay lazy (:mod:`energystats._core._dask`)."""
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    if met.kind != "builtin":
        raise TypeError(compiled_only("backend='dask'", met))
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
        X, labs, names, cols, strata_lab, _ = grouped_input(samples, labels, by, columns, dropna,
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
