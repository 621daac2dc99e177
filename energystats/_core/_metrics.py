"""The one registry of semimetrics.

The energy semimetric ``|x - y|^exponent`` as in Székely and Rizzo (2013), "Energy
statistics: A class of statistics based on distances"; the Laplacian and Gaussian
ones as in França, Rizzo and Vogelstein (2021), "Kernel k-Groups via Hartigan's
Method", IEEE TPAMI 43(12).

Each built-in metric has a name, the parameter it reads, a validator, the
code of its compiled tile kernel and a plain numpy reference (used by the
tests, never by the library).  Adding a metric touches this table and the
``transform_sq`` switch of ``_lib/_pairwise.pyx``.

SciPy's names (:data:`SCIPY_NAMES`, ``scipy.spatial.distance``) are accepted where the metric is
of negative type, so that the energy statistics are valid: 'euclidean' and 'sqeuclidean' are
the energy metric with exponent 1 and 2, 'cityblock' has its compiled kernel, 'hamming',
'canberra' and 'chebyshev' (at most 2 features) go through ``scipy.spatial.distance.cdist`` in
tiles.  'seuclidean' (parameter V), 'mahalanobis' (VI) and 'minkowski' (p) take their SciPy
parameter in the pair ``metric=(name, {param: value})`` (:data:`SCIPY_PARAMS`), with no default:
the first two are Euclidean after a linear map, 'minkowski' with 1 <= p <= 2 is of negative type
(ℓ_p embeds in L1, Bretagnolle, Dacunha-Castelle and Krivine 1966); they go through cdist in tiles
(p = 1 and p = 2: the 'cityblock' and 'energy' kernels).  'cosine', 'correlation', 'braycurtis',
and 'chebyshev' and 'minkowski' with p > 2 with 3 or more features are refused with the reason,
unless ``check_negative_type=False``; SciPy's other names are not accepted.  The reasons and
references are in the guide page "Choosing a semimetric"
(docs/guide/semimetrics.rst).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["METRICS", "MetricInfo", "ResolvedMetric", "resolve_metric", "SCIPY_NAMES",
           "SCIPY_PARAMS", "COMPILED", "compiled_only", "check_features"]


def _real(value, name, rule):
    """``value`` as a float; text, bytes, bools and arrays are refused, never parsed or cast."""
    if isinstance(value, (str, bytes, bool, np.bool_)) or np.ndim(value) != 0:
        what = type(value).__name__
        raise TypeError(f"`{name}` must be {rule}; got {value!r} (a {what}, not a number).")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be {rule}; got {value!r}.") from None


def _check_exponent(exponent):
    value = _real(exponent, "exponent", "a real number in (0, 2]")
    if not (0.0 < value <= 2.0):
        raise ValueError(f"`exponent` must lie in (0, 2]; got {exponent!r}.")
    return value


def _check_sigma(sigma):
    value = _real(sigma, "sigma", "a positive real number")
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"`sigma` must be a finite number > 0; got {sigma!r}.")
    return value


def _energy_ref(x, y, exponent):
    return float(np.sqrt(np.sum((np.asarray(x, float) - np.asarray(y, float)) ** 2)) ** exponent)


def _laplacian_ref(x, y, sigma):
    r = np.sqrt(np.sum((np.asarray(x, float) - np.asarray(y, float)) ** 2))
    return float(2.0 - 2.0 * np.exp(-r / (2.0 * sigma)))


def _gaussian_ref(x, y, sigma):
    q = np.sum((np.asarray(x, float) - np.asarray(y, float)) ** 2)
    return float(2.0 - 2.0 * np.exp(-q / (2.0 * sigma**2)))


def _cityblock_ref(x, y, _):
    return float(np.sum(np.abs(np.asarray(x, float) - np.asarray(y, float))))


def _no_param(_):
    """Metrics without a parameter: the value 1.0 is their degree (rho(cx, cy) = c rho(x, y))."""
    return 1.0


@dataclass(frozen=True)
class MetricInfo:
    """A built-in semimetric: its parameter, validator, kernel code and reference."""

    name: str
    param: str
    validator: Callable[[object], float]
    code: int
    reference: Callable[[np.ndarray, np.ndarray, float], float]
    formula: str


METRICS = {
    "energy": MetricInfo("energy", "exponent", _check_exponent, 0, _energy_ref,
                         "‖x − y‖^exponent"),
    "laplacian": MetricInfo("laplacian", "sigma", _check_sigma, 1, _laplacian_ref,
                            "2 − 2 exp(−‖x − y‖ / (2 sigma))"),
    "gaussian": MetricInfo("gaussian", "sigma", _check_sigma, 2, _gaussian_ref,
                           "2 − 2 exp(−‖x − y‖² / (2 sigma²))"),
    "cityblock": MetricInfo("cityblock", "", _no_param, 3, _cityblock_ref, "Σ_t |x_t − y_t|"),
}

#: SciPy's metric names and what becomes of each: ``(status, reason)``.  'energy1'/'energy2':
#: the energy metric with exponent 1/2; 'compiled': :data:`METRICS`; 'tiles': SciPy's cdist in
#: tiles (of negative type); 'max2': tiles, of negative type for at most 2 features only;
#: 'lp': minkowski, by its p ('cityblock', 'energy', 'tiles' or 'max2'); 'refused': not valid for
#: energy statistics (``reason``), usable with ``check_negative_type=False``.
SCIPY_NAMES = {
    "euclidean": ("energy1", "the Euclidean distance: metric='energy' with exponent 1"),
    "sqeuclidean": ("energy2", "the squared Euclidean distance: metric='energy' with exponent 2, of "
                    "negative type but not of strong negative type (its energy distance is "
                    "2‖mean(x) − mean(y)‖², so the statistics compare means only)"),
    "cityblock": ("compiled", "the L1 distance, a sum of one-dimensional distances: of negative "
                  "type; with 2 or more features not of strong negative type (the statistics "
                  "compare the coordinates' marginal distributions only)"),
    "hamming": ("tiles", "the share of coordinates that differ, an average of discrete metrics: of "
                "negative type; with 2 or more features the statistics compare the marginal "
                "distributions only"),
    "canberra": ("tiles", "a sum over coordinates of |x − y| / (|x| + |y|), each of negative type "
                 "(Pólya's criterion): with 2 or more features the statistics compare the "
                 "marginal distributions only"),
    "chebyshev": ("max2", "the L∞ distance: of negative type for at most 2 features (in 2, the L1 "
                  "distance of rotated coordinates), not of negative type for 3 or more "
                  "(Misiewicz 1989): the energy distance can be negative"),
    "cosine": ("refused", "1 − cos(angle) = ‖x/‖x‖ − y/‖y‖‖² / 2 is a squared Euclidean distance "
               "between directions: its energy statistics compare only the mean directions (as "
               "'sqeuclidean' compares means), and it is undefined for a zero row; for a consistent "
               "statistic on directions divide each row by its norm and use metric='energy'"),
    "correlation": ("refused", "1 − Pearson correlation is 'cosine' on centred rows: the same "
                    "loss of consistency"),
    "braycurtis": ("refused", "the Bray–Curtis dissimilarity is not of negative type on data of "
                   "both signs (a standard normal sample fails `is_negative_type`), and its status "
                   "on non-negative data is not established"),
    "seuclidean": ("tiles", "the standardized Euclidean distance sqrt(Σ_t (x_t − y_t)² / V_t), the "
                   "Euclidean distance of x / sqrt(V): of strong negative type for V > 0"),
    "mahalanobis": ("tiles", "the Mahalanobis distance sqrt((x − y)ᵀ VI (x − y)), the Euclidean "
                    "distance of Lᵀx where L Lᵀ = VI: of strong negative type for VI positive "
                    "definite"),
    "minkowski": ("lp", "the L_p distance (Σ_t |x_t − y_t|^p)^(1/p): of negative type for "
                  "1 ≤ p ≤ 2, ℓ_p embedding isometrically in L1 (Bretagnolle, Dacunha-Castelle and "
                  "Krivine 1966), strong negative type claimed for p = 2 only; for p > 2 of "
                  "negative type for at most 2 features (every 2-dimensional normed space embeds "
                  "in L1), not for 3 or more (Koldobsky 1991): the energy distance can be negative"),
}

#: SciPy's names that take a parameter, given as ``metric=(name, {param: value})``: the parameter,
#: and what it is (the messages say it).  Neither V nor VI has a default: SciPy's cdist computes
#: them from the block it is given, which in tiles would differ from tile to tile.
SCIPY_PARAMS = {
    "seuclidean": ("V", "the per-feature variances, a positive vector of length n_features; "
                   "e.g. np.var(X, axis=0, ddof=1) of the pooled data, as cdist(X, X, "
                   "'seuclidean') uses"),
    "mahalanobis": ("VI", "the inverse covariance, a symmetric positive definite n_features × "
                    "n_features matrix; e.g. np.linalg.inv(np.cov(X.T)) of the pooled data, as "
                    "cdist(X, X, 'mahalanobis') uses"),
    "minkowski": ("p", "the order, a real number in [1, 2] (p > 2: at most 2 features)"),
}


#: the metrics with compiled kernels, as the messages of the paths that run only those name them
COMPILED = ("'energy' (also named 'euclidean', 'sqeuclidean'), 'laplacian', 'gaussian' or "
            "'cityblock'")

_NOT_COMPILED = {"scipy": "computed by SciPy's cdist, into the n×n matrix",
                 "callable": "a callable", "precomputed": "a precomputed matrix"}


def compiled_only(what, met):
    """The message of a path (``what``: "backend='dask'", "`engine='streamed'`", ...) that runs
    the compiled kernels only, for the resolved metric ``met`` that has none."""
    name = "precomputed" if met.kind == "precomputed" else met.name
    return (f"{what} needs a built-in metric with a compiled kernel: {COMPILED}; got "
            f"metric={name!r} ({_NOT_COMPILED.get(met.kind, met.kind)}).")


@dataclass(frozen=True)
class ResolvedMetric:
    """A validated metric choice: ``kind`` is 'builtin', 'callable', 'precomputed' or 'scipy'
    (SciPy's ``cdist`` by ``name``, for data of at most ``max_features`` columns)."""

    kind: str
    name: str
    code: int = -1
    param: float = float("nan")
    func: Callable | None = None
    max_features: float = float("inf")
    #: SciPy's parameter of 'seuclidean', 'mahalanobis', 'minkowski' as ``((name, value),)``,
    #: arrays as nested tuples (hashable); :meth:`scipy_kwargs` gives them to cdist
    params: tuple = ()

    def scipy_kwargs(self):
        """The keyword arguments of ``cdist(..., self.name, **kwargs)``: V, VI as arrays, p."""
        return {k: (np.array(v, dtype=np.float64) if isinstance(v, tuple) else v)
                for k, v in self.params}

    @property
    def is_energy1(self) -> bool:
        """True for ``metric='energy', exponent=1`` (the 1-D sorted formulas apply)."""
        return self.kind == "builtin" and self.code == 0 and self.param == 1.0

    def reference(self, x, y):
        """rho(x, y) by the slow numpy reference (tests only)."""
        if self.kind == "callable":
            return float(self.func(x, y))
        if self.kind == "scipy":
            from scipy.spatial import distance
            return float(getattr(distance, self.name)(np.asarray(x, float), np.asarray(y, float),
                                                      **self.scipy_kwargs()))
        return METRICS[self.name].reference(x, y, self.param)


def _float_array(value, what, ndim):
    """``value`` as a float64 array of ``ndim`` dimensions; text, bools, complex refused."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{what} must hold real numbers; got dtype {arr.dtype} ({value!r}).")
    arr = arr.astype(np.float64)
    if arr.ndim != ndim or arr.size == 0:
        raise ValueError(f"{what} must be a non-empty {ndim}-D array; got shape {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite; got {value!r}.")
    return arr


def _check_V(V, what):
    arr = _float_array(V, what, 1)
    if np.any(arr <= 0):
        i = int(np.argmin(arr))
        raise ValueError(f"{what} must be > 0 everywhere (the variances divide); got V[{i}] = "
                         f"{float(arr[i])!r}.")
    return tuple(arr.tolist())


def _check_VI(VI, what):
    arr = _float_array(VI, what, 2)
    if arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{what} must be a square n_features × n_features matrix; got shape "
                         f"{arr.shape}.")
    asym = float(np.max(np.abs(arr - arr.T)))
    if asym > 1e-10 * float(np.max(np.abs(arr))):
        raise ValueError(f"{what} must be symmetric (to 1e-10 of its largest entry); got max|VI − "
                         f"VIᵀ| = {asym:.3g}.")
    try:
        np.linalg.cholesky((arr + arr.T) / 2)
    except np.linalg.LinAlgError:
        low = float(np.linalg.eigvalsh((arr + arr.T) / 2).min())
        raise ValueError(f"{what} must be positive definite (else the distance is not Euclidean "
                         f"after a linear map, or is undefined); its smallest eigenvalue is "
                         f"{low:.6g}.") from None
    return tuple(tuple(row) for row in arr.tolist())


def _check_p(p, what):
    if isinstance(p, (str, bytes, bool, np.bool_)) or np.ndim(p) != 0:
        raise TypeError(f"{what} must be a real number in [1, 2]; got {p!r} (a "
                        f"{type(p).__name__}).")
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a real number in [1, 2]; got {p!r}.") from None
    if not np.isfinite(value):
        raise ValueError(f"{what} must be finite (p = ∞ is metric='chebyshev'); got p={p!r}.")
    if value < 1.0:
        raise ValueError(f"{what} must be ≥ 1: for p < 1 the triangle inequality fails (not a "
                         f"metric); got p={p!r}.")
    return value


_VALIDATORS = {"V": _check_V, "VI": _check_VI, "p": _check_p}


def _split_pair(metric):
    """``metric=(name, params)`` as ``(name, params)``; a bare name as ``(name, None)``."""
    if not isinstance(metric, tuple):
        return metric, None
    if len(metric) != 2 or not isinstance(metric[0], str) or not isinstance(metric[1], dict):
        raise TypeError(f"`metric` as a pair must be (name, params), a name of SciPy's that takes "
                        f"a parameter ({_param_names()}) and a dict, e.g. ('minkowski', "
                        f"{{'p': 1.5}}); got {metric!r}.")
    return metric


def _param_names():
    return ", ".join(repr(k) for k in sorted(SCIPY_PARAMS))


def _scipy_params(key, metric, params):
    """The validated parameter of a name of :data:`SCIPY_PARAMS`, as ``((name, value),)``."""
    if key not in SCIPY_PARAMS:
        if params is None:
            return ()
        raise ValueError(f"metric={metric!r} takes no parameter; got the parameters {params!r}. "
                         f"A (name, params) pair is for {_param_names()} only.")
    pname, meaning = SCIPY_PARAMS[key]
    if params is None or pname not in params:
        raise ValueError(f"metric={metric!r} needs its parameter {pname} ({meaning}): pass "
                         f"metric=({metric!r}, {{{pname!r}: ...}}). It has no default here: "
                         f"SciPy's cdist would compute it from each block of rows it is given.")
    extra = sorted(set(params) - {pname}, key=str)
    if extra:
        raise ValueError(f"metric={metric!r} takes the parameter {pname} only; got "
                         f"{', '.join(repr(e) for e in extra)} as well.")
    return ((pname, _VALIDATORS[pname](params[pname], f"`{pname}` of metric={metric!r}")),)


def check_features(met, d):
    """A ValueError where the data's ``d`` features do not suit the resolved SciPy metric ``met``:
    V or VI of another size, or more features than its negative type allows."""
    kw = dict(met.params)
    if "V" in kw and len(kw["V"]) != d:
        raise ValueError(f"`V` of metric={met.name!r} has length {len(kw['V'])}, but the data have "
                         f"{d} feature(s): V holds one variance per feature.")
    if "VI" in kw and len(kw["VI"]) != d:
        k = len(kw["VI"])
        raise ValueError(f"`VI` of metric={met.name!r} is {k}×{k}, but the data have {d} "
                         f"feature(s): VI must be {d}×{d}.")
    if d > met.max_features:
        what = f" with p={kw['p']!r} and" if "p" in kw else " with"
        raise ValueError(f"metric={met.name!r}{what} {d} features is refused: "
                         f"{SCIPY_NAMES[met.name][1]}. Pass check_negative_type=False (an "
                         "argument of every function that takes `metric`) to use it anyway.")


def _scipy_metric(key, metric, exponent, check_negative_type, params=None):
    """A SciPy name (:data:`SCIPY_NAMES`) as a :class:`ResolvedMetric`."""
    status, reason = SCIPY_NAMES[key]
    kw = _scipy_params(key, metric, params)
    if status != "energy1" and status != "energy2" and exponent != 1.0:
        # 'euclidean'/'sqeuclidean' fix the exponent themselves: checked below
        raise ValueError(f"`exponent` applies to metric='energy' only; got exponent={exponent!r} "
                         f"with metric={metric!r}.")
    if status in ("energy1", "energy2"):
        if exponent != 1.0:
            raise ValueError(f"metric={metric!r} fixes the exponent ({status[-1]}); got "
                             f"exponent={exponent!r}: use metric='energy' with `exponent`.")
        return ResolvedMetric("builtin", "energy", 0, float(status[-1]))
    if status == "compiled":
        return ResolvedMetric("builtin", key, METRICS[key].code, 1.0)
    if status == "refused" and check_negative_type:
        raise ValueError(f"metric={metric!r} is refused: {reason}. Pass check_negative_type=False "
                         "(an argument of every function that takes `metric`) to use it anyway.")
    if status == "lp":
        p = kw[0][1]
        if p == 1.0:
            return ResolvedMetric("builtin", "cityblock", METRICS["cityblock"].code, 1.0)
        if p == 2.0:
            return ResolvedMetric("builtin", "energy", 0, 1.0)
        status = "max2" if p > 2.0 else "tiles"
    limit = 2 if status == "max2" and check_negative_type else float("inf")
    return ResolvedMetric("scipy", key, max_features=limit, params=kw)


def _unused_parameters(what, used, exponent, sigma):
    """A ValueError when ``exponent`` or ``sigma`` differs from its default 1 but ``metric``
    (``what``) has no use for it: it would be ignored without a word."""
    for name, value, owner in (("exponent", exponent, "metric='energy'"),
                               ("sigma", sigma, "metric='gaussian' or 'laplacian'")):
        if name == used:
            continue
        try:
            default = bool(value == 1.0)
        except (TypeError, ValueError):
            default = False
        if not default:
            raise ValueError(f"`{name}` applies to {owner} only; got {name}={value!r} with metric="
                             f"{what}, which would ignore it. Leave `{name}` at its default 1.")


def resolve_metric(metric="energy", exponent=1.0, sigma=1.0, *, allow_precomputed=True,
                   check_negative_type=True):
    """Validate ``metric`` and its parameter once; return a :class:`ResolvedMetric`.

    SciPy's names (:data:`SCIPY_NAMES`) are accepted where they are of negative type; the
    others are an error that says why, unless ``check_negative_type`` is False (every public
    function with ``metric=`` takes ``check_negative_type=`` and passes it here).  The names of
    :data:`SCIPY_PARAMS` come with their parameter as a pair, ``metric=('minkowski', {'p': 1.5})``:
    validated here, except that V and VI must match the data's features (:func:`check_features`,
    where the data are seen).
    """
    if not isinstance(check_negative_type, (bool, np.bool_)):
        raise TypeError(f"`check_negative_type` must be True or False; got {check_negative_type!r}.")
    metric, params = _split_pair(metric)
    if params is not None and metric.lower() not in SCIPY_NAMES:
        raise ValueError(f"`metric` as a (name, params) pair is for {_param_names()} only; got "
                         f"{(metric, params)!r}.")
    if callable(metric):
        name = getattr(metric, "__name__", "callable")
        _unused_parameters(f"a callable ({name})", "", exponent, sigma)
        return ResolvedMetric("callable", name, func=metric)
    if isinstance(metric, str):
        key = metric.lower()
        if key == "precomputed":
            if not allow_precomputed:
                raise ValueError("`metric='precomputed'` is not available in this function.")
            _unused_parameters(repr(metric), "", exponent, sigma)
            return ResolvedMetric("precomputed", "precomputed")
        if key in SCIPY_NAMES:
            _unused_parameters(repr(metric), "exponent", 1.0, sigma)  # exponent: checked there
            return _scipy_metric(key, metric, exponent, check_negative_type, params)
        if key in METRICS:
            info = METRICS[key]
            _unused_parameters(repr(metric), info.param, exponent, sigma)
            value = info.validator(exponent if info.param == "exponent" else sigma)
            return ResolvedMetric("builtin", key, info.code, value)
    names = sorted(set(METRICS) | set(SCIPY_NAMES))
    choices = ", ".join(repr(c) for c in names + ["precomputed"] * allow_precomputed)
    raise ValueError(f"`metric` must be one of {choices} or a callable ({_param_names()} with "
                     f"their parameter as a pair, e.g. ('minkowski', {{'p': 1.5}})); got "
                     f"{metric!r}.")
