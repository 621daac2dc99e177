"""Backends: where the pair sums are computed — this process's threads, or Dask.

Every exact homogeneity statistic (energy distance, W/S/T, DISCO's F, the
k-sample energy statistic) is a function of the k×k group-pair sums
``M[g, h] = Σ_{x∈C_g} Σ_{y∈C_h} rho(x, y)``.  With ``backend="dask"`` those
sums are a Dask graph of *tile tasks*: the rows are cut into blocks, and the
task of blocks ``I ≤ J`` returns the k×k sums of its tile (streamed by the
compiled kernel: O(b·d) memory, nothing n×n).  A fixed binary tree adds
the tiles up.  The blocks are fixed by ``(n, d)`` alone (the input is
rechunked to them), so the result is the same bits for any chunking of the
input, any number of workers and any scheduling.

Permutation tests use the same tiles: a tile computes its block of rho once
per batch of relabellings and feeds the whole batch through one matrix
product.  The relabellings are drawn by a chain of small tasks from the
test's Generator, batch after batch, exactly as the threads backend draws
them, so the same ``rng`` gives the same relabellings — and the same p-value
— on either backend, on any cluster.

Dask is optional (``pip install "energy-statistics[dask]"``): this module
imports without it, and asking for the Dask backend without it raises an
:class:`ImportError` that says what to install.  Input validation here never
computes a Dask collection's data (``np.asarray`` would): shapes and dtypes
are read from the collection's metadata, and the values are checked
(finite, numeric) inside the tasks.  Group labels are small and are computed.
"""
from __future__ import annotations

import copy
import math
import time

import numpy as np
import pandas as pd

from .._lib import _pairwise

__all__ = ["is_dask", "use_dask", "require_dask", "DaskData", "as_dask_data", "lazy_group_sums",
           "lazy_permutation_null", "block_rows", "DASK_INSTALL"]


DASK_INSTALL = 'pip install "energy-statistics[dask]"'

#: pairs × features of one statistic tile task: about 0.3-1 s on one core, well above
#: Dask's per-task overhead (about 1 ms) and small enough to spread over many workers
TILE_WORK = 1e9
#: rows of a permutation tile: its block of rho (8 b² bytes, 32 MiB) is held while a
#: batch of relabellings goes through one matrix product (twice the threads backend's
#: 'tiled' engine's rows: a task should run well above Dask's per-task overhead)
PERM_ROWS = 2048
#: bytes of the one-hot rows of one batch in one permutation tile (per row block)
PERM_BATCH_BYTES = 2**25


# -- choosing the backend ---------------------------------------------------------

def is_dask(x):
    """Whether ``x`` is a Dask collection (array, DataFrame, Series), without importing Dask."""
    mod = type(x).__module__ or ""
    return hasattr(x, "__dask_graph__") and mod.split(".")[0] in ("dask", "dask_expr")


def require_dask(what="the Dask backend"):
    """Import and return ``dask``; an ImportError naming what to install if it is missing."""
    try:
        import dask
        import dask.array  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"{what} needs dask (with dask.array) and distributed: {DASK_INSTALL}") from exc
    return dask


def use_dask(backend, compute, inputs):
    """Resolve ``backend`` (None, 'threads' or 'dask') and ``compute`` for a public function.

    ``None`` picks 'dask' when any of ``inputs`` is a Dask collection and
    'threads' otherwise.  Dask input with ``backend='threads'`` and
    ``compute=False`` without Dask are errors (never a silent conversion).
    """
    if backend not in (None, "threads", "dask"):
        raise ValueError(f"`backend` must be None, 'threads' or 'dask'; got {backend!r}.")
    if compute not in (True, False):
        raise ValueError(f"`compute` must be True or False; got {compute!r}.")
    lazy_input = any(is_dask(v) for v in inputs)
    if backend == "threads" and lazy_input:
        raise TypeError("`backend='threads'` got Dask input; use backend='dask' (or None), or "
                        "compute the input first (`x.compute()`) if it fits in memory.")
    dask_backend = backend == "dask" or (backend is None and lazy_input)
    if not dask_backend and not compute:
        raise ValueError("`compute=False` (a lazy result) needs backend='dask'.")
    if dask_backend:
        require_dask()
    return dask_backend


