"""Formulas ('treat ~ age + C(race)', data=df) in the balance functions: the same weights,
table and effect as the DataFrame call with the same columns, formulaic's own columns for
transforms and interactions (against its model_matrix), the formula recorded, and the
named errors (missing values, bad formulas, formulaic not installed)."""
import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest

import energystats as es
from energystats._core._formula import formula_design
from energystats.balance._design import expand_factors

pytest.importorskip("osqp")

needs_formulaic = pytest.mark.skipif(importlib.util.find_spec("formulaic") is None,
                                     reason="formulaic is not installed (the [formula] extra)")


def _frame(n=80, seed=0):
    """A confounded study with numeric, text, categorical (an unused category) and bool
    columns, on an index of labels (not positions), and an outcome."""
    rng = np.random.default_rng(seed)
    age = rng.normal(40, 10, n).round()
    educ = rng.integers(8, 17, n).astype(float)
    race = rng.choice(["b", "h", "w"], n)
    t = (0.08 * (age - 40) + (race == "b") + rng.normal(size=n) > 0.3).astype(int)
    return pd.DataFrame({
        "treat": t, "age": age, "educ": educ, "race": race,
        "site": pd.Categorical(rng.choice(["y", "x"], n), categories=["z", "y", "x"]),
        "married": rng.integers(0, 2, n).astype(bool),
        "re78": 2.0 * t + 0.1 * age + (race == "h") + rng.normal(size=n),
    }, index=pd.Index([f"id{i}" for i in range(n)], name="id"))


COVARIATES = ["age", "educ", "race", "site", "married"]


@needs_formulaic
class TestFormulaDesign:
    def test_factors_as_the_dataframe_path(self):
        df = _frame()
        fd = formula_design("treat ~ age + educ + C(race) + site + married", df,
                            factors=expand_factors)
        Z, _ = expand_factors(df[COVARIATES])
        pd.testing.assert_frame_equal(fd.rhs, Z)
        assert list(fd.rhs.columns) == ["age", "educ", "race_b", "race_h", "race_w", "site_x",
                                        "married_True"]
        pd.testing.assert_series_equal(fd.lhs["treat"], df["treat"])
        assert fd.formula == "treat ~ age + educ + C(race) + site + married"

    @pytest.mark.parametrize("rhs", ["age + np.log(educ) + I(age**2) + age:educ",
                                     "age * educ + center(age) + np.exp(educ / 10)",
                                     "0 + age + np.log(educ)", "age + np.log(educ) - 1"])
    def test_transforms_and_interactions_are_formulaics(self, rhs):
        import formulaic

        df = _frame()
        fd = formula_design(f"treat ~ {rhs}", df, factors=expand_factors)
        mm = formulaic.model_matrix(f"treat ~ {rhs}", df).rhs
        want = mm.drop(columns=[c for c in mm.columns if c == "Intercept"]).astype(np.float64)
        pd.testing.assert_frame_equal(fd.rhs, want)
        assert "Intercept" not in fd.rhs.columns

    def test_factor_interactions_are_formulaics_factor_alone_is_ours(self):
        import formulaic

        df = _frame()
        fd = formula_design("treat ~ age + race + age:race", df, factors=expand_factors)
        mm = formulaic.model_matrix("treat ~ age + race + age:race", df).rhs
        inter = ["age:race[T.h]", "age:race[T.w]"]
        pd.testing.assert_frame_equal(fd.rhs[inter], mm[inter].astype(np.float64))
        assert list(fd.rhs.columns) == ["age", "race_b", "race_h", "race_w"] + inter

    def test_left_side_rules(self):
        df = _frame()
        fd = formula_design("~ age + race", df, factors=expand_factors, lhs="optional")
        assert fd.lhs is None and list(fd.rhs.columns) == ["age", "race_b", "race_h", "race_w"]
        fd = formula_design("treat + np.log(educ) ~ age", df, factors=expand_factors)
        assert list(fd.lhs.columns) == ["treat", "np.log(educ)"]
        np.testing.assert_array_equal(fd.lhs["np.log(educ)"], np.log(df["educ"]))
        with pytest.raises(ValueError, match=r"`X`: the formula 'treat ~ age' must be one-sided"):
            formula_design("treat ~ age", df, factors=expand_factors, lhs="forbidden")
        with pytest.raises(ValueError, match=r"`lhs` must be one of"):
            formula_design("treat ~ age", df, factors=expand_factors, lhs="maybe")

    def test_target_rows_coded_as_the_data(self):
        df = _frame()
        fd = formula_design("treat ~ age + race + site + center(age)", df, factors=expand_factors)
        D = fd.design(df.iloc[:7].drop(columns="treat"), "target")
        pd.testing.assert_frame_equal(D, fd.rhs.iloc[:7])     # centred by the data's mean
        new = df.iloc[:3].assign(race=["b", "q", "w"])
        with pytest.raises(ValueError, match=r"`target`: the factor 'race' has a level at index "
                                             r"'id1' \('q'\) outside its levels \['b', 'h', 'w'\] "
                                             r"\(those of `data`\)"):
            fd.design(new, "target")
        with pytest.raises(KeyError, match=r"`target`: column\(s\) \['site'\]"):
            fd.design(df.drop(columns="site"), "target")


