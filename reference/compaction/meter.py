"""The step pairing the token meter replays before it prices a log (spec chapter
``compaction/tokens``, CMP-TOK-008)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import CompactionError

_STEP_EVENTS = frozenset({"step/start", "step/end", "assistant/message"})


def check_meter_steps(events: Iterable[Any]) -> None:
    """Refuse (``CMP_LOG_INVALID``) a log whose steps the meter cannot replay: a ``step/start``
    while a step is open, or a ``step/end`` or ``assistant/message`` whose ``turn`` and
    ``step`` are not the open step's."""
    open_step: tuple[Any, Any] | None = None
    for event in events:
        kind = event.get("type") if isinstance(event, dict) else None
        if kind not in _STEP_EVENTS:
            continue
        data = event.get("data")
        key = (data.get("turn"), data.get("step")) if isinstance(data, dict) else (None, None)
        seq = event.get("seq")
        if kind == "step/start":
            if open_step is not None:
                _refuse(seq, f"step/start at seq {seq} arrived before turn {open_step[0]}/"
                             f"step {open_step[1]} ended")
            open_step = key
            continue
        if open_step != key:
            _refuse(seq, f"{kind} at seq {seq} has no matching step/start event")
        if kind == "step/end":
            open_step = None


def _refuse(seq: Any, message: str) -> None:
    raise CompactionError("CMP_LOG_INVALID", "CMP-TOK-008",
                          f"the token meter cannot price this log: {message}", seq=seq)


__all__ = ["check_meter_steps"]
