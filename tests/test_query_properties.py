"""Properties of session query (spec chapter query): labels, filters, snippets, and a real
FTS5 index that never returns unseen sessions or shadowed history unless asked."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dshkit.conformance.strategies_projection import VOCABULARY, compacted_logs
from dshkit.reference.query import (
    SessionSearchEngine,
    build_documents,
    classify,
    compile_text_filter,
    filter_documents,
    fold_log,
    make_snippet,
    session_of_events,
)

FAST = settings(max_examples=40, deadline=None)
Event = dict[str, Any]


@st.composite
def corpora(draw: st.DrawFn) -> tuple[dict[str, list[Event]], set[str]]:
    count = draw(st.integers(1, 4))
    logs = {f"s{i}": draw(compacted_logs(max_messages=8)) for i in range(count)}
    seen = set(draw(st.lists(st.sampled_from(sorted(logs)), min_size=1, unique=True)))
    return logs, seen


def _all_pages(engine: SessionSearchEngine, request: dict[str, Any], events: bool
               ) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = []
    while True:
        page = engine.search_events(request) if events else engine.search_sessions(request)
        hits += page.items
        if page.next_cursor is None:
            return hits
        request = {**request, "cursor": page.next_cursor}


@FAST
@given(corpora(), st.sampled_from(VOCABULARY))
def test_search_returns_only_seen_sessions_and_no_shadowed_node(
        corpus: tuple[dict[str, list[Event]], set[str]], word: str) -> None:
    logs, seen = corpus
    with SessionSearchEngine.open(":memory:") as engine:
        engine.index_sessions(session_of_events(sid, logs[sid]) for sid in sorted(seen))
        hits = _all_pages(engine, {"query": word, "limit": 2}, events=False)
        ids = [h["header"]["id"] for h in hits]
        assert set(ids) <= seen and len(ids) == len(set(ids))
        assert all(h["bestMatch"]["surface"] != "shadowed" for h in hits)
        for sid in sorted(seen):
            docs = build_documents(sid, logs[sid])
            model = {d.seq for d in docs if word in d.text.split() and d.surface != "shadowed"}
            got = _all_pages(engine, {"sessionId": sid, "query": word, "limit": 3}, events=True)
            assert {h["seq"] for h in got} == model and len(got) == len(model)
            asked = _all_pages(engine, {"sessionId": sid, "query": word, "limit": 50,
                                        "filters": [{"kind": "surface",
                                                     "values": ["shadowed"]}]}, events=True)
            shadowed = {d.seq for d in docs if word in d.text.split()
                        and d.surface == "shadowed"}
            assert {h["seq"] for h in asked} == shadowed
        assert {sid for sid in seen
                if any(word in d.text.split() and d.surface != "shadowed"
                       for d in build_documents(sid, logs[sid]))} == set(ids)


@FAST
@given(compacted_logs())
def test_every_event_has_exactly_one_label(events: list[Event]) -> None:
    labels = classify(events)
    fold = fold_log(events)
    assert set(labels) == {e["seq"] for e in events}
    assert [s for s in fold.nodes] == sorted((s for s, v in labels.items() if v == "current"),
                                             key=fold.nodes.index)
    shadowed = {s for r in fold.replacements for s in r.shadowed}
    assert {s for s, v in labels.items() if v == "shadowed"} == shadowed
    assert classify(events) == labels


@FAST
@given(compacted_logs(), st.sampled_from(("current", "shadowed", "log-only")),
       st.sampled_from(("user/message", "assistant/message", "tool/call")))
def test_filters_compose(events: list[Event], surface: str, kind: str) -> None:
    docs = build_documents("s", events)
    f1 = {"kind": "surface", "values": [surface]}
    f2 = {"kind": "type", "values": [kind]}
    both = filter_documents(docs, [f1, f2])
    assert both == filter_documents(filter_documents(docs, [f1]), [f2])
    union = {d.seq for d in filter_documents(docs, [{"kind": "surface",
                                                      "values": [surface, "current"]}])}
    assert union == {d.seq for d in filter_documents(docs, [f1])} | {
        d.seq for d in filter_documents(docs, [{"kind": "surface", "values": ["current"]}])}


@FAST
@given(st.lists(st.sampled_from(("Alpha", "BETA", "gamma", "é", "Σ")), min_size=1, max_size=4),
       st.lists(st.sampled_from((" ", "\t", "\n", "\u3000", "  ")), min_size=4, max_size=4))
def test_text_filter_ignores_case_and_whitespace_runs(words: list[str], gaps: list[str]) -> None:
    subject = "x " + " ".join(w.lower() for w in words) + " y"
    query = "".join(w.upper() + gaps[i % len(gaps)] for i, w in enumerate(words))
    assert compile_text_filter(query).matches(subject)


@FAST
@given(st.text(alphabet=st.sampled_from(list("ab c\n\t😀界\ufdd0\ufdd1")), max_size=60),
       st.integers(1, 30))
def test_snippet_bounds(marked: str, limit: int) -> None:
    snippet = make_snippet(marked, limit)
    assert len(snippet) <= limit
    assert "\n" not in snippet and "\t" not in snippet
    assert snippet == snippet.strip(" ") or snippet.startswith("\u2026") \
        or snippet.endswith("\u2026")
    clean = " ".join(marked.replace("\ufdd0", "").replace("\ufdd1", "").split())
    if len(clean) <= limit:
        assert snippet == clean
