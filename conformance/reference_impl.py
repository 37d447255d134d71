"""The reference implementation, seen through the kit's interface (``py:dshkit.conformance.reference_impl:create``).

It uses only the public API of :mod:`dshkit.reference.session`.
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from dshkit.reference.problems import Problem
from dshkit.reference.session.folding import fold_events, fold_path, load_events, load_path
from dshkit.reference.session.levels import Level
from dshkit.reference.session.recovery import repair_path
from dshkit.reference.session.repair import interrupted_turn_closers
from dshkit.reference.session.validation import validate_events, validate_path

from .interface import JsonObject

T = TypeVar("T")


def _error(problem: Problem) -> JsonObject:
    return {"valid": False, "error": {"code": problem.code, "seq": problem.seq,
                                      "line": problem.line, "message": problem.message,
                                      "requirement": problem.requirement}}


@contextmanager
def _as_file(log: JsonObject) -> Iterator[str]:
    data = base64.b64decode(log["base64"]) if "base64" in log else log["text"].encode("utf-8")
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


class ReferenceSessionLog:
    name = "dshkit-reference"

    def validate(self, log: JsonObject, level: str, session_id: str | None) -> JsonObject:
        lv = Level(level)
        report = _dispatch(
            log,
            lambda events: validate_events(events, lv, session_id=session_id or "session"),
            lambda path: validate_path(path, lv, session_id=session_id),
        )
        return _error(report.errors[0]) if report.errors else {"valid": True,
                                                                "events": report.events}

    def fold(self, log: JsonObject, repair: bool, session_id: str | None) -> JsonObject:
        report = _dispatch(
            log,
            lambda events: fold_events(events, repair=repair, session_id=session_id or "session"),
            lambda path: fold_path(path, repair=repair, session_id=session_id),
        )
        if report.errors:
            return _error(report.errors[0])
        return {"valid": True, "nodes": list(report.nodes), "shadowed": list(report.shadowed),
                "messages": list(report.messages)}

    def repair(self, log: JsonObject, session_id: str | None) -> JsonObject:
        if "events" in log:
            return {"valid": True, "closers": interrupted_turn_closers(log["events"])}
        with _as_file(log) as path:
            report = repair_path(path)
        if report.errors:
            return _error(report.errors[0])
        return {"valid": True, "closers": list(report.closers)}

    def load(self, log: JsonObject, session_id: str | None) -> JsonObject:
        report = _dispatch(
            log,
            lambda events: load_events(events, session_id=session_id or "session"),
            lambda path: load_path(path, session_id=session_id),
        )
        if report.errors:
            return _error(report.errors[0])
        return {"valid": True, "events": list(report.events)}


def create() -> ReferenceSessionLog:
    return ReferenceSessionLog()
