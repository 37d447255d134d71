"""Running the command line from tests: in this process (``run_main``) or as a child process
with this checkout's package importable (``dshkit_env``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import dshkit
from dshkit.cli import main


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """``dshkit ARGV`` in this process: (exit status, stdout as JSON or text, stderr)."""
    code = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    try:
        return code, json.loads(out.out), out.err
    except json.JSONDecodeError:
        return code, out.out, out.err


def dshkit_env(*paths: Path, **variables: str) -> dict[str, str]:
    """The environment of a child ``python -m dshkit``: this checkout's package (and ``paths``)
    first on PYTHONPATH, no DSHKIT_MEMORY_DB of the caller's, and ``variables`` set."""
    package_root = Path(dshkit.__file__).resolve().parent.parent
    entries = [*map(str, paths), str(package_root), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in entries if p), **variables}
    env.pop("DSHKIT_MEMORY_DB", None)
    return env


def last_json(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The JSON object on the last line of what the command printed."""
    document: dict[str, Any] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return document
