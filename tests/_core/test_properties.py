"""Property-based tests (hypothesis) of SPEC §1–§5.

Above all: for random partitions, metrics and engines, ``W``, ``S``, ``T``, ``F``
and ``g`` of :func:`energystats.dispersion`, the statistics of
``energy_test``/``disco`` (``n_resamples=0``) and ``energy_distance`` equal an
independent pure-Python double loop over the definitions (tests/reference.py),
within tolerances derived from the arithmetic (error model below) — never one
package function against another.  ``W + S == T`` alone holds for any symmetric
group-sum matrix, right or wrong, so it is only an extra assertion;
test_reference_check_catches_a_wrong_cross_group_sum shows that the reference
checks catch a wrong cross-group sum that the identity cannot see.

Also: E ≥ 0 and symmetric; translation and rotation invariance of the energy
metric; homogeneity ``E(cA, cB) = |c|^exponent E(A, B)``; exponent 2 is twice the
squared mean difference; the 1-D sorted path equals the general path (ties
included); reordering rows within groups changes nothing.
"""
import contextlib
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import energystats as es
from energystats._core import _engine

from ..reference import as2d, ref_group_sums, ref_stats, metric_kwargs

finite = st.floats(min_value=-100, max_value=100, allow_nan=False, allow_infinity=False, width=64)
metrics = st.sampled_from([("energy", 0.5), ("energy", 1.0), ("energy", 1.5), ("energy", 2.0),
                           ("laplacian", 1.0), ("gaussian", 2.0)])


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


# -- W, S, T, F, g and the test statistics against the pure-Python reference ----------
#
# Error model.  Every group-pair sum M[g, h] = Σ_{x∈C_g, y∈C_h} rho(x, y) that the
# package forms, and the reference's (tests/reference.py), carries an absolute
# error of at most
#
#     eps_M = 2 u [(2n + k + 2d + 45) Σ_gh M_gh + 2 n² [bounded metric]]      (u = 2**-53)
#
# because (all terms are >= 0):
#   * each rho: <= (d + 5) u rho (d + 1 roundings forming the squared distance, one
#     each for sqrt/pow/expm1 and the scalings), in the kernels and in ref_rho;
#     ref_rho's 2 - 2 exp(.) adds up to 2u absolute per pair for the bounded metrics;
#   * the streamed kernel sums <= min(n, 256) terms plainly, then compensated:
#     <= (n + 3) u M[g, h];
#   * the n×n-matrix engine: BLAS sums of <= n terms, twice, and the largest group
#     recovered from row sums by subtraction: <= (2n + k) u Σ M;
#   * the 1-D sorted path: the prefix terms cnt·x − Σy cancel, but with the data
#     centred on the median Σ|x − med| <= 4T, so the error is <= 32 u n T = 16 u Σ M,
#     and as much again for the centring;
#   * the reference sums with math.fsum (one rounding);
# and the leading factor 2 is a margin.  W, S, T, g, E, the energy statistic and F
# are linear (F a ratio) in the M[g, h]; their tolerance is eps_M carried through
# their formulas to first order (``_Reference``), plus (k² + 8) u times the sum of the
# magnitudes of their terms for the rounding of the formulas themselves.  For n <= 40
# that is about 1e-12 relative to T: a kernel that is wrong by more than that in any
# group-pair sum fails (test_reference_check_catches_a_wrong_cross_group_sum).
# Below the normal range rounding is absolute (up to 2**-1075 per operation): every
# tolerance also allows 64 units of the smallest subnormal, for results of tiny data.

U = np.finfo(np.float64).eps / 2  # unit roundoff
SUBNORMAL_SLACK = 64 * math.ulp(0.0)