@needs_formulaic
class TestEnergyBalancingWeights:
    @pytest.mark.parametrize("formula,cols", [
        ("treat ~ age + educ", ["age", "educ"]),
        ("treat ~ age + educ + C(race) + site + married", COVARIATES),
        ("treat ~ age + race", ["age", "race"]),
    ])
    def test_equals_dataframe_call(self, formula, cols):
        df = _frame()
        res = es.energy_balancing_weights(formula, data=df)
        ref = es.energy_balancing_weights(df[cols], df["treat"])
        np.testing.assert_array_equal(res.weights, ref.weights)
        assert res.columns == ref.columns and res.index.equals(df.index)
        assert res.objective == ref.objective
        assert res.formula == formula and ref.formula is None
        assert res.data is df and ref.data is None

    def test_att_base_weights_quantiles_and_target(self):
        df = _frame()
        s = pd.Series(np.linspace(0.5, 2.0, len(df)), index=df.index[::-1])   # aligned by label
        res = es.energy_balancing_weights("treat ~ age + C(race)", data=df, estimand="ATT",
                                          base_weights=s, quantiles={"age": 0.5})
        ref = es.energy_balancing_weights(df[["age", "race"]], df["treat"], estimand="ATT",
                                          base_weights=s, quantiles={"age": 0.5})
        np.testing.assert_array_equal(res.weights, ref.weights)
        target = _frame(n=30, seed=3)
        res = es.energy_balancing_weights("treat ~ age + race", data=df, target=target)
        Zt, _ = expand_factors(target[["age", "race"]])
        ref = es.energy_balancing_weights(df[["age", "race"]], df["treat"], target=Zt)
        np.testing.assert_array_equal(res.weights, ref.weights)

    def test_transform_columns_used(self):
        df = _frame()
        res = es.energy_balancing_weights("treat ~ age + np.log(educ) + age:educ", data=df)
        Z = pd.DataFrame({"age": df["age"], "np.log(educ)": np.log(df["educ"]),
                          "age:educ": df["age"] * df["educ"]})
        ref = es.energy_balancing_weights(Z, df["treat"])
        np.testing.assert_allclose(res.weights, ref.weights, rtol=0, atol=1e-9)
        assert res.columns == ["age", "np.log(educ)", "age:educ"]

    def test_independence_weights(self):
        df = _frame().assign(dose=lambda d: d["age"] / 10 + d["educ"])
        res = es.independence_weights("dose ~ age + C(race)", data=df)
        ref = es.independence_weights(df[["age", "race"]], df["dose"])
        np.testing.assert_array_equal(res.weights, ref.weights)
        assert res.formula == "dose ~ age + C(race)" and res.data is df
        lg = es.independence_weights("np.log(dose) ~ age", data=df)
        np.testing.assert_array_equal(
            lg.weights, es.independence_weights(df[["age"]], np.log(df["dose"])).weights)

    def test_polars_data(self):
        pl = pytest.importorskip("polars")
        df = _frame().reset_index(drop=True)
        res = es.energy_balancing_weights("treat ~ age + race", data=pl.from_pandas(df))
        ref = es.energy_balancing_weights(df[["age", "race"]], df["treat"])
        np.testing.assert_array_equal(res.weights, ref.weights)


