"""``adapters.register`` of the ``adapter-dshkit`` suite: third-party adapters described in JSON,
registered on a fresh registry and called through it (spec ``adapters/index``, "Registry":
ADP-REG-001, ADP-REG-003, ADP-REG-004). Not a suite itself.

Input ``{"adapters": [spec...], "calls": [call...]}``. A **spec** describes one adapter
object: ``id``, ``name``, ``description``, ``version``, ``importFormats`` and ``exportFormat``
hold the JSON values given (a member left out is missing from the object); ``adapt`` and
``export`` are behaviours:

- ``{"returns": R}``: a conversion that returns the well-formed result R (``adapt``:
  ``{"entries"}``; ``export``: ``{"kind", "output"}``), with no losses;
- ``{"returnsValue": V}``: a conversion that returns the JSON value V itself, which is not a
  result;
- ``{"raises": {"kind": K, "message"}}``: a conversion that raises the language's exception
  of kind K (``ValueError``, ``TypeError``, ``KeyError``, ``IndexError``,
  ``AttributeError``, ``RecursionError`` as Python names them; a harness raises its
  language's closest equivalent);
- ``{"raises": {"kind": "AdapterError", "code", "message", "details"?}}``: a conversion that
  raises the adapters' own error;
- ``{"value": V}``: the member is the value V, which cannot be called.

The specs are registered in order; then each **call** ``{"op": "adapt", "format",
"payload", "options"?}`` or ``{"op": "export", "format", "entries", "options"?}`` runs on that
registry. Result ``{"valid": true, "registered": [null | error...], "ids": [...], "calls":
[{"ok": true, "result": R} | {"ok": false, "error": E}...]}``: ``registered`` is ``null`` for
an adapter the registry took and the refusal otherwise, ``ids`` the registry's list afterwards,
errors are ``{"code", "message", "details"}``.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from dshkit.adapters import AdapterError
from dshkit.adapters.model import AdaptResult, ExportResult
from dshkit.adapters.registry import Registry

__all__ = ["run"]

JsonObject = dict[str, Any]
_MEMBERS = {"id": "id", "name": "name", "description": "description", "version": "version",
            "importFormats": "import_formats", "exportFormat": "export_format"}
_FOREIGN: dict[str, type[BaseException]] = {
    "ValueError": ValueError, "TypeError": TypeError, "KeyError": KeyError,
    "IndexError": IndexError, "AttributeError": AttributeError,
    "RecursionError": RecursionError}


def _raise(spec: JsonObject) -> None:
    kind, message = str(spec.get("kind")), str(spec.get("message", ""))
    if kind == "AdapterError":
        details = dict(spec.get("details") or {})
        raise AdapterError(str(spec["code"]), message, **details)
    raise _FOREIGN[kind](message)


def _result(step: str, value: JsonObject) -> Any:
    if step == "adapt":
        return AdaptResult(entries=list(value.get("entries", [])))
    return ExportResult(output=value["output"], kind=value["kind"])


def _behaviour(step: str, spec: JsonObject) -> Any:
    if "value" in spec:
        return spec["value"]

    def conversion(data: Any, options: Any = None) -> Any:
        del data, options
        if "raises" in spec:
            _raise(spec["raises"])
        if "returnsValue" in spec:
            return spec["returnsValue"]
        return _result(step, spec["returns"])

    return conversion


class _Scripted(SimpleNamespace):
    """A third party's adapter object: only the members its spec gives."""

    def descriptor(self) -> JsonObject:
        return {name: getattr(self, python, None) for name, python in _MEMBERS.items()}


def _adapter(spec: JsonObject) -> _Scripted:
    members = {python: spec[name] for name, python in _MEMBERS.items() if name in spec}
    for step in ("adapt", "export"):
        if step in spec:
            members[step] = _behaviour(step, spec[step])
    return _Scripted(**members)


def _call(registry: Registry, call: JsonObject) -> JsonObject:
    try:
        if call.get("op") == "adapt":
            done: Any = registry.adapt(str(call.get("format")), call.get("payload"),
                                       call.get("options"))
        else:
            done = registry.export(str(call.get("format")), call.get("entries"),
                                   call.get("options"))
    except AdapterError as exc:
        return {"ok": False, "error": exc.to_json()}
    return {"ok": True, "result": done.to_json()}


def run(data: JsonObject) -> JsonObject:
    registry = Registry()
    registered: list[JsonObject | None] = []
    for spec in data.get("adapters", []):
        try:
            registry.register(_adapter(spec))  # type: ignore[arg-type]
        except AdapterError as exc:
            registered.append(exc.to_json())
        else:
            registered.append(None)
    calls = [_call(registry, call) for call in data.get("calls", [])]
    return {"valid": True, "registered": registered,
            "ids": [d["id"] for d in registry.list()], "calls": calls}
