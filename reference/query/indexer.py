"""Bringing the index up to date with a set of logs (QRY-IDX-010..014).

Each session is written in one ``BEGIN IMMEDIATE`` transaction: its old documents go, its
new documents and its metadata row come in, and the generations move on. A process killed
at any point leaves every session either as it was or fully updated; running the indexer
again resumes with the sessions that are missing or out of date.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import INDEX_FAILED, PERSISTENCE_FAILED, SOURCE_CONFLICT, SessionQueryError
from .scan import DocumentRow, SessionDocuments, collector_paused, of_loaded, scan_log
from .source import LoadedSession, discover, file_revision
from .store import (
    OPEN_ROWIDS,
    SHADOWED_ROWIDS,
    IndexStore,
    buffer_pending,
    bulk_settings,
    next_rowid,
)
from .text import document_text

Progress = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class FileOutcome:
    path: str
    status: str  # "indexed" | "unchanged" | "failed"
    session_id: str | None = None
    documents: int = 0
    error: SessionQueryError | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "status": self.status}
        if self.session_id is not None:
            out["sessionId"] = self.session_id
        if self.status == "indexed":
            out["documents"] = self.documents
        if self.error is not None:
            out["error"] = self.error.to_json()
        return out


@dataclass(frozen=True, slots=True)
class IndexReport:
    files: tuple[FileOutcome, ...] = ()
    removed: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> tuple[FileOutcome, ...]:
        return tuple(f for f in self.files if f.status == "failed")

    def to_json(self) -> dict[str, Any]:
        counts = {s: sum(1 for f in self.files if f.status == s)
                  for s in ("indexed", "unchanged", "failed")}
        return {"files": [f.to_json() for f in self.files], "removed": list(self.removed),
                **counts}


def _stat_key(path: Path) -> str:
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def _header_values(session: SessionDocuments) -> list[Any]:
    h = session.header

    def num(key: str) -> int | None:
        value = h.get(key)
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
            else None

    def text(key: str) -> str | None:
        value = h.get(key)
        return value if isinstance(value, str) else None

    return [session.session_id, num("version") or 0, num("createdAt") or 0, text("cwd"),
            text("parentSession"), num("seedLength"), num("delegationDepth"),
            text("agentPreset")]


def _rows(session_id: str, documents: Sequence[DocumentRow],
          starts: dict[tuple[int, int], int]) -> list[tuple[Any, ...]]:
    """Insert rows with classed rowids (QRY-IDX-015): the open documents, then the shadowed
    ones, each in seq order and in one contiguous run of its class from ``starts``."""
    opened: list[tuple[Any, ...]] = []
    shadowed: list[tuple[Any, ...]] = []
    next_open, next_shadowed = starts[OPEN_ROWIDS], starts[SHADOWED_ROWIDS]
    for seq, kind, time, surface, text in documents:
        stored = text if text.isascii() and "\0" not in text else document_text(text)
        if surface == "shadowed":
            shadowed.append((next_shadowed, stored, session_id, seq, kind, time, surface,
                             len(text)))
            next_shadowed += 1
        else:
            opened.append((next_open, stored, session_id, seq, kind, time, surface, len(text)))
            next_open += 1
    opened += shadowed
    return opened


def _finish_session(store: IndexStore, session: SessionDocuments, stat_key: str) -> None:
    """The session's row and the next generation (inside the session's transaction)."""
    generation = store.global_generation + 1
    store.conn.execute("UPDATE index_state SET global_generation = ? WHERE singleton = 1",
                       (generation,))
    store.conn.execute(
        "INSERT OR REPLACE INTO sessions (id, version, created_at, cwd, parent_session, "
        "seed_length, delegation_depth, agent_preset, path, title, revision, stat_key, "
        "events, generation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [*_header_values(session), session.path, session.title, session.revision or "",
         stat_key, session.events, generation])


def write_session(store: IndexStore, session: LoadedSession | SessionDocuments, *,
                  stat_key: str = "", progress: Progress | None = None) -> int:
    """Replace one session's rows in a single transaction; returns its document count."""
    scanned = of_loaded(session) if isinstance(session, LoadedSession) else session
    conn = store.conn
    with bulk_settings(conn):
        conn.execute("BEGIN IMMEDIATE")
        try:
            buffer_pending(conn)
            conn.execute("DELETE FROM docs WHERE session_id = ?", (scanned.session_id,))
            if progress is not None:
                progress("begin", {"sessionId": scanned.session_id})
            conn.executemany(
                "INSERT INTO docs (rowid, text, session_id, seq, type, time, surface, "
                "codepoint_length) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                _rows(scanned.session_id, scanned.rows,
                      {b: next_rowid(conn, b) for b in (OPEN_ROWIDS, SHADOWED_ROWIDS)}))
            _finish_session(store, scanned, stat_key)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    if progress is not None:
        progress("commit", {"sessionId": scanned.session_id, "documents": len(scanned.rows)})
    return len(scanned.rows)


