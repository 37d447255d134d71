"""The goal service over an in-memory session log (spec chapter ``goal/service``).

It mirrors what DSH's ``ctx.goals`` writes: one ``goal/change`` per mutation, with the
revision, timestamps and counters that the strict fold accepts. Activation (armed or
disarmed) lives in the service instance only and is never written. The clock and the id
source are injected, so a run is reproducible.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..text import js_trim
from .decode import BLOCK_CODE, GOAL_CHANGE_VERSION
from .errors import GoalError
from .fold import GoalState, apply_event, event_seq

Event = dict[str, Any]
DEFAULT_MAX_GOAL_ROUNDS = 256
MAX_SAFE_INTEGER = 9_007_199_254_740_991


def _positive(value: Any) -> bool:
    return type(value) is int and 1 <= value <= MAX_SAFE_INTEGER


def _max_rounds(value: Any) -> int:
    if not _positive(value):
        raise GoalError("GOAL_INVALID_MAX_ROUNDS", "GOAL-SVC-002",
                        "maxGoalRounds must be a positive safe integer")
    return int(value)


def _objective(value: Any) -> str:
    if not isinstance(value, str) or js_trim(value) == "":
        raise GoalError("GOAL_INVALID_OBJECTIVE", "GOAL-SVC-002",
                        "a goal objective must be a non-empty string")
    return js_trim(value)


def _block_reason(reason: Any) -> dict[str, str]:
    code = reason.get("code") if isinstance(reason, dict) else None
    message = reason.get("message") if isinstance(reason, dict) else None
    if (not isinstance(code, str) or not BLOCK_CODE.match(code) or not isinstance(message, str)
            or js_trim(message) == ""):
        raise GoalError("GOAL_INVALID_BLOCK_REASON", "GOAL-SVC-002",
                        "a block reason needs a lower-kebab-case code and a non-empty message")
    return {"code": code, "message": js_trim(message)}


@dataclass
class GoalService:
    """``ctx.goals`` for one session. ``events`` is the log (appended to in place)."""

    events: list[Event] = field(default_factory=list)
    clock: Callable[[], int] = lambda: 0
    new_id: Callable[[], str] = lambda: f"goal-{uuid.uuid4()}"
    default_max_goal_rounds: int = DEFAULT_MAX_GOAL_ROUNDS
    activation: str = "disarmed"
    state: GoalState = field(default_factory=GoalState)
    _seen: int = 0

    def __post_init__(self) -> None:
        self.default_max_goal_rounds = _max_rounds(self.default_max_goal_rounds)
        self._sync(own=False)

    # -- reading ----------------------------------------------------------------------------

    def _sync(self, *, own: bool, activation: str | None = None) -> None:
        """Fold the events not seen yet. A ``goal/change`` this service did not write
        disarms the goal (GOAL-SVC-005)."""
        while self._seen < len(self.events):
            event = self.events[self._seen]
            apply_event(self.state, event, event_seq(event, self._seen))
            if isinstance(event, dict) and event.get("type") == "goal/change":
                self.activation = activation if own and activation else "disarmed"
            self._seen += 1

    def get(self) -> dict[str, Any] | None:
        self._sync(own=False)
        return self.view()

    def view(self) -> dict[str, Any] | None:
        """GOAL-SVC-001: the snapshot plus counters, timestamps and activation."""
        goal = self.state.goal
        if goal is None:
            return None
        return {**copy.deepcopy(goal), "roundsStarted": self.state.rounds_started,
                "createdAt": self.state.created_at, "updatedAt": self.state.updated_at,
                "activation": self.activation}

    def disarm(self) -> dict[str, Any] | None:
        self._sync(own=False)
        self.activation = "disarmed"
        return self.view()

    def session_start(self) -> None:
        """An agent session start disarms the goal (GOAL-SVC-005)."""
        self._sync(own=False)
        self.activation = "disarmed"

    # -- writing ----------------------------------------------------------------------------

    def _append(self, data: dict[str, Any], activation: str, kind: str = "goal/change") -> None:
        self._sync(own=False)
        seq = len(self.events)
        self.events.append({"type": kind, "seq": seq, "time": self.clock(), "data": data})
        try:
            self._sync(own=True, activation=activation)
        except GoalError:
            self.events.pop()
            self._seen = seq
            raise

    def _current(self, ref: Any) -> dict[str, Any]:
        self._sync(own=False)
        goal = self.state.goal
        if goal is None:
            raise GoalError("GOAL_NOT_FOUND", "GOAL-SVC-003", "there is no current goal")
        ref_id = ref.get("id") if isinstance(ref, dict) else None
        ref_rev = ref.get("revision") if isinstance(ref, dict) else None
        if ref_id != goal["id"] or ref_rev != goal["revision"]:
            raise GoalError("GOAL_STALE_REVISION", "GOAL-SVC-003",
                            f'stale goal ref "{ref_id}" revision {ref_rev}; the current goal is '
                            f'"{goal["id"]}" revision {goal["revision"]}')
        return goal

    def _now(self) -> int:
        assert self.state.updated_at is not None
        return max(self.clock(), self.state.updated_at)

    def _snapshot(self, operation: str, goal: dict[str, Any], activation: str, *,
                  rounds: int, created: int, updated: int) -> dict[str, Any]:
        self._append({"kind": "goal/change", "version": GOAL_CHANGE_VERSION,
                      "operation": operation, "goal": goal, "roundsStarted": rounds,
                      "createdAt": created, "updatedAt": updated}, activation)
        view = self.view()
        assert view is not None
        return view

    def _next(self, operation: str, goal: dict[str, Any], activation: str) -> dict[str, Any]:
        assert self.state.created_at is not None
        return self._snapshot(operation, goal, activation, rounds=self.state.rounds_started,
                              created=self.state.created_at, updated=self._now())

    @staticmethod
    def _with_phase(goal: dict[str, Any], phase: str) -> dict[str, Any]:
        return {"id": goal["id"], "revision": goal["revision"] + 1,
                "objective": goal["objective"], "phase": phase,
                "maxGoalRounds": goal["maxGoalRounds"]}

    @staticmethod
    def _transition_error(goal: dict[str, Any], operation: str,
                          allowed: Iterable[str]) -> GoalError:
        return GoalError("GOAL_INVALID_TRANSITION", "GOAL-SVC-004",
                         f'cannot {operation} goal "{goal["id"]}" from phase "{goal["phase"]}"; '
                         f"expected {' or '.join(allowed)}")

    def create(self, objective: Any, max_goal_rounds: Any = None) -> dict[str, Any]:
        """GOAL-SVC-002: a new active goal, revision 1, armed."""
        text = _objective(objective)
        cap = _max_rounds(self.default_max_goal_rounds if max_goal_rounds is None
                          else max_goal_rounds)
        self._sync(own=False)
        current = self.state.goal
        if current is not None and current["phase"] != "complete":
            raise GoalError("GOAL_ALREADY_EXISTS", "GOAL-SVC-003",
                            f'goal "{current["id"]}" already exists with phase '
                            f'"{current["phase"]}"')
        now = self.clock()
        goal = {"id": self.new_id(), "revision": 1, "objective": text, "phase": "active",
                "maxGoalRounds": cap}
        return self._snapshot("create", goal, "armed", rounds=0, created=now, updated=now)

    def edit(self, ref: Any, objective: Any = None, max_goal_rounds: Any = None
             ) -> dict[str, Any]:
        current = self._current(ref)
        if objective is None and max_goal_rounds is None:
            raise GoalError("GOAL_INVALID_EDIT", "GOAL-SVC-002",
                            "a goal edit needs an objective, a maxGoalRounds, or both")
        goal = {**copy.deepcopy(current), "revision": current["revision"] + 1}
        if objective is not None:
            goal["objective"] = _objective(objective)
        if max_goal_rounds is not None:
            goal["maxGoalRounds"] = _max_rounds(max_goal_rounds)
        return self._next("edit", goal, self.activation)

    def pause(self, ref: Any) -> dict[str, Any]:
        current = self._current(ref)
        if current["phase"] != "active":
            raise self._transition_error(current, "pause", ("active",))
        return self._next("pause", self._with_phase(current, "paused"), "disarmed")

    def resume(self, ref: Any) -> dict[str, Any]:
        current = self._current(ref)
        resumable = ("active", "paused", "blocked")
        if current["phase"] not in resumable:
            raise self._transition_error(current, "resume", resumable)
        if current["phase"] == "active" and self.activation == "armed":
            raise GoalError("GOAL_INVALID_TRANSITION", "GOAL-SVC-004",
                            f'goal "{current["id"]}" is already active and armed')
        if self.state.rounds_started >= current["maxGoalRounds"]:
            raise GoalError("GOAL_INVALID_TRANSITION", "GOAL-SVC-004",
                            f'goal "{current["id"]}" has used all {current["maxGoalRounds"]} '
                            "goal rounds; raise maxGoalRounds before resuming")
        return self._next("resume", self._with_phase(current, "active"), "armed")

    def complete(self, ref: Any) -> dict[str, Any]:
        current = self._current(ref)
        allowed = ("active", "paused", "blocked")
        if current["phase"] not in allowed:
            raise self._transition_error(current, "complete", allowed)
        return self._next("complete", self._with_phase(current, "complete"), "disarmed")

    def block(self, ref: Any, reason: Any) -> dict[str, Any]:
        current = self._current(ref)
        if current["phase"] != "active":
            raise self._transition_error(current, "block", ("active",))
        goal = {**self._with_phase(current, "blocked"), "blockedReason": _block_reason(reason)}
        return self._next("block", goal, "disarmed")

    def clear(self, ref: Any) -> dict[str, Any]:
        current = self._current(ref)
        tombstone = {"id": current["id"], "revision": current["revision"] + 1}
        self._append({"kind": "goal/change", "version": GOAL_CHANGE_VERSION,
                      "operation": "clear", "cleared": tombstone, "clearedAt": self._now()},
                     "disarmed")
        return dict(tombstone)

    def admit_round(self, content: str = "") -> int:
        """Append the next goal round as a ``user/message`` (what the round driver does)."""
        self._sync(own=False)
        goal = self.state.goal
        if goal is None:
            raise GoalError("GOAL_NOT_FOUND", "GOAL-SVC-003", "there is no current goal")
        number = self.state.rounds_started + 1
        seq = len(self.events)
        self.events.append({
            "type": "user/message", "seq": seq, "time": self.clock(),
            "data": {"id": f"goal-round-{seq}", "role": "user",
                     "content": [{"type": "text", "text": content or f"Round {number}"}],
                     "source": {"kind": "goal", "goalId": goal["id"],
                                "revision": goal["revision"], "round": number}},
            "surfaceOp": "append"})
        try:
            self._sync(own=False)
        except GoalError:
            self.events.pop()
            self._seen = seq
            raise
        return number


__all__ = ["DEFAULT_MAX_GOAL_ROUNDS", "GoalService"]
