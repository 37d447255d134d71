"""The dshkit reference bound to the kit's ``session_query`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

import base64
import copy
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dshkit.conformance.interface import JsonObject
from dshkit.reference.json import codec as jsoncodec
from dshkit.reference.query import (
    CursorPayload,
    Document,
    Limits,
    SearchConfig,
    SessionQueryError,
    SessionSearchEngine,
    build_documents,
    classify,
    compile_text_filter,
    decode_cursor,
    disabled_engine,
    encode_cursor,
    event_where,
    extract_text,
    filter_documents,
    filter_sessions,
    fingerprint,
    make_snippet,
    materialize_event_filters,
    materialize_session_filters,
    normalize_event_request,
    normalize_session_request,
    open_index,
    quote_phrase,
    read_event,
    session_of_events,
    session_where,
    trace_event,
)
from dshkit.reference.query.sql import check_predicates
from dshkit.reference.query.tools import format_session_search, translate_session_search

from . import _query_store


def _limits(params: JsonObject) -> Limits:
    return Limits(params.get("defaultLimit", 20), params.get("maxLimit", 100))


def _normalized(scope: str, request: JsonObject, params: JsonObject) -> Any:
    if scope == "events":
        return normalize_event_request(request, _limits(params))
    return normalize_session_request(request, _limits(params))


@contextmanager
def _engine(data: JsonObject) -> Iterator[SessionSearchEngine]:
    engine = SessionSearchEngine(SearchConfig(path=":memory:",
                                              snippet_chars=data.get("snippetChars", 240)))
    try:
        engine.index_sessions(session_of_events(s["header"]["id"], s["events"], s["header"])
                              for s in data["sessions"])
        yield engine
    finally:
        engine.close()


def _search(engine: SessionSearchEngine, data: JsonObject, request: JsonObject) -> Any:
    match = data.get("match", "auto")
    if data["scope"] == "events":
        return engine.search_events(request, match=match)
    return engine.search_sessions(request, match=match)


def _hits(page: Any, scope: str) -> JsonObject:
    if scope == "events":
        return {"valid": True, "seqs": [h["seq"] for h in page.items],
                "snippets": [h["snippet"] for h in page.items]}
    return {"valid": True, "ids": [h["header"]["id"] for h in page.items],
            "snippets": [h["bestMatch"]["snippet"] for h in page.items]}


def _pages(data: JsonObject) -> JsonObject:
    pages: list[list[Any]] = []
    with _engine(data) as engine:
        request = dict(data["request"])
        while True:
            page = _search(engine, data, request)
            hits = _hits(page, data["scope"])
            pages.append(hits["seqs" if data["scope"] == "events" else "ids"])
            if page.next_cursor is None:
                return {"valid": True, "pages": pages}
            request["cursor"] = page.next_cursor


def _change(target: Any, path: list[Any], value: Any) -> None:
    """Set the member at ``path`` of the caller's object in place (QRY-FLT-008 vectors)."""
    for step in path[:-1]:
        target = target[step]
    last = path[-1]
    current = target[last] if isinstance(target, list) or last in target else None
    if isinstance(current, list) and isinstance(value, list):
        current[:] = copy.deepcopy(value)
    else:
        target[last] = copy.deepcopy(value)


def _detached(data: JsonObject) -> JsonObject:
    scope = "seqs" if data["scope"] == "events" else "ids"
    original = copy.deepcopy(data["request"])
    caller = copy.deepcopy(data["request"])
    with _engine(data) as engine:
        page = _search(engine, data, caller)
        for change in data["changes"]:
            _change(caller, change["path"], change["value"])
        pages = [_hits(page, data["scope"])[scope]]
        cursor = page.next_cursor
        while cursor is not None:
            page = _search(engine, data, {**copy.deepcopy(original), "cursor": cursor})
            pages.append(_hits(page, data["scope"])[scope])
            cursor = page.next_cursor
        return {"valid": True, "pages": pages}


def _resume(data: JsonObject) -> JsonObject:
    with _engine(data) as engine:
        first = _search(engine, data, data["request"])
        update = data["update"]
        engine.index_sessions([session_of_events(update["id"], update["events"])])
        return _hits(_search(engine, data, {**data["request"], "cursor": first.next_cursor}),
                     data["scope"])


def _open(data: JsonObject) -> JsonObject:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "index.sqlite"
        conn = sqlite3.connect(path)
        conn.execute(f"PRAGMA application_id = {int(data['applicationId'])}")
        conn.execute(f"PRAGMA user_version = {int(data['userVersion'])}")
        for name in data["tables"]:
            conn.execute(f'CREATE TABLE "{name}" (x)')
        conn.commit()
        conn.close()
        if data.get("reopen"):
            open_index(path).close()
        store = open_index(path)
        try:
            conn = store.conn
            return {"valid": True, "action": store.decision.action,
                    "applicationId": conn.execute("PRAGMA application_id").fetchone()[0],
                    "userVersion": conn.execute("PRAGMA user_version").fetchone()[0]}
        finally:
            store.close()


