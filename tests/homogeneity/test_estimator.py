"""energy_test(estimator="U"): the U-statistic form of the k-sample energy test (issue 34).

References: plain-numpy double loops over the formulas (never the package's kernels), and
the peers that define the form: dcor (``estimation_stat='u_statistic'``) and hyppo
(``Energy(bias=False)``), each fed the very relabellings our null is made of.
"""
import itertools
import math

import numpy as np
import pytest

import energystats as es


def loop_energy_stat(samples, estimator, exponent=1.0):
    """sum_{i<j} n_i n_j / (n_i + n_j) E(C_i, C_j), by double loops (fsum)."""
    def rho(a, b):
        return math.sqrt(sum((float(u) - float(v)) ** 2 for u, v in zip(a, b))) ** exponent

    def mean(A, B, same):
        vals = [rho(a, b) for i, a in enumerate(A) for j, b in enumerate(B) if not (same and i == j)]
        if same and estimator == "V":
            vals += [0.0] * len(A)  # the n diagonal pairs rho(a, a) = 0
        return math.fsum(vals) / len(vals)

    samples = [np.asarray(s, dtype=float).reshape(len(s), -1) for s in samples]
    total = []
    for i, j in itertools.combinations(range(len(samples)), 2):
        A, B = samples[i], samples[j]
        E = 2.0 * mean(A, B, False) - mean(A, A, True) - mean(B, B, True)
        total.append(len(A) * len(B) / (len(A) + len(B)) * E)
    return math.fsum(total)


def splits(pooled, sizes):
    """Every relabelling of the pooled rows into groups of ``sizes`` (first group's rows chosen,
    then the second's, ...): the groups as arrays."""
    n = len(pooled)

    def rec(avail, rest):
        if len(rest) == 1:
            yield [list(avail)]
            return
        for c in itertools.combinations(avail, rest[0]):
            left = [a for a in avail if a not in c]
            for tail in rec(left, rest[1:]):
                yield [list(c)] + tail
    for idx in rec(list(range(n)), list(sizes)):
        yield [pooled[i] for i in idx]


def data(seed, sizes, d=2, shift=0.6):
    rng = np.random.default_rng(seed)
    return [rng.normal(loc=shift * g, size=(m, d)) for g, m in enumerate(sizes)]


# -- the statistic ---------------------------------------------------------------

@pytest.mark.parametrize("sizes", [(5, 3), (7, 2), (4, 3, 5)])
@pytest.mark.parametrize("exponent", [1.0, 0.5, 1.7])
def test_u_statistic_and_distances_match_loops(sizes, exponent):
    s = data(1, sizes)
    res = es.energy_test(*s, n_resamples=0, estimator="U", exponent=exponent)
    assert res.estimator == "U"
    assert res.statistic == pytest.approx(loop_energy_stat(s, "U", exponent), rel=1e-12)
    for i, j in itertools.combinations(range(len(s)), 2):
        assert res.energy_distances[i, j] == pytest.approx(
            loop_energy_stat([s[i], s[j]], "U", exponent) * (len(s[i]) + len(s[j]))
            / (len(s[i]) * len(s[j])), rel=1e-12)
    v = es.energy_test(*s, n_resamples=0, exponent=exponent)
    assert v.estimator == "V"
    assert v.statistic == pytest.approx(loop_energy_stat(s, "V", exponent), rel=1e-12)


@pytest.mark.parametrize("method", ["sorted", "pairwise", "streamed"])
def test_u_exact_null_is_every_relabelling(method):
    s = [x[:, :1] for x in data(2, (6, 4))]
    res = es.energy_test(*s, exact=True, estimator="U", method=method)
    pooled = np.vstack(s)
    ref = np.array([loop_energy_stat(g, "U") for g in splits(pooled, (6, 4))])
    assert res.exact and res.n_resamples == len(ref) == math.comb(10, 6)
    np.testing.assert_allclose(np.sort(res.null_distribution), np.sort(ref), rtol=1e-12)
    obs = loop_energy_stat(s, "U")
    assert res.pvalue == np.sum(ref >= obs - 1e-12 * abs(obs)) / len(ref)


def test_u_and_v_order_relabellings_differently():
    # unequal sizes: V weighs the within sums by 1/n_j, U by 1/(n_j - 1), so the exact
    # p-values (over the same 330 relabellings) differ
    s = data(5, (8, 3))
    u = es.energy_test(*s, exact=True, estimator="U")
    v = es.energy_test(*s, exact=True)
    pooled = np.vstack(s)
    gs = list(splits(pooled, (8, 3)))
    for res, est in ((u, "U"), (v, "V")):
        ref = np.array([loop_energy_stat(g, est) for g in gs])
        obs = loop_energy_stat(s, est)
        assert res.pvalue == np.sum(ref >= obs - 1e-12 * abs(obs)) / len(ref)
    assert u.pvalue != v.pvalue


