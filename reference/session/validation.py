"""Validate a session log at a conformance level (spec chapter ``session/levels``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..problems import Problem
from .levels import Checks, Level
from .pipeline import Batch, Pair, SessionChecker, memory_batches, run_all_batches
from .reader import LogReader, TornTail


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


def validate_path(path: str | Path, level: Level = Level.LOAD, *, session_id: str | None = None,
                  stdin: BinaryIO | None = None, typed: bool = False) -> ValidationReport:
    """Validate a log file (any reader form; ``-`` is stdin); ``typed`` adds the typed layer."""
    reader = LogReader(path, tolerate_torn_tail=level is Level.LOAD, stdin=stdin)
    checker = SessionChecker(Checks.for_level(level))
    typed_found = typed_observer(checker) if typed else None
    problems, failed = run_all_batches(checker, session_batches(reader, checker, session_id,
                                                                handback=True))
    return ValidationReport(
        path=str(path), level=level, events=checker.count, errors=tuple(problems),
        torn=reader.result.torn, form=reader.result.form, failed_level=failed,
        typed=None if typed_found is None else tuple(typed_found),
    )


def typed_observer(checker: SessionChecker) -> list[Problem]:
    """Attach the typed layer to ``checker``; returns the list its problems go to."""
    from .typed import typed_problems

    found: list[Problem] = []

    def observe(event: dict[str, Any], seq: int) -> None:
        if len(found) < MAX_TYPED:
            found.extend(typed_problems(event, seq=seq, line=None))

    checker.observer = observe
    return found


MAX_TYPED = 100


def validate_events(events: Iterable[Any], level: Level = Level.SEED, *,
                    session_id: str = "session", typed: bool = False) -> ValidationReport:
    """Validate in-memory events (no file format involved; ``load`` applies its event rules).
    Every event must be lossless JSON, as if it had been read from text (SES-JSON-001..003)."""
    checker = SessionChecker(Checks.for_level(level), session_id=session_id)
    typed_found = typed_observer(checker) if typed else None
    problems, failed = run_all_batches(checker, memory_batches(events))
    return ValidationReport(path="<memory>", level=level, events=checker.count,
                            errors=tuple(problems), failed_level=failed,
                            typed=None if typed_found is None else tuple(typed_found))


def with_session_id(reader: LogReader, checker: SessionChecker,
                    session_id: str | None) -> Iterator[Pair]:
    """The reader's ``(line, event)`` pairs, with the checker's session id taken from the
    header (or given) before the first event is checked: legacy message ids are built from it.
    """
    pairs = reader.pairs()
    for first in pairs:
        header = reader.result.header
        checker.session_id = session_id or (str(header["id"]) if header else "session")
        yield first
        break
    yield from pairs


def session_batches(reader: LogReader, checker: SessionChecker, session_id: str | None, *,
                    handback: bool = False) -> Iterator[Batch]:
    """:func:`with_session_id` for the reader's batches. ``handback`` (see
    :meth:`LogReader.batches`) only when the batches go to :func:`~.pipeline.run_batches`,
    :func:`~.pipeline.run_all_batches` or :func:`~.pipeline.run_all_outcome`."""
    batches = reader.batches(handback=handback)
    for first in batches:
        header = reader.result.header
        checker.session_id = session_id or (str(header["id"]) if header else "session")
        yield first
        break
    yield from batches
