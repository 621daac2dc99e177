"""E-Divisive (:func:`e_divisive`): hierarchical energy change points with permutation tests."""
from __future__ import annotations

import math

import numbers
from dataclasses import dataclass, field

import numpy as np

from .._core import _sequential
from .._core._dask import is_dask, use_dask
from .._core._engine import normalise
from .._core._input import time_series
from .._core._metrics import resolve_metric
from .._core._serial import SeriesDependenceWarning, series_findings
from .._core._validation import available_cores, check_n_threads, is_int, seeded_rng, warn
from ._results import ChangePointWarning, EDivisiveResult, index_labels, segment_labels
from . import _blocks
from ._search import segment_split, stage_pvalue

__all__ = ["e_divisive"]

#: the exceedances that stop pvalue_method='sequential' (Besag & Clifford's h)
SEQUENTIAL_H = 10

#: the metric codes the compiled split search computes (energy, laplacian, gaussian: those of
#: :mod:`energystats._core._metrics`; any other code would be read as the gaussian kernel)
_KERNEL_METRICS = (0, 1, 2)


def check_exponent(exponent):
    """``exponent`` in (0, 2) (the divergence characterises equal distributions only there)."""
    if not (isinstance(exponent, numbers.Real) and not isinstance(exponent, bool)
            and 0.0 < float(exponent) < 2.0):
        raise ValueError(f"`exponent` must be a number in (0, 2) for the change-point searches "
                         f"(at 2 the divergence compares means only); got {exponent!r}.")
    return float(exponent)


RESAMPLING = ("permutation", "block")
#: a lag-1 autocorrelation of the residuals above max(this, 3 / sqrt(T)) with
#: resampling='permutation' is a warning: the rows are not exchangeable
AUTOCORR_WARN = 0.1


