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

from ..problems import Problem
from .levels import Checks
from .reader import TornTail
from .runlog import LogRun, run_log
from .surface import Replacement


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
              stdin: BinaryIO | None = None, form: str | None = None) -> FoldReport:
    return fold_report(run_log(path, checks=fold_checks(repair), session_id=session_id,
                               stdin=stdin, closers="append" if repair else "none", form=form))


def fold_events(events: Iterable[Any], *, repair: bool = True,
                session_id: str = "session") -> FoldReport:
    return fold_report(run_log(events, checks=fold_checks(repair), session_id=session_id,
                               closers="append" if repair else "none"))


def fold_report(run: LogRun) -> FoldReport:
    """The report of a fold run: its stopping problem, or the surface it ended with (the
    closers folded in when the run appended them)."""
    if run.stop is not None:
        return FoldReport(path=run.path, events=run.stop_events, errors=(run.stop,),
                          torn=run.torn)
    surface = run.surface()
    return FoldReport(
        path=run.path,
        events=run.events + len(run.closers),
        nodes=surface.nodes,
        shadowed=surface.shadowed,
        messages=surface.messages,
        replacements=surface.replacements,
        closers=run.closers,
        replace_generation=surface.replace_generation,
        torn=run.torn,
        header=run.header,
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
              stdin: BinaryIO | None = None, form: str | None = None) -> LoadReport:
    return load_report(run_log(path, checks=fold_checks(True), session_id=session_id,
                               stdin=stdin, closers="append", keep=True, form=form))


def load_events(events: Iterable[Any], *, session_id: str = "session") -> LoadReport:
    return load_report(run_log(events, checks=fold_checks(True), session_id=session_id,
                               closers="append", keep=True))


def load_report(run: LogRun) -> LoadReport:
    if run.stop is not None:
        return LoadReport(path=run.path, errors=(run.stop,))
    return LoadReport(path=run.path, events=run.kept or (), closers=len(run.closers))
