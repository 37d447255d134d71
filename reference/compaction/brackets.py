"""The compaction bracket companion (spec chapter ``compaction/brackets``).

A small state machine over the log: the open turn and the open compaction bracket. Every
``compaction/start``, ``compaction/summary``, ``compaction/end``, every checkpoint replacement
and every turn boundary is checked against it before it is absorbed; a refused event leaves
the state unchanged. ``session/end-seed`` clears an open bracket.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..session.checks import is_nonneg_safe_int
from .checkpoint import is_checkpoint_source
from .errors import CompactionError

Event = dict[str, Any]
_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Bracket:
    compaction_id: str
    source_command_id: Any  # a string, or _MISSING when absent
    start_seq: int
    turn: int | None
    summarized: bool = False


def _err(code: str, requirement: str, message: str) -> CompactionError:
    return CompactionError(code, requirement, message)


def _require_id(value: Any, label: str) -> None:
    if not isinstance(value, str) or value == "":
        raise _err("CMP_BRACKET_ID", "CMP-BRK-002", f"{label} must be a non-empty string")


def _same_command(kind: str, data: dict[str, Any], bracket: Bracket) -> None:
    value = data.get("sourceCommandId", _MISSING)
    if value is not _MISSING:
        _require_id(value, f"{kind} sourceCommandId")
    if value != bracket.source_command_id:
        shown = "absent" if value is _MISSING else repr(value)
        wanted = ("absent" if bracket.source_command_id is _MISSING
                  else repr(bracket.source_command_id))
        raise _err("CMP_BRACKET_COMMAND_MISMATCH", "CMP-BRK-004",
                   f"{kind} sourceCommandId {shown} does not match the compaction/start "
                   f"sourceCommandId {wanted}")


def _owner_agrees(owner: int | None, open_turn: int | None, kind: str) -> None:
    if owner is None:
        if open_turn is not None:
            raise _err("CMP_BRACKET_OWNER", "CMP-BRK-003",
                       f"{kind} is standalone but turn {open_turn} is open")
        return
    if open_turn is None:
        raise _err("CMP_BRACKET_OWNER", "CMP-BRK-003",
                   f"{kind} for turn {owner} appended outside any open turn")
    if owner != open_turn:
        raise _err("CMP_BRACKET_OWNER", "CMP-BRK-003",
                   f"{kind} names turn {owner} but the open turn is {open_turn}")


def _data(event: Event) -> dict[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


def is_checkpoint_event(event: Event) -> bool:
    """A ``user/message`` replacement whose source carries the checkpoint marker."""
    op = event.get("surfaceOp")
    return (event.get("type") == "user/message" and isinstance(op, dict)
            and is_checkpoint_source(_data(event).get("source")))


@dataclass
class BracketTrace:
    """Open turn and open bracket, checked and advanced one event at a time."""

    open_turn: int | None = None
    bracket: Bracket | None = None
    stale_starts: frozenset[int] = field(default_factory=frozenset)

    def check(self, event: Event, *, replay: bool = False) -> Bracket | bool | None:
        """Check one event; returns the bracket state after it (``False``: no change).

        With ``replay`` (checking a stored log from its start), a bracket that a later
        ``session/end-seed`` proves stale does not refuse turn boundaries (CMP-BRK-009).
        """
        kind = event.get("type")
        if kind in ("turn/start", "turn/end") and self.bracket is not None and not (
                replay and self.bracket.start_seq in self.stale_starts):
            owner = ("standalone compaction" if self.bracket.turn is None
                     else f"compaction for turn {self.bracket.turn}")
            raise _err("CMP_BRACKET_CROSSED", "CMP-BRK-008",
                       f"{kind} cannot cross an open {owner}")
        if kind == "session/end-seed":
            return None
        if is_checkpoint_event(event):
            self._check_checkpoint(event)
            return False
        if kind == "compaction/start":
            return self._start(event)
        if kind == "compaction/summary":
            return self._summary(event)
        if kind == "compaction/end":
            self._end(event)
            return None
        return False

    def push(self, event: Event, *, replay: bool = False) -> None:
        after = self.check(event, replay=replay)
        if after is not False:
            self.bracket = after if isinstance(after, Bracket) else None
        kind = event.get("type")
        if kind == "turn/start":
            turn = _data(event).get("turn")
            self.open_turn = turn if type(turn) is int else None
        elif kind == "turn/end":
            self.open_turn = None

    def _start(self, event: Event) -> Bracket:
        data = _data(event)
        _require_id(data.get("compactionId"), "compaction/start compactionId")
        command = data.get("sourceCommandId", _MISSING)
        if command is not _MISSING:
            _require_id(command, "compaction/start sourceCommandId")
        if self.bracket is not None:
            owner = ("standalone compaction" if self.bracket.turn is None
                     else f"turn {self.bracket.turn}")
            raise _err("CMP_BRACKET_NESTED", "CMP-BRK-001",
                       f"compaction/start while {owner} is still compacting")
        turn = data.get("turn")
        owner_turn = turn if type(turn) is int else None
        if turn is not None and owner_turn is None:
            raise _err("CMP_BRACKET_OWNER", "CMP-BRK-003",
                       "compaction/start turn must be a turn number or null")
        _owner_agrees(owner_turn, self.open_turn, "compaction/start")
        return Bracket(compaction_id=data["compactionId"], source_command_id=command,
                       start_seq=int(event.get("seq", 0)), turn=owner_turn)

    def _open(self, kind: str, data: dict[str, Any]) -> Bracket:
        _require_id(data.get("compactionId"), f"{kind} compactionId")
        command = data.get("sourceCommandId", _MISSING)
        if command is not _MISSING:
            _require_id(command, f"{kind} sourceCommandId")
        bracket = self.bracket
        if bracket is None:
            raise _err("CMP_BRACKET_NOT_OPEN", "CMP-BRK-004",
                       f"{kind} has no matching compaction/start")
        if data["compactionId"] != bracket.compaction_id:
            raise _err("CMP_BRACKET_ID_MISMATCH", "CMP-BRK-004",
                       f"{kind} id {data['compactionId']} does not match compaction/start id "
                       f"{bracket.compaction_id}")
        _same_command(kind, data, bracket)
        return bracket

    def _summary(self, event: Event) -> Bracket:
        data = _data(event)
        bracket = self._open("compaction/summary", data)
        _owner_agrees(bracket.turn, self.open_turn, "compaction/summary")
        if bracket.summarized:
            raise _err("CMP_BRACKET_SUMMARY_REPEATED", "CMP-BRK-005",
                       "compaction/summary repeated within one compaction")
        seqs = data.get("shadowedSeqs")
        span = data.get("shadowedRange")
        if not isinstance(seqs, list) or not seqs:
            raise _err("CMP_BRACKET_SHADOWED", "CMP-BRK-006",
                       "compaction/summary shadowedSeqs must be non-empty")
        if (not isinstance(span, dict) or seqs[0] != span.get("start")
                or seqs[-1] != span.get("end")):
            raise _err("CMP_BRACKET_SHADOWED", "CMP-BRK-006",
                       "compaction/summary shadowedRange must match the first and last "
                       "shadowedSeqs")
        if not is_nonneg_safe_int(data.get("shadowedTokenCount")):
            raise _err("CMP_BRACKET_SHADOWED", "CMP-BRK-006",
                       "compaction/summary shadowedTokenCount must be a non-negative safe "
                       "integer")
        return Bracket(bracket.compaction_id, bracket.source_command_id, bracket.start_seq,
                       bracket.turn, summarized=True)

    def _end(self, event: Event) -> None:
        data = _data(event)
        bracket = self._open("compaction/end", data)
        turn = data.get("turn", _MISSING)
        if turn != bracket.turn or type(turn) not in (int, type(None)):
            raise _err("CMP_BRACKET_OWNER", "CMP-BRK-007",
                       f"compaction/end owner {turn!r} does not match the compaction/start owner "
                       f"{bracket.turn!r}")
        _owner_agrees(bracket.turn, self.open_turn, "compaction/end")
        if "error" not in data and not bracket.summarized:
            raise _err("CMP_BRACKET_UNSUMMARIZED", "CMP-BRK-007",
                       "successful compaction/end requires one compaction/summary")

    def _check_checkpoint(self, event: Event) -> None:
        source = _data(event).get("source")
        assert isinstance(source, dict)
        _require_id(source.get("compactionId"), "compaction checkpoint compactionId")
        if "sourceCommandId" in source:
            _require_id(source["sourceCommandId"], "compaction checkpoint sourceCommandId")
        bracket = self.bracket
        if bracket is None:
            raise _err("CMP_BRACKET_NOT_OPEN", "CMP-CKP-005",
                       "compaction checkpoint has no matching compaction/start")
        if source["compactionId"] != bracket.compaction_id:
            raise _err("CMP_BRACKET_ID_MISMATCH", "CMP-CKP-005",
                       f"compaction checkpoint id {source['compactionId']} does not match "
                       f"compaction/start id {bracket.compaction_id}")
        _same_command("compaction checkpoint", source, bracket)


def stale_starts(events: Sequence[Event]) -> frozenset[int]:
    """Seqs of starts left unmatched when a later ``session/end-seed`` closed them."""
    stale: set[int] = set()
    open_seq: int | None = None
    for event in events:
        kind = event.get("type")
        if kind == "compaction/start":
            open_seq = event.get("seq")
        elif kind == "compaction/end":
            open_seq = None
        elif kind == "session/end-seed":
            if open_seq is not None:
                stale.add(open_seq)
            open_seq = None
    return frozenset(stale)


def check_brackets(events: Iterable[Event]) -> BracketTrace:
    """Replay a stored log through the companion; raises the first refusal, with its seq."""
    listed = list(events)
    trace = BracketTrace(stale_starts=stale_starts(listed))
    for index, event in enumerate(listed):
        try:
            trace.push(event, replay=True)
        except CompactionError as exc:
            seq = event.get("seq", index)
            exc.detail.setdefault("seq", seq)
            raise
    return trace


__all__ = ["Bracket", "BracketTrace", "check_brackets", "is_checkpoint_event", "stale_starts"]