def e_divisive(X, *, min_size=30, exponent=1.0, n_changepoints=None, sig_level=0.05,
               n_resamples=199, pvalue_method="full", resampling="permutation",
               block_size=None, kappa="search", metric="energy", sigma=1.0,
               check_negative_type=True, columns=None, rng=None, n_threads=None,
               progress="auto", backend=None):
    r"""E-Divisive: change points of a multivariate series by hierarchical energy splits.

    The method of Matteson and James (2014): the segment whose best split has the largest
    scaled energy divergence :math:`\hat Q` is split, stage after stage; each split is kept
    when a permutation test says that a further change exists, given the segments found so
    far.

    Parameters
    ----------
    X : array_like of shape (T, d) or (T,), pandas Series or DataFrame
        The series, rows in time order.  A Series' or DataFrame's index (a
        ``DatetimeIndex`` included) is carried into ``changepoint_labels`` and
        :meth:`~EDivisiveResult.to_frame`.  NaN or inf is an error naming the rows.
    min_size : int, default 30
        The fewest rows of either side of a split (≥ 2, and ``2 * min_size ≤ T``).
    exponent : float, default 1.0
        α in :math:`\lVert x - y \rVert^\alpha`, in (0, 2).
    n_changepoints : int, optional
        Return the first ``n_changepoints`` splits, untested (no permutations; the
        deterministic answer to compare across tools).  At most ``T // min_size - 1``.
        The tests' settings (``sig_level``, ``n_resamples``, ``pvalue_method``, ``rng``,
        ``progress``) are then an error if given.
    sig_level : float, default 0.05
        The search stops at the first split whose p-value is above ``sig_level``.
    n_resamples : int, default 199
        Permutations R per test (1 to 10⁹).
    pvalue_method : {'full', 'sequential', 'decision'}, default 'full'
        'full': R permutations, :math:`p = (1 + \#\{\hat Q^* \ge \hat Q\}) / (R + 1)`.
        'sequential' (Besag & Clifford 1991): stop at the 10th permuted maximum reaching the
        observed one.  'decision' (Gandy 2009): stop as soon as it is clear whether p is
        above or below ``sig_level``.  Each test's permutations are those of 'full' with the
        same ``rng``, in the same order; an early stop uses a prefix of them.
    resampling : {'permutation', 'block'}, default 'permutation'
        'permutation': the rows of each segment are permuted one by one (Matteson and
        James), valid when the rows are exchangeable — **not for autocorrelated series**
        (benchmark timings, sensor readings, prices, river flows): on AR(1) noise with
        φ = 0.5 and no change it finds a change in most series.  'block': blocks of
        ``block_size`` consecutive rows are permuted within each segment (the block
        permutation of Kirch 2007), which keeps the dependence within a block; see Notes
        for its measured level.  A lag-1 autocorrelation of the residuals above
        max(0.1, 3/√T) with 'permutation' is a warning that says to use 'block'.
    block_size : int, optional
        The block length with ``resampling='block'``; by default chosen at every test from
        the residuals of the current segments with the split being tested: the largest of
        twice the length of Politis and White's rule (2004, with Patton, Politis and White
        2009) on the residuals and three times that on their squares (at most a third of
        the shortest segment), recorded in the result's ``block_sizes``.  The rule's lag
        window on the residuals reaches the last autocorrelation up to lag T/4 that is
        significant over all those lags (Bonferroni, 1 %), so that seasonal and slowly
        decaying dependence is seen; measured (``benchmarks/changepoint_level.py``, 300
        series, no change): seasonal AR(12), T = 480, false changes 0.59 → 0.21 (blocks of
        about 42 rows; still above 0.05); ARFIMA d = 0.3, T = 500, 0.34 (not fixed); AR(1)
        φ = 0.5 0.037, φ = 0.8 0.067, iid 0.040; the power on a 1-SD shift under AR(1)
        φ = 0.5 0.997.
    kappa : {'search', 'end'}, default 'search'
        'search': the right end κ of the second part is searched too, as in the paper
        and R ``ecp``; 'end': κ is the end of the segment (the variant of the
        signal-processing-algorithms package), one split position per segment.  With one
        change per segment 'end' has more power (see Notes); the test re-runs the same
        search on every permutation either way, so both are valid.
    metric : {'energy', 'euclidean', 'laplacian', 'gaussian'}, default 'energy'
        The semimetric (as in :func:`energystats.pairwise`); 'energy' uses ``exponent``,
        'euclidean' is 'energy' with exponent 1 ('sqeuclidean', exponent 2, is refused as
        ``exponent=2`` is), 'laplacian' and 'gaussian' use ``sigma``.  The searches compute rho in their compiled kernel, which has
        these only: SciPy's other names (see the guide page "Choosing a semimetric"),
        callables and 'precomputed' are refused.
    sigma : float, default 1.0
        Bandwidth of 'laplacian' and 'gaussian'.
    check_negative_type : bool, default True
        False accepts SciPy's names refused because the energy statistics are not
        valid with them (as in :func:`energystats.pairwise`).
    columns : list, optional
        With a DataFrame ``X``: the columns used (default: all; a non-numeric one is an
        error naming it).
    rng : int, numpy.random.Generator or None
        Source of the permutations; with None a seed is drawn and recorded in ``seed``.
    n_threads : int or None
        Threads of the compiled searches (None: the cores not busy with other work for the
        searches of the data, every available core for the permuted re-searches, which share
        out their permutations as threads free up; on the Dask backend, threads per task,
        default 1).  The result does not depend on it.
    progress : 'auto', bool or file-like, default 'auto'
        Show the permutations' progress: 'auto' on ``sys.stderr`` when it is a terminal
        or a Jupyter notebook's output, True on ``sys.stderr`` whatever it is, or on the given stream; threads backend
        only ('auto' is ignored with backend='dask').
    backend : {None, 'threads', 'dask'}, default None
        Where the permuted re-searches run.  None and 'threads': this process's threads.
        'dask': tasks on the current Dask scheduler (a ``distributed.Client`` if one is
        active), ``n_threads`` threads each (default 1).  A task re-searches a batch of
        permutations of about 10⁸ split cells (about 0.1 s; one permutation of T = 2000 is
        2·10⁶ cells, of T = 150 about 10⁴, so small series share a task), drawn by a chain
        of small tasks from the stage's generator exactly as the threads draw them.  The
        observed splits are searched here and the series stays in memory (Dask input is
        refused); with 'sequential' or 'decision' the permutations run in rounds of 16, 32,
        64, ... between which the rule looks at them in draw order.  The result is the same
        bits as on the threads for the same ``rng``: change points, statistics, p-values,
        permutations used.  Overhead: T = 2000, R = 199 took 0.51 s on a two-worker local
        cluster against 0.28 s on two threads (load 4.8 on two cores;
        ``docs/benchmarks/dask_resampling.txt``): Dask pays off with more cores than this.

    Returns
    -------
    EDivisiveResult
        ``changepoints``, ``changepoint_labels``, ``labels``, ``statistics``, ``pvalues``,
        ``order_found``, ``rejected``, ``rejected_statistic``, ``rejected_pvalue``,
        ``n_resamples``, ``decisions``, ``seed``, ``resampling``, ``block_sizes``,
        ``lag1_autocorrelation``, ``at_boundary``; :meth:`~EDivisiveResult.to_frame` and
        :meth:`~EDivisiveResult.plot`.

    Warns
    -----
    ChangePointWarning
        When an accepted change point lies exactly ``min_size`` rows from the start or the
        end of the part it split (the constraint binds: the best split may lie closer to
        that end; the Nile's 1898 change is found at 1901 with ``min_size=30``), naming it
        and suggesting a smaller ``min_size``; and when the residuals are autocorrelated
        with ``resampling='permutation'``.

    Notes
    -----
    For samples X (n rows) and Y (m rows),

    .. math::

        \hat{\mathcal E}(X, Y; \alpha) = \frac{2}{nm}\sum_{i,j} \lVert X_i - Y_j\rVert^\alpha
        - \binom{n}{2}^{-1}\sum_{i<k} \lVert X_i - X_k\rVert^\alpha
        - \binom{m}{2}^{-1}\sum_{j<k} \lVert Y_j - Y_k\rVert^\alpha,
        \qquad \hat Q = \frac{nm}{n+m}\hat{\mathcal E}

    (U-type within-sample averages).  The best split of a segment :math:`Z_1 \dots Z_T`
    maximises :math:`\hat Q(Z_{1..\tau}, Z_{\tau+1..\kappa})` over τ < κ with both parts at
    least ``min_size`` long; the change point is :math:`\tau` (0-based: the first row of
    the new segment).  Ties: the smallest τ, then the smallest κ; between segments, the
    first segment.  The search is exact, O(T²·d) time and O(T) memory per segment (one row
    of distances added per τ, every κ from running sums; no T×T matrix).

    Each stage's test permutes the rows within every current segment, re-runs the whole
    stage's search and counts the permuted maxima that reach the observed one (within a
    relative 10⁻¹⁰: rounding).  The p-value is for "a further change exists given the
    segments found so far"; it is valid because the search itself is repeated on every
    permutation.  Every stage draws its permutations from its own generator, seeded from
    ``rng`` in stage order, so that the tests of 'sequential' and 'decision' use a prefix
    of the permutations 'full' uses.

    A constant series has every :math:`\hat Q = 0`: the first test's p-value is 1 and no
    change point is found; with ``n_changepoints`` the splits fall where the tie rule puts
    them, and a warning says so.

    **What the test can see.**  The split search maximises over τ *and* κ (the right end
    of the second part is searched too, as in the paper), which costs power when there is
    one change: on a change in correlation only (d = 2, ρ 0 → 0.8 at T/2, R = 99, 40
    series) detection was 0.075 at T = 200 and 0.22 at T = 500 with ``kappa='search'``,
    0.125 and 0.85 with ``kappa='end'`` (whose level on iid noise was 0.047 ± 0.013, 300
    series at T = 200).  Use 'end' when a segment is expected to hold one change; 'search'
    finds a short segment inside a longer one (an epidemic change) that 'end' splits
    less well.  ``min_size`` (default 30, as R ``ecp``): no segment shorter is found,
    and a change closer than ``min_size`` rows to another or to an end cannot be placed
    exactly (the warning above); smaller values find short segments at the price of
    noisier splits — 5 % to 10 % of T with at least 10 rows is a reasonable range.

    **Serial dependence.**  With ``resampling='block'`` the level was measured by
    simulation (``benchmarks/changepoint_level.py``, 300 series a cell; the guide page
    "Change points" has the table): at T = 500 and 2 000 within two binomial standard
    errors of 0.05 for AR(1) with φ up to 0.8, ARMA(1,1) and a d = 3 VAR(1), GARCH(1,1)
    at T = 500 (conservative at 2 000: 0.020); not at T = 200 with φ ≥ 0.5 (0.083,
    0.113).  The default ``resampling='permutation'`` rejects 11 % (GARCH) to 100 % (AR,
    ARMA, VAR) of such series with no change.

    References
    ----------
    .. [1] Matteson, D. S. and James, N. A. (2014). A nonparametric approach for multiple
       change point analysis of multivariate data. J. Amer. Statist. Assoc. 109(505),
       334–345.
    .. [2] James, N. A. and Matteson, D. S. (2014). ecp: An R package for nonparametric
       multiple change point analysis of multivariate data. J. Stat. Softw. 62(7).

    Examples
    --------
    >>> import numpy as np
    >>> import energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0, 1, 100), rng.normal(3, 1, 100)])
    >>> res = es.e_divisive(x, min_size=20, n_resamples=99, rng=1)
    >>> res.changepoints.tolist(), res.pvalues.tolist()
    ([100], [0.01])
    >>> res.rejected_pvalue > 0.05
    True

    Two splits, untested (the second is noise, as the test above said):

    >>> fixed = es.e_divisive(x, min_size=20, n_changepoints=2)
    >>> fixed.order_found.tolist(), fixed.pvalues
    ([100, 38], None)
    >>> fixed.to_frame()[["start", "end", "length"]]
             start  end  length
    segment
    0            0   38      38
    1           38  100      62
    2          100  200     100
    """
    on_dask = _backend_iv(backend, X, progress)
    Z, index, cols = time_series(X, columns)
    T = Z.shape[0]
    min_size, end_only = _check_search(T, min_size, kappa, resampling, block_size)
    met = _check_metric(metric, exponent, sigma, check_negative_type)
    R, nt = _check_tests(T, min_size, n_changepoints, sig_level, n_resamples, pvalue_method,
                         n_threads)
    testing = n_changepoints is None
    gen, seed = seeded_rng(rng)  # checked even where unused
    if not testing:
        _refuse_test_settings(n_changepoints, n_resamples, pvalue_method, sig_level, resampling,
                              block_size, rng, progress, backend)
        gen, seed = None, None  # no test runs: nothing is drawn
        if n_changepoints > 0 and np.all(Z == Z[0]):
            warn("`X` is constant: every split has Q = 0, so the change points returned follow "
                 "the tie rule (smallest position), not the data.", ChangePointWarning)

    # working units: the data times a power of two, so that no distance overflows or
    # underflows; Q converts back exactly (energy: degree exponent; kernels: sigma scaled)
    Zw, met_w, scale = normalise(met, Z)
    test, test_nt = _stage_test(on_dask, n_threads, nt)
    tests = _Tests(test, test_nt, gen, R, pvalue_method, sig_level, resampling, block_size,
                   progress) if testing else None
    st = _divide(Zw, min_size, met_w, scale, nt, end_only, n_changepoints, tests)
    cps = np.sort(np.asarray(st.found, dtype=np.intp))
    rho1 = _blocks.lag1_autocorrelation(Zw, st.segments)
    _warn_findings(st.edge, index, min_size, rho1, T, resampling, testing)
    checks = _series_checks(Zw, st, cols, T, testing)
    return EDivisiveResult(
        changepoints=cps, changepoint_labels=index_labels(cps, index),
        labels=segment_labels(cps, T), statistics=np.asarray(st.stats, dtype=np.float64),
        pvalues=np.asarray(st.pvals, dtype=np.float64) if testing else None,
        order_found=np.asarray(st.found, dtype=np.intp), rejected=st.rejected,
        rejected_statistic=st.rej_stat, rejected_pvalue=st.rej_p, n_resamples=tuple(st.used),
        decisions=tuple(st.decisions), seed=seed, min_size=min_size,
        exponent=met.param if met.name == "energy" else float("nan"), sig_level=float(sig_level),
        pvalue_method=pvalue_method if testing else None, columns=cols, index=index, data=Z,
        resampling=resampling if testing else None, block_sizes=tuple(st.blocks),
        block_rules=tuple(st.block_rules),
        lag1_autocorrelation=rho1, at_boundary=tuple(sorted(st.edge)), series_checks=checks)


