"""Properties of the session reference projection (spec chapter reference/projection)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dshkit.conformance.strategies_projection import surface_snapshots, texts
from dshkit.reference.projection import (
    SurfaceSnapshot,
    decode_uri,
    encode_uri,
    head_tail,
    notice,
    project,
    retain,
    tag_safe,
    truncate_with_notice,
    utf8_len,
)
from dshkit.reference.projection.text import NOTICE_OPEN

FAST = settings(max_examples=40, deadline=None)


def _kept_bytes(text: str) -> int:
    """The bytes a retained text kept from its original: the text without its notice."""
    cut = text.rfind(NOTICE_OPEN)
    return utf8_len(text if cut < 0 else text[:cut])


@st.composite
def snapshot_and_budget(draw: st.DrawFn) -> tuple[SurfaceSnapshot, int]:
    snapshot = SurfaceSnapshot.from_json(draw(surface_snapshots()))
    full = utf8_len(tag_safe({"sessionId": snapshot.session_id, "label": "L",
                              "cwd": snapshot.cwd,
                              "capturedThroughSeq": snapshot.captured_through_seq,
                              "conversation": [{"role": i.role, "text": i.text}
                                               for i in project(snapshot)]}))
    return snapshot, draw(st.integers(1, full + 20))


@FAST
@given(snapshot_and_budget())
def test_never_exceeds_the_budget(case: tuple[SurfaceSnapshot, int]) -> None:
    snapshot, budget = case
    retained = retain(snapshot, "L", budget)
    if retained is not None:
        assert retained.size <= budget
        assert len(tag_safe(retained.data).encode("utf-8")) == retained.size


@FAST
@given(snapshot_and_budget())
def test_keeps_every_checkpoint_and_the_newest_unit(case: tuple[SurfaceSnapshot, int]) -> None:
    snapshot, budget = case
    units = project(snapshot)
    retained = retain(snapshot, "L", budget)
    if retained is None:
        return
    kept = [(i.role, i.original_text, i.checkpoint) for i in retained.items]
    must: list[tuple[str, str, bool]] = [(u.role, u.original_text, u.checkpoint)
                                         for u in units if u.checkpoint]
    if units:
        must.append((units[-1].role, units[-1].original_text, units[-1].checkpoint))
    for unit in must:  # REF-RET-010: phase 1 never drops a checkpoint or the newest unit
        assert unit in kept
    # retained units keep their relative order: kept is a subsequence of the units (two units
    # may be equal, so positions are matched in order, not looked up)
    remaining = iter([(u.role, u.original_text, u.checkpoint) for u in units])
    assert all(any(k == u for u in remaining) for k in kept), (kept, units)


@FAST
@given(snapshot_and_budget())
def test_checkpoints_that_fit_are_kept_whole(case: tuple[SurfaceSnapshot, int]) -> None:
    """When the checkpoints and the newest unit fit untouched, none of them is cut."""
    snapshot, budget = case
    units = project(snapshot)
    retained = retain(snapshot, "L", budget)
    if retained is None or not units:
        return
    protected = [u for u in units[:-1] if u.checkpoint] + [units[-1]]
    floor = utf8_len(tag_safe({"sessionId": snapshot.session_id, "label": "L",
                               "cwd": snapshot.cwd,
                               "capturedThroughSeq": snapshot.captured_through_seq,
                               "conversation": [{"role": u.role, "text": u.text}
                                                for u in protected]}))
    if floor <= budget:
        for item in retained.items:
            assert item.text == item.original_text


@FAST
@given(snapshot_and_budget())
def test_omissions_add_up(case: tuple[SurfaceSnapshot, int]) -> None:
    snapshot, budget = case
    units = project(snapshot)
    retained = retain(snapshot, "L", budget)
    if retained is None:
        return
    total = sum(utf8_len(u.original_text) for u in units)
    kept = sum(_kept_bytes(i.text) for i in retained.items)
    stats = retained.stats
    assert stats.omitted_bytes == total - kept
    for item in retained.items:
        assert item.omitted_bytes == utf8_len(item.original_text) - _kept_bytes(item.text)
    assert stats.original_messages == len(units)
    assert stats.retained_messages + stats.omitted_messages == len(units)
    assert stats.truncated == (stats.omitted_messages > 0 or stats.omitted_bytes > 0)
    assert stats.compacted == any(u.checkpoint for u in units)


@FAST
@given(texts(), st.integers(0, 400))
def test_truncation_fits_and_accounts(text: str, budget: int) -> None:
    cut = truncate_with_notice(text, budget)
    assert utf8_len(cut.text) <= max(budget, utf8_len(text) if utf8_len(text) <= budget else 0)
    if utf8_len(text) <= budget:
        assert (cut.text, cut.omitted) == (text, 0)
    elif cut.text:
        assert cut.text.endswith(notice(cut.omitted))
        assert utf8_len(cut.text) - utf8_len(notice(cut.omitted)) + cut.omitted == utf8_len(text)
    else:
        assert cut.omitted == utf8_len(text)


@FAST
@given(texts(), st.integers(0, 60), st.integers(0, 60))
def test_head_tail_keeps_whole_characters(text: str, head: int, tail: int) -> None:
    kept = head_tail(text, head, tail)
    assert "\ufffd" not in kept.text
    assert utf8_len(kept.text) + kept.omitted == utf8_len(text)
    assert utf8_len(kept.text) <= max(utf8_len(text) if kept.omitted == 0 else 0, head + tail)


@FAST
@given(st.text())
def test_uri_round_trip(session_id: str) -> None:
    uri = encode_uri(session_id)
    assert decode_uri(uri) == session_id
    assert "=" not in uri


@FAST
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
                    max_leaves=10))
def test_tag_safe_round_trips_without_angle_brackets(value: Any) -> None:
    text = tag_safe(value)
    assert "<" not in text
    assert json.loads(text) == value
