"""Session query (spec chapter ``query``): searchable documents of session logs, filters,
reads and traces, and a SQLite FTS5 index (``dshkit.reference.query``)."""

from __future__ import annotations

from .cursor import CursorPayload, canonical_filters, decode_cursor, encode_cursor, fingerprint
from .documents import (
    SURFACES,
    Document,
    EventRecord,
    build_documents,
    build_records,
    classify,
    fold_log,
)
from .errors import CODES, SessionQueryError
from .extract import extract_text
from .filters import (
    TextFilter,
    compile_text_filter,
    filter_documents,
    filter_sessions,
    materialize_event_filters,
    materialize_session_filters,
)
from .indexer import FileOutcome, IndexReport, index_paths, index_sessions, write_session
from .request import (
    EventSearch,
    Limits,
    SessionSearch,
    normalize_event_request,
    normalize_query,
    normalize_session_request,
)
from .search import (
    SearchConfig,
    SearchPage,
    SessionSearchEngine,
    disabled_engine,
    has_cjk,
    resolve_match,
)
from .snippet import make_snippet
from .source import LoadedSession, discover, load_session, session_of_events
from .sql import SqlWhere, event_where, quote_phrase, sanitize, session_where
from .store import APPLICATION_ID, SCHEMA_VERSION, IndexStore, OpenDecision, decide, open_index
from .trace import EventTrace, EventWindow, read_event, trace_event

__all__ = [
    "APPLICATION_ID",
    "CODES",
    "SCHEMA_VERSION",
    "SURFACES",
    "CursorPayload",
    "Document",
    "EventRecord",
    "EventSearch",
    "EventTrace",
    "EventWindow",
    "FileOutcome",
    "IndexReport",
    "IndexStore",
    "Limits",
    "LoadedSession",
    "OpenDecision",
    "SearchConfig",
    "SearchPage",
    "SessionQueryError",
    "SessionSearch",
    "SessionSearchEngine",
    "SqlWhere",
    "TextFilter",
    "build_documents",
    "build_records",
    "canonical_filters",
    "classify",
    "compile_text_filter",
    "decide",
    "decode_cursor",
    "disabled_engine",
    "discover",
    "encode_cursor",
    "event_where",
    "extract_text",
    "filter_documents",
    "filter_sessions",
    "fingerprint",
    "fold_log",
    "has_cjk",
    "index_paths",
    "index_sessions",
    "load_session",
    "make_snippet",
    "materialize_event_filters",
    "materialize_session_filters",
    "normalize_event_request",
    "normalize_query",
    "normalize_session_request",
    "open_index",
    "quote_phrase",
    "read_event",
    "resolve_match",
    "sanitize",
    "session_of_events",
    "session_where",
    "trace_event",
    "write_session",
]