def _check_search(T, min_size, kappa, resampling, block_size):
    """The checked search settings against the series length: ``(min_size, end_only)``."""
    if T < 4:
        raise ValueError(f"`X` is too short: the series has T = {T} row(s), and a split needs "
                         f"at least 4 (two rows on each side, min_size >= 2).")
    if kappa not in ("search", "end"):
        raise ValueError(f"`kappa` must be 'search' or 'end'; got {kappa!r}.")
    end_only = kappa == "end"
    if resampling not in RESAMPLING:
        raise ValueError(f"`resampling` must be 'permutation' or 'block'; got {resampling!r}.")
    if block_size is not None:
        if resampling != "block":
            raise ValueError(f"`block_size` is for resampling='block'; got block_size="
                             f"{block_size!r} with resampling={resampling!r}.")
        if not is_int(block_size) or not 1 <= block_size <= T // 2:
            raise ValueError(f"`block_size` must be None or an integer in [1, T // 2 = "
                             f"{T // 2}]; got {block_size!r}.")
    if not is_int(min_size) or min_size < 2:
        raise ValueError(f"`min_size` must be an integer >= 2 (the within terms need two rows); "
                         f"got {min_size!r}.")
    min_size = int(min_size)
    if 2 * min_size > T:
        raise ValueError(f"`min_size` must be at most T // 2 = {T // 2} (both sides of a split "
                         f"need min_size rows; the series has T = {T}); got {min_size}.")
    return min_size, end_only


