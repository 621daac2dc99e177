"""Fingerprint of the public results on a fixed battery (for refactors that must not change a bit).

Run it before and after a change that should leave every number as it was, and compare the two
outputs line by line::

    python tools/fingerprint.py > before.txt      # on the old tree
    python tools/fingerprint.py > after.txt       # on the new tree
    diff before.txt after.txt                     # empty: the same bits

Each line is ``<case>  <sha256 prefix>`` of every field of the result (floats by their bytes,
arrays by dtype, shape and bytes, frames by their values, index and columns), so a change in
the last bit of any number, a reordered label or a renamed column changes the line.  Cases run
with one and two threads and, where Dask is installed, on Dask arrays (the threaded scheduler;
no cluster is started).  A case that raises prints the exception's type and message instead,
so a changed error is seen too.  Only the machine it runs on is compared with itself: do not
commit its output.
"""
from __future__ import annotations

import dataclasses
import hashlib
import sys
import warnings

import numpy as np
import pandas as pd

import energystats as es
from energystats.datasets import load_iris


def _feed(h, obj, depth=0):
    """Add ``obj`` to the hash ``h`` (recursively, in a fixed order)."""
    if depth > 6:
        h.update(b"<deep>")
        return
    if obj is None or isinstance(obj, (bool, str, int)):
        h.update(repr(obj).encode())
    elif isinstance(obj, float):
        h.update(np.float64(obj).tobytes())
    elif isinstance(obj, np.generic):
        h.update(obj.dtype.str.encode() + obj.tobytes())
    elif isinstance(obj, np.ndarray):
        h.update(f"{obj.dtype.str}{obj.shape}".encode())
        if obj.dtype.kind == "O":
            for v in obj.ravel():
                _feed(h, v, depth + 1)
        else:
            h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, pd.DataFrame):
        _feed(h, list(map(str, obj.columns)), depth + 1)
        _feed(h, list(map(str, obj.index)), depth + 1)
        for c in obj.columns:
            _feed(h, obj[c].to_numpy(), depth + 1)
    elif isinstance(obj, pd.Series):
        _feed(h, list(map(str, obj.index)), depth + 1)
        _feed(h, obj.to_numpy(), depth + 1)
    elif isinstance(obj, (list, tuple)):
        h.update(f"[{len(obj)}".encode())
        for v in obj:
            _feed(h, v, depth + 1)
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _feed(h, str(k), depth + 1)
            _feed(h, obj[k], depth + 1)
    elif dataclasses.is_dataclass(obj):
        h.update(type(obj).__name__.encode())
        for f in dataclasses.fields(obj):
            _feed(h, f.name, depth + 1)
            _feed(h, getattr(obj, f.name), depth + 1)
    elif hasattr(obj, "labels_"):               # a fitted estimator: its fitted attributes
        h.update(type(obj).__name__.encode())
        for name in sorted(vars(obj)):
            if name.endswith("_") and not name.startswith("_"):
                _feed(h, name, depth + 1)
                _feed(h, getattr(obj, name), depth + 1)
    else:
        h.update(f"<{type(obj).__name__}>".encode())


def digest(obj):
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()[:16]


