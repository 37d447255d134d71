"""Shared runner of the four adapter suites (``adapter-mem0``, ``adapter-hermes``,
``adapter-claude-md``, ``adapter-mcp-memory``). Not a suite itself (the leading underscore keeps
it out of discovery).

Operations are ``<format>.<step>``:

- ``<format>.adapt``: input ``{"payload": text or JSON}``, params = the adapter options;
  result ``{"valid": true, "entries", "losses", "references"?}``;
- ``<format>.export``: input ``{"entries": [...]}``, params = the options; result
  ``{"valid": true, "kind", "output", "losses"}``;
- ``<format>.roundtrip``: input ``{"entries": [...]}``, params ``{"export": {...}, "adapt":
  {...}}``; export, then adapt the output; result ``{"valid": true, "output", "losses",
  "entries", "readLosses"}``;
- ``claude-md.update``: input ``{"entries": [...], "existing": text}``; export with option
  ``update``; result as for export.

A refusal is ``{"valid": false, "error": {"code", "message", "details"}}``.

``compare``: ``{"valid": false, "error": {"code", "details"?}}`` matches a refusal with that
code whose details hold every member given (messages are never compared); any other
expectation matches a successful result whose members named in it are equal, losses compared
without their ``message``.
"""

from __future__ import annotations

import json
from typing import Any

JsonObject = dict[str, Any]
LOSS_LISTS = ("losses", "readLosses")


def operations(*formats: str, update: bool = False) -> tuple[str, ...]:
    """``<format>.adapt``, ``.export`` and ``.roundtrip`` of each format, and ``.update`` of
    the first when asked."""
    ops = [f"{fmt}.{step}" for fmt in formats for step in ("adapt", "export", "roundtrip")]
    if update:
        ops.append(f"{formats[0]}.update")
    return tuple(ops)


def _without_messages(value: Any) -> Any:
    if isinstance(value, list):
        return [{k: v for k, v in item.items() if k != "message"} if isinstance(item, dict)
                else item for item in value]
    return value


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 300 else text[:297] + "..."


def compare(expect: JsonObject, result: JsonObject) -> str:
    if expect.get("valid") is False:
        if result.get("valid") is not False:
            return "expected a refusal, got a result"
        want, got = expect.get("error", {}), result.get("error", {})
        if want.get("code") != got.get("code"):
            return f"error code {got.get('code')!r}, expected {want.get('code')!r}"
        details = got.get("details", {})
        for key, value in want.get("details", {}).items():
            if details.get(key) != value:
                return f"error details.{key} = {_show(details.get(key))}, expected {_show(value)}"
        return ""
    if result.get("valid") is not True:
        error = result.get("error", {})
        return f"refused with {error.get('code')}: {error.get('message')}"
    for key, value in expect.items():
        if key == "valid":
            continue
        got = result.get(key)
        if key in LOSS_LISTS:
            value, got = _without_messages(value), _without_messages(got)
        if got != value:
            return f"{key} = {_show(got)}, expected {_show(value)}"
    return ""
