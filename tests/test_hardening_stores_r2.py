"""Hardening, second round (issue 15), the memory store and the query index:

- a store or index whose objects have the right names but altered definitions (an audit column
  declared ``NOT NULL ON CONFLICT IGNORE`` swallows the ledger) is refused and left unchanged
  (MEM-STO-010, QRY-IDX-016);
- a file that is refused stays byte for byte as it was, sidecars included, even when SQLite
  would recover a write-ahead log or a hot rollback journal into it (MEM-STO-007/008,
  QRY-IDX-003);
- several processes creating one new store or index at the same moment all succeed, and the
  errors survive pickling (MEM-STO-004, QRY-IDX-004).
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from hardening.concurrency import run_creation
from hardening.sqlite_files import (
    files,
    foreign_with_hot_journal,
    foreign_with_wal,
    rewrite_definition,
)

from dshkit.reference import sqlite_guard
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.store import create_store_at_version
from dshkit.reference.query.errors import INDEX_FAILED, SessionQueryError
from dshkit.reference.query.store import open_index
from dshkit.reference.sql_definitions import normalise

WRITE = {"agent": {"session": {"id": "r2", "header": {"cwd": "/ws/r2"}}}}

#: The layout of store version 3 as another provider might write it from the spec: aligned
#: columns, upper-case keywords, quoted names; the same definitions as dshkit's.
SPEC_LAYOUT = (
    """CREATE TABLE "entries" (
      id            TEXT PRIMARY KEY,
      track         TEXT NOT NULL CHECK (track IN ('user', 'agent')),
      scope         TEXT NOT NULL CHECK (scope IN ('user-global', 'workspace')),
      workspace_key TEXT NOT NULL DEFAULT '',
      agent_key     TEXT NOT NULL DEFAULT '',
      text          TEXT NOT NULL,
      source        TEXT NOT NULL,
      tags          TEXT NOT NULL DEFAULT '[]',
      created_at    INTEGER NOT NULL,
      updated_at    INTEGER NOT NULL,
      session_id    TEXT,
      version       INTEGER NOT NULL DEFAULT 1,
      recall_count  INTEGER NOT NULL DEFAULT 0,
      last_recalled INTEGER
    ) strict""",
    "create index [entries_bucket] on entries(track,scope)",
    """CREATE TABLE audit (
      seq        INTEGER PRIMARY KEY AUTOINCREMENT,
      ts         INTEGER NOT NULL,
      action     TEXT NOT NULL,
      track      TEXT,
      scope      TEXT,
      entry_id   TEXT,
      text       TEXT,
      outcome    TEXT,
      source     TEXT,
      session_id TEXT,
      entry      TEXT,
      entry_ids  TEXT
    ) STRICT""",
    "CREATE INDEX audit_ts ON `audit` (ts)",
    "PRAGMA application_id = 1146309453",
    "PRAGMA user_version = 3",
)


def _build(path: Path, statements: tuple[str, ...]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def _refused_memory(path: Path) -> str:
    with pytest.raises(MemoryProtocolError) as info:
        open_provider(path, write_policy="auto")
    assert info.value.code == "STORE_CORRUPT", info.value
    assert set(info.value.details) == {"path", "reason"}
    return str(info.value.details["reason"])


def _refused_index(path: Path) -> str:
    with pytest.raises(SessionQueryError) as info:
        open_index(path)
    assert info.value.code == INDEX_FAILED, info.value
    return str(info.value.detail.get("reason"))


# -- class 2: stores that lie about themselves ---------------------------------------------------


def test_a_store_written_from_the_spec_layout_is_adopted(tmp_path: Path) -> None:
    """Whitespace, keyword case and quoting of names are not part of a definition."""
    path = tmp_path / "memory.db"
    _build(path, SPEC_LAYOUT)
    provider = open_provider(path, write_policy="auto")
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "kept"}, WRITE)
        assert len(provider.audit_list(10)) == 1
    finally:
        provider.close()


#: case -> (object named in the refusal, statement of SPEC_LAYOUT, old text, new text)
LIES = {
    "audit-ignores-nulls": ("audit", 2, "entry_ids  TEXT", "entry_ids  TEXT NOT NULL ON CONFLICT "
                            "IGNORE"),
    "entries-replace": ("entries", 0, "id            TEXT PRIMARY KEY",
                        "id            TEXT PRIMARY KEY ON CONFLICT REPLACE"),
    "tags-default": ("entries", 0, "DEFAULT '[]'", "DEFAULT '[\"x\"]'"),
    "bucket-index": ("entries_bucket", 1, "(track,scope)", "(track)"),
    "audit-index": ("audit_ts", 3, "(ts)", "(action)"),
}


@pytest.mark.parametrize("case", sorted(LIES))
def test_a_store_with_an_altered_definition_is_refused_unchanged(case: str,
                                                                 tmp_path: Path) -> None:
    name, number, old, new = LIES[case]
    assert old in SPEC_LAYOUT[number]
    path = tmp_path / "memory.db"
    _build(path, tuple(s.replace(old, new) if i == number else s
                       for i, s in enumerate(SPEC_LAYOUT)))
    before = files(tmp_path)
    reason = _refused_memory(path)
    assert "definition" in reason and name in reason
    assert files(tmp_path) == before


def test_the_ledger_swallowing_store_of_the_issue_is_refused(tmp_path: Path) -> None:
    """The store of the report: adopted, ``add`` succeeded and left no audit row."""
    path = tmp_path / "memory.db"
    open_provider(path).close()
    rewrite_definition(path, "audit", "entry_ids TEXT", "entry_ids TEXT NOT NULL ON CONFLICT "
                                                         "IGNORE")
    before = files(tmp_path)
    _refused_memory(path)
    assert files(tmp_path) == before


@pytest.mark.parametrize("version", [1, 2])
def test_an_older_store_with_an_altered_definition_is_not_migrated(version: int,
                                                                   tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    create_store_at_version(path, version)
    rewrite_definition(path, "audit", "outcome TEXT", "outcome TEXT NOT NULL ON CONFLICT "
                                                       "IGNORE")
    before = files(tmp_path)
    assert "definition" in _refused_memory(path)
    assert files(tmp_path) == before


INDEX_LIES = {
    "index-state": ("index_state", "instance          TEXT NOT NULL",
                    "instance          TEXT NOT NULL ON CONFLICT IGNORE"),
    "sessions": ("sessions", "revision         TEXT NOT NULL", "revision         TEXT"),
    "docs-tokenizer": ("docs", "tokenize = 'unicode61'", "tokenize = 'ascii'"),
    "docs-content": ("docs_content", "PRIMARY KEY", "PRIMARY KEY ON CONFLICT IGNORE"),
}


@pytest.mark.parametrize("case", sorted(INDEX_LIES))
def test_an_index_with_an_altered_definition_is_refused_unchanged(case: str,
                                                                  tmp_path: Path) -> None:
    name, old, new = INDEX_LIES[case]
    path = tmp_path / "index.sqlite"
    open_index(path).close()
    rewrite_definition(path, name, old, new)
    before = files(tmp_path)
    assert _refused_index(path) == "altered-definitions"
    assert files(tmp_path) == before


# -- class 3: refusing a file rewrites it --------------------------------------------------------


def _blank_with_wal(directory: Path, name: str) -> Path:
    """The file holds an empty database (application id 0, no schema): all else is in the
    ``-wal``, which only SQLite's recovery would show."""
    path = foreign_with_wal(directory, name)
    with open(path, "rb") as handle:
        assert handle.read(100)[68:72] == b"\0\0\0\0"
    assert sqlite_guard.schema_size(path) == 0
    return path


