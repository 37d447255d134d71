"""The pydantic models and the JSON Schemas describe the same documents.

For every one of the 48 event types (and for the envelope, the JSONL header line and the
packed chunk rows) instances generated from one side must be accepted by the other:

(a) instances generated from the pydantic model's own JSON schema, validated and dumped by
    the model, must validate against the hand-written typed schema;
(b) instances generated from the hand-written schema (``schema_strategies``) must validate
    against the model and dump back unchanged.

A deterministic check compares the object shapes (property names, which are required,
closedness) of both sides, so a field added to one side only fails even without a lucky draw.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, cast
from urllib.parse import urldefrag, urljoin

import pytest
import referencing
import referencing.jsonschema
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.protocols import Validator
from pydantic import BaseModel, TypeAdapter, ValidationError
from schema_strategies import from_schema

from dshkit import schemas
from dshkit.reference.session import models
from dshkit.reference.session import typed as typed_layer

V0 = schemas.SCHEMA_BASE + "session/v0/"
EVENT_TYPES = sorted(models.KNOWN_EVENT_TYPES)
#: Recursive schemas (content blocks, JSON values) are unrolled this many times, then cut.
RECURSION_LIMIT = 2
#: Generated arrays get at most this many items (unless more are required) to keep draws small.
GENERATED_MAX_ITEMS = 2

FAST = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)

Schema = dict[str, Any]

# Keywords that carry no validation (or that the leaf strategies do not know) are dropped
# when a schema is inlined for generation.
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "discriminator",
        "deprecated",
        "readOnly",
        "writeOnly",
    }
)
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_VALUES = frozenset(
    {"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"}
)
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})


def inline(
    schema: Schema | bool,
    base: str,
    registry: referencing.Registry[Any],
    stack: tuple[str, ...] = (),
) -> Schema | bool:
    """Resolve every ``$ref`` through ``registry`` into one self-contained schema.

    A reference already entered ``RECURSION_LIMIT`` times on the current path becomes
    ``false`` (no instance), which turns recursion into bounded nesting. The result is only
    used to *generate* instances; every generated instance is then checked with the real
    validators, so simplifications here can never hide a disagreement.
    """
    if isinstance(schema, bool):
        return schema
    out: Schema = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS or key.startswith("x-") or key == "$ref":
            continue
        if key in _SCHEMA_MAPS:
            out[key] = {name: inline(sub, base, registry, stack) for name, sub in value.items()}
        elif key in _SCHEMA_VALUES:
            out[key] = inline(value, base, registry, stack)
        elif key in _SCHEMA_LISTS:
            out[key] = [inline(sub, base, registry, stack) for sub in value]
        else:
            out[key] = value
    if "$ref" not in schema:
        return out
    target = urljoin(base, schema["$ref"])
    if stack.count(target) >= RECURSION_LIMIT:
        resolved: Schema | bool = False
    else:
        contents = registry.resolver().lookup(target).contents
        resolved = inline(contents, urldefrag(target)[0], registry, (*stack, target))
    return {"allOf": [resolved, out]} if out else resolved


_leaves: dict[str, st.SearchStrategy[Any]] = {}


def generate(schema: Schema | bool) -> st.SearchStrategy[Any]:
    """A strategy for the instances of an inlined schema.

    Objects with closed properties, arrays and anyOf/oneOf are assembled here so that each
    sub-strategy is built once; every other subschema (scalars, patterns, consts, free-form
    JSON values) is handed to :func:`schema_strategies.from_schema`. allOf draws
    from its members' keywords merged; allOf and the conditional keywords (if/then/else, not)
    are honoured by filtering with a real validator. Every
    draw is validated again by the tests themselves, so this can never hide a disagreement.
    """
    if schema is False:
        return st.nothing()
    if schema is True:
        return _leaf(True)
    if "allOf" in schema:
        # draw from the members' keywords merged, keep what the conjunction accepts
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for member in schema["allOf"]:
            if member is False:
                return st.nothing()
            if member is not True:
                for key, value in member.items():
                    merged.setdefault(key, value)  # on a clash the filter below decides
        return generate(merged).filter(Draft202012Validator(schema).is_valid)
    conditional = {k for k in ("if", "then", "else", "not") if k in schema}
    if conditional:
        core = {k: v for k, v in schema.items() if k not in conditional}
        return generate(core).filter(Draft202012Validator(schema).is_valid)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            union = st.one_of([generate(branch) for branch in schema[key]])
            if len(schema) > 1:
                union = union.filter(Draft202012Validator(schema).is_valid)
            return union
    keys = set(schema)
    if (
        schema.get("type") == "object"
        and keys <= {"type", "properties", "required", "additionalProperties"}
        and schema.get("additionalProperties") is False
    ):
        required = set(schema.get("required", []))
        properties: dict[str, Schema | bool] = schema.get("properties", {})
        return st.fixed_dictionaries(
            {k: generate(v) for k, v in properties.items() if k in required},
            optional={
                k: generate(v)
                for k, v in properties.items()
                if k not in required and v is not False
            },
        )
    if schema.get("type") == "array" and keys <= {
        "type",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
    }:
        low = int(schema.get("minItems", 0))
        high = min(
            int(schema.get("maxItems", low + GENERATED_MAX_ITEMS)), low + GENERATED_MAX_ITEMS
        )
        if schema.get("items", True) is False:
            return st.just([]) if low == 0 else st.nothing()
        items = generate(schema.get("items", True))
        if schema.get("uniqueItems"):
            return st.lists(items, min_size=low, max_size=high, unique_by=_canonical)
        return st.lists(items, min_size=low, max_size=high)
    return _leaf(schema)


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def _leaf(schema: Schema | bool) -> st.SearchStrategy[Any]:
    key = _canonical(schema)
    if key not in _leaves:
        _leaves[key] = from_schema(schema)
    return _leaves[key]


def object_shapes(schema: Schema | bool) -> set[tuple[frozenset[tuple[str, bool]], bool]]:
    """Every object shape in an inlined schema: ({(property, required)}, closed).

    Conditional subschemas (if/then/else/not) only restrict; they are not shapes.
    """
    found: set[tuple[frozenset[tuple[str, bool]], bool]] = set()

    def walk(node: Schema | bool) -> None:
        if isinstance(node, bool):
            return
        props = node.get("properties")
        if isinstance(props, dict):
            required = set(node.get("required", []))
            shape = frozenset(
                (name, name in required) for name, sub in props.items() if sub is not False
            )
            found.add((shape, node.get("additionalProperties") is False))
        for key, value in node.items():
            if key in _SCHEMA_MAPS:
                for sub in value.values():
                    walk(sub)
            elif key in _SCHEMA_VALUES - {"not", "if", "then", "else"}:
                walk(value)
            elif key in _SCHEMA_LISTS:
                for sub in value:
                    walk(sub)

    walk(schema)
    return found


# --------------------------------------------------------------------------- the pairs


class Pair:
    """One hand-written schema (by URI) and the pydantic type that must match it."""

    def __init__(self, name: str, uri: str, target: Any) -> None:
        self.name = name
        self.uri = uri
        self.adapter: TypeAdapter[Any] = TypeAdapter(target)

    def model_json_schema(self) -> Schema:
        return self.adapter.json_schema(by_alias=True, mode="validation")

    def validate(self, instance: object) -> Any:
        return self.adapter.validate_python(instance)

    def dump(self, value: Any) -> object:
        return self.adapter.dump_python(value, mode="json", exclude_unset=True, by_alias=True)


def _event_file(event_type: str) -> str:
    return f"{V0}events/{event_type.replace('/', '-')}.json"


PAYLOAD_PAIRS = {
    t: Pair(t, _event_file(t) + "#/$defs/data", models.PAYLOAD_MODELS[t]) for t in EVENT_TYPES
}
FILE_PAIRS = {
    "envelope": Pair("envelope", V0 + "envelope.json", models.SessionEvent),
    "session-header": Pair("session-header", V0 + "session-header.json", models.SessionHeaderLine),
    "chunk-row": Pair("chunk-row", V0 + "chunk-row.json", models.ChunkRow),
}
ALL_PAIRS = {**PAYLOAD_PAIRS, **FILE_PAIRS}


@cache
def hand_written(uri: str) -> Schema | bool:
    return inline({"$ref": uri}, uri, schemas.registry())


@cache
def model_side(name: str) -> Schema | bool:
    uri = f"https://model.invalid/{name.replace('/', '-')}.json"
    contents = ALL_PAIRS[name].model_json_schema()
    resource = referencing.jsonschema.DRAFT202012.create_resource(contents)
    registry = schemas.registry().with_resource(uri, resource)
    return inline(contents, uri, registry)


_strategies: dict[tuple[str, str], st.SearchStrategy[Any]] = {}


def strategy(side: str, key: str, build: Callable[[], Schema | bool]) -> st.SearchStrategy[Any]:
    if (side, key) not in _strategies:
        _strategies[(side, key)] = generate(build())
    return _strategies[(side, key)]


def envelope(event_type: str, data: object) -> dict[str, Any]:
    event: dict[str, Any] = {"type": event_type, "seq": 1, "time": 0, "data": data}
    if event_type in models.SURFACE_EVENT_TYPES:
        event["surfaceOp"] = "append"
    return event


def typed() -> Validator:
    return schemas.validator("session/v0/event.json")


def messages(validator: Validator, instance: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


# --------------------------------------------------------------------------- (a) model -> schema


@pytest.mark.parametrize("name", sorted(ALL_PAIRS))
@FAST
@given(data=st.data())
def test_model_instances_validate_against_schema(name: str, data: st.DataObject) -> None:
    pair = ALL_PAIRS[name]
    instance = data.draw(strategy("model", name, lambda: model_side(name)))
    try:
        value = pair.validate(instance)
    except ValidationError:
        # the model's JSON schema cannot express its cross-field validators; skip those draws
        reject()
    dumped = pair.dump(value)
    assert dumped == instance
    assert messages(schemas.validator(pair.uri), dumped) == []
    if name in PAYLOAD_PAIRS:
        assert messages(typed(), envelope(name, dumped)) == []


# --------------------------------------------------------------------------- (b) schema -> model


@pytest.mark.parametrize("event_type", EVENT_TYPES)
@FAST
@given(data=st.data())
def test_schema_events_validate_against_models(event_type: str, data: st.DataObject) -> None:
    event = data.draw(strategy("schema", event_type, lambda: hand_written(_event_file(event_type))))
    assert messages(schemas.validator(_event_file(event_type)), event) == []
    assert messages(typed(), event) == []
    parsed = models.SessionEvent.model_validate(event)
    assert parsed.model_dump(mode="json", exclude_unset=True, by_alias=True) == event
    payload = models.typed_payload(parsed)
    assert payload is not None
    assert payload.model_dump(mode="json", exclude_unset=True, by_alias=True) == event["data"]
    whole = typed_layer.parse_event(event)
    assert type(whole) is models.EVENT_MODELS[event_type]
    assert cast(object, whole.data) == payload
    assert whole.model_dump(mode="json", exclude_unset=True) == event


@pytest.mark.parametrize("name", sorted(FILE_PAIRS))
@FAST
@given(data=st.data())
def test_schema_file_records_validate_against_models(name: str, data: st.DataObject) -> None:
    pair = FILE_PAIRS[name]
    instance = data.draw(strategy("schema", name, lambda: hand_written(pair.uri)))
    assert messages(schemas.validator(pair.uri), instance) == []
    assert pair.dump(pair.validate(instance)) == instance


# --------------------------------------------------------------------------- deterministic shape check


@pytest.mark.parametrize("name", sorted(ALL_PAIRS))
def test_object_shapes_agree(name: str) -> None:
    schema_shapes = object_shapes(hand_written(ALL_PAIRS[name].uri))
    model_shapes = object_shapes(model_side(name))
    if name == "envelope":
        # the open envelope's data is any JSON value: both sides agree on the envelope object only
        schema_shapes = {s for s in schema_shapes if ("type", True) in s[0]}
        model_shapes = {s for s in model_shapes if ("type", True) in s[0]}
    only_schema = sorted(map(_show, schema_shapes - model_shapes))
    only_model = sorted(map(_show, model_shapes - schema_shapes))
    assert (only_schema, only_model) == ([], [])


def _show(shape: tuple[frozenset[tuple[str, bool]], bool]) -> str:
    props = ", ".join(f"{n}{'' if r else '?'}" for n, r in sorted(shape[0]))
    return f"{{{props}}}{' closed' if shape[1] else ''}"


def test_object_shapes_detect_an_extra_field() -> None:
    """The shape comparison really notices a field that exists on one side only."""

    class Widened(models.TurnStartPayload):
        extra: int | None = None

    widened = TypeAdapter(Widened).json_schema(by_alias=True)
    assert object_shapes(widened) != object_shapes(hand_written(PAYLOAD_PAIRS["turn/start"].uri))


# --------------------------------------------------------------------------- vocabulary


def test_payload_models_cover_the_vocabulary() -> None:
    event_schema = schemas.load("session/v0/event.json")
    assert set(event_schema["$defs"]["knownType"]["enum"]) == models.KNOWN_EVENT_TYPES
    assert set(event_schema["$defs"]["coreType"]["enum"]) == models.CORE_EVENT_TYPES
    assert set(event_schema["$defs"]["surfaceType"]["enum"]) == models.SURFACE_EVENT_TYPES
    assert set(event_schema["$defs"]["retiredType"]["enum"]) == models.RETIRED_EVENT_TYPES
    assert len(models.KNOWN_EVENT_TYPES) == 48
    assert len(models.CORE_EVENT_TYPES) == 13
    assert len(models.PLUGIN_EVENT_TYPES) == 35
    assert set(models.PAYLOAD_MODELS) == models.KNOWN_EVENT_TYPES
    assert models.PAYLOAD_MODELS["user/message"] is models.UserMessage
    for model in models.PAYLOAD_MODELS.values():
        assert issubclass(model, BaseModel)
        assert model.model_config.get("frozen") is True


def test_vocabulary_module_agrees() -> None:
    """The reference's own vocabulary constants name the same types as the models."""
    from dshkit.reference.session import vocabulary

    assert set(vocabulary.KNOWN_EVENT_TYPES) == models.KNOWN_EVENT_TYPES
    assert set(vocabulary.CORE_EVENT_TYPES) == models.CORE_EVENT_TYPES
    assert set(vocabulary.PLUGIN_EVENT_TYPES) == models.PLUGIN_EVENT_TYPES
    assert set(vocabulary.SURFACE_EVENT_TYPES) == models.SURFACE_EVENT_TYPES


