"""Test tiers: tests marked ``slow`` (fuzzing, kill -9, wheel builds, long properties, the
DSH differential run) are deselected unless ``--slow`` is given, so the default run is the
fast tier and its summary names them as deselected rather than skipped.

The event and log builders shared by the test modules are in :mod:`builders`; the fixture
:func:`wheel_venv` is the package as a user installs it, shared by the wheel tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

#: The slow tier, beside tests marked ``slow`` in their module: module -> the test functions
#: that are slow (empty: the whole module). Together about a third of the suite's CPU time.
SLOW_TESTS: dict[str, frozenset[str]] = {
    # fuzzing
    "test_adapters_fuzz.py": frozenset(),
    "test_fuzz_targets.py": frozenset(),
    # kill -9
    "test_hardening_crash.py": frozenset(),
    "test_query_crash.py": frozenset(),
    # stress: concurrent processes, peak memory over large logs
    "test_hardening_concurrency.py": frozenset(),
    "test_memory_concurrency.py": frozenset(),
    "test_hardening_memory.py": frozenset(),
    # long properties and long runs
    "test_memory_stateful.py": frozenset(),
    "test_models_vs_schemas.py": frozenset({
        "test_model_instances_validate_against_schema",
        "test_schema_events_validate_against_models",
        "test_schema_file_records_validate_against_models"}),
    "test_kit_properties.py": frozenset({
        "test_broken_budgets_give_a_shrunk_ready_to_commit_vector",
        "test_broken_retention_is_caught_with_a_counterexample",
        "test_broken_cuts_are_caught_over_a_subprocess_harness",
        "test_broken_surface_is_found_by_the_fold_property"}),
    "test_perf_bench.py": frozenset({"test_every_form_validates_typed_and_folds_the_same"}),
    # the differential run against the real DSH
    "test_dsh_differential.py": frozenset(),
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (the full tier, as CI does)")


def _listed_slow(item: pytest.Item) -> bool:
    names = SLOW_TESTS.get(item.path.name)
    if names is None:
        return False
    return not names or getattr(item, "originalname", item.name) in names


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _listed_slow(item):
            item.add_marker(pytest.mark.slow)
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


ROOT = Path(__file__).resolve().parents[1]
#: No PYTHONPATH: the source tree must not leak into an installed environment.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
    "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.fixture(scope="session")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` directory of a fresh venv (no system site packages) holding the wheel built
    from this checkout, with its dependencies and the ``conformance`` extra, installed from the
    package index like a user's ``pip install dshkit[conformance] pytest`` (pytest for the
    kit's pytest plug-in)."""
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(work / "dist"), str(ROOT)], check=True, env=CLEAN_ENV, cwd=work)
    wheel = next((work / "dist").glob("dshkit-*.whl"))
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(work / "venv")
    bin_dir = work / "venv" / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    f"{wheel}[conformance]", "pytest"], check=True, env=CLEAN_ENV, cwd=work)
    return bin_dir
