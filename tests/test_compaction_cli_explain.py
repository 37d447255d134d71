"""``dshkit compact plan``: what it checks, and the decision it shows (region, prices, cuts,
units, a selection without a summarizer)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from builders import user_message
from cli_support import last_json

from dshkit.cli import main
from dshkit.reference.compaction import plan
from dshkit.reference.session.writer import create_log

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 1, "cwd": "/w",
          "delegationDepth": 0}
MODEL = {"kind": "model", "provider": "mock", "model": "m"}


def _small_log() -> list[dict[str, Any]]:
    """Three short messages after a header: every span prices under the 103-token floor, so
    the digest summary can never be smaller (CMP-TOK-007)."""
    events: list[dict[str, Any]] = [
        {"type": "request/header", "seq": 0, "time": 1,
         "data": {"header": {"config": {"provider": "mock", "model": "m"}}, "reason": "initial"}},
    ]
    events += [user_message(seq, "word " * 20, time=1) for seq in range(1, 4)]
    return events


def _tool_log() -> list[dict[str, Any]]:
    """A closed turn with one tool pair, then a user message: cuts and units to show."""
    call = {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}
    result = {"type": "tool-result", "toolCallId": "c1",
              "content": [{"type": "text", "text": "ok"}], "isError": False}
    return [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        user_message(1, "run it", time=1),
        {"type": "step/start", "seq": 2, "time": 1, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 3, "time": 1, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": {"id": "a3", "role": "assistant",
                                                    "content": [call], "source": MODEL}}},
        {"type": "tool/result", "seq": 4, "time": 1, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": {
             "id": "r4", "role": "user", "content": [result],
             "source": {"kind": "tool", "callId": "c1"}}}},
        {"type": "step/end", "seq": 5, "time": 1, "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": 6, "time": 1,
         "data": {"turn": 1, "reason": {"kind": "completed"}}},
        user_message(7, "thanks", time=1),
    ]


def _write(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER, events)
    return path


@pytest.mark.requirement("CMP-CLI-003")
def test_failed_summary_still_shows_the_selected_region(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    path = _write(tmp_path, _small_log())
    assert main(["compact", "plan", str(path), "--trigger", "manual", "--json"]) == 0
    document = last_json(capsys)
    assert document["plan"]["outcome"] == "failed"
    assert document["selected"] == [{"start": 1, "end": 2, "tokens": 66}]
    assert main(["compact", "plan", str(path), "--trigger", "manual"]) == 0
    text = capsys.readouterr().out
    assert "selected region 1..2 (2 nodes, ~66 tokens)" in text
    assert "summarizing region 1..2 failed (summary)" in text


@pytest.mark.requirement("CMP-CLI-003")
def test_explain_shows_prices_cuts_and_units(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _tool_log())
    assert main(["compact", "plan", str(path), "--trigger", "manual", "--explain",
                 "--json"]) == 0
    explain = last_json(capsys)["explain"]
    assert [node["seq"] for node in explain["nodes"]] == [1, 3, 4, 7]
    assert [node["type"] for node in explain["nodes"]] == [
        "user/message", "assistant/message", "tool/result", "user/message"]
    assert all(isinstance(node["tokens"], int) and node["tokens"] > 0
               for node in explain["nodes"])
    assert explain["cuts"] == [True, True, False, True, True]
    assert explain["units"] == [[1], [3, 4], [7]]
    assert main(["compact", "plan", str(path), "--trigger", "manual", "--explain"]) == 0
    text = capsys.readouterr().out
    assert "surface nodes (seq, type, tokens, unit):" in text
    assert "cut before 4: unbalanced" in text


@pytest.mark.requirement("CMP-CLI-003")
def test_select_only_needs_no_summarizer(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _tool_log())
    assert main(["compact", "plan", str(path), "--trigger", "manual", "--select-only",
                 "--json"]) == 0
    document = last_json(capsys)
    assert "plan" not in document
    assert document["selection"]["selected"] == [
        {"start": 1, "end": 4, "tokens": document["selection"]["selected"][0]["tokens"]}]
    assert document["selection"]["events"] == 0
    assert main(["compact", "plan", str(path), "--trigger", "manual", "--select-only"]) == 0
    assert "selected region 1..4" in capsys.readouterr().out
    assert main(["compact", "plan", str(path), "--select-only", "--summary-file",
                 str(path)]) == 2


def test_plan_checks_the_same_in_api_and_cli(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """CMP-PLN-002: a log that folds and prices but breaks an `invariants` rule (step
    numbering) is planned by both; `apply` alone refuses it (CMP-APP-001)."""
    events = _tool_log()
    for event in events:
        if event["type"] in ("step/start", "step/end", "assistant/message", "tool/result"):
            event["data"]["step"] = 2
    assert plan(events, trigger="manual", time=1).outcome in ("compacted", "failed")
    path = _write(tmp_path, events)
    assert main(["compact", "plan", str(path), "--trigger", "manual", "--json"]) == 0
    assert last_json(capsys)["valid"] is True
    summary = tmp_path / "s.md"
    summary.write_text("short", encoding="utf-8")
    assert main(["compact", "apply", str(path), "--trigger", "manual", "--summary-file",
                 str(summary), "--json"]) == 1
    error = last_json(capsys)["error"]
    assert error["code"] == "CMP_LOG_INVALID"
    assert "spec/compaction/planner.md#CMP-APP-001" in error["message"]