def _close(what, got, want, tol):
    """``|got − want| <= tol`` (NaN only equals NaN, inf only inf), else AssertionError."""
    got, want = float(got), float(want)
    if math.isnan(want) or math.isinf(want):
        same = got == want or (math.isnan(got) and math.isnan(want))
        assert same, f"{what}: got {got!r}, reference {want!r}"
        return
    err = abs(got - want)
    tol += SUBNORMAL_SLACK
    assert err <= tol, (f"{what}: got {got!r}, reference {want!r}: error {err:.3g} > tolerance {tol:.3g}")
    if tol > SUBNORMAL_SLACK:
        key = what.split("[")[0]
        WORST[key] = max(WORST.get(key, 0.0), err / tol)


#: largest error / tolerance seen per quantity in this process (not asserted; for a
#: developer measuring how tight the error model is)
WORST = {}


class _Reference:
    """Reference values of one partition, with the tolerances of the error model above."""

    def __init__(self, X, labels, metric, param):
        X = np.asarray(X, dtype=np.float64)
        X = X.reshape(-1, 1) if X.ndim == 1 else X
        self.groups, sizes, M = ref_group_sums(X, labels, metric, param)
        self.ref = ref_stats(M, sizes)
        n, d, k = X.shape[0], X.shape[1], len(sizes)
        self.n, self.k, self.sizes = n, k, sizes
        bounded = metric in ("laplacian", "gaussian")
        total = math.fsum(math.fsum(row) for row in M)
        eps = 2 * U * ((2 * n + k + 2 * d + 45) * total + (2 * n * n if bounded else 0))
        g = self.ref["g"]  # >= 0: the magnitudes of the terms (E with + signs below)
        nn = [float(s) for s in sizes]
        form = (k * k + 8) * U
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        dE = [[2 * eps / (nn[i] * nn[j]) + eps / nn[i] ** 2 + eps / nn[j] ** 2 for j in range(k)]
              for i in range(k)]
        Emag = [[2 * g[i][j] + g[i][i] + g[j][j] for j in range(k)] for i in range(k)]
        self.tol_g = [[eps / (nn[i] * nn[j]) + 2 * U * g[i][j] for j in range(k)] for i in range(k)]
        self.tol_E = [[dE[i][j] + form * Emag[i][j] for j in range(k)] for i in range(k)]
        self.tol = {
            "W": eps / 2 * sum(1 / s for s in nn) + form * self.ref["W"],
            "T": k * k * eps / (2 * n) + form * self.ref["T"],
            "S": sum(nn[i] * nn[j] / (2 * n) * (dE[i][j] + form * Emag[i][j]) for i, j in pairs),
            "energy": sum(nn[i] * nn[j] / (nn[i] + nn[j]) * (dE[i][j] + form * Emag[i][j])
                          for i, j in pairs),
        }
        # F = a S / W, a = (n − k)/(k − 1): first order in the errors of S and W, with W
        # at its smallest.  When W is within twice its tolerance of 0, F is ill-conditioned
        # (W = 0 exactly may come out as a rounding residue of either sign, F as ±1e15
        # instead of inf): then only |F| >= a (S − tol_S) / (W + tol_W) is checked.
        W, S, tW, tS = self.ref["W"], self.ref["S"], self.tol["W"], self.tol["S"]
        self.F_floor = None
        if k < 2 or n <= k:
            self.tol["F"] = 0.0  # NaN
        elif W > 2 * tW:
            a = (n - k) / (k - 1)
            self.tol["F"] = a * (tS + abs(S) / (W - tW) * tW) / (W - tW) + form * abs(self.ref["F"])
        else:
            self.tol["F"] = None
            if S > tS:
                self.F_floor = (n - k) / (k - 1) * (S - tS) / (W + tW)

    def check(self, what, got, key=None):
        key = key or what
        if self.tol[key] is not None:
            _close(what, got, self.ref[key], self.tol[key])
        elif key == "F" and self.F_floor is not None:
            assert abs(got) >= self.F_floor, f"{what}: got {got!r}, want |F| >= {self.F_floor!r} (W ~ 0)"

    def check_g(self, what, g):
        g = np.asarray(g)
        assert g.shape == (self.k, self.k), f"{what}: shape {g.shape}, want {(self.k, self.k)}"
        for i in range(self.k):
            for j in range(self.k):
                _close(f"{what}[{i},{j}]", g[i, j], self.ref["g"][i][j], self.tol_g[i][j])


