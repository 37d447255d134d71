"""The strict ``goal/change`` decoder (spec chapter ``goal/events``, GOAL-DEC requirements).

Key sets are exact. Checks run in a fixed order and the first failure is reported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..session.checks import is_nonneg_safe_int
from ..text import js_trim
from .errors import GoalError

GOAL_CHANGE_VERSION = 1
PHASES = ("active", "paused", "blocked", "complete")
SNAPSHOT_OPERATIONS = ("create", "edit", "pause", "resume", "complete", "block")
BLOCK_CODE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*\Z")

_SNAPSHOT_KEYS = ("createdAt", "goal", "kind", "operation", "roundsStarted", "updatedAt",
                  "version")
_CLEAR_KEYS = ("cleared", "clearedAt", "kind", "operation", "version")
_GOAL_KEYS = ("id", "maxGoalRounds", "objective", "phase", "revision")


def is_positive_safe_int(value: Any) -> bool:
    return is_nonneg_safe_int(value) and value >= 1


def is_normalized_text(value: Any) -> bool:
    """Non-empty after trimming and already equal to its trimmed form."""
    return isinstance(value, str) and js_trim(value) != "" and js_trim(value) == value


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A decoded ``goal/change`` snapshot change (the state after the mutation)."""

    operation: str
    goal: dict[str, Any]
    rounds_started: int
    created_at: int
    updated_at: int

    @property
    def ref(self) -> dict[str, Any]:
        return {"id": self.goal["id"], "revision": self.goal["revision"]}


@dataclass(frozen=True, slots=True)
class Clear:
    """A decoded ``goal/change`` clear tombstone."""

    cleared: dict[str, Any]
    cleared_at: int
    operation: str = "clear"

    @property
    def ref(self) -> dict[str, Any]:
        return dict(self.cleared)


GoalChange = Snapshot | Clear


def _keys(value: dict[str, Any], expected: tuple[str, ...], what: str) -> None:
    if sorted(value) != sorted(expected):
        raise GoalError("GOAL_CHANGE_KEYS", "GOAL-DEC-003",
                        f"{what} must have exactly the members {','.join(sorted(expected))}")


def _value(message: str) -> GoalError:
    return GoalError("GOAL_CHANGE_VALUE", "GOAL-DEC-004", message)


def _nonneg(value: Any, name: str) -> int:
    if not is_nonneg_safe_int(value):
        raise _value(f"goal change {name} must be a non-negative safe integer")
    return int(value)


def _positive(value: Any, name: str) -> int:
    if not is_positive_safe_int(value):
        raise _value(f"goal change {name} must be a positive safe integer")
    return int(value)


def decode_block_reason(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise GoalError("GOAL_CHANGE_KEYS", "GOAL-DEC-003",
                        "goal change goal.blockedReason must have exactly the members "
                        "code,message")
    _keys(value, ("code", "message"), "goal change goal.blockedReason")
    if not isinstance(value["code"], str) or not BLOCK_CODE.match(value["code"]):
        raise _value("goal change goal.blockedReason.code must be lower-kebab-case")
    if not is_normalized_text(value["message"]):
        raise _value("goal change goal.blockedReason.message must be non-empty and normalized")
    return {"code": value["code"], "message": value["message"]}


def decode_snapshot(value: Any) -> dict[str, Any]:
    """GOAL-DEC-004: a ``GoalSnapshot``, member checks in a fixed order."""
    if not isinstance(value, dict):
        raise _value("goal change goal must be an object")
    if not isinstance(value.get("id"), str) or value["id"] == "":
        raise _value("goal change goal.id must be a non-empty string")
    if not is_normalized_text(value.get("objective")):
        raise _value("goal change goal.objective must be non-empty and normalized")
    phase = value.get("phase")
    if phase not in PHASES:
        raise _value("goal change goal.phase is not one of active, paused, blocked, complete")
    expected = ("blockedReason", *_GOAL_KEYS) if phase == "blocked" else _GOAL_KEYS
    _keys(value, expected, f"goal change goal for phase {phase}")
    goal: dict[str, Any] = {
        "id": value["id"],
        "revision": _positive(value["revision"], "goal.revision"),
        "objective": value["objective"],
        "phase": phase,
        "maxGoalRounds": _positive(value["maxGoalRounds"], "goal.maxGoalRounds"),
    }
    if phase == "blocked":
        goal["blockedReason"] = decode_block_reason(value["blockedReason"])
    return goal


def decode_goal_change(value: Any) -> GoalChange | None:
    """GOAL-DEC-001..005: ``None`` for a value that is not a goal change at all."""
    if not isinstance(value, dict) or value.get("kind") != "goal/change":
        return None
    version = value.get("version")
    if version != GOAL_CHANGE_VERSION or not is_nonneg_safe_int(version):
        shown = "undefined" if "version" not in value else repr(version)
        raise GoalError("GOAL_CHANGE_VERSION", "GOAL-DEC-002",
                        f"unsupported goal change version {shown}")
    operation = value.get("operation")
    if operation == "clear":
        _keys(value, _CLEAR_KEYS, "goal clear change")
        cleared = value["cleared"]
        if not isinstance(cleared, dict):
            raise GoalError("GOAL_CHANGE_KEYS", "GOAL-DEC-003",
                            "goal clear tombstone must have exactly the members id,revision")
        _keys(cleared, ("id", "revision"), "goal clear tombstone")
        if not isinstance(cleared["id"], str) or cleared["id"] == "":
            raise _value("goal clear tombstone id must be a non-empty string")
        ref = {"id": cleared["id"], "revision": _positive(cleared["revision"],
                                                          "cleared.revision")}
        return Clear(cleared=ref, cleared_at=_nonneg(value["clearedAt"], "clearedAt"))
    if operation not in SNAPSHOT_OPERATIONS:
        raise GoalError("GOAL_CHANGE_OPERATION", "GOAL-DEC-001",
                        f"goal change operation {operation!r} is not a known operation")
    _keys(value, _SNAPSHOT_KEYS, "goal snapshot change")
    created = _nonneg(value["createdAt"], "createdAt")
    updated = _nonneg(value["updatedAt"], "updatedAt")
    if updated < created:
        raise GoalError("GOAL_CHANGE_TIMESTAMPS", "GOAL-DEC-005",
                        "goal change updatedAt cannot precede createdAt")
    goal = decode_snapshot(value["goal"])
    rounds = _nonneg(value["roundsStarted"], "roundsStarted")
    return Snapshot(operation=str(operation), goal=goal, rounds_started=rounds,
                    created_at=created, updated_at=updated)


def encode_goal_change(change: GoalChange) -> dict[str, Any]:
    """The ``goal/change`` data of a decoded change (members in DSH's writing order)."""
    if isinstance(change, Clear):
        return {"kind": "goal/change", "version": GOAL_CHANGE_VERSION, "operation": "clear",
                "cleared": dict(change.cleared), "clearedAt": change.cleared_at}
    return {"kind": "goal/change", "version": GOAL_CHANGE_VERSION,
            "operation": change.operation, "goal": dict(change.goal),
            "roundsStarted": change.rounds_started, "createdAt": change.created_at,
            "updatedAt": change.updated_at}


__all__ = ["BLOCK_CODE", "GOAL_CHANGE_VERSION", "PHASES", "SNAPSHOT_OPERATIONS", "Clear",
           "GoalChange", "Snapshot", "decode_block_reason", "decode_goal_change",
           "decode_snapshot", "encode_goal_change", "is_normalized_text",
           "is_positive_safe_int"]
