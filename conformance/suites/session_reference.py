"""The session-reference conformance suite (session references: URIs, mentions, retention,
preparation). The reference's binding is
:mod:`dshkit.conformance.implementations.reference.session_reference`.

A result is ``{"valid": true, ...}`` or ``{"valid": false, "error": {"code", "message"}}``.
``compare`` checks every member of ``expect`` for deep equality with the result; members the
vector does not name are not compared. A ``SESSION_REFERENCE_*`` refusal code must be one of
the closed set of REF-ERR-001. Three expectation members are not compared for equality: ``sizeAtMost`` (the
result's ``size`` is at most this), ``statsInclude`` (these members of ``stats`` are equal)
and ``conversationRoles`` (the roles of ``data.conversation``, in order).

``reference.prepare-logs`` (REF-SCO-002) prepares a message from stored logs: the host writes
``input.logs`` (``{file name: text | {"base64"}}``) into a fresh directory, reads each file as
a host that serves references reads a stored session (read only, in the implementation's own
way), and answers the implementation's reads with those sessions by id. It takes
``targetId``, ``content`` and ``references`` as ``reference.prepare`` does. Its result (or its
refusal) carries ``files``: every file in the directory afterwards with its content, which
must be the logs as written.

``reference.prepare`` takes ``params.cancel``: the host cancels the preparation
``before-reads``, ``during-reads`` (the first read fails because of the cancellation) or
``after-reads`` (once the last read has returned). Its result carries ``reads``: the session
ids the host's resolver was asked for, sorted (reads may run in parallel).
"""

from __future__ import annotations

import json
from typing import Any

from ..spec_constants import REFERENCE_ERROR_CODES

SUITE = "session-reference"
CAPABILITY = "session-reference"
OPERATIONS: tuple[str, ...] = (
    "reference.uri.encode",
    "reference.uri.decode",
    "reference.uri.roundtrip",
    "reference.mention.format",
    "reference.text.parse",
    "reference.normalize",
    "reference.prepare",
    "reference.prepare-logs",
    "reference.retain",
    "reference.truncate",
    "reference.head-tail",
    "reference.tag-safe",
    "reference.snapshot",
    "reference.config",
    "reference.candidates",
)

JsonObject = dict[str, Any]


#: REF-ERR-001: the closed set of refusal codes.
CLOSED_CODES = frozenset(REFERENCE_ERROR_CODES)


def _bounded(expect: JsonObject, result: JsonObject) -> str:
    """The expectation members that are not compared for equality."""
    if "sizeAtMost" in expect:
        size = result.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size > expect["sizeAtMost"]:
            return f"size {size!r} is not at most {expect['sizeAtMost']}"
    found = result.get("stats")
    stats: JsonObject = found if isinstance(found, dict) else {}
    for key, value in expect.get("statsInclude", {}).items():
        if key not in stats or not _equal(stats[key], value):
            return f"stats.{key}: expected {json.dumps(value)}, got {json.dumps(stats.get(key))}"
    if "conversationRoles" in expect:
        found = result.get("data")
        conversation = found.get("conversation") if isinstance(found, dict) else None
        roles = [m.get("role") for m in conversation if isinstance(m, dict)] \
            if isinstance(conversation, list) else None
        if roles != expect["conversationRoles"]:
            return f"conversation roles {roles}, expected {expect['conversationRoles']}"
    return ""


_NOT_EQUALITY = ("sizeAtMost", "statsInclude", "conversationRoles")


def compare(expect: JsonObject, result: JsonObject) -> str:
    """``""`` when ``result`` satisfies ``expect``, else a one-line difference."""
    if result.get("valid") is False:  # a session-log problem of a snapshot passes through
        code = str((result.get("error") or {}).get("code"))
        if code.startswith("SESSION_REFERENCE_") and code not in CLOSED_CODES:
            return f"refusal code {code!r} is not in the closed set of REF-ERR-001"
    if result.get("valid") is not expect.get("valid"):
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect.get('valid')}, got {json.dumps(got, ensure_ascii=False)}"
    if expect.get("valid") is False:
        want, got = expect.get("error", {}), result.get("error") or {}
        for key, value in want.items():
            if got.get(key) != value:
                return f"error {key}: expected {value!r}, got {got.get(key)!r} " \
                       f"({got.get('message', '')})"
        for key, value in expect.items():  # what a refusal leaves behind (files)
            if key not in ("valid", "error") and not _equal(result.get(key), value):
                return f"{key}: expected {json.dumps(value, ensure_ascii=False)[:300]}, got " \
                       f"{json.dumps(result.get(key), ensure_ascii=False)[:300]}"
        return ""
    bounded = _bounded(expect, result)
    if bounded:
        return bounded
    for key, value in expect.items():
        if key == "valid" or key in _NOT_EQUALITY:
            continue
        if key not in result or not _equal(result[key], value):
            return (f"{key}: expected {json.dumps(value, ensure_ascii=False)[:300]}, got "
                    f"{json.dumps(result.get(key), ensure_ascii=False)[:300]}")
    return ""


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) in (int, float, str, type(None)) \
        and type(b) in (int, float, str, type(None))
