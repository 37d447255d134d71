"""Every ``session-ops`` conformance vector against the reference implementation, plus the
shape of the vector files and the suite's comparison."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kit_support.reference_suites import session_ops as suite

from dshkit import schemas
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "conformance" / "vectors" / "session-ops"
CASE_ID = re.compile(r"^ses-ops-[a-z0-9-]+$")


def _cases() -> list[dict[str, Any]]:
    out = []
    for path in sorted(VECTORS.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["suite"] == suite.SUITE
        assert document["specVersion"] == "0.1.0"
        out += [{**case, "_file": path.name} for case in document["cases"]]
    return out


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_passes(case: dict[str, Any]) -> None:
    result = suite.reference(case["operation"], case["input"], case.get("params", {}))
    assert suite.compare(case["expect"], result) == "", (
        f"{case['_file']}: {case['id']}: {suite.compare(case['expect'], result)}")


def test_ids_are_unique_and_well_formed() -> None:
    counts = Counter(c["id"] for c in CASES)
    assert not [i for i, n in counts.items() if n > 1]
    assert all(CASE_ID.match(i) for i in counts), [i for i in counts if not CASE_ID.match(i)]


def test_requirements_exist_in_the_spec() -> None:
    known = {r.id for r in build_index(REPO / "spec")}
    for case in CASES:
        assert case["requirements"], case["id"]
        assert not [r for r in case["requirements"] if r not in known], case["id"]


def test_files_follow_the_vector_format() -> None:
    for path in sorted(VECTORS.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        assert text.endswith("\n"), path.name
        assert not schemas.errors("conformance/v1/vector-file.json", json.loads(text)), path.name


def test_every_operation_has_a_case_and_one_log_input() -> None:
    assert {c["operation"] for c in CASES} == set(suite.OPERATIONS)
    for case in CASES:
        assert len(case["input"]) == 1, case["id"]
        assert next(iter(case["input"])) in ("events", "text", "base64"), case["id"]


def test_capabilities_follow_the_operation() -> None:
    for case in CASES:
        (needed,) = suite.requires(case)
        assert needed in suite.CAPABILITIES, case["id"]


def test_compare_reports_differences() -> None:
    assert suite.compare({"valid": True, "nodes": [1]}, {"valid": True, "nodes": [2]}) != ""
    assert suite.compare({"valid": True, "header": {"a": 1}},
                         {"valid": True, "header": {"a": True}}) != ""
    assert suite.compare({"valid": False, "error": {"code": "A"}},
                         {"valid": False, "error": {"code": "B"}}) != ""
    assert suite.compare({"valid": True}, {"valid": False, "error": {"code": "B"}}) != ""
    typed = {"valid": True, "typed": [{"code": "PAYLOAD_INVALID", "seq": 1}]}
    assert suite.compare(typed, {"valid": True, "typed": []}) != ""
    assert suite.compare(typed, {"valid": True, "typed": [
        {"code": "PAYLOAD_INVALID", "seq": 1}, {"code": "PAYLOAD_INVALID", "seq": 2}]}) != ""
    assert suite.compare(typed, {"valid": True, "typed": [
        {"code": "PAYLOAD_INVALID", "seq": 1, "pointer": "/data"},
        {"code": "PAYLOAD_INVALID", "seq": 1, "pointer": "/data/x"}]}) == ""


def test_compare_checks_what_a_writer_keeps() -> None:
    header = {"type": "session"}
    expect = {"valid": True, "files": [[header], [header, {"seq": 0}]]}
    first = '{"type":"session"}\n'
    assert suite.compare(expect, {"valid": True, "files": [first, first + '{"seq":0}\n']}) == ""
    rewritten = '{"type": "session"}\n{"seq":0}\n'
    assert "unchanged" in suite.compare(expect, {"valid": True, "files": [first, rewritten]})
    assert "line feed" in suite.compare(expect, {"valid": True,
                                                 "files": [first, first + '{"seq":0}']})


def test_unknown_operation_is_refused() -> None:
    result = suite.reference("session.nope", {"events": []}, {})
    assert result["valid"] is False and result["error"]["code"] == "UNKNOWN_OPERATION"
