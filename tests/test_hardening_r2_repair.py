"""Issue 15 class 5: ``repair --write`` while a writer appends (TOOL-CLI-014).

A writer (DSH itself, still running) appends between the repair's read and its write. Before
the fix the repair cut the file back to the size it had read, losing the acknowledged events,
or appended its closers after them, leaving a file whose closers break the turn order. Now a
change check right before the write refuses with ``REPAIR_LOG_CHANGED`` and writes nothing,
as ``compact apply --write`` refuses with ``CMP_LOG_CHANGED``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hardening import samples as s

from dshkit.reference.session import recovery
from dshkit.reference.session.recovery import repair_path


def _unclosed(tmp_path: Path, torn: bool) -> Path:
    path = tmp_path / "s.jsonl"
    events = [*s.turn(0, 1), {"type": "turn/start", "seq": 4, "time": 4, "data": {"turn": 2}}]
    path.write_bytes(s.log(events) + (b'{"type":"user/mess' if torn else b""))
    return path


def _racing_writer(monkeypatch: pytest.MonkeyPatch, path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` right after the repair has read it."""
    real = getattr(recovery, "run_log")  # noqa: B009 - the name the repair calls

    def run_then_append(*args: Any, **kwargs: Any) -> Any:
        run = real(*args, **kwargs)
        with open(path, "ab") as handle:
            handle.write(data)
        return run

    monkeypatch.setattr(recovery, "run_log", run_then_append)


@pytest.mark.parametrize("torn", [False, True], ids=["unclosed", "torn-tail"])
@pytest.mark.requirement("TOOL-CLI-014")
def test_repair_refuses_when_the_log_grew(torn: bool, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = _unclosed(tmp_path, torn)
    before = path.read_bytes()
    acknowledged = b'' if torn else s.line(s.user(5, "acknowledged"))
    tail = b'ssage"}\n' if torn else acknowledged
    _racing_writer(monkeypatch, path, tail)
    report = repair_path(path, write=True)
    assert not report.written
    assert [p.code for p in report.errors] == ["REPAIR_LOG_CHANGED"]
    assert path.read_bytes() == before + tail  # nothing cut, nothing appended


def test_repair_still_writes_an_unchanged_log(tmp_path: Path) -> None:
    path = _unclosed(tmp_path, False)
    report = repair_path(path, write=True)
    assert report.written and not report.errors
    assert repair_path(path).closers == ()