def _check_metric(metric, exponent, sigma, check_negative_type):
    """The resolved metric, one of those the compiled split search computes."""
    check_exponent(exponent)  # checked even where unused (the kernel metrics)
    if callable(metric) or (isinstance(metric, str) and metric.lower() == "precomputed"):
        raise ValueError(f"`metric` must be one of 'energy' (or its SciPy name 'euclidean'), "
                         f"'gaussian', 'laplacian' for the change-point searches; "
                         f"got {metric!r}.")
    met = resolve_metric(metric, exponent, sigma, allow_precomputed=False,
                         check_negative_type=check_negative_type)
    if met.kind == "builtin" and met.code == 0 and met.param == 2.0:
        # 'sqeuclidean' is the energy metric with exponent 2, refused above for `exponent`
        raise ValueError(f"metric={metric!r} is |x - y|^2, the energy metric with exponent 2: "
                         f"the change-point divergence then compares means only; use "
                         f"metric='energy' (or 'euclidean') with an exponent in (0, 2).")
    if met.kind != "builtin" or met.code not in _KERNEL_METRICS:
        # the compiled search computes rho itself, for these three codes only
        raise ValueError(f"`metric` must be one of 'energy' (or its SciPy name 'euclidean'), "
                         f"'gaussian', 'laplacian' for the change-point searches; "
                         f"got {metric!r}.")
    return met


