"""Deterministic generator of realistic session logs for the benchmarks.

A log is a run of agent turns as DSH's loop writes them: ``turn/start``, a ``request/header``
on the first turn and a ``request/context`` on every turn, the user's message, then steps of
streamed ``assistant/chunk`` events (reasoning, text and tool-call deltas, 5-40 per message,
closed by a usage and a finish chunk), the ``assistant/message`` citing its chunks, a
``tool/call`` and its ``tool/result`` with a 100-2000 character output, ``step/end`` and
``turn/end``. Every few thousand events, between two steps, a compaction bracket replaces
every earlier turn with a checkpoint message (``compaction/start``, ``compaction/summary``,
the replacing ``user/message`` citing both and every shadowed node, ``compaction/end``), so
the surface stays small while the log grows, as in a long agent run.

Everything comes from one seeded :class:`random.Random`: the same ``(n_events, seed)`` gives
the same bytes. :func:`realistic_log` yields exactly ``n_events`` events (the last turn may be
left open, as in a live session); :func:`write_logs` writes the three on-disk forms.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

from dshkit.reference.json import codec as jsoncodec
from dshkit.reference.session.chunk_rows import pack_events
from dshkit.reference.session.header import header_line

Event = dict[str, Any]

SESSION_ID = "bench-session"
CREATED_AT = 1_700_000_000_000
COMPACT_EVERY = 3_000

_WORDS = ("the", "file", "test", "function", "returns", "value", "error", "module", "config",
          "path", "build", "check", "fix", "update", "import", "class", "list", "run", "data",
          "résumé", "naïve", "日本語", "→", "ok", "line", "parse", "stream", "event", "log")
_TOOLS = ("bash", "read_file", "write_file", "grep", "list_dir")
_SYSTEM = ("You are a coding agent working in a repository. Read files before editing them, "
           "run the tests after every change, and explain what you did. ") * 12


@dataclass
class _Log:
    rnd: random.Random
    seq: int = 0
    time: int = CREATED_AT
    turn: int = 0
    surface: list[int] = field(default_factory=list)
    message_seqs: set[int] = field(default_factory=set)
    compactions: int = 0
    since_compaction: int = 0

    def event(self, kind: str, data: Any, **extra: Any) -> Event:
        self.time += self.rnd.randint(0, 40)
        out: Event = {"type": kind, "seq": self.seq, "time": self.time, "data": data, **extra}
        self.seq += 1
        self.since_compaction += 1
        return out

    def surface_event(self, kind: str, data: Any, sources: list[int] | None) -> Event:
        extra: dict[str, Any] = {"surfaceOp": "append"}
        if sources is not None:
            extra["sourceEventSeqs"] = sources
        out = self.event(kind, data, **extra)
        self.surface.append(out["seq"])
        return out

    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rnd.choice(_WORDS) for _ in range(self.rnd.randint(lo, hi)))

    def ident(self, prefix: str) -> str:
        return f"{prefix}-{self.rnd.getrandbits(64):016x}"

    def output(self) -> str:
        """A tool output of 100-2000 characters: lines of a listing or a log."""
        size = self.rnd.randint(100, 2000)
        lines: list[str] = []
        length = 0
        while length < size:
            line = f"{self.rnd.choice(_WORDS)}/{self.words(1, 3).replace(' ', '_')}.py:" \
                   f"{self.rnd.randint(1, 999)}: {self.words(2, 9)}"
            if self.rnd.random() < 0.05:
                line += ' "quoted" \\ tab\there'
            lines.append(line)
            length += len(line) + 1
        return "\n".join(lines)[:size]


def realistic_log(n_events: int, seed: int = 7) -> Iterator[Event]:
    """Exactly ``n_events`` events of a realistic log (deterministic for a seed)."""
    log = _Log(rnd=random.Random(seed))
    for event in _turns(log):
        if log.seq > n_events:
            return
        yield event


def _turns(log: _Log) -> Iterator[Event]:
    while True:
        log.turn += 1
        turn = log.turn
        yield log.event("turn/start", {"turn": turn})
        if turn == 1:
            yield log.event("request/header", {"reason": "initial", "header": {
                "config": {"provider": "deepseek", "model": "deepseek-chat",
                           "reasoningEffort": "high", "maxTokens": 8192},
                "system": _SYSTEM,
                "tools": [{"name": name, "description": f"{name}: " + log.words(8, 20),
                           "parameters": {"type": "object", "properties": {
                               "arg": {"type": "string"}}}} for name in _TOOLS]}})
        yield log.event("request/context", {"provider": "deepseek", "model": "deepseek-chat",
                                            "contextWindow": 128_000})
        first_node = len(log.surface)
        yield log.surface_event("user/message", {
            "id": log.ident("user"), "role": "user",
            "content": [{"type": "text", "text": log.words(8, 80)}],
            "source": {"kind": "user"}}, None)
        steps = log.rnd.randint(1, 4)
        for step in range(1, steps + 1):
            if log.since_compaction >= COMPACT_EVERY and first_node > 0 and step > 1:
                yield from _compaction(log, turn, first_node)
                first_node = 1
            yield from _step(log, turn, step, last=step == steps)
        yield log.event("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def _step(log: _Log, turn: int, step: int, *, last: bool) -> Iterator[Event]:
    yield log.event("step/start", {"turn": turn, "step": step})
    total = log.rnd.randint(3, 38)  # deltas; with the usage and finish chunks, 5-40 chunks
    call = None if last else (log.ident("call"), log.rnd.choice(_TOOLS))
    tool_deltas = log.rnd.randint(2, min(6, total - 1)) if call else 0
    reasoning = log.rnd.randint(0, (total - tool_deltas) // 2)
    texts = total - tool_deltas - reasoning
    seqs: list[int] = []
    blocks: list[dict[str, Any]] = []

    def chunk(payload: dict[str, Any]) -> Event:
        out = log.event("assistant/chunk", {"turn": turn, "step": step, "chunk": payload})
        seqs.append(out["seq"])
        return out

    index = 0
    for kind, count in (("reasoning", reasoning), ("text", texts)):
        if count == 0:
            continue
        parts = [log.words(1, 3) + " " for _ in range(count)]
        for part in parts:
            yield chunk({"type": f"{kind}-delta", "index": index, "text": part})
        blocks.append({"type": kind, "text": "".join(parts)})
        index += 1
    arguments = ""
    if call is not None:
        call_id, name = call
        parts = ['{"arg": "', *(log.words(1, 2) for _ in range(tool_deltas - 2)), '"}']
        for k, part in enumerate(parts):
            delta: dict[str, Any] = {"type": "tool-call-delta", "index": index, "id": call_id}
            if k == 0:
                delta["name"] = name
            delta["argumentsDelta"] = part
            yield chunk(delta)
        arguments = "".join(parts)
        blocks.append({"type": "tool-call", "id": call_id, "name": name,
                       "arguments": arguments})
    usage = {"inputTokens": log.rnd.randint(1_000, 90_000),
             "outputTokens": log.rnd.randint(10, 2_000)}
    yield chunk({"type": "usage", "usage": usage})
    yield chunk({"type": "finish", "reason": {"kind": "tool-calls" if call else "stop"}})
    yield log.surface_event("assistant/message", {
        "turn": turn, "step": step, "usage": usage,
        "message": {"id": log.ident("assistant"), "role": "assistant", "content": blocks,
                    "source": {"kind": "model", "provider": "deepseek",
                               "model": "deepseek-chat"}}}, seqs)
    if call is not None:
        call_id, name = call
        call_event = log.event("tool/call", {"turn": turn, "step": step, "callId": call_id,
                                             "name": name, "arguments": arguments})
        yield call_event
        yield log.surface_event("tool/result", {
            "turn": turn, "step": step,
            "message": {"id": log.ident("tool"), "role": "user",
                        "content": [{"type": "tool-result", "toolCallId": call_id,
                                     "content": [{"type": "text", "text": log.output()}],
                                     "isError": False}],
                        "source": {"kind": "tool", "callId": call_id}}},
            [call_event["seq"]])
    yield log.event("step/end", {"turn": turn, "step": step})


def _compaction(log: _Log, turn: int, first_node: int) -> Iterator[Event]:
    """Replace the surface before this turn's user message with one checkpoint."""
    shadowed = log.surface[:first_node]
    log.compactions += 1
    cid = f"compaction-{log.compactions}"
    start = log.event("compaction/start", {"compactionId": cid, "turn": turn})
    yield start
    summary_text = log.words(40, 120)
    summary = log.event("compaction/summary", {
        "compactionId": cid, "summary": [{"type": "text", "text": summary_text}],
        "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
        "shadowedSeqs": shadowed, "shadowedTokenCount": 400 * len(shadowed),
        "provider": "deepseek", "model": "deepseek-chat"})
    yield summary
    checkpoint = log.event("user/message", {
        "id": log.ident("checkpoint"), "role": "user",
        "content": [{"type": "text", "text": f"<compacted-summary>{summary_text}"
                                             "</compacted-summary>"}],
        "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid}},
        surfaceOp={"op": "replace", "start": shadowed[0], "end": shadowed[-1]},
        sourceEventSeqs=[start["seq"], summary["seq"], *shadowed])
    log.surface[:first_node] = [checkpoint["seq"]]
    yield checkpoint
    yield log.event("compaction/end", {"compactionId": cid, "turn": turn})
    log.since_compaction = 0


@dataclass(frozen=True, slots=True)
class LogFiles:
    """The same log in the three forms the benchmark reads."""

    events: int
    jsonl: Path  # bare JSONL: one event per line, no header
    session: Path  # DSH session.jsonl: header line, packed chunk rows
    zstd: Path  # DSH session.jsonl.zstd: header frame, one frame per append batch


def _batches(events: Iterator[Event]) -> Iterator[list[Event]]:
    """Append batches as a live writer flushes them: up to each step or turn boundary."""
    batch: list[Event] = []
    for event in events:
        batch.append(event)
        if event["type"] in ("step/end", "turn/end") or len(batch) >= 256:
            yield batch
            batch = []
    if batch:
        yield batch


def write_logs(directory: Path, n_events: int, seed: int = 7) -> LogFiles:
    """Write the log as bare JSONL, as DSH ``session.jsonl`` (packed chunks) and zstd."""
    directory.mkdir(parents=True, exist_ok=True)
    files = LogFiles(events=n_events, jsonl=directory / "events.jsonl",
                     session=directory / "session.jsonl",
                     zstd=directory / "session.jsonl.zstd")
    header = (jsoncodec.dumps(header_line(session_id=SESSION_ID, created_at=CREATED_AT,
                                          cwd="/work/project")) + "\n").encode("utf-8")
    compressor = zstandard.ZstdCompressor(level=3, write_checksum=True,
                                          write_content_size=True)
    with open(files.jsonl, "wb") as bare, open(files.session, "wb") as packed, \
            open(files.zstd, "wb") as framed:
        packed.write(header)
        framed.write(compressor.compress(header))
        for batch in _batches(realistic_log(n_events, seed)):
            bare.write(b"".join(_line(e) for e in batch))
            body = b"".join(_line(r) for r in pack_events(batch))
            packed.write(body)
            framed.write(compressor.compress(body))
    return files


def _line(record: Any) -> bytes:
    return (jsoncodec.dumps(record) + "\n").encode("utf-8")
