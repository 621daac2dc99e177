"""Results of homogeneity's tests from the observed statistics and their null distributions
(shared by the threads and the Dask drivers).
"""
from __future__ import annotations

import math

import numpy as np

from .._core import _asymptotic, _permutation, _sequential
from .._core._grouped import _column_keys, dispersion_from_sums
from .._core._rounding import nonnegative
from ._results import DiscoResult, EnergyTestResult


def _pooled_dvar_u(VU, sx, target, n, metric):
    """The pooled sample's U distance variance from its dependence sums ``VU`` (in the working
    units of ``sx``), in the units of ``target``: rho in the units a Scale maps from is
    rho × 2**(shift · degree) in data units, and the variance has degree 2."""
    # DistanceStatsResult.dvar_x_u of these sums with identity scales (the same operations,
    # so the same bits): the U-sum over n(n - 3), NaN for n <= 3
    U = VU[1]
    dvar_u = float(U[1] / (n * (n - 3))) if n > 3 else float("nan")
    power = sx.shift * sx.degree - target.shift * target.degree
    return dvar_u * 2.0 ** (2.0 * power) if power != 0.0 else dvar_u


def _energy_gamma_finish(st, unit, stat, observed, null, obs_M, engine_name, dvar_u):
    """The gamma p-value from the observed group sums and the pooled sample's U distance
    variance, both in the working units of rho (the p-value does not depend on the unit)."""
    N = unit.layout.n
    mean_distance = math.fsum(obs_M[0].ravel()) / (N * (N - 1.0))
    mean, var = _asymptotic.energy_moments(unit.layout.sizes, mean_distance, dvar_u)
    p = _asymptotic.gamma_pvalue(float(observed), mean, var)
    return _energy_test_finish(st, unit, stat, observed, null, False, obs_M, engine_name,
                               asymptotic=p)


def _energy_test_finish(st, unit, stat, observed, null, is_exact, obs_M, engine_name, rule=None,
                        asymptotic=None):
    """The :class:`EnergyTestResult` from the observed sums and the null distribution (or, with
    ``asymptotic``, that p-value)."""
    lab = st.labs[0]
    # pooled group sums (cells summed over strata) give the groups' energy distances
    A = np.zeros((unit.k, lab.k))
    A[np.arange(unit.k), unit.layout.group] = 1.0
    M = A.T @ obs_M[0] @ A
    nn = lab.sizes.astype(np.float64)
    g = M / np.outer(nn, nn)
    estimator = getattr(stat, "estimator", "V")
    if estimator == "U":  # within means over distinct pairs (every compared group has 2 points:
        # checked; one that takes part in no comparison, alone in its strata, may have 1: NaN)
        with np.errstate(divide="ignore", invalid="ignore"):
            gd = np.where(nn > 1.0, np.diag(M) / (nn * (nn - 1.0)), np.nan)
    else:
        gd = np.diag(g)
    E = 2.0 * g - gd[:, None] - gd[None, :]
    if st.metric.kind == "builtin" and estimator == "V":  # negative type: E >= 0 (rounding)
        E = nonnegative(E, 2.0 * np.abs(g) + np.abs(gd[:, None]) + np.abs(gd[None, :]))
    np.fill_diagonal(E, 0.0)
    pvalue = asymptotic
    if null.shape[0] > 0:
        pvalue = float(_permutation.pvalue_from_null(observed, null, is_exact,
                                                     tol=stat.tolerance(obs_M)))
        pvalue = _sequential.final_pvalue(pvalue, rule)
    R_used = int(null.shape[0])
    method = "full" if rule is None else rule.name
    if asymptotic is not None:
        method = _asymptotic.ASYMPTOTIC
    scale = st.scale
    return EnergyTestResult(float(scale.apply(observed)), pvalue, scale.apply(null), R_used,
                            bool(is_exact), lab.sizes.copy(), list(lab.groups), scale.apply(E),
                            engine_name,
                            pvalue_se=None if rule is not None or asymptotic is not None else
                            _permutation.pvalue_se(pvalue, R_used, is_exact),
                            seed=st.seed if R_used and not is_exact else None, columns=st.cols,
                            strata=None if st.strata is None else list(st.strata.groups),
                            strata_name=st.strata_name,
                            pvalue_method=method,
                            decision=None if rule is None else rule.decision, estimator=estimator)