def _foreign_with_wal(directory: Path, name: str) -> Path:
    """Another application's database, its schema in the file and its last commit in the
    ``-wal``."""
    path = directory / "first" / name
    path.parent.mkdir()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("INSERT INTO notes VALUES ('mine')")
        copy = directory / "copy"
        copy.mkdir()
        for item in path.parent.iterdir():
            shutil.copyfile(item, copy / item.name)
    finally:
        conn.close()
    assert (copy / f"{name}-wal").stat().st_size > 0
    return copy / name


FIXTURES: dict[str, Callable[[Path, str], Path]] = {
    "wal": _foreign_with_wal, "blank-with-wal": _blank_with_wal,
    "hot-journal": foreign_with_hot_journal,
}


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_a_refused_memory_store_and_its_sidecars_stay_byte_identical(fixture: str,
                                                                      tmp_path: Path) -> None:
    path = FIXTURES[fixture](tmp_path, "notes.db")
    before = files(path.parent)
    _refused_memory(path)
    assert files(path.parent) == before


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
def test_a_refused_index_and_its_sidecars_stay_byte_identical(fixture: str,
                                                               tmp_path: Path) -> None:
    path = FIXTURES[fixture](tmp_path, "notes.db")
    before = files(path.parent)
    _refused_index(path)
    assert files(path.parent) == before


