"""Opening the index safely: only its own schema objects (QRY-IDX-016), no symbolic link at the
file or its sidecars (QRY-IDX-017) or at the directories it lives in (QRY-IDX-018)."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from dshkit.reference.query import SessionQueryError, decide, open_index
from dshkit.reference.query.placement import confirm, place
from dshkit.reference.query.store import APPLICATION_ID, SCHEMA_OBJECTS, _set_journal_mode


def _refused(path: Path) -> SessionQueryError:
    with pytest.raises(SessionQueryError) as info:
        open_index(path)
    assert info.value.code == "SESSION_QUERY_INDEX_FAILED"
    assert info.value.message.startswith("session-search SQLite index failed to open: ")
    return info.value


def _tampered(path: Path, statement: str, journal: str) -> bytes:
    open_index(path, journal).close()
    conn = sqlite3.connect(path)
    conn.execute(statement)
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("journal", ["wal", "delete"])
@pytest.mark.parametrize(("statement", "named"), [
    ("CREATE TRIGGER t AFTER INSERT ON sessions BEGIN DELETE FROM index_state; END",
     "trigger t"),
    ("CREATE VIEW v AS SELECT id FROM sessions", "view v"),
    ("CREATE INDEX by_path ON sessions (path)", "index by_path"),
    ("ANALYZE", ""),  # sqlite_stat1: an internal table the index never creates
])
def test_unknown_schema_objects_are_refused_byte_identical(
        tmp_path: Path, statement: str, named: str, journal: str) -> None:
    path = tmp_path / "index.sqlite"
    before = _tampered(path, statement, journal)
    listing = sorted(os.listdir(tmp_path))
    error = _refused(path)
    if named:
        assert error.detail["reason"] == "unrecognized-objects"
        assert error.message.endswith(f"has unrecognized schema objects: {named}")
    else:
        assert error.detail["reason"] == "unrecognized-tables"
        assert "sqlite_stat1" in error.message
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == listing  # no sidecar left behind


def test_a_trigger_never_runs(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    _tampered(path, "CREATE TRIGGER t AFTER INSERT ON sessions BEGIN "
                    "DELETE FROM index_state; END", "wal")
    _refused(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT count(*) FROM index_state").fetchone()[0] == 1
    conn.close()


def test_unknown_tables_keep_their_own_reason(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    _tampered(path, "CREATE TABLE notes (x)", "wal")
    conn = sqlite3.connect(path)
    conn.execute("CREATE VIEW v AS SELECT 1")
    conn.commit()
    conn.close()
    error = _refused(path)
    assert error.detail["reason"] == "unrecognized-tables"
    assert error.message.endswith("has unrecognized user tables: notes")


def test_an_unmarked_database_with_only_a_view_is_not_adopted(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE VIEW v AS SELECT 1")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    assert _refused(path).detail["reason"] == "not-derived-index"
    assert path.read_bytes() == before


def test_decide_compares_names_and_types() -> None:
    own = sorted(SCHEMA_OBJECTS)
    assert decide(APPLICATION_ID, 1, own).action == "open"
    assert decide(APPLICATION_ID, 1, ["index_state", "sessions"]).action == "open"  # names
    assert decide(APPLICATION_ID, 7, own).action == "rebuild"
    # one of its own names with another type is not one of its own objects
    swapped = decide(APPLICATION_ID, 1, [("view", "sessions")])
    assert (swapped.action, swapped.reason, swapped.tables) == \
        ("refuse", "unrecognized-objects", ("view sessions",))
    assert decide(0, 0, [("trigger", "t")]).reason == "not-derived-index"


def test_a_fresh_index_holds_exactly_its_schema_objects(tmp_path: Path) -> None:
    with open_index(tmp_path / "index.sqlite") as store:
        found = set(store.conn.execute("SELECT type, name FROM sqlite_master").fetchall())
    assert found == set(SCHEMA_OBJECTS)


# -- symbolic links -----------------------------------------------------------------------------


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    outside, data = tmp_path / "outside", tmp_path / "data"
    outside.mkdir()
    data.mkdir()
    return outside, data


@pytest.mark.parametrize("existing", [False, True])
def test_a_symlinked_index_file_is_refused(tmp_path: Path, existing: bool) -> None:
    outside, data = _layout(tmp_path)
    target = outside / "index.sqlite"
    if existing:
        open_index(target).close()
    before = sorted(os.listdir(outside))
    (data / "index.sqlite").symlink_to(target)
    error = _refused(data / "index.sqlite")
    assert error.detail["reason"] == "symlink"
    assert error.detail["path"] == str(data / "index.sqlite")
    assert sorted(os.listdir(outside)) == before
    assert sorted(os.listdir(data)) == ["index.sqlite"]


@pytest.mark.parametrize("suffix", ["-journal", "-wal", "-shm"])
def test_a_symlinked_sidecar_is_refused(tmp_path: Path, suffix: str) -> None:
    outside, data = _layout(tmp_path)
    path = data / "index.sqlite"
    open_index(path, "delete").close()
    before = path.read_bytes()
    Path(f"{path}{suffix}").symlink_to(outside / f"index.sqlite{suffix}")
    error = _refused(path)
    assert error.detail["reason"] == "symlink"
    assert suffix[1:] in error.message
    assert os.listdir(outside) == []
    assert path.read_bytes() == before


def test_a_symlinked_index_directory_is_refused(tmp_path: Path) -> None:
    outside, data = _layout(tmp_path)
    (data / "store").symlink_to(outside, target_is_directory=True)
    error = _refused(data / "store" / "index.sqlite")
    assert error.detail["reason"] == "symlinked-directory"
    assert os.listdir(outside) == []


def test_a_symlinked_anchor_is_refused_before_creating_below_it(tmp_path: Path) -> None:
    outside, data = _layout(tmp_path)
    (data / "store").symlink_to(outside, target_is_directory=True)
    error = _refused(data / "store" / "deep" / "er" / "index.sqlite")
    assert error.detail["reason"] == "symlinked-directory"
    assert os.listdir(outside) == []


def test_links_above_the_anchor_are_followed(tmp_path: Path) -> None:
    outside, data = _layout(tmp_path)
    (outside / "real").mkdir()
    (data / "store").symlink_to(outside, target_is_directory=True)
    # data/store is a link, but the index directory data/store/real exists and is not one
    with open_index(data / "store" / "real" / "index.sqlite") as store:
        assert store.path == str(data / "store" / "real" / "index.sqlite")
    assert (outside / "real" / "index.sqlite").is_file()


def test_created_directories_are_private_and_checked(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    outside, data = _layout(tmp_path)
    with open_index(data / "a" / "b" / "index.sqlite"):
        pass
    for directory in (data / "a", data / "a" / "b"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700

    real_mkdir = os.mkdir

    def planted(path: str, mode: int = 0o777) -> None:  # a link appears in the race window
        if path.endswith("/y"):
            os.symlink(outside, path)
            raise FileExistsError(path)
        real_mkdir(path, mode)

    monkeypatch.setattr(os, "mkdir", planted)
    error = _refused(data / "x" / "y" / "index.sqlite")
    assert error.detail["reason"] == "symlinked-directory"
    assert os.listdir(outside) == []


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_an_index_path_that_is_not_a_file_is_refused(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "index.sqlite"
    if kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)  # opening it would block: it is refused before anything opens it
    assert _refused(path).detail["reason"] == "not-a-file"


def test_a_component_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert _refused(tmp_path / "file" / "index.sqlite").detail["reason"] == "not-a-directory"


def test_the_path_is_normalized_lexically(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    with open_index(Path("a") / ".." / "index.sqlite") as store:
        assert store.path == str(tmp_path / "index.sqlite")


def test_a_file_replaced_after_the_checks_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    checked = place(str(path))
    (tmp_path / "other").write_bytes(b"")  # made while the first exists: another inode
    os.replace(tmp_path / "other", path)
    with pytest.raises(SessionQueryError) as info:
        confirm(checked)
    assert info.value.detail["reason"] == "replaced"
    path.unlink()
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(SessionQueryError) as info:
        confirm(checked)
    assert info.value.detail["reason"] == "symlink"


def test_unusable_paths_are_structured_errors(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _refused(tmp_path / "a\0b")  # a NUL character
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # a relative path against a working directory that no longer exists
    _refused(Path("index.sqlite"))


class _BusyTwice(sqlite3.Connection):
    """A connection whose first two journal-mode changes fail as SQLite's deadlock avoidance
    makes them fail: "database is locked", at once."""

    failures = 0

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if sql.startswith("PRAGMA journal_mode") and self.failures < 2:
            self.failures += 1
            error = sqlite3.OperationalError("database is locked")
            error.sqlite_errorcode = sqlite3.SQLITE_BUSY
            raise error
        return super().execute(sql, *args)


def test_a_busy_journal_mode_change_is_tried_again(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "index.sqlite", factory=_BusyTwice, isolation_level=None)
    try:
        _set_journal_mode(conn, "wal")
        assert isinstance(conn, _BusyTwice) and conn.failures == 2
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
