r"""Distance-correlation screening as a scikit-learn feature selector:
:class:`DistanceCorrelationSelector` (DC-SIS, Li, Zhong and Zhu 2012, and its iterative form,
Zhong and Zhu 2015).

The selection itself is :func:`distance_correlation_screen` (its functional twin); this module
adds what a scikit-learn selector holds (``scores_``, ``pvalues_``, ``ranking_``, the support
mask and ``transform`` from ``SelectorMixin``).  scikit-learn is optional for the package:
this module is imported on first use of the class (``energystats.dependence.__getattr__``),
and without scikit-learn the class cannot be instantiated (an ImportError that says what to
install).
"""
from __future__ import annotations

import math

import numpy as np

from .._core._input import paired_indexes
from .._core._validation import check_n_threads
from .independence import independence_test
from .screening import distance_correlation_screen

__all__ = ["DistanceCorrelationSelector"]

_INSTALL = "pip install scikit-learn"

try:  # scikit-learn is optional: its mixins are the bases only when it is there
    from sklearn.base import BaseEstimator as _Base
    from sklearn.feature_selection import SelectorMixin as _SelectorMixin

    _BASES = (_SelectorMixin, _Base)
except ImportError:  # pragma: no cover - exercised only without scikit-learn
    _BASES = ()


class _NeedsScikitLearn:
    """The base without scikit-learn: instantiating says what to install."""

    def __new__(cls, *args, **kwargs):
        raise ImportError(f"{cls.__name__} is a scikit-learn feature selector and needs "
                          f"scikit-learn, which is not installed: {_INSTALL}.  Without it, "
                          "energystats.distance_correlation_screen makes the same selection.")


_Bases = _BASES if _BASES else (_NeedsScikitLearn,)


