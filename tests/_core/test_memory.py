"""Memory: every permutation engine keeps within ``memory_budget``; a call that
cannot fit says so before any work, with the bytes it needs.

Peaks are measured with :mod:`tracemalloc`, which sees every NumPy data
allocation.  A warm-up call first imports everything the call will import, so
that module objects are not counted.
"""
import os
import subprocess
import sys
import textwrap
import time
import tracemalloc

import numpy as np
import pytest

import energystats as es
from energystats._core import _memory, _group_sums, _permutation

MiB = 2**20


@pytest.fixture(scope="module", autouse=True)
def warm_up():
    es.energy_test(np.arange(12.0).reshape(6, 2), labels=[0, 1] * 3, n_resamples=9)
    es.energy_test(np.arange(6.0), labels=[0, 1] * 3, n_resamples=9)
    es.disco(np.arange(16.0).reshape(8, 2), labels=[0, 1] * 4, n_resamples=9)


def peak_of(call):
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


CASES = {
    # name: (n, d, groups, budget, kwargs, engine)
    "two groups, matrix": (2000, 3, 2, 64 * MiB, {}, "matrix"),
    "two groups, matrix, small batches": (2000, 3, 2, 31.5 * MiB, {}, "matrix"),
    "three groups, matrix, small batches": (2000, 3, 3, 31.5 * MiB, {}, "matrix"),
    "two groups, row blocks": (3000, 3, 2, 12 * MiB, {}, "blocked"),
    "two groups, tiles": (5000, 3, 2, 32 * MiB, {}, "tiled"),
    "five groups, tiles": (5000, 3, 5, 48 * MiB, {}, "tiled"),
    "eight groups, row blocks": (3000, 3, 8, 12 * MiB, {}, "blocked"),
    "eight groups, tiles": (3000, 3, 8, 32 * MiB, {}, "tiled"),
    "500 groups, folded row blocks": (4000, 2, 500, 64 * MiB, {}, "blocked"),
    "one-dimensional": (200_000, 1, 2, 16 * MiB, {}, "sorted"),
    "streamed": (3000, 3, 2, 2 * MiB, {"method": "streamed"}, "streamed"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_energy_test_keeps_the_budget(case):
    n, d, k, budget, kw, engine = CASES[case]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    labels = np.arange(n) % k
    res, peak = peak_of(lambda: es.energy_test(X, labels=labels, n_resamples=99, rng=0,
                                               memory_budget=budget, **kw))
    assert res.engine == engine
    # the budget, plus the pooled and rescaled copies of the data
    assert peak <= budget + 4 * X.nbytes + MiB, (peak / MiB, budget / MiB)


def test_disco_with_two_factors_keeps_the_budget():
    rng = np.random.default_rng(1)
    n = 3000
    X = rng.normal(size=(n, 2))
    labels = {"a": np.arange(n) % 3, "b": (np.arange(n) // 7) % 4}
    import pandas as pd

    df = pd.DataFrame({"x": X[:, 0], "y": X[:, 1], **labels})
    budget = 12 * MiB
    res, peak = peak_of(lambda: es.disco(df, by=["a", "b"], columns=["x", "y"], n_resamples=99,
                                         rng=0, memory_budget=budget))
    assert res.engine == "blocked"
    assert peak <= budget + 4 * X.nbytes + MiB, peak / MiB


def test_many_groups_fold_equals_the_one_hot_path():
    # from FOLD_MIN_GROUPS groups on the matrix rows are folded by label: same sums
    rng = np.random.default_rng(2)
    n, k = 300, 40
    X = rng.normal(size=(n, 2))
    codes = np.arange(n) % k
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    perms = _permutation.draw_permutations(np.random.default_rng(3), codes, 5)
    fold = _group_sums.MatrixEngine(D, k, np.bincount(codes), 2, 64 * MiB, fold=True)
    onehot = _group_sums.MatrixEngine(D, k, np.bincount(codes), 2, 64 * MiB, fold=False)
    a, b = fold.group_sums(perms), onehot.group_sums(perms)
    expected = np.array([[[D[np.ix_(p == g, p == h)].sum() for h in range(k)] for g in range(k)]
                         for p in perms])
    np.testing.assert_allclose(a, expected, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(b, expected, rtol=1e-10, atol=1e-9)
    # folded sums do not depend on the number of threads
    f1 = _group_sums.MatrixEngine(D, k, np.bincount(codes), 1, 64 * MiB, fold=True).group_sums(perms)
    f3 = _group_sums.MatrixEngine(D, k, np.bincount(codes), 3, 64 * MiB, fold=True).group_sums(perms)
    assert np.array_equal(a, f1) and np.array_equal(a, f3)


def test_a_budget_too_small_fails_at_once_with_the_bytes_needed(monkeypatch):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(10_000, 2))
    labels = np.arange(10_000) % 5000  # 5000 groups: each relabelling's k×k sums are 200 MB
    # "at once": before any pair of rows is touched (a wall-clock bound was flaky on slower
    # machines, where first-touch of the 5000-group bookkeeping alone takes over a second)
    from energystats._lib import _pairwise

    def no_pairs(*args, **kwargs):
        raise AssertionError("pairwise work before the memory check")

    for name in ("pairwise_matrix", "group_sums", "cross_group_sums"):
        monkeypatch.setattr(_pairwise, name, no_pairs)
    t0 = time.perf_counter()
    with pytest.raises(MemoryError, match=r"needs at least \d+\.\d GiB .*5000 groups.*memory_budget"):
        es.energy_test(X, labels=labels, n_resamples=99, rng=0)
    assert time.perf_counter() - t0 < 30.0  # a hang guard only


def test_the_budget_is_lowered_to_the_memory_available(monkeypatch):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 2))
    labels = np.arange(3000) % 2
    # the 72 MB matrix fits the default 512 MiB budget but not 40 MiB of available memory
    monkeypatch.setenv("ENERGYSTATS_AVAILABLE_MEMORY", str(40 * MiB))
    assert _memory.available_memory() == (40 * MiB, "ENERGYSTATS_AVAILABLE_MEMORY")
    res = es.energy_test(X, labels=labels, n_resamples=19, rng=0)
    assert res.engine == "tiled"
    monkeypatch.delenv("ENERGYSTATS_AVAILABLE_MEMORY")
    ref = es.energy_test(X, labels=labels, n_resamples=19, rng=0)
    assert ref.engine == "matrix"
    np.testing.assert_allclose(res.null_distribution, ref.null_distribution, rtol=1e-9)
    assert res.pvalue == ref.pvalue


def test_enumeration_is_never_held_at_once():
    # 2 × 10 points: 184 756 relabellings, enumerated in batches
    x, y = np.arange(10.0), np.arange(10.0) + 0.5
    res, peak = peak_of(lambda: es.energy_test(x, y, exact=True, memory_budget=2 * MiB))
    assert res.exact and res.n_resamples == 184_756
    assert peak < 2 * MiB + 184_756 * 8 + MiB  # the budget and the null distribution itself


def test_format_bytes():
    assert _memory.format_bytes(512) == "512 bytes"
    assert _memory.format_bytes(3 * MiB // 2) == "1.5 MiB"
    assert _memory.format_bytes(5 * 2**30) == "5.0 GiB"


CAPPED = textwrap.dedent("""
    import resource, sys, time
    import numpy as np
    import energystats as es
    cap = 2 * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    X = np.random.default_rng(0).normal(size=(25_000, 2))
    what = sys.argv[1]
    t0 = time.perf_counter()
    try:
        if what == "pairwise":
            es.pairwise(X)
        elif what == "energy_test":
            # a budget far above the cap: lowered to what is available, so the test runs in tiles
            res = es.energy_test(X[:20_000], labels=np.arange(20_000) % 2, n_resamples=9, rng=0,
                                 memory_budget=8 * 2**30)
            print("ok", res.engine, f"{time.perf_counter() - t0:.2f}")
            sys.exit(0)
    except MemoryError as exc:
        print("MemoryError", f"{time.perf_counter() - t0:.2f}", exc)
        sys.exit(0)
    print("no error")
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc")
@pytest.mark.parametrize("what", ["pairwise", "energy_test"])
def test_under_an_address_space_cap(what, tmp_path):
    script = tmp_path / "capped.py"
    script.write_text(CAPPED)
    env = dict(os.environ, OMP_NUM_THREADS="2", OPENBLAS_NUM_THREADS="1")
    env.pop("ENERGYSTATS_AVAILABLE_MEMORY", None)
    proc = subprocess.run([sys.executable, str(script), what], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    if what == "pairwise":
        assert out[0] == "MemoryError" and float(out[1]) < 2.0, proc.stdout
        assert "25000×25000" in proc.stdout and "GiB" in proc.stdout and "ulimit -v" in proc.stdout
    else:
        assert out[:2] == ["ok", "tiled"], proc.stdout


def test_cluster_test_runs_fewer_reference_fits_when_memory_is_short(monkeypatch):
    from energystats.clustering import significance

    n = 3000  # one Gram matrix: 72 MB (above SHORT_N: fits of at most 2048 points run one at a time)
    assert significance._reference_workers(n, 2, 99) == 2
    monkeypatch.setenv("ENERGYSTATS_AVAILABLE_MEMORY", str(120 * MiB))  # room for one at a time
    assert significance._reference_workers(n, 2, 99) == 1
    assert significance._reference_workers(n, 2, 1) == 1
    X = np.random.default_rng(5).normal(size=(60, 2))
    a = es.cluster_test(X, 2, n_resamples=4, n_init=1, rng=1, n_threads=2)
    monkeypatch.delenv("ENERGYSTATS_AVAILABLE_MEMORY")
    b = es.cluster_test(X, 2, n_resamples=4, n_init=1, rng=1, n_threads=2)
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)


def test_dispersion_with_thousands_of_groups_checks_its_tables(monkeypatch):
    # 3000 groups: the streamed sums hold a few 72 MB k×k tables
    X = np.random.default_rng(6).normal(size=(6000, 2))
    labels = np.arange(6000) % 3000
    monkeypatch.setenv("ENERGYSTATS_AVAILABLE_MEMORY", str(100 * MiB))
    with pytest.raises(MemoryError, match=r"k×k group sums of 3000 groups needs about .* MiB"):
        es.dispersion(X, labels)
