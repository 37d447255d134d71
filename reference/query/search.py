"""Ranked search over the index, and the engine that owns it (QRY-RNK-*, QRY-ENG-*)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from .cursor import CursorPayload, decode_cursor, encode_cursor, fingerprint
from .documents import SURFACES
from .errors import (
    INDEX_FAILED,
    INVALID_CONFIG,
    SEARCH_DISABLED,
    SESSION_NOT_FOUND,
    SessionQueryError,
)
from .filters import compile_text_filter
from .indexer import IndexReport, Progress, index_paths, index_sessions
from .request import (
    SNIPPET_CHARS,
    EventSearch,
    Limits,
    SessionSearch,
    normalize_event_request,
    normalize_session_request,
)
from .snippet import make_snippet
from .source import LoadedSession
from .sql import (
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    SqlWhere,
    check_bindings,
    check_predicates,
    event_where,
    quote_phrase,
    session_where,
)
from .store import (
    JOURNAL_MODES,
    MEMORY,
    OPEN_ROWIDS,
    SHADOWED_ROWIDS,
    IndexStore,
    classed,
    open_index,
)
from .trace import READ_WINDOW_MAX

OPEN_AT: Final = ("startup", "first-search", "never")
MATCH_MODES: Final = ("auto", "token", "literal")
DISABLED_MESSAGE: Final = ("session search is disabled: this deployment configures the "
                           "session-query index with openAt \"never\"")

#: Blocks of the scripts written without spaces between words (Han, Hiragana, Katakana,
#: Bopomofo) and Hangul, whose words carry attached particles (QRY-CJK-002).
CJK_RANGES: Final = (
    (0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3040, 0x30FF), (0x3100, 0x312F),
    (0x3130, 0x318F), (0x31A0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xA960, 0xA97F), (0xAC00, 0xD7AF), (0xD7B0, 0xD7FF), (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F), (0xFFA0, 0xFFDC), (0x1AFF0, 0x1B16F), (0x20000, 0x3134F),
)


def has_cjk(text: str) -> bool:
    return any(lo <= ord(ch) <= hi for ch in text for lo, hi in CJK_RANGES)


def resolve_match(query: str, match: str) -> str:
    """``token`` (FTS5 phrase) or ``literal`` (substring scan) for a normalized query."""
    if match not in MATCH_MODES:
        raise SessionQueryError(INVALID_CONFIG, f"match mode must be one of "
                                f"{', '.join(MATCH_MODES)}")
    if match == "auto":
        return "literal" if has_cjk(query) else "token"
    return match


def _marker(query: str) -> Callable[[str], str | None]:
    pattern = compile_text_filter(query).pattern

    def mark(text: str) -> str | None:
        if not isinstance(text, str):
            return None
        out, last, found = [], 0, False
        for match in pattern.finditer(text):
            out += [text[last:match.start()], HIGHLIGHT_START, match.group(), HIGHLIGHT_END]
            last, found = match.end(), True
        if not found:
            return None
        out.append(text[last:])
        return "".join(out)

    return mark


_COLUMNS: Final = """
        d.session_id AS session_id, s.version AS version, s.created_at AS created_at,
        s.cwd AS cwd, s.parent_session AS parent_session, s.seed_length AS seed_length,
        s.delegation_depth AS delegation_depth, s.agent_preset AS agent_preset,
        s.title AS title, s.path AS path, 0 AS live, 1 AS persisted,
        CAST(d.seq AS INTEGER) AS seq, d.type AS type, CAST(d.time AS INTEGER) AS time,
        d.surface AS surface, CAST(d.codepoint_length AS INTEGER) AS document_length"""


def verbatim_run(query: str) -> str | None:
    """The longest run of the query's CJK-block characters, or None. Those characters have no
    case, so a literal match of the query contains the run exactly as written: a document
    without it cannot match, and ``instr`` skips it before the marker runs (QRY-CJK-003)."""
    best, run = "", []
    for ch in query + "\0":
        if has_cjk(ch):
            run.append(ch)
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    return best or None


def _selected(match: str, query: str, include_shadowed: bool, rowids: tuple[int, int] | None
              ) -> tuple[str, list[Any]]:
    """The ``candidates``/``matched`` CTEs and their bindings. ``rowids`` bounds the documents
    to one rowid class (QRY-IDX-015): a pruning that changes no result."""
    shadow = "AND (? = 1 OR d.surface <> 'shadowed')"
    params: list[Any]
    if match == "token":
        bound = "AND d.rowid >= ? AND d.rowid < ?" if rowids else ""
        sql = f"""WITH candidates AS MATERIALIZED (
      SELECT {_COLUMNS}, highlight(docs, 0, ?, ?) AS marked_text
      FROM docs AS d JOIN sessions AS s ON s.id = d.session_id
      WHERE docs MATCH ? {bound} {shadow}"""
        params = [HIGHLIGHT_START, HIGHLIGHT_END, quote_phrase(query), *(rowids or ())]
    else:
        needle = verbatim_run(query)
        inner = [f"rowid >= {rowids[0]} AND rowid < {rowids[1]}"] if rowids else []
        inner += ["instr(text, ?) > 0"] if needle else []
        sql = f"""WITH marked AS MATERIALIZED (
      SELECT session_id, seq, type, time, surface, codepoint_length,
             dshkit_mark(text) AS marked_text FROM docs
      {'WHERE ' + ' AND '.join(inner) if inner else ''}
    ), candidates AS MATERIALIZED (
      SELECT {_COLUMNS}, d.marked_text AS marked_text
      FROM marked AS d JOIN sessions AS s ON s.id = d.session_id
      WHERE d.marked_text IS NOT NULL {shadow}"""
        params = [needle] if needle else []
    sql += """
    ), matched AS (
      SELECT *, (length(CAST(marked_text AS BLOB))
                 - length(CAST(replace(marked_text, ?, '') AS BLOB))) / ? AS match_count
      FROM candidates
    )"""
    params += [1 if include_shadowed else 0, HIGHLIGHT_START, len(HIGHLIGHT_START.encode())]
    return sql, params


def rowid_bounds(filters: Iterable[dict[str, Any]]) -> tuple[int, int] | None:
    """The one rowid class a request can return documents from, or None (both classes)."""
    allowed = {"current", "log-only"}  # the default: no shadowed history (QRY-RNK-004)
    clauses = [set(f["values"]) for f in filters if f["kind"] == "surface"]
    if clauses:
        allowed = set(SURFACES).intersection(*clauses)
    if "shadowed" not in allowed:
        return OPEN_ROWIDS
    if allowed == {"shadowed"}:
        return SHADOWED_ROWIDS
    return None


def _has_surface_clause(filters: Iterable[dict[str, Any]]) -> bool:
    return any(f["kind"] == "surface" for f in filters)


@dataclass(frozen=True, slots=True)
class SearchPage:
    items: tuple[dict[str, Any], ...]
    next_cursor: str | None = None
    session: dict[str, Any] | None = None
    match: str = "token"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.session is not None:
            out["session"] = self.session
        out["items"] = list(self.items)
        if self.next_cursor is not None:
            out["nextCursor"] = self.next_cursor
        out["match"] = self.match
        return out


def row_header(row: sqlite3.Row) -> dict[str, Any]:
    header: dict[str, Any] = {"version": row["version"], "id": row["session_id"],
                              "createdAt": row["created_at"]}
    for key, column in (("cwd", "cwd"), ("parentSession", "parent_session"),
                        ("seedLength", "seed_length"), ("delegationDepth", "delegation_depth"),
                        ("agentPreset", "agent_preset")):
        if row[column] is not None:
            header[key] = row[column]
    return header


@dataclass
class SearchConfig:
    """The engine's settings (QRY-ENG-001); a violation is ``INVALID_CONFIG``."""

    path: str
    open_at: str = "startup"
    journal_mode: str = "wal"
    default_limit: int = 20
    max_limit: int = 100
    snippet_chars: int = SNIPPET_CHARS
    read_window_max: int = READ_WINDOW_MAX
    limits: Limits = field(init=False)

    def __post_init__(self) -> None:
        def bad(detail: str) -> SessionQueryError:
            return SessionQueryError(INVALID_CONFIG, f"session-search SQLite config: {detail}")

        if not isinstance(self.path, str) or not self.path.strip():
            raise bad("path must be a non-blank string")
        if self.open_at not in OPEN_AT:
            raise bad(f"openAt must be one of {', '.join(OPEN_AT)}")
        if self.journal_mode not in JOURNAL_MODES:
            raise bad(f"journalMode must be one of {', '.join(JOURNAL_MODES)}")
        for name in ("snippet_chars",):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise bad(f"{name} must be a positive integer")
        if isinstance(self.read_window_max, bool) or not isinstance(self.read_window_max, int) \
                or self.read_window_max < 0:
            raise bad("read_window_max must be a non-negative integer")
        self.limits = Limits(self.default_limit, self.max_limit)


class SessionSearchEngine:
    """Search over one index database. With ``open_at="never"`` searching and indexing are
    disabled: they raise ``SESSION_QUERY_SEARCH_DISABLED`` before looking at the request,
    and the database is never opened (QRY-ENG-003)."""

    def __init__(self, config: SearchConfig) -> None:
        self.config = config
        self._store: IndexStore | None = None
        if config.open_at == "startup":
            self._store = open_index(config.path, config.journal_mode)

    @classmethod
    def open(cls, path: str | Path, **options: Any) -> SessionSearchEngine:
        return cls(SearchConfig(path=str(path), **options))

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> SessionSearchEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def store(self) -> IndexStore:
        if self.config.open_at == "never":
            raise SessionQueryError(SEARCH_DISABLED, DISABLED_MESSAGE)
        if self._store is None:
            self._store = open_index(self.config.path, self.config.journal_mode)
        return self._store

    def index_paths(self, paths: Iterable[str | Path], *,
                    progress: Progress | None = None) -> IndexReport:
        return index_paths(self.store, paths, progress=progress)

    def index_sessions(self, sessions: Iterable[LoadedSession]) -> int:
        return index_sessions(self.store, sessions)

    def session_row(self, session_id: str) -> sqlite3.Row:
        conn = self.store.conn
        conn.row_factory = sqlite3.Row
        row: sqlite3.Row | None = conn.execute(
            "SELECT id AS session_id, * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise SessionQueryError(SESSION_NOT_FOUND, f'session "{session_id}" not found')
        return row

    def search_sessions(self, request: Any, *, match: str = "auto") -> SearchPage:
        """Best event per session, sessions ranked (QRY-RNK-002)."""
        if self.config.open_at == "never":
            raise SessionQueryError(SEARCH_DISABLED, DISABLED_MESSAGE)
        normalized = normalize_session_request(request, self.config.limits)
        mode = resolve_match(normalized.query, match)
        store = self.store
        generation = str(store.global_generation)
        identity = fingerprint(normalized, mode)
        offset = 0 if normalized.cursor is None else decode_cursor(
            normalized.cursor, instance=store.instance, scope="sessions",
            fingerprint=identity, generation=generation)
        rows = self._query_sessions(normalized, mode, offset)
        return self._page(rows, normalized.limit, offset, mode, None, lambda o: CursorPayload(
            store.instance, "sessions", identity, generation, o))

    def search_events(self, request: Any, *, match: str = "auto") -> SearchPage:
        """Events of one session, ranked (QRY-RNK-001)."""
        if self.config.open_at == "never":
            raise SessionQueryError(SEARCH_DISABLED, DISABLED_MESSAGE)
        normalized = normalize_event_request(request, self.config.limits)
        mode = resolve_match(normalized.query, match)
        store = self.store
        target = self.session_row(normalized.session_id)
        generation = f"index:{target['generation']}"
        identity = fingerprint(normalized, mode)
        offset = 0 if normalized.cursor is None else decode_cursor(
            normalized.cursor, instance=store.instance, scope="events", fingerprint=identity,
            generation=generation)
        rows = self._query_events(normalized, mode, offset)
        return self._page(rows, normalized.limit, offset, mode, row_header(target),
                          lambda o: CursorPayload(store.instance, "events", identity,
                                                  generation, o))

    def _bounds(self, filters: Iterable[dict[str, Any]]) -> tuple[int, int] | None:
        bounds = rowid_bounds(filters)
        return bounds if bounds is not None and classed(self.store.conn) else None

    def _execute(self, sql: str, params: list[Any], mode: str, query: str
                 ) -> list[sqlite3.Row]:
        check_bindings(len(params))
        conn = self.store.conn
        conn.row_factory = sqlite3.Row
        if mode == "literal":
            conn.create_function("dshkit_mark", 1, _marker(query), deterministic=True)
        try:
            return list(conn.execute(sql, params).fetchall())
        except sqlite3.Error as exc:
            raise SessionQueryError(INDEX_FAILED, f"session-search query failed: {exc}") \
                from None

    def _query_sessions(self, request: SessionSearch, mode: str, offset: int
                        ) -> list[sqlite3.Row]:
        swhere, ewhere = session_where(request.session_filters), event_where(request.event_filters)
        check_predicates(swhere.predicate_count + ewhere.predicate_count)
        where = " AND ".join(w.sql for w in (swhere, ewhere) if w.sql)
        selected, params = _selected(mode, request.query,
                                     _has_surface_clause(request.event_filters),
                                     self._bounds(request.event_filters))
        sql = f"""{selected},
    filtered AS (SELECT * FROM matched {'WHERE ' + where if where else ''}),
    ranked AS (
      SELECT *, ROW_NUMBER() OVER (
        PARTITION BY session_id
        ORDER BY match_count DESC, document_length ASC, time DESC, seq DESC) AS event_rank
      FROM filtered)
    SELECT * FROM ranked WHERE event_rank = 1
    ORDER BY match_count DESC, document_length ASC, time DESC, session_id ASC, seq DESC
    LIMIT ? OFFSET ?"""
        params += [*swhere.params, *ewhere.params, request.limit + 1, offset]
        return self._execute(sql, params, mode, request.query)

    def _query_events(self, request: EventSearch, mode: str, offset: int
                      ) -> list[sqlite3.Row]:
        ewhere: SqlWhere = event_where(request.filters)
        check_predicates(1 + ewhere.predicate_count)
        where = " AND ".join(w for w in ("session_id = ?", ewhere.sql) if w)
        selected, params = _selected(mode, request.query, _has_surface_clause(request.filters),
                                     self._bounds(request.filters))
        sql = f"""{selected}
    SELECT * FROM matched WHERE {where}
    ORDER BY match_count DESC, document_length ASC, time DESC, seq DESC
    LIMIT ? OFFSET ?"""
        params += [request.session_id, *ewhere.params, request.limit + 1, offset]
        return self._execute(sql, params, mode, request.query)

    def _event_hit(self, row: sqlite3.Row) -> dict[str, Any]:
        return {"sessionId": row["session_id"], "seq": row["seq"], "type": row["type"],
                "time": row["time"], "surface": row["surface"],
                "snippet": make_snippet(row["marked_text"], self.config.snippet_chars)}

    def _session_hit(self, row: sqlite3.Row) -> dict[str, Any]:
        hit: dict[str, Any] = {"header": row_header(row), "live": False, "persisted": True}
        if row["title"] is not None:
            hit["title"] = row["title"]
        if row["path"] is not None:
            hit["path"] = row["path"]
        hit["bestMatch"] = self._event_hit(row)
        return hit

    def _page(self, rows: list[sqlite3.Row], limit: int, offset: int, mode: str,
              session: dict[str, Any] | None,
              payload: Callable[[int], CursorPayload]) -> SearchPage:
        convert = self._session_hit if session is None else self._event_hit
        items = tuple(convert(row) for row in rows[:limit])
        cursor = encode_cursor(payload(offset + limit)) if len(rows) > limit else None
        return SearchPage(items=items, next_cursor=cursor, session=session, match=mode)


def disabled_engine() -> SessionSearchEngine:
    """The disabled mode: an in-memory path that is never opened."""
    return SessionSearchEngine(SearchConfig(path=MEMORY, open_at="never"))

