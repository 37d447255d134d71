"""Reading a store without changing any byte next to it (spec chapter ``memory/mcp``,
MEM-MCP-009 and MEM-MCP-010).

``open_store`` creates, migrates and switches to WAL; a reader that must write nothing cannot
use it. SQLite opens a WAL store read-only (``mode=ro``) only by creating its ``-wal`` and
``-shm`` sidecars when they are absent, so a store at rest (no sidecars: every connection was
closed and checkpointed) is read ``immutable`` instead, and the read is kept only if the file
and its sidecars are as they were before it: a writer that committed meanwhile shows in the
file's size or modification time, and the read is repeated. A store with sidecars (a writer
has it open) is read as an ordinary read-only WAL reader, which writes nothing to the file or
to ``-wal``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .. import sqlite_guard
from .errors import MemoryProtocolError
from .store import APPLICATION_ID, BUSY_TIMEOUT_MS, SCHEMA_VERSION, Store, _check, _found

T = TypeVar("T")
_ATTEMPTS = 3
_Stamp = tuple[tuple[int, int, int] | None, ...]


def _corrupt(path: Path, reason: str) -> MemoryProtocolError:
    return MemoryProtocolError("STORE_CORRUPT", f"{path} is not a usable dshkit memory store: "
                               f"{reason}; it was not modified", {"path": str(path),
                                                                  "reason": reason})


def missing(path: Path, reason: str) -> MemoryProtocolError:
    """The store is absent: a reader never creates one."""
    return MemoryProtocolError("STORE_MISSING", f"no memory store at {path}: {reason}; a "
                               "read-only server never creates one", {"path": str(path),
                                                                      "reason": reason})


def check_readable(path: Path) -> None:
    """Refuse, from the file header alone, a path that is no store this reader can read."""
    if not os.path.lexists(path):
        raise missing(path, "the file does not exist")
    if path.is_symlink():
        raise _corrupt(path, "the store path is a symbolic link")
    if not path.is_file():
        raise _corrupt(path, "the store path is not a regular file")
    try:
        header = sqlite_guard.read_header(path)
    except OSError as exc:
        raise _corrupt(path, f"cannot read ({exc.strerror or exc})") from None
    if header.empty:
        raise missing(path, "the file is empty")
    if header.problem:
        raise _corrupt(path, header.problem)
    if header.application_id != APPLICATION_ID:
        raise _corrupt(path, f"application_id is {header.application_id}, not the dshkit "
                             f"memory store's {APPLICATION_ID}")
    if header.user_version > SCHEMA_VERSION:
        raise MemoryProtocolError(
            "STORE_UNSUPPORTED_VERSION",
            f"{path} is a memory store of schema version {header.user_version}, newer than the "
            f"supported {SCHEMA_VERSION}; upgrade dshkit instead of downgrading the store",
            {"path": str(path), "found": header.user_version, "supported": SCHEMA_VERSION})
    if header.user_version < SCHEMA_VERSION:
        raise MemoryProtocolError(
            "STORE_UNSUPPORTED_VERSION",
            f"{path} is a memory store of schema version {header.user_version}, older than the "
            f"supported {SCHEMA_VERSION}; a read-only reader does not migrate: run dshkit "
            "memory migrate first", {"path": str(path), "found": header.user_version,
                                     "supported": SCHEMA_VERSION})


def _stamp(path: Path) -> _Stamp:
    def one(name: str) -> tuple[int, int, int] | None:
        try:
            st = os.stat(name)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns
    base = os.fspath(path)
    return one(base), one(base + "-wal"), one(base + "-shm")


def _connect(path: Path, immutable: bool) -> sqlite3.Connection:
    try:
        conn = sqlite_guard.connect_read_only(path, immutable=immutable, timeout=BUSY_TIMEOUT_MS / 1000)
        conn.execute("PRAGMA trusted_schema = OFF")
    except sqlite3.Error as exc:
        raise _corrupt(path, f"cannot open read-only ({exc})") from None
    return conn


def read_store(path: Path, reader: Callable[[Store], T]) -> T:
    """``reader`` applied to a read-only view of the store at ``path``, which it must not
    keep. Nothing is created, migrated or written, also when ``reader`` tries to."""
    check_readable(path)
    for attempt in range(_ATTEMPTS + 1):
        before = _stamp(path)
        immutable = before[1] is None and before[2] is None and attempt < _ATTEMPTS
        conn = _connect(path, immutable)
        try:
            store = Store(path, conn)
            conn.execute("BEGIN")
            try:
                _check(path, conn, _found(conn))
            finally:
                conn.execute("COMMIT")
            result = reader(store)
        except sqlite3.Error as exc:
            raise _corrupt(path, str(exc)) from None
        finally:
            conn.close()
        if not immutable or _stamp(path) == before:
            return result
    raise AssertionError("unreachable: the last attempt is never immutable")
