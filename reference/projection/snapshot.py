"""The surface snapshot a reference is rendered from (REF-SNP-*).

A snapshot is what one source session looks like now: its header, the seq of the last event
in its log (log-only events included) and its current surface events in surface order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..problems import ProblemError
from ..session.surface import SurfaceFold

Event = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SurfaceSnapshot:
    """``session`` is the header (``id`` and optional ``cwd`` are used);
    ``captured_through_seq`` is the last raw seq or ``None`` for an empty log."""

    session: dict[str, Any]
    captured_through_seq: int | None
    events: tuple[Event, ...] = field(default=())

    @property
    def session_id(self) -> str:
        return str(self.session.get("id", ""))

    @property
    def cwd(self) -> str | None:
        cwd = self.session.get("cwd")
        return cwd if isinstance(cwd, str) else None

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> SurfaceSnapshot:
        """The wire form ``{session, capturedThroughSeq, events}`` (events already folded)."""
        return cls(session=dict(value.get("session") or {}),
                   captured_through_seq=value.get("capturedThroughSeq"),
                   events=tuple(value.get("events") or ()))


def snapshot_of_log(header: dict[str, Any], events: Sequence[Event]) -> SurfaceSnapshot:
    """Fold a complete raw log and keep its current surface (raises :class:`ProblemError`
    when the log does not fold)."""
    fold = SurfaceFold()
    for event in events:
        fold.push(event)
    last = events[-1].get("seq") if events else None
    return SurfaceSnapshot(session=dict(header), captured_through_seq=last
                           if isinstance(last, int) else None,
                           events=tuple(fold.current_events()))


__all__ = ["ProblemError", "SurfaceSnapshot", "snapshot_of_log"]
