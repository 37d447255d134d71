"""``validate_and_fold``: one pass gives what ``validate_path(LOAD)`` and ``fold_path`` give."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from builders import session_header

from dshkit import cli
from dshkit.reference.session.folding import fold_path
from dshkit.reference.session.levels import Level
from dshkit.reference.session.single_pass import validate_and_fold
from dshkit.reference.session.validation import validate_path
from dshkit.reference.session.writer import Compression, create_log

VECTORS = Path(__file__).parent.parent / "conformance" / "vectors" / "session"
FIXTURES = Path(__file__).parent / "fixtures" / "session"


def _file_logs() -> list[tuple[str, bytes]]:
    logs = []
    for path in sorted(VECTORS.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            log = case.get("input", {})
            if "base64" in log:
                logs.append((case["id"], base64.b64decode(log["base64"])))
            elif "text" in log:
                logs.append((case["id"], str(log["text"]).encode()))
            elif isinstance(log.get("events"), list):
                body = "".join(json.dumps(e) + "\n" for e in log["events"])
                logs.append((case["id"] + "-as-jsonl", body.encode()))
    for path in sorted(FIXTURES.glob("*.jsonl")):
        logs.append((path.name, path.read_bytes()))
    return logs


FILE_LOGS = _file_logs()


def _same_as_two_passes(path: Path, **options: Any) -> None:
    both = validate_and_fold(path, **options)
    typed = options.pop("typed", False)
    assert both.validation == validate_path(path, Level.LOAD, typed=typed, **options)
    assert both.fold == fold_path(path, **options)
    assert both.valid == both.validation.valid


@pytest.mark.parametrize(("case_id", "data"), FILE_LOGS, ids=[c for c, _ in FILE_LOGS])
def test_one_pass_equals_validate_then_fold(tmp_path: Path, case_id: str, data: bytes) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    _same_as_two_passes(path)
    _same_as_two_passes(path, session_id="other")


def test_one_pass_with_the_typed_layer(tmp_path: Path) -> None:
    for name in ("e1.jsonl", "e14.jsonl"):
        path = tmp_path / name
        path.write_bytes((FIXTURES / name).read_bytes())
        _same_as_two_passes(path, typed=True)


def test_one_pass_on_every_form(tmp_path: Path) -> None:
    header = session_header("s", created_at=1)
    events = [json.loads(line) for line in (FIXTURES / "e1.jsonl").read_text().splitlines()]
    compressions: tuple[Compression, ...] = ("none", "zstd")
    for compression in compressions:
        path = tmp_path / f"session-{compression}.jsonl"
        create_log(path, header, events, compression=compression)
        _same_as_two_passes(path)
    missing = tmp_path / "missing.jsonl"
    _same_as_two_passes(missing)
    assert validate_and_fold(missing).fold.errors[0].code == "IO_ERROR"


VALID = [
    {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
    {"type": "user/message", "seq": 1, "time": 2, "surfaceOp": "append", "data": {
        "id": "u1", "role": "user", "content": [{"type": "text", "text": "hello"}],
        "source": {"kind": "user"}}},
    {"type": "step/start", "seq": 2, "time": 3, "data": {"turn": 1, "step": 1}},
]


def test_cli_validate_fold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in VALID))
    assert cli.main(["validate", "--fold", "--json", str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is True
    assert out["fold"] == fold_path(path).to_json()
    assert out["fold"]["closers"] == [3, 4]
    assert cli.main(["validate", "--fold", str(path)]) == 0
    text = capsys.readouterr().out
    assert "valid at level load" in text and "2 repair closer(s)" in text
    invalid = tmp_path / "e1.jsonl"
    invalid.write_bytes((FIXTURES / "e1.jsonl").read_bytes())
    assert cli.main(["validate", "--fold", str(invalid)]) == 1
    text = capsys.readouterr().out
    assert "INVARIANT_STEP_SCOPE" in text and "surface node(s)" in text
    assert cli.main(["validate", "--fold", "--level", "seed", str(path)]) == 2
