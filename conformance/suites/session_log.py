"""Suite ``session-log``: validate, fold, repair and load session logs (spec ``session/*``).

Operations and their JSON results:

- ``validate`` (params ``level``: append | seed | invariants | load, ``sessionId``?):
  ``{"valid": true, "events": n}`` or ``{"valid": false, "error": {code, seq?, line?}}``;
- ``fold`` (params ``repair``: bool, default true, ``sessionId``?):
  ``{"valid": true, "nodes": [...], "shadowed": [...], "messages": [...]}``;
- ``repair``: ``{"valid": true, "closers": [...events...]}``;
- ``load``: ``{"valid": true, "events": [...]}`` (the loader's view: normalised, repaired).

The input of every operation is a log: ``{"events": [...]}`` (events in memory),
``{"text": "..."}`` (a file's content as UTF-8 text) or ``{"base64": "..."}`` (a file's bytes,
e.g. zstd frames).
"""

from __future__ import annotations

import base64
import json
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

SUITE = "session-log"
CAPABILITY = "session-log"
OPERATIONS = ("validate", "fold", "repair", "load")
CAPABILITIES = {
    "session-log.core": "envelope, vocabulary, messages and the surface fold "
                        "(levels append and seed, fold without repair)",
    "session-log.invariants": "enclosure invariants (level invariants)",
    "session-log.repair": "closing an interrupted turn (repair, fold with repair)",
    "session-log.load": "the loader: level load, legacy migration, the load operation",
    "session-log.jsonl": "the on-disk format: logs given as file text or bytes",
    "session-log.zstd": "zstd-compressed session files",
}

JsonObject = dict[str, Any]
T = TypeVar("T")
_ZSTD_MAGIC = bytes.fromhex("28b52ffd")


def requires(case: JsonObject) -> list[str]:
    """The capabilities a case needs (an implementation must declare all of them)."""
    operation, params, log = case["operation"], case.get("params", {}), case.get("input", {})
    needed = {"session-log.core"}
    if operation == "validate":
        level = params.get("level", "load")
        if level == "invariants":
            needed.add("session-log.invariants")
        elif level == "load":
            needed.add("session-log.load")
    elif operation == "repair" or (operation == "fold" and params.get("repair", True)):
        needed.add("session-log.repair")
    elif operation == "load":
        needed.add("session-log.load")
    if "text" in log or "base64" in log:
        needed.add("session-log.jsonl")
    if "base64" in log:
        try:
            raw = base64.b64decode(str(log["base64"]))
        except ValueError:
            raw = b""
        if raw.startswith(_ZSTD_MAGIC):
            needed.add("session-log.zstd")
    return sorted(needed)


# -- the reference, through its public API -----------------------------------------------------

def _error(problem: Problem) -> JsonObject:
    return {"valid": False, "error": {"code": problem.code, "seq": problem.seq,
                                      "line": problem.line, "message": problem.message,
                                      "requirement": problem.requirement}}


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
    return _error(report.errors[0]) if report.errors else {"valid": True,
                                                            "events": report.events}


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
            "messages": list(report.messages)}


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


def reference(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run the dshkit reference on one session-log case."""
    return _OPERATIONS[operation](input, params)


# -- comparison ---------------------------------------------------------------------------------

def compare(expect: JsonObject, result: JsonObject) -> str:
    """An empty string when ``result`` meets ``expect``, else what differs."""
    if result.get("valid") is not expect["valid"]:
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect['valid']}, got {json.dumps(got, ensure_ascii=False)}"
    if not expect["valid"]:
        want = expect["error"]
        error = result.get("error") or {}
        for key in ("code", "seq", "line"):
            if key in want and error.get(key) != want[key]:
                return (f"expected error {key} {want[key]!r}, got {error.get(key)!r} "
                        f"({error.get('message', '')})")
        return ""
    for key in ("nodes", "shadowed", "messages", "closers", "events"):
        if key in expect and result.get(key) != expect[key]:
            return (f"{key}: expected {json.dumps(expect[key], ensure_ascii=False)}, "
                    f"got {json.dumps(result.get(key), ensure_ascii=False)}")
    if "messageIds" in expect:
        ids = [m.get("id") for m in result.get("messages", [])]
        if ids != expect["messageIds"]:
            return f"messageIds: expected {expect['messageIds']}, got {ids}"
    if "closerTypes" in expect:
        types = [c.get("type") for c in result.get("closers", [])]
        if types != expect["closerTypes"]:
            return f"closerTypes: expected {expect['closerTypes']}, got {types}"
    return ""
