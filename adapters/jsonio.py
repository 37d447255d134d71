"""Reading JSON payloads: text or an already parsed value, with line and column on failure."""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import PAYLOAD, AdapterError
from .textutil import strip_bom


def load_json(payload: Any) -> Any:
    """The JSON value of ``payload``: a ``str`` (a leading BOM is ignored) is parsed, anything
    else is taken as already parsed."""
    if isinstance(payload, bytes | bytearray):
        try:
            payload = bytes(payload).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise AdapterError(PAYLOAD, f"payload is not UTF-8 text: {exc.reason}",
                               line=1) from None
    if not isinstance(payload, str):
        return payload
    try:
        return json.loads(strip_bom(payload))
    except json.JSONDecodeError as exc:
        raise AdapterError(PAYLOAD, f"payload is not JSON: {exc.msg}", line=exc.lineno,
                           column=exc.colno) from None
    except RecursionError:
        raise AdapterError(PAYLOAD, "payload is nested too deeply", line=1) from None


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
