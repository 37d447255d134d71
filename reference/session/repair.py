"""Crash repair: the closer events for an unclosed turn (spec chapter ``session/repair``).

:class:`RepairTracker` watches events go by in constant memory (bounded by the open step's
tool calls) and can produce the closers at any point.
"""

from __future__ import annotations

from typing import Any

Event = dict[str, Any]

TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"

NOT_STARTED_TEXT = (
    "The tool call was interrupted before the Harness recorded it as started. "
    "Retry it if it is still needed."
)
OUTCOME_UNKNOWN_TEXT = (
    "The tool call was interrupted after it was recorded, but no result was durably recorded. "
    "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
    "operation is read-only or idempotent; if it may have side effects, first verify external "
    "state or ask the user. Do not retry blindly."
)


class Pending:
    """A tool call awaiting its result: its step and the seq of the call."""

    __slots__ = ("call_seq", "step")

    def __init__(self, step: Any, call_seq: int | None = None) -> None:
        self.step = step
        self.call_seq = call_seq


class RepairTracker:
    """What the repair closers of an unclosed turn are made from (a plain class, as
    :class:`~.surface.SurfaceFold` is)."""

    def __init__(self) -> None:
        self.open_turn: Any = None
        self.open_step: Any = None
        self.pending: dict[str, Pending] = {}
        self.last_seq: int | None = None
        self.last_time: int | None = None

    def push(self, event: Event) -> None:
        kind = event.get("type")
        data = event.get("data")
        d: dict[str, Any] = data if isinstance(data, dict) else {}
        self.last_seq = event.get("seq")
        self.last_time = event.get("time")
        if kind == "turn/start":
            self.open_turn = d.get("turn")
            self.open_step = None
            self.pending.clear()
        elif kind == "turn/end":
            self.open_turn = None
            self.open_step = None
            self.pending.clear()
        elif kind == "step/start":
            self.open_step = d.get("step")
        elif kind == "step/end":
            self.pending.clear()
            self.open_step = None
        elif kind == "assistant/message":
            message = d.get("message")
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool-call":
                    call_id = block.get("id")
                    if isinstance(call_id, str):
                        # A repeated id overwrites the entry but keeps its first position.
                        self.pending[call_id] = Pending(step=d.get("step"))
        elif kind == "tool/call":
            call_id = d.get("callId")
            if isinstance(call_id, str) and call_id in self.pending:
                self.pending[call_id].call_seq = event.get("seq")
        elif kind == "tool/result":
            message = d.get("message")
            source = message.get("source") if isinstance(message, dict) else None
            call_id = source.get("callId") if isinstance(source, dict) else None
            if isinstance(call_id, str):
                self.pending.pop(call_id, None)

    @property
    def balanced(self) -> bool:
        return self.open_turn is None

    def closers(self) -> list[Event]:
        """SES-REP-001..007: the events that close the open turn, or ``[]``."""
        if self.open_turn is None or self.last_seq is None:
            return []
        seq = self.last_seq + 1
        time = self.last_time
        out: list[Event] = []
        for call_id, pending in self.pending.items():
            started = pending.call_seq is not None
            error = (
                {"name": "ToolOutcomeUnknownError", "code": TOOL_OUTCOME_UNKNOWN}
                if started
                else {"name": "ToolNotStartedError", "code": TOOL_NOT_STARTED}
            )
            text = OUTCOME_UNKNOWN_TEXT if started else NOT_STARTED_TEXT
            event: Event = {
                "type": "tool/result",
                "seq": seq,
                "time": time,
                "data": {
                    "turn": self.open_turn,
                    "step": pending.step,
                    "message": {
                        "id": f"interrupted-tool-result-{call_id}-{seq}",
                        "role": "user",
                        "source": {"kind": "tool", "callId": call_id},
                        "content": [
                            {
                                "type": "tool-result",
                                "toolCallId": call_id,
                                "isError": True,
                                "content": [{"type": "text", "text": text}],
                            }
                        ],
                    },
                    "error": error,
                },
                "surfaceOp": "append",
            }
            if started:
                event["sourceEventSeqs"] = [pending.call_seq]
            out.append(event)
            seq += 1
        if self.open_step is not None:
            out.append({"type": "step/end", "seq": seq, "time": time,
                        "data": {"turn": self.open_turn, "step": self.open_step}})
            seq += 1
        out.append({"type": "turn/end", "seq": seq, "time": time,
                    "data": {"turn": self.open_turn, "reason": {"kind": "interrupted"}}})
        return out


def interrupted_turn_closers(events: list[Event]) -> list[Event]:
    """The closers for a whole log held in memory."""
    tracker = RepairTracker()
    for event in events:
        tracker.push(event)
    return tracker.closers()
