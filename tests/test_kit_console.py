"""The console of the kit: every output survives hostile strings, a run that stops midway still
leaves its reports, and refusals are the command line's one envelope (issue 14)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from dshkit import schemas
from dshkit.cli import main as dshkit_main
from dshkit.conformance import console
from dshkit.conformance.printable import json_text, visible
from dshkit.conformance.report import to_junit, to_markdown

HOSTILE = "a\ud800b\x1b[31mred\x1b[0m\x00\x07\ufffe|"


def test_visible_escapes_what_cannot_be_shown() -> None:
    shown = visible(HOSTILE)
    assert shown == "a\\ud800b\\x1b[31mred\\x1b[0m\\x00\\x07\\ufffe|"
    shown.encode("utf-8")  # no surrogate left
    assert visible("one\ttwo\nthree", layout=True) == "one\ttwo\nthree"
    assert visible("one\ttwo\nthree") == "one\\x09two\\x0athree"
    assert visible("é✓") == "é✓"  # printable text is left alone


def test_visible_shortens_huge_values() -> None:
    shown = visible("x" * 10_000, 100)
    assert shown == "x" * 100 + "... (9900 more characters)"


@pytest.mark.parametrize("value", [HOSTILE, {"k\udfff": ["\ud83d", "\x1b"]}, "\\ud800"])
def test_json_text_is_utf8_and_reads_back(value: Any) -> None:
    text = json_text(value, indent=2)
    text.encode("utf-8")
    assert json.loads(text) == value


def _report(tmp_path: Path, *extra: str) -> tuple[int, Path]:
    code = console.main(["--impl", "model", "--suite", "memory", "--properties", "0",
                         "--report", str(tmp_path / "r.json"), "--junit",
                         str(tmp_path / "r.xml"), "--markdown", str(tmp_path / "r.md"),
                         *extra])
    return code, tmp_path


def test_hostile_details_in_every_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from dshkit.conformance import runner

    real = runner.run_case

    def hostile(*args: Any, **kwargs: Any) -> Any:
        outcome = real(*args, **kwargs)
        outcome.status, outcome.detail = "failed", HOSTILE + "y" * 50_000
        outcome.stderr = HOSTILE
        return outcome

    monkeypatch.setattr(runner, "run_case", hostile)
    code, out = _report(tmp_path, "--case", "mem-sto-*")
    assert code == 1
    printed = capsys.readouterr().out
    printed.encode("utf-8")
    assert "\\ud800" in printed and "\\x1b[31m" in printed and "\x1b" not in printed
    assert max(len(line) for line in printed.splitlines()) < 2200  # cut, not 50 000 wide
    report = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert report["cases"][0]["detail"].startswith(HOSTILE)  # the JSON keeps the value
    tree = ET.parse(out / "r.xml")
    failure = tree.find(".//failure")
    assert failure is not None and "\\ud800" in failure.get("message", "")
    assert "\x1b" not in (out / "r.md").read_text(encoding="utf-8")
    assert "\x1b" not in to_junit(report) + to_markdown(report)


def test_a_run_that_stops_midway_leaves_parseable_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from dshkit.conformance import runner

    real, calls = runner.run_case, []

    def breaks(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) > 3:
            raise RuntimeError("kit bug \ud800")
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_case", breaks)
    code, out = _report(tmp_path)
    assert code == 3
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "INTERNAL_ERROR" in captured.err
    report = json.loads((out / "r.json").read_text(encoding="utf-8"))
    schemas.validator("conformance/v1/report.json").validate(report)
    assert report["summary"]["ok"] is False and len(report["cases"]) == 3
    assert "INTERNAL_ERROR" in report["kit"]["problems"]["run"]
    ET.parse(out / "r.xml")
    assert (out / "r.md").read_text(encoding="utf-8").startswith("## dshkit conformance")


@pytest.mark.parametrize("argv, code", [
    (["--suite", "nope"], "SUITE_UNKNOWN"),
    (["--impl", "py:no.such:thing"], "IMPL_UNAVAILABLE"),
    (["--impl", "bogus"], "IMPL_INVALID"),
    (["--impl", f"cmd:{sys.executable} -c pass"], "HARNESS_HANDSHAKE"),
])
def test_refusals_are_the_cli_envelope(argv: list[str], code: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert dshkit_main(["conformance", *argv, "--json"]) == 2
    envelope = json.loads(capsys.readouterr().out)
    schemas.validator("cli/v1/refusal.json").validate(envelope)
    assert envelope["command"] == "conformance" and envelope["error"]["code"] == code


def test_baseline_refusal_is_the_cli_envelope(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "baseline.json"
    bad.write_text("{", encoding="utf-8")
    assert dshkit_main(["conformance", "--baseline", str(bad), "--json"]) == 2
    envelope = json.loads(capsys.readouterr().out)
    schemas.validator("cli/v1/refusal.json").validate(envelope)
    assert envelope["error"]["code"] == "BASELINE_INVALID"
    assert envelope["error"]["flag"] == "--baseline"


def test_a_report_that_cannot_be_written_is_an_io_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    assert dshkit_main(["conformance", "--impl", "model", "--case", "mem-sto-*",
                        "--properties", "0", "--report", str(blocker / "r.json"),
                        "--json"]) == 2
    envelope = json.loads(capsys.readouterr().out)
    schemas.validator("cli/v1/refusal.json").validate(envelope)
    assert envelope["error"]["code"] == "IO_ERROR" and envelope["error"]["flag"] == "--report"
    assert envelope["report"]["summary"]["passed"] == 1


def test_a_run_refused_before_it_starts_leaves_a_report_saying_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stale = tmp_path / "r.json"
    stale.write_text('{"an": "earlier run"}', encoding="utf-8")
    code = console.main(["--impl", f"cmd:{sys.executable} -c pass", "--report", str(stale),
                         "--junit", str(tmp_path / "r.xml"), "--markdown",
                         str(tmp_path / "r.md")])
    assert code == 2
    assert "HARNESS_HANDSHAKE" in capsys.readouterr().err
    report = json.loads(stale.read_text(encoding="utf-8"))
    schemas.validator("conformance/v1/report.json").validate(report)
    assert report["summary"]["ok"] is False and report["cases"] == []
    assert report["kit"]["problems"]["run"].startswith("HARNESS_HANDSHAKE: ")
    ET.parse(tmp_path / "r.xml")
    assert "does not pass" in (tmp_path / "r.md").read_text(encoding="utf-8")
