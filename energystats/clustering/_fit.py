"""Input and fit of energy clustering, shared by the estimator and :func:`cluster_test`: the
arguments checked once (:func:`_clustering_iv`, the column-scale warning) and the fit driver
(:func:`_fit`: restarts on the threads or the Dask backend).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .._core import _engine
from .._core._grouped import dispersion_from_sums
from .._core._input import sample_matrix
from .._core._metrics import compiled_only, resolve_metric
from .._core._validation import (as_labels, check_int, check_n_threads, check_rng, is_int,
    refuse_sparse, short_list, warn)
from . import _engine as _ce

__all__ = ["ColumnScaleWarning"]


# -- validation ----------------------------------------------------------------

def _check_n_clusters(n_clusters, n_samples):
    if n_samples < 2:
        raise ValueError(f"clustering needs at least 2 samples to split; got n_samples={n_samples}.")
    if not is_int(n_clusters) or not 2 <= n_clusters <= n_samples:
        raise ValueError(f"`n_clusters` must be an integer in [2, n_samples={n_samples}]; "
                         f"got {n_clusters!r}.")
    return int(n_clusters)


class ColumnScaleWarning(UserWarning):
    """The columns of the data differ in scale by orders of magnitude (:data:`SCALE_RATIO`):
    the distances, and so the clusters, are set by the widest columns."""


#: columns whose standard deviations differ by at least this factor draw a ColumnScaleWarning
SCALE_RATIO = 1000.0

#: what a Python caller can do about it
SCALE_ADVICE = ("If the columns' units are not comparable, standardise them first, e.g. "
                "`X = (X - X.mean(axis=0)) / X.std(axis=0)` (on the command line: "
                "`energystats cluster --standardize`); if the scales are meant, silence this with "
                "`warnings.simplefilter('ignore', energystats.ColumnScaleWarning)`.")


def column_scale_message(A, names=None, advice=SCALE_ADVICE, name="X"):
    """None, or a message naming the widest and the narrowest column of ``A`` when their standard
    deviations (divisor n) differ by at least :data:`SCALE_RATIO`.

    Constant columns have no scale and are left out of the comparison.  ``names``: the column
    names (default: "column j", counted from 0).
    """
    if A.ndim != 2 or A.shape[1] < 2 or A.shape[0] < 2:
        return None
    # each column divided by its largest magnitude first: no overflow for any finite data
    top = np.max(np.abs(A), axis=0).astype(np.float64)
    top[top == 0] = 1.0
    sd = np.std(A / top, axis=0, dtype=np.float64) * top
    used = np.flatnonzero(sd > 0)
    if used.size < 2:
        return None
    hi, lo = used[np.argmax(sd[used])], used[np.argmin(sd[used])]
    ratio = sd[hi] / sd[lo]
    if not ratio >= SCALE_RATIO:
        return None

    def label(j):
        return f"column {names[j]!r}" if names is not None else f"column {j}"

    wide = [names[j] if names is not None else int(j) for j in used
            if sd[j] >= SCALE_RATIO * sd[lo]]
    return (f"`{name}`: the columns' scales differ by a factor of {ratio:.3g} (at least "
            f"{SCALE_RATIO:g}): {label(hi)} has standard deviation {sd[hi]:.3g}, {label(lo)} "
            f"{sd[lo]:.3g} (columns with {SCALE_RATIO:g} times its or more: {short_list(wide)}). "
            "The distances, and so the clusters, are then set almost entirely by the widest "
            f"columns. {advice}")


def _check_not_identical(A, precomputed):
    """All points the same (every distance 0): every partition has W = S = T = 0; an error."""
    n = A.shape[0]
    if precomputed:
        if not np.any(A):
            raise ValueError(f"every distance in `X` is 0 (metric='precomputed'): all {n} points "
                             "coincide, so there is nothing to cluster (every partition has "
                             "W = S = T = 0). Check the matrix.")
    elif not np.any(A != A[0]):
        raise ValueError(f"`X`: all {n} rows are identical (every distance is 0), so there is "
                         "nothing to cluster (every partition has W = S = T = 0). Check the data, "
                         "e.g. for a constant column chosen by mistake.")


def _reject_sparse_complex(X):
    refuse_sparse(X, "X")  # the shared message (as_data's)
    if isinstance(X, np.ndarray) and np.iscomplexobj(X):
        raise ValueError("Complex data not supported: `X` must be real; got dtype "
                         f"{X.dtype}.")


def _clustering_iv(X, n_clusters, metric, exponent, sigma, algorithm, init, n_init, max_iter,
                   random_state, n_threads, engine="auto", approximation=None, n_components=256,
                   backend=None, check_negative_type=True):
    """Validate once; returns a dict of resolved settings and the data."""
    from .._core import _dask

    if _dask.is_dask(X):
        raise TypeError("energy clustering holds the data in memory (a move needs every row): pass "
                        "a NumPy array or DataFrame (`x.compute()`); backend='dask' runs its passes "
                        "and restarts on the cluster.")
    if backend not in (None, "threads", "dask"):
        raise ValueError(f"`backend` must be None, 'threads' or 'dask'; got {backend!r}.")
    if backend == "dask":
        _dask.require_dask()
        if approximation is not None or engine == "matrix" or algorithm not in ("hartigan", "lloyd"):
            raise ValueError("backend='dask' runs the exact matrix-free engine (engine='streamed', "
                             "algorithm 'hartigan' or 'lloyd'); the Nyström approximation and the "
                             "n×n matrix run on this machine (backend=None).")
        engine = "streamed"
    _reject_sparse_complex(X)
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    if algorithm not in _ce.ALGORITHMS:
        raise ValueError(f"`algorithm` must be one of {list(_ce.ALGORITHMS)}; got {algorithm!r}.")
    A, index = sample_matrix(X, precomputed=met.kind == "precomputed")[:2]
    n = A.shape[0]
    k = _check_n_clusters(n_clusters, n)
    _check_not_identical(A, met.kind == "precomputed")
    if met.kind == "builtin":
        names = [str(c) for c in X.columns] if isinstance(X, pd.DataFrame) else None
        msg = column_scale_message(A, names)
        if msg is not None:
            warn(msg, ColumnScaleWarning)
    if algorithm == "exact-1d" and not (met.kind == "builtin" and met.is_energy1 and A.shape[1] == 1):
        raise ValueError("`algorithm='exact-1d'` needs 1-D data with metric='energy' and exponent=1; "
                         f"got {A.shape[1] if met.kind != 'precomputed' else 'precomputed'} "
                         f"feature(s), metric={met.name!r}.")
    if engine not in ("auto", "matrix", "streamed"):
        raise ValueError(f"`engine` must be 'auto', 'matrix' or 'streamed'; got {engine!r}.")
    if engine == "streamed" and met.kind != "builtin":
        raise ValueError(compiled_only("backend='dask'" if backend == "dask" else "`engine='streamed'`",
                                       met))
    if engine == "streamed" and algorithm not in ("hartigan", "lloyd"):
        raise ValueError(f"`engine='streamed'` runs algorithm 'hartigan' or 'lloyd'; got {algorithm!r}.")
    if approximation not in (None, "nystrom"):
        raise ValueError(f"`approximation` must be None or 'nystrom'; got {approximation!r}.")
    if approximation == "nystrom":
        if met.kind == "precomputed":
            raise ValueError("`approximation='nystrom'` needs the data (rho to the landmarks); "
                             "got metric='precomputed'.")
        if algorithm not in ("hartigan", "lloyd"):
            raise ValueError(f"`approximation='nystrom'` runs algorithm 'hartigan' or 'lloyd'; "
                             f"got {algorithm!r}.")
        if engine != "auto":
            raise ValueError(f"`engine={engine!r}` chooses how the exact Gram matrix is held; with "
                             "`approximation='nystrom'` leave `engine='auto'`.")
        n_comp = check_int(n_components, "n_components", 1)
    if algorithm == "exact-1d":
        eng = "sorted"
    elif approximation == "nystrom":
        eng = "nystrom"
    elif engine == "auto" and (met.kind != "builtin" or algorithm == "spectral"):
        eng = "matrix"
    else:
        eng = _ce.choose_engine(engine, n, A.shape[1])
    if isinstance(init, str):
        if init not in ("k-means++", "random"):
            raise ValueError(f"`init` must be 'k-means++', 'random' or an array of labels; got {init!r}.")
        init_v = init
    else:
        lab = as_labels(init, n, name="init")
        if lab.k != k:
            raise ValueError(f"`init` must use exactly n_clusters={k} labels; got {lab.k}.")
        init_v = lab.codes
    return dict(
        X=A, index=index, metric=met, k=k, algorithm=algorithm, init=init_v,
        n_init=check_int(n_init, "n_init", 1), max_iter=check_int(max_iter, "max_iter", 1),
        rng=check_rng(random_state), n_threads=check_n_threads(n_threads), engine=eng,
        n_components=n_comp if approximation == "nystrom" else None,
        backend="dask" if backend == "dask" else "threads",
        task_threads=1 if n_threads is None else check_n_threads(n_threads),
    )


def _exact_dispersion(X, labels, k, met, n_threads):
    """The exact W, S, T of a partition from the streamed k×k sums (O(n²·d), no n×n matrix)."""
    M = _engine.group_sum_matrix(X, labels, k, met, n_threads)
    return dispersion_from_sums(M, np.bincount(labels, minlength=k), list(range(k)))


def _fit(opts, lazy=False):
    """Driver: returns (labels, DispersionResult, n_iter).

    With ``lazy=True`` a Nyström fit returns None for the DispersionResult:
    its exact sums (:func:`_exact_dispersion`) are left to the caller.
    """
    X, met, k, nt = opts["X"], opts["metric"], opts["k"], opts["n_threads"]
    if opts["algorithm"] == "exact-1d":
        labels, _ = _ce.exact_1d(X[:, 0], k)
        labels = _ce.canonical_labels(labels, k)
        M = _engine.sorted_group_sums(X[:, 0], labels, k)
        n_iter = 1
    elif opts["engine"] == "nystrom":
        feats = _ce.NystromFeatures(X, met, opts["n_components"], opts["rng"], nt)
        if feats.rank < k:
            raise ValueError(f"`n_components`: the Nyström map of {opts['n_components']} landmark(s) has "
                             f"rank {feats.rank}, fewer than n_clusters={k} dimensions to separate the "
                             "clusters in; use more landmarks (the default is 256).")
        opts["nystrom"] = feats
        labels, n_iter = _ce.fit_features(feats.F, feats.g, k, opts["algorithm"], opts["init"],
                                          opts["n_init"], opts["max_iter"], opts["rng"], nt)
        del feats.F
        labels = _ce.canonical_labels(labels, k)
        if lazy:
            return labels, None, n_iter
        return labels, _exact_dispersion(X, labels, k, met, nt), n_iter  # the exact W
    elif opts["engine"] == "streamed" and opts.get("backend") == "dask":
        from .._core import _dask
        from . import _dask as _restarts

        tt = opts["task_threads"]  # threads per task: 1 unless n_threads was given
        labels = _restarts.lazy_fit_streamed(X, met, k, opts["algorithm"], opts["init"],
                                                    opts["n_init"], opts["max_iter"], opts["rng"],
                                                    tt)
        labels, n_iter = _dask.dask_compute(labels)[0]
        labels = _ce.canonical_labels(labels, k)
        # the exact W of the partition: the k×k sums as tiles on the cluster
        M, scale = _dask.dask_compute(*_dask.lazy_group_sums(_dask.as_dask_data(X), labels, k, met, tt))
        M = scale.apply(M)
    elif opts["engine"] == "streamed":
        labels, n_iter = _ce.fit_streamed(X, met, k, opts["algorithm"], opts["init"], opts["n_init"],
                                          opts["max_iter"], opts["rng"], nt)
        labels = _ce.canonical_labels(labels, k)
        M = _engine.group_sum_matrix(X, labels, k, met, nt)  # the exact W, streamed
    else:
        G = _ce.centred_gram(_ce.semimetric_matrix(X, met, nt), nt)
        labels, _, n_iter = _ce.fit_partition(G, k, opts["algorithm"], opts["init"], opts["n_init"],
                                              opts["max_iter"], opts["rng"], nt)
        labels = _ce.canonical_labels(labels, k)
        M = _ce.group_sums_from_gram(G, labels, k)
    sizes = np.bincount(labels, minlength=k)
    return labels, dispersion_from_sums(M, sizes, list(range(k))), n_iter
