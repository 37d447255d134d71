"""The wheel is self-contained: built, installed in a fresh venv, it validates a log and finds
its schemas and vectors without the source tree. A checkout made without symlinks refuses to
build, saying how to fix it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CLEAN_ENV, ROOT

pytestmark = pytest.mark.slow

LOG = (
    '{"type":"session","version":0,"id":"w","createdAt":1,"delegationDepth":0}\n'
    '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'
    '{"type":"user/message","seq":1,"time":2,"data":{"id":"u1","role":"user",'
    '"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}\n'
    '{"type":"turn/end","seq":2,"time":3,"data":{"turn":1,"reason":{"kind":"completed"}}}\n'
)


@pytest.fixture(scope="module")
def installed(wheel_venv: Path) -> Path:
    return wheel_venv / ("python.exe" if os.name == "nt" else "python")


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), *args], capture_output=True, text=True, cwd=cwd,
                          check=False, env=CLEAN_ENV)


def test_installed_wheel_validates_a_log(installed: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_text(LOG, encoding="utf-8")
    result = _run(installed, "-m", "dshkit", "validate", "--json", str(log), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] is True
    assert report["events"] == 3


def test_installed_wheel_imports_from_site_packages(installed: Path, tmp_path: Path) -> None:
    probe = (
        "import dshkit, dshkit.reference, dshkit.conformance.vectors as v;"
        "print(dshkit.__file__);"
        "print(len(v.load_cases()))"
    )
    result = _run(installed, "-c", probe, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    location, cases = result.stdout.split()
    assert "site-packages" in location
    assert not location.startswith(str(ROOT))
    assert int(cases) >= 1


def test_no_bare_top_level_modules(installed: Path, tmp_path: Path) -> None:
    probe = "import importlib.util as u; print(u.find_spec('reference'), u.find_spec('adapters'))"
    result = _run(installed, "-c", probe, cwd=tmp_path)
    assert result.stdout.split() == ["None", "None"]


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_checkout_without_symlinks_refuses_to_build(tmp_path: Path) -> None:
    """git for Windows without Developer Mode checks symlinks out as small text files: the
    build must stop there with the fix, not install a package without its subpackages."""
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "-q", "-c", "core.symlinks=false", str(ROOT), str(checkout)],
                   check=True, env=CLEAN_ENV)
    assert (checkout / "src" / "dshkit" / "reference").is_file()
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path / "dist"),
         str(checkout)], capture_output=True, text=True, check=False, env=CLEAN_ENV)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "src/dshkit/{adapters,conformance,reference,schemas} must be symlinks" in output
    assert "git config core.symlinks true" in output
    assert "Developer Mode" in output
    assert not list((tmp_path / "dist").glob("*.whl"))
