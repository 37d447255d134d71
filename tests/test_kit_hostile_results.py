"""The kit never loses its report: a harness that fails every case, with vectors that hold lone
surrogates, control characters and long values, still gets every report written and parseable
(issue 14: a lone surrogate in an expected value used to end the run with exit 3 and empty
report files)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

HARNESS = Path(__file__).parent / "kit_support" / "yes_harness.py"


def _run_kit(tmp_path: Path, *suites: str) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    out = tmp_path / "reports"
    out.mkdir()
    command = [sys.executable, "-m", "dshkit", "conformance",
               "--impl", f"cmd:{sys.executable} {HARNESS}",
               "--report", str(out / "r.json"), "--junit", str(out / "r.xml"),
               "--markdown", str(out / "r.md"), "--properties", "0"]
    for suite in suites:
        command += ["--suite", suite]
    done = subprocess.run(command, capture_output=True, timeout=600)
    return done, out


@pytest.mark.parametrize("suites", [("session-log",), ()], ids=["session-log", "every-suite"])
def test_a_harness_that_fails_everything_gets_every_report(
        tmp_path: Path, suites: tuple[str, ...]) -> None:
    done, out = _run_kit(tmp_path, *suites)
    assert done.returncode == 1, done.stderr.decode("utf-8", "replace")[-2000:]
    stdout = done.stdout.decode("utf-8")  # the console output is valid UTF-8 throughout
    assert "Traceback" not in stdout + done.stderr.decode("utf-8", "replace")
    assert "failed" in stdout.splitlines()[-1] or any(
        "failed" in line for line in stdout.splitlines()[-5:])
    report = json.loads((out / "r.json").read_text(encoding="utf-8"))
    failed = [c for c in report["cases"] if c["status"] == "failed"]
    assert failed, "the yes-harness must fail cases"
    ET.parse(out / "r.xml")
    markdown = (out / "r.md").read_text(encoding="utf-8")
    assert "yes-harness" in markdown


def test_lone_surrogates_are_visible_not_fatal(tmp_path: Path) -> None:
    done, out = _run_kit(tmp_path, "session-log")
    report = json.loads((out / "r.json").read_text(encoding="utf-8"))
    case = next(c for c in report["cases"] if c["id"] == "ses-json-lone-surrogate-escape")
    assert case["status"] == "failed"
    text = (out / "r.md").read_text(encoding="utf-8") + done.stdout.decode("utf-8")
    assert "\\ud800" in text or "ses-json-lone-surrogate-escape" in text
