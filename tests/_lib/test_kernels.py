"""The pair kernels' instruction sets (energystats/_lib/_simd.h).

Each instruction set the CPU has is forced in a child process with
``ENERGYSTATS_SIMD``; every one must give the same bits as the baseline build,
for both dtypes, every metric, sizes that leave remainders of every kind (not
multiples of the eight lanes or of the four-row tiles), and each kernel family
(streamed group sums, the matrix, the dependence passes and permuted products, the Hartigan
rows, the permutation engine's masked sums, the change-point split search).  The fused Euclidean kernels (the energy metric with exponent 1) must also give
the square roots of the squared kernels' values, bit for bit.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from energystats._lib import SIMD_LEVELS, _pairwise

CHILD = r"""
import json, sys
import numpy as np
import energystats as es
from energystats._core import _group_sums
from energystats._lib import SIMD_LEVELS, _pairwise
out = {"level": _pairwise.SIMD_LEVEL}
rng = np.random.default_rng(5)
for d in (1, 3, 8, 13):
    for dt in ("float64", "float32"):
        x = rng.normal(size=(203, d)).astype(dt)
        y = (rng.normal(size=(141, d)) + 0.3).astype(dt)
        for met, kw in (("energy", {}), ("energy", {"exponent": 0.7}), ("laplacian", {"sigma": 1.3}),
                        ("gaussian", {"sigma": 0.8})):
            key = f"{d}-{dt}-{met}-{kw}"
            out[key + "-E"] = float(es.energy_distance(x, y, metric=met, method="pairwise", **kw))
            out[key + "-D"] = es.pairwise(x, y, metric=met, **kw).ravel()[::97].tolist()
        # the fused Euclidean kernel (square roots taken as it goes) is sqrt of the squared one
        out[f"{d}-{dt}-fused"] = bool(np.array_equal(es.pairwise(x, y),
                                                     np.sqrt(es.pairwise(x, y, exponent=2.0))))
        out[f"{d}-{dt}-dcov"] = float(es.distance_covariance(x[:141], y))
        out[f"{d}-{dt}-W"] = float(es.EnergyClustering(3, engine="streamed", random_state=0).fit(x).W_)
        # the matrix engine's two paths for two groups, each on every instruction set (by default
        # the masked sums do not run in the baseline build)
        for most, path in ((2, "masked"), (0, "one-hot")):
            _group_sums.MASK_MAX_GROUPS = dict.fromkeys(SIMD_LEVELS, most)
            out[f"{d}-{dt}-test-{path}"] = es.energy_test(x[:60], y[:50], n_resamples=49,
                                                          rng=2).null_distribution.tolist()
        out[f"{d}-{dt}-indep"] = es.independence_test(x[:141], y, n_resamples=49,
                                                      rng=2).null_distribution.tolist()
