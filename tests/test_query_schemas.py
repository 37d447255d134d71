"""The query schemas accept what the reference produces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import user_message

from dshkit.cli import main
from dshkit.reference.query import (
    SessionQueryError,
    SessionSearchEngine,
    build_documents,
    build_records,
    read_event,
    session_of_events,
    trace_event,
)
from dshkit.schemas import validator

EVENTS = [user_message(0, "alpha"), user_message(1, "alpha beta"),
          {**user_message(2, "summary alpha"), "surfaceOp": {"op": "replace", "start": 0, "end": 1},
           "sourceEventSeqs": [0, 1]}]


def test_documents_records_traces_windows() -> None:
    for document in build_documents("s", EVENTS):
        validator("query/v1/document.json").validate(document.to_json())
    for record in build_records("s", EVENTS):
        validator("query/v1/event-record.json").validate(record.to_json())
    validator("query/v1/event-trace.json").validate(trace_event("s", EVENTS, 0).to_json())
    validator("query/v1/event-window.json").validate(read_event("s", EVENTS, 1, 1, 1).to_json())


def test_requests_pages_filters() -> None:
    request: dict[str, Any] = {
        "query": "alpha", "sessionFilters": [{"kind": "cwd", "values": [None]}],
        "eventFilters": [{"kind": "surface", "values": ["shadowed", "current"]}], "limit": 1}
    validator("query/v1/search-request.json").validate(request)
    assert not validator("query/v1/search-request.json").is_valid(
        {"query": "x", "eventFilters": [{"kind": "text", "text": "x"}]})
    with SessionSearchEngine.open(":memory:") as engine:
        engine.index_sessions([session_of_events("s", EVENTS)])
        page = engine.search_sessions(request).to_json()
        validator("query/v1/search-page.json").validate(page)
        events = engine.search_events({"sessionId": "s", "query": "alpha"}).to_json()
        validator("query/v1/search-page.json").validate(events)
        with pytest.raises(SessionQueryError) as info:
            engine.search_events({"sessionId": "nope", "query": "alpha"})
        validator("query/v1/error.json").validate(info.value.to_json())


def test_index_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "s.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in EVENTS), encoding="utf-8")
    main(["query", "index", str(log), str(tmp_path / "missing.jsonl"), "--db",
          str(tmp_path / "idx.sqlite"), "--json"])
    refusal = json.loads(capsys.readouterr().out)
    assert refusal["ok"] is False and refusal["error"]["path"].endswith("missing.jsonl")
    validator("query/v1/index-report.json").validate(refusal["report"])