def _marked_with_wal(directory: Path, name: str, *pragmas: str) -> Path:
    """A database whose header carries ``pragmas`` (an application id, a user version), with
    a commit still in its ``-wal``."""
    first = directory / "first"
    first.mkdir()
    conn = sqlite3.connect(first / name, isolation_level=None)
    for pragma in pragmas:
        conn.execute(pragma)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    conn = sqlite3.connect(first / name, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("INSERT INTO notes VALUES ('mine')")
        copy = directory / "copy"
        copy.mkdir()
        for item in first.iterdir():
            shutil.copyfile(item, copy / item.name)
    finally:
        conn.close()
    return copy / name


def test_another_application_id_is_refused_from_the_header(tmp_path: Path) -> None:
    path = _marked_with_wal(tmp_path, "notes.db", "PRAGMA application_id = 42")
    before = files(path.parent)
    assert "application_id is 42" in _refused_memory(path)
    assert _refused_index(path) == "foreign-application"
    assert files(path.parent) == before


def test_a_newer_store_is_refused_from_the_header(tmp_path: Path) -> None:
    path = _marked_with_wal(tmp_path, "memory.db", "PRAGMA application_id = 1146309453",
                            "PRAGMA user_version = 99")
    before = files(path.parent)
    with pytest.raises(MemoryProtocolError) as info:
        open_provider(path)
    assert info.value.code == "STORE_UNSUPPORTED_VERSION"
    assert files(path.parent) == before


def test_an_own_store_with_commits_in_its_wal_is_still_opened(tmp_path: Path) -> None:
    """The header check refuses foreign files only: dshkit's own store is recovered as usual."""
    live = tmp_path / "live"
    provider = open_provider(live / "memory.db", write_policy="auto")
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "in the wal"}, WRITE)
        copy = tmp_path / "copy"
        copy.mkdir()
        for item in live.iterdir():
            shutil.copyfile(item, copy / item.name)
    finally:
        provider.close()
    assert (copy / "memory.db-wal").stat().st_size > 0
    reopened = open_provider(copy / "memory.db")
    try:
        assert [e["text"] for e in reopened.list_entries()] == ["in the wal"]
    finally:
        reopened.close()


# -- class 8: creating a store from several processes at once -----------------------------------


def test_errors_survive_pickling() -> None:
    memory = MemoryProtocolError("STORE_CORRUPT", "refused", {"path": "/x", "reason": "r"})
    back = pickle.loads(pickle.dumps(memory))
    assert (type(back), back.code, back.message, back.details) == (
        MemoryProtocolError, "STORE_CORRUPT", "refused", {"path": "/x", "reason": "r"})
    query = SessionQueryError(INDEX_FAILED, "failed", path="/y", reason="symlink")
    again = pickle.loads(pickle.dumps(query))
    assert (type(again), again.code, again.message, again.detail) == (
        SessionQueryError, INDEX_FAILED, "failed", {"path": "/y", "reason": "symlink"})
    assert again.to_json() == query.to_json() and str(again) == str(query)


@pytest.mark.parametrize("target", ["memory", "index"])
def test_six_processes_create_one_new_store_at_once(target: str, tmp_path: Path) -> None:
    result = run_creation(tmp_path, target, processes=6, rounds=15)
    assert result["ok"], result["problems"]
    assert result["operations"] == 6 * 15


def test_definitions_are_compared_as_sql() -> None:
    assert normalise('CREATE TABLE "a" (x  TEXT,\n y INTEGER) -- note\n STRICT') == \
        normalise("create table [A] (X text, y integer) strict")
    assert normalise("CREATE TABLE a (x TEXT NOT NULL)") != \
        normalise('CREATE TABLE a (x TEXT "NOT" NULL)')  # a quoted keyword is a name
    assert normalise("CREATE TABLE a (x TEXT DEFAULT 'A')") != \
        normalise("CREATE TABLE a (x TEXT DEFAULT 'a')")  # string literals keep their case
    assert normalise("CREATE TABLE a (x INTEGER DEFAULT 10)") != \
        normalise("CREATE TABLE a (x INTEGER DEFAULT 1 0)")  # one number is one token
    assert normalise(None) is None


def test_a_stale_wal_next_to_an_empty_file_is_not_recovered(tmp_path: Path) -> None:
    """A zero-byte file is new even with a -wal left next to it (a deleted database's):
    SQLite reads nothing of it, so neither a store nor an index takes in its pages."""
    wal = foreign_with_wal(tmp_path, "old.db").parent / "old.db-wal"
    for name, opener in (("memory.db", "memory"), ("index.sqlite", "index")):
        path = tmp_path / name
        path.touch()
        shutil.copyfile(wal, f"{path}-wal")
        if opener == "memory":
            provider = open_provider(path)
            try:
                assert provider.list_entries() == []
            finally:
                provider.close()
        else:
            with open_index(path) as store:
                assert store.conn.execute("SELECT count(*) FROM sqlite_master WHERE name = "
                                          "'notes'").fetchone()[0] == 0