def cases():
    """Yield ``(name, thunk)`` pairs: every public function on small fixed data."""
    rng = np.random.default_rng(20261126)
    iris = load_iris()
    X = iris.iloc[:, :4].to_numpy()
    species = iris["species"].to_numpy()
    a, b = rng.normal(size=(40, 3)), rng.normal(0.4, 1.2, size=(35, 3))
    x1, y1 = rng.normal(size=80), rng.normal(size=80)
    u, v, w = rng.normal(size=(60, 2)), rng.normal(size=(60, 1)), rng.normal(size=(60, 2))
    v = v + u[:, :1] ** 2
    frame = pd.DataFrame({"u": x1, "v": x1 ** 2 + y1, "w": y1, "g": np.arange(80) % 4})
    counts = rng.poisson(3.0, size=70)
    mixed = np.r_[rng.normal(size=(60, 2)), rng.normal(3.0, 1.0, size=(60, 2))]

    for t in (1, 2):
        yield f"energy_distance t={t}", lambda t=t: es.energy_distance(a, b, n_threads=t)
        yield f"energy_distance U t={t}", lambda t=t: es.energy_distance(a, b, estimator="U", n_threads=t)
        yield f"energy_distance 1d t={t}", lambda t=t: es.energy_distance(x1, y1, n_threads=t)
        yield f"pairwise t={t}", lambda t=t: es.pairwise(a, b, exponent=1.5, n_threads=t)
        yield f"gram_matrix t={t}", lambda t=t: es.gram_matrix(a, metric="laplacian", n_threads=t)
        yield f"dispersion t={t}", lambda t=t: es.dispersion(iris, by="species", n_threads=t)
        for seed in (0, 1):
            yield (f"energy_test t={t} seed={seed}",
                   lambda t=t, s=seed: es.energy_test(a, b, rng=s, n_resamples=199, n_threads=t))
            yield (f"energy_test k=3 t={t} seed={seed}",
                   lambda t=t, s=seed: es.energy_test(X, labels=species, rng=s, n_resamples=99, n_threads=t))
            yield (f"disco t={t} seed={seed}",
                   lambda t=t, s=seed: es.disco(X, labels=species, rng=s, n_resamples=99, n_threads=t))
            yield (f"independence_test t={t} seed={seed}",
                   lambda t=t, s=seed: es.independence_test(u, v, rng=s, n_resamples=199, n_threads=t))
        yield (f"energy_test sequential t={t}",
               lambda t=t: es.energy_test(a, b, rng=3, n_resamples=999, pvalue_method="sequential", n_threads=t))
        yield (f"energy_test strata t={t}",
               lambda t=t: es.energy_test(frame[["u", "v"]], labels=(np.arange(80) // 4) % 2, strata=frame["g"],
                                          rng=4, n_resamples=99, n_threads=t))
        yield (f"disco two factors t={t}",
               lambda t=t: es.disco(frame, by=["g"], columns=["u", "v"], rng=5, n_resamples=99, n_threads=t))
        yield f"distance_stats t={t}", lambda t=t: es.distance_stats(u, v, n_threads=t)
        yield f"distance_covariance t={t}", lambda t=t: es.distance_covariance(u, v, n_threads=t)
        yield f"distance_correlation t={t}", lambda t=t: es.distance_correlation(u, v, n_threads=t)
        yield f"distance_correlation_sqr t={t}", lambda t=t: es.distance_correlation_sqr(u, v, n_threads=t)
        yield f"distance_covariance_sqr t={t}", lambda t=t: es.distance_covariance_sqr(u, v, n_threads=t)
        yield f"dcor ttest t={t}", lambda t=t: es.distance_correlation_ttest(u, v, n_threads=t)
        yield f"partial dcov t={t}", lambda t=t: es.partial_distance_covariance(u, v, w, n_threads=t)
        yield f"partial dcor t={t}", lambda t=t: es.partial_distance_correlation(u, v, w, n_threads=t)
        yield (f"partial dcor test t={t}",
               lambda t=t: es.partial_distance_correlation_test(u, v, w, rng=6, n_resamples=99, n_threads=t))
        yield (f"dcor matrix t={t}",
               lambda t=t: es.distance_correlation_matrix(frame[["u", "v", "w"]], n_threads=t))
        yield (f"dcor matrix pvalues t={t}",
               lambda t=t: es.distance_correlation_matrix(frame[["u", "v", "w"]], pvalue="permutation",
                                                          rng=7, n_resamples=199, n_threads=t))
        yield (f"normality_test t={t}",
               lambda t=t: es.normality_test(a, rng=8, n_resamples=99, n_threads=t))
        yield (f"gof_test expon t={t}",
               lambda t=t: es.gof_test(np.abs(x1), "expon", rng=9, n_resamples=99, n_threads=t))
        yield (f"energy_clustering t={t}",
               lambda t=t: es.energy_clustering(mixed, 2, rng=10, n_threads=t))
        yield (f"EnergyClustering t={t}",
               lambda t=t: es.EnergyClustering(3, random_state=11, n_threads=t).fit(X))
        yield (f"cluster_test t={t}",
               lambda t=t: es.cluster_test(mixed, 2, n_resamples=19, n_init=2, rng=12, n_threads=t))
        yield f"energy_linkage t={t}", lambda t=t: es.energy_linkage(mixed[:50], n_threads=t)
    yield "normality_test 1d", lambda: es.normality_test(x1, rng=13, n_resamples=99)
    yield "poisson_test", lambda: es.poisson_test(counts, rng=14, n_resamples=99)
    yield "poisson_test all", lambda: es.poisson_test(counts, statistic="all", rng=15, n_resamples=99)
    yield "mutual_independence_test", lambda: es.mutual_independence_test(u, v, w, rng=16, n_resamples=99)
    yield "independence_test exact", lambda: es.independence_test(x1[:7], y1[:7], exact=True)
    yield "energy_test exact", lambda: es.energy_test(x1[:6], y1[:6], exact=True)
    yield "clustering_accuracy", lambda: es.clustering_accuracy(species, np.arange(150) % 3)
    D = es.pairwise(a)
    yield "u_center", lambda: es.u_center(D)
    yield "d_center", lambda: es.d_center(D)
    yield "u_product", lambda: es.u_product(es.u_center(D), es.u_center(D[::-1, ::-1]))
    yield "is_negative_type", lambda: es.is_negative_type(D)
    yield "cli demo", _cli_demo

    try:
        import dask.array as da
    except ImportError:
        return
    import dask

    def on_dask(f):
        def run():
            with dask.config.set(scheduler="threads"):
                return f()
        return run

    A, B = da.from_array(a, chunks=(15, 3)), da.from_array(b, chunks=(20, 3))
    U, V = da.from_array(u, chunks=(25, 2)), da.from_array(v, chunks=(25, 1))
    yield "dask energy_distance", on_dask(lambda: es.energy_distance(A, B))
    yield "dask energy_test", on_dask(lambda: es.energy_test(A, B, rng=17, n_resamples=99))
    yield "dask dispersion", on_dask(lambda: es.dispersion(da.from_array(X, chunks=(50, 4)), labels=species))
    yield "dask distance_stats", on_dask(lambda: es.distance_stats(U, V))
    yield "dask independence_test", on_dask(lambda: es.independence_test(U, V, rng=18, n_resamples=99))


def _cli_demo():
    import contextlib
    import io

    from energystats import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["demo"])
    # timings printed by the demo (if any) are not results
    lines = [ln for ln in out.getvalue().splitlines() if " s)" not in ln and "seconds" not in ln]
    return code, lines


def main():
    warnings.simplefilter("ignore")
    for name, thunk in cases():
        try:
            value = digest(thunk())
        except Exception as exc:  # noqa: BLE001 - a changed error is a changed result
            value = f"raised {type(exc).__name__}: {exc}"
        print(f"{name:40s} {value}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
