"""Robust at the edges: a statistic that is not finite never gets a p-value.

`null >= nan` is always false, so a NaN statistic used to get the smallest
possible p-value (1/(R+1), or 0 under exact enumeration).  Now it gets NaN and
a DegenerateStatisticWarning; relabellings with a NaN statistic count as
exceedances (conservative).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import energystats as es
from energystats._core._permutation import pvalue_from_null

PKG_ROOT = str(Path(es.__file__).resolve().parents[1])


class TestNonFiniteStatistic:
    def test_pvalue_rule(self):
        null = np.array([1.0, 2.0, 3.0])
        with pytest.warns(es.DegenerateStatisticWarning, match="not finite"):
            assert np.isnan(pvalue_from_null(np.nan, null, exact=False))
        with pytest.warns(es.DegenerateStatisticWarning):
            assert np.isnan(pvalue_from_null(np.nan, null, exact=True))     # was 0.0
        with pytest.warns(es.DegenerateStatisticWarning):
            assert np.isnan(pvalue_from_null(np.inf, null, exact=False))
        # a NaN relabelling counts as an exceedance: (1 + 2) / 4, not (1 + 1) / 4
        with pytest.warns(es.DegenerateStatisticWarning, match="1 of the 3"):
            assert pvalue_from_null(2.5, np.array([1.0, np.nan, 3.0]), exact=False) == 0.75

    def test_per_factor(self):
        with pytest.warns(es.DegenerateStatisticWarning):
            p = pvalue_from_null(np.array([np.nan, 2.5]), np.array([[1.0, 1.0], [3.0, 3.0]]), False)
        assert np.isnan(p[0]) and p[1] == pytest.approx(2 / 3)

    @pytest.mark.parametrize("n_resamples", [99, 999])   # random relabellings, and exact
    def test_disco_of_identical_rows(self, n_resamples):
        X = np.ones((6, 2))
        with pytest.warns(es.DegenerateStatisticWarning, match="observed F is nan"):
            res = es.disco(X, labels=[0, 0, 0, 1, 1, 1], n_resamples=n_resamples, rng=0)
        assert res.total == 0.0 and np.isnan(res.statistic)
        assert np.isnan(res.pvalue) and np.isnan(res.pvalue_se)     # was 0.01 / 0.05

    def test_disco_with_zero_within_dispersion(self):
        # W = 0 < S: F = inf, the largest F there is (F is compared as S / (S + W) = 1), not a
        # statistic without a p-value: the relabellings that separate the points as well (the
        # observed one and its swap, 2 of the C(6, 3) = 20) count.  Before (issue 30): NaN in
        # 1-D, p = 1 in d >= 2 (where W is rounding noise)
        X = np.array([0.0, 0.0, 0.0, 5.0, 5.0, 5.0])
        res = es.disco(X, labels=[0, 0, 0, 1, 1, 1])
        assert res.statistic == np.inf and res.exact and res.pvalue == 2 / 20


def test_cli_says_there_is_no_pvalue(tmp_path):
    (tmp_path / "same.csv").write_text("x,g\n1,a\n1,a\n1,b\n1,b\n1,a\n1,b\n")
    env = dict(os.environ, PYTHONPATH=PKG_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "energystats", "disco", str(tmp_path / "same.csv"),
                           "--by", "g", "-R", "99", "--seed", "1"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "verdict: none: the statistic is not finite" in proc.stdout
    warn = [l for l in proc.stderr.splitlines() if "DegenerateStatisticWarning" in l]
    assert len(warn) == 1 and warn[0].startswith("energystats disco: warning")


# -- exact at any magnitude ----------------------------------------------------------

MAGNITUDES = [1e-300, 1e-160, 1e150, 1e300]


class TestMagnitude:
    """Homogeneity: E, W, S, T scale by c**exponent; F, S/T, labels and p-values do not change.

    Before, squared distances overflowed above |x| ~ 1e154 (NaN statistics) and
    underflowed below ~1e-154 (zero or subnormal distances, p = 1)."""

    def setup_method(self):
        rng = np.random.default_rng(11)
        self.x = rng.normal(size=(25, 3))
        self.y = rng.normal(size=(20, 3)) + 0.7
        self.X = np.vstack([self.x, self.y])
        self.labels = np.repeat([0, 1], [25, 20])

    @pytest.mark.parametrize("c", MAGNITUDES)
    def test_energy_metric(self, c):
        E = es.energy_distance(self.x, self.y)
        assert es.energy_distance(self.x * c, self.y * c) == pytest.approx(c * E, rel=1e-12)
        d, dc = es.dispersion(self.X, self.labels), es.dispersion(self.X * c, self.labels)
        np.testing.assert_allclose([dc.W, dc.S, dc.T], [c * d.W, c * d.S, c * d.T], rtol=1e-12)
        assert dc.F == pytest.approx(d.F, rel=1e-12) and dc.S / dc.T == pytest.approx(d.S / d.T, rel=1e-12)
        t = es.energy_test(self.x, self.y, n_resamples=199, rng=3)
        tc = es.energy_test(self.x * c, self.y * c, n_resamples=199, rng=3)
        assert tc.statistic == pytest.approx(c * t.statistic, rel=1e-12) and tc.pvalue == t.pvalue
        D, Dc = es.pairwise(self.x), es.pairwise(self.x * c)
        np.testing.assert_allclose(Dc, c * D, rtol=1e-12)
        f, fc = es.disco(self.X, labels=self.labels, n_resamples=99, rng=5), \
            es.disco(self.X * c, labels=self.labels, n_resamples=99, rng=5)
        assert fc.statistic == pytest.approx(f.statistic, rel=1e-12) and fc.pvalue == f.pvalue

    @pytest.mark.parametrize("c", MAGNITUDES)
    @pytest.mark.parametrize("metric", ["laplacian", "gaussian"])
    def test_bounded_metrics_with_sigma_scaled(self, c, metric):
        E = es.energy_distance(self.x, self.y, metric=metric, sigma=1.5)
        Ec = es.energy_distance(self.x * c, self.y * c, metric=metric, sigma=1.5 * c)
        assert Ec == pytest.approx(E, rel=1e-12)                 # was 0.1333 for 0.1255 at 1e200

    @pytest.mark.parametrize("c", [1e-300, 1e300])
    def test_clustering_labels(self, c):
        a = es.energy_clustering(self.X, 2, rng=0, n_init=2)
        b = es.energy_clustering(self.X * c, 2, rng=0, n_init=2)
        np.testing.assert_array_equal(a.labels, b.labels)
        assert b.W == pytest.approx(c * a.W, rel=1e-12)

    def test_float32_is_unchanged(self):
        x32, y32 = self.x.astype(np.float32), self.y.astype(np.float32)
        E = es.energy_distance(x32, y32)
        assert es.energy_distance(x32 * np.float32(1e30), y32 * np.float32(1e30)) == pytest.approx(
            1e30 * E, rel=1e-6)


# -- threads: deterministic, bounded, fork-safe ------------------------------------------

class TestThreads:
    def test_bit_identical_for_any_thread_count_and_call(self):
        rng = np.random.default_rng(2)
        x, y = rng.normal(size=(1500, 6)), rng.normal(size=(1300, 6)) + 0.05
        first = es.energy_distance(x, y, n_threads=1)
        for nt in (1, 2, 3):
            for _ in range(5):
                assert es.energy_distance(x, y, n_threads=nt) == first     # ==, not approx
        X, lab = np.vstack([x, y]), rng.integers(0, 4, 2800)
        base = es.dispersion(X, lab, n_threads=1)
        for nt in (2, 3):
            d = es.dispersion(X, lab, n_threads=nt)
            assert (d.W, d.S, d.T) == (base.W, base.S, base.T)

    @pytest.mark.parametrize("engine", ["matrix", "blocked", "folded", "streamed", "sorted", "tiled"])
    def test_permutation_tests_bit_identical_for_any_thread_count(self, engine):
        # the matrix engines' BLAS products run in fixed chunks (was: the null distribution's
        # last bits changed between n_threads=1 and 2, BLAS splitting its sums by thread).
        # tiled: under a tight budget the batch size followed n_threads (18 relabellings on one
        # thread, 1 on two: the products' bits differ with the batch), nulls 8e-11 apart
        rng = np.random.default_rng(6)
        n = 1500
        X = rng.normal(size=(n, 1 if engine == "sorted" else 3))
        lab = np.arange(n) % {"folded": 40, "tiled": 20}.get(engine, 3)
        kw = {"blocked": {"memory_budget": 8 * 2**20}, "streamed": {"method": "streamed"},
              "tiled": {"memory_budget": 18e6}}.get(engine, {})
        R = 9 if engine == "streamed" else 299
        runs = [es.energy_test(X, labels=lab, n_resamples=R, rng=0, n_threads=nt, **kw) for nt in (1, 2, 3, 2)]
        assert runs[0].engine == ("matrix" if engine == "folded" else engine)
        for r in runs[1:]:
            assert r.statistic == runs[0].statistic
            assert np.array_equal(r.null_distribution, runs[0].null_distribution)
        d = [es.disco(X, labels=lab, n_resamples=R, rng=0, n_threads=nt, **kw) for nt in (1, 3)]
        assert np.array_equal(d[0].null_distribution, d[1].null_distribution)

    def test_default_threads_leave_busy_cores_alone(self, monkeypatch):
        from energystats._core import _validation

        monkeypatch.setattr(_validation, "available_cores", lambda: 4)
        monkeypatch.setattr(_validation, "_LOAD", {"when": -1e9, "busy": 0})
        monkeypatch.setattr(_validation, "busy_cores", lambda: 3)
        assert _validation.check_n_threads(None) == 1          # three cores busy: one thread
        assert _validation.check_n_threads(3) == 3             # an explicit request is kept
        monkeypatch.setattr(_validation, "_LOAD", {"when": -1e9, "busy": 0})
        monkeypatch.setattr(_validation, "busy_cores", lambda: 9)
        assert _validation.check_n_threads(None) == 1          # never fewer than one
        monkeypatch.setattr(_validation, "_LOAD", {"when": -1e9, "busy": 0})
        monkeypatch.setattr(_validation, "busy_cores", lambda: 1)
        assert _validation.check_n_threads(None) == 3
        monkeypatch.setenv("ENERGYSTATS_IGNORE_LOAD", "1")
        assert _validation.check_n_threads(None) == 4
        monkeypatch.delenv("ENERGYSTATS_IGNORE_LOAD")
        # the count itself: this process's running threads are not "busy" (an idle test
        # machine may still run other jobs, so only the type and range are checked here)
        monkeypatch.undo()
        b = _validation.busy_cores()
        assert isinstance(b, int) and b >= 0

    def test_busy_cores_reading(self, monkeypatch):
        # busy = system runnable threads − this process's, the larger of the counts before and
        # after the system's, the smallest over the samples
        from energystats._core import _validation

        def feed(running, own):
            r, o = iter(running), iter(own)
            monkeypatch.setattr(_validation, "_running_threads", lambda: next(r))
            monkeypatch.setattr(_validation, "_own_running_threads", lambda: next(o))

        feed([3, 3], [3, 1, 3, 1])   # a kernel's spinning thread stops between the reads
        assert _validation.busy_cores() == 0
        for running in ([4, 1], [1, 4]):   # another process runs for an instant only
            feed(running, [1, 1, 1, 1])
            assert _validation.busy_cores() == 0
        feed([4, 4], [1, 1, 1, 1])   # three other threads, in both readings
        assert _validation.busy_cores() == 3
        feed([3], [1, 2])            # one sample, the larger own count
        assert _validation.busy_cores(samples=1) == 1
        feed([1], [0, 0])            # at least this thread is ours
        assert _validation.busy_cores(samples=1) == 0

    def test_energy_distance_never_negative(self):
        rng = np.random.default_rng(4)
        z = rng.normal(size=(300, 4))
        for _ in range(30):                                    # was -8.9e-16 (sqrt -> NaN)
            E = es.energy_distance(z, z[rng.permutation(300)])
            assert E >= 0.0 and not np.isnan(np.sqrt(E))
        res = es.energy_test(z, z[::-1], n_resamples=0)
        assert (res.energy_distances >= 0).all()

    def test_n_threads_is_bounded(self):
        with pytest.raises(ValueError, match=r"`n_threads` must be at most"):
            es.energy_distance([0.0, 1.0], [2.0], n_threads=10**6)

    @pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
    def test_worker_processes(self, method, tmp_path):
        import multiprocessing as mp

        if method not in mp.get_all_start_methods():
            pytest.skip(f"start method {method!r} not available")
        script = tmp_path / "pool.py"
        script.write_text(
            "import multiprocessing as mp, numpy as np, energystats as es\n"
            "rng = np.random.default_rng(0)\n"
            "x, y = rng.normal(size=(2000, 5)), rng.normal(size=(2000, 5)) + 0.1\n"
            "def f(i):\n"
            "    return es.energy_distance(x[:400] + i, y[:400] + i)\n"
            "if __name__ == '__main__':\n"
            "    want = es.energy_distance(x, y, n_threads=2)   # the parent ran OpenMP threads\n"
            f"    with mp.get_context({method!r}).Pool(2) as pool:\n"
            "        got = pool.map(f, range(4))\n"
            "    ref = es.energy_distance(x[:400], y[:400], n_threads=1)\n"
            "    assert all(abs(g - ref) <= 1e-12 * ref for g in got), (got, ref)\n"
            "    print('ok', want > 0)\n")
        env = dict(os.environ, PYTHONPATH=PKG_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                              timeout=120)                     # fork used to hang forever here
        assert proc.returncode == 0 and "ok True" in proc.stdout, proc.stderr


#: Each call runs for minutes uninterrupted on a quiet 2-core machine (so far longer than
#: INTERRUPT_BOUND_S even on a loaded one), and Ctrl-C must stop it within the bound.
LONG_CALLS = {
    "energy_distance": "x, y = rng.normal(size=(250000, 10)), rng.normal(size=(250000, 10))\n"
                       "call = lambda: es.energy_distance(x, y)\n",
    "matrix engine": "X = rng.normal(size=(4000, 3))\n"
                     "call = lambda: es.energy_test(X, labels=np.arange(4000) % 3, n_resamples=10**6)\n",
    "blocked engine": "X = rng.normal(size=(12000, 3))\n"
                      "call = lambda: es.energy_test(X, labels=np.arange(12000) % 2, n_resamples=10**5,\n"
                      "                              memory_budget=64 * 2**20)\n",
    "many groups": "X = rng.normal(size=(4000, 2))\n"
                   "call = lambda: es.energy_test(X, labels=np.arange(4000) % 40, n_resamples=10**6)\n",
    "sorted engine": "x = rng.normal(size=(10**6, 1))\n"
                     "call = lambda: es.energy_test(x, labels=np.arange(10**6) % 2, n_resamples=10**5)\n",
}

#: Seconds from SIGINT to the child's exit.  About 0.1-0.5 s on a quiet machine and up to 3 s
#: with both cores busy; the bound is generous (over 10x the quiet time) because the property
#: tested is that the call stops, not how fast: uninterrupted, each call runs for minutes.
INTERRUPT_BOUND_S = 15.0


@pytest.mark.parametrize("what", list(LONG_CALLS))
def test_ctrl_c_interrupts_a_long_call(what, tmp_path):
    import signal
    import time

    script = tmp_path / "long.py"
    script.write_text(
        "import signal, sys, numpy as np, energystats as es\n"
        # KeyboardInterrupt on SIGINT even if SIGINT was inherited ignored (a background job)
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "rng = np.random.default_rng(0)\n"
        + LONG_CALLS[what] +
        "print('started', flush=True)\n"
        "try:\n"
        "    call()\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(7)\n")
    env = dict(os.environ, PYTHONPATH=PKG_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.5)
        assert proc.poll() is None  # still working
        sent = time.perf_counter()
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(timeout=INTERRUPT_BOUND_S)
        except subprocess.TimeoutExpired:
            rc = None                                            # still running: not stopped
        waited = time.perf_counter() - sent
    finally:
        proc.kill()
    assert rc == 7 and waited < INTERRUPT_BOUND_S, (rc, waited)  # was minutes: the whole call


# -- issue 30: inputs refused with a message naming the argument ----------------

class TestIssue30Inputs:
    # refused without a warning first (it used to warn that digits beyond 2**53 are lost, then
    # refuse the integer of 401 digits): the package's warnings are errors in the suite
    def test_integer_beyond_float64_is_named(self):
        import pandas as pd

        big = 10**400
        with pytest.raises(ValueError, match=r"`x` holds an integer of 401 digits \(at row 1\)"):
            es.energy_distance([[1], [big], [3]], [[1], [2]])
        df = pd.DataFrame({"a": [1, big, 3]}, dtype=object)
        with pytest.raises(ValueError, match=r"`x` \(column 'a'\) holds an integer of 401 digits"):
            es.energy_distance(df, [[1], [2]])

    def test_integer_beyond_float64_in_the_cli(self, tmp_path, capsys):
        from energystats import cli

        path = tmp_path / "big.csv"
        path.write_text(f"a,b\n1,2\n{10**400},3\n4,5\n")
        code = cli.main(["dcor", str(path), "--x", "a", "--y", "b", "-R", "0", "-q"])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err and "401 digits" in err

    @pytest.mark.parametrize("labels", [[{1: 2}, {1: 2}, {3: 4}, {3: 4}], [{1}, {1}, {2}, {2}]])
    def test_unhashable_labels_are_named(self, labels):
        import energystats as es

        with pytest.raises(TypeError, match=r"`labels` must hold hashable group names"):
            es.dispersion(np.arange(4.0), labels)

    @pytest.mark.parametrize("rng", [True, False, np.bool_(True)])
    def test_bool_rng_is_refused(self, rng):
        import energystats as es

        with pytest.raises(TypeError, match=r"`rng` must be None, a non-negative integer seed"):
            es.energy_test(np.arange(6.0), labels=[0, 0, 0, 1, 1, 1], rng=rng, n_resamples=9)

    # -- exponent and sigma are numbers, not text or bools (one validator, _metrics) --

    _X = np.random.default_rng(0).normal(size=(12, 2))
    _Y = np.random.default_rng(1).normal(size=(12, 1))
    _Z = np.random.default_rng(2).normal(size=(12, 1))
    _LAB = [0] * 6 + [1] * 6
    _METRIC_CALLS = {
        "energy_distance": lambda **k: es.energy_distance(TestIssue30Inputs._X, TestIssue30Inputs._X + 1, **k),
        "energy_test": lambda **k: es.energy_test(TestIssue30Inputs._X, labels=TestIssue30Inputs._LAB,
                                                  n_resamples=9, rng=1, **k),
        "dispersion": lambda **k: es.dispersion(TestIssue30Inputs._X, TestIssue30Inputs._LAB, **k),
        "disco": lambda **k: es.disco(TestIssue30Inputs._X, labels=TestIssue30Inputs._LAB, n_resamples=9,
                                      rng=1, **k),
        "distance_correlation": lambda **k: es.distance_correlation(TestIssue30Inputs._X, TestIssue30Inputs._Y, **k),
        "distance_stats": lambda **k: es.distance_stats(TestIssue30Inputs._X, TestIssue30Inputs._Y, **k),
        "independence_test": lambda **k: es.independence_test(TestIssue30Inputs._X, TestIssue30Inputs._Y,
                                                              n_resamples=9, rng=1, **k),
        "distance_correlation_ttest": lambda **k: es.distance_correlation_ttest(TestIssue30Inputs._X,
                                                                                TestIssue30Inputs._Y, **k),
        "partial_distance_correlation": lambda **k: es.partial_distance_correlation(
            TestIssue30Inputs._X, TestIssue30Inputs._Y, TestIssue30Inputs._Z, **k),
        "energy_clustering": lambda **k: es.energy_clustering(TestIssue30Inputs._X, 2, **k),
        "energy_linkage": lambda **k: es.energy_linkage(TestIssue30Inputs._X, **k),
        "gram_matrix": lambda **k: es.gram_matrix(TestIssue30Inputs._X, **k),
        "pairwise": lambda **k: es.pairwise(TestIssue30Inputs._X, **k),
        # these two take no sigma
        "distance_correlation_matrix": lambda **k: es.distance_correlation_matrix(TestIssue30Inputs._X, **k),
        "mutual_independence_test": lambda **k: es.mutual_independence_test(
            TestIssue30Inputs._X, TestIssue30Inputs._Y, n_resamples=9, rng=1, **k),
    }

    @pytest.mark.parametrize("func", sorted(_METRIC_CALLS))
    @pytest.mark.parametrize("value", ["1", True, np.bool_(True), b"1"])
    def test_metric_parameters_are_numbers(self, func, value):
        call = self._METRIC_CALLS[func]
        with pytest.raises(TypeError, match=r"`exponent` must be a real number in \(0, 2\]; got .*not a number"):
            call(exponent=value)                        # was accepted: '1' parsed, True taken as 1
        if func not in ("distance_correlation_matrix", "mutual_independence_test"):
            with pytest.raises(TypeError, match=r"`sigma` must be a positive real number; got .*not a number"):
                call(metric="gaussian", sigma=value)

    def test_metric_parameters_of_numeric_types_are_unchanged(self):
        x, y = self._X, self._X + 1
        ref = es.energy_distance(x, y, exponent=1.5)
        for value in (np.float64(1.5), np.float32(1.5), np.array(1.5)):
            assert es.energy_distance(x, y, exponent=value) == ref
        assert es.energy_distance(x, y, exponent=np.int64(1)) == es.energy_distance(x, y, exponent=1.0)
        assert es.energy_distance(x, y, metric="gaussian", sigma=np.int64(2)) == \
            es.energy_distance(x, y, metric="gaussian", sigma=2.0)

    # -- SciPy sparse input: refused by as_data, naming the argument and .toarray() --

    @pytest.mark.parametrize("call", [
        lambda S, X: es.energy_distance(S, X),
        lambda S, X: es.energy_distance(X, S),
        lambda S, X: es.energy_test(S, labels=[0] * 6 + [1] * 6, n_resamples=9),
        lambda S, X: es.dispersion(S, [0] * 6 + [1] * 6),
        lambda S, X: es.disco(S, labels=[0] * 6 + [1] * 6, n_resamples=9),
        lambda S, X: es.distance_correlation(S, X),
        lambda S, X: es.independence_test(X, S, n_resamples=9),
        lambda S, X: es.distance_correlation_matrix(S),
        lambda S, X: es.mutual_independence_test(S, X, n_resamples=9),
        lambda S, X: es.normality_test(S, n_resamples=9),
        lambda S, X: es.gof_test(S[:, [0]], "expon", n_resamples=9),
        lambda S, X: es.energy_clustering(S, 2),
        lambda S, X: es.cluster_test(S, 2, n_resamples=3),
        lambda S, X: es.energy_linkage(S),
        lambda S, X: es.gram_matrix(S),
        lambda S, X: es.pairwise(S),
        lambda S, X: es.u_center(S),
    ])
    @pytest.mark.parametrize("kind", ["csr_matrix", "coo_array"])
    def test_sparse_input_is_refused_naming_the_argument(self, call, kind):
        sparse = pytest.importorskip("scipy.sparse")
        X = np.abs(np.random.default_rng(3).normal(size=(12, 2))) + 1
        S = getattr(sparse, kind)(X)
        with pytest.raises(TypeError, match=r"`[^`]+` is a SciPy sparse \w+ of shape \(12, [12]\); "
                                            r"sparse input is not supported.*pass `[^`]+\.toarray\(\)`"):
            call(S, X)                                  # was IndexError: tuple index out of range

    # -- Dask arrays with unknown chunk sizes: named, with .compute_chunk_sizes() --

    def test_dask_unknown_chunks_are_named(self):
        da = pytest.importorskip("dask.array")
        dd = pytest.importorskip("dask.dataframe")
        import pandas as pd

        x = np.random.default_rng(4).normal(size=(20, 2))
        one = da.from_array(x[:, 0], chunks=5)
        two = da.from_array(x, chunks=5)
        ddf = dd.from_pandas(pd.DataFrame(x, columns=["a", "b"]), npartitions=2)
        msg = r"`{}` has unknown chunk sizes \(rows\).*call `{}\.compute_chunk_sizes\(\)`"
        for unknown in (one[one > -10], two[two[:, 0] > -10], ddf.to_dask_array(),
                        ddf["a"].to_dask_array()):
            with pytest.raises(ValueError, match=msg.format("x", "x")):
                es.distance_correlation(unknown, x[:, :1])  # 1-D was 'cannot convert float NaN to integer'
            with pytest.raises(ValueError, match=msg.format("y", "y")):
                es.energy_distance(x[:, :1], unknown)

    # -- the command line speaks of the file's columns, options and data rows ------

    @staticmethod
    def _cli(capsys, *argv):
        import warnings

        from energystats import cli

        from ..cli.test_cli import library_warnings_shown

        with warnings.catch_warnings():
            library_warnings_shown()
            code = cli.main([str(a) for a in argv] + ["-q"])
        err = capsys.readouterr().err
        assert "Traceback" not in err, err
        return code, err

    def test_cli_messages_name_the_columns_and_options(self, tmp_path, capsys):
        const = tmp_path / "const.csv"
        const.write_text("a,b,c\n" + "".join(f"1,{i % 4},{i}\n" for i in range(8)))
        cases = [
            (["dcor", const, "--x", "a", "--y", "b", "-R", "9", "--seed", "1"],
             "column 'a' (option --x) is constant"),
            (["dcor", const, "--x", "b", "--y", "a", "--pvalue-method", "asymptotic"],
             "column 'a' (option --y) is constant"),
            (["gof", const, "--column", "a", "-R", "9", "--seed", "1"],
             "column 'a' (option --column) is constant"),
            (["cluster", const, "-k", "2", "--columns", "a", "--seed", "1"],
             "column 'a' (option --columns): all 8 rows are identical"),
        ]
        for argv, words in cases:
            code, err = self._cli(capsys, *argv)
            line = err.strip().splitlines()[-1]
            assert code == 2 and words in line and "`" not in line, line   # was `x` / `y` / `X`

    def test_cli_big_integers_warn_once_in_the_users_words(self, tmp_path, capsys):
        path = tmp_path / "big.csv"
        path.write_text("a,b\n1,2\n2,3\n3,%d\n4,5\n5,1\n" % (2**60 + 1))
        code, err = self._cli(capsys, "dcor", path, "--x", "a", "--y", "b", "-R", "0")
        warned = [ln for ln in err.splitlines() if "2**53" in ln]
        assert code == 0 and len(warned) == 1, err          # was `y` (column 'b') holds ...
        assert "column 'b' (option --y) holds integers larger than 2**53" in warned[0]
        assert "data row 3" in warned[0] and "`" not in warned[0]

    @pytest.mark.parametrize("bad", ["text", "missing", "inf", "huge"])
    def test_cli_bad_cell_in_the_third_data_row_is_data_row_3(self, bad, tmp_path, capsys):
        cell = {"text": "O.2", "missing": "", "inf": "inf", "huge": str(10**400)}[bad]
        rows = [f"{i},{(i * 7) % 5}.5,{'uv'[i % 2]}" for i in range(1, 9)]
        rows[2] = f"3,{cell},v"                                      # data row 3 (line 4)
        path = tmp_path / "bad.csv"
        path.write_text("a,b,g\n" + "\n".join(rows) + "\n")
        good = tmp_path / "good.csv"
        good.write_text("a,b\n1,2\n2,3\n3,1\n")
        commands = [["test", path, "--by", "g", "-R", "9", "--seed", "1"],
                    ["test", good, path, "--columns", "a,b", "-R", "9", "--seed", "1"],
                    ["distance", path, "--by", "g"],
                    ["disco", path, "--by", "g", "-R", "9", "--seed", "1"],
                    ["dcor", path, "--x", "a", "--y", "b", "-R", "0"],
                    ["dcor-matrix", path, "--columns", "a,b"],
                    ["gof", path, "--column", "b", "-R", "9", "--seed", "1"],
                    ["cluster", path, "-k", "2", "--columns", "a,b", "--seed", "1"]]
        for argv in commands:
            code, err = self._cli(capsys, *argv)
            lines = err.strip().splitlines()
            assert code == 2 and len(lines) == 1, err
            assert "'b'" in lines[0] and "data row 3" in lines[0], lines[0]
            assert "row 2" not in lines[0] and "counting from 0" not in lines[0], lines[0]

    def test_cli_data_rows_count_rows_dropped_by_dropna(self, tmp_path, capsys):
        path = tmp_path / "drop.csv"
        path.write_text("a,b\n1,2\n,3\n3,1\n4,inf\n5,2\n")    # missing in data row 2, inf in 4
        code, err = self._cli(capsys, "dcor", path, "--x", "a", "--y", "b", "-R", "0", "--dropna")
        assert code == 2 and "column 'b' (option --y) holds inf at data row 4" in err, err
        path.write_text("a,b\n1,2\n,inf\n3,1\n4,0\n5,2\n")     # inf in a row that --dropna drops
        code, err = self._cli(capsys, "dcor", path, "--x", "a", "--y", "b", "-R", "0", "--dropna")
        assert code == 0, err


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_cli_disco_prints_its_seed(tmp_path, fmt):
    # issue 30: the seed was only on stderr and in JSON, so a -q text/CSV run could not be repeated
    rng = np.random.default_rng(0)
    rows = "\n".join(f"{v},{g}" for v, g in zip(rng.normal(size=40), np.repeat(["a", "b"], 20)))
    (tmp_path / "d.csv").write_text("x,g\n" + rows + "\n")
    env = dict(os.environ, PYTHONPATH=PKG_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "energystats", "disco", str(tmp_path / "d.csv"),
                           "--by", "g", "-R", "99", "--seed", "12345", "-q", "--format", fmt],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [l for l in proc.stdout.splitlines() if l.strip() and not l.startswith("columns used")]
    header, between = lines[1 if fmt == "text" else 0], \
        next(l for l in lines if l.startswith("Between"))
    assert "seed" in header and "12345" in between


class TestResamplesBound:
    # issue 30: n_resamples = 10**12 failed with NumPy's message (or ran) outside the
    # homogeneity tests; every entry point that resamples names the bound
    @pytest.mark.parametrize("call", [
        lambda R: es.independence_test(np.arange(8.0), np.arange(8.0) ** 2, n_resamples=R),
        lambda R: es.partial_distance_correlation_test(np.arange(8.0), np.arange(8.0) ** 2,
                                                       np.arange(8.0) % 3, n_resamples=R),
        lambda R: es.mutual_independence_test(np.arange(8.0), np.arange(8.0) ** 2, n_resamples=R),
        lambda R: es.distance_correlation_matrix(np.c_[np.arange(8.0), np.arange(8.0) ** 2],
                                                 pvalue="permutation", n_resamples=R),
        lambda R: es.normality_test(np.arange(8.0) ** 1.5, n_resamples=R),
        lambda R: es.poisson_test(np.arange(8) % 3, n_resamples=R),
        lambda R: es.gof_test(np.arange(1.0, 9.0), "expon", n_resamples=R),
        lambda R: es.cluster_test(np.r_[np.arange(8.0), 20 + np.arange(8.0)], 2, n_resamples=R),
        lambda R: es.energy_test(np.arange(8.0), labels=np.arange(8) % 2, n_resamples=R),
    ])
    def test_n_resamples_beyond_the_bound_is_named(self, call):
        with pytest.raises(ValueError, match=r"`n_resamples` must be an integer in \[[01], 10\*\*9\]; got 1000000000000"):
            call(10**12)


class TestSampleShape:
    # one shape rule for arrays and Dask arrays (_validation.check_sample_shape)
    @pytest.mark.parametrize("lazy", [False, True])
    def test_empty_featureless_and_3d_are_named(self, lazy):
        if lazy:
            da = pytest.importorskip("dask.array")
            wrap = lambda a: da.from_array(a, chunks=2)  # noqa: E731
        else:
            wrap = np.asarray
        cases = [(np.empty((0, 2)), r"`x` must have at least 1 sample\(s\); it is empty"),
                 (np.empty((3, 0)), r"`x` has no features \(shape \(3, 0\)\)"),
                 (np.zeros((2, 2, 2)), r"`x` must be a 1-D or 2-D array; got shape \(2, 2, 2\)")]
        for arr, msg in cases:
            with pytest.raises(ValueError, match=msg):
                es.energy_distance(wrap(arr), np.ones((2, 2)))
