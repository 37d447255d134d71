"""The SQLite store: layout, opening, migrations, row mapping (spec chapter ``memory/store``).

Nothing here knows about approval or budgets; the provider drives it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import sql_definitions, sqlite_guard
from ..json.inputs import JsonInputError, parse_json
from .errors import MemoryProtocolError, invalid
from .mirror import BY_CREATION, BY_RANK, Mirror, first, make_row

APPLICATION_ID = 0x44534B4D  # "DSKM"
SCHEMA_VERSION = 4
BUSY_TIMEOUT_MS = 5000
#: MEM-STO-001: the ``durability`` choices and their ``PRAGMA synchronous`` (never OFF).
DURABILITY = {"normal": "NORMAL", "full": "FULL"}


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
    Migration(3, (
        """CREATE TABLE proposals (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  track TEXT NOT NULL CHECK (track IN ('user', 'agent')),
  scope TEXT NOT NULL CHECK (scope IN ('user-global', 'workspace')),
  workspace_key TEXT NOT NULL DEFAULT '',
  agent_key TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  source TEXT NOT NULL,
  session_id TEXT,
  status TEXT NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'approved', 'dismissed')),
  created_at INTEGER NOT NULL,
  decided_at INTEGER,
  entry_id TEXT,
  UNIQUE (session_id, kind)
) STRICT""",
        "CREATE INDEX proposals_status ON proposals (status, created_at, id)",
    ), "an empty proposals table; no entry or audit row changes"),
)

ENTRY_COLUMNS = ("id", "track", "scope", "workspace_key", "agent_key", "text", "source", "tags",
                 "created_at", "updated_at", "session_id", "version", "recall_count",
                 "last_recalled")
PROPOSAL_COLUMNS = ("id", "kind", "track", "scope", "workspace_key", "agent_key", "text",
                    "source", "session_id", "status", "created_at", "decided_at", "entry_id")
AUDIT_COLUMNS = ("seq", "ts", "action", "track", "scope", "entry_id", "text", "outcome",
                 "source", "session_id", "entry", "entry_ids")


_SELECT_ENTRIES = f"SELECT {', '.join(ENTRY_COLUMNS)} FROM entries"
_INSERT_ENTRY = (f"INSERT INTO entries ({', '.join(ENTRY_COLUMNS)}) VALUES "
                 f"({', '.join('?' * len(ENTRY_COLUMNS))})")
#: The columns an update writes: not the id, bucket, keys and creation time, which never
#: change (so neither does the ``entries_bucket`` index, and the commit writes one page less).
_UPDATED = (5, 6, 7, 9, 10, 11, 12, 13)
_UPDATE_ENTRY = (f"UPDATE entries SET {', '.join(f'{ENTRY_COLUMNS[i]} = ?' for i in _UPDATED)} "
                 "WHERE id = ?")
#: The ledger's JSON: ``json.dumps(value, ensure_ascii=False)``, without building an encoder
#: per call.
_JSON = json.JSONEncoder(ensure_ascii=False).encode
_INSERT_AUDIT = ("INSERT INTO audit (ts, action, track, scope, entry_id, text, outcome, source, "
                 "session_id, entry, entry_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
RANKING = "ranking"  # MEM-QRY-003: recallCount desc, updatedAt desc, id
CREATION = "creation"  # createdAt, id


def expected_columns(version: int) -> dict[str, tuple[str, ...]]:
    entries = ENTRY_COLUMNS[:11] + (ENTRY_COLUMNS[11:] if version >= 2 else ())
    audit = AUDIT_COLUMNS[:10] + (AUDIT_COLUMNS[10:] if version >= 3 else ())
    tables = {"entries": entries, "audit": audit}
    if version >= 4:
        tables["proposals"] = PROPOSAL_COLUMNS
    return tables


def synchronous_mode(durability: Any) -> str:
    """The ``PRAGMA synchronous`` value of a ``durability`` choice (MEM-STO-001)."""
    if not isinstance(durability, str) or durability not in DURABILITY:
        raise invalid("/durability", f"durability must be one of {', '.join(DURABILITY)}")
    return DURABILITY[durability]


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


def write_failed(path: Path, exc: sqlite3.Error) -> MemoryProtocolError:
    """MEM-CLI-006: SQLite could not write (a full disk, a file-size limit, an I/O error, the
    audit ledger's seq counter at its maximum); it rolled back, nothing was changed."""
    reason = str(exc)
    return MemoryProtocolError(
        "STORE_WRITE_FAILED", f"cannot write the memory store {path}: {reason}; nothing was "
        "changed: free disk space or raise the file-size limit, then retry",
        {"path": str(path), "reason": reason})


#: SQLite's primary result codes of a write the system refused: SQLITE_IOERR, SQLITE_FULL.
_WRITE_FAILURES = frozenset((10, 13))


def _is_write_failure(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in _WRITE_FAILURES


def _end(conn: sqlite3.Connection, statement: str) -> None:
    """COMMIT or ROLLBACK an open transaction; after SQLITE_FULL or SQLITE_IOERR SQLite has
    already rolled back, and a second ROLLBACK would hide that error behind its own."""
    if conn.in_transaction:
        conn.execute(statement)


def _is_locked(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class Store:
    """An open store. Use :func:`open_store`.

    Selections (queries, matches, snapshots) and bucket usage are answered from an in-memory
    :class:`~.mirror.Mirror` of the entries, kept equal to the table: the store's own writes
    update it with the statement that changes the row; a rolled-back transaction drops it; so
    does a change of rows on this connection that did not go through the store (seen in
    ``total_changes``); and a commit by any other connection (another provider, another
    process, the ``sqlite3`` shell) changes ``PRAGMA data_version``, after which the mirror is
    loaded again. No other connection can commit while this one holds the write lock, so a
    write transaction reads ``data_version`` at most once.
    """

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn
        self.commits = 0  # transactions this connection committed
        self._mirror: Mirror | None = None
        self._mirror_version = -1
        self._changes = conn.total_changes  # the rows changed on this connection, as known
        self._writing = False  # inside transaction()
        self._version: int | None = None  # data_version, once read in this write transaction

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
        self._writing, self._version = True, None
        try:
            try:
                yield self.conn
            except sqlite3.Error as exc:
                self._mirror = None
                _end(self.conn, "ROLLBACK")
                if _is_write_failure(exc):
                    raise write_failed(self.path, exc) from None
                raise
            except BaseException:
                self._mirror = None
                _end(self.conn, "ROLLBACK")
                raise
            try:
                self.conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                self._mirror = None
                _end(self.conn, "ROLLBACK")
                if _is_locked(exc):
                    raise busy(self.path) from None
                if _is_write_failure(exc):
                    raise write_failed(self.path, exc) from None
                raise
        finally:
            self._writing, self._version = False, None
        self.commits += 1

    def _data_version(self) -> int:
        if self._writing and self._version is not None:
            return self._version
        version = int(self.conn.execute("PRAGMA data_version").fetchone()[0])
        if self._writing:
            self._version = version
        return version

    def state(self) -> tuple[int, int]:
        """Equal at two moments exactly when no connection committed to the store in between."""
        return self._data_version(), self.commits

    def _current(self) -> Mirror:
        version = self._data_version()
        if self._mirror is not None and version == self._mirror_version \
                and self.conn.total_changes == self._changes:
            return self._mirror
        if self.conn.in_transaction:
            self._load(version)
        else:  # one read snapshot for the version and the rows
            self.conn.execute("BEGIN")
            try:
                self._load(self._data_version())
            finally:
                self.conn.execute("COMMIT")
        assert self._mirror is not None
        return self._mirror

    def _load(self, version: int) -> None:
        self._mirror = Mirror.load(self.conn, _SELECT_ENTRIES)
        self._mirror_version = version
        self._changes = self.conn.total_changes

    # -- reads -------------------------------------------------------------------------------

    def entries(self, where: str = "", params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        sql = f"{_SELECT_ENTRIES} {where}"
        return [entry_from_row(row) for row in self.conn.execute(sql, params)]

    def entry(self, entry_id: str) -> dict[str, Any] | None:
        rows = self.entries("WHERE id = ?", (entry_id,))
        return rows[0] if rows else None

    def bucket_usage(self) -> dict[tuple[str, str], int]:
        """Units per bucket over the whole store (MEM-BUD-001)."""
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
        rows = self._current().select(track=track, scope=scope, keys=keys, needle=needle)
        return [entry_from_row(row.record) for row in first(rows, limit, key)], len(rows)

    # -- writes (inside a transaction) ---------------------------------------------------------

    def _run(self, sql: str, params: Any, many: bool = False) -> tuple[sqlite3.Cursor,
                                                                         Mirror | None]:
        """Run one changing statement of the store: its cursor, and the mirror to apply the
        change to (None when it is not loaded, or when rows changed on this connection
        without the store since it last looked: then it is dropped and loaded again later)."""
        known = self.conn.total_changes == self._changes
        cursor = self.conn.executemany(sql, params) if many else self.conn.execute(sql, params)
        self._changes = self.conn.total_changes
        if not known:
            self._mirror = None
        return cursor, self._mirror

    def insert(self, entry: dict[str, Any]) -> None:
        record = entry_to_row(entry)
        _, mirror = self._run(_INSERT_ENTRY, record)
        if mirror is not None:
            mirror.put(make_row(record))

    def update(self, entry: dict[str, Any]) -> None:
        """Store the new values of an entry's members; its id, bucket, keys and ``createdAt``
        are those already stored (an entry never moves)."""
        record = entry_to_row(entry)
        _, mirror = self._run(_UPDATE_ENTRY, (*(record[i] for i in _UPDATED), record[0]))
        if mirror is not None:
            mirror.put(make_row(record))

    def delete(self, entry_id: str) -> None:
        _, mirror = self._run("DELETE FROM entries WHERE id = ?", (entry_id,))
        if mirror is not None:
            mirror.remove(entry_id)

    def recall(self, entry_ids: list[str], now: int) -> None:
        """MEM-QRY-005: one more recall and ``lastRecalled`` = ``now`` for every id."""
        _, mirror = self._run(
            "UPDATE entries SET recall_count = recall_count + 1, last_recalled = ? WHERE id = ?",
            [(now, entry_id) for entry_id in entry_ids], many=True)
        if mirror is not None:
            mirror.recall(entry_ids, now)

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        """One statement on a table other than ``entries`` (the proposals): the mirror of the
        entries stays as it is."""
        cursor, _ = self._run(sql, params)
        return cursor

    def audit(self, row: dict[str, Any]) -> int:
        entry = row.get("entry")
        ids = row.get("entryIds")
        cursor, _ = self._run(
            _INSERT_AUDIT,
            (row["ts"], row["action"], row.get("track"), row.get("scope"), row.get("entryId"),
             row.get("text"), row.get("outcome"), row.get("source"), row.get("sessionId"),
             None if entry is None else _JSON(entry),
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
        parsed = _tags(tags)
    except TypeError:  # not hashable: not the text of a column
        parsed = None
    if parsed is None:
        raise MemoryProtocolError("STORE_CORRUPT", f"entry {id_} has a corrupt tags column",
                                  {"reason": "tags column is not a JSON array of strings"})
    return {"id": id_, "track": track, "scope": scope, "workspaceKey": workspace,
            "agentKey": agent, "text": text, "source": source, "tags": list(parsed),
            "version": version, "createdAt": created, "updatedAt": updated,
            "lastRecalled": last_recalled, "recallCount": recall_count, "sessionId": session}


@functools.lru_cache(maxsize=4096)
def _tags(column: Any) -> tuple[str, ...] | None:
    """The tags of a ``tags`` column, or None when it is not a JSON array of strings (a few
    distinct columns recur across a store, so each is parsed once)."""
    try:
        parsed = parse_json(column)
    except (JsonInputError, TypeError):
        return None
    if not isinstance(parsed, list) or not all(isinstance(t, str) for t in parsed):
        return None
    return tuple(parsed)


def entry_to_row(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (entry["id"], entry["track"], entry["scope"], entry["workspaceKey"], entry["agentKey"],
            entry["text"], entry["source"], _JSON(entry["tags"]),
            entry["createdAt"], entry["updatedAt"], entry["sessionId"], entry["version"],
            entry["recallCount"], entry["lastRecalled"])


def audit_from_row(row: tuple[Any, ...]) -> dict[str, Any]:
    out = dict(zip(("seq", "ts", "action", "track", "scope", "entryId", "text", "outcome",
                    "source", "sessionId"), row[:10], strict=True))
    out["entry"] = _audit_json(row, 10, "entry")
    out["entryIds"] = _audit_json(row, 11, "entry_ids")
    return out


def _audit_json(row: tuple[Any, ...], index: int, column: str) -> Any:
    if row[index] is None:
        return None
    try:
        return parse_json(row[index])
    except (JsonInputError, TypeError):
        raise MemoryProtocolError(
            "STORE_CORRUPT", f"audit row {row[0]} has a corrupt {column} column",
            {"reason": f"audit {column} column is not JSON"}) from None


def open_store(path: str | Path, *, durability: str = "normal") -> Store:
    """MEM-STO-004: open, create or migrate; refuse anything that is not a dshkit store.

    ``durability`` (MEM-STO-001): ``"normal"`` (``synchronous = NORMAL``, the default) or
    ``"full"`` (``synchronous = FULL``: every commit also survives a power loss).
    """
    synchronous = synchronous_mode(durability)
    target = Path(path)
    _prepare_file(target)
    _look(target)
    try:
        conn = sqlite3.connect(target, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000,
                               check_same_thread=False)
    except sqlite3.Error as exc:
        raise _corrupt(target, f"cannot open ({exc})") from None
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _adopt(target, conn)
        _set_wal(target, conn)
        conn.execute(f"PRAGMA synchronous = {synchronous}")
        conn.execute("PRAGMA trusted_schema = OFF")
    except MemoryProtocolError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        if _is_locked(exc):
            raise busy(target) from None
        if _is_write_failure(exc):
            raise write_failed(target, exc) from None
        raise _corrupt(target, str(exc)) from None
    _chmod_sidecars(target)
    return Store(target, conn)


def _prepare_file(target: Path) -> None:
    if target.is_symlink():
        raise _corrupt(target, "the store path is a symbolic link")
    prepare_directories(target)
    if target.exists():
        if not target.is_file():
            raise _corrupt(target, "the store path is not a regular file")
        return
    # Created with 0600 before SQLite opens it, so -wal and -shm inherit the mode (MEM-STO-002).
    with contextlib.suppress(FileExistsError):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _set_wal(target: Path, conn: sqlite3.Connection) -> None:
    """``journal_mode = WAL``, waiting for other connections: SQLite answers "database is
    locked" at once, without calling the busy handler, when another process that opens the
    same new store changes the mode at the same moment."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not _is_locked(exc) or time.monotonic() > deadline:
                raise
        time.sleep(0.005)


def _look(target: Path) -> None:
    """MEM-STO-008: refuse from the header, before SQLite opens the file and recovers a
    ``-wal`` or a hot ``-journal`` into it, a file that is not a store."""
    try:
        header = sqlite_guard.read_header(target)
    except OSError as exc:
        raise _corrupt(target, f"cannot read ({exc.strerror or exc})") from None
    if header.problem:
        raise _corrupt(target, header.problem)
    if header.application_id == APPLICATION_ID:
        if header.user_version > SCHEMA_VERSION:
            raise _newer(target, header.user_version)
        return  # the store's own: SQLite recovers it as usual
    if header.empty:
        # New, or being created by another process under its -journal. SQLite reads nothing
        # of a -wal or -journal next to a zero-page file: it deletes them.
        return
    if header.application_id != 0:
        raise _foreign_id(target, header.application_id)
    try:
        objects = sqlite_guard.schema_size(target)
    except sqlite3.Error as exc:
        raise _corrupt(target, f"cannot read ({exc})") from None
    if objects or header.user_version:
        raise _foreign_id(target, 0)
    pending = sqlite_guard.pending_recovery(target)
    if pending:
        raise _corrupt(target, f"its header is that of an empty database, but its {pending} "
                               "file holds changes SQLite would write into it; only a dshkit "
                               "memory store is recovered")


def _foreign_id(target: Path, app_id: int) -> MemoryProtocolError:
    return _corrupt(target, f"application_id is {app_id}, not the dshkit memory store's "
                            f"{APPLICATION_ID}")


def _newer(target: Path, version: int) -> MemoryProtocolError:
    return MemoryProtocolError(
        "STORE_UNSUPPORTED_VERSION",
        f"{target} is a memory store of schema version {version}, newer than the supported "
        f"{SCHEMA_VERSION}; upgrade dshkit instead of downgrading the store",
        {"path": str(target), "found": version, "supported": SCHEMA_VERSION})


def prepare_directories(target: Path) -> None:
    """MEM-STO-011: the store's directory, which also holds SQLite's sidecar files, and every
    directory created for the store are real directories, never symbolic links (dangling or
    not); existing directories above the store's directory are the user's and are followed.
    Every directory created here is private (MEM-STO-002)."""
    store_dir = target.parent
    if store_dir.is_symlink():
        raise _symlinked(target, store_dir)
    missing = [d for d in (store_dir, *store_dir.parents) if not os.path.lexists(d)]
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):
            directory.mkdir(mode=0o700)
        if directory.is_symlink():  # put there by another process since the check above
            raise _symlinked(target, directory)
        os.chmod(directory, 0o700)


def _symlinked(target: Path, directory: Path) -> MemoryProtocolError:
    which = "the store's directory" if directory == target.parent else "a directory created " \
        "for the store"
    return _corrupt(target, f"{which} {directory} is a symbolic link")


def _chmod_sidecars(target: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        sidecar = Path(f"{target}{suffix}")
        with contextlib.suppress(OSError):
            if sidecar.exists() and not sidecar.is_symlink():
                os.chmod(sidecar, 0o600)


@dataclass(frozen=True, slots=True)
class _Found:
    """What an open file holds: its identity and the definitions of its schema objects."""

    application_id: int
    version: int
    schema: dict[sql_definitions.Key, sql_definitions.Definition]

    @property
    def blank(self) -> bool:
        return self.application_id == 0 and self.version == 0 and not self.schema


def _found(conn: sqlite3.Connection) -> _Found:
    app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    return _Found(app_id, version, sql_definitions.read(conn))


def _adopt(target: Path, conn: sqlite3.Connection) -> None:
    """MEM-STO-004: check what the file holds in one read transaction (so a store that another
    process creates meanwhile is seen whole or not at all), then create or migrate it under the
    write lock, checking it again there."""
    conn.execute("BEGIN")
    try:
        found = _found(conn)
        if not found.blank:
            _check(target, conn, found)
    finally:
        _end(conn, "COMMIT")  # a read transaction: nothing is written
    if not found.blank and found.version == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = _found(conn)
        if found.blank:
            _create(conn)
        else:  # created by another process meanwhile, or an older store
            _check(target, conn, found)
            if found.version < SCHEMA_VERSION:
                _migrate(target, conn, found.version)
        conn.execute("COMMIT")
    except BaseException:
        _end(conn, "ROLLBACK")
        raise


def _check(target: Path, conn: sqlite3.Connection, found: _Found) -> None:
    if found.application_id != APPLICATION_ID:
        raise _foreign_id(target, found.application_id)
    if found.version > SCHEMA_VERSION:
        raise _newer(target, found.version)
    if found.version < 1:
        raise _corrupt(target, f"user_version {found.version} is not a store schema version")
    _check_objects(target, found.schema, found.version)
    _check_columns(target, conn, found.version)


#: SQLite's planner statistics, written by ``ANALYZE`` or ``PRAGMA optimize``: SQLite's own
#: objects, allowed in a store but not part of its layout (MEM-STO-010).
_STATISTICS = frozenset({("table", "sqlite_stat1", "sqlite_stat1"),
                         ("table", "sqlite_stat4", "sqlite_stat4")})


def _layout(version: int) -> tuple[str, ...]:
    """The DDL that builds a store of ``version`` (V1 and the migration steps before it)."""
    steps = [s for m in MIGRATIONS if m.version < version for s in m.statements]
    return (*V1_SCHEMA, *steps)


@functools.cache
def expected_definitions(version: int) -> dict[sql_definitions.Key, sql_definitions.Definition]:
    """Every ``sqlite_schema`` row of a store of ``version``, ``(type, name, tbl_name)`` →
    normalised ``sql``: what its DDL creates, with the objects SQLite makes for it
    (``sqlite_autoindex_entries_1`` for the text primary key, ``sqlite_sequence`` for
    AUTOINCREMENT). Read from an in-memory database built with the same DDL, so it follows the
    layout by construction."""
    return sql_definitions.built(_layout(version))


def expected_objects(version: int) -> frozenset[tuple[str, str, str]]:
    """``(type, name, tbl_name)`` of every ``sqlite_schema`` row of a store of ``version``."""
    return frozenset(expected_definitions(version))


def _check_objects(target: Path, schema: dict[sql_definitions.Key, sql_definitions.Definition],
                   version: int) -> None:
    """MEM-STO-010: refuse a store whose schema objects are not exactly those of its version,
    with exactly their definitions (an added trigger would run inside every write transaction
    and could erase the ledger; an audit column declared ``ON CONFLICT IGNORE`` drops rows)."""
    found = {key: sql for key, sql in schema.items() if key not in _STATISTICS}
    expected = expected_definitions(version)
    extra = sorted(found.keys() - expected.keys())
    missing = sorted(expected.keys() - found.keys())
    altered = sql_definitions.altered(found, expected)
    problems = []
    if extra:
        problems.append("schema objects dshkit did not create: "
                        + ", ".join(f"{kind} {name}" for kind, name, _ in extra))
    if missing:
        problems.append("schema objects missing: "
                        + ", ".join(f"{kind} {name}" for kind, name, _ in missing))
    if altered:
        problems.append("schema objects whose definitions are not dshkit's: "
                        + ", ".join(f"{kind} {name}" for kind, name, _ in altered))
    if problems:
        raise _corrupt(target, f"{'; '.join(problems)} (schema version {version})")


def _check_columns(target: Path, conn: sqlite3.Connection, version: int) -> None:
    for table, columns in expected_columns(version).items():
        found = tuple(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))
        if found != columns:
            raise _corrupt(target, f"table {table} has columns {list(found)}, expected "
                                   f"{list(columns)} for schema version {version}")


def _create(conn: sqlite3.Connection) -> None:
    """A new store, inside the caller's write transaction."""
    for statement in _layout(SCHEMA_VERSION):
        conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _migrate(target: Path, conn: sqlite3.Connection, version: int) -> None:
    """Forward steps version → current, inside the caller's write transaction, checked again
    before it commits (MEM-STO-004/005)."""
    for migration in MIGRATIONS:
        if migration.version >= version:
            for statement in migration.statements:
                conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    _check_objects(target, sql_definitions.read(conn), SCHEMA_VERSION)
    _check_columns(target, conn, SCHEMA_VERSION)


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
