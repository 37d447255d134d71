"""What a check of a log keeps between events: the state both checking paths work on.

The general path (:class:`~.pipeline.SessionChecker`) and the fast path (:mod:`.fastpath`)
read and move the same state machines: the surface fold, the enclosure trace and the repair
tracker, plus the event count and what is done with each event taken (kept, observed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .invariants import EnclosureTrace
from .levels import Checks
from .repair import RepairTracker
from .surface import SurfaceFold

Event = dict[str, Any]


class CheckState:
    # A plain class, not a dataclass: making one costs every start of the command line.
    def __init__(self, checks: Checks, session_id: str = "session", *,
                 kept: list[Event] | None = None,
                 observer: Callable[[Event, int], None] | None = None) -> None:
        self.checks = checks
        self.session_id = session_id
        self.fold = SurfaceFold()
        self.trace = EnclosureTrace()
        self.tracker = RepairTracker()
        self.count = 0
        self.kept = kept  # set to a list to keep every event as checked
        # Called with every event as the checks saw it (after legacy migration) and its seq.
        self.observer = observer
