"""One pass over a log: every check of the chosen level, the fold, and repair tracking.

The checker keeps only what the spec's algorithms need (the current surface, the open
turn/step and its pending calls), so memory does not grow with the log.

:func:`run_batches` and :func:`run_all_batches` (and :func:`run`, :func:`run_all` for
``(line, event)`` pairs, which a :class:`~.reader.Located` is) feed events through the fast
path of :mod:`.fastpath` first and through :meth:`SessionChecker.push`, the general path, when
the fast path declines an event. Events given in memory, as Python values rather than text,
enter through :func:`memory_batches`, which checks that each is lossless JSON first
(SES-JSON-001..003), as the reader's parser does for text. While they run their own code they
pause the garbage collector: a log is a stream of acyclic JSON values that reference counting
frees, and the collector would otherwise walk the growing surface again and again.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..json.codec import check_lossless
from ..problems import Problem, ProblemError, fail
from . import legacy
from .checks import (
    check_envelope,
    check_message_shape,
    check_request_header_shape,
    is_nonneg_safe_int,
    refuse_header_delta,
    refuse_header_fallback,
)
from .fastpath import FastPath
from .fastpath import absorber as _absorber
from .levels import Level, level_of
from .reader import DeferredRun
from .state import CheckState
from .vocabulary import KNOWN_EVENT_TYPES, SURFACE_EVENT_TYPES

Event = dict[str, Any]
#: What the runs consume: ``(physical line or None, event)``; a ``Located`` is one.
Pair = tuple[int | None, Any]
#: Or batches of events from consecutive lines, as :meth:`LogReader.batches` gives them:
#: ``(line of the first event, line step, events)``.
Batch = tuple[int | None, int, Sequence[Any]]


class EventProblem(ProblemError):
    """The problem reported for one event, with the lowest level any of its problems has."""

    def __init__(self, problem: Problem, level: Level) -> None:
        super().__init__(problem)
        self.level = level

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return type(self), (self.problem, self.level)


class SessionChecker(CheckState):
    """The general path: every check of the level on one event at a time, over the state of
    :class:`~.state.CheckState` (which the fast path moves on too)."""

    def push(self, event: Any, *, line: int | None = None) -> None:
        """Check and absorb one event; raises :class:`ProblemError` located at seq and line."""
        seq = event.get("seq") if isinstance(event, dict) else None
        if not is_nonneg_safe_int(seq):
            seq = self.count  # a broken seq is reported by the event's position
        try:
            self._push(event)
        except EventProblem as exc:
            raise EventProblem(exc.problem.located(seq=seq, line=line), exc.level) from None
        except ProblemError as exc:
            raise ProblemError(exc.problem.located(seq=seq, line=line)) from None
        finally:
            self.count += 1

    def _push(self, raw: Any) -> None:
        """Run every check of the level on one event.

        Each state machine (surface, enclosure) absorbs the event only if its own check passed,
        so a refused event cannot cause a cascade of follow-on problems. Of the event's
        problems, the first in DSH's order of checks is reported, marked with the lowest level
        any of them belongs to (SES-LVL-005).
        """
        if not isinstance(raw, dict):
            self.fold.skip(None)
            raise fail("ENVELOPE_NOT_OBJECT", "SES-ENV-001", "an event must be a JSON object")
        checks = self.checks
        found: list[ProblemError | None] = []
        event = raw
        if checks.storage:
            # DSH's loader: retired shapes, legacy migration, message shapes, vocabulary, then
            # the seed constructor's envelope and surface checks.
            found += [refuse_header_delta(raw), legacy.refuse_retired(raw),
                      refuse_header_fallback(raw)]
            try:
                event = legacy.normalise(raw, self.session_id, self._message_id_of)
            except ProblemError as exc:
                found.append(exc)
            found += [self._message_shape(event), self._unknown(event), check_envelope(event),
                      self._shape(event)]
        else:
            found.append(refuse_header_delta(event))
            if checks.envelope_and_shapes:
                found += [check_envelope(event), self._shape(event)]
            found.append(refuse_header_fallback(event))
        problems = [p for p in found if p is not None]
        if any(p.problem.code.startswith("ENVELOPE_") for p in problems):
            self.fold.skip(event.get("seq"))  # the envelope problem explains any seq problem
        else:
            try:
                plan = self.fold.check(event)
            except ProblemError as exc:
                problems.append(exc)
                self.fold.skip(event.get("seq"))
            else:
                self.fold.apply(event, plan)
        if checks.invariants:
            enclosure = self.trace.check(event)
            if enclosure is None:
                self.trace.advance(event)
            else:
                problems.append(enclosure)
        self.tracker.push(event)
        if self.observer is not None:
            self.observer(event, self.fold.next_seq - 1)
        if problems:
            first = problems[0]
            lowest = min((level_of(p.problem.code) for p in problems), key=lambda lv: lv.rank)
            raise EventProblem(first.problem, lowest)
        if self.kept is not None:
            self.kept.append(event)

    def _message_shape(self, event: Event) -> ProblemError | None:
        kind = event.get("type")
        return check_message_shape(event) if _listed(kind, SURFACE_EVENT_TYPES) else None

    def _shape(self, event: Event) -> ProblemError | None:
        kind = event.get("type")
        if _listed(kind, SURFACE_EVENT_TYPES):
            return check_message_shape(event)
        if kind == "request/header":
            return check_request_header_shape(event)
        return None

    def _unknown(self, event: Event) -> ProblemError | None:
        kind = event.get("type")
        if not _listed(kind, KNOWN_EVENT_TYPES) and event.get("ignorable") is not True:
            return fail("UNKNOWN_EVENT_TYPE", "SES-UNK-002",
                       f'event type "{kind}" is unknown to this reader and not marked ignorable; '
                       "refusing to interpret the log (it was likely written by a newer harness)",
                       pointer="/type")
        return None

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


#: The fast path the run loops take (a module attribute: tests swap it out).
absorber: Callable[[SessionChecker], FastPath] = _absorber


@contextmanager
def paused_gc(checker: SessionChecker) -> Iterator[None]:
    """Pause the garbage collector for a run, unless an observer (foreign code that may make
    reference cycles) is attached; the collector's state is restored afterwards."""
    pause = checker.observer is None and gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause:
            gc.enable()