@needs_formulaic
class TestBalanceTable:
    def test_equals_dataframe_call(self):
        df = _frame()
        w = es.energy_balancing_weights("treat ~ age + educ + C(race) + site + married", data=df)
        bt = es.balance_table("treat ~ age + educ + C(race) + site + married", data=df,
                              weights=w, thresholds={"smd": 0.1})
        ref = es.balance_table(df[COVARIATES], df["treat"], w, thresholds={"smd": 0.1})
        pd.testing.assert_frame_equal(bt.table, ref.table)
        pd.testing.assert_frame_equal(bt.ess, ref.ess)
        assert (bt.energy_before, bt.energy_after) == (ref.energy_before, ref.energy_after)
        assert bt.formula == "treat ~ age + educ + C(race) + site + married"
        assert ref.formula is None

    def test_continuous_and_before_only(self):
        df = _frame().assign(dose=lambda d: d["age"] / 10 + d["educ"])
        bt = es.balance_table("dose ~ age + race", data=df, treatment_kind="continuous")
        ref = es.balance_table(df[["age", "race"]], df["dose"], treatment_kind="continuous")
        pd.testing.assert_frame_equal(bt.table, ref.table)
        assert bt.kind == "continuous"

    def test_current_call_forms_unchanged(self):
        df = _frame()
        X = df[["age", "educ", "treat"]]
        a = es.balance_table(X, "treat")                      # the treatment as a column
        b = es.balance_table(X[["age", "educ"]], X["treat"])
        pd.testing.assert_frame_equal(a.table, b.table)


@needs_formulaic
class TestWeightedEffect:
    def test_outcome_by_name(self):
        df = _frame()
        w = es.energy_balancing_weights("treat ~ age + C(race)", data=df)
        by_name = es.weighted_effect("re78", w, outcome_model=None, se="sandwich")
        by_array = es.weighted_effect(df["re78"].to_numpy(), w, outcome_model=None,
                                      se="sandwich")
        np.testing.assert_array_equal(by_name.estimate, by_array.estimate)
        np.testing.assert_array_equal(by_name.std_error, by_array.std_error)
        ref = es.energy_balancing_weights(df[["age", "race"]], df["treat"])
        kern = es.weighted_effect("re78", w, rng=1)           # the kernel model, augmented
        np.testing.assert_array_equal(kern.estimate,
                                      es.weighted_effect(df["re78"], ref, rng=1).estimate)

    def test_data_argument(self):
        df = _frame()
        ref = es.energy_balancing_weights(df[["age", "educ"]], df["treat"])
        eff = es.weighted_effect("re78", ref, data=df.iloc[::-1], outcome_model=None, se=None)
        want = es.weighted_effect(df["re78"], ref, outcome_model=None, se=None)
        np.testing.assert_array_equal(eff.estimate, want.estimate)   # aligned by index
        arr = es.energy_balancing_weights(df[["age", "educ"]].to_numpy(), df["treat"].to_numpy())
        eff = es.weighted_effect("re78", arr, data=df.reset_index(drop=True), outcome_model=None,
                                 se=None)
        np.testing.assert_array_equal(
            eff.estimate, es.weighted_effect(df["re78"].to_numpy(), arr, outcome_model=None,
                                             se=None).estimate)

    def test_errors(self):
        df = _frame()
        w = es.energy_balancing_weights("treat ~ age", data=df)
        with pytest.raises(KeyError, match=r"`outcome`: column 're79' not found in the data the "
                                           r"weights were solved on"):
            es.weighted_effect("re79", w, outcome_model=None, se=None)
        with pytest.raises(KeyError, match=r"`outcome`: column 're79' not found in `data`"):
            es.weighted_effect("re79", w, data=df, outcome_model=None, se=None)
        ref = es.energy_balancing_weights(df[["age"]], df["treat"])
        with pytest.raises(TypeError, match=r"`outcome`='re78' is a column name, but there is "
                                            r"no data frame"):
            es.weighted_effect("re78", ref, outcome_model=None, se=None)
        with pytest.raises(TypeError, match=r"`data` is for an `outcome` given as a column name"):
            es.weighted_effect(df["re78"], w, data=df, outcome_model=None, se=None)
        bad = df.assign(re78=df["re78"].where(df["age"] > 30))
        with pytest.raises(ValueError, match=r"`outcome` must be finite"):
            es.weighted_effect("re78", w, data=bad, outcome_model=None, se=None)


# -- input validation --

