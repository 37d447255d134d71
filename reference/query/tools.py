"""The model-facing ``session_search`` tool: argument translation and result text
(QRY-TOOL-*). The same text is what ``dshkit query search`` prints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from .errors import INVALID_ARGS, INVALID_FILTER, SessionQueryError
from .request import normalize_query
from .timestamps import iso, timestamp_range

NO_MATCHES: Final = "No prior session matches found."
NO_EVENT_MATCHES: Final = "No prior event matches found."
CAP_LINE: Final = "Result cap reached. Narrow the query or add filters to find additional matches."
MAX_SAFE_INTEGER: Final = 9_007_199_254_740_991

_STRING_ARRAYS: Final = ("session_ids", "parent_session_ids", "event_types")
_ENUMS: Final = {"availability": ("live", "persisted"),
                 "event_surfaces": ("current", "shadowed", "log-only")}
_STRINGS: Final = ("query", "created_at_from", "created_at_to", "event_time_from",
                   "event_time_to")
_INTEGERS: Final = ("event_seq_from", "event_seq_to")


def _args_error(detail: str) -> SessionQueryError:
    return SessionQueryError(INVALID_ARGS, f"session_search arguments: {detail}")


def _check_declared(args: dict[str, Any]) -> None:
    """What the tool framework checks before the tool runs: declared types and enums."""
    if not isinstance(args.get("query"), str):
        raise _args_error("query must be a string")
    for name in _STRINGS:
        if name in args and not isinstance(args[name], str):
            raise _args_error(f"{name} must be a string")
    for name in (*_STRING_ARRAYS, *_ENUMS):
        if name in args and (not isinstance(args[name], list)
                             or not all(isinstance(v, str) for v in args[name])):
            raise _args_error(f"{name} must be an array of strings")
    for name, allowed in _ENUMS.items():
        for value in args.get(name, []):
            if value not in allowed:
                raise _args_error(f"{name} value {value!r} is not one of {', '.join(allowed)}")
    for name in _INTEGERS:
        value = args.get(name)
        if name in args and (isinstance(value, bool) or not isinstance(value, (int, float))
                             or not float(value).is_integer()):
            raise _args_error(f"{name} must be an integer")
    if "include_root_sessions" in args and not isinstance(args["include_root_sessions"], bool):
        raise _args_error("include_root_sessions must be a boolean")


def _non_empty(name: str, values: Sequence[Any]) -> None:
    if not values:
        raise SessionQueryError(INVALID_FILTER,
                                f"{name} must contain at least one value when supplied")


def _seq_range(start: Any, end: Any) -> dict[str, int]:
    for bound, name in ((start, "lower"), (end, "upper")):
        if bound is not None and not 0 <= bound <= MAX_SAFE_INTEGER:
            raise SessionQueryError(INVALID_FILTER, f"session sequence {name} bound must be a "
                                    "non-negative safe integer")
    if start is not None and end is not None and start > end:
        raise SessionQueryError(INVALID_FILTER, "session sequence filter from must be less "
                                "than or equal to to")
    out: dict[str, int] = {}
    if start is not None:
        out["from"] = int(start)
    if end is not None:
        out["to"] = int(end)
    return out


def translate_session_search(args: dict[str, Any], caller_cwd: str,
                             in_workspace: Callable[[list[str]], list[str]] = lambda ids: ids
                             ) -> dict[str, Any] | None:
    """The search request for ``session_search`` arguments, or ``None`` when the parent
    clause leaves nothing to search (QRY-TOOL-001..004)."""
    _check_declared(args)
    query = normalize_query(args["query"])
    sessions: list[dict[str, Any]] = []
    if "session_ids" in args:
        _non_empty("session_ids", args["session_ids"])
        sessions.append({"kind": "id", "values": list(args["session_ids"])})
    created = timestamp_range("created_at", args.get("created_at_from"),
                              args.get("created_at_to"))
    if created is not None:
        sessions.append({"kind": "created-at", **created})
    if "availability" in args:
        _non_empty("availability", args["availability"])
        sessions.append({"kind": "availability", "values": list(args["availability"])})
    parents: list[Any] | None = None
    if "parent_session_ids" in args:
        _non_empty("parent_session_ids", args["parent_session_ids"])
        parents = in_workspace(list(dict.fromkeys(args["parent_session_ids"])))
    if args.get("include_root_sessions") is True:
        parents = [*(parents or []), None]
    if parents is not None:
        if not parents:
            return None
        sessions.append({"kind": "parent", "values": parents})
    sessions.append({"kind": "cwd", "values": [caller_cwd]})
    events: list[dict[str, Any]] = []
    seq = _seq_range(args.get("event_seq_from"), args.get("event_seq_to"))
    if seq:
        events.append({"kind": "seq", **seq})
    times = timestamp_range("time", args.get("event_time_from"), args.get("event_time_to"))
    if times is not None:
        events.append({"kind": "time", **times})
    if "event_types" in args:
        _non_empty("event_types", args["event_types"])
        events.append({"kind": "type", "values": list(args["event_types"])})
    if "event_surfaces" in args:
        _non_empty("surfaces", args["event_surfaces"])
        events.append({"kind": "surface", "values": list(args["event_surfaces"])})
    return {"query": query, "sessionFilters": sessions, "eventFilters": events}


def _availability(hit: dict[str, Any]) -> str:
    parts = [name for name in ("live", "persisted") if hit.get(name)]
    return ", ".join(parts) or "unavailable"


def format_session_search(hits: Sequence[dict[str, Any]], *, capped: bool = False,
                          authorized_parents: Callable[[str], bool] = lambda _p: True) -> str:
    """The ``session_search`` text for session hits (each with ``header``, ``live``,
    ``persisted``, optional ``title`` and ``bestMatch``)."""
    if not hits:
        return NO_MATCHES
    lines = [f"Session search results ({len(hits)}):"]
    for number, hit in enumerate(hits, 1):
        header, best = hit["header"], hit["bestMatch"]
        parent = header.get("parentSession")
        shown = "root" if parent is None else parent if authorized_parents(parent) \
            else "[outside workspace]"
        title = hit.get("title")
        lines += ["", f"{number}. Session {header['id']} \u2014 "
                  f"{title if title is not None else 'untitled'}",
                  f"   Created: {iso(header['createdAt'])}",
                  f"   Parent: {shown}",
                  f"   Availability: {_availability(hit)}",
                  f"   Best match: seq {best['seq']} | {best['type']} | {best['surface']} | "
                  f"{iso(best['time'])}",
                  f"   Snippet: {best['snippet']}"]
    if capped:
        lines += ["", CAP_LINE]
    return "\n".join(lines)


def format_event_search(session_id: str, title: str | None, hits: Sequence[dict[str, Any]],
                        *, capped: bool = False) -> str:
    lines = [f"Session {session_id} \u2014 {title if title is not None else 'untitled'}"]
    if not hits:
        return "\n".join([*lines, "", NO_EVENT_MATCHES])
    lines += ["", f"Event search results ({len(hits)}):"]
    for number, hit in enumerate(hits, 1):
        lines += [f"{number}. seq {hit['seq']} | {hit['type']} | {hit['surface']} | "
                  f"{iso(hit['time'])}", f"   Snippet: {hit['snippet']}"]
    if capped:
        lines += ["", CAP_LINE]
    return "\n".join(lines)
