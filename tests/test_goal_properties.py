"""Property tests of the goal reference (fast: at most 40 examples each).

- any sequence of service calls writes a log that the strict fold accepts, the fold equals the
  service's view without activation, replay is deterministic and prefix-closed, and the
  revisions of a goal are 1, 2, 3, ...;
- the fold accepts a candidate change exactly when an independent, table-driven oracle of the
  transition rules says it is legal, so it rejects every illegal transition.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshkit.reference.goal import GoalError, GoalService, fold_goal

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPS = ("create", "edit", "pause", "resume", "complete", "block", "clear", "round", "disarm",
       "session-start")
PHASES = ("active", "paused", "blocked", "complete")


@st.composite
def service_runs(draw: st.DrawFn) -> tuple[GoalService, list[Any]]:
    """A service driven by random calls, stale refs and a clock that sometimes steps back."""
    clock: dict[str, int] = {"now": draw(st.integers(0, 10_000))}
    counter = iter(range(1, 1_000))
    service = GoalService(clock=lambda: clock["now"], new_id=lambda: f"goal-{next(counter)}",
                          default_max_goal_rounds=draw(st.integers(1, 4)))
    outcomes: list[Any] = []
    for _ in range(draw(st.integers(0, 25))):
        clock["now"] += draw(st.integers(-50, 200))
        clock["now"] = max(0, clock["now"])
        view = service.get()
        op = draw(st.sampled_from(OPS if view else ("create", "create", *OPS)))
        ref_id = str(view["id"]) if view else "goal-0"
        revision = int(view["revision"]) if view else 1
        if draw(st.integers(0, 9)) == 0:
            revision += 1  # stale
        ref = {"id": ref_id, "revision": revision}
        try:
            if op == "create":
                outcomes.append(service.create(draw(st.sampled_from(("x", "  y ", ""))),
                                               draw(st.sampled_from((None, 1, 3)))))
            elif op == "edit":
                outcomes.append(service.edit(ref, draw(st.sampled_from((None, "z"))),
                                             draw(st.sampled_from((None, 1, 5)))))
            elif op == "block":
                outcomes.append(service.block(ref, {"code": draw(st.sampled_from(
                    ("needs-input", "Bad Code"))), "message": " why "}))
            elif op == "round":
                outcomes.append(service.admit_round())
            elif op == "disarm":
                outcomes.append(service.disarm())
            elif op == "session-start":
                service.session_start()
            else:
                outcomes.append(getattr(service, op)(ref))
        except GoalError as exc:
            outcomes.append(exc.code)
    return service, outcomes


@FAST
@given(service_runs())
def test_service_logs_fold_to_the_service_view(run: tuple[GoalService, list[Any]]) -> None:
    service, _ = run
    events = service.events
    state = fold_goal(events).to_json()
    view = service.get()
    if view is None:
        assert "goal" not in state
    else:
        expected = {k: v for k, v in view.items()
                    if k not in ("roundsStarted", "createdAt", "updatedAt", "activation")}
        assert state["goal"] == expected
        assert (state["roundsStarted"], state["createdAt"], state["updatedAt"]) == (
            view["roundsStarted"], view["createdAt"], view["updatedAt"])
        assert state["roundsStarted"] <= view["maxGoalRounds"] or any(
            e["type"] == "goal/change" and e["data"]["operation"] == "edit" for e in events)
    # deterministic, and unchanged by a JSON round trip
    assert fold_goal(events).to_json() == state
    assert fold_goal(json.loads(json.dumps(events))).to_json() == state
    # prefix-closed
    for cut in range(len(events) + 1):
        fold_goal(events[:cut])
    # revisions of each goal are 1, 2, 3, ... (a clear takes the next number)
    revisions: dict[str, list[int]] = {}
    for event in events:
        if event["type"] != "goal/change":
            continue
        data = event["data"]
        ref = data["cleared"] if data["operation"] == "clear" else data["goal"]
        revisions.setdefault(ref["id"], []).append(ref["revision"])
    for seen in revisions.values():
        assert seen == list(range(1, len(seen) + 1))


def _oracle(state: dict[str, Any], seen: set[str], change: dict[str, Any]) -> bool:
    """The transition rules of spec chapter goal/fold, written as a table."""
    current = state.get("goal")
    if change["operation"] == "clear":
        return (current is not None
                and change["cleared"] == {"id": current["id"], "revision": current["revision"] + 1}
                and change["clearedAt"] >= state["updatedAt"])
    goal = change["goal"]
    if change["updatedAt"] < change["createdAt"] or goal["revision"] < 1:
        return False  # the decoder refuses it
    if change["operation"] == "create":
        return (goal["revision"] == 1 and goal["phase"] == "active"
                and change["roundsStarted"] == 0 and goal["id"] not in seen
                and (current is None or current["phase"] == "complete"))
    if current is None or goal["id"] != current["id"] or \
            goal["revision"] != current["revision"] + 1:
        return False
    if (change["createdAt"] != state["createdAt"] or change["updatedAt"] < state["updatedAt"]
            or change["roundsStarted"] != state["roundsStarted"]):
        return False
    if change["operation"] == "edit":
        return bool(goal["phase"] == current["phase"]
                    and goal.get("blockedReason") == current.get("blockedReason"))
    if (goal["objective"], goal["maxGoalRounds"]) != (current["objective"],
                                                       current["maxGoalRounds"]):
        return False
    table = {("pause", "active"): "paused", ("resume", "active"): "active",
             ("resume", "paused"): "active", ("resume", "blocked"): "active",
             ("complete", "active"): "complete", ("complete", "paused"): "complete",
             ("complete", "blocked"): "complete", ("block", "active"): "blocked"}
    if table.get((change["operation"], current["phase"])) != goal["phase"]:
        return False
    return not (change["operation"] == "resume"
                and bool(state["roundsStarted"] >= goal["maxGoalRounds"]))


_TARGET = {"create": "active", "pause": "paused", "resume": "active", "complete": "complete",
           "block": "blocked"}


def _base(operation: str, state: dict[str, Any], fresh: str, later: int) -> dict[str, Any]:
    """The change the service would write for ``operation`` from ``state`` (it may still be
    illegal, for example a pause of a paused goal)."""
    current = state.get("goal") or {"id": "goal-1", "revision": 0, "objective": "x",
                                     "maxGoalRounds": 2, "phase": "active"}
    updated = state.get("updatedAt", 0) + later
    if operation == "clear":
        return {"kind": "goal/change", "version": 1, "operation": "clear",
                "cleared": {"id": current["id"], "revision": current["revision"] + 1},
                "clearedAt": updated}
    if operation == "create":
        goal = {"id": fresh, "revision": 1, "objective": "new", "phase": "active",
                "maxGoalRounds": 2}
        return {"kind": "goal/change", "version": 1, "operation": "create", "goal": goal,
                "roundsStarted": 0, "createdAt": updated, "updatedAt": updated}
    goal = {k: v for k, v in current.items() if k != "blockedReason"}
    goal["revision"] = current["revision"] + 1
    goal["phase"] = _TARGET.get(operation, current["phase"])
    if operation == "edit":
        goal["objective"] = current["objective"] + " v2"
        if "blockedReason" in current:
            goal["blockedReason"] = dict(current["blockedReason"])
    if goal["phase"] == "blocked" and "blockedReason" not in goal:
        goal["blockedReason"] = {"code": "needs-input", "message": "why"}
    return {"kind": "goal/change", "version": 1, "operation": operation, "goal": goal,
            "roundsStarted": state.get("roundsStarted", 0),
            "createdAt": state.get("createdAt", 0), "updatedAt": updated}


def _mutate(change: dict[str, Any], which: str) -> None:
    """Break (or, by chance, keep) one member of a change, keeping it decodable."""
    if change["operation"] == "clear":
        if which in ("id", "phase", "objective", "cap"):
            change["cleared"]["id"] = "goal-x"
        elif which in ("revision", "rounds", "reason"):
            change["cleared"]["revision"] += 1
        else:
            change["clearedAt"] = max(0, change["clearedAt"] - 1)
        return
    goal = change["goal"]
    if which == "id":
        goal["id"] = "goal-1" if goal["id"] != "goal-1" else "goal-2"
    elif which == "revision":
        goal["revision"] = max(1, goal["revision"] + (-1 if goal["revision"] > 1 else 1))
    elif which == "objective":
        goal["objective"] = "other"
    elif which == "cap":
        goal["maxGoalRounds"] = goal["maxGoalRounds"] + 1
    elif which == "phase":
        goal["phase"] = next(p for p in PHASES if p != goal["phase"])
        goal.pop("blockedReason", None)
        if goal["phase"] == "blocked":
            goal["blockedReason"] = {"code": "needs-input", "message": "why"}
    elif which == "rounds":
        change["roundsStarted"] += 1
    elif which == "created":
        change["createdAt"] += 1
        change["updatedAt"] = max(change["updatedAt"], change["createdAt"])
    elif which == "updated":
        change["updatedAt"] = max(change["createdAt"], change["updatedAt"] - 1)
    elif which == "reason" and "blockedReason" in goal:
        goal["blockedReason"] = {"code": "other", "message": "changed"}


@st.composite
def candidates(draw: st.DrawFn, state: dict[str, Any], fresh: str) -> dict[str, Any]:
    """The legal-looking change for a random operation, with at most one member broken."""
    operation = draw(st.sampled_from(("create", "edit", "pause", "resume", "complete",
                                      "block", "clear")))
    change = _base(operation, state, fresh, draw(st.sampled_from((0, 1, 7))))
    which = draw(st.sampled_from(("none", "none", "none", "id", "revision", "objective", "cap",
                                  "phase", "rounds", "created", "updated", "reason")))
    if which != "none":
        _mutate(change, which)
    return change


@FAST
@given(st.data())
def test_fold_rejects_exactly_the_illegal_transitions(data: st.DataObject) -> None:
    service, _ = data.draw(service_runs())
    events = list(service.events)
    state = fold_goal(events).to_json()
    seen = {e["data"]["goal"]["id"] for e in events
            if e["type"] == "goal/change" and e["data"]["operation"] == "create"}
    for attempt in range(6):
        change = data.draw(candidates(state, f"goal-fresh-{attempt}"))
        candidate = {"type": "goal/change", "seq": len(events), "time": 0, "data": change}
        legal = _oracle(state, seen, change)
        try:
            after = fold_goal([*events, candidate]).to_json()
        except GoalError as exc:
            assert not legal, (change, exc.to_json())
            assert exc.seq == len(events)
            continue
        assert legal, change
        events.append(candidate)
        state = after
        if change["operation"] == "create":
            seen.add(change["goal"]["id"])