@needs_formulaic
class TestInputValidation:
    @pytest.mark.parametrize("col,value", [("age", np.nan), ("race", None), ("treat", np.nan),
                                           ("site", np.nan)])
    def test_missing_values_refused_not_dropped(self, col, value):
        df = _frame()
        df[col] = df[col].astype(object) if col == "race" else df[col]
        df.loc[df.index[5], col] = value
        with pytest.raises(ValueError, match=rf"`data` has missing values in 1 row\(s\), in "
                                             rf"column\(s\) \['{col}'\] that the formula uses "
                                             r"\(first: row 5, index 'id5'\)"):
            es.energy_balancing_weights("treat ~ age + race + site", data=df)
        with pytest.raises(ValueError, match=r"`data` has missing values"):
            es.balance_table("treat ~ age + race + site", data=df)

    def test_missing_values_in_unused_columns_are_fine(self):
        df = _frame()
        df.loc[df.index[5], "educ"] = np.nan
        res = es.energy_balancing_weights("treat ~ age", data=df)
        assert res.weights.size == len(df)

    def test_transform_non_finite(self):
        df = _frame()
        df.loc[df.index[2], "educ"] = 0.0
        with pytest.raises(ValueError, match=r"`X`: the formula's column 'np.log\(educ\)' has 1 "
                                             r"non-finite value\(s\) \(first: index 'id2'\)"):
            es.energy_balancing_weights("treat ~ age + np.log(educ)", data=df)

    @pytest.mark.parametrize("formula,exc,match", [
        ("age + educ", ValueError, r"`X` as a string must be a formula such as 'y ~ x1 \+ x2' "
                                   r"\(with '~'\); got 'age \+ educ'"),
        ("treat ~ age +", ValueError, r"`X`: 'treat ~ age \+' is not a formula that can be read"),
        ("treat ~ age + income", KeyError, r"`X`: the formula 'treat ~ age \+ income' names "
                                           r"\['income'\], not column\(s\) of `data`"),
        ("~ age", ValueError, r"`X`: the formula '~ age' has no left side"),
        ("treat + educ ~ age", ValueError, r"the left side of 'treat \+ educ ~ age' must be one "
                                          r"column"),
        ("treat ~ age | educ", ValueError, r"several parts"),
        ("treat ~ 1", ValueError, r"has no covariates on its right side"),
        ("C(race) ~ age", ValueError, r"the left side's term 'C\(race\)' .* gives 3 columns"),
    ])
    def test_bad_formulas(self, formula, exc, match):
        with pytest.raises(exc, match=match):
            es.energy_balancing_weights(formula, data=_frame())

    def test_argument_combinations(self):
        df = _frame()
        with pytest.raises(TypeError, match=r"`X` is a formula .* got `treatment` too"):
            es.energy_balancing_weights("treat ~ age", df["treat"], data=df)
        with pytest.raises(TypeError, match=r"`X` is a formula .* got `treatment` too"):
            es.balance_table("treat ~ age", np.ones(len(df)), data=df)      # weights by position
        with pytest.raises(TypeError, match=r"pass the data frame that holds its columns as "
                                            r"`data=`"):
            es.energy_balancing_weights("treat ~ age")
        with pytest.raises(TypeError, match=r"`data` is for a formula `X`"):
            es.energy_balancing_weights(df[["age"]], df["treat"], data=df)
        with pytest.raises(TypeError, match=r"`energy_balancing_weights` needs `treatment`"):
            es.energy_balancing_weights(df[["age"]])
        with pytest.raises(TypeError, match=r"`data` must be a DataFrame"):
            es.energy_balancing_weights("treat ~ age", data=df.to_numpy())


def test_without_formulaic_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "formulaic", None)        # `import formulaic` fails
    df = _frame()
    for call in (lambda: es.energy_balancing_weights("treat ~ age", data=df),
                 lambda: es.independence_weights("age ~ educ", data=df),
                 lambda: es.balance_table("treat ~ age", data=df)):
        with pytest.raises(ImportError, match=r"`X` is a formula, and formulas need the package "
                                              r"'formulaic', which is not installed: pip install "
                                              r"energy-statistics\[formula\]"):
            call()
    # the array and DataFrame calls do not need it
    res = es.energy_balancing_weights(df[["age", "race"]], df["treat"])
    assert res.formula is None
