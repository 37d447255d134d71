"""``dshkit compact plan`` and ``dshkit compact apply`` on real log files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from builders import user_message
from cli_support import last_json

from dshkit import schemas
from dshkit.cli import main
from dshkit.reference.compaction import CompactionError, FixedSummarizer, plan
from dshkit.reference.compaction.apply import apply_to_path
from dshkit.reference.session.levels import Level
from dshkit.reference.session.validation import validate_path
from dshkit.reference.session.writer import create_log

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 1, "cwd": "/w",
          "delegationDepth": 0}


def _log() -> list[dict[str, Any]]:
    """Turn 1 with a header and four long user messages, closed; then a short message."""
    events: list[dict[str, Any]] = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "request/header", "seq": 1, "time": 1,
         "data": {"header": {"config": {"provider": "mock", "model": "m"}}, "reason": "initial"}},
    ]
    events += [user_message(seq, "word " * 200, time=1) for seq in range(2, 6)]
    events.append({"type": "turn/end", "seq": 6, "time": 1,
                   "data": {"turn": 1, "reason": {"kind": "completed"}}})
    events.append(user_message(7, "thanks", time=1))
    return events


@pytest.fixture
def log_file(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER, _log())
    return path


@pytest.fixture
def summary_file(tmp_path: Path) -> Path:
    path = tmp_path / "summary.md"
    path.write_text("The user asked for words; they were given.", encoding="utf-8")
    return path


@pytest.mark.requirement("CMP-CLI-001")
def test_plan_prints_a_schema_valid_plan(log_file: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["compact", "plan", str(log_file), "--context-window", "1000", "--time", "5",
                 "--json"])
    assert code == 0
    document = last_json(capsys)
    assert document["valid"] is True
    plan_json = document["plan"]
    assert schemas.errors("compaction/v1/plan.json", plan_json) == []
    assert plan_json["outcome"] == "compacted"
    assert plan_json["owner"] is None  # the log ends between turns: a standalone bracket
    assert plan_json["region"] == {"start": 2, "end": 4}


def test_plan_text_output(log_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "plan", str(log_file), "--context-window", "100000"]) == 0
    assert "below-threshold" in capsys.readouterr().out


def test_apply_to_a_new_file(log_file: Path, summary_file: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    before = log_file.read_bytes()
    out = tmp_path / "compacted.jsonl"
    code = main(["compact", "apply", str(log_file), "--context-window", "1000",
                 "--summary-file", str(summary_file), "--output", str(out), "--json"])
    assert code == 0
    document = last_json(capsys)
    assert document["written"] == str(out)
    assert log_file.read_bytes() == before
    assert out.read_bytes().startswith(before)
    assert validate_path(out, Level.LOAD).valid
    assert not list(tmp_path.glob(".*.partial"))
    # the output is never replaced
    code = main(["compact", "apply", str(log_file), "--context-window", "1000",
                 "--summary-file", str(summary_file), "--output", str(out), "--json"])
    assert code == 2
    assert last_json(capsys)["error"]["code"] == "CMP_OUTPUT_EXISTS"


def test_apply_in_place_on_a_compressed_log(tmp_path: Path, summary_file: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "session.jsonl.zstd"
    create_log(path, HEADER, _log(), compression="zstd")
    code = main(["compact", "apply", str(path), "--context-window", "1000", "--summary-file",
                 str(summary_file), "--write"])
    assert code == 0
    report = validate_path(path, Level.LOAD)
    assert report.valid and report.events == 12
    capsys.readouterr()
    # now below the threshold: nothing to apply
    code = main(["compact", "apply", str(path), "--context-window", "1000", "--summary-file",
                 str(summary_file), "--write", "--json"])
    assert code == 1
    assert last_json(capsys)["error"]["code"] == "CMP_NOTHING_TO_APPLY"


def test_apply_dry_run_prints_events(log_file: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("summary from stdin"))
    before = log_file.read_bytes()
    code = main(["compact", "apply", str(log_file), "--trigger", "manual", "--summary-file", "-",
                 "--source-command-id", "cmd-1"])
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    events = [json.loads(line) for line in lines if line.startswith("{")]
    assert [e["type"] for e in events] == ["compaction/start", "compaction/summary",
                                           "user/message", "compaction/end"]
    assert events[0]["data"]["sourceCommandId"] == "cmd-1"
    assert events[2]["data"]["content"][1]["text"] == "summary from stdin"
    assert log_file.read_bytes() == before


@pytest.mark.requirement("CMP-CLI-001")
def test_torn_tail_is_refused(log_file: Path, summary_file: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    with open(log_file, "ab") as handle:
        handle.write(b'{"type":"user/mess')
    code = main(["compact", "apply", str(log_file), "--context-window", "1000",
                 "--summary-file", str(summary_file), "--write", "--json"])
    assert code == 1
    assert last_json(capsys)["error"]["code"] == "CMP_LOG_TORN"


@pytest.mark.parametrize(("argv", "code"), [
    (["--region", "nope"], 2),
    (["--config", "/nonexistent/config.json"], 2),
    (["--trigger", "region", "--region", "4:2"], 1),
    (["--trigger", "manual", "--region", "2:4"], 2),
])
@pytest.mark.requirement("CMP-CLI-001")
def test_usage_and_refusals(log_file: Path, argv: list[str], code: int,
                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "plan", str(log_file), *argv]) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err


@pytest.mark.requirement("CMP-CLI-001")
def test_bad_config_is_refused(log_file: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"thresholdRato": 0.5}', encoding="utf-8")
    assert main(["compact", "plan", str(log_file), "--config", str(config), "--json"]) == 1
    error = last_json(capsys)["error"]
    assert error["code"] == "CMP_CONFIG_UNKNOWN_KEY"
    assert schemas.errors("compaction/v1/error.json", error) == []


@pytest.mark.requirement("CMP-CLI-001")
def test_missing_file_is_an_io_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "plan", str(tmp_path / "nope.jsonl"), "--json"]) == 2
    assert last_json(capsys)["error"]["code"] == "CMP_LOG_UNREADABLE"


def test_strict_mode_needs_an_open_turn(log_file: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "plan", str(log_file), "--context-window", "1000", "--strict",
                 "--json"]) == 1
    assert last_json(capsys)["error"]["code"] == "CMP_NO_OPEN_TURN"


def test_concurrent_append_is_detected(log_file: Path) -> None:
    def planner(events: list[dict[str, Any]]) -> Any:
        with open(log_file, "ab") as handle:  # another writer appends meanwhile
            handle.write(b"")
            handle.write(json.dumps(user_message(len(events), "late", time=1)).encode() + b"\n")
        return plan(events, 1000, summarizer=FixedSummarizer("s"), time=3)

    with pytest.raises(CompactionError) as caught:
        apply_to_path(log_file, planner, write=True)
    assert caught.value.code == "CMP_LOG_CHANGED"


def test_json_array_cannot_be_written(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(_log()), encoding="utf-8")

    def planner(events: list[dict[str, Any]]) -> Any:
        return plan(events, 1000, summarizer=FixedSummarizer("s"), time=3)

    assert apply_to_path(path, planner).written is None  # a dry run is fine
    with pytest.raises(CompactionError) as caught:
        apply_to_path(path, planner, write=True)
    assert caught.value.code == "CMP_NOT_WRITABLE"
