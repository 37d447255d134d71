"""The base of every structured error dshkit raises.

Each area keeps its own error class (and its own wire form, which the CLI and the vectors
depend on), but all of them are a :class:`DshkitError`: a stable ``code``, a one-line
``message``, JSON-able ``details``, and :meth:`DshkitError.to_json` for the wire. A caller
that handles any dshkit failure catches this one class.
"""

from __future__ import annotations

from typing import Any


class DshkitError(Exception):
    """A refused operation: a stable ``code``, a ``message`` a person can act on, and
    ``details`` (JSON-able: the location and whatever else the code needs)."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        # The exception's args stay ``(message,)``, as before the areas shared a base.
        super().__init__(message)
        self.code = code
        self.message = message
        self.details: dict[str, Any] = details if details is not None else {}

    def to_json(self) -> dict[str, Any]:
        """The wire form; areas with a form of their own override it."""
        return {"code": self.code, "message": self.message, "details": dict(self.details)}


__all__ = ["DshkitError"]
