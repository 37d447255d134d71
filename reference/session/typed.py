"""The typed layer: closed payload shapes of the 48 known types (SES-VOC-001/002/005).

Opt-in, reported beside the level verdict and never changing it. Unknown types are not checked
here (the load level's vocabulary rule deals with them). The problems come from the JSON
Schemas (the source of truth for shapes); an event that fits is then parsed into its pydantic
model (:func:`parse_event`, the typed Python API), which must succeed: the schema/model
cross-check of the test suite proves the two accept the same documents, and a disagreement
found here is reported rather than hidden.

pydantic is imported on first use only, so the command line starts without it.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from jsonschema.protocols import Validator

from ...schemas import validator
from ..problems import Problem
from ..text import js_trim
from .vocabulary import CORE_EVENT_TYPES, KNOWN_EVENT_TYPES

if TYPE_CHECKING:
    from pydantic import TypeAdapter

    from .models import SessionEvent


@cache
def event_adapter() -> TypeAdapter[SessionEvent]:
    """The ``pydantic.TypeAdapter`` of :data:`models.Event`, the union of every event model
    discriminated by ``type`` (built once: building it takes a moment)."""
    from pydantic import ConfigDict, TypeAdapter

    from .models import Event

    adapter: TypeAdapter[SessionEvent] = TypeAdapter(Event, config=ConfigDict(title="Event"))
    return adapter


def parse_event(obj: object) -> SessionEvent:
    """One decoded JSON event as its typed model: for a known type an instance of
    ``models.EVENT_MODELS[type]`` (``data`` is the payload model), otherwise an
    ``models.OpaqueEvent`` (only if marked ``ignorable: true``).

    Raises ``pydantic.ValidationError`` for an event that does not fit. The models hold the
    shapes only: the log-level rules (``seq`` = index, provenance, ...) are the validator's.
    ``event.model_dump(mode="json", exclude_unset=True)`` gives back the JSON object.
    """
    return event_adapter().validate_python(obj)


@cache
def _event_validator(kind: str) -> Validator:
    return validator(f"session/v0/events/{kind.replace('/', '-')}.json")


def typed_problems(event: Any, *, seq: int | None, line: int | None) -> list[Problem]:
    """Every way a known-type event departs from its closed shape (empty when it fits)."""
    kind = event.get("type") if isinstance(event, dict) else None
    if not (isinstance(kind, str) and kind in KNOWN_EVENT_TYPES):
        return []
    requirement = "SES-VOC-001" if kind in CORE_EVENT_TYPES else "SES-VOC-002"
    out = []
    for error in sorted(_event_validator(kind).iter_errors(event),
                        key=lambda e: [str(p) for p in e.absolute_path]):
        where = "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}"
                        for p in error.absolute_path)
        out.append(Problem(code="PAYLOAD_INVALID", requirement=requirement, seq=seq, line=line,
                           pointer=where, message=f"{kind}: {error.message}"))
    if kind == "todo/write":
        out.extend(_todo_problems(event, seq=seq, line=line))
    if not out:
        out.extend(_model_disagreement(event, kind, requirement, seq=seq, line=line))
    return out


def _model_disagreement(event: dict[str, Any], kind: str, requirement: str, *, seq: int | None,
                        line: int | None) -> list[Problem]:
    """The event fits its schema: its model must accept it too (a dshkit defect otherwise)."""
    from pydantic import ValidationError

    try:
        parse_event(event)
    except ValidationError as error:
        first = error.errors()[0]
        where = "".join(f"/{part}" for part in first["loc"][1:])
        return [Problem(code="TYPED_MODEL_DISAGREES", requirement=requirement, seq=seq,
                        line=line, pointer=where,
                        message=f"{kind}: the schema accepts this event but the typed model "
                                f"refuses it ({first['msg']}); please report this dshkit defect")]
    return []


def _todo_problems(event: dict[str, Any], *, seq: int | None, line: int | None) -> list[Problem]:
    """SES-VOC-004: the owner's relational rules, which a JSON Schema cannot state: every
    content is trimmed (ECMAScript trim) and no content repeats within one list."""
    data = event.get("data")
    todos = data.get("todos") if isinstance(data, dict) else None
    if not isinstance(todos, list):
        return []
    out: list[Problem] = []
    seen: set[str] = set()
    for index, item in enumerate(todos):
        content = item.get("content") if isinstance(item, dict) else None
        if not isinstance(content, str):
            continue
        where = f"/data/todos/{index}/content"
        if content != js_trim(content):
            out.append(Problem(code="PAYLOAD_INVALID", requirement="SES-VOC-004", seq=seq,
                               line=line, pointer=where,
                               message="todo/write: a todo content must be trimmed"))
        if content in seen:
            out.append(Problem(code="PAYLOAD_INVALID", requirement="SES-VOC-004", seq=seq,
                               line=line, pointer=where,
                               message=f"todo/write: the todo content {content!r} repeats"))
        seen.add(content)
    return out
