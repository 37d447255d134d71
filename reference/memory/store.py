"""The SQLite store: layout, opening, migrations, row mapping (spec chapter ``memory/store``).

Nothing here knows about approval or budgets; the provider drives it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import MemoryProtocolError
from .mirror import BY_CREATION, BY_RANK, Mirror, first, row_of

APPLICATION_ID = 0x44534B4D  # "DSKM"
SCHEMA_VERSION = 3
BUSY_TIMEOUT_MS = 5000
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True, slots=True)
class Migration:
    """One forward step ``version`` → ``version + 1``: DDL statements and what they mean."""

    version: int
    statements: tuple[str, ...]
    rule: str


# The layout of store version 1, exactly as it was created then.
V1_SCHEMA: tuple[str, ...] = (
    """CREATE TABLE entries (
  id TEXT PRIMARY KEY,
  track TEXT NOT NULL CHECK (track IN ('user', 'agent')),
  scope TEXT NOT NULL CHECK (scope IN ('user-global', 'workspace')),
  workspace_key TEXT NOT NULL DEFAULT '',
  agent_key TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  source TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  session_id TEXT
) STRICT""",
    "CREATE INDEX entries_bucket ON entries (track, scope)",
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
) STRICT""",
    "CREATE INDEX audit_ts ON audit (ts)",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, (
        "ALTER TABLE entries ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE entries ADD COLUMN recall_count INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE entries ADD COLUMN last_recalled INTEGER",
    ), "every existing entry gets version 1, recallCount 0 and lastRecalled null"),
    Migration(2, (
        "ALTER TABLE audit ADD COLUMN entry TEXT",
        "ALTER TABLE audit ADD COLUMN entry_ids TEXT",
    ), "existing audit rows keep entry and entryIds null; only rows written from version 3 on "
       "carry the entry snapshots the reconstruction property replays"),
)

ENTRY_COLUMNS = ("id", "track", "scope", "workspace_key", "agent_key", "text", "source", "tags",
                 "created_at", "updated_at", "session_id", "version", "recall_count",
                 "last_recalled")
AUDIT_COLUMNS = ("seq", "ts", "action", "track", "scope", "entry_id", "text", "outcome",
                 "source", "session_id", "entry", "entry_ids")


_SELECT_ENTRIES = f"SELECT {', '.join(ENTRY_COLUMNS)} FROM entries"
_INSERT_ENTRY = (f"INSERT INTO entries ({', '.join(ENTRY_COLUMNS)}) VALUES "
                 f"({', '.join('?' * len(ENTRY_COLUMNS))})")
_UPDATE_ENTRY = (f"UPDATE entries SET {', '.join(f'{c} = ?' for c in ENTRY_COLUMNS[1:])} "
                 "WHERE id = ?")