class DistanceCorrelationSelector(*_Bases):
    r"""Keep the ``k`` features most related to ``y`` by distance correlation (DC-SIS).

    Distance-correlation sure independence screening (Li, Zhong and Zhu 2012)
    as a scikit-learn selector: ``fit`` ranks every feature :math:`x_j` by
    :math:`\mathcal{R}_n(x_j, y)` and keeps the ``k`` largest; ``transform``
    keeps those columns.  No model between the features and ``y`` is
    assumed, any kind of dependence counts, and ``y`` may be multivariate.
    With ``n_rounds > 1`` the ``k`` are chosen in rounds, the later ones on
    the remaining features' residuals on those already chosen (Zhong and Zhu
    2015; see Notes for exactly what is computed).  The functional twin is
    :func:`energystats.distance_correlation_screen`.

    Parameters
    ----------
    k : int, 'auto' or 'all', default 'auto'
        Features to keep, in [1, n_features].  'auto': Li, Zhong and Zhu's
        :math:`\lfloor n / \log n \rfloor` (n the rows of the fit), at most
        n_features and at least 1; 'all': every feature.
    n_rounds : int, default 1
        1: DC-SIS.  More: iterative screening, ``k`` chosen in ``n_rounds``
        rounds of ``k // n_rounds`` features, the first ``k % n_rounds``
        rounds one more; in [1, k].
    exponent : float, default 1.0
        Exponent of the Euclidean distance, in (0, 2] (as in
        :func:`energystats.distance_correlation`).
    metric : str or callable, default 'energy'
        The semimetric of :func:`energystats.distance_correlation` (the same
        for the features and ``y``; not 'precomputed').
    sigma : float, default 1.0
        Bandwidth of the Gaussian and Laplacian metrics.
    check_negative_type : bool, default True
        False accepts SciPy's metric names that are refused because the
        energy statistics are not valid with them (as in
        :func:`energystats.pairwise`).
    pvalues : bool, default True
        Compute ``pvalues_`` (one O(n²) χ² test per feature; False leaves
        ``pvalues_`` None and the fit at the screen's cost, O(n log n) per
        feature for 1-D ``y`` and the default distance).
    n_threads : int or None, default None
        Threads (None: all available).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        :math:`\mathcal{R}_n(x_j, y)` of each feature (the V-statistic, its
        root, as R ``dcor``): the first round's, marginal, values.  NaN for a
        constant feature (with a warning).  Equal to the scores of
        :func:`energystats.distance_correlation_scores` with the defaults.
    pvalues_ : ndarray of shape (n_features,) or None
        Each feature's χ² test of independence from ``y`` (Shen, Panda and
        Vogelstein 2022, ``independence_test(x_j, y,
        pvalue_method='asymptotic')``): marginal, conservative, not adjusted
        for the number of features.  NaN for a constant feature and below 4
        rows; None with ``pvalues=False``.
    ranking_ : ndarray of int of shape (n_features,)
        Each feature's place, 1 for the one chosen first: the ``k_`` kept
        features in the order they were chosen, then the others by
        decreasing ``scores_`` (constant features last).
    support_ : ndarray of bool of shape (n_features,)
        The kept features (``ranking_ <= k_``).
    selection_round_ : ndarray of int of shape (n_features,)
        The round that chose each feature (1 to ``n_rounds``); 0 for the
        others.
    k_ : int
        The number of features kept (``k`` resolved).
    n_features_in_ : int
        The number of features seen in ``fit``.
    feature_names_in_ : ndarray of str
        The columns of a DataFrame ``X`` (only then).

    Notes
    -----
    The score of feature :math:`j` is the distance correlation
    (Székely, Rizzo and Bakirov 2007), with :math:`A, B` the double-centred
    distance matrices of :math:`x_j` and :math:`y` (divisor :math:`n^2`,
    the V-statistic) and the square root taken:

    .. math::

        \omega_j = \mathcal{R}_n(x_j, y) = \left(\frac{\sum_{i,l} A_{il} B_{il}}
        {\sqrt{\sum_{i,l} A_{il}^2 \, \sum_{i,l} B_{il}^2}}\right)^{1/2}.

    DC-SIS keeps the ``k`` largest :math:`\omega_j` (ties by column order).

    Iterative rounds (``n_rounds = m > 1``): round 1 keeps the :math:`k_1`
    largest :math:`\omega_j`.  Before round :math:`r`, with :math:`S` the
    features chosen so far, :math:`R` the others and :math:`\tilde X` the
    column-centred features, the remaining ones are replaced by their
    projection on the orthogonal complement of the chosen ones,

    .. math::

        X^{(r)}_R = \tilde X_R - \tilde X_S\,(\tilde X_S^\top \tilde X_S)^{+}
        \tilde X_S^\top \tilde X_R,

    (their least-squares residuals on the chosen features with an
    intercept, :math:`^{+}` the pseudo-inverse), and the :math:`k_r`
    largest :math:`\mathcal{R}_n(X^{(r)}_{\cdot j}, y)` are kept.  This is
    the step of Zhong and Zhu (2015) applied to the centred design (the
    centring changes no distance; without it the projection would mix in
    the features' means).  ``y`` is never changed.  A remaining feature
    whose residual is zero to rounding (a linear combination of the
    chosen) is ranked after the others in that round.

    What the rounds can and cannot find: the projection is linear and ``y``
    is kept, so a feature enters late when, once the linear part that the
    chosen features explain is removed, what is left of it depends on ``y``
    -- a feature masked by a correlated one, or one that is independent of
    ``y`` on its own but correlated with a chosen feature (:math:`x_1 = u`,
    :math:`x_0 = u + v`, :math:`y = v`).  A feature related to ``y`` only
    through an interaction with features it is independent of (e.g.
    :math:`y = \operatorname{sign}(x_0 x_1)`) keeps its residual equal to
    itself up to noise, stays independent of ``y`` and is not found.

    References
    ----------
    Li, R., Zhong, W. and Zhu, L. (2012). Feature screening via distance
    correlation learning. J. Amer. Statist. Assoc. 107(499), 1129–1139.
    Zhong, W. and Zhu, L. (2015). An iterative approach to distance
    correlation-based sure independence screening. J. Stat. Comput. Simul.
    85(11), 2331–2345.
    Shen, C., Panda, S. and Vogelstein, J. T. (2022). The chi-square test of
    distance correlation. J. Comput. Graph. Statist. 31(1), 254–262.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 50))
    >>> y = X[:, 3] ** 2 + np.abs(X[:, 7]) + 0.5 * rng.normal(size=200)
    >>> sel = es.DistanceCorrelationSelector(k=2).fit(X, y)
    >>> sel.get_support(indices=True).tolist(), sel.k_
    ([3, 7], 2)
    >>> bool(sel.pvalues_[3] < 1e-6), sel.ranking_[[3, 7]].tolist()
    (True, [1, 2])
    >>> pipe = make_pipeline(es.DistanceCorrelationSelector(k=5), LinearRegression()).fit(X, y)
    >>> pipe[0].transform(X).shape
    (200, 5)
    """

    def __init__(self, k="auto", *, n_rounds=1, exponent=1.0, metric="energy", sigma=1.0,
                 check_negative_type=True, pvalues=True, n_threads=None):
        self.k = k
        self.n_rounds = n_rounds
        self.exponent = exponent
        self.metric = metric
        self.sigma = sigma
        self.check_negative_type = check_negative_type
        self.pvalues = pvalues
        self.n_threads = n_threads

    def fit(self, X, y):
        """Rank the features of ``X`` by their distance correlation with ``y`` and keep ``k``.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n_samples, n_features)
            The features (finite, dense), at least 2 rows.
        y : array_like of shape (n_samples,) or (n_samples, n_outputs)
            The response (numeric, not constant).

        Returns
        -------
        self
        """
        X, Y = _validate(self, X, y)
        n, p = X.shape
        k, rounds, nt = _selector_iv(self, n, p)
        res = distance_correlation_screen(X, Y, top=k, rounds=rounds, exponent=self.exponent,
                                          metric=self.metric, sigma=self.sigma,
                                          check_negative_type=self.check_negative_type,
                                          n_threads=nt)
        chosen = [int(j) for j in res.selected]
        taken = set(chosen)
        order = chosen + [int(j) for j in res.ranking if j not in taken]
        ranking = np.empty(p, dtype=np.intp)
        ranking[order] = np.arange(1, p + 1)
        self.scores_ = res.statistic.to_numpy(dtype=np.float64)
        self.pvalues_ = _chi2_pvalues(X, Y, self.scores_, self, nt) if self.pvalues else None
        self.ranking_ = ranking
        self.support_ = ranking <= k
        self.selection_round_ = np.nan_to_num(res.selection_round.to_numpy(dtype=np.float64),
                                              nan=0.0).astype(np.intp)
        self.k_ = k
        return self

    def _get_support_mask(self):
        _check_fitted(self)
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True          # the screen is of the features against y
        tags.target_tags.multi_output = True      # y may be multivariate (an (n, q) array)
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]   # columns kept as given
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"requires_y": True, "multioutput": True,
                "preserves_dtype": [np.float64, np.float32]}


