"""Files on disk (issue 9): every file dshkit creates for a store, an index, a session log or
an output is private (0600, directories 0700), sidecars included, whatever the umask; a foreign
database is refused and left byte for byte as it was. The symbolic-link and tampered-database
cases are rows of the bad-input table (``tests/hardening/bad_inputs.py``)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from hardening import samples
from memory_support import umask

from dshkit.cli import main
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.query import SessionSearchEngine
from dshkit.reference.query.errors import SessionQueryError
from dshkit.reference.query.store import open_index
from dshkit.reference.session.writer import append_events, create_log

WRITE = {"agent": {"session": {"id": "files", "header": {"cwd": "/ws/f"}}}}




def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _private_tree(root: Path, top: Path) -> list[str]:
    """Paths under ``top`` (inside ``root``) that are not private, with their modes."""
    bad = []
    for path in [top, *top.rglob("*")]:
        want = 0o700 if path.is_dir() else 0o600
        if mode(path) != want:
            bad.append(f"{path.relative_to(root)} {oct(mode(path))}")
    return bad


@pytest.mark.parametrize("mask", [0o022, 0o000])
def test_memory_store_files_are_private(tmp_path: Path, mask: int) -> None:
    with umask(mask):
        provider = open_provider(tmp_path / "home" / "memory" / "memory.db",
                                 write_policy="auto")
        try:
            for n in range(3):  # the -wal and -shm sidecars appear with the first writes
                provider.add({"track": "user", "scope": "user-global", "text": f"x{n}"}, WRITE)
            provider.snapshot(WRITE)
            sidecars = {p.name for p in (tmp_path / "home" / "memory").iterdir()}
            assert {"memory.db-wal", "memory.db-shm"} <= sidecars
            assert _private_tree(tmp_path, tmp_path / "home") == []
        finally:
            provider.close()


@pytest.mark.parametrize("mask", [0o022, 0o000])
def test_query_index_files_are_private(tmp_path: Path, mask: int) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "s.jsonl").write_bytes(samples.log([samples.user(0, "alpha")]))
    with umask(mask), SessionSearchEngine.open(tmp_path / "idx" / "deep" / "index.sqlite") as e:
        e.index_paths([logs])
        assert _private_tree(tmp_path, tmp_path / "idx") == []


def _logs(root: Path, mask: int) -> None:
    with umask(mask):
        for name, zstd in (("a.jsonl", False), ("b.jsonl.zstd", True)):
            path = root / "sessions" / "p" / name
            create_log(path, samples.HEADER, [samples.user(0)],
                       compression="zstd" if zstd else "none")
            append_events(path, [samples.user(1)], compressed=zstd)


@pytest.mark.parametrize("mask", [0o022, 0o000])
def test_session_logs_are_private(tmp_path: Path, mask: int) -> None:
    _logs(tmp_path, mask)
    assert _private_tree(tmp_path, tmp_path / "sessions" / "p") == []


@pytest.mark.parametrize("mask", [0o022, 0o000])
def test_session_log_parent_directories_are_private(tmp_path: Path, mask: int) -> None:
    _logs(tmp_path, mask)
    assert _private_tree(tmp_path, tmp_path / "sessions") == []


@pytest.mark.parametrize("mask", [0o022, 0o000])
def test_output_files_are_private(tmp_path: Path, mask: int, capsys: pytest.CaptureFixture[str]
                                  ) -> None:
    source = tmp_path / "in.json"
    source.write_text(json.dumps([{"id": "m1", "memory": "a fact"}]), "utf-8")
    log = tmp_path / "log.jsonl"
    log.write_bytes(samples.compactable_log())
    (tmp_path / "summary.txt").write_text("summary", "utf-8")
    out = tmp_path / "out"
    out.mkdir(mode=0o700)
    os.chmod(out, 0o700)
    with umask(mask):
        assert main(["adapt", "convert", "--from", "mem0", "--to", "hermes-bullets",
                     str(source), "-o", str(out / "MEMORY.md")]) == 0
        assert main(["compact", "apply", str(log), "--summary-file",
                     str(tmp_path / "summary.txt"), "--trigger", "manual", "--time", "9",
                     "--output", str(out / "compacted.jsonl")]) == 0
    capsys.readouterr()
    assert _private_tree(tmp_path, out) == []


def _foreign(path: Path) -> bytes:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.close()
    return path.read_bytes()


def test_foreign_databases_are_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    before = _foreign(path)
    with pytest.raises(MemoryProtocolError) as memory:
        open_provider(path)
    with pytest.raises(SessionQueryError) as index:
        open_index(path)
    assert memory.value.code == "STORE_CORRUPT"
    assert index.value.code == "SESSION_QUERY_INDEX_FAILED"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]  # no sidecar left


def test_a_memory_store_is_not_an_index_and_back(tmp_path: Path) -> None:
    """Each database refuses the other kind: nothing is "repaired" into ours."""
    memory_db, index_db = tmp_path / "memory.db", tmp_path / "index.sqlite"
    open_provider(memory_db).close()
    open_index(index_db).close()
    memory_bytes, index_bytes = memory_db.read_bytes(), index_db.read_bytes()
    with pytest.raises(SessionQueryError):
        open_index(memory_db)
    with pytest.raises(MemoryProtocolError) as info:
        open_provider(index_db)
    assert info.value.code == "STORE_CORRUPT"
    assert memory_db.read_bytes() == memory_bytes and index_db.read_bytes() == index_bytes
