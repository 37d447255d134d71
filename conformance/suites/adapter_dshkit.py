"""Suite ``adapter-dshkit``: the ``dshkit`` hub adapter (the ``memory-export-v1`` envelope,
spec chapter ``adapters/index``, "The hub format") and what the registry does across formats:
the list of adapters, lookups of unknown ids, refusals as they leave the registry, and
conversions between two formats.

Operations:

- ``dshkit.adapt``, ``dshkit.export``, ``dshkit.roundtrip``: as for every adapter
  (:mod:`dshkit.conformance.suites._adapters`);
- ``adapters.list``: ``{"valid": true, "ids": [...]}``, the ids of the registry's adapters in
  the order of its list;
- ``adapters.adapt``: input ``{"format", "payload"}``, params = the options; ``adapters.export``:
  input ``{"format", "entries"}``, params = the options: any format id, known or not;
- ``adapters.convert``: input ``{"from", "to", "payload"}``, params ``{"read"?, "write"?,
  "strict"?}``; result ``{"valid": true, "entries", "readLosses", "writeLosses", "kind",
  "output"}``;
- ``adapters.register``: third-party adapters described in JSON, registered on a fresh
  registry and called through it (:mod:`dshkit.conformance.suites._scripted_adapters`);
  compared by :func:`compare_register`.

``compare`` is the adapters' comparison, plus for ``output``: ``outputSchema`` (a schema the
output satisfies), ``outputMatch`` (``{pointer: value}``, each compared exactly) and
``outputUuid4`` (pointers to UUID v4 strings); and for refusals ``detailsHas`` (members the
``details`` must hold, whatever their values) and ``detailsLosses`` (``details.losses``,
compared without messages). Lists named ``writeLosses`` are compared
without their messages, like ``losses``.
"""

from __future__ import annotations

import re
from typing import Any

from dshkit import schemas

from . import _adapters
from ._adapters import operations

SUITE = "adapter-dshkit"
CAPABILITY = "adapter-dshkit"
OPERATIONS = (*operations("dshkit"), "adapters.list", "adapters.adapt", "adapters.export",
              "adapters.convert", "adapters.register")
CAPABILITIES = {
    "adapter-dshkit.registry": "the registry across formats: the list of adapters, unknown ids, "
                               "refusals as they leave the registry, conversions between "
                               "formats, third-party adapters registered on a fresh registry",
}
#: format id -> the capability of its suite
FORMAT_CAPABILITIES = {"mem0": "adapter-mem0", "hermes": "adapter-hermes",
                       "hermes-bullets": "adapter-hermes.bullets",
                       "claude-md": "adapter-claude-md", "mcp-graph": "adapter-mcp-memory",
                       "dshkit": "adapter-dshkit"}
_UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
JsonObject = dict[str, Any]


def requires(case: JsonObject) -> list[str]:
    operation = str(case.get("operation"))
    if not operation.startswith("adapters."):
        return [CAPABILITY]
    data = case.get("input", {})
    needs = ["adapter-dshkit.registry"]
    for key in ("format", "from", "to"):
        capability = FORMAT_CAPABILITIES.get(str(data.get(key)))
        if capability is not None and capability not in needs:
            needs.append(capability)
    return needs



def _pointer(document: Any, pointer: str) -> Any:
    value = document
    for raw in pointer.split("/")[1:] if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        elif isinstance(value, dict) and token in value:
            value = value[token]
        else:
            return _MISSING
    return value


_MISSING = object()
_OWN = ("outputSchema", "outputMatch", "outputUuid4", "detailsHas", "detailsLosses",
        "writeLosses")


def _own(expect: JsonObject, result: JsonObject) -> str:
    output = result.get("output")
    if "outputSchema" in expect:
        found = schemas.errors(expect["outputSchema"], output)
        if found:
            where = "/" + "/".join(str(p) for p in found[0].absolute_path)
            return f"output breaks {expect['outputSchema']} at {where}: {found[0].message[:200]}"
    for pointer, value in expect.get("outputMatch", {}).items():
        got = _pointer(output, pointer)
        if got is _MISSING or got != value or type(got) is not type(value):
            shown = "nothing" if got is _MISSING else repr(got)
            return f"output{pointer}: expected {value!r}, got {shown}"
    for pointer in expect.get("outputUuid4", []):
        got = _pointer(output, pointer)
        if not isinstance(got, str) or not _UUID4.match(got):
            return f"output{pointer}: expected a UUID v4, got {got!r}"
    if "writeLosses" in expect:
        problem = _adapters.compare({"valid": True, "losses": expect["writeLosses"]},
                                    {"valid": True, "losses": result.get("writeLosses")})
        if problem:
            return problem.replace("losses", "writeLosses", 1)
    return ""