def remove_session(store: IndexStore, session_id: str) -> None:
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("DELETE FROM docs WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        conn.execute("UPDATE index_state SET global_generation = global_generation + 1 "
                     "WHERE singleton = 1")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def index_sessions(store: IndexStore, sessions: Iterable[LoadedSession]) -> int:
    """Write in-memory sessions (no file bookkeeping); returns the document count."""
    with collector_paused():
        return sum(write_session(store, s) for s in sessions)


def _prune(store: IndexStore) -> list[str]:
    removed = []
    rows = store.conn.execute(
        "SELECT id, path FROM sessions WHERE path IS NOT NULL ORDER BY id").fetchall()
    for session_id, path in rows:
        if not os.path.exists(path):
            remove_session(store, session_id)
            removed.append(str(session_id))
    return removed


def _index_file(store: IndexStore, path: Path, progress: Progress | None) -> FileOutcome:
    resolved = str(path.resolve())
    try:
        stat_key = _stat_key(path)
    except OSError as exc:
        error = SessionQueryError(PERSISTENCE_FAILED, f"cannot read {path}: "
                                  f"{exc.strerror or exc}", path=str(path))
        return FileOutcome(str(path), "failed", error=error)
    row = store.conn.execute("SELECT id, revision, stat_key FROM sessions WHERE path = ?",
                             (resolved,)).fetchone()
    if row is not None and row[2] == stat_key:
        return FileOutcome(str(path), "unchanged", session_id=str(row[0]))
    try:
        revision = file_revision(path)
        if row is not None and row[1] == revision:
            store.conn.execute("UPDATE sessions SET stat_key = ? WHERE id = ?",
                               (stat_key, row[0]))
            return FileOutcome(str(path), "unchanged", session_id=str(row[0]))
        scanned = scan_log(path, revision=revision)
    except SessionQueryError as exc:
        return FileOutcome(str(path), "failed", error=exc)
    session = SessionDocuments(scanned.session_id, scanned.header, scanned.rows,
                               scanned.events, scanned.title, resolved, revision)
    owner = store.conn.execute("SELECT path FROM sessions WHERE id = ?",
                               (session.session_id,)).fetchone()
    if owner is not None and owner[0] not in (None, resolved) and os.path.exists(owner[0]):
        error = SessionQueryError(SOURCE_CONFLICT, f'session "{session.session_id}" is already '
                                  f"indexed from {owner[0]}", path=str(path))
        return FileOutcome(str(path), "failed", session_id=session.session_id, error=error)
    if row is not None and row[0] != session.session_id:
        remove_session(store, str(row[0]))  # the file now holds another session
    count = write_session(store, session, stat_key=stat_key, progress=progress)
    return FileOutcome(str(path), "indexed", session_id=session.session_id, documents=count)


def index_paths(store: IndexStore, paths: Iterable[str | Path], *,
                progress: Progress | None = None) -> IndexReport:
    """Index every log under ``paths``; sessions whose file is gone are removed first."""
    try:
        removed = _prune(store)
        with collector_paused():
            outcomes = [_index_file(store, path, progress) for path in discover(paths)]
    except sqlite3.Error as exc:
        raise SessionQueryError(INDEX_FAILED, f"session-search index write failed: {exc}") \
            from None
    return IndexReport(files=tuple(outcomes), removed=tuple(removed))
