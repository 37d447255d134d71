"""Resource limits of the readers (spec chapter ``hardening``): line length, zstd frame size,
decompressed size of a whole zstd log, size of an input read whole, JSON nesting depth.

A log nobody here wrote may hold a line of a gigabyte, a zstd frame that expands a thousandfold
or a value nested a million levels deep. These limits make each of those a structured refusal
(a :class:`~dshkit.reference.problems.ProblemError` with a stable code) instead of a memory
blow-up or a ``RecursionError``. They are configurable: :func:`current` gives the limits in
force, :func:`override` changes them for a ``with`` block (tests, tools that read huge logs on
purpose), :func:`configure` changes them for the process.

The readers call these functions; nothing here opens a file:

* :class:`BoundedFrameDecompressor` is a drop-in for ``ZstdDecompressor().decompressobj()``
  (``decompress``, ``eof``, ``unused_data``) that refuses a frame whose content passes
  ``max_frame_bytes`` before it has produced much more than that.
* :func:`check_line_length` refuses a line (or a pending piece of one) longer than
  ``max_line_bytes``; :func:`check_lines` does it for a block of lines at once.
* :func:`read_bounded` reads a whole stream (a JSON array document) up to ``max_line_bytes``.
* :func:`check_json_depth` refuses a JSON text nested deeper than ``max_json_depth``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, BinaryIO, Final

from .problems import ProblemError, fail

if TYPE_CHECKING:
    import zstandard

#: A line of a session file (or a JSON array document) longer than this is refused.
MAX_LINE_BYTES: Final = 64 * 1024 * 1024
#: The decompressed content of one zstd frame may not exceed this.
MAX_FRAME_BYTES: Final = 256 * 1024 * 1024
#: A JSON text nested deeper than this (arrays and objects) is refused as JSON_TOO_DEEP.
MAX_JSON_DEPTH: Final = 512
#: The decompressed content of a whole zstd log (every frame together) may not exceed this.
MAX_DECOMPRESSED_BYTES: Final = 1024 * 1024 * 1024
#: An input read whole (a memory file, an import or export document, a CLAUDE.md) may not
#: exceed this.
MAX_INPUT_BYTES: Final = 256 * 1024 * 1024

LINE_TOO_LONG: Final = "FILE_LINE_TOO_LONG"
FRAME_TOO_LARGE: Final = "ZSTD_FRAME_TOO_LARGE"
TOO_DEEP: Final = "JSON_TOO_DEEP"
CONTENT_TOO_LARGE: Final = "ZSTD_CONTENT_TOO_LARGE"

#: The most output one compressed byte can produce: an RLE block is 4 bytes (3 of header,
#: 1 of content) for up to 128 KiB of output; a compressed block needs at least 3 bytes.
_MAX_EXPANSION: Final = (128 * 1024) // 3 + 1
_MIN_PIECE: Final = 256  # fed to the decoder at once, at least: bounds the per-call overshoot


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits in force. Every value is a positive integer."""

    max_line_bytes: int = MAX_LINE_BYTES
    max_frame_bytes: int = MAX_FRAME_BYTES
    max_json_depth: int = MAX_JSON_DEPTH
    max_decompressed_bytes: int = MAX_DECOMPRESSED_BYTES
    max_input_bytes: int = MAX_INPUT_BYTES

    def __post_init__(self) -> None:
        for name in _NAMES:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")


_NAMES: Final = ("max_line_bytes", "max_frame_bytes", "max_json_depth",
                  "max_decompressed_bytes", "max_input_bytes")
_current = Limits()


def current() -> Limits:
    """The limits the readers apply now."""
    return _current


def configure(limits: Limits) -> None:
    """Set the limits for the whole process."""
    global _current
    _current = limits


@contextmanager
def override(*, max_line_bytes: int | None = None, max_frame_bytes: int | None = None,
             max_json_depth: int | None = None, max_decompressed_bytes: int | None = None,
             max_input_bytes: int | None = None) -> Iterator[Limits]:
    """Change some limits inside a ``with`` block; the previous limits come back after it."""
    previous = _current
    changes = {name: value for name, value in (("max_line_bytes", max_line_bytes),
                                               ("max_frame_bytes", max_frame_bytes),
                                               ("max_json_depth", max_json_depth),
                                               ("max_decompressed_bytes",
                                                max_decompressed_bytes),
                                               ("max_input_bytes", max_input_bytes))
               if value is not None}
    configure(replace(previous, **changes))
    try:
        yield _current
    finally:
        configure(previous)


# -- line length --------------------------------------------------------------------------------


def line_too_long(size: int, limit: int, *, line: int | None = None) -> ProblemError:
    return fail(LINE_TOO_LONG, "SES-FILE-014",
                f"a line of at least {size} bytes is longer than the limit of {limit} bytes; "
                "the reader does not hold it", line=line, size=size, limit=limit)


def check_line_length(size: int, *, line: int | None = None) -> None:
    """Refuse a line (or the part of one read so far) of ``size`` bytes above the limit."""
    limit = _current.max_line_bytes
    if size > limit:
        raise line_too_long(size, limit, line=line)


def check_lines(lines: Sequence[bytes], *, first_line: int | None = None) -> None:
    """Refuse the first line of ``lines`` above the limit (``first_line``: the number of
    ``lines[0]`` in the file, for the problem's location)."""
    limit = _current.max_line_bytes
    if not lines or max(map(len, lines)) <= limit:
        return
    for index, raw in enumerate(lines):
        if len(raw) > limit:
            raise line_too_long(len(raw), limit,
                                line=None if first_line is None else first_line + index)


