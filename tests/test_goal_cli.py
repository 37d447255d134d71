"""``dshkit goal`` on real log files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_support import last_json

from dshkit import schemas
from dshkit.cli import main
from dshkit.reference.goal import GoalService
from dshkit.reference.session.writer import create_log

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 1, "cwd": "/w",
          "delegationDepth": 0}


def _goal_log() -> list[dict[str, Any]]:
    service = GoalService(clock=lambda: 100, new_id=lambda: "goal-1")
    service.create("ship it", 3)
    service.admit_round()
    service.block({"id": "goal-1", "revision": 1}, {"code": "needs-input", "message": "Pick."})
    return service.events


def _write(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER, events)
    return path


@pytest.mark.requirement("GOAL-CLI-001")
def test_goal_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _goal_log())
    assert main(["goal", str(path), "--json"]) == 0
    document = last_json(capsys)
    assert document["valid"] is True
    state = document["state"]
    assert schemas.errors("goal/v1/folded-goal.json", state) == []
    assert state["goal"]["phase"] == "blocked"
    assert state["roundsStarted"] == 1
    assert state["lastRef"] == {"id": "goal-1", "revision": 2}


def test_goal_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _goal_log())
    assert main(["goal", str(path)]) == 0
    out = capsys.readouterr().out
    assert "goal goal-1 revision 2: blocked" in out
    assert "rounds: 1 of 3" in out
    assert "needs-input: Pick." in out


def test_no_goal_and_cleared_goal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    service = GoalService(clock=lambda: 5, new_id=lambda: "goal-9")
    service.create("x")
    service.clear({"id": "goal-9", "revision": 1})
    assert main(["goal", str(_write(tmp_path, service.events))]) == 0
    assert "no current goal (last: goal-9 revision 2, cleared)" in capsys.readouterr().out


@pytest.mark.requirement("GOAL-CLI-001")
def test_refused_goal_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = _goal_log()
    bad = json.loads(json.dumps(events[0]))
    bad["seq"] = len(events)
    events.append(bad)  # a second create of the same id
    assert main(["goal", str(_write(tmp_path, events)), "--json"]) == 1
    error = last_json(capsys)["error"]
    assert error["code"] == "GOAL_CREATE_REFUSED"
    assert error["seq"] == len(events) - 1
    # the envelope's error is the chapter's error plus its own details and path
    chapter = {k: v for k, v in error.items() if k not in ("details", "path")}
    assert schemas.errors("goal/v1/error.json", chapter) == []


@pytest.mark.requirement("GOAL-CLI-001")
def test_unloadable_log_and_missing_file(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type":"session","version":99,"id":"s"}\n', encoding="utf-8")
    assert main(["goal", str(broken)]) == 1
    assert main(["goal", str(tmp_path / "missing.jsonl"), "--json"]) == 2
    assert last_json(capsys)["error"]["code"] == "IO_ERROR"
