"""The reference schemas accept what the reference produces and refuse what it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import session_header

from dshkit.cli import main
from dshkit.reference.projection import (
    ReferenceConfig,
    SurfaceSnapshot,
    list_candidates,
    prepare,
    snapshots_resolver,
)
from dshkit.schemas import validator

SNAP = SurfaceSnapshot({"id": "s-1", "cwd": "/w"}, 4, (
    {"type": "user/message", "seq": 0, "time": 0, "surfaceOp": "append",
     "data": {"id": "u0", "role": "user", "content": [{"type": "text", "text": "<hi>"}],
              "source": {"kind": "user"}}},))


def test_context_message_and_data() -> None:
    prepared = prepare("t", [], [{"sessionId": "s-1", "label": "One"}],
                       snapshots_resolver({"s-1": SNAP}), ReferenceConfig())
    assert prepared.additional_context is not None
    validator("reference/v1/context-message.json").validate(prepared.additional_context)
    validator("reference/v1/message-source.json").validate(
        prepared.additional_context["source"])
    validator("reference/v1/snapshot-data.json").validate(prepared.sources[0].retained.data)


def test_candidates_config_inputs() -> None:
    for candidate in list_candidates([{"id": "a", "createdAt": 1, "cwd": "/w"}], {"id": "t"}):
        validator("reference/v1/candidate.json").validate(candidate.to_json())
    validator("reference/v1/config.json").validate({"maxReferences": 2})
    assert not validator("reference/v1/config.json").is_valid({"maxReferences": 4})
    assert not validator("reference/v1/reference-input.json").is_valid(
        {"sessionId": "a", "label": None})


def test_cli_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "a.jsonl"
    log.write_text(json.dumps(session_header("s-1", created_at=1)) + "\n"
                   + json.dumps(SNAP.events[0]) + "\n",
                   encoding="utf-8")
    check = validator("reference/v1/cli-output.json")
    for argv in ([str(log), "--json"], [str(log), "--json", "--budget", "10"]):
        main(["reference", *argv])
        check.validate(json.loads(capsys.readouterr().out))
