"""Energy balancing weights (Huling and Mak 2024) and independence weights (Huling, Greifer
and Chen 2023), each the solution of a convex quadratic programme (:mod:`._qp`)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._core._display import notebook_display
from .._core._metrics import _real
from .._core._validation import check_n_threads, seeded_rng, short_list
from . import _cells, _design, _forms, _programme, _qp

__all__ = ["energy_balancing_weights", "independence_weights", "BalancingWeightsResult",
           "IndependenceWeightsResult"]

ESTIMANDS = ("ATE", "ATT", "ATC")


@notebook_display
@dataclass(frozen=True)
class BalancingWeightsResult:
    r"""Result of :func:`energy_balancing_weights`.

    Attributes
    ----------
    weights : ndarray, shape (n,)
        One weight per row, non-negative, with mean 1 within each treatment group
        (they sum to the group's size). These are the final weights: the base
        weights, if any, are already in them (through the target).
    estimand : str
        'ATE', 'ATT' or 'ATC'.
    groups : list
        The treatment levels, in the order of ``sizes`` and the per-group fields.
    sizes : ndarray of int
        Rows per level.
    focal : object or None
        The level whose (base-weighted) sample is the target with 'ATT'/'ATC'.
    energy_before, energy_after : ndarray, shape (k,)
        Energy distance :math:`E` of each level's covariates to the target, with the base
        weights and with ``weights`` (0 for the focal level), in the standardised units.
    objective : float
        The minimised objective: :math:`\sum_g E_w(g, \text{target})` plus, with
        ``improved`` ('ATE'), :math:`\sum_{g<h} E_w(g, h)`, plus the penalty.
    ess : ndarray, shape (k,)
        Effective sample size :math:`(\sum w)^2/\sum w^2` of each level under ``weights``.
    kkt_residual : float
        The natural KKT residual :math:`\max|x - \Pi(x - \nabla f(x)/\|\nabla f\|_\infty)|` at
        the returned weights (zero exactly at the optimum); with ``cells``, of the programme
        solved, over the cells' variables.
    solver : str
        The solver that ran: 'osqp', 'clarabel' or 'firstorder' (what ``solver='auto'``
        chose).
    improved, lam, standardize :
        The options used (``improved`` is False for 'ATT'/'ATC', which have no
        between-level terms).
    index : pandas.Index or None
        The rows' index (DataFrame input).
    cells : int or None
        With the cell approximation (``cells=`` given), the number of cells formed: the
        optimised levels' (the programme's variables) plus one for the focal level or the
        target, whose masses are fixed; None for the exact programme.
    cell_labels : ndarray of int, shape (n,), or None
        The cell of each row (-1 for a row with base weight 0, whose weight is 0), or None.
    seed : int or None
        The seed of the k-means that formed the cells (pass it back as ``rng`` to repeat
        them); None for the exact programme or when ``rng`` was a Generator.
    moments, quantiles :
        The exact constraints asked for (None: none); ``quantiles`` as a tuple of
        probabilities for every covariate, or a dict from covariate position to a tuple.
    n_constraints : int
        The linear equality constraints they added to the programme (all levels together).
    columns : list or None
        The covariates used (DataFrame input), factor columns expanded to ``col_level``.
    iterations : int
        The solver's iterations (OSQP's, Clarabel's), or the first-order solver's products
        with the programme's matrix (each one pass over all pairs of rows).
    formula : str or None
        The formula of a formula call (``X`` = 'treat ~ ...'), else None.
    data : DataFrame or None
        The ``data`` of a formula call (a reference, not a copy; not shown, not compared),
        where :func:`~energystats.weighted_effect` reads an outcome given by column name.
    inputs : object
        The checked inputs of the call (covariates as given, treatment, base weights,
        target, options), from which :func:`~energystats.weighted_effect`'s bootstrap
        solves the programme again on resampled rows; not shown, not compared.
    """

    weights: np.ndarray
    estimand: str
    groups: list
    sizes: np.ndarray
    focal: object
    energy_before: np.ndarray
    energy_after: np.ndarray
    objective: float
    ess: np.ndarray
    kkt_residual: float
    solver: str
    improved: bool
    lam: float
    standardize: str | None
    index: object = None
    cells: int | None = None
    cell_labels: np.ndarray | None = None
    seed: int | None = None
    moments: int | None = None
    quantiles: object = None
    n_constraints: int = 0
    columns: list | None = None
    iterations: int = 0
    formula: str | None = None
    inputs: object = field(default=None, repr=False, compare=False)
    data: object = field(default=None, repr=False, compare=False)

    def to_frame(self):
        """One row per treatment level: size, ESS, energy distance to the target before/after."""
        return pd.DataFrame({"n": self.sizes, "ess": self.ess, "energy_before": self.energy_before,
                             "energy_after": self.energy_after},
                            index=pd.Index(self.groups, name="treatment"))

    def __repr__(self):
        return (f"BalancingWeightsResult(estimand={self.estimand!r}, groups={self.groups}, "
                f"objective={self.objective:.6g}, ess={np.round(self.ess, 1).tolist()}, "
                f"solver={self.solver!r}"
                + ("" if self.cells is None else f", cells={self.cells}") + ")")


@notebook_display
@dataclass(frozen=True)
class IndependenceWeightsResult:
    r"""Result of :func:`independence_weights`.

    Attributes
    ----------
    weights : ndarray, shape (n,)
        Non-negative weights with mean 1.
    objective : float
        The minimised objective (see :func:`independence_weights`), the penalty included
        (R ``independenceWeights``' ``objective``).
    weighted_dependence : float
        The objective without the penalty: :math:`D_w` of Huling, Greifer and Chen (R's
        ``D_w``).
    dcov_sqr : float
        Its first term, the weighted :math:`\mathrm{dCov}^2` of treatment and covariates (R's
        ``distcov_weighted``).
    energy_treatment, energy_covariates : float
        The energy distances of the weighted to the base-weighted sample of the treatment and
        of the covariates, unscaled; they enter the objective multiplied by
        ``energy_weights`` (R's ``energy_A`` and ``energy_X`` are these products).
    energy_weights : tuple of float
        ``(c_A, c_X)``, the factors of the two energy distances: :math:`1/(1+\sqrt{d})` and
        :math:`\sqrt{d}/(1+\sqrt{d})` with ``dimension_adj``, else ``(1/2, 1/2)``.
    dimension_adj : bool
        The option used.
    dcor_before, dcor_after : float
        Weighted distance correlation (V-statistic, weighted double centring) of treatment
        and covariates under the base weights and under ``weights``.
    ess : float
        Effective sample size :math:`(\sum w)^2/\sum w^2`.
    kkt_residual : float
        As in :class:`BalancingWeightsResult`.
    solver : str
    lam, standardize :
        The options used.
    index : pandas.Index or None
    cells, cell_labels, seed, columns, formula, inputs, data :
        As in :class:`BalancingWeightsResult`.
    """

    weights: np.ndarray
    objective: float
    weighted_dependence: float
    dcov_sqr: float
    energy_treatment: float
    energy_covariates: float
    energy_weights: tuple
    dimension_adj: bool
    dcor_before: float
    dcor_after: float
    ess: float
    kkt_residual: float
    solver: str
    lam: float
    standardize: str | None
    index: object = None
    cells: int | None = None
    cell_labels: np.ndarray | None = None
    seed: int | None = None
    columns: list | None = None
    formula: str | None = None
    inputs: object = field(default=None, repr=False, compare=False)
    data: object = field(default=None, repr=False, compare=False)

    def to_frame(self):
        """One row: the objective's terms, dCor before/after, ESS."""
        return pd.DataFrame([{"objective": self.objective,
                              "weighted_dependence": self.weighted_dependence,
                              "dcov_sqr": self.dcov_sqr,
                              "energy_treatment": self.energy_treatment,
                              "energy_covariates": self.energy_covariates,
                              "dcor_before": self.dcor_before, "dcor_after": self.dcor_after,
                              "ess": self.ess}])

    def __repr__(self):
        return (f"IndependenceWeightsResult(dcor_before={self.dcor_before:.4g}, "
                f"dcor_after={self.dcor_after:.4g}, ess={self.ess:.1f}, solver={self.solver!r})")


#: a KKT residual above this (relative: the gradient is scaled by its largest entry) is
#: named in a BalanceWarning: the solver stopped away from the optimum
KKT_WARN = 1e-4


def _warn_weights(res, what="energy_balancing_weights"):
    """One BalanceWarning naming every level with a small effective sample size and a KKT
    residual that says the solver stopped short."""
    from .._core._validation import warn
    from .table import ESS_FRACTION, BalanceWarning, ess_floor

    msgs = []
    sizes = np.atleast_1d(getattr(res, "sizes", len(res.weights)))
    ess = np.atleast_1d(res.ess)
    groups = getattr(res, "groups", ["all"])
    focal = getattr(res, "focal", None)
    focal_n = None if focal is None else int(sizes[groups.index(focal)])
    small = [(g, round(float(e), 1), int(m)) for g, e, m in zip(groups, ess, sizes)
             if e < ess_floor(m, focal_n)]
    if small:
        msgs.append(f"effective sample size below {ESS_FRACTION:.0%} of the rows"
                    + ("" if focal_n is None else " (of the focal level's, when fewer)")
                    + f" in level(s) {short_list(small, 5)} (level, ESS, rows): a few rows "
                    "carry most of the weight, and estimates will be noisy; check the overlap "
                    "of the levels' covariates, or spread the weights with `lam` > 0")
    if res.kkt_residual > KKT_WARN:
        msgs.append(f"the QP solver {res.solver!r} stopped with a KKT residual of "
                    f"{res.kkt_residual:.1e} (above {KKT_WARN:g}): the weights are not the "
                    "optimum to that accuracy; try the other `solver`")
    if msgs:
        warn(f"`{what}`: " + "; ".join(msgs) + ".", BalanceWarning)


def _check_lam(lam):
    value = _real(lam, "lam", "a finite number >= 0")
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"`lam` must be a finite number >= 0; got {lam!r}.")
    return value


def _check_estimand(estimand):
    if not isinstance(estimand, str) or estimand.upper() not in ESTIMANDS:
        raise ValueError(f"`estimand` must be one of 'ATE', 'ATT', 'ATC'; got {estimand!r}.")
    return estimand.upper()


def _focal_level(estimand, focal, groups):
    if estimand == "ATE":
        if focal is not None:
            raise ValueError(f"`focal` is for estimand 'ATT' or 'ATC'; got focal={focal!r} with 'ATE'.")
        return None
    if focal is None:
        if groups in ([0, 1], [False, True]):
            return groups[1] if estimand == "ATT" else groups[0]
        raise ValueError(f"`focal` is required with estimand {estimand!r} unless the treatment levels "
                         f"are 0/1 or False/True; the levels are {short_list(groups)}. Pass the level that is "
                         f"the target ({'the treated' if estimand == 'ATT' else 'the controls'}).")
    if focal not in groups:
        raise ValueError(f"`focal` must be one of the treatment levels {short_list(groups)}; got {focal!r}.")
    return focal


def _target_rows(target, columns, d):
    if target is None:
        return None
    if isinstance(target, pd.DataFrame) and columns is not None:
        missing = [c for c in columns if c not in target.columns]
        if missing:
            raise KeyError(f"`target`: column(s) {short_list(missing)} of `X` not found in `target`.")
        target = target[columns]
    T = _forms.sample_matrix(target, dtype=np.float64, name="target").X
    if T.shape[1] != d:
        raise ValueError(f"`target` must have the {d} covariate column(s) of `X`; got {T.shape[1]}.")
    if T.shape[0] < 2:
        raise ValueError(f"`target` must have at least 2 rows; got {T.shape[0]}.")
    return T


def energy_balancing_weights(X, treatment=None, *, data=None, estimand="ATE", focal=None,
                             target=None, improved=True, base_weights=None, lam=0.0,
                             standardize="studentized", moments=None, quantiles=None,
                             solver="auto", cells=None, rng=None, memory_budget=2**30,
                             n_threads=None):
    r"""Energy balancing weights for a binary or multi-category treatment.

    The weights of Huling and Mak (2024, "Energy balancing of covariate distributions",
    Journal of Causal Inference 12(1)): within each treatment level the weights are a
    distribution (non-negative, mean 1 within the level) chosen to minimise

    .. math::

        \sum_g E_w(F_{g,w}, F_\text{target}) \;+\; [\text{improved}]
        \sum_{g<h} E_w(F_{g,w}, F_{h,w}) \;+\; \lambda \sum_i (w_i/n)^2 ,

    the weighted energy distances (V-statistics, Euclidean distance of the standardised
    covariates) between each weighted level and the target, plus, for the *improved*
    variant of 'ATE', between the weighted levels.  The target is the (base-weighted) whole
    sample for 'ATE', the (base-weighted) ``focal`` level for 'ATT' and 'ATC' (whose weights
    are then its base weights), or the rows of ``target`` (a population to generalise to) for
    'ATE'.  Since the energy distance of masses ``u, v`` is ``-(u-v)' C (u-v)`` with ``C``
    the double-centred distance matrix, the objective is a convex quadratic form; it is
    minimised by a QP solver or, for large n, by a matrix-free first-order solver
    (``solver``; see the guide page "Balancing weights" for the comparison), and the result
    records the KKT residual at the returned weights.

    **Relation to R WeightIt** (``weightit(..., method = "energy")``, Greifer).  Without
    ``base_weights``, with ``lam=0`` and ``standardize='studentized'`` (its default
    ``dist.mat = "scaled_euclidean"``; the two scalings differ at most by one common factor
    of all distances, which leaves the weights unchanged) the programme is WeightIt's for
    'ATE' (``improved`` as its ``improved``), 'ATT' and 'ATC' (its ``focal``), binary or
    multi-category: the same weights up to the solvers' tolerance.  ``objective`` here is the
    sum of the energy distances itself; WeightIt's QP objective leaves out the constant
    :math:`\sum_{t,t'} v_t v_{t'} \rho(z_t, z_{t'})` (``v`` the target's masses) of each
    level's distance to the target.  Where they differ: (i) WeightIt's default ``lambda``
    is 1e-4 and its penalty :math:`(\lambda'/2)\sum_i (w_i/n_g)^2` uses each level's size
    :math:`n_g`; ours is :math:`\lambda \sum_i (w_i/n)^2`, the same as in
    :func:`independence_weights` and in both of the authors' packages for continuous
    treatments, so one level's penalty is WeightIt's with
    :math:`\lambda' = 2\lambda (n_g/n)^2` (exactly WeightIt's for a binary 'ATT'/'ATC');
    (ii) WeightIt bounds the weights below by ``min.w = 1e-8``, ours by 0;
    (iii) with sampling weights, WeightIt rescales them to mean 1 within each level, so its
    'ATE' target gives level ``g`` the share :math:`n_g/n`; ours keeps the base-weighted
    sample, share :math:`\sum_{i \in g} s_i / \sum_i s_i`, the population the sampling
    weights describe; and WeightIt returns weights to be multiplied by its ``s.weights``,
    ours are the final weights (its weights times the base weights, mean 1 within a level);
    (iv) ``target`` (a separate population) and multi-category 'ATC' (a ``focal`` level)
    are ours only; WeightIt's ``moments`` and ``quantile`` exact constraints are offered
    (``moments``, ``quantiles``), its ``int`` (interactions) is not.

    Parameters
    ----------
    X : array_like, DataFrame or str, shape (n, d)
        Covariates (numeric; a DataFrame may also hold the treatment column; its columns of
        dtype category, bool, object or string are factors, one 0/1 column per level named
        ``col_level``, a two-level factor its second level's only).  Or a formula
        ``'treat ~ age + educ + C(race)'`` with ``data=`` (needs formulaic: ``pip install
        energy-statistics[formula]``): the left side is the treatment, the right side the
        covariates, a factor on its own (``C(g)``, or a factor column) expanded as in a
        DataFrame, so the weights are those of the DataFrame call with the same columns;
        transforms (``np.log(x)``, ``I(x**2)``) and interactions (``x:z``) are formulaic's
        columns, and the intercept is dropped (a constant adds nothing to the distances).
        Rows with missing values are an error, never dropped.
    treatment : array_like, Series or str
        Treatment level of each row, or the name of a column of ``X`` (then not a
        covariate).  At least 2 levels, each with at least 2 rows.  Not with a formula.
    data : DataFrame, optional
        The columns of a formula ``X``; kept by the result (``data``), so that
        :func:`~energystats.weighted_effect` takes the outcome by column name.
    estimand : {'ATE', 'ATT', 'ATC'}
    focal : object, optional
        The target level for 'ATT'/'ATC'; by default level 1 (``True``) for 'ATT' and level
        0 (``False``) for 'ATC' of a 0/1 or boolean treatment, and required otherwise.
    target : array_like or DataFrame, optional
        Covariates of a target population ('ATE' only): every level is balanced to it.  With
        a formula, a DataFrame of the formula's columns, coded as ``data`` (its levels, a
        transform's learnt state).
    improved : bool, default True
        With 'ATE', add the energy distances between the weighted levels (Huling and Mak's
        improved weights).  With 'ATT'/'ATC' no such terms are added, as in WeightIt: every
        level is already balanced to the focal level, and the result's ``improved`` is
        False.
    base_weights : array_like, optional
        Sampling weights, finite, non-negative, not all zero in a level: they define the
        target sample (and the standardisation); the returned weights replace them.
    lam : float, default 0
        Ridge penalty :math:`\lambda \sum_i (w_i/n)^2` (spreads the weights).
    standardize : {'studentized', 'mahalanobis', None}
        Covariates divided by their (base-weighted) standard deviations, whitened by their
        covariance, or used as they are.  The programme is solved in working units (the
        data and the QP's matrices times powers of two), so the weights are the same for
        covariates multiplied by any power of two, at any magnitude.
    moments : int, optional
        Exact balance of moments (R WeightIt's ``moments`` with ``method = "energy"``): each
        optimised level's weighted mean of every covariate's powers ``1..moments`` equals
        the target's, as linear equality constraints of the programme (a covariate with
        ``m`` distinct values contributes at most ``m - 1`` powers; constant ones none).
    quantiles : float, sequence of float or dict, optional
        Exact balance of quantiles (WeightIt's ``quantile``): for each probability ``q`` the
        weighted share of each optimised level at or below the target's weighted
        ``q``-quantile of the covariate equals the target's share.  A probability or a list
        of them applies to every covariate; a dict maps covariates (names of ``X``'s
        columns, or positions) to probabilities.  Constraints that cannot all hold (a level
        that does not reach the target's range) are a RuntimeError that says so.
    solver : {'auto', 'firstorder', 'osqp', 'clarabel'}, default 'auto'
        'auto' runs OSQP where its N×N matrices fit ``memory_budget`` (and with ``cells``,
        ``moments`` or ``quantiles``), and 'firstorder' otherwise or when OSQP is not
        installed (the package's own solver; with ``cells``, ``moments`` or ``quantiles``
        OSQP is needed, an ImportError that says what to install); the result's ``solver``
        says which ran.  'firstorder' solves the exact programme without any N×N matrix
        (O(N) memory): projected conjugate gradients with active-set restarts, each
        product with the programme's matrix streamed through the compiled distance kernel
        (O(N² d) time a product, several hundred products), stopped at a KKT residual of
        1e-6; it takes neither ``cells`` nor ``moments``/``quantiles`` (a ValueError).
        'osqp' and 'clarabel' are QP solvers: OSQP with solution polishing (``pip install
        energy-statistics[balance]`` installs it), or Clarabel (interior point).  From
        1 500 variables on a QP solver runs in a child process, so that Ctrl-C stops it at
        once (OSQP's setup holds the interpreter for seconds); the first-order solver
        stops within a fraction of a second.  A KKT residual above 1e-4 at the returned
        weights is a BalanceWarning.
    cells : int, optional
        None (default): the exact programme, one variable per row.  An integer K >= 2: the
        cell approximation for large n.  The rows of each optimised level are grouped into
        at most K cells by k-means on the covariates (in the units of ``standardize``; the
        focal level and ``target``, whose masses are fixed, are one cell each), and the
        weights are constrained to be proportional to the base weights within a cell (rows
        with base weight 0 get weight 0).  The programme then has one variable per cell, and
        its matrices, the cell sums of the distances, are streamed: O(n² d) time and O(K²)
        memory instead of n×n.  It is the exact programme restricted to
        cell-constant weights, so ``objective`` is never below the exact optimum, and
        ``energy_before``/``energy_after`` are still exact on all rows.  The guide page
        "Balancing weights" measures the cost in bias.
    rng : int, numpy.random.Generator or None
        Seed of the k-means (with ``cells`` only); recorded as the result's ``seed``.
    memory_budget : float, default 1 GiB
        At its peak a call with a QP solver holds about 8 (OSQP) or 11 (Clarabel) float64
        matrices of N×N, the QP solver's own included (measured), with N the rows plus the
        rows of ``target``, or with ``cells`` at most the number of cells (counted before
        the k-means); above this budget 'auto' turns to the first-order solver (which holds
        none), and an explicit QP solver is a MemoryError that says so at once (and
        suggests ``cells``).
    n_threads : int, optional
        Threads of the distance kernel.

    Returns
    -------
    BalancingWeightsResult

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(60, 2))
    >>> t = (x[:, 0] + rng.normal(size=60) > 0).astype(int)
    >>> res = es.energy_balancing_weights(x, t)
    >>> bool(np.all(res.energy_after < res.energy_before))
    True
    >>> [round(float(res.weights[t == g].mean()), 12) for g in (0, 1)]
    [1.0, 1.0]
    >>> res.solver                          # 'auto': the QP fits the memory budget
    'osqp'
    >>> fo = es.energy_balancing_weights(x, t, solver="firstorder")   # no n×n matrix
    >>> fo.solver, bool(fo.kkt_residual <= 1e-6)
    ('firstorder', True)
    >>> bool(abs(fo.objective - res.objective) <= 1e-6 * res.objective)
    True

    From a formula (formulaic), the same weights as from the DataFrame:

    >>> import pandas as pd
    >>> df = pd.DataFrame({"t": t, "age": x[:, 0], "race": rng.choice(["b", "h", "w"], 60)})
    >>> res = es.energy_balancing_weights("t ~ age + C(race)", data=df)
    >>> res.columns, res.formula
    (['age', 'race_b', 'race_h', 'race_w'], 't ~ age + C(race)')
    >>> same = es.energy_balancing_weights(df[["age", "race"]], df["t"])
    >>> bool(np.array_equal(res.weights, same.weights))
    True
    """
    _qp.check_energy_solver(solver)
    X, treatment, form = _forms.formula_inputs(X, treatment, data, "energy_balancing_weights")
    if form is not None and target is not None and not isinstance(target, (np.ndarray, list)):
        target = form.design(target, "target")     # the formula's columns of the target rows
    inp, index, columns, seedless_rng = _energy_inputs(X, treatment, estimand, focal, target,
                                                       improved, base_weights, lam, standardize,
                                                       moments, quantiles, cells, rng)
    gen, seed = seeded_rng(seedless_rng) if inp.cells is not None else (None, None)
    w, fields = _programme.solve_energy(inp, solver, memory_budget, n_threads, gen)
    res = BalancingWeightsResult(w, inp.estimand, list(inp.lab.groups), inp.lab.sizes.copy(),
                                 inp.focal, lam=inp.lam, standardize=inp.standardize, index=index,
                                 seed=seed, moments=inp.moments, quantiles=inp.quantiles,
                                 columns=None if columns is None else list(columns), inputs=inp,
                                 **fields, **_forms.formula_fields(form))
    _warn_weights(res)
    return res


def _energy_inputs(X, treatment, estimand, focal, target, improved, base_weights, lam,
                   standardize, moments, quantiles, cells, rng):
    """The checked arguments of :func:`energy_balancing_weights` as an
    :class:`~._programme.EnergyInputs`, with the rows' index, the covariates' names and
    ``rng``."""
    estimand = _check_estimand(estimand)
    cells = _cells.check_cells(cells, rng)
    Z, t, index, columns = _forms.covariates_and_treatment(X, treatment)
    n, d = Z.shape
    lab = _forms.treatment_groups(t, n)
    focal = _focal_level(estimand, focal, lab.groups)
    if target is not None and estimand != "ATE":
        raise ValueError(f"`target` is for estimand 'ATE' (a population to balance to); got it with "
                         f"{estimand!r}, whose target is the focal level.")
    s = _forms.check_base_weights(_design.align_weights(X, base_weights, "base_weights"), n,
                                  lab.codes, lab.groups)
    if not isinstance(improved, (bool, np.bool_)):
        raise TypeError(f"`improved` must be True or False; got {improved!r}.")
    if standardize not in _forms.STANDARDIZE:
        raise ValueError(f"`standardize` must be 'studentized', 'mahalanobis' or None; got "
                         f"{standardize!r}.")
    inp = _programme.EnergyInputs(Z, lab, s, _target_rows(target, columns, d), estimand, focal,
                                  bool(improved), _check_lam(lam), standardize,
                                  _check_moments(moments), _check_quantiles(quantiles, columns, d),
                                  cells)
    return inp, index, columns, rng


def _check_moments(moments):
    if moments is None or moments is False:
        return None
    if isinstance(moments, (bool, np.bool_)) or not isinstance(moments, (int, np.integer)) \
            or moments < 1:
        raise ValueError(f"`moments` must be None or an integer >= 1 (the highest power of each "
                         f"covariate whose weighted mean is balanced exactly); got {moments!r}.")
    return int(moments)


def _check_quantiles(quantiles, columns, d):
    """``quantiles`` as a tuple of probabilities (every covariate) or a dict {position: tuple}."""
    if quantiles is None:
        return None

    def probs(v, where):
        vals = [v] if np.isscalar(v) else list(v)
        for q in vals:
            if isinstance(q, (bool, np.bool_)) or not isinstance(q, (int, float, np.number)) \
                    or not 0 < q < 1:
                raise ValueError(f"`quantiles`{where} must be probabilities strictly between 0 and "
                                 f"1; got {q!r}.")
        return tuple(float(q) for q in vals)

    if not isinstance(quantiles, dict):
        return probs(quantiles, "")
    names = list(columns) if columns is not None else list(range(d))
    out = {}
    for key, v in quantiles.items():
        if key in names:
            pos = names.index(key)
        elif columns is None or not isinstance(key, (int, np.integer)) or not 0 <= key < d:
            raise KeyError(f"`quantiles`: {key!r} is not a covariate; the covariates are "
                           f"{short_list(names)}.")
        else:
            pos = int(key)
        out[pos] = probs(v, f"[{key!r}]")
    return out


def independence_weights(X, treatment=None, *, data=None, base_weights=None, lam=0.0,
                         standardize="studentized", dimension_adj=True, solver="osqp", cells=None,
                         rng=None, memory_budget=2**30, n_threads=None):
    r"""Independence weights for a continuous treatment.

    The weights of Huling, Greifer and Chen (2023, "Independence weights for causal
    inference with continuous treatments", Journal of the American Statistical
    Association): non-negative weights with mean 1 that minimise

    .. math::

        D_w + \lambda \sum_i (w_i/n)^2, \qquad
        D_w = \mathrm{dCov}^2_w(A, X) + c_A\, E_w(F_{A,w}, F_A) + c_X\, E_w(F_{X,w}, F_X),

    where :math:`\mathrm{dCov}^2_w = \sum_{ij} p_i p_j \hat a_{ij} \hat b_{ij}` with masses
    :math:`p = w/n` and the distance matrices of the treatment ``A`` and the covariates
    ``X`` double-centred by the (base-weighted) sample, and the two energy distances keep
    each weighted margin close to the sample's, so that the weighted joint distribution
    approaches the product of the sample's margins.  The factors are
    :math:`c_A = 1/(1+\sqrt{d})`, :math:`c_X = \sqrt{d}/(1+\sqrt{d})` for ``d`` covariates
    (``dimension_adj=True``: weights :math:`1/\sqrt{d}` and 1 normalised to sum 1), or
    1/2 each.  A convex quadratic programme in ``w`` (both centred matrices are negative
    semidefinite, so their Hadamard product is positive semidefinite).

    **Relation to the authors' R packages.**  With ``standardize=None`` and no
    ``base_weights`` this is the programme of ``independenceWeights::independence_weights``
    (its defaults, ``dimension_adj = TRUE``; also its ``dimension_adj = FALSE``), whose
    ``lambda`` is ``lam``: the same objective and, up to the solvers' tolerance, the same
    weights; the result's ``objective``, ``weighted_dependence``, ``dcov_sqr``, ``ess`` are
    its ``objective``, ``D_w``, ``distcov_weighted``, ``ess``, and its ``energy_A``,
    ``energy_X`` are ``energy_weights`` times ``energy_treatment``, ``energy_covariates``.
    Not offered here: its ``decorrelate_moments`` and ``preserve_means`` constraints.  The
    R package uses the raw units; the default here, ``'studentized'``, divides the
    covariates and the treatment by their standard deviations first, as R ``WeightIt``
    (``method = "energy"``, ``dist.mat = "scaled_euclidean"``) does, whose default
    ``lambda`` is 1e-4 where ours is 0 and whose weights are bounded below by
    ``min.w = 1e-8`` where ours are by 0.  With ``base_weights``, the margins' targets
    and the centring are base-weighted (R ``WeightIt`` centres the distance matrices by the
    unweighted sample).

    Parameters
    ----------
    X : array_like, DataFrame or str, shape (n, d)
        Covariates, or a formula ``'dose ~ age + C(race)'`` with ``data=``, read as by
        :func:`energy_balancing_weights` (the left side the treatment; no intercept).
    treatment : array_like, Series or str
        The continuous treatment (or a column of ``X``), not constant.  Not with a formula.
    data : DataFrame, optional
        The columns of a formula ``X``; kept by the result (``data``).
    base_weights : array_like, optional
        Sampling weights (finite, non-negative, not all zero): the margins' targets.
    lam : float, default 0
        Ridge penalty :math:`\lambda \sum_i (w_i/n)^2`.
    standardize : {'studentized', 'mahalanobis', None}
        Units of the covariates (the treatment is divided by its standard deviation unless
        None).
    dimension_adj : bool, default True
        Weight the two energy distances by :math:`1/\sqrt{d}` and 1, normalised to sum 1
        (Huling, Greifer and Chen's dimension adjustment, the default of their software);
        False weights each by 1/2.
    solver : {'osqp', 'clarabel'}
        As in :func:`energy_balancing_weights`.
    cells : int, optional
        None (default): the exact programme.  An integer K >= 2: at most K k-means cells of
        the (treatment, covariates) rows in the units of ``standardize``, weights
        proportional to the base weights within a cell, the programme's matrices streamed
        (O(n² d) time, O(K²) memory); as in :func:`energy_balancing_weights`, the exact
        programme restricted to cell-constant weights, with every reported quantity exact
        on all rows.
    rng : int, numpy.random.Generator or None
        Seed of the k-means (with ``cells`` only), recorded as the result's ``seed``.
    memory_budget : float, default 1 GiB
        At its peak a call holds about 12 (OSQP) or 15 (Clarabel) float64 matrices of n×n,
        or K×K with ``cells``, the QP solver's own included (measured); above this budget a
        MemoryError says so at once (and suggests ``cells``).
    n_threads : int, optional

    Returns
    -------
    IndependenceWeightsResult

    Examples
    --------
    >>> import numpy as np, energystats as es
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(size=(80, 2))
    >>> a = x[:, 0] + rng.normal(size=80)
    >>> res = es.independence_weights(x, a)
    >>> bool(res.dcor_after < res.dcor_before), round(float(res.weights.mean()), 12)
    (True, 1.0)
    >>> [round(c, 4) for c in res.energy_weights]     # 1/(1 + sqrt 2), sqrt 2/(1 + sqrt 2)
    [0.4142, 0.5858]
    """
    _qp.require_solver(solver)
    cells = _cells.check_cells(cells, rng)
    X, treatment, form = _forms.formula_inputs(X, treatment, data, "independence_weights")
    Z, t, index, columns = _forms.covariates_and_treatment(X, treatment)
    n = Z.shape[0]
    a = _forms.as_treatment_values(t, n)
    s = _forms.check_base_weights(_design.align_weights(X, base_weights, "base_weights"), n)
    lam = _check_lam(lam)
    if not isinstance(dimension_adj, (bool, np.bool_)):
        raise TypeError(f"`dimension_adj` must be True or False; got {dimension_adj!r}.")
    d = Z.shape[1]
    inp = _programme.IndependenceInputs(Z, a, s, lam, standardize, bool(dimension_adj), cells)
    c_a = 1.0 / (1.0 + np.sqrt(d)) if dimension_adj else 0.5
    c_x = 1.0 - c_a
    gen, seed = seeded_rng(rng) if cells is not None else (None, None)
    _forms.check_budget(n if cells is None else min(int(np.sum(s > 0)), cells),
                        _forms.peak_matrices("independence", solver), memory_budget,
                        "independence_weights" + ("" if cells is None else " (cells)"),
                        cells=cells is not None)
    Z, _ = _forms.standardise(Z, standardize, s)
    a, _ = _forms.standardise(a, None if standardize is None else "studentized", s)
    # working units: each variable times its own power of two (exact; 0 when standardised),
    # the terms of the objective scaled back to the raw units' proportions in the QP
    units = (0, 0) if standardize is not None else (_design.pow2_shift(a), _design.pow2_shift(Z))
    a, Z = np.ldexp(a, -units[0]), np.ldexp(Z, -units[1])
    p = s / s.sum()
    if cells is not None:
        res = _independence_cells(Z, a, s, c_a, c_x, lam, dimension_adj, standardize, index,
                                  solver, cells, gen, seed, n_threads, units)
        res = replace(res, inputs=inp, columns=None if columns is None else list(columns),
                      **_forms.formula_fields(form))
        _warn_weights(res, "independence_weights")
        return res
    Da, Dx = _forms.distance_matrix(a, n_threads), _forms.distance_matrix(Z, n_threads)
    dcor_before = _forms.weighted_dcor(Da, Dx, s)

    def centre(D):  # H_p D H_p' in place, H_p = I - 1 p'
        r = D @ p
        D -= r[None, :]
        D -= r[:, None]
        D += p @ r
        return D

    Ca = centre(Da.copy())
    Cx = centre(Dx.copy())
    x, info, kkt, objective, terms = _independence_qp(Ca * Cx, Ca, Cx, p, c_a, c_x, lam, 1.0,
                                                      solver, units)
    w = x * n
    res = IndependenceWeightsResult(w, objective, *terms, (float(c_a), float(c_x)),
                                    bool(dimension_adj), dcor_before,
                                    _forms.weighted_dcor(Da, Dx, w), _forms.ess(w), kkt,
                                    info["solver"], lam, standardize, index, inputs=inp,
                                    columns=None if columns is None else list(columns),
                                    **_forms.formula_fields(form))
    _warn_weights(res, "independence_weights")
    return res


def _independence_qp(P, Ca, Cx, p, c_a, c_x, lam, pen, solver, units=(0, 0), product=None):
    """Solve the independence weights' programme ``x'Ax - 2b'x`` on the simplex, ``A`` the
    centred product ``P`` (overwritten) plus the margins' terms: ``(x, info, kkt, objective,
    (weighted_dependence, dcov_sqr, energy_treatment, energy_covariates))``.

    ``units = (ea, ez)``: the treatment's and the covariates' distances are in working units,
    the raw ones times ``2**-ea`` and ``2**-ez``; the programme's terms are put back in the
    raw proportions (``P`` times ``2**(ea + ez)``, the margins' ``2**ea`` and ``2**ez``),
    all divided by the largest of these powers (the minimiser does not change), and the
    returned values are in the raw units.  ``product``: the matrix whose form ``x'Px`` is
    dCov² (the cells' averaged products, which ``P`` was before it was overwritten); by
    default ``Ca ∘ Cx``."""
    ea, ez = units
    top = max(ea + ez, ea, ez)
    fp, fa, fx, fl = (np.ldexp(1.0, ea + ez - top), np.ldexp(c_a, ea - top),
                      np.ldexp(c_x, ez - top), np.ldexp(lam, -top))
    M = fa * Ca + fx * Cx
    M *= -1.0                                          # positive semidefinite
    A = P
    A *= fp
    A += M
    A[np.diag_indices_from(A)] += fl * pen
    b = M @ p
    blocks = [np.arange(A.shape[0])]
    x, info = _qp.solve_simplex_qp(A, b, blocks, solver)
    kkt = _qp.kkt_residual(A, b, x, blocks)
    objective = float(np.ldexp(x @ (A @ x) - 2.0 * (b @ x) + p @ b, top))
    # x'(Ca ∘ Cx)x without another n×n matrix (P was overwritten)
    form = (np.einsum("i,ij,ij,j->", x, Ca, Cx, x, optimize=False) if product is None
            else x @ product @ x)
    dcov = float(np.ldexp(form, ea + ez))
    e_a = float(np.ldexp(max(float(-(x - p) @ Ca @ (x - p)), 0.0), ea))
    e_x = float(np.ldexp(max(float(-(x - p) @ Cx @ (x - p)), 0.0), ez))
    return x, info, kkt, objective, (dcov + c_a * e_a + c_x * e_x, dcov, e_a, e_x)


def _independence_cells(Z, a, s, c_a, c_x, lam, dimension_adj, standardize, index, solver, cells,
                        gen, seed, n_threads, units=(0, 0)):
    """:func:`independence_weights` on k-means cells of (treatment, covariates) jointly (both
    in the working units ``units``, as in :func:`_independence_qp`)."""
    from .._core._metrics import resolve_metric
    from .._core._weights import weighted_dcov_means

    n = Z.shape[0]
    joint = np.hstack([a, Z])
    cell, _ = _cells.kmeans_cells(joint, np.zeros(n, dtype=np.intp), 1, cells, s, gen)
    K = int(cell.max()) + 1
    P, Ca, Cx, mass, pen = _cells.cell_dependence_matrices(a, Z, cell, K, s, n_threads)
    z = mass / mass.sum()
    y, info, kkt, objective, terms = _independence_qp(P.copy(), Ca, Cx, z, c_a, c_x, lam, pen,
                                                      solver, units, product=P)
    w = np.zeros(n)
    ok = cell >= 0
    w[ok] = n * y[cell[ok]] * s[ok] / mass[cell[ok]]
    met, nt = resolve_metric("energy", 1.0), check_n_threads(n_threads)

    def dcor(v):  # weighted distance correlation, streamed (no n×n matrix)
        (cov, va, vb), _, _ = weighted_dcov_means(a, Z, v / v.sum(), met, nt)
        return 0.0 if va <= 0 or vb <= 0 else float(np.sqrt(max(cov, 0.0) / np.sqrt(va * vb)))

    return IndependenceWeightsResult(w, objective, *terms, (float(c_a), float(c_x)),
                                     bool(dimension_adj), dcor(s), dcor(w), _forms.ess(w), kkt,
                                     info["solver"], lam, standardize, index, K, cell.copy(), seed)
