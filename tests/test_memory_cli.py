"""``dshkit memory``: the management CLI of the reference store, run as a real subprocess.

Exit codes: 0 done, 1 refused by the protocol (INVALID_INPUT, WRITE_DENIED, ...), 2 the store
itself is unusable (STORE_CORRUPT, STORE_UNSUPPORTED_VERSION, STORE_BUSY) or a usage error.
Writes go through the approval pipeline: ``--yes`` approves, a terminal is asked, and without a
terminal the answer is "unavailable" (fail closed). No traceback ever reaches stderr.
"""

from __future__ import annotations

import json
import os
import re
import select
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from cli_support import dshkit_env
from memory_support import ENTRY_KEYS, UUID4

from dshkit.conformance.memory_model import check_entry_shape
from dshkit.reference.memory import open_provider
from dshkit.reference.memory.store import create_store_at_version

CWD = "/home/me/proj"


def _env() -> dict[str, str]:
    return dshkit_env()


def cli(db: Path, *args: str, stdin: int | None = subprocess.DEVNULL,
        cwd: str = CWD) -> tuple[int, str, str]:
    """Run ``python -m dshkit memory --db DB ARGS`` without a terminal; (exit, stdout, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "dshkit", "memory", "--db", str(db), "--cwd", cwd, *args],
        stdin=stdin, capture_output=True, env=_env(), timeout=60, check=False)
    out, err = proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")
    assert "Traceback" not in err and "Traceback" not in out, err
    return proc.returncode, out, err


def cli_json(db: Path, *args: str, expect: int = 0, cwd: str = CWD) -> Any:
    code, out, err = cli(db, *args, "--json", cwd=cwd)
    assert code == expect, (code, out, err)
    return json.loads(out)


def _audit(db: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = cli_json(db, "audit")
    return rows


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def test_add_with_yes_prints_the_result(db: Path) -> None:
    code, out, err = cli(db, "add", "--track", "user", "--scope", "user-global", "--text",
                         "prefers tea", "--tags", "a,b", "--yes", "--json")
    assert code == 0, err
    result = json.loads(out)
    entry = result["entry"]
    assert set(entry) == ENTRY_KEYS and re.match(UUID4, entry["id"])
    assert {k: entry[k] for k in ("track", "scope", "text", "tags", "source", "version",
                                  "workspaceKey", "sessionId")} == {
        "track": "user", "scope": "user-global", "text": "prefers tea", "tags": ["a", "b"],
        "source": "dshkit", "version": 1, "workspaceKey": "", "sessionId": "dshkit-cli"}
    assert result["usage"] == {"track": "user", "scope": "user-global", "used": 11,
                               "limit": 2000}
    [row] = _audit(db)
    assert row["action"] == "add" and row["entryId"] == entry["id"]
    assert row["outcome"] == "allowed-once (via gate, writePolicy ask from global)"


def test_write_without_yes_and_without_terminal_is_denied(db: Path) -> None:
    open_provider(db).close()  # a denial on a missing store creates nothing (MEM-CLI-002)
    code, out, err = cli(db, "add", "--track", "user", "--scope", "user-global", "--text",
                         "prefers coffee", "--json")
    assert code == 1
    assert json.loads(out) == {"ok": False, "command": "memory", "error": {
        "code": "WRITE_DENIED", "message": json.loads(out)["error"]["message"],
        "details": {"outcome": "unavailable"}}}
    [row] = _audit(db)
    assert row["action"] == "add-denied" and row["text"] == "prefers coffee"
    assert row["outcome"].startswith("unavailable (via gate")
    assert cli_json(db, "list") == []
    # Human output: the code and message on stderr, nothing on stdout.
    code, out, err = cli(db, "add", "--track", "user", "--scope", "user-global", "--text", "x")
    assert code == 1 and out == "" and err.startswith("WRITE_DENIED: ")


def test_terminal_answer_approves(db: Path) -> None:
    """With a terminal on stdin the payload is shown and "y" approves."""
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dshkit", "memory", "--db", str(db), "--cwd", CWD, "add",
             "--track", "agent", "--scope", "workspace", "--text", "uses pnpm", "--json"],
            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
        assert proc.stderr is not None
        stderr = proc.stderr.fileno()
        prompt = b""
        deadline = time.monotonic() + 30
        while b"Approve?" not in prompt and time.monotonic() < deadline:
            if select.select([stderr], [], [], 0.1)[0]:
                prompt += os.read(stderr, 4096)
        os.write(master, b"y\n")
        out, err = proc.communicate(timeout=30)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, (prompt + err).decode()
    entry = json.loads(out)["entry"]
    assert entry["workspaceKey"] == CWD
    # TOOL-CLI-013: the entry, where it lands and its text as one escaped line
    shown = (f'memory add agent/workspace, source "dshkit":\n  1. agent/workspace workspaceKey '
             f'"{CWD}" agentKey "{entry["agentKey"]}" source "dshkit"\n     text "uses pnpm"\n'
             "Approve? [y/N]")
    assert shown.encode() in prompt


def test_reads(db: Path) -> None:
    for text, track, scope in (("prefers tea", "user", "user-global"),
                               ("Project uses TDD", "agent", "workspace"),
                               ("project layout: src/", "agent", "workspace")):
        cli_json(db, "add", "--track", track, "--scope", scope, "--text", text, "--yes")
    result = cli_json(db, "query", "--text", "PROJECT", "--limit", "1")
    assert result["total"] == 2 and result["truncated"] is True
    assert len(result["entries"]) == 1
    listed = cli_json(db, "list")
    assert [e["text"] for e in listed] == ["prefers tea", "Project uses TDD",
                                          "project layout: src/"]
    assert cli_json(db, "budgets") == [
        {"track": "user", "scope": "user-global", "used": 11, "limit": 2000},
        {"track": "user", "scope": "workspace", "used": 0, "limit": 2000},
        {"track": "agent", "scope": "user-global", "used": 0, "limit": 4000},
        {"track": "agent", "scope": "workspace", "used": 36, "limit": 4000}]
    # A management query is not a recall: nothing bumped, nothing audited (MEM-QRY-005).
    assert all(e["recallCount"] == 0 for e in cli_json(db, "list"))
    assert [r["action"] for r in cli_json(db, "audit", "--limit", "2")] == ["add", "add"]
    code, out, _ = cli(db, "query", "--limit", "0", "--json")
    assert code == 1 and json.loads(out)["error"]["code"] == "INVALID_INPUT"
    code, out, _ = cli(db, "budgets")
    assert code == 0 and out.splitlines()[0] == "user/user-global: 11/2000"


def test_snapshot_is_frozen_per_session(db: Path) -> None:
    cli_json(db, "add", "--track", "user", "--scope", "user-global", "--text", "a\nb", "--yes")
    first = cli_json(db, "snapshot", "--session-id", "s1")
    assert first.endswith("## User profile (global preferences, communication style, "
                          "landmines) \u2014 3/2000 units used\n- a b")
    cli_json(db, "add", "--track", "user", "--scope", "user-global", "--text", "later",
             "--yes")
    assert cli_json(db, "snapshot", "--session-id", "s1") == first
    assert "- later" in cli_json(db, "snapshot", "--session-id", "s2")
    code, out, _ = cli(db, "snapshot", "--session-id", "s1")
    assert code == 0 and out == first + "\n"


def test_export_import_round_trip(tmp_path: Path, db: Path) -> None:
    items = [("user", "user-global", "prefers 茶 🍵", "pref,中文", None),
             ("agent", "workspace", "runs pytest -q", None, "cli"),
             ("agent", "user-global", "tab\there", None, "mem0")]
    for track, scope, text, tags, source in items:
        args = ["add", "--track", track, "--scope", scope, "--text", text, "--yes"]
        if tags is not None:
            args += ["--tags", tags]
        if source is not None:
            args += ["--source", source]
        cli_json(db, *args)
    envelope = cli_json(db, "export")
    assert set(envelope) == {"plugin", "schema", "exportedAt", "budgets", "entries"}
    assert (envelope["plugin"], envelope["schema"]) == ("dshkit", "memory-export-v1")
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", envelope["exportedAt"])
    assert envelope["budgets"] == cli_json(db, "budgets")
    assert envelope["entries"] == cli_json(db, "list")
    for entry in envelope["entries"]:
        assert set(entry) == ENTRY_KEYS
        check_entry_shape(entry)
    assert "export" not in [r["action"] for r in _audit(db)]  # MEM-EXP-001: read-only
    path = tmp_path / "export.json"
    path.write_text(json.dumps(envelope, ensure_ascii=False), encoding="utf-8")

    other = tmp_path / "other.db"
    open_provider(other).close()  # a denial on a missing store creates nothing (MEM-CLI-002)
    code, out, _ = cli(other, "import", str(path), "--json")  # no terminal, no --yes
    assert code == 1 and json.loads(out)["error"]["details"] == {"outcome": "unavailable"}
    assert [r["action"] for r in _audit(other)] == ["seed-denied"]
    # --fresh: the import of MEM-EXP-003 (the default restores, MEM-CLI-004)
    result = cli_json(other, "import", str(path), "--fresh", "--yes", "--session-id",
                      "importer", cwd="/elsewhere")
    assert result["added"] == 3

    def content(entries: list[dict[str, Any]]) -> Counter[str]:
        return Counter(json.dumps([e["track"], e["scope"], e["text"], e["tags"], e["source"]],
                                  ensure_ascii=False) for e in entries)

    imported = cli_json(other, "list")
    assert content(imported) == content(envelope["entries"])  # MEM-EXP-004
    for entry in imported:  # MEM-EXP-003: identity reset, re-homed to the importer
        assert entry["version"] == 1 and entry["recallCount"] == 0
        assert entry["sessionId"] == "importer" and entry["lastRecalled"] is None
        assert entry["workspaceKey"] == ("/elsewhere" if entry["scope"] == "workspace" else "")
        assert entry["id"] not in {e["id"] for e in envelope["entries"]}
    assert [r["action"] for r in _audit(other)][:4] == ["add", "add", "add", "seed"]


def test_import_of_a_newer_envelope_is_unsupported(tmp_path: Path, db: Path) -> None:
    path = tmp_path / "v2.json"
    path.write_text(json.dumps({"plugin": "dshkit", "schema": "memory-export-v2",
                                "exportedAt": "2026-01-01T00:00:00.000Z", "budgets": [],
                                "entries": []}), encoding="utf-8")
    out = cli_json(db, "import", str(path), "--yes", expect=1)
    assert out["error"]["code"] == "ENVELOPE_UNSUPPORTED"
    assert out["error"]["details"] == {"schema": "memory-export-v2"}
    code, _, err = cli(db, "import", str(tmp_path / "missing.json"), "--yes")
    assert code == 2 and err.startswith("INVALID_INPUT")


def test_other_writes(tmp_path: Path, db: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps([{"track": "user", "scope": "workspace", "text": "one A"},
                                {"track": "user", "scope": "workspace", "text": "two A"}]),
                    encoding="utf-8")
    assert cli_json(db, "seed", str(seed), "--yes")["added"] == 2
    out = cli_json(db, "replace", "--track", "user", "--scope", "workspace", "--match", "a",
                   "--text", "x", "--yes", expect=1)
    assert out["error"]["code"] == "AMBIGUOUS_MATCH"
    assert sorted(out["error"]["details"]["sample"]) == ["one A", "two A"]  # same createdAt
    result = cli_json(db, "consolidate", "--track", "user", "--scope", "workspace", "--match",
                      "one", "--match", "TWO", "--text", "one and two", "--yes")
    assert [e["text"] for e in result["removed"]] == ["one A", "two A"]
    replaced = cli_json(db, "replace", "--track", "user", "--scope", "workspace", "--match",
                        "AND", "--text", "both", "--tags", "t", "--yes")
    assert replaced["entry"]["version"] == 2 and replaced["entry"]["tags"] == ["t"]
    removed = cli_json(db, "remove", "--track", "user", "--scope", "workspace", "--match",
                       "both", "--yes")
    assert removed["usage"]["used"] == 0
    assert cli_json(db, "list") == []


def test_migrate_upgrades_an_old_store(tmp_path: Path) -> None:
    old = tmp_path / "old.db"
    create_store_at_version(old, 1)
    assert cli_json(old, "migrate") == {"path": str(old), "version": 4}
    with closing(sqlite3.connect(old)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 4


@pytest.mark.parametrize("as_json", [True, False])
def test_foreign_file_is_refused_unchanged(tmp_path: Path, as_json: bool) -> None:
    foreign = tmp_path / "notes.db"
    with closing(sqlite3.connect(foreign)) as conn, conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute("INSERT INTO notes VALUES ('mine')")
    before = foreign.read_bytes()
    flags = ["--json"] if as_json else []
    code, out, err = cli(foreign, "add", "--track", "user", "--scope", "user-global", "--text",
                         "x", "--yes", *flags)
    assert code == 2
    if as_json:
        error = json.loads(out)["error"]
        assert error["code"] == "STORE_CORRUPT" and error["details"]["path"] == str(foreign)
    else:
        assert out == "" and err.startswith("STORE_CORRUPT: ")
    assert foreign.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


def test_usage_errors_exit_2_without_traceback(db: Path) -> None:
    code, _, err = cli(db, "add", "--track", "user", "--scope", "user-global")
    assert code == 2 and "--text" in err
    code, _, err = cli(db, "add", "--track", "team", "--scope", "user-global", "--text", "x")
    assert code == 2 and "invalid choice" in err
    assert not db.exists()