# -- input and driver ---------------------------------------------------------------------

def _validate(est, X, y):
    """``(X (n, p) float64 or float32, y (n,) or (n, q) float64)``, checked once, with
    ``n_features_in_`` and ``feature_names_in_`` recorded (scikit-learn's ``validate_data``)."""
    # scikit-learn pairs rows by position; pandas X and y with different indexes are refused,
    # as distance_correlation_scores refuses them (not paired silently by position)
    paired_indexes((_index(X), "X"), (_index(y), "y"))
    kw = dict(accept_sparse=False, dtype=[np.float64, np.float32], ensure_min_samples=2,
              multi_output=True)
    try:
        from sklearn.utils.validation import validate_data
    except ImportError:  # pragma: no cover - scikit-learn < 1.6
        X, y = est._validate_data(X, y, **kw)
    else:
        X, y = validate_data(est, X, y, **kw)
    try:
        Y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"`y` must be numeric (class labels: one indicator column per class, "
                         f"e.g. pandas.get_dummies(y)); got dtype {y.dtype}.") from None
    return X, Y


def _index(v):
    """A pandas object's row index (DataFrame, Series), else None."""
    import pandas as pd

    return v.index if isinstance(v, (pd.DataFrame, pd.Series)) else None


def _selector_iv(est, n, p):
    """``(k, n_rounds, n_threads)`` resolved, each argument checked with its rule named."""
    k = est.k
    if isinstance(k, str) and k == "auto":
        k = int(max(1, min(p, math.floor(n / math.log(n))))) if n > 2 else 1
    elif isinstance(k, str) and k == "all":
        k = p
    elif _is_int(k) and 1 <= k <= p:
        k = int(k)
    else:
        raise ValueError(f"`k` must be an integer in [1, n_features={p}], 'auto' or 'all'; "
                         f"got {k!r}.")
    r = est.n_rounds
    if not (_is_int(r) and 1 <= r <= k):
        raise ValueError(f"`n_rounds` must be an integer in [1, k={k}] (the features kept); "
                         f"got {r!r}.")
    if not isinstance(est.pvalues, (bool, np.bool_)):
        raise ValueError(f"`pvalues` must be True or False; got {est.pvalues!r}.")
    return k, int(r), check_n_threads(est.n_threads)


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _chi2_pvalues(X, Y, scores, est, nt):
    """Each non-constant feature's χ² test of independence from ``Y`` (NaN below 4 rows)."""
    pv = np.full(X.shape[1], np.nan)
    if X.shape[0] < 4:        # the bias-corrected dCor divides by n(n - 3)
        return pv
    for j in np.flatnonzero(~np.isnan(scores)):
        pv[j] = independence_test(X[:, j], Y, pvalue_method="asymptotic", exponent=est.exponent,
                                  metric=est.metric, sigma=est.sigma, n_threads=nt,
                                  check_negative_type=est.check_negative_type).pvalue
    return pv


def _check_fitted(est):
    if not hasattr(est, "support_"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"This {type(est).__name__} instance is not fitted yet; call `fit` "
                             "first.")