def _error(where: str, want: JsonObject, got: Any) -> str:
    """An expected refusal: ``code``, ``message`` (exact), ``messageStartsWith``, ``details``
    (these members equal) and ``exactDetails`` (the whole details equal)."""
    if not isinstance(got, dict):
        return f"{where}: expected a refusal {want.get('code')}, got {_adapters._show(got)}"
    if got.get("code") != want.get("code"):
        return f"{where}: error code {got.get('code')!r}, expected {want.get('code')!r}"
    message = str(got.get("message", ""))
    if "message" in want and message != want["message"]:
        return f"{where}: message {message!r}, expected {want['message']!r}"
    if not message.startswith(str(want.get("messageStartsWith", ""))):
        return f"{where}: message {message!r} does not start with {want['messageStartsWith']!r}"
    found = got.get("details")
    details: JsonObject = found if isinstance(found, dict) else {}
    if "exactDetails" in want and details != want["exactDetails"]:
        return f"{where}: details {_adapters._show(details)}, expected exactly " \
               f"{_adapters._show(want['exactDetails'])}"
    for key, value in want.get("details", {}).items():
        if details.get(key) != value:
            return f"{where}: details.{key} = {_adapters._show(details.get(key))}, expected " \
                   f"{_adapters._show(value)}"
    return ""


def compare_register(expect: JsonObject, result: JsonObject) -> str:
    """``adapters.register``: ``ids`` exactly; each of ``registered`` is ``null`` or an
    expected refusal; each of ``calls`` is ``{"ok": true, "result"}`` (compared exactly,
    losses without their messages) or ``{"ok": false, "error"}`` (an expected refusal)."""
    if result.get("valid") is not True:
        return f"expected a result, got {_adapters._show(result)}"
    if "ids" in expect and result.get("ids") != expect["ids"]:
        return f"ids = {_adapters._show(result.get('ids'))}, expected {expect['ids']}"
    for key in ("registered", "calls"):
        want, got = expect.get(key, []), result.get(key)
        if not isinstance(got, list) or len(got) != len(want):
            return f"{key}: expected {len(want)} answers, got {_adapters._show(got)}"
        for index, (one, other) in enumerate(zip(want, got, strict=True)):
            where = f"{key}[{index}]"
            if key == "registered":
                problem = "" if one is None and other is None else (
                    f"{where}: expected the adapter to be registered, got "
                    f"{_adapters._show(other)}" if one is None else _error(where, one, other))
            elif not isinstance(other, dict) or other.get("ok") is not one["ok"]:
                problem = f"{where}: expected ok={one['ok']}, got {_adapters._show(other)}"
            elif one["ok"]:
                problem = _adapters.compare({"valid": True, **one["result"]},
                                            {"valid": True, **(other.get("result") or {})})
                problem = f"{where}: {problem}" if problem else ""
            else:
                problem = _error(where, one["error"], other.get("error"))
            if problem:
                return problem
    return ""


def compare(expect: JsonObject, result: JsonObject) -> str:
    if "registered" in expect:
        return compare_register(expect, result)
    base = {k: v for k, v in expect.items() if k not in _OWN}
    problem = _adapters.compare(base, result)
    if problem:
        return problem
    if expect.get("valid") is False:
        details = (result.get("error") or {}).get("details") or {}
        missing = [k for k in expect.get("detailsHas", []) if k not in details]
        if missing:
            return f"error details lack {', '.join(missing)}"
        if "detailsLosses" in expect:
            problem = _adapters.compare({"valid": True, "losses": expect["detailsLosses"]},
                                        {"valid": True, "losses": details.get("losses")})
            return problem.replace("losses", "error details.losses", 1)
        return ""
    return _own(expect, result)


__all__ = ["CAPABILITIES", "CAPABILITY", "OPERATIONS", "SUITE", "compare", "compare_register",
           "requires"]
