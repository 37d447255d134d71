"""A process killed with SIGKILL while indexing leaves an index that opens, passes SQLite's
and FTS5's integrity checks, holds only whole sessions, and is finished by a second run
(QRY-IDX-006, QRY-IDX-010, QRY-IDX-011)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from builders import session_header
from hardening.crash import index_contents

from dshkit.reference.query import SessionSearchEngine

SRC = Path(__file__).resolve().parents[1] / "src"

_CHILD = """
import sys, time
from dshkit.reference.query import SessionSearchEngine
db, logs, stop_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
begun = 0
def progress(kind, info):
    global begun
    print(kind, info["sessionId"], flush=True)
    if kind == "begin":
        begun += 1
        if begun == stop_at:
            print("IN-TXN", flush=True)
            time.sleep(60)
with SessionSearchEngine.open(db, journal_mode=sys.argv[4]) as engine:
    engine.index_paths([logs], progress=progress)
print("DONE", flush=True)
"""


def _corpus(directory: Path, sessions: int, events: int) -> dict[str, int]:
    expected: dict[str, int] = {}
    for n in range(sessions):
        sid = f"s{n:03d}"
        lines = [session_header(sid, created_at=n)]
        for seq in range(events):
            lines.append({"type": "user/message", "seq": seq, "time": seq, "surfaceOp": "append",
                          "data": {"id": f"u{seq}", "role": "user", "source": {"kind": "user"},
                                   "content": [{"type": "text",
                                                "text": f"alpha {sid} event {seq} 会话"}]}})
        (directory / f"{sid}.jsonl").write_text(
            "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
        expected[sid] = events
    return expected


def _spawn(db: Path, logs: Path, stop_at: int, journal: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.Popen([sys.executable, "-c", _CHILD, str(db), str(logs), str(stop_at),
                             journal], stdout=subprocess.PIPE, text=True, env=env)


def _check_integrity(db: Path, expected: dict[str, int]) -> dict[str, int]:
    """The index is intact and every session in it is complete; returns its sessions."""
    rows, counts = index_contents(db)
    assert counts == rows  # no documents without their session row, no partial session
    for sid, count in rows.items():
        assert expected[sid] == count
    return rows


def _finish_and_compare(db: Path, logs: Path, tmp: Path, expected: dict[str, int]
                        ) -> list[str | None]:
    with SessionSearchEngine.open(db) as engine:
        report = engine.index_paths([logs])
        assert not report.failed
        resumed = [f.session_id for f in report.files if f.status == "indexed"]
        hits = [(h["header"]["id"], h["bestMatch"]["seq"])
                for h in engine.search_sessions({"query": "alpha", "limit": 100}).items]
        cjk = len(engine.search_sessions({"query": "会话", "limit": 100}).items)
    assert _check_integrity(db, expected) == expected
    with SessionSearchEngine.open(tmp / "fresh.sqlite") as fresh:
        fresh.index_paths([logs])
        want = [(h["header"]["id"], h["bestMatch"]["seq"])
                for h in fresh.search_sessions({"query": "alpha", "limit": 100}).items]
    assert hits == want and cjk == len(expected)
    return resumed


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_kill_inside_a_session_transaction(tmp_path: Path, journal: str) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    expected = _corpus(logs, sessions=6, events=40)
    db = tmp_path / "idx.sqlite"
    child = _spawn(db, logs, stop_at=4, journal=journal)
    assert child.stdout is not None
    seen: list[str] = []
    for line in child.stdout:
        seen.append(line.strip())
        if line.strip() == "IN-TXN":
            break
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    child.stdout.close()
    assert "IN-TXN" in seen and "DONE" not in seen
    committed = [line.split()[1] for line in seen if line.startswith("commit")]
    assert len(committed) == 3
    rows = _check_integrity(db, expected)
    assert sorted(rows) == sorted(committed)
    resumed = _finish_and_compare(db, logs, tmp_path, expected)
    assert sorted(str(r) for r in resumed) == sorted(set(expected) - set(committed))


def test_kill_at_an_arbitrary_moment(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    expected = _corpus(logs, sessions=30, events=60)
    db = tmp_path / "idx.sqlite"
    child = _spawn(db, logs, stop_at=10_000, journal="wal")
    assert child.stdout is not None
    commits = 0
    for line in child.stdout:
        commits += line.startswith("commit")
        if commits == 5:
            break
    child.send_signal(signal.SIGKILL)  # whatever the child is doing right now
    child.wait(timeout=30)
    child.stdout.close()
    rows: dict[str, Any] = _check_integrity(db, expected)
    assert 5 <= len(rows) <= len(expected)
    resumed = _finish_and_compare(db, logs, tmp_path, expected)
    assert sorted(str(r) for r in resumed) == sorted(set(expected) - set(rows))
