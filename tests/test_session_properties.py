"""Properties of the session-log reference over generated valid logs.

The logs come from :mod:`dshkit.conformance.strategies` (loop-shaped, valid at level
``invariants``). Each property names the requirement it exercises.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshkit.conformance.strategies import (
    Event,
    chunk_runs,
    event_prefixes,
    truncate,
    valid_logs,
)
from dshkit.reference.problems import ProblemError
from dshkit.reference.session.chunk_rows import decode_record, pack_events
from dshkit.reference.session.folding import fold_events, load_path
from dshkit.reference.session.header import header_line
from dshkit.reference.session.levels import Level
from dshkit.reference.session.repair import RepairTracker, interrupted_turn_closers
from dshkit.reference.session.surface import SurfaceFold, derive_message
from dshkit.reference.session.validation import validate_events
from dshkit.reference.session.writer import create_log

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
FAST = settings(max_examples=40, deadline=None)


def _fold_state(fold: SurfaceFold) -> dict[str, Any]:
    return {
        "nodes": list(fold.nodes),
        "shadowed": list(fold.shadowed),
        "generation": fold.replace_generation,
        "next": fold.next_seq,
        "replacements": list(fold.replacements),
        "current": copy.deepcopy(fold.current_events()),
    }


@FAST
@given(valid_logs())
def test_generated_logs_pass_invariants_and_load(log: list[Event]) -> None:
    """The strategy's contract: valid at level invariants (and load, SES-LVL-004)."""
    for level in (Level.INVARIANTS, Level.LOAD):
        report = validate_events(log, level)
        assert report.valid, (level, report.errors)
    assert interrupted_turn_closers(log) == []


@FAST
@given(valid_logs())
def test_fold_is_deterministic(log: list[Event]) -> None:
    """SES-DER-001: folding the same log twice gives the same surface and messages."""
    first = fold_events(copy.deepcopy(log), repair=False)
    second = fold_events(copy.deepcopy(log), repair=False)
    assert first.valid and second.valid
    assert (first.nodes, first.shadowed, first.messages, first.replacements) == \
        (second.nodes, second.shadowed, second.messages, second.replacements)
    incremental = SurfaceFold()
    for event in log:
        incremental.push(event)
    assert tuple(incremental.nodes) == first.nodes
    assert tuple(incremental.shadowed) == first.shadowed


@FAST
@given(valid_logs())
def test_every_seq_has_exactly_one_state(log: list[Event]) -> None:
    """SES-SURF-010: current, shadowed and log-only partition the seqs."""
    report = fold_events(log, repair=False)
    current, shadowed = set(report.nodes), set(report.shadowed)
    assert len(current) == len(report.nodes) and len(shadowed) == len(report.shadowed)
    assert not current & shadowed
    surface = {e["seq"] for e in log if e["type"] in SURFACE_TYPES}
    assert current | shadowed == surface
    log_only = {e["seq"] for e in log} - surface
    assert len(current) + len(shadowed) + len(log_only) == len(log)
    assert report.log_only == len(log_only)


@FAST
@given(valid_logs())
def test_shadowing_is_permanent(log: list[Event]) -> None:
    """SES-SURF-008: once shadowed, a seq never appears in a later surface."""
    fold = SurfaceFold()
    ever_shadowed: set[int] = set()
    previous: list[int] = []
    for event in log:
        fold.push(event)
        assert fold.shadowed[: len(previous)] == previous  # the shadowed list only grows
        previous = list(fold.shadowed)
        ever_shadowed.update(fold.shadowed)
        assert not ever_shadowed & set(fold.nodes)


@FAST
@given(valid_logs())
def test_messages_come_only_from_current_nodes(log: list[Event]) -> None:
    """SES-DER-001..004: messages are the projections of current nodes, in surface order."""
    report = fold_events(log, repair=False)
    by_seq = {e["seq"]: e for e in log}
    projected = [derive_message(by_seq[s]) for s in report.nodes]
    assert list(report.messages) == [m for m in projected if m is not None]
    shadowed = [derive_message(by_seq[s]) for s in report.shadowed]
    for message in report.messages:  # the very objects of current nodes, never of shadowed
        assert any(message is m for m in projected)
        assert not any(message is m for m in shadowed)
    for seq in report.nodes:
        event = by_seq[seq]
        if event["type"] == "assistant/message" and event["data"]["message"]["content"] == []:
            assert projected[report.nodes.index(seq)] is None  # SES-DER-003


@FAST
@given(event_prefixes())
def test_prefix_plus_closers_is_balanced_and_valid(prefix: list[Event]) -> None:
    """SES-REP-001..007, SES-FILE-011: closing any crash prefix gives a balanced valid log."""
    closers = interrupted_turn_closers(prefix)
    repaired = prefix + closers
    if prefix:
        assert [c["seq"] for c in closers] == list(range(len(prefix), len(repaired)))
        assert all(c["time"] == prefix[-1]["time"] for c in closers)
    tracker = RepairTracker()
    for event in repaired:
        tracker.push(event)
    assert tracker.balanced
    assert interrupted_turn_closers(repaired) == []
    if closers:
        assert closers[-1]["type"] == "turn/end"
        assert closers[-1]["data"]["reason"] == {"kind": "interrupted"}
    for level in (Level.INVARIANTS, Level.LOAD):
        report = validate_events(repaired, level)
        assert report.valid, (level, report.errors)
    loaded = fold_events(prefix)  # the loader's view closes the turn in memory
    assert loaded.valid
    assert [c["seq"] for c in loaded.closers] == [c["seq"] for c in closers]


