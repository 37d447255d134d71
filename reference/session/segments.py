"""The blocks of complete lines a log's text comes in (spec chapter ``session/jsonl``).

A plain file is read ``_BLOCK`` bytes at a time; a compressed one (SES-FILE-007) is a
concatenation of independent zstd frames, each one block. Either way the reader holds one
block of lines at a time, and the resource limits of :mod:`dshkit.reference.limits` bound what
one block can cost: a line longer than ``max_line_bytes`` is refused (FILE_LINE_TOO_LONG) as
soon as more than that is held, a frame once its content passes ``max_frame_bytes``
(ZSTD_FRAME_TOO_LARGE), and the frames together once their content passes
``max_decompressed_bytes`` (ZSTD_CONTENT_TOO_LARGE), however small each frame is.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import replace
from typing import BinaryIO, NamedTuple

from .. import limits
from ..json import parse as jsonparse
from ..problems import ProblemError, fail

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_CHUNK = 1 << 16  # compressed bytes fed to the zstd decoder at a time
_BLOCK = 1 << 16  # plain bytes read at a time; the reader holds one block of lines


class Segment(NamedTuple):  # not a dataclass: making one costs every start
    """Complete lines of one block of the logical text (plain: a read block; zstd: a frame)."""

    lines: list[bytes]  # each was followed by a line feed
    risky: set[int]  # indexes of lines the fast JSON parser must leave to the exact one
    base: int  # file offset of the first line (plain files)
    size: int  # bytes of the lines with their line feeds (plain files)
    end: int | None  # committed offset of every line (zstd), or None: after the line (plain)
    framed: bool  # the lines lie inside a complete zstd frame other than the header frame
    fragment: bytes | None = None  # a final piece without line feed, after the lines
    fragment_end: int = 0


def peek(stream: BinaryIO, size: int) -> bytes:
    peek = getattr(stream, "peek", None)
    if peek is not None:
        data: bytes = peek(size)
        return data[:size]
    raise TypeError("stream must be buffered")


def plain_segments(stream: BinaryIO) -> Iterator[Segment]:
    """Blocks of complete lines of a plain file, read ``_BLOCK`` bytes at a time. A line
    longer than ``max_line_bytes`` is refused once more than that is held."""
    limit = limits.current().max_line_bytes
    base = 0
    number = 0  # complete lines before the block
    carry: list[bytes] = []
    held = 0  # bytes in carry
    while True:
        data = stream.read(_BLOCK)
        if not data:
            break
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            carry.append(data)  # a line longer than a block
            held += len(data)
            if held > limit:
                raise limits.line_too_long(held, limit, line=number + 1)
            continue
        block = b"".join((*carry, data[:cut])) if carry else data[:cut]
        carry = [data[cut:]] if cut < len(data) else []
        held = len(data) - cut
        lines = block.split(b"\n")
        lines.pop()  # the empty piece after the last line feed
        if len(block) > limit:
            limits.check_lines(lines, first_line=number + 1)
        if held > limit:
            raise limits.line_too_long(held, limit, line=number + len(lines) + 1)
        yield Segment(lines, jsonparse.risky_lines(block), base, len(block), None, False)
        base += len(block)
        number += len(lines)
    tail = b"".join(carry)
    if tail:
        yield Segment([], set(), base, 0, None, False, fragment=tail,
                       fragment_end=base + len(tail))


def zstd_segments(stream: BinaryIO, notes: list[str]) -> Iterator[Segment]:
    """The frames of a concatenation of zstd frames (SES-FILE-007), one segment each.

    Offsets are compressed-file offsets of the end of the frame that holds a line, so a torn
    final frame is cut at its start. A complete frame that ends mid-line is corruption.
    """
    bounds = limits.current()
    line_limit = bounds.max_line_bytes
    total_limit = bounds.max_decompressed_bytes
    import zstandard  # here, not at the top: only a zstd log needs it

    total = 0  # decompressed bytes of the complete frames so far
    decompressor = zstandard.ZstdDecompressor()

    def frame() -> limits.BoundedFrameDecompressor:
        # each frame may use what the whole log has left, so many small frames are bounded too
        return limits.BoundedFrameDecompressor(
            min(bounds.max_frame_bytes, total_limit - total), decompressor)

    obj = frame()
    frame_started = False
    frame_start = 0
    consumed = 0
    outs: list[bytes] = []
    while True:
        data = stream.read(_CHUNK)
        if not data:
            break
        while data:
            frame_started = True
            try:
                out = obj.decompress(data)
            except zstandard.ZstdError as exc:
                raise fail("ZSTD_CORRUPT", "SES-FILE-007",
                           f"corrupt zstd frame starting at byte {frame_start}: {exc}") from None
            except ProblemError as exc:  # ZSTD_FRAME_TOO_LARGE: say which frame
                if obj.limit < bounds.max_frame_bytes:
                    raise limits.content_too_large(total + obj.produced, total_limit) from None
                raise ProblemError(replace(exc.problem, message=(
                    f"{exc.problem.message} (the frame starting at byte {frame_start})"))
                    ) from None
            if out:
                outs.append(out)
            if obj.eof:
                unused = obj.unused_data
                consumed += len(data) - len(unused)
                content = b"".join(outs)
                outs = []
                lines = content.split(b"\n")
                if len(content) > line_limit:
                    limits.check_lines(lines)
                if lines.pop():
                    raise fail("ZSTD_FRAME_MID_RECORD", "SES-FILE-007",
                               f"zstd frame ending at byte {consumed} ends in the middle of a "
                               "record")
                if frame_start == 0 and len(lines) != 1:
                    raise fail("ZSTD_CORRUPT", "SES-FILE-007",
                               "corrupt zstd session log: the first frame is not exactly the "
                               f"header line (it holds {len(lines)} lines)")
                yield Segment(lines, jsonparse.risky_lines(content), 0, len(content), consumed,
                               frame_start > 0)
                frame_start = consumed
                total += len(content)
                if total >= total_limit:
                    data = unused
                    if data or stream.read(1):
                        raise limits.content_too_large(total + 1, total_limit)
                    break
                obj = frame()
                frame_started = False
                data = unused
            else:
                consumed += len(data)
                data = b""
    if frame_started:
        # A structurally incomplete final frame: recover its complete lines (SES-FILE-008).
        notes.append(f"incomplete final zstd frame at byte {frame_start}")
        content = b"".join(outs)
        lines = content.split(b"\n")
        if len(content) > line_limit:
            limits.check_lines(lines)
        pending = lines.pop()
        yield Segment(lines, jsonparse.risky_lines(content), 0, len(content), frame_start, False,
                       fragment=pending, fragment_end=frame_start)


def open_bytes(data: bytes) -> BinaryIO:
    """A buffered binary stream over bytes (for tests and stdin capture)."""
    return io.BufferedReader(io.BytesIO(data))
