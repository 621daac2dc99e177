"""Formulas at the input layer: ``"treat ~ age + C(race)"`` with ``data=``, parsed by formulaic
(an optional extra, imported on use) into the left side's columns and the right side's numeric
design, by one rule for every function that takes a formula (:func:`formula_design`).

The rule for the right side: formulaic's model matrix (its default coding, its names, its
transforms -- ``np.log(x)``, ``I(x**2)``, ``center(x)`` -- and its interactions ``x:z``,
``x*z``), with three differences:

* the intercept is dropped, whether the formula has one or not (the statistics here do not
  use a constant column);
* a factor on its own (a term of one factor that formulaic encodes as categorical: ``C(g)``,
  or a column of dtype category, object or string; and a bool column) is expanded by the
  calling concept's factor rule (``factors=``, a function of a one-column DataFrame, as
  :func:`energystats.balance._design.expand_factors`), under the name of the column for ``g``
  and ``C(g)``, else of the expression -- so that a formula gives the columns the DataFrame
  call with the same columns gives; factors inside interactions are formulaic's;
* nothing is dropped: a missing value in a column that the formula uses is an error naming
  the column and the first row (formulaic drops such rows by default), and a non-finite
  value that a transform makes (``np.log(0)``) is an error naming the design's column.

The left side: a bare column name is the column as it is (any dtype: treatment levels keep
their values); any other term is evaluated by formulaic and must give one column.

Names in a formula are the columns of ``data`` and formulaic's own transforms (``np``,
``log``, ``exp``, ``center``, ``scale``, ``C``, ``I``, ``poly``, ``bs``, ...), not the
caller's variables.
"""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ._validation import foreign_to_pandas, short_list

__all__ = ["FORMULA_INSTALL", "FormulaDesign", "formula_design", "is_formula", "require_formulaic",
           "indicator_columns", "has_tilde"]

FORMULA_INSTALL = "pip install energy-statistics[formula]"
LHS = ("required", "one", "optional", "forbidden")


def is_formula(x):
    """True when ``x`` is a string (where a formula is accepted, a string must be one)."""
    return isinstance(x, str)


def require_formulaic(name="X"):
    """Import formulaic, or an ImportError that says how to get it."""
    try:
        import formulaic
    except ImportError:
        raise ImportError(f"`{name}` is a formula, and formulas need the package 'formulaic', "
                          f"which is not installed: {FORMULA_INSTALL} (or pip install "
                          "formulaic).") from None
    return formulaic


def has_tilde(x):
    """True when ``x`` is a string with a "~" (a formula, one- or two-sided, not a column name)."""
    return isinstance(x, str) and "~" in x


@dataclass(frozen=True)
class _Indicators:
    """What :func:`indicator_columns` kept: the levels of each factor, by its label."""

    levels: dict


def indicator_columns(frame, name="x"):
    """The dependence functions' factor rule: a factor becomes one 0/1 column per observed
    level, named ``f"{factor}_{level}"`` (two rows at different levels are √2 apart in the
    Euclidean distance, rows at one level 0 apart, whatever the order of the levels)."""
    label = frame.columns[0]
    col = frame[label]
    levels = list(col.cat.categories) if isinstance(col.dtype, pd.CategoricalDtype) \
        else sorted(pd.unique(col))
    out = pd.DataFrame({f"{label}_{lv}": (col == lv).to_numpy(dtype=np.float64) for lv in levels},
                       index=frame.index)
    return out, _Indicators({label: tuple(levels)})


