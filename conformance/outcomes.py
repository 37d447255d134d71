"""Values shared by every part of the kit: the run-stopping :class:`KitError`, one case's
:class:`CaseOutcome`, a whole :class:`RunResult` and a :class:`BaselineEntry`.

The modules that produce or read them (runner, harness client and server, baseline, report,
console) import them from here, so none of them needs another to name its values.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from .interface import Implementation
from .vectors import Case

__all__ = ["REFERENCE_UNAVAILABLE", "STATUSES", "BaselineEntry", "CaseOutcome", "KitError",
           "RunResult"]

#: The code of the error raised when the default implementation (the dshkit reference) is
#: asked for but cannot be imported.
REFERENCE_UNAVAILABLE = "REFERENCE_UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class BaselineEntry:
    id: str
    reason: str
    issue: str | None = None
    status: str | None = None  # failed | errored | skipped; any of them when absent
    expires: dt.date | None = None
    property: bool = False  # the id names a property test of the kit, not a case

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"property" if self.property else "id": self.id,
                               "reason": self.reason}
        if self.issue:
            out["issue"] = self.issue
        if self.status:
            out["status"] = self.status
        if self.expires:
            out["expires"] = self.expires.isoformat()
        return out



STATUSES = ("passed", "failed", "errored", "skipped", "not_applicable")


class KitError(Exception):
    """A problem that stops the whole run (bad ``--impl``, a harness that cannot start)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(slots=True)
class CaseOutcome:
    case: Case
    status: str  # one of STATUSES
    detail: str = ""
    duration: float = 0.0
    capabilities: tuple[str, ...] = ()
    stderr: str = ""
    expected: bool = False  # listed in the baseline and failed as listed
    baseline: BaselineEntry | None = None

    @property
    def unexpected(self) -> bool:
        """Counts against the run: failed, errored or skipped, and not in the baseline."""
        return self.status in ("failed", "errored", "skipped") and not self.expected


@dataclass(slots=True)
class RunResult:
    implementation: Implementation
    outcomes: list[CaseOutcome]
    stale: list[dict[str, str]] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    started: float = 0.0
    duration: float = 0.0

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return not self.stale and not any(o.unexpected for o in self.outcomes)