def in_memory_backend(backend, compute, fname, *inputs):
    """Whether a test that keeps its data in memory runs its resamples as Dask tasks:
    ``backend`` and ``compute`` checked as :func:`use_dask` does, Dask input refused (such a
    test holds n×n matrices; on Dask only its resamples are distributed)."""
    if any(is_dask(v) for v in inputs):
        raise TypeError(f"{fname} holds its n×n matrices in memory (with backend='dask' its "
                        "resamples are the tasks): compute the input first (`x.compute()`).")
    return use_dask(backend, compute, ())


def delayed_value(value):
    """``value`` as a Delayed (a result that needed no task, returned with compute=False)."""
    import dask

    return dask.delayed(value, pure=True)


def check_dask_options(method, memory_budget, default_budget, progress):
    """The threads backend's options that mean nothing on Dask must keep their defaults."""
    if method not in ("auto", "pairwise"):
        raise ValueError(f"`method={method!r}` is not available with backend='dask' (its tiles are "
                         "the 'pairwise' method); use method='auto'.")
    if memory_budget != default_budget:
        raise ValueError("`memory_budget` bounds the threads backend's working memory; with "
                         "backend='dask' a task holds a tile of at most 2048 rows and a batch of "
                         "relabellings bounded whatever n, so leave it at its default.")
    if progress not in (False, None, "auto"):
        raise ValueError("`progress=` is for the threads backend; with backend='dask' use Dask's "
                         "own (`distributed.progress(result)` with compute=False, or the "
                         "dashboard).")


# -- lazy input ---------------------------------------------------------------------

class DaskData:
    """A validated lazy 2-D array: ``array`` (dask, one chunk across columns), its shape and dtype."""

    def __init__(self, array, name):
        self.array = array
        self.name = name
        self.n, self.d = (int(s) for s in array.shape)
        self.dtype = np.dtype(np.float32) if array.dtype == np.float32 else np.dtype(np.float64)


def as_dask_data(X, name="X", *, min_samples=1):
    """A :class:`DaskData` from a Dask array or NumPy-like input, checking only metadata.

    NumPy-like input is validated as the threads backend does (it is in
    memory already) and wrapped; a Dask array's values are checked inside
    the tasks (:func:`_block`).
    """
    require_dask()
    import dask.array as da

    from ._validation import as_data

    checked = None
    if not is_dask(X):
        arr, _ = as_data(X, name)  # checked here, in memory
        X = checked = da.from_array(arr, chunks=(max(1, arr.shape[0]), arr.shape[1]))
    elif not isinstance(X, da.Array):
        raise TypeError(f"`{name}`: a {type(X).__name__} is taken with `by=` (a Dask DataFrame); "
                        "give arrays as dask.array.")
    if X.dtype.kind not in "fiub" or X.dtype.kind == "f" and X.dtype.itemsize > 8:
        raise TypeError(f"`{name}` must be numeric (float, integer or bool); got a Dask array of "
                        f"dtype {X.dtype}.")
    if X.ndim in (1, 2) and any(math.isnan(c) for c in X.chunks[0]):  # before reshape (1-D)
        raise ValueError(f"`{name}` has unknown chunk sizes (rows), so its rows cannot be counted "
                         f"or matched with other rows or groups; call `{name}.compute_chunk_sizes()` "
                         "first (or, from a Dask DataFrame, `ddf.to_dask_array(lengths=True)`).")
    if X.ndim == 1:
        X = X.reshape(-1, 1)
    from ._validation import check_sample_shape

    check_sample_shape(X, name, min_samples)
    if checked is None:  # values checked chunk by chunk, when (and where) they are computed
        dtype = np.float32 if X.dtype == np.float32 else np.float64
        X = X.map_blocks(_checked_chunk, name, dtype=dtype, meta=np.empty((0, 0), dtype=dtype))
    return DaskData(X, name)