def test_u_with_strata_matches_loops():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(12, 1))
    group = np.tile([0, 1], 6)
    block = np.repeat([0, 1], 6)
    res = es.energy_test(z, labels=group, strata=block, n_resamples=0, estimator="U")
    ref = math.fsum(loop_energy_stat([z[(block == b) & (group == g)] for g in (0, 1)], "U")
                    for b in (0, 1))
    assert res.statistic == pytest.approx(ref, rel=1e-12)


def test_v_is_the_default_bit_for_bit():
    s = data(4, (9, 5))
    a = es.energy_test(*s, n_resamples=99, rng=3)
    b = es.energy_test(*s, n_resamples=99, rng=3, estimator="V")
    assert a.statistic == b.statistic and a.pvalue == b.pvalue
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
    assert repr(a) == repr(b) and "estimator" not in repr(a)


# -- bad input -----------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:.*hold a single row")  # the one-row-group warning, expected
def test_u_needs_two_points_per_group():
    x, y = data(0, (5, 1))
    with pytest.raises(ValueError, match=r"estimator='U'.*at least 2 points in every group.*1 point"):
        es.energy_test(x, y, estimator="U")
    es.energy_test(x, y, n_resamples=9, rng=0)  # V takes it


def test_u_needs_two_points_per_group_within_strata():
    z = np.arange(8.0)
    group = np.array([0, 0, 1, 1, 0, 0, 0, 1])
    block = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    with pytest.raises(ValueError, match=r"at least 2 points in every group within a stratum"):
        es.energy_test(z, labels=group, strata=block, estimator="U")


@pytest.mark.filterwarnings("ignore:.*hold a single row")  # the one-row-group warning, expected
def test_u_allows_a_one_point_group_that_compares_with_nothing():
    # group 2 is alone in its stratum: no comparison uses it, so U is defined; its pooled
    # within mean is not (NaN in energy_distances), and no division warning is raised
    z = np.arange(9.0)
    group = np.array([0, 0, 1, 1, 0, 0, 1, 1, 2])
    block = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.warns(UserWarning, match="hold a single group"):
            res = es.energy_test(z, labels=group, strata=block, estimator="U", n_resamples=0)
    ref = math.fsum(loop_energy_stat([z[(block == b) & (group == g)] for g in (0, 1)], "U")
                    for b in (0, 1))
    assert res.statistic == pytest.approx(ref, rel=1e-12, abs=1e-12)
    assert np.isnan(res.energy_distances[0, 2]) and res.energy_distances[0, 1] == 0.0


def test_estimator_must_be_v_or_u():
    x, y = data(0, (5, 4))
    with pytest.raises(ValueError, match=r"`estimator` must be 'V' or 'U'; got 'u'"):
        es.energy_test(x, y, estimator="u")


def test_u_with_asymptotic_is_an_error():
    x, y = data(0, (5, 4))
    with pytest.raises(ValueError, match=r"asymptotic.*estimator='U'"):
        es.energy_test(x, y, estimator="U", pvalue_method="asymptotic")


def test_u_on_dask_matches_threads():
    pytest.importorskip("dask")
    import dask.array as da
    s = data(6, (9, 5))
    a = es.energy_test(*s, n_resamples=49, rng=2, estimator="U")
    b = es.energy_test(*[da.from_array(x, chunks=4) for x in s], n_resamples=49, rng=2,
                       estimator="U")
    assert b.estimator == "U"
    assert b.statistic == pytest.approx(a.statistic, rel=1e-12)
    assert b.pvalue == a.pvalue


# -- the peers -------------------------------------------------------------------

@pytest.mark.parametrize("sizes", [(6, 4), (3, 4, 3)])
@pytest.mark.parametrize("est", ["U", "V"])
def test_dcor_statistic_and_exact_pvalue(sizes, est):
    """dcor's statistic on every relabelling our exact null enumerates: the same null, the same
    p-value (counting ties as ours does; dcor itself counts strictly greater values)."""
    dcor = pytest.importorskip("dcor")
    name = {"U": "u_statistic", "V": "v_statistic"}[est]
    s = data(7, sizes)
    res = es.energy_test(*s, exact=True, estimator=est)

    def peer(groups):
        pooled = np.vstack(groups)
        n = [len(g) for g in groups]
        D = dcor.distances.pairwise_distances(pooled)
        from dcor.homogeneity import _energy_test_statistic_multivariate_from_distance_matrix as f
        return float(f(D, np.r_[0, np.cumsum(n)[:-1]], n, estimation_stat=name))

    obs = peer(s)
    assert res.statistic == pytest.approx(obs, rel=1e-12)
    ref = np.array([peer(g) for g in splits(np.vstack(s), sizes)])
    assert res.n_resamples == len(ref)
    np.testing.assert_allclose(np.sort(res.null_distribution), np.sort(ref), rtol=1e-12,
                               atol=1e-12 * np.abs(ref).max())
    assert res.pvalue == np.sum(ref >= obs - 1e-12 * abs(obs)) / len(ref)


