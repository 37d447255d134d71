"""Recall (spec ``memory/recall``): a memory query plus bounded snippets from earlier
sessions of the same project, read from a session query index.

:func:`recall` composes the provider's ``query`` (the memory half, a recall with its counts
and audit row) with the history half of :mod:`.recall_history`; it never writes to the
index. The index is given open, as a function that opens it, or not at all."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, Final

from ..query import IndexStore, SessionQueryError
from ..query.errors import INDEX_FAILED
from ..text import js_trim
from .errors import MemoryProtocolError, invalid
from .inputs import check_keys
from .provider import Provider
from .recall_history import HistoryRequest, history

#: name: (default, lowest, highest) of every limit of a request (MEM-RCL-003).
LIMITS: Final = {
    "memoryLimit": (10, 1, 1000),
    "historyLimit": (8, 1, 100),
    "snippetCap": (5, 1, 50),
    "snippetChars": (300, 1, 10_000),
    "windowDays": (30, 1, 3650),
}
FIELDS: Final = {"text", "cwd", "now", "sessionId", "agentKey", *LIMITS}
#: An open index, a function that opens one (its ``SessionQueryError`` makes the history
#: unavailable), or None: no index.
IndexSource = IndexStore | Callable[[], IndexStore] | None


def string_member(data: Mapping[str, Any], key: str, *, required: bool = False) -> str | None:
    """A non-blank string member of a recall request (MEM-RCL-002), or None when absent."""
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not js_trim(value):
        raise invalid(f"/{key}", f"{key} must be a non-blank string")
    return value


def limit_member(data: Mapping[str, Any], key: str) -> int:
    """A limit of :data:`LIMITS`, within its bounds, or its default (MEM-RCL-003)."""
    default, low, high = LIMITS[key]
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(f"/{key}", f"{key} must be an integer from {low} to {high}")
    return value


def _request(data: Any, clock: Callable[[], int]) -> tuple[HistoryRequest, int, str | None]:
    """The validated request (MEM-RCL-002, MEM-RCL-003), its memory limit and agent key."""
    if not isinstance(data, Mapping):
        raise invalid("/", "must be an object")
    check_keys(dict(data), set(FIELDS))
    text = string_member(data, "text", required=True)
    cwd = string_member(data, "cwd", required=True)
    session_id = string_member(data, "sessionId")
    agent_key = string_member(data, "agentKey")
    now = data.get("now")
    if now is None:
        now = int(clock())
    elif isinstance(now, bool) or not isinstance(now, int) or not 0 <= now <= 2**53 - 1:
        raise invalid("/now", "now must be a non-negative safe integer (ms since the epoch)")
    limits = {key: limit_member(data, key) for key in LIMITS}
    assert text is not None and cwd is not None
    request = HistoryRequest(text=text, project=cwd, now=now, session_id=session_id,
                             history_limit=limits["historyLimit"],
                             snippet_cap=limits["snippetCap"],
                             snippet_chars=limits["snippetChars"],
                             window_days=limits["windowDays"])
    return request, limits["memoryLimit"], agent_key


def _history(index: IndexSource, request: HistoryRequest) -> dict[str, Any]:
    if index is None:
        return {"available": False, "sessions": []}
    if isinstance(index, IndexStore):
        return history(index, request)
    store = index()
    try:
        return history(store, request)
    finally:
        store.close()


def safe_history(index: IndexSource, request: HistoryRequest) -> dict[str, Any]:
    """MEM-RCL-015, MEM-RCL-017: unavailable, with the error, when opening or reading the
    index failed."""
    try:
        return _history(index, request)
    except SessionQueryError as exc:
        error = exc
    except sqlite3.Error as exc:
        error = SessionQueryError(INDEX_FAILED, f"session-search index read failed: {exc}")
    return {"available": False, "sessions": [], "error": error.to_json()}


def recall(provider: Provider, request: Any, index: IndexSource = None) -> dict[str, Any]:
    """``{"memory": query result, "history": {...}}`` (MEM-RCL-001). An invalid request is
    refused with ``INVALID_INPUT`` before anything is read; the memory query's own refusals
    propagate; a history failure is a value, never an exception."""
    checked, memory_limit, agent_key = _request(request, provider.clock)
    opts = {k: v for k, v in (("sessionId", checked.session_id), ("agentKey", agent_key))
            if v is not None}
    memory = provider.query({"text": checked.text, "limit": memory_limit}, opts)
    return {"memory": memory, "history": safe_history(index, checked)}


__all__ = ["FIELDS", "LIMITS", "IndexSource", "MemoryProtocolError", "recall",
           "safe_history"]