@dataclass(frozen=True)
class FormulaDesign:
    """A formula evaluated on ``data`` (:func:`formula_design`).

    Attributes
    ----------
    formula : str
        The formula as given.
    lhs : DataFrame or None
        The left side's columns (a bare column name: the column of ``data`` as it is); None for
        a one-sided formula.
    rhs : DataFrame
        The right side's design: float64 columns, no intercept, the index of ``data``.
    data : DataFrame
        The data frame it was evaluated on (pandas; a reference, not a copy).
    """

    formula: str
    lhs: pd.DataFrame | None
    rhs: pd.DataFrame
    data: pd.DataFrame = field(repr=False)
    _plan: tuple = field(default=(), repr=False, compare=False)
    _specs: tuple = field(default=(None, None), repr=False, compare=False)

    def design(self, new, name):
        """The right side's design of other rows ``new`` (a DataFrame with the formula's
        columns, e.g. a target population): formulaic's terms with the state learnt on
        ``data`` (levels, centring), each factor with the columns it got on ``data``; a level
        that ``data`` does not have is an error."""
        new = _frame(new, name)
        spec, full_spec = self._specs
        needed = sorted(spec.required_variables)
        absent = [v for v in needed if v not in new.columns]
        if absent:
            raise KeyError(f"`{name}`: column(s) {short_list(absent)} of the formula "
                           f"{self.formula!r} not found; it has {short_list(new.columns)}.")
        _check_missing(new, needed, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # unseen levels: refused below, by name
            mm = spec.get_model_matrix(new, na_action="ignore")
            full = None if full_spec is None else full_spec.get_model_matrix(new, na_action="ignore")
        parts = []
        for kind, label, cols, extra in self._plan:
            if kind == "terms":
                parts.append(mm[list(cols)])
                continue
            values = _factor_values(kind, label, extra, new, full, name)
            observed, kept = extra["observed"], extra["kept"]
            unseen = [v for v in pd.unique(values) if v not in observed]
            if unseen:
                raise ValueError(f"`{name}`: the factor {label!r} has level(s) "
                                 f"{short_list(unseen)} that `data` does not have (its levels "
                                 f"are {short_list(observed)}); the design has no column for "
                                 "them.")
            parts.append(pd.DataFrame({c: (values == lev).astype(np.float64)
                                       for c, lev in zip(cols, kept)}, index=new.index))
        out = pd.concat(parts, axis=1).astype(np.float64) if parts else None
        _check_finite(out, name)
        return out


def _frame(data, name):
    data = foreign_to_pandas(data, name)
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"`{name}` must be a DataFrame holding the formula's columns; got "
                        f"{type(data).__name__}.")
    return data


def _check_missing(data, cols, name):
    """The package's missing-value error: nothing is dropped silently."""
    if not cols:
        return
    na = data[cols].isna()
    rows = na.any(axis=1).to_numpy()
    if rows.any():
        bad = [str(c) for c in cols if na[c].any()]
        first = int(np.flatnonzero(rows)[0])
        raise ValueError(f"`{name}` has missing values in {int(rows.sum())} row(s), in column(s) "
                         f"{short_list(bad)} that the formula uses (first: row {first}, index "
                         f"{data.index[first]!r}); missing values are not dropped silently: "
                         "drop or impute those rows first.")


def _check_finite(design, name):
    if design is None:
        return
    bad = ~np.isfinite(design.to_numpy(dtype=np.float64))
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        rows = np.flatnonzero(bad[:, j])
        raise ValueError(f"`{name}`: the formula's column {design.columns[j]!r} has "
                         f"{rows.size} non-finite value(s) (first: index "
                         f"{design.index[rows[0]]!r}); a transform of the data made them "
                         "(a log of 0, say): change the formula or drop those rows.")


def _clean(msg):
    """formulaic's message without its terminal colours, on one line."""
    msg = re.sub(r"\x1b\[[0-9;]*m|[⧛⧚]", "", str(msg))
    return " ".join(msg.split())


def _label(factor, data):
    """The name a factor's columns are named after: the column for ``g`` and ``C(g)``."""
    expr = str(factor.expr)
    if expr in data.columns:
        return expr
    m = re.fullmatch(r"C\(\s*`?([^`,()]+?)`?\s*\)", expr)
    return m.group(1) if m and m.group(1) in data.columns else expr


def _factor_values(kind, label, extra, data, full, name):
    """A factor's value on each row: a bool column as it is, a categorical one from its 0/1
    columns of the full (one per level) coding."""
    if kind == "bool":
        return data[extra["column"]].to_numpy(dtype=object)
    ind = full[list(extra["indicators"])].to_numpy(dtype=np.float64)
    if not np.all(ind.sum(axis=1) == 1):
        i = int(np.flatnonzero(ind.sum(axis=1) != 1)[0])
        value = f" ({data[label].iloc[i]!r})" if label in data.columns else ""
        raise ValueError(f"`{name}`: the factor {label!r} has a level at index "
                         f"{data.index[i]!r}{value} outside its levels "
                         f"{short_list(extra['levels'])}"
                         + (" (those of `data`)." if "observed" in extra else "."))
    return np.asarray(extra["levels"], dtype=object)[ind.argmax(axis=1)]


