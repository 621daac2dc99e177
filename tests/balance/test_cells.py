"""The cell approximation of the balancing weights (``cells=``): the streamed cell sums against
plain loops, the returned weights against the programme restricted to cell-constant weights
written out on all rows, one row per cell against the exact programme, and the named errors."""
import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core import _weights as core_weights
from energystats.balance import _cells

from ._loops import confounded as _confounded
from ._loops import centre_loop as _centre, dist as _dist, energy_loop as _energy, masses as _masses
from ._loops import studentize as _studentize

pytest.importorskip("osqp")


# -- independent references: plain loops over the rows ---------------------------

def _cell_average(F, cell, K, s):
    """G[a, b] = sum_{i in a, j in b} s_i s_j F_ij / (s(a) s(b)), by loops."""
    G = np.zeros((K, K))
    for i in range(len(cell)):
        for j in range(len(cell)):
            if cell[i] >= 0 and cell[j] >= 0:
                G[cell[i], cell[j]] += s[i] * s[j] * F[i, j]
    mass = np.array([s[cell == c].sum() for c in range(K)])
    return G / np.outer(mass, mass)


def _data(n=90, k=2, seed=0, d=3):
    return _confounded(n=n, k=k, seed=seed, d=d)


# -- the streamed cell sums -------------------------------------------------------

