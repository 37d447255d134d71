"""The one exception type of the adapters, with a stable code and a location (ADP-ERR-001)."""

from __future__ import annotations

from typing import Any

from dshkit.reference.errors import DshkitError

PAYLOAD = "ADAPTER_PAYLOAD"
UNREPRESENTABLE = "ADAPTER_UNREPRESENTABLE"
OPTION = "ADAPTER_OPTION"
LOSS = "ADAPTER_LOSS"
BUDGET = "ADAPTER_BUDGET"
NOT_FOUND = "ADAPTER_NOT_FOUND"
INVALID = "ADAPTER_INVALID"
OUTPUT = "ADAPTER_OUTPUT"
READ_ONLY = "ADAPTER_READ_ONLY"

CODES = (PAYLOAD, UNREPRESENTABLE, OPTION, LOSS, BUDGET, NOT_FOUND, INVALID, OUTPUT, READ_ONLY)
LOCATION_KEYS = ("line", "pointer", "key")


class AdapterError(DshkitError):
    """Every adapter failure. ``details`` always holds at least one of ``line``, ``pointer``
    or ``key`` (the location), plus ``format`` and code-specific members."""

    def __init__(self, code: str, message: str, *, fmt: str | None = None,
                 line: int | None = None, pointer: str | None = None, key: str | None = None,
                 path: str | None = None, **extra: Any) -> None:
        details: dict[str, Any] = {}
        for name, value in (("format", fmt), ("path", path), ("line", line),
                            ("pointer", pointer), ("key", key)):
            if value is not None:
                details[name] = value
        details.update(extra)
        if not any(name in details for name in LOCATION_KEYS):
            details["pointer"] = "/"
        super().__init__(code, message, details)

    def with_format(self, fmt: str) -> AdapterError:
        if "format" not in self.details:
            self.details = {"format": fmt, **self.details}
        return self

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": dict(self.details)}

    def __repr__(self) -> str:
        return f"AdapterError({self.code!r}, {self.message!r}, {self.details!r})"
