"""The checker's fast path (reference/session/fastpath.py) against its general path.

The fast path may only accept what the general path accepts and must leave the same state
behind. Every session vector and generated logs (valid ones from the kit's strategies, and
the same logs with one event damaged in many ways) are checked at every level with the fast
path on and off; the verdicts, the problems and the complete checker state must be equal.

The 2020-12 schemas stay normative: an event the fast path accepts is valid against the open
layer (envelope.json), and an event the open layer refuses is never taken by the fast path and
is refused by the reference.
"""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshkit import schemas
from dshkit.conformance.strategies import valid_logs
from dshkit.reference.problems import ProblemError
from dshkit.reference.session import fastpath, pipeline
from dshkit.reference.session.folding import fold_checks, fold_events, load_events
from dshkit.reference.session.levels import Checks, Level
from dshkit.reference.session.pipeline import SessionChecker, run_all
from dshkit.reference.session.validation import validate_events

VECTORS = Path(__file__).parent.parent / "conformance" / "vectors" / "session"
LEVELS = list(Level)
Event = dict[str, Any]


def _vector_logs() -> list[tuple[str, list[Any]]]:
    logs = []
    for path in sorted(VECTORS.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            events = case.get("input", {}).get("events")
            if isinstance(events, list):
                logs.append((case["id"], events))
    return logs


VECTOR_LOGS = _vector_logs()


@contextmanager
def general_path_only() -> Iterator[None]:
    """Run the checking loops with a fast path that declines every event."""
    original = pipeline.absorber

    def declining(checker: SessionChecker) -> fastpath.FastPath:
        return fastpath.FastPath(lambda events, start: start, lambda: None, lambda: None)

    pipeline.absorber = declining
    try:
        yield
    finally:
        pipeline.absorber = original


def state(checker: SessionChecker, events: list[Any]) -> dict[str, Any]:
    """Everything a later event, the closers or a report can read from a checker. Events are
    compared by value, and by whether they are the input's own objects."""
    fold, trace, tracker = checker.fold, checker.trace, checker.tracker
    given = {id(event): index for index, event in enumerate(events)}

    def same(event: Any) -> tuple[Any, int | None]:
        return event, given.get(id(event))

    return {
        "count": checker.count,
        "next": fold.next_seq,
        "nodes": list(fold.nodes),
        "current": [(seq, same(event)) for seq, event in fold._events.items()],
        "shadowed": list(fold.shadowed),
        "replacements": list(fold.replacements),
        "generation": fold.replace_generation,
        "trace": (trace.next_turn, trace.next_step, trace.open_turn, trace.open_step,
                  sorted(trace.pending_calls)),
        "tracker": (tracker.open_turn, tracker.open_step, tracker.last_seq, tracker.last_time,
                    [(k, v.step, v.call_seq) for k, v in tracker.pending.items()]),
        "kept": None if checker.kept is None else [same(e) for e in checker.kept],
        "closers": _closers(checker),
    }


def _closers(checker: SessionChecker) -> Any:
    try:
        return checker.closers()
    except TypeError as exc:  # closers are only defined for a log that passed its checks
        return repr(exc)


def run_both(events: list[Any], checks: Checks) -> None:
    """Run ``events`` through a checker with and without the fast path; compare."""
    outcomes = []
    for general in (False, True):
        checker = SessionChecker(checks, kept=[])
        if general:
            with general_path_only():
                problems = run_all(checker, ((None, e) for e in events))
        else:
            problems = run_all(checker, ((None, e) for e in events))
        outcomes.append((problems, state(checker, events)))
    assert outcomes[0] == outcomes[1]


def check_all_levels(events: list[Any]) -> None:
    for level in LEVELS:
        run_both(events, Checks.for_level(level))
    for repair in (True, False):
        run_both(events, fold_checks(repair))


@pytest.mark.parametrize(("case_id", "events"), VECTOR_LOGS, ids=[c for c, _ in VECTOR_LOGS])
def test_vector_logs_same_with_and_without_fast_path(case_id: str, events: list[Any]) -> None:
    check_all_levels(copy.deepcopy(events))


def _reports(events: list[Any]) -> list[Any]:
    calls: list[Callable[[], Any]] = [
        *(partial(validate_events, events, level) for level in LEVELS),
        partial(fold_events, events), partial(fold_events, events, repair=False),
        partial(load_events, events)]
    out = []
    for call in calls:
        try:
            out.append(call())
        except ProblemError as exc:  # load_events raises when the closers are refused
            out.append(exc.problem)
    return out


def test_reports_same_with_and_without_fast_path() -> None:
    for _, events in VECTOR_LOGS:
        fast = _reports(events)
        with general_path_only():
            general = _reports(events)
        assert fast == general


def test_the_fast_path_takes_the_common_shapes() -> None:
    """The fast path is not vacuous: a generated log is absorbed almost whole."""
    events = _generated_log(seed=3, turns=6)
    checker = SessionChecker(Checks.for_level(Level.LOAD))
    absorb, flush, reload = fastpath.absorber(checker)
    taken = 0
    index = 0
    while index < len(events):
        stop = absorb(events, index)
        taken += stop - index
        if stop < len(events):
            flush()
            checker.push(events[stop])
            reload()
        index = stop + 1
    flush()
    assert taken >= 0.8 * len(events)
    assert checker.count == len(events)


def _generated_log(seed: int, turns: int) -> list[Event]:
    found: list[list[Event]] = []

    @settings(max_examples=1, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(valid_logs(min_turns=turns, max_turns=turns))
    def draw(events: list[Event]) -> None:
        found.append(events)

    draw()
    return found[0]


# -- damaged logs ------------------------------------------------------------------------------

_VALUES: list[Any] = [None, True, False, 0, 1, -1, 2, 1.0, 0.5, -0.0, 2**53, 2**53 - 1, -(2**53),
                      "", "x", "append", [], [0], [1, 1], [-1], [True], {}, {"op": "replace"},
                      {"op": "replace", "start": 0, "end": 0}, "user", "assistant", "model",
                      "tool", "tool-result", "completed", "aborted", "step/end", "turn/end",
                      "assistant/chunk", "assistant/message", "tool/result", "user/message"]
_KINDS = ["turn/start", "turn/end", "step/start", "step/end", "assistant/chunk",
          "assistant/message", "tool/call", "tool/result", "user/message", "request/context",
          "request/header", "mode/set", "x-unknown", "text-chunks"]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a member or element inside ``value``."""
    if isinstance(value, dict):
        for key, sub in value.items():
            yield (*prefix, key)
            yield from _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield (*prefix, index)
            yield from _paths(sub, (*prefix, index))


def _damage(events: list[Event], data: st.DataObject) -> list[Any]:
    events = copy.deepcopy(events)
    if not events:
        return events
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(events) - 1))
        event = events[at]
        how = data.draw(st.sampled_from(["set", "drop", "add", "kind", "seq", "swap", "whole"]))
        paths = list(_paths(event))
        if not isinstance(event, dict):
            continue
        if how == "whole":
            events[at] = copy.deepcopy(data.draw(st.sampled_from(_VALUES)))
        elif how == "kind":
            event["type"] = data.draw(st.sampled_from(_KINDS))
        elif how == "seq" and type(event.get("seq")) is int:
            event["seq"] += data.draw(st.sampled_from([-1, 1, 2]))
        elif how == "swap" and at + 1 < len(events):
            events[at], events[at + 1] = events[at + 1], events[at]
        elif paths:
            path = data.draw(st.sampled_from(paths))
            parent = event
            for key in path[:-1]:
                parent = parent[key]
            if how == "set":
                parent[path[-1]] = copy.deepcopy(data.draw(st.sampled_from(_VALUES)))
            elif how == "drop":
                del parent[path[-1]]
            elif isinstance(parent, dict):
                parent[data.draw(st.sampled_from(["surfaceOp", "sourceEventSeqs", "ignorable",
                                                  "trigger", "extra", "message", "id"]))] = (
                    copy.deepcopy(data.draw(st.sampled_from(_VALUES))))
    return events


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_logs(max_turns=3, balanced=False), st.data())
def test_damaged_logs_same_with_and_without_fast_path(events: list[Event],
                                                      data: st.DataObject) -> None:
    check_all_levels(_damage(events, data))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_logs(max_turns=3))
def test_valid_logs_same_with_and_without_fast_path(events: list[Event]) -> None:
    check_all_levels(events)


# -- the normative schemas ----------------------------------------------------------------------

def _fast_and_refused(events: list[Any]) -> list[tuple[Any, bool, bool]]:
    """Each event with (taken by the fast path, refused by the reference at level seed)."""
    checker = SessionChecker(Checks.for_level(Level.SEED))
    absorb, flush, reload = fastpath.absorber(checker)
    out = []
    for event in events:
        if absorb((event,), 0) == 1:
            out.append((event, True, False))
            continue
        flush()
        try:
            checker.push(event)
            refused = False
        except ProblemError:
            refused = True
        reload()
        out.append((event, False, refused))
    return out


def _agree_with_open_layer(events: list[Any]) -> None:
    for event, fast, refused in _fast_and_refused(events):
        schema_valid = not schemas.errors("session/v0/envelope.json", event)
        if fast:
            assert schema_valid, event
        if not schema_valid:
            assert not fast and refused, event


def test_fast_path_agrees_with_the_open_layer_on_the_vectors() -> None:
    for _, events in VECTOR_LOGS:
        _agree_with_open_layer(events)


def test_fast_path_agrees_with_the_open_layer_on_file_vectors() -> None:
    from dshkit.reference.session.reader import LogReader

    for path in sorted(VECTORS.glob("*.json")):
        for case in json.loads(path.read_text(encoding="utf-8"))["cases"]:
            log = case.get("input", {})
            if "events" in log or not ("text" in log or "base64" in log):
                continue
            data = (base64.b64decode(log["base64"]) if "base64" in log
                    else str(log["text"]).encode())
            from dshkit.reference.session.reader import open_bytes

            reader = LogReader("-", tolerate_torn_tail=True, stdin=open_bytes(data))
            try:
                events = [event for _, event in reader.pairs()]
            except ProblemError:
                continue
            _agree_with_open_layer(events)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_logs(max_turns=2, balanced=False), st.data())
def test_fast_path_agrees_with_the_open_layer_on_generated_logs(events: list[Event],
                                                                data: st.DataObject) -> None:
    _agree_with_open_layer(events)
    _agree_with_open_layer(_damage(events, data))
