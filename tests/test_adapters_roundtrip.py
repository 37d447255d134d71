"""Round trips of every adapter (ADP-GEN-006): reading back an export gives the entries its loss
report predicts, and the report is empty exactly when nothing changed. Property-based."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshkit.adapters import FORMATS, LOSS_KINDS, AdapterError, adapt, export
from dshkit.conformance.strategies_adapters import entries, markdown_texts, representable

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
NOW = {"now": 1700000000000}
# Options that make export and adapt agree on what the document does not carry.
EXPORT_OPTIONS: dict[str, dict[str, Any]] = {"mem0": NOW, "dshkit": {**NOW},
                                             "hermes": {"check_limits": False}}
ADAPT_OPTIONS: dict[str, dict[str, Any]] = {"mem0": NOW}


def key(entry: dict[str, Any]) -> str:
    return json.dumps([entry["track"], entry["scope"], entry["text"], entry["tags"],
                       entry["source"]], ensure_ascii=False)


def normal(entry: dict[str, Any]) -> dict[str, Any]:
    return {"track": entry["track"], "scope": entry["scope"], "text": entry["text"],
            "tags": list(entry.get("tags") or []), "source": entry.get("source") or "dshkit"}


def round_trip(fmt: str, items: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    written = export(fmt, items, EXPORT_OPTIONS.get(fmt))
    read = adapt(fmt, written.output, ADAPT_OPTIONS.get(fmt))
    return written, read.entries


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(items=entries())
def test_loss_report_predicts_the_read_back(fmt: str, items: list[dict[str, Any]]) -> None:
    try:
        written, back = round_trip(fmt, items)
    except AdapterError as exc:
        # Refusals are the documented ones: a § line (Hermes), a budget (dshkit).
        assert exc.code in ("ADAPTER_UNREPRESENTABLE", "ADAPTER_BUDGET"), exc
        return
    lossy = {loss.entry for loss in written.losses}
    for loss in written.losses:
        assert loss.kind in LOSS_KINDS
        assert loss.entry is not None and 0 <= loss.entry < len(items)
    clean = Counter(key(normal(e)) for i, e in enumerate(items) if i not in lossy)
    got = Counter(key(e) for e in back)
    assert not clean - got, "an entry with no loss did not come back unchanged"
    same = Counter(key(normal(e)) for e in items) == got
    assert same == (not written.losses), (written.losses, items, back)


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(data=st.data())
def test_representable_entries_come_back_exactly(fmt: str, data: st.DataObject) -> None:
    items = data.draw(representable(fmt))
    written, back = round_trip(fmt, items)
    assert written.losses == []
    assert Counter(map(key, back)) == Counter(key(normal(e)) for e in items)


@pytest.mark.parametrize("fmt", ["mem0", "dshkit"])
@SETTINGS
@given(items=entries())
def test_hub_formats_are_lossless_and_ordered(fmt: str, items: list[dict[str, Any]]) -> None:
    written, back = round_trip(fmt, items)
    assert written.losses == []
    assert back == [normal(e) for e in items]


@SETTINGS
@given(existing=markdown_texts(), first=representable("claude-md"),
       second=representable("claude-md"))
def test_claude_md_update_keeps_the_rest(existing: str, first: list[dict[str, Any]],
                                         second: list[dict[str, Any]]) -> None:
    """ADP-CMD-011: the user's bytes are kept, the region reads back as exported, and a second
    update replaces the first region."""
    try:
        once = export("claude-md", first, {"update": existing}).output
    except AdapterError as exc:
        assert exc.code in ("ADAPTER_PAYLOAD", "ADAPTER_UNREPRESENTABLE")
        return
    assert isinstance(once, str)
    if "dshkit:begin" not in existing:
        assert once.startswith(existing)
        try:
            ours = adapt("claude-md", existing).entries
        except AdapterError:
            ours = None  # the user's part itself is not readable (a control character)
        if ours is not None:
            region = adapt("claude-md", export("claude-md", first).output).entries
            assert adapt("claude-md", once).entries == ours + region
    twice = export("claude-md", second, {"update": once}).output
    assert twice == export("claude-md", second, {"update": existing}).output
