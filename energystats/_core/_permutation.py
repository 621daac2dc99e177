"""Private resampling engine: relabellings counted, enumerated or drawn, and their p-values.

:func:`permutation_null` draws the relabellings (deterministically from the
Generator, independent of batch sizes and thread counts) or enumerates them
all, and evaluates a statistic on each, through the group-sum engines of
:mod:`energystats._core._group_sums`.  :func:`pvalue_from_null` and its
helpers turn a null distribution into the p-value, its standard error and the
exact decision.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import math

import numpy as np

from .._lib import _permutation as _lib_permutation
from . import _progress, _sequential

__all__ = ["permutation_null", "count_relabellings", "enumerate_relabellings", "draw_permutations",
           "pvalue_from_null", "DegenerateStatisticWarning"]


# -- relabellings ------------------------------------------------------------

def count_relabellings(sizes, limit=None):
    """Number of distinct assignments of the group labels to the n positions,
    ``n! / Π n_j!``; returns ``limit + 1`` as soon as the count exceeds ``limit``."""
    total, left = 1, int(np.sum(sizes))
    for s in sizes:
        total *= math.comb(left, int(s))
        left -= int(s)
        if limit is not None and total > limit:
            return limit + 1
    return total


def count_stratified(codes, k, strata=None, limit=None):
    """Distinct relabellings of ``codes`` within ``strata`` (the product over strata of
    :func:`count_relabellings`); ``limit + 1`` as soon as the count exceeds ``limit``."""
    if strata is None:
        return count_relabellings(np.bincount(codes, minlength=k), limit)
    total = 1
    for idx in strata.positions:
        total *= count_relabellings(np.bincount(codes[idx], minlength=k), limit)
        if limit is not None and total > limit:
            return limit + 1
    return total


def _arrangements(codes, k):
    """Generator of all distinct rearrangements of ``codes`` (a multiset), each a new array."""
    codes = np.asarray(codes)
    n = codes.size
    sizes = np.bincount(codes, minlength=k)
    cur = np.empty(n, dtype=np.intp)

    def rec(avail, g):
        if g == k - 1:
            cur[list(avail)] = g
            yield cur.copy()
            return
        for chosen in itertools.combinations(avail, int(sizes[g])):
            cur[list(chosen)] = g
            rest = tuple(i for i in avail if i not in set(chosen))
            yield from rec(rest, g + 1)

    return rec(tuple(range(n)), 0)


def enumerate_relabellings(codes, k, batch=None, strata=None):
    """All distinct rearrangements of ``codes`` (a multiset), shape (N, n).

    The observed arrangement is one of them; each is equally likely under
    the null hypothesis of exchangeability.  With ``strata``
    (:class:`Strata`), the rearrangements within every stratum (the product
    over strata; the first stratum varies slowest).  With ``batch``, a
    generator of arrays of at most ``batch`` rows instead (the same rows in
    the same order), so that the enumeration is never held in memory at once.
    """
    codes = np.asarray(codes)
    n = codes.size

    if strata is None:
        def rows():
            return _arrangements(codes, k)
    else:
        per = [np.array(list(_arrangements(codes[idx], k)), dtype=np.intp).reshape(-1, idx.size)
               for idx in strata.positions]

        def rows():
            for choice in itertools.product(*(range(len(a)) for a in per)):
                cur = np.empty(n, dtype=np.intp)
                for idx, a, c in zip(strata.positions, per, choice):
                    cur[idx] = a[c]
                yield cur

    if batch is None:
        return np.array(list(rows()), dtype=np.intp).reshape(-1, n)

    def batches():
        it = rows()
        while True:
            chunk = list(itertools.islice(it, int(batch)))
            if not chunk:
                return
            yield np.array(chunk, dtype=np.intp).reshape(len(chunk), n)

    return batches()


class Strata:
    """Strata of the rows for permutations within strata: ``codes`` (n,) in 0..S-1."""

    def __init__(self, codes):
        self.codes = np.ascontiguousarray(codes, dtype=np.intp)
        self.order = np.argsort(self.codes, kind="stable")  # rows grouped by stratum
        counts = np.bincount(self.codes)
        self.positions = [p for p in np.split(self.order, np.cumsum(counts)[:-1]) if p.size]


#: the value types of the compiled shuffle (:func:`energystats._lib._permutation.shuffle_rows`)
_SHUFFLED = (np.dtype(np.uint8), np.dtype(np.int32), np.dtype(np.int64))


def draw_permutations(rng, values, count, strata=None):
    """``count`` random rearrangements of ``values`` (1-D), shape (count, len(values)).

    Without strata, row ``r`` is what the ``r``-th call ``rng.permutation(values)``
    would give, i.e. ``values[rng.permutation(len(values))]`` (the shuffle does
    not depend on the values).  With ``strata`` (:class:`Strata`), values are
    rearranged only within each stratum: row ``r`` sorts the positions of
    each stratum by the ``r``-th row of ``rng.random((count, n))`` (a uniform
    random permutation within every stratum).  Either way the draws depend
    only on the Generator's state, never on batch sizes or thread counts.
    """
    values = np.asarray(values)
    if strata is None:
        out = np.broadcast_to(values, (count, values.size)).copy()
        if out.dtype in _SHUFFLED and out.size:
            # NumPy's Fisher–Yates, the same draws, without its per-element generic copies
            _lib_permutation.shuffle_rows(rng.bit_generator, out)
            return out
        return rng.permuted(out, axis=1, out=out)  # in place: one copy of the batch
    keys = rng.random((count, values.size))
    order = np.lexsort((keys, np.broadcast_to(strata.codes, keys.shape)), axis=-1)
    del keys
    out = np.empty((count, values.size), dtype=values.dtype)
    out[:, strata.order] = values[order]
    return out


class DegenerateStatisticWarning(RuntimeWarning):
    """A test statistic is not finite (e.g. 0/0), so the test has no p-value (NaN)."""


class AntiConservativeWarning(UserWarning):
    """A requested procedure rejects far more often than its nominal level."""


def pvalue_from_null(observed, null, exact, what="statistic", tol=0.0, key=None):
    """One-sided p-value; relabelled values within ``tol`` below the observed one count as ties.

    Random relabellings: ``(1 + #{null ≥ observed − tol}) / (R + 1)``; exact
    enumeration (the observed arrangement included in ``null``):
    ``#{null ≥ observed − tol} / N``.  Works column-wise for 2-D ``null``
    (``tol`` a scalar or one value per column).  ``tol`` is the rounding
    error the statistic can carry (see :func:`sum_error`): relabellings whose
    exact value equals the observed one then count whatever the engine.

    ``key``: an increasing function of the statistic in which the values are compared
    (and ``tol`` is given), for a statistic whose rounding error cannot be bounded by a
    multiple of the summed terms, e.g. DISCO's ratio F, whose denominator W can be 0:
    F is compared as S / (S + W) (see :meth:`energystats._core._grouped._DiscoStatistic.key`),
    so F = inf (W = 0 < S) is the largest value, not a statistic without a p-value.

    A statistic that is not finite has no p-value: NaN, with a
    :class:`DegenerateStatisticWarning` (never the smallest p-value, which is
    what ``null >= nan`` being false would give).  Relabellings whose
    statistic is NaN count as exceedances (conservative), with a warning.
    """
    from ._validation import warn

    observed = np.asarray(observed, dtype=np.float64)
    null = np.asarray(null, dtype=np.float64)
    if key is not None:
        observed, null = np.asarray(key(observed), dtype=np.float64), np.asarray(key(null), dtype=np.float64)
    gamma = np.where(np.isfinite(tol), tol, 0.0)
    bad_null = np.isnan(null)
    with np.errstate(invalid="ignore"):  # inf - inf: the observed value is handled below
        ge = np.sum((null >= observed - gamma) | bad_null, axis=0)
    R = null.shape[0]
    p = ge / R if exact else (1.0 + ge) / (R + 1.0)
    finite = np.isfinite(observed)
    if not np.all(finite):
        warn(f"the observed {what} is {np.ravel(observed)[~np.ravel(finite)][0]} (not finite), so the "
             "test has no p-value (NaN). This happens when the statistic is 0/0, e.g. all points "
             "identical (every dispersion 0), or when a sum overflows float64 (a precomputed or "
             "callable metric with values near 1e308).",
             DegenerateStatisticWarning)
        p = np.where(finite, p, np.nan)
    elif bad_null.any():
        warn(f"{int(bad_null.sum())} of the {R} relabelled {what} values are NaN (a degenerate "
             "relabelling, e.g. 0/0); they were counted as at least as large as the observed "
             "value (conservative).", DegenerateStatisticWarning)
    return p


#: rounding error allowed in each computed group-pair sum ``M[g, h]``, in units of eps times
#: ``Σ|M|`` (the sum over all pairs, 2·n·T for a semimetric).  Sums over many pairs by
#: different engines (BLAS blocks, the largest group by subtraction, sorted prefix sums)
#: differ by a few units; a statistic's tie allowance (:func:`pvalue_from_null`'s ``tol``)
#: is this error carried through the statistic's formula (first order).  The largest
#: difference between exactly tied relabellings measured by tests/_core/test_ties.py on every
#: engine is a small fraction of the resulting allowance.
SUM_ERROR_ULPS = 64


def sum_error(M):
    """Error allowed in each entry of the group-pair sums ``M`` (one labelling, k×k)."""
    return SUM_ERROR_ULPS * np.finfo(np.float64).eps * float(np.abs(M).sum())


def pvalue_se(pvalue, n_resamples, exact):
    """Monte Carlo standard error of a permutation p-value: ``sqrt(p (1 - p) / R)``.

    0 for an exact (enumerated) p-value, None when there is no p-value.
    """
    if pvalue is None:
        return None
    p = np.asarray(pvalue, dtype=np.float64)
    se = np.zeros_like(p) if exact or n_resamples == 0 else np.sqrt(p * (1.0 - p) / n_resamples)
    se = np.where(np.isnan(p), np.nan, se)
    return float(se) if se.ndim == 0 else se


def decide_exact(cell_codes, n_cells, strata, n_resamples, exact, exact_limit=10**6):
    """Whether the test enumerates every relabelling (``exact``: None, True or False)."""
    if exact is None:
        return bool(n_resamples > 0
                    and count_stratified(cell_codes, n_cells, strata, n_resamples) <= n_resamples)
    if exact:
        N = count_stratified(cell_codes, n_cells, strata, exact_limit)
        if N > exact_limit:
            raise ValueError(f"`exact=True`: more than {exact_limit} distinct relabellings; "
                             "use random relabellings (`exact=None`).")
        return True
    return False


def skip_relabellings(rng, values, count, strata=None):
    """Advance ``rng`` past ``count`` relabellings of :func:`draw_permutations`, as if they had
    been drawn: within strata they use ``count · n`` uniform doubles (drawn and dropped in
    pieces of at most 2**20), otherwise they are drawn and dropped in batches."""
    n = np.asarray(values).size
    if strata is not None:
        left = int(count) * n
        while left > 0:
            step = min(left, 2**20)
            rng.random(step)
            left -= step
        return
    step = max(1, 2**20 // max(n, 1))
    for c0 in range(0, int(count), step):
        draw_permutations(rng, values, min(step, int(count) - c0))


def _bar_to(bar, done, m, f, n_engines, fraction):
    """Move ``bar`` to ``done`` plus the part of a batch of ``m`` that engine ``f`` (of
    ``n_engines``, run one after the other) has reached."""
    bar.update(done + m * (f + min(fraction, 1.0)) / n_engines - bar.n)


def permutation_null(engines, cell_codes, factor_maps, statistic, *, n_resamples, rng,
                     exact=None, exact_limit=10**6, progress=False, strata=None, rule=None,
                     tolerance=None, skip_rest=False, key=None):
    """Observed statistic and its null distribution.

    Parameters
    ----------
    engines : list
        One engine per factor (all built on the same rows).
    cell_codes : ndarray of intp, shape (n,)
        Observed cell of every row (one factor: the group codes).
    factor_maps : list of ndarray
        For factor ``f``, ``factor_maps[f][cell]`` is the factor's group code.
    statistic : callable
        ``statistic([M_f for f])`` with ``M_f`` of shape (B, k_f, k_f) returns
        an array of shape (B,) or (B, n_factors).
    n_resamples, rng, exact, progress
        As in the public functions.
    strata : Strata, optional
        Relabel only within these strata of the rows.
    rule : stopping rule of :mod:`energystats._core._sequential`, optional
        A sequential rule sees each batch's exceedances (relabelled value ≥
        observed − ``tolerance(M_observed)``, NaN counting as one) in draw
        order; once it stops, the null distribution is cut at the last
        relabelling it used.  With several statistics per relabelling, a
        :class:`~energystats._core._sequential.RuleSet` (one rule per statistic; the
        null is cut where the last one stopped).
    key : callable, optional
        The increasing function of the statistic in which the rule compares values
        (:func:`pvalue_from_null`'s ``key``).
    skip_rest : bool
        After an early stop, advance ``rng`` past the relabellings the full run
        would still have drawn (:func:`skip_relabellings`), so that the next
        user of ``rng`` gets the relabellings it would have after a full run.

    Returns
    -------
    observed, null, is_exact, M_observed (list per factor, each (k_f, k_f))
    """
    n_cells = len(factor_maps[0])
    sequential = rule is not None  # the caller's make_rule has ruled out exact=True
    is_exact = False if sequential else decide_exact(cell_codes, n_cells, strata, n_resamples, exact,
                                                     exact_limit)

    identity = [np.array_equal(fm, np.arange(fm.size)) for fm in factor_maps]

    def evaluate(cells):
        return statistic([eng.group_sums(cells if ident else np.ascontiguousarray(fm[cells]))
                          for eng, fm, ident in zip(engines, factor_maps, identity)])

    batch = max(1, min(eng.batch_size for eng in engines))
    # the draws do not depend on the values' type: bytes, where every engine takes them as they are
    small = n_cells <= 255 and all(getattr(eng, "small_codes", False) for eng in engines)
    draw_codes = cell_codes.astype(np.uint8) if small else cell_codes
    if strata is not None:
        batch = max(1, batch // 2)  # the draws' random keys and their sort order
    obs_M = [eng.group_sums(np.ascontiguousarray(fm[cell_codes][None, :]))
             for eng, fm in zip(engines, factor_maps)]
    observed = statistic(obs_M)[0]
    obs_M = [m[0] for m in obs_M]
    if is_exact:
        total = count_stratified(cell_codes, n_cells, strata)
        source = enumerate_relabellings(cell_codes, n_cells, batch, strata)
    else:
        total = int(n_resamples)
    if sequential:
        tol = tolerance(obs_M) if tolerance is not None else 0.0
    null = None
    parts = []  # a sequential rule's batches: memory grows with the relabellings it uses
    done = 0
    with _progress.progress_bar(total, progress) or contextlib.nullcontext() as bar:
        sizes = _sequential.batches(total, batch, sequential)
        while done < total:
            if is_exact:
                cells = next(source)
            else:
                cells = draw_permutations(rng, draw_codes, next(sizes), strata)
            if bar is not None:  # a long batch moves the bar by its parts (tiles, row blocks)
                for f, eng in enumerate(engines):
                    eng.on_part = functools.partial(_bar_to, bar, done, cells.shape[0], f,
                                                    len(engines))
            try:
                vals = np.asarray(evaluate(cells))
            finally:
                for eng in engines:
                    eng.on_part = None
            if sequential:
                parts.append(vals)
            else:
                if null is None:
                    null = np.empty((total,) + vals.shape[1:])
                null[done:done + cells.shape[0]] = vals
            done += cells.shape[0]
            del cells
            if bar is not None:
                bar.update(done - bar.n)
            if sequential and rule.update(_sequential.exceeds(vals, observed, tol, key)):
                if skip_rest and done < total:
                    skip_relabellings(rng, cell_codes, total - done, strata)
                break
            del vals
    if parts:
        null = np.concatenate(parts)[:rule.used]
    if null is None:
        null = np.empty((0,) + np.shape(observed))
    return observed, null, is_exact, obs_M


# -- restricted permutations: blocks exchangeable as wholes (hyppo's perm_blocks) ----------------

class PermutationBlocks:
    """The permutations of the rows allowed by a hierarchy of blocks (hyppo's ``perm_blocks``).

    ``levels`` (n, k) integer labels, checked by :func:`permutation_blocks`.  The rows form a
    tree: column 0 splits them into blocks by label, column 1 splits each block further, and so
    on; below the last column each block's rows are its children.  At every node the children
    whose label is non-negative are exchangeable as wholes (rows themselves always are), those
    with a negative label stay in place.  Exchanging two blocks maps the j-th row of one onto the
    j-th row of the other in *tree order* (sub-blocks by increasing label, rows by increasing
    position), as hyppo's ``_PermTree`` does; so exchangeable siblings must have the same shape
    (the same sizes, fixed or not, all the way down), which the constructor checks.

    A permutation is an array ``perm`` of shape (n,) with ``y[perm]`` the rearranged rows.  The
    allowed ones form a group (each node: its exchangeable children permuted, each child's own
    permutation independently), and :meth:`draw` samples it uniformly: a node with ``c``
    exchangeable children takes the ranks of ``c`` uniform doubles, the ``K`` doubles of one
    permutation being consecutive in the Generator's stream (``rng.random((count, K))``), so the
    draws depend only on the Generator's state, never on the batch sizes.
    """

    def __init__(self, levels):
        levels = np.asarray(levels)
        self.levels = levels
        self.n = n = levels.shape[0]
        order = []      # rows in tree order
        nodes = []      # (depth, positions (c, s) of the exchangeable children in tree order)

        def build(rows, depth, where):
            """Append ``rows``' subtree to ``order``; return its shape signature."""
            start = len(order)
            if depth == levels.shape[1]:
                order.extend(rows.tolist())
                if rows.size > 1:
                    nodes.append((depth, np.arange(start, start + rows.size).reshape(-1, 1)))
                return ("rows", int(rows.size))
            labels = levels[rows, depth]
            kids = []
            for lab in np.unique(labels):
                first = len(order)
                sig = build(rows[labels == lab], depth + 1, where + [int(lab)])
                kids.append((int(lab), sig, first, len(order) - first))
            ex = [kd for kd in kids if kd[0] >= 0]
            if len({kd[1] for kd in ex}) > 1:
                a, b = ex[0], next(kd for kd in ex if kd[1] != ex[0][1])
                at = "at the top level" if not where else f"inside the block with labels {where}"
                raise ValueError(
                    f"`perm_blocks` column {depth}: the exchangeable blocks {at} must have the same "
                    f"shape (size and sub-blocks), since an exchange maps row j of one onto row j of "
                    f"the other; block {a[0]} has {a[3]} rows {_shape_words(a[1])}, block {b[0]} "
                    f"has {b[3]} rows {_shape_words(b[1])}. Give the odd blocks a negative label "
                    f"(kept in place) or make the blocks alike.")
            if len(ex) > 1:
                nodes.append((depth, np.array([np.arange(f, f + s) for _, _, f, s in ex])))
            return ("node", tuple((lab < 0, sig) for lab, sig, _, _ in kids))

        build(np.arange(n), 0, [])
        self.tree_order = np.asarray(order, dtype=np.intp)
        # deepest nodes first (a block's rows are rearranged before the block moves); nodes of
        # one depth and shape are applied together
        groups = {}
        for depth, pos in sorted(nodes, key=lambda t: -t[0]):
            groups.setdefault((depth, pos.shape), []).append(pos)
        self.groups = [np.stack(g) for g in groups.values()]  # each (m, c, s)
        self.n_keys = int(sum(g.shape[0] * g.shape[1] for g in self.groups))

    def count(self, limit=None):
        """The number of allowed permutations; ``limit + 1`` as soon as it exceeds ``limit``."""
        total = 1
        for g in self.groups:
            for _ in range(g.shape[0]):
                total *= math.factorial(g.shape[1])
                if limit is not None and total > limit:
                    return limit + 1
        return total

    def _apply(self, sigmas):
        """The permutations (N, n) from each group's choices ``sigmas[g]`` (N, m, c): child slot
        ``i`` of a node receives the contents of its child ``sigma[i]``."""
        N = sigmas[0].shape[0] if sigmas else 1
        cur = np.broadcast_to(self.tree_order, (N, self.n)).copy()
        rows = np.arange(N)[:, None, None, None]
        for pos, sig in zip(self.groups, sigmas):
            src = pos[np.arange(pos.shape[0])[None, :, None], sig]  # (N, m, c, s)
            cur[rows, pos[None]] = cur[rows, src]
        perm = np.empty_like(cur)
        perm[:, self.tree_order] = cur
        return perm

    def draw(self, rng, count):
        """``count`` uniform random allowed permutations, shape (count, n)."""
        if not self.groups:
            return np.broadcast_to(np.arange(self.n, dtype=np.intp), (count, self.n)).copy()
        keys = rng.random((count, self.n_keys))
        sigmas, k0 = [], 0
        for g in self.groups:
            m, c = g.shape[0], g.shape[1]
            sigmas.append(np.argsort(keys[:, k0:k0 + m * c].reshape(count, m, c), axis=2))
            k0 += m * c
        return self._apply(sigmas)

    def enumerate(self):
        """Every allowed permutation once, shape (N, n); the first node (deepest, in tree
        order) varies slowest."""
        if not self.groups:
            return np.arange(self.n, dtype=np.intp)[None, :]
        per_node = []  # (group, node, all c! orders)
        for gi, g in enumerate(self.groups):
            every = np.array(list(itertools.permutations(range(g.shape[1]))), dtype=np.intp)
            per_node.extend((gi, j, every) for j in range(g.shape[0]))
        choice = np.indices([len(e) for _, _, e in per_node]).reshape(len(per_node), -1)
        N = choice.shape[1]
        sigmas = [np.empty((N,) + g.shape[:2], dtype=np.intp) for g in self.groups]
        for (gi, j, every), ch in zip(per_node, choice):
            sigmas[gi][:, j] = every[ch]
        return self._apply(sigmas)


def _shape_words(sig):
    if sig[0] == "rows":
        return "(exchangeable rows)"
    return f"in {len(sig[1])} sub-block(s)"


def permutation_blocks(perm_blocks, index, n):
    """``perm_blocks`` checked: ``(PermutationBlocks, the (n, k) int64 labels)``.

    An array or list of shape (n,) or (n, k) of integer labels (a Series/DataFrame is aligned
    with the rows' ``index`` as ``strata`` is, see
    :func:`~energystats._core._validation.align_labels`)."""
    import pandas as pd

    from ._validation import align_labels

    if index is not None and isinstance(perm_blocks, (pd.Series, pd.DataFrame)):
        perm_blocks = align_labels(pd.DataFrame(index=index), perm_blocks, "perm_blocks")
    arr = np.asarray(perm_blocks.to_numpy() if isinstance(perm_blocks, (pd.Series, pd.DataFrame))
                     else perm_blocks)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"`perm_blocks` must have shape (n,) or (n, k) with k >= 1; got shape "
                         f"{np.shape(perm_blocks)}.")
    if arr.shape[0] != n:
        raise ValueError(f"`perm_blocks` must have one row per sample, n={n}; got {arr.shape[0]} rows.")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr))
                                     and np.all(arr == np.round(arr)))):
        raise TypeError(f"`perm_blocks` must hold integer labels (negative: a block kept in place); "
                        f"got dtype {arr.dtype}.")
    arr = arr.astype(np.int64)
    return PermutationBlocks(arr), arr
