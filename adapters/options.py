"""Adapter options: a JSON object of named settings, checked by name (ADP-GEN-005)."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from typing import Any

from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.memory.inputs import SCOPES, TRACKS, check_source

from .errors import OPTION, AdapterError


class Options:
    """Read-only access to one adapter call's options; every fault names the option."""

    def __init__(self, raw: Mapping[str, Any] | None, allowed: Collection[str]) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise AdapterError(OPTION, "options must be an object", key="options")
        for name in raw:
            if name not in allowed:
                raise AdapterError(OPTION, f"unknown option {name!r} (known: "
                                   f"{', '.join(sorted(allowed)) or 'none'})", key=str(name))
        self.raw = dict(raw)

    def has(self, name: str) -> bool:
        return self.raw.get(name) is not None

    def string(self, name: str, default: str | None = None,
               choices: Collection[str] | None = None) -> str | None:
        value = self.raw.get(name)
        if value is None:
            return default
        if not isinstance(value, str) or (choices is not None and value not in choices):
            wanted = f"one of {', '.join(choices)}" if choices is not None else "a string"
            raise AdapterError(OPTION, f"option {name!r} must be {wanted}", key=name)
        return value

    def text(self, name: str, default: str) -> str:
        value = self.string(name, default)
        assert value is not None
        return value

    def track(self, default: str) -> str:
        return self.text_choice("track", default, TRACKS)

    def scope(self, default: str) -> str:
        return self.text_choice("scope", default, SCOPES)

    def text_choice(self, name: str, default: str, choices: Collection[str]) -> str:
        value = self.string(name, default, choices)
        assert value is not None
        return value

    def source(self, default: str) -> str:
        value = self.raw.get("source", default)
        try:
            return check_source(value, "/source")
        except MemoryProtocolError as exc:
            raise AdapterError(OPTION, f"option 'source': {exc.details.get('reason')}",
                               key="source") from None

    def integer(self, name: str, default: int, minimum: int = 0) -> int:
        value = self.raw.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise AdapterError(OPTION, f"option {name!r} must be an integer >= {minimum}",
                               key=name)
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.raw.get(name, default)
        if not isinstance(value, bool):
            raise AdapterError(OPTION, f"option {name!r} must be true or false", key=name)
        return value

    def now(self) -> int:
        """Option ``now`` (epoch milliseconds), or the current clock."""
        if self.has("now"):
            return self.integer("now", 0)
        return time.time_ns() // 1_000_000
