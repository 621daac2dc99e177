r"""Significance after clustering: calibrate the fitted S/T against a no-cluster reference.

A parametric-bootstrap calibration, as SigClust (Liu, Hayes, Nobel and Marron 2008,
"Statistical significance of clustering for high-dimension, low-sample size data",
JASA 103(483)) and the gap statistic (Tibshirani, Walther and Hastie 2001, "Estimating
the number of clusters in a data set via the gap statistic", JRSS B 63(2)).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from . import _engine as _ce
from .._core import _engine, _memory, _sequential
from .._lib import _hartigan
from ._fit import _clustering_iv, _fit
from .._core._grouped import DispersionResult, dispersion_from_sums
from .._core._permutation import AntiConservativeWarning, pvalue_from_null, pvalue_se, sum_error
from .._core._progress import progress_bar
from .._core._frames import select_frame
from .._core._validation import seeded_rng

__all__ = ["cluster_test", "ClusterTestResult", "AntiConservativeWarning"]

NULLS = ("gaussian", "uniform")


@notebook_display
@dataclass(frozen=True)
class ClusterTestResult:
    r"""Result of :func:`cluster_test`.

    Attributes
    ----------
    statistic : float
        :math:`S/T` of the partition fitted to the data.
    pvalue : float
        :math:`(1 + \#\{\text{null} \ge \text{statistic}\}) / (B + 1)`.
    null_distribution : ndarray, shape (B,)
        :math:`S/T` of the same clustering run on each reference data set
        (or, with ``naive=True``, on each relabelling).
    null : str
        'gaussian', 'uniform' or 'permutation (naive)'.
    n_resamples : int
    labels : ndarray or pandas.Series
        The fitted partition of the data.
    dispersion : DispersionResult
        W, S, T, F, sizes of the fitted partition.
    pvalue_se : float
        Monte Carlo standard error of ``pvalue``, :math:`\sqrt{p(1-p)/B}`.
    seed : int or None
        The seed given as ``rng`` or drawn when ``rng=None`` (pass it back as
        ``rng=`` to repeat the run); None when ``rng`` was a Generator.
    columns : list or None
        The DataFrame columns used as data (None for array input).
    pvalue_method : str
        'full', 'sequential' or 'decision'; with the last two
        ``n_resamples`` counts the reference data sets used (``pvalue_se``
        None).
    decision : str or None
        With 'decision': 'p <= alpha', 'p > alpha', or None (not settled).
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray = field(repr=False)
    null: str
    n_resamples: int
    labels: object = field(repr=False)
    dispersion: DispersionResult = field(repr=False)
    pvalue_se: float | None = None
    seed: int | None = None
    columns: list | None = None
    pvalue_method: str = "full"
    decision: str | None = None

    def to_frame(self):
        """One row per cluster (size, within mean g) and one summary row with W, S, T, F, S/T, p."""
        d = self.dispersion
        rows = pd.DataFrame({"size": d.sizes, "g_within": np.diag(d.g)},
                            index=pd.Index([f"cluster {g}" for g in d.groups], name="row"))
        total = pd.DataFrame({"size": [d.n_samples], "W": [d.W], "S": [d.S], "T": [d.T], "F": [d.F],
                              "S/T": [self.statistic], "pvalue": [self.pvalue],
                              "pvalue_se": [self.pvalue_se]},
                             index=pd.Index(["all"], name="row"))
        return pd.concat([rows, total])

    @property
    def summary(self):
        """Alias of :meth:`to_frame`."""
        return self.to_frame()

    def __repr__(self):
        return (f"ClusterTestResult(statistic={self.statistic:.6g}, pvalue={self.pvalue:.6g}, "
                f"null={self.null!r}, n_resamples={self.n_resamples}, "
                f"sizes={list(map(int, self.dispersion.sizes))})")


