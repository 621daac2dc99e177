"""Energy balancing and independence weights: the objective against plain double loops, the
optimum against a general-purpose convex solver, the KKT conditions at the returned weights,
the constraints, and the named errors."""
import sys

import numpy as np
import pandas as pd
import pytest

import energystats as es

from ._loops import confounded as _confounded
from ._loops import centre_loop as _centre_loop, dist as _dist, energy_loop as _energy_loop
from ._loops import masses as _masses, studentize as _studentize

pytest.importorskip("osqp")


# -- independent references: plain loops over the rows ---------------------------

def _objective_loop(D, codes, w, target, opt, improved, lam, n):
    total = sum(_energy_loop(D, _masses(w, codes == g), target) for g in opt)
    if improved:
        for a in range(len(opt)):
            for b in range(a + 1, len(opt)):
                total += _energy_loop(D, _masses(w, codes == opt[a]), _masses(w, codes == opt[b]))
    return total + lam * np.sum((w[np.isin(codes, opt)] / n) ** 2)


def _data(n=40, k=2, seed=0, d=3):
    return _confounded(n=n, k=k, seed=seed, d=d)


CASES = [  # (k, estimand, improved, lam, base weights)
    (2, "ATE", True, 0.0, False),
    (2, "ATE", False, 0.0, False),
    (2, "ATT", True, 0.0, False),
    (2, "ATC", True, 0.5, False),
    (3, "ATE", True, 0.0, False),
    (3, "ATE", False, 0.2, True),
    (2, "ATE", True, 0.0, True),
    (3, "ATT", True, 0.0, False),                  # focal level 2, two levels weighted towards it
]


@pytest.mark.parametrize("k,estimand,improved,lam,based", CASES)
def test_objective_and_constraints_against_loops(k, estimand, improved, lam, based):
    X, t = _data(k=k)
    n = len(X)
    s = np.random.default_rng(5).uniform(0.5, 2.0, n) if based else None
    focal = 2 if (k == 3 and estimand != "ATE") else None
    res = es.energy_balancing_weights(X, t, estimand=estimand, improved=improved, lam=lam,
                                      base_weights=s, focal=focal)
    sw = np.ones(n) if s is None else s
    D = _dist(_studentize(X, sw))
    w = res.weights
    assert np.all(w >= 0)
    for g in range(k):
        assert w[t == g].mean() == pytest.approx(1.0, abs=1e-12)
    if estimand == "ATE":
        target, opt = sw / sw.sum(), list(range(k))
    else:
        f = focal if focal is not None else (1 if estimand == "ATT" else 0)
        target, opt = _masses(sw, t == f), [g for g in range(k) if g != f]
        np.testing.assert_allclose(w[t == f], sw[t == f] / sw[t == f].mean(), rtol=1e-12)
    want = _objective_loop(D, t, w, target, opt, improved and estimand == "ATE", lam, n)
    assert res.improved == (improved and estimand == "ATE")
    assert res.objective == pytest.approx(want, rel=1e-9)
    for g in range(k):
        before = _energy_loop(D, _masses(sw, t == g), target)
        after = _energy_loop(D, _masses(w, t == g), target)
        assert res.energy_before[g] == pytest.approx(max(before, 0), rel=1e-9, abs=1e-13)
        assert res.energy_after[g] == pytest.approx(max(after, 0), rel=1e-8, abs=1e-12)
        if g in opt:
            assert after < before
    assert res.kkt_residual <= 1e-9


def _kkt_loop(D, t, w, opt, target, improved):
    """Stationarity and complementarity from the gradient of the loop objective: within each
    optimised group the gradient is the same on the support and not smaller off it."""
    n = len(t)
    worst = 0.0
    us = {g: _masses(w, t == g) for g in opt}
    for g in opt:
        r = us[g] - target
        if improved:
            r = r + sum(us[g] - us[h] for h in opt if h != g)
        grad = np.array([-2.0 * sum(D[i, j] * r[j] for j in range(n)) for i in range(n)])[t == g]
        u = us[g][t == g]
        scale = np.abs(grad).max()
        on = u > 1e-9
        nu = grad[on].mean()
        worst = max(worst, np.abs(grad[on] - nu).max() / scale, max(0.0, (nu - grad[~on]).max(initial=0)) / scale)
    return worst


@pytest.mark.parametrize("estimand", ["ATE", "ATT"])
def test_kkt_conditions_hold_at_the_returned_weights(estimand):
    X, t = _data(n=60, seed=2)
    res = es.energy_balancing_weights(X, t, estimand=estimand)
    D = _dist(_studentize(X))
    n = len(t)
    target = np.ones(n) / n if estimand == "ATE" else _masses(np.ones(n), t == 1)
    opt = [0, 1] if estimand == "ATE" else [0]
    assert _kkt_loop(D, t, res.weights, opt, target, True) <= 1e-7


