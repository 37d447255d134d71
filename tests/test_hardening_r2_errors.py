"""Issue 15 class 7: error paths that ended in exit 3, a traceback or a raw terminal sequence.

Every case runs ``dshkit`` in a child process and states the exit status and, for a refusal,
its code (TOOL-CLI-001, TOOL-CLI-005, TOOL-CLI-011, TOOL-CLI-012). No case may print a
traceback, and no output may hold a raw terminal control or a lone surrogate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hardening import samples as s

Setup = Callable[[Path], None]
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\r")


def _write(name: str, data: bytes) -> Setup:
    def setup(tmp: Path) -> None:
        (tmp / name).write_bytes(data)

    return setup


def _surrogate_log() -> bytes:
    events = [*s.turn(0, 1), s.user(4, "bad @@ surrogate")]
    return s.log(events).replace(b"@@", b"\\ud800")


def _escape_log() -> bytes:
    return s.log([*s.turn(0, 1), s.user(4, "hi \x1b]0;pwned\x07 \x1b[2J \x9b2K")],
                 id="sess\x1b[31mion")


def _open_turn(turn: Any) -> Setup:
    start = {"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": turn}}
    return _write("open.jsonl", s.log([start]))


def _store(tmp: Path) -> None:
    from dshkit.reference.memory import open_provider

    open_provider(tmp / "m.db").close()


def _index(tmp: Path) -> None:
    (tmp / "s.jsonl").write_bytes(s.log(s.turn(0, 1)))
    subprocess.run([sys.executable, "-m", "dshkit", "query", "index", "--db",
                    str(tmp / "idx.sqlite"), str(tmp / "s.jsonl")], check=True,
                   capture_output=True, timeout=120)


def _both(*setups: Setup) -> Setup:
    def setup(tmp: Path) -> None:
        for one in setups:
            one(tmp)

    return setup


@dataclass(frozen=True)
class Case:
    id: str
    args: list[str | bytes]
    exit: int
    code: str | None = None  # the refusal's code (read from the --json envelope)
    setup: Setup | None = None
    stdout: str | None = None  # a file to connect standard output to, e.g. /dev/full
    check: Callable[[str], bool] | None = None  # on standard output
    env: dict[str, str] = field(default_factory=dict)
    bug: str = ""  # set: a known defect, the case is a strict xfail with this reason


SUR = _write("sur.jsonl", _surrogate_log())
ESC = _write("esc.jsonl", _escape_log())
LONG = "n" * 300
BAD = b"caf\xe9"  # Latin-1, not UTF-8


def _no_raw(out: str) -> bool:
    return not any(ch in out for ch in RAW_CONTROLS) and "\\x1b" in out


def _surrogate_escaped(out: str) -> bool:
    return "\\ud800" in out


CASES = [
    Case("fold-surrogate", ["fold", "sur.jsonl"], 0, setup=SUR, check=_surrogate_escaped),
    Case("fold-json-surrogate", ["fold", "--json", "sur.jsonl"], 0, setup=SUR,
         check=lambda out: '"bad \\ud800 surrogate"' in out),
    Case("documents-surrogate", ["query", "documents", "sur.jsonl"], 0, setup=SUR,
         check=_surrogate_escaped),
    Case("documents-json-surrogate", ["query", "documents", "--json", "sur.jsonl"], 0,
         setup=SUR, check=_surrogate_escaped),
    Case("read-surrogate", ["query", "read", "sur.jsonl", "4"], 0, setup=SUR,
         check=_surrogate_escaped),
    Case("read-json-surrogate", ["query", "read", "--json", "sur.jsonl", "4"], 0, setup=SUR,
         check=_surrogate_escaped),
    Case("compact-plan-json-surrogate", ["compact", "plan", "--json", "sur.jsonl"], 0,
         setup=SUR),
    Case("fold-escape-sequences", ["fold", "esc.jsonl"], 0, setup=ESC, check=_no_raw),
    Case("read-escape-sequences", ["query", "read", "esc.jsonl", "4"], 0, setup=ESC,
         check=_no_raw),
    Case("refusal-escape-sequences", ["validate", "no\x1b]0;x\x07such.jsonl"], 2,
         check=lambda out: True),
    Case("seq-from-huge", ["query", "search", "--db", "idx.sqlite", "--json", "--seq-from",
                           str(10**40), "hello"], 2, "USAGE", setup=_index),
    Case("limit-huge", ["query", "search", "--db", "idx.sqlite", "--json", "--limit",
                        str(10**40), "hello"], 2, "USAGE", setup=_index),
    Case("db-under-a-file", ["memory", "--db", "afile/m.db", "--json", "list"], 2, "IO_ERROR",
         setup=_write("afile", b"x")),
    Case("db-name-too-long", ["memory", "--db", f"{LONG}.db", "--json", "list"], 2,
         "IO_ERROR"),
    Case("index-under-a-file", ["query", "index", "--db", "afile/i.sqlite", "--json",
                                "s.jsonl"], 1, "SESSION_QUERY_INDEX_FAILED",
         setup=_both(_write("afile", b"x"), _write("s.jsonl", s.log(s.turn(0, 1))))),
    Case("validate-proc-mem", ["validate", "--json", "/proc/self/mem"], 2, "IO_ERROR"),
    Case("context-window-negative", ["compact", "plan", "--json", "--context-window", "-5",
                                     "esc.jsonl"], 2, "USAGE", setup=ESC),
    Case("context-window-zero", ["compact", "plan", "--json", "--context-window", "0",
                                 "esc.jsonl"], 2, "USAGE", setup=ESC),
    Case("properties-negative", ["conformance", "--json", "--properties", "-1"], 2, "USAGE"),
    Case("output-empty-export", ["memory", "--db", "m.db", "--json", "export", "--format",
                                 "mem0", "--output", ""], 2, "USAGE", setup=_store),
    Case("output-empty-convert", ["convert", "--json", "--from", "mem0", "--to", "hermes",
                                  "--output", "", "in.json"], 2, "USAGE",
         setup=_write("in.json", b'[{"memory": "x"}]')),
    Case("output-empty-compact", ["compact", "apply", "--json", "--output", "", "esc.jsonl"],
         2, "USAGE", setup=ESC),
    Case("stdout-full", ["validate", "--json", "esc.jsonl"], 2, setup=ESC,
         stdout="/dev/full"),
    Case("stdout-full-invalid", ["validate", "--json", "nothere.jsonl"], 2, stdout="/dev/full"),
    Case("goal-turn-zero", ["goal", "--json", "open.jsonl"], 1, setup=_open_turn(0)),
    Case("goal-turn-negative", ["goal", "--json", "open.jsonl"], 1, setup=_open_turn(-3)),
    Case("goal-turn-string", ["goal", "--json", "open.jsonl"], 1, setup=_open_turn("1")),
    Case("repair-turn-string", ["repair", "--write", "--json", "open.jsonl"], 1,
         setup=_open_turn("1")),
    Case("session-id-not-utf8", ["memory", "--db", "m.db", "--json", "--yes", "--session-id",
                                 BAD, "snapshot"], 2, "USAGE", setup=_store),
    Case("cwd-not-utf8", ["memory", "--db", "m.db", "--json", "--yes", "--cwd", b"/w/" + BAD,
                          "add", "--track", "user", "--scope", "workspace", "--text", "x"],
         2, "USAGE", setup=_store),
    Case("agent-preset-not-utf8", ["memory", "--db", "m.db", "--json", "--yes",
                                   "--agent-preset", BAD, "add", "--track", "agent", "--scope",
                                   "workspace", "--text", "x"], 2, "USAGE", setup=_store),
    Case("text-not-utf8", ["memory", "--db", "m.db", "--json", "--yes", "add", "--track",
                           "agent", "--scope", "workspace", "--text", BAD], 2, "USAGE",
         setup=_store),
    Case("query-text-not-utf8", ["query", "search", "--db", "idx.sqlite", "--json", BAD], 2,
         "USAGE", setup=_index),
]


def _run(case: Case, tmp: Path) -> tuple[int, str, str]:
    import dshkit

    src = Path(dshkit.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(src), os.environ.get("PYTHONPATH", "")) if p), **case.env}
    args: list[Any] = [sys.executable, "-m", "dshkit", *case.args]
    if case.stdout is not None:
        with open(case.stdout, "wb") as sink:
            done = subprocess.run(args, cwd=tmp, stdout=sink, stderr=subprocess.PIPE, env=env,
                                  timeout=300, check=False)
        return done.returncode, "", done.stderr.decode("utf-8", "replace")
    done = subprocess.run(args, cwd=tmp, capture_output=True, env=env, timeout=300,
                          check=False)
    return (done.returncode, done.stdout.decode("utf-8", "strict"),
            done.stderr.decode("utf-8", "strict"))


def _param(case: Case) -> Any:
    marks = [pytest.mark.xfail(strict=True, reason=case.bug)] if case.bug else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.requirement("TOOL-CLI-011")
@pytest.mark.requirement("TOOL-CLI-012")
@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_error_path(case: Case, tmp_path: Path) -> None:
    if case.setup is not None:
        case.setup(tmp_path)
    code, out, err = _run(case, tmp_path)
    assert "Traceback" not in err, err
    assert code == case.exit, (out, err)
    assert not any(ch in out + err for ch in RAW_CONTROLS), repr(out + err)
    if case.code is not None:
        assert json.loads(out.splitlines()[-1])["error"]["code"] == case.code, out
    if case.check is not None:
        assert case.check(out), out
