"""Reading JSON payloads: text or an already parsed value, with line and column on failure."""

from __future__ import annotations

import math
from typing import Any

from dshkit.reference.json.inputs import JsonInputError, parse_json

from .errors import PAYLOAD, AdapterError
from .textutil import strip_bom


def load_json(payload: Any) -> Any:
    """The JSON value of ``payload``: a ``str`` or UTF-8 ``bytes`` (a leading BOM is ignored)
    is parsed with the shared bounded parser (ADP-SEC-003), anything else is taken as already
    parsed."""
    if isinstance(payload, bytes | bytearray):
        try:
            payload = bytes(payload).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AdapterError(PAYLOAD, f"payload is not UTF-8 text: {exc.reason}",
                               line=1) from None
    if not isinstance(payload, str):
        return payload
    try:
        return parse_json(strip_bom(payload), allow_non_finite=True)
    except JsonInputError as exc:
        raise payload_error(exc, "payload") from None


def payload_error(exc: JsonInputError, what: str, line: int = 1) -> AdapterError:
    """ADAPTER_PAYLOAD for a JSON text that could not be used, located at ``line`` of the
    payload (plus the parser's line and column for a syntax error)."""
    if exc.line is None or exc.column is None:
        return AdapterError(PAYLOAD, f"{what} is not usable: {exc.message}", line=line,
                            reason=exc.code)
    return AdapterError(PAYLOAD, f"{what} is {exc.message}", line=line + exc.line - 1,
                        column=exc.column)


def small(value: Any) -> Any:
    """``value`` when it is a JSON scalar or a short list of scalars, else None (a loss names
    big values by pointer only)."""
    if _scalar(value):
        return value
    if isinstance(value, list) and len(value) <= 16 and all(_scalar(v) for v in value):
        return list(value)
    return None


def _scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, bool | int | str)


def pointer_token(key: str) -> str:
    """RFC 6901 escaping of one reference token."""
    return key.replace("~", "~0").replace("/", "~1")
