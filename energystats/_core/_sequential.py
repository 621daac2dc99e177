"""Sequential Monte Carlo p-values: stop resampling once the answer is clear.

Two rules, chosen by a test's ``pvalue_method``, each fixed before the first
resample (which is what makes them valid):

* ``"sequential"`` -- Besag & Clifford (1991), "Sequential Monte Carlo
  p-values", Biometrika 78(2): draw resamples until ``h`` of them reach the
  observed statistic, or until ``R_max`` were drawn.  Stopped at the ``L``-th
  resample by the ``h``-th exceedance, ``p = h / L``; otherwise, with ``g < h``
  exceedances among all ``R_max``, ``p = (g + 1) / (R_max + 1)``.  For every
  u, ``P(p ≤ u) ≤ u`` under the null hypothesis.  Large p-values stop early
  (about ``h / p`` resamples); small ones cost ``R_max``.
* ``"decision"`` -- Gandy (2009), "Sequential implementation of Monte Carlo
  tests with uniformly bounded resampling risk", JASA 104(488): decides
  whether the p-value the full resampling would estimate lies above or
  below ``alpha``, stopping when the count of exceedances after ``n``
  resamples crosses boundaries ``U_n`` / ``L_n`` computed so that, whatever
  the true p-value, the decision differs from the one an infinite number of
  resamples would give with probability at most ``epsilon`` (spent as
  ``epsilon n / (n + 1000)``).  Clear answers either way stop early; with
  ``R_max`` reached first the decision is left open (``None``).

Both look at the resamples in the order they were drawn, so the outcome does
not depend on how the resamples were batched; the drivers evaluate them in
growing batches (:func:`batches`) and give the rule each batch in turn.
"""
from __future__ import annotations

import functools
import threading

import numpy as np

__all__ = ["make_rule", "RuleSet", "used_text", "batches", "collect", "exceeds", "final_pvalue", "PVALUE_METHODS"]

PVALUE_METHODS = ("full", "sequential", "decision")

#: the first batch of a sequential test; each next batch doubles, up to the engine's batch
FIRST_BATCH = 16
#: Gandy's spending sequence epsilon * n / (n + SPENDING_K)
SPENDING_K = 1000


def batches(total, cap, sequential):
    """Batch sizes covering ``total`` resamples: ``cap`` each, or, for a sequential rule,
    16, 32, 64, ... up to ``cap`` (so an early stop wastes little)."""
    cap = max(1, int(cap))
    size = min(FIRST_BATCH, cap) if sequential else cap
    done = 0
    while done < total:
        step = min(size, total - done)
        yield step
        done += step
        size = min(cap, 2 * size)


class BesagClifford:
    """Stop at the ``h``-th exceedance (see the module docstring)."""

    name = "sequential"
    sequential = True
    decision = None

    def __init__(self, h, R_max):
        self.h = int(h)
        self.R_max = int(R_max)
        self.used = 0
        self.exceedances = 0
        self.stopped = False

    def update(self, exceed):
        """Take the next resamples' exceedance flags (in draw order); True once stopped.
        ``used`` then counts the resamples the rule looked at (later ones are dropped)."""
        exceed = np.asarray(exceed, dtype=bool)
        counts = self.exceedances + np.cumsum(exceed)
        hit = np.flatnonzero(counts >= self.h)
        if hit.size:
            self.used += int(hit[0]) + 1
            self.exceedances = self.h
            self.stopped = True
        else:
            self.used += exceed.size
            self.exceedances = int(counts[-1]) if counts.size else self.exceedances
        return self.stopped

    def pvalue(self):
        if self.stopped:
            return self.h / self.used
        return (self.exceedances + 1.0) / (self.R_max + 1.0)


