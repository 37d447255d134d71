"""Recall (spec memory/recall): the reference composition of the memory query and the
history half over a session query index."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import event, session_header, user_message

from dshkit import schemas
from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.memory.recall import recall
from dshkit.reference.memory.recall_index import index_logs, open_readonly
from dshkit.reference.query import IndexStore, index_sessions, open_index, session_of_events

DAY = 86_400_000
NOW = 100 * DAY
WRITE = {"agent": {"session": {"id": "s-now", "header": {"cwd": "/w"}}}}


def session(session_id: str, texts: list[str], *, cwd: str | None = "/w",
            created: int = NOW - DAY) -> Any:
    header = session_header(session_id, created_at=created,
                            **({"cwd": cwd} if cwd is not None else {}))
    events = [user_message(seq, text) for seq, text in enumerate(texts)]
    return session_of_events(session_id, events, header)


def index(*sessions: Any) -> IndexStore:
    store = open_index(":memory:")
    index_sessions(store, sessions)
    return store


@pytest.fixture
def provider(tmp_path: Path) -> Any:
    p = open_provider(tmp_path / "m.db", write_policy="auto")
    p.add({"track": "agent", "scope": "user-global", "text": "deploy with make ship"}, WRITE)
    yield p
    p.close()


def ask(provider: Any, store: Any, text: str = "deploy", **extra: Any) -> dict[str, Any]:
    out = recall(provider, {"text": text, "cwd": "/w", "now": NOW, **extra}, store)
    assert schemas.errors("memory/v1/recall-result.json", out) == []
    return out


def test_both_halves(provider: Any) -> None:
    store = index(session("a", ["how do we deploy?", "unrelated", "DEPLOY done"]))
    out = ask(provider, store, sessionId="s-now")
    assert [e["text"] for e in out["memory"]["entries"]] == ["deploy with make ship"]
    assert out["memory"]["entries"][0]["recallCount"] == 1  # a recall of s-now
    assert out["history"] == {"available": True, "sessions": [
        {"sessionId": "a", "createdAt": NOW - DAY, "matches": 2,
         "snippets": ["how do we deploy?", "DEPLOY done"]}]}
    rows = provider.audit_list(10)
    assert rows[0]["action"] == "recalled" and rows[0]["sessionId"] == "s-now"


def test_same_project_window_and_current_session_only(provider: Any) -> None:
    store = index(
        session("other-project", ["deploy"], cwd="/elsewhere"),
        session("no-cwd", ["deploy"], cwd=None),
        session("oldest-edge", ["deploy"], created=NOW - 30 * DAY),
        session("too-old", ["deploy"], created=NOW - 30 * DAY - 1),
        session("at-now", ["deploy"], created=NOW),
        session("future", ["deploy"], created=NOW + 1),
        session("s-now", ["deploy"], created=NOW - 5),
    )
    out = ask(provider, store, sessionId="s-now")
    assert [s["sessionId"] for s in out["history"]["sessions"]] == ["at-now", "oldest-edge"]


def test_history_limit_scans_newest_first_and_skips_no_hits(provider: Any) -> None:
    store = index(*[session(f"s{i}", ["deploy" if i != 9 else "nothing"], created=NOW - i)
                    for i in range(10)])
    out = ask(provider, store, historyLimit=3)
    assert [s["sessionId"] for s in out["history"]["sessions"]] == ["s0", "s1", "s2"]
    out = ask(provider, store)  # default 8: s0..s7
    assert [s["sessionId"] for s in out["history"]["sessions"]] == [f"s{i}" for i in range(8)]


def test_snippet_cap_and_unit_cut(provider: Any) -> None:
    store = index(session("a", [f"deploy {i}" for i in range(7)]),
                  session("b", ["deploy " + "x" * 292 + "\U0001F600tail"], created=NOW - 2 * DAY))
    out = ask(provider, store)
    first, second = out["history"]["sessions"]
    assert first["matches"] == 7 and first["snippets"] == [f"deploy {i}" for i in range(5)]
    # 299 units then an emoji (2 units) that would straddle 300: dropped whole
    assert second["snippets"] == ["deploy " + "x" * 292 + "\u2026"]
    out = ask(provider, store, snippetChars=301)
    assert out["history"]["sessions"][1]["snippets"] == ["deploy " + "x" * 292 + "\U0001F600\u2026"]


def test_shadowed_and_log_only_text_is_never_returned(provider: Any) -> None:
    events = [
        user_message(0, "deploy secret old"),
        event("assistant/chunk", 1, {"turn": 1, "step": 1,
                                     "chunk": {"type": "text-delta", "text": "deploy chunk"}}),
        user_message(2, "summary of the deploy", surfaceOp={"op": "replace", "start": 0,
                                                           "end": 0}, sourceEventSeqs=[0]),
    ]
    store = index(session_of_events("a", events, session_header("a", created_at=NOW - 1,
                                                                 cwd="/w")))
    out = ask(provider, store)
    assert out["history"]["sessions"] == [
        {"sessionId": "a", "createdAt": NOW - 1, "matches": 1,
         "snippets": ["summary of the deploy"]}]


def test_no_index_and_unopenable_index(provider: Any, tmp_path: Path) -> None:
    assert ask(provider, None)["history"] == {"available": False, "sessions": []}
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a database at all" * 100)
    out = ask(provider, lambda: open_readonly(bad))
    assert out["history"]["available"] is False and out["history"]["sessions"] == []
    assert out["history"]["error"]["code"] == "SESSION_QUERY_INDEX_FAILED"
    missing = ask(provider, lambda: open_readonly(tmp_path / "none.db"))["history"]
    assert missing["error"]["code"] == "SESSION_QUERY_INDEX_FAILED"
    assert not (tmp_path / "none.db").exists()


def test_index_file_is_opened_read_only(provider: Any, tmp_path: Path) -> None:
    db = tmp_path / "idx.db"
    with open_index(db, "delete") as store:
        index_sessions(store, [session("a", ["deploy"])])
    before = db.read_bytes()
    out = ask(provider, lambda: open_readonly(db))
    assert [s["sessionId"] for s in out["history"]["sessions"]] == ["a"]
    assert db.read_bytes() == before
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    out = ask(provider, lambda: open_readonly(foreign))
    assert out["history"]["error"]["reason"] == "not-derived-index"


def test_logs_are_indexed_in_memory(provider: Any, tmp_path: Path) -> None:
    import json

    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [session_header("a", created_at=NOW - 1, cwd="/w"), user_message(0, "deploy it")]
    (logs / "a.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    store, report = index_logs([logs])
    with store:
        out = ask(provider, store)
    assert not report.failed and sorted(p.name for p in logs.iterdir()) == ["a.jsonl"]
    assert out["history"]["sessions"][0]["snippets"] == ["deploy it"]


@pytest.mark.parametrize(("request_", "field"), [
    ({"cwd": "/w"}, "/text"),
    ({"text": "  ", "cwd": "/w"}, "/text"),
    ({"text": "x"}, "/cwd"),
    ({"text": "x", "cwd": "/w", "historyLimit": 0}, "/historyLimit"),
    ({"text": "x", "cwd": "/w", "historyLimit": 101}, "/historyLimit"),
    ({"text": "x", "cwd": "/w", "memoryLimit": True}, "/memoryLimit"),
    ({"text": "x", "cwd": "/w", "snippetChars": 0}, "/snippetChars"),
    ({"text": "x", "cwd": "/w", "windowDays": 3651}, "/windowDays"),
    ({"text": "x", "cwd": "/w", "now": -1}, "/now"),
    ({"text": "x", "cwd": "/w", "colour": 1}, "/colour"),
])
def test_invalid_requests_touch_nothing(provider: Any, request_: dict[str, Any],
                                        field: str) -> None:
    rows = len(provider.audit_list(100))
    with pytest.raises(MemoryProtocolError) as caught:
        recall(provider, {**request_, "sessionId": "s-now"}, None)
    assert caught.value.code == "INVALID_INPUT" and caught.value.details["field"] == field
    assert len(provider.audit_list(100)) == rows


def test_a_wal_index_is_read_without_files_next_to_it(provider: Any, tmp_path: Path) -> None:
    folder = tmp_path / "indexes"
    folder.mkdir()
    db = folder / "idx.db"
    with open_index(db) as store:  # WAL, the default journal mode of the index
        index_sessions(store, [session("a", ["deploy"])])
    before = sorted(p.name for p in folder.iterdir())
    content = db.read_bytes()
    out = ask(provider, lambda: open_readonly(db))
    assert [s["sessionId"] for s in out["history"]["sessions"]] == ["a"]
    assert sorted(p.name for p in folder.iterdir()) == before == ["idx.db"]
    assert db.read_bytes() == content
