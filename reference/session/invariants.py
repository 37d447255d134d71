"""Core enclosure invariants (spec chapter ``session/invariants``, DSH layer L2).

A small state machine over turns, steps and the current step's pending tool calls. It is a
prefix property: an open turn at the end of the log is fine, repair closes it.
"""

from __future__ import annotations

from typing import Any

from ..problems import ProblemError, fail

Event = dict[str, Any]

_STEP_SCOPED = ("step/end", "assistant/chunk", "assistant/message", "tool/call")
_TURN_ENCLOSED = ("todo/write", "request/header", "request/context")


class EnclosureTrace:
    """The enclosure invariants' state: the next turn and step, the open ones, the tool calls
    awaiting a result. (A plain class, as :class:`~.surface.SurfaceFold` is.)"""

    def __init__(self) -> None:
        self.next_turn = 1
        self.next_step = 1
        self.open_turn: int | None = None
        self.open_step: int | None = None
        self.pending_calls: set[str] = set()

    def push(self, event: Event) -> None:
        """Check one event against the trace and advance it (raises on violation)."""
        problem = self.check(event)
        if problem is not None:
            raise problem
        self.advance(event)

    def check(self, event: Event) -> ProblemError | None:
        kind = event.get("type")
        data = event.get("data")
        d: dict[str, Any] = data if isinstance(data, dict) else {}
        if kind == "turn/start":
            turn = _number(d.get("turn"))
            if self.open_turn is not None:
                return fail("INVARIANT_TURN_ALREADY_OPEN", "SES-ENC-002",
                            f"turn/start {turn} while turn {self.open_turn} is still open",
                            pointer="/data/turn")
            if turn != self.next_turn:
                return fail("INVARIANT_TURN_NUMBER", "SES-ENC-001",
                            f"turn/start expected turn {self.next_turn}, got {_s(turn)}",
                            pointer="/data/turn")
        elif kind == "turn/end":
            turn = _number(d.get("turn"))
            if self.open_turn is None or turn != self.open_turn:
                return fail("INVARIANT_TURN_END_MISMATCH", "SES-ENC-003",
                            f"turn/end {_s(turn)} does not match open turn {_s(self.open_turn)}",
                            pointer="/data/turn")
            if self.open_step is not None:
                return fail("INVARIANT_STEP_STILL_OPEN", "SES-ENC-004",
                            f"turn/end {turn} while step {self.open_step} is still open",
                            pointer="/data/turn")
        elif kind == "step/start":
            turn, step = _number(d.get("turn")), _number(d.get("step"))
            if self.open_turn is None or turn != self.open_turn:
                return fail("INVARIANT_STEP_TURN_MISMATCH", "SES-ENC-005",
                            f"step/start in turn {_s(turn)} but open turn is "
                            f"{_s(self.open_turn)}", pointer="/data/turn")
            if self.open_step is not None:
                return fail("INVARIANT_STEP_ALREADY_OPEN", "SES-ENC-006",
                            f"step/start {_s(step)} while step {self.open_step} is still open",
                            pointer="/data/step")
            if step != self.next_step:
                return fail("INVARIANT_STEP_NUMBER", "SES-ENC-007",
                            f"step/start expected step {self.next_step} in turn {turn}, "
                            f"got {_s(step)}", pointer="/data/step")
        elif kind in _STEP_SCOPED:
            problem = self._scope(kind, d)
            if problem is not None:
                return problem
        elif kind == "tool/result":
            if event.get("surfaceOp") == "append":
                problem = self._scope(kind, d)
                if problem is not None:
                    return problem
                call_id = _call_id(d)
                if call_id not in self.pending_calls and not _not_started(d):
                    return fail("INVARIANT_TOOL_RESULT_UNPAIRED", "SES-ENC-009",
                                f"tool/result for {_s(call_id)} with no prior tool/call in this "
                                "step", pointer="/data/message/source/callId")
            elif self.open_turn is None:
                return fail("INVARIANT_REPLACE_OUTSIDE_TURN", "SES-ENC-010",
                            "tool/result surface replacement appended outside any open turn")
        elif kind in _TURN_ENCLOSED and self.open_turn is None:
            return fail("INVARIANT_OUTSIDE_TURN", "SES-ENC-011",
                        f"{kind} appended outside any open turn (core execution events must be "
                        "turn-enclosed)")
        return None

    def _scope(self, kind: str, d: dict[str, Any]) -> ProblemError | None:
        turn, step = _number(d.get("turn")), _number(d.get("step"))
        if self.open_turn is None or self.open_step is None or turn != self.open_turn \
                or step != self.open_step:
            return fail("INVARIANT_STEP_SCOPE", "SES-ENC-008",
                        f"{kind} names turn {_s(turn)}/step {_s(step)} but open is turn "
                        f"{_s(self.open_turn)}/step {_s(self.open_step)}", pointer="/data")
        return None

    def advance(self, event: Event) -> None:
        kind = event.get("type")
        data = event.get("data")
        d: dict[str, Any] = data if isinstance(data, dict) else {}
        if kind == "turn/start":
            self.open_turn = d["turn"]
            self.next_turn += 1
            self.next_step = 1
        elif kind == "turn/end":
            self.open_turn = None
        elif kind == "step/start":
            self.open_step = d["step"]
            self.next_step += 1
            self.pending_calls.clear()
        elif kind == "step/end":
            self.open_step = None
            self.pending_calls.clear()
        elif kind == "tool/call":
            call_id = d.get("callId")
            if isinstance(call_id, str):
                self.pending_calls.add(call_id)
        elif kind == "tool/result" and event.get("surfaceOp") == "append":
            self.pending_calls.discard(_call_id(d) or "")


def _call_id(d: dict[str, Any]) -> str | None:
    message = d.get("message")
    source = message.get("source") if isinstance(message, dict) else None
    call_id = source.get("callId") if isinstance(source, dict) else None
    return call_id if isinstance(call_id, str) else None


def _not_started(d: dict[str, Any]) -> bool:
    """The synthetic repair result for a call that never started is exempt from pairing."""
    error = d.get("error")
    message = d.get("message")
    try:
        first_error = message["content"][0]["isError"] is True  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        first_error = False
    return first_error and isinstance(error, dict) and error.get("code") == "TOOL_NOT_STARTED"


class _Boolean:
    """A turn or step written as ``true`` or ``false``: equal to no number. Python has
    ``True == 1``; DSH compares with ``!==``, and a mistyped member never matches."""

    __slots__ = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]

    def __str__(self) -> str:
        return "true" if self.value else "false"


def _number(value: Any) -> Any:
    """``value``, except that a boolean becomes a value equal to no number."""
    return _Boolean(value) if isinstance(value, bool) else value


def _s(value: Any) -> str:
    return "null" if value is None else str(value)
