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
