"""Progress is drawn on a terminal's standard error, and never with ``--json``."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("pseudo-terminals are POSIX", allow_module_level=True)

import pty


def _log(path: Path) -> Path:
    lines = [{"type": "session", "version": 0, "id": "s1", "createdAt": 1, "cwd": "/w",
              "delegationDepth": 0}]
    lines += [{"type": "user/message", "seq": seq, "time": seq, "surfaceOp": "append",
               "data": {"id": f"u{seq}", "role": "user",
                        "content": [{"type": "text", "text": f"message {seq}"}],
                        "source": {"kind": "user"}}} for seq in range(50)]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _stderr_on_a_terminal(*argv: str) -> tuple[int, str]:
    """Run ``dshkit ARGV`` with standard error on a pseudo-terminal; its output, and the
    exit status. Standard output goes to a pipe, so only stderr is a terminal."""
    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"}
    env.pop("DSHKIT_NO_PROGRESS", None)
    child = subprocess.Popen([sys.executable, "-m", "dshkit", *argv], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    assert child.stdout is not None
    child.stdout.read()
    return child.wait(timeout=60), seen.decode("utf-8", "replace")


@pytest.mark.parametrize("command", [
    ["fold"], ["validate"], ["compact", "plan", "--context-window", "100000"], ["reference"],
])
def test_progress_on_a_terminal_and_none_with_json(tmp_path: Path, command: list[str]) -> None:
    log = str(_log(tmp_path / "s.jsonl"))
    code, shown = _stderr_on_a_terminal(*command, log)
    assert code == 0
    assert "s.jsonl" in shown and "0:00:0" in shown  # the task and its elapsed time
    code, shown = _stderr_on_a_terminal(*command, log, "--json")
    assert code == 0
    assert shown == ""


def test_query_index_shows_progress(tmp_path: Path) -> None:
    log = str(_log(tmp_path / "s.jsonl"))
    db = str(tmp_path / "index.db")
    code, shown = _stderr_on_a_terminal("query", "index", log, "--db", db)
    assert code == 0 and "indexing" in shown
    code, shown = _stderr_on_a_terminal("query", "index", log, "--db", db, "--json")
    assert code == 0 and shown == ""


@pytest.mark.parametrize("path", ["", ".", "..", "/", "//", "///", "a", "a/", "a/.", "./a",
                                  "a//b", "/tmp/one.jsonl", "dir/../x.jsonl", "a/b/./",
                                  "-", " a b ", "a/.hidden", ".../x", "x/..."])
def test_task_names_are_the_file_names_pathlib_gives(path: str) -> None:
    from pathlib import PurePath

    from dshkit.cli.progress import names

    assert names([path]) == (PurePath(path).name or path)
