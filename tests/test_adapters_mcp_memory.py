"""MCP memory graph adapter: files the server writes come back byte for byte, and what dshkit
writes the server can load (spec chapter ``adapters/mcp-memory``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dshkit.adapters import adapt, export

SETTINGS = settings(max_examples=40, deadline=None)
names = st.sampled_from(("alice", "api-service", "bob", "张伟", "x y"))


def server_line(record: dict[str, Any]) -> str:
    """The server's JSON.stringify: no spaces, members in insertion order, non-ASCII as is."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


graphs = st.builds(
    lambda ents, rels: (ents, rels),
    st.dictionaries(names, st.tuples(st.sampled_from(("person", "repo", "")),
                                     st.lists(st.sampled_from(("Prefers pnpm", "", "a: b",
                                                               "日本語")), max_size=3))),
    st.lists(st.tuples(names, st.sampled_from(("knows", "works_at")), names), max_size=3))


@SETTINGS
@given(graph=graphs)
def test_server_files_round_trip_byte_for_byte(graph: Any) -> None:
    entities, relations = graph
    lines = [server_line({"type": "entity", "name": n, "entityType": t, "observations": o})
             for n, (t, o) in entities.items()]
    lines += [server_line({"type": "relation", "from": a, "to": b, "relationType": r})
              for a, r, b in relations]
    text = "\n".join(lines)
    read = adapt("mcp-graph", text)
    assert read.losses == []
    written = export("mcp-graph", read.entries)
    assert written.losses == [] and written.output == text


def test_every_written_line_loads() -> None:
    entries = [{"track": "user", "scope": "user-global", "text": "loose note"},
               {"track": "user", "scope": "user-global", "text": "a r b",
                "tags": ["relation:r", "from:a", "to:b"]}]
    text = export("mcp-graph", entries).output
    assert isinstance(text, str)
    records = [json.loads(line) for line in text.split("\n")]
    assert [r["type"] for r in records] == ["entity", "relation"]
    assert records[0]["observations"] == ["loose note"]
