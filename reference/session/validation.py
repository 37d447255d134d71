"""Validate a session log at a conformance level (spec chapter ``session/levels``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..problems import Problem, ProblemError
from .levels import Checks, Level, level_of
from .pipeline import SessionChecker, run
from .reader import Located, LogReader, TornTail


@dataclass(frozen=True, slots=True)
class ValidationReport:
    path: str
    level: Level
    events: int
    errors: tuple[Problem, ...]
    torn: TornTail | None = None
    form: str | None = None

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def failed_level(self) -> Level | None:
        """The lowest level whose checks the first problem belongs to."""
        return level_of(self.errors[0].code) if self.errors else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "valid": self.valid,
            "events": self.events,
            "level": self.level.value,
            "failedLevel": self.failed_level.value if self.failed_level else None,
            "errors": [p.to_json() for p in self.errors],
        }
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


def validate_path(path: str | Path, level: Level = Level.LOAD, *, session_id: str | None = None,
                  stdin: BinaryIO | None = None) -> ValidationReport:
    """Validate a log file (any reader form; ``-`` is stdin)."""
    reader = LogReader(path, tolerate_torn_tail=level is Level.LOAD, stdin=stdin)
    checker = SessionChecker(Checks.for_level(level))
    try:
        iterator = iter(reader)
        first = next(iterator, None)
        if reader.result.header is not None:
            checker.session_id = session_id or str(reader.result.header["id"])
        elif session_id:
            checker.session_id = session_id
        problem = None
        if first is not None:
            problem = run(checker, _chain(first, iterator))
    except ProblemError as exc:
        problem = exc.problem
    return ValidationReport(
        path=str(path), level=level, events=checker.count,
        errors=(problem,) if problem else (), torn=reader.result.torn, form=reader.result.form,
    )


def validate_events(events: Iterable[Any], level: Level = Level.SEED, *,
                    session_id: str = "session") -> ValidationReport:
    """Validate in-memory events (no file format involved; ``load`` applies its event rules)."""
    checker = SessionChecker(Checks.for_level(level), session_id=session_id)
    problem = run(checker, (Located(line=0, event=e) for e in events))
    if problem is not None:
        problem = Problem(code=problem.code, message=problem.message,
                          requirement=problem.requirement, seq=problem.seq, line=None,
                          pointer=problem.pointer, detail=problem.detail)
    return ValidationReport(path="<memory>", level=level, events=checker.count,
                            errors=(problem,) if problem else ())


def _chain(first: Located, rest: Iterable[Located]) -> Iterable[Located]:
    yield first
    yield from rest
