"""Formulas for the dependence functions: ``independence_test("y ~ a + C(g)", data=df)`` and
one-sided ``"~ a + b"`` for x or y give the statistics and p-values of the DataFrame call with
the same columns (factors as one 0/1 column per level, built here by hand), record the design's
columns, and refuse what they cannot read with the argument named."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest

import energystats as es

needs_formulaic = pytest.mark.skipif(importlib.util.find_spec("formulaic") is None,
                                     reason="formulaic is not installed (the [formula] extra)")


@pytest.fixture
def df():
    g = np.random.default_rng(0)
    n = 60
    out = pd.DataFrame({"a": g.normal(size=n), "b": g.normal(size=n) + 5.0,
                        "grp": g.choice(["u", "v", "w"], n)},
                       index=pd.Index([f"r{i}" for i in range(n)], name="id"))
    out["y"] = out.a ** 2 + (out.grp == "u") + 0.3 * g.normal(size=n)
    out["z"] = g.normal(size=n)
    return out


def _indicators(col):
    """One 0/1 column per observed level, by hand."""
    return pd.DataFrame({f"{col.name}_{lv}": (col == lv).astype(float) for lv in sorted(col.unique())},
                        index=col.index)


@needs_formulaic
def test_two_sided_equals_the_frame_call(df):
    got = es.distance_stats("y + z ~ a + C(grp)", data=df)
    X = pd.concat([df[["a"]], _indicators(df.grp)], axis=1)
    ref = es.distance_stats(X, df[["y", "z"]])
    assert got.columns_x == ["a", "grp_u", "grp_v", "grp_w"] and got.columns_y == ["y", "z"]
    for f in ("dcov", "dcor", "dvar_x", "dvar_y", "dcor_u"):
        assert getattr(got, f) == getattr(ref, f)
    assert es.distance_correlation("y ~ a + grp", data=df) == es.distance_correlation(X, df[["y"]])
    t1 = es.independence_test("y ~ a + C(grp)", data=df, rng=4, n_resamples=199)
    t2 = es.independence_test(X, df[["y"]], rng=4, n_resamples=199)
    assert (t1.statistic, t1.pvalue) == (t2.statistic, t2.pvalue)
    assert es.distance_correlation_ttest("y ~ a", data=df).pvalue == \
        es.distance_correlation_ttest(df[["a"]], df[["y"]]).pvalue
    assert es.independence_coefficient("y ~ a + b", data=df) == \
        es.independence_coefficient(df[["a", "b"]], df[["y"]])


@needs_formulaic
def test_one_sided_formulas_and_transforms(df):
    got = es.distance_correlation("~ a + I(a**2)", "~ np.log(b)", data=df)
    ref = es.distance_correlation(np.column_stack([df.a, df.a ** 2]), np.log(df.b.to_numpy()))
    assert got == pytest.approx(ref, rel=1e-14)
    mixed = es.distance_correlation("~ a", df[["y"]], data=df)
    assert mixed == es.distance_correlation(df[["a"]], df[["y"]])


@needs_formulaic
def test_projection_test_takes_a_formula(df):
    t1 = es.independence_test("y ~ a + grp", data=df, method="projection", n_projections=5,
                              n_resamples=19, rng=0)
    X = pd.concat([df[["a"]], _indicators(df.grp)], axis=1)
    t2 = es.independence_test(X, df[["y"]], method="projection", n_projections=5, n_resamples=19,
                              rng=0)
    assert (t1.statistic, t1.pvalue, t1.columns_x) == (t2.statistic, t2.pvalue, t2.columns_x)


@needs_formulaic
def test_refusals_name_the_argument(df):
    with pytest.raises(TypeError, match="`y` is missing"):
        es.distance_correlation(df[["a"]])
    with pytest.raises(TypeError, match="`y` is missing"):
        es.distance_correlation("~ a", data=df)
    with pytest.raises(TypeError, match="pass the data frame"):
        es.distance_correlation("y ~ a")
    with pytest.raises(KeyError, match=r"`x`: the formula 'y ~ q' names \['q'\]"):
        es.distance_correlation("y ~ q", data=df)
    with pytest.raises(TypeError, match="`y` has non-numeric"):
        es.independence_test("grp ~ a", data=df)
    bad = df.copy()
    bad.loc["r3", "a"] = np.nan
    with pytest.raises(ValueError, match="'a'"):
        es.distance_correlation("y ~ a", data=bad)


def test_without_formulaic(df, monkeypatch):
    monkeypatch.setitem(sys.modules, "formulaic", None)        # `import formulaic` fails
    with pytest.raises(ImportError, match=r"formulaic.*pip install energy-statistics\[formula\]"):
        es.distance_correlation("y ~ a", data=df)
    assert es.distance_correlation("a", "y", data=df) == \
        es.distance_correlation(df[["a"]], df[["y"]])      # column names need no formulaic
