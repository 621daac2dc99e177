"""The matrix-free first-order solver of the energy balancing weights (``solver='firstorder'``):
the optimum against the QP solvers, its KKT residual against a dense programme built here
with plain numpy, the streamed kernel against numpy, the choice of ``solver='auto'``, O(n)
memory, the same bits for any number of threads, and the named errors."""
import tracemalloc

import numpy as np
import pytest

import energystats as es
from energystats.balance import _firstorder

from .._core.test_interrupt import DEADLINE_S, _interrupt_child, posix_signals
from ._loops import confounded as _confounded
from ._loops import studentize as _studentize

pytest.importorskip("osqp")


# -- an independent reference: the dense programme, in plain numpy ----------------

def _dense_programme(X, t, estimand, focal, improved, lam):
    """``(A, b, const, blocks, levels)`` of the programme, from the definitions: the studentized
    covariates' distance matrix, K = -HDH, one simplex per optimised level."""
    Z = _studentize(X)
    n = len(Z)
    D = np.sqrt(((Z[:, None, :] - Z[None, :, :]) ** 2).sum(axis=-1))
    H = np.eye(n) - 1.0 / n
    K = -H @ D @ H
    levels = sorted(set(t.tolist()))
    opt = [g for g in levels if focal is None or g != focal]
    members = [np.flatnonzero(t == g) for g in opt]
    idx = np.concatenate(members)
    if focal is None:
        tm = np.full(n, 1.0 / n)
    else:
        tm = (t == focal) / np.sum(t == focal)
    imp = improved and estimand == "ATE"
    L = len(opt)
    A = np.zeros((len(idx), len(idx)))
    pos = np.cumsum([0] + [len(m) for m in members])
    for a, ma in enumerate(members):
        for c, mc in enumerate(members):
            f = (L if imp else 1.0) if a == c else (-1.0 if imp else 0.0)
            A[pos[a]:pos[a + 1], pos[c]:pos[c + 1]] = f * K[np.ix_(ma, mc)]
    sizes = np.concatenate([np.full(len(m), len(m)) for m in members])
    A[np.diag_indices_from(A)] += lam * (sizes / n) ** 2
    b = (K @ tm)[idx]
    blocks = [np.arange(pos[a], pos[a + 1]) for a in range(L)]
    return A, b, L * float(tm @ K @ tm), blocks, idx, sizes


def _project(v, blocks):
    out = np.empty_like(v)
    for idx in blocks:
        y = v[idx]
        u = np.sort(y)[::-1]
        css = np.cumsum(u) - 1.0
        rho = np.flatnonzero(u - css / np.arange(1, y.size + 1) > 0)[-1]
        out[idx] = np.maximum(y - css[rho] / (rho + 1), 0.0)
    return out


def _natural_residual(A, b, x, blocks):
    g = 2.0 * (A @ x - b)
    g = g / np.abs(g).max()
    return float(np.abs(x - _project(x - g, blocks)).max())


CASES = [  # (n, levels, estimand, improved, lam, QP solver)
    (240, 2, "ATE", True, 0.0, "osqp"),
    (300, 2, "ATT", True, 0.0, "clarabel"),
    (240, 3, "ATE", True, 0.0, "osqp"),
    (360, 3, "ATT", True, 0.1, "osqp"),
    (200, 2, "ATE", False, 0.3, "clarabel"),
]


