"""``pip install dshkit`` gives a working ``dshkit conformance``, property tests included
(issue 14: hypothesis was only in the ``conformance`` extra, so a plain install exited 2 with
PROPERTIES_UNAVAILABLE)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from conftest import CLEAN_ENV, ROOT


def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        project: dict[str, object] = tomllib.load(handle)["project"]
    return project


def test_hypothesis_is_a_core_dependency() -> None:
    dependencies = [str(d) for d in _project()["dependencies"]]  # type: ignore[attr-defined]
    assert any(d.startswith("hypothesis") for d in dependencies), dependencies
    extras = _project()["optional-dependencies"]
    assert "conformance" in extras  # type: ignore[operator]  # kept: dshkit[conformance] still installs


def test_readme_shows_how_to_install_the_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install dshkit" in readme and "pip install ." in readme


@pytest.mark.slow
def test_a_plain_install_runs_the_properties(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path / "dist"), str(ROOT)], check=True, env=CLEAN_ENV, cwd=tmp_path)
    wheel = next((tmp_path / "dist").glob("dshkit-*.whl"))
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(tmp_path / "venv")
    bin_dir = tmp_path / "venv" / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    str(wheel)], check=True, env=CLEAN_ENV, cwd=tmp_path)  # no extra
    done = subprocess.run([str(bin_dir / "dshkit"), "conformance", "--properties", "2"],
                          capture_output=True, text=True, env=CLEAN_ENV, cwd=tmp_path,
                          check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "properties: off" not in done.stdout
    assert " 0 failed" in done.stdout.splitlines()[-1]
