"""Validate a session log at a conformance level (spec chapter ``session/levels``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from ..problems import Problem
from .forms import nothing_to_judge
from .levels import Level, level_of
from .reader import TornTail
from .runlog import LogRun, run_log

if TYPE_CHECKING:
    from pathlib import Path


@dataclass(frozen=True, slots=True)
class ValidationReport:
    path: str
    level: Level
    events: int
    errors: tuple[Problem, ...]
    torn: TornTail | None = None
    form: str | None = None
    failed_level: Level | None = None
    typed: tuple[Problem, ...] | None = None  # None: the typed layer was not requested

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "valid": self.valid,
            "events": self.events,
            "level": self.level.value,
            "failedLevel": self.failed_level.value if self.failed_level else None,
            "errors": [p.to_json() for p in self.errors],
        }
        if self.typed is not None:
            out["typed"] = {"valid": not self.typed, "errors": [p.to_json() for p in self.typed]}
        if self.form is not None:
            out["form"] = self.form
        if self.torn is not None:
            out["tornTail"] = {
                "firstLine": self.torn.first_line,
                "lines": self.torn.lines,
                "fragment": self.torn.fragment,
                "reason": self.torn.reason.to_json() if self.torn.reason else None,
            }
        return out


def validation_report(run: LogRun, level: Level) -> ValidationReport:
    """The validator's report of a run with every problem kept. A file with no header and no
    committed event is refused here, by the validator (SES-FILE-017); the derived views that
    share the run read it as an empty session."""
    errors, failed = run.problems, run.failed_level
    if run.empty is not None and not errors:
        empty = nothing_to_judge(run.empty).problem
        errors, failed = (empty,), level_of(empty.code)
    return ValidationReport(path=run.path, level=level, events=run.events, errors=errors,
                            torn=run.torn, form=run.form, failed_level=failed,
                            typed=run.typed)


def validate_path(path: str | Path, level: Level = Level.LOAD, *, session_id: str | None = None,
                  stdin: BinaryIO | None = None, typed: bool = False,
                  form: str | None = None) -> ValidationReport:
    """Validate a log file (any reader form, or the one ``form`` names; ``-`` is stdin);
    ``typed`` adds the typed layer."""
    run = run_log(path, checks=level, session_id=session_id, stdin=stdin,
                  tolerate_torn_tail=level is Level.LOAD, every_problem=True, typed=typed,
                  form=form)
    return validation_report(run, level)


def validate_events(events: Iterable[Any], level: Level = Level.SEED, *,
                    session_id: str = "session", typed: bool = False) -> ValidationReport:
    """Validate in-memory events (no file format involved; ``load`` applies its event rules).
    Every event must be lossless JSON, as if it had been read from text (SES-JSON-001..003)."""
    run = run_log(events, checks=level, session_id=session_id, every_problem=True, typed=typed)
    return validation_report(run, level)