def formula_design(formula, data, *, factors, name="X", lhs="required"):
    r"""Evaluate ``formula`` on ``data`` by the module's rule: a :class:`FormulaDesign`.

    Parameters
    ----------
    formula : str
        ``"lhs ~ rhs"`` (or ``"~ rhs"`` where ``lhs`` allows it).
    data : DataFrame
        The columns the formula names (Polars and PyArrow tables are converted).
    factors : callable
        The concept's factor rule: a one-column DataFrame of a factor -> ``(DataFrame of
        float64 columns, info)``.
    name : str
        The formula's argument, for the messages.
    lhs : {'required', 'one', 'optional', 'forbidden'}
        Whether the formula must have a left side ('one': of exactly one column).

    Examples
    --------
    >>> import pandas as pd
    >>> from energystats.balance._design import expand_factors
    >>> df = pd.DataFrame({"t": [0, 1, 0, 1], "age": [30.0, 41, 52, 20],
    ...                    "race": ["w", "b", "h", "b"]})
    >>> fd = formula_design("t ~ age + race + I(age**2)", df, factors=expand_factors)
    >>> list(fd.rhs.columns), list(fd.lhs.columns)
    (['age', 'race_b', 'race_h', 'race_w', 'I(age ** 2)'], ['t'])
    """
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f"`{name}` as a string must be a formula such as 'y ~ x1 + x2' (with "
                         f"'~'); got {formula!r}.")
    formulaic = require_formulaic(name)
    if data is None:
        raise TypeError(f"`{name}` is a formula ({formula!r}): pass the data frame that holds "
                        "its columns as `data=`.")
    data = _frame(data, "data")
    try:
        parsed = formulaic.Formula(formula)
        structured = hasattr(parsed, "rhs")
        rhs_terms = list(parsed.rhs if structured else parsed)
        lhs_terms = list(parsed.lhs) if structured else []
        needed = sorted(parsed.required_variables)
    except Exception as exc:  # formulaic's parsing errors, and nested parts ('y ~ x | z')
        raise ValueError(f"`{name}`: {formula!r} is not a formula that can be read: "
                         f"{_clean(exc)}") from None
    if any(not hasattr(t, "factors") for t in rhs_terms + lhs_terms):
        raise ValueError(f"`{name}`: {formula!r} has several parts ('|'); one left and one right "
                         "side are read here.")
    _check_lhs(lhs, lhs_terms, formula, name)
    absent = [v for v in needed if v not in data.columns]
    if absent:
        raise KeyError(f"`{name}`: the formula {formula!r} names {short_list(absent)}, not "
                       f"column(s) of `data`; it has {short_list(data.columns)} (names are "
                       "the columns and formulaic's transforms, such as np, log, C, I).")
    if data.columns.has_duplicates:
        dup = sorted({str(c) for c in data.columns[data.columns.duplicated()]} & set(needed))
        if dup:
            raise ValueError(f"`data` has column(s) {dup} twice; the formula cannot tell them "
                             "apart.")
    _check_missing(data, needed, "data")
    mm, full = _matrices(formulaic, parsed, rhs_terms, data, name, formula)
    rhs_mm = mm.rhs if structured else mm
    plan, parts = _plan(rhs_mm, full, data, factors, name)
    if not parts:
        raise ValueError(f"`{name}`: the formula {formula!r} has no covariates on its right side "
                         "(the intercept is not one).")
    rhs = pd.concat(parts, axis=1).astype(np.float64)
    dup = sorted({str(c) for c in rhs.columns[rhs.columns.duplicated()]})
    if dup:
        raise ValueError(f"`{name}`: the formula gives the column name(s) {dup} twice (a factor's "
                         "`col_level` is also another term's name); rename a column.")
    _check_finite(rhs, name)
    left = _left(lhs_terms, mm.lhs if structured else None, data, formula, name)
    return FormulaDesign(formula, left, rhs, data, tuple(plan),
                         (rhs_mm.model_spec, None if full is None else full.model_spec))


