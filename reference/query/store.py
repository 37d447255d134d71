"""The derived full-text index: a dedicated SQLite database (QRY-IDX-*).

The index is disposable: it is rebuilt from the logs whenever its schema is not the current
one. It refuses every database that is not an empty file or its own, so it can never damage
a session store, a memory store or any other file it is pointed at by mistake.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .. import sql_definitions, sqlite_guard
from .errors import INDEX_FAILED, INVALID_CONFIG, SessionQueryError
from .placement import Placement, confirm, place

APPLICATION_ID: Final = 0x44534B51  # "DSKQ"
#: DSH's own session-search index ("DSHQ"): a foreign application for dshkit.
DSH_APPLICATION_ID: Final = 0x44534851
SCHEMA_VERSION: Final = 1
JOURNAL_MODES: Final = ("wal", "delete", "truncate", "persist")
MEMORY: Final = ":memory:"
DERIVED_TABLES: Final = frozenset({
    "index_state", "sessions", "docs", "docs_data", "docs_idx", "docs_content",
    "docs_docsize", "docs_config",
})
#: Every schema object the index creates, as (type, name) rows of ``sqlite_schema``
#: (QRY-IDX-016): its tables, the FTS5 shadow tables and the implicit index of the primary key
#: of ``sessions``.
SCHEMA_OBJECTS: Final = frozenset({
    *(("table", name) for name in DERIVED_TABLES),
    ("index", "sqlite_autoindex_sessions_1"),
})

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS index_state (
        singleton         INTEGER PRIMARY KEY CHECK (singleton = 1),
        instance          TEXT NOT NULL,
        global_generation INTEGER NOT NULL
    ) STRICT""",
    """CREATE TABLE IF NOT EXISTS sessions (
        id               TEXT PRIMARY KEY,
        path             TEXT,
        version          INTEGER NOT NULL,
        created_at       INTEGER NOT NULL,
        cwd              TEXT,
        parent_session   TEXT,
        seed_length      INTEGER,
        delegation_depth INTEGER,
        agent_preset     TEXT,
        title            TEXT,
        revision         TEXT NOT NULL,
        stat_key         TEXT NOT NULL,
        events           INTEGER NOT NULL,
        generation       INTEGER NOT NULL
    ) STRICT""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(
        text,
        session_id UNINDEXED,
        seq UNINDEXED,
        type UNINDEXED,
        time UNINDEXED,
        surface UNINDEXED,
        codepoint_length UNINDEXED,
        tokenize = 'unicode61'
    )""",
)


@dataclass(frozen=True, slots=True)
class OpenDecision:
    """What opening a database does: ``initialize``, ``open``, ``rebuild`` or ``refuse``.
    ``tables`` names the schema objects behind a refusal or a rebuild."""

    action: str
    reason: str = ""
    tables: tuple[str, ...] = ()


SchemaObject = tuple[str, str]  # (type, name) of one row of sqlite_schema


def _objects(listed: Sequence[str | SchemaObject]) -> list[SchemaObject]:
    return [item if isinstance(item, tuple) else ("table", item) for item in listed]


def decide(application_id: int, user_version: int,
           objects: Sequence[str | SchemaObject]) -> OpenDecision:
    """The open rules of QRY-IDX-003..005 and QRY-IDX-016, in order. ``objects`` lists every
    row of ``sqlite_schema`` as (type, name); a bare name stands for a table."""
    found = _objects(objects)
    if application_id not in (0, APPLICATION_ID):
        return OpenDecision("refuse", "foreign-application")
    if application_id == 0:
        if found:
            return OpenDecision("refuse", "not-derived-index", tuple(n for _, n in found))
        return OpenDecision("initialize")
    unknown = [(kind, name) for kind, name in found if (kind, name) not in SCHEMA_OBJECTS]
    tables = [name for kind, name in unknown if kind == "table"]
    if tables:
        return OpenDecision("refuse", "unrecognized-tables", tuple(tables))
    if unknown:
        return OpenDecision("refuse", "unrecognized-objects",
                            tuple(f"{kind} {name}" for kind, name in unknown))
    if user_version != SCHEMA_VERSION:
        return OpenDecision("rebuild", f"schema version {user_version}",
                            tuple(n for k, n in found if k == "table"))
    return OpenDecision("open")


def refusal_message(path: str, decision: OpenDecision) -> str:
    where = f'session-search database at "{path}"'
    if decision.reason == "foreign-application":
        return f"{where} belongs to another application"
    if decision.reason == "not-derived-index":
        return f"{where} is not an empty or recognized derived index"
    if decision.reason == "unrecognized-objects":
        return f"{where} has unrecognized schema objects: {', '.join(decision.tables)}"
    if decision.reason == "altered-definitions":
        return (f"{where} has schema objects whose definitions are not the index's: "
                f"{', '.join(decision.tables)}")
    if decision.reason == "unrecovered-journal":
        return (f"{where} has an empty database in its file and changes in its "
                f"{decision.tables[0]} file that SQLite would write into it; it was not "
                "modified")
    return f"{where} has unrecognized user tables: {', '.join(decision.tables)}"


