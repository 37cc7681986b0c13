"""Shared test configuration: requirement markers and Hypothesis profiles."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from tests.requirements import REQUIREMENTS

settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that names an unknown requirement id fails to collect."""
    for item in items:
        for mark in item.iter_markers("req"):
            for rid in mark.args:
                if rid not in REQUIREMENTS:
                    raise pytest.UsageError(f"{item.nodeid} names unknown requirement {rid!r}")
