"""The balancing weights never silently wrong: Series base weights aligned by index, the same
weights at any magnitude of the covariates (working units), the exact moment and quantile
constraints against a general-purpose convex solver, the warnings, and Ctrl-C within about a
second while the QP solver runs."""
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es

from ._loops import ANNOUNCE_WORKERS

from .._core.test_interrupt import DEADLINE_S, _interrupt_child, posix_signals
from energystats.balance import _qp

from ._loops import confounded as _confounded
from ._loops import dist as _dist, studentize as _studentize

pytest.importorskip("osqp")


# -- alignment --

def test_base_weights_series_is_aligned_by_index():
    """The bug: a Series of base weights was used by position while X and the treatment were
    aligned by index, so shuffling its index changed the weights."""
    X, t = _confounded(n=40, seed=1)
    idx = pd.Index([f"u{i}" for i in range(40)])
    df = pd.DataFrame(X, index=idx)
    s = pd.Series(np.random.default_rng(2).uniform(0.5, 2.0, 40), index=idx)
    a = es.energy_balancing_weights(df, pd.Series(t, index=idx), base_weights=s)
    b = es.energy_balancing_weights(df, pd.Series(t, index=idx),
                                    base_weights=s.sample(frac=1.0, random_state=3))
    np.testing.assert_array_equal(a.weights, b.weights)
    with pytest.raises(ValueError, match="`base_weights` is indexed but its index does not match"):
        es.energy_balancing_weights(df, pd.Series(t, index=idx), base_weights=pd.Series(s.values))
    a = es.independence_weights(df, pd.Series(X[:, 0], index=idx), base_weights=s)
    b = es.independence_weights(df, pd.Series(X[:, 0], index=idx),
                                base_weights=s.sample(frac=1.0, random_state=4))
    np.testing.assert_array_equal(a.weights, b.weights)


# -- magnitudes --

SCALES = [2.0 ** 300, 2.0 ** -300, 2.0 ** 900, 2.0 ** -900, 1e300, 1e-300, 1e-6]


@pytest.mark.parametrize("standardize", ["studentized", "mahalanobis", None])
@pytest.mark.parametrize("c", SCALES)
def test_same_weights_at_any_magnitude(standardize, c):
    """Was: studentized x1e300 overflowed to all-zero covariates (objective 0), x1e-300 a false
    'constant columns'; standardize=None stopped at OSQP's absolute tolerance far from the
    optimum (x1e-6: weights 0.07 off), and at 2^900 raised a bare OSQPException."""
    X, t = _confounded(n=60, seed=5)
    base = es.energy_balancing_weights(X, t, standardize=standardize)
    with warnings.catch_warnings():
        warnings.simplefilter("error")               # no BalanceWarning, no overflow
        res = es.energy_balancing_weights(X * c, t, standardize=standardize)
    np.testing.assert_allclose(res.weights, base.weights, atol=1e-7)
    unit = c if standardize is None else 1.0        # energy distance: degree 1 in raw units
    np.testing.assert_allclose(res.energy_after / unit, base.energy_after, rtol=1e-7)
    assert res.objective / unit == pytest.approx(base.objective, rel=1e-7)
    assert res.kkt_residual < 1e-8


