"""The index's fast paths agree with the plain definitions (QRY-IDX-010, QRY-IDX-015,
QRY-DOC-001, QRY-CLS-001, QRY-RNK-004, QRY-CJK-003).

* ``scan_log`` (one streaming pass, no events kept, the checker's own fold) gives exactly the
  documents, header, title and event count of ``load_session`` + ``build_documents``.
* Extraction skips event types outside ``TEXT_TYPES`` because they have no searchable text.
* Documents get classed rowids; a search over a classed index returns exactly what the same
  search returns over an index of the same documents with unclassed rowids (written before the
  classes, or by another writer), which takes the unpruned path.
* The literal strategy's ``instr`` prefilter never drops a document the pattern matches.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the regex engine's own case predicate
import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from builders import session_header
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshkit.conformance.strategies import valid_logs
from dshkit.reference.query import (
    SessionQueryError,
    SessionSearchEngine,
    build_documents,
    load_session,
)
from dshkit.reference.query.extract import TEXT_TYPES, extract_text
from dshkit.reference.query.filters import compile_text_filter
from dshkit.reference.query.scan import of_loaded, scan_log
from dshkit.reference.query.search import CJK_RANGES, has_cjk, verbatim_run
from dshkit.reference.query.sql import sanitize
from dshkit.reference.query.store import OPEN_ROWIDS, SHADOWED_ROWIDS, classed
from dshkit.reference.query.text import document_text, store_text
from dshkit.reference.session.vocabulary import KNOWN_EVENT_TYPES
from dshkit.reference.text import WHITESPACE

Event = dict[str, Any]
FIXTURES = Path(__file__).parent / "fixtures" / "session"
SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def _write(path: Path, events: list[Event], header: dict[str, Any] | None = None,
           tail: str = "") -> Path:
    lines = ([header] if header else []) + events
    path.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in lines) + tail,
                    encoding="utf-8")
    return path


def _same_as_load(path: Path) -> None:
    try:
        loaded = load_session(path)
    except SessionQueryError as exc:
        with pytest.raises(SessionQueryError) as info:
            scan_log(path)
        assert info.value.to_json() == exc.to_json()
        return
    scanned = scan_log(path)
    plain = of_loaded(loaded)
    assert scanned.session_id == plain.session_id
    assert scanned.header == plain.header
    assert scanned.title == plain.title
    assert scanned.events == plain.events
    assert list(scanned.documents) == build_documents(loaded.session_id, loaded.events)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.jsonl")))
def test_scan_equals_load_on_fixture_logs(name: str) -> None:
    _same_as_load(FIXTURES / name)


@SETTINGS
@given(valid_logs(max_turns=5, balanced=False), st.booleans(), st.booleans())
def test_scan_equals_load_on_generated_logs(tmp_path: Path, events: list[Event], header: bool,
                                            torn: bool) -> None:
    events = [*events, {"type": "session/title", "seq": len(events), "time": 1,
                        "data": {"title": "a title"}}] if events and header else events
    head = session_header("gen", created_at=3) if header else None
    _same_as_load(_write(tmp_path / "gen.jsonl", events, head, '{"type": "turn/st' if torn
                         else ""))


def test_types_outside_text_types_have_no_text() -> None:
    rich = {"content": [{"type": "text", "text": "x"}], "message": {"content": [
        {"type": "text", "text": "x"}]}, "name": "n", "arguments": "a", "todos": [
        {"status": "s", "content": "c"}], "reason": {"kind": "aborted"}, "title": "t",
        "summary": [{"type": "text", "text": "x"}], "text": "x"}
    for kind in sorted(set(KNOWN_EVENT_TYPES) | {"x/unknown"}):
        text = extract_text({"type": kind, "seq": 0, "time": 0, "data": rich})
        assert (kind in TEXT_TYPES) or text == "", kind


# -- classed rowids --------------------------------------------------------------------------

QUERIES = ["alpha", "beta gamma", "the", "日本", "会話 alpha", "zzz"]
WORDS = ["alpha", "beta", "gamma", "the", "日本語", "会話", "Alpha", "BETA"]


def _corpus(tmp: Path, rng: random.Random) -> Path:
    """Three sessions with compactions (shadowed documents) and tool calls (log-only)."""
    logs = tmp / "logs"
    logs.mkdir()
    for n in range(3):
        seq, events = 0, []
        for turn in range(4):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8)))
            events.append({"type": "user/message", "seq": seq, "time": seq,
                           "surfaceOp": "append", "data": {
                               "id": f"u{seq}", "role": "user", "source": {"kind": "user"},
                               "content": [{"type": "text", "text": text}]}})
            seq += 1
            if turn == 2:  # replace everything so far: the earlier messages are shadowed
                events.append({"type": "user/message", "seq": seq, "time": seq,
                               "surfaceOp": {"op": "replace", "start": 0, "end": seq - 1},
                               "sourceEventSeqs": list(range(seq)), "data": {
                                   "id": f"c{seq}", "role": "user",
                                   "source": {"kind": "plugin", "plugin": "compact"},
                                   "content": [{"type": "text", "text": f"summary {text}"}]}})
                seq += 1
        _write(logs / f"s{n}.jsonl", events,
               session_header(f"s{n}", created_at=n))
    return logs


def _unclassed_copy(source: Path, target: Path, rng: random.Random) -> None:
    """The same index with rowids 1..n in a shuffled order (a writer without classes)."""
    with SessionSearchEngine.open(target):
        pass
    conn = sqlite3.connect(target)
    conn.execute(f"ATTACH DATABASE '{source}' AS src")
    rows = conn.execute("SELECT text, session_id, seq, type, time, surface, codepoint_length "
                        "FROM src.docs").fetchall()
    rng.shuffle(rows)
    with conn:
        conn.executemany("INSERT INTO docs (rowid, text, session_id, seq, type, time, surface, "
                         "codepoint_length) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         [(n + 1, *row) for n, row in enumerate(rows)])
        conn.execute("DELETE FROM sessions")
        conn.execute("INSERT INTO sessions SELECT * FROM src.sessions")
        conn.execute("UPDATE index_state SET global_generation = "
                     "(SELECT global_generation FROM src.index_state)")
    conn.execute("DETACH DATABASE src")
    conn.close()


def _results(engine: SessionSearchEngine) -> list[Any]:
    out: list[Any] = []
    filters: list[list[dict[str, Any]]] = [
        [], [{"kind": "surface", "values": ["shadowed"]}],
        [{"kind": "surface", "values": ["current", "shadowed"]}],
        [{"kind": "surface", "values": ["log-only", "current"]}],
        [{"kind": "surface", "values": []}]]
    for query in QUERIES:
        for match in ("auto", "token", "literal"):
            for event_filters in filters:
                page = engine.search_sessions({"query": query, "eventFilters": event_filters,
                                               "limit": 100}, match=match).to_json()
                out.append([h["bestMatch"] | {"id": h["header"]["id"]}
                            for h in page["items"]])
                for sid in ("s0", "s2"):
                    events = engine.search_events({"sessionId": sid, "query": query,
                                                   "filters": event_filters, "limit": 100},
                                                  match=match).to_json()["items"]
                    out.append(events)
    return out


def test_classed_and_unclassed_indexes_answer_alike(tmp_path: Path) -> None:
    rng = random.Random(5)
    logs = _corpus(tmp_path, rng)
    classed_db, plain_db = tmp_path / "classed.sqlite", tmp_path / "plain.sqlite"
    with SessionSearchEngine.open(classed_db) as engine:
        assert not engine.index_paths([logs]).failed
        conn = engine.store.conn
        assert classed(conn)
        wrong = conn.execute(
            "SELECT count(*) FROM docs WHERE (surface = 'shadowed') <> (rowid >= ?) "
            "OR rowid < ? OR rowid >= ?", (SHADOWED_ROWIDS[0], OPEN_ROWIDS[0],
                                           SHADOWED_ROWIDS[1])).fetchone()[0]
        assert wrong == 0
        assert conn.execute("SELECT count(*) FROM docs WHERE surface = 'shadowed'"
                            ).fetchone()[0] > 0
        fast = _results(engine)
    _unclassed_copy(classed_db, plain_db, rng)
    with SessionSearchEngine.open(plain_db) as engine:
        assert not classed(engine.store.conn)
        slow = _results(engine)
    assert fast == slow
    assert any(fast)


def test_reindexing_keeps_each_class_contiguous(tmp_path: Path) -> None:
    """A session written again takes fresh rowids after the last of each class."""
    logs = _corpus(tmp_path, random.Random(9))
    db = tmp_path / "idx.sqlite"
    with SessionSearchEngine.open(db) as engine:
        engine.index_paths([logs])
        first = engine.store.conn.execute("SELECT max(rowid) FROM docs").fetchone()[0]
        path = logs / "s0.jsonl"
        path.write_text(path.read_text(encoding="utf-8").replace("alpha", "omega"),
                        encoding="utf-8")
        engine.index_paths([logs])
        conn = engine.store.conn
        assert classed(conn)
        runs = conn.execute("SELECT session_id, surface = 'shadowed', min(rowid), max(rowid), "
                            "count(*) FROM docs GROUP BY 1, 2").fetchall()
        assert all(hi - lo + 1 == count for _, _, lo, hi, count in runs)
        assert conn.execute("SELECT max(rowid) FROM docs").fetchone()[0] > first


# -- literal prefilter -----------------------------------------------------------------------

def test_cjk_block_characters_have_no_case() -> None:
    """The prefilter's premise: under re.IGNORECASE these characters match only themselves."""
    for lo, hi in CJK_RANGES:
        for code in range(lo, hi + 1):
            assert not _sre.unicode_iscased(code), hex(code)


