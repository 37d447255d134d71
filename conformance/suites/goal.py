"""The ``goal`` conformance suite: the strict ``goal/change`` decoder, the replay fold with
round admission, and the goal service (spec part ``goal``). The reference's binding is
:mod:`dshkit.conformance.implementations.reference.goal`."""

from __future__ import annotations

import json
from typing import Any

SUITE = "goal"
CAPABILITY = "goal"
OPERATIONS: tuple[str, ...] = ("goal.fold", "goal.decode", "goal.service")
#: The implementer's contract of each operation (``python -m dshkit.conformance.contract``).
OPERATION_DOCS: dict[str, dict[str, Any]] = {
    "goal.fold": {
        "summary": "Replay a session's goal events into the folded goal state.",
        "input": "`{\"events\": [...]}`: the session log's events, in memory.",
        "result": "`{\"valid\": true, \"state\": {...}}` (the folded state as JSON), or "
                  "`{\"valid\": false, \"error\": {\"code\", \"seq\"?, \"message\"}}`.",
    },
    "goal.decode": {
        "summary": "Decode the `data` of one `goal/change` event strictly.",
        "input": "`{\"data\": ...}`: the event's data member, any JSON value.",
        "result": "`{\"valid\": true, \"change\": {...} | null}` (the change as JSON, `null` "
                  "when the data is not a goal change), or `{\"valid\": false, \"error\": "
                  "{\"code\", \"message\"}}`.",
    },
    "goal.service": {
        "summary": "Run a program of goal-service calls over a session's goal events.",
        "input": "`{\"events\": [...], \"steps\": [{\"op\", \"args\"?, \"now\"?}]}`: `op` is "
                 "one of create, edit, pause, resume, complete, clear, block, round, get, "
                 "disarm, session-start; `now` sets the clock from that step on.",
        "params": {
            "now": {"default": 0, "description": "the clock (milliseconds) before any step "
                                                 "sets it"},
            "goalIds": {"default_text": "`goal-1`, `goal-2`, ... `goal-99`",
                        "description": "the ids the service gives new goals, in order"},
            "defaultMaxGoalRounds": {"default": 256,
                                     "description": "the round budget of a goal created "
                                                    "without one"},
        },
        "result": "`{\"valid\": true, \"results\": [{\"ok\": value} | {\"error\": code}], "
                  "\"events\": [...appended...], \"view\": {...}}`.",
    },
}

JsonObject = dict[str, Any]


def compare(expect: JsonObject, result: JsonObject) -> str:
    """``""`` when ``result`` meets ``expect``: the same validity; for a refusal the same
    ``code`` (and ``seq`` / a ``messageContains`` substring when given); otherwise every
    member of ``expect`` equal, as JSON, to the same member of ``result``."""
    if result.get("valid") is not expect.get("valid"):
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect.get('valid')}, got {json.dumps(got)}"
    if not expect["valid"]:
        want, error = expect.get("error", {}), result.get("error") or {}
        for key in ("code", "seq"):
            if key in want and error.get(key) != want[key]:
                return (f"expected error {key} {want[key]!r}, got {error.get(key)!r} "
                        f"({error.get('message', '')})")
        if "messageContains" in want and want["messageContains"] not in error.get("message", ""):
            return f"error message {error.get('message')!r} lacks {want['messageContains']!r}"
        return ""
    for key, value in expect.items():
        if key == "valid":
            continue
        if key not in result:
            return f"{key}: missing from the result"
        if json.dumps(result[key], sort_keys=True) != json.dumps(value, sort_keys=True):
            return f"{key}: expected {json.dumps(value)}, got {json.dumps(result[key])}"
    return ""


__all__ = ["CAPABILITY", "OPERATIONS", "SUITE", "compare"]
