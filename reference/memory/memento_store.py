"""Read a dsh-memento SQLite store into an immutable image (spec chapter ``memory/migrate-memento``).

The source is never written: it is opened ``mode=ro&immutable=1`` only when no ``-wal`` or
``-journal`` sits next to it (then no other connection has it open for writing and SQLite
creates no sidecar), and its size and mtime are compared before and after the read
(MEM-MIG-001).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sqlite_guard import connect_read_only
from .errors import MemoryProtocolError

#: dsh-memento's ``SCHEMA_VERSION`` values this reader knows (MEM-MIG-002).
SUPPORTED = (1, 2, 3, 4)
_HEADER = b"SQLite format 3\x00"

# The columns of each table, by the dsh-memento schema version that added them (facts of
# dsh-memento's lib/store.mjs: v1 meta/entries/audit, v2 proposals, v3 agent key and recall
# columns, v4 tags and version).
_ENTRY_COLUMNS: tuple[tuple[int, str], ...] = (
    (1, "id"), (1, "track"), (1, "scope"), (1, "workspace_key"), (1, "text"), (1, "source"),
    (1, "created_at"), (1, "updated_at"), (1, "session_id"), (3, "agent_key"),
    (3, "last_recalled"), (3, "recall_count"), (4, "tags"), (4, "version"))
_AUDIT_COLUMNS: tuple[tuple[int, str], ...] = tuple(
    (1, name) for name in ("seq", "ts", "action", "track", "scope", "entry_id", "text",
                           "outcome", "source", "session_id"))
_PROPOSAL_COLUMNS: tuple[tuple[int, str], ...] = (
    *((2, name) for name in ("id", "kind", "track", "scope", "workspace_key", "text", "source",
                             "session_id", "status", "created_at", "decided_at")),
    (3, "agent_key"))
_TABLES = {"meta": ((1, "key"), (1, "value")), "entries": _ENTRY_COLUMNS,
           "audit": _AUDIT_COLUMNS, "proposals": _PROPOSAL_COLUMNS}
_SQLITE_OWN = ("sqlite_sequence", "sqlite_stat1", "sqlite_stat4")


@dataclass(frozen=True, slots=True)
class MementoImage:
    """What a dsh-memento store held, read once. Rows are dicts of the source's column names."""

    path: str
    version: int
    meta: tuple[tuple[str, str], ...]
    entries: tuple[dict[str, Any], ...]
    audit: tuple[dict[str, Any], ...]
    proposals: tuple[dict[str, Any], ...]
    #: ``(table, column)`` the source has and this reader does not know (MEM-MIG-008).
    unknown_columns: tuple[tuple[str, str], ...]
    unknown_tables: tuple[str, ...]


def source_invalid(path: Path, reason: str) -> MemoryProtocolError:
    return MemoryProtocolError(
        "SOURCE_INVALID", f"{path} is not a dsh-memento store this reader can import: {reason}; "
        "it was not modified", {"path": str(path), "reason": reason})


def _unsupported(path: Path, found: int) -> MemoryProtocolError:
    return MemoryProtocolError(
        "SOURCE_UNSUPPORTED_VERSION",
        f"{path} is a dsh-memento store of schema version {found}; this reader imports versions "
        f"{SUPPORTED[0]} to {SUPPORTED[-1]}; it was not modified",
        {"path": str(path), "found": found, "supported": list(SUPPORTED)})


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def read_memento_store(path: str | Path) -> MementoImage:
    """MEM-MIG-001/002: the image of the dsh-memento store at ``path``, or SOURCE_INVALID /
    SOURCE_UNSUPPORTED_VERSION. The file and its directory are left exactly as they were."""
    target = Path(path)
    _check_file(target)
    before = _stamp(target)
    try:
        conn = connect_read_only(target, immutable=True)
    except sqlite3.Error as exc:
        raise source_invalid(target, f"cannot open ({exc})") from None
    try:
        image = _read(target, conn)
    except sqlite3.Error as exc:
        raise source_invalid(target, f"cannot read ({exc})") from None
    finally:
        conn.close()
    if _stamp(target) != before or _sidecar(target) is not None:
        raise source_invalid(target, "it changed while it was read (is DSH running?); close "
                                     "DSH and retry")
    return image


def _sidecar(target: Path) -> str | None:
    for suffix in ("-wal", "-journal"):
        if os.path.lexists(f"{target}{suffix}"):
            return suffix
    return None


def _check_file(target: Path) -> None:
    if not os.path.lexists(target):
        raise source_invalid(target, "the file does not exist")
    if not target.is_file():
        raise source_invalid(target, "not a regular file")
    try:
        with target.open("rb") as handle:
            header = handle.read(len(_HEADER))
    except OSError as exc:
        raise source_invalid(target, f"cannot read ({exc.strerror or exc})") from None
    if header != _HEADER:
        raise source_invalid(target, "not a SQLite database")
    sidecar = _sidecar(target)
    if sidecar is not None:
        # An immutable read would miss what the sidecar holds, and any other read creates or
        # recovers files next to the source.
        raise source_invalid(target, f"a {sidecar} file is next to it: DSH has the store open "
                                     "or did not close it; close DSH (or open and close the "
                                     "store once with dsh-memento) and retry")


def _read(target: Path, conn: sqlite3.Connection) -> MementoImage:
    tables = {row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables:
        raise source_invalid(target, "it has no meta table")
    meta = tuple((str(k), str(v)) for k, v in conn.execute(
        "SELECT key, value FROM meta ORDER BY key"))
    version = _version(target, dict(meta))
    unknown: list[tuple[str, str]] = []
    rows: dict[str, tuple[dict[str, Any], ...]] = {}
    for table, columns in _TABLES.items():
        wanted = tuple(name for since, name in columns if since <= version)
        if not wanted:
            rows[table] = ()
            continue
        if table not in tables:
            raise source_invalid(target, f"schema version {version} has a {table} table, "
                                         "this store has none")
        found = [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]
        missing = [name for name in wanted if name not in found]
        if missing:
            raise source_invalid(target, f"table {table} lacks the column(s) "
                                         f"{', '.join(missing)} of schema version {version}")
        unknown += [(table, name) for name in found if name not in wanted]
        order = {"entries": "created_at, id", "audit": "seq", "proposals": "created_at, id",
                 "meta": "key"}[table]
        cursor = conn.execute(f"SELECT {', '.join(wanted)} FROM {table} ORDER BY {order}")
        rows[table] = tuple(dict(zip(wanted, row, strict=True)) for row in cursor)
    extra = sorted(t for t in tables if t not in _TABLES and t not in _SQLITE_OWN)
    return MementoImage(str(target), version, meta, rows["entries"], rows["audit"],
                        rows["proposals"], tuple(unknown), tuple(extra))


def _version(target: Path, meta: dict[str, str]) -> int:
    raw = meta.get("schema_version")
    if raw is None:
        raise source_invalid(target, "its meta table has no schema_version")
    found: int | None = None
    with contextlib.suppress(ValueError):
        found = int(raw.strip()) if raw.strip().isdigit() else None
    if found is None or found < 1:
        raise source_invalid(target, f"schema_version {raw!r} is not a dsh-memento version")
    if found > SUPPORTED[-1]:
        raise _unsupported(target, found)
    return found