_INSERT_AUDIT = ("INSERT INTO audit (ts, action, track, scope, entry_id, text, outcome, source, "
                 "session_id, entry, entry_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
_BY_IDS = f"{_SELECT_ENTRIES} WHERE id IN (SELECT value FROM json_each(?))"
RANKING = "ranking"  # MEM-QRY-003: recallCount desc, updatedAt desc, id
CREATION = "creation"  # createdAt, id


def expected_columns(version: int) -> dict[str, tuple[str, ...]]:
    entries = ENTRY_COLUMNS[:11] + (ENTRY_COLUMNS[11:] if version >= 2 else ())
    audit = AUDIT_COLUMNS[:10] + (AUDIT_COLUMNS[10:] if version >= 3 else ())
    return {"entries": entries, "audit": audit}


def default_path() -> Path:
    """MEM-STO-003."""
    explicit = os.environ.get("DSHKIT_MEMORY_DB")
    if explicit:
        return Path(explicit)
    home = os.environ.get("DSHKIT_HOME") or str(Path.home() / ".dshkit")
    return Path(home) / "memory" / "memory.db"


def _corrupt(path: Path, reason: str) -> MemoryProtocolError:
    return MemoryProtocolError(
        "STORE_CORRUPT", f"{path} is not a usable dshkit memory store: {reason}; it was not "
        "modified", {"path": str(path), "reason": reason})


def busy(path: Path) -> MemoryProtocolError:
    return MemoryProtocolError(
        "STORE_BUSY", f"the memory store {path} stayed locked by another writer past "
        f"{BUSY_TIMEOUT_MS} ms; nothing was changed, retry the write", {"path": str(path)})


def _is_locked(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class Store:
    """An open store. Use :func:`open_store`.

    Selections (queries, matches, snapshots) and bucket usage are computed on an in-memory
    :class:`~.mirror.Mirror` of the entries, kept equal to the table: this connection's own
    writes update it in the statement that changes the row, a rolled-back transaction drops it,
    and a commit by any other connection (another provider, another process, the ``sqlite3``
    shell) changes ``PRAGMA data_version``, after which it is loaded again.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        self.commits = 0  # transactions this connection committed
        self._mirror: Mirror | None = None
        self._mirror_version = -1

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; rolled back on any error (MEM-WRT-003)."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if not _is_locked(exc) or time.monotonic() > deadline:
                    raise busy(self.path) from None
                time.sleep(0.01)
        try:
            yield self.conn
        except BaseException:
            self._mirror = None
            self.conn.execute("ROLLBACK")
            raise
        try:
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            self._mirror = None
            self.conn.execute("ROLLBACK")
            if _is_locked(exc):
                raise busy(self.path) from None
            raise
        self.commits += 1

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """One read snapshot for several statements (WAL readers never wait for writers)."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            self.conn.execute("COMMIT")

    def state(self) -> tuple[int, int]:
        """Equal at two moments exactly when no connection committed to the store in between."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0]), self.commits

    def _current(self) -> Mirror:
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if self._mirror is None or version != self._mirror_version:
            self._mirror = Mirror.load(self.conn)
            self._mirror_version = version
        return self._mirror

    # -- reads -------------------------------------------------------------------------------

    def entries(self, where: str = "", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        sql = f"{_SELECT_ENTRIES} {where}"
        return [entry_from_row(row) for row in self.conn.execute(sql, params)]

    def entry(self, entry_id: str) -> dict[str, Any] | None:
        rows = self.entries("WHERE id = ?", (entry_id,))
        return rows[0] if rows else None

    def bucket_usage(self) -> dict[tuple[str, str], int]:
        """Units per bucket over the whole store (MEM-BUD-001)."""
        with self._reading():
            return dict(self._current().usage)

    def select(self, *, track: str | None = None, scope: str | None = None,
               keys: tuple[str, str] | None = None, needle: str | None = None,
               order: str = RANKING, limit: int | None = None,
               ) -> tuple[list[dict[str, Any]], int]:
        """The first ``limit`` (all when None) entries of a selection in ``order``, and the
        number of entries selected. ``keys`` = (workspace, agent) restricts the selection to
        that session's visible set (MEM-KEY-004); a non-empty ``needle`` to the texts that
        contain it after folding (MEM-MAT-001)."""
        key = BY_RANK if order == RANKING else BY_CREATION
        for _ in range(2):
            with self._reading():
                rows = self._current().select(track=track, scope=scope, keys=keys,
                                              needle=needle)
                page = [row.id for row in first(rows, limit, key)]
                found = self._by_ids(page)
            if len(found) == len(page):
                return [found[entry_id] for entry_id in page], len(rows)
            self._mirror = None  # changed behind the store's back: load it again
        raise _corrupt(self.path, "the entries table changed while it was read")

    def _by_ids(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        rows = self.conn.execute(_BY_IDS, (json.dumps(ids),))
        return {row[0]: entry_from_row(row) for row in rows}

    # -- writes (inside a transaction) ---------------------------------------------------------

    def insert(self, entry: dict[str, Any]) -> None:
        self.conn.execute(_INSERT_ENTRY, entry_to_row(entry))
        if self._mirror is not None:
            self._mirror.put(row_of(entry))

    def update(self, entry: dict[str, Any]) -> None:
        row = entry_to_row(entry)
        self.conn.execute(_UPDATE_ENTRY, (*row[1:], row[0]))
        if self._mirror is not None:
            self._mirror.put(row_of(entry))

    def delete(self, entry_id: str) -> None:
        self.conn.execute("DELETE FROM entries WHERE id = ?", (entry_id,))
        if self._mirror is not None:
            self._mirror.remove(entry_id)

    def recall(self, entry_ids: list[str], now: int) -> None:
        """MEM-QRY-005: one more recall and ``lastRecalled`` = ``now`` for every id."""
        self.conn.executemany(
            "UPDATE entries SET recall_count = recall_count + 1, last_recalled = ? WHERE id = ?",
            [(now, entry_id) for entry_id in entry_ids])
        if self._mirror is not None:
            self._mirror.recall(entry_ids)

    def audit(self, row: dict[str, Any]) -> int:
        entry = row.get("entry")
        ids = row.get("entryIds")
        cursor = self.conn.execute(
            _INSERT_AUDIT,
            (row["ts"], row["action"], row.get("track"), row.get("scope"), row.get("entryId"),
             row.get("text"), row.get("outcome"), row.get("source"), row.get("sessionId"),
             None if entry is None else json.dumps(entry, ensure_ascii=False),
             None if ids is None else json.dumps(ids)))
        return int(cursor.lastrowid or 0)

    def audit_rows(self, where: str = "", params: tuple[Any, ...] = (),
                   order: str = "ORDER BY seq DESC", limit: int | None = None) -> list[dict[str, Any]]:
        sql = f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit {where} {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [audit_from_row(row) for row in self.conn.execute(sql, params)]


def entry_from_row(row: tuple[Any, ...]) -> dict[str, Any]:
    (id_, track, scope, workspace, agent, text, source, tags, created, updated, session,
     version, recall_count, last_recalled) = row
    try:
        parsed = json.loads(tags)
    except (TypeError, ValueError):
        parsed = None
    if not isinstance(parsed, list) or not all(isinstance(t, str) for t in parsed):
        raise MemoryProtocolError("STORE_CORRUPT", f"entry {id_} has a corrupt tags column",
                                  {"reason": "tags column is not a JSON array of strings"})
    return {"id": id_, "track": track, "scope": scope, "workspaceKey": workspace,
            "agentKey": agent, "text": text, "source": source, "tags": parsed,
            "version": version, "createdAt": created, "updatedAt": updated,
            "lastRecalled": last_recalled, "recallCount": recall_count, "sessionId": session}


def entry_to_row(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (entry["id"], entry["track"], entry["scope"], entry["workspaceKey"], entry["agentKey"],
            entry["text"], entry["source"], json.dumps(entry["tags"], ensure_ascii=False),
            entry["createdAt"], entry["updatedAt"], entry["sessionId"], entry["version"],
            entry["recallCount"], entry["lastRecalled"])


def audit_from_row(row: tuple[Any, ...]) -> dict[str, Any]:
    out = dict(zip(("seq", "ts", "action", "track", "scope", "entryId", "text", "outcome",
                    "source", "sessionId"), row[:10], strict=True))
    out["entry"] = json.loads(row[10]) if row[10] is not None else None
    out["entryIds"] = json.loads(row[11]) if row[11] is not None else None
    return out


def open_store(path: str | Path) -> Store:
    """MEM-STO-004: open, create or migrate; refuse anything that is not a dshkit store."""
    target = Path(path)
    _prepare_file(target)
    try:
        conn = sqlite3.connect(target, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=False)
    except sqlite3.Error as exc:
        raise _corrupt(target, f"cannot open ({exc})") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _adopt(target, conn)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA trusted_schema = OFF")
    except MemoryProtocolError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        if _is_locked(exc):
            raise busy(target) from None
        raise _corrupt(target, str(exc)) from None
    _chmod_sidecars(target)
    return Store(target, conn)


def _prepare_file(target: Path) -> None:
    if target.is_symlink():
        raise _corrupt(target, "the store path is a symbolic link")
    missing = [d for d in (target.parent, *target.parent.parents) if not d.exists()]
    for directory in reversed(missing):  # every directory the store creates is private
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=0o700)
        os.chmod(directory, 0o700)
    if target.exists():
        if not target.is_file():
            raise _corrupt(target, "the store path is not a regular file")
        size = target.stat().st_size
        if size == 0:
            return
        with open(target, "rb") as handle:
            head = handle.read(100)
        if not head.startswith(_SQLITE_MAGIC) or len(head) < 100:
            raise _corrupt(target, "not an SQLite database file")
        return
    # Created with 0600 before SQLite opens it, so -wal and -shm inherit the mode (MEM-STO-002).
    with contextlib.suppress(FileExistsError):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _chmod_sidecars(target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        sidecar = Path(f"{target}{suffix}")
        with contextlib.suppress(OSError):
            if sidecar.exists() and not sidecar.is_symlink():
                os.chmod(sidecar, 0o600)


def _adopt(target: Path, conn: sqlite3.Connection) -> None:
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    objects = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if app_id == 0 and version == 0 and objects == 0:
        _initialise(conn)
        return
    if app_id != APPLICATION_ID:
        raise _corrupt(target, f"application_id is {app_id}, not the dshkit memory store's "
                               f"{APPLICATION_ID}")
    if version > SCHEMA_VERSION:
        raise MemoryProtocolError(
            "STORE_UNSUPPORTED_VERSION",
            f"{target} is a memory store of schema version {version}, newer than the supported "
            f"{SCHEMA_VERSION}; upgrade dshkit instead of downgrading the store",
            {"path": str(target), "found": version, "supported": SCHEMA_VERSION})
    if version < 1:
        raise _corrupt(target, f"user_version {version} is not a store schema version")
    _check_columns(target, conn, version)
    if version < SCHEMA_VERSION:
        _migrate(target, conn, version)


def _check_columns(target: Path, conn: sqlite3.Connection, version: int) -> None:
    for table, columns in expected_columns(version).items():
        found = tuple(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))
        if found != columns:
            raise _corrupt(target, f"table {table} has columns {list(found)}, expected "
                                   f"{list(columns)} for schema version {version}")


def _initialise(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            conn.execute("ROLLBACK")  # another process initialised it meanwhile
            return
        for statement in V1_SCHEMA:
            conn.execute(statement)
        for migration in MIGRATIONS:
            for statement in migration.statements:
                conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _migrate(target: Path, conn: sqlite3.Connection, version: int) -> None:
    """Forward steps version → current, all in one transaction (MEM-STO-004/005)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        current = conn.execute("PRAGMA user_version").fetchone()[0]
        for migration in MIGRATIONS:
            if migration.version >= current:
                for statement in migration.statements:
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        _check_columns(target, conn, SCHEMA_VERSION)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def create_store_at_version(path: str | Path, version: int) -> None:
    """Build an empty store at an older schema version (for migration tests and the kit)."""
    target = Path(path)
    _prepare_file(target)
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        for statement in V1_SCHEMA:
            conn.execute(statement)
        for migration in MIGRATIONS:
            if migration.version < version:
                for statement in migration.statements:
                    conn.execute(statement)
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {version}")
    finally:
        conn.close()
