"""One compaction transaction, simulated on a :class:`LogView` (spec chapter
``compaction/events`` and ``compaction/failures``).

Order of appends: ``compaction/start``, then (after the summarizer) ``compaction/summary``, the
checkpoint ``user/message`` that replaces the span, and ``compaction/end``. Any failure after
the start appends exactly one ``compaction/end`` carrying ``error`` and leaves the surface
unchanged.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..json import codec as jsoncodec
from ..text import js_trim
from .checkpoint import CHECKPOINT_PREAMBLE, checkpoint_message
from .errors import CompactionError
from .region import validate_region
from .summarizer import Summarizer, SummaryFailure, SummaryRequest, SummaryResult
from .tokens import estimate_message
from .view import LogView, PricedNode

Event = dict[str, Any]
#: Called after the summarizer returned and before the stability check; returns events to
#: append in the meantime (what other writers did while the summary was pending).
DuringSummary = Callable[[LogView], Sequence[Event]]

_NAMESPACE = uuid.UUID("6f1d7c1e-3b8a-4d52-9a57-2c3e5d0f4b21")


class IdSource:
    """Compaction and message ids: the caller's, in order, then ids derived deterministically
    from the log (a UUID version 5 of the log's length, its last event and the seq)."""

    def __init__(self, events: Sequence[Event], compaction_ids: Sequence[str] = (),
                 message_ids: Sequence[str] = ()) -> None:
        self._compaction = list(compaction_ids)
        self._message = list(message_ids)
        last = jsoncodec.dumps(events[-1]) if events else ""
        self._key = hashlib.sha256(f"{len(events)}:{last}".encode()).hexdigest()

    def _derive(self, kind: str, seq: int) -> str:
        return str(uuid.uuid5(_NAMESPACE, f"{self._key}:{kind}:{seq}"))

    def compaction_id(self, seq: int) -> str:
        return self._compaction.pop(0) if self._compaction else self._derive("compaction", seq)

    def message_id(self, seq: int) -> str:
        return self._message.pop(0) if self._message else self._derive("message", seq)


@dataclass(frozen=True, slots=True)
class Failure:
    """A transaction that closed with ``error``: ``kind`` is ``summary`` (the summarizer failed,
    returned nothing usable or a summary that does not shrink) or ``changed`` (the span moved
    while the summary was pending)."""

    kind: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


@dataclass
class Outcome:
    events: list[Event] = field(default_factory=list)
    result: dict[str, Any] | None = None
    failure: Failure | None = None
    framed_tokens: int | None = None


class _Changed(Exception):
    pass


def _event(view: LogView, kind: str, data: Any, time: int, **extra: Any) -> Event:
    event: Event = {"type": kind, "seq": view.next_seq, "time": time, "data": data}
    event.update(extra)
    view.push(event)
    return event


def _text_summary(result: Any) -> tuple[dict[str, Any], ...]:
    """CMP-EVT-004: keep the text blocks; refuse images and a summary with no visible text."""
    if not isinstance(result, SummaryResult):
        raise SummaryFailure("the summarizer returned no result")
    blocks = [b for b in result.summary if isinstance(b, dict)]
    if any(b.get("type") == "image" for b in blocks):
        raise SummaryFailure("the summary contains an image block, which a checkpoint cannot "
                             "carry")
    text = tuple(b for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))
    if not any(js_trim(b["text"]) for b in text):
        raise SummaryFailure("summarization produced no text summary content")
    return text


