"""Reports: the JSON report against its schema, JUnit XML, Markdown, the console summary."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from dshkit import schemas
from dshkit.conformance.baseline import Baseline
from dshkit.conformance.console import main
from dshkit.conformance.coverage import coverage
from dshkit.conformance.implementations.reference import ReferenceImplementation
from dshkit.conformance.interface import Approver, JsonObject, NotSupported
from dshkit.conformance.kitdata import manifest
from dshkit.conformance.registry import registry
from dshkit.conformance.report import build_report, console_lines, to_junit, to_markdown
from dshkit.conformance.runner import run_kit
from dshkit.conformance.vectors import load_cases
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
SELECTION = [c for c in load_cases() if c.id.startswith(("mem-memento-", "mem-sto-", "ses-env-"))]
#: The selected cases with store steps: not applicable to an implementation without
#: memory.store, such as Mixed below.
STORE_ONLY = sum(1 for c in SELECTION if any(
    kind in step for step in c.input.get("steps", []) for kind in ("prepare", "inspect",
                                                                    "defaultPath")))
KIT = {"name": "dshkit-conformance", "version": "0.1.0",
       "spec_versions": {"dshkit-spec": "0.1.0"}, "vectors": {"files": 1, "cases": 1}}


class Mixed:
    """Declares memory.protocol and session-log; fails a1, errors a2, skips a3."""

    name, version, language = "mixed", "2.0.0", "python"
    capabilities = ("memory.protocol", "session-log")

    def __init__(self) -> None:
        self.reference = ReferenceImplementation()

    def run_request(self, request: JsonObject, approver: Approver | None) -> JsonObject:
        if request["id"] == "mem-memento-a1":
            return {"valid": True, "steps": []}
        if request["id"] == "mem-memento-a2":
            raise RuntimeError("boom")
        if request["id"] == "mem-memento-a3":
            raise NotSupported("later")
        return self.reference.run(request["operation"], request["input"], request["params"],
                                  approver)

    def run(self, *args: Any) -> JsonObject:
        raise AssertionError("unused")


def report() -> dict[str, Any]:
    run = run_kit(Mixed(), SELECTION,
                  baseline=Baseline.from_json({"expectedFailures": [
                      {"id": "mem-memento-a3", "reason": "not yet", "issue": "https://x.org/1"}]}))
    index = [{"id": r.id, "level": r.level, "scope": r.scope}
             for r in build_index(REPO / "spec")]
    traced = coverage(load_cases(), index, manifest()["kitVerified"])
    return build_report(run, suites=registry(), connector="py:tests", coverage=traced, kit=KIT,
                        seed=42, property_tests=PROPERTY_RESULTS)


PROPERTY_RESULTS: dict[str, Any] = {
    "memory-model": {"property": "memory-model", "status": "passed", "ok": True, "examples": 3,
                     "examples_run": 3, "seed": 42, "capabilities": ["memory.protocol"],
                     "duration_s": 0.5},
    "session-fold": {"property": "session-fold", "status": "failed", "ok": False,
                     "examples": 3, "examples_run": 9, "seed": 42,
                     "capabilities": ["session-log.core", "session-log.invariants"],
                     "duration_s": 0.1, "detail": "failed: nodes: expected [0], got [0, 1]",
                     "counterexample": "out/ses-prop-0123456789ab.json"},
    "compaction-boundary": {"property": "compaction-boundary", "status": "not_applicable",
                            "ok": True, "examples": 3, "examples_run": 0, "seed": 42,
                            "capabilities": ["compaction"], "duration_s": 0.0,
                            "detail": "needs compaction"}}


def test_json_report_is_schema_valid_and_counts_right() -> None:
    data = report()
    problems = schemas.errors("conformance/v1/report.json", json.loads(json.dumps(data)))
    assert not problems, [(list(p.absolute_path), p.message) for p in problems[:3]]
    summary = data["summary"]
    assert set(data) == {"reportVersion", "kit", "implementation", "summary", "cases",
                         "requirements"}
    assert summary["cases"] == len(SELECTION)
    assert (summary["failed"], summary["errored"], summary["skipped"]) == (1, 1, 1)
    assert summary["not_applicable"] == STORE_ONLY  # the mem-sto cases that need memory.store
    assert summary["expected_failures"] == 1 and summary["unexpected"] == 2
    assert summary["passed"] + 3 + STORE_ONLY == len(SELECTION)
    assert summary["ok"] is False and summary["hypothesis_seed"] == 42
    assert summary["properties"] == {"passed": 1, "failed": 1, "errored": 0,
                                     "not_applicable": 1, "expected_failures": 0,
                                     "unexpected": 1}
    assert summary["property_tests"]["session-fold"]["status"] == "failed"
    assert not [r for r in summary["uncovered_requirements"] if r.startswith(("MEM-", "CNF-"))]
    assert summary["requirements"]["kit_verified"]  # CNF ids verified by the kit itself
    row = summary["capabilities"]["memory.protocol"]
    assert row["declared"] and row["not_applicable"] == STORE_ONLY
    assert row["percent"] == round(100 * row["passed"] / (row["cases"] - STORE_ONLY), 2)
    store = summary["capabilities"]["memory.store"]
    assert not store["declared"] and store["percent"] == 0.0
    records = {c["id"]: c for c in data["cases"]}
    assert records["mem-memento-a2"]["detail"] == "RuntimeError: boom"
    assert records["mem-memento-a3"]["baseline"] == {"reason": "not yet", "expected": True,
                                                     "issue": "https://x.org/1"}


def test_junit_is_parseable_and_consistent() -> None:
    data = report()
    root = ET.fromstring(to_junit(data).split("\n", 1)[1])
    assert root.tag == "testsuites"
    assert int(root.get("tests", "0")) == len(SELECTION) + 3  # and the 3 property tests
    assert (int(root.get("failures", "0")), int(root.get("errors", "0"))) == (2, 1)
    # the not-applicable cases, 1 expected failure, 1 property not applicable
    assert int(root.get("skipped", "0")) == STORE_ONLY + 2
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"memory", "session-log", "properties"}
    failed = root.find(".//testcase[@name='session-fold']/failure")
    assert failed is not None and "ses-prop-0123456789ab.json" in (failed.text or "")
    failure = root.find(".//testcase[@name='mem-memento-a1']/failure")
    assert failure is not None and "MEM-ENT-001" in (failure.text or "")


def test_markdown_summary_table() -> None:
    text = to_markdown(report())
    assert text.startswith("## dshkit conformance: mixed 2.0.0")
    assert "| Capability | Declared | Cases | Passed |" in text
    assert "| memory.store | no |" in text and "does not pass" in text
    assert "| session-fold | session-log.core, session-log.invariants | 9 | FAILED: " in text


def test_console_ends_with_the_counts() -> None:
    lines = console_lines(report())
    assert lines[-1] == (f"{len(SELECTION) - STORE_ONLY - 3} passed, 3 failed "
                         "(1 expected by the baseline, 2 unexpected)")
    assert any(line.startswith("requirements:") and "uncovered MUST requirements:" in line
               for line in lines)
    assert "FAIL  mem-memento-a1: expected 3 step responses, got 0" in lines
    assert not any(line.startswith("SKIP  mem-memento-a3") for line in lines)  # expected
    assert lines[0].endswith("seed 42; properties: 3 examples each")
    rows = {line.split()[0]: line for line in lines if line.split() and line.split()[0] in
            PROPERTY_RESULTS}
    assert rows["memory-model"].split()[-1] == "passed"
    assert rows["session-fold"].endswith("-> out/ses-prop-0123456789ab.json")
    assert "not applicable: needs compaction" in rows["compaction-boundary"]
    assert ("properties: 1 passed, 1 failed, 0 errored, 1 not applicable, 0 expected "
            "failures") in lines


def test_cli_writes_every_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = {kind: tmp_path / "out" / f"r.{kind}" for kind in ("json", "xml", "md")}
    code = main(["--suite", "memory", "--case", "mem-memento-a*", "--report",
                 str(paths["json"]), "--junit", str(paths["xml"]), "--markdown",
                 str(paths["md"]), "--seed", "7"])
    assert code == 0
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert not schemas.errors("conformance/v1/report.json", data)
    assert data["summary"]["hypothesis_seed"] == 7 and data["summary"]["passed"] == 7
    assert data["implementation"]["name"] == "dshkit-reference"
    ET.parse(paths["xml"])
    assert "| memory |" in paths["md"].read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["--suite", "memory", "--case", "mem-memento-a1", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["summary"]["cases"] == 1
    assert main(["--case", "mem-memento-a1", "--report", str(tmp_path)]) == 2


def _verdicts(expected: tuple[str, ...]) -> dict[str, str]:
    run = run_kit(Mixed(), SELECTION, baseline=Baseline.from_json({"expectedFailures": [
        {"id": case, "reason": "not yet"} for case in expected]}))
    index = [{"id": r.id, "level": r.level, "scope": r.scope}
             for r in build_index(REPO / "spec")]
    traced = coverage(load_cases(), index, manifest()["kitVerified"])
    data = build_report(run, suites=registry(), connector="py:tests", coverage=traced, kit=KIT,
                        seed=1)
    problems = schemas.errors("conformance/v1/report.json", json.loads(json.dumps(data)))
    assert not problems, [(list(p.absolute_path), p.message) for p in problems[:3]]
    verdicts: dict[str, str] = data["requirements"]
    return verdicts


def test_a_verdict_per_requirement_the_cases_name() -> None:
    verdicts = _verdicts(("mem-memento-a3",))
    named = {r for c in SELECTION for r in c.requirements}
    assert set(verdicts) == named
    # a1 failed and a2 errored (unexpectedly); a3 was skipped as the baseline expects
    assert verdicts["MEM-ENT-002"] == "fail" and verdicts["MEM-ERR-003"] == "fail"
    a1 = next(c for c in SELECTION if c.id == "mem-memento-a1")
    assert all(verdicts[r] == "fail" for r in a1.requirements)
    passed = {r for c in SELECTION if c.id.startswith("ses-env-") for r in c.requirements
              if not any(r in o.requirements for o in SELECTION if o.id.startswith("mem-"))}
    assert passed and all(verdicts[r] == "pass" for r in passed)
    # cases that need memory.store are not applicable to Mixed: their requirements, when
    # no other case names them, were not run
    assert "not run" in verdicts.values()


def test_expected_failures_are_marked_in_the_verdict() -> None:
    verdicts = _verdicts(("mem-memento-a1", "mem-memento-a2", "mem-memento-a3"))
    assert verdicts["MEM-ENT-002"] == "fail (expected)"
    assert verdicts["MEM-ERR-003"] == "fail (expected)"


def test_console_and_markdown_state_the_verdicts() -> None:
    data = report()
    verdicts = list(data["requirements"].values())
    counts = (sum(v == "pass" for v in verdicts),
              sum(v.startswith("fail") for v in verdicts), verdicts.count("not run"))
    assert (f"requirements: {counts[0]} pass, {counts[1]} fail, {counts[2]} not run"
            in console_lines(data))
    text = to_markdown(data)
    assert "| Failing requirement | Verdict |" in text
    assert "| MEM-ENT-002 | fail |" in text
    assert "| " + next(r for r, v in data["requirements"].items() if v == "pass") + " |" \
        not in text.split("| Failing requirement |", 1)[1]
