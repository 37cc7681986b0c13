"""Shared test configuration: the MN-VER traceability plugin and Hypothesis profiles.

``memnet.ver`` checks the ``@pytest.mark.req(...)`` marks against the requirements
in ``sysml-models/`` (see its docstring; ``pytest --memnet-ver`` prints the matrix).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings

pytest_plugins = ["memnet.ver"]

# the token-piece cache (memnet.tokens) of the test run, and of the processes it
# starts, is its own: nothing of the user's is read or written
_CACHE = tempfile.mkdtemp(prefix="memnet-test-cache-")
os.environ["MEMNET_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)

# `ci` (the README's command): examples drawn from seeds derived from each
# test, so every machine gives the same verdict; `explore` draws new ones on
# every run, 600 where a test sets no count (run it before a stop:
# HYPOTHESIS_PROFILE=explore), D172
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "dev", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
