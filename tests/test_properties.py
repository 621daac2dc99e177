"""Property-based tests (hypothesis) of the invariants of SPEC §1–§5.

Above all ``W + S == T`` for every partition and metric; E ≥ 0 and symmetric;
translation and rotation invariance of the energy metric; homogeneity
``E(cA, cB) = |c|^exponent E(A, B)``; exponent 2 is twice the squared mean
difference; the 1-D sorted path equals the general path (ties included);
reordering rows within groups changes nothing.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import energystats as es

finite = st.floats(min_value=-100, max_value=100, allow_nan=False, allow_infinity=False, width=64)
metrics = st.sampled_from([("energy", 0.5), ("energy", 1.0), ("energy", 1.5), ("energy", 2.0),
                           ("laplacian", 1.0), ("gaussian", 2.0)])


def _kw(metric, param):
    return {"metric": metric, ("exponent" if metric == "energy" else "sigma"): param}


@st.composite
def samples(draw, min_rows=1, max_rows=25, max_dim=4, dim=None):
    d = dim if dim is not None else draw(st.integers(1, max_dim))
    n = draw(st.integers(min_rows, max_rows))
    m = draw(st.integers(min_rows, max_rows))
    a = draw(hnp.arrays(np.float64, (n, d), elements=finite))
    b = draw(hnp.arrays(np.float64, (m, d), elements=finite))
    return a, b


@st.composite
def partitions(draw, max_rows=40, max_dim=3):
    n = draw(st.integers(2, max_rows))
    d = draw(st.integers(1, max_dim))
    X = draw(hnp.arrays(np.float64, (n, d), elements=finite))
    k = draw(st.integers(1, min(n, 5)))
    labels = draw(hnp.arrays(np.int64, n, elements=st.integers(0, k - 1)))
    return X, labels


def _scale(X):
    return max(1.0, float(np.abs(X).max()))


@given(partitions(), metrics)
def test_W_plus_S_equals_T(data, metric):
    X, labels = data
    res = es.dispersion(X, labels, **_kw(*metric))
    tol = 1e-9 * max(1.0, res.T)
    assert res.W + res.S == pytest.approx(res.T, abs=tol)
    assert res.W >= -tol and res.S >= -tol  # negative type: S >= 0


@given(samples(), metrics)
def test_energy_distance_nonnegative_and_symmetric(ab, metric):
    a, b = ab
    e1 = es.energy_distance(a, b, **_kw(*metric))
    e2 = es.energy_distance(b, a, **_kw(*metric))
    scale = _scale(np.vstack([a, b])) ** (metric[1] if metric[0] == "energy" else 0)
    assert e1 >= -1e-10 * scale
    assert e1 == pytest.approx(e2, rel=1e-10, abs=1e-10 * scale)


@given(samples(max_dim=3), st.integers(0, 2**32 - 1), st.sampled_from([0.5, 1.0, 1.5, 2.0]))
def test_energy_translation_and_rotation_invariance(ab, seed, exponent):
    a, b = ab
    rng = np.random.default_rng(seed)
    d = a.shape[1]
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    shift = rng.normal(size=d) * 10
    e = es.energy_distance(a, b, exponent=exponent)
    e_moved = es.energy_distance(a @ Q + shift, b @ Q + shift, exponent=exponent)
    scale = (2 * _scale(np.vstack([a, b])) + 30) ** exponent
    assert e_moved == pytest.approx(e, rel=1e-8, abs=1e-9 * scale)


@given(samples(), st.floats(min_value=-10, max_value=10).filter(lambda c: abs(c) > 1e-3),
       st.sampled_from([0.5, 1.0, 1.5, 2.0]))
def test_energy_homogeneity(ab, c, exponent):
    a, b = ab
    e = es.energy_distance(a, b, exponent=exponent)
    scale = (10 * _scale(np.vstack([a, b]))) ** exponent
    assert es.energy_distance(c * a, c * b, exponent=exponent) == pytest.approx(
        abs(c) ** exponent * e, rel=1e-8, abs=1e-10 * scale)


@given(samples())
def test_exponent_two_is_mean_difference(ab):
    a, b = ab
    want = 2.0 * float(np.sum((a.mean(axis=0) - b.mean(axis=0)) ** 2))
    scale = _scale(np.vstack([a, b])) ** 2
    assert es.energy_distance(a, b, exponent=2) == pytest.approx(want, rel=1e-9, abs=1e-10 * scale)


@given(hnp.arrays(np.float64, st.integers(2, 60), elements=st.integers(-5, 5).map(float)),
       st.data())
def test_one_dimensional_fast_path_equals_general_path(x, data):
    # integer-valued data: plenty of ties
    k = data.draw(st.integers(1, 4))
    labels = data.draw(hnp.arrays(np.int64, x.size, elements=st.integers(0, k - 1)))
    fast = es.dispersion(x, labels, method="sorted")
    slow = es.dispersion(x, labels, method="pairwise")
    assert (fast.W, fast.S, fast.T) == pytest.approx((slow.W, slow.S, slow.T), rel=1e-12, abs=1e-9)
    a, b = x[labels % 2 == 0], x[labels % 2 == 1]
    if a.size and b.size:
        assert es.energy_distance(a, b) == pytest.approx(es.energy_distance(a, b, method="pairwise"),
                                                         rel=1e-12, abs=1e-12)


@given(partitions(), metrics, st.integers(0, 2**32 - 1))
def test_reordering_rows_changes_nothing(data, metric, seed):
    X, labels = data
    perm = np.random.default_rng(seed).permutation(len(X))
    r1 = es.dispersion(X, labels, **_kw(*metric))
    r2 = es.dispersion(X[perm], labels[perm], **_kw(*metric))
    tol = 1e-10 * max(1.0, r1.T)
    assert (r2.W, r2.S, r2.T) == pytest.approx((r1.W, r1.S, r1.T), abs=tol)
    np.testing.assert_array_equal(r1.sizes, r2.sizes)
