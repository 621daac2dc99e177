"""The augmented (cross-fitted) estimator of ``weighted_effect``: against plain-NumPy
references written here (the estimator with the result's folds and a fixed model, kernel
ridge regression from an eigendecomposition, the influence-function variance, the bias bound
and the Armstrong-Kolesár critical value), its correction of deliberately biased weights, a
small fixed-seed coverage study that goes red when the residual term is dropped, the working
units of every output field, and its bad input."""
import dataclasses
import math
import warnings

import numpy as np
import pytest
from scipy.stats import norm

import energystats as es
from energystats.balance import _augment, _outcome

from .test_effect import _study

pytest.importorskip("osqp")


class Ols:
    """A fixed model for the reference: least squares with an intercept (fit/predict)."""

    def fit(self, X, y):
        A = np.column_stack([np.ones(len(X)), X])
        self.b = np.linalg.lstsq(A, y, rcond=None)[0]
        return self

    def predict(self, X):
        return np.column_stack([np.ones(len(X)), X]) @ self.b


def _studentized(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


def _reference_krr(X, y):
    """Kernel ridge on K = -1/2 H D H (D the Euclidean distances, H the centring), the penalty
    by leave-one-out over the same grid; returns predict(Xnew) and the fit's norm."""
    n = len(y)
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    r = D.mean(axis=0)
    K = -0.5 * (D - r[None, :] - r[:, None] + r.mean())
    s, U = np.linalg.eigh(K)
    keep = s > s.max() * 1e-10     # K's null direction (the constants) is the intercept's
    s, U = s[keep], U[:, keep]
    yc = y - y.mean()
    c = U.T @ yc
    best = None
    scale = s.mean()                         # the mean of K's positive eigenvalues
    for tau in np.logspace(-6, 2, 33):
        lam = tau * scale
        f = s / (s + lam)
        h = 1 / n + (U ** 2) @ f
        loo = np.sum(((yc - U @ (f * c)) / (1 - h)) ** 2)
        if best is None or loo < best[0]:
            best = (loo, lam)
    lam = best[1]
    alpha = U @ (c / (s + lam))

    def predict(Xn):
        Dn = np.sqrt(((Xn[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        return y.mean() - 0.5 * Dn @ alpha + 0.5 * alpha @ r
    return predict, math.sqrt(max(alpha @ K @ alpha, 0.0))


class TestAugmentedEstimator:
    # a linear model of a quadratic truth on ~50 rows a level: its residuals are large, and the
    # bias bound over the SE says so (tested in test_the_bound_over_the_se_warns)
    @pytest.mark.filterwarnings("ignore::energystats.BalanceWarning")
    def test_equals_a_plain_numpy_reference(self):
        X, t, y = _study(k=3, n=150, seed=3)
        res = es.energy_balancing_weights(X, t)
        eff = es.weighted_effect(y, res, outcome_model=Ols(), covariates=X, rng=4)
        w, fold, n = res.weights, eff.fold, len(y)
        assert sorted(np.unique(fold)) == list(range(5)) and eff.n_folds == 5
        for g in range(3):   # every fold holds floor or ceil of n_g / 5 rows of each level
            sizes = np.bincount(fold[t == g], minlength=5)
            assert sizes.max() - sizes.min() <= 1
        mu, phi_parts = [], []
        for g in range(3):
            pred = np.empty(n)
            for k in range(5):
                m = Ols().fit(X[(t == g) & (fold != k)], y[(t == g) & (fold != k)])
                pred[fold == k] = m.predict(X[fold == k])
            gam = np.where(t == g, w, 0.0) / w[t == g].sum()
            mu.append(pred.mean() + gam @ (y - pred))
            phi_parts.append((pred, gam * (y - pred)))
        want = [mu[1] - mu[0], mu[2] - mu[0]]
        np.testing.assert_allclose(eff.estimate, want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(eff.means["mean"], mu, rtol=1e-12)
        for j, g in enumerate((1, 2)):
            d = phi_parts[g][0] - phi_parts[0][0]
            phi = (d - d.mean()) / n + phi_parts[g][1] - phi_parts[0][1]
            var = n / (n - 1) * np.sum((phi - phi.mean()) ** 2)
            assert eff.std_error[j] == pytest.approx(math.sqrt(var), rel=1e-10)
        plain = [np.average(y[t == g], weights=w[t == g]) - np.average(y[t == 0], weights=w[t == 0])
                 for g in (1, 2)]
        np.testing.assert_allclose(eff.unaugmented, plain, rtol=1e-12)
        np.testing.assert_allclose(eff.augmentation_share,
                                   (eff.estimate - plain) / np.abs(plain), rtol=1e-10)

    # a linear model of a quadratic truth on ~50 rows a level: its residuals are large, and the
    # bias bound over the SE says so (tested in test_the_bound_over_the_se_warns)
    @pytest.mark.filterwarnings("ignore::energystats.BalanceWarning")
    def test_att_target_is_the_focal_level(self):
        X, t, y = _study(n=140, seed=8)
        res = es.energy_balancing_weights(X, t, estimand="ATT")
        eff = es.weighted_effect(y, res, outcome_model=Ols(), covariates=X, rng=2)
        n, fold, w = len(y), eff.fold, res.weights
        pred0 = np.empty(n)
        for k in range(5):
            pred0[fold == k] = Ols().fit(X[(t == 0) & (fold != k)],
                                         y[(t == 0) & (fold != k)]).predict(X[fold == k])
        gam0 = np.where(t == 0, w, 0.0) / w[t == 0].sum()
        # the treated's own mean outcome is left as it is: minus the controls' augmented mean
        want = y[t == 1].mean() - (pred0[t == 1].mean() + gam0 @ (y - pred0))
        assert eff.estimate[0] == pytest.approx(want, rel=1e-11)

    def test_kernel_model_equals_an_eigendecomposition_reference(self):
        rng = np.random.default_rng(0)
        X = rng.normal(size=(90, 3))
        y = X[:, 0] ** 2 + np.sin(X[:, 1]) + rng.normal(scale=0.3, size=90)
        m = _outcome.EnergyKernelRidge().fit(X, y)
        predict, nrm = _reference_krr(X, y)
        Xn = rng.normal(size=(7, 3))
        np.testing.assert_allclose(m.predict(Xn), predict(Xn), rtol=1e-8, atol=1e-9)
        assert m.norm_ == pytest.approx(nrm, rel=1e-8)

    def test_kernel_default_matches_the_reference_cross_fit(self):
        X, t, y = _study(n=100, seed=11)
        res = es.energy_balancing_weights(X, t)
        eff = es.weighted_effect(y, res, rng=6)
        assert (eff.outcome_model, eff.se_method, eff.ci_method) == ("kernel", "influence", "normal")
        Z, fold, w, n = _studentized(X), eff.fold, res.weights, len(y)
        mu = []
        for g in (0, 1):
            pred = np.empty(n)
            for k in range(5):
                tr = (t == g) & (fold != k)
                predict, _ = _reference_krr(Z[tr], y[tr])
                pred[fold == k] = predict(Z[fold == k])
            gam = np.where(t == g, w, 0.0) / w[t == g].sum()
            mu.append(pred.mean() + gam @ (y - pred))
        assert eff.estimate[0] == pytest.approx(mu[1] - mu[0], rel=1e-8)

    def test_biased_weights_are_corrected_by_the_right_model(self):
        """Uniform weights on confounded data: the weighted difference is far off; with an
        outcome model of the right form (linear, the truth here) the augmented estimate is not."""
        rng = np.random.default_rng(5)
        n = 600
        X = rng.normal(size=(n, 2))
        t = (X[:, 0] + rng.normal(size=n) > 0).astype(int)
        y = 2.0 * t + 3.0 * X[:, 0] - X[:, 1] + rng.normal(size=n)
        res = es.energy_balancing_weights(X, t)
        bad = dataclasses.replace(res, weights=np.ones(n))
        plain = es.weighted_effect(y, bad, outcome_model=None, se=None).estimate[0]
        fixed = es.weighted_effect(y, bad, outcome_model=Ols(), covariates=X, rng=1)
        assert abs(plain - 2.0) > 2.0                    # 3 x0 confounds the raw difference
        assert abs(fixed.estimate[0] - 2.0) < 3 * fixed.std_error[0]
        assert abs(fixed.estimate[0] - 2.0) < 0.25

    def test_bias_bound_equals_its_formula(self):
        X, t, y = _study(n=110, seed=21)
        res = es.energy_balancing_weights(X, t)
        eff = es.weighted_effect(y, res, rng=3, ci_method="bias-aware")
        Z, n = _studentized(X), len(y)
        # the cross-fitted residuals, rebuilt from the reference model and the result's folds
        norms = []
        for g in (0, 1):
            pred = np.empty(n)
            for k in range(5):
                tr = (t == g) & (eff.fold != k)
                predict, _ = _reference_krr(Z[tr], y[tr])
                pred[eff.fold == k] = predict(Z[eff.fold == k])
            e = (y - pred)[t == g]
            norms.append(_reference_krr(Z[t == g], e)[1])
        E = res.energy_after
        bound = norms[0] * math.sqrt(E[0] / 2) + norms[1] * math.sqrt(E[1] / 2)
        assert eff.bias_bound[0] == pytest.approx(bound, rel=1e-7)
        se, b = eff.std_error[0], bound / eff.std_error[0]
        c = (eff.ci_high[0] - eff.ci_low[0]) / 2 / se
        assert norm.cdf(c - b) - norm.cdf(-c - b) == pytest.approx(0.95, abs=1e-9)
        assert eff.ci_low[0] == pytest.approx(eff.estimate[0] - c * se, rel=1e-12)

    def test_critical_value_limits(self):
        assert _augment.bias_aware_halfwidth(0.0, 1.0, 0.95) == pytest.approx(1.959963984540054)
        assert _augment.bias_aware_halfwidth(10.0, 1.0, 0.95) == pytest.approx(10 + 1.6448536, abs=1e-6)

    def test_the_bound_over_the_se_warns(self):
        X, t, y = _study(n=120, seed=3)
        res = es.energy_balancing_weights(X, t)
        noisy = dataclasses.replace(res, energy_after=res.energy_after * 1e6)
        with pytest.warns(es.BalanceWarning, match="bias bound exceeds the standard error"):
            es.weighted_effect(y, noisy, rng=1)

    def test_subsample_refits_the_model_and_repeats_bit_for_bit(self):
        X, t, y = _study(n=80, seed=2)
        res = es.energy_balancing_weights(X, t)
        a = es.weighted_effect(y, res, se="subsample", n_boot=20, rng=9, n_threads=1)
        b = es.weighted_effect(y, res, se="subsample", n_boot=20, rng=9, n_threads=1)
        assert np.array_equal(a.boot, b.boot) and a.se_method == "subsample"
        plain = es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=9, n_threads=1)
        assert not np.allclose(a.boot, plain.boot)     # the resamples were augmented
        assert a.std_error[0] > 0

    def test_every_output_field_scales_with_the_outcome(self):
        X, t, y = _study(n=100, seed=4)
        res = es.energy_balancing_weights(X, t)
        base = es.weighted_effect(y, res, rng=1, ci_method="bias-aware")
        for f in (2.0 ** 900, 2.0 ** -900, 1e300, 1e-300):
            got = es.weighted_effect(y * f, res, rng=1, ci_method="bias-aware")
            for name in ("estimate", "std_error", "ci_low", "ci_high", "bias_bound",
                         "unaugmented"):
                np.testing.assert_allclose(getattr(got, name), getattr(base, name) * f,
                                           rtol=1e-9, err_msg=name)
            np.testing.assert_allclose(got.pvalue, base.pvalue, rtol=1e-9)

    def test_constant_outcome_has_no_pvalue(self):
        X, t, _ = _study(n=60, seed=4)
        res = es.energy_balancing_weights(X, t)
        for model in ("kernel", None):
            with pytest.warns(es.DegenerateStatisticWarning, match="outcome is constant"):
                eff = es.weighted_effect(np.full(60, 0.1), res, outcome_model=model,
                                         **({"rng": 1} if model else {"se": "sandwich"}))
            assert eff.estimate[0] == 0.0 and np.isnan(eff.pvalue[0]) and np.isnan(eff.std_error[0])

    def test_covariates_frame_is_aligned_by_index(self):
        import pandas as pd

        X, t, y = _study(n=90, seed=6)
        idx = pd.Index([f"r{i}" for i in range(90)])
        Xf = pd.DataFrame(X, index=idx, columns=["a", "b"])
        res = es.energy_balancing_weights(Xf, pd.Series(t, index=idx))
        want = es.weighted_effect(pd.Series(y, index=idx), res, outcome_model="linear",
                                  covariates=Xf, se=None)
        shuffled = Xf.sample(frac=1.0, random_state=0)
        got = es.weighted_effect(pd.Series(y, index=idx), res, outcome_model="linear",
                                 covariates=shuffled, se=None)
        assert got.estimate[0] == pytest.approx(want.estimate[0], rel=1e-12)
        with pytest.raises(ValueError, match="`covariates` is indexed but its index does not"):
            es.weighted_effect(pd.Series(y, index=idx), res, outcome_model="linear",
                               covariates=Xf.set_axis(range(90)), se=None)

    # -- input validation --

    def test_bad_models_and_folds_are_named(self):
        X, t, y = _study(n=60, seed=4)
        res = es.energy_balancing_weights(X, t)
        with pytest.raises(TypeError, match="`outcome_model` must be .* fit\\(X, y\\) and predict"):
            es.weighted_effect(y, res, outcome_model=object())
        with pytest.raises(ValueError, match="`outcome_model` must be 'auto', 'kernel'"):
            es.weighted_effect(y, res, outcome_model="forest")

        class Nan(Ols):
            def predict(self, X):
                return np.full(len(X), np.nan)
        with pytest.raises(ValueError, match=r"`outcome_model` \(Nan\) predicted non-finite"):
            es.weighted_effect(y, res, outcome_model=Nan())
        with pytest.raises(ValueError, match="`n_folds` must be an integer >= 2"):
            es.weighted_effect(y, res, n_folds=1)
        small = int(min(np.bincount(t)))
        with pytest.raises(ValueError, match=f"`n_folds`={small + 1} needs at least"):
            es.weighted_effect(y, res, n_folds=small + 1)
        with pytest.raises(TypeError, match="`covariates` must be None, True or a numeric"):
            es.weighted_effect(y, res, covariates="yes")
        with pytest.raises(ValueError, match="`se='sandwich'` is weighted least squares'"):
            es.weighted_effect(y, res, se="sandwich")
        with pytest.raises(ValueError, match="`ci_method='bias-aware'` widens"):
            es.weighted_effect(y, res, outcome_model=None, ci_method="bias-aware")
        with pytest.raises(ValueError, match="`se='influence'` is the augmented"):
            es.weighted_effect(y, res, outcome_model=None, se="influence")

    def test_continuous_treatment_keeps_the_slope(self):
        rng = np.random.default_rng(1)
        X = rng.normal(size=(80, 2))
        a = X[:, 0] + rng.normal(size=80)
        y = 0.5 * a + X[:, 0] + rng.normal(size=80)
        res = es.independence_weights(X, a)
        eff = es.weighted_effect(y, res, se="sandwich")
        assert eff.outcome_model is None and eff.contrasts == ["slope"]
        with pytest.raises(ValueError, match="built for binary and multi-category"):
            es.weighted_effect(y, res, outcome_model="kernel")


# -- coverage: a fixed-seed study that goes red when the residual term is dropped --------------

REPS, N = 60, 200


def _linear_design(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3))
    t = (rng.uniform(size=N) < 1 / (1 + np.exp(-(0.8 * X[:, 0] - 0.5 * X[:, 1])))).astype(int)
    y = 1.0 * t + 2.0 * X[:, 0] + X[:, 1] + 0.5 * X[:, 2] + rng.normal(size=N)
    return X, t, y


class Mean:
    """A poor outcome model (each level's mean): only the residual term removes the bias."""

    def fit(self, X, y):
        self.m = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(len(X), self.m)


def _coverage(model):
    hits = 0
    for r in range(REPS):
        X, t, y = _linear_design(700 + r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = es.energy_balancing_weights(X, t)
            eff = es.weighted_effect(y, res, outcome_model=model, covariates=X, rng=r)
        hits += eff.ci_low[0] <= 1.0 <= eff.ci_high[0]
    return hits / REPS


def test_coverage_of_the_augmented_interval():
    """60 data sets: the 95 % interval with the (poor) mean model covers within 3 binomial SE
    of 0.95 (3 * 0.028 = 0.084)."""
    assert _coverage(Mean()) >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / REPS)


def test_coverage_test_fails_without_the_residual_term(monkeypatch):
    """The mutation the issue names: the augmented mean without its residual term (the plug-in
    of the model) turns the coverage test red."""
    def plug_in(y, w, codes, k, v, pred, pred_T):
        mu = np.array([float(v @ pred[g]) for g in range(k)])
        return mu, y[None, :] - pred
    monkeypatch.setattr(_augment, "augmented_means", plug_in)
    assert _coverage(Mean()) < 0.95 - 3 * math.sqrt(0.95 * 0.05 / REPS)


def test_progress_of_the_model_fits():
    import io

    X, t, y = _study(n=80, seed=2)
    res = es.energy_balancing_weights(X, t)
    buf = io.StringIO()
    es.weighted_effect(y, res, rng=1, progress=buf)
    assert "outcome model: 100% 12/12" in buf.getvalue()      # 2 levels x (5 folds + 1)


def test_point_estimate_does_not_depend_on_the_resampling():
    """The folds are seeded before the resamples: the same rng gives the same estimate whatever
    `se` and `n_boot` (the reviewer's 1.3625 against 1.3161)."""
    X, t, y = _study(n=80, seed=2)
    res = es.energy_balancing_weights(X, t)
    a = es.weighted_effect(y, res, rng=1)
    b = es.weighted_effect(y, res, rng=1, se="subsample", n_boot=20, n_threads=1)
    assert a.estimate[0] == b.estimate[0] and np.array_equal(a.fold, b.fold)


def test_target_rows_with_other_covariates_are_refused():
    X, t, y = _study(n=80, seed=2)
    res = es.energy_balancing_weights(X, t, target=X[:20] + 0.1)
    with pytest.raises(ValueError, match="`covariates`: the weights' `target` rows"):
        es.weighted_effect(y, res, covariates=np.column_stack([X, X[:, 0] ** 2]))
    eff = es.weighted_effect(y, res, rng=1)                  # the weights' covariates: fine
    assert np.isfinite(eff.estimate[0]) and np.isfinite(eff.std_error[0])


# the linear model of a quadratic truth: its bias bound over the SE warns too (tested elsewhere)
@pytest.mark.filterwarnings("ignore:`weighted_effect`. the bias bound:energystats.BalanceWarning")
def test_a_resample_whose_model_fails_is_counted():
    X, t, y = _study(n=80, seed=2)
    res = es.energy_balancing_weights(X, t)

    class Fragile(Ols):
        calls = 0

        def fit(self, X, y):
            Fragile.calls += 1
            if Fragile.calls == 15:      # a fit of the first resample (the estimate made 10)
                raise np.linalg.LinAlgError("singular")
            return super().fit(X, y)
    with pytest.warns(es.BalanceWarning, match="could not be solved on 1 of 20"):
        eff = es.weighted_effect(y, res, outcome_model=Fragile(), covariates=X, se="subsample",
                                 n_boot=20, n_threads=1, rng=3)
    assert eff.n_failed == 1 and eff.boot.shape == (19, 1)
