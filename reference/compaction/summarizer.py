"""The pluggable summarizer interface (spec chapter ``compaction/planner``, CMP-PLN-004).

The reference never calls a model. A summarizer receives what DSH would send to its model (the
shadowed messages in surface order, the system prompt and the tool schemas of the latest
request header) and returns text blocks plus the call record that ``compaction/summary``
stores. Three summarizers ship with the kit: :class:`FixedSummarizer` (caller-supplied text),
:class:`DigestSummarizer` (deterministic, used by the conformance kit) and
:class:`FailingSummarizer` (always fails, for failure vectors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


class SummaryFailure(Exception):
    """A summarizer that cannot produce a summary raises this; the message is what
    ``compaction/end.error`` records."""


@dataclass(frozen=True, slots=True)
class SummaryRequest:
    compaction_id: str
    shadowed_seqs: tuple[int, ...]
    messages: tuple[dict[str, Any], ...]
    system: str | None = None
    tools: tuple[Any, ...] | None = None
    target: tuple[str, str] | None = None  # the routed provider/model, when known


@dataclass(frozen=True, slots=True)
class SummaryResult:
    """What a summarizer returns; ``summary`` keeps only ``text`` blocks (CMP-EVT-004)."""

    summary: tuple[dict[str, Any], ...]
    provider: str
    model: str
    max_tokens: int | None = None
    usage: dict[str, Any] | None = None
    raw_output: tuple[dict[str, Any], ...] | None = None
    llm_stream_call: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """The members of ``compaction/summary`` that describe the call."""
        out: dict[str, Any] = {}
        if self.llm_stream_call:
            out["rawOutput"] = [dict(b) for b in (self.raw_output or ())]
            out["llmStreamCall"] = True
        elif self.raw_output is not None:
            out["rawOutput"] = [dict(b) for b in self.raw_output]
        return out


@runtime_checkable
class Summarizer(Protocol):
    def summarize(self, request: SummaryRequest) -> SummaryResult: ...


def text_summary(text: str) -> tuple[dict[str, Any], ...]:
    return ({"type": "text", "text": text},)


@dataclass(frozen=True, slots=True)
class FixedSummarizer:
    """Returns the caller's text unchanged (``dshkit compact apply --summary-file``)."""

    text: str
    provider: str = "dshkit"
    model: str = "caller-supplied"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return SummaryResult(summary=text_summary(self.text), provider=self.provider,
                             model=self.model)


@dataclass(frozen=True, slots=True)
class RecordedSummarizer:
    """Replays a recorded model call: summary blocks plus its provider, model, usage and raw
    output (used by vectors that reproduce a DSH transaction byte for byte)."""

    result: SummaryResult

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        return self.result


@dataclass(frozen=True, slots=True)
class FailingSummarizer:
    message: str = "summary unavailable"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        raise SummaryFailure(self.message)


def _first_text(message: dict[str, Any]) -> str:
    for block in message.get("content") or []:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(
                block.get("text"), str) and block["text"].strip():
            return " ".join(block["text"].split())
    return ""


@dataclass(frozen=True, slots=True)
class DigestSummarizer:
    """Deterministic: the same messages always give the same text. It counts the messages by
    kind and quotes the start of the first and the last direct user text, each cut to
    ``quote_chars`` code points. Good enough for tests and the conformance kit; not a summary a
    model could work from."""

    quote_chars: int = 80
    provider: str = "dshkit"
    model: str = "digest"

    def summarize(self, request: SummaryRequest) -> SummaryResult:
        users = [m for m in request.messages if m.get("role") == "user"
                 and isinstance(m.get("source"), dict) and m["source"].get("kind") == "user"]
        tools = sum(1 for m in request.messages if isinstance(m.get("source"), dict)
                    and m["source"].get("kind") == "tool")
        assistants = sum(1 for m in request.messages if m.get("role") == "assistant")
        other = len(request.messages) - len(users) - tools - assistants
        lines = [f"Compacted {len(request.messages)} messages: {len(users)} user, "
                 f"{assistants} assistant, {tools} tool results, {other} other."]
        quotes = [_first_text(users[0])] if users else []
        if len(users) > 1:
            quotes.append(_first_text(users[-1]))
        for label, quote in zip(("First request", "Last request"), quotes, strict=False):
            if quote:
                cut = quote if len(quote) <= self.quote_chars else quote[:self.quote_chars] + "..."
                lines.append(f"{label}: {cut}")
        return SummaryResult(summary=text_summary("\n".join(lines)), provider=self.provider,
                             model=self.model)


def summarizer_from_json(spec: Any) -> Summarizer:
    """Build a kit summarizer from a vector's ``params.summarizer`` object."""
    if not isinstance(spec, dict):
        return DigestSummarizer()
    kind = spec.get("kind", "digest")
    if kind == "fixed":
        return FixedSummarizer(text=str(spec["text"]), provider=str(spec.get("provider",
                               "dshkit")), model=str(spec.get("model", "caller-supplied")))
    if kind == "fail":
        return FailingSummarizer(str(spec.get("message", "summary unavailable")))
    if kind == "recorded":
        raw = spec.get("rawOutput")
        return RecordedSummarizer(SummaryResult(
            summary=tuple(spec["summary"]), provider=str(spec["provider"]),
            model=str(spec["model"]), max_tokens=spec.get("maxTokens"),
            usage=spec.get("usage"), raw_output=tuple(raw) if raw is not None else None,
            llm_stream_call=spec.get("llmStreamCall") is True))
    return DigestSummarizer(quote_chars=int(spec.get("quoteChars", 80)))


__all__ = [
    "DigestSummarizer",
    "FailingSummarizer",
    "FixedSummarizer",
    "RecordedSummarizer",
    "Summarizer",
    "SummaryFailure",
    "SummaryRequest",
    "SummaryResult",
    "summarizer_from_json",
    "text_summary",
]
