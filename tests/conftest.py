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