def _walk_models(model: type[BaseModel], seen: set[type[BaseModel]]) -> Iterator[type[BaseModel]]:
    if model in seen:
        return
    seen.add(model)
    yield model
    for sub in model.__subclasses__():
        yield from _walk_models(sub, seen)


def test_closed_models_forbid_extra_keys() -> None:
    closed = list(_walk_models(models.Closed, set()))
    assert len(closed) > 100
    for model in closed:
        assert model.model_config.get("extra") == "forbid", model
        assert model.model_config.get("frozen") is True, model


def test_json_names_are_used_exactly() -> None:
    raw = {
        "turn": 1,
        "step": 1,
        "message": {
            "id": "t1",
            "role": "user",
            "content": [
                {"type": "tool-result", "toolCallId": "c1", "content": [], "isError": False}
            ],
            "source": {"kind": "tool", "callId": "c1"},
        },
    }
    payload = models.ToolResultPayload.model_validate(raw)
    assert payload.message.content[0].tool_call_id == "c1"
    assert payload.model_dump(mode="json", exclude_unset=True, by_alias=True) == raw
    assert payload.model_dump(mode="json", exclude_unset=True) == raw
    snake = {
        **raw,
        "message": {
            **cast(dict[str, Any], raw["message"]),
            "content": [{"type": "tool-result", "tool_call_id": "c1", "content": []}],
        },
    }
    with pytest.raises(ValidationError):
        models.ToolResultPayload.model_validate(snake)
    web = models.WebDeepseekSearchLlmRequestPayload.model_validate(
        {
            "endpoint": "https://api.example/v1",
            "apiVersion": "2023-06-01",
            "body": {
                "model": "m",
                "max_tokens": 10,
                "messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]}],
                "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
            },
        }
    )
    assert web.model_dump(mode="json", exclude_unset=True)["body"]["max_tokens"] == 10


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (models.TurnStartPayload, {"turn": True}),
        (models.TurnStartPayload, {"turn": 1.5}),
        (models.TurnStartPayload, {"turn": "1"}),
        (models.TurnStartPayload, {"turn": 0}),
        (models.TurnStartPayload, {"turn": 2**53}),
        (models.SessionEndSeedPayload, {"x": 1}),
        (models.PlanModePayload, {"active": 1}),
        (models.RequestContextPayload, {"provider": "p", "model": "m", "contextWindow": None}),
        (models.TeamMemberPayload, {"version": True, "teamId": "t", "member": {}}),
        (
            models.SessionHeaderLine,
            {"type": "session", "version": False, "id": "s", "createdAt": 1, "delegationDepth": 0},
        ),
    ],
)
def test_models_do_not_coerce(model: type[BaseModel], data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(data)
    assert not schemas.validator(
        "session/v0/session-header.json"
        if model is models.SessionHeaderLine
        else _payload_uri(model)
    ).is_valid(data)


def _payload_uri(model: type[BaseModel]) -> str:
    (event_type,) = [t for t, m in models.PAYLOAD_MODELS.items() if m is model]
    return _event_file(event_type) + "#/$defs/data"


# --------------------------------------------------------------------------- the typed API


def test_parse_event_types_known_and_unknown_events() -> None:
    start = typed_layer.parse_event({"type": "turn/start", "seq": 0, "time": 1,
                                     "data": {"turn": 1}})
    assert isinstance(start, models.EVENT_MODELS["turn/start"])
    assert isinstance(start.data, models.TurnStartPayload) and start.data.turn == 1
    other = {"type": "x/y", "seq": 0, "time": 1, "data": {"a": [1]}, "ignorable": True}
    opaque = typed_layer.parse_event(other)
    assert type(opaque) is models.OpaqueEvent
    assert opaque.model_dump(mode="json", exclude_unset=True) == other
    assert set(models.EVENT_MODELS) == models.KNOWN_EVENT_TYPES


@pytest.mark.parametrize("event", [
    {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 0}},
    {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}, "surfaceOp": "append"},
    {"type": "x/y", "seq": 0, "time": 1, "data": {}},
    {"type": "mode/set", "seq": 0, "time": 1, "data": {}, "ignorable": True},
    {"type": 1, "seq": 0, "time": 1, "data": {}},
    [],
], ids=["bad-payload", "not-surface", "unknown-not-ignorable", "retired", "type-not-string",
        "not-an-object"])
def test_parse_event_refuses(event: object) -> None:
    with pytest.raises(ValidationError):
        typed_layer.parse_event(event)


def test_typed_layer_reports_a_model_that_refuses_a_schema_valid_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    event = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}
    assert typed_layer.typed_problems(event, seq=0, line=None) == []
    narrower = TypeAdapter(models.TurnEndPayload)
    monkeypatch.setattr(typed_layer, "parse_event", narrower.validate_python)
    (problem,) = typed_layer.typed_problems(event, seq=0, line=None)
    assert problem.code == "TYPED_MODEL_DISAGREES"
    assert problem.requirement == "SES-VOC-001"
    assert "dshkit defect" in problem.message


def test_the_command_line_starts_without_pydantic() -> None:
    probe = ("import sys, dshkit.cli, dshkit.reference.session.typed;"
             "print('pydantic' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["False"]
