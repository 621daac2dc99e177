"""Conditional distance covariance and correlation (Wang, Pan, Hu, Tian and Zhang 2015) and the
local-bootstrap test: against plain-NumPy references written with explicit loops, the
four-index form of the paper's statistic, hyppo's ConditionalDcorr on hyppo's own test case,
R's bw.nrd0, and the input checks."""
import math

import numpy as np
import pandas as pd
import pytest

import energystats as es


# -- plain references: explicit loops, the formulas as written ---------------------

def _ref_dist(X, exponent=1.0):
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    n = len(X)
    a = np.zeros((n, n))
    for k in range(n):
        for l in range(n):
            sq = sum((X[k, j] - X[l, j]) ** 2 for j in range(X.shape[1]))
            a[k, l] = math.sqrt(sq) ** exponent
    return a


def _ref_kernel(Z, h):
    # K_H(z_i - z_k) = prod_j (2 pi)^(-1/2) / h_j exp(-u_j^2 / (2 h_j^2)), loop over i, k, j
    Z = np.asarray(Z, dtype=float).reshape(len(Z), -1)
    n, d = Z.shape
    K = np.zeros((n, n))
    for i in range(n):
        for k in range(n):
            v = 1.0
            for j in range(d):
                u = (Z[i, j] - Z[k, j]) / h[j]
                v *= math.exp(-0.5 * u * u) / (math.sqrt(2 * math.pi) * h[j])
            K[i, k] = v
    return K


def _ref_local_cdcov(a, b, w):
    # S1 + S2 - 2 S3 with the kernel weights w at one point, loops over k, l, m
    n = len(w)
    S1 = sum(w[k] * w[l] * a[k, l] * b[k, l] for k in range(n) for l in range(n))
    Sa = sum(w[k] * w[l] * a[k, l] for k in range(n) for l in range(n))
    Sb = sum(w[k] * w[l] * b[k, l] for k in range(n) for l in range(n))
    S3 = sum(w[k] * w[l] * w[m] * a[k, l] * b[k, m]
             for k in range(n) for l in range(n) for m in range(n))
    return S1 + Sa * Sb - 2 * S3


def _ref_all(x, y, z, h, exponent=1.0):
    """Per-point cdcov, cdcor, the weights 12 f^4, T and the mean cdcor, by loops."""
    a, b, K = _ref_dist(x, exponent), _ref_dist(y, exponent), _ref_kernel(z, h)
    n = len(a)
    cov, cor, om = np.zeros(n), np.zeros(n), np.zeros(n)
    for i in range(n):
        w = K[i] / K[i].sum()
        cov[i] = _ref_local_cdcov(a, b, w)
        vx, vy = _ref_local_cdcov(a, a, w), _ref_local_cdcov(b, b, w)
        cor[i] = cov[i] / math.sqrt(vx * vy)
        om[i] = 12 * (K[i].sum() / n) ** 4
    return cov, cor, om, float(np.mean(om * cov)), float(np.mean(cor))


def _ref_T_four_index(x, y, z, h):
    # T = n^-5 sum_i sum_{jklm} K_ij K_ik K_il K_im d^S_jklm (no normalised weights at all)
    a, b, K = _ref_dist(x), _ref_dist(y), _ref_kernel(z, h)
    n = len(a)

    def d(j, k, l, m):
        return (a[j, k] + a[l, m] - a[j, l] - a[k, m]) * (b[j, k] + b[l, m] - b[j, l] - b[k, m])

    total = 0.0
    for i in range(n):
        for j in range(n):
            for k in range(n):
                for l in range(n):
                    for m in range(n):
                        dS = d(j, k, l, m) + d(j, k, m, l) + d(j, m, l, k)
                        total += K[i, j] * K[i, k] * K[i, l] * K[i, m] * dS
    return total / n**5


def _data(n=9, seed=0, d=2):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, d))
    x = np.column_stack([z[:, 0] + rng.normal(size=n), rng.normal(size=n)])
    y = z[:, -1] ** 2 + 0.5 * x[:, 0] + rng.normal(size=n)
    return x, y, z


