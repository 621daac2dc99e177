"""Cross-cutting guarantees, once, over every public entry point (see ``registry.py``).

Seeds (same seed -> same result, the seed recorded), magnitudes (X·2**k),
ties (duplicated rows), fork safety (a call in a forked child after the parent
ran threads) and memory budgets (a tiny ``memory_budget`` honoured or refused
with a MemoryError naming it).  All on 16 rows: the whole file runs in seconds.
"""
import os
import pickle
import select
import signal
import warnings

import numpy as np
import pytest

import energystats as es

from .registry import REGISTRY, public_entry_points, values


def _data(seed=0):
    return np.random.default_rng(seed).normal(size=(16, 3))


def _run(entry, X, seed=7):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # degenerate-statistic notes etc. are not the point here
        return entry.call(X, seed)


def _names(pred):
    return [pytest.param(n, id=n) for n, e in sorted(REGISTRY.items()) if pred(e)]


def test_every_public_entry_point_is_registered():
    public = public_entry_points()
    missing = public - set(REGISTRY)
    stale = set(REGISTRY) - public
    assert not missing, f"public entry points missing from tests/_core/registry.py: {sorted(missing)}"
    assert not stale, f"registry names that are not in energystats.__all__: {sorted(stale)}"


def _defined_tests(path):
    """``{"test", "Class::test"}``: the test functions of a test module, read with ``ast``."""
    import ast

    tree = ast.parse(path.read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef):
            found.update(f"{node.name}::{f.name}" for f in node.body
                         if isinstance(f, ast.FunctionDef))
    return found


@pytest.mark.parametrize("name", _names(lambda e: e.interrupt is not None))
def test_interrupt_pointer_names_a_test(name):
    """An entry's ``interrupt`` names a test that exists (a renamed or deleted Ctrl-C test
    would otherwise leave the registry pointing at nothing)."""
    from pathlib import Path

    where = REGISTRY[name].interrupt
    file, _, test = where.partition("::")
    path = Path(__file__).resolve().parent.parent / file
    assert path.is_file(), f"{name}: {file} not found under tests/"
    assert test, f"{name}: {where!r} names no test (file::[Class::]test)"
    assert test in _defined_tests(path), f"{name}: {test} not defined in {file}"


@pytest.mark.parametrize("name", _names(lambda e: True))
def test_small_call_gives_finite_fields(name):
    entry = REGISTRY[name]
    got = values(entry, _run(entry, _data()))
    for field, v in got.items():
        assert np.all(np.isfinite(v)), (name, field, v)


@pytest.mark.parametrize("name", _names(lambda e: e.random))
def test_same_seed_same_result_and_seed_recorded(name):
    entry = REGISTRY[name]
    X = _data()
    a, b = _run(entry, X, 7), _run(entry, X, 7)
    for field, v in values(entry, a).items():
        np.testing.assert_array_equal(v, values(entry, b)[field], err_msg=f"{name}.{field}")
    if name == "EnergyClustering":
        assert a.get_params()["random_state"] == 7
    else:
        assert a.seed == 7, f"{name}'s result does not record the seed it was given"


@pytest.mark.parametrize("k", [-900, -300, -40, 40, 300, 900])
@pytest.mark.parametrize("name", _names(lambda e: e.magnitudes))
def test_magnitudes_scale_as_declared(name, k):
    # 2**k scales every difference, square, square root and sum exactly; at 2**±300 no square
    # of the data over- or underflows, at 2**±900 they all would, and the package's working
    # units must keep every field whose answer is a finite float64 (|k · degree| <= 1000)
    entry = REGISTRY[name]
    X = _data()
    base = values(entry, _run(entry, X))
    scaled = values(entry, _run(entry, X * 2.0**k))
    for field, degree in entry.fields.items():
        if abs(k * degree) > 1000:
            continue                  # the answer itself is outside float64
        want = base[field] * 2.0 ** (k * degree)
        got = scaled[field]
        assert np.all(np.isfinite(got)), (name, field, k, got)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=0, err_msg=f"{name}.{field} at 2**{k}")


