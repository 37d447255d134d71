"""The JavaScript harness skeleton (harnesses/skeleton-session-log) runs through the kit as
its README says: no capability declared, every case not applicable (exit 0); with the
session-log capabilities declared, every stub answers skipped (exit 1)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

SKELETON = ROOT / "harnesses" / "skeleton-session-log"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")


def _run(harness: Path, tmp_path: Path) -> tuple[int, dict[str, object], str]:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "dshkit", "conformance", "--impl", f"cmd:node {harness}",
         "--suite", "session-log", "--properties", "0", "--report", str(report)],
        capture_output=True, text=True, timeout=600, check=False)
    return done.returncode, json.loads(report.read_text(encoding="utf-8")), done.stderr


def test_the_skeleton_as_shipped_is_not_applicable(tmp_path: Path) -> None:
    code, report, stderr = _run(SKELETON / "harness.mjs", tmp_path)
    assert code == 0, stderr
    cases = report["cases"]
    assert isinstance(cases, list) and cases
    assert {c["status"] for c in cases} == {"not_applicable"}
    assert report["implementation"]["language"] == "javascript"  # type: ignore[index]


def test_declared_stubs_answer_skipped(tmp_path: Path) -> None:
    source = (SKELETON / "harness.mjs").read_text(encoding="utf-8")
    assert "const CAPABILITIES = []" in source
    copy = tmp_path / "harness.mjs"
    copy.write_text(source.replace("const CAPABILITIES = []",
                                   "const CAPABILITIES = ['session-log']"), encoding="utf-8")
    code, report, stderr = _run(copy, tmp_path)
    assert code == 1, stderr  # skipped cases count against a declared capability
    cases = report["cases"]
    assert isinstance(cases, list) and cases
    assert {c["status"] for c in cases} == {"skipped"}
    assert all("not implemented" in c["detail"] for c in cases)