ALPHABET = st.sampled_from([*"aAbB 日本語会話\u3000\tß", "\u4e00", "\uac00", "K"])


@settings(max_examples=400, deadline=None)
@given(st.text(ALPHABET, min_size=1, max_size=8), st.text(ALPHABET, max_size=30))
def test_literal_prefilter_keeps_every_match(query: str, text: str) -> None:
    if not query.strip():
        return
    pattern = compile_text_filter(query).pattern
    run = verbatim_run(query)
    assert run is None or (all(has_cjk(ch) for ch in run) and run in query)
    if pattern.search(text):
        assert run is None or run in text


# -- extraction --------------------------------------------------------------------------------

def _plain_join(parts: list[str]) -> str:
    return "\n".join(t for t in (p.strip(WHITESPACE) for p in parts) if t)


def _plain_blocks(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    out: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            out.append(_s(block.get("text")))
        elif kind == "tool-call":
            out += [_s(block.get("name")), _s(block.get("arguments"))]
        elif kind == "tool-result":
            out += _plain_blocks(block.get("content"))
    return out


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def plain_extract(event: Any) -> str:
    """QRY-EXT-001..004 written out the long way: the reference for ``extract_text``."""
    if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
        return ""
    kind, data = event.get("type"), event["data"]
    message = data.get("message")
    if kind == "user/message":
        return _plain_join(_plain_blocks(data.get("content")))
    if kind == "assistant/message":
        return _plain_join(_plain_blocks(message.get("content"))) \
            if isinstance(message, dict) else ""
    if kind == "tool/call":
        return _plain_join([_s(data.get("name")), _s(data.get("arguments"))])
    if kind == "tool/result":
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        content = _plain_join(_plain_blocks(message.get("content"))) \
            if isinstance(message, dict) else ""
        return _plain_join([content, _s(error.get("name")), _s(error.get("code"))])
    if kind == "todo/write":
        todos = data.get("todos") if isinstance(data.get("todos"), list) else []
        return _plain_join([x for t in todos if isinstance(t, dict)
                            for x in (_s(t.get("status")), _s(t.get("content")))])
    if kind == "turn/end":
        reason = data.get("reason")
        if not isinstance(reason, dict):
            return ""
        if reason.get("kind") == "error":
            error = reason.get("error")
            return _plain_join(["error", _s(error.get("message"))
                                if isinstance(error, dict) else ""])
        if reason.get("kind") == "aborted":
            return "aborted"
        return str(reason["kind"]) if reason.get("kind") in ("max-tokens", "interrupted") \
            else ""
    return ""


SCALAR = st.one_of(st.none(), st.integers(), st.sampled_from(
    ["", " ", "x", " a b ", "\u3000y\n", "\ufeff", "tool", "E1"]))
BLOCK = st.recursive(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "tool-call", "reasoning", "image",
                                                    "tool-result", "other"])},
                          optional={"text": SCALAR, "name": SCALAR, "arguments": SCALAR}),
    lambda inner: st.fixed_dictionaries({"type": st.just("tool-result"),
                                         "content": st.lists(inner, max_size=3)}),
    max_leaves=6)
