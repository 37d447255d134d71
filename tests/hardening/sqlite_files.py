"""SQLite files that an open must refuse without changing them: another application's database
with commits still in its ``-wal`` or a hot rollback ``-journal`` (as a copy taken while it
runs, or after it was killed, holds them), and a store whose objects carry altered
definitions under the right names."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")


def _copy(live: Path, directory: Path) -> Path:
    target = directory / "copy"
    target.mkdir()
    for item in live.iterdir():
        shutil.copyfile(item, target / item.name)
    return target


def foreign_with_wal(directory: Path, name: str) -> Path:
    """A database whose file holds only its empty first page (application id 0, no schema)
    and whose table and row are in its ``-wal``."""
    live = directory / "live"
    live.mkdir()
    conn = sqlite3.connect(live / name, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")
        target = _copy(live, directory)
    finally:
        conn.close()
    assert (target / f"{name}-wal").stat().st_size > 0
    return target / name


def foreign_with_hot_journal(directory: Path, name: str) -> Path:
    """A database in rollback mode caught in the middle of a transaction: pages already
    overwritten in the file, their originals in a hot ``-journal``."""
    live = directory / "live"
    live.mkdir()
    conn = sqlite3.connect(live / name, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                     "WHERE i < 400) INSERT INTO notes SELECT printf('%0500d', i) FROM n")
        conn.execute("PRAGMA cache_size = 2")  # the update spills into the file
        conn.execute("BEGIN")
        conn.execute("UPDATE notes SET body = upper(body) || 'x'")
        target = _copy(live, directory)
        conn.execute("ROLLBACK")
    finally:
        conn.close()
    assert (target / f"{name}-journal").read_bytes()[:8] == JOURNAL_MAGIC
    return target / name


def rewrite_definition(path: Path, name: str, old: str, new: str) -> None:
    """Change the stored definition of ``name`` in place, as a crafted file carries it."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
        assert old in sql, sql
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?",
                     (sql.replace(old, new), name))
        conn.execute("PRAGMA writable_schema = OFF")
    finally:
        conn.close()


def files(directory: Path) -> dict[str, bytes]:
    """Every file of ``directory`` (names and bytes)."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}
