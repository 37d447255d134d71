"""The SQLite FTS5 index: safety on open, permissions, rebuilds, resuming, CJK recall."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from builders import session_header, user_message

from dshkit.reference.query import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    SearchConfig,
    SessionQueryError,
    SessionSearchEngine,
    open_index,
    session_of_events,
)


def _log(path: Path, session_id: str, texts: list[str]) -> Path:
    header = session_header(session_id, created_at=5)
    lines = [header] + [user_message(i, t) for i, t in enumerate(texts)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                    encoding="utf-8")
    return path


def _ids(engine: SessionSearchEngine, query: str, **extra: Any) -> list[str]:
    return [h["header"]["id"] for h in engine.search_sessions({"query": query, **extra}).items]


def _refusal(path: Path) -> SessionQueryError:
    with pytest.raises(SessionQueryError) as info:
        open_index(path)
    assert info.value.code == "SESSION_QUERY_INDEX_FAILED"
    return info.value


def test_refuses_foreign_databases_and_leaves_them_alone(tmp_path: Path) -> None:
    memory = tmp_path / "memory.db"  # a dshkit memory store marks itself "DSKM"
    conn = sqlite3.connect(memory)
    conn.execute("PRAGMA application_id = 1146309453")
    conn.execute("CREATE TABLE entries (id TEXT)")
    conn.commit()
    conn.close()
    before = memory.read_bytes()
    assert str(_refusal(memory)).endswith("belongs to another application")
    assert memory.read_bytes() == before

    plain = tmp_path / "sessions.db"
    conn = sqlite3.connect(plain)
    conn.execute("CREATE TABLE sessions (id TEXT)")
    conn.commit()
    conn.close()
    assert str(_refusal(plain)).endswith("is not an empty or recognized derived index")

    log = _log(tmp_path / "a.jsonl", "s", ["hi"])
    before = log.read_bytes()
    assert "failed to open" in str(_refusal(log))  # not a database at all
    assert log.read_bytes() == before


def test_refuses_unrecognized_tables_in_its_own_database(tmp_path: Path) -> None:
    path = tmp_path / "idx.sqlite"
    open_index(path).close()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    assert str(_refusal(path)).endswith("has unrecognized user tables: notes")


def test_owner_only_permissions(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "idx.sqlite"
    with SessionSearchEngine.open(path) as engine:
        engine.index_sessions([session_of_events("s", [user_message(0, "alpha")])])
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        for sidecar in path.parent.iterdir():
            assert stat.S_IMODE(sidecar.stat().st_mode) == 0o600, sidecar
    for directory in (tmp_path / "a", tmp_path / "a" / "b"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    existing = tmp_path / "existing.sqlite"
    existing.touch(mode=0o644)
    os.chmod(existing, 0o644)
    open_index(existing).close()
    assert stat.S_IMODE(existing.stat().st_mode) == 0o644  # an existing file keeps its mode


def test_old_schema_is_rebuilt_with_a_new_instance(tmp_path: Path) -> None:
    path = tmp_path / "idx.sqlite"
    with open_index(path) as store:
        first = store.instance
        assert store.decision.action == "initialize"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 0")
    conn.commit()
    conn.close()
    with open_index(path) as store:
        assert store.decision.action == "rebuild" and store.instance != first
        assert store.conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    with open_index(path) as store:
        assert store.decision.action == "open"


def test_resume_prune_and_conflict(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    a = _log(logs / "a.jsonl", "a", ["alpha one"])
    _log(logs / "b.jsonl", "b", ["alpha two"])
    db = tmp_path / "idx.sqlite"
    with SessionSearchEngine.open(db) as engine:
        first = engine.index_paths([logs])
        assert [f.status for f in first.files] == ["indexed", "indexed"]
        again = engine.index_paths([logs])
        assert [f.status for f in again.files] == ["unchanged", "unchanged"]
        _log(a, "a", ["alpha one", "alpha three"])
        third = engine.index_paths([logs])
        assert [f.status for f in third.files] == ["indexed", "unchanged"]
        _log(logs / "copy.jsonl", "b", ["alpha copy"])
        conflict = engine.index_paths([logs / "copy.jsonl"])
        assert conflict.files[0].error is not None
        assert conflict.files[0].error.code == "SESSION_QUERY_SOURCE_CONFLICT"
        (logs / "b.jsonl").unlink()
        pruned = engine.index_paths([logs / "a.jsonl"])
        assert pruned.removed == ("b",)
        assert _ids(engine, "alpha") == ["a"]


def test_bad_logs_are_reported_and_others_indexed(tmp_path: Path) -> None:
    good = _log(tmp_path / "good.jsonl", "good", ["alpha"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"user/message","seq":0,"time":0,"data":{}}\n', encoding="utf-8")
    with SessionSearchEngine.open(tmp_path / "idx.sqlite") as engine:
        report = engine.index_paths([good, bad, tmp_path / "missing.jsonl"])
        assert [f.status for f in report.files] == ["indexed", "failed", "failed"]
        codes = [f.error.code for f in report.files if f.error is not None]
        assert codes == ["SESSION_QUERY_CORRUPT_SESSION", "SESSION_QUERY_PERSISTENCE_FAILED"]
        assert _ids(engine, "alpha") == ["good"]


def test_cjk_recall(tmp_path: Path) -> None:
    with SessionSearchEngine.open(":memory:") as engine:
        engine.index_sessions([
            session_of_events("zh", [user_message(0, "我们今天讨论会话查询索引\uff0c然后写测试\u3002")]),
            session_of_events("ja", [user_message(0, "日本語のテキスト検索")]),
        ])
        assert _ids(engine, "会话查询") == ["zh"]
        assert engine.search_sessions({"query": "会话查询"}).match == "literal"
        assert _ids(engine, "会话查询", ) == ["zh"]
        assert engine.search_sessions({"query": "会话查询"}, match="token").items == ()
        # punctuation splits runs, so the second clause is a whole token
        assert [h["header"]["id"] for h in engine.search_sessions(
            {"query": "然后写测试"}, match="token").items] == ["zh"]
        assert _ids(engine, "テキスト") == ["ja"]


def test_sanitized_text_and_markers(tmp_path: Path) -> None:
    with SessionSearchEngine.open(":memory:") as engine:
        engine.index_sessions([session_of_events("s", [user_message(0, "nul\0here \ufdd0mark\ufdd1 "
                                                                "lone\ud800x alpha")])])
        hit = engine.search_events({"sessionId": "s", "query": "alpha"}).items[0]
        assert hit["snippet"] == "nul\ufffdhere \ufffdmark\ufffd lone\ufffdx alpha"
        with pytest.raises(SessionQueryError) as info:
            engine.search_sessions({"query": "a\0b"})
        assert info.value.code == "SESSION_QUERY_INVALID_QUERY"


def test_disabled_mode_never_opens(tmp_path: Path) -> None:
    path = tmp_path / "never" / "idx.sqlite"
    engine = SessionSearchEngine(SearchConfig(path=str(path), open_at="never"))
    for call in (lambda: engine.search_sessions({"query": 5}),
                 lambda: engine.search_events({"sessionId": 1}),
                 lambda: engine.index_paths([tmp_path])):
        with pytest.raises(SessionQueryError) as info:
            call()
        assert info.value.code == "SESSION_QUERY_SEARCH_DISABLED"
    assert not path.parent.exists()


def test_first_search_opens_lazily(tmp_path: Path) -> None:
    path = tmp_path / "lazy.sqlite"
    engine = SessionSearchEngine(SearchConfig(path=str(path), open_at="first-search"))
    assert not path.exists()
    assert engine.search_sessions({"query": "x"}).items == ()
    assert path.exists()
    engine.close()


@pytest.mark.parametrize("options", [{"open_at": "later"}, {"journal_mode": "off"},
                                     {"default_limit": 200}, {"snippet_chars": 0},
                                     {"read_window_max": -1}])
def test_invalid_config(tmp_path: Path, options: dict[str, Any]) -> None:
    with pytest.raises(SessionQueryError) as info:
        SearchConfig(path=str(tmp_path / "x.sqlite"), **options)
    assert info.value.code == "SESSION_QUERY_INVALID_CONFIG"


def test_cursors_survive_reopening_and_go_stale(tmp_path: Path) -> None:
    path = tmp_path / "idx.sqlite"
    with SessionSearchEngine.open(path) as engine:
        engine.index_sessions([session_of_events("s", [user_message(0, "alpha"), user_message(1, "alpha")]),
                               session_of_events("t", [user_message(0, "alpha")])])
        page = engine.search_events({"sessionId": "s", "query": "alpha", "limit": 1})
        cursor = page.next_cursor
        sessions_cursor = engine.search_sessions({"query": "alpha", "limit": 1}).next_cursor
    assert cursor is not None and sessions_cursor is not None
    with SessionSearchEngine.open(path) as engine:
        rest = engine.search_events({"sessionId": "s", "query": "alpha", "limit": 1,
                                     "cursor": cursor})
        assert [h["seq"] for h in rest.items] == [0] and rest.next_cursor is None
        engine.index_sessions([session_of_events("t", [user_message(0, "beta")])])
        engine.search_events({"sessionId": "s", "query": "alpha", "limit": 1, "cursor": cursor})
        with pytest.raises(SessionQueryError) as info:
            engine.search_sessions({"query": "alpha", "limit": 1, "cursor": sessions_cursor})
        assert info.value.code == "SESSION_QUERY_STALE_CURSOR"
