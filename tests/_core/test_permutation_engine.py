"""The compiled permutation kernels and the engines behind energy_test / disco,
each against a plain numpy reference, for both dtypes and n_threads 1 and 2."""
import math

import numpy as np
import pytest

from energystats._core import _group_sums, _permutation
from energystats._lib import SIMD_LEVELS
from energystats._lib import _permutation as kernels
from energystats._core._metrics import resolve_metric


def ref_group_sums(X, codes, k, p=1.0):
    """M[g, h] = Σ_{x∈C_g, y∈C_h} ‖x − y‖^p by explicit loops over groups."""
    X = np.asarray(X, dtype=np.float64).reshape(len(X), -1)
    M = np.zeros((k, k))
    for g in range(k):
        for h in range(k):
            A, B = X[codes == g], X[codes == h]
            diff = A[:, None, :] - B[None, :, :]
            M[g, h] = np.sum(np.sqrt(np.sum(diff ** 2, axis=2)) ** p)
    return M


def random_codes(rng, B, sizes):
    base = np.repeat(np.arange(len(sizes)), sizes)
    return np.ascontiguousarray(np.array([rng.permutation(base) for _ in range(B)]), dtype=np.intp)


class TestBatchGroupSums:

    @pytest.mark.parametrize("n_threads", [1, 2])
    @pytest.mark.parametrize("sizes", [(5, 7), (3, 4, 6, 2)])
    def test_against_numpy(self, n_threads, sizes):
        rng = np.random.default_rng(0)
        k, n, B = len(sizes), sum(sizes), 9
        D = rng.random((n, n))
        D = D + D.T
        np.fill_diagonal(D, 0)
        codes = random_codes(rng, B, sizes)
        kp = k - 1
        Z = np.zeros((B * kp, n))
        for b in range(B):
            for h in range(kp):
                Z[b * kp + h] = D[:, codes[b] == h].sum(axis=1)
        out = np.empty((B, k, k))
        kernels.batch_group_sums(Z, codes, np.ascontiguousarray(D.sum(axis=1)), out, n_threads)
        for b in range(B):
            L = np.eye(k)[codes[b]]
            np.testing.assert_allclose(out[b], L.T @ D @ L, rtol=1e-12, atol=1e-12)


def ref_masked(D, codes, kp):
    """Σ_{x∈C_g, y∈C_h} D[x, y] for g, h < kp, entry by entry in plain loops (fsum: exact
    to rounding once)."""
    import math

    B, n = codes.shape
    out = np.zeros((B, kp, kp))
    for b in range(B):
        for g in range(kp):
            for h in range(kp):
                out[b, g, h] = math.fsum(D[i, j] for i in range(n) if codes[b, i] == g
                                         for j in range(n) if codes[b, j] == h)
    return out


