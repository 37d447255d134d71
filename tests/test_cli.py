"""The ``dshkit`` command line: exit codes, JSON shapes, several paths, stdin, errors."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from builders import user_message

from dshkit import __version__, cli
from dshkit.reference.session.header import header_line
from dshkit.reference.session.writer import create_log

Event = dict[str, Any]
REPORT_KEYS = {"path", "valid", "events", "level", "errors"}
PROBLEM_KEYS = {"code", "seq", "line", "pointer", "requirement", "message"}
FOLD_KEYS = {"path", "valid", "events", "nodes", "shadowed", "messages", "closers",
             "replacements", "logOnly", "replaceGeneration"}


def _log(open_turn: bool = False) -> list[Event]:
    events: list[Event] = [
        {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
        user_message(1, "u1", ident="u1"),
        {"type": "step/start", "seq": 2, "time": 2, "data": {"turn": 1, "step": 1}},
        {"type": "assistant/message", "seq": 3, "time": 3, "surfaceOp": "append",
         "data": {"turn": 1, "step": 1, "message": {
             "id": "a1", "role": "assistant", "content": [{"type": "text", "text": "hi"}],
             "source": {"kind": "model", "provider": "mock", "model": "m"}}}},
        {"type": "step/end", "seq": 4, "time": 4, "data": {"turn": 1, "step": 1}},
    ]
    if not open_turn:
        events.append({"type": "turn/end", "seq": 5, "time": 5,
                       "data": {"turn": 1, "reason": {"kind": "completed"}}})
    return events


def _write(path: Path, events: list[Event], *, session_id: str = "s-cli",
           compression: str = "none") -> Path:
    create_log(path, header_line(session_id=session_id, created_at=1), events,
               compression="zstd" if compression == "zstd" else "none")
    return path


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return _write(tmp_path / "good.jsonl", _log())


@pytest.fixture
def open_log(tmp_path: Path) -> Path:
    return _write(tmp_path / "open.jsonl", _log(open_turn=True))


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    """Valid at level seed, invalid at level invariants (turn 2 started while 1 is open)."""
    events = [*_log(open_turn=True)[:2],
              {"type": "turn/start", "seq": 2, "time": 2, "data": {"turn": 2}}]
    return _write(tmp_path / "bad.jsonl", events)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out and "Traceback" not in err
    return code, out, err


def objects(out: str) -> list[dict[str, Any]]:
    """The printed reports; a refused one comes in the refusal envelope, whose error is the
    report's first problem."""
    found = []
    for line in out.splitlines():
        if not line.strip():
            continue
        printed = json.loads(line)
        if printed.get("ok") is False:
            assert printed["error"]["code"] == printed["report"]["errors"][0]["code"]
            printed = printed["report"]
        found.append(printed)
    return found


def test_valid_exits_zero(capsys: pytest.CaptureFixture[str], good: Path) -> None:
    code, out, _ = run(capsys, "validate", str(good))
    assert code == 0
    assert out == f"{good}: valid at level load (6 events)\n"


def test_invalid_exits_one(capsys: pytest.CaptureFixture[str], bad: Path) -> None:
    code, out, _ = run(capsys, "validate", str(bad))
    assert code == 1
    assert "INVARIANT_TURN_ALREADY_OPEN [SES-ENC-002] (line 4, seq 2, /data/turn)" in out


def test_level_option(capsys: pytest.CaptureFixture[str], bad: Path) -> None:
    assert run(capsys, "validate", "--level", "seed", str(bad))[0] == 0
    assert run(capsys, "validate", "--level", "invariants", str(bad))[0] == 1


def test_json_report_shape(capsys: pytest.CaptureFixture[str], good: Path, bad: Path) -> None:
    code, out, _ = run(capsys, "validate", "--json", str(good))
    (report,) = objects(out)
    assert code == 0
    assert set(report) >= REPORT_KEYS
    assert report == {**report, "path": str(good), "valid": True, "events": 6,
                      "level": "load", "errors": []}
    code, out, _ = run(capsys, "validate", "--json", "--level", "invariants", str(bad))
    (report,) = objects(out)
    assert code == 1
    assert report["valid"] is False and report["level"] == "invariants"
    (problem,) = report["errors"]
    assert set(problem) == PROBLEM_KEYS
    assert problem == {"code": "INVARIANT_TURN_ALREADY_OPEN", "seq": 2, "line": 4,
                       "pointer": "/data/turn", "requirement": "SES-ENC-002",
                       "message": problem["message"]}
    assert isinstance(problem["message"], str) and problem["message"]


def test_multiple_paths(capsys: pytest.CaptureFixture[str], good: Path, bad: Path,
                        tmp_path: Path) -> None:
    code, out, _ = run(capsys, "validate", "--json", str(good), str(bad), str(good))
    reports = objects(out)
    assert code == 1  # the worst of the files
    assert [r["path"] for r in reports] == [str(good), str(bad), str(good)]
    assert [r["valid"] for r in reports] == [True, False, True]
    code, out, _ = run(capsys, "validate", str(good), str(tmp_path / "missing.jsonl"), str(bad))
    assert code == 2  # an unreadable path outranks an invalid one
    assert len(out.splitlines()) == 3


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
               tmp_path: Path, compression: str) -> None:
    path = _write(tmp_path / "log", _log(), compression=compression)
    _stdin(monkeypatch, path.read_bytes())
    code, out, _ = run(capsys, "validate", "--json", "-")
    (report,) = objects(out)
    assert code == 0 and report["path"] == "-" and report["valid"] is True
    assert report["events"] == 6