def test_optimum_equals_a_general_purpose_convex_solver():
    cp = pytest.importorskip("cvxpy")
    X, t = _data(n=150, seed=4)
    n = len(t)
    res = es.energy_balancing_weights(X, t)
    Z = _studentize(X)
    D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    H = np.eye(n) - 1.0 / n
    K = -H @ D @ H                                   # E(u, v) = (u - v)' K (u - v), K psd
    L = np.linalg.cholesky((K + K.T) / 2 + 1e-13 * np.eye(n))
    i0, i1 = t == 0, t == 1
    u0, u1 = cp.Variable(n, nonneg=True), cp.Variable(n, nonneg=True)
    tm = np.ones(n) / n
    obj = (cp.sum_squares(L.T @ (u0 - tm)) + cp.sum_squares(L.T @ (u1 - tm))
           + cp.sum_squares(L.T @ (u0 - u1)))
    cons = [cp.sum(u0) == 1, cp.sum(u1) == 1, u0[np.flatnonzero(i1)] == 0, u1[np.flatnonzero(i0)] == 0]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.SCS, eps=1e-11, max_iters=100000)
    assert res.objective == pytest.approx(prob.value, rel=1e-6)


def test_clarabel_reaches_the_same_optimum():
    pytest.importorskip("clarabel")
    X, t = _data(n=80, k=3, seed=6)
    a = es.energy_balancing_weights(X, t, solver="osqp")
    b = es.energy_balancing_weights(X, t, solver="clarabel")
    assert b.solver == "clarabel"
    assert b.objective == pytest.approx(a.objective, rel=1e-6)
    assert b.kkt_residual <= 1e-4                    # interior point: stays inside the simplex


