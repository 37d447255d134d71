"""What the projection-budget and compaction-boundary properties state of any result,
checked with the reference's own reading of the request (its projection of a snapshot, its
view of a log): :func:`statement` gives, for one drawn request, a function of an
implementation's result that answers ``""`` or the broken statement.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from dshkit.conformance.interface import JsonObject
from dshkit.reference.compaction import CompactionError, LogView, is_checkpoint_event
from dshkit.reference.problems import ProblemError
from dshkit.reference.projection import SurfaceSnapshot, notice, project, tag_safe, utf8_len
from dshkit.reference.projection.projection import ProjectedItem

from . import compaction, session_log
from .recall_statement import recall_check

__all__ = ["plan_check", "retention_check", "statement"]

Check = Callable[[JsonObject], str]
_NOTICE = re.compile("\n\\[\u2026 omitted (0|[1-9][0-9]*) UTF-8 bytes \u2026\\]\\Z")


# -- projection-budget ---------------------------------------------------------------------------

def _item(index: int, item: Any, unit: ProjectedItem) -> tuple[str, int]:
    """``("", omitted)`` when ``item`` is ``unit`` whole or cut with an exact notice."""
    if not isinstance(item, dict) or item.get("role") != unit.role:
        role = item.get("role") if isinstance(item, dict) else None
        return (f"conversation[{index}] has role {role!r} where the retained unit is "
                f"{unit.role!r}: phase 1 drops the oldest units that are neither a checkpoint "
                "nor the newest, and keeps the order", 0)
    text = item.get("text")
    if text == unit.original_text:
        return "", 0
    if text == "":  # REF-RET-006: nothing of the text fits, not even the notice
        return "", utf8_len(unit.original_text)
    found = _NOTICE.search(text) if isinstance(text, str) else None
    if found is None or not isinstance(text, str):
        return (f"conversation[{index}] is neither its unit's text nor a cut of it ending "
                "with an omission notice", 0)
    omitted = int(found.group(1))
    kept = utf8_len(text) - utf8_len(notice(omitted))
    if kept + omitted != utf8_len(unit.original_text):
        return (f"conversation[{index}]: the notice says {omitted} bytes omitted, but the cut "
                f"keeps {kept} of {utf8_len(unit.original_text)} bytes", 0)
    return "", omitted


def _accounting(units: list[ProjectedItem], conversation: list[Any]) -> tuple[str, int, int]:
    """The problem (or ``""``), the dropped unit count and the omitted bytes."""
    dropped = len(units) - len(conversation)
    eligible = [i for i, unit in enumerate(units) if not unit.checkpoint and i != len(units) - 1]
    if dropped < 0 or dropped > len(eligible):
        return (f"{len(conversation)} conversation items for {len(units)} projected units: "
                "a checkpoint or the newest unit was dropped, or a unit was invented", 0, 0)
    gone = set(eligible[:dropped])
    omitted = sum(utf8_len(units[i].original_text) for i in gone)
    kept = [unit for i, unit in enumerate(units) if i not in gone]
    for index, (item, unit) in enumerate(zip(conversation, kept, strict=True)):
        problem, cut = _item(index, item, unit)
        if problem:
            return problem, dropped, omitted
        omitted += cut
    return "", dropped, omitted


def retention_check(request: JsonObject) -> Any:
    """What the specification states of any retained source of ``request``: a function of
    the implementation's result giving ``""`` or the broken statement."""
    units = project(SurfaceSnapshot.from_json(request["snapshot"]))
    budget = int(request["maxBytes"])

    def statement(result: JsonObject) -> str:
        if result.get("valid") is not True:
            return ""  # a refusal is compared with the expectation
        data, stats, size = result.get("data"), result.get("stats"), result.get("size")
        if not isinstance(data, dict) or not isinstance(stats, dict) \
                or not isinstance(size, int) or not isinstance(data.get("conversation"), list):
            return "the result lacks data (with its conversation), stats or size"
        rendered = utf8_len(tag_safe(data))
        if size != rendered:
            return f"size {size} is not the {rendered} bytes of the tag-safe rendering of data"
        if size > budget:
            return f"over budget: size {size} > maxBytes {budget}"
        conversation = data["conversation"]
        problem, dropped, omitted = _accounting(units, conversation)
        if problem:
            return problem
        want = {"originalMessages": len(units), "retainedMessages": len(conversation),
                "omittedMessages": dropped, "omittedBytes": omitted,
                "truncated": dropped > 0 or omitted > 0,
                "compacted": any(u.checkpoint for u in units)}
        for key, value in want.items():
            if stats.get(key) != value or type(stats.get(key)) is not type(value):
                return f"stats.{key} is {stats.get(key)!r}, the accounting gives {value!r}"
        return ""

    return statement



# -- compaction-boundary -------------------------------------------------------------------------

def _cuts(view: LogView, event: JsonObject) -> str:
    """``""`` when the span ``event`` replaces starts and ends at balanced cuts."""
    op = event.get("surfaceOp")
    if not isinstance(op, dict):
        return f"the checkpoint at seq {event.get('seq')} has no replacement surfaceOp"
    bounds = view.boundaries()
    try:
        first, last = bounds.index(op["start"]), bounds.index(op["end"])
    except (CompactionError, KeyError):
        return (f"the checkpoint at seq {event.get('seq')} replaces {op.get('start')!r}.."
                f"{op.get('end')!r}, which are not both on the current surface")
    if not (bounds.cuts[first] and bounds.cuts[last + 1]):
        return (f"the checkpoint at seq {event.get('seq')} replaces {op['start']}..{op['end']}"
                ", which cuts inside a structural unit")
    return ""


def _folds(events: list[Any], appended: list[Any]) -> str:
    combined = [*events, *appended]
    verdict = session_log.run("validate", {"events": combined}, {"level": "invariants"})
    if verdict.get("valid") is not True:
        error = verdict.get("error") or {}
        return (f"the log with the plan appended is not valid at level invariants: "
                f"{error.get('code')} at seq {error.get('seq')}: {error.get('message')}")
    brackets = compaction.run("compaction.brackets", {"events": combined}, {})
    if brackets.get("valid") is not True:
        error = brackets.get("error") or {}
        return (f"the log with the plan appended breaks the compaction brackets: "
                f"{error.get('code')}: {error.get('message')}")
    return ""


def plan_check(events: list[Any]) -> Any:
    """What the specification states of any plan for ``events``: a function of the
    implementation's result giving ``""`` or the broken statement."""

    def statement(result: JsonObject) -> str:
        if result.get("valid") is not True:
            return ""  # a refusal is compared with the expectation
        appended = result.get("events")
        if not isinstance(appended, list):
            return "the plan has no list of events"
        view = LogView.of(events)
        for event in appended:
            if not isinstance(event, dict):
                return "an event of the plan is not an object"
            if is_checkpoint_event(event):
                problem = _cuts(view, event)
                if problem:
                    return problem
            try:
                view.push(event)
            except (CompactionError, ProblemError) as exc:
                return f"the plan's event at seq {event.get('seq')} does not fold: {exc}"
        return _folds(events, appended)

    return statement



def statement(property: str, request: JsonObject) -> Check | None:
    """The statement of ``property`` for ``request`` (``None``: the property states nothing
    beyond the expected answer)."""
    if property == "projection-budget":
        return retention_check(request)  # type: ignore[no-any-return]
    if property == "compaction-boundary":
        return plan_check(request["events"])  # type: ignore[no-any-return]
    if property == "memory-recall":
        return recall_check(request)
    return None
