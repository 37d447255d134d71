"""Store opening, migrations and file safety (MEM-STO-001..007).

Older stores (schema versions 1 and 2) are built with the store's own
``create_store_at_version``, filled through sqlite3 in the old layout, then opened: every entry
and audit row must survive with the documented defaults for the new columns (MEM-STO-005).
Anything that is not a dshkit store, or a newer one, is refused and left byte-for-byte alone.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
from memory_support import WRITE, Json, make_write, open_store, raises_code, umask

from dshkit.conformance.memory_model import replay
from dshkit.reference.memory import store as store_module
from dshkit.reference.memory.store import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
    Migration,
    create_store_at_version,
)

T0 = 1_700_000_000_000
TEXTS = ["prefers 茶 over coffee 🍵", "line one\nline two\twith tab", "ΑΣ 𝄞 é — emoji 😀😀",
         "plain ascii"]
ENTRY_ROWS: list[dict[str, Any]] = [
    {"id": "11111111-1111-4111-8111-111111111111", "track": "user", "scope": "user-global",
     "workspace_key": "", "agent_key": "", "text": TEXTS[0], "source": "dshkit",
     "tags": ["中文", "😀", "pref"], "created_at": T0, "updated_at": T0 + 5,
     "session_id": "old-session"},
    {"id": "22222222-2222-4222-9222-222222222222", "track": "agent", "scope": "workspace",
     "workspace_key": "/home/me/proj", "agent_key": "coder", "text": TEXTS[1],
     "source": "dsh-memento", "tags": [], "created_at": T0 + 1, "updated_at": T0 + 1,
     "session_id": None},
    {"id": "33333333-3333-4333-a333-333333333333", "track": "user", "scope": "workspace",
     "workspace_key": "c:/Work/Proj", "agent_key": "", "text": TEXTS[2], "source": "mem0",
     "tags": ["emoji 😀"], "created_at": T0 + 2, "updated_at": T0 + 9, "session_id": "s"},
    {"id": "44444444-4444-4444-b444-444444444444", "track": "agent", "scope": "user-global",
     "workspace_key": "", "agent_key": "reviewer", "text": TEXTS[3], "source": "cli",
     "tags": ["a", "b"], "created_at": T0 + 3, "updated_at": T0 + 3, "session_id": "t"},
]
#: v2 columns for the rows of a version-2 store (version, recall_count, last_recalled).
V2_EXTRA = [(3, 2, T0 + 100), (1, 0, None), (2, 7, T0 + 50), (1, 1, T0 + 60)]
AUDIT_ROWS: list[dict[str, Any]] = [
    {"ts": T0, "action": "add", "track": "user", "scope": "user-global",
     "entry_id": ENTRY_ROWS[0]["id"], "text": TEXTS[0], "outcome": "allowed-once (via approval)",
     "source": "dshkit", "session_id": "old-session"},
    {"ts": T0 + 1, "action": "add-denied", "track": "agent", "scope": "workspace",
     "entry_id": None, "text": "被拒绝 🙅", "outcome": "rejected", "source": "dshkit",
     "session_id": None},
    {"ts": T0 + 2, "action": "snapshot", "track": None, "scope": None, "entry_id": None,
     "text": "", "outcome": "ok", "source": "dshkit", "session_id": "old-session"},
]
V1_ENTRY_COLUMNS = ("id", "track", "scope", "workspace_key", "agent_key", "text", "source",
                    "tags", "created_at", "updated_at", "session_id")
AUDIT_COLUMNS = ("ts", "action", "track", "scope", "entry_id", "text", "outcome", "source",
                 "session_id")


def _pragma(path: Path, name: str) -> int:
    with closing(sqlite3.connect(path)) as conn:
        return int(conn.execute(f"PRAGMA {name}").fetchone()[0])


def _columns(path: Path, table: str) -> list[str]:
    with closing(sqlite3.connect(path)) as conn:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def build_old_store(path: Path, version: int) -> None:
    """A store at ``version`` holding ENTRY_ROWS and AUDIT_ROWS in that version's layout."""
    create_store_at_version(path, version)
    with closing(sqlite3.connect(path)) as conn, conn:
        for index, row in enumerate(ENTRY_ROWS):
            values = [json.dumps(row[c], ensure_ascii=False) if c == "tags" else row[c]
                      for c in V1_ENTRY_COLUMNS]
            columns = list(V1_ENTRY_COLUMNS)
            if version >= 2:
                columns += ["version", "recall_count", "last_recalled"]
                values += list(V2_EXTRA[index])
            conn.execute(f"INSERT INTO entries ({', '.join(columns)}) VALUES "
                         f"({', '.join('?' * len(columns))})", values)
        for row in AUDIT_ROWS:
            conn.execute(f"INSERT INTO audit ({', '.join(AUDIT_COLUMNS)}) VALUES "
                         f"({', '.join('?' * len(AUDIT_COLUMNS))})",
                         [row[c] for c in AUDIT_COLUMNS])