def _check_tests(T, min_size, n_changepoints, sig_level, n_resamples, pvalue_method, n_threads):
    """The checked number of splits and test settings: ``(n_resamples, n_threads)``."""
    kmax = T // min_size - 1
    if n_changepoints is not None and (not is_int(n_changepoints) or not 0 <= n_changepoints <= kmax):
        raise ValueError(f"`n_changepoints` must be None or an integer in [0, T // min_size - 1] = "
                         f"[0, {kmax}] (T = {T}, min_size = {min_size}); got {n_changepoints!r}.")
    if not (isinstance(sig_level, numbers.Real) and not isinstance(sig_level, bool)
            and 0.0 < float(sig_level) < 1.0):
        raise ValueError(f"`sig_level` must be a number in (0, 1); got {sig_level!r}.")
    R = _sequential.check_resamples(n_resamples, low=1)
    if pvalue_method == "sequential" and R < SEQUENTIAL_H:
        raise ValueError(f"`n_resamples` must be at least {SEQUENTIAL_H} with "
                         f"pvalue_method='sequential' (it stops at the {SEQUENTIAL_H}th permuted "
                         f"maximum reaching the observed one); got {R}.")
    # checked even where unused
    _sequential.make_rule(pvalue_method, R, h=SEQUENTIAL_H, alpha=float(sig_level))
    return R, check_n_threads(n_threads)


