"""Lossless JSON in and ECMAScript-compatible JSON out.

Python's :mod:`json` turns ``-0`` into ``0``, accepts ``NaN``/``Infinity`` and turns
``1e400`` into ``inf``. The session log forbids all of those (SES-JSON-002, SES-JSON-003),
so parsing goes through hooks that notice them. The hooks stay off the hot path: integers
are only inspected when the raw text contains ``-0`` at all.

Nesting is bounded by ``max_json_depth`` of :mod:`dshkit.reference.limits` (JSON_TOO_DEEP),
for texts (:func:`loads`) and for values given in memory (:func:`check_lossless`), so the
verdict never depends on the interpreter's recursion limit or on how deep the call stack is.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from .. import limits
from ..problems import ProblemError, fail
from ..text import LONE_SURROGATE

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
    """Parse one JSON text losslessly, raising :class:`ProblemError` on anything else
    (JSON_TOO_DEEP past ``max_json_depth``)."""
    limits.check_json_depth(text)
    decoder = _SLOW if "-0" in text else _FAST
    try:
        try:
            value, end = decoder.raw_decode(text, _skip_ws(text, 0))
        except RecursionError:
            # Within the depth limit, but the call stack was already deep: read it again with
            # room for the limit, so that the verdict does not depend on the caller's stack.
            value, end = _with_room(decoder, text)
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


def _with_room(decoder: json.JSONDecoder, text: str) -> tuple[JsonValue, int]:
    """``decoder.raw_decode(text)`` with the recursion limit raised by the depth limit."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(previous + limits.current().max_json_depth + 64)
    try:
        return decoder.raw_decode(text, _skip_ws(text, 0))
    finally:
        sys.setrecursionlimit(previous)


def _skip_ws(text: str, index: int) -> int:
    length = len(text)
    while index < length and text[index] in _WS:
        index += 1
    return index


_ONLY_STR = frozenset({str})
_LEAVES = frozenset({str, int, bool, type(None)})


def check_lossless(value: JsonValue) -> ProblemError | None:
    """Check an in-memory value for what :func:`loads` refuses (for values not read from text):
    negative zero, non-finite numbers, values with no JSON form (a set, bytes, a tuple, a
    non-string key) and nesting deeper than ``max_json_depth`` (which also ends a cycle).

    The value is walked one nesting level at a time, with exact type tests for the common
    types first, so that the check of an ordinary event costs a few microseconds.
    """
    limit = limits.current().max_json_depth
    level: list[Any] = [value]
    depth = 0
    while level:
        below: list[Any] = []
        extend = below.extend
        nested = False  # the level holds an array or an object
        for item in level:
            kind = type(item)
            if kind is dict:
                nested = True
                if not _ONLY_STR.issuperset(map(type, item)):
                    problem = _bad_keys(item)
                    if problem is not None:
                        return problem
                extend(item.values())
            elif kind is list:
                nested = True
                extend(item)
            elif kind in _LEAVES:
                continue
            else:
                size = len(below)
                problem = _odd_item(item, below)
                if problem is not None:
                    return problem
                nested = nested or len(below) > size or isinstance(item, (list, dict))
        if nested:
            depth += 1
            if depth > limit:
                return fail(limits.TOO_DEEP, "SES-JSON-004",
                            f"the value is nested deeper than the limit of {limit}",
                            depth=depth, limit=limit)
        level = below
    return None


def _bad_keys(item: dict[Any, Any]) -> ProblemError | None:
    for key in item:
        if not isinstance(key, str):
            return fail("JSON_NOT_LOSSLESS", "SES-JSON-001", f"object key {key!r} is not a string")
    return None


def _odd_item(item: Any, below: list[Any]) -> ProblemError | None:
    """The rare kinds of item: floats, subclasses of the JSON types, and what has no JSON form
    (a container's members are added to ``below``)."""
    if isinstance(item, float):
        if not math.isfinite(item):
            return fail("JSON_NON_FINITE", "SES-JSON-003", f"number {item!r} is not finite")
        if item == 0.0 and math.copysign(1.0, item) < 0:
            return fail("JSON_NEGATIVE_ZERO", "SES-JSON-002", "negative zero is not lossless")
        return None
    if item is None or isinstance(item, (bool, str, int)):
        return None
    if isinstance(item, list):
        below.extend(item)
        return None
    if isinstance(item, dict):
        problem = _bad_keys(item)
        below.extend(item.values())
        return problem
    return fail("JSON_NOT_LOSSLESS", "SES-JSON-001",
                f"value of Python type {type(item).__name__} is not JSON")


def js_number(value: float) -> str:
    """Format a finite float the way ECMAScript ``Number.prototype.toString`` does."""
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    from decimal import Decimal  # here: few logs hold a number that is not an integer

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



def dumps(value: JsonValue) -> str:
    """Serialise compactly, byte-for-byte as ECMAScript ``JSON.stringify`` would."""
    if _has_float(value):
        # The C encoder always formats floats with Python's repr; the pure-Python encoder
        # takes the float formatter as an argument, so the rare float path goes through it.
        text = "".join(_js_iterencode(value))
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if LONE_SURROGATE.search(text):
        text = LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _js_iterencode(value: JsonValue) -> Any:
    from json import encoder as enc

    make = enc._make_iterencode  # type: ignore[attr-defined]
    return make({}, None, enc.py_encode_basestring, None, js_number, ":", ",", False, False, True)(
        value, 0
    )