@pytest.mark.parametrize("c", [2.0 ** -300, 1e-300, 2.0 ** 300])
def test_independence_weights_solved_accurately_in_raw_units(c):
    """standardize=None in raw units: the programme is not scale-free (dCov² has degree 2, the
    energies degree 1), but it must be solved to the same accuracy at every magnitude."""
    X, t = _confounded(n=50, seed=6)
    a = X[:, 0] + np.random.default_rng(7).normal(size=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = es.independence_weights(X * c, a * c, standardize=None)
    assert res.kkt_residual < 1e-8
    assert np.isfinite(res.objective) and res.weights.mean() == pytest.approx(1.0)


# -- exact constraints --

def _cvxpy_constrained(X, t, F, target_rows):
    """The 'ATE' improved programme with sum_{i in g} u_i F_i = mean of F over the target,
    by cvxpy (SCS), written from the definitions."""
    cp = pytest.importorskip("cvxpy")
    n = len(t)
    Z = _studentize(X)
    D = _dist(Z)
    H = np.eye(n) - 1.0 / n
    K = -H @ D @ H
    L = np.linalg.cholesky((K + K.T) / 2 + 1e-13 * np.eye(n))
    u0, u1 = cp.Variable(n, nonneg=True), cp.Variable(n, nonneg=True)
    tm = np.ones(n) / n
    obj = (cp.sum_squares(L.T @ (u0 - tm)) + cp.sum_squares(L.T @ (u1 - tm))
           + cp.sum_squares(L.T @ (u0 - u1)))
    target = F[target_rows].mean(axis=0)
    cons = [cp.sum(u0) == 1, cp.sum(u1) == 1, u0[np.flatnonzero(t == 1)] == 0,
            u1[np.flatnonzero(t == 0)] == 0, F.T @ u0 == target, F.T @ u1 == target]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.parametrize("solver", ["osqp", "clarabel"])
def test_moments_hold_exactly_and_equal_a_convex_solver(solver):
    pytest.importorskip(solver)
    X, t = _confounded(n=60, seed=8)
    free = es.energy_balancing_weights(X, t)
    res = es.energy_balancing_weights(X, t, moments=2, solver=solver)
    w = res.weights
    for g in (0, 1):
        for j in range(X.shape[1]):
            for k in (1, 2):
                assert np.average(X[t == g, j] ** k, weights=w[t == g]) == \
                    pytest.approx(np.mean(X[:, j] ** k), abs=1e-8)
    assert res.objective >= free.objective - 1e-12     # a restriction of the free programme
    assert res.n_constraints == 2 * X.shape[1] * 2 and res.moments == 2
    Z = _studentize(X)
    F = np.column_stack([Z ** 1, Z ** 2])
    assert res.objective == pytest.approx(_cvxpy_constrained(X, t, F, slice(None)), rel=1e-5)


def test_quantiles_hold_exactly():
    X, t = _confounded(n=80, seed=9)
    res = es.energy_balancing_weights(pd.DataFrame(X, columns=["a", "b", "c"]), t,
                                      quantiles={"a": [0.25, 0.5], "c": 0.75})
    w = res.weights
    for j, qs in ((0, (0.25, 0.5)), (2, (0.75,))):
        for q in qs:
            thr = np.sort(X[:, j])[int(np.ceil(q * 80)) - 1]   # the sample's q-quantile
            share = np.mean(X[:, j] <= thr)
            for g in (0, 1):
                assert np.average(X[t == g, j] <= thr, weights=w[t == g]) == \
                    pytest.approx(share, abs=1e-8)
    assert res.n_constraints == 3 * 2 and res.quantiles == {0: (0.25, 0.5), 2: (0.75,)}


def test_exact_constraints_with_cells_and_att():
    X, t = _confounded(n=200, seed=10)
    res = es.energy_balancing_weights(X, t, estimand="ATT", moments=1, cells=30, rng=1)
    w = res.weights
    for j in range(X.shape[1]):
        assert np.average(X[t == 0, j], weights=w[t == 0]) == \
            pytest.approx(X[t == 1, j].mean(), abs=1e-8)


@pytest.mark.parametrize("kw,match", [
    ({"moments": 0}, "`moments` must be None or an integer >= 1"),
    ({"moments": 1.5}, "`moments` must be None or an integer >= 1"),
    ({"quantiles": 1.0}, "`quantiles` must be probabilities strictly between 0 and 1"),
    ({"quantiles": {"zz": 0.5}}, "`quantiles`: 'zz' is not a covariate"),
])
def test_bad_constraints_are_named(kw, match):
    X, t = _confounded(n=30, seed=11)
    with pytest.raises((ValueError, KeyError), match=match):
        es.energy_balancing_weights(pd.DataFrame(X, columns=["a", "b", "c"]), t, **kw)


def test_infeasible_constraints_say_so():
    X, t = _confounded(n=40, seed=12)
    X = X.copy()
    X[t == 0, 0] = np.abs(X[t == 0, 0]) + 5.0          # level 0 never reaches the overall mean
    with pytest.raises(RuntimeError, match="exact constraints .* cannot all hold"):
        es.energy_balancing_weights(X, t, moments=1)


def test_kkt_residual_with_constraints_is_large_away_from_the_optimum():
    """The checker itself: zero at the solver's optimum, large at a feasible non-optimum."""
    X, t = _confounded(n=40, seed=13)
    res = es.energy_balancing_weights(X, t, moments=1)
    assert res.kkt_residual < 1e-8
    n = len(t)
    K = -(np.eye(n) - 1 / n) @ _dist(_studentize(X)) @ (np.eye(n) - 1 / n)
    idx = np.r_[np.flatnonzero(t == 0), np.flatnonzero(t == 1)]
    A = K[np.ix_(idx, idx)]
    n0 = (t == 0).sum()
    A[:n0, :n0] *= 2
    A[n0:, n0:] *= 2
    A[:n0, n0:] *= -1
    A[n0:, :n0] *= -1
    b = K[idx] @ (np.ones(n) / n)
    blocks = [np.arange(n0), np.arange(n0, n)]
    Z = _studentize(X)[idx]
    M = np.zeros((6, n))
    M[:3, :n0] = Z[:n0].T
    M[3:, n0:] = Z[n0:].T
    c = np.tile(_studentize(X).mean(axis=0), 2)
    x = np.r_[res.weights[t == 0] / n0, res.weights[t == 1] / (n - n0)]
    assert _qp.kkt_residual(A, b, x, blocks, eq=(M, c)) < 1e-7
    xu = np.r_[np.full(n0, 1 / n0), np.full(n - n0, 1 / (n - n0))]  # uniform: not balanced
    assert _qp.kkt_residual(A, b, xu, blocks, eq=(M, c)) > 1e-2


# -- warnings --

def test_small_effective_sample_size_warns():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(300, 2))
    t = (X[:, 0] > 1.2).astype(int)                  # no overlap in x0: 41 treated in the tail
    with pytest.warns(es.BalanceWarning, match=r"effective sample size below 10% of the rows in "
                                               r"level\(s\) \[\(0, 15.8, 259\)\]"):
        res = es.energy_balancing_weights(X, t)
    w = res.weights[t == 0]
    assert res.ess[0] == pytest.approx(w.sum() ** 2 / (w ** 2).sum(), rel=1e-12)
    # 'ATT' with a small focal level: the floor is 10% of the focal level's rows (17 treated
    # here: an ESS of 6.0 among 183 controls is not named)
    t = (X[:, 0] > 1.6).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = es.energy_balancing_weights(X, t, estimand="ATT")
    assert res.ess[0] < 0.1 * (t == 0).sum() and res.ess[0] > 0.1 * t.sum()


