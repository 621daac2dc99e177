"""distance_correlation_screen (DC-SIS): each feature's value against the per-column calls
bit for bit and against a plain double-loop reference; the shared-permutation p-values against
independence_test; the iterative rounds against a hand-made residualisation; Dask; validation."""
import math

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats.dependence import _screening

pytestmark = [pytest.mark.filterwarnings("ignore:with \\d+ permutations"),
              pytest.mark.filterwarnings("ignore:constant feature")]


def _dcor_loops(x, y):
    """dCor (V, the root) of two 1-D samples by explicit double loops."""
    n = len(x)
    a = [[abs(x[i] - x[j]) for j in range(n)] for i in range(n)]
    b = [[abs(y[i] - y[j]) for j in range(n)] for i in range(n)]

    def centred(m):
        r = [sum(row) / n for row in m]
        g = sum(r) / n
        return [[m[i][j] - r[i] - r[j] + g for j in range(n)] for i in range(n)]

    A, B = centred(a), centred(b)
    ab = sum(A[i][j] * B[i][j] for i in range(n) for j in range(n))
    aa = sum(A[i][j] ** 2 for i in range(n) for j in range(n))
    bb = sum(B[i][j] ** 2 for i in range(n) for j in range(n))
    return math.sqrt(max(ab, 0.0) / math.sqrt(aa * bb))


def _data(n=120, p=40, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 2 % p] ** 2 + np.abs(X[:, 5 % p]) + 0.5 * rng.normal(size=n)
    if ties:
        X[:, ::3] = np.round(X[:, ::3])
        y = np.round(2 * y) / 2
    return X, y