def _check_lhs(lhs, terms, formula, name):
    if lhs not in LHS:
        raise ValueError(f"`lhs` must be one of {LHS}; got {lhs!r}.")
    if lhs in ("required", "one") and not terms:
        raise ValueError(f"`{name}`: the formula {formula!r} has no left side; write "
                         "'treatment ~ covariates'.")
    if lhs == "one" and len(terms) > 1:
        raise ValueError(f"`{name}`: the left side of {formula!r} must be one column (the "
                         f"treatment); got {len(terms)} terms.")
    if lhs == "forbidden" and terms:
        raise ValueError(f"`{name}`: the formula {formula!r} must be one-sided ('~ x1 + x2').")


def _matrices(formulaic, parsed, rhs_terms, data, name, formula):
    """formulaic's model matrices of the formula (default coding, rows kept) and the full
    coding (one column per level) of the factors that stand alone."""
    alone = [t for t in rhs_terms if len(t.factors) == 1 and str(t) != "1"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mm = formulaic.model_matrix(parsed, data, na_action="ignore", context={})
            full = (formulaic.model_matrix(formulaic.Formula(alone), data, na_action="ignore",
                                           ensure_full_rank=False, context={})
                    if alone else None)
    except Exception as exc:  # a transform that fails on these data, say
        raise ValueError(f"`{name}`: formulaic could not evaluate {formula!r} on `data`: "
                         f"{_clean(exc)}") from None
    return mm, full


def _plan(mm, full, data, factors, name):
    """The design's parts in the formula's order, and how to build each on other rows."""
    spec = mm.model_spec
    states = {str(k): v for k, v in spec.encoder_state.items()}
    full_cols = {str(s.term): s.columns for s in full.model_spec.structure} if full is not None \
        else {}
    plan, parts = [], []
    for s in spec.structure:
        term = s.term
        if str(term) == "1":
            continue                                 # the intercept: dropped
        kind = None
        if len(term.factors) == 1:
            factor = term.factors[0]
            expr = str(factor.expr)
            state = states.get(expr, (None, {}))
            if str(getattr(state[0], "value", state[0])) == "categorical":
                kind = "categorical"
            elif expr in data.columns and _is_bool(data[expr]):
                kind = "bool"
        if kind is None:
            plan.append(("terms", str(term), tuple(s.columns), None))
            parts.append(mm[list(s.columns)])
            continue
        label = _label(factor, data)
        if kind == "bool":
            extra = {"column": expr}
        else:
            levels = list(state[1].get("categories", []))
            cols = full_cols[str(term)]
            if len(levels) != len(cols):
                raise ValueError(f"`{name}`: the factor {expr!r} has {len(cols)} columns for "
                                 f"{len(levels)} levels in formulaic's full coding; write it "
                                 "as a plain column or C(column).")
            extra = {"indicators": tuple(cols), "levels": levels}
        values = _factor_values(kind, label, extra, data, full, name)
        levels = extra.get("levels") or sorted(pd.unique(values))
        col = pd.Categorical(values, categories=[v for v in levels if v in set(values)])
        expanded, info = factors(pd.DataFrame({label: col}, index=data.index), name=name)
        kept = list(info.levels.get(label, ()))
        extra.update(observed=list(col.categories), kept=kept)
        plan.append((kind, label, tuple(expanded.columns), extra))
        parts.append(expanded)
    return plan, parts


def _is_bool(col):
    return col.dtype == bool or isinstance(col.dtype, pd.BooleanDtype)


def _left(terms, lhs_mm, data, formula, name):
    """The left side's columns: a bare column name as the column is; other terms formulaic's
    (one column each)."""
    if not terms:
        return None
    out = {}
    spec = lhs_mm.model_spec if lhs_mm is not None else None
    cols = {str(s.term): s.columns for s in spec.structure} if spec is not None else {}
    for term in terms:
        expr = str(term)
        if len(term.factors) == 1 and expr in data.columns:
            out[expr] = data[expr]
            continue
        c = cols.get(expr, [])
        if len(c) != 1:
            raise ValueError(f"`{name}`: the left side's term {expr!r} of {formula!r} gives "
                             f"{len(c)} columns; each term on the left must be one column "
                             "(name a factor's column itself, not C(...)).")
        out[c[0]] = lhs_mm[c[0]]
    return pd.DataFrame(out, index=data.index)
