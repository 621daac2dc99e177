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
from energystats._permutation import pvalue_from_null

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
        X = np.array([0.0, 0.0, 0.0, 5.0, 5.0, 5.0])                  # W = 0 < S: F = inf
        with pytest.warns(es.DegenerateStatisticWarning, match="inf"):
            res = es.disco(X, labels=[0, 0, 0, 1, 1, 1])
        assert res.statistic == np.inf and np.isnan(res.pvalue)


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