class TestBatchMaskSums:
    """The masked sums of the matrix engine (64×64 tiles of the lower triangle)."""

    @staticmethod
    def run(D, codes, kp, n_threads=2, rowsum=None):
        B = codes.shape[0]
        Q, s = np.empty((B, kp, kp)), np.empty((B, kp))
        rowsum = D.sum(axis=1) if rowsum is None else rowsum
        kernels.batch_mask_sums(D, _group_sums.group_masks(codes, kp), np.ascontiguousarray(rowsum),
                                Q, s, n_threads)
        return Q, s

    # n: inside one tile, exactly one and two tiles, partial column tiles of every width class
    @pytest.mark.parametrize("n", [1, 5, 63, 64, 65, 130, 203])
    @pytest.mark.parametrize("k", [2, 3, 5, 16])
    def test_against_plain_loops(self, n, k):
        rng = np.random.default_rng(n * 10 + k)
        X = rng.normal(size=(n, 3))
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
        codes = np.ascontiguousarray([rng.integers(0, k, n) for _ in range(6)], dtype=np.intp)
        Q, s = self.run(D, codes, k - 1)
        ref = ref_masked(D, codes, k - 1)
        scale = max(1.0, float(np.abs(D).sum()))
        # measured ≤ 0.41 eps × Σ|D| over these cases (fsum is exact to one rounding): 10× margin
        np.testing.assert_allclose(Q, ref, rtol=0, atol=4 * np.finfo(float).eps * scale)
        for b in range(codes.shape[0]):
            for g in range(k - 1):
                assert s[b, g] == pytest.approx(D.sum(axis=1)[codes[b] == g].sum(), rel=1e-13, abs=1e-300)

    def test_tiles_are_added_with_compensation(self):
        # 31 × 31 tiles whose partial sums are all alike (points far from the origin): added
        # plainly, the tile sums' rounding errors accumulate (2.2 eps × the sum, measured, with
        # the compensation switched off); compensated, what is left is the rounding inside the
        # tiles (0.54 eps measured)
        rng = np.random.default_rng(3)
        n = 1950
        X = rng.normal(size=(n, 10)) + 100.0
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
        codes = np.ascontiguousarray([rng.permutation(np.arange(n) % 3) for _ in range(2)], dtype=np.intp)
        Q, _ = self.run(D, codes, 2)
        for b in range(2):
            for g in range(2):
                for h in range(2):
                    exact = math.fsum(D[np.ix_(codes[b] == g, codes[b] == h)].ravel())
                    assert abs(Q[b, g, h] - exact) <= 1.0 * np.finfo(float).eps * exact

    def test_same_bits_for_any_threads_batch_and_row_padding(self):
        rng = np.random.default_rng(7)
        n = 203
        X = rng.normal(size=(n, 4))
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
        codes = np.ascontiguousarray([rng.permutation(np.arange(n) % 3) for _ in range(9)], dtype=np.intp)
        Q1, s1 = self.run(D, codes, 2, 1)
        for nt in (2, 3, 16):
            Q, s = self.run(D, codes, 2, nt)
            assert np.array_equal(Q, Q1) and np.array_equal(s, s1)
        for b in range(9):  # each relabelling alone: the same bits as in the batch
            Q, s = self.run(D, codes[b:b + 1], 2, 2)
            assert np.array_equal(Q[0], Q1[b]) and np.array_equal(s[0], s1[b])
        # a copy at another address (alignment changes nothing but the speed)
        buf = np.empty(n * n + 1)[1:].reshape(n, n)
        buf[:] = D
        Q, s = self.run(buf, codes, 2, 2)
        assert np.array_equal(Q, Q1)
        assert np.array_equal(Q1, Q1.transpose(0, 2, 1))  # symmetric to the bit

    def test_entries_outside_the_masks_are_never_added(self):
        # inf and NaN in the rows and columns of points that stay in the last group: 0 × inf
        # would be NaN, a masked-off entry must not be added at all
        rng = np.random.default_rng(8)
        n = 150
        codes = np.ones((4, n), dtype=np.intp)
        codes[:, :100] = [rng.permutation(np.arange(100) % 2) for _ in range(4)]
        D = rng.random((n, n))
        clean = D + D.T
        D = clean.copy()
        D[100:, :] = np.inf
        D[:, 100:] = np.inf
        D[120:, 120:] = np.nan
        Q, _ = self.run(D, codes, 1, rowsum=clean.sum(axis=1))
        Qc, _ = self.run(clean, codes, 1)
        assert np.all(np.isfinite(Q)) and np.array_equal(Q, Qc)

    def test_empty_batch_and_empty_groups(self):
        D = np.ones((70, 70))
        Q, s = self.run(D, np.zeros((0, 70), dtype=np.intp), 1)
        assert Q.shape == (0, 1, 1)
        codes = np.full((2, 70), 2, dtype=np.intp)  # groups 0 and 1 empty
        Q, s = self.run(D, codes, 2)
        assert np.array_equal(Q, np.zeros((2, 2, 2))) and np.array_equal(s, np.zeros((2, 2)))

    def test_masks_layout(self):
        ci = np.array([[0, 1, 0, 2] * 20], dtype=np.intp)  # n = 80: two words, the second partial
        m = _group_sums.group_masks(ci, 2)
        assert m.shape == (1, 2, 2) and m.dtype == np.uint64
        for g in range(2):
            pts = [64 * w + t for w in range(2) for t in range(64) if (int(m[0, g, w]) >> t) & 1]
            assert pts == list(np.flatnonzero(ci[0] == g))