def _failed(detail: str, **extra: object) -> SessionQueryError:
    return SessionQueryError(INDEX_FAILED, f"session-search SQLite index failed to open: {detail}",
                             **extra)


def _schema_objects(conn: sqlite3.Connection) -> list[SchemaObject]:
    """Every row of ``sqlite_schema`` (``sqlite_master``), internal objects included."""
    rows = conn.execute("SELECT type, name FROM sqlite_master ORDER BY name").fetchall()
    return [(str(row[0]), str(row[1])) for row in rows]


def _user_tables(conn: sqlite3.Connection) -> list[str]:
    return [name for kind, name in _schema_objects(conn)
            if kind == "table" and not name.startswith("sqlite_")]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: Document rowid classes (QRY-IDX-015): the documents a default search can return (surfaces
#: ``current`` and ``log-only``) in [2^40, 2^41), the ``shadowed`` ones in [2^41, 2^42). When
#: every rowid of an index is at least 2^40, a search skips a class by a rowid range that FTS5
#: applies inside its index, without reading a document it does not return.
OPEN_ROWIDS: Final = (1 << 40, 1 << 41)
SHADOWED_ROWIDS: Final = (1 << 41, 1 << 42)


def classed(conn: sqlite3.Connection) -> bool:
    """Whether every document of the index has a classed rowid (an index written before the
    classes, or by a writer that does not use them, has smaller ones)."""
    row = conn.execute("SELECT rowid FROM docs ORDER BY rowid LIMIT 1").fetchone()
    return row is None or int(row[0]) >= OPEN_ROWIDS[0]


def next_rowid(conn: sqlite3.Connection, bounds: tuple[int, int]) -> int:
    """The rowid after the last one used in ``bounds``."""
    row = conn.execute("SELECT rowid FROM docs WHERE rowid >= ? AND rowid < ? "
                       "ORDER BY rowid DESC LIMIT 1", bounds).fetchone()
    return bounds[0] if row is None else int(row[0]) + 1


#: Page size of a new index (SQLite's default is 4096): half as many pages to write and to copy
#: at a checkpoint; the FTS5 leaves of about 4000 bytes still fit in one page.
PAGE_SIZE: Final = 8192

#: Page cache while a session is written: FTS5 merges its segments through it (64 MiB).
BULK_CACHE_KIB: Final = 65_536


@contextlib.contextmanager
def bulk_settings(conn: sqlite3.Connection) -> Iterator[None]:
    """Connection settings for writing a large session, restored afterwards. Nothing here
    changes what is stored or how a transaction commits (QRY-IDX-010)."""
    previous = int(conn.execute("PRAGMA cache_size").fetchone()[0])
    conn.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {previous}")


#: What FTS5 buffers of a transaction's new documents before it writes them out as a segment
#: (its ``hashsize`` option; SQLite's default is 1 MiB): fewer, larger segments to merge.
PENDING_BYTES: Final = 8 << 20


def buffer_pending(conn: sqlite3.Connection) -> None:
    """Set the FTS5 ``hashsize`` option of ``docs``, inside the caller's transaction; an
    SQLite whose FTS5 does not know the option keeps its default."""
    with contextlib.suppress(sqlite3.OperationalError):
        conn.execute("INSERT INTO docs (docs, rank) VALUES ('hashsize', ?)", (PENDING_BYTES,))


class IndexStore:
    """An open index database. ``decision`` records what opening it did."""

    def __init__(self, conn: sqlite3.Connection, path: str, decision: OpenDecision) -> None:
        self.conn = conn
        self.path = path
        self.decision = decision

    @property
    def instance(self) -> str:
        return str(self.conn.execute(
            "SELECT instance FROM index_state WHERE singleton = 1").fetchone()[0])

    @property
    def global_generation(self) -> int:
        return int(self.conn.execute(
            "SELECT global_generation FROM index_state WHERE singleton = 1").fetchone()[0])

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> IndexStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_index(path: str | Path, journal_mode: str = "wal") -> IndexStore:
    """Open (creating, initializing or rebuilding as the rules say) the index at ``path``;
    ``:memory:`` gives a private in-memory index. The path is used as given, made absolute
    without resolving symbolic links (QRY-IDX-017, QRY-IDX-018)."""
    if journal_mode not in JOURNAL_MODES:
        raise SessionQueryError(INVALID_CONFIG, "session-search SQLite config: journal mode "
                                f"must be one of {', '.join(JOURNAL_MODES)}")
    actual = str(path)
    placement: Placement | None = None
    try:
        if actual != MEMORY:
            actual = os.path.abspath(actual)
            placement = place(actual)
            look(actual)
        conn = sqlite3.connect(actual, isolation_level=None, timeout=BUSY_SECONDS)
    except OSError as exc:
        raise _failed(f"{actual}: {exc.strerror or exc}", path=actual) from None
    except ValueError as exc:  # a path with a NUL character
        raise _failed(f"{actual!r}: {exc}", path=actual) from None
    except sqlite3.Error as exc:
        raise _failed(f"{actual}: {exc}", path=actual) from None
    try:
        decision = _initialize(conn, actual, journal_mode, placement)
    except SessionQueryError:
        conn.close()
        raise
    except OSError as exc:
        conn.close()
        raise _failed(f"{actual}: {exc.strerror or exc}", path=actual) from None
    except sqlite3.Error as exc:
        conn.close()
        raise _failed(f"{actual}: {exc}", path=actual) from None
    return IndexStore(conn, actual, decision)


#: How long opening waits for other connections (the busy timeout of the connection).
BUSY_SECONDS: Final = 30.0


def _set_journal_mode(conn: sqlite3.Connection, journal_mode: str) -> None:
    """Set the journal mode, waiting for other connections: SQLite answers "database is
    locked" at once, without its busy handler, when two connections change the mode of a new
    database together or one reads it meanwhile."""
    deadline = time.monotonic() + BUSY_SECONDS
    pause = 0.001
    while True:
        try:
            conn.execute(f"PRAGMA journal_mode = {journal_mode.upper()}")
            return
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY,
                                                              sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _read_decision(conn: sqlite3.Connection) -> OpenDecision:
    """The decision from the application id, the user version and the schema, read in one
    read transaction: another process that initializes the index meanwhile is seen either
    before or after its commit, never half (an application id of 0 with its tables)."""
    if conn.in_transaction:
        return decision_now(conn)
    conn.execute("BEGIN DEFERRED")
    try:
        return decision_now(conn)
    finally:
        conn.execute("COMMIT")  # a read transaction: nothing is written


def decision_now(conn: sqlite3.Connection) -> OpenDecision:
    """What to do with the database of ``conn``, read with plain reads (also on a read-only
    connection): open, initialize, rebuild or refuse (QRY-IDX-003..005, QRY-IDX-016)."""
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    user_version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    decision = decide(application_id, user_version, _schema_objects(conn))
    if decision.action == "open":
        altered = sql_definitions.altered(sql_definitions.read(conn), expected_definitions())
        if altered:
            return OpenDecision("refuse", "altered-definitions",
                                tuple(f"{kind} {name}" for kind, name, _ in altered))
    return decision


@functools.cache
def expected_definitions() -> dict[sql_definitions.Key, sql_definitions.Definition]:
    """QRY-IDX-016: the definition of every schema object of the index, FTS5's shadow tables
    included, as this SQLite creates them."""
    return sql_definitions.built(_SCHEMA)


def look(path: str) -> None:
    """QRY-IDX-003: refuse from the file's header, before SQLite opens it and recovers a
    ``-wal`` or a hot ``-journal`` into it, a file that is not an index or an empty database.
    A file that is not an SQLite database at all is left to SQLite, which refuses it."""
    header = sqlite_guard.read_header(path)
    if header.problem or header.application_id == APPLICATION_ID:
        return
    if header.empty:
        # New, or being created by another process under its -journal. SQLite reads nothing
        # of a -wal or -journal next to a zero-page file: it deletes them.
        return
    if header.application_id != 0:
        decision = OpenDecision("refuse", "foreign-application")
    elif sqlite_guard.schema_size(path):
        decision = OpenDecision("refuse", "not-derived-index")
    elif pending := sqlite_guard.pending_recovery(path):
        decision = OpenDecision("refuse", "unrecovered-journal", (pending,))
    else:
        return
    raise _failed(refusal_message(path, decision), path=path, reason=decision.reason)


def _initialize(conn: sqlite3.Connection, path: str, journal_mode: str,
                placement: Placement | None) -> OpenDecision:
    decision = _read_decision(conn)
    if decision.action == "refuse":
        raise _failed(refusal_message(path, decision), path=path, reason=decision.reason)
    if decision.action == "initialize":  # takes effect with the first write of an empty file
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    if placement is not None:  # only after foreign files were refused: the first write
        confirm(placement)
    # Created before the journal mode is set: a new index is then written in rollback mode, so
    # its file carries the application id from the first commit on (QRY-IDX-003, QRY-IDX-004).
    conn.execute("BEGIN IMMEDIATE")
    try:
        decision = _read_decision(conn)  # again, under the write lock
        if decision.action == "refuse":
            raise _failed(refusal_message(path, decision), path=path, reason=decision.reason)
        if decision.action == "rebuild":
            for name in decision.tables:
                if name in DERIVED_TABLES and not name.startswith("docs_"):
                    conn.execute(f"DROP TABLE IF EXISTS {_quote(name)}")
            for name in _user_tables(conn):  # shadow tables left behind by a broken FTS table
                conn.execute(f"DROP TABLE IF EXISTS {_quote(name)}")
            conn.execute("PRAGMA user_version = 0")
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute("INSERT OR IGNORE INTO index_state (singleton, instance, global_generation) "
                     "VALUES (1, ?, 0)", (str(uuid.uuid4()),))
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    if placement is not None:
        _set_journal_mode(conn, journal_mode)
    return decision