def _checked_chunk(X, name, block_info=None):
    row0 = block_info[0]["array-location"][0][0] if block_info else 0
    return _block(X, name, row0)


def concat(parts, names):
    """Several :class:`DaskData` samples stacked (lazily), with their sizes."""
    import dask.array as da

    dims = [p.d for p in parts]
    if len(set(dims)) > 1:
        raise ValueError(f"all samples must have the same number of features; got {dims}.")
    dtype = np.float32 if all(p.dtype == np.float32 for p in parts) else np.float64
    arr = da.concatenate([p.array.astype(dtype) for p in parts], axis=0)
    return DaskData(arr, ", ".join(names)), np.array([p.n for p in parts], dtype=np.intp)


def frame_input(X, by, columns, strata, numeric_only, name="X"):
    """A Dask DataFrame with grouping column(s): (DaskData, their values (a DataFrame), strata
    values, columns).

    The grouping (and strata) columns are computed — n small values, needed
    to name and count the groups; the data columns are not.
    """
    from ._validation import short_list

    by_cols = list(by) if isinstance(by, (list, tuple)) else [by]
    missing = [c for c in by_cols if c not in X.columns]
    if missing:
        raise KeyError(f"`by`: column(s) {short_list(missing)} not found in `{name}`; it has "
                       f"{short_list(X.columns)}.")
    skip = by_cols + ([strata] if isinstance(strata, str) else [])
    if isinstance(strata, str) and strata not in X.columns:
        raise KeyError(f"`strata`: column {strata!r} not found in `{name}`; it has "
                       f"{short_list(X.columns)}.")
    if columns is None:
        cols = [c for c in X.columns if c not in skip]
        bad = [c for c in cols if X[c].dtype.kind not in "fiub"]
        if bad and numeric_only:
            cols = [c for c in cols if c not in bad]
        elif bad:
            raise TypeError(f"`{name}`: column(s) {short_list(bad)} are not numeric; pass "
                            "`columns=` or numeric_only=True.")
    else:
        cols = [columns] if isinstance(columns, str) else list(columns)
        missing = [c for c in cols if c not in X.columns]
        if missing:
            raise KeyError(f"`columns`: {short_list(missing)} not found in `{name}`; it has "
                           f"{short_list(X.columns)}.")
        bad = [c for c in cols if X[c].dtype.kind not in "fiub"]
        if bad:
            raise TypeError(f"`columns`: {short_list(bad)} are not numeric.")
    if not cols:
        raise ValueError(f"`{name}` has no numeric columns left to use.")
    keys = by_cols + ([strata] if isinstance(strata, str) else [])
    parts = dask_compute(*X[keys].to_delayed())
    lengths = tuple(len(p) for p in parts)
    small = pd.concat(parts) if parts else pd.DataFrame(columns=keys)
    data = as_dask_data(X[cols].to_dask_array(lengths=lengths), name)
    svals = small[strata] if isinstance(strata, str) else None
    return data, small[by_cols], svals, cols


# -- blocks and tasks -------------------------------------------------------------

def block_rows(n, d, perm=False):
    """Rows per block, from the shape alone (multiples of the kernels' row block)."""
    if perm:
        b = PERM_ROWS
    else:
        b = math.sqrt(TILE_WORK / max(d, 1))
    rb = _pairwise.ROW_BLOCK_SIZE
    b = int(max(rb, math.ceil(b / rb) * rb))
    return min(b, max(n, 1))


