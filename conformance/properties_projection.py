"""The projection-budget property: a session reference's retention against any implementation
(suite ``session-reference``, operation ``reference.retain``).

:func:`retention_requests` draws a surface snapshot (:func:`dshkit.conformance.
strategies_projection.surface_snapshots`), a label and a byte budget from 1 to a little more
than the snapshot needs untouched. Each draw is one ``reference.retain`` case whose
expectation is the reference's exact result; before that comparison the property checks what
the specification states of every retained source, whatever the implementation
(REF-RET-001, -003, -008, -010):

- never over: ``size`` is at most the budget and is the byte length of the tag-safe
  rendering of ``data``;
- checkpoints kept: the conversation is the projected units minus the oldest ones that are
  neither a checkpoint nor the newest unit, in order, each whole, cut with its omission
  notice, or empty when not even the notice fits;
- omissions exact: each notice counts exactly the bytes its cut left out, and the statistics
  add up (``omittedBytes`` is the dropped bytes plus the notices', the message counts match).

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from dshkit.reference.projection import (
    SurfaceSnapshot,
    notice,
    project,
    tag_safe,
    utf8_len,
)
from dshkit.reference.projection.projection import ProjectedItem

from .interface import Implementation, JsonObject
from .propcheck import Probe, check, reference_case
from .strategies_projection import surface_snapshots

__all__ = ["REQUIREMENTS", "projection_budget_check", "retention_check", "retention_requests"]

REQUIREMENTS = ["REF-RET-001", "REF-RET-003", "REF-RET-008", "REF-RET-010"]
LABELS = ("L", "main", "会话 <1>", 'say "hi"')
_NOTICE = re.compile("\n\\[\u2026 omitted (0|[1-9][0-9]*) UTF-8 bytes \u2026\\]\\Z")


def _full_size(snapshot: JsonObject, label: str) -> int:
    parsed = SurfaceSnapshot.from_json(snapshot)
    return utf8_len(tag_safe({"sessionId": parsed.session_id, "label": label,
                              "cwd": parsed.cwd,
                              "capturedThroughSeq": parsed.captured_through_seq,
                              "conversation": [{"role": u.role, "text": u.text}
                                               for u in project(parsed)]}))


@st.composite
def retention_requests(draw: st.DrawFn) -> JsonObject:
    """``{"snapshot", "label", "maxBytes"}``: one ``reference.retain`` request."""
    snapshot = draw(surface_snapshots())
    label = draw(st.sampled_from(LABELS))
    full = _full_size(snapshot, label)
    # half the budgets fall in the top third, where retention cuts a message mid-text more
    # often than it drops whole ones (about 9 % of requests instead of 3 %)
    budget = draw(st.one_of(st.integers(1, full + 20),
                            st.integers(max(1, full * 2 // 3), max(1, full))))
    return {"snapshot": snapshot, "label": label, "maxBytes": budget}


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


def _probe(request: JsonObject) -> list[Probe]:
    from .suites.session_reference import reference

    data = {"snapshot": request["snapshot"], "label": request["label"]}
    case = reference_case(reference, "reference.retain", data,
                          {"maxBytes": request["maxBytes"]}, requirements=REQUIREMENTS,
                          suite="session-reference", prefix="ref",
                          description="A generated snapshot and budget on which an "
                          "implementation's retention broke the projection-budget property "
                          "or disagreed with the reference (shrunk by hypothesis).")
    return [Probe(case, retention_check(request))]


def projection_budget_check(impl: Implementation, *, max_examples: int = 50,
                            seed: int | None = None,
                            counterexample_dir: str | Path | None = None) -> JsonObject:
    """Draw retention requests, check the property's statements on ``impl``'s results and
    compare them with the reference; the shrunk failing case is returned (and written to
    ``counterexample_dir``) as a vector."""
    return check(retention_requests(), _probe, impl, name="projection-budget",
                 capabilities=("session-reference",), max_examples=max_examples, seed=seed,
                 counterexample_dir=counterexample_dir)
