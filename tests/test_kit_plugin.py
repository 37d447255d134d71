"""The pytest plug-in: off unless --dshkit-impl is given; then every case is a test item."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import dshkit

SRC = str(Path(dshkit.__file__).parents[1])
BROKEN = Path(__file__).parent / "kit_support" / "broken_harness.py"


def _registered_by_entry_point() -> bool:
    """Installed (not run from the source tree), pytest loads the plugin through pytest11."""
    return any(ep.value == "dshkit.conformance.pytest_plugin"
               for ep in entry_points(group="pytest11"))


def pytest_run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_own.py").write_text("def test_own():\n    assert True\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
    load = [] if _registered_by_entry_point() else ["-p", "dshkit.conformance.pytest_plugin"]
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", *load,
         "-p", "no:cacheprovider", "-rA", str(tmp_path), "--rootdir", str(tmp_path), *args],
        capture_output=True, text=True, cwd=tmp_path, env=env, check=False)


def test_off_by_default(tmp_path: Path) -> None:
    result = pytest_run(tmp_path)
    assert result.returncode == 0, result.stdout
    assert "1 passed" in result.stdout
    assert "dshkit-conformance" not in result.stdout


def test_cases_become_items(tmp_path: Path) -> None:
    report = tmp_path / "kit.json"
    result = pytest_run(tmp_path, "--dshkit-impl", "model", "--dshkit-suite", "memory",
                        "--dshkit-case", "mem-memento-*", "--dshkit-case", "mem-sto-o*",
                        "--dshkit-report", str(report))
    assert result.returncode == 0, result.stdout
    assert "23 passed, 1 skipped" in result.stdout  # own test + 22; mem-sto-opening n/a
    assert "not applicable: needs memory.store" in result.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["summary"]["passed"] == 22 and data["summary"]["not_applicable"] == 1


def test_failures_and_baseline(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"expectedFailures": [
        {"id": "mem-memento-c1", "reason": "budgets are off"},
        {"id": "mem-memento-a1", "reason": "stale on purpose"}]}))
    result = pytest_run(tmp_path, "--dshkit-impl", f"cmd:{sys.executable} {BROKEN} budgets",
                        "--dshkit-suite", "memory", "--dshkit-case", "mem-memento-*",
                        "--dshkit-baseline", str(baseline))
    assert result.returncode == 1
    assert "2 failed, 20 passed, 1 xfailed" in result.stdout
    assert "stale baseline entry: mem-memento-a1" in result.stdout
    assert "failed: step 1: expected error BUDGET_EXCEEDED, got success" in result.stdout
    assert "Traceback" not in result.stdout


def test_bad_options_are_usage_errors(tmp_path: Path) -> None:
    result = pytest_run(tmp_path, "--dshkit-impl", "py:no.such:thing")
    assert result.returncode != 0
    assert "IMPL_UNAVAILABLE" in result.stdout + result.stderr


@pytest.mark.parametrize("module", ["dshkit.conformance.pytest_plugin"])
def test_plugin_module_is_importable(module: str) -> None:
    __import__(module)


def test_hostile_strings_do_not_break_the_plugin(tmp_path: Path) -> None:
    """A failing case whose expectation holds a lone surrogate (issue 14) fails as a test, and
    the JSON report is still written."""
    yes = Path(__file__).parent / "kit_support" / "yes_harness.py"
    report = tmp_path / "kit.json"
    result = pytest_run(tmp_path, "--dshkit-impl", f"cmd:{sys.executable} {yes}",
                        "--dshkit-suite", "session-log", "--dshkit-case",
                        "ses-json-lone-surrogate-escape", "--dshkit-report", str(report))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed, 1 passed" in result.stdout
    assert "INTERNALERROR" not in result.stdout + result.stderr
    assert "\\ud800" in result.stdout
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["cases"][0]["status"] == "failed"
