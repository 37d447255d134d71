"""The one error type of the memory protocol: a stable code, a message, JSON details (MEM-ERR-001)."""

from __future__ import annotations

from typing import Any

from ..errors import DshkitError


class MemoryProtocolError(DshkitError):
    """Every protocol failure. ``to_json()`` is the canonical error object."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(code, message, details or {})

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details}

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled with the constructor's arguments (Exception's default passes only the message)
        return type(self), (self.code, self.message, self.details), self.__dict__

    def __repr__(self) -> str:
        return f"MemoryProtocolError({self.code!r}, {self.message!r}, {self.details!r})"


def invalid(field: str, reason: str) -> MemoryProtocolError:
    return MemoryProtocolError("INVALID_INPUT", f"invalid input at {field or '/'}: {reason}",
                               {"field": field, "reason": reason})
