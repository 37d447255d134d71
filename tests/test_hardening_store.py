"""A memory store is adopted only as dshkit made it (issue 9): its schema objects are exactly
those of its version (MEM-STO-010), and neither its file nor its directory is a symbolic link
(MEM-STO-011). Every refusal is ``STORE_CORRUPT`` and leaves the files byte for byte as they
were. The one-line cases are rows of the bad-input table; these tests add the byte-for-byte
check, the other object types, older versions and the race on created directories."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.store import (
    SCHEMA_VERSION,
    create_store_at_version,
    expected_objects,
)

WRITE = {"agent": {"session": {"id": "store", "header": {"cwd": "/ws/store"}}}}


def _store(path: Path, version: int = SCHEMA_VERSION) -> None:
    if version == SCHEMA_VERSION:
        provider = open_provider(path, write_policy="auto")
        try:
            provider.add({"track": "user", "scope": "user-global", "text": "kept"}, WRITE)
        finally:
            provider.close()
    else:
        create_store_at_version(path, version)


def _execute(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    finally:
        conn.close()


def _files(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def _refused(path: Path) -> dict[str, Any]:
    with pytest.raises(MemoryProtocolError) as info:
        open_provider(path, write_policy="auto")
    assert info.value.code == "STORE_CORRUPT"
    assert set(info.value.details) == {"path", "reason"}
    return info.value.details


TAMPERING = {
    "trigger-on-entries": ("CREATE TRIGGER t AFTER INSERT ON entries BEGIN DELETE FROM audit; "
                           "END", "trigger t"),
    "trigger-on-audit": ("CREATE TRIGGER t BEFORE DELETE ON audit BEGIN SELECT 1; END",
                         "trigger t"),
    "view": ("CREATE VIEW v AS SELECT text FROM entries", "view v"),
    "table": ("CREATE TABLE extra (x TEXT)", "table extra"),
    "index": ("CREATE INDEX extra ON entries (text)", "index extra"),
    "expression-index": ("CREATE INDEX extra ON audit (length(text))", "index extra"),
    "missing-index": ("DROP INDEX entries_bucket", "missing: index entries_bucket"),
}


@pytest.mark.parametrize("version", [1, 2, SCHEMA_VERSION])
@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_foreign_schema_objects_are_refused_unchanged(case: str, version: int,
                                                      tmp_path: Path) -> None:
    statement, named = TAMPERING[case]
    path = tmp_path / "memory.db"
    _store(path, version)
    _execute(path, statement)
    before = _files(tmp_path)
    details = _refused(path)
    assert named in details["reason"] and details["path"] == str(path)
    assert _files(tmp_path) == before  # no migration, no WAL switch, no sidecar left


def test_a_refused_trigger_never_ran(tmp_path: Path) -> None:
    """The trigger of the bad-input row would erase the ledger on the next write."""
    path = tmp_path / "memory.db"
    _store(path)
    _execute(path, TAMPERING["trigger-on-entries"][0])
    _refused(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT count(*) FROM audit").fetchone()[0] >= 1
    finally:
        conn.close()


def test_sqlite_statistics_are_sqlite_s_own(tmp_path: Path) -> None:
    """ANALYZE (or the sqlite3 shell's .expert, PRAGMA optimize) adds sqlite_stat1: allowed."""
    path = tmp_path / "memory.db"
    _store(path)
    _execute(path, "ANALYZE")
    provider = open_provider(path, write_policy="auto")
    try:
        provider.add({"track": "user", "scope": "user-global", "text": "after analyze"}, WRITE)
        assert len(provider.list_entries()) == 2
    finally:
        provider.close()


def test_expected_objects_are_those_of_the_layout() -> None:
    before_proposals = {("table", "entries"), ("table", "audit"), ("table", "sqlite_sequence"),
                        ("index", "entries_bucket"), ("index", "audit_ts"),
                        ("index", "sqlite_autoindex_entries_1")}
    names = {(kind, name) for kind, name, _ in expected_objects(SCHEMA_VERSION)}
    assert names == before_proposals | {
        ("table", "proposals"), ("index", "proposals_status"),
        ("index", "sqlite_autoindex_proposals_1"), ("index", "sqlite_autoindex_proposals_2")}
    for version in (1, 2, 3):
        assert {(kind, name) for kind, name, _ in expected_objects(version)} == before_proposals


@pytest.mark.parametrize("dangling", [False, True])
def test_a_symlinked_store_directory_is_refused(dangling: bool, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    if not dangling:
        outside.mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "memory").symlink_to(outside, target_is_directory=True)
    details = _refused(tmp_path / "data" / "memory" / "memory.db")
    assert "directory" in details["reason"] and "symbolic link" in details["reason"]
    assert not outside.exists() or list(outside.iterdir()) == []


def test_a_created_directory_replaced_by_a_link_is_refused(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """Another process puts a link where the provider is creating a directory."""
    outside = tmp_path / "outside"
    outside.mkdir()
    real_mkdir = Path.mkdir

    def racing_mkdir(self: Path, mode: int = 0o777, parents: bool = False,
                     exist_ok: bool = False) -> None:
        if self.name == "home":
            self.symlink_to(outside, target_is_directory=True)
            raise FileExistsError(str(self))
        real_mkdir(self, mode, parents, exist_ok)

    monkeypatch.setattr(Path, "mkdir", racing_mkdir)
    details = _refused(tmp_path / "home" / "memory" / "memory.db")
    assert "symbolic link" in details["reason"]
    assert list(outside.iterdir()) == []


def test_existing_directories_above_the_store_directory_are_followed(tmp_path: Path) -> None:
    """Only the store's own directory is checked: a link higher up is part of the chosen path
    (as /var is on some systems)."""
    real = tmp_path / "real"
    (real / "memory").mkdir(parents=True)
    (tmp_path / "home").symlink_to(real, target_is_directory=True)
    open_provider(tmp_path / "home" / "memory" / "memory.db").close()
    assert (real / "memory" / "memory.db").is_file()