def _sql_where(data: JsonObject) -> JsonObject:
    scope = data["scope"]
    if scope == "sessions":
        where = session_where(materialize_session_filters(data["filters"]))
    elif scope == "events":
        where = event_where(materialize_event_filters(data["filters"], allow_text=False))
    elif scope == "within-session":
        where = event_where(materialize_event_filters(data["filters"], allow_text=False))
        check_predicates(1 + where.predicate_count)
        return {"valid": True, "predicateCount": 1 + where.predicate_count}
    else:
        swhere = session_where(materialize_session_filters(data["sessionFilters"]))
        ewhere = event_where(materialize_event_filters(data["eventFilters"], allow_text=False))
        check_predicates(swhere.predicate_count + ewhere.predicate_count)
        return {"valid": True, "predicateCount": swhere.predicate_count + ewhere.predicate_count}
    return {"valid": True, **where.to_json()}


def _cursor(data: JsonObject, params: JsonObject) -> JsonObject:
    request = _normalized(data["scope"], data["request"], params)
    identity = fingerprint(request)
    cursor = encode_cursor(CursorPayload(data["instance"], data["scope"], identity,
                                         data["generation"], data["offset"]))
    return {"valid": True, "fingerprint": identity, "cursor": cursor}


def _decode(data: JsonObject, params: JsonObject) -> JsonObject:
    request = _normalized(data["scope"], data["request"], params)
    cursor = data.get("cursor")
    if cursor is None:
        raw = jsoncodec.dumps(data["payload"]).encode("utf-8")
        cursor = base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
    offset = decode_cursor(cursor, instance=data["instance"], scope=data["scope"],
                           fingerprint=fingerprint(request), generation=data["generation"])
    return {"valid": True, "offset": offset}


def _documents(data: JsonObject) -> list[Document]:
    return [Document(d["sessionId"], d["seq"], d["type"], d["time"], d["surface"], d["text"])
            for d in data["documents"]]


def _run(operation: str, data: JsonObject, params: JsonObject) -> JsonObject:
    if operation == "query.classify":
        surfaces = classify(data["events"])
        return {"valid": True, "surfaces": [surfaces[e["seq"]] for e in data["events"]]}
    if operation == "query.documents":
        docs = build_documents(data.get("sessionId", "s"), data["events"])
        return {"valid": True, "documents": [[d.seq, d.text, d.surface] for d in docs]}
    if operation == "query.extract":
        return {"valid": True, "text": extract_text(data["event"])}
    if operation == "query.trace":
        trace = trace_event(data.get("sessionId", "s"), data["events"], data["seq"]).to_json()
        trace.pop("target")
        return {"valid": True, **trace}
    if operation == "query.read":
        window = read_event("s", data["events"], data["seq"], data.get("before"),
                            data.get("after"))
        return {"valid": True, "startSeq": window.start_seq, "endSeq": window.end_seq,
                "seqs": [e["seq"] for e in window.events]}
    if operation == "query.filter-sessions":
        kept = filter_sessions(data["records"], data["filters"])
        return {"valid": True, "ids": [r["header"]["id"] for r in kept]}
    if operation == "query.filter-events":
        return {"valid": True,
                "seqs": [d.seq for d in filter_documents(_documents(data), data["filters"])]}
    if operation == "query.text-filter":
        matcher = compile_text_filter(data["text"])
        return {"valid": True, "source": matcher.source, "flags": matcher.flags,
                "matches": [matcher.matches(s) for s in data["subjects"]]}
    if operation == "query.sql-where":
        return _sql_where(data)
    if operation == "query.normalize":
        return {"valid": True, "request": _normalized(data["scope"], data["request"],
                                                      params).to_json()}
    if operation == "query.quote":
        return {"valid": True, "match": quote_phrase(data["query"])}
    if operation == "query.cursor":
        return _cursor(data, params)
    if operation == "query.cursor.decode":
        return _decode(data, params)
    if operation == "query.snippet":
        return {"valid": True, "snippet": make_snippet(data["marked"], data["maxChars"])}
    if operation == "query.search":
        with _engine(data) as engine:
            return _hits(_search(engine, data, data["request"]), data["scope"])
    if operation == "query.search.pages":
        return _pages(data)
    if operation == "query.search.resume":
        return _resume(data)
    if operation == "query.search.detached":
        return _detached(data)
    if operation == "query.open":
        return _open(data)
    if operation == "query.disabled":
        engine = disabled_engine()
        if data["scope"] == "events":
            engine.search_events(data["request"])
        else:
            engine.search_sessions(data["request"])
        return {"valid": True}
    if operation == "query.tool.translate":
        request = translate_session_search(data["args"], data["callerCwd"])
        return {"valid": True, "request": request}
    if operation == "query.tool.format":
        return {"valid": True, "text": format_session_search(data["hits"],
                                                             capped=data.get("capped", False))}
    if operation in _query_store.OPERATIONS:
        return _query_store.run(operation, data)
    return {"valid": False, "error": {"code": "UNKNOWN_OPERATION",
                                      "message": f"unknown operation {operation!r}"}}


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run one vector operation against the dshkit reference."""
    try:
        return _run(operation, input, params)
    except SessionQueryError as exc:
        return {"valid": False, "error": {"code": exc.code, "message": exc.message,
                                          **{k: v for k, v in exc.detail.items()
                                             if isinstance(v, (str, int))}}}