class TestDistanceCorrelationScreen:
    @pytest.mark.parametrize("n", [2, 3, 7, 120, 301])
    @pytest.mark.parametrize("ties", [False, True])
    def test_each_feature_equals_the_sorted_call_bit_for_bit(self, n, ties):
        X, y = _data(n=n, p=25, seed=n, ties=ties)
        X[:, 1] *= 1e-200        # working units: tiny and huge columns are scaled exactly
        X[:, 4] *= 1e200
        res = es.distance_correlation_screen(X, y, top=1)
        assert res.method == "sorted"
        for j in range(X.shape[1]):
            if np.all(X[:, j] == X[0, j]):
                continue
            ref = es.distance_stats(X[:, j], y, method="sorted").dcor
            assert res.statistic[j] == ref, j
            assert res.statistic[j] == pytest.approx(es.distance_correlation(X[:, j], y), rel=1e-13,
                                                     abs=1e-15)

    def test_against_double_loops(self):
        X, y = _data(n=30, p=6, seed=3, ties=True)
        res = es.distance_correlation_screen(X, y)
        for j in range(6):
            assert res.statistic[j] == pytest.approx(_dcor_loops(X[:, j], y), rel=1e-12)

    @pytest.mark.parametrize("kw", [dict(exponent=0.5), dict(metric="cityblock"), dict()])
    def test_columns_path_equals_distance_correlation(self, kw):
        X, y = _data(n=60, p=8, seed=4)
        Y = np.column_stack([y, np.sin(3 * X[:, 0])]) if not kw else y
        res = es.distance_correlation_screen(X, Y, **kw)
        assert res.method == ("columns" if (kw or Y.ndim == 2) and kw != dict(metric="cityblock")
                              or Y.ndim == 2 else res.method)
        for j in range(8):
            assert res.statistic[j] == es.distance_correlation(X[:, j], Y, **kw), j

    def test_float32_and_n_threads(self):
        X, y = _data(n=200, p=30, seed=5)
        a = es.distance_correlation_screen(X, y, n_threads=1).statistic.to_numpy()
        b = es.distance_correlation_screen(X, y, n_threads=2).statistic.to_numpy()
        assert np.array_equal(a, b)
        c = es.distance_correlation_screen(X.astype(np.float32), y).statistic.to_numpy()
        ref = [es.distance_stats(X[:, j].astype(np.float32), y, method="sorted").dcor for j in range(30)]
        np.testing.assert_allclose(c, ref, rtol=1e-14)

    def test_ranking_selection_and_frame(self):
        X, y = _data(n=150, p=40, seed=6)
        df = pd.DataFrame(X).add_prefix("g")
        res = es.distance_correlation_screen(df, y, top=4)
        order = np.argsort(-res.statistic.to_numpy(), kind="stable")
        assert res.ranking == [f"g{j}" for j in order]
        assert res.selected == res.ranking[:4]
        assert set(res.selected[:2]) == {"g2", "g5"}
        f = res.to_frame()
        assert list(f.index) == res.ranking and list(f["rank"]) == list(range(1, 41))
        assert f["selected"].sum() == 4 and (f["round"].dropna() == 1).all()
        assert res.top == 4 and "top=4" in repr(res)

    def test_default_top_is_n_over_log_n(self):
        X, y = _data(n=100, p=40)
        assert es.distance_correlation_screen(X, y).top == math.floor(100 / math.log(100))

    # -- p-values ------------------------------------------------------------------------
    @pytest.mark.parametrize("ties", [False, True])
    def test_pvalues_equal_independence_test(self, ties):
        X, y = _data(n=80, p=12, seed=7, ties=ties)
        res = es.distance_correlation_screen(X, y, pvalue="permutation", n_resamples=199, rng=11)
        assert res.seed == 11 and res.n_resamples == 199 and not res.exact
        for j in range(12):
            assert res.pvalue[j] == es.independence_test(X[:, j], y, n_resamples=199, rng=11).pvalue, j

    def test_columns_path_pvalues_equal_independence_test(self):
        X, y = _data(n=50, p=5, seed=8)
        Y = np.column_stack([y, X[:, 0] ** 2])
        res = es.distance_correlation_screen(X, Y, pvalue="permutation", n_resamples=99, rng=2)
        for j in range(5):
            assert res.pvalue[j] == es.independence_test(X[:, j], Y, n_resamples=99, rng=2).pvalue

    def test_exact_enumeration(self):
        X, y = _data(n=5, p=4, seed=9)
        res = es.distance_correlation_screen(X, y, pvalue="permutation", n_resamples=200, adjust=None)
        assert res.exact and res.n_resamples == 120 and res.seed is None
        for j in range(4):
            assert res.pvalue[j] == es.independence_test(X[:, j], y, n_resamples=200).pvalue

    def test_permuted_statistic_against_centred_matrices(self):
        """The kernel's value + a.. b.. / n² is Σ A_ij B_π(i)π(j) of the double-centred matrices."""
        X, y = _data(n=40, p=3, seed=10, ties=True)
        perms = np.array([np.random.default_rng(s).permutation(40) for s in range(5)])
        obs, null, tol = _screening.sorted_null(X, y, perms, 1)
        xw = _screening._working_columns(X)
        yw = _screening._working_y(y)[0]
        b = np.abs(yw[:, None] - yw[None, :])
        for j in range(3):
            a = np.abs(xw[j][:, None] - xw[j][None, :])
            A = a - a.mean(0) - a.mean(1)[:, None] + a.mean()
            const = a.sum() * b.sum() / 40**2
            for r, pi in enumerate(np.vstack([np.arange(40), perms])):
                bp = b[np.ix_(pi, pi)]
                B = bp - bp.mean(0) - bp.mean(1)[:, None] + bp.mean()
                val = obs[j] if r == 0 else null[j, r - 1]
                assert val + const == pytest.approx(np.sum(A * B), rel=1e-11, abs=1e-9 * const)
            assert 0 < tol[j] < 1e-9 * const

    def test_adjustment_and_unreachable_warning(self):
        X, y = _data(n=60, p=30, seed=12)
        with pytest.warns(UserWarning, match="adjusted p-value"):
            res = es.distance_correlation_screen(X, y, pvalue="permutation", n_resamples=99,
                                                 adjust="holm", rng=1)
        p = res.pvalue.to_numpy()
        order = np.argsort(p, kind="stable")
        holm = np.minimum(np.maximum.accumulate((30 - np.arange(30)) * p[order]), 1.0)
        np.testing.assert_array_equal(res.adjusted.to_numpy()[order], holm)

    # -- iterative screening -------------------------------------------------------------
    def test_rounds_residualise_the_rest_on_the_chosen(self):
        X, y = _data(n=100, p=20, seed=13)
        res = es.distance_correlation_screen(X, y, top=5, rounds=2)
        first = res.ranking[:3]
        assert res.selected[:3] == first
        rest = [j for j in range(20) if j not in first]
        S = np.column_stack([np.ones(100), X[:, first]])
        R = X[:, rest] - S @ np.linalg.lstsq(S, X[:, rest], rcond=None)[0]
        d = [es.distance_stats(R[:, k], y, method="sorted").dcor for k in range(len(rest))]
        second = [rest[k] for k in np.argsort(-np.array(d), kind="stable")[:2]]
        assert res.selected[3:] == second
        assert list(res.selection_round.dropna()) == [1, 1, 1, 2, 2] or \
            sorted(res.selection_round.dropna()) == [1, 1, 1, 2, 2]

    def test_rounds_find_a_feature_masked_marginally(self):
        """y = x0 − x1 with x1 = x0 + noise: x1 alone is weakly related to y (the marginal
        screen ranks it low); after x0 is chosen its residual is the noise, which is y."""
        rng = np.random.default_rng(14)
        n = 200
        x0 = rng.normal(size=n)
        x1 = x0 + 0.3 * rng.normal(size=n)
        X = np.column_stack([x0, x1, rng.normal(size=(n, 30))])
        y = 4 * x0 - 4 * x1 + 0.6 * x0 + 0.2 * rng.normal(size=n)
        one = es.distance_correlation_screen(X, y, top=2)
        two = es.distance_correlation_screen(X, y, top=2, rounds=2)
        assert 1 in two.selected
        assert one.ranking.index(1) >= one.ranking.index(0)

    # -- Dask ------------------------------------------------------------------------------
    def test_dask_same_bits(self, client, monkeypatch):
        monkeypatch.setattr(_screening, "DASK_COLUMNS", 7)    # 5 tasks
        X, y = _data(n=90, p=30, seed=15)
        a = es.distance_correlation_screen(X, y, pvalue="permutation", n_resamples=49, rng=3)
        b = es.distance_correlation_screen(X, y, pvalue="permutation", n_resamples=49, rng=3,
                                           backend="dask")
        assert np.array_equal(a.statistic, b.statistic) and np.array_equal(a.pvalue, b.pvalue)

    # -- input -----------------------------------------------------------------------------
    def test_dataframe_columns_and_x_none(self):
        X, y = _data(n=50, p=5, seed=16)
        df = pd.DataFrame(X, columns=list("abcde")).assign(target=y)
        a = es.distance_correlation_screen(None, "target", data=df, top=2)
        b = es.distance_correlation_screen(list("abcde"), "target", data=df, top=2)
        assert list(a.statistic.index) == list("abcde") and a.columns_y == ["target"]
        assert a.statistic.equals(b.statistic)

    def test_constant_feature_is_nan_and_last(self):
        X, y = _data(n=50, p=5, seed=17)
        X[:, 1] = 3.0
        with pytest.warns(UserWarning, match="constant feature"):
            res = es.distance_correlation_screen(X, y, top=2, pvalue="permutation", n_resamples=19, rng=0)
        assert math.isnan(res.statistic[1]) and res.ranking[-1] == 1 and res.constant == [1]
        assert math.isnan(res.pvalue[1])

    # -- input validation --
    @pytest.mark.parametrize("kw, match", [
        (dict(top=0), "`top` must be an integer in \\[1, p=5\\]; got 0"),
        (dict(top=2.0), "`top`"),
        (dict(rounds=3, top=2), "`rounds` must be an integer in \\[1, top=2\\]; got 3"),
        (dict(pvalue="ttest"), "`pvalue` must be None or 'permutation'; got 'ttest'"),
        (dict(adjust="bonferroni"), "`adjust`"),
        (dict(alpha=2), "`alpha`"),
        (dict(metric="precomputed"), "precomputed"),
    ])
    def test_bad_arguments(self, kw, match):
        X, y = _data(n=30, p=5)
        with pytest.raises(ValueError, match=match):
            es.distance_correlation_screen(X, y, **kw)

    def test_bad_inputs(self):
        X, y = _data(n=30, p=5)
        with pytest.raises(ValueError, match="same number of rows"):
            es.distance_correlation_screen(X, y[:-1])
        with pytest.raises(ValueError, match="`y` is constant"):
            es.distance_correlation_screen(X, np.ones(30))
        with pytest.raises(ValueError, match="different indexes"):
            es.distance_correlation_screen(pd.DataFrame(X), pd.Series(y, index=np.arange(30) + 1))
        with pytest.raises(TypeError, match="`data` must be a DataFrame"):
            es.distance_correlation_screen(None, y)
        with pytest.raises(ValueError, match="`X` must|finite|NaN"):
            X[0, 0] = np.nan
            es.distance_correlation_screen(X, y)
