"""energy_test(method='projection'): the constant of Baringhaus and Franz, the statistic and
every relabelling's against plain double loops on the projected samples, the level by
simulation, thread and scale invariance, and the refusals."""
import math

import numpy as np
import pytest

import energystats as es
from energystats._core._projections import sphere_constant


def ref_stat_1d(v, codes):
    """The k-sample energy statistic (V) of 1-D values by double loops."""
    groups = np.unique(codes)
    tot = 0.0
    for a in range(len(groups)):
        for b in range(a + 1, len(groups)):
            x, y = v[codes == groups[a]], v[codes == groups[b]]
            n, m = len(x), len(y)
            e = (2 * np.abs(x[:, None] - y[None, :]).mean() - np.abs(x[:, None] - x[None, :]).mean()
                 - np.abs(y[:, None] - y[None, :]).mean())
            tot += n * m / (n + m) * e
    return tot


def ref_projection(X, codes, K, seed, R):
    """The statistic and R relabellings' by the documented draws: the K directions first
    (normal rows, normalised), then one permutation of the labels per relabelling."""
    gen = np.random.default_rng(seed)
    d = X.shape[1]
    U = gen.standard_normal((K, d))
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    c = math.sqrt(math.pi) * math.gamma((d + 1) / 2) / math.gamma(d / 2)
    stat = lambda lab: c / K * sum(ref_stat_1d(X @ u, lab) for u in U)  # noqa: E731
    out = [stat(codes)]
    for _ in range(R):
        out.append(stat(codes[gen.permutation(len(codes))]))
    return np.array(out)


def test_sphere_constant():
    assert sphere_constant(1) == pytest.approx(1.0)
    assert sphere_constant(2) == pytest.approx(math.pi / 2)
    assert sphere_constant(3) == pytest.approx(2.0)
    # the identity itself, by Monte Carlo over directions: ‖z‖ = c_d E|u'z|
    g = np.random.default_rng(0)
    for d in (2, 5, 40):
        U = g.standard_normal((200000, d))
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        z = g.normal(size=d)
        est = sphere_constant(d) * np.abs(U @ z).mean()
        assert est == pytest.approx(np.linalg.norm(z), rel=0.01)


@pytest.mark.parametrize("k", [2, 3])
def test_statistic_and_null_equal_double_loops(k):
    g = np.random.default_rng(k)
    X = g.normal(size=(24, 3))
    codes = np.arange(24) % k
    X[codes == 1] += 0.7
    res = es.energy_test(X, labels=codes, method="projection", n_projections=7, n_resamples=5,
                         rng=11)
    ref = ref_projection(X, codes, 7, 11, 5)
    assert res.statistic == pytest.approx(ref[0], rel=1e-12)
    np.testing.assert_allclose(res.null_distribution, ref[1:], rtol=1e-12)
    assert res.engine == "projection" and res.n_projections == 7 and res.seed == 11
    assert res.pvalue == pytest.approx((1 + np.sum(ref[1:] >= ref[0] * (1 - 1e-12))) / 6)


def test_one_dimension_is_the_sorted_statistic():
    g = np.random.default_rng(1)
    a, b = g.normal(size=50), g.normal(size=40) + 0.3
    proj = es.energy_test(a, b, method="projection", n_resamples=0, rng=0)
    exact = es.energy_test(a, b, n_resamples=0)
    assert proj.statistic == pytest.approx(exact.statistic, rel=1e-12)
    assert proj.n_projections == 1


def test_many_directions_approach_the_pairwise_statistic():
    g = np.random.default_rng(2)
    x, y = g.normal(size=(80, 4)), g.normal(size=(70, 4)) + 0.3
    full = es.energy_test(x, y, n_resamples=0).statistic
    proj = es.energy_test(x, y, method="projection", n_projections=4000, n_resamples=0, rng=3)
    assert proj.statistic == pytest.approx(full, rel=0.02)
    np.testing.assert_allclose(proj.energy_distances,
                               es.energy_test(x, y, n_resamples=0).energy_distances, rtol=0.02)


def test_level_under_the_null():
    # 300 pairs of samples from one law, 20 directions, 99 relabellings: the rejection rate at
    # 0.05 is within 3 binomial SEs of 0.05 (an exact permutation test given the directions)
    g = np.random.default_rng(20261207)
    reps, rejected = 300, 0
    for r in range(reps):
        X = g.standard_t(3, size=(60, 3))
        p = es.energy_test(X, labels=np.arange(60) % 2, method="projection", n_projections=20,
                           n_resamples=99, rng=r).pvalue
        rejected += p <= 0.05
    rate, se = rejected / reps, math.sqrt(0.05 * 0.95 / reps)
    assert abs(rate - 0.05) <= 3 * se, rate


def test_threads_scale_and_layouts():
    g = np.random.default_rng(4)
    X = g.normal(size=(300, 3))
    lab = np.repeat([0, 1, 2], 100)
    kw = dict(labels=lab, method="projection", n_projections=15, n_resamples=29, rng=5)
    one = es.energy_test(X, n_threads=1, **kw)
    two = es.energy_test(X, n_threads=2, **kw)
    assert np.array_equal(one.null_distribution, two.null_distribution)
    assert one.statistic == two.statistic and one.pvalue == two.pvalue
    for c in (2.0 ** 900, 2.0 ** -900):
        r = es.energy_test(X * c, **kw)
        assert r.pvalue == one.pvalue
        assert r.statistic == pytest.approx(one.statistic * c, rel=1e-12)
    for Xv in (np.asfortranarray(X), X.astype(np.float32)):
        assert es.energy_test(Xv, **kw).pvalue == one.pvalue


def test_mean_shift_is_found():
    g = np.random.default_rng(6)
    x, y = g.normal(size=(400, 10)), g.normal(size=(400, 10)) + 0.25
    assert es.energy_test(x, y, method="projection", n_resamples=99, rng=1).pvalue <= 0.01


@pytest.mark.parametrize("kwargs,match", [
    (dict(exponent=1.5), "needs metric='energy' with exponent=1"),
    (dict(metric="laplacian"), "needs metric='energy' with exponent=1"),
    (dict(estimator="U"), "does not take `estimator='U'`"),
    (dict(pvalue_method="sequential"), "does not take `pvalue_method='sequential'`"),
    (dict(exact=True), "does not take `exact=True`"),
    (dict(strata=np.arange(40) % 2), "does not take `strata`"),
    (dict(n_projections=0), "`n_projections` must be an integer in \\[1, 10\\*\\*6\\]"),
    (dict(n_projections=True), "`n_projections` must be an integer"),
    (dict(n_projections=2.5), "`n_projections` must be an integer"),
])
def test_refusals_name_the_argument(kwargs, match):
    g = np.random.default_rng(0)
    X = g.normal(size=(40, 2))
    with pytest.raises(ValueError, match=match):
        es.energy_test(X, labels=np.repeat([0, 1], 20), method="projection", n_resamples=9,
                       rng=0, **kwargs)


def test_progress_counts_the_directions():
    import io

    g = np.random.default_rng(2)
    x, y = g.normal(size=(60, 3)), g.normal(size=(50, 3))
    buf = io.StringIO()
    res = es.energy_test(x, y, method="projection", n_projections=12, n_resamples=19, rng=1,
                         progress=buf)
    assert "projections: 100% 12/12" in buf.getvalue()
    quiet = io.StringIO()
    again = es.energy_test(x, y, method="projection", n_projections=12, n_resamples=19, rng=1,
                           progress=False)
    assert quiet.getvalue() == "" and again.pvalue == res.pvalue   # the bar changes nothing