# the permuted products with both index types (the gathers of 16- and 64-bit indices)
from energystats._lib import _dependence
for n in (5, 8, 37, 203):
    A, B = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    A, B = A + A.T, B + B.T
    P = np.argsort(rng.random((7, n)), axis=1)
    for dt in (np.uint16, np.intp):
        res = np.empty(7)
        _dependence.permuted_products(A, B, P.astype(dt), res, 2)
        out[f"perm-{n}-{np.dtype(dt).name}"] = res.tolist()
        _dependence.permuted_products_tiled(A, B, P.astype(dt), res, np.empty((7, n)),
                                            np.empty((2, 7 * 16), dtype=np.int32),
                                            np.empty((2, n // 8 + 2), dtype=np.intp), 16, 8, 2)
        out[f"tiled-{n}-{np.dtype(dt).name}"] = res.tolist()
# Hartigan's moves on a Gram matrix: the table after 30 moves, not refreshed (k = 4: the AVX-512
# path with one column pattern; k = 3: a pattern repeating every three chunks; k = 9: entry by entry)
from energystats._lib import _hartigan
A = rng.normal(size=(203, 4))
G = np.ascontiguousarray(A @ A.T)
for k in (3, 4, 9):
    labels = (np.arange(203) % k).astype(np.intp)
    QX, Q, sizes = np.empty((203, k)), np.empty(k), np.empty(k, dtype=np.intp)
    _hartigan.hartigan(G, labels, k, QX, Q, sizes, 100, 0.0, max_moves=30, refresh=False)
    out[f"moves-{k}"] = QX.ravel().tolist() + labels.tolist()
# the masked sums of the matrix engine: full and partial tiles, one to fifteen groups
from energystats._lib import _permutation as _perm
for n in (5, 64, 131, 203):
    D = np.abs(rng.standard_cauchy(size=(n, n)))
    D = D + D.T
    for kp in (1, 2, 4, 15):
        ci = np.ascontiguousarray(rng.integers(0, kp + 1, size=(5, n)), dtype=np.intp)
        Q, s = np.empty((5, kp, kp)), np.empty((5, kp))
        _perm.batch_mask_sums(D, _group_sums.group_masks(ci, kp), D.sum(axis=1), Q, s, 2)
        out[f"mask-{n}-{kp}"] = Q.ravel().tolist() + s.ravel().tolist()
# the change-point split search (its distance rows are the pair kernels' rows), d = 1, 3 and 9
for d in (1, 3, 9):
    z = rng.normal(size=(157, d))
    z[70:] += 0.8
    res = es.e_divisive(z, n_resamples=19, rng=3, min_size=12)
    out[f"ediv-{d}"] = [res.changepoints.tolist(), list(map(float, res.statistics)),
                        float(res.rejected_statistic)]
json.dump(out, sys.stdout)
"""


def _run(level):
    env = dict(os.environ, ENERGYSTATS_SIMD=level)
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_instruction_set_gives_the_baseline_bits():
    base = _run("baseline")
    assert base.pop("level") == "baseline"
    assert all(v is True for key, v in base.items() if key.endswith("-fused"))
    chosen = SIMD_LEVELS.index(_pairwise.SIMD_LEVEL)
    if chosen == 0:
        pytest.skip("this CPU has only the baseline instruction set")
    for level in SIMD_LEVELS[1:chosen + 1]:
        got = _run(level)
        assert got.pop("level") == level
        assert got.keys() == base.keys()
        diff = [key for key in base if got[key] != base[key]]   # exact: the same bits
        assert not diff, (level, diff[:5])


def test_the_level_reported_is_one_of_the_levels():
    assert _pairwise.SIMD_LEVEL in SIMD_LEVELS


def test_a_bad_level_is_an_error_naming_the_variable():
    env = dict(os.environ, ENERGYSTATS_SIMD="sse9")
    done = subprocess.run([sys.executable, "-c", "import energystats as es; es.energy_distance([1.0], [2.0])"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0
    assert "ENERGYSTATS_SIMD" in done.stderr and "'sse9'" in done.stderr and "baseline" in done.stderr


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n,m,d", [(1, 1, 1), (5, 7, 2), (9, 17, 3), (37, 41, 11), (130, 263, 4),
                                   (150, 153, 3)])  # columns 257..302: four-row tiles, 6 columns left over
def test_group_sums_match_plain_loops(n, m, d, dtype):
    # every remainder of the 8-lane and 4-row tiles against a plain double loop (math.fsum)
    import math
    rng = np.random.default_rng(n * 1000 + m)
    x = rng.normal(size=(n, d)).astype(dtype)
    y = rng.normal(size=(m, d)).astype(dtype)
    X, Y = x.astype(np.float64), y.astype(np.float64)
    def mean_dist(A, B):
        return math.fsum(math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(u, v)))
                         for u in A for v in B) / (len(A) * len(B))
    expected = 2 * mean_dist(X, Y) - mean_dist(X, X) - mean_dist(Y, Y)
    import energystats as es
    got = es.energy_distance(x, y, method="pairwise")
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-14)
