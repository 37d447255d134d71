"""Unit rules of the goal reference that the vectors do not pin down."""

from __future__ import annotations

import pytest

from dshkit.reference.goal import (
    GoalError,
    GoalService,
    decode_goal_change,
    encode_goal_change,
    fold_goal,
)
from dshkit.reference.text import js_trim


def test_refused_round_leaves_the_log_unchanged() -> None:
    service = GoalService(clock=lambda: 1, new_id=lambda: "g")
    service.create("x", 1)
    service.admit_round()
    before = list(service.events)
    with pytest.raises(GoalError) as caught:
        service.admit_round()  # over the cap
    assert caught.value.code == "GOAL_ROUND_NOT_ADMITTED"
    assert service.events == before
    assert fold_goal(service.events).rounds_started == 1


def test_encode_is_the_inverse_of_decode() -> None:
    service = GoalService(clock=lambda: 3, new_id=lambda: "g")
    service.create("x")
    service.block({"id": "g", "revision": 1}, {"code": "a-b", "message": "m"})
    service.clear({"id": "g", "revision": 2})
    for event in service.events:
        change = decode_goal_change(event["data"])
        assert change is not None
        assert encode_goal_change(change) == event["data"]


def test_ecmascript_trim() -> None:
    assert js_trim("\u00a0\ufeff x \u2028") == "x"
    assert js_trim("\u0085x") == "\u0085x"  # NEL is not ECMAScript white space
    service = GoalService(new_id=lambda: "g")
    with pytest.raises(GoalError) as caught:
        service.create("\u3000\u00a0")
    assert caught.value.code == "GOAL_INVALID_OBJECTIVE"


def test_non_object_events_and_sources_are_ignored() -> None:
    state = fold_goal(["not an event", {"type": "user/message", "data": None},
                       {"type": "user/message", "data": {"source": "goal"}}])
    assert state.to_json() == {"roundsStarted": 0}


def test_replay_error_names_the_event() -> None:
    with pytest.raises(GoalError) as caught:
        fold_goal([{"type": "goal/change", "seq": 4, "data": {"kind": "goal/change"}}])
    assert caught.value.seq == 4
    assert caught.value.message.startswith(
        "session event 4 violates the durable goal stream: unsupported goal change version")
