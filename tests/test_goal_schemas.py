"""The goal schemas (``schemas/goal/v1``): valid 2020-12, catalogued, linked to requirements,
and in agreement with the reference's decoder, fold and service."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from kit_support.reference_suites import goal as suite

from dshkit import schemas
from dshkit.reference.goal import GoalError, decode_goal_change
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
AREA = [e for e in schemas.catalog() if e["path"].startswith("goal/v1/")]


def _cases() -> list[dict[str, Any]]:
    out = []
    for path in sorted((REPO / "conformance" / "vectors" / "goal").glob("*.json")):
        out += json.loads(path.read_text(encoding="utf-8"))["cases"]
    return out


CASES = _cases()


def test_every_schema_is_catalogued_and_valid() -> None:
    on_disk = {p.name for p in (REPO / "schemas" / "goal" / "v1").glob("*.json")}
    assert {e["path"].split("/")[-1] for e in AREA} == on_disk
    known = {r.id for r in build_index(REPO / "spec")}
    for entry in AREA:
        assert entry["layer"] == "goal"
        schema = schemas.load(entry["$id"])
        Draft202012Validator.check_schema(schema)
        assert set(schema["x-requirements"]) <= known, entry["path"]


def _changes() -> list[Any]:
    found = []
    for case in CASES:
        if case["operation"] == "goal.decode":
            found.append(case["input"]["data"])
        for event in case["input"].get("events", []):
            if event.get("type") == "goal/change":
                found.append(event["data"])
    return found


@pytest.mark.parametrize("data", _changes())
def test_schema_agrees_with_the_decoder(data: Any) -> None:
    """Except where the rule is relational (updatedAt >= createdAt) or about the spelling of
    an integer (1.0), which JSON Schema cannot see."""
    try:
        decoded = decode_goal_change(data)
    except GoalError as exc:
        if exc.code == "GOAL_CHANGE_TIMESTAMPS" or isinstance(data.get("version"), float):
            return
        accepted = False
    else:
        accepted = decoded is not None
    assert (schemas.errors("goal/v1/goal-change.json", data) == []) is accepted, data


@pytest.mark.parametrize("case", [c for c in CASES if c["expect"]["valid"]],
                         ids=lambda c: c["id"])
def test_results_match_the_schemas(case: dict[str, Any]) -> None:
    result = suite.reference(case["operation"], case["input"], case.get("params", {}))
    if "state" in result:
        assert schemas.errors("goal/v1/folded-goal.json", result["state"]) == []
    for step in result.get("results", []):
        ok = step.get("ok")
        if isinstance(ok, dict) and "activation" in ok:
            assert schemas.errors("goal/v1/goal-view.json", ok) == [], ok
    for event in result.get("events", []):
        if event["type"] == "goal/change":
            assert schemas.errors("session/v0/events/goal-change.json", event) == []
        else:
            assert schemas.errors("goal/v1/goal-source.json", event["data"]["source"]) == []


@pytest.mark.parametrize("case", [c for c in CASES if not c["expect"]["valid"]],
                         ids=lambda c: c["id"])
def test_errors_match_the_schema(case: dict[str, Any]) -> None:
    result = suite.reference(case["operation"], case["input"], case.get("params", {}))
    assert schemas.errors("goal/v1/error.json", result["error"]) == []
