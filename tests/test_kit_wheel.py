"""The kit from an installed wheel, outside the source tree: vectors, schemas, suites, the
console script, the reference harness and the plug-in module are all in the wheel."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: No PYTHONPATH: the source tree must not leak into the installed environment.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
    "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("kitwheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(work / "dist"), str(ROOT)], check=True, env=ENV, cwd=work)
    wheel = next((work / "dist").glob("dshkit-*.whl"))
    venv.EnvBuilder(with_pip=False, system_site_packages=True).create(work / "venv")
    bin_dir = work / "venv" / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "-q",
                    "--force-reinstall", str(wheel)], check=True, env=ENV, cwd=work)
    # the reference harness below runs from the wheel too: what it needs beyond the system's
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel)],
                   check=True, env=ENV, cwd=work)
    return bin_dir


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