def _refuse_test_settings(n_changepoints, n_resamples, pvalue_method, sig_level, resampling,
                          block_size, rng, progress, backend):
    """With ``n_changepoints`` given, the tests' settings given too are an error, not ignored."""
    unused = [name for name, given in (("n_resamples", n_resamples != 199),
                                       ("pvalue_method", pvalue_method != "full"),
                                       ("sig_level", sig_level != 0.05),
                                       ("resampling", resampling != "permutation"),
                                       ("block_size", block_size is not None),
                                       ("rng", rng is not None),
                                       ("progress", progress not in ("auto", False, None)),
                                       ("backend", backend == "dask")) if given]
    if unused:
        raise ValueError(f"{', '.join(f'`{u}`' for u in unused)}: for the permutation tests, "
                         f"which do not run with `n_changepoints` given (the first "
                         f"{n_changepoints} split(s) are returned untested); leave "
                         f"{'it' if len(unused) == 1 else 'them'} out.")


@dataclass
class _Tests:
    """The settings of the stages' permutation tests (the driver and its threads included)."""

    run: object
    n_threads: int
    gen: object
    R: int
    pvalue_method: str
    sig_level: object
    resampling: str
    block_size: object
    progress: object


@dataclass
class _Stages:
    """What the stages of :func:`e_divisive` record, and the current segments."""

    segments: list
    found: list = field(default_factory=list)
    stats: list = field(default_factory=list)
    pvals: list = field(default_factory=list)
    used: list = field(default_factory=list)
    decisions: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    block_rules: list = field(default_factory=list)
    edge: list = field(default_factory=list)
    rejected: object = None
    rej_stat: object = None
    rej_p: object = None


def _divide(Zw, min_size, met_w, scale, nt, end_only, n_changepoints, tests):
    """The stages: split the best segment, tested when ``tests`` is given, until a stop."""
    st = _Stages(segments=[(0, Zw.shape[0])])
    cache = {}
    while tests is not None or len(st.found) < n_changepoints:
        best = _best_split(Zw, st.segments, cache, min_size, met_w, nt, end_only)
        if best is None:
            if tests is None:
                warn(f"`n_changepoints={n_changepoints}`: only {len(st.found)} split(s) found; "
                     f"no segment left has 2 * min_size = {2 * min_size} rows.", ChangePointWarning)
            break
        q, pos, seg = best
        if tests is not None:
            p, reject = _test_stage(tests, st, Zw, q, pos, seg, min_size, met_w, end_only)
            if reject:
                st.rejected, st.rej_stat, st.rej_p = pos, float(scale.apply(q)), p
                break
            st.pvals.append(p)
        st.found.append(pos)
        st.stats.append(float(scale.apply(q)))
        kappa = cache[seg][2]
        # the min_size constraint binds at this split (on the part's ends, or on the end kappa
        # of the right sample), or nearly: within max(2, 5 % of the part) rows beyond it on
        # the part's ends, where the best split may have been pushed inwards by it
        # (a split at the part's centre is pushed towards neither end)
        slack = max(2, int(math.ceil(0.05 * (seg[1] - seg[0]))))
        near = min(pos - seg[0], seg[1] - pos)
        if q > 0 and ((near - min_size <= slack and 2 * near < seg[1] - seg[0] - 1)
                      or near == min_size or kappa - pos == min_size):
            st.edge.append(pos)
        i = st.segments.index(seg)
        st.segments[i:i + 1] = [(seg[0], pos), (pos, seg[1])]
    return st


