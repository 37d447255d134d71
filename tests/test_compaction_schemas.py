"""The compaction schemas (``schemas/compaction/v1``): valid 2020-12, catalogued, linked to
requirements of the spec, and in agreement with what the reference writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from kit_support.reference_suites import compaction as suite

from dshkit import schemas
from dshkit.spec_index import build_index

REPO = Path(__file__).resolve().parents[1]
AREA = [e for e in schemas.catalog() if e["path"].startswith("compaction/v1/")]
EVENT_SCHEMAS = {"compaction/start": "compaction-start.json",
                 "compaction/summary": "compaction-summary.json",
                 "compaction/end": "compaction-end.json",
                 "compaction/prune": "compaction-prune.json"}


def _plans() -> list[dict[str, Any]]:
    out = []
    for path in sorted((REPO / "conformance" / "vectors" / "compaction").glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            if case["operation"] in ("compaction.plan", "compaction.manual"):
                result = suite.reference(case["operation"], case["input"],
                                         case.get("params", {}))
                out.append({"id": case["id"], "result": result, "input": case["input"]})
    return out


PLANS = _plans()


def test_every_schema_is_catalogued_and_valid() -> None:
    on_disk = {p.name for p in (REPO / "schemas" / "compaction" / "v1").glob("*.json")}
    assert {e["path"].split("/")[-1] for e in AREA} == on_disk
    known = {r.id for r in build_index(REPO / "spec")}
    for entry in AREA:
        assert entry["layer"] == "compaction"
        schema = schemas.load(entry["$id"])
        Draft202012Validator.check_schema(schema)
        assert schema["x-requirements"]
        assert set(schema["x-requirements"]) <= known, entry["path"]


@pytest.mark.parametrize("item", PLANS, ids=[p["id"] for p in PLANS])
def test_planned_events_match_the_schemas(item: dict[str, Any]) -> None:
    result = item["result"]
    if not result["valid"]:
        assert schemas.errors("compaction/v1/error.json", result["error"]) == []
        return
    if "outcome" in result:
        plan = {k: v for k, v in result.items() if k not in ("valid", "messageIds")}
        assert schemas.errors("compaction/v1/plan.json", plan) == []
    for event in result["events"]:
        name = EVENT_SCHEMAS.get(event["type"])
        if name is not None:
            assert schemas.errors(f"compaction/v1/{name}", event) == [], event
            typed = event["type"].replace("/", "-")
            assert schemas.errors(f"session/v0/events/{typed}.json", event) == [], event
        elif (event["type"] == "user/message" and isinstance(event.get("surfaceOp"), dict)
              and event["data"]["source"].get("plugin") == "compact"):
            assert schemas.errors("compaction/v1/checkpoint-event.json", event) == [], event


def test_vector_inputs_match_the_event_schemas() -> None:
    checked = 0
    for item in PLANS:
        for event in item["input"].get("events", []):
            name = EVENT_SCHEMAS.get(event.get("type"))
            if name is not None and "seq" in event:
                assert schemas.errors(f"compaction/v1/{name}", event) == [], (item["id"], event)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize(("name", "instance", "ok"), [
    ("basic-config.json", {}, True),
    ("basic-config.json", {"thresholdRatio": 0.8, "retainTokens": 10,
                           "modelPolicies": [{"provider": "p", "model": "m", "maxTokens": 5}]},
     True),
    ("basic-config.json", {"thresholdRato": 0.5}, False),
    ("basic-config.json", {"retainRatio": 0.2, "retainTokens": 100}, False),
    ("basic-config.json", {"summarizationProvider": "x"}, False),
    ("basic-config.json", {"thresholdRatio": 0}, False),
    ("prune-config.json", {"thresholdChars": 50, "headChars": 4, "tailChars": 3}, True),
    ("prune-config.json", {"thresholdChars": 0}, False),
    ("prune-config.json", {"threshold": 1}, False),
])
def test_config_schemas(name: str, instance: dict[str, Any], ok: bool) -> None:
    assert (schemas.errors(f"compaction/v1/{name}", instance) == []) is ok


def test_summary_schema_refuses_what_the_spec_refuses() -> None:
    base = {"type": "compaction/summary", "seq": 3, "time": 1, "data": {
        "compactionId": "c", "summary": [{"type": "text", "text": "s"}],
        "shadowedRange": {"start": 0, "end": 1}, "shadowedSeqs": [0, 1],
        "shadowedTokenCount": 10, "provider": "p", "model": "m"}}
    assert schemas.errors("compaction/v1/compaction-summary.json", base) == []
    patch: dict[str, Any]
    for patch in ({"llmStreamCall": True}, {"summary": [{"type": "text", "text": "  "}]},
                  {"summary": [{"type": "reasoning", "text": "r"}]}, {"shadowedSeqs": []},
                  {"maxTokens": 0}, {"extra": 1}):
        bad = json.loads(json.dumps(base))
        bad["data"].update(patch)
        assert schemas.errors("compaction/v1/compaction-summary.json", bad), patch
