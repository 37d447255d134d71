"""What the kit asks of an implementation under test (spec chapter ``conformance/kit``).

An implementation is any object with ``name``, ``version``, ``capabilities`` and one entry
point ``run(operation, input, params, approver=None)``. Inputs and outputs are plain JSON
values, so the same cases run in-process (``--impl py:module:factory``) and through a
subprocess harness speaking JSON lines (``--impl cmd:...``, chapter ``conformance/harness``).
The kit never passes the expectation of a case.

``run`` returns ``{"valid": true, ...}`` or ``{"valid": false, "error": {"code": ...}}``; the
members beyond ``valid`` are those of the operation (documented per suite). It raises
:class:`NotSupported` for an operation it does not implement (the case is reported as
skipped, which counts against the score) and may raise anything else for a crash (the case is
reported as errored; the run goes on).

Memory cases (operation ``memory.calls``) call the kit back for every approval: the
implementation's gate calls ``approver(step, payload, write, concurrent)`` and returns what it
returns as the gate's answer. ``concurrent(call)`` runs one provider call in the JSON call form
on a second provider handle opened on the same store (the approver interfering while a human
"looks at" the payload); it returns the JSON response. The approver raises
:class:`ApproverFailure` when the script says the approver crashes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

JsonObject = dict[str, Any]
Concurrent = Callable[[JsonObject], JsonObject]
Approver = Callable[[int, JsonObject, Any, Concurrent], Any]

__all__ = [
    "OPERATIONS",
    "Approver",
    "ApproverFailure",
    "Concurrent",
    "Implementation",
    "JsonObject",
    "NotSupported",
    "SessionLogImplementation",
]


class NotSupported(Exception):
    """The implementation does not implement this operation (reported as skipped)."""


class ApproverFailure(RuntimeError):
    """Raised by the kit's approver when the case scripts an approver that crashes."""


@runtime_checkable
class Implementation(Protocol):
    """The one interface every implementation offers the kit (plain attributes will do)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def capabilities(self) -> Sequence[str]: ...

    def run(self, operation: str, input: JsonObject, params: JsonObject,
            approver: Approver | None = None) -> JsonObject:
        """Run one case's operation and return its JSON result."""
        ...


@runtime_checkable
class SessionLogImplementation(Protocol):
    """The kit's first interface (session log only), still accepted by ``--impl py:...``:
    an object with these four methods is adapted to :class:`Implementation`."""

    name: str

    def validate(self, log: JsonObject, level: str, session_id: str | None) -> JsonObject:
        ...

    def fold(self, log: JsonObject, repair: bool, session_id: str | None) -> JsonObject:
        ...

    def repair(self, log: JsonObject, session_id: str | None) -> JsonObject:
        ...

    def load(self, log: JsonObject, session_id: str | None) -> JsonObject:
        ...


#: The session-log operations (kept for callers of the first interface).
OPERATIONS = ("validate", "fold", "repair", "load")
