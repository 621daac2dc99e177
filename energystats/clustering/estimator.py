r"""Energy clustering: Hartigan's method on the energy kernel and its baselines.

After França, Rizzo and Vogelstein (2021), "Kernel k-Groups via Hartigan's Method",
IEEE TPAMI 43(12) (Algorithm 1, eq. 19); the exact 1-D solver uses the sorted formulas
of the docs' guide page "One-dimensional data".

:class:`EnergyClustering` is a scikit-learn style estimator (scikit-learn is
not required); :func:`energy_clustering` is its functional twin that returns
a :class:`EnergyClusteringResult`; :func:`clustering_accuracy` scores a
partition against true labels (eq. 22 of França, Rizzo and Vogelstein 2021).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core import _engine
from .._core._frames import select_frame
from .._core._grouped import DispersionResult
from .._core._params import Params
from .._core._validation import align_labels, as_data, as_labels, check_n_threads, seeded_rng
from ._fit import _clustering_iv, _exact_dispersion, _fit, _reject_sparse_complex

__all__ = ["EnergyClustering", "EnergyClusteringResult", "energy_clustering", "clustering_accuracy"]


try:  # scikit-learn is optional: inherit its mixins only when it is there
    from sklearn.base import BaseEstimator as _Base
    from sklearn.base import ClusterMixin as _ClusterMixin

    _BASES = (_ClusterMixin, _Base)
except ImportError:  # pragma: no cover - exercised only without scikit-learn
    _BASES = ()


class _ParamsMixin(Params):
    """``get_params`` / ``set_params`` as in scikit-learn, for when it is not installed."""

    def fit_predict(self, X, y=None, **kwargs):
        return self.fit(X, y, **kwargs).labels_

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


_Bases = _BASES if _BASES else (_ParamsMixin,)


# -- estimator -----------------------------------------------------------------

class EnergyClustering(*_Bases):
    r"""Energy clustering: minimise the within dispersion W (maximise S) over k-partitions.

    Parameters
    ----------
    n_clusters : int, default 2
        Number of clusters k, in [2, n_samples].
    metric : str or callable, default 'energy'
        The semimetric rho (as in :func:`energystats.pairwise`), or 'precomputed'.
        Also SciPy's names of a metric of negative type ('euclidean', 'sqeuclidean',
        'cityblock', 'hamming', 'canberra', 'chebyshev' with at most 2 features);
        see the guide page "Choosing a semimetric".  With 'precomputed', ``X`` in
        :meth:`fit` is the n×n matrix of rho and ``X`` in :meth:`predict` the
        (n_new, n_train) matrix of rho from new to training points.
    exponent : float in (0, 2], default 1.0
        Exponent of ``metric='energy'``.
    sigma : float > 0, default 1.0
        Scale of 'laplacian' / 'gaussian'.
    check_negative_type : bool, default True
        False accepts SciPy's names refused because the energy statistics are not
        valid with them (as in :func:`energystats.pairwise`).
    algorithm : {'hartigan', 'lloyd', 'spectral', 'exact-1d'}, default 'hartigan'
        'hartigan': Algorithm 1 of França, Rizzo and Vogelstein (2021) (a
        point moves when the move lowers W); 'lloyd': kernel k-means (batch reassignment to the nearest
        feature-space centroid); 'spectral': k-means on the rows of the top-k
        eigenvectors of the Gram matrix; 'exact-1d': the exact optimum for 1-D
        data with ``metric='energy', exponent=1`` (sort + prefix sums; docs:
        guide, "One-dimensional data").
    init : {'k-means++', 'random'} or array_like of shape (n_samples,), default 'k-means++'
        Seeding (k-means++ in the kernel's feature space) or an initial
        labelling with exactly ``n_clusters`` distinct labels (then one run).
    n_init : int, default 10
        Restarts; the partition with the lowest W is kept.  Restarts run in
        parallel threads; the result does not depend on the number of threads.
    max_iter : int, default 300
        Maximum number of sweeps (Hartigan) or iterations (Lloyd) per run.
    random_state : None, int or numpy.random.Generator
        Seeds the restarts.
    n_threads : int, optional
        Threads (restarts in parallel; the Gram matrix); all cores by default.
    engine : {'auto', 'matrix', 'streamed'}, default 'auto'
        How the Gram matrix is held.  'matrix': in memory (n² doubles);
        'streamed': never formed — one pass over the rows of rho gives the
        centring, the n×k tables of all restarts come from a second pass, and
        each move computes the one row of G it needs from the data (O(n·d)),
        so memory is O(n·(d + k·n_init)); 'auto': 'matrix' while it takes at
        most 1 GiB (n ≈ 11 500), else 'streamed' (algorithms 'hartigan' and
        'lloyd' with a metric that has a compiled kernel: 'energy',
        'laplacian', 'gaussian', 'cityblock').  Both give the same partition, bit for
        bit, from the same ``random_state`` (the rows are computed with the
        matrix's own arithmetic); W, S, T then come from the streamed k×k sums.
    approximation : {None, 'nystrom'}, default None
        None: exact (see ``engine``).  'nystrom': Hartigan's (or Lloyd's)
        method in an explicit feature space of ``n_components`` dimensions,
        the Nyström map of the kernel rho induces (Williams and Seeger 2001)
        on landmarks drawn without replacement from the rows: O(n·r) memory
        and O(n·k·r) per full sweep; Hartigan's sweeps skip the points that
        bounds on their distances to the centroids prove cannot move (the
        bounds of Hamerly 2010, "Making k-means even faster", carried over to
        Hartigan's rule), which changes no decision.  The partition is
        approximate; ``W_``, ``S_``, ``T_`` are always the exact ones of the
        returned partition (streamed k×k sums, O(n²·d) time), so :meth:`fit`
        leaves them out: it costs only the approximation, and the exact sums
        are computed on the first access of ``W_``, ``S_``, ``T_``,
        ``dispersion_`` or the first :meth:`predict` (which needs the
        clusters' within means), then kept (at n = 10⁶ and d = 10 that first
        access takes minutes; the fit, seconds).
    n_components : int, default 256
        Landmarks of the Nyström map (at most n); ``n_components_`` is the
        rank kept (eigenvalues of the landmarks' kernel above 1e-10 of the
        largest).
    backend : {None, 'threads', 'dask'}, default None
        'dask': the exact matrix-free engine (``engine='streamed'``) with its
        passes over the rows of G, its restarts and the final k×k sums as
        Dask tasks (the current ``distributed.Client``, else Dask's local
        scheduler); every task holds the data.  The same partition as on
        this machine.  None / 'threads': this machine.

    Attributes
    ----------
    labels_ : ndarray of int, shape (n_samples,)
        Cluster of each training point, numbered 0..k-1 by first appearance.
    W_, S_, T_ : float
        Within, between and total dispersion of the fitted partition (Rizzo
        and Székely 2010).  With ``approximation='nystrom'``: computed on
        first access and cached (see ``approximation``); read-only properties.
    n_iter_ : int
        Sweeps / iterations of the best run.
    engine_ : str
        The engine used: 'matrix', 'streamed', 'nystrom' or (``algorithm='exact-1d'``) 'sorted'.
    landmarks_, n_components_ : ndarray of int, int
        With ``approximation='nystrom'``: the rows used as landmarks and the
        rank of the feature map.
    dispersion_ : DispersionResult
        The full decomposition (``g``, sizes, F); computed on first access
        with ``approximation='nystrom'``, like ``W_``.
    n_features_in_ : int
        Number of features seen in :meth:`fit` (n_samples for 'precomputed').

    Notes
    -----
    With the Gram matrix :math:`G_{ij} = K(x_i, x_j)` of
    :func:`energystats.gram_matrix` and
    :math:`Q_j = \sum_{x, y \in C_j} K(x, y)`,
    :math:`W = \operatorname{tr} G - \sum_j Q_j / n_j`.  Hartigan's method
    moves point :math:`x_i \in C_j` to the cluster :math:`\ell` maximising

    .. math::

        \Delta Q^{j\to\ell}(x_i) =
        \frac{Q_j/n_j - 2Q_j(x_i) + G_{ii}}{n_j - 1}
        - \frac{Q_\ell/n_\ell - 2Q_\ell(x_i) - G_{ii}}{n_\ell + 1}

    when it is positive, with :math:`Q_\ell(x_i) = \sum_{y\in C_\ell} K(x_i, y)`
    kept in an n×k table updated in O(n) per move; a sweep costs O(nk) plus
    O(n) per move.  The Gram matrix (O(n²) memory) is centred
    (:math:`-\tfrac12 JDJ`), which generates the same semimetric.  W never
    increases, singletons never empty, and a Hartigan optimum is also a
    Lloyd optimum (Telgarsky & Vattani 2010), not conversely.  W, S, T are
    V-statistics; no square root is taken.

    References
    ----------
    .. [1] França, G., Rizzo, M. L. and Vogelstein, J. T. (2021). Kernel
       k-Groups via Hartigan's Method. IEEE TPAMI 43(12), 4411–4425.
    .. [2] Hartigan, J. A. and Wong, M. A. (1979). Algorithm AS 136: A k-means
       clustering algorithm. JRSS C 28(1).
    .. [3] Dhillon, I. S., Guan, Y. and Kulis, B. (2004). Kernel k-means,
       spectral clustering and normalized cuts. KDD.
    .. [4] Williams, C. K. I. and Seeger, M. (2001). Using the Nyström method
       to speed up kernel machines. NIPS 13.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(0, 1, (30, 2)), rng.normal(8, 1, (30, 2))])
    >>> est = es.EnergyClustering(n_clusters=2, random_state=0).fit(X)
    >>> np.bincount(est.labels_)
    array([30, 30])
    >>> bool(np.isclose(est.W_ + est.S_, est.T_))
    True
    >>> est.predict([[0.0, 0.0], [8.0, 8.0]])
    array([0, 1])

    A Nyström fit defers the exact W of its partition to its first access:

    >>> ny = es.EnergyClustering(2, approximation="nystrom", n_components=8, random_state=0).fit(X)
    >>> vars(ny)["_dispersion"] is None
    True
    >>> bool(np.isclose(ny.W_, es.dispersion(X, ny.labels_).W))
    True
    """

    def __init__(self, n_clusters=2, *, metric="energy", exponent=1.0, sigma=1.0,
                 algorithm="hartigan", init="k-means++", n_init=10, max_iter=300,
                 random_state=None, n_threads=None, engine="auto", approximation=None,
                 n_components=256, backend=None, check_negative_type=True):
        self.n_clusters = n_clusters
        self.metric = metric
        self.exponent = exponent
        self.sigma = sigma
        self.check_negative_type = check_negative_type
        self.algorithm = algorithm
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state
        self.n_threads = n_threads
        self.engine = engine
        self.approximation = approximation
        self.n_components = n_components
        self.backend = backend

    def _opts(self, X):
        return _clustering_iv(X, self.n_clusters, self.metric, self.exponent, self.sigma,
                              self.algorithm, self.init, self.n_init, self.max_iter,
                              self.random_state, self.n_threads, self.engine, self.approximation,
                              self.n_components, self.backend,
                              check_negative_type=self.check_negative_type)

    def fit(self, X, y=None):
        """Cluster ``X`` (array, DataFrame or, with 'precomputed', an n×n matrix); returns self.

        With ``approximation='nystrom'`` the exact W, S, T of the partition
        are not computed here but on first access (see ``approximation``).
        Warns (:class:`ColumnScaleWarning`) when the columns' standard
        deviations differ by a factor of 1000 or more; all points identical
        are an error (nothing to cluster).
        """
        opts = self._opts(X)
        labels, disp, n_iter = _fit(opts, lazy=True)
        self.labels_ = labels
        self._dispersion = disp  # None: the exact sums on first access (`dispersion_`)
        self._fit_k, self._fit_threads = opts["k"], opts["n_threads"]
        self.n_iter_ = n_iter
        self.engine_ = opts["engine"]
        if "nystrom" in opts:
            self.landmarks_ = opts["nystrom"].landmarks
            self.n_components_ = opts["nystrom"].rank
        self.n_features_in_ = opts["X"].shape[1]
        if isinstance(X, pd.DataFrame) and opts["metric"].kind != "precomputed":
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self._metric = opts["metric"]
        self._X_fit = opts["X"] if opts["metric"].kind != "precomputed" else None
        return self

    def fit_predict(self, X, y=None):
        """Fit and return ``labels_``."""
        return self.fit(X).labels_

    def _exact(self, attribute):
        state = vars(self)
        if "_dispersion" not in state:  # an AttributeError, so that hasattr() says False
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attribute!r} "
                                 "(not fitted yet: call `fit` first)")
        if state["_dispersion"] is None:
            self._dispersion = _exact_dispersion(self._X_fit, self.labels_, self._fit_k,
                                                 self._metric, self._fit_threads)
        return self._dispersion

    @property
    def dispersion_(self):
        """The :class:`~energystats.DispersionResult` of the fitted partition (exact; with
        ``approximation='nystrom'`` computed on first access, O(n²·d), and kept)."""
        return self._exact("dispersion_")

    @property
    def W_(self):
        """Within dispersion W of the fitted partition (see ``dispersion_``)."""
        return self._exact("W_").W

    @property
    def S_(self):
        """Between dispersion S of the fitted partition (see ``dispersion_``)."""
        return self._exact("S_").S

    @property
    def T_(self):
        """Total dispersion T = W + S of the data (see ``dispersion_``)."""
        return self._exact("T_").T

    def _check_fitted(self):
        if not hasattr(self, "labels_"):
            try:
                from sklearn.exceptions import NotFittedError as err
            except ImportError:  # pragma: no cover
                err = AttributeError
            raise err(f"This {type(self).__name__} instance is not fitted yet; call `fit` first.")

    def predict(self, X):
        r"""Put each new point in the cluster whose W it raises least.

        Adding :math:`x` to :math:`C_l` raises W by
        :math:`\frac{n_l}{n_l+1}\,[\bar\rho(x, C_l) - \tfrac12 g(C_l, C_l)]`
        with :math:`\bar\rho(x, C_l)` the mean of rho from x to the cluster.
        Each point is judged alone against the fitted clusters.  After a
        Nyström fit the first call computes the exact within means
        (``dispersion_``, O(n²·d)).

        Parameters
        ----------
        X : array_like, shape (n_new, n_features)
            New points; with ``metric='precomputed'`` the (n_new, n_train)
            matrix of rho from the new points to the training points.

        Returns
        -------
        ndarray of int, shape (n_new,)
        """
        self._check_fitted()
        met = self._metric
        if met.kind == "precomputed":
            R, _ = as_data(X, "X", dtype=np.float64)
            if R.shape[1] != self.labels_.size:
                raise ValueError(f"with metric='precomputed', `X` must have n_train={self.labels_.size} "
                                 f"columns (rho to the training points); got {R.shape[1]}.")
        else:
            _reject_sparse_complex(X)
            A, _ = as_data(X, "X")
            if A.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {A.shape[1]} features, but {type(self).__name__} is expecting "
                                 f"{self.n_features_in_} features as input (`X` of predict must have "
                                 "the features seen in fit).")
            B = self._X_fit
            if A.dtype != B.dtype:
                A, B = A.astype(np.float64), B.astype(np.float64)
            R = _engine.pairwise_values(A, B, met, check_n_threads(self.n_threads))
        k = self.dispersion_.k
        Z = np.zeros((self.labels_.size, k))
        Z[np.arange(self.labels_.size), self.labels_] = 1.0
        nl = self.dispersion_.sizes.astype(float)
        rbar = (R @ Z) / nl
        rise = nl / (nl + 1.0) * (rbar - 0.5 * np.diag(self.dispersion_.g))
        return np.argmin(rise, axis=1).astype(np.intp)

    def test(self, X, *, null="gaussian", n_resamples=99, rng=None, naive=False, n_threads=None):
        """Significance of the clustering of ``X`` against a no-cluster reference.

        Runs :func:`energystats.cluster_test` with this estimator's settings
        (``random_state`` seeds the clustering of ``X``); see there.
        """
        from .significance import cluster_test

        return cluster_test(X, self.n_clusters, null=null, n_resamples=n_resamples,
                            metric=self.metric, exponent=self.exponent, sigma=self.sigma,
                            algorithm=self.algorithm, n_init=self.n_init, max_iter=self.max_iter,
                            init=self.init,
                            random_state=self.random_state, rng=rng, naive=naive,
                            n_threads=self.n_threads if n_threads is None else n_threads)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.metric == "precomputed"
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"pairwise": self.metric == "precomputed"}


# -- functional twin -----------------------------------------------------------

@notebook_display
@dataclass(frozen=True)
class EnergyClusteringResult:
    r"""Result of :func:`energy_clustering`.

    Attributes
    ----------
    labels : ndarray or pandas.Series
        Cluster codes 0..k-1 (a Series on the input's index for DataFrame input).
    W, S, T, F : float
        Within, between, total dispersion and the DISCO ratio (Rizzo and Székely 2010).
    sizes : ndarray of int
    n_iter : int
    algorithm : str
    dispersion : DispersionResult
    seed : int or None
        The seed given as ``rng`` or drawn when ``rng=None`` (pass it back to
        repeat the run); None when ``rng`` was a Generator.
    columns : list or None
        The DataFrame columns used as data (None for array input).
    engine : str
        How the Gram matrix was held: 'matrix', 'streamed', 'nystrom' or
        'sorted' (see :class:`EnergyClustering`).
    """

    labels: object = field(repr=False)
    W: float
    S: float
    T: float
    F: float
    sizes: np.ndarray
    n_iter: int
    algorithm: str
    dispersion: DispersionResult = field(repr=False)
    seed: int | None = None
    columns: list | None = None
    engine: str = "matrix"

    def to_frame(self, kind="components"):
        """``'components'``: Between/Within/Total table; ``'labels'``: one row per point;
        ``'groups'``: size and within mean per cluster."""
        if kind == "labels":
            lab = self.labels
            if isinstance(lab, pd.Series):
                return lab.to_frame()
            return pd.DataFrame({"cluster": lab})
        return self.dispersion.to_frame(kind)

    def __repr__(self):
        return (f"EnergyClusteringResult(W={self.W:.6g}, S={self.S:.6g}, T={self.T:.6g}, "
                f"F={self.F:.6g}, sizes={list(map(int, self.sizes))}, algorithm={self.algorithm!r})")


def energy_clustering(X, n_clusters=2, *, columns=None, numeric_only=False, metric="energy",
                      exponent=1.0, sigma=1.0, check_negative_type=True,
                      algorithm="hartigan", init="k-means++", n_init=10, max_iter=300,
                      rng=None, n_threads=None, engine="auto", approximation=None,
                      n_components=256, backend=None):
    r"""Energy clustering of ``X`` into ``n_clusters`` groups (functional form).

    Parameters
    ----------
    X : array_like or DataFrame, shape (n_samples, n_features)
        Data; with ``metric='precomputed'`` an n×n semimetric matrix.
    n_clusters, metric, exponent, sigma, check_negative_type, algorithm, init, n_init, max_iter, n_threads, engine, approximation, n_components, backend
        As in :class:`EnergyClustering`.
    columns : list, optional
        With a DataFrame ``X``: the columns to use (default: all, which must
        be numeric).
    numeric_only : bool, default False
        With a DataFrame ``X`` and ``columns=None``: leave wholly non-numeric
        columns out instead of raising an error that names them.
    rng : None, int or numpy.random.Generator
        Seeds the restarts.  With ``None`` a seed is drawn and recorded in
        the result's ``seed``.

    Returns
    -------
    EnergyClusteringResult
        ``labels`` (a Series on ``X.index`` for a DataFrame), ``W``, ``S``,
        ``T``, ``F``, ``sizes``, ``n_iter``, ``dispersion``.

    Notes
    -----
    Minimises :math:`W = \sum_j \frac{n_j}{2} g(C_j, C_j)`, equivalently
    maximises :math:`S = T - W` (França, Rizzo and Vogelstein 2021, Lemma 1).  See
    :class:`EnergyClustering` for the algorithms.  The result holds the exact
    W, S, T, so with ``approximation='nystrom'`` they are computed here
    (O(n²·d)); :class:`EnergyClustering` defers them to their first access.

    The columns are used as they are: when their standard deviations differ
    by a factor of 1000 or more a :class:`ColumnScaleWarning` names the
    columns and the ratio (standardise them first if their units are not
    comparable).  All points identical (every distance 0) are an error:
    there is nothing to cluster.

    References
    ----------
    .. [1] França, G., Rizzo, M. L. and Vogelstein, J. T. (2021). Kernel
       k-Groups via Hartigan's Method. IEEE TPAMI 43(12).

    Examples
    --------
    >>> import pandas as pd, energystats as es
    >>> df = pd.DataFrame({"x": [0.0, 0.5, 1.0, 10.0, 10.5, 11.0]}, index=list("abcdef"))
    >>> res = es.energy_clustering(df, 2, rng=0)
    >>> res.labels.to_dict()
    {'a': 0, 'b': 0, 'c': 0, 'd': 1, 'e': 1, 'f': 1}
    >>> res
    EnergyClusteringResult(W=1.33333, S=14.3333, T=15.6667, F=43, sizes=[3, 3], algorithm='hartigan')
    """
    X, cols, _ = select_frame(X, columns, numeric_only=numeric_only)
    gen, seed = seeded_rng(rng)
    opts = _clustering_iv(X, n_clusters, metric, exponent, sigma, algorithm, init, n_init,
                          max_iter, gen, n_threads, engine, approximation, n_components, backend,
                          check_negative_type=check_negative_type)
    labels, disp, n_iter = _fit(opts)
    out = labels
    if opts["index"] is not None:
        out = pd.Series(labels, index=opts["index"], name="cluster")
    return EnergyClusteringResult(out, disp.W, disp.S, disp.T, disp.F, disp.sizes, n_iter,
                                  opts["algorithm"], disp, seed, cols, opts["engine"])


# -- accuracy ------------------------------------------------------------------

def clustering_accuracy(y_true, y_pred):
    r"""Fraction of points correctly clustered under the best matching of labels.

    Parameters
    ----------
    y_true, y_pred : array_like of shape (n_samples,)
        Labels of any hashable type; the numbers of distinct labels may differ.

    Returns
    -------
    float in [0, 1]

    Notes
    -----
    Equation 22 of França, Rizzo and Vogelstein (2021), "Kernel k-Groups via
    Hartigan's Method",
    :math:`\max_\pi \frac1n \sum_i \sum_j \hat Z_{i\pi(j)} Z_{ij}`, solved as a
    linear assignment problem on the contingency table
    (:func:`scipy.optimize.linear_sum_assignment`), not by enumerating the
    k! permutations.  With unequal numbers of labels, unmatched labels count
    as wrong.

    Examples
    --------
    >>> import energystats as es
    >>> es.clustering_accuracy(["a", "a", "b", "b"], [1, 1, 0, 1])
    0.75
    """
    from scipy.optimize import linear_sum_assignment

    y_pred = align_labels(y_true, y_pred, "y_pred")
    t = as_labels(y_true, len(y_true), name="y_true") if y_true is not None else None
    p = as_labels(y_pred, t.codes.size, name="y_pred")
    C = np.zeros((t.k, p.k))
    np.add.at(C, (t.codes, p.codes), 1.0)
    r, c = linear_sum_assignment(C, maximize=True)
    return float(C[r, c].sum() / t.codes.size)