def read_bounded(stream: BinaryIO, *, chunk: int = 1 << 20) -> bytes:
    """The rest of ``stream``, refused once it passes ``max_line_bytes`` (for input that is
    one JSON text, such as a JSON array log)."""
    limit = _current.max_line_bytes
    parts: list[bytes] = []
    size = 0
    while True:
        data = stream.read(min(chunk, limit + 1 - size))
        if not data:
            return b"".join(parts)
        parts.append(data)
        size += len(data)
        if size > limit:
            raise line_too_long(size, limit, line=1)


# -- zstd frames --------------------------------------------------------------------------------


def frame_too_large(produced: int, limit: int) -> ProblemError:
    return fail(FRAME_TOO_LARGE, "SES-FILE-014",
                f"a zstd frame expands past the limit of {limit} bytes (at least {produced} "
                "bytes); refused before it was decompressed further", size=produced,
                limit=limit)


def content_too_large(produced: int, limit: int) -> ProblemError:
    return fail(CONTENT_TOO_LARGE, "SES-FILE-014",
                f"the zstd frames of the log expand past the limit of {limit} bytes in all "
                f"(at least {produced} bytes); refused before the rest was decompressed",
                size=produced, limit=limit)


class BoundedFrameDecompressor:
    """``ZstdDecompressor().decompressobj()`` for one frame, with the frame's decompressed size
    bounded by ``max_frame_bytes`` (read when the object is made).

    Input is fed to the decoder in pieces small enough that one piece cannot expand past the
    remaining allowance by more than a few megabytes, so a bomb is refused after producing at
    most about ``limit`` plus one piece's worth of output, never its full size.
    """

    def __init__(self, limit: int | None = None,
                 decompressor: zstandard.ZstdDecompressor | None = None) -> None:
        """``decompressor``: a ``ZstdDecompressor`` to make the object from, so that a reader
        of many frames sets up the decoder once."""
        self.limit = _current.max_frame_bytes if limit is None else limit
        if decompressor is None:
            import zstandard  # here, not at the top: only a zstd log needs it

            decompressor = zstandard.ZstdDecompressor()
        self._obj = decompressor.decompressobj()
        self.produced = 0
        self._rest = b""

    @property
    def eof(self) -> bool:
        return bool(self._obj.eof)

    @property
    def unused_data(self) -> bytes:
        """Input after the end of the frame (valid once :attr:`eof` is true)."""
        return bytes(self._obj.unused_data) + self._rest

    def decompress(self, data: bytes) -> bytes:
        """Decompress ``data``; raises ``ProblemError`` (ZSTD_FRAME_TOO_LARGE) past the limit.
        ``zstandard.ZstdError`` passes through for a corrupt frame, as from the plain object."""
        outs: list[bytes] = []
        view = memoryview(data)
        offset = 0
        while offset < len(view) and not self._obj.eof:
            room = self.limit - self.produced
            piece = max(_MIN_PIECE, room // _MAX_EXPANSION)
            out = self._obj.decompress(view[offset:offset + piece])
            offset += piece
            if out:
                self.produced += len(out)
                if self.produced > self.limit:
                    raise frame_too_large(self.produced, self.limit)
                outs.append(out)
        self._rest = bytes(view[offset:]) if offset < len(view) else b""
        return b"".join(outs)


# -- JSON nesting -------------------------------------------------------------------------------

_STRING_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_STRING_TEXT = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET_BYTES = re.compile(rb"[\[\]{}]")
_BRACKET_TEXT = re.compile(r"[\[\]{}]")


def json_depth(text: bytes | str) -> int:
    """The deepest nesting of arrays and objects in a JSON text (brackets inside strings do not
    count; an unterminated string ends the scan)."""
    if isinstance(text, bytes):
        stripped = _STRING_BYTES.sub(b"", text)
        cut = stripped.find(b'"')
        brackets = b"".join(_BRACKET_BYTES.findall(
            stripped if cut < 0 else stripped[:cut])).decode("ascii")
    else:
        stripped_text = _STRING_TEXT.sub("", text)
        cut = stripped_text.find('"')
        brackets = "".join(_BRACKET_TEXT.findall(
            stripped_text if cut < 0 else stripped_text[:cut]))
    depth = deepest = 0
    for bracket in brackets:
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif depth:
            depth -= 1
    return deepest


def _opening(text: bytes | str) -> int:
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def check_json_depth(text: bytes | str, *, line: int | None = None) -> None:
    """Refuse a JSON text nested deeper than ``max_json_depth`` with JSON_TOO_DEEP. Costs two
    C-level counts for a text with fewer opening brackets than the limit."""
    limit = _current.max_json_depth
    if _opening(text) <= limit:
        return
    depth = json_depth(text)
    if depth > limit:
        raise fail(TOO_DEEP, "SES-JSON-004",
                   f"JSON nesting depth {depth} is deeper than the limit of {limit}", line=line,
                   depth=depth, limit=limit)


__all__ = ["CONTENT_TOO_LARGE", "FRAME_TOO_LARGE", "LINE_TOO_LONG", "MAX_DECOMPRESSED_BYTES",
           "MAX_FRAME_BYTES", "MAX_INPUT_BYTES", "MAX_JSON_DEPTH", "MAX_LINE_BYTES", "TOO_DEEP",
           "BoundedFrameDecompressor", "Limits", "check_json_depth", "check_line_length",
           "check_lines", "configure", "content_too_large", "current", "frame_too_large",
           "json_depth", "line_too_long", "override", "read_bounded"]
