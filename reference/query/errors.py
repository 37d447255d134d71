"""The one structured error of session query (spec chapter ``query``)."""

from __future__ import annotations

from typing import Any, Final

from ..errors import DshkitError

ABORTED: Final = "SESSION_QUERY_ABORTED"
CORRUPT_SESSION: Final = "SESSION_QUERY_CORRUPT_SESSION"
EVENT_NOT_FOUND: Final = "SESSION_QUERY_EVENT_NOT_FOUND"
INDEX_FAILED: Final = "SESSION_QUERY_INDEX_FAILED"
INVALID_CONFIG: Final = "SESSION_QUERY_INVALID_CONFIG"
INVALID_CURSOR: Final = "SESSION_QUERY_INVALID_CURSOR"
INVALID_FILTER: Final = "SESSION_QUERY_INVALID_FILTER"
INVALID_LIMIT: Final = "SESSION_QUERY_INVALID_LIMIT"
INVALID_QUERY: Final = "SESSION_QUERY_INVALID_QUERY"
INVALID_LINEAGE: Final = "SESSION_QUERY_INVALID_LINEAGE"
INVALID_SURFACE: Final = "SESSION_QUERY_INVALID_SURFACE"
INVALID_WINDOW: Final = "SESSION_QUERY_INVALID_WINDOW"
PERSISTENCE_FAILED: Final = "SESSION_QUERY_PERSISTENCE_FAILED"
SEARCH_DISABLED: Final = "SESSION_QUERY_SEARCH_DISABLED"
SESSION_NOT_FOUND: Final = "SESSION_QUERY_SESSION_NOT_FOUND"
STALE_CURSOR: Final = "SESSION_QUERY_STALE_CURSOR"
SOURCE_CONFLICT: Final = "SESSION_QUERY_SOURCE_CONFLICT"
#: Raised by the model-facing argument translation when an argument breaks its declared
#: type or enum (the tool framework's code in DSH).
INVALID_ARGS: Final = "INVALID_ARGS"

CODES: Final = (ABORTED, CORRUPT_SESSION, EVENT_NOT_FOUND, INDEX_FAILED, INVALID_CONFIG,
                INVALID_CURSOR, INVALID_FILTER, INVALID_LIMIT, INVALID_QUERY, INVALID_LINEAGE,
                INVALID_SURFACE, INVALID_WINDOW, PERSISTENCE_FAILED, SEARCH_DISABLED,
                SESSION_NOT_FOUND, STALE_CURSOR, SOURCE_CONFLICT)


class SessionQueryError(DshkitError):
    """A refused query operation; ``code`` is one of :data:`CODES` (or ``INVALID_ARGS``)."""

    def __init__(self, code: str, message: str, **detail: Any) -> None:
        super().__init__(code, message, detail)
        self.detail = detail

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.detail}

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled with the constructor's arguments (Exception's default passes only the message)
        return type(self), (self.code, self.message), self.__dict__
