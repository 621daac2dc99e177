"""DistanceCorrelationSelector (issue 52): scikit-learn's estimator checks; the first round equal to
distance_correlation_screen and to SelectKBest(distance_correlation_scores); the iterative rounds
against a plain-NumPy projection and dCor; a feature independent of y on its own found in round 2
(and the interaction that the rounds cannot find); a Pipeline on a nonlinear design; validation;
the package without scikit-learn."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import energystats as es

try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # pragma: no cover - the test extra has scikit-learn
    parametrize_with_checks = None

needs_sklearn = pytest.mark.skipif(parametrize_with_checks is None, reason="needs scikit-learn")
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _dcor(x, y):
    """dCor (V-statistic, the root) by double-centred distance matrices, plain NumPy."""
    def centred(v):
        v = v.reshape(len(v), -1)
        d = np.sqrt(((v[:, None, :] - v[None, :, :]) ** 2).sum(-1))
        return d - d.mean(0) - d.mean(1)[:, None] + d.mean()

    A, B = centred(x), centred(y)
    return np.sqrt(max((A * B).mean(), 0.0) / np.sqrt((A * A).mean() * (B * B).mean()))


def _projected(X, chosen, rest):
    """The remaining columns on the orthogonal complement of the chosen ones, centred design:
    Xr - Xs (Xs'Xs)^+ Xs'Xr (the pseudo-inverse, not a least-squares solver)."""
    Xc = X - X.mean(axis=0)
    S, R = Xc[:, chosen], Xc[:, rest]
    return R - S @ np.linalg.pinv(S.T @ S) @ S.T @ R


def _iterative_reference(X, y, k, rounds):
    """The iterative DC-SIS of the docstring's Notes, from the two helpers above."""
    sizes = [k // rounds + (1 if r < k % rounds else 0) for r in range(rounds)]
    p = X.shape[1]
    d = np.array([_dcor(X[:, j], y) for j in range(p)])
    chosen = list(np.argsort(-d, kind="stable")[:sizes[0]])
    for size in sizes[1:]:
        rest = [j for j in range(p) if j not in chosen]
        P = _projected(X, chosen, rest)
        dr = np.array([_dcor(P[:, i], y) for i in range(len(rest))])
        chosen += [rest[i] for i in np.argsort(-dr, kind="stable")[:size]]
    return [int(j) for j in chosen]


def _nonlinear(seed=0, n=200, p=50):
    g = np.random.default_rng(seed)
    X = g.normal(size=(n, p))
    y = X[:, 0] ** 2 + np.sin(2 * X[:, 1]) + np.abs(X[:, 2]) + 0.3 * g.normal(size=n)
    return X, y


def _order(sel):
    """The features by ranking_ (chosen first, in the order chosen)."""
    return np.argsort(sel.ranking_, kind="stable").tolist()


# -- scikit-learn's checks -------------------------------------------------------------------

if parametrize_with_checks is not None:
    @parametrize_with_checks([es.DistanceCorrelationSelector(),
                              es.DistanceCorrelationSelector(k="all", pvalues=False)])
    def test_sklearn_estimator_checks(estimator, check):
        check(estimator)


@needs_sklearn
class TestDistanceCorrelationSelector:

    # -- the first round is DC-SIS ---------------------------------------------------------
    @pytest.mark.parametrize("k", [1, 5, 20])
    def test_first_round_is_the_screen_and_select_k_best(self, k):
        from sklearn.feature_selection import SelectKBest

        X, y = _nonlinear(seed=1, n=120, p=20)
        sel = es.DistanceCorrelationSelector(k=k).fit(X, y)
        res = es.distance_correlation_screen(X, y, top=k)
        assert _order(sel)[:k] == res.selected and _order(sel) == res.ranking
        np.testing.assert_array_equal(sel.scores_, res.statistic.to_numpy())
        scores, pvalues = es.distance_correlation_scores(X, y)
        np.testing.assert_array_equal(sel.scores_, scores)
        np.testing.assert_array_equal(sel.pvalues_, pvalues)
        best = SelectKBest(es.distance_correlation_scores, k=k).fit(X, y)
        np.testing.assert_array_equal(sel.get_support(), best.get_support())
        assert sel.k_ == k and sel.support_.sum() == k
        np.testing.assert_array_equal(sel.selection_round_, sel.support_.astype(int))

    def test_scores_against_plain_numpy(self):
        X, y = _nonlinear(seed=2, n=60, p=6)
        sel = es.DistanceCorrelationSelector(pvalues=False).fit(X, y)
        want = [_dcor(X[:, j], y) for j in range(6)]
        np.testing.assert_allclose(sel.scores_, want, rtol=1e-12)
        assert sel.pvalues_ is None

    def test_default_k_is_n_over_log_n(self):
        X, y = _nonlinear(seed=3, n=200, p=50)
        assert es.DistanceCorrelationSelector().fit(X, y).k_ == int(200 / np.log(200))   # 37
        assert es.DistanceCorrelationSelector().fit(X[:, :10], y).k_ == 10
        assert es.DistanceCorrelationSelector(k="all").fit(X, y).support_.all()

    # -- iterative rounds ----------------------------------------------------------------
    @pytest.mark.parametrize("k, rounds", [(5, 2), (6, 3), (4, 4)])
    def test_rounds_against_plain_numpy_projection(self, k, rounds):
        X, y = _nonlinear(seed=4, n=80, p=15)
        sel = es.DistanceCorrelationSelector(k=k, n_rounds=rounds, pvalues=False).fit(X, y)
        assert _order(sel)[:k] == _iterative_reference(X, y, k, rounds)
        sizes = [k // rounds + (1 if r < k % rounds else 0) for r in range(rounds)]
        want_rounds = np.repeat(np.arange(1, rounds + 1), sizes)
        np.testing.assert_array_equal(sel.selection_round_[_order(sel)[:k]], want_rounds)
        # scores_ stay the marginal ones; the rest of ranking_ follows them
        marginal = es.DistanceCorrelationSelector(k=k, pvalues=False).fit(X, y)
        np.testing.assert_array_equal(sel.scores_, marginal.scores_)
        tail = _order(sel)[k:]
        assert np.all(np.diff(sel.scores_[tail]) <= 0)

    def test_projection_equals_least_squares_residuals_with_intercept(self):
        """The Notes' formula is what the screen computes: pinv on the centred columns equals the
        intercept least squares residuals of distance_correlation_screen (to rounding)."""
        X, _ = _nonlinear(seed=5, n=70, p=9)
        X += np.arange(9) * 3.0                     # non-zero means: the intercept matters
        chosen, rest = [0, 4], [1, 2, 3, 5, 6, 7, 8]
        S = np.column_stack([np.ones(70), X[:, chosen]])
        lsq = X[:, rest] - S @ np.linalg.lstsq(S, X[:, rest], rcond=None)[0]
        np.testing.assert_allclose(_projected(X, chosen, rest), lsq, atol=1e-12)
        # without centring it is another projection (the means leak in)
        raw = X[:, rest] - X[:, chosen] @ np.linalg.pinv(X[:, chosen]) @ X[:, rest]
        assert np.max(np.abs(raw - lsq)) > 0.1

    def test_round_two_finds_a_feature_independent_of_y_on_its_own(self):
        """x1 = u, x0 = u + v, y = v + noise: x1 is independent of y (its marginal rank is
        among the noise), but after x0 is chosen its residual (u - v)/2 carries y."""
        g = np.random.default_rng(6)
        n = 200
        u, v = g.normal(size=n), g.normal(size=n)
        X = np.column_stack([u + v, u, g.normal(size=(n, 30))])
        y = v + 0.2 * g.normal(size=n)
        one = es.DistanceCorrelationSelector(k=2).fit(X, y)
        assert one.ranking_[1] > 10 and one.pvalues_[1] > 0.05 and not one.support_[1]
        two = es.DistanceCorrelationSelector(k=2, n_rounds=2).fit(X, y)
        assert two.get_support(indices=True).tolist() == [0, 1]
        assert two.selection_round_[[0, 1]].tolist() == [1, 2]

    def test_rounds_do_not_find_a_pure_interaction(self):
        """What the scheme cannot do (said in the Notes): y = sign(x0 x1) with x0, x1
        independent; each is independent of y, and neither's residual on the other (nor on
        noise) changes that, while the pair is strongly related to y."""
        g = np.random.default_rng(7)
        n = 200
        X = g.normal(size=(n, 20))
        y = np.sign(X[:, 0] * X[:, 1]) + 0.1 * g.normal(size=n)
        assert _dcor(X[:, :2], y) > 2 * max(_dcor(X[:, 0], y), _dcor(X[:, 1], y))
        sel = es.DistanceCorrelationSelector(k=4, n_rounds=4).fit(X, y)
        assert not sel.support_[0] and not sel.support_[1]

    def test_a_linear_combination_of_the_chosen_is_not_chosen_again(self):
        X, y = _nonlinear(seed=8, n=100, p=10)
        X[:, 9] = 0.3 * X[:, 0] + X[:, 1] + X[:, 2] + 1.0   # 4th on its own
        assert es.DistanceCorrelationSelector(k=5).fit(X, y).support_[9]
        # sizes 3, 2: round 1 takes 0, 1, 2; nothing of x9 is left (its residual is rounding,
        # whose dCor with y could be anything): never chosen in round 2
        assert np.max(np.abs(_projected(X, [0, 1, 2], [9]))) < 1e-12
        sel = es.DistanceCorrelationSelector(k=5, n_rounds=2).fit(X, y)
        assert _order(sel)[:3] == [0, 1, 2] and not sel.support_[9] and sel.ranking_[9] == 6

    # -- in a Pipeline --------------------------------------------------------------------
    def test_pipeline_on_a_nonlinear_design_picks_the_active_features(self):
        from sklearn.linear_model import LinearRegression
        from sklearn.pipeline import make_pipeline

        X, y = _nonlinear()
        pipe = make_pipeline(es.DistanceCorrelationSelector(k=3), LinearRegression()).fit(X, y)
        assert pipe[0].get_support(indices=True).tolist() == [0, 1, 2]
        direct = LinearRegression().fit(X[:, :3], y)
        np.testing.assert_allclose(pipe.predict(X), direct.predict(X[:, :3]), rtol=1e-12)
        # the default k (n / log n = 37 of 50) keeps them too
        auto = make_pipeline(es.DistanceCorrelationSelector(), LinearRegression()).fit(X, y)
        assert auto[0].support_[:3].all() and auto[0].support_.sum() == 37

    def test_grid_search_over_k(self):
        from sklearn.model_selection import GridSearchCV
        from sklearn.neighbors import KNeighborsRegressor
        from sklearn.pipeline import Pipeline

        X, y = _nonlinear(seed=9, n=150, p=20)
        pipe = Pipeline([("screen", es.DistanceCorrelationSelector(pvalues=False)),
                         ("knn", KNeighborsRegressor())])
        search = GridSearchCV(pipe, {"screen__k": [1, 3, 20]}, cv=3).fit(X, y)
        assert search.best_params_ == {"screen__k": 3}

    def test_dataframe_names_and_pandas_output(self):
        X, y = _nonlinear(seed=10, n=100, p=8)
        df = pd.DataFrame(X, columns=[f"g{j}" for j in range(8)])
        sel = es.DistanceCorrelationSelector(k=3).set_output(transform="pandas").fit(df, y)
        assert list(sel.feature_names_in_) == list(df.columns)
        assert list(sel.get_feature_names_out()) == ["g0", "g1", "g2"]
        out = sel.transform(df)
        assert list(out.columns) == ["g0", "g1", "g2"] and out.index.equals(df.index)

    # -- data ------------------------------------------------------------------------------
    def test_pandas_rows_paired_by_index_or_refused(self):
        # was: y shuffled against X's index was paired by position, silently
        g = np.random.default_rng(3)
        X = pd.DataFrame(g.normal(size=(40, 4)), columns=list("abcd"),
                         index=[f"r{i}" for i in range(40)])
        y = pd.Series(X["a"] ** 2 + 0.1 * g.normal(size=40), index=X.index)
        same = es.DistanceCorrelationSelector(k=2).fit(X, y.loc[X.index]).scores_
        np.testing.assert_array_equal(es.DistanceCorrelationSelector(k=2).fit(X, y).scores_, same)
        with pytest.raises(ValueError, match="`X` and `y` have different indexes"):
            es.DistanceCorrelationSelector(k=2).fit(X, y.sample(frac=1.0, random_state=1))
        # arrays are taken by position, as scikit-learn takes them
        es.DistanceCorrelationSelector(k=2).fit(X, y.sample(frac=1.0, random_state=1).to_numpy())

    def test_float32_kept_and_scored_in_double(self):
        X, y = _nonlinear(seed=11, n=90, p=6)
        X32 = X.astype(np.float32)
        a = es.DistanceCorrelationSelector(k=2).fit(X32, y)
        b = es.DistanceCorrelationSelector(k=2).fit(X32.astype(np.float64), y)
        assert a.scores_.dtype == np.float64 and a.transform(X32).dtype == np.float32
        np.testing.assert_allclose(a.scores_, b.scores_, rtol=1e-12)
        np.testing.assert_array_equal(a.support_, b.support_)

    def test_n_threads_1_and_2_same_bits(self):
        X, y = _nonlinear(seed=12, n=90, p=12)
        a = es.DistanceCorrelationSelector(k=4, n_rounds=2, n_threads=1).fit(X, y)
        b = es.DistanceCorrelationSelector(k=4, n_rounds=2, n_threads=2).fit(X, y)
        np.testing.assert_array_equal(a.scores_, b.scores_)
        np.testing.assert_array_equal(a.pvalues_, b.pvalues_)
        np.testing.assert_array_equal(a.ranking_, b.ranking_)

    def test_multivariate_y_and_another_distance(self):
        X, y = _nonlinear(seed=13, n=60, p=5)
        Y = np.column_stack([y, X[:, 3] + 0.1 * np.arange(60) % 1.3])
        sel = es.DistanceCorrelationSelector(k=2, exponent=0.5).fit(X, Y)
        want = [float(es.distance_correlation(X[:, j], Y, exponent=0.5)) for j in range(5)]
        np.testing.assert_allclose(sel.scores_, want, rtol=1e-12)
        pv = [es.independence_test(X[:, j], Y, exponent=0.5, pvalue_method="asymptotic").pvalue
              for j in range(5)]
        np.testing.assert_array_equal(sel.pvalues_, pv)

    def test_constant_feature_is_nan_and_last(self):
        X, y = _nonlinear(seed=14, n=50, p=5)
        X[:, 1] = 2.5
        with pytest.warns(UserWarning, match=r"constant feature\(s\) \[1\]"):
            sel = es.DistanceCorrelationSelector(k=2).fit(X, y)
        assert np.isnan(sel.scores_[1]) and np.isnan(sel.pvalues_[1]) and sel.ranking_[1] == 5

    def test_three_rows_have_no_pvalues(self):
        X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 3.0]])
        sel = es.DistanceCorrelationSelector(k=1).fit(X, [0.0, 1.0, 3.0])
        assert np.isnan(sel.pvalues_).all() and np.isfinite(sel.scores_).all()

    # -- input validation --
    @pytest.mark.parametrize("kw, match", [
        (dict(k=0), r"`k` must be an integer in \[1, n_features=5\], 'auto' or 'all'; got 0\."),
        (dict(k=6), r"`k` must be an integer in \[1, n_features=5\].*; got 6\."),
        (dict(k=2.0), r"`k` .*; got 2\.0\."),
        (dict(k=True), r"`k` .*; got True\."),
        (dict(k="best"), r"`k` .*; got 'best'\."),
        (dict(k=2, n_rounds=3), r"`n_rounds` must be an integer in \[1, k=2\].*; got 3\."),
        (dict(n_rounds=0), r"`n_rounds` must be an integer in \[1, k=5\].*; got 0\."),
        (dict(pvalues="yes"), r"`pvalues` must be True or False; got 'yes'\."),
        (dict(exponent=2.5), r"`exponent` must lie in \(0, 2\]; got 2\.5"),
        (dict(metric="precomputed"), "precomputed"),
        (dict(n_threads=0), "`n_threads`"),
    ])
    def test_bad_arguments(self, kw, match):
        X, y = _nonlinear(n=30, p=5)
        with pytest.raises(ValueError, match=match):
            es.DistanceCorrelationSelector(**kw).fit(X, y)

    def test_bad_inputs(self):
        import scipy.sparse as sp
        from sklearn.exceptions import NotFittedError

        X, y = _nonlinear(n=30, p=5)
        with pytest.raises(NotFittedError, match="not fitted"):
            es.DistanceCorrelationSelector().transform(X)
        with pytest.raises(ValueError, match="`y` is constant"):
            es.DistanceCorrelationSelector().fit(X, np.ones(30))
        with pytest.raises(ValueError, match=r"`y` must be numeric .*got dtype <U1"):
            es.DistanceCorrelationSelector().fit(X, np.repeat(["a", "b"], 15))
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            es.DistanceCorrelationSelector().fit(X, y[:-1])
        with pytest.raises(ValueError, match="1 sample"):
            es.DistanceCorrelationSelector().fit(X[:1], y[:1])
        with pytest.raises(TypeError, match="dense data is required"):
            es.DistanceCorrelationSelector().fit(sp.csr_matrix(X), y)
        with pytest.raises(ValueError, match="requires y"):
            es.DistanceCorrelationSelector().fit(X, None)
        X[3, 2] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            es.DistanceCorrelationSelector().fit(X, y)
        sel = es.DistanceCorrelationSelector(k=2).fit(np.nan_to_num(X), y)
        with pytest.raises(ValueError, match="expecting 5 features"):
            sel.transform(np.nan_to_num(X)[:, :4])


# -- without scikit-learn --------------------------------------------------------------------

def _run(code):
    env = dict(os.environ, PYTHONPATH=PKG_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120, check=True).stdout


def test_the_dependence_package_does_not_import_scikit_learn():
    out = _run("import sys, energystats as es; es.distance_correlation_screen; "
               "import energystats.dependence; print('sklearn' in sys.modules); "
               "es.DistanceCorrelationSelector; print('sklearn' in sys.modules)").split()
    assert out == ["False", str(parametrize_with_checks is not None)]


def test_without_scikit_learn_the_class_says_what_to_install():
    code = ("import sys; sys.modules['sklearn'] = None\n"        # import sklearn -> ImportError
            "import energystats as es\n"
            "from energystats.dependence import *\n"
            "cls = es.DistanceCorrelationSelector\n"
            "try:\n    cls(k=2)\nexcept ImportError as e:\n    print('ImportError:', e)\n")
    out = _run(code)
    assert out.startswith("ImportError: DistanceCorrelationSelector is a scikit-learn")
    assert "pip install scikit-learn" in out

