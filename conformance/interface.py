"""What the kit asks of an implementation (spec chapter ``conformance``).

An implementation under test is any object with these methods. Inputs and outputs are plain
JSON values, so the same cases run in-process (``py:module:factory``) or through a
subprocess harness speaking JSON lines. The kit never sends the expectation.

``log`` is one of ``{"events": [...]}`` (events in memory), ``{"text": "..."}`` (a file's
content as UTF-8 text) or ``{"base64": "..."}`` (a file's bytes, e.g. zstd).

Every method returns ``{"valid": true, ...}`` or ``{"valid": false, "error": {"code": C,
"seq": S?, "line": L?, "message": M?}}``.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

JsonObject = dict[str, Any]


@runtime_checkable
class SessionLogImplementation(Protocol):
    """Session-log operations. Unsupported operations raise :class:`NotImplementedError`."""

    name: str

    def validate(self, log: JsonObject, level: str, session_id: str | None) -> JsonObject:
        """Check the log at a level (append, seed, invariants, load)."""
        ...

    def fold(self, log: JsonObject, repair: bool, session_id: str | None) -> JsonObject:
        """``{"valid": true, "nodes": [...], "shadowed": [...], "messages": [...]}``."""
        ...

    def repair(self, log: JsonObject, session_id: str | None) -> JsonObject:
        """``{"valid": true, "closers": [...events...]}``."""
        ...

    def load(self, log: JsonObject, session_id: str | None) -> JsonObject:
        """``{"valid": true, "events": [...]}``: the loader's view (normalised, repaired)."""
        ...


OPERATIONS = ("validate", "fold", "repair", "load")