def test_stdin_invalid(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                       bad: Path) -> None:
    _stdin(monkeypatch, bad.read_bytes())
    code, out, _ = run(capsys, "validate", "-")
    assert code == 1 and out.startswith("-: invalid at level load: INVARIANT_TURN_ALREADY_OPEN")


@pytest.mark.parametrize("command", ["validate", "fold", "repair"])
@pytest.mark.parametrize("target", ["directory", "missing"])
def test_unreadable_path_is_a_structured_error(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path, command: str,
                                               target: str) -> None:
    path = tmp_path if target == "directory" else tmp_path / "nope" / "session.jsonl"
    code, out, _ = run(capsys, command, "--json", str(path))
    assert code == 2
    (report,) = objects(out)
    assert report["valid"] is False and report["path"] == str(path)
    (problem,) = report["errors"]
    assert set(problem) == PROBLEM_KEYS
    assert problem["code"] == "IO_ERROR"
    code, out, _ = run(capsys, command, str(path))
    assert code == 2 and "IO_ERROR" in out


@pytest.mark.parametrize("argv", [[], ["validate"], ["validate", "--level", "strict", "x"],
                                  ["frobnicate", "x"], ["fold", "a", "b"]])
def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == "" and "usage:" in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"dshkit {__version__}"


def test_fold_json_shape(capsys: pytest.CaptureFixture[str], open_log: Path) -> None:
    code, out, _ = run(capsys, "fold", "--json", str(open_log))
    (report,) = objects(out)
    assert code == 0
    assert set(report) >= FOLD_KEYS
    assert report["valid"] is True
    assert report["nodes"] == [1, 3] and report["shadowed"] == []
    assert report["closers"] == [5]  # the turn/end that closes turn 1 in memory
    assert report["events"] == 6 and report["logOnly"] == 4
    assert report["replaceGeneration"] == 0 and report["replacements"] == []
    assert [m["id"] for m in report["messages"]] == ["u1", "a1"]


def test_fold_no_repair(capsys: pytest.CaptureFixture[str], open_log: Path) -> None:
    code, out, _ = run(capsys, "fold", "--json", "--no-repair", str(open_log))
    (report,) = objects(out)
    assert code == 0
    assert report["closers"] == [] and report["events"] == 5
    code, out, _ = run(capsys, "fold", str(open_log))
    assert code == 0 and "repair closers (in memory): [5]" in out
    code, out, _ = run(capsys, "fold", "--no-repair", str(open_log))
    assert code == 0 and "repair closers" not in out


def test_fold_replacements(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    summary = user_message(3, "s1", ident="s1")
    summary["surfaceOp"] = {"op": "replace", "start": 0, "end": 1}
    summary["sourceEventSeqs"] = [0, 1]
    path = _write(tmp_path / "r.jsonl", [user_message(0, "m0", ident="m0"),
                                         user_message(1, "m1", ident="m1"),
                                         user_message(2, "m2", ident="m2"),
                                         summary])
    code, out, _ = run(capsys, "fold", "--json", str(path))
    (report,) = objects(out)
    assert code == 0
    assert report["nodes"] == [3, 2] and report["shadowed"] == [0, 1]
    assert report["replaceGeneration"] == 1
    assert report["replacements"] == [{"seq": 3, "start": 0, "end": 1, "shadowedSeqs": [0, 1]}]


def test_fold_invalid_exits_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    broken = user_message(1, "x", ident="x")
    broken["surfaceOp"] = {"op": "replace", "start": 7, "end": 7}
    path = _write(tmp_path / "f.jsonl", [user_message(0, "m0", ident="m0"), broken])
    code, out, _ = run(capsys, "fold", "--json", str(path))
    (report,) = objects(out)
    assert code == 1 and report["valid"] is False
    assert report["errors"][0]["code"] == "SURFACE_REPLACE_START_NOT_FOUND"
    assert set(report["errors"][0]) == PROBLEM_KEYS


def test_fold_session_id_for_legacy_ids(capsys: pytest.CaptureFixture[str],
                                        tmp_path: Path) -> None:
    legacy = {"type": "user/message", "seq": 0, "time": 0, "surfaceOp": "append",
              "data": {"content": [{"type": "text", "text": "old"}], "source": {"kind": "user"}}}
    path = _write(tmp_path / "l.jsonl", [legacy], session_id="from-header")
    code, out, _ = run(capsys, "fold", "--json", str(path))
    assert code == 0
    assert objects(out)[0]["messages"][0]["id"] == "legacy-message:from-header:0"
    code, out, _ = run(capsys, "fold", "--json", "--session-id", "given", str(path))
    assert objects(out)[0]["messages"][0]["id"] == "legacy-message:given:0"
    code, out, _ = run(capsys, "fold", "--json", "--no-repair", str(path))
    assert code == 1  # without the loader's migration the message has no id
    assert objects(out)[0]["errors"][0]["code"] == "MESSAGE_UNIDENTIFIED"


def test_repair_json_shape(capsys: pytest.CaptureFixture[str], open_log: Path,
                           good: Path) -> None:
    code, out, _ = run(capsys, "repair", "--json", str(open_log))
    (report,) = objects(out)
    assert code == 0
    assert {"path", "valid", "closers", "written", "errors"} <= set(report)
    assert report["written"] is False and report["errors"] == []
    assert report["closers"] == [{"type": "turn/end", "seq": 5, "time": 4,
                                  "data": {"turn": 1, "reason": {"kind": "interrupted"}}}]
    code, out, _ = run(capsys, "repair", str(good))
    assert code == 0 and out.strip() == f"{good}: balanced; no closers needed"
    code, out, _ = run(capsys, "repair", str(open_log))
    assert code == 0
    assert json.loads(out) == report["closers"][0]  # one closer per line, compact JSON
