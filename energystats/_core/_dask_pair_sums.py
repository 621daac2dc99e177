"""The pair sums of :mod:`energystats._core._pair_sums` on the Dask backend: row-range
tasks on the whole variables (below every concept).
"""
from __future__ import annotations

import numpy as np

from ._dask import _row_ranges, lazy_whole
from ._pair_sums import _centring, _constancy, _sums_from_rows


def _dep_prepare(X, Y, met):
    """Both variables in working units (each its own power of two), transposed, their scales and
    their constancy decided from the data (:func:`energystats._core._pair_sums._constancy`)."""
    from . import _engine

    Xw, met_x, sx = _engine.normalise(met, X)
    Yw, met_y, sy = _engine.normalise(met, Y)
    if Xw.dtype != Yw.dtype:
        Xw, Yw = Xw.astype(np.float64), Yw.astype(np.float64)
    Xw, Yw = np.ascontiguousarray(Xw), np.ascontiguousarray(Yw)
    from ._pair_sums import _constancy

    return dict(X=Xw, XT=np.ascontiguousarray(Xw.T), Y=Yw, YT=np.ascontiguousarray(Yw.T),
                code=met.code, px=met_x.param, py=met_y.param, sx=sx, sy=sy,
                constant=(_constancy(X, False), _constancy(Y, False)))


def _dep_rows(prep, r0, r1, n_threads):
    from .._lib import _dependence

    rs = np.empty((prep["X"].shape[0], 2))
    _dependence.row_sums(prep["X"], prep["XT"], prep["Y"], prep["YT"], prep["code"], prep["px"],
                         prep["py"], r0, r1, rs, n_threads)
    return rs[r0:r1].copy()  # not a view: the n×2 base would stay alive with it


def _dep_centring(*parts):
    from ._pair_sums import _centring

    rs = np.concatenate(parts)
    return _centring(rs[:, 0], rs[:, 1], rs.shape[0])


def _dep_products(prep, terms, r0, r1, n_threads):
    from .._lib import _dependence

    out = np.empty((prep["X"].shape[0], 6))
    _dependence.centred_products(prep["X"], prep["XT"], prep["Y"], prep["YT"], prep["code"], prep["px"],
                                 prep["py"], *terms, r0, r1, out, n_threads)
    return out[r0:r1].copy()  # not a view: the n×6 base would stay alive with it


def _dep_sums(terms, *parts):
    from ._pair_sums import _sums_from_rows

    return _sums_from_rows(np.concatenate(parts), *terms[:4])


def lazy_dependence_sums(X, Y, met, n_threads=1, parts=False):
    """Delayed ``(VU, sx, sy)`` of :func:`energystats._core._pair_sums._sums` for two :class:`DaskData`.

    Each task holds both variables whole (O(n·(p + q)), the same on every
    worker) and runs the threads backend's kernels on a range of rows: the
    rows' distance sums, then the centred products of the pairs j > i.
    Per-row results do not depend on the ranges and their sums are exact
    (``math.fsum``), so the result is the same bits as the threads backend's.
    """
    import dask

    n = X.n
    prep = dask.delayed(_dep_prepare, pure=True)(lazy_whole(X), lazy_whole(Y), met)
    d = X.d + Y.d
    rows = [dask.delayed(_dep_rows, pure=True)(prep, int(a), int(b), n_threads)
            for a, b in _row_ranges(n, n * d, False)]
    terms = dask.delayed(_dep_centring, pure=True)(*rows)
    prods = [dask.delayed(_dep_products, pure=True)(prep, terms, int(a), int(b), n_threads)
             for a, b in _row_ranges(n, n * d, True)]
    VU = dask.delayed(_dep_sums, pure=True)(terms, *prods)
    get = dask.delayed(lambda p, key: p[key], pure=True)
    out = (VU, get(prep, "sx"), get(prep, "sy"))
    return out + (prep, terms) if parts else out
