"""What a check of a log keeps between events: the state both checking paths work on.

The general path (:class:`~.pipeline.SessionChecker`) and the fast path (:mod:`.fastpath`)
read and move the same state machines: the surface fold, the enclosure trace and the repair
tracker, plus the event count and what is done with each event taken (kept, observed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .invariants import EnclosureTrace
from .levels import Checks
from .repair import RepairTracker
from .surface import SurfaceFold

Event = dict[str, Any]


@dataclass
class CheckState:
    checks: Checks
    session_id: str = "session"
    fold: SurfaceFold = field(default_factory=SurfaceFold)
    trace: EnclosureTrace = field(default_factory=EnclosureTrace)
    tracker: RepairTracker = field(default_factory=RepairTracker)
    count: int = 0
    kept: list[Event] | None = None  # set to a list to keep every event as checked
    # Called with every event as the checks saw it (after legacy migration) and its seq.
    observer: Callable[[Event, int], None] | None = None
