"""weighted_effect: the estimates against hand-written weighted means and least squares, the
bootstrap that solves the weights again (against a plain re-implementation, bit for bit across
worker counts, Ctrl-C), the sandwich, and the input checks."""
import warnings

import numpy as np
import pandas as pd
import pytest

import energystats as es

from ._loops import ANNOUNCE_WORKERS

from .._core.test_interrupt import DEADLINE_S, _interrupt_child, posix_signals
from energystats.balance import effect as effect_mod

pytest.importorskip("osqp")


def _study(n=120, seed=0, k=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    t = np.clip(np.floor(X[:, 0] + rng.normal(size=n) + k / 2), 0, k - 1).astype(int)
    y = 1.0 * t + X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
    return X, t, y


def _wmean(y, w):
    return sum(wi * yi for wi, yi in zip(w, y)) / sum(w)


def _wls_loops(D, y, w):
    """Weighted least squares by the normal equations, and the HC0 sandwich, written out."""
    p = D.shape[1]
    XtWX = np.zeros((p, p))
    XtWy = np.zeros(p)
    for i in range(len(y)):
        XtWX += w[i] * np.outer(D[i], D[i])
        XtWy += w[i] * D[i] * y[i]
    beta = np.linalg.solve(XtWX, XtWy)
    meat = np.zeros((p, p))
    for i in range(len(y)):
        e = y[i] - D[i] @ beta
        meat += (w[i] * e) ** 2 * np.outer(D[i], D[i])
    inv = np.linalg.inv(XtWX)
    return beta, inv @ meat @ inv


class TestWeightedEffect:
    def test_difference_of_weighted_means_and_its_sandwich(self):
        X, t, y = _study()
        res = es.energy_balancing_weights(X, t)
        eff = es.weighted_effect(y, res, outcome_model=None, se="sandwich")
        w = res.weights
        m1, m0 = _wmean(y[t == 1], w[t == 1]), _wmean(y[t == 0], w[t == 0])
        assert eff.estimate[0] == pytest.approx(m1 - m0, rel=1e-12)
        # HC0 of the mean of a level: sum w_i^2 (y_i - m)^2 / (sum w)^2; levels independent
        var = sum(sum(wi ** 2 * (yi - m) ** 2 for wi, yi in zip(w[t == g], y[t == g]))
                  / w[t == g].sum() ** 2 for g, m in ((0, m0), (1, m1)))
        assert eff.std_error[0] == pytest.approx(np.sqrt(var), rel=1e-10)
        assert eff.ci_method == "normal" and eff.n_boot == 0 and eff.boot is None
        assert eff.ci_low[0] == pytest.approx(eff.estimate[0] - 1.959963984540054 * eff.std_error[0])
        assert list(eff.to_frame().columns) == ["estimate", "std_error", "ci_low", "ci_high",
                                                "pvalue"]

    def test_adjusted_estimate_is_the_levels_wls_at_the_target_means(self):
        X, t, y = _study(seed=1)
        res = es.energy_balancing_weights(X, t, estimand="ATT")
        eff = es.weighted_effect(y, res, covariates=True, se="sandwich")
        w = res.weights
        centre = X[t == 1].mean(axis=0)               # ATT: the treated are the target
        alpha, var = {}, {}
        for g in (0, 1):
            D = np.column_stack([np.ones((t == g).sum()), X[t == g] - centre])
            beta, cov = _wls_loops(D, y[t == g], w[t == g])
            alpha[g], var[g] = beta[0], cov[0, 0]
        assert eff.estimate[0] == pytest.approx(alpha[1] - alpha[0], rel=1e-10)
        assert eff.std_error[0] == pytest.approx(np.sqrt(var[0] + var[1]), rel=1e-8)
        assert eff.covariates == ["x0", "x1"]

    def test_multi_level_contrasts_against_a_reference(self):
        X, t, y = _study(n=150, k=3, seed=2)
        res = es.energy_balancing_weights(X, t)
        eff = es.weighted_effect(y, res, outcome_model=None, reference=1, se=None)
        w = res.weights
        m = {g: _wmean(y[t == g], w[t == g]) for g in range(3)}
        assert eff.contrasts == ["0 - 1", "2 - 1"]
        np.testing.assert_allclose(eff.estimate, [m[0] - m[1], m[2] - m[1]], rtol=1e-12)
        assert np.isnan(eff.std_error).all() and eff.se_method is None
        np.testing.assert_allclose(eff.means["mean"], [m[0], m[1], m[2]], rtol=1e-12)

    def test_dose_response_slope_is_the_weighted_least_squares_slope(self):
        rng = np.random.default_rng(3)
        X = rng.normal(size=(100, 2))
        a = X[:, 0] + rng.normal(size=100)
        y = 0.5 * a + X[:, 0] + rng.normal(size=100)
        res = es.independence_weights(X, a)
        eff = es.weighted_effect(y, res, outcome_model=None, se="sandwich")
        beta, cov = _wls_loops(np.column_stack([np.ones(100), a]), y, res.weights)
        assert eff.contrasts == ["slope"] and eff.estimand == "dose-response slope"
        assert eff.estimate[0] == pytest.approx(beta[1], rel=1e-10)
        assert eff.std_error[0] == pytest.approx(np.sqrt(cov[1, 1]), rel=1e-8)
        adj = es.weighted_effect(y, res, covariates=X, se=None)
        beta2, _ = _wls_loops(np.column_stack([np.ones(100), a, X - X.mean(axis=0)]), y,
                              res.weights)
        assert adj.estimate[0] == pytest.approx(beta2[1], rel=1e-10)

    # -- the bootstrap --

    def test_bootstrap_is_a_resampling_that_solves_the_weights_again(self):
        """A plain re-implementation: per resample, rows drawn within each level from the
        resample's own spawned seed, the weights solved again by the public function, the
        weighted difference of means; the standard deviation and the percentiles."""
        X, t, y = _study(n=60, seed=4)
        res = es.energy_balancing_weights(X, t)
        eff = es.weighted_effect(y, res, outcome_model=None, se="bootstrap", ci_method="percentile", n_boot=30,
                                 rng=9, n_threads=1)
        seeds = np.random.default_rng(9).bit_generator.seed_seq.spawn(30)
        ests = []
        for ss in seeds:
            g = np.random.default_rng(ss)
            rows = np.sort(np.concatenate([g.choice(np.flatnonzero(t == lv), size=(t == lv).sum(),
                                                    replace=True) for lv in (0, 1)]))
            w = es.energy_balancing_weights(X[rows], t[rows]).weights
            tr, yr = t[rows], y[rows]
            ests.append(_wmean(yr[tr == 1], w[tr == 1]) - _wmean(yr[tr == 0], w[tr == 0]))
        np.testing.assert_allclose(eff.boot[:, 0], ests, rtol=1e-9)
        assert eff.std_error[0] == pytest.approx(np.std(ests, ddof=1), rel=1e-9)
        assert eff.ci_low[0] == pytest.approx(np.quantile(ests, 0.025), rel=1e-9)
        assert eff.seed == 9 and eff.n_boot == 30 and eff.n_failed == 0

    def test_half_sampling_is_a_delete_d_jackknife_that_solves_the_weights_again(self):
        """The default: per resample, half of each level's rows without replacement (from
        the resample's own spawned seed), the weights solved again, the weighted difference;
        the standard deviation times sqrt(b / (n - b)), the normal and the subsampling
        intervals."""
        X, t, y = _study(n=61, seed=12)
        res = es.energy_balancing_weights(X, t)
        eff = es.weighted_effect(y, res, outcome_model=None, n_boot=25, rng=4, n_threads=1)
        per = es.weighted_effect(y, res, outcome_model=None, n_boot=25, rng=4, n_threads=1, ci_method="percentile")
        seeds = np.random.default_rng(4).bit_generator.seed_seq.spawn(25)
        ests, b = [], 0
        for ss in seeds:
            g = np.random.default_rng(ss)
            levels = [np.flatnonzero(t == lv) for lv in (0, 1)]
            rows = np.sort(np.concatenate([g.choice(ix, size=ix.size // 2, replace=False)
                                           for ix in levels]))
            b = sum(ix.size // 2 for ix in levels)
            w = es.energy_balancing_weights(X[rows], t[rows]).weights
            tr, yr = t[rows], y[rows]
            ests.append(_wmean(yr[tr == 1], w[tr == 1]) - _wmean(yr[tr == 0], w[tr == 0]))
        f = np.sqrt(b / (61 - b))
        np.testing.assert_allclose(eff.boot[:, 0], ests, rtol=1e-9)
        assert eff.std_error[0] == pytest.approx(f * np.std(ests, ddof=1), rel=1e-9)
        e = eff.estimate[0]
        lo, hi = np.quantile(ests, [0.025, 0.975])
        assert per.ci_low[0] == pytest.approx(e - f * (hi - e), rel=1e-9)
        assert per.ci_high[0] == pytest.approx(e - f * (lo - e), rel=1e-9)

    def test_same_bits_in_worker_processes(self, monkeypatch):
        X, t, y = _study(n=80, seed=5)
        res = es.energy_balancing_weights(X, t, cells=10, rng=3)
        one = es.weighted_effect(y, res, outcome_model=None, n_boot=24, rng=2, n_threads=1)
        monkeypatch.setattr(effect_mod, "PARALLEL_AFTER_S", 0.0)   # always the workers
        two = es.weighted_effect(y, res, outcome_model=None, n_boot=24, rng=2, n_threads=2)
        np.testing.assert_array_equal(one.boot, two.boot)
        assert one.std_error[0] == two.std_error[0]

    def test_normal_interval_and_progress(self):
        import io

        X, t, y = _study(n=60, seed=6)
        res = es.energy_balancing_weights(X, t)
        buf = io.StringIO()
        eff = es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=1, progress=buf, n_threads=1)
        z = 1.959963984540054
        assert eff.ci_high[0] == pytest.approx(eff.estimate[0] + z * eff.std_error[0])
        assert eff.se_method == "subsample" and eff.ci_method == "normal"
        assert "half-samples" in buf.getvalue() and "20/20" in buf.getvalue()

    def test_failed_resamples_are_counted_and_named(self, monkeypatch):
        X, t, y = _study(n=60, seed=7)
        res = es.energy_balancing_weights(X, t)
        real = effect_mod._refit
        calls = []

        def flaky(*args):
            calls.append(1)
            if len(calls) == 3:
                raise ValueError("a covariate is constant in this resample")
            return real(*args)

        monkeypatch.setattr(effect_mod, "_refit", flaky)
        with pytest.warns(es.BalanceWarning, match="could not be solved on 1 of 40"):
            eff = es.weighted_effect(y, res, outcome_model=None, n_boot=40, rng=1, n_threads=1)
        assert eff.n_failed == 1 and eff.boot.shape == (39, 1)
        calls.clear()
        monkeypatch.setattr(effect_mod, "_refit", lambda *a: (_ for _ in ()).throw(
            RuntimeError("solver")))
        with pytest.raises(RuntimeError, match="on 20 of 20 bootstrap resamples"):
            es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=1, n_threads=1)

    # -- input validation --

    def test_outcome_series_is_aligned_by_the_index(self):
        X, t, y = _study(n=50, seed=8)
        idx = pd.Index([f"r{i}" for i in range(50)])
        df = pd.DataFrame(X, index=idx, columns=["a", "b"])
        res = es.energy_balancing_weights(df, pd.Series(t, index=idx))
        ys = pd.Series(y, index=idx)
        shuffled = ys.sample(frac=1.0, random_state=0)
        a = es.weighted_effect(ys, res, outcome_model=None, se=None).estimate
        b = es.weighted_effect(shuffled, res, outcome_model=None, se=None).estimate
        assert a[0] == b[0]
        with pytest.raises(ValueError, match="`outcome` is indexed but its index does not match"):
            es.weighted_effect(pd.Series(y), res, outcome_model=None, se=None)

    @pytest.mark.parametrize("kw,exc,match", [
        ({"se": "jackknife"}, ValueError, "`se` must be 'auto', 'influence', 'subsample', 'bootstrap', 'sandwich'"),
        ({"ci_method": "bca"}, ValueError, "`ci_method` must be 'normal', 'bias-aware' or 'percentile'"),
        ({"se": "sandwich", "ci_method": "percentile"}, ValueError, "needs resamples"),
        ({"confidence": 1.0}, ValueError, "`confidence` must be a number strictly between"),
        ({"n_boot": 5}, ValueError, "`n_boot` must be an integer >= 20"),
        ({"se": "sandwich", "rng": 1}, ValueError, "`rng` seeds the resamples"),
        ({"reference": 7, "se": None}, ValueError, "`reference` must be one of the treatment"),
        ({"covariates": np.ones((3, 1)), "outcome_model": "linear", "se": None}, ValueError, "`covariates` must have one row"),
    ])
    def test_bad_options_are_named(self, kw, exc, match):
        X, t, y = _study(n=40, seed=9)
        res = es.energy_balancing_weights(X, t)
        with pytest.raises(exc, match=match):
            es.weighted_effect(y, res, **{"outcome_model": None, **kw})

    def test_bad_outcomes_and_weights_are_named(self):
        X, t, y = _study(n=40, seed=10)
        res = es.energy_balancing_weights(X, t)
        y2 = y.copy()
        y2[3] = np.nan
        with pytest.raises(ValueError, match="`outcome` must be finite; got nan at position 3"):
            es.weighted_effect(y2, res, outcome_model=None, se=None)
        with pytest.raises(ValueError, match=r"`outcome` must have one value per row"):
            es.weighted_effect(y[:-1], res, outcome_model=None, se=None)
        with pytest.raises(TypeError, match="`weights` must be the result of"):
            es.weighted_effect(y, res.weights, outcome_model=None, se=None)


def test_no_warnings_leak_from_a_quiet_run():
    X, t, y = _study(n=60, seed=11)
    res = es.energy_balancing_weights(X, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        es.weighted_effect(y, res, outcome_model=None, n_boot=20, rng=1, n_threads=1)


SETUP_BOOT = ANNOUNCE_WORKERS + """
from energystats.balance import effect
effect.PARALLEL_AFTER_S = 0.0
X = rng.normal(size=(300, 3)); t = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
y = t + X[:, 0] + rng.normal(size=300)
res = es.energy_balancing_weights(X, t)
"""


@posix_signals
def test_ctrl_c_stops_the_bootstrap_workers():
    interrupted, exited, seen, err = _interrupt_child(
        SETUP_BOOT, "es.weighted_effect(y, res, outcome_model=None, n_boot=2000, rng=1, n_threads=2)",
        wait_after_phase=1.0)
    assert interrupted < DEADLINE_S, (seen, err)
    assert not any(line.startswith("finished") for line in seen), seen
    assert exited < DEADLINE_S, (seen, err)
