"""Fold a session log into what the model sees (spec chapter ``session/surface``).

By default the log is folded as a loader sees it (SES-FILE-011): torn tail dropped, legacy
shapes normalised, unknown types refused unless ignorable, and an unclosed turn closed in
memory by the repair closers. ``repair=False`` folds exactly what is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..problems import Problem, ProblemError
from .levels import Checks
from .pipeline import SessionChecker, memory_batches, run_batches
from .reader import LogReader, TornTail
from .surface import Replacement, derive_messages
from .validation import session_batches


@dataclass(frozen=True, slots=True)
class FoldReport:
    path: str
    events: int
    nodes: tuple[int, ...] = ()
    shadowed: tuple[int, ...] = ()
    messages: tuple[dict[str, Any], ...] = ()
    replacements: tuple[Replacement, ...] = ()
    closers: tuple[dict[str, Any], ...] = ()
    replace_generation: int = 0
    errors: tuple[Problem, ...] = ()
    torn: TornTail | None = None
    header: dict[str, Any] | None = field(default=None)

    @property
    def valid(self) -> bool:
        return not self.errors

    @property
    def log_only(self) -> int:
        """How many seqs are neither current nor shadowed (SES-SURF-010)."""
        return self.events - len(self.nodes) - len(self.shadowed)

    def to_json(self) -> dict[str, Any]:
        if self.errors:
            return {"path": self.path, "valid": False, "events": self.events,
                    "errors": [p.to_json() for p in self.errors]}
        return {
            "path": self.path,
            "valid": True,
            "events": self.events,
            "nodes": list(self.nodes),
            "shadowed": list(self.shadowed),
            "logOnly": self.log_only,
            "replaceGeneration": self.replace_generation,
            "replacements": [
                {"seq": r.seq, "start": r.start, "end": r.end, "shadowedSeqs": list(r.shadowed)}
                for r in self.replacements
            ],
            "closers": [c["seq"] for c in self.closers],
            "messages": list(self.messages),
        }


def fold_checks(repair: bool) -> Checks:
    """The checks a fold runs: the seed level's, plus the loader's storage rules with repair."""
    return Checks(envelope_and_shapes=True, invariants=False, storage=repair, repair=repair)


def fold_path(path: str | Path, *, repair: bool = True, session_id: str | None = None,
              stdin: BinaryIO | None = None) -> FoldReport:
    reader = LogReader(path, tolerate_torn_tail=True, stdin=stdin)
    checker = SessionChecker(fold_checks(repair))
    problem = run_batches(checker, session_batches(reader, checker, session_id))
    return fold_report(str(path), checker, problem, repair, reader.result.torn,
                   reader.result.header)


def fold_events(events: Iterable[Any], *, repair: bool = True,
                session_id: str = "session") -> FoldReport:
    checker = SessionChecker(fold_checks(repair), session_id=session_id)
    problem = run_batches(checker, memory_batches(events))
    return fold_report("<memory>", checker, problem, repair, None, None)


def fold_report(path: str, checker: SessionChecker, problem: Problem | None, repair: bool,
                torn: TornTail | None, header: dict[str, Any] | None) -> FoldReport:
    """The report of a fold run that ended with ``problem`` (None: the log folds): on
    success the closers are pushed (with ``repair``) and the messages derived."""
    if problem is not None:
        return FoldReport(path=path, events=checker.count, errors=(problem,), torn=torn)
    closers: list[dict[str, Any]] = []
    if repair:
        try:
            closers = checker.close()
        except ProblemError as exc:  # closers are valid by construction; report if not
            return FoldReport(path=path, events=checker.count, errors=(exc.problem,), torn=torn)
    fold = checker.fold
    return FoldReport(
        path=path,
        events=checker.count,
        nodes=tuple(fold.nodes),
        shadowed=tuple(fold.shadowed),
        messages=tuple(derive_messages(fold)),
        replacements=tuple(fold.replacements),
        closers=tuple(closers),
        replace_generation=fold.replace_generation,
        torn=torn,
        header=header,
    )


@dataclass(frozen=True, slots=True)
class LoadReport:
    """The events a loader ends up with: torn tail dropped, legacy shapes normalised,
    repair closers appended (SES-FILE-011). Holds the whole log: only for callers that ask."""

    path: str
    events: tuple[dict[str, Any], ...] = ()
    closers: int = 0
    errors: tuple[Problem, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.errors


def load_path(path: str | Path, *, session_id: str | None = None,
              stdin: BinaryIO | None = None) -> LoadReport:
    reader = LogReader(path, tolerate_torn_tail=True, stdin=stdin)
    checker = SessionChecker(fold_checks(True), kept=[])
    problem = run_batches(checker, session_batches(reader, checker, session_id))
    closers = [] if problem else checker.close()
    if problem is not None:
        return LoadReport(path=str(path), errors=(problem,))
    return LoadReport(path=str(path), events=tuple(checker.kept or ()), closers=len(closers))


def load_events(events: Iterable[Any], *, session_id: str = "session") -> LoadReport:
    checker = SessionChecker(fold_checks(True), session_id=session_id, kept=[])
    problem = run_batches(checker, memory_batches(events))
    if problem is not None:
        return LoadReport(path="<memory>", errors=(problem,))
    closers = checker.close()
    return LoadReport(path="<memory>", events=tuple(checker.kept or ()), closers=len(closers))
