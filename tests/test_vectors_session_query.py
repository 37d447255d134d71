"""Every session-query conformance vector against the reference implementation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dshkit.conformance.suites import session_query as suite
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO / "conformance" / "vectors" / "session-query"
CASE_ID = re.compile(r"^qry-[a-z0-9-]+$")


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
    assert suite.compare(case["expect"], result) == "", f"{case['_file']}: {case['id']}"


def test_ids_are_unique_and_well_formed() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    assert all(CASE_ID.match(i) for i in ids), [i for i in ids if not CASE_ID.match(i)]


def test_requirements_exist_in_the_spec() -> None:
    known = {r.id for r in build_index(REPO / "spec")}
    for case in CASES:
        assert case["requirements"], case["id"]
        missing = [r for r in case["requirements"] if r not in known]
        assert not missing, (case["id"], missing)


def test_operations_are_declared() -> None:
    assert {c["operation"] for c in CASES} <= set(suite.OPERATIONS)


def test_every_worked_example_is_a_vector() -> None:
    ids = {c["id"] for c in CASES}
    for prefix in ("qry-c1-", "qry-c2-", "qry-c3-", "qry-c4-", "qry-c5-", "qry-c6-", "qry-c7-",
                   "qry-c8-", "qry-c9-", "qry-c10-", "qry-c11-", "qry-c12-", "qry-cjk-"):
        assert any(i.startswith(prefix) for i in ids), prefix
    assert sum(i.startswith("qry-c7-snippet-") for i in ids) == 11


def test_compare_reports_differences() -> None:
    assert suite.compare({"valid": True, "x": 1}, {"valid": True, "x": 2}) != ""
    assert suite.compare({"valid": True, "x": True}, {"valid": True, "x": 1}) != ""
    assert suite.compare({"valid": False, "error": {"code": "A"}},
                         {"valid": False, "error": {"code": "B"}}) != ""
    assert suite.compare({"valid": True}, {"valid": False, "error": {"code": "B"}}) != ""