@FAST
@given(valid_logs())
def test_written_log_reads_back(log: list[Event]) -> None:
    """SES-FILE-004..008, SES-FILE-013: whatever the compression and packing, the writer's
    output reads back as exactly the events written."""
    with tempfile.TemporaryDirectory() as tmp:
        seen = []
        for compression in ("zstd", "none"):
            for pack in (True, False):
                path = Path(tmp) / f"{compression}-{pack}" / "session.jsonl"
                create_log(path, header_line(session_id="s", created_at=0), log,
                           compression="zstd" if compression == "zstd" else "none",
                           pack_chunks=pack)
                report = load_path(path)
                assert report.valid, report.errors
                assert report.closers == 0
                seen.append(list(report.events))
        assert all(events == log for events in seen)


def _round_trip(events: list[Event]) -> list[Any]:
    out: list[Any] = []
    for record in pack_events(copy.deepcopy(events)):
        out.extend(decode_record(json.loads(json.dumps(record))))
    return out


@FAST
@given(st.one_of(valid_logs(), chunk_runs()))
def test_pack_then_decode_round_trips(events: list[Event]) -> None:
    """SES-FILE-005/006: packing is lossless, and only runs of three or more are packed."""
    assert _round_trip(events) == events
    for record in pack_events(copy.deepcopy(events)):
        if record.get("type") in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
            members = record["data"].get("texts", record["data"].get("args"))
            assert len(members) >= 3
            assert len(record["data"]["dt"]) == len(members) - 1


_MUTATIONS = ("wrong-seq", "drop-surface-op", "bad-surface-op", "replace-self",
              "cite-self", "surface-op-on-log-only", "reverse-range", "uncited-replace")


def _mutate(event: Event, fold: SurfaceFold, how: str) -> Event | None:
    """A refused variant of ``event`` for the fold state, or None if not applicable."""
    bad = copy.deepcopy(event)
    seq = event["seq"]
    surface_type = event["type"] in SURFACE_TYPES
    if how == "wrong-seq":
        bad["seq"] = seq + 1
    elif how == "surface-op-on-log-only":
        if surface_type:
            return None
        bad["surfaceOp"] = "append"
    elif not surface_type:
        return None
    elif how == "drop-surface-op":
        del bad["surfaceOp"]
    elif how == "bad-surface-op":
        bad["surfaceOp"] = "prepend"
    elif how == "replace-self":
        bad["surfaceOp"] = {"op": "replace", "start": seq, "end": seq}
        bad["sourceEventSeqs"] = list(fold.nodes) or [0]
    elif how == "cite-self":
        bad["sourceEventSeqs"] = [seq]
    elif how == "reverse-range":
        if len(fold.nodes) < 2:
            return None
        bad["surfaceOp"] = {"op": "replace", "start": fold.nodes[-1], "end": fold.nodes[0]}
        bad["sourceEventSeqs"] = list(fold.nodes)
    elif how == "uncited-replace":
        if not fold.nodes:
            return None
        bad["surfaceOp"] = {"op": "replace", "start": fold.nodes[0], "end": fold.nodes[-1]}
        bad.pop("sourceEventSeqs", None)
    return bad


@FAST
@given(valid_logs(min_turns=1), st.data())
def test_refused_event_leaves_fold_unchanged(log: list[Event], data: st.DataObject) -> None:
    """SES-SURF-009: a refused event changes neither nodes nor anything else of the fold."""
    index = data.draw(st.integers(0, len(log) - 1), label="index")
    fold = SurfaceFold()
    for event in log[:index]:
        fold.push(event)
    applicable = [m for m in _MUTATIONS if _mutate(log[index], fold, m) is not None]
    how = data.draw(st.sampled_from(applicable), label="mutation")
    bad = _mutate(log[index], fold, how)
    assert bad is not None
    before = _fold_state(fold)
    with pytest.raises(ProblemError):
        fold.push(bad)
    assert _fold_state(fold) == before
    fold.push(log[index])  # the real event still folds afterwards
    assert fold.next_seq == index + 1


@FAST
@given(valid_logs(min_turns=1), st.data())
def test_truncate_copies_a_prefix(log: list[Event], data: st.DataObject) -> None:
    """The crash helper cuts at an event boundary and does not alias the log."""
    length = data.draw(st.integers(-1, len(log) + 1))
    prefix = truncate(log, length)
    assert prefix == log[: max(0, length)]
    if prefix:
        prefix[0]["seq"] = -5
        assert log[0]["seq"] == 0
