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
  "output"}``.

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
from dshkit.adapters import REGISTRY as _REGISTRY
from dshkit.adapters import AdapterError, convert

from . import _adapters
from ._adapters import operations

SUITE = "adapter-dshkit"
CAPABILITY = "adapter-dshkit"
OPERATIONS = (*operations("dshkit"), "adapters.list", "adapters.adapt", "adapters.export",
              "adapters.convert")
CAPABILITIES = {
    "adapter-dshkit.registry": "the registry across formats: the list of adapters, unknown ids, "
                               "refusals as they leave the registry, conversions between "
                               "formats",
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


def reference(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    if not operation.startswith("adapters."):
        return _adapters.reference(operation, input, params)
    try:
        if operation == "adapters.list":
            return {"valid": True, "ids": [d["id"] for d in _REGISTRY.list()]}
        if operation == "adapters.adapt":
            result = _REGISTRY.adapt(str(input.get("format")), input.get("payload"), params)
            return {"valid": True, **result.to_json()}
        if operation == "adapters.export":
            written = _REGISTRY.export(str(input.get("format")), input.get("entries"), params)
            return {"valid": True, **written.to_json()}
        if operation == "adapters.convert":
            done = convert(str(input.get("from")), str(input.get("to")), input.get("payload"),
                           read_options=params.get("read"), write_options=params.get("write"),
                           strict=bool(params.get("strict", False)))
            return {"valid": True, **done.to_json()}
    except AdapterError as exc:
        return {"valid": False, "error": exc.to_json()}
    return {"valid": False, "error": {"code": "UNKNOWN_OPERATION", "message": operation,
                                      "details": {"key": "operation"}}}


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


def compare(expect: JsonObject, result: JsonObject) -> str:
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


__all__ = ["CAPABILITIES", "CAPABILITY", "OPERATIONS", "SUITE", "compare", "reference",
           "requires"]
