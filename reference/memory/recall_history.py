"""The history half of a recall (MEM-RCL-010..016): earlier sessions of the same project
from a session query index, with the surface text that matched, cut to snippets."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from ..query import Document, IndexStore, filter_documents, filter_sessions
from ..query.search import row_header
from .text import excerpt

DAY_MS: Final = 86_400_000
_SESSIONS: Final = """SELECT id AS session_id, version, created_at, cwd, parent_session,
    seed_length, delegation_depth, agent_preset FROM sessions"""
#: Only what the model sees: the documents of the current surface (MEM-RCL-013).
_DOCUMENTS: Final = """SELECT CAST(seq AS INTEGER) AS seq, type, time, surface, text FROM docs
    WHERE session_id = ? AND surface = 'current' ORDER BY CAST(seq AS INTEGER)"""


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """What the history half needs, already validated (MEM-RCL-002)."""

    text: str
    project: str
    now: int
    session_id: str | None
    history_limit: int
    snippet_cap: int
    snippet_chars: int
    window_days: int


def candidates(store: IndexStore, request: HistoryRequest) -> list[dict[str, Any]]:
    """The session headers to scan, in scan order, at most ``history_limit`` (MEM-RCL-010,
    MEM-RCL-011)."""
    conn = store.conn
    conn.row_factory = sqlite3.Row
    records = [{"header": row_header(row), "live": False, "persisted": True}
               for row in conn.execute(_SESSIONS).fetchall()]
    chosen = filter_sessions(records, [
        {"kind": "cwd", "values": [request.project]},
        {"kind": "created-at", "from": request.now - request.window_days * DAY_MS,
         "to": request.now},
    ])
    headers = [r["header"] for r in chosen if r["header"]["id"] != request.session_id]
    headers.sort(key=lambda h: (-int(h["createdAt"]), h["id"]))
    return headers[:request.history_limit]


def surface_hits(store: IndexStore, session_id: str, text: str) -> list[Document]:
    """The current-surface documents of one session that contain ``text`` (the literal text
    clause, QRY-FLT-006), in seq order (MEM-RCL-012, MEM-RCL-013)."""
    conn = store.conn
    conn.row_factory = sqlite3.Row
    documents = [Document(session_id, int(row["seq"]), str(row["type"]), row["time"],
                          str(row["surface"]), str(row["text"]))
                 for row in conn.execute(_DOCUMENTS, (session_id,)).fetchall()]
    return filter_documents(documents, [{"kind": "text", "text": text}])


def snippets(hits: Sequence[Document], cap: int, limit: int) -> list[str]:
    """The first ``cap`` hits, each cut to ``limit`` UTF-16 units plus an ellipsis
    (MEM-RCL-014)."""
    return [excerpt(hit.text, limit) for hit in hits[:cap]]


def history(store: IndexStore, request: HistoryRequest) -> dict[str, Any]:
    """``{"available": true, "sessions": [...]}`` for an open index (MEM-RCL-015)."""
    sessions: list[dict[str, Any]] = []
    for header in candidates(store, request):
        hits = surface_hits(store, header["id"], request.text)
        if not hits:
            continue
        sessions.append({"sessionId": header["id"], "createdAt": header["createdAt"],
                         "matches": len(hits),
                         "snippets": snippets(hits, request.snippet_cap,
                                              request.snippet_chars)})
    return {"available": True, "sessions": sessions}
