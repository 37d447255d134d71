"""Builders of session-log events and lines, shared by the test modules.

Each returns a new JSON object (a ``dict``) that a test may change freely. ``time`` defaults
to ``seq`` everywhere; pass it when a test depends on another value.
"""

from __future__ import annotations

import json
from typing import Any

Event = dict[str, Any]


def event(kind: str, seq: int, data: Any, *, time: int | None = None, **envelope: Any) -> Event:
    """An event of type ``kind``; ``envelope`` adds members such as ``surfaceOp``."""
    return {"type": kind, "seq": seq, "time": seq if time is None else time, "data": data,
            **envelope}


def user_message(seq: int, text: str, *, ident: str | None = None, time: int | None = None,
                 source: dict[str, Any] | None = None, **envelope: Any) -> Event:
    """A ``user/message`` appended to the surface, with one text block (id ``u<seq>``)."""
    data = {"id": f"u{seq}" if ident is None else ident, "role": "user",
            "content": [{"type": "text", "text": text}],
            "source": {"kind": "user"} if source is None else source}
    return event("user/message", seq, data, time=time, **{"surfaceOp": "append", **envelope})


def session_header(session_id: str, *, created_at: int = 1, **extra: Any) -> dict[str, Any]:
    """The JSONL header line of a version-0 session."""
    return {"type": "session", "version": 0, "id": session_id, "createdAt": created_at,
            "delegationDepth": 0, **extra}


def jsonl_line(value: Any) -> bytes:
    """``value`` as one compact JSON line, newline included."""
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"