class _GandyBounds:
    """Gandy's (2009) boundaries for one (alpha, epsilon), extended on demand.

    With ``f_n(j) = P_alpha(not stopped before n, S_n = j)`` (S_n the exceedances among the
    first n resamples when each exceeds with probability alpha), ``U_n`` is the smallest j
    and ``L_n`` the largest (``-1``: none) such that the probability of stopping at or beyond
    the boundary by step n stays within ``epsilon n / (n + 1000)``.  Computing them costs
    O(width) per step, so they are computed only as far as a test has gone.
    """

    def __init__(self, alpha, epsilon):
        self.alpha, self.epsilon = alpha, epsilon
        self.U = np.empty(0, dtype=np.int64)
        self.L = np.empty(0, dtype=np.int64)
        self.f = np.zeros(2)
        self.f[0] = 1.0  # S_0 = 0
        self.spent_u = self.spent_l = 0.0
        self.lo = self.hi = 0  # support of f: indices lo..hi
        self.lock = threading.Lock()

    def upto(self, count):
        """``(U, L)`` for n = 1 .. count (index n - 1)."""
        with self.lock:
            if count > self.U.size:
                self._extend(max(count, 2 * self.U.size))
            return self.U[:count], self.L[:count]

    def _extend(self, count):
        alpha, epsilon = self.alpha, self.epsilon
        n0 = self.U.size
        U = np.concatenate([self.U, np.empty(count - n0, dtype=np.int64)])
        L = np.concatenate([self.L, np.empty(count - n0, dtype=np.int64)])
        f = np.concatenate([self.f, np.zeros(count - n0)])
        lo, hi, spent_u, spent_l = self.lo, self.hi, self.spent_u, self.spent_l
        for n in range(n0 + 1, count + 1):
            if lo > hi:  # every path has stopped: the boundaries stay where they were
                U[n - 1], L[n - 1] = U[n - 2], L[n - 2]
                continue
            # one more resample: f(j) <- f(j)(1 - alpha) + f(j - 1) alpha on the surviving support
            seg = f[lo:hi + 1].copy()
            f[lo:hi + 2] = 0.0
            f[lo:hi + 1] += seg * (1.0 - alpha)
            f[lo + 1:hi + 2] += seg * alpha
            hi += 1
            eps_n = epsilon * n / (n + SPENDING_K)
            win = f[lo:hi + 1]
            tail = np.cumsum(win[::-1])[::-1]  # tail[i] = P(S_n >= lo + i, alive)
            ok = np.flatnonzero(tail + spent_u <= eps_n)
            u = lo + int(ok[0]) if ok.size else hi + 1
            head = np.cumsum(win)  # head[i] = P(S_n <= lo + i, alive)
            ok = np.flatnonzero(head + spent_l <= eps_n)
            low = lo + int(ok[-1]) if ok.size else lo - 1
            U[n - 1], L[n - 1] = u, low
            if u <= hi:
                spent_u += float(f[u:hi + 1].sum())
                f[u:hi + 1] = 0.0
                hi = u - 1
            if low >= lo:
                spent_l += float(f[lo:low + 1].sum())
                f[lo:low + 1] = 0.0
                lo = low + 1
        self.U, self.L, self.f = U, L, f
        self.lo, self.hi, self.spent_u, self.spent_l = lo, hi, spent_u, spent_l
        self.U.setflags(write=False)
        self.L.setflags(write=False)


@functools.lru_cache(maxsize=16)
def _bounds(alpha, epsilon):
    return _GandyBounds(alpha, epsilon)


def gandy_boundaries(alpha, epsilon, R_max):
    """Gandy's boundaries ``(U, L)`` for n = 1 .. R_max (see :class:`_GandyBounds`)."""
    return _bounds(float(alpha), float(epsilon)).upto(int(R_max))


class GandyDecision:
    """Decide p ≤ alpha or p > alpha with resampling risk at most ``epsilon`` (see above)."""

    name = "decision"
    sequential = True

    def __init__(self, alpha, epsilon, R_max):
        self.alpha = float(alpha)
        self.epsilon = float(epsilon)
        self.R_max = int(R_max)
        self.bounds = _bounds(self.alpha, self.epsilon)
        self.used = 0
        self.exceedances = 0
        self.stopped = False
        self.decision = None

    def update(self, exceed):
        exceed = np.asarray(exceed, dtype=bool)
        m = min(exceed.size, self.R_max - self.used)
        counts = self.exceedances + np.cumsum(exceed[:m])
        U, L = self.bounds.upto(self.used + m)
        up = counts >= U[self.used:]
        down = counts <= L[self.used:]
        hit = np.flatnonzero(up | down)
        if hit.size:
            i = int(hit[0])
            self.used += i + 1
            self.exceedances = int(counts[i])
            self.stopped = True
            self.decision = "p > alpha" if up[i] else "p <= alpha"
        else:
            self.used += m
            self.exceedances = int(counts[-1]) if m else self.exceedances
        return self.stopped

    def pvalue(self):
        """The usual estimate from the resamples used, (g + 1) / (n + 1): with an early stop
        it is a by-product, not a valid p-value; the decision is the result."""
        return (self.exceedances + 1.0) / (self.used + 1.0)