CONTENT = st.one_of(st.lists(st.one_of(BLOCK, SCALAR), max_size=4), SCALAR)
DATA = st.fixed_dictionaries({}, optional={
    "content": CONTENT, "message": st.one_of(SCALAR, st.fixed_dictionaries(
        {}, optional={"content": CONTENT})),
    "name": SCALAR, "arguments": SCALAR,
    "error": st.one_of(SCALAR, st.fixed_dictionaries({}, optional={
        "name": SCALAR, "code": SCALAR, "message": SCALAR})),
    "todos": st.one_of(SCALAR, st.lists(st.one_of(SCALAR, st.fixed_dictionaries(
        {}, optional={"status": SCALAR, "content": SCALAR})), max_size=3)),
    "reason": st.one_of(SCALAR, st.fixed_dictionaries({"kind": st.sampled_from(
        ["error", "aborted", "max-tokens", "interrupted", "completed"])}, optional={
        "error": st.one_of(SCALAR, st.fixed_dictionaries({}, optional={
            "message": SCALAR}))}))})


@settings(max_examples=500, deadline=None)
@given(st.sampled_from([*sorted(TEXT_TYPES), "session/title", "assistant/chunk"]),
       st.one_of(DATA, SCALAR))
def test_extract_text_is_the_plain_definition(kind: str, data: Any) -> None:
    event = {"type": kind, "seq": 0, "time": 0, "data": data}
    assert extract_text(event) == plain_extract(event)


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(["a", "\x00", "\ufdd0", "\ufdd1", "\ud800", "\udfff", "é",
                                "😀", "\ufffd"]), max_size=12))
