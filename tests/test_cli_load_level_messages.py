"""Derived-view commands read a log at level ``load`` and refuse a log DSH's pure functions
would still answer on; the refusal says so, naming the level and the spec paragraph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dshkit.cli import main


def _shape_damaged(path: Path) -> Path:
    """A user/message whose message has role "assistant": refused at level seed and above
    (MESSAGE_ROLE), though its surface folds."""
    events: list[dict[str, Any]] = [{
        "type": "user/message", "seq": seq, "time": seq, "surfaceOp": "append",
        "data": {"id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": "hi"}],
                 "source": {"kind": "user"}}} for seq in range(2)]
    events[1]["data"]["role"] = "assistant"
    header = {"type": "session", "version": 0, "id": "s1", "createdAt": 1, "cwd": "/w",
              "delegationDepth": 0}
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *events]), encoding="utf-8")
    return path


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(list(argv)) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    error: dict[str, Any] = json.loads(lines[-1])["error"]
    return error


@pytest.mark.requirement("QRY-CLI-001")
def test_query_names_the_level_and_paragraph(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    log = str(_shape_damaged(tmp_path / "s1.jsonl"))
    for argv in (["query", "index", log, "--db", str(tmp_path / "i.db")],
                 ["query", "documents", log]):
        error = _error(capsys, *argv, "--json")
        assert error["code"] == "SESSION_QUERY_CORRUPT_SESSION"
        assert "level load" in error["message"]
        assert "spec/query/documents.md#QRY-SRC-001" in error["message"]


@pytest.mark.requirement("GOAL-CLI-001")
def test_goal_names_the_level_and_paragraph(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    error = _error(capsys, "goal", str(_shape_damaged(tmp_path / "s1.jsonl")), "--json")
    assert error["code"] == "MESSAGE_ROLE"
    assert "level load" in error["message"]
    assert "spec/goal/errors.md#GOAL-CLI-001" in error["message"]


@pytest.mark.requirement("REF-CLI-001")
def test_reference_names_the_level_and_paragraph(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    error = _error(capsys, "reference", str(_shape_damaged(tmp_path / "s1.jsonl")), "--json")
    assert "level load" in error["message"]
    assert "spec/query/documents.md#QRY-SRC-001" in error["message"]