def test_target_population_and_dataframe_column():
    X, t = _data(n=40, seed=8)
    rng = np.random.default_rng(9)
    T = rng.normal(0.3, 1.0, size=(30, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(tr=t)
    res = es.energy_balancing_weights(df, "tr", target=pd.DataFrame(T, columns=["a", "b", "c"]))
    sw = np.ones(40)
    p = sw / 40
    m = p @ X
    sd = np.sqrt(p @ (X - m) ** 2)
    D = _dist(np.vstack([(X - m) / sd, (T - m) / sd]))
    target = np.r_[np.zeros(40), np.ones(30) / 30]
    w = np.r_[res.weights, np.zeros(30)]
    codes = np.r_[t, np.full(30, -1)]
    want = _objective_loop(D, codes, w, target, [0, 1], True, 0.0, 40)
    assert res.objective == pytest.approx(want, rel=1e-9)
    assert res.index.equals(df.index)


def test_energy_weights_reduce_the_bias_of_a_confounded_ate():
    # y = 2 t + x0 + x1^2 + noise; treatment more likely for large x0 and x1^2: the naive
    # difference of means is biased upwards; the energy-weighted one much less
    naive, weighted = [], []
    for seed in range(4):
        rng = np.random.default_rng(100 + seed)
        X = rng.normal(size=(200, 2))
        p = 1 / (1 + np.exp(-(X[:, 0] + X[:, 1] ** 2 - 1)))
        t = (rng.uniform(size=200) < p).astype(int)
        y = 2 * t + X[:, 0] + X[:, 1] ** 2 + rng.normal(size=200)
        w = es.energy_balancing_weights(X, t).weights
        naive.append(y[t == 1].mean() - y[t == 0].mean() - 2)
        weighted.append(np.average(y[t == 1], weights=w[t == 1])
                        - np.average(y[t == 0], weights=w[t == 0]) - 2)
    assert abs(np.mean(weighted)) < 0.3 * abs(np.mean(naive))


# -- independence weights -------------------------------------------------------------

@pytest.mark.parametrize("lam,based", [(0.0, False), (0.3, True)])
def test_independence_objective_against_loops(lam, based):
    rng = np.random.default_rng(11)
    n = 35
    X = rng.normal(size=(n, 2))
    a = X[:, 0] + rng.normal(size=n)
    s = rng.uniform(0.5, 2, n) if based else np.ones(n)
    res = es.independence_weights(X, a, lam=lam, base_weights=s if based else None)
    w = res.weights
    assert np.all(w >= 0) and w.mean() == pytest.approx(1.0, abs=1e-12)
    p = s / s.sum()
    Da, Dx = _dist(_studentize(a[:, None], s)), _dist(_studentize(X, s))
    Ca, Cx = _centre_loop(Da, p), _centre_loop(Dx, p)
    x = w / n
    dcov = sum(x[i] * x[j] * Ca[i, j] * Cx[i, j] for i in range(n) for j in range(n))
    ca = 1 / (1 + np.sqrt(2))                      # the dimension adjustment, d = 2
    want = (dcov + ca * _energy_loop(Da, x, p) + (1 - ca) * _energy_loop(Dx, x, p)
            + lam * np.sum(x ** 2))
    assert res.objective == pytest.approx(want, rel=1e-9)
    assert res.dcov_sqr == pytest.approx(dcov, rel=1e-9)
    assert res.dcor_after < res.dcor_before
    assert res.kkt_residual <= 1e-9


# -- named errors ------------------------------------------------------------------------

@pytest.mark.parametrize("bad,match", [
    (lambda n: -np.ones(n), r"`base_weights` must be non-negative; got -1\.0 at position 0"),
    (lambda n: np.r_[np.nan, np.ones(n - 1)], r"`base_weights` must be finite; got nan at position 0"),
    (lambda n: np.zeros(n), r"`base_weights` must not be all zero"),
    (lambda n: np.ones(n - 1), r"`base_weights` must have one entry per row \(20\)"),
])
def test_bad_base_weights_are_named(bad, match):
    X, t = _data(n=20)
    with pytest.raises(ValueError, match=match):
        es.energy_balancing_weights(X, t, base_weights=bad(20))
    with pytest.raises(ValueError, match=match):
        es.independence_weights(X, X[:, 0] + 1, base_weights=bad(20))


def test_bad_treatments_and_options_are_named():
    X, t = _data(n=20)
    with pytest.raises(ValueError, match=r"`treatment` must have at least 2 levels; got one \(1\)"):
        es.energy_balancing_weights(X, np.ones(20, dtype=int))
    t1 = t.copy()
    t1[:] = 0
    t1[0] = 1
    with pytest.raises(ValueError, match=r"every level needs at least 2 rows; level\(s\) \[\(1, 1\)\]"):
        es.energy_balancing_weights(X, t1)
    with pytest.raises(ValueError, match=r"`estimand` must be one of 'ATE', 'ATT', 'ATC'; got 'ATO'"):
        es.energy_balancing_weights(X, t, estimand="ATO")
    with pytest.raises(ValueError, match=r"`focal` is required with estimand 'ATT'"):
        es.energy_balancing_weights(X, np.where(t == 1, "a", "b"), estimand="ATT")
    with pytest.raises(ValueError, match=r"`focal` must be one of the treatment levels"):
        es.energy_balancing_weights(X, t, estimand="ATT", focal=7)
    with pytest.raises(ValueError, match=r"`target` is for estimand 'ATE'"):
        es.energy_balancing_weights(X, t, estimand="ATT", target=X)
    with pytest.raises(ValueError, match=r"`lam` must be a finite number >= 0; got -1"):
        es.energy_balancing_weights(X, t, lam=-1)
    with pytest.raises(ValueError, match=r"`standardize` must be"):
        es.energy_balancing_weights(X, t, standardize="robust")
    with pytest.raises(ValueError, match=r"`solver` must be one of 'auto', 'firstorder', 'osqp', 'clarabel'; "
                                         r"got 'cvx'"):
        es.energy_balancing_weights(X, t, solver="cvx")
    with pytest.raises(ValueError, match=r"`treatment` is constant"):
        es.independence_weights(X, np.ones(20))


def test_memory_budget_refusal_names_need_budget_and_remedy():
    X, t = _data(n=20)
    with pytest.raises(MemoryError, match=r"needs about 8 20×20 float64 matrices at its peak.*"
                                          r"`memory_budget` = 1 bytes"
                                          r".*pass `cells=K`.*`solver='firstorder'`"):
        es.energy_balancing_weights(X, t, memory_budget=1, solver="osqp")   # 'auto': firstorder


def test_missing_solver_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "osqp", None)
    X, t = _data(n=20)
    with pytest.raises(ImportError, match=r"pip install energy-statistics\[balance\]"):
        es.energy_balancing_weights(X, t, solver="osqp")
    with pytest.raises(ImportError, match=r"pip install energy-statistics\[balance\]"):
        es.energy_balancing_weights(X, t, cells=5, rng=1)     # cells need a QP solver
    assert es.energy_balancing_weights(X, t).solver == "firstorder"   # 'auto' falls back


def test_same_weights_on_one_and_two_threads():
    X, t = _data(n=50, k=3, seed=12)
    a = es.energy_balancing_weights(X, t, n_threads=1)
    b = es.energy_balancing_weights(X, t, n_threads=2)
    np.testing.assert_array_equal(a.weights, b.weights)
    c = es.independence_weights(X, X[:, 0] + t, n_threads=1)
    d = es.independence_weights(X, X[:, 0] + t, n_threads=2)
    np.testing.assert_array_equal(c.weights, d.weights)


# -- independence weights against the published definition ---------------------------------

def _dcow_terms(w, a, X, dimension_adj=True, lam=0.0):
    """The objective of Huling, Greifer and Chen (2023, eq. 3.4 with the dimension adjustment of
    their software), written here from the formula: weights ``w`` with mean 1, distances of the
    raw treatment and covariates, double centring by the unweighted sample, the two energy
    distances to the unweighted sample weighted by 1/sqrt(p) and 1 normalised to sum 1 (1/2 and
    1/2 without the adjustment), and the ridge penalty lam * sum(w^2) / n^2.  Returns
    (objective, D_w, dcov, adjusted energy of A, adjusted energy of X)."""
    n, p = X.shape
    Da = np.abs(a[:, None] - a[None, :])
    Dx = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))

    def centred(D):
        return D - D.mean(0)[None, :] - D.mean(1)[:, None] + D.mean()

    dcov = float(w @ (centred(Da) * centred(Dx)) @ w) / n ** 2

    def energy(D):  # E(weighted sample, sample) = 2/n^2 sum w_i D_ij - w'Dw/n^2 - mean(D)
        return 2.0 * float(w @ D.sum(1)) / n ** 2 - float(w @ D @ w) / n ** 2 - D.mean()

    ca = (1 / np.sqrt(p)) / (1 / np.sqrt(p) + 1) if dimension_adj else 0.5
    ea, ex = ca * energy(Da), (1 - ca) * energy(Dx)
    d_w = dcov + ea + ex
    return d_w + lam * float(w @ w) / n ** 2, d_w, dcov, ea, ex


