"""JSON texts that reach dshkit from outside a session log: files and option values given on
the command line (an export envelope, a seed batch, a compaction config, an adapter option),
and the JSON payloads of the memory adapters.

One parser for all of them, bounded like the session reader (spec chapter ``hardening``,
"Resource limits"): the nesting depth is checked against ``limits.max_json_depth`` before
any value is built, so the verdict does not depend on the interpreter's recursion limit; and
every way a text can fail to be JSON (unreadable file, bytes that are not UTF-8, a syntax
error, a number Python will not convert, too deep a nesting) is one exception,
:class:`JsonInputError`, with a stable ``code``. Each caller turns it into its own structured
error; none of them sees a ``RecursionError`` or a bare ``ValueError``.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, Final

from .. import inputs, limits
from ..errors import DshkitError
from ..problems import ProblemError

UNREADABLE: Final = "INPUT_UNREADABLE"
INVALID_UTF8: Final = "JSON_INVALID_UTF8"
SYNTAX: Final = "JSON_SYNTAX"
NON_FINITE: Final = "JSON_NON_FINITE"
NUMBER_TOO_LONG: Final = "JSON_NUMBER_TOO_LONG"
TOO_DEEP: Final = limits.TOO_DEEP
CODES: Final = frozenset({UNREADABLE, INVALID_UTF8, SYNTAX, NON_FINITE, NUMBER_TOO_LONG,
                          TOO_DEEP})


class JsonInputError(DshkitError, ValueError):
    """A JSON input that cannot be used. ``code`` is one of :data:`CODES`; ``line`` and
    ``column`` (1-based) locate a syntax error when they are known."""

    def __init__(self, code: str, message: str, *, line: int | None = None,
                 column: int | None = None) -> None:
        super().__init__(code, message, {} if line is None or column is None
                         else {"line": line, "column": column})
        self.line = line
        self.column = column

    def describe(self) -> str:
        """The message with the location, when known: ``not JSON: … at line 2 column 5``."""
        if self.line is None or self.column is None:
            return self.message
        return f"{self.message} at line {self.line} column {self.column}"


def _no_constant(name: str) -> Any:
    raise JsonInputError(NON_FINITE, f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonInputError(NON_FINITE, f"the number {text[:40]} is not a finite double")
    return value


def parse_json(text: str | bytes, *, allow_non_finite: bool = False) -> Any:
    """The value of one JSON text (RFC 8259, UTF-8 when given as bytes; a byte order mark is
    a syntax error, as for Python's ``json``).

    Raises :class:`JsonInputError`. ``allow_non_finite`` accepts the literals ``NaN``,
    ``Infinity`` and ``-Infinity`` and numbers that overflow a double, as Python's ``json``
    module writes and reads them; without it they are refused as ``JSON_NON_FINITE``."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonInputError(INVALID_UTF8, f"not UTF-8 text ({exc.reason} at byte "
                                 f"{exc.start})") from None
    try:
        limits.check_json_depth(text)
    except ProblemError as exc:
        raise JsonInputError(TOO_DEEP, exc.problem.message) from None
    extra: dict[str, Any] = {} if allow_non_finite else {
        "parse_constant": _no_constant, "parse_float": _finite_float}
    try:
        return json.loads(text, **extra)
    except json.JSONDecodeError as exc:
        raise JsonInputError(SYNTAX, f"not JSON: {exc.msg}", line=exc.lineno,
                             column=exc.colno) from None
    except RecursionError:  # only when max_json_depth is set above what the stack allows
        raise JsonInputError(TOO_DEEP, "JSON nesting is too deep to read") from None
    except JsonInputError:
        raise
    except ValueError:  # an integer longer than int's string-conversion limit
        raise JsonInputError(NUMBER_TOO_LONG, "an integer has more digits than the limit of "
                             f"{sys.get_int_max_str_digits()}") from None


def _stdin() -> str | bytes:
    buffer = getattr(sys.stdin, "buffer", None)  # absent when a test swaps in a StringIO
    if buffer is None:
        return sys.stdin.read()
    return inputs.read_stream(buffer)


def read_json(path: str, *, allow_non_finite: bool = False) -> Any:
    """The JSON value of the file ``path``, or of standard input when ``path`` is ``-``, read
    through the bounded opener (a regular file of at most ``max_input_bytes``). Raises
    :class:`JsonInputError` (``INPUT_UNREADABLE`` when the file cannot be read, is not a
    regular file or is too large; the message says which)."""
    try:
        data: str | bytes = _stdin() if path == "-" else inputs.read_input(path)
    except inputs.InputError as exc:
        raise JsonInputError(UNREADABLE, f"{exc.message} ({exc.code})") from None
    except OSError as exc:
        raise JsonInputError(UNREADABLE, f"cannot read {path}: {exc.strerror or exc}") from None
    return parse_json(data, allow_non_finite=allow_non_finite)


__all__ = ["CODES", "INVALID_UTF8", "NON_FINITE", "NUMBER_TOO_LONG", "SYNTAX", "TOO_DEEP",
           "UNREADABLE", "JsonInputError", "parse_json", "read_json"]