def test_document_text_is_sanitize_then_store_text(text: str) -> None:
    """QRY-IDX-009 in one pass, the length in code points unchanged."""
    assert document_text(text) == store_text(sanitize(text))
    assert len(document_text(text)) == len(text)


@pytest.mark.parametrize("kind", [["user/message"], {"a": 1}, None, 5])
def test_unhashable_or_odd_types_extract_nothing(tmp_path: Path, kind: Any) -> None:
    """An event whose type is not a string has no text, and the log is refused the way
    ``load_session`` refuses it, not with a TypeError."""
    event = {"type": kind, "seq": 0, "time": 0, "data": {"content": []}}
    assert extract_text(event) == ""
    _same_as_load(_write(tmp_path / "odd.jsonl", [event]))


# -- writing ------------------------------------------------------------------------------------

def _docs(db: Path) -> list[tuple[Any, ...]]:
    """The documents of an index, without rowids."""
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute("SELECT session_id, seq, type, time, surface, "
                                   "codepoint_length, text FROM docs").fetchall())


def _plain_index(db: Path, logs: list[Path]) -> None:
    """The same sessions written the plain way: loaded whole, then one insert."""
    from dshkit.reference.query.indexer import write_session

    with SessionSearchEngine.open(db) as engine:
        for log in logs:
            write_session(engine.store, load_session(log))


def _classes_hold(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT count(*) FROM docs WHERE (surface = 'shadowed') <> (rowid >= ?) "
            "OR rowid < ?", (SHADOWED_ROWIDS[0], OPEN_ROWIDS[0])).fetchone()[0] == 0
        runs = conn.execute("SELECT session_id, surface = 'shadowed', min(rowid), max(rowid), "
                            "count(*) FROM docs GROUP BY 1, 2").fetchall()
    assert all(hi - lo + 1 == count for _, _, lo, hi, count in runs)


