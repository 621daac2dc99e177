"""Polars and PyArrow tables wherever a pandas DataFrame is taken (issue 52, part 5): converted
once at the input layer (``_core._validation.foreign_to_pandas``), columns kept by name, rows
paired by position (these tables have no index); every result equals the pandas call's."""
import numpy as np
import pandas as pd
import pytest

import energystats as es

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def frames():
    rng = np.random.default_rng(20261207)
    n = 60
    df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.normal(size=n),
                       "g": np.repeat(["x", "y", "z"], 20)})
    df["t"] = (df.a + rng.normal(size=n) > 0).astype(int)
    df["y"] = df.a + df.t + rng.normal(size=n)
    return {"pandas": df, "polars": pl.from_pandas(df),
            "pyarrow": pa.Table.from_pandas(df, preserve_index=False)}


def _col(D, c):
    return D[c] if not isinstance(D, pa.Table) else D.column(c)


def _sel(D, cols):
    return D[cols] if isinstance(D, pd.DataFrame) else D.select(cols)


CALLS = {
    "energy_test by=": lambda D: es.energy_test(_sel(D, ["a", "b", "g"]), by="g", n_resamples=19,
                                                rng=1).statistic,
    "energy_test labels=": lambda D: es.energy_test(_sel(D, ["a", "b"]), labels=_col(D, "g"),
                                                    n_resamples=19, rng=1).pvalue,
    "energy_test columns=": lambda D: es.energy_test(D, by="g", columns=["a", "b"],
                                                     n_resamples=19, rng=1).statistic,
    "energy_distance": lambda D: es.energy_distance(_sel(D, ["a", "b"]), _sel(D, ["a", "b"])[::-1]
                                                    if isinstance(D, pd.DataFrame) else
                                                    _sel(D, ["a", "b"]).reverse() if hasattr(D, "reverse")
                                                    else _sel(D, ["a", "b"]).take(np.arange(59, -1, -1))),
    "distance_correlation": lambda D: es.distance_correlation(_sel(D, ["a"]), _sel(D, ["b", "c"])),
    "independence_test": lambda D: es.independence_test(_sel(D, ["a"]), _col(D, "b"),
                                                        n_resamples=19, rng=1).statistic,
    "partial_distance_correlation": lambda D: es.partial_distance_correlation(
        _sel(D, ["a"]), _sel(D, ["b"]), _sel(D, ["c"])),
    "e_divisive": lambda D: es.e_divisive(_col(D, "a"), n_resamples=19, rng=1,
                                          min_size=10).changepoints.tolist(),
    "e_cp3o": lambda D: es.e_cp3o(_sel(D, ["a", "b"]), delta=5).gof.tolist(),
    "energy_balancing_weights": lambda D: es.energy_balancing_weights(
        _sel(D, ["a", "b"]), _col(D, "t")).weights.tolist(),
    "weighted_effect": lambda D: np.asarray(es.weighted_effect(
        _col(D, "y"), es.energy_balancing_weights(_sel(D, ["a", "b"]), _col(D, "t")),
        n_boot=10, rng=1).estimate).tolist(),
    "balance_table": lambda D: es.balance_table(_sel(D, ["a", "b"]), _col(D, "t")).energy_before,
    "EnergyClustering": lambda D: es.EnergyClustering(n_clusters=2, random_state=0).fit(
        _sel(D, ["a", "b"])).labels_.tolist(),
    "normality_test": lambda D: es.normality_test(_sel(D, ["a", "b"]), n_resamples=19,
                                                  rng=1).statistic,
    "distance_correlation_screen": lambda D: es.distance_correlation_screen(
        _sel(D, ["a", "b", "c"]), _col(D, "y"), n_resamples=19, rng=1).to_frame()["dcor"].tolist(),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("lib", ["polars", "pyarrow"])
def test_same_result_as_pandas(frames, name, lib):
    expected = CALLS[name](frames["pandas"])
    got = CALLS[name](frames[lib])
    if isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-12)
    else:
        assert got == expected


def test_columns_are_recorded_by_name(frames):
    res = es.energy_test(frames["polars"], by="g", columns=["a", "b"], n_resamples=19, rng=1)
    assert list(res.columns) == ["a", "b"]
    res = es.e_cp3o(frames["pyarrow"].select(["b", "c"]), delta=5)
    assert list(res.columns) == ["b", "c"]


def test_lazy_frame_is_refused_with_the_remedy(frames):
    with pytest.raises(TypeError, match=r"`X` is a Polars LazyFrame: collect it first"):
        es.energy_test(frames["polars"].lazy(), by="g")


def test_nulls_are_named_not_dropped(frames):
    D = frames["polars"].with_columns(pl.when(pl.col("a") > 1.5).then(None).otherwise(pl.col("a"))
                                      .alias("a"))
    with pytest.raises(ValueError, match="missing"):
        es.energy_test(D, by="g", columns=["a", "b"], n_resamples=19, rng=1)


def test_text_column_is_named(frames):
    with pytest.raises(TypeError, match="'g'"):
        es.normality_test(frames["pyarrow"].select(["a", "g"]), n_resamples=19, rng=1)
