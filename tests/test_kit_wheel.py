"""The kit from an installed wheel, outside the source tree: vectors, schemas, suites, the
console script, the reference harness and the plug-in module are all in the wheel."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import CLEAN_ENV as ENV
from conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def venv_bin(wheel_venv: Path) -> Path:
    return wheel_venv


def test_kit_runs_from_the_wheel(venv_bin: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    harness = f"cmd:{venv_bin / 'python'} -m dshkit.conformance.harness_reference"
    result = subprocess.run(
        [str(venv_bin / "dshkit-conformance"), "--impl", harness, "--suite", "memory",
         "--suite", "session-log", "--case", "mem-memento-*", "--case", "mem-sto-*",
         "--case", "ses-env-*", "--report", str(report)],
        capture_output=True, text=True, cwd=tmp_path, env=ENV, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["failed"] == data["summary"]["errored"] == 0
    assert data["summary"]["passed"] >= 22 + 10 + 40
    probe = ("import dshkit.conformance as c, dshkit.conformance.pytest_plugin, "
             "dshkit.conformance.kitdata as k, dshkit.schemas as s;"
             "print(c.__file__); print(k.manifest()['kit']['version']);"
             "print(len(k.digests()['cases'])); s.validator('conformance/v1/report.json')")
    result = subprocess.run([str(venv_bin / "python"), "-c", probe], capture_output=True,
                            text=True, cwd=tmp_path, env=ENV, check=False)
    assert result.returncode == 0, result.stderr
    location, version, digests = result.stdout.split()
    assert "site-packages" in location and not location.startswith(str(ROOT))
    assert version and int(digests) >= 650
