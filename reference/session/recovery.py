"""Repair a stored log: close an unclosed turn and cut a torn tail (chapter ``session/repair``).

The closers are computed over the log as a loader sees it. Writing them follows DSH's commit
of a repair: truncate the torn tail, then append (events recovered from an incomplete final
zstd frame first, then the closers) as one batch. Committed events are never rewritten.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..problems import Problem, fail
from .levels import Checks
from .reader import FORM_JSON_ARRAY, LogReader, TornTail
from .runlog import run_log
from .writer import append_events, truncate


@dataclass(frozen=True, slots=True)
class RepairReport:
    path: str
    closers: tuple[dict[str, Any], ...] = ()
    torn: TornTail | None = None
    written: bool = False
    errors: tuple[Problem, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "valid": self.valid,
                               "closers": list(self.closers), "written": self.written,
                               "errors": [p.to_json() for p in self.errors]}
        if self.torn is not None:
            out["tornTail"] = {"firstLine": self.torn.first_line, "lines": self.torn.lines,
                               "fragment": self.torn.fragment}
        return out


def _stamp(path: str | Path) -> tuple[int, int, int] | None:
    """What identifies the bytes a repair read: inode, size and modification time."""
    if str(path) == "-":
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


def repair_path(path: str | Path, *, write: bool = False) -> RepairReport:
    stamp = _stamp(path) if write else None
    # "append" folds the closers in: a closer the fold would refuse (an open turn whose number
    # is not an integer >= 1, say) stops the repair instead of being written (TOOL-CLI-011).
    run = run_log(path, checks=Checks(envelope_and_shapes=True, invariants=False, storage=True),
                  closers="append")
    if run.stop is not None:
        return RepairReport(path=str(path), torn=run.torn, errors=(run.stop,))
    closers = run.closers
    needs_cut = run.torn is not None
    if not write or (not closers and not needs_cut):
        return RepairReport(path=str(path), closers=closers, torn=run.torn)
    if path == "-" or run.form == FORM_JSON_ARRAY:
        error = fail("REPAIR_NOT_WRITABLE", "SES-FILE-010",
                     "only a JSONL or zstd log file can be repaired in place").problem
        return RepairReport(path=str(path), closers=closers, torn=run.torn, errors=(error,))
    if _stamp(path) != stamp:  # a writer appended since the read (TOOL-CLI-014)
        error = fail("REPAIR_LOG_CHANGED", "TOOL-CLI-014",
                     f"{path} changed while it was read for the repair (a writer is still "
                     "appending to it); nothing was written: stop the writer, then repair "
                     "again").problem
        return RepairReport(path=str(path), closers=closers, torn=run.torn, errors=(error,))
    # The events recovered from a torn final zstd frame: read but not committed (SES-FILE-008).
    recovered = [item.event for item in LogReader(path, tolerate_torn_tail=True)
                 if isinstance(item.event, dict)
                 and item.event.get("seq", -1) >= run.committed_events]
    if run.committed_bytes is not None:
        truncate(path, run.committed_bytes)
    append_events(Path(path), [*recovered, *closers], compressed=run.compressed)
    return RepairReport(path=str(path), closers=closers, torn=run.torn, written=True)
