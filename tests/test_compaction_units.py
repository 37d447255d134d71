"""Unit rules of the compaction reference that the vectors do not pin down."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from builders import user_message

from dshkit.reference.compaction import (
    CHECKPOINT_PREAMBLE,
    COMMAND_TEXT,
    CompactionError,
    DigestSummarizer,
    FixedSummarizer,
    LogView,
    Summarizer,
    SummaryRequest,
    compact_now,
    overflow_retry,
    plan,
    resolve_prune_config,
    utf16_length,
)
from dshkit.reference.compaction.manual import MANUAL_CODES, ManualOutcome
from dshkit.reference.compaction.transaction import IdSource


def _user(seq: int, text: str, kind: str = "user") -> dict[str, Any]:
    source = {"kind": kind} if kind == "user" else {"kind": "plugin", "plugin": kind}
    return user_message(seq, text, time=1, source=source)


LOG = [_user(0, "alpha " * 100), _user(1, "beta " * 100, "skill"), _user(2, "gamma " * 100),
       _user(3, "ok")]


def test_preamble_is_one_line_of_300_code_units() -> None:
    assert utf16_length(CHECKPOINT_PREAMBLE) == 300
    assert "\n" not in CHECKPOINT_PREAMBLE


def test_summarizers_follow_the_protocol_and_are_deterministic() -> None:
    request = SummaryRequest(compaction_id="c", shadowed_seqs=(0, 1),
                             messages=(LOG[0]["data"], LOG[1]["data"]))
    for summarizer in (FixedSummarizer("x"), DigestSummarizer()):
        assert isinstance(summarizer, Summarizer)
    first = DigestSummarizer().summarize(request)
    assert first == DigestSummarizer().summarize(request)
    text = first.summary[0]["text"]
    assert text.startswith("Compacted 2 messages: 1 user, 0 assistant, 0 tool results, 1 other.")
    assert "First request: alpha alpha" in text
    assert first.record() == {}


def test_ids_are_derived_deterministically_and_caller_ids_come_first() -> None:
    a, b = IdSource(LOG), IdSource(LOG)
    assert a.compaction_id(4) == b.compaction_id(4)
    assert a.message_id(6) != a.compaction_id(6)
    assert IdSource(LOG[:3]).compaction_id(4) != IdSource(LOG).compaction_id(4)
    given = IdSource(LOG, compaction_ids=["mine"])
    assert given.compaction_id(4) == "mine"
    assert given.compaction_id(8) != "mine"


def test_plan_is_pure() -> None:
    events = copy.deepcopy(LOG)
    first = plan(events, trigger="manual", summarizer=FixedSummarizer("s"), time=5).to_json()
    assert events == LOG
    second = plan(events, trigger="manual", summarizer=FixedSummarizer("s"), time=5).to_json()
    assert first == second
    assert first["outcome"] == "compacted"
    assert first["events"][0]["time"] == 5


def test_default_time_is_the_last_event_time() -> None:
    events = copy.deepcopy(LOG)
    events[-1]["time"] = 77
    result = plan(events, trigger="manual", summarizer=FixedSummarizer("s"))
    assert {e["time"] for e in result.events} == {77}


def test_whole_surface_stability_refuses_any_change() -> None:
    def append_one(view: LogView) -> list[dict[str, Any]]:
        return [{"type": "user/message", "data": _user(0, "late")["data"],
                 "surfaceOp": "append"}]

    result = plan(LOG, trigger="region", region=(0, 1), summarizer=FixedSummarizer("s"),
                  during_summary=append_one, time=1)
    assert result.outcome == "failed"
    assert result.failure is not None and result.failure.kind == "changed"
    assert result.surface == [0, 1, 2, 3, result.events[1]["seq"]]


def test_manual_flush_success_and_command_texts() -> None:
    flushed: list[bool] = []
    outcome = compact_now(LOG, FixedSummarizer("s"), flush=lambda: flushed.append(True))
    assert flushed == [True]
    assert outcome.error is None and outcome.result is not None
    kind, text = outcome.command_text()
    assert kind == "success" and text.startswith("Compacted 3 history items")
    for code in MANUAL_CODES:
        assert ManualOutcome(error={"code": code, "message": ""}).command_text() == (
            "error", COMMAND_TEXT[code])


def test_overflow_needs_the_generations_and_a_target() -> None:
    assert overflow_retry("CONTEXT_WINDOW_EXCEEDED", aborted=False, retries=0,
                          max_retries=1) == {"action": "delegate"}
    assert overflow_retry("CONTEXT_WINDOW_EXCEEDED", aborted=False, retries=0, max_retries=1,
                          generation_before=1, generation_after=2,
                          has_target=False) == {"action": "delegate"}
    assert overflow_retry("CONTEXT_WINDOW_EXCEEDED", aborted=False, retries=0, max_retries=0,
                          generation_before=1, generation_after=2) == {"action": "delegate"}


def test_blank_summary_uses_ecmascript_white_space() -> None:
    result = plan(LOG, trigger="manual", summarizer=FixedSummarizer("\u00a0\ufeff "), time=1)
    assert result.failure is not None
    assert result.failure.message == "summarization produced no text summary content"
    ok = plan(LOG, trigger="manual", summarizer=FixedSummarizer("\u0085"), time=1)
    assert ok.outcome == "compacted"  # U+0085 is not ECMAScript white space


def test_prune_config_rules() -> None:
    assert resolve_prune_config({}).to_json() == {"thresholdChars": 8192, "headChars": 4096,
                                                  "tailChars": 1024}
    bad: Any
    for bad in ({"thresholdChars": 0}, {"headChars": -1}, {"tailChars": 1.5}, [],
                {"thresholdChars": True}):
        with pytest.raises(CompactionError) as caught:
            resolve_prune_config(bad)
        assert caught.value.code == "CMP_PRUNE_CONFIG"


def test_error_json_carries_details() -> None:
    with pytest.raises(CompactionError) as caught:
        plan(LOG, trigger="region", region=(9, 9))
    document = caught.value.to_json()
    assert document["code"] == "CMP_REGION_NOT_FOUND"
    assert document["requirement"] == "CMP-SEL-006"
    assert document["seq"] == 9


def test_refused_bracket_event_leaves_the_trace_unchanged() -> None:
    from dshkit.reference.compaction import BracketTrace

    trace = BracketTrace()
    trace.push({"type": "turn/start", "seq": 0, "data": {"turn": 1}})
    trace.push({"type": "compaction/start", "seq": 1, "data": {"compactionId": "c", "turn": 1}})
    before = (trace.open_turn, trace.bracket)
    for bad in ({"type": "compaction/start", "seq": 2, "data": {"compactionId": "d", "turn": 1}},
                {"type": "compaction/end", "seq": 2, "data": {"compactionId": "c", "turn": 1}},
                {"type": "turn/end", "seq": 2, "data": {"turn": 1}}):
        with pytest.raises(CompactionError):
            trace.push(bad)
        assert (trace.open_turn, trace.bracket) == before
