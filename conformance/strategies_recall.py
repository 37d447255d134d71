"""Hypothesis strategies for the memory-recall property: sets of sessions of two projects
created around a fixed ``now``, whose logs mention the query text on and off the surface
(shadowed by a replacement, or log-only as a raw chunk), and recall requests over them.

Requires ``hypothesis`` (the ``test`` extra).
"""

from __future__ import annotations

from typing import Any, Final

from hypothesis import strategies as st

from .interface import JsonObject

__all__ = ["NOW", "recall_requests", "session_sets"]

DAY: Final = 86_400_000
NOW: Final = 1_800_000_000_000
PROJECTS: Final = ("/w", "/x")
QUERIES: Final = ("deploy", "DEPLOY it", "ship")
#: Pieces of text: the queries in other cases and spacings, a long run to be cut, an astral
#: character that a cut may meet, and words that match nothing.
WORDS: Final = ("deploy", "Deploy", "DEPLOY\tit", "deploy it", "ship", "shipping", "x" * 40,
                "\U0001F600", "\u00e9t\u00e9", "plain", "words")


def _message(seq: int, text: str, **extra: Any) -> JsonObject:
    return {"type": "user/message", "seq": seq, "time": seq, "data": {
        "id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"}}, "surfaceOp": "append", **extra}


def _chunk(seq: int, text: str) -> JsonObject:
    return {"type": "assistant/chunk", "seq": seq, "time": seq,
            "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "text": text}}}


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)


@st.composite
def session_events(draw: st.DrawFn) -> list[JsonObject]:
    """Messages, maybe a raw chunk (log-only) and maybe a replacement of the first messages
    (which shadows them)."""
    events: list[JsonObject] = []
    messages: list[int] = []
    for _ in range(draw(st.integers(1, 4))):
        seq = len(events)
        if draw(st.booleans()) and draw(st.booleans()):
            events.append(_chunk(seq, draw(texts)))
            seq += 1
        events.append(_message(seq, draw(texts)))
        messages.append(seq)
    if draw(st.booleans()):
        upto = draw(st.integers(0, len(messages) - 1))
        shadowed = messages[:upto + 1]
        events.append(_message(len(events), draw(texts),
                               surfaceOp={"op": "replace", "start": shadowed[0],
                                          "end": shadowed[-1]},
                               sourceEventSeqs=shadowed))
    return events


@st.composite
def session_sets(draw: st.DrawFn) -> list[JsonObject]:
    """One to six sessions with distinct ids, each of one project, created from 35 days
    before ``NOW`` to one ms after it (the window edges drawn often)."""
    count = draw(st.integers(1, 6))
    created = st.one_of(st.sampled_from([NOW, NOW + 1, NOW - 30 * DAY, NOW - 30 * DAY - 1,
                                         NOW - DAY]),
                        st.integers(NOW - 35 * DAY, NOW))
    return [{"header": {"version": 0, "id": f"s{index}", "createdAt": draw(created),
                        "delegationDepth": 0, "cwd": draw(st.sampled_from(PROJECTS))},
             "events": draw(session_events())} for index in range(count)]


@st.composite
def recall_requests(draw: st.DrawFn) -> JsonObject:
    """``{"sessions", "recall"}``: a session set and a request over it."""
    sessions = draw(session_sets())
    request: JsonObject = {"text": draw(st.sampled_from(QUERIES)), "cwd": "/w", "now": NOW}
    for key, values in (("sessionId", st.sampled_from(["s0", "s1", "elsewhere"])),
                        ("historyLimit", st.integers(1, 8)), ("snippetCap", st.integers(1, 5)),
                        ("snippetChars", st.integers(1, 60)),
                        ("windowDays", st.sampled_from([1, 30, 31]))):
        if draw(st.booleans()):
            request[key] = draw(values)
    return {"sessions": sessions, "recall": request}