@SETTINGS
@given(valid_logs(min_turns=2, max_turns=6))
def test_indexed_files_equal_loaded_sessions(tmp_path: Path, events: list[Event]) -> None:
    """``index_paths`` (one pass, classed rowids) stores the documents that loading the whole
    session and building its documents gives."""
    for name in ("files.sqlite", "plain.sqlite", "s.jsonl"):
        for suffix in ("", "-wal", "-shm", "-journal"):  # a stale -wal is refused (QRY-IDX-003)
            (tmp_path / f"{name}{suffix}").unlink(missing_ok=True)
    log = _write(tmp_path / "s.jsonl", events)
    with SessionSearchEngine.open(tmp_path / "files.sqlite") as engine:
        assert not engine.index_paths([log]).failed
    _plain_index(tmp_path / "plain.sqlite", [log])
    assert _docs(tmp_path / "files.sqlite") == _docs(tmp_path / "plain.sqlite")
    _classes_hold(tmp_path / "files.sqlite")


def _messages(count: int, word: str = "alpha") -> list[Event]:
    return [{"type": "user/message", "seq": n, "time": n, "surfaceOp": "append",
             "data": {"id": f"u{n}", "role": "user", "source": {"kind": "user"},
                      "content": [{"type": "text", "text": f"{word} {n}"}]}}
            for n in range(count)]


def test_a_log_without_compaction(tmp_path: Path) -> None:
    """No compaction: every document is current, all in the open class."""
    log = _write(tmp_path / "big.jsonl", _messages(700))
    with SessionSearchEngine.open(tmp_path / "idx.sqlite") as engine:
        outcome = engine.index_paths([log]).files[0]
        assert (outcome.status, outcome.documents) == ("indexed", 700)
    _plain_index(tmp_path / "plain.sqlite", [log])
    assert _docs(tmp_path / "idx.sqlite") == _docs(tmp_path / "plain.sqlite")
    _classes_hold(tmp_path / "idx.sqlite")


def test_a_log_that_fails_half_way_changes_nothing(tmp_path: Path) -> None:
    logs = _corpus(tmp_path, random.Random(3))
    db = tmp_path / "idx.sqlite"
    with SessionSearchEngine.open(db) as engine:
        engine.index_paths([logs])
        before = _docs(db)
        path = logs / "s1.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines()
        lines[5] = lines[5].replace('"user/message"', '"x/unknown"')  # refused mid-log
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        report = engine.index_paths([logs])
        assert [f.status for f in report.files] == ["unchanged", "failed", "unchanged"]
        assert report.files[1].error is not None
        assert report.files[1].error.code == "SESSION_QUERY_CORRUPT_SESSION"
    assert _docs(db) == before


def test_a_file_holding_another_session_replaces_it(tmp_path: Path) -> None:
    logs = _corpus(tmp_path, random.Random(4))
    db = tmp_path / "idx.sqlite"
    with SessionSearchEngine.open(db) as engine:
        engine.index_paths([logs])
        path = logs / "s1.jsonl"
        path.write_text(path.read_text(encoding="utf-8").replace('"id": "s1"', '"id": "s9"'),
                        encoding="utf-8")
        report = engine.index_paths([logs])
        assert report.files[1].status == "indexed" and report.files[1].session_id == "s9"
        ids = engine.store.conn.execute("SELECT id FROM sessions ORDER BY id").fetchall()
    assert [i for (i,) in ids] == ["s0", "s2", "s9"]
    assert {d[0] for d in _docs(db)} == {"s0", "s2", "s9"}


def test_conflicts_are_reported_after_read_errors(tmp_path: Path) -> None:
    logs = _corpus(tmp_path, random.Random(6))
    db = tmp_path / "idx.sqlite"
    other = tmp_path / "other"
    other.mkdir()
    twin = other / "twin.jsonl"
    twin.write_text((logs / "s0.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    broken = other / "broken.jsonl"  # s2 again (a conflict), refused in the middle
    lines = (logs / "s2.jsonl").read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5].replace('"user/message"', '"x/unknown"')
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with SessionSearchEngine.open(db) as engine:
        engine.index_paths([logs])
        before = _docs(db)
        report = engine.index_paths([twin, broken])
    codes = [f.error.code if f.error else None for f in report.files]
    assert codes == ["SESSION_QUERY_SOURCE_CONFLICT", "SESSION_QUERY_CORRUPT_SESSION"]
    assert [f.session_id for f in report.files] == ["s0", None]
    assert _docs(db) == before
