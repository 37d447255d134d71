"""The tools of the read-only MCP server, as pure functions over a read-only store view
(spec chapter ``memory/mcp``, MEM-MCP-001..008).

Nothing here imports the MCP SDK: the transport lives in ``dshkit.cli.memory_serve``, and the
conformance kit calls :func:`call_tool` directly. Every tool sees the reader's visible set
(MEM-KEY-004) and has no side effect: no recall count, no audit row, no write of any kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .errors import MemoryProtocolError, invalid
from .inputs import BUCKETS, SCOPES, TRACKS, check_keys
from .keys import agent_key, visible, workspace_key
from .mcp_recall import DESCRIPTION as RECALL_DESCRIPTION
from .mcp_recall import INPUT_SCHEMA as RECALL_INPUT
from .mcp_recall import History, history_half, parse
from .provider import DEFAULT_BUDGETS, DEFAULT_QUERY_LIMIT, MAX_QUERY_LIMIT, _limits
from .store import CREATION, RANKING, Store

SERVER_NAME = "dshkit-memory"
DEFAULT_LIST_LIMIT = 50
#: The recall tool, offered only when the server was given session history (MEM-MCP-003).
RECALL_TOOL = "memory_recall"


@dataclass(frozen=True, slots=True)
class Reader:
    """The one session context a server is started for: its workspace and agent keys, and
    its raw ``cwd``, the project whose history ``memory_recall`` reads (MEM-RCL-010)."""

    workspace: str
    agent: str
    project: str = ""

    @classmethod
    def of(cls, cwd: Any, agent_preset: Any) -> Reader:
        """The keys of a session whose header has this ``cwd`` and ``agentPreset``
        (MEM-KEY-001, MEM-KEY-002)."""
        return cls(workspace_key(cwd), agent_key(agent_preset),
                   cwd if isinstance(cwd, str) else "")

    @property
    def keys(self) -> tuple[str, str]:
        return self.workspace, self.agent


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [{"type": "null"}, schema]}


_TRACK = _nullable({"enum": list(TRACKS)})
_SCOPE = _nullable({"enum": list(SCOPES)})
_LIMIT = _nullable({"type": "integer", "minimum": 1})

#: The tool list in order: name → (description, input schema). The input schemas are also
#: ``$defs`` of schemas/memory/v1/mcp-tools.json (checked by the tests).
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "memory_search": (
        "Search the memory entries this session can see by text (case-insensitive substring), "
        "track and scope. Ranked by recall count, then most recently updated. Read-only.",
        {"type": "object", "properties": {
            "text": _nullable({"type": "string"}), "track": _TRACK, "scope": _SCOPE,
            "limit": _LIMIT}, "additionalProperties": False}),
    "memory_list": (
        "List the memory entries this session can see, oldest first, one page at a time "
        "(offset, limit), optionally only one track, scope or workspace key. Read-only.",
        {"type": "object", "properties": {
            "track": _TRACK, "scope": _SCOPE, "workspaceKey": _nullable({"type": "string"}),
            "offset": _nullable({"type": "integer", "minimum": 0}), "limit": _LIMIT},
         "additionalProperties": False}),
    "memory_read": (
        "Read one memory entry by its id; entry is null when this session cannot see an "
        "entry with that id. Read-only.",
        {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"],
         "additionalProperties": False}),
    "memory_stats": (
        "Count the memory entries this session can see per track and scope, with each "
        "bucket's store-wide budget usage and limit. Read-only.",
        {"type": "object", "properties": {}, "additionalProperties": False}),
}


def tool_list(*, recall: bool) -> dict[str, tuple[str, dict[str, Any]]]:
    """The tools in order; ``memory_recall`` last, and only for a server with session history
    (MEM-MCP-002, MEM-MCP-003)."""
    if not recall:
        return dict(TOOLS)
    return {**TOOLS, RECALL_TOOL: (RECALL_DESCRIPTION, RECALL_INPUT)}


def tool_names() -> list[str]:
    return list(TOOLS)


def _arguments(arguments: Any) -> dict[str, Any]:
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise invalid("/", "the arguments must be an object")
    return arguments


def _choice(data: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str | None:
    value = data.get(key)
    if value is not None and value not in allowed:
        raise invalid(f"/{key}", f"{key} must be one of {', '.join(allowed)}")
    return value


def _integer(data: dict[str, Any], key: str, default: int, minimum: int) -> int:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "a positive integer" if minimum == 1 else "a non-negative integer"
        raise invalid(f"/{key}", f"{key} must be {kind}")
    return value


def _string(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise invalid(f"/{key}", f"{key} must be a string")
    return value


def search(store: Store, reader: Reader, arguments: Any) -> dict[str, Any]:
    """MEM-MCP-004: ``query`` over the reader's visible set, without the recall."""
    data = _arguments(arguments)
    check_keys(data, {"text", "track", "scope", "limit"})
    track = _choice(data, "track", TRACKS)
    scope = _choice(data, "scope", SCOPES)
    text = _string(data, "text")
    limit = min(_integer(data, "limit", DEFAULT_QUERY_LIMIT, 1), MAX_QUERY_LIMIT)
    page, total = store.select(track=track, scope=scope, keys=reader.keys, needle=text,
                               order=RANKING, limit=limit)
    return {"entries": page, "total": total, "truncated": total > len(page)}


