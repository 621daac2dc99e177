"""The design helpers of the balance package: factor expansion (against plain per-level
indicators written out here), weights aligned by index, powers of two."""
import numpy as np
import pandas as pd
import pytest

from energystats.balance._design import (FactorExpansion, align_weights, column_shifts,
                                         expand_factors, is_factor, pow2_shift)


def _frame():
    return pd.DataFrame({
        "age": [30, 41, 52, 20, 35],
        "race": ["w", "b", "h", "b", "w"],                       # object / str
        "male": [True, False, True, True, False],                  # bool, two levels
        "site": pd.Categorical(["y", "x", "y", "y", "x"], categories=["z", "y", "x"]),
        "score": [0.5, 1.5, 2.5, 3.5, 4.5],
    }, index=["a", "b", "c", "d", "e"])


class TestExpandFactors:
    def test_names_order_and_values_against_indicators(self):
        df = _frame()
        Z, info = expand_factors(df)
        assert list(Z.columns) == ["age", "race_b", "race_h", "race_w", "male_True", "site_x",
                                   "score"]
        assert all(dt == np.float64 for dt in Z.dtypes)
        assert Z.index.equals(df.index)
        for lev in "bhw":                                       # sorted levels, one each
            np.testing.assert_array_equal(Z[f"race_{lev}"], [float(r == lev) for r in df["race"]])
        # two levels: the second's column only (cobalt's drop.first = "if2")
        np.testing.assert_array_equal(Z["male_True"], [1.0, 0.0, 1.0, 1.0, 0.0])
        # a categorical: its categories' order, the unused 'z' left out -> y, x -> x kept
        np.testing.assert_array_equal(Z["site_x"], [0.0, 1.0, 0.0, 0.0, 1.0])
        np.testing.assert_array_equal(Z["age"], df["age"].to_numpy(float))
        assert info.columns == {"race": ("race_b", "race_h", "race_w"), "male": ("male_True",),
                                "site": ("site_x",)}
        assert info.levels == {"race": ("b", "h", "w"), "male": (True,), "site": ("x",)}
        assert info.dropped == {"race": None, "male": False, "site": "y"}
        assert info.source["race_h"] == "race" and "age" not in info.source
        assert bool(info)

    @pytest.mark.parametrize("drop_first,want", [
        (False, ["age", "race_b", "race_h", "race_w", "male_False", "male_True", "site_y",
                 "site_x", "score"]),
        (True, ["age", "race_h", "race_w", "male_True", "site_x", "score"]),
    ])
    def test_drop_first(self, drop_first, want):
        Z, info = expand_factors(_frame(), drop_first=drop_first)
        assert list(Z.columns) == want
        if drop_first:
            assert info.dropped["race"] == "b"
            assert (Z[["race_h", "race_w"]].sum(axis=1) <= 1).all()
        else:
            np.testing.assert_array_equal(Z[["race_b", "race_h", "race_w"]].sum(axis=1), 1.0)

    def test_pandas_string_and_nullable_dtypes(self):
        df = pd.DataFrame({"s": pd.array(["p", "q", "p"], dtype="string"),
                           "b": pd.array([True, False, True], dtype="boolean"),
                           "i": pd.array([1, 2, 3], dtype="Int64")})
        Z, info = expand_factors(df)
        assert list(Z.columns) == ["s_q", "b_True", "i"]
        assert Z["i"].dtype == np.float64
        assert set(info.columns) == {"s", "b"}

    def test_exclude_leaves_a_column_as_it_is(self):
        df = _frame().assign(arm=["t", "c", "t", "c", "c"])
        Z, info = expand_factors(df, exclude=["arm"])
        assert list(Z.columns)[-1] == "arm" and Z["arm"].tolist() == ["t", "c", "t", "c", "c"]
        assert "arm" not in info.columns

    def test_one_level_factor_is_a_column_of_ones(self):
        Z, info = expand_factors(pd.DataFrame({"g": ["a", "a", "a"], "x": [1.0, 2.0, 3.0]}))
        assert list(Z.columns) == ["g_a", "x"] and Z["g_a"].tolist() == [1.0, 1.0, 1.0]
        assert info.dropped["g"] is None

    def test_mixed_types_keep_first_seen_order(self):
        Z, _ = expand_factors(pd.DataFrame({"g": ["a", 1, "a", 2.5]}, dtype=object))
        assert list(Z.columns) == ["g_a", "g_1", "g_2.5"]

    def test_no_factors_and_arrays(self):
        X = np.arange(6).reshape(3, 2)
        Z, info = expand_factors(X)
        assert Z.dtype == np.float64 and np.array_equal(Z, X) and not info
        assert info == FactorExpansion()
        Z, info = expand_factors([[1, 2], [3, 4]])
        assert Z.dtype == np.float64
        df = pd.DataFrame({"a": [1, 2], "b": [0.5, 1.5]})
        Z, info = expand_factors(df)
        assert list(Z.columns) == ["a", "b"] and all(Z.dtypes == np.float64) and not info
        s = pd.Series(["u", "v", "u"], name="g")                  # a named factor Series
        Z, info = expand_factors(s)
        assert list(Z.columns) == ["g_v"]
        text = np.array([["a"], ["b"]])                           # left for the input layer
        assert expand_factors(text)[0] is text

    def test_is_factor(self):
        df = _frame()
        assert [is_factor(df[c]) for c in df] == [False, True, True, True, False]

    # -- input validation --
    @pytest.mark.parametrize("missing", [None, np.nan, pd.NA])
    def test_missing_value_is_refused_naming_the_column(self, missing):
        df = _frame()
        df["race"] = df["race"].astype(object)
        df.loc["c", "race"] = missing
        with pytest.raises(ValueError, match=r"`X`: column 'race' is a factor \(dtype object\) with "
                                             r"1 missing value\(s\), e\.g\. at row 'c'; missing "
                                             r"values are not dropped silently"):
            expand_factors(df)

    def test_missing_in_a_categorical(self):
        df = pd.DataFrame({"g": pd.Categorical(["a", None, "b"])})
        with pytest.raises(ValueError, match=r"column 'g' is a factor \(dtype category\)"):
            expand_factors(df, name="covariates")

    def test_name_clash(self):
        df = pd.DataFrame({"g": ["a", "b", "c"], "g_a": [1.0, 2.0, 3.0]})
        with pytest.raises(ValueError, match=r"gives the name\(s\) \['g_a'\] twice"):
            expand_factors(df)

    def test_bad_drop_first(self):
        with pytest.raises(ValueError, match=r"`drop_first` must be 'if2', True or False; got 1"):
            expand_factors(_frame(), drop_first=1)


