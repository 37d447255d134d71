"""Reading session logs for the query index and the reference resolver (QRY-SRC-*).

A file is read in the load view (torn tail dropped, legacy shapes normalised, unknown types
refused unless ignorable) but never repaired: the events are exactly what is stored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..inputs import InputError, open_input
from ..problems import Problem
from ..session.levels import Checks
from ..session.runlog import run_log
from .errors import CORRUPT_SESSION, INVALID_SURFACE, PERSISTENCE_FAILED, SessionQueryError

Event = dict[str, Any]
LOG_SUFFIXES: Final = (".jsonl", ".jsonl.zstd", ".jsonl.zst")
_STRIP: Final = (".zstd", ".zst", ".jsonl", ".json")
_SURFACE_PREFIXES: Final = ("SEQ_", "SURFACE_", "PROVENANCE_", "TOOL_REWRITE_")
#: The load view without repair: the events are exactly what is stored.
LOAD_CHECKS: Final = Checks(envelope_and_shapes=True, invariants=False, storage=True,
                            repair=False)


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """One session: its id, header (synthesised when the file has none) and stored events."""

    session_id: str
    header: dict[str, Any]
    events: tuple[Event, ...] = field(default=())
    path: str | None = None
    revision: str | None = None

    @property
    def title(self) -> str | None:
        """The latest ``session/title`` title, if any."""
        for event in reversed(self.events):
            data = event.get("data")
            if event.get("type") == "session/title" and isinstance(data, dict) \
                    and isinstance(data.get("title"), str):
                title: str = data["title"]
                return title
        return None


def session_id_for_path(path: Path) -> str:
    """The id of a headerless log: its file name without log suffixes; for DSH's
    ``<id>/session.jsonl`` layout, the directory name."""
    name = path.name
    changed = True
    while changed:
        changed = False
        for suffix in _STRIP:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    if name == "session" and path.parent.name:
        return path.parent.name
    return name


def synthesize_header(session_id: str, events: Sequence[Event]) -> dict[str, Any]:
    first = events[0].get("time") if events else 0
    created = int(first) if isinstance(first, (int, float)) and not isinstance(first, bool) \
        and first >= 0 else 0
    return {"version": 0, "id": session_id, "createdAt": created}


def map_problem(path: str, problem: Problem) -> SessionQueryError:
    if problem.code == "IO_ERROR":
        return SessionQueryError(PERSISTENCE_FAILED, problem.message, path=path)
    if problem.code.startswith(_SURFACE_PREFIXES):
        return SessionQueryError(INVALID_SURFACE, f"invalid session surface: {problem.message}",
                                 path=path, seq=problem.seq)
    return SessionQueryError(CORRUPT_SESSION, f"{problem.code}: {problem.message}", path=path,
                             seq=problem.seq, line=problem.line)


def file_revision(path: str | Path) -> str:
    """The SHA-256 of a log file. A FIFO, a device or a directory is refused before anything
    is read (``open_input``), so hashing never blocks or reads without end."""
    try:
        with open_input(path) as handle:
            digest = hashlib.file_digest(handle, "sha256")
    except InputError as exc:
        raise SessionQueryError(PERSISTENCE_FAILED, f"{exc.message} ({exc.code})",
                                path=str(path)) from None
    except OSError as exc:
        raise SessionQueryError(PERSISTENCE_FAILED, f"cannot read {path}: {exc.strerror or exc}",
                                path=str(path)) from None
    return digest.hexdigest()


def load_session(path: str | Path, *, revision: str | None = None) -> LoadedSession:
    """Read one log file; ``SESSION_QUERY_PERSISTENCE_FAILED`` when it cannot be read,
    ``SESSION_QUERY_INVALID_SURFACE`` when it does not fold, ``SESSION_QUERY_CORRUPT_SESSION``
    for any other damage."""
    location = Path(path)
    run = run_log(location, checks=LOAD_CHECKS, keep=True)
    if run.stop is not None:
        raise map_problem(str(path), run.stop)
    header = run.header
    session_id = str(header["id"]) if header else session_id_for_path(location)
    events = run.kept or ()
    return LoadedSession(session_id=session_id,
                         header=dict(header) if header else synthesize_header(session_id, events),
                         events=events, path=str(path), revision=revision)


def session_of_events(session_id: str, events: Iterable[Event],
                      header: dict[str, Any] | None = None) -> LoadedSession:
    """An in-memory session (the events are taken as stored; nothing is checked here)."""
    stored = tuple(events)
    return LoadedSession(session_id=session_id,
                         header=dict(header) if header else synthesize_header(session_id, stored),
                         events=stored)


def discover(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files named directly, and every ``*.jsonl``/``*.jsonl.zstd``/``*.jsonl.zst`` under a
    named directory (sorted, symlinked directories not followed)."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found: list[Path] = []
            for root, dirs, files in os.walk(path):
                dirs.sort()
                found += [Path(root) / f for f in sorted(files) if f.endswith(LOG_SUFFIXES)]
            yield from found
        else:
            yield path
