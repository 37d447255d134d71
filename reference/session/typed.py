"""The typed layer: closed payload shapes of the 48 known types (SES-VOC-001/002/005).

Opt-in, reported beside the level verdict and never changing it. Unknown types are not checked
here (the load level's vocabulary rule deals with them).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema.protocols import Validator

from ...schemas import validator
from ..problems import Problem
from .vocabulary import CORE_EVENT_TYPES, KNOWN_EVENT_TYPES


@cache
def _event_validator(kind: str) -> Validator:
    return validator(f"session/v0/events/{kind.replace('/', '-')}.json")


def typed_problems(event: Any, *, seq: int | None, line: int | None) -> list[Problem]:
    """Every way a known-type event departs from its closed shape (empty when it fits)."""
    if not isinstance(event, dict) or event.get("type") not in KNOWN_EVENT_TYPES:
        return []
    kind = event["type"]
    requirement = "SES-VOC-001" if kind in CORE_EVENT_TYPES else "SES-VOC-002"
    out = []
    for error in sorted(_event_validator(kind).iter_errors(event),
                        key=lambda e: [str(p) for p in e.absolute_path]):
        where = "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}"
                        for p in error.absolute_path)
        out.append(Problem(code="PAYLOAD_INVALID", requirement=requirement, seq=seq, line=line,
                           pointer=where, message=f"{kind}: {error.message}"))
    return out
