"""The manual verb (``/compact``) and its closed set of outcomes (spec chapter
``compaction/failures``), plus the context-overflow retry decision."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import CompactionError
from .planner import plan
from .summarizer import Summarizer
from .transaction import DuringSummary

Event = dict[str, Any]
CONTEXT_WINDOW_EXCEEDED = "CONTEXT_WINDOW_EXCEEDED"

#: CMP-FAIL-004: the manual error codes.
MANUAL_CODES = ("busy", "cancelled", "changed", "summary", "commit", "persistence")

#: CMP-FAIL-006: dshkit's wording of the command's answers (DSH's own wording differs).
COMMAND_TEXT = {
    "usage": "Usage: /compact (takes no arguments)",
    "nothing": "Nothing to compact yet.",
    "busy": "Compaction is not available now: a compaction is running or the agent is busy.",
    "cancelled": "Compaction was cancelled.",
    "changed": "The selected history changed before it could be replaced; the conversation "
               "is unchanged and the attempt is recorded in the log.",
    "summary": "No usable summary could be produced; the conversation is unchanged and the "
               "attempt is recorded in the log.",
    "commit": "Compaction did not finish cleanly; check the session before trying again.",
    "persistence": "Compaction finished, but the session could not be saved.",
}


@dataclass
class ManualOutcome:
    """``result`` on success, ``None`` when there was nothing to compact; ``error`` holds the
    manual error code otherwise. ``events`` are the events appended in every case."""

    events: list[Event] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None

    def command_text(self) -> tuple[str, str]:
        """The result kind (``success`` / ``error``) and the text ``/compact`` answers with."""
        if self.error is not None:
            return "error", COMMAND_TEXT[self.error["code"]]
        if self.result is None:
            return "success", COMMAND_TEXT["nothing"]
        count = len(self.result["shadowedSeqs"])
        tokens = self.result["shadowedTokenCount"]
        return "success", f"Compacted {count} history items (about {tokens} tokens)."

    def to_json(self) -> dict[str, Any]:
        kind, text = self.command_text()
        return {"events": self.events, "result": self.result, "error": self.error,
                "command": {"kind": kind, "text": text}}


def compact_now(events: Sequence[Event], summarizer: Summarizer, *,
                source_command_id: str | None = None,
                flush: Callable[[], None] | None = None,
                during_summary: DuringSummary | None = None,
                compaction_ids: Sequence[str] = (), message_ids: Sequence[str] = (),
                time: int | None = None) -> ManualOutcome:
    """CMP-TRG-003 / CMP-FAIL-004: run the manual verb and classify its outcome. ``flush``
    stands for the durability checkpoint after a closed bracket; if it raises, a successful
    compaction reports ``persistence``."""
    try:
        planned = plan(events, trigger="manual", prune=None, summarizer=summarizer,
                       source_command_id=source_command_id, compaction_ids=compaction_ids,
                       message_ids=message_ids, time=time, during_summary=during_summary)
    except CompactionError as exc:
        if exc.code == "CMP_BUSY":
            return ManualOutcome(error={"code": "busy", "message": exc.message})
        raise
    outcome = ManualOutcome(events=list(planned.events))
    flush_error: str | None = None
    if planned.events and flush is not None:
        try:
            flush()
        except Exception as exc:  # the flush is the caller's; any failure is "persistence"
            flush_error = str(exc) or type(exc).__name__
    if planned.failure is not None:
        outcome.error = {"code": planned.failure.kind, "message": planned.failure.message}
        return outcome
    if flush_error is not None:
        outcome.error = {"code": "persistence", "message": flush_error}
        return outcome
    outcome.result = planned.compactions[0] if planned.compactions else None
    return outcome


def overflow_retry(code: str, *, aborted: bool, retries: int, max_retries: int,
                   generation_before: int | None = None, generation_after: int | None = None,
                   threw: bool = False, has_target: bool = True) -> dict[str, Any]:
    """CMP-TRG-002: whether a context-overflow failure is retried after recovery.

    Only ``CONTEXT_WINDOW_EXCEEDED`` qualifies, and only while the request is not cancelled,
    a routed target exists and fewer than ``max_retries`` retries were made. The retry is
    authorised only if the recovery advanced the surface's replace generation, even when the
    recovery then threw (a prune landed before the summary failed); otherwise the original
    error is delegated.
    """
    if code != CONTEXT_WINDOW_EXCEEDED or aborted or not has_target or retries >= max_retries:
        return {"action": "delegate"}
    if generation_before is None or generation_after is None:
        return {"action": "delegate"}
    if generation_after > generation_before:
        return {"action": "retry", "retries": retries + 1}
    return {"action": "delegate"}


__all__ = ["COMMAND_TEXT", "CONTEXT_WINDOW_EXCEEDED", "MANUAL_CODES", "ManualOutcome",
           "compact_now", "overflow_retry"]
