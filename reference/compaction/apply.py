"""Append a compaction plan to a stored log (spec chapter ``compaction/planner``, CMP-APP).

The log is read as stored (a torn tail is refused: repair it first), checked at level
``invariants`` and by the bracket companion, planned, and the planned events are checked again
together with the log before anything is written. ``write`` appends them in place as one batch
(one zstd frame for a compressed log) with :func:`dshkit.reference.session.writer.append_events`,
which cuts the file back if the write fails; ``output`` publishes a new file (the original
bytes plus the batch) under a name that must not exist yet.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..problems import ProblemError
from ..session.levels import Level
from ..session.reader import FORM_JSON_ARRAY
from ..session.runlog import LogRun, run_log
from ..session.validation import validate_events
from ..session.writer import append_events, atomic_replace_copy
from .brackets import check_brackets
from .errors import CompactionError
from .planner import Plan

Event = dict[str, Any]
Planner = Callable[[list[Event]], Plan]


@dataclass
class ApplyReport:
    path: str
    plan: Plan | None = None
    written: str | None = None  # the file written, if any
    events: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "valid": True, "written": self.written,
                               "eventsBefore": self.events}
        if self.plan is not None:
            out["plan"] = self.plan.to_json()
        return out


def _stamp(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


# Where each reading level is required: applying checks `invariants` (CMP-APP-001); planning
# checks only what the planner itself needs, the same in the API and the command (CMP-PLN-002).
_LEVEL_RULE = {Level.INVARIANTS: "CMP-APP-001", Level.SEED: "CMP-PLN-002"}


def read_log(path: str | Path, level: Level = Level.INVARIANTS
             ) -> tuple[list[Event], LogRun]:
    """The stored events of a log file, refusing a torn tail and a log that fails ``level``."""
    rule = _LEVEL_RULE.get(level, "CMP-APP-001")
    run = run_log(path, checks=level, every_problem=True, keep=True)
    if run.unreadable is not None:
        problem = run.unreadable
        raise CompactionError("CMP_LOG_UNREADABLE", "CMP-APP-001",
                              f"cannot read {path}: {problem.code}: {problem.message}",
                              session=problem.code)
    if run.torn is not None:
        raise CompactionError("CMP_LOG_TORN", "CMP-APP-001",
                              f"{path} ends in a torn tail; run `dshkit repair --write` first")
    if run.problems:
        problem = run.problems[0]
        raise CompactionError("CMP_LOG_INVALID", rule,
                              f"{path} is not valid at level {level.value}: {problem.code} at "
                              f"seq {problem.seq}: {problem.message} (required by "
                              f"spec/compaction/planner.md#{rule})", session=problem.code,
                              seq=problem.seq)
    return list(run.kept or ()), run


def apply_to_path(path: str | Path, planner: Planner, *, write: bool = False,
                  output: str | Path | None = None) -> ApplyReport:
    """Plan over the stored log and, when asked, append the plan (CMP-APP-001..004)."""
    source = Path(path)
    if write and output is not None:
        raise CompactionError("CMP_APPLY_USAGE", "CMP-APP-003",
                              "choose --write or --output, not both")
    if (write or output is not None) and str(path) == "-":
        raise CompactionError("CMP_NOT_WRITABLE", "CMP-APP-003",
                              "standard input cannot be written; use --output with a file")
    stamp = _stamp(source) if str(path) != "-" else None
    events, run = read_log(path)
    planned = planner(events)
    report = ApplyReport(path=str(path), plan=planned, events=len(events))
    if planned.outcome not in ("compacted", "pruned"):
        code = "CMP_SUMMARY_FAILED" if planned.outcome == "failed" else "CMP_NOTHING_TO_APPLY"
        detail = planned.failure.message if planned.failure else planned.reason
        raise CompactionError(code, "CMP-APP-002",
                              f"nothing was appended: {planned.outcome} ({detail})",
                              outcome=planned.outcome, reason=planned.reason)
    combined = [*events, *planned.events]
    check = validate_events(combined, Level.INVARIANTS)
    if not check.valid:  # pragma: no cover - the planner's events are valid by construction
        problem = check.errors[0]
        raise CompactionError("CMP_INTERNAL", "CMP-APP-002",
                              f"the planned events would make the log invalid: {problem.code}: "
                              f"{problem.message}")
    check_brackets(combined)
    if not write and output is None:
        return report
    if run.form == FORM_JSON_ARRAY:
        raise CompactionError("CMP_NOT_WRITABLE", "CMP-APP-003",
                              "only a JSONL or zstd log can be appended to; this is a JSON array")
    if write:
        if stamp is not None and _stamp(source) != stamp:
            raise CompactionError("CMP_LOG_CHANGED", "CMP-APP-004",
                                  f"{path} changed while the plan was made; nothing was written")
        _append(source, planned.events, run.compressed)
        report.written = str(source)
        return report
    assert output is not None
    _publish_copy(source, Path(output), planned.events, run.compressed)
    report.written = str(output)
    return report


def _append(path: Path, events: list[Event], compressed: bool) -> None:
    try:
        append_events(path, events, compressed=compressed, pack_chunks=False)
    except ProblemError as exc:
        raise CompactionError("CMP_WRITE_FAILED", "CMP-APP-003", exc.problem.message) from None
    except OSError as exc:
        raise CompactionError("CMP_WRITE_FAILED", "CMP-APP-003",
                              f"cannot write {path}: {exc.strerror or exc}") from None


def _publish_copy(source: Path, target: Path, events: list[Event], compressed: bool) -> None:
    """Copy, append, then link the finished file to its name: readers never see a half file
    and an existing name is never replaced."""
    if target.exists():
        raise CompactionError("CMP_OUTPUT_EXISTS", "CMP-APP-003",
                              f"{target} already exists; --output never replaces a file")
    temp = target.parent / f".{target.name}.{secrets.token_hex(6)}.partial"
    try:
        try:
            atomic_replace_copy(source, temp)
        except ProblemError as exc:
            raise CompactionError("CMP_WRITE_FAILED", "CMP-APP-003",
                                  exc.problem.message) from None
        _append(temp, events, compressed)
        try:
            os.link(temp, target)
        except FileExistsError:
            raise CompactionError("CMP_OUTPUT_EXISTS", "CMP-APP-003",
                                  f"{target} already exists; --output never replaces a file"
                                  ) from None
        except OSError as exc:
            raise CompactionError("CMP_WRITE_FAILED", "CMP-APP-003",
                                  f"cannot create {target}: {exc.strerror or exc}") from None
        fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        temp.unlink(missing_ok=True)


__all__ = ["ApplyReport", "apply_to_path", "read_log"]
