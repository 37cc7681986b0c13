"""Shared test configuration: the MN-VER traceability plugin and Hypothesis profiles.

``memnet.ver`` checks the ``@pytest.mark.req(...)`` marks against the requirements
in ``sysml-models/`` (see its docstring; ``pytest --memnet-ver`` prints the matrix).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

pytest_plugins = ["memnet.ver"]

settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