def check_dispersion(res, X, labels, metric, param):
    """``es.dispersion``'s W, S, T, F, g, sizes against the reference (AssertionError if not)."""
    ref = _Reference(X, labels, metric, param)
    assert list(res.groups) == ref.groups and list(map(int, res.sizes)) == ref.sizes
    for key in ("W", "S", "T", "F"):
        ref.check(f"dispersion.{key}", getattr(res, key), key)
    ref.check_g("dispersion.g", res.g)
    # the identity only as a cheap extra: it holds for any symmetric M, right or wrong
    assert res.W + res.S == pytest.approx(res.T, abs=ref.tol["W"] + ref.tol["S"] + ref.tol["T"])
    return ref


def check_energy_test(res, X, labels, metric, param):
    """``es.energy_test(..., n_resamples=0)``: the statistic and the k×k energy distances."""
    ref = _Reference(X, labels, metric, param)
    ref.check("energy_test.statistic", res.statistic, "energy")
    for i in range(ref.k):
        for j in range(ref.k):
            # the package reports E within 64 eps of its terms' size below 0 as 0
            g = ref.ref["g"]
            tol = ref.tol_E[i][j] + 256 * U * (2 * g[i][j] + g[i][i] + g[j][j])
            _close("energy_test.energy_distances", res.energy_distances[i, j], ref.ref["E"][i][j], tol)
    return ref


def check_disco(res, X, labels, metric, param):
    """``es.disco(..., n_resamples=0)``: statistic (F), between (S), within (W), total (T)."""
    ref = _Reference(X, labels, metric, param)
    ref.check("disco.statistic", res.statistic, "F")
    ref.check("disco.between", res.between, "S")
    ref.check("disco.within", res.within, "W")
    ref.check("disco.total", res.total, "T")
    return ref


def check_energy_distance(value, a, b, metric, param):
    """``es.energy_distance(a, b)`` = E(A, B) of the two-group partition of the pooled rows."""
    a, b = as2d(a), as2d(b)
    ref = _Reference(np.vstack([a, b]), [0] * len(a) + [1] * len(b), metric, param)
    g = ref.ref["g"]
    # the package reports E within 64 eps of its terms' size below 0 as 0
    tol = ref.tol_E[0][1] + 256 * U * (2 * g[0][1] + g[0][0] + g[1][1])
    _close("energy_distance", value, ref.ref["E"][0][1], tol)
    return ref


