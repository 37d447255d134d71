"""The dshkit reference bound to the kit's ``adapters`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

from dshkit.adapters import AdapterError, adapt, export
from dshkit.conformance.interface import JsonObject


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    fmt, _, step = operation.rpartition(".")
    try:
        if step == "adapt":
            return {"valid": True, **adapt(fmt, input.get("payload"), params).to_json()}
        if step == "export":
            return {"valid": True, **export(fmt, input.get("entries"), params).to_json()}
        if step == "update":
            options = {**params, "update": input.get("existing")}
            return {"valid": True, **export(fmt, input.get("entries"), options).to_json()}
        if step == "roundtrip":
            written = export(fmt, input.get("entries"), params.get("export"))
            read = adapt(fmt, written.output, params.get("adapt"))
            return {"valid": True, "output": written.output,
                    "losses": [x.to_json() for x in written.losses],
                    "entries": read.entries, "readLosses": [x.to_json() for x in read.losses]}
    except AdapterError as exc:
        return {"valid": False, "error": exc.to_json()}
    return {"valid": False, "error": {"code": "UNKNOWN_OPERATION", "message": operation,
                                      "details": {"key": "operation"}}}


