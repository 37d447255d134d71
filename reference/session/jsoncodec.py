"""Lossless JSON in and ECMAScript-compatible JSON out.

Python's :mod:`json` turns ``-0`` into ``0``, accepts ``NaN``/``Infinity`` and turns
``1e400`` into ``inf``. The session log forbids all of those (SES-JSON-002, SES-JSON-003),
so parsing goes through hooks that notice them. The hooks stay off the hot path: integers
are only inspected when the raw text contains ``-0`` at all.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

from ..problems import ProblemError, fail

MAX_SAFE_INTEGER = 9_007_199_254_740_991

JsonValue = Any


class _NonFinite(ValueError):
    pass


class _NegativeZero(ValueError):
    pass


def _checked_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NonFinite(text)
    if value == 0.0 and text.startswith("-"):
        raise _NegativeZero(text)
    return value


def _checked_int(text: str) -> int:
    if text == "-0":
        raise _NegativeZero(text)
    return int(text)


def _refuse_constant(text: str) -> Any:
    raise _NonFinite(text)


_FAST = json.JSONDecoder(parse_float=_checked_float, parse_constant=_refuse_constant)
_SLOW = json.JSONDecoder(
    parse_float=_checked_float, parse_int=_checked_int, parse_constant=_refuse_constant
)


def loads(text: str) -> JsonValue:
    """Parse one JSON text losslessly, raising :class:`ProblemError` on anything else."""
    decoder = _SLOW if "-0" in text else _FAST
    try:
        value, end = decoder.raw_decode(text, _skip_ws(text, 0))
    except _NonFinite as exc:
        raise fail("JSON_NON_FINITE", "SES-JSON-003",
                   f"number {exc.args[0]} is not a finite IEEE-754 double") from None
    except _NegativeZero as exc:
        raise fail("JSON_NEGATIVE_ZERO", "SES-JSON-002",
                   f"negative zero ({exc.args[0]}) cannot be stored losslessly") from None
    except json.JSONDecodeError as exc:
        raise fail("JSON_SYNTAX", "SES-JSON-004",
                   f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise fail("JSON_TOO_DEEP", "SES-JSON-004", "JSON nesting is too deep to read") from None
    rest = _skip_ws(text, end)
    if rest != len(text):
        raise fail("JSON_SYNTAX", "SES-JSON-004",
                   f"not valid JSON: extra data at column {rest + 1}")
    return value


_WS = " \t\n\r"


def _skip_ws(text: str, index: int) -> int:
    length = len(text)
    while index < length and text[index] in _WS:
        index += 1
    return index


def check_lossless(value: JsonValue) -> ProblemError | None:
    """Check an in-memory value for what :func:`loads` refuses (for values not read from text)."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if item is None or isinstance(item, (bool, str, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                return fail("JSON_NON_FINITE", "SES-JSON-003", f"number {item!r} is not finite")
            if item == 0.0 and math.copysign(1.0, item) < 0:
                return fail("JSON_NEGATIVE_ZERO", "SES-JSON-002", "negative zero is not lossless")
            continue
        if isinstance(item, list):
            stack.extend(item)
            continue
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    return fail("JSON_NOT_LOSSLESS", "SES-JSON-001",
                                f"object key {key!r} is not a string")
                stack.append(sub)
            continue
        return fail("JSON_NOT_LOSSLESS", "SES-JSON-001",
                    f"value of Python type {type(item).__name__} is not JSON")
    return None


def js_number(value: float) -> str:
    """Format a finite float the way ECMAScript ``Number.prototype.toString`` does."""
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_tuple.digits)
    exponent = digits_tuple.exponent
    assert isinstance(exponent, int)
    k = len(digits)
    n = exponent + k
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def _has_float(value: JsonValue) -> bool:
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            return True
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return False


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: JsonValue) -> str:
    """Serialise compactly, byte-for-byte as ECMAScript ``JSON.stringify`` would."""
    if _has_float(value):
        # The C encoder always formats floats with Python's repr; the pure-Python encoder
        # takes the float formatter as an argument, so the rare float path goes through it.
        text = "".join(_js_iterencode(value))
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if _LONE_SURROGATE.search(text):
        text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _js_iterencode(value: JsonValue) -> Any:
    from json import encoder as enc

    make = enc._make_iterencode  # type: ignore[attr-defined]
    return make({}, None, enc.py_encode_basestring, None, js_number, ":", ",", False, False, True)(
        value, 0
    )
