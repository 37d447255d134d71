"""The one JSON parser seam of the reader: orjson when it is installed, the stdlib otherwise.

The lossless reading rules (spec chapter ``session/json``) are defined by :mod:`.codec`,
which parses with the stdlib and hooks that notice ``-0``, non-finite numbers and the like.
That parser is exact but slow. orjson is about four times faster, and it agrees with the
stdlib on every text it accepts, except three:

* ``-0`` (an integer) comes back as ``0``, and ``-0.0`` or an underflow such as ``-1e-400``
  as ``-0.0``, where the lossless rules refuse negative zero (SES-JSON-002);
* an integer beyond the 64-bit range (-2**63 to 2**64 - 1) comes back as a float, where the
  stdlib keeps it exact;
* its nesting limit (1024) is not the reader's (``max_json_depth`` of
  :mod:`dshkit.reference.limits`, 512 by default).

Everything else orjson refuses (non-finite numbers, lone surrogates, bad UTF-8, a byte order
mark) is handed to the exact parser, which then reports exactly what it reports today. So a
text takes the fast parser only when none of the three cases can apply, which
:func:`risky_lines` decides for a whole block of lines with two C-level scans: a negative
number (a ``-`` and a digit where a number can start), or a run of 20 digits;
:func:`too_deep` adds lines with more opening brackets than the depth limit, which the exact
parser judges (JSON_TOO_DEEP past the limit, whichever parser is selected). The guard may
send harmless text to the exact parser (``", -5"`` inside a string, say); it never lets a
risky text through, so both parsers give the same values, verdicts and error codes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .. import limits
from ..problems import fail
from . import codec as jsoncodec

JsonValue = Any
FastLoads = Callable[[bytes], JsonValue]

try:  # orjson is optional: everything works, more slowly, without it
    import orjson

    _ORJSON: FastLoads | None = orjson.loads
except ImportError:  # pragma: no cover - depends on the environment
    _ORJSON = None

_BOM = b"\xef\xbb\xbf"
#: The depth guard under the default limits (:func:`depth_guard` gives the one in force).
DEPTH_GUARD = limits.MAX_JSON_DEPTH
# A "-" where a number can start, followed by a digit: every negative number, which covers
# -0, -0.0 and a negative underflow such as -1e-400. The literal "-" lets the regular
# expression engine skip from one "-" to the next at C speed. (A translation of the block into
# classes of bytes and a fixed-string search does fewer instructions, but takes longer: its
# branches are not predictable.)
_NEGATIVE = re.compile(rb"-(?<=[:,\[ \t\r\n]-)[0-9]")
# Digits and "." become "0", anything else a space: a positive integer beyond 64 bits is a run
# of at least 20 digits, which a fixed-string search finds at C speed.
_DIGITS = bytes(ord("0") if chr(c) in "0123456789." else ord(" ") for c in range(256))
_LONG_DIGITS = b"0" * 20

_backend: FastLoads | None = _ORJSON


def backend() -> str:
    """The name of the parser in use: ``"orjson"`` or ``"json"`` (the stdlib)."""
    return "orjson" if _backend is not None else "json"


def use(name: str) -> None:
    """Select the parser (``"orjson"`` if installed, or ``"json"``); for tests and benchmarks."""
    global _backend
    if name == "json":
        _backend = None
    elif name == "orjson":
        if _ORJSON is None:
            raise ValueError("orjson is not installed")
        _backend = _ORJSON
    else:
        raise ValueError(f"unknown JSON backend {name!r}")


@contextmanager
def using(name: str) -> Iterator[None]:
    """:func:`use` for a ``with`` block; the parser in use before is restored after it."""
    previous = backend()
    use(name)
    try:
        yield
    finally:
        use(previous)


def fast_loads() -> FastLoads | None:
    """The fast parser, or None when only the exact one is available or selected."""
    return _backend


def risky_offsets(block: bytes) -> list[int]:
    """Offsets in ``block`` where orjson might read a value differently from the stdlib: every
    negative number (which covers negative zero in all its spellings, and integers below the
    64-bit range) and every integer of 20 digits or more (orjson keeps integers exact only
    within 64 bits). A match inside a string is a harmless false alarm."""
    found = [0] if block[:1] == b"-" else []
    found += [match.start() for match in _NEGATIVE.finditer(block)]
    mapped = block.translate(_DIGITS)
    at = mapped.find(_LONG_DIGITS)
    while at >= 0:
        found.append(at)
        at = mapped.find(_LONG_DIGITS, at + len(_LONG_DIGITS))
    return found


def risky_lines(block: bytes) -> set[int]:
    """Indexes (0-based) of the lines of ``block`` (split at ``\\n``) that need the exact
    parser because of their numbers. Deep nesting is checked per line by :func:`too_deep`."""
    return {block.count(b"\n", 0, at) for at in risky_offsets(block)}


def depth_guard() -> int:
    """Lines with more opening brackets than this go to the exact parser, which refuses a
    nesting deeper than ``max_json_depth`` (JSON_TOO_DEEP): orjson's own limit differs."""
    return limits.current().max_json_depth


def too_deep(raw: bytes, guard: int | None = None) -> bool:
    """Whether a line may nest deeper than the depth limit (``guard``: :func:`depth_guard`)."""
    if guard is None:
        guard = limits.current().max_json_depth
    return len(raw) > guard and raw.count(b"[") + raw.count(b"{") > guard


def exact_loads(raw: bytes) -> JsonValue:
    """Parse one line with the exact (stdlib) parser; raises :class:`ProblemError` with the
    line's SES-JSON code (BOM, UTF-8, syntax, negative zero, non-finite, depth)."""
    if raw.startswith(_BOM):
        raise fail("JSON_BOM", "SES-JSON-004",
                   "the line starts with a UTF-8 byte order mark; JSON text must not")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail("JSON_INVALID_UTF8", "SES-JSON-004",
                   f"line is not valid UTF-8 (byte {exc.start + 1})") from None
    return jsoncodec.loads(text)


def loads_line(raw: bytes) -> JsonValue:
    """Parse one line (without its line feed) with the selected parser, exactly as
    :func:`exact_loads` would."""
    fast = _backend
    if fast is not None and not too_deep(raw) and not risky_offsets(raw):
        try:
            return fast(raw)
        except Exception:  # orjson refuses: the exact parser says why (or accepts)
            pass
    return exact_loads(raw)


__all__ = ["DEPTH_GUARD", "backend", "depth_guard", "exact_loads", "fast_loads", "loads_line", "risky_lines",
           "risky_offsets", "too_deep", "use"]