def used_text(n_resamples):
    """The resamples a result used, as text: '999', or '11/999' for one count per factor."""
    counts = np.atleast_1d(n_resamples)
    return str(int(counts[0])) if counts.size == 1 else "/".join(str(int(c)) for c in counts)


class RuleSet:
    """One rule per statistic of a resample (e.g. the factors of a several-factor DISCO that
    share relabellings): column f of each batch's exceedances goes to ``rules[f]`` until that
    rule stops; the set stops when all have.  ``used`` is the most any rule used."""

    sequential = True

    def __init__(self, rules):
        self.rules = list(rules)
        self.name = self.rules[0].name

    @property
    def used(self):
        return max(r.used for r in self.rules)

    @property
    def stopped(self):
        return all(r.stopped for r in self.rules)

    def update(self, exceed):
        exceed = np.asarray(exceed, dtype=bool).reshape(len(exceed), len(self.rules))
        for f, rule in enumerate(self.rules):
            if not rule.stopped:
                rule.update(exceed[:, f])
        return self.stopped


def check_rule_options(h=10, alpha=0.05, epsilon=1e-3):
    """``sequential_h``, ``alpha`` and ``epsilon`` checked whatever the ``pvalue_method`` (a
    wrong value is an error even where the method does not use it, never ignored);
    ``sequential_h ≤ n_resamples`` is checked by :func:`make_rule` where it is used."""
    if not (isinstance(h, (int, np.integer)) and not isinstance(h, bool) and 1 <= h <= MAX_RESAMPLES):
        raise ValueError(f"`sequential_h` must be an integer in [1, n_resamples]; got {h!r}.")
    if not (isinstance(alpha, (float, int, np.floating, np.integer)) and not isinstance(alpha, bool)
            and 0.0 < float(alpha) < 1.0):
        raise ValueError(f"`alpha` must be a number in (0, 1); got {alpha!r}.")
    if not (isinstance(epsilon, (float, int, np.floating)) and not isinstance(epsilon, bool)
            and 0.0 < float(epsilon) < 0.5):
        raise ValueError(f"`epsilon` must be in (0, 0.5); got {epsilon!r}.")


#: the most resamples a test takes (``n_resamples``): a full run's null distribution of this
#: many is 8 GB; the sequential rules keep only the resamples they use
MAX_RESAMPLES = 10**9


def check_resamples(n_resamples, low=0):
    """``n_resamples`` as an int in [low, MAX_RESAMPLES], else a ValueError naming the bound."""
    from ._validation import is_int

    if not is_int(n_resamples) or not low <= n_resamples <= MAX_RESAMPLES:
        raise ValueError(f"`n_resamples` must be an integer in [{low}, 10**9]; got {n_resamples!r}.")
    return int(n_resamples)


