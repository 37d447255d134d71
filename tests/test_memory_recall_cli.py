"""``dshkit memory recall`` end to end (MEM-CLI-010)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import session_header, user_message
from cli_support import run_main

from dshkit import schemas
from dshkit.cli import main

DAY = 86_400_000
NOW = 1_800_000_000_000


def _log(folder: Path, session_id: str, cwd: str, texts: list[str], created: int) -> None:
    lines = [session_header(session_id, created_at=created, cwd=cwd),
             *(user_message(seq, text) for seq, text in enumerate(texts))]
    (folder / f"{session_id}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    logs.mkdir()
    _log(logs, "a", "/w", ["how do we deploy?\nwith make", "other"], NOW - DAY)
    _log(logs, "b", "/elsewhere", ["deploy"], NOW - DAY)
    _log(logs, "old", "/w", ["deploy"], NOW - 31 * DAY)
    db = tmp_path / "m.db"
    assert main(["memory", "--db", str(db), "add", "--track", "agent", "--scope",
                 "user-global", "--text", "deploy with make ship", "--policy", "auto"]) == 0
    return logs, db


def _recall(capsys: pytest.CaptureFixture[str], db: Path, *argv: str) -> tuple[int, Any, str]:
    return run_main(capsys, "memory", "--db", str(db), "recall", "deploy", "--cwd", "/w",
                "--now", str(NOW), *argv)


@pytest.mark.requirement("MEM-CLI-010")
def test_logs_folder_json(setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    logs, db = setup
    before = sorted(p.name for p in logs.iterdir())
    code, out, _ = _recall(capsys, db, "--sessions", str(logs), "--json", "--session-id", "s")
    assert code == 0 and schemas.errors("memory/v1/recall-result.json", out) == []
    assert out["memory"]["entries"][0]["recallCount"] == 1
    assert out["history"] == {"available": True, "sessions": [
        {"sessionId": "a", "createdAt": NOW - DAY, "matches": 1,
         "snippets": ["how do we deploy?\nwith make"]}]}
    assert sorted(p.name for p in logs.iterdir()) == before  # nothing written next to logs


@pytest.mark.requirement("MEM-CLI-010")
def test_index_file_read_only_and_text(setup: tuple[Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    logs, db = setup
    index = tmp_path / "idx.db"
    assert run_main(capsys, "query", "index", str(logs), "--db", str(index),
                "--journal-mode", "delete")[0] == 0
    before = index.read_bytes()
    code, text, _ = _recall(capsys, db, "--sessions", str(index))
    assert code == 0 and index.read_bytes() == before
    assert "history: 1 session" in text and "session a: 1 match" in text
    assert "    how do we deploy? with make" in text and "deploy with make ship" in text


@pytest.mark.requirement("MEM-CLI-010")
def test_no_sessions_and_unusable_index(setup: tuple[Path, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    _, db = setup
    code, out, _ = _recall(capsys, db, "--json")
    assert code == 0 and out["history"] == {"available": False, "sessions": []}
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    code, out, _ = _recall(capsys, db, "--sessions", str(foreign), "--json")
    assert code == 0 and out["history"]["available"] is False
    assert out["history"]["error"]["code"] == "SESSION_QUERY_INDEX_FAILED"
    code, text, _ = _recall(capsys, db, "--sessions", str(foreign))
    assert code == 0 and "history: unavailable (SESSION_QUERY_INDEX_FAILED" in text


@pytest.mark.requirement("MEM-CLI-010")
def test_refusals(setup: tuple[Path, Path], tmp_path: Path,
                  capsys: pytest.CaptureFixture[str]) -> None:
    _, db = setup
    code, out, _ = _recall(capsys, db, "--sessions", str(tmp_path / "nope"), "--json")
    assert code == 2 and out["ok"] is False and out["command"] == "memory"
    assert out["error"]["code"] == "USAGE" and out["error"]["flag"] == "--sessions"
    code, out, _ = _recall(capsys, db, "--history-limit", "0", "--json")
    assert code == 1 and out["error"]["code"] == "INVALID_INPUT"
    assert out["error"]["details"]["field"] == "/historyLimit"
    assert schemas.errors("cli/v1/refusal.json", out) == []
    code, out, _ = run_main(capsys, "memory", "--db", str(tmp_path / "none.db"), "recall", "x",
                        "--json")
    assert code == 2 and out["error"]["code"] == "STORE_MISSING"
    assert not (tmp_path / "none.db").exists()
    code, _, err = run_main(capsys, "memory", "--db", str(db), "recall", "x", "--now", "yesterday")
    assert code == 2 and "invalid time 'yesterday'" in err


@pytest.mark.requirement("MEM-CLI-010")
def test_broken_log_is_left_out_with_a_note(setup: tuple[Path, Path],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    logs, db = setup
    (logs / "broken.jsonl").write_text("{not json\n")
    code, out, err = _recall(capsys, db, "--sessions", str(logs), "--json")
    assert code == 0 and [s["sessionId"] for s in out["history"]["sessions"]] == ["a"]
    assert "broken.jsonl: left out: SESSION_QUERY_CORRUPT_SESSION" in err


@pytest.mark.requirement("MEM-CLI-010")
def test_without_session_id_nothing_changes(setup: tuple[Path, Path],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    logs, db = setup
    _, ledger, _ = run_main(capsys, "memory", "--db", str(db), "audit", "--json")
    code, out, _ = _recall(capsys, db, "--sessions", str(logs), "--json")
    assert code == 0 and out["memory"]["entries"][0]["recallCount"] == 0
    assert run_main(capsys, "memory", "--db", str(db), "audit", "--json")[1] == ledger