@pytest.mark.parametrize("est", ["U", "V"])
def test_dcor_pvalue_on_its_own_permutations(est):
    """dcor's random permutations (``RandomState(seed).permutation(n)``, its documented draw),
    our statistic on each: dcor's p-value, (1 + #{T* > T}) / (R + 1), exactly."""
    dcor = pytest.importorskip("dcor")
    s = data(8, (12, 5), shift=0.5)
    R, seed = 99, 11
    peer = dcor.homogeneity.energy_test(*s, num_resamples=R, random_state=seed,
                                        estimation_stat={"U": "u_statistic", "V": "v_statistic"}[est])
    obs = es.energy_test(*s, n_resamples=0, estimator=est).statistic
    assert obs == pytest.approx(float(peer.statistic), rel=1e-12)
    pooled = np.vstack(s)
    rs = np.random.RandomState(seed)
    null = []
    for _ in range(R):
        p = pooled[rs.permutation(len(pooled))]
        null.append(es.energy_test(p[:12], p[12:], n_resamples=0, estimator=est).statistic)
    null = np.array(null)
    assert not np.any(np.isclose(null, obs, rtol=1e-9))  # no near-tie to round differently
    assert (1 + np.sum(null > obs)) / (R + 1) == pytest.approx(peer.pvalue, abs=1e-15)


def test_hyppo_two_sample_statistic_is_proportional_to_u():
    """hyppo's Energy (bias=False, its default) is the unbiased distance covariance of the data
    and the group labels, scaled; for two samples of sizes m, n (N = m + n) it equals
    N⁴(m−1)(n−1) / (m²n²(N−1)(N−2)(N−3)) times our U statistic, on every relabelling, so the
    permutation p-values agree relabelling by relabelling."""
    hyppo = pytest.importorskip("hyppo.ksample")
    m, n = 6, 4
    N = m + n
    s = data(9, (m, n))
    factor = N**4 * (m - 1) * (n - 1) / (m**2 * n**2 * (N - 1) * (N - 2) * (N - 3))
    res = es.energy_test(*s, exact=True, estimator="U")
    H = hyppo.Energy()
    obs = float(H.statistic(*s))
    assert obs == pytest.approx(factor * res.statistic, rel=1e-10)
    ref = np.array([float(H.statistic(*g)) for g in splits(np.vstack(s), (m, n))])
    np.testing.assert_allclose(np.sort(ref), np.sort(factor * res.null_distribution), rtol=1e-10,
                               atol=1e-12 * np.abs(ref).max())
    assert res.pvalue == np.sum(ref >= obs - 1e-10 * abs(obs)) / len(ref)


# -- the median form (dcor's average=np.median), not offered -----------------------

def test_median_energy_counterexample_of_conventions_page():
    """docs/conventions.rst: X = 0 and P(Y = 0) = 0.6, P(Y = j) = 0.1 (j = 1..4): the median
    form converges to -1 < 0 although the laws differ (energy distance 0.6), in exact
    arithmetic; dcor's average=np.median on large samples shows the same sign."""
    from fractions import Fraction as Fr

    law = {0: Fr(6, 10), 1: Fr(1, 10), 2: Fr(1, 10), 3: Fr(1, 10), 4: Fr(1, 10)}

    def dist_law(p, q):
        out = {}
        for a, pa in p.items():
            for b, pb in q.items():
                out[abs(a - b)] = out.get(abs(a - b), 0) + pa * pb
        return out

    def median(dl):
        c = 0
        for v in sorted(dl):
            c += dl[v]
            assert c != Fr(1, 2)  # the median is unique
            if c > Fr(1, 2):
                return v

    def mean(dl):
        return sum(v * p for v, p in dl.items())

    point = {0: Fr(1)}
    med = 2 * median(dist_law(point, law)) - median(dist_law(point, point)) \
        - median(dist_law(law, law))
    energy = 2 * mean(dist_law(point, law)) - mean(dist_law(point, point)) \
        - mean(dist_law(law, law))
    assert (med, energy) == (-1, Fr(6, 10))

    dcor = pytest.importorskip("dcor")
    rng = np.random.default_rng(0)
    y = rng.choice([0, 1, 2, 3, 4], p=[0.6, 0.1, 0.1, 0.1, 0.1], size=400).astype(float)
    x = np.zeros(400)
    assert dcor.energy_distance(x, y, average=np.median) < 0
    assert es.energy_distance(x, y) > 0.4
