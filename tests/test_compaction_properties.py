"""Property tests of the compaction reference (fast: at most 40 examples each).

- a plan never cuts inside a structural unit, and its checkpoint passes the session fold's
  provenance rule (it cites start, summary, then every shadowed node);
- applying a plan to a valid log gives a valid log (level ``invariants`` and the bracket
  companion) whose derived messages are the checkpoint followed by the retained tail;
- selection is head-anchored, ends at a balanced cut, keeps the newest node, and is monotone;
- the pruner shrinks within budget, keeps non-text blocks in order, and is idempotent.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshkit.conformance.strategies_compaction import (
    compactable_logs,
    priced_surfaces,
    prune_contents,
    summary_texts,
)
from dshkit.reference.compaction import (
    CompactionError,
    FixedSummarizer,
    LogView,
    PricedNode,
    PruneConfig,
    boundaries,
    check_brackets,
    is_checkpoint_event,
    plan,
    prune_content,
    select_range,
)
from dshkit.reference.compaction.pruner import text_chars
from dshkit.reference.session.levels import Level
from dshkit.reference.session.surface import SurfaceFold, derive_message
from dshkit.reference.session.validation import validate_events

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TRIGGERS = st.sampled_from(("pressure", "context-overflow", "manual"))
WINDOWS = st.integers(200, 8_000)


def _plan(events: list[dict[str, Any]], trigger: str, window: int, summary: str,
          prune: bool) -> Any:
    try:
        return plan(events, window, trigger=trigger, summarizer=FixedSummarizer(summary),
                    prune=PruneConfig(200, 80, 40) if prune else None, time=7)
    except CompactionError as exc:
        assert exc.code in {"CMP_BUSY", "CMP_PAIRING_CORRUPT"}, exc.to_json()
        return None


@FAST
@given(compactable_logs(), TRIGGERS, WINDOWS, summary_texts(), st.booleans())
def test_plan_cuts_whole_units_and_cites_provenance(events: list[dict[str, Any]], trigger: str,
                                                    window: int, summary: str,
                                                    prune: bool) -> None:
    result = _plan(events, trigger, window, summary, prune)
    if result is None:
        return
    view = LogView.of(events)
    for event in result.events:
        if is_checkpoint_event(event):
            op = event["surfaceOp"]
            bounds = view.boundaries()
            i, j = bounds.index(op["start"]), bounds.index(op["end"])
            assert bounds.cuts[i] and bounds.cuts[j + 1], "the span splits a structural unit"
            shadowed = list(view.nodes[i:j + 1])
            summary_event = view.event(view.next_seq - 1)
            start_seq = next(c["startSeq"] for c in result.compactions
                             if c["checkpointSeq"] == event["seq"])
            assert summary_event["type"] == "compaction/summary"
            assert event["sourceEventSeqs"] == [start_seq, summary_event["seq"], *shadowed]
            assert summary_event["data"]["shadowedSeqs"] == shadowed
        view.push(event)  # the session fold itself checks SES-PROV-001..006 here
    assert list(view.nodes) == result.surface


@FAST
@given(compactable_logs(), TRIGGERS, WINDOWS, summary_texts())
def test_applied_plan_is_valid_and_derives_summary_plus_tail(events: list[dict[str, Any]],
                                                            trigger: str, window: int,
                                                            summary: str) -> None:
    result = _plan(events, trigger, window, summary, prune=False)
    if result is None:
        return
    combined = [*events, *result.events]
    report = validate_events(combined, Level.INVARIANTS)
    assert report.valid, [p.to_json() for p in report.errors]
    check_brackets(combined)
    after = SurfaceFold()
    for event in combined:
        after.push(event)
    messages = [m for m in (derive_message(after.event(s)) for s in after.nodes) if m]
    before = LogView.of(events)
    if result.outcome != "compacted":
        assert messages == before.messages()
        return
    last = result.compactions[-1]
    checkpoint = combined[last["checkpointSeq"]]["data"]
    shadowed = {s for c in result.compactions for s in c["shadowedSeqs"]}
    tail = [m for m in before.messages_of(s for s in before.nodes if s not in shadowed)]
    assert messages == [checkpoint, *tail]
    assert checkpoint["content"][1:-1] == [{"type": "text", "text": summary}]
    assert result.after is not None and result.before is not None
    assert result.after.total_tokens < result.before.total_tokens


@FAST
@given(priced_surfaces(), st.integers(0, 2_000), st.integers(0, 2_000))
def test_selection_is_head_anchored_balanced_and_monotone(surface: list[tuple[int, int, int]],
                                                          a: int, b: int) -> None:
    bounds = boundaries([(seq, delta) for seq, delta, _ in surface])
    nodes = [PricedNode(seq, tokens) for seq, _, tokens in surface]
    small, large = sorted((a, b))
    chosen = {r: select_range(nodes, bounds, r) for r in (small, large)}
    for span in chosen.values():
        if span is None:
            continue
        assert span[0] == nodes[0].seq
        end = bounds.index(span[1])
        assert bounds.cuts[end + 1]
        assert end < len(nodes) - 1  # the newest node is always retained
    longer, shorter = chosen[small], chosen[large]
    if shorter is not None:
        assert longer is not None
        assert bounds.index(shorter[1]) <= bounds.index(longer[1])


@FAST
@given(prune_contents(), st.integers(40, 200))
def test_pruner_shrinks_within_budget_and_is_idempotent(blocks: list[dict[str, Any]],
                                                        threshold: int) -> None:
    config = PruneConfig(threshold, 0, 1) if threshold < 60 else PruneConfig(threshold, 10, 11)
    out = prune_content(blocks, config)
    if out is None:
        assert text_chars(blocks) <= threshold
        return
    assert text_chars(out) <= threshold < text_chars(blocks)
    others = [b for b in blocks if b.get("type") != "text"]
    assert [b for b in out if b.get("type") != "text"] == others
    assert prune_content(out, config) is None


@FAST
@given(compactable_logs(balanced=True))
def test_generated_logs_keep_the_bracket_rules(events: list[dict[str, Any]]) -> None:
    trace = check_brackets(events)
    assert trace.bracket is None or any(e["type"] == "session/end-seed" for e in events)