def _dcow_reference_weights(a, X, dimension_adj, lam):
    """The minimiser of ``_dcow_terms`` over w >= 0, sum(w) = n, by SciPy's SLSQP."""
    from scipy.optimize import minimize

    n = len(a)
    fun = lambda w: _dcow_terms(w, a, X, dimension_adj, lam)[0]  # noqa: E731
    out = minimize(fun, np.ones(n), method="SLSQP", bounds=[(0, None)] * n,
                   constraints=[{"type": "eq", "fun": lambda w: w.sum() - n}],
                   options={"ftol": 1e-15, "maxiter": 2000})
    assert out.success, out.message
    return out.x


@pytest.mark.parametrize("dimension_adj,lam", [(True, 0.0), (False, 0.0), (True, 0.5)])
def test_independence_weights_equal_the_published_definition(dimension_adj, lam):
    rng = np.random.default_rng(21)
    n = 30
    X = rng.normal(size=(n, 3)) * [1.0, 3.0, 0.5]           # p = 3, raw units as in the R package
    a = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n)
    res = es.independence_weights(X, a, standardize=None, dimension_adj=dimension_adj, lam=lam)
    obj, d_w, dcov, ea, ex = _dcow_terms(res.weights, a, X, dimension_adj, lam)
    assert res.objective == pytest.approx(obj, rel=1e-9)
    assert res.weighted_dependence == pytest.approx(d_w, rel=1e-9)
    assert res.dcov_sqr == pytest.approx(dcov, rel=1e-9)
    ca = 1 / (1 + np.sqrt(3)) if dimension_adj else 0.5
    assert res.energy_weights == pytest.approx((ca, 1 - ca), rel=1e-15)
    assert ca * res.energy_treatment == pytest.approx(ea, rel=1e-8, abs=1e-13)
    assert (1 - ca) * res.energy_covariates == pytest.approx(ex, rel=1e-8, abs=1e-13)
    ref = _dcow_reference_weights(a, X, dimension_adj, lam)
    ref_obj = _dcow_terms(ref, a, X, dimension_adj, lam)[0]
    assert obj <= ref_obj + 1e-9 * abs(ref_obj)             # ours is at least as good
    assert obj == pytest.approx(ref_obj, rel=1e-6)
    np.testing.assert_allclose(res.weights, ref, atol=2e-3)


# -- energy balancing weights against WeightIt's programme ------------------------------------