class TestFirstOrder:
    @pytest.mark.parametrize("n, k, estimand, improved, lam, qp", CASES)
    def test_against_the_qp_solvers(self, n, k, estimand, improved, lam, qp):
        X, t = _confounded(n=n, k=k, seed=n + k, d=4)
        focal = None if estimand == "ATE" else 1
        kw = dict(estimand=estimand, focal=focal, improved=improved, lam=lam)
        ref = es.energy_balancing_weights(X, t, solver=qp, **kw)
        fo = es.energy_balancing_weights(X, t, solver="firstorder", **kw)
        assert ref.solver == qp and fo.solver == "firstorder"
        assert fo.objective == pytest.approx(ref.objective, rel=1e-6)
        # weights (mean 1 within each level) against OSQP's polished optimum: Clarabel's
        # interior points are looser (a KKT residual of 1e-8 to 1e-5; 2e-3 in the weights
        # of the ATT case here), so its objective only
        polished = ref if qp == "osqp" else es.energy_balancing_weights(X, t, solver="osqp", **kw)
        np.testing.assert_allclose(fo.weights, polished.weights, rtol=0, atol=2e-5)
        np.testing.assert_allclose(fo.energy_after, ref.energy_after, rtol=1e-5, atol=1e-12)
        np.testing.assert_allclose(fo.energy_before, ref.energy_before, rtol=1e-10, atol=1e-13)
        assert fo.kkt_residual <= 1e-6 and fo.iterations > 0

    @pytest.mark.parametrize("n, k, estimand, improved, lam, qp", CASES[:4])
    def test_kkt_residual_against_a_dense_programme(self, n, k, estimand, improved, lam, qp):
        X, t = _confounded(n=n, k=k, seed=n + k, d=4)
        focal = None if estimand == "ATE" else 1
        fo = es.energy_balancing_weights(X, t, solver="firstorder", estimand=estimand,
                                         focal=focal, improved=improved, lam=lam)
        A, b, const, blocks, idx, sizes = _dense_programme(X, t, estimand, focal, improved, lam)
        x = fo.weights[idx] / sizes                      # each level's masses
        assert _natural_residual(A, b, x, blocks) <= 2e-6
        assert fo.kkt_residual == pytest.approx(_natural_residual(A, b, x, blocks), abs=1e-7)
        assert fo.objective == pytest.approx(x @ A @ x - 2 * b @ x + const, rel=1e-9)

    def test_the_kernel_against_numpy(self):
        from energystats._core._metrics import resolve_metric
        from energystats._lib import _matvec

        met = resolve_metric("energy", 1.0)
        rng = np.random.default_rng(3)
        X = rng.normal(size=(203, 5))
        w = rng.random(203)
        bounds = np.array([0, 70, 71, 203], dtype=np.intp)
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))
        ref = np.stack([D[:, a:c] @ w[a:c] for a, c in zip(bounds[:-1], bounds[1:])], axis=1)
        outs = []
        for nt in (1, 2):
            out = np.empty((203, 3))
            for r0 in (0, 101):                          # two calls, an odd tail of rows
                r1 = 101 if r0 == 0 else 203
                _matvec.group_matvec(X, np.ascontiguousarray(X.T), w, bounds, met.code,
                                     met.param, r0, r1, out[r0:r1], nt)
            np.testing.assert_allclose(out, ref, rtol=1e-13)
            outs.append(out)
        np.testing.assert_array_equal(outs[0], outs[1])

    @pytest.mark.parametrize("N, bounds", [(5, [0, 5]), (203, [0, 70, 71, 203]),
                                           (600, [0, 100, 100, 513]), (1030, [0, 257, 1030])])
    def test_each_distance_once_gives_the_full_rows_bits(self, N, bounds):
        """StreamedDistances.dot forms each distance once (the tiles used for their rows and
        their columns) and gives group_matvec's full rows bit for bit, rows past the last
        group's columns included, for 1 and 2 threads and calls cut anywhere."""
        from energystats._core._metrics import resolve_metric
        from energystats._lib import _matvec

        met = resolve_metric("energy", 1.0)
        rng = np.random.default_rng(N)
        X = rng.normal(size=(N, 6)) * np.exp(rng.normal(size=6))
        w = rng.random(N) - 0.3
        bounds = np.array(bounds, dtype=np.intp)
        full = np.empty((N, bounds.size - 1))
        _matvec.group_matvec(X, np.ascontiguousarray(X.T), w, bounds, met.code, met.param, 0, N,
                             full, 1)
        for nt in (1, 2):
            dist = _firstorder.StreamedDistances(X, nt)
            np.testing.assert_array_equal(dist.dot(w, bounds), full)
        old = _firstorder.CALL_PAIRS
        try:
            _firstorder.CALL_PAIRS = 1                   # one step a call
            np.testing.assert_array_equal(_firstorder.StreamedDistances(X, 2).dot(w, bounds), full)
        finally:
            _firstorder.CALL_PAIRS = old

    def test_same_bits_for_one_and_two_threads(self):
        X, t = _confounded(n=300, k=2, seed=5, d=4)
        one = es.energy_balancing_weights(X, t, solver="firstorder", n_threads=1)
        two = es.energy_balancing_weights(X, t, solver="firstorder", n_threads=2)
        np.testing.assert_array_equal(one.weights, two.weights)
        assert one.objective == two.objective and one.iterations == two.iterations

    def test_auto_chooses_the_qp_where_it_fits_and_firstorder_beyond(self):
        X, t = _confounded(n=120, k=2, seed=2, d=3)
        small = es.energy_balancing_weights(X, t)
        assert small.solver == "osqp"
        big = es.energy_balancing_weights(X, t, memory_budget=8 * 120 * 120 * 8 - 1)
        assert big.solver == "firstorder"
        assert big.objective == pytest.approx(small.objective, rel=1e-6)
        cells = es.energy_balancing_weights(X, t, cells=10, rng=0, memory_budget=2**20)
        assert cells.solver == "osqp" and cells.cells is not None
        # exact constraints: only the QP takes them, so 'auto' keeps the QP's MemoryError
        with pytest.raises(MemoryError, match="memory_budget"):
            es.energy_balancing_weights(X, t, moments=1, memory_budget=1000)

    def test_memory_stays_linear_in_n(self):
        n = 4000
        X, t = _confounded(n=n, k=2, seed=7, d=3)
        tracemalloc.start()
        try:
            # a ridge large enough that a few products suffice: the memory is what is tested
            res = es.energy_balancing_weights(X, t, solver="firstorder", lam=1e4)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert res.solver == "firstorder" and res.kkt_residual <= 1e-6
        print(f"tracemalloc peak {peak / 2**20:.1f} MiB, {res.iterations} products")
        # one n×n float64 matrix is 128 MB; the preconditioner holds an n×200 matrix (5%)
        assert peak < 0.2 * 8 * n * n, peak

    # -- input validation --

    def test_bad_solver_is_named(self):
        X, t = _confounded(n=30, k=2, seed=1, d=2)
        with pytest.raises(ValueError, match=r"`solver` must be one of 'auto', 'firstorder'"):
            es.energy_balancing_weights(X, t, solver="fista")
        with pytest.raises(ValueError, match=r"`solver` must be one of"):
            es.energy_balancing_weights(X, t, solver=None)

    def test_firstorder_refuses_exact_constraints_and_cells(self):
        X, t = _confounded(n=30, k=2, seed=1, d=2)
        with pytest.raises(ValueError, match=r"`moments`.*not by `solver='firstorder'`"):
            es.energy_balancing_weights(X, t, solver="firstorder", moments=1)
        with pytest.raises(ValueError, match=r"`quantiles`.*not by `solver='firstorder'`"):
            es.energy_balancing_weights(X, t, solver="firstorder", quantiles=0.5)
        with pytest.raises(ValueError, match=r"`cells`.*`solver='firstorder'`"):
            es.energy_balancing_weights(X, t, solver="firstorder", cells=5, rng=0)

    def test_too_few_products_is_a_runtime_error(self):
        X, t = _confounded(n=100, k=2, seed=1, d=3)
        dist = _firstorder.StreamedDistances(_studentize(X), 1)
        bounds = np.array([0, 50], dtype=np.intp)
        op = _firstorder.Operator(dist, bounds, 1.0, 0.0, np.zeros(50))
        b = dist.kdot(np.full(100, 0.01), [0, 100])[:50, 0]
        with pytest.raises(RuntimeError, match=r"stopped after \d+ matrix-vector products"):
            _firstorder.solve_firstorder(op, b, bounds, np.full(50, 0.02), max_matvecs=5)


# -- Ctrl-C --

SETUP_FIRSTORDER = """
from energystats.balance import _firstorder
_inner = _firstorder.solve_firstorder
def _announced(*a, **k):
    sys.stdout.write("phase\\n"); sys.stdout.flush()
    return _inner(*a, **k)
_firstorder.solve_firstorder = _announced
X = rng.normal(size=(6000, 1)); t = (X[:, 0] + rng.normal(size=6000) > 0).astype(int)
"""


@posix_signals
def test_ctrl_c_stops_the_firstorder_solver():
    """The loop runs in Python between calls of the kernel of a few hundred rows each (tens of
    milliseconds), so the KeyboardInterrupt comes at the end of the current call.  d = 1:
    thousands of products, so the signal lands inside the solver."""
    interrupted, exited, seen, err = _interrupt_child(
        SETUP_FIRSTORDER, 'es.energy_balancing_weights(X, t, solver="firstorder")',
        wait_after_phase=1.0)
    print(f"interrupted after {interrupted:.2f} s, exited after {exited:.2f} s")
    assert interrupted < DEADLINE_S, (seen, err)
    assert not any(line.startswith("finished") for line in seen), seen
    assert exited < DEADLINE_S, (seen, err)