class TestBatchSortedGroupSums:

    @pytest.mark.parametrize("n_threads", [1, 2])
    @pytest.mark.parametrize("sizes", [(6, 9), (4, 5, 3, 7)])
    def test_against_numpy(self, n_threads, sizes):
        rng = np.random.default_rng(1)
        k, n, B = len(sizes), sum(sizes), 11
        x = np.round(rng.standard_t(2, size=n), 1)  # with ties
        order = np.argsort(x, kind="stable")
        xs = x[order]
        codes = random_codes(rng, B, sizes)
        out = np.zeros((B, k, k))
        kernels.batch_sorted_group_sums(np.ascontiguousarray(xs - xs[n // 2]), order, codes, out,
                                        n_threads)
        full = out + out.transpose(0, 2, 1)
        for b in range(B):
            np.testing.assert_allclose(full[b], ref_group_sums(x, codes[b], k), rtol=1e-12, atol=1e-10)


class TestEngines:

    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    @pytest.mark.parametrize("n_threads", [1, 2])
    @pytest.mark.parametrize("d,method", [(1, "auto"), (1, "pairwise"), (3, "auto"), (3, "streamed")])
    def test_engine_against_numpy(self, dtype, n_threads, d, method):
        rng = np.random.default_rng(2)
        sizes = np.array([7, 5, 9])
        X = rng.normal(size=(sizes.sum(), d)).astype(dtype)
        met = resolve_metric("energy", 1.0, 1.0)
        eng = _group_sums.build_engine(X, 3, sizes, met, n_threads, method=method)
        expected_name = {"auto": "sorted" if d == 1 else "matrix", "pairwise": "matrix",
                         "streamed": "streamed"}[method]
        assert eng.name == expected_name
        codes = random_codes(rng, 6, sizes)
        M = eng.group_sums(codes)
        # both dtypes are summed in double: measured max relative error 1.9e-15 (float32,
        # matrix engine; float64 1.5e-15; sorted and streamed <= 4.1e-16); rtol 2e-14 is a
        # 10× margin (float32 arithmetic would give ~1e-7).
        for b in range(6):
            np.testing.assert_allclose(M[b], ref_group_sums(X, codes[b], 3), rtol=2e-14)

    def test_blocked_engine(self):
        rng = np.random.default_rng(3)
        sizes = np.array([40, 30, 50])
        n = sizes.sum()
        X = rng.normal(size=(n, 2))
        met = resolve_metric("energy", 0.7, 1.0)
        eng = _group_sums.build_engine(X, 3, sizes, met, 2, memory_budget=0.5 * 8 * n * n)
        assert eng.name == "blocked" and eng.block_rows < n
        codes = random_codes(rng, 5, sizes)
        M = eng.group_sums(codes)
        for b in range(5):
            np.testing.assert_allclose(M[b], ref_group_sums(X, codes[b], 3, p=0.7), rtol=1e-10)

    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    @pytest.mark.parametrize("sizes", [(90, 130), (60, 130, 50), (30, 20, 80, 40, 70)])
    def test_tiled_engine(self, monkeypatch, dtype, sizes):
        monkeypatch.setattr(_group_sums, "TILE_ROWS", 64)  # 4-5 row blocks: diagonal and off tiles
        rng = np.random.default_rng(4)
        sizes = np.array(sizes)
        k, n = sizes.size, sizes.sum()
        X = rng.normal(size=(n, 3)).astype(dtype)
        met = resolve_metric("energy", 0.7, 1.0)
        codes = random_codes(rng, 7, sizes)
        out = []
        for nt in (1, 2):
            eng = _group_sums.TiledEngine(X, k, sizes, met, nt, _group_sums.DEFAULT_MEMORY_BUDGET)
            assert eng.name == "tiled" and len(eng.starts) > 4
            out.append(eng.group_sums(codes))
        assert np.array_equal(out[0], out[1])  # the same bits for any number of threads
        assert np.array_equal(out[0], out[0].transpose(0, 2, 1))
        for b in range(7):
            np.testing.assert_allclose(out[0][b], ref_group_sums(X, codes[b], k, p=0.7),
                                       rtol=1e-12)

    def test_budget_chooses_matrix_tiled_blocked(self):
        n = 4000  # the matrix: 128 MB; a tile per thread: 8 MiB
        met = resolve_metric("energy", 1.0, 1.0)
        plan = [_group_sums.plan_engine(n, 3, 2, met, "auto", b).name
                for b in (512 * 2**20, 100 * 2**20, 12 * 2**20)]
        assert plan == ["matrix", "tiled", "blocked"]
        assert _group_sums.plan_engine(n, 3, 40, met, "auto", 100 * 2**20).name == "blocked"  # folded

    def test_pvalue_from_null(self):
        null = np.array([1.0, 2.0, 3.0, 2.0 * (1 - 1e-15)])
        # values within `tol` below the observed one count as ties (≥); none without it
        assert _permutation.pvalue_from_null(2.0, null, exact=False) == pytest.approx(3 / 5)
        assert _permutation.pvalue_from_null(2.0, null, exact=False, tol=1e-14) == pytest.approx(4 / 5)
        assert _permutation.pvalue_from_null(2.0, null, exact=True) == pytest.approx(2 / 4)
        assert _permutation.pvalue_from_null(2.0, null, exact=True, tol=1e-14) == pytest.approx(3 / 4)
        assert _permutation.pvalue_from_null(10.0, null, exact=False) == pytest.approx(1 / 5)


class TestMatrixEngineBlocks:
    """The matrix engine sums over the upper block triangle of D (P = 1, 2, 4 blocks)."""

    @pytest.mark.parametrize("n,sizes", [(300, (100, 200)), (600, (150, 200, 250)),
                                         (1100, (500, 600)), (1100, (200, 300, 250, 350)),
                                         (700, (100, 150, 50, 120, 80, 200)),
                                         (900, (75,) * 12)])
    @pytest.mark.parametrize("masked_up_to", [16, 0])
    def test_against_dense_numpy(self, monkeypatch, n, sizes, masked_up_to):
        # both paths of the engine, whatever the instruction set: masked sums and the one-hot
        # products
        monkeypatch.setattr(_group_sums, "MASK_MAX_GROUPS", dict.fromkeys(SIMD_LEVELS, masked_up_to))
        rng = np.random.default_rng(n + len(sizes))
        X = rng.normal(size=(n, 3))
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
        k = len(sizes)
        eng = _group_sums.MatrixEngine(D, k, np.array(sizes), 2, _group_sums.DEFAULT_MEMORY_BUDGET)
        assert eng.masked == (k <= masked_up_to)
        codes = random_codes(rng, 4, sizes)
        M = eng.group_sums(codes)
        M_full = eng._group_sums_full(codes)
        for b in range(4):
            L = np.eye(k)[codes[b]]
            np.testing.assert_allclose(M[b], L.T @ D @ L, rtol=1e-11)
            np.testing.assert_allclose(M_full[b], L.T @ D @ L, rtol=1e-11)


class TestConcurrentCalls:
    """Issue 30, item 7: the BLAS thread count is a setting of the whole process, and BLAS
    products give other bits on one thread than on two, so a test's one-BLAS-thread region
    must hold while any test (from any Python thread) computes, and be lifted only by the last."""

    @staticmethod
    def _two_blas_threads():
        threadpoolctl = pytest.importorskip("threadpoolctl")
        # at least two BLAS threads, so that a region that is not held shows in the bits
        return threadpoolctl.threadpool_limits(limits=2, user_api="blas")

    def test_threads_give_the_serial_bits(self):
        import threading

        import energystats as es
        from energystats.goodness_of_fit import _limit as _gof_limit

        rng = np.random.default_rng(3)
        X = rng.normal(size=(400, 3))
        labels = np.repeat(np.arange(20), 20)  # 20 groups: the BLAS products of the matrix engine

        def test(seed):
            res = es.energy_test(X, labels=labels, rng=seed, n_resamples=199, n_threads=2)
            assert res.engine == "matrix"
            return res.null_distribution

        def eigen():  # SciPy's own OpenBLAS, in the same region
            return _gof_limit._nystrom_eigenvalues(300, 50, _gof_limit.HALF_WIDTH)

        with self._two_blas_threads():
            serial = {s: test(s) for s in range(8)}
            serial_ev = eigen()
            out, evs, errors = {}, [], []

            def worker(i):
                try:
                    for s in range(i, 8, 4):
                        out[s] = test(s)
                        evs.append(eigen())
                except Exception as exc:  # pragma: no cover - reported below
                    errors.append(exc)

            threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert not errors
        differ = [s for s in range(8) if not np.array_equal(out[s], serial[s])]
        assert differ == [], f"null distributions differing from the serial run: seeds {differ}"
        assert len(evs) == 8 and all(np.array_equal(ev, serial_ev) for ev in evs)

    def test_region_held_until_the_last_call_leaves(self):
        import threading

        controller = pytest.importorskip("threadpoolctl").ThreadpoolController()

        def counts():
            return [lib.num_threads for lib in controller.select(user_api="blas").lib_controllers]

        with self._two_blas_threads():
            before = counts()
            a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
            seen = {}

            def a():  # enters first, leaves while b is still inside
                with _group_sums._blas_limits(1):
                    a_in.set()
                    b_in.wait()
                a_out.set()

            def b():
                a_in.wait()
                with _group_sums._blas_limits(1):
                    b_in.set()
                    a_out.wait()
                    seen["b after a left"] = counts()
                    with _group_sums._blas_limits(1):  # nested
                        pass
                    seen["b after nested"] = counts()

            ts = [threading.Thread(target=a), threading.Thread(target=b)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            assert seen["b after a left"] == [1] * len(before)
            assert seen["b after nested"] == [1] * len(before)
            assert counts() == before  # restored by the last to leave
        # threadpoolctl's own limits still work in this thread afterwards
        with pytest.importorskip("threadpoolctl").threadpool_limits(limits=1, user_api="blas"):
            assert counts() == [1] * len(before)


def test_region_limits_scipys_blas_loaded_later():
    """SciPy's own OpenBLAS (``scipy.linalg``: the eigenvalue problem of the normality limit)
    is limited too when SciPy was imported after the first region (a fresh process)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("threadpoolctl")
    code = (
        "import sys, numpy as np\n"
        "from energystats._core import _group_sums as P\n"
        "assert 'scipy.linalg' not in sys.modules\n"
        "with P._blas_limits(1):\n"
        "    pass\n"
        "import scipy.linalg\n"
        "from threadpoolctl import threadpool_info\n"
        "with P._blas_limits(1):\n"
        "    inside = [d['num_threads'] for d in threadpool_info() if d['user_api'] == 'blas']\n"
        "print(inside)\n"
    )
    # the child imports this checkout's package (as the other child-process tests do)
    root = str(__import__("pathlib").Path(_permutation.__file__).resolve().parents[2])
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", MKL_NUM_THREADS="2",
               PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))), timeout=120)
    assert out.returncode == 0, out.stderr
    assert set(eval(out.stdout.strip().splitlines()[-1])) == {1}, out.stdout
