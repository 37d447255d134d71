"""Event windows and replacement traces over one raw log (QRY-READ-*, QRY-TRC-*)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..session.checks import is_nonneg_safe_int
from .documents import Event, EventRecord, build_records, fold_log
from .errors import EVENT_NOT_FOUND, INVALID_WINDOW, SessionQueryError

READ_WINDOW_MAX = 50


@dataclass(frozen=True, slots=True)
class EventTrace:
    target: EventRecord
    replaced_by: int | None
    replacement_chain: tuple[int, ...]
    replaced_event_seqs: tuple[int, ...]
    source_event_seqs: tuple[int, ...]
    derived_event_seqs: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.target.to_json()}
        if self.replaced_by is not None:
            out["replacedBy"] = self.replaced_by
        out.update({"replacementChain": list(self.replacement_chain),
                    "replacedEventSeqs": list(self.replaced_event_seqs),
                    "sourceEventSeqs": list(self.source_event_seqs),
                    "derivedEventSeqs": list(self.derived_event_seqs)})
        return out


def _missing(session_id: str, seq: Any) -> SessionQueryError:
    return SessionQueryError(EVENT_NOT_FOUND, f'session "{session_id}" has no event at seq {seq}')


def trace_event(session_id: str, events: Sequence[Event], seq: int) -> EventTrace:
    """Who replaced the target, what it replaced, what it cites and what cites it."""
    records = build_records(session_id, events)
    if not (isinstance(seq, int) and 0 <= seq < len(records)):
        raise _missing(session_id, seq)
    fold = fold_log(events)
    replaced_by: dict[int, int] = {}
    replaced: dict[int, tuple[int, ...]] = {}
    for replacement in fold.replacements:
        replaced[replacement.seq] = replacement.shadowed
        for shadowed in replacement.shadowed:
            replaced_by[shadowed] = replacement.seq
    chain: list[int] = []
    cursor = replaced_by.get(seq)
    while cursor is not None:
        chain.append(cursor)
        cursor = replaced_by.get(cursor)
    sources = events[seq].get("sourceEventSeqs")
    derived = [int(e["seq"]) for e in events[seq + 1:]
               if isinstance(e.get("sourceEventSeqs"), list) and seq in e["sourceEventSeqs"]]
    return EventTrace(target=records[seq], replaced_by=replaced_by.get(seq),
                      replacement_chain=tuple(chain),
                      replaced_event_seqs=tuple(replaced.get(seq, ())),
                      source_event_seqs=tuple(sources) if isinstance(sources, list) else (),
                      derived_event_seqs=tuple(derived))


@dataclass(frozen=True, slots=True)
class EventWindow:
    session_id: str
    target: Event
    events: tuple[Event, ...]
    records: tuple[EventRecord, ...]
    start_seq: int
    end_seq: int

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "target": self.target,
                "events": list(self.events), "records": [r.to_json() for r in self.records],
                "startSeq": self.start_seq, "endSeq": self.end_seq}


def _window_bound(name: str, value: Any, maximum: int) -> int:
    if value is None:
        return 0
    if not is_nonneg_safe_int(value) or value > maximum:
        raise SessionQueryError(INVALID_WINDOW,
                                f"{name} must be an integer between 0 and {maximum}")
    return int(value)


def read_event(session_id: str, events: Sequence[Event], seq: Any, before: Any = None,
               after: Any = None, window_max: int = READ_WINDOW_MAX) -> EventWindow:
    """The target event and up to ``before``/``after`` neighbours (QRY-READ-001..003)."""
    lower = _window_bound("before", before, window_max)
    upper = _window_bound("after", after, window_max)
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < len(events):
        raise _missing(session_id, seq)
    records = build_records(session_id, events)
    start, end = max(0, seq - lower), min(len(events) - 1, seq + upper)
    return EventWindow(session_id=session_id, target=events[seq],
                       events=tuple(events[start:end + 1]),
                       records=tuple(records[start:end + 1]), start_seq=start, end_seq=end)
