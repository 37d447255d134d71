"""Every goal conformance vector against the reference implementation."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dshkit.conformance.suites import goal as suite
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "conformance" / "vectors" / "goal"
CASE_ID = re.compile(r"^goal-[a-z0-9][a-z0-9-]*$")


def _cases() -> list[dict[str, Any]]:
    out = []
    for path in sorted(VECTORS.glob("*.json")):
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["suite"] == suite.SUITE
        assert document["specVersion"] == "0.1.0"
        assert document["description"]
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
        missing = [r for r in case["requirements"] if r not in known]
        assert not missing, (case["id"], missing)
        assert all(r.startswith("GOAL-") for r in case["requirements"]), case["id"]


def test_cases_are_well_formed() -> None:
    for case in CASES:
        assert set(case) <= {"id", "description", "requirements", "operation", "input",
                             "params", "expect", "tags", "_file"}, case["id"]
        assert case["operation"] in suite.OPERATIONS, case["id"]
        expect = case["expect"]
        assert isinstance(expect.get("valid"), bool), case["id"]
        if not expect["valid"]:
            assert isinstance(expect["error"]["code"], str), case["id"]


def test_every_worked_example_is_a_vector() -> None:
    tagged = {c["id"] for c in CASES if "worked-example" in c.get("tags", [])}
    for number in range(1, 10):
        assert any(i.startswith(f"goal-d{number}-") for i in tagged), f"D-{number}"


def test_every_operation_has_a_case() -> None:
    assert {c["operation"] for c in CASES} == set(suite.OPERATIONS)


def test_compare_reports_differences() -> None:
    assert suite.compare({"valid": True, "x": 1}, {"valid": True, "x": 2}) != ""
    assert suite.compare({"valid": True, "x": True}, {"valid": True, "x": 1}) != ""
    assert suite.compare({"valid": True, "x": 1}, {"valid": True}) != ""
    assert suite.compare({"valid": False, "error": {"code": "A"}},
                         {"valid": False, "error": {"code": "B"}}) != ""
    assert suite.compare({"valid": False, "error": {"code": "A", "seq": 1}},
                         {"valid": False, "error": {"code": "A", "seq": 2}}) != ""
    assert suite.compare({"valid": False, "error": {"code": "A", "messageContains": "x"}},
                         {"valid": False, "error": {"code": "A", "message": "y"}}) != ""
    assert suite.compare({"valid": True}, {"valid": False, "error": {"code": "B"}}) != ""
    assert suite.compare({"valid": True, "x": [1]}, {"valid": True, "x": [1], "y": 2}) == ""


def test_unknown_operation_is_reported() -> None:
    result = suite.reference("goal.nope", {}, {})
    assert result["valid"] is False
    assert result["error"]["code"] == "UNKNOWN_OPERATION"
