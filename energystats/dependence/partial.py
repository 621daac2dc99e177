"""Partial distance covariance and correlation (Székely and Rizzo 2014) and their test
(:func:`partial_distance_correlation_test`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core import _dask, _dask_pair_sums, _sequential
from .._core._input import paired_indexes, variable
from .._core._metrics import compiled_only, resolve_metric
from .._core._validation import check_n_threads, warn
from ._centring import _u_centred, u_product
from ._products import _MatrixProducts, _permutation_pvalue

__all__ = ["partial_distance_covariance", "partial_distance_correlation",
           "partial_distance_correlation_test", "PartialDistanceTestResult"]


def _projection(A, C):
    """Projection of U-centred ``A`` on the orthogonal complement of U-centred ``C``."""
    cc = u_product(C, C)
    return A - (u_product(A, C) / cc) * C if cc > 0 else A


def _check_paired(x, y, z, data):
    """x, y and z are paired by row: pandas inputs with different indexes are refused."""
    paired_indexes(*[(variable(v, data, name)[2], name) for v, name in ((x, "x"), (y, "y"),
                                                                         (z, "z"))])


def _partial(x, y, z, data, exponent, metric, sigma, n_threads, check_negative_type=True):
    _check_paired(x, y, z, data)
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    nt = check_n_threads(n_threads)
    A, sx = _u_centred(x, "x", data, met, nt)
    n = A.shape[0]
    B, sy = _u_centred(y, "y", data, met, nt, n)
    C, _ = _u_centred(z, "z", data, met, nt, n)
    return _projection(A, C), _projection(B, C), sx, sy, u_product(A, A), u_product(B, B)


def partial_distance_covariance(x, y, z, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                                check_negative_type=True,
                                n_threads=None, backend=None, compute=True):
    r"""Partial distance covariance of x and y given z (R ``energy``'s ``pdcov``).

    :math:`(P_{z^\perp}(x) \cdot P_{z^\perp}(y))`, with :math:`P_{z^\perp}(x) =
    \tilde A - \frac{(\tilde A \cdot \tilde C)}{(\tilde C \cdot \tilde C)}\tilde C`
    the projection of the U-centred distance matrix of x on the complement of
    z's, and :math:`(U \cdot V)` :func:`u_product` (Székely and Rizzo 2014).
    Works on n×n matrices (8 n² bytes each, checked).  Parameters as in
    :func:`distance_stats`, with ``z`` like ``x``.  With ``backend='dask'``
    no n×n matrix is formed: the projections' products are expanded into
    the U-products of the pairs (x, y), (x, z), (y, z), each by the streamed
    passes as Dask tasks, :math:`(P_{z^\perp}(x) \cdot P_{z^\perp}(y)) =
    (\tilde A \cdot \tilde B) - (\tilde A \cdot \tilde C)(\tilde B \cdot
    \tilde C)/(\tilde C \cdot \tilde C)` (equal to the matrix path to
    rounding; for the correlation, a projection whose norm is below about
    5e-7 of the original's counts as 0, since the expansion loses the
    digits below that).

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> i = np.arange(1.0, 31)
    >>> x = np.column_stack([np.sin(i), np.cos(i**2), np.log(i)])
    >>> y = np.column_stack([i % 7 + 0.5 * np.sin(i), np.sqrt(i)])
    >>> z = np.column_stack([np.cos(3 * i), i / 10])
    >>> round(es.partial_distance_covariance(x, y, z), 9)
    0.164398557
    """
    if _dask.use_dask(backend, compute, (x, y, z)):
        return _partial_dask(x, y, z, data, exponent, metric, sigma, n_threads, "pdcov", compute,
                             check_negative_type=check_negative_type)
    Px, Py, sx, sy, _, _ = _partial(x, y, z, data, exponent, metric, sigma, n_threads,
                                    check_negative_type=check_negative_type)
    return sy.apply(sx.apply(u_product(Px, Py)))


def partial_distance_correlation(x, y, z, *, data=None, exponent=1.0, metric="energy", sigma=1.0,
                                 check_negative_type=True,
                                 n_threads=None, backend=None, compute=True):
    r"""Partial distance correlation of x and y given z (R ``energy``'s ``pdcor``).

    :math:`R^*(x, y; z) = \frac{(P_{z^\perp}(x) \cdot P_{z^\perp}(y))}
    {|P_{z^\perp}(x)|\,|P_{z^\perp}(y)|}` (Székely and Rizzo 2014), in
    [-1, 1].  When a projection is 0 (x or y a function of z in the sense of
    distances) the ratio is undefined: 0 is returned with a warning, as R
    ``energy`` ≥ 1.7-9 does.  Zero partial distance correlation does **not**
    characterise conditional independence of x and y given z; it measures
    the dependence left after removing the part of the distance matrices
    linearly explained by z's.  ``backend``, ``compute``: as in
    :func:`partial_distance_covariance`.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> i = np.arange(1.0, 31)
    >>> x = np.column_stack([np.sin(i), np.cos(i**2), np.log(i)])
    >>> y = np.column_stack([i % 7 + 0.5 * np.sin(i), np.sqrt(i)])
    >>> z = np.column_stack([np.cos(3 * i), i / 10])
    >>> round(es.partial_distance_correlation(x, y, z), 9)
    0.267913456
    """
    if _dask.use_dask(backend, compute, (x, y, z)):
        return _partial_dask(x, y, z, data, exponent, metric, sigma, n_threads, "pdcor", compute,
                             check_negative_type=check_negative_type)
    Px, Py, _, _, aa, bb = _partial(x, y, z, data, exponent, metric, sigma, n_threads,
                                    check_negative_type=check_negative_type)
    return _pdcor(Px, Py, aa, bb)


def _partial_inputs(x, y, z, data, exponent, metric, sigma, n_threads, check_negative_type=True):
    """The metric, threads per task and the three :class:`~energystats._core._dask.DaskData` of
    the partial statistics on Dask (metadata checked; nothing computed)."""
    met = resolve_metric(metric, exponent, sigma, check_negative_type=check_negative_type)
    if met.kind != "builtin":
        raise TypeError(compiled_only("backend='dask'", met))
    nt = 1 if n_threads is None else check_n_threads(n_threads)
    in_memory = not any(_dask.is_dask(v) for v in (x, y, z, data))
    if not in_memory and data is not None:
        raise TypeError("`data=` (column names) is not available with Dask input; pass the columns "
                        "as Dask arrays.")
    V = []
    if in_memory:
        _check_paired(x, y, z, data)
    for v, name in ((x, "x"), (y, "y"), (z, "z")):
        if in_memory:
            v = variable(v, data, name)[0]  # the threads input layer (column names)
        V.append(_dask.as_dask_data(v, name))
    n = V[0].n
    for d, name in zip(V[1:], ("y", "z")):
        if d.n != n:
            raise ValueError(f"`x`, `y` and `z` must have the same number of rows; `{name}` has {d.n}, "
                             f"expected {n}.")
    if n < 4:
        raise ValueError(f"U-centring needs n >= 4 (it divides by n - 2 and n(n - 3)); got n={n}.")
    return met, nt, V


def _partial_dask(x, y, z, data, exponent, metric, sigma, n_threads, what, compute,
                  check_negative_type=True):
    """Partial distance covariance / correlation from the U-products of the three pairs (Dask)."""
    met, nt, V = _partial_inputs(x, y, z, data, exponent, metric, sigma, n_threads,
                                 check_negative_type=check_negative_type)
    n = V[0].n
    pairs = [_dask_pair_sums.lazy_dependence_sums(V[a], V[b], met, nt) for a, b in ((0, 1), (0, 2), (1, 2))]
    return _dask.finish(_partial_from_sums, what, n, *[p for pair in pairs for p in pair],
                           compute=compute)


def _partial_from_sums(what, n, vu_xy, sx, sy, vu_xz, _sx, sz, vu_yz, _sy, _sz):
    """pdcov or pdcor from the pairs' U-sums (working units: each variable its own scale)."""
    (ab, aa, bb), (ac, _, cc), (bc, _, _) = vu_xy[1], vu_xz[1], vu_yz[1]
    if cc > 0:
        pxy, px, py = ab - ac * bc / cc, aa - ac * ac / cc, bb - bc * bc / cc
    else:
        pxy, px, py = ab, aa, bb
    norm = n * (n - 3)
    if what == "pdcov":
        return sy.apply(sx.apply(pxy / norm))
    # the expansion forms |P|² as a difference of terms of size |A|²: its rounding error is a few
    # eps of |A|² (not eps² as for the matrices' projections), so the floor is PROJECTION_FLOOR
    # of |A|² itself: |P| below about 5e-7 |A| counts as 0
    if not (px > PROJECTION_FLOOR * abs(aa) and py > PROJECTION_FLOOR * abs(bb)):
        warn("a projection on the complement of z is 0 (x or y is determined by z in distance "
             "terms), so the partial distance correlation is undefined; returning 0, as R energy "
             "does.", UserWarning)
        return 0.0
    return pxy / math.sqrt(px * py)


#: a projection whose squared norm is below (PROJECTION_FLOOR)² of the original's is rounding
#: noise around 0 (its entries are formed with errors of a few eps of the original's size)
PROJECTION_FLOOR = 1e3 * np.finfo(float).eps


def _pdcor(Px, Py, aa, bb):
    return _pdcor_from(u_product(Px, Py), u_product(Px, Px), u_product(Py, Py), aa, bb)


def _projection_is_zero(px, py, aa, bb):
    """True when a projection's squared norm (px, py) is 0 or rounding noise: below
    PROJECTION_FLOOR² of its original's (aa, bb).  The statistic and the test decide by it."""
    return not (px > PROJECTION_FLOOR**2 * abs(aa) and py > PROJECTION_FLOOR**2 * abs(bb))


def _pdcor_from(pxy, px, py, aa, bb):
    """pdcor from the projections' U-products (and the originals' squared norms aa, bb)."""
    if _projection_is_zero(px, py, aa, bb):
        warn("a projection on the complement of z is 0 (x or y is determined by z in distance "
             "terms), so the partial distance correlation is undefined; returning 0, as R energy "
             "does.", UserWarning)
        return 0.0
    return pxy / math.sqrt(px * py)


@notebook_display
@dataclass(frozen=True)
class PartialDistanceTestResult:
    r"""Result of :func:`partial_distance_correlation_test`.

    Attributes
    ----------
    statistic : float
        The partial distance correlation :math:`R^*(x, y; z)`.
    pvalue : float or None
    null_distribution : ndarray
        The statistic with the projection of x permuted.
    n_resamples : int
    partial_dcov : float
        The partial distance covariance (R ``pdcov``).
    pvalue_se : float or None
    seed : int or None
    pvalue_method : str
        'full', 'sequential' or 'decision'; with the last two
        ``n_resamples`` counts the permutations used (``pvalue_se`` None).
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    n_resamples: int
    partial_dcov: float
    pvalue_se: float | None = None
    seed: int | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """One row: pdcor, pdcov, p-value and its Monte Carlo error, resamples."""
        return pd.DataFrame({"pdcor": [self.statistic], "pdcov": [self.partial_dcov],
                             "pvalue": [self.pvalue], "pvalue_se": [self.pvalue_se],
                             "n_resamples": [self.n_resamples]},
                            index=pd.Index(["partial dcor"], name="test"))


def partial_distance_correlation_test(x, y, z, *, data=None, n_resamples=999, exponent=1.0,
                                      metric="energy", sigma=1.0, check_negative_type=True,
                                      rng=None, n_threads=None,
                                      pvalue_method="full", sequential_h=10, alpha=0.05,
                                      backend=None, compute=True):
    r"""Permutation test of zero partial distance correlation (Székely and Rizzo 2014).

    The replicates permute the rows and columns of :math:`P_{z^\perp}(x)`
    (the projection of x's U-centred distance matrix), as R ``energy``'s
    ``pdcor.test``; the p-value follows the package's rule (observed value
    counted, exact ties counted).  The null hypothesis of this test is
    :math:`R^*(x, y; z) = 0` in the population, which is **not** conditional
    independence of x and y given z.

    When a projection is 0 (x or y determined by z in distance terms) the
    statistic is undefined and reported as 0 with a warning
    (:func:`partial_distance_correlation`); so is every permuted statistic,
    and the p-value is 1 (the null distribution all zeros).  A projection
    whose squared norm is rounding noise (below about 5e-26 of the
    original's) counts as 0 for the statistic and the test alike, so an
    exactly zero projection and one that came out as noise give the same
    answer.

    Parameters as in :func:`partial_distance_correlation` and
    :func:`independence_test` (``pvalue_method`` 'full', 'sequential' or
    'decision': stop permuting early, as there).  With ``backend='dask'``
    (or Dask input) one task forms the two n×n projections (16 n² bytes,
    held by every worker that runs a batch) and each batch of permutations
    is a task; the permutations are drawn from ``rng`` as on threads, so the
    statistic, the null distribution and the p-value are the same bits,
    whatever the workers and the chunking.  ``compute=False`` returns a
    Delayed of the result; ``pvalue_method`` must be 'full' there.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=80)
    >>> x, y = z + 0.3 * rng.normal(size=80), z + 0.3 * rng.normal(size=80)
    >>> round(es.distance_correlation(x, y), 2)          # dependent through z
    0.88
    >>> res = es.partial_distance_correlation_test(x, y, z, rng=1)
    >>> round(res.statistic, 3), res.pvalue > 0.05
    (0.008, True)
    """
    from .._core._permutation import draw_permutations
    from .._core._validation import seeded_rng

    R = _sequential.check_resamples(n_resamples)
    dask = _dask.use_dask(backend, compute, (x, y, z, data))
    rule = _sequential.make_rule(pvalue_method, R, h=sequential_h, alpha=alpha, dask=dask)
    gen, seed = seeded_rng(rng)
    if dask:
        return _partial_test_dask(x, y, z, data, exponent, metric, sigma, n_threads, R, gen, seed,
                                  compute)
    nt = check_n_threads(n_threads)
    prep = _partial(x, y, z, data, exponent, metric, sigma, n_threads,
                    check_negative_type=check_negative_type)
    summary = _partial_summary(prep)
    n = summary["n"]
    if R == 0 or _partial_degenerate(summary):
        return _partial_test_finish(summary, None, None, R, seed, rule)
    kernel = _partial_products(prep, nt)
    obs, null, _ = _permutation_pvalue(kernel, lambda r0, m: draw_permutations(gen, np.arange(n), m),
                                       R, False, rule)
    return _partial_test_finish(summary, (obs, kernel.norms), null, R, seed, rule)


def _partial_summary(prep):
    """The scalars of the partial test from :func:`_partial`'s projections (small: the one
    thing of them that leaves a Dask task besides the permuted sums)."""
    Px, Py, sx, sy, aa, bb = prep
    return dict(n=Px.shape[0], pxy=u_product(Px, Py), px=u_product(Px, Px), py=u_product(Py, Py),
                aa=aa, bb=bb, sx=sx, sy=sy)


def _partial_degenerate(summary):
    """A projection 0 or rounding noise (:func:`_projection_is_zero`, the statistic's own rule):
    the statistic is taken as 0 and so is every permuted one (p = 1), whether the projection
    came out exactly 0 or as noise (a noise projection's permutations would count noise)."""
    return _projection_is_zero(summary["px"], summary["py"], summary["aa"], summary["bb"])


def _partial_products(prep, nt):
    """``Σ_ij Py_ij Px_{p_i p_j}`` (the projection of x permuted), by the permutation kernel."""
    Px, Py = prep[0], prep[1]
    return _MatrixProducts(np.ascontiguousarray(Py), np.ascontiguousarray(Px), nt)


def _partial_observed(prep, nt):
    kernel = _partial_products(prep, nt)
    obs = np.empty(1)
    kernel(np.arange(kernel.n, dtype=np.intp)[None, :], obs)
    return float(obs[0]), kernel.norms


def _partial_permuted(prep, perms, nt):
    out = np.empty(perms.shape[0])
    _partial_products(prep, nt)(np.ascontiguousarray(perms, dtype=np.intp), out)
    return out


def _partial_test_finish(summary, observed, null, R, seed, rule=None):
    """The result from the summary, ``(observed sum, (Σ Py², Σ Px²))`` and the permuted sums
    (None for no permutations), on either backend: the p-value by the package's rule, sums
    within 64 eps of the Cauchy–Schwarz bound of their terms counting as ties."""
    from .._core._permutation import pvalue_from_null, pvalue_se

    S = summary
    n = S["n"]
    stat = _pdcor_from(S["pxy"], S["px"], S["py"], S["aa"], S["bb"])
    pdcov = S["sy"].apply(S["sx"].apply(S["pxy"]))
    if R == 0:
        return PartialDistanceTestResult(stat, None, np.empty(0), 0, pdcov)
    if _partial_degenerate(S):
        return PartialDistanceTestResult(stat, 1.0, np.zeros(R), R, pdcov, 0.0, seed)
    obs, norms = observed
    tol = 64 * np.finfo(float).eps * math.sqrt(norms[0] * norms[1])
    p = _sequential.final_pvalue(float(pvalue_from_null(obs, null, False, tol=tol)), rule)
    null = null / (n * (n - 3) * math.sqrt(S["px"] * S["py"]))
    if rule is None:
        return PartialDistanceTestResult(stat, p, null, R, pdcov, pvalue_se(p, R, False), seed)
    return PartialDistanceTestResult(stat, p, null, int(null.shape[0]), pdcov, None, seed,
                                     rule.name, rule.decision)


#: pair-permutations of one Dask task of the partial test (about 0.1-0.3 s on one core)
PARTIAL_TASK_WORK = 1e9


def _partial_test_dask(x, y, z, data, exponent, metric, sigma, n_threads, R, gen, seed, compute,
                       check_negative_type=True):
    """:func:`partial_distance_correlation_test` on Dask: a task forms the projections, then a
    task per batch of permutations drawn as on threads (the same kernel: the same bits)."""
    import dask

    met, nt, V = _partial_inputs(x, y, z, data, exponent, metric, sigma, n_threads,
                                 check_negative_type=check_negative_type)
    n = V[0].n
    prep = dask.delayed(_partial, pure=True)(*[_dask.lazy_whole(v) for v in V], None, exponent,
                                             metric, sigma, nt)
    summary = dask.delayed(_partial_summary, pure=True)(prep)
    observed = null = None
    if R > 0:
        observed = dask.delayed(_partial_observed, pure=True)(prep, nt)
        B = int(max(1, min(R, 512, PARTIAL_TASK_WORK // (n * n / 2.0))))
        batches = _dask.lazy_draws(gen, R, B, _dask._draw_perms, n, None)
        permuted = dask.delayed(_partial_permuted, pure=True)
        null = dask.delayed(np.concatenate, pure=True)([permuted(prep, b, nt) for b in batches])
    return _dask.finish(_partial_test_finish, summary, observed, null, R, seed, compute=compute)
