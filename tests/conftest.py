"""Test configuration: hypothesis profiles.

CI (``CI`` set in the environment) uses a derandomized profile, so a red run
can be reproduced exactly; locally the default profile explores new examples.
Select explicitly with ``HYPOTHESIS_PROFILE=ci|dev``.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", derandomize=True, max_examples=200, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

# ``pytest.approx(x, rel=r)`` also passes any difference below 1e-12, its default absolute
# tolerance: that hides relative errors of 1e-9 and more on statistics of order 1e-4 (a
# deliberately broken 1-D path passed rel=1e-14 that way).  Here a tolerance is only what the
# test states; comparisons with 0 must give ``abs=``.
import pytest  # noqa: E402

type(pytest.approx(1.0)).DEFAULT_ABSOLUTE_TOLERANCE = 0.0


@pytest.fixture(scope="module")
def client():
    """A two-worker Dask ``LocalCluster`` (processes) and its client, for the modules that test
    a Dask backend (they skip first when ``distributed`` is not installed)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()

