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
}

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
