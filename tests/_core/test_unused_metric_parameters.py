"""``exponent=`` and ``sigma=`` are refused where the metric would ignore them.

``exponent`` is the energy metric's parameter and ``sigma`` the Gaussian and Laplacian
kernels'.  Given a value other than the default 1 with a metric that has no use for it
(the other family, a SciPy name, ``'precomputed'``, a callable), the call used to run and
ignore it without a word; every entry point resolves its metric once
(``_core._metrics.resolve_metric``), which now raises a ValueError naming the parameter, the
metric and the value."""
import numpy as np
import pytest

import energystats as es
from energystats._core._metrics import resolve_metric


def _l1(a, b):
    return float(np.abs(a - b).sum())


REFUSED = [  # (metric, keyword, value)
    ("gaussian", "exponent", 1.5), ("laplacian", "exponent", 0.5), ("energy", "sigma", 2.0),
    ("cityblock", "sigma", 2.0), ("canberra", "sigma", 0.5), ("euclidean", "sigma", 3.0),
    ("precomputed", "exponent", 0.5), ("precomputed", "sigma", 2.0), (_l1, "exponent", 1.5),
    (_l1, "sigma", 2.0), ("cityblock", "exponent", 1.5),
]


@pytest.mark.parametrize("metric, key, value", REFUSED)
def test_resolve_metric_refuses_a_parameter_the_metric_ignores(metric, key, value):
    with pytest.raises(ValueError, match=rf"`{key}` applies to metric='(energy|gaussian)'.* only; "
                                         rf"got {key}={value!r} with metric="):
        resolve_metric(metric, **{key: value})


@pytest.mark.parametrize("metric, kw", [("energy", {"exponent": 1.5}), ("gaussian", {"sigma": 2.0}),
                                        ("laplacian", {"sigma": 0.5}), ("cityblock", {}),
                                        ("precomputed", {}), (_l1, {}),
                                        ("energy", {"exponent": 1.0, "sigma": 1.0}),
                                        ("gaussian", {"exponent": 1, "sigma": 3.0})])
def test_the_parameter_a_metric_uses_and_the_defaults_are_accepted(metric, kw):
    resolve_metric(metric, **kw)


def test_public_entry_points_refuse_it():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(12, 2)), rng.normal(size=(12, 2))
    calls = [
        lambda: es.energy_distance(x, y, metric="gaussian", exponent=1.5),
        lambda: es.energy_test(x, y, metric="energy", sigma=2.0, n_resamples=9, rng=0),
        lambda: es.distance_correlation(x, y, metric="laplacian", exponent=0.5),
        lambda: es.dispersion(np.vstack([x, y]), np.repeat([0, 1], 12), metric="energy", sigma=2.0),
        lambda: es.EnergyClustering(2, metric="gaussian", exponent=0.5).fit(np.vstack([x, y])),
        lambda: es.e_divisive(np.vstack([x, y]), metric="gaussian", exponent=0.5, min_size=4,
                              n_resamples=9, rng=0),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"applies to metric=.* only; got (exponent|sigma)="):
            call()
