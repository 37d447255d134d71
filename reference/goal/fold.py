"""The strict goal replay fold (spec chapter ``goal/fold``).

Events are read in seq order. ``goal/change`` events move the goal through the transition
table; ``user/message`` events whose source kind is ``goal`` admit rounds; every other event
leaves the state alone. The first violation stops the replay.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..session.checks import is_nonneg_safe_int
from .decode import Clear, GoalChange, Snapshot, decode_goal_change, is_positive_safe_int
from .errors import GoalError

Event = dict[str, Any]


@dataclass
class GoalState:
    """The fold accumulator: the current goal (if any), its counters and every id seen."""

    goal: dict[str, Any] | None = None
    rounds_started: int = 0
    created_at: int | None = None
    updated_at: int | None = None
    last_ref: dict[str, Any] | None = None
    seen_ids: set[str] = field(default_factory=set)

    def copy(self) -> GoalState:
        return GoalState(goal=copy.deepcopy(self.goal), rounds_started=self.rounds_started,
                         created_at=self.created_at, updated_at=self.updated_at,
                         last_ref=copy.deepcopy(self.last_ref), seen_ids=set(self.seen_ids))

    def to_json(self) -> dict[str, Any]:
        """GOAL-FLD-009: ``{goal?, roundsStarted, createdAt?, updatedAt?, lastRef?}``."""
        out: dict[str, Any] = {}
        if self.goal is not None:
            out["goal"] = copy.deepcopy(self.goal)
        out["roundsStarted"] = self.rounds_started
        if self.created_at is not None:
            out["createdAt"] = self.created_at
        if self.updated_at is not None:
            out["updatedAt"] = self.updated_at
        if self.last_ref is not None:
            out["lastRef"] = dict(self.last_ref)
        return out


def _refuse(code: str, requirement: str, message: str) -> GoalError:
    return GoalError(code, requirement, message)


def _next_revision(current: dict[str, Any], ref: dict[str, Any], operation: str) -> None:
    if ref["id"] != current["id"] or ref["revision"] != current["revision"] + 1:
        raise _refuse("GOAL_REVISION_MISMATCH", "GOAL-FLD-003",
                      f"goal {operation} must advance the current goal by exactly one revision")


def _same_definition(current: dict[str, Any], nxt: dict[str, Any], operation: str) -> None:
    if (nxt["objective"] != current["objective"]
            or nxt["maxGoalRounds"] != current["maxGoalRounds"]):
        raise _refuse("GOAL_DEFINITION_CHANGED", "GOAL-FLD-005",
                      f"goal {operation} cannot change objective or maxGoalRounds")


def _transition(state: GoalState, change: Snapshot, current: dict[str, Any]) -> None:
    """GOAL-FLD-003..006: a non-create snapshot against the current goal."""
    nxt = change.goal
    op = change.operation
    _next_revision(current, nxt, op)
    assert state.updated_at is not None
    if (change.created_at != state.created_at or change.updated_at < state.updated_at
            or change.rounds_started != state.rounds_started):
        raise _refuse("GOAL_COUNTERS_CHANGED", "GOAL-FLD-004",
                      f"goal {op} does not keep the current createdAt and roundsStarted, or "
                      "moves updatedAt backwards")
    phase, new_phase = current["phase"], nxt["phase"]
    if op == "edit":
        if new_phase != phase or nxt.get("blockedReason") != current.get("blockedReason"):
            raise _refuse("GOAL_EDIT_PHASE_CHANGED", "GOAL-FLD-005",
                          "goal edit cannot change phase or blocked reason")
        return
    _same_definition(current, nxt, op)
    allowed = {
        "pause": phase == "active" and new_phase == "paused",
        "resume": (phase in ("active", "paused", "blocked") and new_phase == "active"
                   and state.rounds_started < nxt["maxGoalRounds"]),
        "complete": phase != "complete" and new_phase == "complete",
        "block": phase == "active" and new_phase == "blocked",
    }
    if not allowed[op]:
        extra = " or exhausted round budget" if op == "resume" else ""
        raise _refuse("GOAL_INVALID_TRANSITION", "GOAL-FLD-006",
                      f"goal {op} has an invalid phase transition{extra} (from {phase} to "
                      f"{new_phase})")


def apply_change(state: GoalState, change: GoalChange) -> None:
    """GOAL-FLD-001..007: apply one decoded change, or raise without touching ``state``."""
    if isinstance(change, Clear):
        current = state.goal
        if current is None:
            raise _refuse("GOAL_NOT_FOUND", "GOAL-FLD-007", "goal clear requires a current goal")
        _next_revision(current, change.cleared, "clear")
        assert state.updated_at is not None
        if change.cleared_at < state.updated_at:
            raise _refuse("GOAL_CLEAR_TIMESTAMP", "GOAL-FLD-007",
                          "goal clear timestamp cannot precede the current goal update")
        state.goal, state.rounds_started = None, 0
        state.created_at = state.updated_at = None
        state.last_ref = change.ref
        return
    if change.operation == "create":
        goal = change.goal
        if (goal["revision"] != 1 or goal["phase"] != "active" or change.rounds_started != 0
                or (state.goal is not None and state.goal["phase"] != "complete")
                or goal["id"] in state.seen_ids):
            raise _refuse("GOAL_CREATE_REFUSED", "GOAL-FLD-002",
                          "goal create needs a fresh, active, revision-1 goal with no rounds "
                          "started, and no current goal unless it is complete")
        state.seen_ids.add(goal["id"])
    else:
        current = state.goal
        if current is None:
            raise _refuse("GOAL_NOT_FOUND", "GOAL-FLD-003",
                          f"goal {change.operation} requires a current goal")
        _transition(state, change, current)
    state.goal = copy.deepcopy(change.goal)
    state.rounds_started = change.rounds_started
    state.created_at, state.updated_at = change.created_at, change.updated_at
    state.last_ref = change.ref


def goal_source(source: Any) -> dict[str, Any] | None:
    """GOAL-RND-001: the goal source of a user message, ``None`` for any other source."""
    if not isinstance(source, dict) or source.get("kind") != "goal":
        return None
    goal_id = source.get("goalId")
    if (not isinstance(goal_id, str) or goal_id == ""
            or not is_positive_safe_int(source.get("revision"))
            or not is_positive_safe_int(source.get("round"))):
        raise _refuse("GOAL_ROUND_SOURCE_INVALID", "GOAL-RND-001",
                      "goal message source is invalid")
    return source


def apply_event(state: GoalState, event: Any, seq: int) -> None:
    """Apply one session event; raises :class:`GoalError` located at ``seq``."""
    if not isinstance(event, dict):
        return
    kind = event.get("type")
    try:
        if kind == "goal/change":
            change = decode_goal_change(event.get("data"))
            if change is None:
                raise _refuse("GOAL_CHANGE_KIND", "GOAL-DEC-001",
                              f"goal change at session event {seq} has an invalid kind")
            trial = state.copy()
            apply_change(trial, change)
            _assign(state, trial)
        elif kind == "user/message":
            data = event.get("data")
            source = goal_source(data.get("source") if isinstance(data, dict) else None)
            if source is None:
                return
            current = state.goal
            if (current is None or current["phase"] != "active"
                    or source["goalId"] != current["id"]
                    or source["revision"] != current["revision"]
                    or source["round"] != state.rounds_started + 1
                    or source["round"] > current["maxGoalRounds"]):
                raise _refuse("GOAL_ROUND_NOT_ADMITTED", "GOAL-RND-002",
                              f"goal round at session event {seq} is not the next admitted round "
                              "of the active goal")
            state.rounds_started = int(source["round"])
    except GoalError as exc:
        raise exc.at(seq) from None


def _assign(state: GoalState, trial: GoalState) -> None:
    state.goal, state.rounds_started = trial.goal, trial.rounds_started
    state.created_at, state.updated_at = trial.created_at, trial.updated_at
    state.last_ref, state.seen_ids = trial.last_ref, trial.seen_ids


def event_seq(event: Any, index: int) -> int:
    seq = event.get("seq") if isinstance(event, dict) else None
    return seq if isinstance(seq, int) and is_nonneg_safe_int(seq) else index


def fold_goal(events: Iterable[Any]) -> GoalState:
    """GOAL-FLD-008: replay a whole log; the first refused event raises :class:`GoalError`."""
    state = GoalState()
    for index, event in enumerate(events):
        apply_event(state, event, event_seq(event, index))
    return state


__all__ = ["GoalState", "apply_change", "apply_event", "event_seq", "fold_goal", "goal_source"]
