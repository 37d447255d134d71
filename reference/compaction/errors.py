"""The one structured error type of the compaction area (spec chapter ``compaction/errors``)."""

from __future__ import annotations

from typing import Any

from ..errors import DshkitError


class CompactionError(DshkitError):
    """A refused compaction operation: a stable ``code``, the requirement it enforces, a
    one-line message and optional JSON-able details (``seq``, ``key`` and so on)."""

    def __init__(self, code: str, requirement: str, message: str, **detail: Any) -> None:
        super().__init__(code, message, {"requirement": requirement, **detail})
        self.requirement = requirement
        self.detail = detail

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message,
                               "requirement": self.requirement}
        out.update(self.detail)
        return out


__all__ = ["CompactionError"]