def _block(X, name, row0):
    """One chunk of an input, checked (finite, integers exact), as a C-contiguous float array."""
    X = np.asarray(X)
    if X.dtype.kind in "iu" and X.size and (int(X.max()) > 2**53 or int(X.min()) < -2**53):
        raise ValueError(f"`{name}` holds integers beyond 2**53 (rows {row0}..{row0 + len(X) - 1}), "
                         "which float64 cannot hold exactly; convert them yourself first.")
    if X.dtype not in (np.float32, np.float64):  # integers, bools, float16: float64, as on threads
        X = X.astype(np.float64)
    X = np.ascontiguousarray(X)
    if not np.all(np.isfinite(X)):
        bad = ~np.isfinite(X)
        rows = np.flatnonzero(bad.any(axis=1))
        kind = "NaN" if np.isnan(X[bad]).any() else "inf"
        raise ValueError(f"`{name}` contains {kind} values ({bad.sum()} value(s) in this block of "
                         f"rows, first row {row0 + rows[0]}); drop or impute them first.")
    return X


def _max_abs(X):
    return float(np.max(np.abs(X))) if X.size else 0.0


def _working_plan(met, float64, *maxabs):
    """``(metric in working units, Scale)`` as :func:`energystats._core._engine.normalise` gives."""
    from . import _engine

    m = max(maxabs) if maxabs else 0.0
    if not float64 or m == 0.0:
        return met, _engine.Scale()
    probe = np.array([[m]])
    _, met2, scale = _engine.normalise(met, probe)
    return met2, scale


def _scaled(X, scale):
    """A block in working units (:func:`energystats._core._engine.normalise`), C-contiguous."""
    X = np.ascontiguousarray(X)
    return X if scale.shift == 0 or X.dtype != np.float64 else np.ldexp(X, -scale.shift)


