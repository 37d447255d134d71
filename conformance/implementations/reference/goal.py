"""The dshkit reference bound to the kit's ``goal`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dshkit.conformance.interface import JsonObject
from dshkit.reference.goal import (
    GoalError,
    GoalService,
    decode_goal_change,
    encode_goal_change,
    fold_goal,
)


def _error(exc: GoalError) -> JsonObject:
    return {"valid": False, "error": exc.to_json()}


def _service(input: JsonObject, params: JsonObject) -> JsonObject:
    """Run ``input.steps`` against a service over ``input.events``. Each step is
    ``{op, args?, now?}``; ``now`` sets the clock for that step (it stays until changed)."""
    clock = {"now": int(params.get("now", 0))}
    ids: Iterator[str] = iter(params.get("goalIds", [f"goal-{n}" for n in range(1, 100)]))
    events = [dict(e) for e in input.get("events", [])]
    service = GoalService(events=events, clock=lambda: clock["now"],
                          new_id=lambda: next(ids),
                          default_max_goal_rounds=params.get("defaultMaxGoalRounds", 256))
    start = len(events)
    results: list[JsonObject] = []
    for step in input["steps"]:
        if "now" in step:
            clock["now"] = int(step["now"])
        args = dict(step.get("args", {}))
        try:
            results.append({"ok": _call(service, step["op"], args)})
        except GoalError as exc:
            results.append({"error": exc.code})
    return {"valid": True, "results": results, "events": events[start:],
            "view": service.get()}


def _call(service: GoalService, op: str, args: JsonObject) -> Any:
    ref = args.get("ref")
    if op == "create":
        return service.create(args.get("objective"), args.get("maxGoalRounds"))
    if op == "edit":
        return service.edit(ref, args.get("objective"), args.get("maxGoalRounds"))
    if op in ("pause", "resume", "complete", "clear"):
        return getattr(service, op)(ref)
    if op == "block":
        return service.block(ref, args.get("reason"))
    if op == "round":
        return service.admit_round()
    if op == "get":
        return service.get()
    if op == "disarm":
        return service.disarm()
    if op == "session-start":
        service.session_start()
        return None
    raise ValueError(f"unknown service call {op!r}")


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run one case through the dshkit reference."""
    try:
        if operation == "goal.fold":
            return {"valid": True, "state": fold_goal(input["events"]).to_json()}
        if operation == "goal.decode":
            change = decode_goal_change(input["data"])
            return {"valid": True,
                    "change": None if change is None else encode_goal_change(change)}
        if operation == "goal.service":
            return _service(input, params)
    except GoalError as exc:
        return _error(exc)
    except ValueError as exc:
        return {"valid": False, "error": {"code": "UNKNOWN_OPERATION", "message": str(exc)}}
    return {"valid": False, "error": {"code": "UNKNOWN_OPERATION",
                                      "message": f"unknown operation {operation!r}"}}


