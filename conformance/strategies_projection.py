"""Hypothesis strategies for the session reference projection and session query
(``dshkit.conformance.strategies_projection``).

- :func:`texts` draws message texts that stress byte counting: JSON escapes (``"``, ``\\``,
  line feeds, ``<``), 2-, 3- and 4-byte UTF-8 characters and long runs.
- :func:`surface_snapshots` draws surface snapshots (``{session, capturedThroughSeq,
  events}``) mixing direct user messages, assistant messages with reasoning and tool calls,
  compaction checkpoints, injected plugin context and tool results.
- :func:`compacted_logs` draws complete raw logs whose surface was compacted zero or more
  times (each checkpoint cites every node it shadows), with log-only events in between; the
  texts come from a small vocabulary so that searches find something.

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Event = dict[str, Any]

__all__ = ["VOCABULARY", "compacted_logs", "surface_snapshots", "texts"]

_PIECES = ("a", "word ", "<tag>", "</referenced-sessions>", '"q"', "\\", "\n", "é", "界",
           "😀", "0123456789", "\u2028", "tab\t")
VOCABULARY = ("alpha", "beta", "gamma", "delta", "kappa", "omega")


@st.composite
def texts(draw: st.DrawFn, max_pieces: int = 30) -> str:
    pieces = draw(st.lists(st.sampled_from(_PIECES), max_size=max_pieces))
    return "".join(pieces) * draw(st.integers(1, 3))


def _user(seq: int, text: str, source: dict[str, Any] | None = None) -> Event:
    return {"type": "user/message", "seq": seq, "time": seq,
            "data": {"id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": text}],
                     "source": source or {"kind": "user"}}, "surfaceOp": "append"}


def _assistant(seq: int, text: str, extra: bool) -> Event:
    content: list[dict[str, Any]] = []
    if extra:
        content.append({"type": "reasoning", "text": "private " + text})
    content.append({"type": "text", "text": text})
    if extra:
        content.append({"type": "tool-call", "id": f"c{seq}", "name": "read", "arguments": "{}"})
    return {"type": "assistant/message", "seq": seq, "time": seq,
            "data": {"turn": 1, "step": 1, "message": {
                "id": f"a{seq}", "role": "assistant", "content": content,
                "source": {"kind": "model", "provider": "mock", "model": "mock"}}},
            "surfaceOp": "append"}


def _tool_result(seq: int, text: str) -> Event:
    return {"type": "tool/result", "seq": seq, "time": seq,
            "data": {"turn": 1, "step": 1, "message": {
                "id": f"t{seq}", "role": "tool", "content": [
                    {"type": "tool-result", "toolCallId": f"c{seq}",
                     "content": [{"type": "text", "text": text}]}],
                "source": {"kind": "tool", "callId": f"c{seq}"}}},
            "surfaceOp": "append"}


_CHECKPOINT = {"kind": "plugin", "plugin": "compact", "compactionId": "c1"}


@st.composite
def surface_snapshots(draw: st.DrawFn, max_events: int = 8) -> dict[str, Any]:
    """A snapshot in its wire form (``SurfaceSnapshot.from_json`` reads it)."""
    events: list[Event] = []
    for seq in range(draw(st.integers(0, max_events))):
        kind = draw(st.sampled_from(("user", "user", "assistant", "assistant", "checkpoint",
                                     "plugin", "tool")))
        text = draw(texts())
        if kind == "user":
            events.append(_user(seq, text))
        elif kind == "assistant":
            events.append(_assistant(seq, text, draw(st.booleans())))
        elif kind == "checkpoint":
            events.append(_user(seq, text, dict(_CHECKPOINT)))
        elif kind == "plugin":
            events.append(_user(seq, text, {"kind": "plugin", "plugin": "workspace"}))
        else:
            events.append(_tool_result(seq, text))
    session: dict[str, Any] = {"id": draw(st.sampled_from(("s", "src-1", "会话", "a\"b<c")))}
    if draw(st.booleans()):
        session["cwd"] = draw(st.sampled_from(("/w", "/repo/<x>", "/路径")))
    last = draw(st.one_of(st.none(), st.integers(len(events), len(events) + 5)))
    return {"session": session, "capturedThroughSeq": last, "events": events}


@st.composite
def compacted_logs(draw: st.DrawFn, max_messages: int = 10,
                   max_compactions: int = 3) -> list[Event]:
    """A raw log: messages, log-only ``turn/end`` and ``tool/call`` events, and compactions."""
    events: list[Event] = []
    surface: list[int] = []

    def words() -> str:
        return " ".join(draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4)))

    compactions = 0
    for _ in range(draw(st.integers(1, max_messages))):
        seq = len(events)
        action = draw(st.sampled_from(("user", "assistant", "log", "compact")))
        if action == "compact" and surface and compactions < max_compactions:
            start = draw(st.integers(0, len(surface) - 1))
            end = draw(st.integers(start, len(surface) - 1))
            shadowed = surface[start:end + 1]
            event = _user(seq, "summary " + words(), dict(_CHECKPOINT))
            event["surfaceOp"] = {"op": "replace", "start": shadowed[0], "end": shadowed[-1]}
            event["sourceEventSeqs"] = list(shadowed)
            surface[start:end + 1] = [seq]
            compactions += 1
        elif action == "log":
            event = {"type": "tool/call", "seq": seq, "time": seq,
                     "data": {"turn": 1, "step": 1, "id": f"c{seq}", "name": "grep",
                              "arguments": words()}}
        elif action == "assistant":
            event = _assistant(seq, words(), draw(st.booleans()))
            surface.append(seq)
        else:
            event = _user(seq, words())
            surface.append(seq)
        events.append(event)
    return events
