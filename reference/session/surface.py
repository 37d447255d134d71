"""The surface fold: which events the model sees next (spec chapter ``session/surface``).

:class:`SurfaceFold` consumes events one at a time. Each event is first checked against the
current state and only then applied, so a refused event leaves the fold untouched
(SES-SURF-009). Memory grows with the surface, never with the log: only current nodes are
kept, together with the data a later replace needs to check (SES-TRW-003).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ..problems import ProblemError, fail
from .checks import is_nonneg_safe_int
from .vocabulary import SURFACE_EVENT_TYPES

Event = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Replacement:
    """One replace that happened: the replacing seq, its range, and what it shadowed."""

    seq: int
    start: int
    end: int
    shadowed: tuple[int, ...]


class _Plan(NamedTuple):
    seq: int
    start_index: int
    shadowed: tuple[int, ...]
    replace: tuple[int, int] | None


class SurfaceFold:
    """Incremental surface state: current nodes in order, plus what was shadowed.

    A plain class, as the other state machines of a check (not a dataclass: making those
    costs every start of ``dshkit validate`` a few milliseconds)."""

    def __init__(self, base_seq: int = 0) -> None:
        self.base_seq = base_seq
        self.nodes: list[int] = []
        self.replace_generation = 0
        self.shadowed: list[int] = []
        self.replacements: list[Replacement] = []
        self._events: dict[int, Event] = {}
        self._count = 0

    @property
    def next_seq(self) -> int:
        return self.base_seq + self._count

    @property
    def by_seq(self) -> dict[int, Event]:
        """The live map from each current node's seq to its event. Whoever adds to it adds
        the seq to :attr:`nodes` too (the fast path appends there in bulk)."""
        return self._events

    def advance_to(self, next_seq: int) -> None:
        """Count every seq before ``next_seq`` as seen (after appends made directly)."""
        self._count = next_seq - self.base_seq

    def event(self, seq: int) -> Event:
        """The event behind a current node."""
        return self._events[seq]

    def is_current(self, seq: int) -> bool:
        return seq in self._events

    def current_events(self) -> list[Event]:
        return [self._events[seq] for seq in self.nodes]

    def push(self, event: Event) -> None:
        """Check and apply one event, raising :class:`ProblemError` if it is refused."""
        plan = self.check(event)
        self.apply(event, plan)

    def check(self, event: Event) -> _Plan | None:
        expected = self.next_seq
        seq = event.get("seq")
        if seq != expected or type(seq) is not int:
            raise fail("SEQ_NOT_CONTIGUOUS", "SES-ENV-005",
                       f"event seq {seq!r} is not contiguous; expected {expected}", pointer="/seq")
        kind = event.get("type")
        if not (isinstance(kind, str) and kind in SURFACE_EVENT_TYPES):
            if "surfaceOp" in event:
                raise fail("SURFACE_NOT_ELIGIBLE", "SES-ENV-010",
                           f'event type "{kind}" is not surface-eligible and cannot carry surfaceOp',
                           pointer="/surfaceOp")
            if "sourceEventSeqs" in event:
                raise fail("SURFACE_NOT_ELIGIBLE", "SES-ENV-010",
                           f'event type "{kind}" is not surface-eligible and cannot carry '
                           "sourceEventSeqs", pointer="/sourceEventSeqs")
            return None
        if "surfaceOp" not in event:
            raise fail("SURFACE_OP_MISSING", "SES-ENV-011",
                       f'event type "{kind}" is surface-eligible and requires a surfaceOp',
                       pointer="/surfaceOp")
        op = event["surfaceOp"]
        if op == "append":
            _check_provenance(event, seq, ())
            return _Plan(seq=seq, start_index=len(self.nodes), shadowed=(), replace=None)
        if not isinstance(op, dict):
            raise fail("SURFACE_OP_INVALID", "SES-SURF-001",
                       f'event type "{kind}" carries an invalid surfaceOp (neither "append" '
                       "nor a replace object)", pointer="/surfaceOp")
        if (set(op) != {"op", "start", "end"} or op["op"] != "replace"
                or not is_nonneg_safe_int(op["start"]) or not is_nonneg_safe_int(op["end"])):
            raise fail("SURFACE_REPLACE_INVALID", "SES-SURF-002",
                       f'event type "{kind}" carries an invalid replace surfaceOp; expected '
                       "exactly {op:\"replace\", start, end} with non-negative safe integers",
                       pointer="/surfaceOp")
        start, end = op["start"], op["end"]
        start_index = self._position(start)
        if start_index is None:
            raise fail("SURFACE_REPLACE_START_NOT_FOUND", "SES-SURF-004",
                       f"surface replace: start seq {start} is not a current surface node",
                       pointer="/surfaceOp/start")
        end_index = self._position(end)
        if end_index is None:
            raise fail("SURFACE_REPLACE_END_NOT_FOUND", "SES-SURF-005",
                       f"surface replace: end seq {end} is not a current surface node",
                       pointer="/surfaceOp/end")
        if start_index > end_index:
            raise fail("SURFACE_REPLACE_REVERSED", "SES-SURF-006",
                       f"surface replace: start seq {start} (index {start_index}) is after end "
                       f"seq {end} (index {end_index})", pointer="/surfaceOp")
        shadowed = tuple(self.nodes[start_index:end_index + 1])
        _check_provenance(event, seq, shadowed)
        if kind == "tool/result":
            self._check_tool_rewrite(event, shadowed)
        return _Plan(seq=seq, start_index=start_index, shadowed=shadowed, replace=(start, end))

    def skip(self, seq: Any) -> None:
        """Count a refused event. A well-formed seq resynchronises the expected next seq, so
        one gap or duplicate is reported once, not for every later event."""
        if type(seq) is int and seq >= self.base_seq:
            self._count = seq - self.base_seq + 1
        else:
            self._count += 1

    def apply(self, event: Event, plan: _Plan | None) -> None:
        self._count += 1
        if plan is None:
            return
        if plan.replace is None:
            self.nodes.append(plan.seq)
        else:
            index = plan.start_index
            self.nodes[index:index + len(plan.shadowed)] = [plan.seq]
            self.replace_generation += 1
            for seq in plan.shadowed:
                del self._events[seq]
            self.shadowed.extend(plan.shadowed)
            self.replacements.append(
                Replacement(seq=plan.seq, start=plan.replace[0], end=plan.replace[1],
                            shadowed=plan.shadowed)
            )
        self._events[plan.seq] = event

    def _position(self, seq: int) -> int | None:
        if seq not in self._events:
            return None
        return self.nodes.index(seq)

    def _check_tool_rewrite(self, event: Event, shadowed: tuple[int, ...]) -> None:
        if len(shadowed) != 1:
            raise fail("TOOL_REWRITE_SPAN", "SES-TRW-001",
                       "tool/result surface replacement must rewrite exactly one current node",
                       pointer="/surfaceOp")
        original = self._events[shadowed[0]]
        if original.get("type") != "tool/result":
            raise fail("TOOL_REWRITE_TARGET", "SES-TRW-002",
                       "tool/result surface replacement must target a current tool/result",
                       pointer="/surfaceOp/start")
        if not json_equal(_without_inner_content(event.get("data")),
                          _without_inner_content(original.get("data"))):
            raise fail("TOOL_REWRITE_CHANGED", "SES-TRW-003",
                       "tool/result surface replacement may change only the tool-result "
                       "block's content", pointer="/data")


def _without_inner_content(data: Any) -> Any:
    """The data of a tool/result with ``message.content[0].content`` taken out."""
    try:
        message = data["message"]
        blocks = message["content"]
        first = {key: value for key, value in blocks[0].items() if key != "content"}
    except (KeyError, IndexError, TypeError, AttributeError):
        return data
    return {**data, "message": {**message, "content": [first, *blocks[1:]]}}


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality of JSON values with ECMAScript number semantics (``1 == 1.0``) and
    booleans kept apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys()
                and all(json_equal(a[k], b[k]) for k in a))
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b)
                and all(json_equal(x, y) for x, y in zip(a, b, strict=True)))
    if isinstance(b, (dict, list)):
        return False
    return bool(a == b)


def _check_provenance(event: Event, seq: int, must_cover: tuple[int, ...]) -> None:
    """SES-PROV-001..006, in DSH's order."""
    if "sourceEventSeqs" not in event:
        if must_cover:
            raise fail("PROVENANCE_MISSING_SHADOWED", "SES-PROV-006",
                       "surface replace: sourceEventSeqs must include every shadowed surface "
                       f"node; missing {', '.join(map(str, must_cover))}",
                       pointer="/sourceEventSeqs")
        return
    sources = event["sourceEventSeqs"]
    if not isinstance(sources, list):
        raise fail("PROVENANCE_NOT_ARRAY", "SES-PROV-001",
                   f"sourceEventSeqs on event at seq {seq} must be an array when present",
                   pointer="/sourceEventSeqs")
    if not sources and event.get("type") != "assistant/message":
        raise fail("PROVENANCE_EMPTY", "SES-PROV-002",
                   "sourceEventSeqs must not be empty except on assistant/message",
                   pointer="/sourceEventSeqs")
    for index, value in enumerate(sources):
        if not is_nonneg_safe_int(value):
            raise fail("PROVENANCE_ELEMENT", "SES-PROV-003",
                       f'event type "{event.get("type")}" sourceEventSeqs must densely contain '
                       "non-negative safe integers", pointer=f"/sourceEventSeqs/{index}")
    seen: set[int] = set()
    for index, value in enumerate(sources):
        if value in seen:
            raise fail("PROVENANCE_DUPLICATE", "SES-PROV-004",
                       f"sourceEventSeqs must not contain duplicates ({value} repeats)",
                       pointer=f"/sourceEventSeqs/{index}")
        seen.add(value)
    for index, value in enumerate(sources):
        if value >= seq:
            raise fail("PROVENANCE_NOT_EARLIER", "SES-PROV-005",
                       f"sourceEventSeqs must reference earlier events: {value} >= current "
                       f"seq {seq}", pointer=f"/sourceEventSeqs/{index}")
    missing = [s for s in must_cover if s not in seen]
    if missing:
        raise fail("PROVENANCE_MISSING_SHADOWED", "SES-PROV-006",
                   "surface replace: sourceEventSeqs must include every shadowed surface node; "
                   f"missing {', '.join(map(str, missing))}", pointer="/sourceEventSeqs")


def derive_message(event: Event) -> dict[str, Any] | None:
    """SES-DER-002..005: the message one current node contributes, if any."""
    kind = event.get("type")
    data = event.get("data")
    if kind == "user/message":
        return data if isinstance(data, dict) else None
    if kind in ("assistant/message", "tool/result") and isinstance(data, dict):
        message = data.get("message")
        if not isinstance(message, dict):
            return None
        if kind == "assistant/message" and message.get("content") == []:
            return None
        return message
    return None


def derive_messages(fold: SurfaceFold) -> list[dict[str, Any]]:
    """SES-DER-001: messages of the current surface, in surface order."""
    out = []
    for seq in fold.nodes:
        message = derive_message(fold.event(seq))
        if message is not None:
            out.append(message)
    return out


def fold_events(events: list[Event], base_seq: int = 0) -> SurfaceFold:
    """Fold a whole list of events (raising on the first refused one)."""
    fold = SurfaceFold(base_seq=base_seq)
    for event in events:
        fold.push(event)
    return fold


__all__ = ["ProblemError", "Replacement", "SurfaceFold", "derive_message", "derive_messages",
           "fold_events", "json_equal"]
