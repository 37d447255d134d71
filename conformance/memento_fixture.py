"""Materialise a dsh-memento store from data, with dsh-memento's DDL of a schema version.

A vector of ``memory/migrate-memento`` describes its source store as data: the schema version
and rows per table. This module writes that as the SQLite file dsh-memento would have left
(the DDL of its ``lib/store.mjs``, version by version: v1 meta/entries/audit, v2 proposals, v3
agent key and recall columns, v4 tags and version), in WAL mode as dsh-memento sets it, and
closed, so that SQLite has checkpointed and deleted the ``-wal`` and ``-shm`` files. Facts
only; no dsh-memento code.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

_V1 = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE entries (
    id TEXT PRIMARY KEY,
    track TEXT NOT NULL CHECK (track IN ('user', 'agent')),
    scope TEXT NOT NULL CHECK (scope IN ('user-global', 'workspace')),
    workspace_key TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    session_id TEXT
  )""",
    "CREATE INDEX entries_track_scope ON entries (track, scope)",
    """CREATE TABLE audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ts INTEGER NOT NULL,
    action TEXT NOT NULL,
    track TEXT,
    scope TEXT,
    entry_id TEXT,
    text TEXT,
    outcome TEXT,
    source TEXT,
    session_id TEXT
  )""",
    "CREATE INDEX audit_ts ON audit (ts)",
)
_V2 = (
    """CREATE TABLE proposals (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    track TEXT NOT NULL,
    scope TEXT NOT NULL,
    workspace_key TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    source TEXT NOT NULL,
    session_id TEXT,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'dismissed')),
    created_at INTEGER NOT NULL,
    decided_at INTEGER,
    UNIQUE (session_id, kind)
  )""",
    "CREATE INDEX proposals_status ON proposals (status)",
)
_V3 = (
    "ALTER TABLE entries ADD COLUMN agent_key TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE entries ADD COLUMN last_recalled INTEGER",
    "ALTER TABLE entries ADD COLUMN recall_count INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE proposals ADD COLUMN agent_key TEXT NOT NULL DEFAULT ''",
)
_V4 = (
    "ALTER TABLE entries ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE entries ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
)
LATEST = 4


def ddl(version: int) -> tuple[str, ...]:
    """The statements that build a dsh-memento store of ``version`` (1..4)."""
    if not 1 <= version <= LATEST:
        raise ValueError(f"dsh-memento has no schema version {version}")
    steps = (_V1, _V2, _V3, _V4)[:version]
    return tuple(statement for step in steps for statement in step)


def materialise(path: str | Path, version: int, tables: Mapping[str, Sequence[Mapping[str, Any]]],
                *, schema_version: str | None = None, extra: Sequence[str] = ()) -> Path:
    """Write a closed dsh-memento store of ``version`` at ``path`` holding ``tables`` (rows as
    column → value). ``schema_version`` overrides the meta row's value (a newer or broken
    store); ``extra`` are more DDL statements (an unknown column or table)."""
    target = Path(path)
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for statement in (*ddl(min(version, LATEST)), *extra):
            conn.execute(statement)
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                     (schema_version if schema_version is not None else str(version),))
        for table, rows in tables.items():
            for row in rows:
                columns = list(row)
                conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                             f"({', '.join('?' * len(columns))})", [row[c] for c in columns])
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.close()
    return target
