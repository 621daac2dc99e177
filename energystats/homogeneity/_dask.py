"""Homogeneity's tests and dispersion on the Dask backend: group sums and permutation nulls
as tile tasks (:mod:`energystats._core._dask`), finished by the threads backend's code.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._core import _dask_pair_sums
from .._core import _dask, _permutation
from .._core._frames import grouped_data
from .._core._grouped import dispersion_from_sums, rescale
from .._core._metrics import compiled_only
from .._core._validation import check_n_threads
from ._finish import (_disco_finish, _energy_gamma_finish, _energy_test_finish, _marginal_finish,
    _pooled_dvar_u)
from ._setup import _Setup


def _dask_test(st, units, stats, exact, kind, compute, extra=None):
    """A test on the Dask backend: the graph of its result (computed unless ``compute=False``).

    One permutation null per unit (a factor tested conditionally), each drawn
    from the Generator where the previous one left it, as the threads
    backend draws them.
    """
    Ms, nulls, gen, is_exact = [], [], st.gen, False
    for unit, stat in zip(units, stats):
        is_exact = _permutation.decide_exact(unit.cells, unit.k, unit.strata, st.R, exact)
        M, scale = _dask.lazy_group_sums(st.X, unit.cells, unit.k, st.metric, st.n_threads)
        batches = None
        if is_exact:
            batches = list(_permutation.enumerate_relabellings(unit.cells, unit.k, 4096, unit.strata))
        null = None
        if is_exact or st.R > 0:
            null, gen = _dask.lazy_permutation_null(
                st.X, st.metric, unit.cells, unit.k, unit.layout.sizes, stat, R=st.R, gen=gen,
                exact_batches=batches, strata=unit.strata, n_threads=st.n_threads)
        Ms.append(M)
        nulls.append(null)
    light = _Setup(**{**st.__dict__, "X": None})  # the graph carries no data
    return _dask.finish(_dask_finish, kind, light, units, stats, Ms, scale, nulls, is_exact, extra,
                           compute=compute)


def _dask_finish(kind, st, units, stats, Ms, scale, nulls, is_exact, extra):
    st = _Setup(**{**st.__dict__, "scale": scale})
    parts = []
    for stat, M, null in zip(stats, Ms, nulls):
        observed = stat([M[None]])[0]
        if null is None:
            null = np.empty((0,) + np.shape(observed))
        parts.append((stat, observed, null, [M]))
    if kind == "energy":
        stat, observed, null, obs_M = parts[0]
        return _energy_test_finish(st, units[0], stat, observed, null, is_exact, obs_M, "dask")
    if kind == "marginal":
        stat, observed, null, obs = parts[0]
        return _marginal_finish(st, stat.marginal, stat.factor_sums(obs[0][None]), observed, null,
                                is_exact, "dask", *extra)
    return _disco_finish(st, units, parts, is_exact, "dask")


def _dask_energy_asymptotic(st, unit, stat, compute):
    """:func:`_energy_test_asymptotic` on the Dask backend: the group sums and the pooled
    distance variance as the backend's tile and row-range tasks."""
    M, scale = _dask.lazy_group_sums(st.X, unit.cells, unit.k, st.metric, st.n_threads)
    VU, sx, sy = _dask_pair_sums.lazy_dependence_sums(st.X, st.X, st.metric, st.n_threads)
    light = _Setup(**{**st.__dict__, "X": None})  # the graph carries no data
    return _dask.finish(_dask_energy_gamma_finish, light, unit, stat, M, scale, VU, sx, sy,
                           compute=compute)


def _dask_energy_gamma_finish(st, unit, stat, M, scale, VU, sx, sy):
    st = _Setup(**{**st.__dict__, "scale": scale})
    observed = stat([M[None]])[0]
    null = np.empty((0,) + np.shape(observed))
    dvar_u = _pooled_dvar_u(VU, sx, scale, unit.layout.n, st.metric)
    return _energy_gamma_finish(st, unit, stat, observed, null, [M], "dask", dvar_u)


def _dispersion_dask(X, labels, by, columns, dropna, numeric_only, met, method, n_threads, compute):
    """:func:`dispersion` on the Dask backend (:mod:`energystats._core._dask`)."""
    if met.kind != "builtin":
        raise TypeError(compiled_only("backend='dask'", met))
    if method not in ("auto", "pairwise"):
        raise ValueError(f"`method={method!r}` is not available with backend='dask' (its tiles are the "
                         "'pairwise' method); use method='auto'.")
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    if labels is None and by is None:
        raise TypeError("`labels` (or `by=` with a DataFrame) is required.")
    if not _dask.is_dask(X) and not _dask.is_dask(labels):
        # in memory already: the threads backend's input layer (labels aligned on the index, dropna)
        g = grouped_data(X, labels, by=by, columns=columns, dropna=dropna, numeric_only=numeric_only)
        data, lab, cols = _dask.as_dask_data(g.X, "X"), g.labels, g.columns
    else:
        data, lab, cols, _ = _dask.grouped_input((X,), labels, by, columns, None, dropna,
                                                    numeric_only, "dispersion")
    M, scale = _dask.lazy_group_sums(data, lab.codes, lab.k, met, nt)
    return _dask.finish(_dispersion_finish, M, scale, lab.sizes, list(lab.groups), cols,
                           compute=compute)


def _dispersion_finish(M, scale, sizes, groups, cols):
    return replace(rescale(dispersion_from_sums(M, sizes, groups), scale), columns=cols)
