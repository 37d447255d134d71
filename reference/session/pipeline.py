"""One pass over a log: every check of the chosen level, the fold, and repair tracking.

The checker keeps only what the spec's algorithms need (the current surface, the open
turn/step and its pending calls), so memory does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..problems import Problem, ProblemError, fail
from . import legacy
from .checks import (
    check_envelope,
    check_message_shape,
    check_request_header_shape,
    refuse_header_delta,
    refuse_header_fallback,
)
from .invariants import EnclosureTrace
from .levels import Checks
from .reader import Located
from .repair import RepairTracker
from .surface import SurfaceFold
from .vocabulary import KNOWN_EVENT_TYPES, SURFACE_EVENT_TYPES

Event = dict[str, Any]


@dataclass
class SessionChecker:
    checks: Checks
    session_id: str = "session"
    fold: SurfaceFold = field(default_factory=SurfaceFold)
    trace: EnclosureTrace = field(default_factory=EnclosureTrace)
    tracker: RepairTracker = field(default_factory=RepairTracker)
    count: int = 0
    kept: list[Event] | None = None  # set to a list to keep every event as checked

    def push(self, event: Any, *, line: int | None = None) -> None:
        """Check and absorb one event; raises :class:`ProblemError` located at seq and line."""
        seq = event.get("seq") if isinstance(event, dict) else None
        seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else None
        try:
            self._push(event)
        except ProblemError as exc:
            raise ProblemError(exc.problem.located(seq=seq, line=line)) from None
        self.count += 1

    def _push(self, event: Any) -> None:
        # The order follows DSH's seed constructor, so the first problem reported matches.
        if not isinstance(event, dict):
            raise fail("ENVELOPE_NOT_OBJECT", "SES-ENV-001", "an event must be a JSON object")
        checks = self.checks
        if checks.storage:
            for problem in (refuse_header_delta(event), legacy.refuse_retired(event),
                            refuse_header_fallback(event)):
                if problem is not None:
                    raise problem
            event = legacy.normalise(event, self.session_id, self._message_id_of)
        problem = refuse_header_delta(event)
        if problem is None and checks.envelope_and_shapes:
            problem = check_envelope(event) or self._shape(event)
        problem = problem or refuse_header_fallback(event)
        if problem is not None:
            raise problem
        if checks.storage:
            self._refuse_unknown(event)
        plan = self.fold.check(event)
        if checks.invariants:
            self.trace.push(event)
        self.fold.apply(event, plan)
        self.tracker.push(event)
        if self.kept is not None:
            self.kept.append(event)

    def _shape(self, event: Event) -> ProblemError | None:
        kind = event["type"]
        if kind in SURFACE_EVENT_TYPES:
            return check_message_shape(event)
        if kind == "request/header":
            return check_request_header_shape(event)
        return None

    def _refuse_unknown(self, event: Event) -> None:
        kind = event.get("type")
        if kind not in KNOWN_EVENT_TYPES and event.get("ignorable") is not True:
            raise fail("UNKNOWN_EVENT_TYPE", "SES-UNK-002",
                       f'event type "{kind}" is unknown to this reader and not marked ignorable; '
                       "refusing to interpret the log (it was likely written by a newer harness)",
                       pointer="/type")

    def _message_id_of(self, seq: int) -> str | None:
        if not self.fold.is_current(seq):
            return None
        event = self.fold.event(seq)
        data = event.get("data")
        message = data if event.get("type") == "user/message" else (
            data.get("message") if isinstance(data, dict) else None)
        ident = message.get("id") if isinstance(message, dict) else None
        return ident if isinstance(ident, str) else None

    def closers(self) -> list[Event]:
        return self.tracker.closers()

    def close(self) -> list[Event]:
        """Append the repair closers to the fold (the loader's view); returns them."""
        closers = self.tracker.closers()
        for event in closers:
            self.push(event)
        return closers


def run(checker: SessionChecker, located: Iterable[Located]) -> Problem | None:
    """Feed a whole log; returns the first problem (errors as values) or None."""
    try:
        for item in located:
            checker.push(item.event, line=item.line)
    except ProblemError as exc:
        return exc.problem
    return None