def run_transaction(view: LogView, start: int, end: int, summarizer: Summarizer, *,
                    owner: int | None, ids: IdSource, time: int,
                    source_command_id: str | None = None, stability: str = "whole-surface",
                    during_summary: DuringSummary | None = None,
                    preamble: str = CHECKPOINT_PREAMBLE) -> Outcome:
    """Append one transaction to ``view``; refusals before the start raise
    :class:`CompactionError`, later failures are recorded in the outcome."""
    bounds = view.boundaries()
    i, j = validate_region(bounds, start, end)
    if view.busy:
        raise CompactionError("CMP_BUSY", "CMP-LCK-002",
                              "a compaction is already in progress (unmatched compaction/start)")
    outcome = Outcome()
    compaction_id = ids.compaction_id(view.next_seq)
    lifecycle: dict[str, Any] = {"compactionId": compaction_id}
    if source_command_id is not None:
        lifecycle["sourceCommandId"] = source_command_id
    lifecycle["turn"] = owner
    start_event = _event(view, "compaction/start", dict(lifecycle), time)
    outcome.events.append(start_event)

    measured = view.measure()
    selected = measured.nodes[i:j + 1]
    shadowed = tuple(n.seq for n in selected)
    shadowed_tokens = sum(n.tokens for n in selected)
    header = view.header or {}
    request = SummaryRequest(
        compaction_id=compaction_id, shadowed_seqs=shadowed,
        messages=tuple(view.messages_of(shadowed)), system=header.get("system"),
        tools=tuple(header["tools"]) if "tools" in header else None, target=view.target())
    try:
        result = summarizer.summarize(request)
        summary = _text_summary(result)
        checkpoint = checkpoint_message(ids.message_id(view.next_seq + 1), summary,
                                        compaction_id, source_command_id, preamble)
        framed = estimate_message(checkpoint)
        outcome.framed_tokens = framed
        if during_summary is not None:
            for extra in during_summary(view):
                outcome.events.append(_event(view, str(extra["type"]), extra.get("data"),
                                             int(extra.get("time", time)), **{
                                                 k: v for k, v in extra.items()
                                                 if k not in ("type", "seq", "time", "data")}))
        if framed >= shadowed_tokens:
            raise SummaryFailure(f"summary is not smaller than the shadowed content ({framed} "
                                 f"estimated framed tokens >= {shadowed_tokens})")
        _check_stable(view, stability, start, end, shadowed, selected, measured.nodes)
    except (SummaryFailure, _Changed) as exc:
        kind = "changed" if isinstance(exc, _Changed) else "summary"
        outcome.failure = Failure(kind=kind, message=str(exc))
        outcome.events.append(_event(view, "compaction/end",
                                     {**lifecycle, "error": str(exc)}, time))
        return outcome

    summary_data: dict[str, Any] = {"compactionId": compaction_id}
    if source_command_id is not None:
        summary_data["sourceCommandId"] = source_command_id
    summary_data["summary"] = [dict(b) for b in summary]
    summary_data.update(result.record())
    summary_data.update({"shadowedRange": {"start": start, "end": end},
                         "shadowedSeqs": list(shadowed), "shadowedTokenCount": shadowed_tokens,
                         "provider": result.provider, "model": result.model})
    if result.max_tokens is not None:
        summary_data["maxTokens"] = result.max_tokens
    if result.usage is not None:
        summary_data["usage"] = result.usage
    summary_event = _event(view, "compaction/summary", summary_data, time)
    checkpoint_event = _event(view, "user/message", checkpoint, time,
                              surfaceOp={"op": "replace", "start": start, "end": end},
                              sourceEventSeqs=[start_event["seq"], summary_event["seq"],
                                               *shadowed])
    end_event = _event(view, "compaction/end", dict(lifecycle), time)
    outcome.events += [summary_event, checkpoint_event, end_event]
    outcome.result = {
        **{k: v for k, v in lifecycle.items() if k != "turn"},
        "startSeq": start_event["seq"], "summarySeq": summary_event["seq"],
        "checkpointSeq": checkpoint_event["seq"], "endSeq": end_event["seq"],
        "shadowedRange": {"start": start, "end": end}, "shadowedSeqs": list(shadowed),
        "shadowedTokenCount": shadowed_tokens, "framedTokens": framed,
    }
    return outcome


def _check_stable(view: LogView, stability: str, start: int, end: int,
                  shadowed: tuple[int, ...], selected: Sequence[PricedNode],
                  before: Sequence[PricedNode]) -> None:
    """CMP-FAIL-003: the whole surface (automatic) or the selected span (manual) must be as it
    was when the summary was requested."""
    now = view.measure().nodes
    if stability == "whole-surface":
        if tuple(now) != tuple(before):
            raise _Changed("compaction: the session surface changed during summarization")
        return
    try:
        i, j = validate_region(view.boundaries(), start, end)
    except CompactionError as exc:
        raise _Changed(f"compaction: the selected span is no longer a valid replacement "
                       f"target: {exc.message}") from None
    if tuple(view.nodes[i:j + 1]) != shadowed:
        raise _Changed("compaction: the selected span changed during summarization")
    if tuple(now[i:j + 1]) != tuple(selected):
        raise _Changed("compaction: the selected span was rewritten during summarization")


__all__ = ["DuringSummary", "Failure", "IdSource", "Outcome", "run_transaction"]