class TestAlignWeights:
    def test_series_against_a_frame(self):
        df = _frame()
        w = pd.Series([1.0, 2.0, 3.0, 4.0, 5.0], index=df.index)
        got = align_weights(df, w.iloc[::-1], "weights")
        assert got.tolist() == w.tolist() and got.index.equals(df.index)
        with pytest.raises(ValueError, match=r"`base_weights` is indexed but its index does not "
                                             r"match the data's"):
            align_weights(df, pd.Series(w.to_numpy()), "base_weights")

    def test_positional_otherwise(self):
        w = pd.Series([1.0, 2.0], index=[5, 6])
        assert align_weights(np.zeros((2, 1)), w, "weights") is w
        arr = np.array([1.0, 2.0])
        assert align_weights(pd.DataFrame({"a": [1, 2]}), arr, "weights") is arr


class TestPowersOfTwo:
    @pytest.mark.parametrize("c", [2.0 ** 900, 2.0 ** -900, 1e300, 1e-300, 3.0])
    def test_shift_brings_the_largest_into_half_one(self, c):
        a = np.array([0.25, -1.0, 0.75]) * c
        e = pow2_shift(a)
        top = np.max(np.abs(np.ldexp(a, -e)))
        assert 0.5 <= top < 1.0
        np.testing.assert_array_equal(np.ldexp(np.ldexp(a, -e), e), a)      # exact

    def test_zero_and_columns(self):
        assert pow2_shift(np.zeros(3)) == 0 and pow2_shift(np.array([])) == 0
        Z = np.array([[1.0, 2.0 ** 700, 0.0], [-3.0, 1.0, 0.0]])
        np.testing.assert_array_equal(column_shifts(Z), [2, 701, 0])