def test_cell_sums_against_loops_on_one_and_two_threads():
    rng = np.random.default_rng(3)
    n, K = 57, 6
    Z, a = rng.normal(size=(n, 3)), rng.normal(size=(n, 1))
    cell = rng.integers(0, K, n)
    cell[[4, 20]] = -1                               # rows of base weight 0 are in no cell
    s = rng.uniform(0.2, 3.0, n)
    s[[4, 20]] = 0.0
    G, mass, pen = _cells.cell_distances(Z, cell, K, s, 1)
    Dz = _dist(Z)
    np.testing.assert_allclose(G, _cell_average(Dz, cell, K, s), rtol=1e-12)
    np.testing.assert_allclose(mass, [s[cell == c].sum() for c in range(K)], rtol=1e-14)
    np.testing.assert_allclose(pen, [np.sum(s[cell == c] ** 2) / s[cell == c].sum() ** 2
                                     for c in range(K)], rtol=1e-14)
    P, Ca, Cx, _, _ = _cells.cell_dependence_matrices(a, Z, cell, K, s, 1)
    p = s / s.sum()
    CA, CX = _centre(_dist(a), p), _centre(Dz, p)
    np.testing.assert_allclose(P, _cell_average(CA * CX, cell, K, s), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(Ca, _cell_average(CA, cell, K, s), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(Cx, _cell_average(CX, cell, K, s), rtol=1e-10, atol=1e-13)


def test_cell_sums_are_the_same_bits_on_one_and_two_threads():
    rng = np.random.default_rng(8)
    n, K = 700, 23                                   # above the work that runs on one thread
    Z, a = rng.normal(size=(n, 3)), rng.normal(size=(n, 1))
    cell, s = rng.integers(0, K, n), rng.uniform(0.2, 3.0, n)
    np.testing.assert_array_equal(_cells.cell_distances(Z, cell, K, s, 1)[0],
                                  _cells.cell_distances(Z, cell, K, s, 2)[0])
    one = _cells.cell_dependence_matrices(a, Z, cell, K, s, 1)
    two = _cells.cell_dependence_matrices(a, Z, cell, K, s, 2)
    for x, y in zip(one[:3], two[:3]):
        np.testing.assert_array_equal(x, y)


def test_sums_over_many_kernel_calls_equal_one_call(monkeypatch):
    rng = np.random.default_rng(4)
    n, K = 80, 9
    Z, a = rng.normal(size=(n, 2)), rng.normal(size=(n, 1))
    cell, s = rng.integers(0, K, n), rng.uniform(0.5, 2.0, n)
    G1 = _cells.cell_distances(Z, cell, K, s, 1)[0]
    P1 = _cells.cell_dependence_matrices(a, Z, cell, K, s, 1)[0]
    monkeypatch.setattr(core_weights, "CALL_WORK", 7.0)   # one or two rows per kernel call
    G2 = _cells.cell_distances(Z, cell, K, s, 1)[0]
    P2 = _cells.cell_dependence_matrices(a, Z, cell, K, s, 1)[0]
    np.testing.assert_allclose(G2, G1, rtol=1e-13)
    np.testing.assert_allclose(P2, P1, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(G2, _cell_average(_dist(Z), cell, K, s), rtol=1e-12)


def test_kmeans_cells_partition_each_level_and_skip_zero_weights():
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(100, 2))
    codes = np.repeat([0, 1, 2], [50, 30, 20])
    s = np.ones(100)
    s[:3] = 0.0
    cell, code = _cells.kmeans_cells(Z, codes, 3, 25, s, np.random.default_rng(0))
    assert np.all(cell[:3] == -1)
    live = cell >= 0
    assert np.array_equal(code[cell[live]], codes[live])          # a cell lies in one level
    assert set(np.unique(cell[live])) == set(range(code.size))    # no empty cell
    assert np.sum(code == 0) <= 25 and np.sum(code == 1) <= 25
    assert np.sum(code == 2) == 20                                # fewer rows than cells
    again, _ = _cells.kmeans_cells(Z, codes, 3, 25, s, np.random.default_rng(0))
    np.testing.assert_array_equal(cell, again)


# -- the weights ------------------------------------------------------------------

def _restricted_kkt(D, t, w, s, cell, opt, target, improved):
    """Optimality of the programme over cell-constant weights, from the gradient of the
    objective on all rows: the gradient with respect to a cell's variable is the
    base-weighted mean of its rows' gradients; within a level it is the same on the cells
    in use and not smaller on the others."""
    worst = 0.0
    us = {g: _masses(w, t == g) for g in opt}
    for g in opt:
        r = us[g] - target
        if improved:
            r = r + sum(us[g] - us[h] for h in opt if h != g)
        grad = -2.0 * D @ r
        cs = np.unique(cell[(t == g) & (cell >= 0)])
        gc = np.array([np.average(grad[cell == c], weights=s[cell == c]) for c in cs])
        yc = np.array([us[g][cell == c].sum() for c in cs])
        scale = np.abs(gc).max()
        on = yc > 1e-9
        nu = gc[on].mean()
        worst = max(worst, np.abs(gc[on] - nu).max() / scale,
                    max(0.0, (nu - gc[~on]).max(initial=0)) / scale)
    return worst


@pytest.mark.parametrize("k,estimand,lam,based", [(2, "ATE", 0.0, False), (3, "ATE", 0.2, True),
                                                 (2, "ATT", 0.0, True), (3, "ATT", 0.0, False),
                                                 (2, "ATE", 0.0, "zeros")])
def test_cell_weights_solve_the_restricted_programme_on_all_rows(k, estimand, lam, based):
    X, t = _data(n=90, k=k, seed=k)
    n = len(t)
    s = np.random.default_rng(9).uniform(0.5, 2.0, n) if based else np.ones(n)
    if based == "zeros":                             # rows of base weight 0: in no cell, weight 0
        s[[3, 17, 40, 41]] = 0.0
    focal = 2 if (k == 3 and estimand == "ATT") else None
    res = es.energy_balancing_weights(X, t, estimand=estimand, lam=lam, focal=focal,
                                      base_weights=s if based else None, cells=6, rng=1)
    exact = es.energy_balancing_weights(X, t, estimand=estimand, lam=lam, focal=focal,
                                        base_weights=s if based else None)
    w, cell = res.weights, res.cell_labels
    f = None if estimand == "ATE" else (focal if focal is not None else 1)
    n_opt = k if f is None else k - 1
    assert res.seed == 1 and res.cells == cell.max() + 1 <= 6 * n_opt + (f is not None)
    assert np.all(w >= 0) and np.all(w[s == 0] == 0) and np.all(cell[s == 0] == -1)
    for g in range(k):
        assert w[t == g].mean() == pytest.approx(1.0, abs=1e-12)
    for c in range(res.cells):                       # proportional to the base weights in a cell
        ratio = w[cell == c] / s[cell == c]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
    if f is not None:                                # the focal level is one cell
        assert len(np.unique(cell[t == f])) == 1
    D = _dist(_studentize(X, s))
    if estimand == "ATE":
        target, opt = s / s.sum(), list(range(k))
    else:
        target, opt = _masses(s, t == f), [g for g in range(k) if g != f]
        np.testing.assert_allclose(w[t == f], s[t == f] / s[t == f].mean(), rtol=1e-12)
    improved = estimand == "ATE"
    want = sum(_energy(D, _masses(w, t == g), target) for g in opt)
    if improved:
        want += sum(_energy(D, _masses(w, t == g), _masses(w, t == h))
                    for g in opt for h in opt if g < h)
    want += lam * np.sum((w[np.isin(t, opt)] / n) ** 2)
    assert res.objective == pytest.approx(want, rel=1e-9)
    for g in range(k):
        assert res.energy_before[g] == pytest.approx(_energy(D, _masses(s, t == g), target), rel=1e-9)
        assert res.energy_after[g] == pytest.approx(max(_energy(D, _masses(w, t == g), target), 0),
                                                    rel=1e-8, abs=1e-12)
    assert res.objective >= exact.objective * (1 - 1e-9)    # a restriction of the exact programme
    assert np.all(res.energy_after[opt] < res.energy_before[opt])
    if lam == 0.0:
        assert _restricted_kkt(D, t, w, s, cell, opt, target, improved) <= 1e-6
    assert res.kkt_residual <= 1e-9


@pytest.mark.parametrize("estimand,with_target", [("ATE", False), ("ATT", False), ("ATE", True)])
def test_one_row_per_cell_is_the_exact_programme(estimand, with_target):
    X, t = _data(n=40, seed=7)
    T = np.random.default_rng(2).normal(0.3, 1.0, size=(15, 3)) if with_target else None
    exact = es.energy_balancing_weights(X, t, estimand=estimand, target=T)
    res = es.energy_balancing_weights(X, t, estimand=estimand, target=T, cells=40, rng=0)
    # every optimised row its own cell; the focal level or the target one cell (fixed masses)
    assert res.cells == {("ATE", False): 40, ("ATT", False): 21, ("ATE", True): 41}[
        (estimand, with_target)]
    assert exact.cells is None and exact.cell_labels is None and exact.seed is None
    np.testing.assert_allclose(res.weights, exact.weights, atol=1e-6)
    assert res.objective == pytest.approx(exact.objective, rel=1e-8)
    np.testing.assert_allclose(res.energy_after, exact.energy_after, rtol=1e-6, atol=1e-10)


def test_target_population_on_cells_against_loops():
    X, t = _data(n=60, seed=12)
    T = np.random.default_rng(4).normal(0.4, 1.2, size=(25, 3))
    res = es.energy_balancing_weights(X, t, target=T, cells=5, rng=3)
    assert res.cells <= 11 and np.all(res.cell_labels >= 0)
    s = np.ones(len(X))
    p = s / s.sum()
    m, sd = p @ X, np.sqrt(p @ (X - p @ X) ** 2)   # the sample's units, for the target too
    Z = np.vstack([(X - m) / sd, (T - m) / sd])
    D = _dist(Z)
    n, w = len(X), res.weights
    tm = np.concatenate([np.zeros(n), np.full(25, 1 / 25)])
    u = [np.concatenate([_masses(w, t == g), np.zeros(25)]) for g in (0, 1)]
    want = _energy(D, u[0], tm) + _energy(D, u[1], tm) + _energy(D, u[0], u[1])
    assert res.objective == pytest.approx(want, rel=1e-9)
    for g in (0, 1):
        assert res.energy_after[g] == pytest.approx(_energy(D, u[g], tm), rel=1e-8)


def test_the_budget_is_checked_before_the_kmeans(monkeypatch):
    X, t = _data(n=200)

    def no_kmeans(*a, **k):
        raise AssertionError("k-means ran before the budget check")

    monkeypatch.setattr(_cells, "kmeans", no_kmeans)
    with pytest.raises(MemoryError, match=r"about 8 40×40 float64 matrices.*\(40 cells"):
        es.energy_balancing_weights(X, t, cells=20, rng=0, memory_budget=10_000)
    with pytest.raises(MemoryError, match=r"about 12 20×20 float64 matrices.*\(20 cells"):
        es.independence_weights(X, X[:, 0], cells=20, rng=0, memory_budget=10_000)


def test_independence_cells_against_loops_and_the_exact_programme():
    rng = np.random.default_rng(11)
    n = 45
    X = rng.normal(size=(n, 2))
    a = X[:, 0] + rng.normal(size=n)
    s = rng.uniform(0.5, 2, n)
    exact = es.independence_weights(X, a, base_weights=s, lam=0.1)
    one = es.independence_weights(X, a, base_weights=s, lam=0.1, cells=n, rng=0)
    np.testing.assert_allclose(one.weights, exact.weights, atol=1e-6)
    assert one.objective == pytest.approx(exact.objective, rel=1e-8)
    res = es.independence_weights(X, a, base_weights=s, lam=0.1, cells=7, rng=2)
    w, cell = res.weights, res.cell_labels
    assert res.cells == 7 and res.seed == 2 and w.mean() == pytest.approx(1.0, abs=1e-12)
    for c in range(7):
        ratio = w[cell == c] / s[cell == c]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)
    p = s / s.sum()
    Da, Dx = _dist(_studentize(a[:, None], s)), _dist(_studentize(X, s))
    Ca, Cx = _centre(Da, p), _centre(Dx, p)
    x = w / n
    dcov = sum(x[i] * x[j] * Ca[i, j] * Cx[i, j] for i in range(n) for j in range(n))
    ca = 1 / (1 + np.sqrt(2))
    want = dcov + ca * _energy(Da, x, p) + (1 - ca) * _energy(Dx, x, p) + 0.1 * np.sum(x ** 2)
    assert res.objective == pytest.approx(want, rel=1e-9)
    assert res.dcov_sqr == pytest.approx(dcov, rel=1e-9)
    assert res.objective >= exact.objective * (1 - 1e-9)
    assert res.dcor_after < res.dcor_before
    # the streamed weighted dCor equals the dense one of the exact path on the same weights
    assert res.dcor_before == pytest.approx(exact.dcor_before, rel=1e-10)
    q = w / w.sum()                                  # dCor of the returned weights, by loops
    A, B = _centre(Da, q), _centre(Dx, q)
    v = [sum(q[i] * q[j] * F[i, j] for i in range(n) for j in range(n)) for F in (A * B, A * A, B * B)]
    assert res.dcor_after == pytest.approx(np.sqrt(v[0] / np.sqrt(v[1] * v[2])), rel=1e-10)


def test_large_n_beyond_the_budget_runs_on_cells():
    X, t = _data(n=3000, seed=1, d=4)
    with pytest.raises(MemoryError, match=r"cells=K"):       # 'auto' would run 'firstorder'
        es.energy_balancing_weights(X, t, memory_budget=2**26, solver="osqp")
    res = es.energy_balancing_weights(X, t, memory_budget=2**26, cells=60, rng=0)
    assert res.cells <= 120
    assert np.all(res.energy_after < 0.2 * res.energy_before)
    bt = es.balance_table(X, t, res)                 # streamed: no n×n matrix either
    assert bt.energy_after < 0.2 * bt.energy_before


def test_independence_cells_at_a_size_that_shares_the_kernel_between_threads():
    rng = np.random.default_rng(6)
    n = 3000                                         # above the work that runs on one thread
    X = rng.normal(size=(n, 3))
    a = X[:, 0] + rng.normal(size=n)
    with pytest.raises(MemoryError, match=r"cells=K"):
        es.independence_weights(X, a, memory_budget=2**26)
    res = es.independence_weights(X, a, cells=40, rng=0, memory_budget=2**26)  # n_threads=None
    assert res.cells == 40 and res.dcor_after < 0.5 * res.dcor_before
    two = es.independence_weights(X, a, cells=40, rng=0, n_threads=1)
    np.testing.assert_array_equal(res.weights, two.weights)
    bt = es.balance_table(X, a, res, treatment_kind="continuous", warn=False)
    assert bt.energy_after == pytest.approx(res.dcor_after, rel=1e-12)


def test_seed_repeats_and_is_recorded():
    X, t = _data(n=120, seed=3)
    a = es.energy_balancing_weights(X, t, cells=10, rng=42)
    b = es.energy_balancing_weights(X, t, cells=10, rng=42)
    np.testing.assert_array_equal(a.weights, b.weights)
    c = es.energy_balancing_weights(X, t, cells=10)
    assert isinstance(c.seed, int)
    d = es.energy_balancing_weights(X, t, cells=10, rng=c.seed)
    np.testing.assert_array_equal(c.weights, d.weights)
    assert "cells=" in repr(a)


@pytest.mark.parametrize("cells", [1, 0, -3, 2.5, True, "10"])
def test_bad_cells_are_named(cells):
    X, t = _data(n=30)
    with pytest.raises(ValueError, match=r"`cells` must be None \(the exact programme\) or an integer"
                                         r" >= 2, the largest number of cells of a treatment level"):
        es.energy_balancing_weights(X, t, cells=cells)
    with pytest.raises(ValueError, match=r"`cells` must be"):
        es.independence_weights(X, X[:, 0], cells=cells)


def test_rng_without_cells_is_refused():
    X, t = _data(n=30)
    with pytest.raises(ValueError, match=r"`rng` is the seed of the k-means of `cells`"):
        es.energy_balancing_weights(X, t, rng=0)
    with pytest.raises(ValueError, match=r"`rng` is the seed of the k-means of `cells`"):
        es.independence_weights(X, X[:, 0], rng=0)


def test_cells_budget_refusal_names_cells():
    X, t = _data(n=60)
    with pytest.raises(MemoryError, match=r"\(\d+ cells;.*pass a smaller `cells`"):
        es.energy_balancing_weights(X, t, cells=20, rng=0, memory_budget=1000)


def test_dataframe_index_is_kept_with_cells():
    X, t = _data(n=50)
    df = pd.DataFrame(X, columns=["a", "b", "c"], index=[f"r{i}" for i in range(50)])
    df["t"] = t
    res = es.energy_balancing_weights(df, "t", cells=5, rng=0)
    assert list(res.index) == list(df.index)
