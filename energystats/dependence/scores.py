"""Scores and p-values of every feature against a response, in the form scikit-learn's
univariate selectors take (``SelectKBest``, ``SelectPercentile``, ``SelectFdr``,
``GenericUnivariateSelect``): :func:`distance_correlation_scores`."""
from __future__ import annotations

import numpy as np

from .._core._permutation import DegenerateStatisticWarning
from .._core._validation import warn
from .independence import independence_test
from .screening import _screen_input, distance_correlation_screen

__all__ = ["distance_correlation_scores"]


def distance_correlation_scores(X, y):
    r"""Distance correlation of every feature with ``y`` and its χ² p-value, as
    ``(scores, pvalues)`` — the score function of scikit-learn's univariate selectors.

    ``scores[j]`` is :math:`\mathcal{R}_n(x_j, y)` (the DC-SIS ranking of
    :func:`distance_correlation_screen`, O(n log n) per feature for 1-D ``y``);
    ``pvalues[j]`` the χ² test of distance correlation,
    :math:`P(\chi^2_1 \ge nR^*_n + 1)` with :math:`R^*_n` the bias-corrected
    distance correlation (Shen, Panda and Vogelstein 2022,
    ``independence_test(..., pvalue_method='asymptotic')``): no permutations, so
    a Benjamini–Hochberg or Holm correction over thousands of features can reach
    p-values that 999 permutations never could.  The χ² test is conservative
    (its null tail is dominated by the centred χ²₁), close to exact for
    one-dimensional Gaussian data; the measured level and false discovery rate
    are on the guide's screening page.

    Parameters
    ----------
    X : array_like (n, p) or DataFrame
        The features, one per column.
    y : array_like (n,) or (n, q)
        The response.

    Returns
    -------
    scores, pvalues : ndarray (p,)
        NaN for a constant feature (with a ``DegenerateStatisticWarning`` naming
        them), as scikit-learn's ``f_regression`` does.

    References
    ----------
    Li, R., Zhong, W. and Zhu, L. (2012). Feature screening via distance correlation
    learning. J. Amer. Statist. Assoc. 107(499), 1129–1139.
    Shen, C., Panda, S. and Vogelstein, J. T. (2022). The chi-square test of distance
    correlation. J. Comput. Graph. Statist. 31(1), 254–262.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 6))
    >>> y = X[:, 1] ** 2 + np.abs(X[:, 4]) + 0.5 * rng.normal(size=200)
    >>> scores, pvalues = es.distance_correlation_scores(X, y)
    >>> np.argsort(scores)[::-1][:2].tolist(), bool(pvalues[1] < 1e-6)
    ([1, 4], True)

    With scikit-learn (``pip install scikit-learn``)::

        from sklearn.feature_selection import SelectKBest
        SelectKBest(es.distance_correlation_scores, k=2).fit(X, y).get_support()
    """
    Xa, Y, names, _, _ = _screen_input(X, y, None, None)
    n, p = Xa.shape
    const = np.all(Xa == Xa[:1], axis=0)
    scores = np.full(p, np.nan)
    pvalues = np.full(p, np.nan)
    live = np.flatnonzero(~const)
    if live.size:
        scores[live] = distance_correlation_screen(Xa[:, live], Y, top=live.size).statistic
        for j in live:
            pvalues[j] = independence_test(Xa[:, j], Y, pvalue_method="asymptotic").pvalue
    if const.any():
        warn(f"`X`: constant feature(s) {[names[j] for j in np.flatnonzero(const)][:8]}: their "
             "distance correlation with y is undefined (0/0); score and p-value NaN.",
             DegenerateStatisticWarning)
    return scores, pvalues
