"""``dshkit reference`` end to end."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from cli_support import run_main


def _write(path: Path, session_id: str, texts: list[str], cwd: str = "/w") -> Path:
    lines = [{"type": "session", "version": 0, "id": session_id, "createdAt": 1000, "cwd": cwd,
              "delegationDepth": 0}]
    for seq, text in enumerate(texts):
        lines.append({"type": "user/message", "seq": seq, "time": seq, "surfaceOp": "append",
                      "data": {"id": f"u{seq}", "role": "user",
                               "content": [{"type": "text", "text": text}],
                               "source": {"kind": "user"}}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_text_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _write(tmp_path / "a.jsonl", "s-1", ["first", "second"])
    code, out, _ = run_main(capsys, "reference", str(log), "--label", "Build log")
    assert code == 0
    assert out.startswith("## Referenced sessions\n")
    assert '"label":"Build log"' in out
    assert "accounting:\n- s-1 (\"Build log\"): 2/2 messages kept" in out


@pytest.mark.requirement("REF-CLI-001")
def test_json_output_and_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _write(tmp_path / "a.jsonl", "s-1", ["x" * 300, "newest"])
    before = hashlib.sha256(log.read_bytes()).hexdigest()
    code, out, _ = run_main(capsys, "reference", str(log), "--budget", "150", "--json")
    assert code == 0 and out["valid"] is True
    ref = out["references"][0]
    assert ref["size"] <= 150 and ref["budget"] == 150 and ref["truncated"] is True
    assert ref["uri"] == "dsh-session:InMtMSI" and ref["mention"] == "@[s-1](dsh-session:InMtMSI)"
    assert out["message"]["source"]["kind"] == "session-reference"
    assert hashlib.sha256(log.read_bytes()).hexdigest() == before  # REF-SCO-002


def test_mentions_resolve_only_given_logs(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    log = _write(tmp_path / "a.jsonl", "s-1", ["hello"])
    _write(tmp_path / "other.jsonl", "other", ["not given"])
    text = "see @[A](dsh-session:InMtMSI) and dsh-session:Im90aGVyIg"
    code, out, _ = run_main(capsys, "reference", str(log), "--text", text, "--json")
    assert code == 1
    assert out["error"]["code"] == "SESSION_REFERENCE_READ_FAILED"
    code, out, _ = run_main(capsys, "reference", str(log), "--text", "see @[A](dsh-session:InMtMSI)",
                        "--json")
    assert code == 0 and out["text"] == "see @A"


@pytest.mark.parametrize(("argv", "code", "error"), [
    (["--budget", "16"], 1, "SESSION_REFERENCE_BUDGET_EXCEEDED"),
    (["--budget", "0"], 2, "SESSION_REFERENCE_INVALID_CONFIG"),
    (["--target", "s-1"], 1, "SESSION_REFERENCE_SELF_REFERENCE"),
    (["--text", "@[x](dsh-session:%%%)"], 1, "SESSION_REFERENCE_INVALID_REFERENCE"),
])
@pytest.mark.requirement("REF-CLI-001")
def test_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                  code: int, error: str) -> None:
    log = _write(tmp_path / "a.jsonl", "s-1", ["hello"])
    got, out, _ = run_main(capsys, "reference", str(log), *argv, "--json")
    assert got == code and out["error"]["code"] == error


@pytest.mark.requirement("REF-CLI-001")
def test_too_many_and_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = [str(_write(tmp_path / f"{i}.jsonl", f"s{i}", ["x"])) for i in range(4)]
    code, out, _ = run_main(capsys, "reference", *logs, "--json")
    assert code == 1 and out["error"]["code"] == "SESSION_REFERENCE_TOO_MANY"
    code, _, err = run_main(capsys, "reference", str(tmp_path / "missing.jsonl"))
    assert code == 2 and err.startswith("SESSION_REFERENCE_READ_FAILED: ")
    assert "Traceback" not in err
