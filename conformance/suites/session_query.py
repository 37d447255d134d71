"""The session-query conformance suite: runs vectors through the dshkit reference's public
API (``dshkit.reference.query``), including a real SQLite FTS5 index in a temporary
directory for the ``query.search*`` and ``query.open`` operations.

``query.search.detached`` (QRY-FLT-008) runs a paged search as a caller that keeps changing
its own request: the request of ``input.request`` is passed to the first search; then every
change of ``input.changes`` (``{"path": [member or index...], "value"}``) is made to the
caller's objects in place (each container on the path keeps its identity; a list at the end
of the path keeps its identity and gets the new items); only then are the first page's hits
and cursor read, and the later pages are asked for with a fresh copy of the original request
and the cursor. Result ``{"valid": true, "pages": [[ids or seqs]...]}``, which must be the
pages of the original request.

``compare`` checks every member of ``expect`` for deep equality with the result; members the
vector does not name are not compared. For refusals, every member of ``expect.error`` (the
code, and for ``query.open`` the refusal ``reason``) must match.
"""

from __future__ import annotations

import base64
import copy
import json
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dshkit.reference.json import codec as jsoncodec
from dshkit.reference.query import CODES as ERROR_CODES
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

SUITE = "session-query"
CAPABILITY = "session-query"
OPERATIONS: tuple[str, ...] = (
    "query.classify",
    "query.documents",
    "query.extract",
    "query.trace",
    "query.read",
    "query.filter-sessions",
    "query.filter-events",
    "query.text-filter",
    "query.sql-where",
    "query.normalize",
    "query.quote",
    "query.cursor",
    "query.cursor.decode",
    "query.snippet",
    "query.search",
    "query.search.pages",
    "query.search.resume",
    "query.search.detached",
    "query.open",
    "query.disabled",
    "query.tool.translate",
    "query.tool.format",
    *_query_store.OPERATIONS,
)

JsonObject = dict[str, Any]


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


def reference(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run one vector operation against the dshkit reference."""
    try:
        return _run(operation, input, params)
    except SessionQueryError as exc:
        return {"valid": False, "error": {"code": exc.code, "message": exc.message,
                                          **{k: v for k, v in exc.detail.items()
                                             if isinstance(v, (str, int))}}}


#: QRY-ERR-001: the closed set of refusal codes (the tool surface adds ``INVALID_ARGS``).
CLOSED_CODES = frozenset(ERROR_CODES) | {"INVALID_ARGS"}


def _refusal_codes(result: JsonObject) -> Iterator[Any]:
    """The refusal codes of a result: its ``error``, and those of the steps of
    ``query.files`` and ``query.engine``."""
    if result.get("valid") is False:
        error = result.get("error")
        yield error.get("code") if isinstance(error, dict) else error
    steps = result.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict):
            if isinstance(step.get("error"), str):
                yield step["error"]
            failed = step.get("failed")
            for item in failed if isinstance(failed, list) else []:
                yield item.get("code") if isinstance(item, dict) else item
    for key in ("create", "search"):
        if isinstance(result.get(key), dict):
            yield result[key].get("code")


def compare(expect: JsonObject, result: JsonObject) -> str:
    """``""`` when ``result`` satisfies ``expect``, else a one-line difference. Any refusal
    code in the result must belong to the closed set of QRY-ERR-001; a ``messageStartsWith``
    member of an expected refusal compares the start of the message."""
    strange = sorted({str(c) for c in _refusal_codes(result) if c not in CLOSED_CODES})
    if strange:
        return f"refusal codes outside the closed set of QRY-ERR-001: {', '.join(strange)}"
    if result.get("valid") is not expect.get("valid"):
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect.get('valid')}, got {json.dumps(got, ensure_ascii=False)}"
    if expect.get("valid") is False:
        want, got = expect.get("error", {}), result.get("error") or {}
        for key, value in want.items():
            if key == "messageStartsWith":
                if not str(got.get("message", "")).startswith(value):
                    return f"error message {got.get('message')!r} does not start with {value!r}"
                continue
            if got.get(key) != value:
                return f"error {key}: expected {value!r}, got {got.get(key)!r} " \
                       f"({got.get('message', '')})"
        return ""
    for key, value in expect.items():
        if key in STEP_OUTCOMES and isinstance(value, dict):
            problem = _outcome(key, value, result.get(key))
            if problem:
                return problem
            continue
        if key != "valid" and (key not in result or not _equal(result[key], value)):
            return (f"{key}: expected {json.dumps(value, ensure_ascii=False)[:300]}, got "
                    f"{json.dumps(result.get(key), ensure_ascii=False)[:300]}")
    return ""


#: ``query.engine`` members holding a refusal (or ``null``), compared member by member, with
#: ``messageStartsWith`` comparing the start of the message.
STEP_OUTCOMES = ("create", "search")


def _outcome(key: str, want: JsonObject, got: Any) -> str:
    if not isinstance(got, dict):
        return f"{key}: expected a refusal {json.dumps(want)}, got {json.dumps(got)}"
    for member, value in want.items():
        if member == "messageStartsWith":
            if not str(got.get("message", "")).startswith(value):
                return f"{key}: message {got.get('message')!r} does not start with {value!r}"
        elif got.get(member) != value:
            return f"{key}.{member}: expected {value!r}, got {got.get(member)!r}"
    return ""


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
