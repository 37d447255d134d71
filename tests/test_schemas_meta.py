"""The packaged JSON Schemas: catalog, metaschema validity, offline references, and the DSH
worked examples (research digest §8) against the open and typed layers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
import referencing.exceptions
from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator

from dshkit import schemas
from dshkit.reference.session import models

FIXTURES = Path(__file__).parent / "fixtures" / "session"
PACKAGE_DIR = Path(schemas.__file__).parent
V0 = "session/v0/"
DIALECT = "https://json-schema.org/draft/2020-12/schema"
LAYERS = {"open", "typed", "shared", "file"}
#: The session schemas; other protocols (memory/...) share the package, loader and catalog.
SESSION = [e for e in schemas.catalog() if e["path"].startswith(V0)]
REQUIREMENT_ID = re.compile(r"^SES-[A-Z]+-\d{3}$")


def typed() -> Validator:
    return schemas.validator(V0 + "event.json")


def open_layer() -> Validator:
    return schemas.validator(V0 + "envelope.json")


def fixture_events() -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found.append((f"{path.name}:{number}", json.loads(line)))
    return found


FIXTURE_EVENTS = fixture_events()


def problems(validator: Validator, instance: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


# --------------------------------------------------------------------------- catalog and files


def test_catalog_document_shape() -> None:
    raw = json.loads((PACKAGE_DIR / "catalog.json").read_text(encoding="utf-8"))
    assert set(raw) == {"catalogVersion", "schemas"}
    assert raw["catalogVersion"] == 1
    assert raw["schemas"] == schemas.catalog()
    for entry in schemas.catalog():
        assert set(entry) == {"$id", "path", "title", "layer"}
        assert entry["$id"] == schemas.SCHEMA_BASE + entry["path"]
        assert entry["title"] == schemas.load(entry["$id"])["title"]
    assert len(SESSION) == 64
    assert {e["layer"] for e in SESSION} == LAYERS


def test_layers_are_assigned() -> None:
    layer = {e["path"]: e["layer"] for e in SESSION}
    assert layer[V0 + "envelope.json"] == "open"
    assert layer[V0 + "event.json"] == "typed"
    assert {layer[p] for p in layer if p.startswith(V0 + "events/")} == {"typed"}
    for path in ("session-header.json", "chunk-row.json", "log.json"):
        assert layer[V0 + path] == "file"
    assert layer[V0 + "message.json"] == "shared"


@pytest.mark.parametrize("entry", SESSION, ids=lambda e: e["path"])
def test_catalog_schema_is_valid_2020_12(entry: dict[str, Any]) -> None:
    schema = schemas.load(entry["$id"])
    assert schema["$schema"] == DIALECT
    assert schema["$id"] == entry["$id"]
    Draft202012Validator.check_schema(schema)


def test_every_file_on_disk_is_in_the_catalog_and_vice_versa() -> None:
    on_disk = {
        p.relative_to(PACKAGE_DIR).as_posix()
        for p in PACKAGE_DIR.rglob("*.json")
        if p.name != "catalog.json" and "__pycache__" not in p.parts
    }
    in_catalog = [e["path"] for e in schemas.catalog()]
    assert len(in_catalog) == len(set(in_catalog))
    assert set(in_catalog) == on_disk
    assert schemas.schema_uris() == sorted(schemas.SCHEMA_BASE + p for p in on_disk)


def test_ids_are_unique_and_versioned() -> None:
    ids = [e["$id"] for e in schemas.catalog()]
    assert len(ids) == len(set(ids))
    for uri in ids:
        assert re.match(r"^https://dshkit\.dev/schemas/[a-z]+/v\d+/", uri), uri
    for entry in SESSION:
        assert entry["$id"].startswith("https://dshkit.dev/schemas/session/v0/")


def test_every_session_schema_names_its_requirements() -> None:
    for entry in SESSION:
        schema = schemas.load(entry["$id"])
        reqs = schema["x-requirements"]
        assert reqs, entry["path"]
        assert all(REQUIREMENT_ID.match(r) for r in reqs), (entry["path"], reqs)
        assert schema["description"].strip(), entry["path"]


def _refs(node: object, base: str) -> Iterator[str]:
    if isinstance(node, dict):
        base = urljoin(base, node["$id"]) if isinstance(node.get("$id"), str) else base
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield urljoin(base, ref)
        for key, value in node.items():
            if key not in ("const", "enum"):
                yield from _refs(value, base)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item, base)


def test_every_ref_resolves_offline() -> None:
    resolver = schemas.registry().resolver()
    count = 0
    for uri in schemas.schema_uris():
        for target in _refs(schemas.load(uri), uri):
            assert target.startswith(schemas.SCHEMA_BASE), target
            resolved = resolver.lookup(target)
            assert isinstance(resolved.contents, dict | bool), target
            count += 1
    assert count > 200


def test_unknown_uris_are_never_fetched() -> None:
    resolver = schemas.registry().resolver()
    with pytest.raises(referencing.exceptions.Unresolvable) as caught:
        resolver.lookup("https://example.com/schema.json")
    causes: list[BaseException] = []
    cause = caught.value.__cause__
    while cause is not None:
        causes.append(cause)
        cause = cause.__cause__
    assert any(isinstance(c, schemas.SchemaNotFoundError) for c in causes), causes
    with pytest.raises(referencing.exceptions.Unresolvable):
        resolver.lookup(schemas.SCHEMA_BASE + "session/v0/missing.json")
    with pytest.raises(schemas.SchemaNotFoundError):
        schemas.load("session/v0/missing.json")
    with pytest.raises(schemas.SchemaNotFoundError):
        schemas.validator("https://example.com/schema.json")
    with pytest.raises(schemas.SchemaNotFoundError):
        schemas.validator(V0 + "event.json#/$defs/missing")


def test_loader_api() -> None:
    by_path = schemas.load(V0 + "envelope.json")
    by_uri = schemas.load(schemas.SCHEMA_BASE + V0 + "envelope.json")
    assert by_path == by_uri
    by_path["title"] = "changed"
    assert schemas.load(V0 + "envelope.json")["title"] != "changed"
    assert schemas.registry() is schemas.registry()
    validator = schemas.validator(V0 + "events/turn-start.json#/$defs/data")
    assert validator.is_valid({"turn": 1})
    assert not validator.is_valid({"turn": 1, "step": 1})
    assert isinstance(validator, Draft202012Validator)
    assert validator.format_checker is not None
    assert schemas.errors(V0 + "event.json", FIXTURE_EVENTS[0][1]) == []
    found = schemas.errors(V0 + "envelope.json", {"type": 1, "seq": -1, "time": 0})
    assert len(found) == 3
    assert len(schemas.catalog()) == len(schemas.schema_uris())


# --------------------------------------------------------------------------- vocabulary coverage


def test_event_files_cover_the_48_types() -> None:
    files = {
        p.removeprefix(V0 + "events/")
        for p in (e["path"] for e in SESSION)
        if p.startswith(V0 + "events/")
    }
    expected = {t.replace("/", "-") + ".json" for t in models.KNOWN_EVENT_TYPES}
    assert len(expected) == 48
    assert files == expected
    event = schemas.load(V0 + "event.json")
    branches = event["allOf"]
    assert len(branches) == 49
    for event_type in models.KNOWN_EVENT_TYPES:
        path = "events/" + event_type.replace("/", "-") + ".json"
        schema = schemas.load(V0 + path)
        assert schema["x-event-type"] == event_type
        assert schema["x-surface"] is (event_type in models.SURFACE_EVENT_TYPES)
        assert schema["x-core"] is (event_type in models.CORE_EVENT_TYPES)
        assert schema["properties"]["type"] == {"const": event_type}
        assert schema["additionalProperties"] is False
        assert ("surfaceOp" in schema["required"]) is (event_type in models.SURFACE_EVENT_TYPES)
        assert {
            "if": {"properties": {"type": {"const": event_type}}, "required": ["type"]},
            "then": {"$ref": path},
        } in branches


# --------------------------------------------------------------------------- worked examples


@pytest.mark.parametrize(("where", "event"), FIXTURE_EVENTS, ids=[w for w, _ in FIXTURE_EVENTS])
def test_worked_example_accepted_by_both_layers(where: str, event: dict[str, Any]) -> None:
    assert problems(typed(), event) == []
    assert problems(open_layer(), event) == []
    assert problems(schemas.validator(V0 + "log.json"), [event]) == []


def test_fixture_coverage() -> None:
    names = {w.split(":")[0] for w, _ in FIXTURE_EVENTS}
    for name in ("e1", "e2", "e3", "e5", "e8", "e10-closers", "e14"):
        assert f"{name}.jsonl" in names
    assert len(FIXTURE_EVENTS) >= 50


def test_whole_logs_validate() -> None:
    events = [e for w, e in FIXTURE_EVENTS if w.startswith("e2.jsonl")]
    assert [e["seq"] for e in events] == list(range(16))
    assert problems(schemas.validator(V0 + "log.json"), events) == []
    assert problems(schemas.validator(V0 + "log.json#/$defs/typed"), events) == []
    assert not schemas.validator(V0 + "log.json").is_valid({"events": events})


BASE_EVENT: dict[str, Any] = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}

# E15: each single-event seed has an invalid envelope
E15_ENVELOPE_FAILURES: list[tuple[str, Any]] = [
    ("extra key", {**BASE_EVENT, "extra": True}),
    ("type 1", {**BASE_EVENT, "type": 1}),
    ('seq "0"', {**BASE_EVENT, "seq": "0"}),
    ("seq 0.5", {**BASE_EVENT, "seq": 0.5}),
    ("seq -1", {**BASE_EVENT, "seq": -1}),
    ('time "1"', {**BASE_EVENT, "time": "1"}),
    ("time 0.5", {**BASE_EVENT, "time": 0.5}),
    ("missing data", {k: v for k, v in BASE_EVENT.items() if k != "data"}),
    ("ignorable false", {**BASE_EVENT, "ignorable": False}),
    ('ignorable "yes"', {**BASE_EVENT, "ignorable": "yes"}),
    ("not an object", [BASE_EVENT]),
    ("seq beyond 2^53-1", {**BASE_EVENT, "seq": 2**53}),
    ("seq true", {**BASE_EVENT, "seq": True}),
]


@pytest.mark.parametrize(
    ("case", "event"), E15_ENVELOPE_FAILURES, ids=[c for c, _ in E15_ENVELOPE_FAILURES]
)
def test_open_layer_rejects_envelope_failures(case: str, event: Any) -> None:
    assert not open_layer().is_valid(event)
    assert not typed().is_valid(event)


def test_envelope_accepts_the_envelope_edge_cases() -> None:
    for event in (
        BASE_EVENT,
        {**BASE_EVENT, "time": -5},
        {**BASE_EVENT, "ignorable": True},
        {**BASE_EVENT, "seq": 2**53 - 1},
        {"type": "", "seq": 0, "time": 0, "data": None},
        {"type": "plugin/event", "seq": 0, "time": 0, "data": None},
        {"type": "turn/start", "seq": 0, "time": 0, "data": None},
    ):
        assert problems(open_layer(), event) == []


def _user_message(seq: int, **envelope: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "user/message",
        "seq": seq,
        "time": 0,
        "data": {
            "id": f"m{seq}",
            "role": "user",
            "content": [{"type": "text", "text": "a"}],
            "source": {"kind": "user"},
        },
    }
    event.update(envelope)
    return event


SURFACE_FAILURES: list[tuple[str, dict[str, Any]]] = [
    ("turn/start with surfaceOp", {**BASE_EVENT, "surfaceOp": "append"}),
    ("turn/start with sourceEventSeqs", {**BASE_EVENT, "sourceEventSeqs": [0]}),
    (
        "unknown ignorable type with surfaceOp (E12)",
        {
            "type": "future/event",
            "seq": 6,
            "time": 99,
            "data": {"payload": 1},
            "ignorable": True,
            "surfaceOp": "append",
        },
    ),
    (
        "unknown type with sourceEventSeqs",
        {"type": "future/event", "seq": 6, "time": 99, "data": None, "sourceEventSeqs": [1]},
    ),
    ("user/message without surfaceOp (E7)", _user_message(0)),
    (
        'sourceEventSeqs "invalid" (E7)',
        _user_message(1, surfaceOp="append", sourceEventSeqs="invalid"),
    ),
    (
        "sourceEventSeqs [] on user/message (E7)",
        _user_message(1, surfaceOp="append", sourceEventSeqs=[]),
    ),
    ("sourceEventSeqs [0,0] (E7)", _user_message(1, surfaceOp="append", sourceEventSeqs=[0, 0])),
    ('sourceEventSeqs ["0"] (E7)', _user_message(1, surfaceOp="append", sourceEventSeqs=["0"])),
    ("sourceEventSeqs [0.5] (E7)", _user_message(1, surfaceOp="append", sourceEventSeqs=[0.5])),
    ("sourceEventSeqs [-1] (E7)", _user_message(1, surfaceOp="append", sourceEventSeqs=[-1])),
    (
        "replace start -1 (E6)",
        _user_message(1, surfaceOp={"op": "replace", "start": -1, "end": 0}, sourceEventSeqs=[0]),
    ),
    ('surfaceOp "invalid" (E6)', _user_message(1, surfaceOp="invalid")),
    ("surfaceOp null", _user_message(1, surfaceOp=None)),
    ("surfaceOp array", _user_message(1, surfaceOp=["append"])),
    (
        "replace with an extra key",
        _user_message(
            1, surfaceOp={"op": "replace", "start": 0, "end": 0, "x": 1}, sourceEventSeqs=[0]
        ),
    ),
    (
        "replace missing end",
        _user_message(1, surfaceOp={"op": "replace", "start": 0}, sourceEventSeqs=[0]),
    ),
    ('op "append" object', _user_message(1, surfaceOp={"op": "append", "start": 0, "end": 0})),
]


@pytest.mark.parametrize(("case", "event"), SURFACE_FAILURES, ids=[c for c, _ in SURFACE_FAILURES])
def test_open_layer_rejects_surface_metadata_failures(case: str, event: dict[str, Any]) -> None:
    assert not open_layer().is_valid(event)
    assert not typed().is_valid(event)


def test_surface_metadata_accepted_where_eligible() -> None:
    for event in (
        _user_message(1, surfaceOp="append", sourceEventSeqs=[0]),
        _user_message(3, surfaceOp={"op": "replace", "start": 2, "end": 1}, sourceEventSeqs=[2, 1]),
    ):
        assert problems(open_layer(), event) == []
        assert problems(typed(), event) == []
    empty = next(e for w, e in FIXTURE_EVENTS if e.get("sourceEventSeqs") == [])
    assert empty["type"] == "assistant/message"


def test_legacy_refusals() -> None:
    delta: dict[str, Any] = {"type": "request/header-delta", "seq": 0, "time": 0, "data": {}}
    assert not open_layer().is_valid(delta)
    assert not typed().is_valid({**delta, "ignorable": True})
    fallback: dict[str, Any] = {
        "type": "request/header",
        "seq": 0,
        "time": 0,
        "data": {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "fallback"},
    }
    assert not open_layer().is_valid(fallback)
    assert not typed().is_valid(fallback)
    assert typed().is_valid({**fallback, "data": {**fallback["data"], "reason": "change"}})
    mode_set: dict[str, Any] = {
        "type": "mode/set",
        "seq": 0,
        "time": 0,
        "data": {},
        "ignorable": True,
    }
    assert open_layer().is_valid(mode_set)
    assert not typed().is_valid(mode_set)


def test_typed_layer_unknown_types() -> None:
    required: dict[str, Any] = {
        "type": "future/event",
        "seq": 6,
        "time": 99,
        "data": {"payload": 1},
    }  # E13
    assert open_layer().is_valid(required)
    assert not typed().is_valid(required)
    assert problems(typed(), {**required, "ignorable": True}) == []  # E12
    assert not typed().is_valid({**required, "ignorable": False})


TYPED_FAILURES: list[tuple[str, dict[str, Any]]] = [
    ("turn/start data null", {**BASE_EVENT, "data": None}),
    (
        "turn/start extra payload key",
        {**BASE_EVENT, "data": {"turn": 1, "trigger": {"kind": "user"}}},
    ),
    ("turn/start turn 0", {**BASE_EVENT, "data": {"turn": 0}}),
    (
        "request/header lacks provider (E15)",
        {
            "type": "request/header",
            "seq": 0,
            "time": 0,
            "data": {"header": {"config": {"model": "old-model"}}, "reason": "initial"},
        },
    ),
    (
        "request/header empty reasoningEffort",
        {
            "type": "request/header",
            "seq": 0,
            "time": 0,
            "data": {
                "header": {"config": {"provider": "p", "model": "m", "reasoningEffort": ""}},
                "reason": "initial",
            },
        },
    ),
    (
        "request/header marker without value",
        {
            "type": "request/header",
            "seq": 0,
            "time": 0,
            "data": {
                "header": {
                    "config": {"provider": "p", "model": "m"},
                    "adapterDefaults": {"maxTokens": True},
                },
                "reason": "initial",
            },
        },
    ),
    (
        "assistant/message without a message (E15)",
        {
            "type": "assistant/message",
            "seq": 0,
            "time": 0,
            "surfaceOp": "append",
            "data": {"turn": 1, "step": 1, "content": []},
        },
    ),
    (
        "user/message without id",
        {
            **_user_message(0, surfaceOp="append"),
            "data": {"role": "user", "content": [], "source": {"kind": "user"}},
        },
    ),
    (
        "user/message with role assistant",
        {
            **_user_message(0, surfaceOp="append"),
            "data": {"id": "u", "role": "assistant", "content": [], "source": {"kind": "user"}},
        },
    ),
    (
        "user/message with an unknown source kind",
        {
            **_user_message(0, surfaceOp="append"),
            "data": {"id": "u", "role": "user", "content": [], "source": {"kind": "plugin-source"}},
        },
    ),
    (
        "user/message with an unknown block type",
        {
            **_user_message(0, surfaceOp="append"),
            "data": {
                "id": "u",
                "role": "user",
                "content": [{"type": "plugin-block", "value": 1}],
                "source": {"kind": "user"},
            },
        },
    ),
    (
        "tool/result with two blocks",
        {
            "type": "tool/result",
            "seq": 0,
            "time": 0,
            "surfaceOp": "append",
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "t",
                    "role": "user",
                    "source": {"kind": "tool", "callId": "c"},
                    "content": [
                        {"type": "tool-result", "toolCallId": "c", "content": []},
                        {"type": "tool-result", "toolCallId": "c", "content": []},
                    ],
                },
            },
        },
    ),
    (
        "tool/result with a model source",
        {
            "type": "tool/result",
            "seq": 0,
            "time": 0,
            "surfaceOp": "append",
            "data": {
                "turn": 1,
                "step": 1,
                "message": {
                    "id": "t",
                    "role": "user",
                    "source": {"kind": "model", "provider": "p", "model": "m"},
                    "content": [{"type": "tool-result", "toolCallId": "c", "content": []}],
                },
            },
        },
    ),
    (
        "session/end-seed with data",
        {"type": "session/end-seed", "seq": 0, "time": 0, "data": {"x": 1}},
    ),
    (
        "todo/write empty content",
        {
            "type": "todo/write",
            "seq": 0,
            "time": 0,
            "data": {"todos": [{"content": "", "status": "pending"}]},
        },
    ),
    (
        "goal/change with an empty objective",
        {
            "type": "goal/change",
            "seq": 0,
            "time": 0,
            "data": {
                "kind": "goal/change",
                "version": 1,
                "operation": "block",
                "goal": {
                    "id": "g",
                    "revision": 1,
                    "objective": "",
                    "phase": "blocked",
                    "maxGoalRounds": 1,
                },
                "roundsStarted": 0,
                "createdAt": 0,
                "updatedAt": 0,
            },
        },
    ),
    (
        "compaction/summary llmStreamCall without rawOutput",
        {
            "type": "compaction/summary",
            "seq": 0,
            "time": 0,
            "data": {
                "compactionId": "k",
                "summary": [],
                "shadowedRange": {"start": 1, "end": 1},
                "shadowedSeqs": [1],
                "shadowedTokenCount": 1,
                "provider": "p",
                "model": "m",
                "llmStreamCall": True,
            },
        },
    ),
    (
        "llm/retry always with maxRetries",
        {
            "type": "llm/retry",
            "seq": 0,
            "time": 0,
            "data": {
                "retryId": "r",
                "turn": 1,
                "step": 1,
                "provider": "p",
                "mode": "always",
                "maxRetries": 2,
                "policyKey": "k",
                "retry": 1,
                "delayMs": 10,
                "failure": {"message": "x", "code": "C"},
            },
        },
    ),
    (
        "turn/end legacy disposed reason",
        {
            "type": "turn/end",
            "seq": 0,
            "time": 0,
            "data": {"turn": 1, "reason": {"kind": "disposed"}},
        },
    ),
]


@pytest.mark.parametrize(("case", "event"), TYPED_FAILURES, ids=[c for c, _ in TYPED_FAILURES])
def test_typed_layer_rejects_bad_payloads(case: str, event: dict[str, Any]) -> None:
    assert problems(open_layer(), event) == []
    assert not typed().is_valid(event)


def test_open_block_and_source_variants_pass_unknown_kinds_through() -> None:
    block = schemas.validator(V0 + "content-block.json#/$defs/open")
    assert block.is_valid({"type": "plugin-block", "value": 1})
    assert block.is_valid(
        {
            "type": "tool-result",
            "toolCallId": "c",
            "content": [{"type": "plugin-block", "value": 1}],
        }
    )
    assert not block.is_valid({"type": "text"})
    assert not block.is_valid({"value": 1})
    source = schemas.validator(V0 + "message-source.json#/$defs/open")
    assert source.is_valid({"kind": "plugin-source"})
    assert not source.is_valid({"kind": ""})


E17_TURN_END_REASONS = [
    {"kind": "aborted", "reason": {"kind": "legacy"}},
    {"kind": "aborted", "reason": {"kind": "disposed"}},
    {"kind": "error", "error": {"message": "boom", "code": "UNKNOWN"}},
    {"kind": "error", "error": {"message": "x", "code": "C", "status": 500}},
    {"kind": "aborted", "reason": {"kind": "hook", "reason": "policy"}},
    {"kind": "blocked"},
]


@pytest.mark.parametrize("reason", E17_TURN_END_REASONS, ids=json.dumps)
def test_turn_end_reasons(reason: dict[str, Any]) -> None:
    event = {"type": "turn/end", "seq": 3, "time": 4, "data": {"turn": 1, "reason": reason}}
    assert problems(typed(), event) == []


# --------------------------------------------------------------------------- file records


def test_session_header_line() -> None:
    header = schemas.validator(V0 + "session-header.json")
    e18: dict[str, Any] = {
        "type": "session",
        "version": 0,
        "id": "g",
        "createdAt": 1,
        "delegationDepth": 0,
    }
    jsonl = {
        "type": "session",
        "version": 0,
        "id": "s",
        "createdAt": 5,
        "cwd": "/w",
        "delegationDepth": 0,
    }
    full = {
        "type": "session",
        "version": 0,
        "id": "c",
        "createdAt": 5,
        "cwd": "/w",
        "parentSession": "p",
        "seedLength": 3,
        "origin": "subagent",
        "delegationDepth": 1,
        "agentPreset": "coder",
    }
    for line in (e18, jsonl, full):
        assert problems(header, line) == []
        assert (
            models.SessionHeaderLine.model_validate(line).model_dump(
                mode="json", exclude_unset=True
            )
            == line
        )
    assert problems(header, {**e18, "futureMember": 1}) == []  # other members are ignored
    for bad in (
        {**e18, "sandboxMode": "read-only"},
        {**e18, "approvalPolicy": "never"},
        {**e18, "version": 99},
        {**e18, "version": -1},
        {k: v for k, v in e18.items() if k != "delegationDepth"},
        {**e18, "cwd": "relative/path"},
        {**e18, "origin": "parent"},
        {**e18, "createdAt": -1},
        {**e18, "id": ""},
        {**e18, "type": "turn/start"},
    ):
        assert not header.is_valid(bad), bad


def test_chunk_rows() -> None:
    rows = schemas.validator(V0 + "chunk-row.json")
    text: dict[str, Any] = {
        "type": "text-chunks",
        "seq0": 5,
        "time0": 100,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, -2], "texts": ["a", "b", "c"]},
    }
    tool: dict[str, Any] = {
        "type": "tool-call-chunks",
        "seq0": 5,
        "time0": 100,
        "data": {
            "turn": 1,
            "step": 1,
            "index": 0,
            "id": "c1",
            "name": "bash",
            "dt": [0, 0],
            "args": ["{", "}", ""],
        },
    }
    spec_example = {  # spec/session/jsonl.md, SES-FILE-005
        "type": "text-chunks",
        "seq0": 3,
        "time0": 100,
        "data": {
            "turn": 1,
            "step": 1,
            "index": 0,
            "dt": [5, -2],
            "texts": ["Once", " upon", " a time"],
        },
    }
    for row in (text, {**text, "type": "reasoning-chunks"}, tool, spec_example):
        assert problems(rows, row) == []
    for bad in (
        {**text, "type": "tool-call-chunks"},
        {**text, "data": {**text["data"], "args": ["x"]}},
        {**tool, "type": "text-chunks"},
        {**text, "seq": 5},
        {**text, "data": {**text["data"], "dt": [0.5]}},
        {**text, "data": {**text["data"], "texts": []}},
        {**text, "data": {**text["data"], "turn": "1"}},
        {**tool, "data": {**tool["data"], "name": None}},
    ):
        assert not rows.is_valid(bad), bad


def test_json_value_documents_negative_zero() -> None:
    schema = schemas.load(V0 + "json-value.json")
    assert "-0" in schema["description"]
    assert schemas.validator(V0 + "json-value.json").is_valid({"__proto__": [1, None, {"a": "b"}]})
