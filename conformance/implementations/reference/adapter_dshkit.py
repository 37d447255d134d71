"""The dshkit reference bound to the kit's ``adapter_dshkit`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

from dshkit.adapters import REGISTRY as _REGISTRY
from dshkit.adapters import AdapterError, convert
from dshkit.conformance.interface import JsonObject

from . import _adapters, _scripted_adapters


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    if not operation.startswith("adapters."):
        return _adapters.run(operation, input, params)
    try:
        if operation == "adapters.list":
            return {"valid": True, "ids": [d["id"] for d in _REGISTRY.list()]}
        if operation == "adapters.adapt":
            result = _REGISTRY.adapt(str(input.get("format")), input.get("payload"), params)
            return {"valid": True, **result.to_json()}
        if operation == "adapters.export":
            written = _REGISTRY.export(str(input.get("format")), input.get("entries"), params)
            return {"valid": True, **written.to_json()}
        if operation == "adapters.register":
            return _scripted_adapters.run(input)
        if operation == "adapters.convert":
            done = convert(str(input.get("from")), str(input.get("to")), input.get("payload"),
                           read_options=params.get("read"), write_options=params.get("write"),
                           strict=bool(params.get("strict", False)))
            return {"valid": True, **done.to_json()}
    except AdapterError as exc:
        return {"valid": False, "error": exc.to_json()}
    return {"valid": False, "error": {"code": "UNKNOWN_OPERATION", "message": operation,
                                      "details": {"key": "operation"}}}