def make_rule(pvalue_method, R_max, *, h=10, alpha=0.05, epsilon=1e-3, exact=None, dask=False,
              also=()):
    """The stopping rule of ``pvalue_method`` (validated) for at most ``R_max`` resamples; None
    for 'full' (every resample).  A rule draws random resamples on this process's threads, so
    ``exact=True`` and the Dask backend are errors.  ``also``: the caller's other methods
    (handled before this call), named in the error for an unknown one.  ``h``, ``alpha`` and
    ``epsilon`` are checked for every method (:func:`check_rule_options`)."""
    if pvalue_method not in PVALUE_METHODS:
        known = ", ".join(map(repr, PVALUE_METHODS + tuple(also)))
        raise ValueError(f"`pvalue_method` must be one of {known}; got {pvalue_method!r}")
    check_rule_options(h, alpha, epsilon)
    if pvalue_method == "full":
        return None
    if exact:
        raise ValueError(f"`pvalue_method={pvalue_method!r}` stops drawing random resamples early; "
                         "it cannot be combined with `exact=True` (complete enumeration).")
    if dask:
        raise ValueError(f"`pvalue_method={pvalue_method!r}` is not available with backend='dask' "
                         "(its resamples are drawn ahead, in the graph); use 'full'.")
    if pvalue_method == "sequential":
        if not (isinstance(h, (int, np.integer)) and not isinstance(h, bool) and 1 <= h <= R_max):
            raise ValueError(f"`sequential_h` must be an integer from 1 to n_resamples ({R_max}); got {h!r}")
        return BesagClifford(h, R_max)
    if not (isinstance(alpha, (float, int, np.floating)) and 0.0 < float(alpha) < 1.0):
        raise ValueError(f"`alpha` must be in (0, 1); got {alpha!r}")
    if not (isinstance(epsilon, (float, int, np.floating)) and 0.0 < float(epsilon) < 0.5):
        raise ValueError(f"`epsilon` must be in (0, 0.5); got {epsilon!r}")
    return GandyDecision(alpha, epsilon, R_max)


def collect(total, cap, evaluate, observed, tol, rule, key=None):
    """The statistics of ``total`` resamples, ``evaluate(r0, m)`` giving those of resamples
    ``r0 .. r0 + m - 1`` in draw order: in batches of ``cap``, or under a sequential ``rule``
    of 16, 32, ... up to ``cap``, each batch shown to the rule (:func:`exceeds` with
    ``observed``, ``tol`` and ``key``); once it stops, the values end at the last resample it
    used.  A rule's values are kept batch by batch, so memory grows with the resamples it
    uses, not with ``total``."""
    from . import _progress

    # progress only where the caller asked for it without an argument of its own (the
    # command line's ambient setting); inside another bar's work, its steps count there
    bar = _progress.progress_bar(total, False, "resamples", "resample")

    def step(m):
        if bar is not None:
            bar.update(m)
        else:
            _progress.advance(m)

    try:
        if rule is None:
            null = np.empty(total)
            done = 0
            for m in batches(total, cap, False):
                null[done:done + m] = evaluate(done, m)
                done += m
                step(m)
            return null
        parts, done = [], 0
        for m in batches(total, cap, True):
            parts.append(np.asarray(evaluate(done, m), dtype=np.float64).reshape(m))
            done += m
            step(m)
            if rule.update(exceeds(parts[-1], observed, tol, key)):
                break
        return np.concatenate(parts)[:rule.used] if parts else np.empty(0)
    finally:
        if bar is not None:
            bar.close()


def exceeds(values, observed, tol, key=None):
    """The resamples that count against the observed statistic, as the package's p-value
    rule counts them: value ≥ observed − tol, a NaN value counting too (compared as
    ``key(value) ≥ key(observed) − tol`` with a ``key``, see
    :func:`energystats._core._permutation.pvalue_from_null`).  An observed statistic that is not
    finite has no p-value: every resample counts, so that a rule stops at once (its p-value
    is NaN and its decision None, :func:`final_pvalue`)."""
    values = np.asarray(values, dtype=np.float64)
    observed = np.asarray(observed, dtype=np.float64)
    if key is not None:
        values = np.asarray(key(values), dtype=np.float64)
        observed = np.asarray(key(observed), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return (values >= observed - tol) | np.isnan(values) | ~np.isfinite(observed)


def final_pvalue(pvalue, rule):
    """The p-value under ``rule``: the rule's wherever the full rule's is defined (NaN for a
    degenerate statistic, with its warning, stays NaN; None stays None).  Where there is no
    p-value (NaN or None) there is no decision either: the rule's ``decision`` is set to
    None (a NaN statistic is neither above nor below ``alpha``)."""
    if rule is None:
        return pvalue
    if pvalue is None or not np.isfinite(pvalue):
        rule.decision = None
        return pvalue
    return float(rule.pvalue())
