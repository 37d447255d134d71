"""``dshkit validate`` never passes junk (issue 14, SES-FILE-015..017): every input below exits
1 with a coded problem, at the default level and at ``append``, while a session file that a
crash cut still loads as DSH loads it, with the dropped tail reported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from builders import jsonl_line, session_header

README = Path(__file__).resolve().parents[1] / "README.md"
TURN = '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}'
END = '{"type":"turn/end","seq":1,"time":2,"data":{"turn":1,"reason":{"kind":"completed"}}}'

JUNK: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "LOG_EMPTY"),
    "random-bytes": (bytes(range(0x80, 0x100)) * 16 + b"\n" + bytes(range(0, 0x20)), "JSON_INVALID_UTF8"),
    "hello-world": (b"hello world", "LOG_EMPTY"),
    "forty-two": (b"42", "LOG_EMPTY"),
    "forty-two-line": (b"42\n", "ENVELOPE_NOT_OBJECT"),
    "readme": (README.read_bytes(), "JSON_SYNTAX"),
    "text-3k": (("some prose, " * 256 + "\n").encode(), "JSON_SYNTAX"),
    "empty-array": (b"[]", "LOG_EMPTY"),
    "seq-negative-zero": (TURN.replace('"seq":0', '"seq":-0').encode() + b"\n", "JSON_NEGATIVE_ZERO"),
    "seq-string": (TURN.replace('"seq":0', '"seq":"0"').encode() + b"\n", "ENVELOPE_SEQ"),
    "tail-duplicate-seq": (f"{TURN}\n{END}\n{END}\n".encode(), "SEQ_NOT_CONTIGUOUS"),
}


def _validate(path: Path, *extra: str) -> tuple[int, dict[str, object]]:
    done = subprocess.run([sys.executable, "-m", "dshkit", "validate", "--json", *extra,
                           str(path)], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("level", ["load", "append"])
@pytest.mark.parametrize("name", sorted(JUNK))
def test_junk_is_refused_with_a_code(tmp_path: Path, name: str, level: str) -> None:
    data, code = JUNK[name]
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(data)
    status, out = _validate(path, "--level", level)
    assert status == 1, out
    error = out["error"]
    assert isinstance(error, dict)
    if level == "load" or code not in ("ENVELOPE_SEQ",):
        assert error["code"] == code, out


@pytest.mark.parametrize("level", ["load", "append"])
def test_a_cut_header_is_refused_like_dsh_refuses_it(tmp_path: Path, level: str) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_bytes(jsonl_line(session_header("s"))[:30])
    status, out = _validate(path, "--level", level)
    assert status == 1
    error = out["error"]
    assert isinstance(error, dict) and error["code"] == "FILE_HEADER_MISSING"
    assert "header-less" in str(error["message"])


def test_a_crash_cut_session_file_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(jsonl_line(session_header("s")) + f"{TURN}\n{END}\n".encode()
                     + b'{"type":"turn/sta')
    status, out = _validate(path)
    assert status == 0, out
    assert out["valid"] is True and out["events"] == 2
    assert out["tornTail"] == {"firstLine": 4, "lines": 1, "fragment": True, "reason": None}


def test_form_names_the_reading(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text(f"{TURN}\n", encoding="utf-8")
    status, out = _validate(path, "--form", "dsh")
    assert status == 1
    error = out["error"]
    assert isinstance(error, dict) and error["code"] == "FILE_HEADER_NOT_SESSION"
    assert _validate(path, "--form", "jsonl")[0] == 0


def test_help_explains_the_levels_and_forms() -> None:
    done = subprocess.run([sys.executable, "-m", "dshkit", "validate", "--help"],
                          capture_output=True, text=True, timeout=60)
    flat = "".join(done.stdout.split())  # argparse wraps lines, even at a hyphen
    assert "thestrictest" not in flat
    assert "--form" in flat and "SES-FILE-015" in flat