def test_kkt_residual_above_the_bound_warns(monkeypatch):
    X, t = _confounded(n=30, seed=15)
    monkeypatch.setattr(_qp, "kkt_residual", lambda *a, **k: 3e-3)
    with pytest.warns(es.BalanceWarning, match="KKT residual of 3.0e-03"):
        es.energy_balancing_weights(X, t)


# -- Ctrl-C --

SETUP_QP = ANNOUNCE_WORKERS + """
X = rng.normal(size=(2600, 8)); t = (X[:, 0] + rng.normal(size=2600) > 0).astype(int)
"""


@posix_signals
def test_ctrl_c_stops_the_qp_solver_within_a_second():
    """Was: OSQP's setup holds the GIL (seconds at a few thousand rows): Ctrl-C came after
    10-12 s, and during its solve as RuntimeError 'interrupted'.  From 1 500 rows the solver
    runs in a child process, which the KeyboardInterrupt ends at once."""
    interrupted, exited, seen, err = _interrupt_child(
        SETUP_QP, "es.energy_balancing_weights(X, t)", wait_after_phase=1.0)
    assert interrupted < DEADLINE_S, (seen, err)
    assert not any(line.startswith("finished") for line in seen), seen
    assert exited < DEADLINE_S, (seen, err)


@pytest.mark.parametrize("c", [1e-6, 2.0 ** -300, 1e-300, 1e300])
def test_qp_is_solved_in_working_units(c):
    """The QP alone: a programme multiplied by c has the same minimiser (OSQP's absolute
    tolerance of 1e-9 would otherwise stop x1e-6 far from it)."""
    X, t = _confounded(n=50, seed=16)
    n = len(t)
    K = -(np.eye(n) - 1 / n) @ _dist(_studentize(X)) @ (np.eye(n) - 1 / n)
    b = K @ np.full(n, 1 / n)
    blocks = [np.flatnonzero(t == 0), np.flatnonzero(t == 1)]
    x1, _ = _qp.solve_simplex_qp(K, b, blocks)
    xc, _ = _qp.solve_simplex_qp(K * c, b * c, blocks)
    np.testing.assert_allclose(xc, x1, atol=1e-9)
    assert _qp.kkt_residual(K * c, b * c, xc, blocks) < 1e-8


def test_factor_columns_are_expanded_to_indicators():
    """A categorical or bool column of a DataFrame is balanced as its 0/1 indicators (cobalt's
    names: one column for two levels, one per level otherwise); the result names them."""
    rng = np.random.default_rng(17)
    n = 60
    race = rng.choice(["a", "b", "c"], n)
    married = rng.random(n) > 0.5
    age = rng.normal(size=n)
    t = (age + (race == "b") + rng.normal(size=n) > 0.5).astype(int)
    df = pd.DataFrame({"age": age, "race": pd.Categorical(race), "married": married})
    res = es.energy_balancing_weights(df, t)
    manual = pd.DataFrame({"age": age, "race_a": (race == "a") * 1.0, "race_b": (race == "b") * 1.0,
                           "race_c": (race == "c") * 1.0, "married_True": married * 1.0})
    ref = es.energy_balancing_weights(manual, t)
    assert res.columns == list(manual.columns)
    np.testing.assert_array_equal(res.weights, ref.weights)
