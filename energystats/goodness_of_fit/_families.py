"""Univariate families for the energy goodness-of-fit test (Székely and Rizzo 2005, 2013).

For a hypothesised Z with distribution function F and finite mean μ,

    E|y − Z| = y (2F(y) − 1) + μ − 2 E[Z 1{Z ≤ y}],     E|Z − Z′| = 2 ∫ F (1 − F) dz.

A :class:`Family` evaluates both for a SciPy distribution at (arrays of) parameters: in closed
form for the families listed in ``CLOSED_FORMS`` (standardised, then scaled: for a continuous
SciPy law ``Z = loc + scale Z₀``), by summing over the support for discrete laws, and by
numerical integration otherwise (slow; one quadrature per gap between sorted values).  It also
fits the parameters (maximum likelihood, SciPy's ``fit`` conventions), vectorised over the rows
of a batch where the estimator has a closed form.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import integrate, special, stats

#: user-facing names → SciPy names
ALIASES = {"normal": "norm", "gaussian": "norm", "exponential": "expon", "lognormal": "lognorm",
           "weibull": "weibull_min", "geometric": "geom", "binomial": "binom",
           "negative binomial": "nbinom", "negative_binomial": "nbinom"}


# -- closed forms for the standardised law (loc 0, scale 1) -----------------------------------
# each: (mean(shapes), partial_mean(y, shapes) = E[Z 1{Z ≤ y}], cdf(y, shapes), mean_diff(shapes))
# with y already standardised; shapes broadcast against y.

def _norm():
    return (lambda: 0.0,
            lambda y: -np.exp(-0.5 * y * y) / math.sqrt(2 * math.pi),
            special.ndtr,
            lambda: 2.0 / math.sqrt(math.pi))


def _expon():
    def pm(y):
        yp = np.maximum(y, 0.0)
        return -special.expm1(-yp) - yp * np.exp(-yp)  # 1 − e^{−y}(1 + y)
    return (lambda: 1.0, pm, lambda y: -special.expm1(-np.maximum(y, 0.0)), lambda: 1.0)


def _uniform():
    def pm(y):
        yc = np.clip(y, 0.0, 1.0)
        return 0.5 * yc * yc
    return (lambda: 0.5, pm, lambda y: np.clip(y, 0.0, 1.0), lambda: 1.0 / 3.0)


def _gamma():
    def pm(y, a):
        return a * special.gammainc(a + 1.0, np.maximum(y, 0.0))
    return (lambda a: a, pm, lambda y, a: special.gammainc(a, np.maximum(y, 0.0)),
            lambda a: 2.0 * np.exp(special.gammaln(a + 0.5) - special.gammaln(a)) / math.sqrt(math.pi))


def _lognorm():
    def pm(y, s):
        with np.errstate(divide="ignore"):
            ly = np.log(np.maximum(y, 0.0))
        return np.exp(0.5 * s * s) * special.ndtr((ly - s * s) / s)

    def cdf(y, s):
        with np.errstate(divide="ignore"):
            return special.ndtr(np.log(np.maximum(y, 0.0)) / s)
    return (lambda s: np.exp(0.5 * s * s), pm, cdf,
            lambda s: 2.0 * np.exp(0.5 * s * s) * special.erf(0.5 * s))


def _pareto():
    # SciPy's pareto: F(y) = 1 − y^(−b) on y ≥ 1; a finite mean needs b > 1
    def pm(y, b):
        yc = np.maximum(y, 1.0)
        return b / (b - 1.0) * -np.expm1((1.0 - b) * np.log(yc))
    return (lambda b: b / (b - 1.0), pm,
            lambda y, b: -np.expm1(-b * np.log(np.maximum(y, 1.0))),
            lambda b: 2.0 * b / ((b - 1.0) * (2.0 * b - 1.0)))


def _weibull_min():
    def pm(y, c):
        g = special.gamma(1.0 + 1.0 / c)
        return g * special.gammainc(1.0 + 1.0 / c, np.maximum(y, 0.0) ** c)
    return (lambda c: special.gamma(1.0 + 1.0 / c), pm,
            lambda y, c: -special.expm1(-(np.maximum(y, 0.0) ** c)),
            lambda c: 2.0 * special.gamma(1.0 + 1.0 / c) * -np.expm1(-np.log(2.0) / c))


def _beta():
    def md(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
        out = np.empty(a.shape)
        for idx in np.ndindex(a.shape):
            f = (lambda z, p=a[idx], q=b[idx]: special.betainc(p, q, z) * special.betainc(q, p, 1 - z))
            out[idx] = 2.0 * integrate.quad(f, 0.0, 1.0, epsabs=0.0, epsrel=1e-13, limit=200)[0]
        return out if out.ndim else float(out)
    return (lambda a, b: a / (a + b),
            lambda y, a, b: a / (a + b) * special.betainc(a + 1.0, b, np.clip(y, 0.0, 1.0)),
            lambda y, a, b: special.betainc(a, b, np.clip(y, 0.0, 1.0)), md)


CLOSED_FORMS = {"norm": _norm(), "expon": _expon(), "uniform": _uniform(), "gamma": _gamma(),
                "lognorm": _lognorm(), "pareto": _pareto(), "weibull_min": _weibull_min(),
                "beta": _beta()}

#: discrete families with a closed-form maximum-likelihood estimate (loc fixed at 0)
DISCRETE_FITS = {"poisson": ("mu",), "geom": ("p",), "binom": ("p",)}


def resolve(dist):
    """``(scipy distribution, frozen or None, name)`` from a name, a SciPy distribution or a
    frozen one."""
    frozen = None
    if isinstance(dist, str):
        key = ALIASES.get(dist.strip().lower(), dist.strip().lower())
        obj = getattr(stats, key, None)
        if not isinstance(obj, (stats.rv_continuous, stats.rv_discrete)):
            raise ValueError(f"`dist` {dist!r} is not a distribution of scipy.stats (names such as "
                             "'normal', 'exponential', 'gamma', 'uniform', 'lognormal', 'pareto', "
                             "'weibull', 'beta', 'poisson', 'geometric', 'binomial', or any "
                             "scipy.stats name).")
        return obj, None, key
    if isinstance(dist, stats.distributions.rv_frozen):
        frozen = dist
        dist = dist.dist
    if not isinstance(dist, (stats.rv_continuous, stats.rv_discrete)):
        raise TypeError(f"`dist` must be a name, a scipy.stats distribution or a frozen one; "
                        f"got {type(dist).__name__}.")
    return dist, frozen, dist.name


class Family:
    """A SciPy family's parameters, maximum-likelihood fit and energy terms."""

    def __init__(self, dist):
        self.dist = dist
        self.name = dist.name
        self.discrete = isinstance(dist, stats.rv_discrete)
        shapes = [s.strip() for s in (dist.shapes or "").split(",") if s.strip()]
        self.shapes = shapes
        self.param_names = shapes + (["loc"] if self.discrete else ["loc", "scale"])
        self.closed = None if self.discrete else CLOSED_FORMS.get(self.name)

    # -- parameters ----------------------------------------------------------------------------
    def frozen(self, params):
        return self.dist(**params)

    def fit(self, x, known):
        """Maximum-likelihood parameters of one sample (dict), ``known`` held fixed."""
        free = [p for p in self.param_names if p not in known]
        if not free:
            return dict(known)
        if self.discrete:
            return self._fit_discrete(np.asarray(x, float)[None, :], known, free)[0]
        if not hasattr(self.dist, "fit"):
            raise TypeError(f"`dist` {self.name!r} has no fit method: give every parameter in "
                            "`known_params` (or a frozen distribution) and fit=False.")
        fixed = {("floc" if k == "loc" else "fscale" if k == "scale" else "f" + k): v
                 for k, v in known.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            try:
                est = self.dist.fit(np.asarray(x, float), **fixed)
            except Exception as exc:  # scipy raises FitError, ValueError, ...
                raise ValueError(f"fitting {self.name} to the data failed ({exc}); fix some "
                                 "parameters with `known_params` (e.g. {'loc': 0}).") from None
        params = dict(zip(self.param_names, map(float, est)))
        if not all(np.isfinite(v) for v in params.values()):
            raise ValueError(f"fitting {self.name} to the data gave non-finite parameters {params}; "
                             "fix some with `known_params`.")
        return params

    def fit_rows(self, X, known):
        """Parameters of every row of ``X`` (dict of arrays): closed forms where the estimator
        has one (vectorised), else :meth:`fit` row by row."""
        free = [p for p in self.param_names if p not in known]
        B = X.shape[0]
        if not free:
            return {k: np.full(B, v, dtype=float) for k, v in known.items()}
        if self.discrete:
            return self._fit_discrete(X, known, free, rows=True)
        fast = self._fit_rows_closed(X, known, free)
        if fast is not None:
            return fast
        rows = [self.fit(x, known) for x in X]
        return {k: np.array([r[k] for r in rows]) for k in self.param_names}

    def _fit_rows_closed(self, X, known, free):
        if self.name == "norm":
            loc = X.mean(axis=1) if "loc" in free else np.full(X.shape[0], known["loc"])
            if "scale" in free:
                scale = np.sqrt(np.mean((X - loc[:, None]) ** 2, axis=1))
            else:
                scale = np.full(X.shape[0], known["scale"])
            return {"loc": loc, "scale": scale}
        if self.name == "expon":
            loc = X.min(axis=1) if "loc" in free else np.full(X.shape[0], known["loc"])
            scale = (X.mean(axis=1) - loc) if "scale" in free else np.full(X.shape[0], known["scale"])
            return {"loc": loc, "scale": scale}
        if self.name == "uniform" and set(free) == {"loc", "scale"}:
            lo, hi = X.min(axis=1), X.max(axis=1)
            return {"loc": lo, "scale": hi - lo}
        return None

    def _fit_discrete(self, X, known, free, rows=False):
        if self.name == "binom" and "n" not in known:
            raise TypeError("`dist` 'binom': the number of trials `n` must be given in "
                            "`known_params` (only `p` is estimated).")
        if self.name not in DISCRETE_FITS or not set(free) <= set(DISCRETE_FITS[self.name]) | {"loc"}:
            raise TypeError(f"`dist` {self.name!r}: SciPy's discrete distributions have no fit "
                            f"method, and the estimate of {free} is built in only for "
                            f"{sorted(DISCRETE_FITS)} (binomial with `n` known); give the other "
                            "parameters in `known_params` (or a frozen distribution).")
        loc = float(known.get("loc", 0.0))  # an integer shift: never estimated
        m = X.mean(axis=1) - loc
        if self.name == "poisson":
            est = {"mu": m}
        elif self.name == "geom":
            est = {"p": np.where(m > 0, 1.0 / np.where(m > 0, m, 1.0), np.nan)}
        else:  # binom
            est = {"p": m / float(known["n"])}
        out = {k: np.full(X.shape[0], float(v)) for k, v in known.items()}
        out.update(est)
        out["loc"] = np.full(X.shape[0], loc)
        if rows:
            return out
        return [{k: float(v[i]) for k, v in out.items()} for i in range(X.shape[0])]

    # -- energy terms --------------------------------------------------------------------------
    def terms(self, Y, params):
        """``(G, mean_diff)``: E|y − Z| at every entry of ``Y`` (rows × n) and E|Z − Z′| per row,
        for the row's parameters (dict of arrays of length rows)."""
        B = Y.shape[0]
        P = {k: np.broadcast_to(np.asarray(v, float), (B,)) for k, v in params.items()}
        if self.discrete:
            return self._terms_discrete(Y, P)
        if self.closed is not None:
            return self._terms_closed(Y, P)
        return self._terms_numeric(Y, P)

    def _terms_closed(self, Y, P):
        mean, pm, cdf, md = self.closed
        sh = [P[s][:, None] for s in self.shapes]
        loc, scale = P["loc"][:, None], P["scale"][:, None]
        y0 = (Y - loc) / scale
        mu = mean(*sh)
        G = scale * (y0 * (2.0 * cdf(y0, *sh) - 1.0) + mu - 2.0 * pm(y0, *sh))
        if self.name == "norm":  # the same closed form as normality_test, evaluated the same way
            G = scale * (2.0 * np.exp(-0.5 * y0 * y0) / math.sqrt(2 * math.pi)
                         + y0 * special.erf(y0 / math.sqrt(2.0)))
        mdv = np.broadcast_to(np.asarray(md(*[P[s] for s in self.shapes]), float), (Y.shape[0],))
        return G, P["scale"] * mdv

    def _terms_numeric(self, Y, P):
        """Any continuous law: E[Z 1{Z ≤ y}] by integrating z f(z) between consecutive sorted
        values, E|Z − Z′| = 2 ∫ F (1 − F) by quadrature."""
        n = Y.shape[1]
        G = np.empty_like(Y)
        md = np.empty(Y.shape[0])
        for r, fz, lo, hi in self._frozen_rows(P, Y.shape[0]):
            mu = float(fz.mean())
            if not np.isfinite(mu):
                raise ValueError(f"{self.name} with parameters {self._row(P, r)} has no finite mean: "
                                 "the energy statistic needs E|Z| < ∞.")
            y = Y[r]
            order = np.argsort(y, kind="stable")
            ys = np.clip(y[order], lo, hi)
            acc, prev = 0.0, lo
            partial = np.empty(n)
            for i, v in enumerate(ys):
                if v > prev:
                    acc += integrate.quad(lambda z: z * fz.pdf(z), prev, v, limit=200,
                                          epsabs=0.0, epsrel=1e-12)[0]
                    prev = v
                partial[i] = acc
            yo = y[order]
            G[r, order] = yo * (2.0 * fz.cdf(yo) - 1.0) + mu - 2.0 * partial
            md[r] = 2.0 * integrate.quad(lambda z: fz.cdf(z) * fz.sf(z), lo, hi, limit=400,
                                         epsabs=0.0, epsrel=1e-12)[0]
        return G, md

    def _terms_discrete(self, Y, P):
        """Integer support: E|y − Z| = Σ_k |y − k| p(k) by cumulative sums over the support up
        to beyond the data and mean + 40 sd + 50 (where the tail is below 1e-15; laws without a
        finite variance are refused); E|Z − Z′| = 2 Σ_k F(k)(1 − F(k))."""
        G = np.empty_like(Y)
        md = np.empty(Y.shape[0])
        for r, fz, lo, hi in self._frozen_rows(P, Y.shape[0]):
            mean, sd = float(fz.mean()), float(fz.std())
            top = min(float(hi), math.ceil(mean + 40.0 * sd + 50.0)) if np.isfinite(sd) else math.inf
            if not (np.isfinite(top) and fz.sf(top) < 1e-15):
                raise ValueError(f"{self.name} with parameters {self._row(P, r)}: its tail is too "
                                 "heavy to sum E|y − Z| over the support (no finite variance).")
            top = max(float(np.max(Y[r])), top)
            lo = float(min(lo, np.min(Y[r])))
            if top - lo > 5e7:
                raise ValueError(f"{self.name} with parameters {self._row(P, r)}: the support to sum "
                                 f"over ({lo:g}..{top:g}) is too wide.")
            k = np.arange(lo, top + 1.0)
            p = fz.pmf(k)
            F = np.cumsum(p)
            kp = np.cumsum(k * p)
            mu = float(fz.mean())
            idx = np.clip(np.searchsorted(k, Y[r], side="right") - 1, -1, k.size - 1)
            Fy = np.where(idx >= 0, F[np.maximum(idx, 0)], 0.0)
            PMy = np.where(idx >= 0, kp[np.maximum(idx, 0)], 0.0)
            G[r] = Y[r] * (2.0 * Fy - 1.0) + mu - 2.0 * PMy
            md[r] = 2.0 * math.fsum(F * (1.0 - np.minimum(F, 1.0)))
        return G, md

    def _row(self, P, r):
        return {k: float(v[r]) for k, v in P.items()}

    def _frozen_rows(self, P, B):
        """``(r, law, lower, upper)`` for the parameters of each row r of a batch: the SciPy law
        frozen at them and its support."""
        for r in range(B):
            fz = self.dist(**self._row(P, r))
            lo, hi = fz.support()
            yield r, fz, lo, hi
