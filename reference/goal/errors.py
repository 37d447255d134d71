"""The one structured error type of the goal area (spec chapter ``goal/errors``)."""

from __future__ import annotations

from typing import Any

from ..errors import DshkitError


class GoalError(DshkitError):
    """A refused goal change, round or service call: a stable ``code``, the requirement it
    enforces, a message, and the session ``seq`` when it comes from replay."""

    def __init__(self, code: str, requirement: str, message: str, *,
                 seq: int | None = None) -> None:
        super().__init__(code, message, {"requirement": requirement} if seq is None
                         else {"requirement": requirement, "seq": seq})
        self.requirement = requirement
        self.seq = seq

    def at(self, seq: int) -> GoalError:
        """A copy located at a session event, worded as the replay companion reports it."""
        return GoalError(self.code, self.requirement,
                         f"session event {seq} violates the durable goal stream: {self.message}",
                         seq=seq)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message,
                               "requirement": self.requirement}
        if self.seq is not None:
            out["seq"] = self.seq
        return out


__all__ = ["GoalError"]