def list_page(store: Store, reader: Reader, arguments: Any) -> dict[str, Any]:
    """MEM-MCP-005: the visible set in (createdAt, id) order, a page at a time."""
    data = _arguments(arguments)
    check_keys(data, {"track", "scope", "workspaceKey", "offset", "limit"})
    track = _choice(data, "track", TRACKS)
    scope = _choice(data, "scope", SCOPES)
    workspace = _string(data, "workspaceKey")
    offset = _integer(data, "offset", 0, 0)
    limit = min(_integer(data, "limit", DEFAULT_LIST_LIMIT, 1), MAX_QUERY_LIMIT)
    chosen, _ = store.select(track=track, scope=scope, keys=reader.keys, order=CREATION)
    if workspace is not None:
        wanted = workspace_key(workspace)
        chosen = [e for e in chosen if e["workspaceKey"] == wanted]
    page = chosen[offset:offset + limit]
    following = offset + len(page)
    return {"entries": page, "total": len(chosen), "offset": offset,
            "nextOffset": following if following < len(chosen) else None}


def read(store: Store, reader: Reader, arguments: Any) -> dict[str, Any]:
    """MEM-MCP-006: one entry of the visible set by id; ``null`` for any other id, so that the
    answer does not tell an invisible entry from an absent one."""
    data = _arguments(arguments)
    check_keys(data, {"id"})
    entry_id = data.get("id")
    if not isinstance(entry_id, str):
        raise invalid("/id", "id must be a string")
    entry = store.entry(entry_id)
    if entry is None or not visible(entry, reader.workspace, reader.agent):
        return {"entry": None}
    return {"entry": entry}


def stats(store: Store, reader: Reader, arguments: Any) -> dict[str, Any]:
    """MEM-MCP-007: visible counts per bucket, store-wide usage as ``budgets()`` reports it."""
    check_keys(_arguments(arguments), set())
    entries, total = store.select(keys=reader.keys, order=CREATION)
    usage = store.bucket_usage()
    limits = _limits(DEFAULT_BUDGETS)
    counts = {bucket: 0 for bucket in BUCKETS}
    for entry in entries:
        counts[(entry["track"], entry["scope"])] += 1
    return {"total": total, "buckets": [
        {"track": t, "scope": s, "count": counts[(t, s)], "used": usage.get((t, s), 0),
         "limit": limits[(t, s)]} for t, s in BUCKETS]}


def recall(store: Store, reader: Reader, arguments: Any, history: History) -> dict[str, Any]:
    """MEM-MCP-003: ``{memory, history}`` as recall's, with ``memory_search`` as the memory
    half (no recall count, no audit row) and the reader's project and the server's clock for
    the history half."""
    checked = parse(_arguments(arguments))
    memory = search(store, reader, {"text": checked.text,
                                    "limit": checked.limits["memoryLimit"]})
    return {"memory": memory, "history": history_half(history, checked, reader.project)}


_HANDLERS: dict[str, Callable[[Store, Reader, Any], dict[str, Any]]] = {
    "memory_search": search, "memory_list": list_page, "memory_read": read,
    "memory_stats": stats,
}


def call_tool(store: Store, reader: Reader, name: Any, arguments: Any,
              history: History | None = None) -> dict[str, Any]:
    """MEM-MCP-002/003/008: the result of tool ``name``, or a :class:`MemoryProtocolError`
    for any argument or tool name this server does not serve (every write-shaped name among
    them: the server has no write tool). ``history`` is the session history of a server
    started with ``--sessions``; without it ``memory_recall`` is unknown."""
    if name == RECALL_TOOL and history is not None:
        return recall(store, reader, arguments, history)
    handler = _HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        names = tool_list(recall=history is not None)
        raise MemoryProtocolError(
            "INVALID_INPUT", f"invalid input at /name: {name!r} is not a tool of this "
            f"read-only server; its tools are {', '.join(names)}",
            {"field": "/name", "reason": "unknown tool"})
    return handler(store, reader, arguments)
