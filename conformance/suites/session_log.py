"""Suite ``session-log``: validate, fold, repair and load session logs (spec ``session/*``).

Operations and their JSON results (spec ``conformance/kit``, "Session-log results"):

- ``validate`` (params ``level``: append | seed | invariants | load, ``sessionId``?):
  ``{"valid": true, "events": n}`` or ``{"valid": false, "level": L, "error": P,
  "problems": [P...]}``: ``L`` is the first failing level, ``error`` the first problem and
  ``problems`` every problem found at that level, in report order (SES-LVL-005). A problem
  ``P`` is ``{code, seq, line, pointer, requirement, level, message}``: ``pointer`` is the JSON
  pointer into the event or record (``""`` for the whole of it), ``requirement`` the id the
  problem violates, ``level`` the failing level;
- ``fold`` (params ``repair``: bool, default true, ``sessionId``?):
  ``{"valid": true, "nodes": [...], "shadowed": [...], "messages": [...], "logOnly": n,
  "replacements": [{seq, start, end, shadowedSeqs}...], "replaceGeneration": n}`` (spec
  ``session/surface``: ``logOnly`` counts the seqs that are neither current nor shadowed,
  SES-SURF-010; one replacement per accepted replace in log order; ``replaceGeneration`` is the
  fold's counter) or ``{"valid": false, "error": P}``;
- ``repair``: ``{"valid": true, "closers": [...events...]}``;
- ``load``: ``{"valid": true, "events": [...]}`` (the loader's view: normalised, repaired).

The input of every operation is a log: ``{"events": [...]}`` (events in memory),
``{"text": "..."}`` (a file's content as UTF-8 text) or ``{"base64": "..."}`` (a file's bytes,
e.g. zstd frames).

Comparison: the validity; for a refusal the expected ``level`` and each member the expected
``error`` names (``code``, ``seq``, ``line``, ``pointer``, ``requirement``, ``level``); the
expected ``problems`` list only when the implementation declares ``session-log.problems``
(every problem, not only the first); for a success each member the expectation names.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

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
    "session-log.problems": "reports every problem of the failing level, not only the first "
                            "(SES-LVL-005)",
}
PROBLEMS = "session-log.problems"
#: the members of a problem the kit compares (``message`` is not stable)
PROBLEM_KEYS = ("code", "seq", "line", "pointer", "requirement", "level")
#: the members of a successful result the kit compares as JSON values, when expected
RESULT_KEYS = ("nodes", "shadowed", "messages", "closers", "events", "logOnly", "replacements",
               "replaceGeneration")

JsonObject = dict[str, Any]
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


def _declares(capabilities: Sequence[str], capability: str) -> bool:
    return any(capability == c or capability.startswith(c + ".") for c in capabilities)


def _problem(index: str, want: Any, got: Any) -> str:
    """What differs between an expected problem and a reported one, or ``""``."""
    found = got if isinstance(got, dict) else {}
    for key in PROBLEM_KEYS:
        if isinstance(want, dict) and key in want and found.get(key, "<absent>") != want[key]:
            return (f"expected {index} {key} {want[key]!r}, got {found.get(key, '<absent>')!r} "
                    f"({found.get('message', '')})")
    return ""


def _compare_refusal(expect: JsonObject, result: JsonObject, every: bool) -> str:
    if "level" in expect and result.get("level") != expect["level"]:
        return f"expected failing level {expect['level']!r}, got {result.get('level')!r}"
    problem = _problem("error", expect["error"], result.get("error") or {})
    if problem or not every or "problems" not in expect:
        return problem
    want, found = expect["problems"], result.get("problems")
    if not isinstance(found, list):
        return f"expected a list of {len(want)} problems, got {json.dumps(found)}"
    for index, (one, got) in enumerate(zip(want, found, strict=False)):
        problem = _problem(f"problems[{index}]", one, got)
        if problem:
            return problem
    if len(found) != len(want):
        extra = [p.get("code") if isinstance(p, dict) else p for p in found[len(want):]]
        return (f"expected {len(want)} problems, got {len(found)}"
                + (f" (also {extra})" if extra else ""))
    return ""


def compare(expect: JsonObject, result: JsonObject,
            capabilities: Sequence[str] = ()) -> str:
    """An empty string when ``result`` meets ``expect``, else what differs. The expected
    ``problems`` list is compared only when ``capabilities`` declares ``session-log.problems``;
    otherwise only the first problem is."""
    if result.get("valid") is not expect["valid"]:
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect['valid']}, got {json.dumps(got, ensure_ascii=False)}"
    if not expect["valid"]:
        return _compare_refusal(expect, result, _declares(capabilities, PROBLEMS))
    for key in RESULT_KEYS:
        if key in expect and result.get(key, "<absent>") != expect[key]:
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
