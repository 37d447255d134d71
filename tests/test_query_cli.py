"""``dshkit query`` end to end."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from cli_support import run_main

from dshkit.cli import main


def _message(seq: int, text: str, kind: str = "user/message", **extra: Any) -> dict[str, Any]:
    if kind == "user/message":
        data: dict[str, Any] = {"id": f"u{seq}", "role": "user", "source": {"kind": "user"},
                                "content": [{"type": "text", "text": text}]}
    else:
        data = {"turn": 1, "step": 1, "message": {
            "id": f"a{seq}", "role": "assistant",
            "content": [{"type": "reasoning", "text": "secret"}, {"type": "text", "text": text}],
            "source": {"kind": "model", "provider": "mock", "model": "mock"}}}
    return {"type": kind, "seq": seq, "time": 1784851200000 + seq, "data": data,
            "surfaceOp": "append", **extra}


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    (logs / "s-1").mkdir(parents=True)
    one = [{"type": "session", "version": 0, "id": "s-1", "createdAt": 1784851200000,
            "cwd": "/w", "delegationDepth": 0},
           _message(0, "the build failed with alpha"),
           _message(1, "fixed the alpha build", "assistant/message"),
           {**_message(2, "summary of the alpha work"), "surfaceOp":
            {"op": "replace", "start": 0, "end": 1}, "sourceEventSeqs": [0, 1],
            "data": {"id": "c2", "role": "user", "content": [{"type": "text",
                                                              "text": "summary of alpha"}],
                     "source": {"kind": "plugin", "plugin": "compact", "compactionId": "c"}}},
           {"type": "session/title", "seq": 3, "time": 3, "ignorable": True,
            "data": {"title": "Fix build", "messageSeqs": [0], "source": {"kind": "fallback"}}}]
    (logs / "s-1" / "session.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in one), encoding="utf-8")
    bare = [_message(0, "我们今天讨论会话查询索引"), _message(1, "visible answer",
                                                     "assistant/message")]
    (logs / "bare.jsonl").write_text("".join(json.dumps(x, ensure_ascii=False) + "\n"
                                             for x in bare), encoding="utf-8")
    return logs


@pytest.mark.requirement("QRY-CLI-001")
def test_index_search_read_trace(corpus: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "db" / "idx.sqlite")
    code, out, _ = run_main(capsys, "query", "index", str(corpus), "--db", db, "--json")
    assert code == 0 and out["indexed"] == 2
    assert sorted(f["sessionId"] for f in out["files"]) == ["bare", "s-1"]
    code, out, _ = run_main(capsys, "query", "search", "alpha", "--db", db)
    assert code == 0
    assert out.startswith("Session search results (1):\n\n1. Session s-1 — Fix build\n")
    assert "Best match: seq 2 | user/message | current |" in out
    code, out, _ = run_main(capsys, "query", "search", "alpha", "--db", db, "--surface", "shadowed",
                        "--json")
    assert [h["bestMatch"]["surface"] for h in out["items"]] == ["shadowed"]
    code, out, _ = run_main(capsys, "query", "search", "会话查询", "--db", db, "--json")
    assert out["match"] == "literal" and [h["header"]["id"] for h in out["items"]] == ["bare"]
    code, out, _ = run_main(capsys, "query", "search", "secret", "--db", db, "--json")
    assert out["items"] == []  # reasoning is never indexed
    code, out, _ = run_main(capsys, "query", "search", "alpha", "--db", db, "--session", "s-1",
                        "--surface", "shadowed", "--surface", "current", "--limit", "1",
                        "--json")
    assert len(out["items"]) == 1 and "nextCursor" in out
    code, more, _ = run_main(capsys, "query", "search", "alpha", "--db", db, "--session", "s-1",
                         "--surface", "shadowed", "--surface", "current", "--limit", "1",
                         "--cursor", out["nextCursor"], "--json")
    assert code == 0 and more["items"][0]["seq"] != out["items"][0]["seq"]
    code, out, _ = run_main(capsys, "query", "search", "alpha", "--db", db, "--cwd", "/elsewhere",
                        "--json")
    assert out["items"] == []
    code, out, _ = run_main(capsys, "query", "read", "s-1", "1", "--db", db, "--before", "1")
    assert code == 0 and out.startswith("Session s-1 — Fix build\nTarget event seq 1:\n```json")
    assert "Before:\n- seq 0 | user/message | 2026-07-24T00:00:00.000Z\n  the build failed" in out
    code, out, _ = run_main(capsys, "query", "trace", str(corpus / "s-1" / "session.jsonl"), "0",
                        "--json")
    assert out["replacedBy"] == 2 and out["replacementChain"] == [2]
    code, out, _ = run_main(capsys, "query", "documents", str(corpus / "bare.jsonl"), "--json")
    assert out["sessionId"] == "bare" and len(out["documents"]) == 2


@pytest.mark.requirement("QRY-CLI-001")
def test_refusals(corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE accounts (id TEXT)")
    conn.commit()
    conn.close()
    code, out, _ = run_main(capsys, "query", "index", str(corpus), "--db", str(foreign), "--json")
    assert code == 1 and out["error"]["code"] == "SESSION_QUERY_INDEX_FAILED"
    assert "is not an empty or recognized derived index" in out["error"]["message"]
    code, _, err = run_main(capsys, "query", "search", "x", "--db", str(foreign))
    assert code == 1 and err.startswith("SESSION_QUERY_INDEX_FAILED: session-search SQLite")
    db = str(tmp_path / "idx.sqlite")
    code, out, _ = run_main(capsys, "query", "search", "x", "--db", db, "--json")
    assert code == 2 and out["error"]["code"] == "SESSION_QUERY_INDEX_FAILED"
    assert not Path(db).exists()  # searching never creates an index
    main(["query", "index", str(corpus), "--db", db])
    capsys.readouterr()
    code, out, _ = run_main(capsys, "query", "search", "x", "--db", db, "--open-at", "never",
                        "--json")
    assert code == 1 and out["error"]["code"] == "SESSION_QUERY_SEARCH_DISABLED"
    code, out, _ = run_main(capsys, "query", "search", "  ", "--db", db, "--json")
    assert code == 2 and out["error"]["code"] == "SESSION_QUERY_INVALID_QUERY"
    code, out, _ = run_main(capsys, "query", "search", "x", "--db", db, "--created-from",
                        "2026-02-30T00:00:00Z", "--json")
    assert code == 2 and out["error"]["code"] == "SESSION_QUERY_INVALID_FILTER"
    code, out, _ = run_main(capsys, "query", "search", "x", "--db", db, "--session", "nope",
                        "--json")
    assert code == 1 and out["error"]["code"] == "SESSION_QUERY_SESSION_NOT_FOUND"
    code, out, _ = run_main(capsys, "query", "read", str(corpus / "bare.jsonl"), "9", "--json")
    assert code == 1 and out["error"]["code"] == "SESSION_QUERY_EVENT_NOT_FOUND"
    code, out, _ = run_main(capsys, "query", "read", str(corpus / "bare.jsonl"), "0", "--after",
                        "51", "--json")
    assert code == 2 and out["error"]["code"] == "SESSION_QUERY_INVALID_WINDOW"
    code, _, err = run_main(capsys, "query", "index", str(tmp_path / "nothing.jsonl"), "--db", db)
    assert code == 1 and "SESSION_QUERY_PERSISTENCE_FAILED" in err