def reference_sampler(X, null):
    r"""A function ``rng -> data set`` drawing from the no-cluster reference of ``X``.

    'gaussian' (exact): a data set with exactly the sample mean and the
    sample covariance of ``X``, uniformly distributed over all data sets
    that have them.  With :math:`X - \bar x = U \Sigma V^\top` (the
    centred data's thin SVD, rank r), a draw is :math:`\bar x + Q \Sigma
    V^\top` with :math:`Q` the orthonormal factor (positive-diagonal R) of a
    centred n×r standard normal matrix: uniform on the r-frames orthogonal
    to the ones vector.  Under any Gaussian population, the data given
    their mean and covariance have exactly this distribution (the rows'
    joint law is invariant under the rotations of R^n that fix the ones
    vector, which act transitively on that set), so a data set and its
    references are exchangeable and the Monte Carlo p-value is exact.
    A rank-deficient covariance keeps its rank: the references lie in the
    data's affine hull.

    'uniform' (approximate): uniform on a box along the data's principal
    axes, centred at the mean, with the data's variance along each axis.
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    mean = X.mean(axis=0)
    Xc = X - mean
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    r = min(data_rank(s, X.shape), max(n - 1, 0))
    Vt = Vt[:r]
    if null == "gaussian":
        SVt = s[:r, None] * Vt

        def draw(rng):
            return mean + random_frame(rng, n, r) @ SVt
    else:
        # uniform on a box along the principal axes, centred at the mean, with the data's
        # variance along each axis (half-width sqrt(3) sd).  For uniform data this is the
        # range box; unlike the range box it does not inflate when principal axes are
        # ill-determined (nearly equal variances), which made the test liberal.
        half = np.sqrt(3.0) * s[:r] / np.sqrt(max(n - 1, 1))

        def draw(rng):
            return mean + rng.uniform(-half, half, size=(n, r)) @ Vt
    draw.rank = r
    return draw


def data_rank(s, shape):
    """Numerical rank of centred data from its singular values ``s`` (NumPy's matrix_rank rule)."""
    if not s.size or not s.max() > 0:
        return 0
    return int(np.sum(s > s.max() * max(shape) * np.finfo(float).eps))


def random_frame(rng, n, r):
    """An n×r matrix with orthonormal columns orthogonal to the ones vector, uniformly distributed.

    The Q factor, with R's diagonal made positive, of a centred n×r standard
    normal matrix: a function of that matrix that commutes with every
    rotation fixing the ones vector, whose law is invariant under them.
    """
    if r == 0:
        return np.zeros((n, 0))
    G = rng.standard_normal((n, r))
    G -= G.mean(axis=0)
    Q, R = np.linalg.qr(G)
    Q *= np.where(np.diagonal(R) < 0, -1.0, 1.0)
    return Q


def _ticking(values, bar):
    """Yield ``values``, advancing the progress ``bar`` (or nothing) once per value."""
    for v in values:
        if bar is not None:
            bar.update(1)
        yield v


def _reference_workers(n, n_threads, n_resamples, engine="matrix"):
    """Reference clusterings run side by side: as many as threads allow and memory holds, and
    one at a time for fits of at most ``SHORT_N`` points.

    With the 'matrix' engine each holds its own n×n Gram matrix (8·n² bytes
    and a little more), so with little memory they run fewer at a time, never
    more than fit; a 'streamed' fit holds O(n) rows of G at a time.
    """
    workers = max(1, min(n_threads, n_resamples))
    if n <= _ce.SHORT_N:
        # a fit of at most SHORT_N points takes milliseconds, much of it in Python: two threads
        # contend for the GIL and took 1.2-2x as long as one (n = 30 to 1200, measured on 2
        # cores); only larger fits gain from running side by side (n = 2000: 1.2x faster)
        return 1
    if workers > 1:
        avail, _ = _memory.available_memory()
        if avail is not None:
            per_fit = (8.0 * n * n * 1.1 if engine == "matrix" else
                       8.0 * n * _ce.block_rows(n) * 2.2) + 2 * _memory.MiB
            workers = int(max(1, min(workers, 0.8 * avail // per_fit)))
    return workers


def _stat(disp):
    return disp.S / disp.T if disp.T > 0 else 0.0


def _tolerance(disp):
    """Rounding error of S/T: the engines' allowed error of each group-pair sum
    (:func:`energystats._core._permutation.sum_error`) through S, doubled for T's own."""
    from .._core._grouped import _DiscoStatistic, _Layout

    k = len(disp.sizes)
    sizes = np.asarray(disp.sizes, dtype=np.float64)
    M = np.asarray(disp.g) * np.outer(sizes, sizes)
    layout = _Layout(np.arange(k), np.zeros(k, dtype=np.intp), sizes)
    tS = sum_error(M) * layout.pair_sensitivity(_DiscoStatistic(layout).v)
    return 2.0 * tS / disp.T if disp.T > 0 else 0.0


def _pvalue(obs, null, tol):
    # the package's one p-value rule (docs: conventions; Phipson and Smyth 2010):
    # (1 + #{null >= obs - tol}) / (B + 1), tol the rounding error of S/T
    return float(pvalue_from_null(obs, np.asarray(null, dtype=np.float64), exact=False, tol=tol))


def cluster_test(X, n_clusters=2, *, columns=None, numeric_only=False, null="gaussian", n_resamples=99, metric="energy",
                 exponent=1.0, sigma=1.0, check_negative_type=True, algorithm="hartigan",
                 init="k-means++", n_init=10,
                 max_iter=300, random_state=None, rng=None, naive=False, progress="auto",
                 n_threads=None, engine="auto", pvalue_method="full", sequential_h=10, alpha=0.05):
    r"""Is the data more clustered than a no-cluster reference? (parametric bootstrap)

    Parameters
    ----------
    X : array_like or DataFrame, shape (n_samples, n_features)
        Data (raw features: the reference is drawn in feature space, so
        'precomputed' is not accepted).
    n_clusters : int, default 2
    columns : list, optional
        With a DataFrame ``X``: the columns to use (default: all, which must
        be numeric).
    numeric_only : bool, default False
        With a DataFrame ``X`` and ``columns=None``: leave wholly non-numeric
        columns out instead of raising an error that names them.
    null : {'gaussian', 'uniform'}, default 'gaussian'
        The "no clusters" hypothesis.  'gaussian': the data are a sample from
        one Gaussian (any mean and covariance); the reference data sets have
        exactly the data's sample mean and covariance, and the p-value is
        exact for every Gaussian population.  'uniform': a uniform
        distribution on a box along the data's principal axes with the
        data's mean and covariance (approximate; see Notes).
    n_resamples : int, default 99
        Number B of reference data sets (or relabellings with ``naive=True``).
    metric, exponent, sigma, check_negative_type, algorithm, init, n_init, max_iter
        The clustering, as in :class:`energystats.EnergyClustering`; the very
        same procedure runs on the data and on every reference set.
    random_state : None, int or Generator
        Seeds the clustering of the data; defaults to a draw from ``rng``.
    rng : None, int or numpy.random.Generator
        Seeds the reference sets and their clusterings (and, without
        ``random_state``, the clustering of the data).  With ``None`` a seed is
        drawn and recorded in the result's ``seed``.
    naive : bool, default False
        Instead, permute the fitted labels on the same data (as in
        :func:`energystats.energy_test`) — NOT a
        valid test after clustering: it rejects almost always even for a
        single Gaussian.  Emits :class:`AntiConservativeWarning`.
    progress : 'auto', bool or file-like, default 'auto'
        Show the progress of the reference clusterings with the estimated
        time left: 'auto' on ``sys.stderr`` when it is a terminal or a Jupyter
        notebook's output, True on
        ``sys.stderr`` whatever it is, or on the given stream.
    n_threads : int, optional
        Reference clusterings run in this many threads (kernels release the GIL).
    engine : {'auto', 'matrix', 'streamed'}, default 'auto'
        As in :class:`EnergyClustering`: 'streamed' clusters the data and
        every reference data set without an n×n matrix (the same partitions).
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
    sequential_h : int, default 10
    alpha : float, default 0.05
        Stop drawing reference data sets early, as in
        :func:`energystats.energy_test` (Besag & Clifford's sequential
        p-value, or Gandy's decision whether p ≤ ``alpha``); the reference
        sets are the first ones of the full run with the same ``rng``.  Not
        with ``naive=True``.

    Returns
    -------
    ClusterTestResult
        ``statistic`` (S/T), ``pvalue``, ``null_distribution``, ``null``,
        ``n_resamples``, ``labels``, ``dispersion``, ``pvalue_se``, ``seed``,
        ``columns``; ``.to_frame()`` gives the sizes, W, S, T, F and p.

    Notes
    -----
    The statistic is :math:`s = S/T` of the partition the clustering picks
    (scale-free; for fixed n and k monotone in S, W and F).  Because that
    partition was chosen to maximise S, a permutation test of its labels is
    anti-conservative, and so is sample splitting (held-out points assigned
    to learned clusters are split by a boundary).  Here :math:`s` is compared
    with the :math:`s_b` of the same clustering re-run on B reference data
    sets (a Monte Carlo test, as SigClust and the gap statistic), and

    .. math::

        p = \frac{1 + \#\{b : s_b \ge s\}}{B + 1}.

    **What is tested.**  With ``null='gaussian'`` the null hypothesis is
    "the rows are a sample from one Gaussian distribution", with unknown
    mean and covariance.  The reference sets are drawn from the
    distribution of the data *given* their sample mean and covariance, which
    is the same for every Gaussian population (uniform over all data sets
    with that mean and covariance); the data and the references are then
    exchangeable, so :math:`P(p \le \alpha) \le \alpha` exactly, for any n,
    B and clustering settings (with ``random_state=None``, so that the data's
    clustering is seeded like the references').  (Drawing references from a normal with the
    estimated mean and covariance instead — a plug-in parametric bootstrap —
    is far too conservative: the sample covariance is more elongated than the
    truth, and references drawn from it more elongated again.)  A small
    p-value says "more clustered than a Gaussian with the data's mean and
    covariance".  It does not say the clusters are real: a single
    non-Gaussian population with lighter tails than a Gaussian (uniform, and
    to a lesser degree skewed ones such as the exponential) is rejected too;
    heavy-tailed ones (t with few degrees of freedom) rarely are.  The
    docs' page "Calibration of cluster_test" gives the measured rates.

    With ``null='uniform'`` the reference is a box along the principal axes
    with the data's variance along each (the gap statistic's choice of box
    up to its size): an approximate reference with no exactness guarantee,
    conservative on single Gaussians and on uniform boxes in the package's
    simulations, hence with less power.

    The data's columns are used as they are: when their standard deviations
    differ by a factor of 1000 or more a
    :class:`~energystats.ColumnScaleWarning` names the columns and the
    ratio; data whose points are all identical are an error (there is
    nothing to cluster, and S/T is undefined).

    References
    ----------
    .. [1] Liu, Y., Hayes, D. N., Nobel, A. and Marron, J. S. (2008).
       Statistical significance of clustering for high-dimension,
       low-sample size data (SigClust). JASA 103(483).
    .. [2] Tibshirani, R., Walther, G. and Hastie, T. (2001). Estimating the
       number of clusters in a data set via the gap statistic. JRSS B 63(2).
    .. [3] França, G., Rizzo, M. L. and Vogelstein, J. T. (2021). Kernel
       k-Groups via Hartigan's Method.

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(1)
    >>> X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(5, 1, (40, 2))])
    >>> res = es.cluster_test(X, 2, n_resamples=19, n_init=2, rng=0)
    >>> res.pvalue
    0.05
    >>> Y = rng.normal(size=(80, 2))
    >>> es.cluster_test(Y, 2, n_resamples=19, n_init=2, rng=0).pvalue > 0.1
    True
    """
    X, cols, _ = select_frame(X, columns, numeric_only=numeric_only)
    if null not in NULLS:
        raise ValueError(f"`null` must be one of {list(NULLS)}; got {null!r}.")
    if metric == "precomputed":
        raise ValueError("`metric='precomputed'` is not available in cluster_test: the reference "
                         "data sets are drawn in feature space; pass the raw data.")
    if not isinstance(init, str):
        raise ValueError("`init` must be 'k-means++' or 'random' in cluster_test: a fixed initial "
                         "labelling cannot be re-run on the reference data sets.")
    B = _sequential.check_resamples(n_resamples, 1)
    rule = _sequential.make_rule(pvalue_method, B, h=sequential_h, alpha=alpha)
    if rule is not None and naive:
        raise ValueError(f"`pvalue_method={pvalue_method!r}` is for the reference calibration; "
                         "`naive=True` is not a valid test to stop early (leave it out).")
    gen, seed = seeded_rng(rng)
    seed_obs = gen.integers(0, 2**63 - 1) if random_state is None else random_state
    opts = _clustering_iv(X, n_clusters, metric, exponent, sigma, algorithm, init, n_init,
                          max_iter, seed_obs, n_threads, engine,
                          check_negative_type=check_negative_type)
    n_rows = int(np.shape(X)[0])
    if n_clusters > n_rows // 2:
        raise ValueError(f"`n_clusters`={n_clusters} for {n_rows} rows: cluster_test compares "
                         "the between-cluster dispersion with the total, which needs at least two "
                         f"rows a cluster on average (n_clusters <= n // 2 = {n_rows // 2}); with "
                         "one row a cluster S/T is 1 whatever the data.")
    labels, disp, _ = _fit(opts)
    obs = _stat(disp)
    labels_out = labels if opts["index"] is None else pd.Series(labels, index=opts["index"], name="cluster")
    nt = opts["n_threads"]

    if naive:
        import warnings

        warnings.warn("naive=True permutes the fitted labels on the same data: after clustering this "
                      "test is anti-conservative (it rejects almost always, even for data with no "
                      "clusters). Use the default reference calibration instead.",
                      AntiConservativeWarning, stacklevel=2)
        Xa, met, k = opts["X"], opts["metric"], opts["k"]
        G = None if opts["engine"] == "streamed" else _ce.centred_gram(_ce.semimetric_matrix(Xa, met, nt), nt)
        null_dist = np.empty(B)
        for b in range(B):
            perm = gen.permutation(labels)
            M = (_engine.group_sum_matrix(Xa, perm, k, met, nt) if G is None
                 else _ce.group_sums_from_gram(G, perm, k))
            null_dist[b] = _stat(dispersion_from_sums(M, disp.sizes, disp.groups))
        p = _pvalue(obs, null_dist, _tolerance(disp))
        return ClusterTestResult(obs, p, null_dist, "permutation (naive)", B, labels_out, disp,
                                 pvalue_se(p, B, False), seed, cols)

    draw = reference_sampler(opts["X"], null)
    n, d = opts["X"].shape
    if draw.rank < min(n - 1, d):
        from .._core._validation import warn

        warn(f"the data span an affine subspace of dimension {draw.rank} (fewer than "
             f"min(n - 1, d) = {min(n - 1, d)}): some columns are linear combinations of the "
             "others. The reference data sets are drawn within that subspace, so the test's "
             "null hypothesis is a Gaussian supported on it.", UserWarning)
    seeds = gen.integers(0, 2**63 - 1, size=(B, 2))

    def one(seed_pair):
        ref = draw(np.random.default_rng(seed_pair[0]))
        o = dict(opts)
        o["X"] = np.ascontiguousarray(ref, dtype=opts["X"].dtype)
        o["rng"] = np.random.default_rng(seed_pair[1])
        o["n_threads"] = 1
        return _stat(_fit(o)[1])

    bar = progress_bar(B, progress, desc="reference clusterings", unit="fit")
    tol = _tolerance(disp)
    try:
        workers = _reference_workers(opts["X"].shape[0], nt, B, opts["engine"])

        def fits(r0, m):  # the reference sets r0 .. r0 + m - 1 (their seeds drawn above)
            batch = seeds[r0:r0 + m]
            if workers <= 1:
                return np.fromiter(_ticking(map(one, batch), bar), dtype=float, count=m)
            with ThreadPoolExecutor(max_workers=workers) as pool:
                try:
                    return np.fromiter(_ticking(pool.map(one, batch), bar), dtype=float, count=m)
                except KeyboardInterrupt:
                    # stop the running reference fits at once (they raise in their threads)
                    # instead of waiting for all of them when the pool closes
                    pool.shutdown(wait=False, cancel_futures=True)
                    _hartigan.cancel()
                    pool.shutdown(wait=True)
                    _hartigan.reset()
                    raise

        # all B in one batch, or under a sequential rule 16, 32, ...
        null_dist = _sequential.collect(B, B, fits, obs, tol, rule)
    finally:
        if bar is not None:
            bar.close()
    done = null_dist.shape[0]
    p = _pvalue(obs, null_dist, tol)
    if rule is None:
        return ClusterTestResult(obs, p, null_dist, null, B, labels_out, disp,
                                 pvalue_se(p, B, False), seed, cols)
    return ClusterTestResult(obs, _sequential.final_pvalue(p, rule), null_dist, null, done,
                             labels_out, disp, None, seed, cols, rule.name, rule.decision)
