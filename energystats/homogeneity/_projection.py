r"""The energy test on random projections (``energy_test(method='projection')``).

Baringhaus and Franz (2004): for u uniform on the unit sphere of R^d,
E_u |u'(x − y)| = ‖x − y‖ / c_d with c_d = √π Γ((d+1)/2) / Γ(d/2).  So every group sum of the
energy statistic (ρ = ‖x − y‖) is c_d times the mean over directions of the same sum of the
projected data, and the statistic is estimated without bias by c_d times the mean over K
random directions of the one-dimensional statistic — each O(n log n) by sorting, against the
O(n²·d) of the pairwise sums.  The test is a permutation test of that estimate, conditional on
the directions: the same K directions for the observed labels and every relabelling, so its
level is exact whatever K (the directions are drawn first from ``rng``, then the relabellings).

Driver: the directions in chunks sized to the memory budget; each chunk's projections are
sorted once, and one compiled pass per (relabelling, projection) sums the k×k group sums
(:func:`energystats._lib._sorted1d.projected_group_sums`).
"""
from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

from .._core import _interrupt, _progress
from .._core._projections import (DEFAULT_PROJECTIONS, check_n_projections, directions, project,
                                  sorted_rows, sphere_constant)
from .._lib import _sorted1d
from ._finish import _energy_test_finish

__all__ = ["check_projection_options", "projection_test", "DEFAULT_PROJECTIONS"]


def check_projection_options(n_projections, st, exponent, estimator, pvalue_method, exact):
    """The options ``method='projection'`` takes (each refusal names the argument)."""
    check_n_projections(n_projections)
    met = st.metric
    if met.kind != "builtin" or met.name != "energy" or float(exponent) != 1.0:
        raise ValueError("`method='projection'` needs metric='energy' with exponent=1 (the "
                         "identity of Baringhaus and Franz and the sorted one-dimensional sums "
                         "hold for ρ = ‖x − y‖ only).")
    if st.dask:
        raise ValueError("`method='projection'` runs on this machine's threads; it does not take "
                         "backend='dask' (its O(K·n log n) cost rarely needs a cluster).")
    for bad, text in ((st.strata is not None, "`strata`"), (estimator != "V", "`estimator='U'`"),
                      (pvalue_method != "full", f"`pvalue_method={pvalue_method!r}`"),
                      (exact is True, "`exact=True`")):
        if bad:
            raise ValueError(f"`method='projection'` does not take {text}: it is a permutation "
                             "test of the V statistic with random relabellings.")
    if st.labs[0].k > 255:
        raise ValueError(f"`method='projection'` takes at most 255 groups; got {st.labs[0].k}.")


def projection_test(st, unit, stat, n_projections, progress):
    """The :class:`EnergyTestResult` of the projection test (``st`` from ``_prepare``);
    ``progress`` as :func:`energystats.energy_test` takes it (a bar over the directions)."""
    X = np.ascontiguousarray(st.X, dtype=np.float64)
    n, d = X.shape
    lab = st.labs[0]
    k = lab.k
    gen = st.gen
    K = 1 if d == 1 else int(n_projections)     # in 1-D every projection is the data
    U = directions(gen, K, d)
    R = st.R
    LT = np.empty((n, R + 1), dtype=np.uint8)     # one column per relabelling, 0 the observed
    LT[:, 0] = lab.codes
    for r in range(1, R + 1):
        LT[:, r] = lab.codes[gen.permutation(n)]
    B = R + 1
    per_direction = n * (8 + 8) * 3 + B * k * k * 8   # values, order, sorting copies, sums
    free = max(st.budget - LT.nbytes, per_direction)
    J = int(max(1, min(K, free // per_direction)))
    out = np.zeros((B, k, k))
    bar = _progress.progress_bar(K, progress, "projections", "proj")
    with bar or contextlib.nullcontext():
        for j0 in range(0, K, J):
            P = project(X, U[j0:j0 + J])
            V, order = sorted_rows(P, st.n_threads)
            del P
            acc = np.empty((V.shape[0], B, k, k))
            if _interrupt.call(_sorted1d.projected_group_sums, V, order, LT, k, acc, st.n_threads,
                               cancel=_sorted1d.cancel, reset=_sorted1d.reset):
                raise KeyboardInterrupt
            for j in range(acc.shape[0]):             # projections summed in their order
                out += acc[j]
            if bar is not None:
                bar.update(acc.shape[0])
    out *= sphere_constant(d) / K                 # estimates of the full-d group sums
    values = stat([out])
    obs_M = [out[0]]
    res = _energy_test_finish(st, unit, stat, float(values[0]), values[1:], False, obs_M,
                              "projection")
    return dataclasses.replace(res, n_projections=K, seed=st.seed)
