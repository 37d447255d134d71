"""``dshkit reference`` on bare logs: session ids, working directories and references given on
the command line, and the mention syntax shown and made."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dshkit.cli import main
from dshkit.reference.projection import parse_text


def _bare(path: Path, texts: list[str]) -> Path:
    """A JSONL event list without a session header."""
    lines = [{"type": "user/message", "seq": seq, "time": seq, "surfaceOp": "append",
              "data": {"id": f"u{seq}", "role": "user",
                       "content": [{"type": "text", "text": text}],
                       "source": {"kind": "user"}}} for seq, text in enumerate(texts)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out = capsys.readouterr().out
    try:
        return code, json.loads(out)
    except json.JSONDecodeError:
        return code, out


@pytest.mark.requirement("REF-CLI-002")
def test_session_id_cwd_and_ref_on_a_bare_log(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    log = _bare(tmp_path / "big.jsonl", ["hello there"])
    code, document = _run(capsys, "reference", str(log), "--session-id", "s-big", "--cwd",
                          "/work/big", "--ref", "s-big", "--json")
    assert code == 0
    [row] = document["references"]
    assert row["sessionId"] == "s-big"
    assert '"sessionId":"s-big"' in document["prompt"]
    assert '"cwd":"/work/big"' in document["prompt"]
    assert "hello there" in document["prompt"]
    code, text = _run(capsys, "reference", str(log), "--session-id", "s-big", "--cwd",
                      "/work/big", "--ref", "s-big")
    assert code == 0 and "s-big" in text and "cwd /work/big" in text


@pytest.mark.requirement("REF-CLI-002")
def test_a_ref_to_a_session_not_given_is_refused(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    log = _bare(tmp_path / "big.jsonl", ["hello"])
    code, document = _run(capsys, "reference", str(log), "--ref", "other", "--json")
    assert code == 1
    assert document["ok"] is False


@pytest.mark.requirement("REF-CLI-002")
def test_more_session_ids_than_paths_is_a_usage_error(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    log = _bare(tmp_path / "big.jsonl", ["hello"])
    code, document = _run(capsys, "reference", str(log), "--session-id", "a", "--session-id",
                          "b", "--json")
    assert code == 2
    assert document["error"]["flag"] == "--session-id"


@pytest.mark.requirement("REF-CLI-002")
def test_mention_is_made_and_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _run(capsys, "reference", "--mention", "s-big", "--label", "big one")
    assert code == 0
    mention = text.strip()
    assert mention.startswith("@[big one](dsh-session:")
    parsed = parse_text(f"see {mention}")
    assert [r.to_json() for r in parsed.references] == [{"sessionId": "s-big",
                                                          "label": "big one"}]
    code, document = _run(capsys, "reference", "--mention", "s-big", "--json")
    assert code == 0 and document["mention"].startswith("@[s-big](dsh-session:")


def test_help_shows_the_mention_syntax() -> None:
    done = subprocess.run([sys.executable, "-m", "dshkit", "reference", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "@[label](dsh-session:" in done.stdout
    assert "@[big](dsh-session:InMtYmlnIg)" in done.stdout
