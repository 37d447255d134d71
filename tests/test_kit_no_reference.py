"""The kit from its wheel in an environment where the reference cannot be imported (no
``zstandard``, no ``orjson``): it still runs another implementation, a subprocess harness
(``--impl cmd:``, here the reference's harness in this interpreter, which has the reference)
or a Python one (``--impl py:``), and asking for the default reference is a coded error that
names the missing module."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: No PYTHONPATH: the source tree must not leak into the installed environment.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {
    "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
#: What the kit itself needs (the wheel goes in with --no-deps).
KIT_NEEDS = ("jsonschema>=4.23", "referencing>=0.35", "hypothesis>=6.100,<=6.155.2")
HARNESS = f"cmd:{shlex.quote(sys.executable)} -m dshkit.conformance.harness_reference"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kit_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("kit-no-reference")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(work / "dist"), str(ROOT)], check=True, env=ENV, cwd=work)
    wheel = next((work / "dist").glob("dshkit-*.whl"))
    venv.EnvBuilder(with_pip=False, system_site_packages=False).create(work / "venv")
    bin_dir = work / "venv" / "bin"
    pip = [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "-q"]
    subprocess.run([*pip, "--no-deps", str(wheel)], check=True, env=ENV, cwd=work)
    subprocess.run([*pip, *KIT_NEEDS], check=True, env=ENV, cwd=work)
    return bin_dir


def _run(kit_bin: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(kit_bin / "dshkit-conformance"), *args], capture_output=True,
                          text=True, cwd=cwd, env=ENV, check=False, timeout=600)


def test_the_reference_is_not_importable_there(kit_bin: Path, tmp_path: Path) -> None:
    for module in ("zstandard", "orjson", "dshkit.conformance.implementations.reference"):
        probe = subprocess.run([str(kit_bin / "python"), "-c", f"import {module}"],
                               capture_output=True, text=True, cwd=tmp_path, env=ENV,
                               check=False)
        assert probe.returncode != 0, f"{module} is importable in the kit-only environment"


def test_a_subprocess_harness_runs_without_the_reference(kit_bin: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    result = _run(kit_bin, "--impl", HARNESS, "--suite", "memory", "--suite", "session-log",
                  "--suite", "session-query", "--properties", "3", "--seed", "1",
                  "--report", str(report), cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr  # two properties error
    data = json.loads(report.read_text(encoding="utf-8"))
    summary = data["summary"]
    assert summary["failed"] == summary["errored"] == summary["skipped"] == 0, summary
    assert summary["passed"] >= 500, summary
    assert summary["passed"] == summary["cases"], summary
    properties = summary["property_tests"]
    # the memory model is the kit's own: it runs without the reference
    assert properties["memory-model"]["status"] == "passed", properties["memory-model"]
    # the session-fold property's expected answers come from the reference: a coded error
    fold = properties["session-fold"]
    assert fold["status"] == "errored", fold
    assert fold["detail"].startswith("REFERENCE_UNAVAILABLE"), fold
    assert "zstandard" in fold["detail"] or "orjson" in fold["detail"], fold


def test_a_python_implementation_runs_without_the_reference(kit_bin: Path,
                                                           tmp_path: Path) -> None:
    result = _run(kit_bin, "--impl", "model", "--suite", "memory", "--properties", "0",
                  "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert summary["passed"] > 0 and summary["failed"] == summary["errored"] == 0, summary


def test_asking_for_the_reference_names_what_is_missing(kit_bin: Path, tmp_path: Path) -> None:
    result = _run(kit_bin, "--properties", "0", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "REFERENCE_UNAVAILABLE" in result.stderr, result.stderr
    assert "No module named" in result.stderr and "pip install" in result.stderr, result.stderr


def test_an_unknown_suite_lists_the_known_ones(kit_bin: Path, tmp_path: Path) -> None:
    result = _run(kit_bin, "--impl", HARNESS, "--suite", "nope", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "SUITE_UNKNOWN" in result.stderr, result.stderr
    known = result.stderr.split("known: ", 1)[1]
    assert "session-log" in known and "memory" in known and "compaction" in known, known