def _best_split(Zw, segments, cache, min_size, met_w, nt, end_only):
    """``(Q, position, segment)`` of the best split over ``segments`` (None: none splits)."""
    for seg in segments:
        if seg not in cache:
            cache[seg] = segment_split(Zw, seg[0], seg[1], min_size, met_w, nt, end_only)
    best = None
    for seg in segments:  # segments in row order: the first wins a tie
        q, pos, _ = cache[seg]
        if pos >= 0 and (best is None or q > best[0]):
            best = (q, pos, seg)
    return best


def _test_stage(tests, st, Zw, q, pos, seg, min_size, met_w, end_only):
    """One stage's test of the split at ``pos`` of ``seg``, recorded in ``st``: ``(p, reject)``."""
    stage_gen = np.random.default_rng(int(tests.gen.integers(0, 2**63 - 1)))
    rule = _sequential.make_rule(tests.pvalue_method, tests.R, h=SEQUENTIAL_H,
                                 alpha=float(tests.sig_level))
    block = None
    if tests.resampling == "block":
        # the residuals of the segments with the split being tested: a change left
        # in them would look like dependence and inflate the blocks
        i = st.segments.index(seg)
        trial = st.segments[:i] + [(seg[0], pos), (pos, seg[1])] + st.segments[i + 1:]
        inputs = {"block_size": int(tests.block_size)} if tests.block_size is not None else {}
        block = int(tests.block_size) if tests.block_size is not None else \
            _blocks.auto_block_length(Zw, trial, inputs)
        st.blocks.append(block)
        st.block_rules.append(inputs)
    p, n_used, decision = tests.run(
        Zw, st.segments, q, min_size, met_w, tests.n_threads, stage_gen, tests.R, rule,
        tests.progress, f"test {len(st.found) + 1}: permutations", block=block, end_only=end_only)
    if tests.pvalue_method == "decision":
        reject = decision == "p > alpha" or (decision is None and p > tests.sig_level)
        st.decisions.append(decision)
    else:
        reject = p > tests.sig_level
    st.used.append(n_used)
    return p, reject


def _backend_iv(backend, X, progress):
    """Whether the permutation tests run on Dask (``backend``, checked; Dask missing is an
    ImportError that says what to install)."""
    if is_dask(X):
        raise TypeError("`X` is a Dask collection: e_divisive keeps the series in memory (with "
                        "backend='dask' its permuted re-searches are the tasks); compute it "
                        "first (`X.compute()`).")
    if not use_dask(backend, True, ()):
        return False
    if progress not in (False, None, "auto"):
        raise ValueError("`progress=` is for the threads backend; with backend='dask' use Dask's "
                         "own (the dashboard, or `distributed.progress`).")
    return True


def _stage_test(on_dask, n_threads, nt):
    """The stage test's driver and its threads: this process's, or Dask tasks' (one thread
    each unless ``n_threads`` is given).

    With ``n_threads=None`` the permuted re-searches take every available core even on a busy
    machine (the observed searches take the idle ones): each thread takes whole groups of
    permutations as it frees up, so a thread the scheduler sets aside delays only its own
    group, and a process with more threads gets more of a shared CPU.  Measured
    (``benchmarks/bench_busy.py``, AVX2, two busy-loop processes on two cores): wall time 1.98×
    the quiet one with both cores, 2.64× with the one idle-core thread."""
    if not on_dask:
        return stage_pvalue, (available_cores() if n_threads is None else nt)
    from . import _dask

    return _dask.stage_pvalue, (1 if n_threads is None else nt)


