"""The dshkit reference bound to the kit's ``session_log`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from dshkit.conformance.interface import JsonObject
from dshkit.reference.problems import Problem
from dshkit.reference.session.folding import fold_events, fold_path, load_events, load_path
from dshkit.reference.session.levels import Level
from dshkit.reference.session.recovery import repair_path
from dshkit.reference.session.repair import interrupted_turn_closers
from dshkit.reference.session.validation import validate_events, validate_path

T = TypeVar("T")


def _problem(problem: Problem, level: Level | None = None) -> JsonObject:
    out = problem.to_json()
    if level is not None:
        out["level"] = level.value
    return out


def _error(problem: Problem) -> JsonObject:
    return {"valid": False, "error": _problem(problem)}


@contextmanager
def _as_file(log: JsonObject) -> Iterator[str]:
    data = base64.b64decode(log["base64"]) if "base64" in log else str(log["text"]).encode()
    handle, path = tempfile.mkstemp(prefix="dshkit-case-", suffix=".log")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        yield path
    finally:
        os.unlink(path)


def _dispatch(log: JsonObject, in_memory: Callable[[list[Any]], T],
              on_file: Callable[[str], T]) -> T:
    if "events" in log:
        return in_memory(log["events"])
    with _as_file(log) as path:
        return on_file(path)


def _validate(log: JsonObject, params: JsonObject) -> JsonObject:
    level = Level(params.get("level", "load"))
    session_id = params.get("sessionId")
    report = _dispatch(
        log,
        lambda events: validate_events(events, level, session_id=session_id or "session"),
        lambda path: validate_path(path, level, session_id=session_id),
    )
    if not report.errors:
        return {"valid": True, "events": report.events}
    failed = report.failed_level
    problems = [_problem(p, failed) for p in report.errors]
    return {"valid": False, "level": failed.value if failed else None, "error": problems[0],
            "problems": problems}


def _fold(log: JsonObject, params: JsonObject) -> JsonObject:
    repair = bool(params.get("repair", True))
    session_id = params.get("sessionId")
    report = _dispatch(
        log,
        lambda events: fold_events(events, repair=repair, session_id=session_id or "session"),
        lambda path: fold_path(path, repair=repair, session_id=session_id),
    )
    if report.errors:
        return _error(report.errors[0])
    return {"valid": True, "nodes": list(report.nodes), "shadowed": list(report.shadowed),
            "messages": list(report.messages), "logOnly": report.log_only,
            "replacements": [{"seq": r.seq, "start": r.start, "end": r.end,
                              "shadowedSeqs": list(r.shadowed)} for r in report.replacements],
            "replaceGeneration": report.replace_generation}


def _repair(log: JsonObject, params: JsonObject) -> JsonObject:
    if "events" in log:
        return {"valid": True, "closers": interrupted_turn_closers(log["events"])}
    with _as_file(log) as path:
        report = repair_path(path)
    if report.errors:
        return _error(report.errors[0])
    return {"valid": True, "closers": list(report.closers)}


def _load(log: JsonObject, params: JsonObject) -> JsonObject:
    session_id = params.get("sessionId")
    report = _dispatch(
        log,
        lambda events: load_events(events, session_id=session_id or "session"),
        lambda path: load_path(path, session_id=session_id),
    )
    if report.errors:
        return _error(report.errors[0])
    return {"valid": True, "events": list(report.events)}


_OPERATIONS: dict[str, Callable[[JsonObject, JsonObject], JsonObject]] = {
    "validate": _validate, "fold": _fold, "repair": _repair, "load": _load}


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run the dshkit reference on one session-log case."""
    return _OPERATIONS[operation](input, params)