def _hyppo_data(n):
    # hyppo 0.5.2 tests: np.random.seed(123456789); x, y, z = indep_normal(n, 1), which is
    # np.random.multivariate_normal([0, 0, 0], np.eye(3), size=n).T on the seeded global state
    x, y, z = np.random.RandomState(123456789).multivariate_normal(np.zeros(3), np.eye(3), size=n).T
    return x, y, z


class TestConditionalDistanceCorrelation:
    @pytest.mark.parametrize("bandwidth", [[0.7, 1.3], "scott", "silverman"])
    def test_against_loops(self, bandwidth):
        x, y, z = _data()
        res = es.conditional_distance_correlation(x, y, z, bandwidth=bandwidth)
        cov, cor, om, T, mean_cor = _ref_all(x, y, z, res.bandwidth)
        np.testing.assert_allclose(res.local_cdcov_sqr, cov, rtol=1e-12)
        np.testing.assert_allclose(res.local_cdcor, cor, rtol=1e-12)
        np.testing.assert_allclose(res.local_weights, om, rtol=1e-12)
        assert res.test_statistic == pytest.approx(T, rel=1e-12)
        assert res.statistic == pytest.approx(mean_cor, rel=1e-12)

    def test_precision_where_weights_concentrate(self):
        # a small bandwidth puts the weights at some z_i on one or two points: the local value
        # is then far below the sums it is formed from, and its error is a few eps of those
        # (documented); the plain loops are no better there, so the bound is checked
        x, y, z = _data()
        res = es.conditional_distance_correlation(x, y, z, bandwidth="nrd0")
        a, b, K = _ref_dist(x), _ref_dist(y), _ref_kernel(z, res.bandwidth)
        cov = _ref_all(x, y, z, res.bandwidth)[0]
        for i in range(len(cov)):
            w = K[i] / K[i].sum()
            terms = 4 * sum(w[k] * w[l] * a[k, l] * b[k, l] for k in range(9) for l in range(9))
            assert abs(res.local_cdcov_sqr[i] - cov[i]) <= 64 * np.finfo(float).eps * terms
        assert np.min(res.local_cdcov_sqr / np.max(res.local_cdcov_sqr)) < 1e-8  # such points

    def test_against_loops_exponent(self):
        x, y, z = _data(n=8, seed=3, d=1)
        res = es.conditional_distance_correlation(x, y, z, bandwidth=0.6, exponent=0.5)
        cov, cor, _, T, _ = _ref_all(x, y, z, [0.6], exponent=0.5)
        np.testing.assert_allclose(res.local_cdcov_sqr, cov, rtol=1e-12)
        assert res.test_statistic == pytest.approx(T, rel=1e-12)
        assert res.exponent == 0.5

    def test_against_four_index_form(self):
        # the weight 12 f^4 clears the denominators: T is an order-5 sum of kernel products
        x, y, z = _data(n=6, seed=1, d=1)
        res = es.conditional_distance_correlation(x, y, z, bandwidth=0.8)
        assert res.test_statistic == pytest.approx(_ref_T_four_index(x, y, z, [0.8]), rel=1e-12)

    def test_against_hyppo(self):
        # hyppo 0.5.2, its tests/test_cdcorr.py data (see _hyppo_data); computed once with
        #   from hyppo.conditional import ConditionalDcorr
        #   ConditionalDcorr(bandwidth=bw).statistic(x, y, z)                  (use_cov=True)
        #   ConditionalDcorr(bandwidth=bw, use_cov=False).statistic(x, y, z)
        # n = 50: bw=np.ones(1) -> 0.0016678294476491456, 0.08836659629762163
        #         bw=None       -> 0.0012913273075500103, 0.16370437038080143
        #         bw="silverman"-> 0.0013376074773557875, 0.15745119774427027
        # n = 100, use_cov=False, bw=None -> 0.12926180100498708 (hyppo's test_indep_normal_corr)
        x, y, z = _hyppo_data(50)
        one = es.conditional_distance_correlation(x, y, z, bandwidth=1.0)
        assert one.test_statistic == pytest.approx(0.0016678294476491456, rel=1e-12)
        assert one.statistic == pytest.approx(0.08836659629762163, rel=1e-12)
        # hyppo's kernel divides by sqrt(prod h) instead of prod h (a density only at h = 1),
        # so its covariance statistic is ours times prod(h)**2; the correlations agree
        for bw, cov, cor in (("scott", 0.0012913273075500103, 0.16370437038080143),
                             ("silverman", 0.0013376074773557875, 0.15745119774427027)):
            res = es.conditional_distance_correlation(x, y, z, bandwidth=bw)
            assert res.test_statistic * np.prod(res.bandwidth) ** 2 == pytest.approx(cov, rel=1e-12)
            assert res.statistic == pytest.approx(cor, rel=1e-12)
        x, y, z = _hyppo_data(100)
        assert es.conditional_distance_correlation(x, y, z, bandwidth="scott").statistic == \
            pytest.approx(0.12926180100498708, rel=1e-12)

    def test_bandwidth_rules(self):
        z = np.array([0.3, -1.2, 2.5, 0.7, 0.1, -0.4, 1.9, 0.0])
        x, y = np.arange(8.0), np.arange(8.0) ** 2
        bw = lambda rule, zz=z: es.conditional_distance_correlation(  # noqa: E731
            x, y, zz, bandwidth=rule).bandwidth
        # R 4: bw.nrd0(c(0.3, -1.2, 2.5, 0.7, 0.1, -0.4, 1.9, 0.0)) -> 0.48743016106909137;
        # bw.nrd0(c(1, 1, 1, 1, 5)) -> 1.166872749618789 (IQR 0: falls back to sd)
        assert bw("nrd0")[0] == pytest.approx(0.48743016106909137, rel=1e-14)
        assert bw("nrd0", np.array([1.0, 1, 1, 1, 5, 1, 1, 1]))[0] == pytest.approx(
            0.9 * np.std([1.0, 1, 1, 1, 5, 1, 1, 1], ddof=1) * 8 ** -0.2, rel=1e-14)
        sd = np.std(z, ddof=1)
        assert bw("scott")[0] == pytest.approx(sd * 8 ** (-1 / 5), rel=1e-14)
        # the default: half of Scott's rule (the level study, docs/benchmarks/conditional_level.txt)
        assert bw(None)[0] == bw("half-scott")[0] == pytest.approx(0.5 * sd * 8 ** (-1 / 5), rel=1e-14)
        assert bw("silverman")[0] == pytest.approx(sd * (8 * 3 / 4) ** (-1 / 5), rel=1e-14)
        zz = np.column_stack([z, 10 * z[::-1]])
        h = bw("scott", zz)
        np.testing.assert_allclose(h, np.std(zz, axis=0, ddof=1) * 8 ** (-1 / 6), rtol=1e-14)
        np.testing.assert_array_equal(bw([0.5, 2.0], zz), [0.5, 2.0])
        res = es.conditional_distance_correlation(x, y, z)
        assert res.bandwidth_rule == "half-scott"
        assert es.conditional_distance_correlation(x, y, z, bandwidth=0.4).bandwidth_rule is None

    def test_scaling(self):
        # x -> c x scales the local cdcov and T by c, leaves the correlations; z -> c z with
        # the bandwidth scaled alike leaves the weights' rows, and T scales by c**(-4d) (f^4)
        # (Scott's bandwidth: with half of it some points have one or two neighbours, and their
        # local values carry rounding at the 1e-11 level)
        x, y, z = _data(n=30, seed=2)
        r0 = es.conditional_distance_correlation(x, y, z, bandwidth="scott")
        r1 = es.conditional_distance_correlation(1e5 * x, y, z, bandwidth="scott")
        assert r1.test_statistic == pytest.approx(1e5 * r0.test_statistic, rel=1e-12)
        np.testing.assert_allclose(r1.local_cdcor, r0.local_cdcor, rtol=1e-11)
        r2 = es.conditional_distance_correlation(x, y, 1e-3 * z, bandwidth="scott")
        assert r2.statistic == pytest.approx(r0.statistic, rel=1e-12)
        assert r2.test_statistic == pytest.approx(1e24 * r0.test_statistic, rel=1e-12)  # d = 2

    @pytest.mark.parametrize("k", [-300, -40, 40, 300])
    def test_magnitudes(self, k):
        # data × 2**k (x, y and z, one column each): the local cdcov scale as 2**(2k), the
        # weights 12 f^4 as 2**(-4k) (beyond float64 at |k| = 300), T as 2**(-2k); no under-
        # or overflow on the way
        X = np.random.default_rng(13).normal(size=(16, 3))
        r0 = es.conditional_distance_correlation(X[:, 0], X[:, 1], X[:, 2])
        X = X * 2.0**k
        r1 = es.conditional_distance_correlation(X[:, 0], X[:, 1], X[:, 2])
        assert r1.test_statistic == pytest.approx(r0.test_statistic * 2.0 ** (-2 * k), rel=1e-12)
        assert r1.statistic == pytest.approx(r0.statistic, rel=1e-12)
        np.testing.assert_allclose(r1.local_cdcov_sqr, r0.local_cdcov_sqr * 2.0 ** (2 * k),
                                   rtol=1e-12)
        t0 = es.conditional_independence_test(X[:, 0] / 2.0**k, X[:, 1] / 2.0**k,
                                              X[:, 2] / 2.0**k, n_resamples=9, rng=1)
        t1 = es.conditional_independence_test(X[:, 0], X[:, 1], X[:, 2], n_resamples=9, rng=1)
        np.testing.assert_allclose(t1.null_distribution, t0.null_distribution * 2.0 ** (-2 * k),
                                   rtol=1e-12)
        assert t1.pvalue == t0.pvalue

    def test_frames_precomputed_float32_threads(self):
        x, y, z = _data(n=25, seed=4)
        df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": y, "z1": z[:, 0], "z2": z[:, 1]},
                          index=pd.RangeIndex(100, 125, name="id"))
        ref = es.conditional_distance_correlation(x, y, z)
        got = es.conditional_distance_correlation(["x1", "x2"], "y", ["z1", "z2"], data=df)
        assert got.test_statistic == ref.test_statistic and got.statistic == ref.statistic
        assert (got.columns_x, got.columns_y, got.columns_z) == (["x1", "x2"], ["y"], ["z1", "z2"])
        frame = got.to_frame()
        assert list(frame.index[:2]) == [100, 101] and list(frame.columns) == ["cdcov_sqr", "cdcor",
                                                                               "weight"]
        pre = es.conditional_distance_correlation(es.pairwise(x), es.pairwise(y), z,
                                                  metric="precomputed")
        assert pre.test_statistic == pytest.approx(ref.test_statistic, rel=1e-13)
        f32 = es.conditional_distance_correlation(x.astype(np.float32), y.astype(np.float32), z)
        assert f32.statistic == pytest.approx(
            es.conditional_distance_correlation(x.astype(np.float32).astype(float),
                                                y.astype(np.float32).astype(float), z).statistic,
            rel=1e-6)
        one = es.conditional_distance_correlation(x, y, z, n_threads=1)
        two = es.conditional_distance_correlation(x, y, z, n_threads=2)
        np.testing.assert_array_equal(one.local_cdcov_sqr, two.local_cdcov_sqr)

    def test_row_order(self):
        # the rows are exchangeable: permuting them permutes the local values, keeps T
        x, y, z = _data(n=40, seed=12)
        p = np.random.default_rng(0).permutation(40)
        r0 = es.conditional_distance_correlation(x, y, z)
        r1 = es.conditional_distance_correlation(x[p], y[p], z[p])
        # a point with few neighbours has a tiny local value, right to the rounding of its terms
        np.testing.assert_allclose(r1.local_cdcov_sqr, r0.local_cdcov_sqr[p], rtol=1e-12,
                                   atol=1e-12 * float(np.max(r0.local_cdcov_sqr)))
        assert r1.test_statistic == pytest.approx(r0.test_statistic, rel=1e-13)

    def test_conditional_independence_small_dependence_large(self):
        rng = np.random.default_rng(5)
        z = rng.normal(size=150)
        x, y = z + 0.3 * rng.normal(size=150), z + 0.3 * rng.normal(size=150)
        indep = es.conditional_distance_correlation(x, y, z).statistic
        dep = es.conditional_distance_correlation(x, x + 0.3 * rng.normal(size=150), z).statistic
        assert indep < 0.3 < 0.55 < dep   # 0.258 and 0.625 (V-statistics: biased upwards)

    def test_tiny_bandwidth_warns(self):
        x, y, z = _data(n=12, seed=6, d=1)
        with pytest.warns(UserWarning, match="no local spread"):
            res = es.conditional_distance_correlation(x, y, z, bandwidth=1e-4)
        assert np.all(res.local_cdcor == 0.0)

    # -- input validation --
    def test_input_validation(self):
        x, y, z = _data(n=10)
        f = es.conditional_distance_correlation
        with pytest.raises(ValueError, match=r"`bandwidth` must be one of \['half-scott', 'scott'"):
            f(x, y, z, bandwidth="silvermann")
        with pytest.raises(ValueError, match="`bandwidth` must be finite and > 0"):
            f(x, y, z, bandwidth=[1.0, 0.0])
        with pytest.raises(ValueError, match=r"one number per column of `z` \(d=2\)"):
            f(x, y, z, bandwidth=[1.0, 2.0, 3.0])
        with pytest.raises(TypeError, match="`bandwidth` must be a rule's name"):
            f(x, y, z, bandwidth=True)
        with pytest.raises(ValueError, match="column 1 of `z`, which is constant"):
            f(x, y, np.column_stack([z[:, 0], np.ones(10)]))
        with pytest.raises(ValueError, match="`x` and `y` must have the same number of rows"):
            f(x[:9], y, z)
        with pytest.raises(ValueError, match=r"`z` must have as many rows as `x` and `y` "
                                             r"\(observations: 9\); got 10"):
            f(x[:9], y[:9], z)
        with pytest.raises(ValueError, match="matrices of the same n; got 10×10 and 9×9"):
            f(es.pairwise(x), es.pairwise(y[:9]), z, metric="precomputed")
        with pytest.raises(ValueError, match="`x` is constant"):
            f(np.ones(10), y, z)
        with pytest.raises(ValueError, match="at least 3 observations; got n=2"):
            f(x[:2], y[:2], z[:2])
        with pytest.raises(ValueError, match="`z` contains NaN"):
            f(x, y, np.where(z > 1, np.nan, z))
        with pytest.raises(ValueError, match="`z` has a different index"):
            f(pd.Series(y), pd.Series(y), pd.Series(z[:, 0], index=range(1, 11)))
        with pytest.raises(MemoryError, match=r"limit of 4\.0 GiB \(n <= 8757\)"):
            f(np.arange(9000.0), np.arange(9000.0), np.arange(9000.0))


