r"""The independence coefficient :math:`\mathcal{I}_n` of Bakirov, Rizzo and Székely (2006) and
its permutation test (R ``energy``'s ``mvI`` and ``mvI.test``).

The coefficient is the energy distance between the joint sample and the product of its
marginal samples, divided by an upper bound of it.  Its cost is dominated by one term,
the mean distance between two independent draws from the product sample (n⁴ pairs); see
:func:`independence_coefficient` for why that term does not reduce.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._core._dask import delayed_value, in_memory_backend
from .._core._display import notebook_display
from .._core import _sequential
from .._core._input import paired_variables
from ._centring import _squared_distances

__all__ = ["independence_coefficient", "independence_coefficient_test",
           "IndependenceCoefficientTestResult"]

#: the most square roots either function evaluates (about 15 s at 1.5 ns each with NumPy on one
#: core; under a minute on a machine four times slower): n = 447 for the coefficient, n = 316
#: for the test
MAX_PAIRS = 1e10

#: elements of one temporary block (16 MiB)
_BLOCK = 2**21


# -- the terms ----------------------------------------------------------------------

def _hypot_sum(u2, v2):
    r""":math:`\sum_{a}\sum_{b} \sqrt{u_a + v_b}` over two 1-D arrays of squares, in blocks."""
    total = 0.0
    step = max(1, _BLOCK // max(v2.size, 1))
    for a0 in range(0, u2.size, step):
        w = u2[a0:a0 + step, None] + v2[None, :]
        np.sqrt(w, out=w)
        total += float(w.sum())
    return total


def _mixed_sum(A2, B2, rows_b=None):
    r""":math:`G_{kk'} = \sum_i \sum_j \sqrt{A^2_{ki} + B^2_{k'j}}`: with ``rows_b=None`` the
    diagonal (k' = k; n³ roots), otherwise the full matrix G (n⁴ roots)."""
    n = A2.shape[0]
    if rows_b is None:
        out = np.empty(n)
        step = max(1, _BLOCK // (n * n))
        for k0 in range(0, n, step):
            w = A2[k0:k0 + step, :, None] + B2[k0:k0 + step, None, :]
            np.sqrt(w, out=w)
            out[k0:k0 + step] = w.sum(axis=(1, 2))
        return out
    G = np.empty((n, n))
    step = max(1, _BLOCK // (n * n))
    for k in range(n):
        for m0 in range(0, n, step):
            w = A2[k][None, :, None] + B2[m0:m0 + step, None, :]
            np.sqrt(w, out=w)
            G[k, m0:m0 + step] = w.sum(axis=(1, 2))
    return G


def _product_sum(A2, B2):
    r""":math:`\sum_{i,k}\sum_{j,l} \sqrt{A^2_{ik} + B^2_{jl}}` from the upper triangles: a
    diagonal entry is 0 and the others come twice, so it is
    :math:`4\sum_{i<k}\sum_{j<l}\sqrt{\cdot} + 2n\sum_{i<k} A_{ik} + 2n\sum_{j<l} B_{jl}`
    (n⁴/4 roots)."""
    n = A2.shape[0]
    iu = np.triu_indices(n, 1)
    u2, v2 = A2[iu], B2[iu]
    return (4.0 * _hypot_sum(u2, v2) + 2.0 * n * float(np.sqrt(u2).sum())
            + 2.0 * n * float(np.sqrt(v2).sum()))


def _check_pairs(n, work, what):
    """Refuse more than :data:`MAX_PAIRS` square roots; ``work(n)`` counts them."""
    if work(n) > MAX_PAIRS:
        # the exact largest n allowed (work grows with n): bisection between 2 and n
        lo, hi = 2, n
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if work(mid) <= MAX_PAIRS else (lo, mid)
        largest = lo
        raise ValueError(
            f"`x` and `y` have n={n} rows: {what} takes about {work(n):.2g} square roots (n⁴ "
            f"grows fast), more than the {MAX_PAIRS:.0e} allowed (about a minute); the largest n "
            f"accepted is {largest}. Use a random subsample of the rows, or independence_test "
            "(distance covariance, O(n²) per permutation, also consistent against all "
            "alternatives).")


def _prepare(x, y, data, fname):
    """The checked data as (A², B², columns of x, columns of y)."""
    X, Y, cx, cy = paired_variables(x, y, data)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"{fname} needs at least 2 rows (paired samples); got n={n}.")
    for which, V in (("x", X), ("y", Y)):
        if np.all(V == V[0]):
            raise ValueError(f"`{which}` is constant (all its rows are equal): the denominator "
                             f"E|X - X'| + E|Y - Y'| - E|W - W'| is 0 and the coefficient is "
                             "undefined (0/0). R's mvI returns NaN here.")
    # working units: x and y times one power of two (exact) that brings the largest value into
    # [0.5, 1), so that no squared distance overflows or underflows; I_n is unchanged by a
    # common scale
    e = math.frexp(max(float(np.max(np.abs(X))), float(np.max(np.abs(Y)))))[1]
    X, Y = np.ldexp(X, -e), np.ldexp(Y, -e)
    return _squared_distances(X), _squared_distances(Y), cx, cy


def _marginal_terms(A2, B2):
    n = A2.shape[0]
    return float(np.sqrt(A2).sum()) / n**2, float(np.sqrt(B2).sum()) / n**2


# -- the coefficient ----------------------------------------------------------------

def independence_coefficient(x, y=None, *, data=None):
    r"""The independence coefficient :math:`\mathcal{I}_n` (R ``energy``'s ``mvI``).

    Parameters
    ----------
    x, y : array_like, Series, DataFrame, or column name(s) of ``data``
        Paired samples, shapes (n,) or (n, p) and (n,) or (n, q), n ≥ 2.
    data : DataFrame, optional
        With ``x`` and ``y`` column names.

    Returns
    -------
    float
        :math:`\mathcal{I}_n \in [0, 1]` (the square root taken, as R ``mvI``);
        0 exactly when the joint sample equals the product of its marginals.

    Notes
    -----
    With :math:`Z_k = (X_k, Y_k)` the joint sample and :math:`W_{ij} = (X_i, Y_j)` the n²
    points of the product of the marginal samples (Euclidean norms throughout;
    :math:`a_{ik} = |X_i - X_k|_p`, :math:`b_{jl} = |Y_j - Y_l|_q`), all V-statistics
    (divisors n², n³, n⁴):

    .. math::

        \bar x = \frac{1}{n^2}\sum_{i,k} a_{ik}, \quad
        \bar y = \frac{1}{n^2}\sum_{j,l} b_{jl}, \quad
        \bar z = \frac{1}{n^2}\sum_{k,l} \sqrt{a_{kl}^2 + b_{kl}^2},

        \bar z_3 = \frac{1}{n^3}\sum_{k,i,j} \sqrt{a_{ki}^2 + b_{kj}^2}, \quad
        \bar z_4 = \frac{1}{n^4}\sum_{i,k,j,l} \sqrt{a_{ik}^2 + b_{jl}^2},

        \mathcal{I}_n^2 = \frac{2\bar z_3 - \bar z - \bar z_4}{\bar x + \bar y - \bar z_4}.

    The numerator is the energy distance :math:`2E|Z-W| - E|Z-Z'| - E|W-W'|` between the
    empirical joint distribution and the product of the empirical marginals (≥ 0; a
    rounding below 0 is taken as 0); the denominator bounds it, so
    :math:`0 \le \mathcal{I}_n \le 1` (Bakirov, Rizzo and Székely 2006; 1 for n = 2, and
    below 1 for x = y in general: 0.6256 for x = y = 1, …, 5, as in R).  Unlike distance
    correlation it has no exponent: Euclidean distances only, as in R.

    *Cost.*  :math:`\bar x, \bar y, \bar z` take n² steps and :math:`\bar z_3` n³;
    :math:`\bar z_4` is a sum over the product of the multisets
    :math:`\{a_{ik}\}` and :math:`\{b_{jl}\}`, i.e. the sum of the Euclidean distances between
    the N = n(n−1)/2 points :math:`(a, 0)` and the N points :math:`(0, b)` of the plane.  The
    kernel :math:`\sqrt{a^2 + b^2}` is not separable (no sort, prefix sum or low-rank
    factorisation gives it exactly, unlike :math:`|a - b|` or :math:`a^2 + b^2`), and no exact
    algorithm for the sum of all Euclidean distances between two planar point sets faster
    than their N² pairs is known; so the exact coefficient costs n⁴ operations.  Here it is
    formed from the upper triangles (n⁴/4 square roots, vectorised in blocks); R's code takes
    n⁴ (measured: ×14–18 per doubling of n).  Beyond :data:`MAX_PAIRS` = 10¹⁰ roots
    (n > 447, about a minute) the function refuses.  (A fast multipole or quadrature
    approximation of :math:`\bar z_4` would be O(n²), but not exact.)

    References
    ----------
    .. [1] Bakirov, N. K., Rizzo, M. L. and Székely, G. J. (2006). A multivariate
       nonparametric test of independence. J. Multivariate Anal. 97(8), 1742–1756.

    Examples
    --------
    >>> import energystats as es
    >>> from energystats.datasets import load_iris
    >>> iris = load_iris()
    >>> I = es.independence_coefficient(iris.iloc[:50, :2], iris.iloc[:50, 2:4])
    >>> round(I, 9)        # R: mvI(iris[1:50, 1:2], iris[1:50, 3:4]) is 0.153491609000390
    0.153491609
    >>> es.independence_coefficient([1.0, 2.0], [3.0, 5.0])
    1.0
    """
    A2, B2, _, _ = _prepare(x, y, data, "independence_coefficient")
    n = A2.shape[0]
    _check_pairs(n, lambda m: float(m)**4 / 4, "the coefficient")
    return math.sqrt(max(_coefficient_sqr(A2, B2), 0.0))


def _coefficient_sqr(A2, B2):
    n = A2.shape[0]
    cx, cy = _marginal_terms(A2, B2)
    cz = float(np.sqrt(A2 + B2).sum()) / n**2
    c3 = float(_mixed_sum(A2, B2).sum()) / n**3
    c4 = _product_sum(A2, B2) / n**4
    return (2.0 * c3 - cz - c4) / (cx + cy - c4)


# -- the test -------------------------------------------------------------------------

@notebook_display
@dataclass(frozen=True)
class IndependenceCoefficientTestResult:
    r"""Result of :func:`independence_coefficient_test`.

    Attributes
    ----------
    statistic : float
        :math:`n\mathcal{I}_n^2` (R ``mvI.test``'s ``statistic``, named ``nI^2`` there).
    pvalue : float or None
        Permutation p-value; None with ``n_resamples=0``.
    null_distribution : ndarray, shape (n_resamples,)
        :math:`n\mathcal{I}_n^2` with the rows of ``y`` permuted.
    estimate : float
        :math:`\mathcal{I}_n` (R's ``estimate``).
    n_resamples : int
    exact : bool
        True when all n! permutations were enumerated.
    pvalue_se : float or None
        Monte Carlo standard error of ``pvalue`` (0 when exact).
    seed : int or None
    columns_x, columns_y : list or None
        DataFrame columns used.
    n_samples : int
    """

    statistic: float
    pvalue: float | None
    null_distribution: np.ndarray = field(repr=False)
    estimate: float
    n_resamples: int
    exact: bool
    pvalue_se: float | None = None
    seed: int | None = None
    columns_x: list | None = None
    columns_y: list | None = None
    n_samples: int = 0

    def to_frame(self):
        """One row: statistic, p-value and its Monte Carlo error, I_n, n."""
        import pandas as pd

        return pd.DataFrame({"statistic": [self.statistic], "pvalue": [self.pvalue],
                             "pvalue_se": [self.pvalue_se], "n_resamples": [self.n_resamples],
                             "estimate": [self.estimate], "n_samples": [self.n_samples]},
                            index=pd.Index(["independence coefficient (mvI)"], name="test"))

    def __repr__(self):
        p = "None" if self.pvalue is None else f"{self.pvalue:.4g}"
        return (f"IndependenceCoefficientTestResult(statistic={self.statistic:.6g}, pvalue={p}, "
                f"estimate={self.estimate:.6g}, n_resamples={self.n_resamples}, "
                f"exact={self.exact})")


def independence_coefficient_test(x, y=None, *, data=None, n_resamples=999, rng=None, exact=None,
                                  backend=None, compute=True):
    r"""Permutation test of independence by the coefficient :math:`\mathcal{I}_n` (R ``mvI.test``).

    Parameters
    ----------
    x, y, data
        As in :func:`independence_coefficient`.
    n_resamples : int, default 999
        Random permutations R of the rows of ``y``; 0 gives the statistic only.
    rng : None, int or numpy.random.Generator
        Source of the permutations (the seed is recorded in the result).
    exact : bool or None
        None: enumerate all n! permutations when there are at most
        ``n_resamples`` of them; True: always (n ≤ 9); False: never.
    backend : {None, 'threads', 'dask'}, default None
        Where the permuted statistics are computed: here, or as tasks on the current Dask
        scheduler ('dask'; the permutations drawn here as the threads draw them, in the same
        batches: the same p-value for the same ``rng``).  The data stay in memory (Dask
        input is refused).
    compute : bool, default True
        With ``backend='dask'``, False returns a Delayed of the result.

    Returns
    -------
    IndependenceCoefficientTestResult
        ``statistic`` is :math:`n\mathcal{I}_n^2`, as R's ``mvI.test`` reports it, and
        ``estimate`` is :math:`\mathcal{I}_n`.

    Notes
    -----
    A permutation :math:`\pi` of y's rows leaves :math:`\bar x`, :math:`\bar y` and
    :math:`\bar z_4` unchanged (:math:`\bar z_4` runs over every pair (i, j) of an x row and a
    y row), hence the denominator.  With
    :math:`G_{km} = \sum_{i,j}\sqrt{a_{ki}^2 + b_{mj}^2}` (the n×n matrix, n⁴ square roots,
    once), :math:`n^3 \bar z_3(\pi) = \sum_k G_{k\pi(k)}` and
    :math:`n^4 \bar z_4 = \sum_{k,m} G_{km}`, so that each permutation costs O(n²) (its
    :math:`\bar z`): O(n⁴ + R n²) in all, where R's ``mvI.test`` recomputes
    :math:`\bar z_3` for each replicate, O(n⁴ + R n³) (measured: n = 80, 1 ms per
    replicate).  The refusal of :func:`independence_coefficient` applies to n⁴ + R n²
    (n > 316).

    The p-value is the package's :math:`(1 + \#\{T^* \ge T\})/(R + 1)`, ties within the
    rounding error counted.  R's ``mvI.test`` (energy 1.7-11) reports
    :math:`\#\{T^* \ge T\}/R` instead, which is 0 for a perfect dependence (its p-values
    are multiples of 1/R, and on x = y = 1, …, 5 with R = 20 000 it counts 325 exceedances,
    the 2/120 of ties expected), and returns its ``replicates`` as zeros; its p-values come
    from R's generator, so they are not reproduced, only the statistic and the estimate are
    (to 1e-12).

    References
    ----------
    .. [1] Bakirov, N. K., Rizzo, M. L. and Székely, G. J. (2006). A multivariate
       nonparametric test of independence. J. Multivariate Anal. 97(8), 1742–1756.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(40, 2))
    >>> y = x[:, :1] ** 2 + 0.5 * rng.normal(size=(40, 1))
    >>> res = es.independence_coefficient_test(x, y, n_resamples=199, rng=1)
    >>> round(res.estimate, 4), round(res.statistic, 4), res.pvalue
    (0.2138, 1.8282, 0.005)
    """
    from .._core._permutation import pvalue_from_null, pvalue_se
    from .._core._validation import seeded_rng
    from ._products import _permutation_plan

    R = _sequential.check_resamples(n_resamples)
    if not (exact is None or exact is True or exact is False):
        raise ValueError(f"`exact` must be None, True or False; got {exact!r}.")
    on_dask = in_memory_backend(backend, compute, "independence_coefficient_test", x, y, data)
    gen, seed = seeded_rng(rng)
    A2, B2, cols_x, cols_y = _prepare(x, y, data, "independence_coefficient_test")
    n = A2.shape[0]
    _check_pairs(n, lambda m: float(m)**4 + float(R) * m * m,
                 f"the test with n_resamples={R}")
    G = _mixed_sum(A2, B2, rows_b=True)
    cx, cy = _marginal_terms(A2, B2)
    c4 = float(G.sum()) / n**4
    den = cx + cy - c4
    obs = float(_null_statistics(A2, B2, G, c4, den, np.arange(n)[None, :])[0])
    estimate = math.sqrt(max(obs / n, 0.0))
    is_exact, total, perms = _permutation_plan(n, None, R, exact, gen)
    if total == 0 or (R == 0 and not is_exact):
        res = IndependenceCoefficientTestResult(obs, None, np.empty(0), estimate, 0, False,
                                                None, None, cols_x, cols_y, n)
        return res if compute else delayed_value(res)
    step = max(1, _BLOCK // (n * n))
    batches = [np.asarray(perms(r0, min(step, total - r0))) for r0 in range(0, total, step)]
    # rounding allowance: 64 eps of the terms of the numerator, in units of the statistic
    scale = n * (2.0 * float(np.trace(G)) / n**3 + float(np.sqrt(A2 + B2).mean()) + c4) / den
    tol = 64 * np.finfo(float).eps * scale

    def result(null):
        p = float(pvalue_from_null(obs, null, is_exact, tol=tol))
        return IndependenceCoefficientTestResult(obs, p, null, estimate, total, bool(is_exact),
                                                 pvalue_se(p, total, is_exact),
                                                 None if is_exact else seed, cols_x, cols_y, n)

    if not on_dask:
        return result(np.concatenate([_null_statistics(A2, B2, G, c4, den, b) for b in batches]))
    import dask

    from .._core._dask import _concat, finish

    task = dask.delayed(_null_statistics, pure=True)
    parts = [task(A2, B2, G, c4, den, b) for b in batches]   # the threads' batches, as tasks
    return finish(result, dask.delayed(_concat, pure=True)(parts), compute=compute)


def _null_statistics(A2, B2, G, c4, den, perms):
    """n I_n² of the data with y's rows permuted by each row of ``perms`` (m, n)."""
    n = A2.shape[0]
    m = perms.shape[0]
    c3 = G[np.arange(n)[None, :], perms].sum(axis=1) / n**3
    Bp = B2[perms[:, :, None], perms[:, None, :]]  # (m, n, n)
    Bp += A2[None]
    np.sqrt(Bp, out=Bp)
    cz = Bp.reshape(m, -1).sum(axis=1) / n**2
    return n * (2.0 * c3 - cz - c4) / den