def _weightit_qp(D, t, estimand, focal, improved):
    """R WeightIt's method = "energy" programme (Huling and Mak 2024) as its documentation and
    the paper state it, transcribed here without base weights: ``(rows, P, q, S)`` with the
    objective x'Px + q'x over the weights x of ``rows`` (x >= 0, S' x = 1: mean 1 in each
    level), masses u_g = x 1[g] / n_g, the target the whole sample (1/n each) for ATE or the
    focal level, and for ATE with ``improved`` the between-level terms -(u_g - u_h)' D (u_g - u_h).
    Terms that do not depend on x are left out, as WeightIt does."""
    n = len(t)
    levels = sorted(set(t.tolist()))
    S = np.column_stack([(t == g) / np.sum(t == g) for g in levels])
    if estimand == "ATE":
        rows, Sg = np.arange(n), S
        nn = Sg @ Sg.T
        if improved:
            for a in range(len(levels)):
                for b in range(a + 1, len(levels)):
                    diff = S[:, a] - S[:, b]
                    nn = nn + np.outer(diff, diff)
        q = 2.0 * (np.ones(n) / n @ D) * Sg.sum(1)
    else:
        f = levels.index(focal)
        rows = np.flatnonzero(t != focal)
        Sg = np.delete(S, f, axis=1)[rows]
        nn = Sg @ Sg.T
        q = 2.0 * (S[t == focal, f] @ D[np.ix_(t == focal, rows)]) * Sg.sum(1)
    P = -D[np.ix_(rows, rows)] * nn
    return rows, P, q, Sg


@pytest.mark.parametrize("k,estimand,improved", [(2, "ATE", True), (2, "ATE", False), (3, "ATE", True),
                                                 (2, "ATC", True), (3, "ATT", True)])
def test_energy_weights_solve_weightits_programme(k, estimand, improved):
    from scipy.optimize import minimize

    X, t = _data(n=30, k=k, seed=8)
    focal = None if estimand == "ATE" else (2 if k == 3 else 0)
    res = es.energy_balancing_weights(X, t, estimand=estimand, focal=focal, improved=improved)
    D = _dist(_studentize(X))
    rows, P, q, Sg = _weightit_qp(D, t, estimand, focal, improved)
    fun = lambda x: float(x @ P @ x + q @ x)  # noqa: E731
    # the constant WeightIt leaves out: t'Dt for each level weighted towards the target
    tm = np.ones(len(t)) / len(t) if estimand == "ATE" else _masses(np.ones(len(t)), t == focal)
    const = Sg.shape[1] * float(tm @ D @ tm)
    assert res.objective == pytest.approx(fun(res.weights[rows]) - const, rel=1e-9)
    cons = [{"type": "eq", "fun": lambda x, j=j: Sg[:, j] @ x - 1.0} for j in range(Sg.shape[1])]
    ref = minimize(fun, np.ones(len(rows)), jac=lambda x: 2 * P @ x + q, method="SLSQP",
                   bounds=[(0, None)] * len(rows), constraints=cons,
                   options={"ftol": 1e-15, "maxiter": 3000})
    assert ref.success, ref.message
    assert fun(res.weights[rows]) <= ref.fun + 1e-9 * abs(ref.fun)
    assert fun(res.weights[rows]) == pytest.approx(ref.fun, rel=1e-7)
    np.testing.assert_allclose(res.weights[rows], ref.x, atol=2e-3)


@pytest.mark.parametrize("status", ["unsolved", "solved inaccurate", "maximum iterations reached"])
def test_osqp_status_other_than_solved_is_an_error(status, monkeypatch):
    # "unsolved" contains "solved": it once passed the check and its iterate was returned
    from types import SimpleNamespace

    from energystats.balance import _qp

    class FakeOSQP:
        def setup(self, *args, **kwargs):
            pass

        def solve(self, raise_error=False):
            return SimpleNamespace(x=np.full(6, 0.5), info=SimpleNamespace(
                status=status, iter=7, status_polish=0))

    monkeypatch.setattr(_qp, "require_solver", lambda solver: SimpleNamespace(OSQP=FakeOSQP))
    A, b = np.eye(6), np.zeros(6)
    with pytest.raises(RuntimeError, match=f"status '{status}'"):
        _qp.solve_simplex_qp(A, b, [np.arange(3), np.arange(3, 6)], solver="osqp")


def test_auto_falls_back_to_the_first_order_solver_without_osqp(monkeypatch):
    """solver='auto' with OSQP missing: the package's own solver, said in the result (issue 51)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "osqp" else real(name, *a))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    t = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    res = es.energy_balancing_weights(X, t)
    assert res.solver == "firstorder" and res.kkt_residual <= 1e-6
