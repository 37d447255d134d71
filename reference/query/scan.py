"""What the index stores of one session, read from a log in one streaming pass (QRY-IDX-010,
QRY-DOC-001, QRY-CLS-001).

:func:`scan_log` reads a log file as :func:`~.source.load_session` does (same reader, same
checks, same errors) but keeps no events: after each batch of lines, the events the checker
kept as it checked them are reduced to their searchable text and let go, and the checker's own
surface fold, which has seen the whole log when the pass ends, classifies the documents.
Memory therefore grows with the documents and the surface, not with the log, and the log is
folded once.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress, repeat
from pathlib import Path
from typing import Any

from ..session.runlog import run_log
from ..session.surface import SurfaceFold
from .documents import Document, build_documents
from .extract import EXTRACTORS
from .source import LOAD_CHECKS, LoadedSession, map_problem, session_id_for_path, synthesize_header

Event = dict[str, Any]
TITLE = "session/title"
#: The event types the index reads: those with searchable text, and the title.
_WANTED = frozenset({*EXTRACTORS, TITLE})


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
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector. Reading a log, extracting its documents and writing
    them make no reference cycles, so nothing is left for it to find: pausing it spares its
    full passes over a growing heap."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Collector:
    """What the index keeps of the events the checker has checked: the searchable text of
    every event that has some, the latest title and the first event's time.

    :func:`~dshkit.reference.session.runlog.run_log` hands :meth:`take` the events checked
    since its last call after each batch of lines (it empties the list afterwards). It picks
    the few events whose type has text (or is a title) with C-level iteration, so an event
    without text costs no Python call, and extracts their text; the rest are freed with the
    list's references.
    """

    __slots__ = ("first_time", "found", "started", "title")

    def __init__(self) -> None:
        self.found: list[tuple[int, str, Any, str]] = []  # (seq, type, time, text)
        self.title: str | None = None
        self.first_time: Any = None
        self.started = False

    def take(self, kept: list[Event]) -> None:
        """Collect what the events checked since the last call hold."""
        if not self.started:
            self.started = True
            self.first_time = kept[0].get("time", 0)
        try:
            hits = list(compress(kept, map(_WANTED.__contains__,
                                           map(dict.get, kept, repeat("type")))))
        except TypeError:  # an event that is not an object, or a type that is unhashable
            hits = [e for e in kept if type(e) is dict and type(e.get("type")) is str
                    and e["type"] in _WANTED]
        found = self.found.append
        for event in hits:
            data = event.get("data")
            if not isinstance(data, dict):
                continue
            kind = event["type"]
            if kind == TITLE:
                title = data.get("title")
                if isinstance(title, str):
                    self.title = title
                continue
            text = EXTRACTORS[kind](data)
            if text:
                found((int(event["seq"]), kind, event.get("time", 0), text))


def scan_log(path: str | Path, *, revision: str | None = None) -> SessionDocuments:
    """Read one log file into the index's view of it; errors as :func:`~.source.load_session`
    reports them."""
    location = Path(path)
    collect = _Collector()
    with collector_paused():
        run = run_log(location, checks=LOAD_CHECKS, sink=collect.take)
    if run.stop is not None:
        raise map_problem(str(path), run.stop)
    header = run.header
    session_id = str(header["id"]) if header else session_id_for_path(location)
    current, shadowed = surface_of(run.fold)
    rows = [(seq, kind, time, "shadowed" if seq in shadowed else
             "current" if seq in current else "log-only", text)
            for seq, kind, time, text in collect.found]
    first = [] if collect.first_time is None else [{"time": collect.first_time}]
    return SessionDocuments(
        session_id, dict(header) if header else synthesize_header(session_id, first),
        rows, run.events, collect.title, str(path), revision)
