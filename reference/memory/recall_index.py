"""Where the history half of a recall reads from (MEM-RCL-017): an index file opened
read-only, or session logs indexed into a private in-memory index."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from ..query import SCHEMA_VERSION, IndexReport, IndexStore, index_paths, open_index
from ..query.errors import INDEX_FAILED, SessionQueryError
from ..query.store import MEMORY, OpenDecision, decision_now
from ..sqlite_guard import connect_read_only


def _failed(path: str, detail: str, **extra: object) -> SessionQueryError:
    return SessionQueryError(INDEX_FAILED, f"session-search index at {path}: {detail}",
                             path=path, **extra)


def open_readonly(path: str | Path) -> IndexStore:
    """Open an existing index without writing to it: never created, never rebuilt, never
    migrated. Anything else is ``SESSION_QUERY_INDEX_FAILED``."""
    actual = str(Path(path).absolute())
    if not Path(actual).is_file():
        raise _failed(actual, "no such file", missing=True)
    try:
        # With no -wal, everything is in the file itself: read it immutable, without the -wal
        # and -shm files even a read-only open creates next to a WAL database (and without
        # locks: a writer that starts meanwhile can make the read fail, which is reported,
        # never a write).
        conn = connect_read_only(actual, immutable=not os.path.lexists(actual + "-wal"))
    except sqlite3.Error as exc:
        raise _failed(actual, str(exc)) from None
    try:
        decision = decision_now(conn)  # reads only: the checks of QRY-IDX-003..005, -016
    except sqlite3.Error as exc:
        conn.close()
        raise _failed(actual, str(exc)) from None
    if decision.action != "open":
        conn.close()
        reason = decision.reason or decision.action
        raise _failed(actual, f"not a session-search index of schema version {SCHEMA_VERSION} "
                      f"({reason}); build one with: dshkit query index DIR --db {actual}",
                      reason=reason)
    return IndexStore(conn, actual, OpenDecision("open"))


def index_logs(paths: Iterable[str | Path]) -> tuple[IndexStore, IndexReport]:
    """A private in-memory index of the logs under ``paths`` (nothing is written to disk);
    logs that fail to index are listed in the report and left out."""
    store = open_index(MEMORY)
    try:
        report = index_paths(store, paths)
    except BaseException:
        store.close()
        raise
    return store, report