@st.composite
def groups(draw, min_groups=1, max_groups=5, max_rows=40, max_dim=3, dim=None, disco=False):
    """``(X, labels)``: every one of k groups non-empty, rows in random order."""
    k = draw(st.integers(min_groups, max_groups))
    sizes = draw(st.lists(st.integers(1, max_rows // k), min_size=k, max_size=k))
    if disco and sum(sizes) <= k:  # DISCO needs n − k >= 1
        sizes[0] += 1
    n = sum(sizes)
    d = dim if dim is not None else draw(st.integers(1, max_dim))
    X = draw(hnp.arrays(np.float64, (n, d), elements=finite))
    order = draw(st.permutations(range(n)))
    labels = np.repeat(np.arange(k), sizes)[np.asarray(order)]
    return X, labels


# hypothesis may draw all rows equal: then F is 0/0 and dispersion says so (the fields checked
# here, W, S and T, are all 0 and still compared)
@pytest.mark.filterwarnings(
    "ignore:.*F is NaN \\(0/0\\):energystats.DegenerateStatisticWarning")
@given(groups(), metrics, st.sampled_from(["auto", "pairwise"]))
def test_dispersion_against_reference(data, metric, method):
    X, labels = data
    if method == "auto" and X.shape[1] == 1 and metric == ("energy", 1.0):
        method = "sorted"  # what 'auto' picks; said explicitly so that the path is certain
    k = len(np.unique(labels))
    # one group, or every group a single point: F is NaN (as in the reference), and said so
    expect = pytest.warns(es.DegenerateStatisticWarning, match="F is NaN") \
        if k < 2 or len(labels) == k else contextlib.nullcontext()
    with expect:
        res = es.dispersion(X, labels, method=method, **metric_kwargs(*metric))
    check_dispersion(res, X, labels, *metric)


@pytest.mark.filterwarnings("ignore:.*hold a single row")  # the one-row-group warning, expected
@given(groups(min_groups=2), metrics, st.sampled_from(["auto", "pairwise", "streamed"]))
def test_energy_test_statistic_against_reference(data, metric, method):
    X, labels = data
    res = es.energy_test(X, labels=labels, n_resamples=0, method=method, **metric_kwargs(*metric))
    check_energy_test(res, X, labels, *metric)


@given(groups(min_groups=2, disco=True), metrics, st.sampled_from(["auto", "pairwise", "streamed"]))
def test_disco_against_reference(data, metric, method):
    X, labels = data
    res = es.disco(X, labels=labels, n_resamples=0, method=method, **metric_kwargs(*metric))
    check_disco(res, X, labels, *metric)


@given(samples(), metrics, st.sampled_from(["auto", "pairwise"]))
def test_energy_distance_against_reference(ab, metric, method):
    a, b = ab
    check_energy_distance(es.energy_distance(a, b, method=method, **metric_kwargs(*metric)), a, b, *metric)


# -- the checks above fail when a kernel is wrong ---------------------------------------

def _wrong_cross_sum(real, rel):
    """``real`` (a group-sum or pairwise-matrix producer) with entries [0, 1] and [1, 0]
    multiplied by ``1 + rel``: symmetric, so W + S = T still holds exactly."""
    def wrong(*args, **kwargs):
        out = real(*args, **kwargs)
        M = np.array(out[0] if isinstance(out, tuple) else out, dtype=np.float64)
        M[0, 1] *= 1 + rel
        M[1, 0] *= 1 + rel
        return (M, *out[1:]) if isinstance(out, tuple) else M
    return wrong


def _bug_case():
    rng = np.random.default_rng(42)
    X = rng.normal(size=(36, 2)) + np.repeat([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]], 12, axis=0)
    labels = np.repeat([0, 1, 2], 12)
    perm = rng.permutation(36)
    return X[perm], labels[perm]


@pytest.mark.parametrize("metric", [("energy", 1.0), ("energy", 0.5), ("laplacian", 1.0), ("gaussian", 2.0)])
@pytest.mark.parametrize("rel", [1e-6, 1e-9])
def test_reference_check_catches_a_wrong_cross_group_sum(monkeypatch, metric, rel):
    """A cross-group sum off by a relative 1e-6 or 1e-9 (M[0,1] and M[1,0] of the k×k
    group sums behind dispersion, energy_distance and the streamed tests), or one pair
    off by 1e-4 or 1e-7 (D[0,1] and D[1,0] of the n×n matrix behind the matrix engine),
    is caught by the same checks the property tests use, while ``W + S == T`` still
    holds."""
    X, labels = _bug_case()
    kw = metric_kwargs(*metric)
    a, b = X[labels == 0], X[labels == 1]

    def run():
        return (es.dispersion(X, labels, **kw),
                es.energy_distance(a, b, **kw),
                es.energy_test(X, labels=labels, n_resamples=0, method="streamed", **kw),
                es.disco(X, labels=labels, n_resamples=0, method="streamed", **kw))

    # the checks pass on the right kernels ...
    res, e, et, dc = run()
    check_dispersion(res, X, labels, *metric)
    check_energy_distance(e, a, b, *metric)
    check_energy_test(et, X, labels, *metric)
    check_disco(dc, X, labels, *metric)

    # ... and each fails on a wrong one
    monkeypatch.setattr(_engine, "group_sum_matrix", _wrong_cross_sum(_engine.group_sum_matrix, rel))
    res, e, et, dc = run()
    assert res.W + res.S == pytest.approx(res.T, rel=1e-14)  # the old test cannot see the bug
    with pytest.raises(AssertionError, match="dispersion"):
        check_dispersion(res, X, labels, *metric)
    with pytest.raises(AssertionError, match="energy_distance"):
        check_energy_distance(e, a, b, *metric)
    with pytest.raises(AssertionError, match="energy_test"):
        check_energy_test(et, X, labels, *metric)
    with pytest.raises(AssertionError, match="disco"):
        check_disco(dc, X, labels, *metric)
    monkeypatch.undo()

    # the n×n matrix engine: one wrong pair rho(x_0, x_1), rows 0 and 1 in different groups
    i0, i1 = int(np.flatnonzero(labels == 0)[0]), int(np.flatnonzero(labels == 1)[0])
    order = [i0, i1] + [i for i in range(len(X)) if i not in (i0, i1)]
    pooled, lab = X[order], labels[order]
    monkeypatch.setattr(_engine, "pairwise_values", _wrong_cross_sum(_engine.pairwise_values, rel * 100))
    et = es.energy_test(pooled, labels=lab, n_resamples=0, method="pairwise", **kw)
    dc = es.disco(pooled, labels=lab, n_resamples=0, method="pairwise", **kw)
    assert et.engine == dc.engine == "matrix"
    with pytest.raises(AssertionError, match="energy_test"):
        check_energy_test(et, pooled, lab, *metric)
    with pytest.raises(AssertionError, match="disco"):
        check_disco(dc, pooled, lab, *metric)


@given(samples(), metrics)
def test_energy_distance_nonnegative_and_symmetric(ab, metric):
    a, b = ab
    e1 = es.energy_distance(a, b, **metric_kwargs(*metric))
    e2 = es.energy_distance(b, a, **metric_kwargs(*metric))
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
    # moving the points rounds their coordinates by δ ≈ eps·(|x| + |shift|); for exponent < 1,
    # |x + δ|^α − |x|^α reaches δ^α near x = 0 (e.g. points 1e-17 apart, exponent 0.5: E = 6e-9
    # before the move, 0 after), so each of E's four mean terms may move by (4δ)^α
    delta = 16 * np.finfo(float).eps * (2 * _scale(np.vstack([a, b])) + 30)
    tol = max(1e-9 * scale, 4 * (4 * delta) ** exponent if exponent < 1 else 0.0)
    assert e_moved == pytest.approx(e, rel=1e-8, abs=tol)


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


# labels drawn freely: one group or single-point groups draw F is NaN's warning, not the point here
@pytest.mark.filterwarnings("ignore:`dispersion`. F is NaN:energystats.DegenerateStatisticWarning")
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


# labels drawn freely: one group or single-point groups draw F is NaN's warning, not the point here
@pytest.mark.filterwarnings("ignore:`dispersion`. F is NaN:energystats.DegenerateStatisticWarning")
@given(partitions(), metrics, st.integers(0, 2**32 - 1))
def test_reordering_rows_changes_nothing(data, metric, seed):
    X, labels = data
    perm = np.random.default_rng(seed).permutation(len(X))
    r1 = es.dispersion(X, labels, **metric_kwargs(*metric))
    r2 = es.dispersion(X[perm], labels[perm], **metric_kwargs(*metric))
    tol = 1e-10 * max(1.0, r1.T)
    assert (r2.W, r2.S, r2.T) == pytest.approx((r1.W, r1.S, r1.T), abs=tol)
    np.testing.assert_array_equal(r1.sizes, r2.sizes)
