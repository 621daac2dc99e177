"""PERMANOVA by name (:func:`permanova`): DISCO with index 2 on a precomputed dissimilarity,
with scikit-bio's result fields.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

from .._core._validation import as_square_matrix, is_int, short_list
from ._results import PermanovaResult
from .disco import disco

__all__ = ["permanova"]


def permanova(D, grouping, column=None, n_resamples=None, rng=None, exact=None, *,
              permutations=None):
    r"""PERMANOVA (Anderson 2001) on a dissimilarity matrix: pseudo-F and permutation p-value.

    A thin wrapper over :func:`disco`: DISCO with index 2 (the squared
    dissimilarities as ``metric='precomputed'``) is PERMANOVA, its F the
    pseudo-F, whatever the dissimilarity.

    Parameters
    ----------
    D : array_like of shape (n, n), pandas.DataFrame or skbio.DistanceMatrix
        The dissimilarities: symmetric, non-negative, zero diagonal, finite
        (any dissimilarity; it need not be a metric).  A DataFrame's index,
        or a ``DistanceMatrix``'s ``ids``, names the objects.
    grouping : array_like of shape (n,), pandas.Series or pandas.DataFrame
        The group of each object.  An array or list is taken by position (in
        the order of the rows of ``D``); a Series, or the ``column`` of a
        DataFrame, is matched to the objects' names (every name must be
        there; extra rows are ignored), as in scikit-bio.
    column : str, optional
        With a DataFrame ``grouping``: the grouping column (required then).
    n_resamples : int, optional
        Number of random relabellings (default 999), 0 to 10⁹; ``0`` gives the pseudo-F
        only (``pvalue=None``).  (The name every other test of the package
        uses.)
    permutations : int, optional
        scikit-bio's name for ``n_resamples``: still accepted, with a
        ``DeprecationWarning``; giving both is an error.
    rng : int, numpy.random.Generator or None
        Source of the relabellings (as in :func:`disco`); the seed is
        recorded in the result.
    exact : bool or None, default None
        As in :func:`disco`: ``None`` enumerates every distinct relabelling
        when there are at most ``n_resamples`` of them (then the p-value is
        exact, where scikit-bio would still draw at random).

    Returns
    -------
    PermanovaResult
        scikit-bio's fields (``method_name`` 'PERMANOVA',
        ``test_statistic_name`` 'pseudo-F', ``sample_size``, ``n_groups``,
        ``statistic``, ``pvalue``, ``n_permutations``), the ``seed``, and the
        underlying :class:`DiscoResult` as ``disco``; ``.to_frame()`` is
        scikit-bio's table.

    Notes
    -----
    With :math:`d_{ij}` the dissimilarities, groups :math:`C_1, \dots, C_k`
    of sizes :math:`n_j` and :math:`n = \sum_j n_j`, Anderson's sums of
    squares are

    .. math::

        SS_T = \frac{1}{n}\sum_{i<j} d_{ij}^2, \quad
        SS_W = \sum_{g} \frac{1}{n_g} \sum_{i<j \in C_g} d_{ij}^2, \quad
        F = \frac{(SS_T - SS_W) / (k - 1)}{SS_W / (n - k)}.

    DISCO with :math:`\rho = d^2` has total dispersion
    :math:`T = \frac{n}{2} g(X, X) = \frac{1}{2n}\sum_{i,j} d_{ij}^2 = SS_T`
    and within dispersion :math:`W = \sum_g \frac{n_g}{2} g(C_g, C_g) = SS_W`,
    so its between component is :math:`S = T - W = SS_A` and its F is the
    pseudo-F (Rizzo and Székely 2010, section 3: DISCO with index 2 on
    Euclidean distances is ANOVA/MANOVA's decomposition).  DISCO's theory
    of consistency needs index :math:`\alpha \in (0, 2)`; with index 2 the
    test detects differences in means (centroids) only — the reason to prefer
    :func:`disco` or :func:`energy_test` with their default index 1.

    The p-value is :math:`(1 + \#\{F^* \ge F\}) / (R + 1)` over R random
    relabellings (group sizes kept), as scikit-bio's; the relabellings are
    drawn by this package's generator, so for a given seed the p-value is
    not scikit-bio's (it has the same distribution).

    References
    ----------
    .. [1] Anderson, M. J. (2001). A new method for non-parametric
       multivariate analysis of variance. Austral Ecology 26(1), 32–46.
    .. [2] Rizzo, M. L. and Székely, G. J. (2010). DISCO analysis: A
       nonparametric extension of analysis of variance. Ann. Appl. Stat.
       4(2), 1034–1055.

    Examples
    --------
    scikit-bio's test matrix with ties:

    >>> import energystats as es
    >>> D = [[0, 1, 1, 4], [1, 0, 3, 2], [1, 3, 0, 3], [4, 2, 3, 0]]
    >>> res = es.permanova(D, ["Control", "Control", "Fast", "Fast"])
    >>> res.statistic, res.pvalue, res.exact
    (2.0, 0.6666666666666666, True)
    >>> res.to_frame()
                                   PERMANOVA results
    method name                            PERMANOVA
    test statistic name                     pseudo-F
    sample size                                    4
    number of groups                               2
    test statistic                               2.0
    p-value                                 0.666667
    number of permutations                         6
    """
    if permutations is not None:
        if n_resamples is not None:
            raise TypeError("`permutations` is the old name of `n_resamples`; give one of them "
                            f"(got permutations={permutations!r} and n_resamples={n_resamples!r}).")
        warnings.warn("`permanova(permutations=)` is deprecated: use `n_resamples=`, the name "
                      "every other test of energystats uses.", DeprecationWarning, stacklevel=2)
        n_resamples = permutations
    if n_resamples is None:
        n_resamples = 999
    if not is_int(n_resamples) or not 0 <= n_resamples <= 10**9:
        raise ValueError(f"`n_resamples` must be an integer in [0, 10**9]; got {n_resamples!r}.")
    mat, ids = _matrix(D)
    labels = _grouping(grouping, column, ids, mat.shape[0])
    # squared in units where the largest dissimilarity is in [0.5, 1), so that no square
    # overflows: a power of two, exact, and F is scale-free (the sums of squares are converted
    # back, exactly)
    top = float(mat.max()) if mat.size else 0.0
    e = math.frexp(top)[1] if top > 0.0 else 0
    mat = np.ldexp(mat, -e)
    res = disco(mat * mat, labels=labels, metric="precomputed", n_resamples=n_resamples,
                rng=rng, exact=exact)
    if e:
        res = replace(res, between=float(np.ldexp(res.between, 2 * e)),
                      within=float(np.ldexp(res.within, 2 * e)), total=float(np.ldexp(res.total, 2 * e)))
    return PermanovaResult(sample_size=int(mat.shape[0]), n_groups=len(res.groups[0]),
                           statistic=float(res.statistic), pvalue=res.pvalue,
                           n_permutations=int(res.n_resamples), exact=res.exact, seed=res.seed,
                           groups=list(res.groups[0]), sizes=res.sizes[0],
                           null_distribution=res.null_distribution, disco=res)


def _matrix(D):
    """The n×n dissimilarities (checked) and the objects' names (None for an array)."""
    ids = None
    if hasattr(D, "ids") and hasattr(D, "redundant_form"):  # skbio.DistanceMatrix
        ids = list(D.ids)
        D = D.redundant_form()
    elif isinstance(D, pd.DataFrame):
        ids = list(D.index)
        if list(D.columns) != ids:
            raise ValueError("`D`: a DataFrame of dissimilarities must have the same labels, in "
                             "the same order, on its index and its columns.")
        D = D.to_numpy()
    return as_square_matrix(D, "D"), ids


def _grouping(grouping, column, ids, n):
    """The group of each row of ``D`` (scikit-bio's rules: a Series or a DataFrame's column
    matched to the objects' names, an array by position)."""
    if isinstance(grouping, pd.DataFrame):
        if column is None:
            raise ValueError("`column` is required with a DataFrame `grouping`; got None "
                             f"(its columns: {short_list(list(grouping.columns))}).")
        if column not in grouping.columns:
            raise ValueError(f"`column` {column!r} is not a column of `grouping` "
                             f"({short_list(list(grouping.columns))}).")
        grouping = grouping[column]
    elif column is not None:
        raise ValueError(f"`column` ({column!r}) needs a DataFrame `grouping`; got "
                         f"{type(grouping).__name__}.")
    if isinstance(grouping, pd.Series):
        if ids is None:
            raise ValueError("`grouping` as a Series (or DataFrame) is matched to the objects' "
                             "names, so `D` must name them (a DataFrame or skbio DistanceMatrix); "
                             "pass the groups as an array in the order of the rows of `D`.")
        missing = [i for i in ids if i not in grouping.index]
        if missing:
            raise ValueError(f"`grouping` has no group for {len(missing)} object(s) of `D`: "
                             f"{short_list(missing)}.")
        if not grouping.index.is_unique:
            raise ValueError("`grouping`: its index names some objects more than once.")
        return grouping.loc[ids].to_numpy()
    labels = np.asarray(grouping)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"`grouping` must give one group per row of `D` ({n}); got shape "
                         f"{labels.shape}.")
    return labels