def _disco_finish(st, units, parts, is_exact, engine_name, rules=None):
    """The :class:`DiscoResult` from each factor's (statistic, observed, null, observed sums)."""
    single = len(units) == 1
    n = int(st.labs[0].sizes.sum())
    df_within = units[0].layout.df_within
    obs, nulls, tols, S, W = [], [], [], [], None
    stats = [part[0] for part in parts]
    for stat, o, nl, obs_M in parts:
        obs.append(float(o))
        nulls.append(nl)
        tols.append(stat.tolerance(obs_M))
        Sf, Wf = stat.components(obs_M[0][None])
        S.append(float(Sf[0]))
        W = float(Wf[0])
    T = float(np.sum(obs_M[0])) / (2.0 * n)
    F = np.array(obs)
    if single:
        null = nulls[0]
    else:  # the factors' nulls side by side; with early stops, NaN after each one's last
        null = np.full((max(nl.shape[0] for nl in nulls), len(nulls)), np.nan)
        for f, nl in enumerate(nulls):
            null[:nl.shape[0], f] = nl
    pvalue = None
    if null.shape[0] > 0:
        if rules is not None:  # each factor's rule on its own relabellings
            pvalue = np.array([_sequential.final_pvalue(float(_permutation.pvalue_from_null(
                F[f], nulls[f], is_exact, what="F", tol=tols[f], key=stats[f].key)), rule)
                for f, rule in enumerate(rules)])
        else:
            pvalue = np.atleast_1d(_permutation.pvalue_from_null(
                F if not single else F[0], null, is_exact, what="F",
                tol=np.array(tols) if not single else tols[0],
                key=_column_keys(stats) if not single else stats[0].key))
    if single:
        test = "one-way" if st.strata is None else "stratified"
    else:
        test = "conditional"
    scale = st.scale
    return _disco_result(st, n, F, pvalue, scale.apply(np.array(S)), scale.apply(W), scale.apply(T),
                         np.array([u.layout.df_between for u in units]), df_within, null, is_exact,
                         engine_name, test, rules)


class _CellsToFactors:
    """:class:`_MarginalDisco` from the group sums of the cells (each factor's sums are sums of
    the cells' sums: ``M_f = A_fᵀ M A_f``, ``A_f`` the one-hot map of cells to levels)."""

    def __init__(self, marginal, maps, ks):
        self.marginal = marginal
        self.A = [np.eye(kf)[m] for m, kf in zip(maps, ks)]

    def factor_sums(self, M):
        return [np.einsum("cg,bcd,dh->bgh", A, M, A) for A in self.A]

    def __call__(self, Ms):
        return self.marginal(self.factor_sums(Ms[0]))


def _marginal_finish(st, stat, obs_M, observed, null, is_exact, engine_name, n, dfb, df_within,
                     rules=None):
    """The marginal :class:`DiscoResult` from each factor's observed sums and the null."""
    labs = st.labs
    obs_M = [M[0] if M.ndim == 3 else M for M in obs_M]
    parts = [dispersion_from_sums(M, lab.sizes, lab.groups) for M, lab in zip(obs_M, labs)]
    T = parts[0].T
    S = np.array([p.S for p in parts])
    F = np.atleast_1d(np.asarray(observed, dtype=float))
    pvalue = None
    if null.shape[0] > 0:
        tol = stat.tolerance(obs_M)
        if rules is not None:  # each factor's rule on its own prefix of the relabellings
            tol = np.broadcast_to(tol, F.shape)
            pvalue = np.array([_sequential.final_pvalue(float(_permutation.pvalue_from_null(
                F[f], null[:rule.used, f], is_exact, what="F", tol=tol[f],
                key=stat.parts[f].key)), rule)
                for f, rule in enumerate(rules)])
        else:
            pvalue = np.atleast_1d(_permutation.pvalue_from_null(observed, null, is_exact, what="F",
                                                                 tol=tol, key=stat.key))
    scale = st.scale
    return _disco_result(st, n, F, pvalue, scale.apply(S), scale.apply(T - float(S.sum())),
                         scale.apply(T), dfb, df_within, null, is_exact, engine_name, "marginal", rules)


def _disco_result(st, n, F, pvalue, S, within, T, dfb, df_within, null, is_exact, engine, test,
                  rules=None):
    labs = st.labs
    single = len(labs) == 1
    R_used = int(null.shape[0])
    if rules is None:
        used, decision = R_used, None
    elif single:
        used, decision = rules[0].used, rules[0].decision
    else:  # each factor's rule stopped on its own
        used = np.array([rule.used for rule in rules])
        decision = [rule.decision for rule in rules]
    se = None if rules is not None else _permutation.pvalue_se(pvalue, R_used, is_exact)
    factors = ["Between"] if single else [str(nm) for nm in st.names]
    return DiscoResult(
        statistic=float(F[0]) if single else F,
        pvalue=(None if pvalue is None else float(pvalue[0]) if single else pvalue.astype(float)),
        between=float(S[0]) if single else S,
        within=float(within), total=float(T),
        df_between=int(dfb[0]) if single else dfb,
        df_within=int(df_within), df_total=n - 1,
        factors=factors, null_distribution=null, n_resamples=used,
        exact=bool(is_exact), sizes=[lab.sizes.copy() for lab in labs],
        groups=[list(lab.groups) for lab in labs], engine=engine,
        pvalue_se=(None if se is None else float(np.atleast_1d(se)[0]) if single else se),
        seed=st.seed if R_used and not is_exact else None, columns=st.cols, test=test,
        strata=None if st.strata is None else list(st.strata.groups),
        strata_name=st.strata_name, pvalue_method="full" if rules is None else rules[0].name,
        decision=decision)
