"""Issue 15 class 7: a memory write that the disk refuses (MEM-CLI-006).

A full disk, a file-size limit (``ulimit -f``) or an audit ledger whose seq counter is at its
maximum makes SQLite fail the statement and roll the transaction back itself. The store then
tried to roll back again and reported ``cannot rollback - no transaction is active``
(``INTERNAL_ERROR`` from the command line), or, at open, ``STORE_CORRUPT``. Now each is
``STORE_WRITE_FAILED`` with the path and SQLite's reason, and the store is unchanged.
"""

from __future__ import annotations

import json
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from dshkit.reference.memory import MemoryProtocolError, open_provider

WRITE = {"agent": {"session": {"id": "s", "header": {"cwd": "/w", "agentPreset": "a"}}}}
UG = {"track": "user", "scope": "user-global"}


def _exhaust_audit_counter(db: Path) -> None:
    provider = open_provider(db, write_policy="auto")
    provider.add({**UG, "text": "kept"}, WRITE)
    provider.close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'audit'")
    conn.commit()
    conn.close()


@pytest.mark.requirement("MEM-CLI-006")
def test_exhausted_audit_counter_is_a_write_failure(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    _exhaust_audit_counter(db)
    provider = open_provider(db, write_policy="auto")
    try:
        with pytest.raises(MemoryProtocolError) as caught:
            provider.add({**UG, "text": "lost"}, WRITE)
        assert caught.value.code == "STORE_WRITE_FAILED"
        assert caught.value.details["path"] == str(db)
        assert "full" in caught.value.details["reason"]
        assert [e["text"] for e in provider.list_entries()] == ["kept"]
    finally:
        provider.close()


def _limited(args: list[str], cwd: Path, limit: int) -> subprocess.CompletedProcess[bytes]:
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "dshkit", *args], cwd=cwd,
                          capture_output=True, timeout=120, check=False, preexec_fn=preexec)


@pytest.mark.requirement("MEM-CLI-006")
def test_file_size_limit_at_creation_is_a_write_failure(tmp_path: Path) -> None:
    done = _limited(["memory", "--db", "m.db", "--json", "--yes", "add", "--track", "user",
                     "--scope", "user-global", "--text", "hello"], tmp_path, 4096)
    assert b"Traceback" not in done.stderr
    assert done.returncode == 2, done.stdout
    error = json.loads(done.stdout.decode().splitlines()[-1])["error"]
    assert error["code"] == "STORE_WRITE_FAILED", error


@pytest.mark.requirement("MEM-CLI-006")
def test_file_size_limit_on_a_write_is_a_write_failure(tmp_path: Path) -> None:
    open_provider(tmp_path / "m.db").close()
    done = _limited(["memory", "--db", "m.db", "--json", "--yes", "add", "--track", "agent",
                     "--scope", "user-global", "--text", "a" * 3900], tmp_path,
                    16384)  # below the write's WAL frames (a page each), whatever the layout
    assert b"Traceback" not in done.stderr
    assert done.returncode == 2, done.stdout
    error = json.loads(done.stdout.decode().splitlines()[-1])["error"]
    assert error["code"] == "STORE_WRITE_FAILED", error
    provider = open_provider(tmp_path / "m.db")
    try:
        assert provider.list_entries() == []
    finally:
        provider.close()


@pytest.mark.requirement("MEM-CLI-006")
def test_cli_exhausted_audit_counter(tmp_path: Path) -> None:
    _exhaust_audit_counter(tmp_path / "m.db")
    done = subprocess.run([sys.executable, "-m", "dshkit", "memory", "--db", "m.db", "--json",
                           "--yes", "add", "--track", "user", "--scope", "user-global",
                           "--text", "lost"], cwd=tmp_path, capture_output=True, timeout=120,
                          check=False)
    assert done.returncode == 2, done.stdout
    assert b"STORE_WRITE_FAILED" in done.stdout