def _tile_sums(XI, XJ, cI, cJ, k, plan, diagonal, n_threads):
    """k×k sums of one tile (rows of block I against rows of block J; I == J: pairs i < j)."""
    met, scale = plan
    XI = _scaled(XI, scale)
    if diagonal:
        from ._engine import streamed_group_sums

        order = np.argsort(cI, kind="stable")
        Xs = np.ascontiguousarray(XI[order])
        cs = np.ascontiguousarray(cI[order], dtype=np.intp)
        bounds = np.zeros(k + 1, dtype=np.intp)
        np.cumsum(np.bincount(cs, minlength=k), out=bounds[1:])
        return streamed_group_sums(Xs, cs, bounds, met, n_threads)  # U + Uᵀ, U the i < j sums
    XJ = _scaled(XJ, scale)
    if XI.dtype != XJ.dtype:
        XI, XJ = XI.astype(np.float64), XJ.astype(np.float64)
    order = np.argsort(cJ, kind="stable")
    YT = np.ascontiguousarray(XJ[order].T)
    cJs = np.ascontiguousarray(cJ[order], dtype=np.intp)
    bounds = np.zeros(k + 1, dtype=np.intp)
    np.cumsum(np.bincount(cJ, minlength=k), out=bounds[1:])
    from ._engine import STRIPE_BYTES

    XI = np.ascontiguousarray(XI)
    cI = np.ascontiguousarray(cI, dtype=np.intp)
    rb = _pairwise.ROW_BLOCK_SIZE
    # a call's per-row-block tables within STRIPE_BYTES (many groups make them large)
    step = rb * int(max(1, STRIPE_BYTES // (16 * k * k)))
    T = np.zeros((k, k))
    for a in range(0, XI.shape[0], step):
        nb = -(-min(step, XI.shape[0] - a) // rb)
        acc = np.zeros((nb, k, k))
        comp = np.zeros((nb, k, k))
        _pairwise.cross_group_sums(XI[a:a + step], YT, cI[a:a + step], cJs, bounds, met.code,
                                   met.param, acc, comp, n_threads)
        T += (acc + comp).sum(axis=0)
    return T + T.T  # the tile stands for tile (J, I) too; exactly symmetric


def _add(a, b):
    return a + b


def tree_sum(parts):
    """Sum delayed values by a fixed binary tree (the same order on any cluster)."""
    import dask

    add = dask.delayed(_add, pure=True)
    parts = list(parts)
    while len(parts) > 1:
        nxt = [add(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def _blocks(data, rows):
    """The checked blocks of ``data`` (delayed, ``rows`` rows each) and their row ranges."""
    arr = data.array.rechunk((rows, data.d))
    starts = np.concatenate([[0], np.cumsum(arr.chunks[0])]).astype(int)
    return list(arr.to_delayed().ravel()), starts


def _plan(data, met, blocks):
    import dask

    maxabs = [dask.delayed(_max_abs, pure=True)(b) for b in blocks]
    return dask.delayed(_working_plan, pure=True)(met, data.dtype == np.float64, *maxabs)


def lazy_group_sums(data, codes, k, met, n_threads=1):
    """Delayed ``(M, scale)``: the k×k group sums in working units and their :class:`Scale`.

    ``codes`` (n,) are NumPy group codes 0..k-1 of the rows of ``data``.
    Tiles I ≤ J of the blocks of :func:`block_rows`; each returns its exactly
    symmetric share of ``M`` (a diagonal tile ``U + Uᵀ`` with ``U`` its sums
    over pairs i < j, another ``T + Tᵀ``), so ``M`` is exactly symmetric, as
    the threads backend's.
    """
    import dask

    codes = np.ascontiguousarray(codes, dtype=np.intp)
    rows = block_rows(data.n, data.d)
    blocks, starts = _blocks(data, rows)
    plan = _plan(data, met, blocks)
    tile = dask.delayed(_tile_sums, pure=True)
    nb = len(blocks)
    # each block's codes once in the graph (not once per tile: the graph stays O(n + nb²))
    cb = [dask.delayed(codes[starts[I]:starts[I + 1]].copy(), pure=True) for I in range(nb)]
    parts = [tile(blocks[I], blocks[J], cb[I], cb[J], k, plan, I == J, n_threads)
             for I in range(nb) for J in range(I, nb)]
    M = tree_sum(parts)
    return M, dask.delayed(lambda p: p[1], pure=True)(plan)


# -- permutation tests -------------------------------------------------------------

def _small_codes(codes, k):
    return codes.astype(np.uint8 if k <= 255 else np.int32)


def _draw(gen, cells, count, strata, k):
    """``count`` relabellings from a copy of ``gen`` (the tasks stay pure), and the advanced copy."""
    from ._permutation import draw_permutations

    g = copy.deepcopy(gen)
    # the draws do not depend on the values' dtype: small codes from the start
    return draw_permutations(g, _small_codes(cells, k), count, strata), g


def _perm_tile(XI, XJ, codes, i0, i1, j0, j1, k, inv, plan, diagonal, n_threads):
    """:func:`energystats._core._group_sums.tile_group_sums` on blocks in working units, inside
    the one-BLAS-thread region as in the threads driver (a worker runs several tasks at once,
    and the products' bits depend on BLAS's thread count)."""
    from ._group_sums import _blas_limits, tile_group_sums

    met, scale = plan
    with _blas_limits(1):
        return tile_group_sums(_scaled(XI, scale), _scaled(XJ, scale), codes, i0, i1, j0, j1, k, inv,
                               met, diagonal, n_threads)


def _batch_statistic(M, inv, statistic):
    """The statistic of a batch from its sums ``M`` (internal group order): symmetrised
    (the diagonal tiles' products are symmetric up to rounding) and reordered."""
    M = 0.5 * (M + M.transpose(0, 2, 1))
    M = M[:, inv][:, :, inv]
    return np.asarray(statistic([M]))


def _concat(parts):
    return np.concatenate(parts, axis=0)


def perm_batch_size(n, k, R):
    """Relabellings per batch, from (n, k, R) alone: the one-hot rows of one tile in
    :data:`PERM_BATCH_BYTES`, and the batch's codes (one byte each, for every row: a tile
    task receives them all) in :data:`PERM_BATCH_BYTES` too."""
    rows = min(n, PERM_ROWS)
    return int(max(1, min(R, 1024, PERM_BATCH_BYTES // (8 * max(k - 1, 1) * rows),
                          PERM_BATCH_BYTES // max(n, 1))))


def lazy_permutation_null(data, met, cells, k, sizes, statistic, *, R, gen, exact_batches, strata,
                          n_threads=1):
    """Delayed null distribution (R_used, ...) of ``statistic`` over relabellings of ``cells``.

    Random relabellings are drawn from ``gen`` batch after batch by a chain of
    tasks (:func:`_draw`), the same draws as
    :func:`energystats._core._permutation.permutation_null` makes from the same
    Generator; ``exact_batches`` (a list of arrays) replaces them when all
    relabellings are enumerated.  Returns ``(null, generator after the
    draws)`` (a Delayed, for the next chain to continue from).
    """
    import dask

    cells = np.ascontiguousarray(cells, dtype=np.intp)
    rows = block_rows(data.n, data.d, perm=True)
    blocks, starts = _blocks(data, rows)
    plan = _plan(data, met, blocks)
    perm = np.argsort(-np.asarray(sizes), kind="stable")[::-1]  # internal order: largest group last
    inv = np.empty(k, dtype=np.intp)
    inv[perm] = np.arange(k)
    tile = dask.delayed(_perm_tile, pure=True)
    stat = dask.delayed(_batch_statistic, pure=True)
    nb = len(blocks)
    if exact_batches is not None:
        batches = [dask.delayed(_small_codes(b, k)) for b in exact_batches]
    else:
        B = perm_batch_size(data.n, k, R)
        draw = dask.delayed(_draw, nout=2, pure=True)
        batches, g = [], copy.deepcopy(gen)  # the graph's own copy: later use of gen changes nothing
        for done in range(0, R, B):
            codes, g = draw(g, cells, min(B, R - done), strata, k)
            batches.append(codes)
    values = []
    for codes in batches:
        parts = [tile(blocks[I], blocks[J], codes, starts[I], starts[I + 1], starts[J], starts[J + 1],
                      k, inv, plan, I == J, n_threads)
                 for I in range(nb) for J in range(I, nb)]
        values.append(stat(tree_sum(parts), inv, statistic))
    null = dask.delayed(_concat, pure=True)(values) if values else None
    return null, (gen if exact_batches is not None else g)


def grouped_input(samples, labels, by, columns, strata, dropna, numeric_only, fname, factors=False):
    """The call forms of the tests on lazy data: (DaskData, Labels, columns, strata values or None).

    With ``factors=True`` (DISCO): ``by`` may list several columns and ``labels``
    may be a DataFrame of factors; the second item is then a list of
    ``(Labels, name)``, one per factor.

    Forms: several samples (Dask or NumPy arrays); one array with
    ``labels=`` (NumPy-like, or a Dask array, computed: n small values); a
    Dask DataFrame with ``by=`` (one column) and optional ``columns=`` and
    ``strata=`` (a column name or one value per row).
    """
    from ._validation import as_labels

    if dropna:
        raise TypeError("`dropna=True` is not available with Dask input; drop the rows lazily "
                        "first (`ddf.dropna(subset=[...])`).")
    if not samples:
        raise TypeError(f"`{fname}` needs data: several samples, `X, labels=` or `df, by=`.")
    svals = strata
    if by is not None:
        if labels is not None:
            raise TypeError("give either `labels` or `by`, not both.")
        if len(samples) != 1 or not hasattr(samples[0], "columns"):
            raise TypeError("`by=` needs the data as one DataFrame.")
        X = samples[0]
        if not is_dask(X):
            import dask.dataframe as dd

            X = dd.from_pandas(X, npartitions=1)
        by_cols = list(by) if isinstance(by, (list, tuple)) else [by]
        data, groups, sv, cols = frame_input(X, by_cols, columns, strata, numeric_only)
        if sv is not None:
            svals = sv
        if factors:
            lab = [(as_labels(groups[c].to_numpy(), data.n, f"by[{c!r}]"), c) for c in by_cols]
        else:
            lab = as_labels(groups[by_cols[0]].to_numpy(), data.n, "by")
    elif labels is not None:
        if len(samples) != 1:
            raise TypeError(f"with `labels=` or `by=`, pass the data as one argument; got {len(samples)}.")
        if columns is not None:
            raise TypeError("`columns` needs a DataFrame with `by=`.")
        data = as_dask_data(samples[0], "X")
        if is_dask(labels):
            labels = dask_compute(labels)[0]
        if factors and isinstance(labels, pd.DataFrame) and labels.shape[1] > 1:
            lab = [(as_labels(labels[c].to_numpy(), data.n, f"labels[{c!r}]"), c) for c in labels.columns]
        else:
            if isinstance(labels, pd.DataFrame):
                labels = labels.iloc[:, 0]
            lab = as_labels(labels, data.n, "labels")
            if factors:
                lab = [(lab, labels.name if isinstance(labels, pd.Series) else None)]
        cols = None
    else:
        if columns is not None:
            raise TypeError("`columns` needs a DataFrame with `by=`.")
        if len(samples) < 2:
            raise ValueError(f"`{fname}` needs at least two samples (or `X, labels=` / `df, by=`); "
                             "got 1 sample.")
        names = [f"samples[{i}]" for i in range(len(samples))]
        data, sizes = concat([as_dask_data(s, nm) for s, nm in zip(samples, names)], names)
        from ._validation import Labels

        lab = Labels(np.repeat(np.arange(sizes.size, dtype=np.intp), sizes), list(range(sizes.size)),
                     sizes)
        if factors:
            lab = [(lab, None)]
        cols = None
    if svals is not None:
        if isinstance(svals, str):
            raise TypeError("`strata` as a column name needs a Dask DataFrame with `by=`.")
        if is_dask(svals):
            svals = dask_compute(svals)[0]
        svals = as_labels(np.asarray(svals, dtype=object) if not isinstance(svals, pd.Series)
                          else svals, data.n, "strata")
    return data, lab, cols, svals


# -- distance covariance: two passes over ranges of rows --------------------------------

#: pairs × features of one task of the dependence passes
ROWS_WORK = 5e8


def _whole(*blocks):
    return np.ascontiguousarray(np.concatenate(blocks) if len(blocks) > 1 else blocks[0])


def lazy_whole(D):
    """A Delayed of the whole (checked) array of a :class:`DaskData`, for tasks that need every
    row: one key, shipped once to each worker that runs such a task."""
    import dask

    return dask.delayed(_whole, pure=True)(*D.array.rechunk({1: -1}).to_delayed().ravel())


def _row_ranges(n, work_per_row, triangular):
    """Row ranges of about :data:`ROWS_WORK` each; for the pairs j > i, of equal pairs."""
    total = work_per_row * n * (0.5 if triangular else 1.0)
    T = int(min(4096, max(1, math.ceil(total / ROWS_WORK)), n))
    if triangular:
        t = np.arange(T + 1) / T
        edges = np.round(n * (1.0 - np.sqrt(1.0 - t))).astype(int)
    else:
        edges = np.round(np.linspace(0, n, T + 1)).astype(int)
    edges[-1] = n
    edges = np.unique(edges)
    return list(zip(edges[:-1], edges[1:]))


def _draw_perms(gen, n, strata, count):
    from ._permutation import draw_permutations

    g = copy.deepcopy(gen)
    return draw_permutations(g, np.arange(n), count, strata), g


def lazy_draws(gen, R, batch, draw, *args):
    """Delayed batches of ``R`` random draws: ``draw(g, *args, m)`` returns the next ``m`` draws
    from Generator ``g`` (in the order the threads backend draws them one batch after another)
    and a copy of ``g`` advanced past them (``g`` itself untouched: a task's result may be
    shared in-process).  A chain of small tasks, each on a copy of the previous one's Generator,
    so the draws do not depend on ``batch``'s split, on workers or on scheduling, and the
    caller's ``gen`` is never advanced (the graph holds its own copy)."""
    import dask

    task = dask.delayed(draw, nout=2, pure=True)
    batches, g = [], copy.deepcopy(gen)
    for done in range(0, R, batch):
        p, g = task(g, *args, min(batch, R - done))
        batches.append(p)
    return batches


#: seconds a computation on a distributed cluster waits with no worker before it gives up (a
#: cluster whose workers all went away would otherwise keep the call waiting for ever)
NO_WORKERS_TIMEOUT = 60.0
#: seconds between two looks at the cluster while a computation runs
POLL = 1.0


def _distributed_client():
    """The ``distributed.Client`` that ``dask.compute`` would use now, else None (no client,
    or another scheduler chosen in Dask's configuration)."""
    from dask.base import get_scheduler

    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - dask without distributed
        return None
    client = getattr(get_scheduler(), "__self__", None)
    return client if isinstance(client, Client) else None


def _lost(exc):
    """Whether ``exc`` says the cluster went away (not a task's own error)."""
    import asyncio
    import concurrent.futures

    from distributed.comm import CommClosedError

    return isinstance(exc, (concurrent.futures.CancelledError, asyncio.CancelledError,
                            CommClosedError, ConnectionError, OSError, asyncio.TimeoutError))


def _wait_for(client, futures):
    """Wait for ``futures``; a RuntimeError when the cluster has had no worker for
    :data:`NO_WORKERS_TIMEOUT` seconds (the futures are cancelled)."""
    import distributed

    idle = None
    while True:
        try:
            distributed.wait(futures, timeout=POLL)
            return
        except (TimeoutError, distributed.TimeoutError):
            pass
        workers = len(client.nthreads())
        now = time.monotonic()
        idle = None if workers else (idle if idle is not None else now)
        if idle is not None and now - idle >= NO_WORKERS_TIMEOUT:
            client.cancel(futures)
            raise RuntimeError(
                f"the Dask cluster ({client.scheduler.address}) has had no worker for "
                f"{NO_WORKERS_TIMEOUT:g} s while this computation waited: its tasks were "
                "cancelled and no result was computed.  Add workers (or start the cluster "
                "again) and rerun the call.")


def dask_compute(*args):
    """``dask.compute(*args)``; on a distributed cluster that goes away mid-run (its scheduler
    closed or unreachable, or no worker left for :data:`NO_WORKERS_TIMEOUT` seconds) a
    RuntimeError that says so, never a wait for ever; Ctrl-C cancels the tasks."""
    import dask

    client = _distributed_client()
    if client is None:
        return dask.compute(*args)
    from dask.base import unpack_collections

    # the collections anywhere in args (lists, tuples, dicts), as dask.compute finds them
    collections, repack = unpack_collections(*args, traverse=True)
    futures = []
    try:
        futures = client.compute(list(collections))
        _wait_for(client, futures)
        values = client.gather(futures)
    except KeyboardInterrupt:
        _quietly(client.cancel, futures)
        raise
    except Exception as exc:
        if not _lost(exc):
            raise                                  # a task's own error, as dask.compute gives it
        detail = (str(exc).strip().splitlines() or ["no detail"])[0][:160]
        raise RuntimeError(
            f"the Dask cluster went away while this computation ran ({type(exc).__name__}: "
            f"{detail}): no result was computed.  Check the cluster (scheduler and workers) "
            "and rerun the call.") from exc
    return tuple(repack(values))


def _quietly(fn, *args):
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - the cluster may be gone; the interrupt is what matters
        pass


def finish(fn, *args, compute=True):
    """``fn(*args)`` over Delayed arguments: with ``compute``, the arguments are computed and
    ``fn`` runs here, so that its warnings reach the caller (a warning raised in a worker
    process stays there); otherwise a Delayed of it."""
    import dask

    if compute:
        return fn(*dask_compute(*args))
    return dask.delayed(fn, pure=True)(*args)