@pytest.mark.parametrize("c", [1e300, 1e-300])
@pytest.mark.parametrize("name", _names(lambda e: e.magnitudes))
def test_decimal_extremes_scale_as_declared(name, c):
    # 1e±300 is not a power of two: the data change by rounding (relative 1e-16), so the
    # fields agree to a looser tolerance; every field whose answer is a finite float64 must be
    entry = REGISTRY[name]
    X = _data()
    base = values(entry, _run(entry, X))
    scaled = values(entry, _run(entry, X * c))
    for field, degree in entry.fields.items():
        if abs(300 * degree) > 307:
            continue                  # the answer itself is outside float64
        want = base[field] * c ** degree if degree else base[field]
        got = scaled[field]
        assert np.all(np.isfinite(got)), (name, field, c, got)
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=0, err_msg=f"{name}.{field} at {c}")


@pytest.mark.parametrize("name", _names(lambda e: True))
def test_constant_data_is_refused_or_named(name):
    # all 16 rows identical: a clear error naming an argument, or a result whose undefined
    # fields (NaN) come with a DegenerateStatisticWarning -- never a silent NaN
    entry = REGISTRY[name]
    X = np.ones((16, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = entry.call(X, 7)
        except (ValueError, TypeError) as exc:
            assert "`" in str(exc), (name, str(exc))
            return
    got = values(entry, res)
    nan = [f for f, v in got.items() if np.any(np.isnan(np.asarray(v, dtype=float)))]
    if nan:
        assert any(issubclass(w.category, es.DegenerateStatisticWarning) for w in caught), \
            (name, nan, [str(w.message)[:80] for w in caught])


@pytest.mark.parametrize("name", _names(lambda e: True))
def test_duplicated_rows(name):
    # every row twice (rows 2i and 2i+1 equal): ties in every distance matrix and in every split
    entry = REGISTRY[name]
    X = np.repeat(_data()[:8], 2, axis=0)
    got = values(entry, _run(entry, X))
    for field, v in got.items():
        assert np.all(np.isfinite(v)), (name, field, v)
        if field == "pvalue":
            assert np.all((0 < v) & (v <= 1)), (name, v)


def _warm_threads():
    # the parent runs the package's threaded kernels before forking
    X = _data(1)
    es.pairwise(np.repeat(X, 8, axis=0), n_threads=2)
    es.energy_test(X[:8], X[8:], n_resamples=19, rng=0, n_threads=2)
    es.distance_correlation(X[:, :1], X[:, 1:], n_threads=2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
@pytest.mark.parametrize("name", _names(lambda e: True))
def test_call_in_forked_child_after_threads(name):
    entry = REGISTRY[name]
    X = _data()
    _warm_threads()
    want = values(entry, _run(entry, X))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                          # child: never return into pytest
        code = 1
        try:
            os.close(r)
            payload = pickle.dumps(values(entry, _run(entry, X)))
            with os.fdopen(w, "wb") as f:
                f.write(payload)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    try:
        ready, _, _ = select.select([r], [], [], 60)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"{name} hung in a forked child (killed after 60 s)")
        with os.fdopen(r, "rb") as f:
            data = f.read()
    finally:
        _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (name, status)
    got = pickle.loads(data)
    for field, v in want.items():
        np.testing.assert_array_equal(got[field], v, err_msg=f"{name}.{field} in the child")


@pytest.mark.parametrize("name", _names(lambda e: e.memory is not None))
def test_tiny_memory_budget_is_honoured_or_refused(name):
    entry = REGISTRY[name]
    X = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = values(entry, entry.memory(X, 2**30))
        try:
            got = entry.memory(X, 1)
        except MemoryError as exc:
            msg = str(exc)
            assert "memory_budget" in msg and "1 bytes" in msg, msg
            return
    # honoured: the same result (a streamed path may sum in another order: rounding only)
    for field, v in values(entry, got).items():
        np.testing.assert_allclose(v, want[field], rtol=1e-13, atol=0, err_msg=f"{name}.{field}")