def _listed(kind: Any, names: frozenset[str]) -> bool:
    """``kind in names``, for a kind that may be any JSON value (a list is not hashable)."""
    return isinstance(kind, str) and kind in names


def run_batches(checker: SessionChecker, batches: Iterable[Batch]) -> Problem | None:
    """Feed a whole log, stopping at the first problem (errors as values)."""
    absorb, flush, reload = absorber(checker)
    push = checker.push
    with paused_gc(checker):
        try:
            for first, step, events in batches:
                index = absorb(events, 0)
                if type(events) is DeferredRun:  # the reader checks the rest (see there)
                    events.taken = index
                    continue
                while index < len(events):
                    flush()
                    push(events[index], line=None if first is None else first + step * index)
                    reload()
                    index = absorb(events, index + 1)
        except ProblemError as exc:
            return exc.problem
        finally:
            flush()
    return None


_MEMORY_RUN = 64  # in-memory events handed on together


def memory_batches(events: Iterable[Any]) -> Iterator[Batch]:
    """Events given in memory, as batches for :func:`run_batches` and :func:`run_all_batches`.

    Each event is first checked for what the lossless reading rules refuse in a text
    (:func:`~.jsoncodec.check_lossless`: negative zero, non-finite numbers, values with no JSON
    form, nesting past ``max_json_depth``). Such an event ends the run with its problem, located
    at its seq (or its position), after the events before it were checked: the in-memory form of
    a line that cannot be read.
    """
    run: list[Any] = []
    for position, event in enumerate(events):
        problem = check_lossless(event)
        if problem is not None:
            if run:
                yield None, 0, run
            seq = event.get("seq") if type(event) is dict else None
            raise ProblemError(problem.problem.located(
                seq=seq if is_nonneg_safe_int(seq) else position))
        run.append(event)
        if len(run) == _MEMORY_RUN:
            yield None, 0, run
            run = []
    if run:
        yield None, 0, run


def run(checker: SessionChecker, located: Iterable[Pair]) -> Problem | None:
    """:func:`run_batches` for ``(line, event)`` pairs."""
    return run_batches(checker, ((line, 0, (event,)) for line, event in located))


MAX_PROBLEMS = 100


class RunOutcome:
    """What :func:`run_all_outcome` found.

    ``problems`` and ``failed`` are the validator's verdict (SES-LVL-005). ``stop`` is the
    first problem that is not an enclosure problem alone, with ``stop_count`` events seen
    then: where a run without the enclosure invariants (the fold) would have stopped.
    ``unreadable`` is the problem raised while reading that ended the run, if any.
    """

    def __init__(self) -> None:  # a plain class: making a dataclass costs every start
        self.problems: list[Problem] = []
        self.failed: Level | None = None
        self.stop: Problem | None = None
        self.stop_count = 0
        self.unreadable: Problem | None = None


def run_all_batches(checker: SessionChecker,
                    batches: Iterable[Batch]) -> tuple[list[Problem], Level | None]:
    """Feed a whole log and keep every problem of the lowest failing level (SES-LVL-005).

    Problems of higher levels than one already found are not kept; a problem of a lower level
    replaces them. A problem raised while reading ends the run (nothing after it can be read).
    """
    outcome = run_all_outcome(checker, batches)
    return outcome.problems, outcome.failed


def run_all_outcome(checker: SessionChecker, batches: Iterable[Batch]) -> RunOutcome:
    """:func:`run_all_batches`, also noting where a fold of the same log would stop."""
    out = RunOutcome()
    kept = out.problems
    lowest: Level | None = None
    absorb, flush, reload = absorber(checker)
    push = checker.push
    with paused_gc(checker):
        try:
            for first, step, events in batches:
                index = absorb(events, 0)
                if type(events) is DeferredRun:  # the reader checks the rest (see there)
                    events.taken = index
                    continue
                while index < len(events):
                    flush()
                    try:
                        push(events[index],
                             line=None if first is None else first + step * index)
                    except ProblemError as exc:
                        problem = exc.problem
                        level = (exc.level if isinstance(exc, EventProblem)
                                 else level_of(problem.code))
                        if out.stop is None and not problem.code.startswith("INVARIANT_"):
                            out.stop, out.stop_count = problem, checker.count
                        if lowest is None or level.rank < lowest.rank:
                            kept = [problem]
                            lowest = level
                        elif level is lowest and len(kept) < MAX_PROBLEMS:
                            kept.append(problem)
                    reload()
                    index = absorb(events, index + 1)
        except ProblemError as exc:  # raised while reading
            problem = out.unreadable = exc.problem
            level = level_of(problem.code)
            flush()
            if out.stop is None:
                out.stop, out.stop_count = problem, checker.count
            if lowest is None or level.rank < lowest.rank:
                kept = [problem]
                lowest = level
            elif level is lowest:
                kept.append(problem)
        finally:
            flush()
    out.problems, out.failed = kept, lowest
    return out


def run_all(checker: SessionChecker,
            located: Iterable[Pair]) -> tuple[list[Problem], Level | None]:
    """:func:`run_all_batches` for ``(line, event)`` pairs."""
    return run_all_batches(checker, ((line, 0, (event,)) for line, event in located))