def expected_entries(version: int) -> list[Json]:
    out = []
    for index, row in enumerate(ENTRY_ROWS):
        # MEM-STO-005: a v1 row gets version 1, recallCount 0, lastRecalled null.
        entry_version, recalls, last = V2_EXTRA[index] if version >= 2 else (1, 0, None)
        out.append({"id": row["id"], "track": row["track"], "scope": row["scope"],
                    "workspaceKey": row["workspace_key"], "agentKey": row["agent_key"],
                    "text": row["text"], "source": row["source"], "tags": row["tags"],
                    "version": entry_version, "createdAt": row["created_at"],
                    "updatedAt": row["updated_at"], "lastRecalled": last,
                    "recallCount": recalls, "sessionId": row["session_id"]})
    return out


def expected_audit() -> list[Json]:
    """Newest first, as audit_list returns; entry and entryIds null (MEM-STO-005, v3 step)."""
    rows = [{"seq": seq, "ts": r["ts"], "action": r["action"], "track": r["track"],
             "scope": r["scope"], "entryId": r["entry_id"], "text": r["text"],
             "outcome": r["outcome"], "source": r["source"], "sessionId": r["session_id"],
             "entry": None, "entryIds": None} for seq, r in enumerate(AUDIT_ROWS, start=1)]
    return rows[::-1]


@pytest.mark.parametrize("version", [1, 2])
def test_older_store_is_migrated_preserving_everything(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.db"
    build_old_store(path, version)
    assert _pragma(path, "user_version") == version
    provider = open_store(path)
    try:
        assert _pragma(path, "user_version") == SCHEMA_VERSION == 4
        assert _pragma(path, "application_id") == APPLICATION_ID
        assert _columns(path, "audit")[-2:] == ["entry", "entry_ids"]
        assert provider.list_entries() == expected_entries(version)
        assert provider.audit_list() == expected_audit()
        assert provider.budgets()[0]["used"] == sum(
            len(r["text"].encode("utf-16-le")) // 2 for r in ENTRY_ROWS
            if (r["track"], r["scope"]) == ("user", "user-global"))
    finally:
        provider.close()


@pytest.mark.parametrize("version", [1, 2])
def test_migrated_store_works(tmp_path: Path, version: int) -> None:
    path = tmp_path / "old.db"
    build_old_store(path, version)
    provider = open_store(path)
    try:
        writer = make_write("new-session", "/home/me/proj", "coder")
        old = expected_entries(version)[1]
        replaced = provider.replace({"track": "agent", "scope": "workspace",
                                     "match": "LINE ONE", "text": "line one, rewritten"},
                                    writer)
        assert replaced["previous"] == old
        assert replaced["entry"]["version"] == old["version"] + 1
        added = provider.add({"track": "user", "scope": "user-global", "text": "新 🎉",
                              "tags": ["x"]}, writer)["entry"]
        recalled = provider.query({"text": "🍵"}, {"reader": writer, "recall": True})
        assert [e["id"] for e in recalled["entries"]] == [ENTRY_ROWS[0]["id"]]
        assert recalled["entries"][0]["recallCount"] == expected_entries(version)[0][
            "recallCount"] + 1
        removed = provider.remove({"track": "user", "scope": "workspace", "match": "𝄞"},
                                  make_write("x", "C:\\Work\\Proj", "anyone"))
        assert removed["entry"]["id"] == ENTRY_ROWS[2]["id"]
        snapshot = provider.snapshot(writer)
        assert "- line one, rewritten" in snapshot and "- 新 🎉" in snapshot
        assert added in provider.list_entries()
        # The rows written since the migration carry entry snapshots (v3 layout).
        fresh = [r for r in provider.audit_list() if r["seq"] > len(AUDIT_ROWS)]
        assert [r["action"] for r in fresh] == ["snapshot", "remove", "recalled", "add",
                                                "replace"]
        assert all(r["entry"] is not None for r in fresh
                   if r["action"] in ("add", "replace", "remove"))
    finally:
        provider.close()
    # Reopening a migrated store is a no-op.
    reopened = open_store(path)
    try:
        assert _pragma(path, "user_version") == 4
        assert len(reopened.list_entries()) == 4
    finally:
        reopened.close()


def test_fresh_store_replays_and_is_current(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    provider = open_store(path)
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "x"}, WRITE)
        assert replay(provider.audit_list()) == provider.list_entries()
    finally:
        provider.close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION
    assert _pragma(path, "application_id") == APPLICATION_ID == 0x44534B4D
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


