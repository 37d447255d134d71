"""Test tiers: tests marked ``slow`` (fuzzing, kill -9, wheel builds, long properties, the
DSH differential run) are deselected unless ``--slow`` is given, so the default run is the
fast tier and its summary names them as deselected rather than skipped.

The event and log builders shared by the test modules are in :mod:`builders`.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (the full tier, as CI does)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]
