"""The one registry of semimetrics.

The energy semimetric ``|x - y|^exponent`` as in Székely and Rizzo (2013), "Energy
statistics: A class of statistics based on distances"; the Laplacian and Gaussian
ones as in França, Rizzo and Vogelstein (2021), "Kernel k-Groups via Hartigan's
Method", IEEE TPAMI 43(12).

Each built-in metric has a name, the parameter it reads, a validator, the
code of its compiled tile kernel and a plain numpy reference (used by the
tests, never by the library).  Adding a metric touches this table and the
``transform_sq`` switch of ``_lib/_pairwise.pyx``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["METRICS", "MetricInfo", "ResolvedMetric", "resolve_metric"]


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
}


@dataclass(frozen=True)
class ResolvedMetric:
    """A validated metric choice: ``kind`` is 'builtin', 'callable' or 'precomputed'."""

    kind: str
    name: str
    code: int = -1
    param: float = float("nan")
    func: Callable | None = None

    @property
    def is_energy1(self) -> bool:
        """True for ``metric='energy', exponent=1`` (the 1-D sorted formulas apply)."""
        return self.kind == "builtin" and self.code == 0 and self.param == 1.0

    def reference(self, x, y):
        """rho(x, y) by the slow numpy reference (tests only)."""
        if self.kind == "callable":
            return float(self.func(x, y))
        return METRICS[self.name].reference(x, y, self.param)


def resolve_metric(metric="energy", exponent=1.0, sigma=1.0, *, allow_precomputed=True):
    """Validate ``metric`` and its parameter once; return a :class:`ResolvedMetric`."""
    if callable(metric):
        return ResolvedMetric("callable", getattr(metric, "__name__", "callable"), func=metric)
    if isinstance(metric, str):
        key = metric.lower()
        if key == "precomputed":
            if not allow_precomputed:
                raise ValueError("`metric='precomputed'` is not available in this function.")
            return ResolvedMetric("precomputed", "precomputed")
        if key in METRICS:
            info = METRICS[key]
            value = info.validator(exponent if info.param == "exponent" else sigma)
            return ResolvedMetric("builtin", key, info.code, value)
    choices = ", ".join(repr(c) for c in sorted(METRICS) + ["precomputed"] * allow_precomputed)
    raise ValueError(f"`metric` must be one of {choices} or a callable; got {metric!r}.")