#: the lag-1 autocorrelation within the segments found above which a unit root in the series
#: is reported (a random walk cut into pieces keeps about 0.9 in each; independent rows
#: around shifted means keep none)
UNIT_ROOT_RHO1 = 0.5


def _series_checks(Zw, st, cols, T, testing):
    """The time-series diagnostics (:func:`energystats._core._serial.series_findings`): a unit
    root in the series, long memory and seasonality in the residuals of the segments found,
    and a block longer than T/4; each finding a
    SeriesDependenceWarning, all of them the result's ``series_checks``."""
    if not testing:
        return ()
    names = [str(c) for c in cols] if cols is not None else \
        (["the series"] if Zw.shape[1] == 1 else [f"column {j}" for j in range(Zw.shape[1])])
    # a unit root in the series itself (the segments found would cut a random walk into
    # level pieces), counted only when the residuals of the segments stay persistent (a large
    # shift in the mean of independent rows also keeps a Dickey-Fuller test from rejecting);
    # long memory and seasonality in the residuals (a shift left in would look like memory)
    E = _blocks.residuals(Zw, st.segments)
    # a column whose residuals are rounding noise (exact segment means) is constant
    live = np.max(np.abs(E), axis=0) > 1e-12 * np.max(np.abs(Zw), axis=0)
    # each column's own signed lag-1 autocorrelation within the segments
    persistent = _blocks.lag1_autocorrelations(Zw, st.segments) > UNIT_ROOT_RHO1
    raw = series_findings(Zw, names, use=live, unit_root=persistent)[0]
    within = series_findings(E, names, use=live)[0]
    found = ([f for f in raw if f[0] in ("too short", "unit root")]
             + [f for f in within if f[0] in ("long memory", "seasonal")])
    texts = [text for _, text in found]
    long_blocks = [b for b in st.blocks if b > T / 4]
    if long_blocks:
        texts.append(f"a block of {max(long_blocks)} rows is longer than T/4 = {T / 4:g}: so few "
                     "blocks cannot show a change (the permuted series are near copies of the "
                     "observed one); use a smaller block_size")
    for kind, text in found:
        if kind != "too short":
            also = (" — or a change the tests did not accept left in the residuals"
                    if kind in ("long memory", "unit root") else "")
            warn(f"`e_divisive`: {text}{also} (the p-values assume dependence that the "
                 "resampling sees).", SeriesDependenceWarning)
    if long_blocks:
        warn(f"`e_divisive`: {texts[-1]}.", SeriesDependenceWarning)
    return tuple(texts)


def _warn_findings(edge, index, min_size, rho1, T, resampling, testing):
    """The warnings about the answer: change points where ``min_size`` binds, and an
    autocorrelation that the plain permutation test does not allow for."""
    if edge:
        labels = [v.item() if hasattr(v, "item") else v for v in index_labels(sorted(edge), index)]
        warn(f"`e_divisive`: change point(s) at {labels} lie at or just beyond min_size = "
             f"{min_size} rows from an end of the part they split (within max(2, 5 % of the "
             "part) rows of it): the constraint binds or nearly binds, and the change may lie "
             "closer to that end. Rerun with `min_size` smaller to see.", ChangePointWarning)
    if testing and resampling == "permutation" and rho1 > max(AUTOCORR_WARN, 3.0 / np.sqrt(T)):
        warn(f"`e_divisive`: the residuals within the segments found have a lag-1 "
             f"autocorrelation of {rho1:.2f}: the rows are not exchangeable, and the "
             "permutation test finds changes that are not there on autocorrelated series. Use "
             "resampling='block'.", ChangePointWarning)
