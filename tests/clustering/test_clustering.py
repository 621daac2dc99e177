"""Tests of energy clustering (SPEC §5–§6): kernels against brute force, estimator API, baselines.

Every expected value here comes from an independent slow implementation in
this file (plain numpy loops over the definitions of SPEC §3) or from R
``energy`` (commands quoted), never from the code under test.
"""
import itertools
import json

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats.clustering import _engine as ce
from energystats._lib import _hartigan

from ..reference import ref_wst

# -- independent references ------------------------------------------------------


def ref_rho(X, metric="energy", param=1.0):
    """rho matrix by a double loop over the SPEC §1 formulas."""
    X = np.asarray(X, dtype=float).reshape(len(X), -1)
    n = X.shape[0]
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            r = np.sqrt(np.sum((X[i] - X[j]) ** 2))
            if metric == "energy":
                D[i, j] = r**param
            elif metric == "laplacian":
                D[i, j] = 2 - 2 * np.exp(-r / (2 * param))
            else:
                D[i, j] = 2 - 2 * np.exp(-r**2 / (2 * param**2))
    return D


def ref_W(D, labels):
    """W = sum_j (1 / (2 n_j)) sum_{x,y in C_j} rho(x, y) (SPEC §3)."""
    labels = np.asarray(labels)
    W = 0.0
    for g in np.unique(labels):
        idx = np.flatnonzero(labels == g)
        W += D[np.ix_(idx, idx)].sum() / (2 * idx.size)
    return W


def origin_gram(D_origin_rho, D):
    """SPEC §2 Gram matrix with x0 = origin: K = (rho(x,0) + rho(y,0) - rho(x,y)) / 2."""
    r0 = D_origin_rho
    return 0.5 * (r0[:, None] + r0[None, :] - D)


METRIC_CASES = [("energy", 1.0), ("energy", 0.5), ("energy", 1.7), ("laplacian", 1.0), ("gaussian", 0.8)]


