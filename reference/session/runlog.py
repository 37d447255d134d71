"""The front door of the session core: read a log, check it and fold it, in one call.

:func:`run_log` wires the reader (:mod:`.reader`), the checker and its run loops
(:mod:`.pipeline`) and the repair closers together, for a log file (any reader form; ``-`` is
stdin) or for events given in memory, and returns an immutable :class:`LogRun`. Validation,
the fold, the loader's view, repair, the query index and compaction all start here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from ..problems import Problem, ProblemError
from .levels import Checks, Level, level_of
from .pipeline import Batch, SessionChecker, memory_batches, run_all_outcome, run_batches
from .reader import LogReader, TornTail
from .surface import Replacement, SurfaceFold, derive_messages

if TYPE_CHECKING:
    from pathlib import Path

Event = dict[str, Any]
#: What :func:`run_log` does with the repair closers of an unclosed turn (SES-FILE-011):
#: ``"none"``: nothing; ``"list"``: give them; ``"append"``: give them and fold them in.
Closers = Literal["none", "list", "append"]

#: At most this many typed-layer problems are kept.
MAX_TYPED = 100


@dataclass(frozen=True, slots=True)
class Surface:
    """The surface a fold ends with (chapter ``session/surface``)."""

    nodes: tuple[int, ...]
    shadowed: tuple[int, ...]
    replacements: tuple[Replacement, ...]
    replace_generation: int
    messages: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class LogRun:
    """What :func:`run_log` found.

    ``events`` counts the log's events that were checked (not the closers). ``problems`` and
    ``failed_level`` are the verdict: the first problem only, unless every problem was asked
    for (then every problem of the lowest failing level, SES-LVL-005). ``stop`` is where a run
    without the enclosure invariants would have stopped, after ``stop_events`` events;
    ``unreadable`` is the problem that ended the reading, if one did (known only when every
    problem was asked for: a run that stops at the first does not tell them apart). ``header``, ``torn``,
    ``form``, ``compressed``, ``committed_bytes`` and ``committed_events`` describe the file, and
    ``empty`` says what it held when it holds no header and no committed event (SES-FILE-017:
    a validator refuses such a file, a derived view reads it as an empty session)
    (None, None, None, False, None, 0 for events given in memory). ``kept`` holds the events as
    checked (after legacy migration, closers included) when they were asked for; ``typed``
    the typed layer's problems when it was asked for.
    """

    path: str
    events: int
    problems: tuple[Problem, ...] = ()
    failed_level: Level | None = None
    stop: Problem | None = None
    stop_events: int = 0
    unreadable: Problem | None = None
    header: dict[str, Any] | None = None
    torn: TornTail | None = None
    form: str | None = None
    compressed: bool = False
    committed_bytes: int | None = None
    committed_events: int = 0
    empty: str | None = None
    closers: tuple[Event, ...] = ()
    kept: tuple[Event, ...] | None = None
    typed: tuple[Problem, ...] | None = None
    fold: SurfaceFold = field(default_factory=SurfaceFold, repr=False, compare=False)

    @property
    def valid(self) -> bool:
        return not self.problems

    def surface(self) -> Surface:
        """The surface the fold ended with."""
        fold = self.fold
        return Surface(nodes=tuple(fold.nodes), shadowed=tuple(fold.shadowed),
                       replacements=tuple(fold.replacements),
                       replace_generation=fold.replace_generation,
                       messages=tuple(derive_messages(fold)))


def run_log(source: str | os.PathLike[str] | Iterable[Any], *, checks: Checks | Level,
            session_id: str | None = None, stdin: BinaryIO | None = None,
            tolerate_torn_tail: bool = True, every_problem: bool = False,
            closers: Closers = "none", keep: bool = False, typed: bool = False,
            sink: Callable[[list[Event]], None] | None = None, handback: bool = True,
            form: str | None = None) -> LogRun:
    """Read, check and fold one log.

    ``source`` is a log file (a ``str`` or path; ``-`` reads ``stdin``, or the process's
    standard input) or an iterable of events given in memory, which must each be lossless JSON
    as if read from text (SES-JSON-001..003). ``checks`` is a level or the checks to run.
    ``session_id`` names the session for legacy message ids; by default the header's id
    (``"session"`` without one). ``tolerate_torn_tail`` reads a damaged tail as a loader does
    (SES-FILE-008/009). ``every_problem`` goes on after a problem and keeps every problem of the
    lowest failing level; otherwise the run stops at the first. ``closers`` (see
    :data:`Closers`) applies when the run found no stopping problem. ``keep`` keeps every event
    as checked; ``sink``, instead (``keep`` is then ignored), is given the events checked since
    its last call, after each batch and at the end (the list is cleared after each call). ``typed`` adds the typed layer.
    ``handback`` lets the reader leave checks to the run loops' fast path
    (:meth:`LogReader.batches`); turning it off changes nothing but the speed. ``form`` names
    a file's form (``dsh``, ``jsonl``, ``array``; SES-FILE-015); None detects it.
    """
    level_checks = Checks.for_level(checks) if isinstance(checks, Level) else checks
    kept: list[Event] | None = [] if keep or sink is not None else None
    in_memory = not isinstance(source, (str, os.PathLike))
    checker = SessionChecker(level_checks, kept=kept,
                             session_id=(session_id or "session") if in_memory else "session")
    typed_found = _typed_observer(checker) if typed else None
    reader: LogReader | None = None
    batches: Iterator[Batch]
    if isinstance(source, (str, os.PathLike)):
        named: str | Path = source if isinstance(source, str) else _as_path(source)
        reader = LogReader(named, tolerate_torn_tail=tolerate_torn_tail, stdin=stdin,
                           form=form)
        batches = session_batches(reader, checker, session_id, handback=handback)
        path = os.fspath(source)
    else:
        batches = memory_batches(source)
        path = "<memory>"
    if sink is not None and kept is not None:
        batches = _draining(batches, kept, sink)
    problems: tuple[Problem, ...]
    if every_problem:
        outcome = run_all_outcome(checker, batches)
        problems, failed = tuple(outcome.problems), outcome.failed
        stop, stop_events, unreadable = outcome.stop, outcome.stop_count, outcome.unreadable
    else:
        first = run_batches(checker, batches)
        problems = () if first is None else (first,)
        failed = None if first is None else level_of(first.code)
        stop, stop_events, unreadable = first, checker.count, None
    if sink is not None and kept is not None and kept:
        sink(kept)
        kept.clear()
    events = checker.count
    found: list[Event] = []
    if stop is None and closers != "none":
        if closers == "append":  # with the fold's checks, whatever the level of the run
            checker.checks = Checks(envelope_and_shapes=True, invariants=False, storage=True,
                                    repair=True)
            checker.observer = None
            try:
                found = checker.close()
            except ProblemError as exc:  # closers are valid by construction; report if not
                stop, stop_events = exc.problem, checker.count
        else:
            found = checker.closers()
    result = reader.result if reader is not None else None
    return LogRun(
        path=path, events=events, problems=problems, failed_level=failed, stop=stop,
        stop_events=stop_events, unreadable=unreadable,
        header=result.header if result else None, torn=result.torn if result else None,
        form=result.form if result else None, compressed=result.compressed if result else False,
        committed_bytes=result.committed_bytes if result else None,
        committed_events=result.committed_events if result else 0,
        empty=result.empty if result else None,
        closers=tuple(found),
        kept=tuple(kept) if keep and sink is None and kept is not None else None,
        typed=None if typed_found is None else tuple(typed_found), fold=checker.fold)


def _as_path(source: os.PathLike[str]) -> Path:
    # Imported here: a log named by a str (as the command line names it) needs no pathlib.
    from pathlib import Path

    return Path(source)


def _typed_observer(checker: SessionChecker) -> list[Problem]:
    """Attach the typed layer to ``checker``; returns the list its problems go to."""
    # Imported here, not at the top: the typed layer loads jsonschema, which only runs that
    # ask for it should pay for.
    from .typed import typed_problems

    found: list[Problem] = []

    def observe(event: dict[str, Any], seq: int) -> None:
        if len(found) < MAX_TYPED:
            found.extend(typed_problems(event, seq=seq, line=None))

    checker.observer = observe
    return found


def _draining(batches: Iterator[Batch], kept: list[Event],
              sink: Callable[[list[Event]], None]) -> Iterator[Batch]:
    """``batches``, handing the events checked from each to ``sink`` once the checker is done
    with it (it asks for the next batch only then)."""
    for batch in batches:
        yield batch
        if kept:
            sink(kept)
            kept.clear()


def session_batches(reader: LogReader, checker: SessionChecker, session_id: str | None, *,
                    handback: bool = False) -> Iterator[Batch]:
    """The reader's batches, with the checker's session id taken from the header (or given)
    before the first event is checked: legacy message ids are built from it. ``handback`` (see
    :meth:`LogReader.batches`) only when the batches go to the run loops of :mod:`.pipeline`."""
    batches = reader.batches(handback=handback)
    for first in batches:
        header = reader.result.header
        checker.session_id = session_id or (str(header["id"]) if header else "session")
        yield first
        break
    yield from batches


__all__ = ["MAX_TYPED", "Closers", "LogRun", "Surface", "run_log", "session_batches"]
