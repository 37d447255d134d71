"""Hypothesis strategies for valid DSH session logs (``dshkit.conformance.strategies``).

:func:`valid_logs` builds loop-shaped logs the way the DSH agent loop writes them: turns and
steps, user messages, streamed ``assistant/chunk`` runs (text, reasoning and tool-call deltas,
usage and finish), assistant messages citing their chunks, ``tool/call`` + ``tool/result``
pairs, calls left unanswered or aborted before dispatch, compaction brackets that replace a
balanced surface range with a summary (citing the compaction events and every shadowed node),
tool-result prunes (``compaction/prune`` followed by a content-only rewrite), plugin events and
ignorable unknown events. Every log passes level ``invariants`` (and ``load``: it uses only
current shapes and known or ignorable types). Time is epoch milliseconds and sometimes steps
back, as wall clocks do.

:func:`event_prefixes` draws a valid log and cuts it anywhere, which is what a crash leaves
behind; :func:`truncate` does the same cut for a given length. :func:`chunk_runs` draws event
lists that exercise the chunk-row packer.

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

import copy
import random
import uuid
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

Event = dict[str, Any]

__all__ = ["Event", "chunk_runs", "event_prefixes", "truncate", "valid_logs"]

_WORDS = ("list", "files", "the", "fix", "test", "quick", "fox", "café", "日本語", "😀",
          "line\nbreak", '"quoted"', "tab\there", "path/to/a.txt", "", " ", "{json}")
_TOOLS = ("bash", "read", "write", "grep", "web_search")
_PLUGIN_SOURCES = ("goal", "skill-invocation", "agent-instructions", "team-message")

# Fine-grained choices come from a seeded generator: uniform (hypothesis' own random draws
# lean towards small values, which would starve tool calls and replacements) and fast. The
# seed and the turn count are hypothesis draws, so failures replay and shrink on those.
_SEEDS = st.integers(0, 2**64 - 1)


@dataclass
class _Builder:
    """Appends events with contiguous seqs and a wall clock; tracks the current surface."""

    rnd: random.Random
    events: list[Event] = field(default_factory=list)
    clock: int = 0
    turn: int = 0
    surface: list[int] = field(default_factory=list)
    compactions: int = 0

    # -- primitives -------------------------------------------------------------------------

    def tick(self) -> int:
        r = self.rnd.random()
        if r < 0.05:
            self.clock -= self.rnd.randint(1, 2_000)  # the wall clock stepped back
        elif r < 0.35:
            pass  # same millisecond
        else:
            self.clock += self.rnd.randint(1, 900)
        return self.clock

    def emit(self, kind: str, data: Any, **extra: Any) -> Event:
        event: Event = {"type": kind, "seq": len(self.events), "time": self.tick(), "data": data}
        event.update(extra)
        self.events.append(event)
        return event

    def surface_emit(self, kind: str, data: Any, sources: list[int] | None) -> Event:
        extra: dict[str, Any] = {"surfaceOp": "append"}
        if sources is not None:
            extra["sourceEventSeqs"] = sources
        event = self.emit(kind, data, **extra)
        self.surface.append(event["seq"])
        return event

    def replace(self, kind: str, data: Any, start: int, end: int, sources: list[int]) -> Event:
        i, j = self.surface.index(start), self.surface.index(end)
        event = self.emit(kind, data, surfaceOp={"op": "replace", "start": start, "end": end},
                          sourceEventSeqs=sources)
        self.surface[i:j + 1] = [event["seq"]]
        return event

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rnd.getrandbits(128), version=4))

    def words(self, lo: int = 1, hi: int = 4) -> str:
        return " ".join(self.rnd.choice(_WORDS) for _ in range(self.rnd.randint(lo, hi)))

    def chance(self, p: float) -> bool:
        return self.rnd.random() < p

    # -- pieces of a loop -------------------------------------------------------------------

    def user_message(self) -> None:
        source: dict[str, Any] = {"kind": "user"}
        if self.chance(0.2):
            plugin = self.rnd.choice(_PLUGIN_SOURCES)
            source = {"kind": "plugin", "plugin": plugin}
        content: list[Any] = [{"type": "text", "text": self.words(1, 8)}]
        if self.chance(0.1):
            content.append({"type": "image", "attachment": {
                "attachmentId": self.uid(), "mediaType": "image/png", "bytes": 1024,
                "width": 16, "height": 16}})
        self.surface_emit("user/message", {"id": self.uid(), "role": "user",
                                           "content": content, "source": source}, None)

    def request_header(self, reason: str) -> None:
        config: dict[str, Any] = {"provider": "mock", "model": self.rnd.choice(("m", "m-pro"))}
        header: dict[str, Any] = {"config": config}
        if self.chance(0.5):
            config["reasoningEffort"] = "high"
            if self.chance(0.5):
                header["adapterDefaults"] = {"reasoningEffort": True}
        if self.chance(0.5):
            header["system"] = "You are DSH."
            header["tools"] = [{"name": t, "description": t, "parameters": {"type": "object"}}
                               for t in self.rnd.sample(_TOOLS, 2)]
        self.emit("request/header", {"header": header, "reason": reason})
        if self.chance(0.7):
            context: dict[str, Any] = {"provider": "mock", "model": config["model"]}
            if self.chance(0.7):
                context["contextWindow"] = 128_000
            self.emit("request/context", context)

    def chunk(self, step: int, chunk: dict[str, Any]) -> int:
        event = self.emit("assistant/chunk", {"turn": self.turn, "step": step, "chunk": chunk})
        return int(event["seq"])

    def stream(self, step: int, plan: list[str]) -> tuple[list[int], list[Any]]:
        """Stream the blocks of one attempt; returns the chunk seqs and the assembled blocks."""
        seqs: list[int] = []
        blocks: list[Any] = []
        for index, kind in enumerate(plan):
            framed = self.chance(0.3)
            if framed:
                seqs.append(self.chunk(step, {"type": "block-start", "index": index,
                                              "blockType": kind}))
            if kind in ("text", "reasoning"):
                parts = [self.words(1, 2) for _ in range(self.rnd.randint(1, 6))]
                for part in parts:
                    seqs.append(self.chunk(step, {"type": f"{kind}-delta", "index": index,
                                                  "text": part}))
                block: dict[str, Any] = {"type": kind, "text": "".join(parts)}
            else:
                call_id = f"call_{self.rnd.getrandbits(48):012x}"
                name = self.rnd.choice(_TOOLS)
                parts = ['{"arg":', ' "', self.words(1, 1).replace('"', "'"), '"}']
                named_all = self.chance(0.5)
                for k, part in enumerate(parts):
                    delta: dict[str, Any] = {"type": "tool-call-delta", "index": index,
                                             "id": call_id}
                    if named_all or k == 0:
                        delta["name"] = name
                    delta["argumentsDelta"] = part
                    seqs.append(self.chunk(step, delta))
                block = {"type": "tool-call", "id": call_id, "name": name,
                         "arguments": "".join(parts)}
            if framed:
                seqs.append(self.chunk(step, {"type": "block-end", "index": index,
                                              "block": block}))
            blocks.append(block)
        return seqs, blocks

    def tool_result(self, step: int, call_id: str, call_seq: int, aborted: bool) -> None:
        text = ("Error: tool call aborted before dispatch" if aborted else self.words(1, 10))
        data: dict[str, Any] = {
            "turn": self.turn, "step": step,
            "message": {"id": self.uid(), "role": "user",
                        "content": [{"type": "tool-result", "toolCallId": call_id,
                                     "content": [{"type": "text", "text": text}],
                                     "isError": aborted}],
                        "source": {"kind": "tool", "callId": call_id}}}
        if aborted:
            data["error"] = {"name": "AbortError", "code": "ABORTED_BEFORE_DISPATCH"}
        elif self.chance(0.3):
            data["meta"] = {"lines": self.rnd.randint(0, 99), "truncated": self.chance(0.5)}
        self.surface_emit("tool/result", data, [call_seq])

    def step(self, step: int) -> str:
        """One model request and its tool executions; returns how the step ended."""
        self.emit("step/start", {"turn": self.turn, "step": step})
        if step == 1 and self.chance(0.3):
            self.user_message()  # steering input spliced into the first step
        outcome = self.rnd.choices(("normal", "interrupted", "max-tokens", "failed"),
                                   (0.8, 0.07, 0.08, 0.05))[0]
        if outcome == "failed":
            # A failed attempt: chunks, a usage chunk, an error finish and no message.
            self.stream(step, ["text"])
            self.chunk(step, {"type": "finish", "reason": {"kind": "error", "failure": {
                "message": "upstream", "code": "HTTP_500", "status": 500}}})
            self.emit("step/end", {"turn": self.turn, "step": step})
            return "error"
        if outcome == "max-tokens":
            seqs = [self.chunk(step, {"type": "usage", "usage": {"inputTokens": 4000,
                                                                 "outputTokens": 0}}),
                    self.chunk(step, {"type": "finish", "reason": {"kind": "max-tokens"}})]
            self.surface_emit("assistant/message", {
                "turn": self.turn, "step": step,
                "message": {"id": self.uid(), "role": "assistant", "content": [],
                            "source": {"kind": "model", "provider": "mock", "model": "m"}},
                "usage": {"inputTokens": 4000, "outputTokens": 0}}, seqs)
            self.emit("step/end", {"turn": self.turn, "step": step})
            return "max-tokens"
        plan = [self.rnd.choice(("text", "text", "reasoning", "tool-call"))
                for _ in range(self.rnd.randint(0, 3))]
        if outcome == "interrupted":
            plan = [k for k in plan if k != "tool-call"] or ["text"]
        seqs, blocks = self.stream(step, plan)
        data: dict[str, Any] = {"turn": self.turn, "step": step}
        if outcome == "normal" and self.chance(0.8):
            usage = {"inputTokens": self.rnd.randint(1, 5000),
                     "outputTokens": self.rnd.randint(0, 900)}
            seqs.append(self.chunk(step, {"type": "usage", "usage": usage}))
            calls = any(b["type"] == "tool-call" for b in blocks)
            seqs.append(self.chunk(step, {"type": "finish", "reason": {
                "kind": "tool-calls" if calls else "stop"}}))
            data["usage"] = usage
        data["message"] = {"id": self.uid(), "role": "assistant", "content": blocks,
                           "source": {"kind": "model", "provider": "mock", "model": "m"}}
        if outcome == "interrupted":
            data["interrupted"] = True
        cite: list[int] | None = seqs if self.chance(0.9) else None
        self.surface_emit("assistant/message", data, cite)
        for block in blocks:
            if block["type"] != "tool-call":
                continue
            fate = self.rnd.choices(("answered", "unanswered", "unstarted", "aborted"),
                                    (0.75, 0.1, 0.1, 0.05))[0]
            if fate == "unstarted":
                continue
            call = self.emit("tool/call", {"turn": self.turn, "step": step,
                                           "callId": block["id"], "name": block["name"],
                                           "arguments": block["arguments"]})
            if fate in ("answered", "aborted"):
                self.tool_result(step, block["id"], call["seq"], fate == "aborted")
        if self.chance(0.15):
            self.emit("todo/write", {"todos": [
                {"content": f"task {i}", "status": self.rnd.choice(
                    ("pending", "in_progress", "completed"))} for i in range(3)]})
        self.emit("step/end", {"turn": self.turn, "step": step})
        return "interrupted" if outcome == "interrupted" else "normal"

    def prune(self) -> None:
        """Rewrite the content of one current tool result (inside an open turn)."""
        targets = [s for s in self.surface if self.events[s]["type"] == "tool/result"]
        if not targets:
            return
        target = self.rnd.choice(targets)
        self.emit("compaction/prune", {"shadowedRange": {"start": target, "end": target},
                                       "shadowedSeqs": [target],
                                       "shadowedTokenCount": self.rnd.randint(0, 5000)})
        data = copy.deepcopy(self.events[target]["data"])
        data["message"]["content"][0]["content"] = [{"type": "text", "text": "[pruned]"}]
        self.replace("tool/result", data, target, target, [target])

    def compaction(self, owner: int | None) -> None:
        """Replace a balanced range of the surface with a summary (compaction bracket)."""
        balance = [0]
        for seq in self.surface:
            event = self.events[seq]
            delta = 0
            if event["type"] == "assistant/message":
                delta = sum(1 for b in event["data"]["message"]["content"]
                            if b.get("type") == "tool-call")
            elif event["type"] == "tool/result":
                delta = -1
            balance.append(balance[-1] + delta)
        ranges = [(i, j) for i in range(len(self.surface)) if balance[i] == 0
                  for j in range(i, len(self.surface)) if balance[j + 1] == 0]
        if not ranges:
            return
        i, j = self.rnd.choice(ranges)
        shadowed = self.surface[i:j + 1]
        self.compactions += 1
        cid = f"compaction-{self.compactions}"
        start = self.emit("compaction/start", {"compactionId": cid, "turn": owner})
        summary_text = self.words(2, 6)
        summary = self.emit("compaction/summary", {
            "compactionId": cid, "summary": [{"type": "text", "text": summary_text}],
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
            "shadowedSeqs": shadowed, "shadowedTokenCount": 40 * len(shadowed),
            "provider": "mock", "model": "m"})
        self.replace("user/message", {
            "id": self.uid(), "role": "user",
            "content": [{"type": "text", "text": f"<summary>{summary_text}</summary>"}],
            "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid}},
            shadowed[0], shadowed[-1], [start["seq"], summary["seq"], *shadowed])
        self.emit("compaction/end", {"compactionId": cid, "turn": owner})

    def side_events(self, inside: bool) -> None:
        """Plugin events and ignorable unknown events, as plugins write them."""
        for _ in range(self.rnd.choices((0, 1, 2), (0.6, 0.3, 0.1))[0]):
            pick = self.rnd.randrange(8)
            if pick == 0:
                self.emit("session/title", {"title": self.words(1, 3), "messageSeqs": [],
                                            "source": {"kind": "fallback"}})
            elif pick == 1:
                self.emit("plan/mode", {"active": self.chance(0.5)})
            elif pick == 2:
                self.emit("sandbox/mode", {"mode": "workspace-write"})
            elif pick == 3 and inside:
                ident = self.uid()
                self.emit("approval/asked", {"id": ident, "toolName": "bash"})
                self.emit("approval/decided", {"id": ident, "outcome": "allowed-once"})
            elif pick == 4:
                self.emit("x-vendor/telemetry", {"n": self.rnd.randint(0, 9)}, ignorable=True)
            elif pick == 5:
                self.emit("feedback/record", {"text": self.words()})
            elif pick == 6 and inside:
                self.emit("hook/invoked", {"turn": self.turn, "point": "pre-step",
                                           "dialect": "claude-code", "handlerId": "h1"})
                self.emit("hook/result", {"turn": self.turn, "point": "pre-step",
                                          "handlerId": "h1", "decision": "allow",
                                          "durationMs": 3})
            else:
                self.emit("x-future/note", None, ignorable=True)

    def turn_(self) -> None:
        self.turn += 1
        self.emit("turn/start", {"turn": self.turn})
        if self.chance(0.6):
            self.request_header("initial" if self.turn == 1 else
                                self.rnd.choice(("resume", "change")))
        if self.chance(0.9):
            self.user_message()
        self.side_events(inside=True)
        ended = "normal"
        reason: dict[str, Any] = {"kind": "completed"}
        for step in range(1, self.rnd.choices((0, 1, 2, 3), (0.1, 0.5, 0.3, 0.1))[0] + 1):
            ended = self.step(step)
            if self.chance(0.1):
                self.prune()
            if self.chance(0.05):
                self.compaction(self.turn)
            if ended != "normal":
                break
        if ended == "interrupted":
            reason = {"kind": "aborted", "reason": {"kind": "user"}}
        elif ended == "max-tokens":
            reason = {"kind": "max-tokens"}
        elif ended == "error":
            reason = {"kind": "error", "error": {"message": "upstream", "code": "HTTP_500",
                                                 "status": 500}}
        elif self.chance(0.05):
            reason = {"kind": "blocked"}
        self.side_events(inside=True)
        self.emit("turn/end", {"turn": self.turn, "reason": reason})


@st.composite
def valid_logs(draw: st.DrawFn, *, min_turns: int = 0, max_turns: int = 4,
               balanced: bool = True) -> list[Event]:
    """A loop-shaped session log that passes level ``invariants``.

    With ``balanced=False`` the log may end inside a turn (cut where a crash could cut it):
    it still passes ``invariants``, which is a prefix property.
    """
    rnd = random.Random(draw(_SEEDS))
    builder = _Builder(rnd=rnd, clock=draw(st.integers(0, 2_000_000_000_000)))
    for _ in range(draw(st.integers(min_turns, max_turns))):
        if builder.chance(0.3):
            builder.side_events(inside=False)
        if builder.chance(0.25):
            builder.compaction(None)
        if builder.chance(0.05):
            builder.emit("session/end-seed", {})
        builder.turn_()
    if builder.chance(0.2):
        builder.compaction(None)
    events = builder.events
    if not balanced:
        events = events[: draw(st.integers(0, len(events)))]
    return events


def truncate(events: list[Event], length: int) -> list[Event]:
    """The first ``length`` events, copied (what a crash after ``length`` writes leaves)."""
    return copy.deepcopy(events[: max(0, length)])


@st.composite
def event_prefixes(draw: st.DrawFn, logs: st.SearchStrategy[list[Event]] | None = None
                   ) -> list[Event]:
    """A prefix of a valid log, cut at any event boundary (possibly empty or whole)."""
    events = draw(logs if logs is not None else valid_logs(min_turns=1))
    return truncate(events, draw(st.integers(0, len(events))))


@st.composite
def chunk_runs(draw: st.DrawFn) -> list[Event]:
    """``assistant/chunk`` events (with some others mixed in) for the chunk-row packer.

    Runs share or change kind, index, turn/step, tool-call id and name presence; times step
    back; some chunks carry extra members or are not deltas, so they must stay verbatim.
    """
    rnd = random.Random(draw(_SEEDS))
    seq = draw(st.integers(0, 1_000))
    clock = draw(st.integers(-10_000, 10_000))
    out: list[Event] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = rnd.choice(("text-delta", "reasoning-delta", "tool-call-delta", "other"))
        index, step = rnd.randint(0, 2), rnd.randint(1, 2)
        call_id, name = f"c{rnd.randint(0, 2)}", rnd.choice((None, "bash"))
        for _ in range(rnd.randint(1, 6)):
            clock += rnd.randint(-5, 20)
            chunk: dict[str, Any]
            if kind == "tool-call-delta":
                chunk = {"type": kind, "index": index, "id": call_id}
                if name is not None and rnd.random() < 0.9:
                    chunk["name"] = name
                chunk["argumentsDelta"] = rnd.choice(("{", '"a"', ":1", "}", ""))
            elif kind == "other":
                chunk = rnd.choice(({"type": "usage", "usage": {"inputTokens": 1,
                                                                "outputTokens": 2}},
                                    {"type": "block-start", "index": index,
                                     "blockType": "text"}))
            else:
                chunk = {"type": kind, "index": index, "text": rnd.choice(_WORDS)}
                if rnd.random() < 0.05:
                    chunk["extra"] = True  # not whitelisted: must be stored verbatim
            event: Event = {"type": "assistant/chunk", "seq": seq, "time": clock,
                            "data": {"turn": 1, "step": step, "chunk": chunk}}
            if rnd.random() < 0.03:
                event = {"type": "plan/mode", "seq": seq, "time": clock,
                         "data": {"active": True}}
            out.append(event)
            seq += 1 if rnd.random() < 0.97 else 2  # an occasional gap breaks a run
    return out