def _data(seed, n=14, d=2):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(0, 1, (n // 2, d)), rng.normal(1.5, 1, (n - n // 2, d))])


# -- the Hartigan kernel, move by move ----------------------------------------------


class TestHartiganKernel:
    # every k below 9 (the vector path of AVX-512: one column pattern for k = 2, 4, 8, a
    # period of k chunks otherwise, masked loads at the end of g) and two above; n with and
    # without a partial last chunk
    @pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 7, 8, 9, 12])
    @pytest.mark.parametrize("n", [13, 203])
    def test_move_changes_two_columns_as_numpy(self, k, n):
        rng = np.random.default_rng(100 * k + n)
        A = rng.normal(size=(n, 4))
        G = np.ascontiguousarray(A @ A.T)
        labels = np.concatenate([np.arange(k), rng.integers(0, k, n - k)]).astype(np.intp)
        QX, Q, sizes = np.empty((n, k)), np.empty(k), np.empty(k, dtype=np.intp)
        first, seen = True, 0
        for _ in range(40):
            before, QX0 = labels.copy(), QX.copy()
            _, moves, _ = _hartigan.hartigan(G, labels, k, QX, Q, sizes, 1000, 0.0, max_moves=1,
                                             initialise=first, refresh=False)
            if not first and moves:
                (i,) = np.flatnonzero(labels != before)
                QX0[:, before[i]] -= G[i]   # the same subtraction and addition per entry
                QX0[:, labels[i]] += G[i]
                assert np.array_equal(QX, QX0)
                seen += 1
            first = False
            if not moves:
                break
        assert seen > 0

    @pytest.mark.parametrize("metric,param", METRIC_CASES)
    @pytest.mark.parametrize("gram", ["origin", "centred"])
    def test_bookkeeping_and_moves_against_brute_force(self, metric, param, gram):
        X = _data(3)
        n, k = X.shape[0], 3
        D = ref_rho(X, metric, param)
        if gram == "origin":   # the SPEC §2 Gram matrix itself, x0 = 0
            r0 = ref_rho(np.vstack([X, np.zeros((1, X.shape[1]))]), metric, param)[-1, :-1]
            G = np.ascontiguousarray(origin_gram(r0, D))
        else:
            G = ce.centred_gram(D.copy())
        labels = np.array([0, 1, 2] * (n // 3) + [0] * (n % 3), dtype=np.intp)
        QX, Q, sizes = np.empty((n, k)), np.empty(k), np.empty(k, dtype=np.intp)
        W_prev = ref_W(D, labels)
        first = True
        n_moves = 0
        while True:
            before = labels.copy()
            _, moves, _ = _hartigan.hartigan(G, labels, k, QX, Q, sizes, 1000, 0.0, max_moves=1,
                                             initialise=first, refresh=False)
            first = False
            # bookkeeping equals brute-force recomputation
            Z = np.zeros((n, k))
            Z[np.arange(n), labels] = 1
            np.testing.assert_allclose(QX, G @ Z, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(Q, np.diag(Z.T @ G @ Z), rtol=1e-10, atol=1e-10)
            np.testing.assert_array_equal(sizes, Z.sum(0))
            if moves == 0:
                np.testing.assert_array_equal(labels, before)
                break
            n_moves += 1
            i = int(np.flatnonzero(labels != before)[0])
            assert np.count_nonzero(labels != before) == 1
            # brute force: every earlier point had no improving move, and point i moved to
            # the best cluster; W fell strictly
            for p in range(i + 1):
                if np.sum(before == before[p]) == 1:
                    continue
                alts = []
                for l in range(k):
                    if l != before[p]:
                        trial = before.copy()
                        trial[p] = l
                        alts.append((ref_W(D, trial), l))
                best_W, best_l = min(alts)
                if p < i:
                    assert best_W >= ref_W(D, before) - 1e-10
                else:
                    assert labels[i] == best_l or np.isclose(ref_W(D, labels), best_W, rtol=1e-12)
            W_now = ref_W(D, labels)
            assert W_now < W_prev
            W_prev = W_now
        assert n_moves > 0
        # converged: no single move lowers W (brute force)
        for p in range(n):
            if np.sum(labels == labels[p]) == 1:
                continue
            for l in range(k):
                if l != labels[p]:
                    trial = labels.copy()
                    trial[p] = l
                    assert ref_W(D, trial) >= W_prev - 1e-10

    def test_singleton_never_empties(self):
        # one far point alone in its cluster: Hartigan would like to move others, never it
        X = np.array([[0.0], [0.1], [0.2], [0.3], [50.0]])
        G = ce.centred_gram(ref_rho(X))
        labels = np.array([0, 0, 0, 0, 1], dtype=np.intp)
        labels[0] = 1  # cluster 1 = {0, 4}
        labels2 = np.array([0, 0, 0, 1, 0], dtype=np.intp)  # singleton {3}
        for lab in (labels, labels2):
            QX, Q, s = np.empty((5, 2)), np.empty(2), np.empty(2, dtype=np.intp)
            _hartigan.hartigan(G, lab, 2, QX, Q, s, 100, 0.0)
            assert np.all(s >= 1)
            assert np.all(np.bincount(lab, minlength=2) >= 1)


def ref_hartigan(G, labels, k, max_iter=300):
    """Plain-numpy Hartigan (paper 001 Algorithm 1), Q_l(x_i) recomputed from scratch at every point."""
    labels = labels.copy()
    n = G.shape[0]
    for _ in range(max_iter):
        moved = False
        for i in range(n):
            j = labels[i]
            if np.sum(labels == j) == 1:
                continue
            Z = np.eye(k)[labels]
            nl = Z.sum(0)
            Q = np.diag(Z.T @ G @ Z)
            qx = G[i] @ Z
            dq = (Q[j] / nl[j] - 2 * qx[j] + G[i, i]) / (nl[j] - 1) - (Q / nl - 2 * qx - G[i, i]) / (nl + 1)
            dq[j] = -np.inf
            l = int(np.argmax(dq))
            if dq[l] > 0:
                labels[i] = l
                moved = True
        if not moved:
            break
    return labels


def ref_lloyd(G, labels, k, max_iter=300):
    """Plain-numpy kernel k-means: batch assignment to the nearest centroid, then the moves in
    index order, skipping a move that would empty its cluster."""
    labels = labels.copy()
    n = G.shape[0]
    for _ in range(max_iter):
        Z = np.eye(k)[labels]
        nl = Z.sum(0)
        Q = np.diag(Z.T @ G @ Z)
        dist = Q / nl**2 - 2 * (G @ Z) / nl  # + G_ii, the same for every cluster
        target = labels.copy()
        for i in range(n):
            d = dist[i].copy()
            cur = d[labels[i]]
            d[labels[i]] = np.inf
            l = int(np.argmin(d))
            if d[l] < cur:
                target[i] = l
        sizes = np.bincount(labels, minlength=k)
        moved = False
        for i in range(n):
            if target[i] != labels[i] and sizes[labels[i]] > 1:
                sizes[labels[i]] -= 1
                sizes[target[i]] += 1
                labels[i] = target[i]
                moved = True
        if not moved:
            break
    return labels


class TestKernelsAgainstNumpy:
    @pytest.mark.parametrize("seed", range(4))
    @pytest.mark.parametrize("n_threads", [1, 2])
    def test_hartigan_and_lloyd_match_numpy_reference(self, seed, n_threads):
        X = _data(seed, n=40, d=3)
        k = 3
        G = ce.centred_gram(ref_rho(X))
        init = np.random.default_rng(seed).integers(0, k, 40).astype(np.intp)
        init[:k] = np.arange(k)
        for kernel, ref in ((_hartigan.hartigan, ref_hartigan), (_hartigan.lloyd, ref_lloyd)):
            lab = init.copy()
            QX, Q, s = np.empty((40, k)), np.empty(k), np.empty(k, dtype=np.intp)
            kernel(G, lab, k, QX, Q, s, 300, 0.0, n_threads=n_threads)
            np.testing.assert_array_equal(lab, ref(G, init, k))

    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    def test_dtypes_through_estimator(self, dtype):
        X = _data(3, n=50, d=4).astype(dtype)
        for alg in ("hartigan", "lloyd"):
            est = es.EnergyClustering(3, algorithm=alg, n_init=2, random_state=0).fit(X)
            # float32 data are read as double in the kernels (all arithmetic in double):
            # against the reference on the same values the measured error is 2.4e-16
            # relative (one ulp); 1e-14 allows ~40 ulps (float32 arithmetic gives ~1e-7)
            assert est.W_ == pytest.approx(ref_W(ref_rho(X.astype(np.float64)), est.labels_), rel=1e-14)


# -- fitted values -------------------------------------------------------------------


class TestEnergyClustering:
    @pytest.mark.parametrize("metric,param", METRIC_CASES)
    @pytest.mark.parametrize("algorithm", ["hartigan", "lloyd", "spectral"])
    def test_fitted_W_equals_dispersion(self, metric, param, algorithm):
        X = _data(1, n=40, d=3)
        kw = {"exponent": param} if metric == "energy" else {"sigma": param}
        est = es.EnergyClustering(3, metric=metric, algorithm=algorithm, n_init=3, random_state=0, **kw).fit(X)
        D = ref_rho(X, metric, param)
        assert est.W_ == pytest.approx(ref_W(D, est.labels_), rel=1e-10)
        disp = es.dispersion(X, est.labels_, metric=metric, **kw)
        assert est.W_ == pytest.approx(disp.W, rel=1e-10)
        assert est.S_ == pytest.approx(disp.S, rel=1e-9)
        assert est.T_ == pytest.approx(D.sum() / (2 * len(X)), rel=1e-10)
        assert isinstance(est.labels_, np.ndarray)
        assert est.n_iter_ >= 1

    def test_result_is_local_optimum(self):
        X = _data(5, n=60, d=4)
        est = es.EnergyClustering(4, n_init=2, random_state=1).fit(X)
        D = ref_rho(X)
        W = ref_W(D, est.labels_)
        for p in range(len(X)):
            if np.sum(est.labels_ == est.labels_[p]) == 1:
                continue
            for l in range(4):
                if l != est.labels_[p]:
                    trial = est.labels_.copy()
                    trial[p] = l
                    assert ref_W(D, trial) >= W - 1e-9

    def test_hartigan_from_lloyd_never_worse_theorem5(self):
        # paper 001 Theorem 5: Hartigan started at a Lloyd optimum cannot get worse, and
        # improves some of them (high-dimensional mixture of eq. 26, where Lloyd gets stuck)
        improved = 0
        for seed in range(12):
            rng = np.random.default_rng(seed)
            D_ = 60
            mu = np.r_[0.7 * np.ones(10), np.zeros(D_ - 10)]
            X = np.vstack([rng.normal(size=(50, D_)), rng.normal(size=(50, D_)) + mu])
            lloyd = es.EnergyClustering(2, algorithm="lloyd", n_init=1, random_state=seed).fit(X)
            hart = es.EnergyClustering(2, algorithm="hartigan", init=lloyd.labels_, random_state=0).fit(X)
            assert hart.W_ <= lloyd.W_ * (1 + 1e-12)
            improved += hart.W_ < lloyd.W_ * (1 - 1e-9)
        assert improved >= 1

    def test_hartigan_optimum_is_lloyd_optimum(self):
        for seed in range(5):
            X = _data(seed, n=50, d=3)
            hart = es.EnergyClustering(3, n_init=1, random_state=seed).fit(X)
            lloyd = es.EnergyClustering(3, algorithm="lloyd", init=hart.labels_).fit(X)
            np.testing.assert_array_equal(lloyd.labels_, hart.labels_)

    @pytest.mark.parametrize("algorithm", ["hartigan", "lloyd", "spectral"])
    @pytest.mark.parametrize("init", ["k-means++", "random"])
    def test_no_empty_cluster(self, algorithm, init):
        rng = np.random.default_rng(0)
        # duplicated points and k close to n
        X = np.repeat(rng.normal(size=(4, 2)), 2, axis=0)
        for k in (2, 4, 6, 7):
            est = es.EnergyClustering(k, algorithm=algorithm, init=init, n_init=3, random_state=1).fit(X)
            assert np.bincount(est.labels_, minlength=k).min() >= 1
            assert set(est.labels_) == set(range(k))
        X = rng.normal(size=(30, 2))
        est = es.EnergyClustering(25, algorithm=algorithm, init=init, n_init=2, random_state=0).fit(X)
        assert np.bincount(est.labels_, minlength=25).min() >= 1

    def test_separated_clusters_found(self):
        rng = np.random.default_rng(2)
        y = np.repeat([0, 1, 2], 30)
        X = rng.normal(size=(90, 2)) + np.array([[0, 0], [10, 0], [0, 10]])[y]
        for alg in ["hartigan", "lloyd", "spectral"]:
            est = es.EnergyClustering(3, algorithm=alg, random_state=0).fit(X)
            assert es.clustering_accuracy(y, est.labels_) == 1.0

    def test_threads_do_not_change_result(self):
        X = _data(7, n=120, d=5)
        a = es.EnergyClustering(4, n_init=6, random_state=3, n_threads=1).fit(X)
        b = es.EnergyClustering(4, n_init=6, random_state=3, n_threads=2).fit(X)
        np.testing.assert_array_equal(a.labels_, b.labels_)
        assert a.W_ == b.W_

    def test_random_state_reproducible_and_generator(self):
        X = _data(8, n=60, d=2)
        a = es.EnergyClustering(3, random_state=5).fit(X).labels_
        b = es.EnergyClustering(3, random_state=np.random.default_rng(5)).fit(X).labels_
        np.testing.assert_array_equal(a, b)

    def test_more_restarts_never_worse(self):
        X = _data(9, n=80, d=6)
        W1 = es.EnergyClustering(5, n_init=1, random_state=0).fit(X).W_
        W10 = es.EnergyClustering(5, n_init=10, random_state=0).fit(X).W_
        assert W10 <= W1 + 1e-9

    def test_float32_fortran_strided_input(self):
        X = _data(10, n=40, d=3)
        ref = es.EnergyClustering(2, random_state=0).fit(X)
        for Xv in (X.astype(np.float32), np.asfortranarray(X), np.hstack([X, X])[:, ::2]):
            est = es.EnergyClustering(2, random_state=0).fit(Xv)
            # against the data as given (float32 values read as double): measured relative
            # error 2.0e-16 (float32) and 3.9e-16 (Fortran, strided); 1e-14 allows ~50 ulps
            given = np.asarray(Xv, dtype=np.float64)
            assert est.W_ == pytest.approx(ref_W(ref_rho(given), est.labels_), rel=1e-14)
            # against the float64 original: the float32 rounding of the data themselves
            # (measured 5.6e-9 relative); 6e-8 = 2**-24, float32's unit roundoff (~10× margin)
            assert est.W_ == pytest.approx(es.dispersion(X, est.labels_).W, rel=6e-8)
        assert ref.W_ == pytest.approx(es.dispersion(X, ref.labels_).W, rel=1e-12)

    def test_precomputed_matches_features(self):
        X = _data(11, n=40, d=3)
        D = ref_rho(X)
        a = es.EnergyClustering(3, random_state=0).fit(X)
        b = es.EnergyClustering(3, metric="precomputed", random_state=0).fit(D)
        assert b.W_ == pytest.approx(a.W_, rel=1e-10)
        np.testing.assert_array_equal(a.labels_, b.labels_)
        # predict with rho from new points to training points
        Xn = np.array([[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]])
        Rn = np.array([[np.linalg.norm(x - y) for y in X] for x in Xn])
        np.testing.assert_array_equal(a.predict(Xn), b.predict(Rn))

    def test_callable_metric(self):
        X = _data(12, n=20, d=2)
        f = lambda x, y: float(np.sqrt(np.sum((x - y) ** 2)))  # noqa: E731
        a = es.EnergyClustering(2, metric=f, random_state=0).fit(X)
        assert a.W_ == pytest.approx(ref_W(ref_rho(X), a.labels_), rel=1e-10)

    def test_predict_raises_W_least_brute_force(self):
        X = _data(13, n=30, d=2)
        est = es.EnergyClustering(3, random_state=0).fit(X)
        Xn = np.random.default_rng(0).normal(0.7, 1.5, size=(15, 2))
        pred = est.predict(Xn)
        for x, p in zip(Xn, pred):
            Xa = np.vstack([X, x])
            Da = ref_rho(Xa)
            rises = [ref_W(Da, np.r_[est.labels_, l]) - ref_W(Da[:-1, :-1], est.labels_) for l in range(3)]
            assert p == int(np.argmin(rises))

    def test_fit_predict_equals_labels(self):
        X = _data(14, n=30, d=2)
        lab = es.EnergyClustering(2, random_state=0).fit_predict(X)
        np.testing.assert_array_equal(lab, es.EnergyClustering(2, random_state=0).fit(X).labels_)

    def test_dataframe_functional_twin(self):
        X = _data(15, n=30, d=2)
        df = pd.DataFrame(X, columns=["a", "b"], index=[f"r{i}" for i in range(30)])
        res = es.energy_clustering(df, 2, rng=0)
        assert isinstance(res.labels, pd.Series)
        assert list(res.labels.index) == list(df.index)
        est = es.EnergyClustering(2, random_state=0).fit(df)
        np.testing.assert_array_equal(res.labels.to_numpy(), est.labels_)
        assert res.W == pytest.approx(est.W_)
        assert res.W + res.S == pytest.approx(res.T)
        tab = res.to_frame()
        assert list(tab.index) == ["Between", "Within", "Total"]
        assert res.to_frame("labels").shape == (30, 1)
        assert "EnergyClusteringResult(W=" in repr(res)

    def test_user_initial_labels(self):
        X = _data(16, n=20, d=2)
        init = np.array(["u", "v"] * 10)
        est = es.EnergyClustering(2, init=init).fit(X)
        assert est.W_ == pytest.approx(ref_W(ref_rho(X), est.labels_))

    # -- input validation --
    def test_bad_input(self):
        X = _data(0, n=10, d=2)
        with pytest.raises(ValueError, match=r"`n_clusters` must be an integer in \[2, n_samples=10\]; got 1"):
            es.EnergyClustering(1).fit(X)
        with pytest.raises(ValueError, match="n_clusters"):
            es.EnergyClustering(11).fit(X)
        with pytest.raises(ValueError, match="n_clusters"):
            es.EnergyClustering(2.5).fit(X)
        with pytest.raises(ValueError, match="at least 2 samples"):
            es.EnergyClustering(2).fit([[1.0, 2.0]])
        Xn = X.copy()
        Xn[3, 1] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            es.EnergyClustering(2).fit(Xn)
        with pytest.raises(ValueError, match="square"):
            es.EnergyClustering(2, metric="precomputed").fit(np.ones((4, 3)))
        A = ref_rho(X)
        A[0, 1] += 1.0
        with pytest.raises(ValueError, match="symmetric"):
            es.EnergyClustering(2, metric="precomputed").fit(A)
        with pytest.raises(ValueError, match="algorithm"):
            es.EnergyClustering(2, algorithm="kmeans").fit(X)
        with pytest.raises(ValueError, match="exact-1d"):
            es.EnergyClustering(2, algorithm="exact-1d").fit(X)
        with pytest.raises(ValueError, match="exact-1d"):
            es.EnergyClustering(2, algorithm="exact-1d", exponent=0.5).fit(X[:, 0])
        with pytest.raises(ValueError, match="init"):
            es.EnergyClustering(2, init="kmeans").fit(X)
        with pytest.raises(ValueError, match="init"):
            es.EnergyClustering(3, init=[0, 1] * 5).fit(X)
        with pytest.raises(ValueError, match="n_init"):
            es.EnergyClustering(2, n_init=0).fit(X)
        with pytest.raises(ValueError, match="metric"):
            es.EnergyClustering(2, metric="cosine").fit(X)
        with pytest.raises(ValueError, match="exponent"):
            es.EnergyClustering(2, exponent=3).fit(X)
        est = es.EnergyClustering(2, random_state=0).fit(X)
        with pytest.raises(ValueError, match="features"):
            est.predict(np.ones((2, 3)))
        with pytest.raises(Exception, match="not fitted"):
            es.EnergyClustering(2).predict(X)
        with pytest.raises(ValueError, match="n_clusters"):
            es.energy_clustering(X, 0)


# -- exact 1-D -----------------------------------------------------------------------


class TestExact1D:
    @pytest.mark.parametrize("seed", range(5))
    def test_k2_equals_brute_force_contiguous(self, seed):
        rng = np.random.default_rng(seed)
        x = np.round(rng.lognormal(size=60), 1)  # ties included
        D = ref_rho(x)
        xs = np.sort(x)
        order = np.argsort(x, kind="stable")
        best = np.inf
        for s in range(1, 60):
            lab = np.zeros(60, dtype=int)
            lab[order[s:]] = 1
            best = min(best, ref_W(D, lab))
        res = es.energy_clustering(x, 2, algorithm="exact-1d")
        assert res.W == pytest.approx(best, rel=1e-12)
        assert ref_W(D, res.labels) == pytest.approx(best, rel=1e-12)
        # contiguous in sorted order
        assert np.all(np.diff(res.labels[order]) >= 0) or np.all(np.diff(res.labels[order]) <= 0)
        assert xs.size == 60

    @pytest.mark.parametrize("seed", range(4))
    def test_k2_equals_brute_force_all_partitions(self, seed):
        rng = np.random.default_rng(100 + seed)
        n = 11
        x = rng.normal(size=n) * rng.choice([1, 5], size=n)
        D = ref_rho(x)
        best = min(ref_W(D, np.r_[0, bits]) for bits in itertools.product([0, 1], repeat=n - 1)
                   if 0 < sum(bits) or False)
        res = es.energy_clustering(x, 2, algorithm="exact-1d")
        assert res.W == pytest.approx(best, rel=1e-12)

    @pytest.mark.parametrize("k", [3, 4])
    def test_dp_equals_brute_force_all_partitions(self, k):
        rng = np.random.default_rng(k)
        n = 8
        x = rng.normal(size=n) * rng.choice([1, 4], size=n)
        D = ref_rho(x)
        best = np.inf
        for lab in itertools.product(range(k), repeat=n - 1):
            lab = np.r_[0, lab]
            if len(set(lab)) == k:
                best = min(best, ref_W(D, lab))
        res = es.energy_clustering(x, k, algorithm="exact-1d")
        assert res.W == pytest.approx(best, rel=1e-12)
        assert np.bincount(res.labels).min() >= 1

    def test_exact_beats_or_ties_hartigan(self):
        rng = np.random.default_rng(0)
        x = np.r_[rng.normal(0, 1, 300), rng.normal(3, 0.5, 200)]
        for k in (2, 3):
            ex = es.energy_clustering(x, k, algorithm="exact-1d")
            ha = es.energy_clustering(x, k, rng=0)
            assert ex.W <= ha.W * (1 + 1e-12)
            assert ex.W == pytest.approx(es.dispersion(x, ex.labels).W, rel=1e-12)


# -- accuracy ------------------------------------------------------------------------


class TestClusteringAccuracy:
    def test_against_permutation_brute_force(self):
        rng = np.random.default_rng(0)
        for _ in range(20):
            t = rng.integers(0, 4, 50)
            p = rng.integers(0, 4, 50)
            best = max(np.mean(np.array(perm)[p] == t) for perm in itertools.permutations(range(4)))
            assert es.clustering_accuracy(t, p) == pytest.approx(best)

    def test_label_types_and_unequal_k(self):
        assert es.clustering_accuracy(["a", "a", "b", "b"], [1, 1, 0, 0]) == 1.0
        assert es.clustering_accuracy(pd.Series(["x", "y", "y"]), np.array([2.5, 2.5, 2.5])) == pytest.approx(2 / 3)
        assert es.clustering_accuracy([0, 1, 2, 2], [0, 0, 1, 1]) == pytest.approx(0.75)
        with pytest.raises(ValueError, match="length"):
            es.clustering_accuracy([0, 1], [0, 1, 1])


# -- hierarchical --------------------------------------------------------------------


def brute_force_linkage(D):
    """Merge the pair with the smallest (n_i n_j / (n_i + n_j)) E(C_i, C_j), E from definitions."""
    n = D.shape[0]
    clusters = {i: [i] for i in range(n)}
    rows = []
    nxt = n
    while len(clusters) > 1:
        best = None
        keys = sorted(clusters)
        for a, b in itertools.combinations(keys, 2):
            A, B = clusters[a], clusters[b]
            gab = D[np.ix_(A, B)].mean()
            E = 2 * gab - D[np.ix_(A, A)].mean() - D[np.ix_(B, B)].mean()
            e = len(A) * len(B) / (len(A) + len(B)) * E
            if best is None or e < best[0] - 1e-12:
                best = (e, a, b)
        e, a, b = best
        clusters[nxt] = clusters.pop(a) + clusters.pop(b)
        rows.append((e, frozenset(clusters[nxt]), len(clusters[nxt])))
        nxt += 1
    return rows


class TestEnergyLinkage:
    X8 = np.array([[0.1, 0.5], [2.3, -0.2], [-1.2, 1.1], [0.4, 2.2],
                   [3.1, 0.9], [2.9, -1.4], [-0.7, 0.3], [1.8, 2.6]])

    def test_against_R_energy_hclust(self):
        # Rscript -e 'library(energy); x <- matrix(c(0.1,2.3,-1.2,0.4,3.1,2.9,-0.7,1.8,
        #   0.5,-0.2,1.1,2.2,0.9,-1.4,0.3,2.6), ncol=2); h <- energy.hclust(dist(x));
        #   print(h$height, digits=15); print(energy.hclust(dist(x), alpha=0.5)$height, digits=15)'
        # (energy 1.7.11)
        h1 = [0.824621125123532, 1.308579771314353, 1.341640786499874, 1.456021977856103,
              1.998670622497764, 4.399657257843797, 7.917113120143834]
        h05 = [0.90808651852317, 1.14254303518073, 1.15829218528827, 1.20665735727095,
               1.40436079942783, 2.25866302266131, 3.26938230245418]
        np.testing.assert_allclose(es.energy_linkage(self.X8)[:, 2], h1, rtol=1e-12)
        np.testing.assert_allclose(es.energy_linkage(self.X8, exponent=0.5)[:, 2], h05, rtol=1e-12)
        # R merge: (-1,-7), (-3,1), (-2,-6), (-4,-8), (-5,3), (2,4), (5,6)
        Z = es.energy_linkage(self.X8)
        assert set(Z[0, :2]) == {0, 6}
        assert set(Z[1, :2]) == {2, 8}

    @pytest.mark.parametrize("metric,param", METRIC_CASES)
    def test_against_brute_force_merges(self, metric, param):
        rng = np.random.default_rng(4)
        X = rng.normal(size=(9, 2)) * [1, 3]
        D = ref_rho(X, metric, param)
        kw = {"exponent": param} if metric == "energy" else {"sigma": param}
        Z = es.energy_linkage(X, metric=metric, **kw)
        rows = brute_force_linkage(D)
        members = {i: frozenset([i]) for i in range(9)}
        for r, (e, mem, size) in enumerate(rows):
            a, b = int(Z[r, 0]), int(Z[r, 1])
            members[9 + r] = members[a] | members[b]
            assert members[9 + r] == mem
            assert Z[r, 2] == pytest.approx(e, rel=1e-10)
            assert Z[r, 3] == size

    def test_scipy_compatible(self):
        from scipy.cluster.hierarchy import dendrogram, fcluster, is_valid_linkage

        rng = np.random.default_rng(0)
        X = np.vstack([rng.normal(0, 1, (20, 2)), rng.normal(8, 1, (20, 2))])
        Z = es.energy_linkage(X)
        assert is_valid_linkage(Z)
        assert np.all(np.diff(Z[:, 2]) >= 0)
        lab = fcluster(Z, 2, criterion="maxclust")
        assert es.clustering_accuracy(np.repeat([0, 1], 20), lab) == 1.0
        dendrogram(Z, no_plot=True)
        D = ref_rho(X)
        np.testing.assert_allclose(es.energy_linkage(D, metric="precomputed"), Z)

    def test_bad_input(self):
        with pytest.raises(ValueError, match="at least 2"):
            es.energy_linkage([[1.0]])
        with pytest.raises(ValueError, match="square"):
            es.energy_linkage(np.ones((3, 2)), metric="precomputed")


# -- scikit-learn API ----------------------------------------------------------------


class TestSklearnAPI:
    def test_params_clone_pipeline(self):
        sklearn = pytest.importorskip("sklearn")
        from sklearn.base import clone
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        est = es.EnergyClustering(3, metric="laplacian", sigma=2.0, n_init=2, random_state=0)
        p = est.get_params()
        assert p["n_clusters"] == 3 and p["sigma"] == 2.0 and p["metric"] == "laplacian"
        c = clone(est)
        assert c.get_params() == p and not hasattr(c, "labels_")
        est.set_params(n_clusters=2)
        assert est.n_clusters == 2
        with pytest.raises(ValueError):
            est.set_params(bogus=1)
        X = _data(0, n=30, d=2)
        pipe = make_pipeline(StandardScaler(), es.EnergyClustering(2, random_state=0))
        lab = pipe.fit_predict(X)
        assert lab.shape == (30,)
        assert pipe.predict(X[:5]).shape == (5,)
        assert sklearn.__version__

    def test_params_without_sklearn(self):
        from energystats.clustering.estimator import _ParamsMixin

        class Bare(_ParamsMixin, es.EnergyClustering):
            pass

        b = Bare(4, sigma=3.0)
        assert b.get_params()["n_clusters"] == 4
        b.set_params(n_clusters=2)
        assert b.n_clusters == 2
        with pytest.raises(ValueError, match="Invalid parameter"):
            b.set_params(foo=1)

    def test_check_estimator(self):
        pytest.importorskip("sklearn")
        from sklearn.utils.estimator_checks import check_estimator

        # Checks that set n_clusters=1 conflict with the contract (k >= 2: a 1-cluster "clustering"
        # is rejected with a clear error), and two checks want scikit-learn's own wording for
        # errors that we word differently; every other applicable check must pass.
        k1 = "sets n_clusters=1, which EnergyClustering rejects by design (n_clusters >= 2)"
        expected = {
            "check_dont_overwrite_parameters": k1,
            "check_methods_subset_invariance": k1,
            "check_fit2d_1feature": k1,
            "check_fit2d_predict1d": k1,
            "check_dtype_object": "our TypeError says '`X` must be numeric' instead of sklearn's wording",
            "check_estimators_empty_data_messages": "our ValueError says '`X` has no features' instead",
        }
        results = check_estimator(es.EnergyClustering(n_clusters=2, n_init=2, random_state=0),
                                  expected_failed_checks=expected, on_fail=None)
        bad = [(r["check_name"], str(r["exception"])[:150]) for r in results
               if r["status"] == "failed" or (r["status"] == "xfail" and False)]
        assert not bad, bad
        xpassed = [r["check_name"] for r in results if r["check_name"] in expected and r["status"] == "passed"]
        assert not xpassed


# -- properties (hypothesis) ---------------------------------------------------------

from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


class TestProperties:
    @pytest.mark.filterwarnings("ignore::energystats.ColumnScaleWarning")  # scales drawn freely
    @settings(max_examples=40, deadline=None)
    @given(X=hnp.arrays(np.float64, st.tuples(st.integers(4, 16), st.integers(1, 3)),
                        elements=st.floats(-50, 50, allow_nan=False, width=32)),
           k=st.integers(2, 4), alg=st.sampled_from(["hartigan", "lloyd", "spectral"]))
    def test_W_matches_definition_and_sizes(self, X, k, alg):
        assume(k <= X.shape[0])
        assume(np.any(X != X[0]))  # all rows identical: nothing to cluster, an error (issue 30)
        est = es.EnergyClustering(k, algorithm=alg, n_init=2, random_state=0).fit(X)
        D = ref_rho(X)
        assert est.W_ == pytest.approx(ref_W(D, est.labels_), rel=1e-8, abs=1e-8)
        assert est.W_ + est.S_ == pytest.approx(D.sum() / (2 * X.shape[0]), rel=1e-8, abs=1e-8)
        assert np.bincount(est.labels_, minlength=k).min() >= 1

    @settings(max_examples=40, deadline=None)
    @given(x=hnp.arrays(np.float64, st.integers(3, 40), elements=st.floats(-1e3, 1e3, allow_nan=False)),
           k=st.integers(2, 3))
    def test_exact_1d_no_worse_than_hartigan(self, x, k):
        assume(k <= x.size)
        assume(np.any(x != x[0]))  # all points identical: an error (issue 30)
        ex = es.energy_clustering(x, k, algorithm="exact-1d")
        ha = es.energy_clustering(x, k, n_init=3, rng=0)
        assert ex.W <= ha.W + 1e-9 * max(1.0, ha.T)
        assert ex.W == pytest.approx(ref_W(ref_rho(x), ex.labels), rel=1e-9, abs=1e-9)


# -- engine='streamed': no n×n matrix, the same partition -----------------------------------

class TestStreamedEngine:
    @staticmethod
    def _mixture(seed=0, n=(300, 260, 240), d=3, scale=1.0):
        rng = np.random.default_rng(seed)
        parts = [rng.normal(1.3 * j, 1.0, (m, d)) for j, m in enumerate(n)]
        return np.vstack(parts) * scale

    @pytest.mark.parametrize("metric, kw", [("energy", {}), ("energy", {"exponent": 0.5}),
                                            ("energy", {"exponent": 2.0}),
                                            ("laplacian", {"sigma": 2.0}), ("gaussian", {"sigma": 1.5})])
    @pytest.mark.parametrize("algorithm", ["hartigan", "lloyd"])
    def test_same_partition_as_matrix(self, metric, kw, algorithm):
        X = self._mixture()
        for init in ("k-means++", "random"):
            a = es.EnergyClustering(3, metric=metric, algorithm=algorithm, init=init, n_init=3,
                                    random_state=4, engine="matrix", **kw).fit(X)
            b = es.EnergyClustering(3, metric=metric, algorithm=algorithm, init=init, n_init=3,
                                    random_state=4, engine="streamed", **kw).fit(X)
            assert np.array_equal(a.labels_, b.labels_) and a.n_iter_ == b.n_iter_
            assert (a.engine_, b.engine_) == ("matrix", "streamed")
            for f in ("W_", "S_", "T_"):
                assert getattr(b, f) == pytest.approx(getattr(a, f), rel=1e-12)

    @pytest.mark.parametrize("scale", [1e-150, 3.0, 1e150])
    @pytest.mark.parametrize("dtype", [np.float64, np.float32])
    @pytest.mark.parametrize("n_threads", [1, 2])
    def test_scales_dtypes_threads(self, scale, dtype, n_threads):
        X = self._mixture(seed=1, scale=scale if dtype == np.float64 else 1.0).astype(dtype)
        a = es.EnergyClustering(3, random_state=2, n_init=2, engine="matrix", n_threads=n_threads).fit(X)
        b = es.EnergyClustering(3, random_state=2, n_init=2, engine="streamed", n_threads=n_threads).fit(X)
        assert np.array_equal(a.labels_, b.labels_)
        assert b.W_ == pytest.approx(a.W_, rel=1e-12)

    def test_centring_pass_as_numpy_blocks(self):
        """centred_gram's compiled pass (threads over rows) gives the bits of the plain
        NumPy sequence (subtract r_i + r_j, add mu, times -1/2), exactly symmetric."""
        from energystats.clustering import _engine as ce

        D = ref_rho(self._mixture(seed=4, scale=3.0))
        r = D.mean(axis=1)
        want = ((D - (r[:, None] + r[None, :])) + r.mean()) * -0.5
        for nt in (1, 2):
            G = ce.centred_gram(D.copy(), nt)
            assert np.array_equal(G, want) and np.array_equal(G, G.T)

    def test_rows_are_the_matrix_rows(self):
        from energystats.clustering import _engine as ce
        from energystats._core._metrics import resolve_metric

        X = self._mixture(seed=3, scale=7.0)
        for met in (resolve_metric("energy", 0.5, 1.0), resolve_metric("laplacian", 1.0, 0.3)):
            G = ce.centred_gram(ce.semimetric_matrix(X, met, 2))
            g = ce.StreamedGram(X, met, 2)
            rows = np.array([0, 5, 799, 400])
            assert np.array_equal(g.rows(rows), G[rows])  # bit for bit
            assert np.array_equal(g.rows(rows, n_threads=1), G[rows])
            assert np.array_equal(g.diag, np.diagonal(G))
            assert np.array_equal(g.rows(np.arange(800)), G)

    def test_W_against_double_loop(self):
        X = self._mixture(seed=5, n=(40, 30, 35))
        b = es.EnergyClustering(3, random_state=0, engine="streamed").fit(X)
        W, S, T = ref_wst(X, b.labels_)
        assert b.W_ == pytest.approx(W, rel=1e-12) and b.S_ == pytest.approx(S, rel=1e-12)

    def test_auto_switches_above_the_matrix_budget(self, monkeypatch):
        from energystats.clustering import _engine as ce

        X = self._mixture(seed=6)
        assert es.EnergyClustering(3, random_state=0).fit(X).engine_ == "matrix"
        monkeypatch.setattr(ce, "MATRIX_BYTES", 8 * 100 * 100)
        est = es.EnergyClustering(3, random_state=0).fit(X)
        assert est.engine_ == "streamed"
        assert es.EnergyClustering(3, random_state=0, algorithm="spectral").fit(X).engine_ == "matrix"
        res = es.energy_clustering(X, 3, rng=0)
        assert res.engine == "streamed" and np.array_equal(res.labels, est.labels_)

    def test_init_labels_and_cluster_test(self):
        X = self._mixture(seed=7, n=(120, 100, 90))
        init = np.arange(X.shape[0]) % 3
        a = es.EnergyClustering(3, init=init, engine="matrix").fit(X)
        b = es.EnergyClustering(3, init=init, engine="streamed").fit(X)
        assert np.array_equal(a.labels_, b.labels_)
        r1 = es.cluster_test(X, 3, n_resamples=9, n_init=2, rng=1, engine="matrix")
        r2 = es.cluster_test(X, 3, n_resamples=9, n_init=2, rng=1, engine="streamed")
        assert r2.pvalue == r1.pvalue
        np.testing.assert_allclose(r2.null_distribution, r1.null_distribution, rtol=1e-12)
        with pytest.warns(es.AntiConservativeWarning):
            r3 = es.cluster_test(X, 3, n_resamples=9, n_init=2, rng=1, engine="streamed", naive=True)
        with pytest.warns(es.AntiConservativeWarning):
            r4 = es.cluster_test(X, 3, n_resamples=9, n_init=2, rng=1, engine="matrix", naive=True)
        np.testing.assert_allclose(r3.null_distribution, r4.null_distribution, rtol=1e-12)

    def test_engine_errors(self):
        X = self._mixture(seed=8, n=(20, 20, 20))
        with pytest.raises(ValueError, match="`engine` must be 'auto', 'matrix' or 'streamed'; got 'gpu'"):
            es.EnergyClustering(3, engine="gpu").fit(X)
        with pytest.raises(ValueError, match="built-in metric"):
            es.EnergyClustering(3, engine="streamed", metric=lambda a, b: abs(a - b).sum()).fit(X)
        with pytest.raises(ValueError, match="'hartigan' or 'lloyd'; got 'spectral'"):
            es.EnergyClustering(3, engine="streamed", algorithm="spectral").fit(X)


# -- approximation='nystrom' ----------------------------------------------------------------

class TestNystrom:
    @staticmethod
    def _held_mixture(n=5000, k=4, d=10, seed=0):
        rng = np.random.default_rng(seed)
        centres = rng.normal(0.0, 2.0, (k, d))
        return centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))

    def test_W_within_a_tenth_of_a_percent_of_exact(self):
        X = self._held_mixture()
        exact = es.EnergyClustering(4, n_init=4, random_state=1).fit(X)
        approx = es.EnergyClustering(4, n_init=4, random_state=1, approximation="nystrom",
                                     n_components=256).fit(X)
        assert approx.engine_ == "nystrom" and approx.n_components_ == 255  # centring: rank r - 1
        assert abs(approx.W_ / exact.W_ - 1.0) < 1e-3
        # and W_ is the exact W of the returned partition, not the approximation's
        disp = es.dispersion(X, approx.labels_)
        assert approx.W_ == pytest.approx(disp.W, rel=1e-12)

    def test_features_reproduce_rho_with_every_point_a_landmark(self):
        from energystats._core._metrics import resolve_metric

        X = self._held_mixture(n=60, d=3, seed=2)
        for met in (resolve_metric("energy", 1.0, 1.0), resolve_metric("gaussian", 1.0, 2.0)):
            feats = ce.NystromFeatures(X, met, 60, np.random.default_rng(0), 1)
            F = feats.F
            D = F @ F.T
            rho = np.diag(D)[:, None] + np.diag(D)[None, :] - 2 * D
            np.testing.assert_allclose(rho, ce.semimetric_matrix(X, met, 1), rtol=0, atol=1e-10)

    @pytest.mark.parametrize("algorithm", ["hartigan", "lloyd"])
    def test_feature_kernel_equals_gram_kernel(self, algorithm):
        X = self._held_mixture(n=600, d=3, seed=3)
        from energystats._core._metrics import resolve_metric

        feats = ce.NystromFeatures(X, resolve_metric("energy", 1.0, 1.0), 40, np.random.default_rng(1), 1)
        G = feats.F @ feats.F.T
        for init, max_iter in (("k-means++", 300), ("random", 300), ("random", 1)):
            # one sweep from random labels: hundreds of moves, each decision on the bookkeeping
            l1, _, it1 = ce.fit_partition(G, 4, algorithm, init, 3, max_iter, np.random.default_rng(7), 1)
            l2, it2 = ce.fit_features(feats.F, feats.g, 4, algorithm, init, 3, max_iter,
                                      np.random.default_rng(7), 1)
            assert np.array_equal(l1, l2) and it1 == it2

    @staticmethod
    def _sweeps_on_features(F, labels, k, prune):
        F = np.ascontiguousarray(F, dtype=float)
        n, r = F.shape
        g = np.einsum("ij,ij->i", F, F)
        tol = 16.0 * np.finfo(float).eps * (n + 1) * max(float(np.max(np.abs(g))), np.finfo(float).tiny)
        lab = np.ascontiguousarray(labels, dtype=np.intp).copy()
        S, Q, sizes = np.empty((k, r)), np.empty(k), np.empty(k, dtype=np.intp)
        audit = np.zeros(2, dtype=np.intp)
        res = _hartigan.hartigan_features(F, g, lab, k, S, Q, sizes, 500, tol, prune=prune,
                                          audit=audit if prune else None)
        return (lab, S, Q, sizes), res + tuple(audit)

    def test_pruned_sweeps_make_the_same_decisions(self):
        # skipping the visits that the bounds rule out changes no decision: the same labels,
        # sums of features (every bit), sweeps and moves as visiting every point
        rng = np.random.default_rng(11)
        cases = []
        for n, r, k, sep in ((3000, 8, 4, 0.6), (2000, 3, 6, 0.3), (1500, 16, 2, 0.1), (800, 2, 3, 2.0)):
            centres = rng.normal(0.0, sep, (k, r))  # overlapping mixtures: many sweeps of drift
            cases.append((centres[rng.integers(0, k, n)] + rng.normal(size=(n, r)), k))
        base = rng.normal(size=(300, 4))
        cases += [(np.repeat(base, 3, axis=0), 3),         # every point three times
                  (1e-150 * base, 3), (1e140 * base, 3),  # the scale extremes
                  (1e154 * base, 3)]                      # S · S overflows: no visit skipped
        cases = [(F, k, ce.random_labels(F.shape[0], k, np.random.default_rng(seed)))
                 for F, k in cases for seed in range(3)]
        for seed in range(12):
            # a dense grid started from a wrong split: boundaries sweep across it, some clusters
            # only losing points, others only gaining
            F = rng.uniform(size=(2000, 1 + seed % 3))
            F[:, 0] = np.linspace(0.0, 1.0, 2000)[rng.permutation(2000)]
            k = 2 + seed % 3
            cases.append((F, k, np.searchsorted(np.sort(rng.uniform(0.0, 0.5, k - 1)), F[:, 0])))
        visits = {False: 0, True: 0}
        audited = 0
        for F, k, labels in cases:
            full, rf = self._sweeps_on_features(F, labels, k, False)
            pruned, rp = self._sweeps_on_features(F, labels, k, True)
            for a, b in zip(full, pruned):
                assert np.array_equal(a, b)
            assert rf[:3] == rp[:3] and rp[3] <= rf[3]
            # every bound checked at a skipped visit held (computed distances within them)
            assert rp[5] == 0
            visits[False] += rf[3]
            visits[True] += rp[3]
            audited += rp[4]
        assert visits[True] < 0.7 * visits[False]  # and the bounds do skip visits
        assert audited == visits[False] - visits[True]

    def test_reproducible_and_recorded(self):
        X = self._held_mixture(n=800, d=4, seed=4)
        a = es.EnergyClustering(3, random_state=5, approximation="nystrom", n_components=32).fit(X)
        b = es.EnergyClustering(3, random_state=5, approximation="nystrom", n_components=32).fit(X)
        assert np.array_equal(a.labels_, b.labels_) and np.array_equal(a.landmarks_, b.landmarks_)
        assert a.landmarks_.size == 32 and np.unique(a.landmarks_).size == 32
        assert a.W_ == pytest.approx(es.dispersion(X, a.labels_).W, rel=1e-12)  # the exact W
        W, S, T = ref_wst(X[:120], a.labels_[:120])  # and dispersion is the definition (a subset)
        assert es.dispersion(X[:120], a.labels_[:120]).W == pytest.approx(W, rel=1e-12)
        res = es.energy_clustering(X, 3, rng=5, approximation="nystrom", n_components=32)
        assert res.engine == "nystrom" and np.array_equal(res.labels, a.labels_)

    def test_errors(self):
        X = self._held_mixture(n=50, d=2, seed=6)
        with pytest.raises(ValueError, match="`approximation` must be None or 'nystrom'; got 'rff'"):
            es.EnergyClustering(2, approximation="rff").fit(X)
        with pytest.raises(ValueError, match="precomputed"):
            es.EnergyClustering(2, approximation="nystrom", metric="precomputed").fit(
                es.pairwise(X))
        with pytest.raises(ValueError, match="'hartigan' or 'lloyd'; got 'spectral'"):
            es.EnergyClustering(2, approximation="nystrom", algorithm="spectral").fit(X)
        with pytest.raises(ValueError, match="`n_components` must be an integer >= 1; got 0"):
            es.EnergyClustering(2, approximation="nystrom", n_components=0).fit(X)
        with pytest.raises(ValueError, match="leave `engine='auto'`"):
            es.EnergyClustering(2, approximation="nystrom", engine="streamed").fit(X)
        with pytest.raises(ValueError, match="leave `engine='auto'`"):
            es.EnergyClustering(2, approximation="nystrom", engine="matrix").fit(X)
        with pytest.raises(ValueError, match="has rank 0, fewer than n_clusters=2"):
            es.EnergyClustering(2, approximation="nystrom", n_components=1).fit(X)


# -- issue 30: the exact W of a Nyström fit on first access; scales; identical points ------

class TestLazyExactW:
    """A Nyström ``fit`` costs what the approximation costs: the exact W, S, T of its partition
    (one O(n²·d) pass of the streamed k×k sums) are computed on first access and kept."""

    @staticmethod
    def _counting(monkeypatch):
        from energystats._core import _engine

        calls = []
        real = _engine.streamed_group_sums

        def counted(*args, **kwargs):
            calls.append(args[0].shape[0])  # the rows summed over: all n of them
            return real(*args, **kwargs)

        monkeypatch.setattr(_engine, "streamed_group_sums", counted)
        return calls

    def test_fit_does_not_compute_the_exact_W(self, monkeypatch):
        X = TestNystrom._held_mixture(n=1500, d=3, seed=8)
        calls = self._counting(monkeypatch)
        est = es.EnergyClustering(3, n_init=2, random_state=2, approximation="nystrom",
                                  n_components=32).fit(X)
        assert calls == []  # no O(n²) kernel call in fit
        assert est.labels_.shape == (1500,) and est.n_components_ == 31
        W = est.W_
        assert calls == [1500]  # the first access computes it once ...
        assert (est.S_, est.T_, est.dispersion_.W, est.W_) == (est.S_, est.T_, W, W)
        est.predict(X[:3])
        assert calls == [1500]  # ... and it is kept
        assert W == pytest.approx(ref_W(ref_rho(X), est.labels_), rel=1e-10)  # the exact W

    def test_lazy_value_is_the_eager_one_bit_for_bit(self):
        X = TestNystrom._held_mixture(n=900, d=4, seed=9)
        est = es.EnergyClustering(3, n_init=2, random_state=3, approximation="nystrom",
                                  n_components=24, n_threads=2).fit(X)
        # energy_clustering computes W, S, T at once, as fit did before (the same partition)
        res = es.energy_clustering(X, 3, n_init=2, rng=3, approximation="nystrom", n_components=24,
                                   n_threads=2)
        assert np.array_equal(res.labels, est.labels_)
        d = est.dispersion_
        assert (est.W_, est.S_, est.T_) == (res.W, res.S, res.T)
        assert d.F == res.F and np.array_equal(d.g, res.dispersion.g)
        assert np.array_equal(d.sizes, res.sizes) and d.groups == res.dispersion.groups

    def test_pickle_clone_and_unfitted(self):
        import pickle

        X = TestNystrom._held_mixture(n=400, d=2, seed=10)
        est = es.EnergyClustering(2, n_init=2, random_state=4, approximation="nystrom",
                                  n_components=16)
        assert not hasattr(est, "W_") and not hasattr(est, "dispersion_")
        est.fit(X)
        before = pickle.loads(pickle.dumps(est))  # pickled before the first access
        W = est.W_
        after = pickle.loads(pickle.dumps(est))
        assert before.W_ == W and after.W_ == W and before.T_ == est.T_
        assert np.array_equal(before.predict(X[:5]), est.predict(X[:5]))
        sklearn = pytest.importorskip("sklearn")
        from sklearn.base import clone

        c = clone(est)
        assert c.get_params() == est.get_params() and not hasattr(c, "W_") and sklearn
        assert c.fit(X).W_ == W
        # an exact fit keeps computing them in fit
        exact = es.EnergyClustering(2, n_init=2, random_state=4).fit(X)
        assert "_dispersion" in vars(exact) and vars(exact)["_dispersion"] is not None


def _run_cli(*args):
    """``python -m energystats *args`` from this checkout; (returncode, stdout, stderr)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ)
    root = str(Path(es.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "energystats", *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def _scaled_mixture(seed=0, n=60, wide=20000.0):
    """Two groups 8 sd apart in column 'a' (sd 1 within a group) and a noise column 'b' of sd
    ``wide``: raw, the distances are those of 'b' and the clusters split it; z-scored, 'a' wins."""
    rng = np.random.default_rng(seed)
    truth = np.repeat([0, 1], n // 2)
    a = rng.normal(0.0, 1.0, n) + 8.0 * truth
    b = rng.normal(0.0, wide, n)
    return pd.DataFrame({"a": a, "b": b}), truth


class TestColumnScales:
    def _warning(self):
        return es.ColumnScaleWarning

    def test_warns_naming_the_columns_and_the_ratio(self):
        df, _ = _scaled_mixture()
        sd = df.to_numpy().std(axis=0)
        ratio = f"{sd[1] / sd[0]:.3g}"
        for call in (lambda: es.EnergyClustering(2, n_init=2, random_state=0).fit(df),
                     lambda: es.energy_clustering(df, 2, n_init=2, rng=0),
                     lambda: es.cluster_test(df, 2, n_resamples=3, n_init=1, rng=0),
                     lambda: es.EnergyClustering(2, n_init=1, random_state=0).test(df, n_resamples=2, rng=0)):
            with pytest.warns(self._warning()) as rec:
                call()
            msgs = [str(w.message) for w in rec if issubclass(w.category, self._warning())]
            assert len(msgs) == 1, msgs
            assert "'b'" in msgs[0] and "'a'" in msgs[0] and ratio in msgs[0], msgs[0]
            assert "standardi" in msgs[0] and rec[0].filename == __file__  # the caller's line
        # arrays: the columns by position
        with pytest.warns(self._warning(), match="column 1 .* column 0"):
            es.energy_clustering(df.to_numpy(), 2, n_init=1, rng=0)

    def test_no_warning_below_the_ratio_or_for_distances(self):
        import warnings

        df, _ = _scaled_mixture()
        sd = df.to_numpy().std(axis=0)
        below = df.assign(b=df.b * (999.0 * sd[0] / sd[1]))  # a ratio of 999
        assert es.clustering.column_scale_message(below.to_numpy()) is None
        const = df.assign(c=7.0)  # a constant column has no scale: not compared
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            es.energy_clustering(below, 2, n_init=1, rng=0)
            es.energy_clustering(df.assign(b=df.b / 20000.0, c=7.0), 2, n_init=1, rng=0)
            es.energy_clustering(df[["a"]], 2, n_init=1, rng=0)
            es.energy_clustering(es.pairwise(df.to_numpy()), 2, metric="precomputed", n_init=1, rng=0)
        with pytest.warns(self._warning()):
            es.energy_clustering(const, 2, n_init=1, rng=0)

    def test_cli_standardize(self, tmp_path):
        df, truth = _scaled_mixture(seed=1)
        path = tmp_path / "scales.csv"
        df.to_csv(path, index=False)
        rc, out, err = _run_cli("cluster", path, "-k", "2", "--seed", "0", "--format", "json",
                                "--out", tmp_path / "raw.csv")
        assert rc == 0, err
        assert "warning (ColumnScaleWarning)" in err and "--standardize" in err and "'b'" in err
        raw = json.loads(out)
        assert raw["standardize"] is None
        acc_raw = es.clustering_accuracy(truth, pd.read_csv(tmp_path / "raw.csv")["cluster"])
        rc, out, err = _run_cli("cluster", path, "-k", "2", "--seed", "0", "--format", "json",
                                "--standardize", "--out", tmp_path / "z.csv")
        assert rc == 0, err
        assert "ColumnScaleWarning" not in err
        res = json.loads(out)
        labels = pd.read_csv(tmp_path / "z.csv")
        # the input rows are written as they are; only the clustering used z-scores
        pd.testing.assert_frame_equal(labels.drop(columns="cluster"), df, check_dtype=False)
        acc_z = es.clustering_accuracy(truth, labels["cluster"])
        assert acc_z == 1.0 and acc_raw < 0.8, (acc_raw, acc_z)
        # recorded: each column's mean and sd (divisor n - 1), by plain loops
        n = len(df)
        for c in ("a", "b"):
            m = sum(df[c]) / n
            s = (sum((v - m) ** 2 for v in df[c]) / (n - 1)) ** 0.5
            assert res["standardize"]["mean"][c] == pytest.approx(m, rel=1e-12)
            assert res["standardize"]["sd"][c] == pytest.approx(s, rel=1e-12)
        # and W, S, T are those of the z-scores
        Z = np.column_stack([(df[c] - res["standardize"]["mean"][c]) / res["standardize"]["sd"][c]
                             for c in ("a", "b")])
        W, S, T = ref_wst(Z, labels["cluster"].to_numpy())
        assert [res["partition"][v] for v in "WST"] == pytest.approx([W, S, T], rel=1e-9)
        # text output says so too
        rc, out, err = _run_cli("cluster", path, "-k", "2", "--seed", "0", "--standardize", "-q")
        assert rc == 0, err
        assert "standardized" in out and "sd" in out
        # a constant column cannot be scaled: an error naming it
        df.assign(c=3.0).to_csv(path, index=False)
        rc, out, err = _run_cli("cluster", path, "-k", "2", "--standardize", "-q")
        assert rc == 2 and "--standardize" in err and "'c'" in err and "constant" in err, err


class TestIdenticalPoints:
    """All points identical: every partition has W = S = T = 0, nothing to cluster: an error
    (it returned F = NaN and sizes [39, 1])."""

    @pytest.mark.parametrize("kw", [{}, {"algorithm": "lloyd"}, {"algorithm": "spectral"},
                                    {"algorithm": "exact-1d"}, {"engine": "streamed"},
                                    {"approximation": "nystrom"}, {"metric": "gaussian"}])
    def test_one_constant_column(self, kw):
        x = np.full(40, 2.5)
        with pytest.raises(ValueError, match=r"`X`: all 40 rows are identical .*nothing to cluster"):
            es.energy_clustering(x, 2, rng=0, **kw)
        with pytest.raises(ValueError, match=r"all 40 rows are identical"):
            es.EnergyClustering(2, random_state=0, **kw).fit(pd.DataFrame({"c": x}))

    def test_identical_rows_and_zero_distances(self):
        X = np.tile([1.0, -3.0, 7.0], (12, 1))
        with pytest.raises(ValueError, match="all 12 rows are identical"):
            es.EnergyClustering(3).fit(X)
        with pytest.raises(ValueError, match=r"every distance in `X` is 0 .*12 points"):
            es.EnergyClustering(2, metric="precomputed").fit(np.zeros((12, 12)))
        # two distinct points are enough to cluster
        X[0, 2] = 7.5
        assert es.EnergyClustering(2, random_state=0).fit(X).labels_.tolist() == [0] + [1] * 11

    def test_cli(self, tmp_path):
        path = tmp_path / "const.csv"
        pd.DataFrame({"c": [1.5] * 40}).to_csv(path, index=False)
        rc, out, err = _run_cli("cluster", path, "-k", "2", "-q")
        assert rc == 2 and "all 40 rows are identical" in err and "Traceback" not in err, err
