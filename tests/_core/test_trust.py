"""Trust in the data path (Python API): nothing dropped, reordered, coerced or
rounded without the user being told; one-point groups; seeds that repeat a run.

Each test here failed on the code before the input layer was rewritten (a
stray text cell dropped the column, Series labels were used by position,
strings and datetimes were converted, one-point groups were refused, and an
unseeded run could not be repeated).  Expected numbers come from R `energy`
1.7-11 (commands quoted) or from plain numpy loops, never from the package.
"""
from __future__ import annotations

import itertools
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats.datasets import load_iris

from ..reference import ref_energy, ref_wst

PKG_ROOT = str(Path(es.__file__).resolve().parents[1])


def ref_energy_stat(X, labels):
    """R's eqdist.etest statistic: sum_{i<j} n_i n_j / (n_i + n_j) E(C_i, C_j)."""
    X, labels = np.asarray(X, float), np.asarray(labels)
    groups = sorted(set(labels.tolist()), key=str)
    stat = 0.0
    for a, b in itertools.combinations(groups, 2):
        A, B = X[labels == a], X[labels == b]
        stat += len(A) * len(B) / (len(A) + len(B)) * ref_energy(A, B)
    return stat


@pytest.fixture
def frame():
    rng = np.random.default_rng(20261122)
    n = 24
    df = pd.DataFrame(rng.normal(size=(n, 2)), columns=["x", "y"])
    df["group"] = np.repeat(["a", "b", "c"], n // 3)
    df.loc[df.group == "c", "x"] += 2.0
    return df


# -- a stray text cell is never dropped ------------------------------------------

class TestStrayTextCell:
    def test_energy_test_names_column_row_and_value(self, frame):
        df = frame.copy()
        df["x"] = df["x"].astype(object)
        df.loc[5, "x"] = "n/a?"
        # the landed code dropped column x silently and tested y alone
        for numeric_only in (False, True):
            with pytest.raises(ValueError, match=r"column 'x' is numeric but for 1 cell\(s\) of "
                                                 r"text: the first is 'n/a\?' in row 5"):
                es.energy_test(df, by="group", n_resamples=9, rng=0, numeric_only=numeric_only)
        for f in (es.disco, es.dispersion):
            with pytest.raises(ValueError, match="column 'x'"):
                f(df, by="group")

    def test_text_numbers_are_not_parsed(self, frame):
        df = frame.assign(x=frame["x"].map(repr))      # every cell a string such as '0.12'
        with pytest.raises(ValueError, match="numbers stored as text"):
            es.dispersion(df, by="group")

    def test_decimal_comma_cells_get_a_hint(self, frame):
        df = frame.assign(x=pd.Series([f"{v:.3f}".replace(".", ",") for v in frame["x"]], dtype=object))
        df.loc[0, "x"] = 1.5          # mostly text that looks like numbers, one real number
        with pytest.raises(ValueError, match="decimal comma"):
            es.dispersion(df, by="group")

    def test_wholly_non_numeric_column(self, frame):
        df = frame.assign(note="free text", when=pd.Timestamp("2026-01-01"))
        with pytest.raises(TypeError, match=r"non-numeric column\(s\) \['note', 'when'\].*numeric_only=True"):
            es.energy_test(df, by="group", n_resamples=9)
        res = es.energy_test(df, by="group", n_resamples=0, numeric_only=True)
        assert res.columns == ["x", "y"]                      # what was used is recorded
        np.testing.assert_allclose(res.statistic,
                                   ref_energy_stat(frame[["x", "y"]], frame.group), rtol=1e-12)
        d = es.dispersion(df, by="group", numeric_only=True)
        assert d.columns == ["x", "y"]
        assert es.dispersion(frame[["x", "y"]].to_numpy(), frame.group).columns is None
        with pytest.raises(TypeError, match="not numeric"):
            es.energy_test(df, by="group", columns=["x", "note"])

    def test_object_column_of_numbers_is_used(self, frame):
        df = frame.assign(x=frame["x"].astype(object))
        res = es.dispersion(df, by="group")
        assert res.W == pytest.approx(es.dispersion(frame, by="group").W, rel=1e-15)


# -- labels with an index are aligned ----------------------------------------------

class TestLabelAlignment:
    def test_shuffled_series_is_aligned_by_index(self, frame):
        X = frame[["x", "y"]]
        labels = frame["group"]
        shuffled = labels.sample(frac=1.0, random_state=3)
        assert not shuffled.index.equals(X.index)
        want = ref_energy_stat(X.to_numpy(), labels.to_numpy())
        res = es.energy_test(X, labels=shuffled, n_resamples=0)
        assert res.statistic == pytest.approx(want, rel=1e-12)     # landed code: used by position
        d_aligned = es.disco(X, labels=shuffled, n_resamples=0)
        d_ref = es.disco(X, labels=labels.to_numpy(), n_resamples=0)
        assert d_aligned.statistic == pytest.approx(d_ref.statistic, rel=1e-12)
        assert es.dispersion(X, shuffled).S == pytest.approx(es.dispersion(X, labels).S, rel=1e-12)

    def test_plain_arrays_stay_positional(self, frame):
        X = frame[["x", "y"]]
        shuffled = frame["group"].sample(frac=1.0, random_state=3)
        pos = es.dispersion(X, shuffled.to_numpy())
        W, _, _ = ref_wst(X.to_numpy(), shuffled.to_numpy())
        assert pos.W == pytest.approx(W, rel=1e-12)

    def test_mismatched_index_is_an_error(self, frame):
        X = frame[["x", "y"]]
        other = pd.Series(frame["group"].to_numpy(), index=np.arange(100, 124))
        with pytest.raises(ValueError, match="index does not match"):
            es.energy_test(X, labels=other, n_resamples=0)
        dup = pd.Series(frame["group"].to_numpy(), index=[0] * 24)
        with pytest.raises(ValueError, match="duplicate"):
            es.dispersion(X, dup)

    def test_multi_factor_labels_frame_is_aligned(self, frame):
        X = frame[["x", "y"]]
        f = pd.DataFrame({"g": frame["group"], "h": np.tile(["u", "v"], 12)})
        shuffled = f.sample(frac=1.0, random_state=5)
        a = es.disco(X, labels=shuffled, n_resamples=0)
        b = es.disco(X, labels=f, n_resamples=0)
        np.testing.assert_allclose(a.statistic, b.statistic, rtol=1e-12)

    def test_clustering_accuracy_aligns_series(self):
        t = pd.Series(["a", "a", "b", "b"], index=[1, 2, 3, 4])
        p = pd.Series([0, 1, 0, 1], index=[1, 3, 2, 4])       # = [0, 0, 1, 1] on t's index
        assert es.clustering_accuracy(t, p) == 1.0            # by position it would be 0.5
        assert es.clustering_accuracy(t.to_numpy(), p.to_numpy()) == 0.5


# -- refused and flagged conversions ----------------------------------------------

class TestRefusedInput:
    @pytest.mark.parametrize("bad, what", [
        (np.array([["1.5", "2"], ["3", "4"]]), "text"),
        (np.array([[b"1", b"2"], [b"3", b"4"]]), "bytes"),
        (np.array(["2026-01-01", "2026-01-02", "2026-01-05"], dtype="datetime64[D]"), "datetimes"),
        (np.array([1, 2, 30], dtype="timedelta64[s]"), "timedeltas"),
        (np.array([1.0, "2", 3.0], dtype=object), "numeric"),
    ])
    def test_named_type_error(self, bad, what):
        # the landed code parsed strings and counted datetime units without a word
        with pytest.raises(TypeError, match=rf"`x`.*{what}"):
            es.energy_distance(bad, bad[:2])

    def test_masked_array(self):
        m = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], mask=[[0, 0], [1, 0], [0, 0]])
        with pytest.raises(ValueError, match=r"`X` is a masked array with 1 masked value"):
            es.dispersion(m, [0, 0, 1])
        unmasked = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        assert es.dispersion(unmasked, [0, 0, 1]).W == es.dispersion(unmasked.data, [0, 0, 1]).W

    def test_duplicate_column_names(self, frame):
        df = frame.rename(columns={"y": "x"})
        for call in (lambda: es.energy_test(df, by="group", n_resamples=0),
                     lambda: es.dispersion(df[["x"]], frame.group),
                     lambda: es.energy_distance(df.iloc[:5], df.iloc[5:], columns=["x"])):
            with pytest.raises(ValueError, match=r"duplicate column names \['x'\]"):
                call()

    def test_integers_beyond_2_53_warn(self):
        big = np.array([2**53 + 1, 2**53 + 3, 5, 7], dtype=np.int64)
        with pytest.warns(es.DataConversionWarning, match=r"2\*\*53") as rec:
            es.dispersion(big, [0, 0, 1, 1])
        assert rec[0].filename == __file__               # points at the caller, not the package
        with pytest.warns(es.DataConversionWarning):
            es.energy_test(pd.DataFrame({"v": big, "g": [0, 0, 1, 1]}), by="g", n_resamples=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            es.dispersion(np.array([2**53, 5, 6, 7]), [0, 0, 1, 1])   # exactly representable


# -- one-point groups ---------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:.*hold a single row")  # the one-row-group warning, expected
class TestOnePointGroups:
    """As R's eqdist.etest and disco, a group may hold one point (its g(C, C) = 0)."""

    def setup_method(self):
        iris = load_iris()
        self.x3 = iris.iloc[list(range(10)) + list(range(50, 60)) + [100], :4].to_numpy()
        self.l3 = ["a"] * 10 + ["b"] * 10 + ["c"]
        self.x2 = iris.iloc[list(range(10)) + [100], :4].to_numpy()
        self.l2 = ["a"] * 10 + ["b"]

    def test_against_R(self):
        # R energy 1.7-11:
        #   x <- as.matrix(iris[c(1:10, 51:60, 101), 1:4])
        #   eqdist.etest(x, sizes = c(10, 10, 1), R = 199)$statistic     # 39.3323031608082
        #   d <- disco(x, factors = factor(c(rep("a", 10), rep("b", 10), "c")), R = 199)
        #   c(d$statistic, d$between, d$within, d$total)
        #   # 18.6598111516285 16.1292890938158 7.77947861662433 23.9087677104402
        #   x <- as.matrix(iris[c(1:10, 101), 1:4])
        #   eqdist.etest(x, sizes = c(10, 1), R = 199)$statistic          # 9.18726048236017
        #   d <- disco(x, factors = factor(c(rep("a", 10), "b")), R = 199)
        #   # 16.49763854787125 4.59363024118009 2.50597514611904 7.09960538729913
        t3 = es.energy_test(self.x3, labels=self.l3, n_resamples=0)
        assert t3.statistic == pytest.approx(39.3323031608082, rel=1e-13)
        d3 = es.disco(self.x3, labels=self.l3, n_resamples=0)
        np.testing.assert_allclose([d3.statistic, d3.between, d3.within, d3.total],
                                   [18.6598111516285, 16.1292890938158, 7.77947861662433,
                                    23.9087677104402], rtol=1e-13)
        t2 = es.energy_test(self.x2[:10], self.x2[10:], n_resamples=0)
        assert t2.statistic == pytest.approx(9.18726048236017, rel=1e-13)
        d2 = es.disco(self.x2, labels=self.l2, n_resamples=0)
        np.testing.assert_allclose([d2.statistic, d2.between, d2.within, d2.total],
                                   [16.49763854787125, 4.59363024118009, 2.50597514611904,
                                    7.09960538729913], rtol=1e-13)

    def test_exact_pvalue_by_enumeration(self):
        # 11 distinct relabellings (which point is alone): enumerate them by hand
        stats = []
        for i in range(11):
            lab = np.array(["a"] * 11, dtype=object)
            lab[i] = "b"
            stats.append(ref_energy_stat(self.x2, lab))
        obs = ref_energy_stat(self.x2, np.array(self.l2))
        want = sum(s >= obs - 1e-12 * abs(obs) for s in stats) / 11
        res = es.energy_test(self.x2, labels=self.l2)
        assert res.exact and res.n_resamples == 11
        assert res.pvalue == pytest.approx(want, abs=1e-15)
        assert res.pvalue_se == 0.0 and res.seed is None

    def test_disco_with_no_within_degrees_of_freedom(self):
        with pytest.raises(ValueError, match=r"within-group degrees of freedom.*got 0"):
            es.disco(np.arange(4.0), labels=[0, 1, 2, 3])


# -- seeds and Monte Carlo error ------------------------------------------------------

class TestSeedAndMonteCarloError:
    def test_energy_test_records_and_reproduces_its_seed(self, frame):
        a = es.energy_test(frame, by="group", n_resamples=99)
        assert isinstance(a.seed, int) and a.seed >= 0
        b = es.energy_test(frame, by="group", n_resamples=99, rng=a.seed)
        assert b.seed == a.seed and b.pvalue == a.pvalue
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        c = es.energy_test(frame, by="group", n_resamples=99)
        assert c.seed != a.seed           # 2**32 possible seeds: a collision is a bug
        g = es.energy_test(frame, by="group", n_resamples=99, rng=np.random.default_rng(1))
        assert g.seed is None             # a Generator's seed is not known
        with pytest.raises(ValueError, match="non-negative integer seed"):
            es.energy_test(frame, by="group", rng=-1)

    def test_disco_cluster_test_and_clustering_record_seeds(self, frame):
        d = es.disco(frame, by="group", n_resamples=49)
        assert es.disco(frame, by="group", n_resamples=49, rng=d.seed).pvalue == d.pvalue
        X = frame[["x", "y"]]
        ct = es.cluster_test(X, 2, n_resamples=9, n_init=2)
        again = es.cluster_test(X, 2, n_resamples=9, n_init=2, rng=ct.seed)
        np.testing.assert_array_equal(ct.null_distribution, again.null_distribution)
        assert ct.columns == ["x", "y"]
        fit = es.energy_clustering(X, 3, n_init=1)
        refit = es.energy_clustering(X, 3, n_init=1, rng=fit.seed)
        np.testing.assert_array_equal(fit.labels, refit.labels)

    def test_pvalue_standard_error(self, frame):
        res = es.energy_test(frame, by="group", n_resamples=199, rng=4)
        p = res.pvalue
        assert res.pvalue_se == pytest.approx(np.sqrt(p * (1 - p) / 199), rel=1e-15)
        d = es.disco(frame, by="group", n_resamples=199, rng=4)
        assert d.pvalue_se == pytest.approx(np.sqrt(d.pvalue * (1 - d.pvalue) / 199), rel=1e-15)
        assert es.energy_test(frame, by="group", n_resamples=0).pvalue_se is None


# -- the package imports light ---------------------------------------------------------

def test_import_does_not_import_scikit_learn_or_pandas():
    code = ("import sys, energystats; print('sklearn' in sys.modules, 'pandas' in sys.modules); "
            "energystats.dispersion([0.0, 1.0], [0, 1]); print('sklearn' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=PKG_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120, check=True).stdout.split()
    assert out == ["False", "False", "False"]


class TestSampleColumns:
    """DataFrame samples are matched by column name, never silently by position."""

    def test_reordered_columns_are_aligned(self, frame):
        a = frame.loc[frame.group == "a", ["x", "y"]]
        c = frame.loc[frame.group == "c", ["x", "y"]]
        want = es.energy_distance(a.to_numpy(), c.to_numpy())
        assert es.energy_distance(a, c[["y", "x"]]) == pytest.approx(want, rel=1e-15)
        res = es.energy_test(a, c[["y", "x"]], n_resamples=0)
        assert res.columns == ["x", "y"]
        assert res.statistic == pytest.approx(
            ref_energy_stat(np.vstack([a, c]), [0] * len(a) + [1] * len(c)), rel=1e-12)

    def test_different_columns_are_an_error(self, frame):
        a = frame.loc[frame.group == "a", ["x", "y"]]
        c = frame.loc[frame.group == "c", ["x", "y"]].rename(columns={"y": "z"})
        with pytest.raises(ValueError, match="same columns"):
            es.energy_distance(a, c)
        with pytest.raises(ValueError, match="same columns"):
            es.disco(a, c, n_resamples=0)
