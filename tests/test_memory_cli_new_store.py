"""MEM-CLI-002 at a terminal: the first write to a missing store asks first and creates the
store only when the write is approved and committed. "no" leaves nothing behind: no file, no
folder, no temporary store."""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from cli_support import dshkit_env

from dshkit.cli.new_store import NewStore
from dshkit.cli.report import Refusal
from dshkit.reference.memory import open_provider

pytestmark = pytest.mark.requirement("MEM-CLI-002")


def _env(tmp: Path) -> dict[str, str]:
    return dshkit_env(TMPDIR=str(tmp))


def _at_terminal(argv: list[str], answer: bytes, tmp: Path) -> tuple[int, bytes, bytes]:
    """Run ``dshkit`` with a terminal on stdin, answer the approval prompt."""
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "dshkit", *argv], stdin=slave,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(tmp))
        assert proc.stderr is not None
        prompt = b""
        deadline = time.monotonic() + 30
        while b"Approve?" not in prompt and time.monotonic() < deadline:
            if select.select([proc.stderr.fileno()], [], [], 0.1)[0]:
                prompt += os.read(proc.stderr.fileno(), 4096)
        os.write(master, answer + b"\n")
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(master)
        os.close(slave)
    return proc.returncode, out, prompt + err


def _add(db: Path) -> list[str]:
    return ["memory", "--db", str(db), "add", "--track", "user", "--scope", "user-global",
            "--text", "prefers tea", "--json"]


def test_no_at_the_terminal_creates_nothing(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "new" / "dir" / "memory.db"
    code, out, err = _at_terminal(_add(db), b"n", scratch)
    assert code == 1, err.decode()
    assert json.loads(out)["error"]["code"] == "WRITE_DENIED"
    assert b"Approve? [y/N]" in err
    assert not (tmp_path / "new").exists()
    assert list(scratch.iterdir()) == []  # the staged store is gone too


def test_yes_at_the_terminal_creates_the_store(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "new" / "memory.db"
    code, out, err = _at_terminal(_add(db), b"y", scratch)
    assert code == 0, err.decode()
    entry = json.loads(out)["entry"]
    assert sorted(p.name for p in db.parent.iterdir()) == ["memory.db"]
    assert db.stat().st_mode & 0o777 == 0o600
    assert db.parent.stat().st_mode & 0o777 == 0o700
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)
        assert conn.execute("SELECT id, text FROM entries").fetchall() == [
            (entry["id"], "prefers tea")]
        assert [r[0] for r in conn.execute("SELECT action FROM audit")] == ["add"]
    assert list(scratch.iterdir()) == []


def test_an_empty_file_becomes_a_store_only_when_approved(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    db = tmp_path / "memory.db"
    db.write_bytes(b"")
    code, _, _ = _at_terminal(_add(db), b"n", scratch)
    assert code == 1 and db.read_bytes() == b""
    code, _, err = _at_terminal(_add(db), b"y", scratch)
    assert code == 0, err.decode()
    with open_provider(db) as provider:
        assert [e["text"] for e in provider.list_entries()] == ["prefers tea"]


def test_adapt_import_asks_before_it_creates(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    source = tmp_path / "CLAUDE.md"
    source.write_text("# Memory\n\n- runs pytest -q\n", encoding="utf-8")
    db = tmp_path / "store" / "memory.db"
    argv = ["adapt", "import", "--format", "claude-md", str(source), "--db", str(db), "--json"]
    code, _, err = _at_terminal(argv, b"n", scratch)
    assert code == 1, err.decode()
    assert not db.parent.exists() and list(scratch.iterdir()) == []
    code, _, err = _at_terminal(argv, b"y", scratch)
    assert code == 0, err.decode()
    with open_provider(db) as provider:
        assert [e["text"] for e in provider.list_entries()] == ["runs pytest -q"]


def test_a_store_that_appears_meanwhile_is_left_alone(tmp_path: Path) -> None:
    """Another process created the store while this write waited for its approval: the
    publication refuses instead of replacing that store."""
    db = tmp_path / "memory.db"
    new = NewStore(db)
    try:
        with open_provider(new.staged, write_policy="auto") as provider:
            provider.add({"track": "user", "scope": "user-global", "text": "mine"},
                         {"agent": {"session": {"header": {"cwd": "/w"}, "id": "s"}}})
        db.write_bytes(b"theirs")
        with pytest.raises(Refusal) as caught:
            new.publish()
    finally:
        new.discard()
    assert caught.value.code == "STORE_BUSY"
    assert db.read_bytes() == b"theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]
    assert not new.staged.parent.exists()
    assert new.real_path(str(new.staged) + "-wal") == f"{db}-wal"
    assert new.real_path(7) == 7