# -- refusing what is not ours -----------------------------------------------------------------

def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for directories and symlinks)."""
    out: dict[str, bytes | None] = {}
    for item in sorted(root.rglob("*")):
        key = str(item.relative_to(root))
        out[key] = None if item.is_symlink() or item.is_dir() else item.read_bytes()
    return out


@contextmanager
def untouched(root: Path) -> Iterator[None]:
    before = _tree(root)
    yield
    assert _tree(root) == before, "a refused store was modified"


def test_newer_store_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    open_store(path).close()
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("PRAGMA user_version = 5")
    with untouched(tmp_path), raises_code("STORE_UNSUPPORTED_VERSION") as info:
        open_store(path)
    assert info.value.details == {"path": str(path), "found": 5, "supported": 4}


def _real_store_bytes(tmp_path: Path) -> bytes:
    source = tmp_path / "real" / "memory.db"
    provider = open_store(source)
    provider.add({"track": "user", "scope": "user-global", "text": "real"}, WRITE)
    provider.close()
    return source.read_bytes()


def _foreign_sqlite(path: Path, application_id: int = 0, user_version: int = 0) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('mine, not yours')")
        conn.execute(f"PRAGMA application_id = {application_id}")
        conn.execute(f"PRAGMA user_version = {user_version}")


@pytest.mark.parametrize("kind", ["truncated", "foreign", "foreign-app-id", "dshkit-id-v0",
                                  "text", "directory", "symlink", "dangling-symlink"])
def test_not_a_dshkit_store_is_refused_unchanged(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "box" / "memory.db"
    path.parent.mkdir()
    if kind == "truncated":
        path.write_bytes(_real_store_bytes(tmp_path)[:50])
    elif kind == "foreign":
        _foreign_sqlite(path)
    elif kind == "foreign-app-id":
        _foreign_sqlite(path, application_id=0x12345678, user_version=3)
    elif kind == "dshkit-id-v0":
        _foreign_sqlite(path, application_id=APPLICATION_ID, user_version=0)
    elif kind == "text":
        path.write_text("these are my notes\n", encoding="utf-8")
    elif kind == "directory":
        path.mkdir()
        (path / "inside.txt").write_text("x", encoding="utf-8")
    else:
        target = tmp_path / "real" / "memory.db"
        if kind == "symlink":
            _real_store_bytes(tmp_path)
        else:
            target = tmp_path / "nowhere.db"
        path.symlink_to(target)
    with untouched(tmp_path), raises_code("STORE_CORRUPT") as info:
        open_store(path)
    assert info.value.details["path"] == str(path)
    assert isinstance(info.value.details["reason"], str) and info.value.details["reason"]


def test_empty_file_is_created_as_a_store(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(b"")
    open_store(path).close()
    assert _pragma(path, "user_version") == SCHEMA_VERSION


# -- all-or-nothing migration ------------------------------------------------------------------

def test_failed_migration_leaves_the_old_version(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "old.db"
    build_old_store(path, 1)
    columns = {t: _columns(path, t) for t in ("entries", "audit")}
    with closing(sqlite3.connect(path)) as conn:
        rows_before = {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                       for t in ("entries", "audit")}
    broken = (MIGRATIONS[0], Migration(2, (MIGRATIONS[1].statements[0],
                                           "ALTER TABLE no_such_table ADD COLUMN x TEXT"),
                                       "a step that fails half-way"))
    monkeypatch.setattr(store_module, "MIGRATIONS", broken)
    with pytest.raises(Exception) as info:
        open_store(path)
    assert getattr(info.value, "code", None) == "STORE_CORRUPT"
    assert _pragma(path, "user_version") == 1
    assert {t: _columns(path, t) for t in ("entries", "audit")} == columns
    with closing(sqlite3.connect(path)) as conn:
        assert {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall()
                for t in ("entries", "audit")} == rows_before
    monkeypatch.undo()
    provider = open_store(path)  # the real ladder still migrates it afterwards
    try:
        assert provider.list_entries() == expected_entries(1)
    finally:
        provider.close()


# -- file modes (MEM-STO-002) ------------------------------------------------------------------

def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)




@pytest.mark.parametrize("mask", [0o000, 0o022])
def test_created_files_are_private(tmp_path: Path, mask: int) -> None:
    path = tmp_path / "memdir" / "memory.db"
    with umask(mask):
        provider = open_store(path)
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "x"}, WRITE)
        assert _mode(path.parent) == 0o700
        assert _mode(path) == 0o600
        for suffix in ("-wal", "-shm"):
            sidecar = Path(f"{path}{suffix}")
            assert sidecar.exists(), f"{suffix} expected while the store is open (WAL)"
            assert _mode(sidecar) == 0o600
    finally:
        provider.close()


def test_existing_sidecars_are_made_private(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    first = open_store(path)
    try:
        first.add({"track": "user", "scope": "user-global", "text": "x"}, WRITE)
        for suffix in ("", "-wal", "-shm"):
            os.chmod(f"{path}{suffix}", 0o644)
        second = open_store(path)
        second.close()
        for suffix in ("", "-wal", "-shm"):
            assert _mode(Path(f"{path}{suffix}")) == 0o600
    finally:
        first.close()


def test_every_created_directory_is_private(tmp_path: Path) -> None:
    path = tmp_path / "home" / "memory" / "memory.db"
    with umask(0o022):
        open_store(path).close()
    assert _mode(path.parent) == 0o700
    assert _mode(path.parent.parent) == 0o700


def test_column_mismatch_is_refused_unchanged(tmp_path: Path) -> None:
    """MEM-STO-004: the tables must have exactly the columns of the store's version."""
    path = tmp_path / "memory.db"
    create_store_at_version(path, 2)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("ALTER TABLE audit ADD COLUMN entry TEXT")  # a v3 column in a v2 store
    with untouched(tmp_path), raises_code("STORE_CORRUPT") as info:
        open_store(path)
    assert "audit" in info.value.details["reason"]


def test_corrupt_tags_column_is_reported(tmp_path: Path) -> None:
    """MEM-STO-009: a tags value that is not a JSON array of strings makes the row unreadable."""
    path = tmp_path / "memory.db"
    provider = open_store(path)
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "x"}, WRITE)
        with closing(sqlite3.connect(path)) as conn, conn:
            conn.execute("UPDATE entries SET tags = '[1, 2]'")
        with raises_code("STORE_CORRUPT") as info:
            provider.list_entries()
        assert set(info.value.details) <= {"path", "reason"} and info.value.details["reason"]
    finally:
        provider.close()
