"""Validation and canonical form of search requests (QRY-REQ-*)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from .errors import (
    INVALID_CONFIG,
    INVALID_CURSOR,
    INVALID_FILTER,
    INVALID_LIMIT,
    INVALID_QUERY,
    SessionQueryError,
)
from .filters import Filter, materialize_event_filters, materialize_session_filters
from .sql import sanitize
from .whitespace import collapse

MAX_PAGE_LIMIT: Final = 9_007_199_254_740_990  # 2**53 - 2: limit + 1 stays exact
DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 100
SNIPPET_CHARS: Final = 240


@dataclass(frozen=True, slots=True)
class Limits:
    default_limit: int = DEFAULT_LIMIT
    max_limit: int = MAX_LIMIT

    def __post_init__(self) -> None:
        for name in ("default_limit", "max_limit"):
            value = getattr(self, name)
            if not _is_int(value) or not 1 <= value <= MAX_PAGE_LIMIT:
                raise SessionQueryError(INVALID_CONFIG, f"session-search config: {name} must "
                                        f"be an integer between 1 and {MAX_PAGE_LIMIT}")
        if self.default_limit > self.max_limit:
            raise SessionQueryError(INVALID_CONFIG, "session-search config: default_limit "
                                    "must not exceed max_limit")


def _is_int(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and float(value).is_integer())


def normalize_query(value: Any) -> str:
    if not isinstance(value, str):
        raise SessionQueryError(INVALID_QUERY, "session-search query must be text")
    query = collapse(value)
    if not query:
        raise SessionQueryError(INVALID_QUERY,
                                "session-search query must contain non-whitespace text")
    if "\0" in query:
        raise SessionQueryError(INVALID_QUERY, "session-search query must not contain NUL")
    return sanitize(query)


def normalize_limit(value: Any, limits: Limits) -> int:
    limit = limits.default_limit if value is None else value
    maximum = min(limits.max_limit, MAX_PAGE_LIMIT)
    if not _is_int(limit) or not 1 <= limit <= maximum:
        raise SessionQueryError(INVALID_LIMIT,
                                f"session-search limit must be an integer between 1 and {maximum}")
    return int(limit)


def _cursor(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise SessionQueryError(INVALID_CURSOR, "session-search cursor must be text")
    return value


@dataclass(frozen=True, slots=True)
class SessionSearch:
    """A normalized cross-session request."""

    query: str
    session_filters: tuple[Filter, ...] = field(default=())
    event_filters: tuple[Filter, ...] = field(default=())
    limit: int = DEFAULT_LIMIT
    cursor: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "sessionFilters": list(self.session_filters),
                               "eventFilters": list(self.event_filters), "limit": self.limit}
        if self.cursor is not None:
            out["cursor"] = self.cursor
        return out


@dataclass(frozen=True, slots=True)
class EventSearch:
    """A normalized within-session request."""

    session_id: str
    query: str
    filters: tuple[Filter, ...] = field(default=())
    limit: int = DEFAULT_LIMIT
    cursor: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sessionId": self.session_id, "query": self.query,
                               "filters": list(self.filters), "limit": self.limit}
        if self.cursor is not None:
            out["cursor"] = self.cursor
        return out


def _request(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SessionQueryError(INVALID_QUERY, "session-search request must be an object")
    return value


def normalize_session_request(request: Any, limits: Limits | None = None) -> SessionSearch:
    """Filters, then cursor, then query, then limit: the first failure wins (QRY-REQ-001)."""
    limits = limits or Limits()
    req = _request(request)
    session_filters = materialize_session_filters(req.get("sessionFilters", []))
    event_filters = materialize_event_filters(req.get("eventFilters", []), allow_text=False)
    cursor = _cursor(req.get("cursor"))
    return SessionSearch(query=normalize_query(req.get("query")),
                         session_filters=tuple(session_filters),
                         event_filters=tuple(event_filters),
                         limit=normalize_limit(req.get("limit"), limits), cursor=cursor)


def normalize_event_request(request: Any, limits: Limits | None = None) -> EventSearch:
    limits = limits or Limits()
    req = _request(request)
    session_id = req.get("sessionId")
    if not isinstance(session_id, str):
        raise SessionQueryError(INVALID_FILTER, "session-search session id must be text")
    filters = materialize_event_filters(req.get("filters", []), allow_text=False)
    cursor = _cursor(req.get("cursor"))
    return EventSearch(session_id=session_id, query=normalize_query(req.get("query")),
                       filters=tuple(filters), limit=normalize_limit(req.get("limit"), limits),
                       cursor=cursor)
