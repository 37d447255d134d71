"""Surface classification and search documents of one raw log (QRY-CLS-*, QRY-DOC-*)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..problems import ProblemError
from ..session.surface import SurfaceFold
from .errors import INVALID_SURFACE, SessionQueryError
from .extract import extract_text

Surface = Literal["current", "shadowed", "log-only"]
SURFACES: Final[tuple[str, ...]] = ("current", "shadowed", "log-only")
Event = dict[str, Any]


def fold_log(events: Sequence[Event]) -> SurfaceFold:
    """The canonical surface fold of a complete log, or ``INVALID_SURFACE``."""
    fold = SurfaceFold()
    for event in events:
        try:
            fold.push(event)
        except ProblemError as exc:
            raise SessionQueryError(INVALID_SURFACE,
                                    f"invalid session surface: {exc.problem.message}",
                                    seq=event.get("seq") if isinstance(event, dict) else None
                                    ) from None
    return fold


def classify(events: Sequence[Event]) -> dict[int, str]:
    """``current`` / ``shadowed`` / ``log-only`` for every seq of the log (QRY-CLS-001)."""
    fold = fold_log(events)
    surfaces: dict[int, str] = {}
    for seq in fold.nodes:
        surfaces[seq] = "current"
    for replacement in fold.replacements:
        for seq in replacement.shadowed:
            surfaces[seq] = "shadowed"
    return {int(e["seq"]): surfaces.get(int(e["seq"]), "log-only") for e in events}


@dataclass(frozen=True, slots=True)
class EventRecord:
    session_id: str
    seq: int
    type: str
    time: float
    surface: str

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "seq": self.seq, "type": self.type,
                "time": self.time, "surface": self.surface}


@dataclass(frozen=True, slots=True)
class Document:
    """One searchable event: its record plus its extracted text."""

    session_id: str
    seq: int
    type: str
    time: float
    surface: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "seq": self.seq, "type": self.type,
                "time": self.time, "surface": self.surface, "text": self.text}


def build_records(session_id: str, events: Sequence[Event]) -> list[EventRecord]:
    surfaces = classify(events)
    return [EventRecord(session_id, int(e["seq"]), str(e.get("type")), e.get("time", 0),
                        surfaces[int(e["seq"])]) for e in events]


def build_documents(session_id: str, events: Sequence[Event]) -> list[Document]:
    """Documents in ascending seq order; an event with no text gives none (QRY-DOC-001)."""
    surfaces = classify(events)
    out: list[Document] = []
    for event in events:
        text = extract_text(event)
        if text:
            seq = int(event["seq"])
            out.append(Document(session_id, seq, str(event.get("type")), event.get("time", 0),
                                surfaces[seq], text))
    return out