class TestConditionalIndependenceTest:
    def test_null_against_a_plain_bootstrap(self):
        # the documented draws: per sample, uniforms u (x's) then v (y's) from the rng; x*_i is
        # x_k for the first k whose cumulative weight at z_i exceeds u_i
        x, y, z = _data(n=8, seed=7, d=1)
        res = es.conditional_independence_test(x, y, z, n_resamples=3, bandwidth=0.9, rng=11)
        gen = np.random.default_rng(11)
        K = _ref_kernel(z, [0.9])
        n = len(y)
        X = np.asarray(x).reshape(n, -1)
        for r in range(3):
            U = gen.random((2, n))
            idx = []
            for u in U:
                row = []
                for i in range(n):
                    c, k = 0.0, 0
                    w = K[i] / K[i].sum()
                    while k < n - 1 and c + w[k] <= u[i]:
                        c += w[k]
                        k += 1
                    row.append(k)
                idx.append(row)
            _, _, _, T, _ = _ref_all(X[idx[0]], y[idx[1]], z, [0.9])
            assert res.null_distribution[r] == pytest.approx(T, rel=1e-11)
        assert res.statistic == pytest.approx(_ref_all(x, y, z, [0.9])[3], rel=1e-12)

    def test_pvalue_seed_and_result(self):
        rng = np.random.default_rng(8)
        z = rng.normal(size=40)
        x = z + 0.4 * rng.normal(size=40)
        res = es.conditional_independence_test(x, x + 0.2 * rng.normal(size=40), z,
                                               n_resamples=99, rng=3)
        assert res.pvalue == pytest.approx(
            (1 + np.sum(res.null_distribution >= res.statistic)) / 100, rel=1e-15)
        assert res.pvalue == 0.01 and res.seed == 3 and res.n_resamples == 99
        assert res.pvalue_se == pytest.approx(math.sqrt(0.01 * 0.99 / 99), rel=1e-12)
        assert res.to_frame().loc["conditional independence", "pvalue"] == res.pvalue
        assert res.estimates.test_statistic == res.statistic
        fresh = es.conditional_independence_test(x, z, z, n_resamples=9)
        assert isinstance(fresh.seed, int)
        rerun = es.conditional_independence_test(x, z, z, n_resamples=9, rng=fresh.seed)
        np.testing.assert_array_equal(rerun.null_distribution, fresh.null_distribution)

    def test_same_bits_any_threads(self):
        x, y, z = _data(n=30, seed=9)
        one = es.conditional_independence_test(x, y, z, n_resamples=5, rng=4, n_threads=1)
        two = es.conditional_independence_test(x, y, z, n_resamples=5, rng=4, n_threads=2)
        np.testing.assert_array_equal(one.null_distribution, two.null_distribution)

    def test_conditionally_independent_not_rejected(self):
        rng = np.random.default_rng(10)
        z = rng.normal(size=60)
        x, y = z + 0.5 * rng.normal(size=60), z**2 + 0.5 * rng.normal(size=60)
        assert es.conditional_independence_test(x, y, z, n_resamples=99, rng=0).pvalue > 0.05

    def test_no_resamples(self):
        x, y, z = _data(n=10)
        res = es.conditional_independence_test(x, y, z, n_resamples=0, rng=1)
        assert res.pvalue is None and res.null_distribution.shape == (0,)
        assert res.statistic == es.conditional_distance_correlation(x, y, z).test_statistic

    # -- input validation --
    def test_input_validation(self):
        x, y, z = _data(n=10)
        with pytest.raises(ValueError, match="`n_resamples` must be an integer"):
            es.conditional_independence_test(x, y, z, n_resamples=-1)
        with pytest.raises(TypeError, match="`rng` must be None"):
            es.conditional_independence_test(x, y, z, rng=True)
        with pytest.raises(ValueError, match="`bandwidth` must be finite"):
            es.conditional_independence_test(x, y, z, bandwidth=-1.0)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0 ** 900, 2.0 ** -900])
def test_default_bandwidth_scales_with_z(scale):
    """The default bandwidth at z x 1e+-300 said 'z is constant' (its standard deviation's
    square overflowed or underflowed; issue 51): the rule now scales with z, and the
    conditional dCor, which does not depend on z's units, is the same."""
    g = np.random.default_rng(0)
    x, y, z = g.normal(size=60), g.normal(size=60), g.normal(size=60)
    base = es.conditional_distance_correlation(x, y, z)
    res = es.conditional_distance_correlation(x, y, z * scale)
    assert res.statistic == pytest.approx(base.statistic, rel=1e-12)
    np.testing.assert_allclose(res.bandwidth, base.bandwidth * scale, rtol=1e-12)
