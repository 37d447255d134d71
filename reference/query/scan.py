"""What the index stores of one session, read from a log in one streaming pass (QRY-IDX-010,
QRY-DOC-001, QRY-CLS-001).

:func:`scan_log` reads a log file as :func:`~.source.load_session` does (same reader, same
checks, same errors) but keeps no events: the checker hands every event, as it checked it, to
an observer that keeps only its searchable text, and the checker's own surface fold, which has
seen the whole log when the pass ends, classifies the documents. Memory therefore grows with
the documents and the surface, not with the log, and the log is folded once.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..problems import ProblemError
from ..session.levels import Checks
from ..session.pipeline import SessionChecker, run_batches
from ..session.reader import LogReader
from ..session.surface import SurfaceFold
from ..session.validation import session_batches
from .documents import Document, build_documents
from .extract import TEXT_TYPES, extract_text
from .source import LoadedSession, map_problem, session_id_for_path, synthesize_header

Event = dict[str, Any]
LOAD_CHECKS = Checks(envelope_and_shapes=True, invariants=False, storage=True, repair=False)


#: One document of a session: (seq, type, time, surface, text), in ascending seq order.
DocumentRow = tuple[int, str, Any, str, str]


@dataclass(frozen=True, slots=True)
class SessionDocuments:
    """One session as the index stores it: its header, title, event count and documents."""

    session_id: str
    header: dict[str, Any]
    rows: Sequence[DocumentRow] = field(default=())
    events: int = 0
    title: str | None = None
    path: str | None = None
    revision: str | None = None

    @property
    def documents(self) -> list[Document]:
        return [Document(self.session_id, *row) for row in self.rows]


def of_loaded(session: LoadedSession) -> SessionDocuments:
    """The documents of a session already in memory."""
    rows = [(d.seq, d.type, d.time, d.surface, d.text)
            for d in build_documents(session.session_id, session.events)]
    return SessionDocuments(session.session_id, session.header, rows, len(session.events),
                            session.title, session.path, session.revision)


def surface_of(fold: SurfaceFold) -> tuple[frozenset[int], frozenset[int]]:
    """(current, shadowed) seqs of a fold that has seen a whole log; every other seq is
    ``log-only`` (QRY-CLS-001)."""
    shadowed = frozenset(seq for r in fold.replacements for seq in r.shadowed)
    return frozenset(fold.nodes), shadowed


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The observer below makes no reference cycles, so nothing is left for the cyclic
    collector to find: pausing it spares its full passes over a growing heap."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Collector:
    """What the checker's observer gathers: the searchable text of every event that has some,
    the latest title and the first event's time."""

    __slots__ = ("first_time", "found", "title")

    def __init__(self) -> None:
        self.found: list[tuple[int, str, Any, str]] = []  # (seq, type, time, text)
        self.title: str | None = None
        self.first_time: Any = None

    def observer(self) -> Callable[[Event, int], None]:
        """The observer function (a closure: it runs once per event of the log)."""
        found = self.found.append
        text_types = TEXT_TYPES

        def observe(event: Event, _position: int) -> None:
            kind = event.get("type")
            if self.first_time is None:
                self.first_time = event.get("time", 0)
            if type(kind) is str and kind in text_types:  # a list or dict type is unhashable
                text = extract_text(event)
                if text:
                    found((int(event["seq"]), kind, event.get("time", 0), text))
            elif kind == "session/title":
                data = event.get("data")
                if isinstance(data, dict) and isinstance(data.get("title"), str):
                    self.title = data["title"]

        return observe


def scan_log(path: str | Path, *, revision: str | None = None) -> SessionDocuments:
    """Read one log file into the index's view of it; errors as :func:`~.source.load_session`
    reports them."""
    location = Path(path)
    reader = LogReader(location, tolerate_torn_tail=True)
    collect = _Collector()
    checker = SessionChecker(LOAD_CHECKS, observer=collect.observer())
    with _collector_paused():
        try:
            problem = run_batches(checker, session_batches(reader, checker, None))
        except ProblemError as exc:
            problem = exc.problem
    if problem is not None:
        raise map_problem(str(path), problem)
    header = reader.result.header
    session_id = str(header["id"]) if header else session_id_for_path(location)
    current, shadowed = surface_of(checker.fold)
    rows = [(seq, kind, time, "shadowed" if seq in shadowed else
             "current" if seq in current else "log-only", text)
            for seq, kind, time, text in collect.found]
    first = [] if collect.first_time is None else [{"time": collect.first_time}]
    return SessionDocuments(
        session_id, dict(header) if header else synthesize_header(session_id, first),
        rows, checker.count, collect.title, str(path), revision)
