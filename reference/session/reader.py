"""Streaming reader for every form a session log comes in (spec chapter ``session/jsonl``).

Forms: DSH ``session.jsonl`` (header line + records), the same as ``session.jsonl.zstd``
(independent zstd frames), a bare JSONL of events, a JSON array of events, and stdin (``-``).
Packed chunk rows are expanded wherever they appear. The reader holds one line at a time.

With ``tolerate_torn_tail`` (the load view) a damaged tail is handled as DSH's loader does
(SES-FILE-008, SES-FILE-009): the first unparsable line or seq gap ends the preserved prefix;
if any later line decodes to a ``turn/end`` the log is corrupt, otherwise the rest is a torn,
uncommitted tail that a loader drops. Without it every line must be a good record.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import zstandard

from ..problems import Problem, ProblemError, fail
from . import jsoncodec
from .chunk_rows import decode_record
from .header import check_header, is_header_candidate, refuse_foreign_version

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_BOM = b"\xef\xbb\xbf"
RawLine = tuple[int, bytes, bool, int, bool]
_CHUNK = 1 << 16

FORM_DSH_JSONL = "dsh-jsonl"
FORM_BARE_JSONL = "jsonl"
FORM_JSON_ARRAY = "json-array"


@dataclass
class TornTail:
    """What a tolerant read dropped after the preserved prefix."""

    first_line: int
    lines: int
    reason: Problem | None
    fragment: bool
    committed_bytes: int | None


@dataclass
class ReadResult:
    """Filled in while events are read; complete once the iterator is exhausted."""

    path: str
    form: str = FORM_BARE_JSONL
    compressed: bool = False
    header: dict[str, Any] | None = None
    torn: TornTail | None = None
    committed_bytes: int | None = None
    committed_events: int = 0
    events: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Located:
    line: int | None
    event: Any


class LogReader:
    """Iterate ``Located`` events of one log; raises :class:`ProblemError` on fatal damage."""

    def __init__(self, source: str | Path, *, tolerate_torn_tail: bool,
                 stdin: BinaryIO | None = None) -> None:
        self.source = str(source)
        self.tolerate = tolerate_torn_tail
        self.result = ReadResult(path=self.source)
        self._stdin = stdin

    def __iter__(self) -> Iterator[Located]:
        stream = self._open()
        try:
            yield from self._read(stream)
        finally:
            if stream is not self._stdin:
                stream.close()

    def _open(self) -> BinaryIO:
        if self.source == "-":
            return self._stdin if self._stdin is not None else sys.stdin.buffer
        try:
            return open(self.source, "rb")
        except OSError as exc:
            raise fail("IO_ERROR", "SES-FILE-004",
                       f"cannot read {self.source}: {exc.strerror or exc}") from None

    def _read(self, stream: BinaryIO) -> Iterator[Located]:
        head = _peek(stream, 4)
        if head.startswith(ZSTD_MAGIC):
            self.result.compressed = True
            yield from self._read_lines(_zstd_lines(stream, self.result))
            return
        start = _peek(stream, 64).lstrip(b" \t\r\n")
        if start.startswith(b"["):
            self.result.form = FORM_JSON_ARRAY
            yield from self._read_array(stream)
            return
        yield from self._read_lines(_plain_lines(stream))

    def _read_array(self, stream: BinaryIO) -> Iterator[Located]:
        text = _decode_utf8(stream.read(), line=1)
        value = jsoncodec.loads(text)
        if not isinstance(value, list):
            raise fail("JSON_ARRAY_NOT_ARRAY", "SES-JSON-004", "a JSON log must be an array")
        for item in value:
            for event in decode_record(item):
                self.result.events += 1
                yield Located(line=None, event=event)

    def _read_lines(self, lines: Iterator[RawLine]) -> Iterator[Located]:
        """``lines`` yields (line number, raw bytes without newline, terminated, end offset,
        whether the line lies inside a complete zstd frame)."""
        issue: Problem | None = None
        issue_line = 0
        dropped = 0
        fragment = False
        expected = 0
        for number, raw, terminated, end, framed in lines:
            if number == 1:
                header = self._first_line(raw, terminated)
                if header is not None:
                    self.result.committed_bytes = end
                    continue
            # SES-FILE-008: a final fragment without newline was never committed.
            if not terminated:
                fragment = True
                if issue is None:
                    issue_line = number
                break
            try:
                decoded = decode_record(jsoncodec.loads(_decode_utf8(raw, line=number)))
            except ProblemError as exc:
                if framed:
                    # A complete frame was written whole: damage inside it is no crash artefact.
                    raise fail("ZSTD_FRAME_MID_RECORD", "SES-FILE-007",
                               f"corrupt zstd session log: a complete frame contains a damaged "
                               f"record at line {number}: {exc.problem.message}",
                               line=number) from None
                if not self.tolerate:
                    raise ProblemError(exc.problem.located(line=number)) from None
                if issue is None:
                    issue, issue_line = exc.problem.located(line=number), number
                    dropped = 1
                else:
                    dropped += 1
                continue
            if issue is not None:
                dropped += 1
                if _has_turn_end(decoded):
                    raise _committed(issue)
                continue
            gap = next((e for i, e in enumerate(decoded)
                        if not isinstance(e, dict) or e.get("seq") != expected + i), None)
            if gap is not None and self.tolerate:
                got = gap.get("seq") if isinstance(gap, dict) else None
                issue = fail("FILE_COMMITTED_SEQ_GAP", "SES-FILE-009",
                             f"seq gap at line {number} (expected "
                             f"{expected + decoded.index(gap)}, got {got!r})",
                             line=number).problem
                issue_line, dropped = number, 1
                if _has_turn_end(decoded):
                    raise _committed(issue)
                continue
            for event in decoded:
                expected += 1
                self.result.events += 1
                yield Located(line=number, event=event)
            # Lines recovered from a torn final zstd frame are read but not committed.
            if framed or not self.result.compressed:
                self.result.committed_bytes = end
                self.result.committed_events = expected
        if issue is not None or fragment:
            self.result.torn = TornTail(first_line=issue_line, lines=dropped + int(fragment),
                                        reason=issue, fragment=fragment,
                                        committed_bytes=self.result.committed_bytes)

    def _first_line(self, raw: bytes, terminated: bool) -> dict[str, Any] | None:
        """Recognise a DSH header on line 1; returns it, or None for a bare JSONL log."""
        if raw.startswith(_BOM):
            raise fail("JSON_BOM", "SES-JSON-004",
                       "the file starts with a UTF-8 byte order mark; JSON text must not", line=1)
        try:
            value = json.loads(_decode_utf8(raw, line=1))
        except (ValueError, RecursionError, ProblemError):
            if self.result.compressed:
                raise fail("FILE_HEADER_NOT_JSON", "SES-FILE-001",
                           "corrupt session log: header line is not valid JSON",
                           line=1) from None
            return None
        if not is_header_candidate(value):
            if self.result.compressed:
                raise fail("FILE_HEADER_NOT_SESSION", "SES-FILE-001",
                           'corrupt session log: first line is not a {"type":"session"} header',
                           line=1)
            return None
        self.result.form = FORM_DSH_JSONL
        header: dict[str, Any] = value
        if not self.tolerate:
            return header  # below the load level the header is set aside, not judged
        if not terminated:
            raise fail("FILE_HEADER_MISSING", "SES-FILE-001",
                       "empty or header-less session log: the header line is not terminated "
                       "by a newline", line=1)
        for problem in (refuse_foreign_version(value), _lossless_header(raw),
                        check_header(value)):
            if problem is not None:
                raise ProblemError(problem.problem.located(line=1))
        self.result.header = header
        return header


def _lossless_header(raw: bytes) -> ProblemError | None:
    """A header number written as -0 (or non-finite) is not a valid header field."""
    try:
        jsoncodec.loads(raw.decode("utf-8"))
    except ProblemError as exc:
        return fail("FILE_HEADER_INVALID", "SES-FILE-002",
                    f"session header is not lossless JSON: {exc.problem.message}")
    return None


def _committed(issue: Problem) -> ProblemError:
    if issue.code in ("FILE_COMMITTED_SEQ_GAP", "CHUNK_ROW_MALFORMED"):
        code = issue.code
    else:
        code = "FILE_COMMITTED_UNPARSABLE"
    what = {"FILE_COMMITTED_SEQ_GAP": "seq gap", "CHUNK_ROW_MALFORMED": "malformed chunk row"}.get(
        code, "unparsable event")
    message = (f"corrupt session log: {what} in the committed region at line {issue.line} "
               f"(a later line records a turn/end): {issue.message}")
    requirement = "SES-FILE-005" if code == "CHUNK_ROW_MALFORMED" else "SES-FILE-009"
    return ProblemError(Problem(code=code, message=message, requirement=requirement,
                                line=issue.line, pointer=issue.pointer))


def _has_turn_end(events: list[Any]) -> bool:
    return any(isinstance(e, dict) and e.get("type") == "turn/end" for e in events)


def _decode_utf8(raw: bytes, *, line: int) -> str:
    if raw.startswith(_BOM):
        raise fail("JSON_BOM", "SES-JSON-004",
                   "the line starts with a UTF-8 byte order mark; JSON text must not", line=line)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail("JSON_INVALID_UTF8", "SES-JSON-004",
                   f"line is not valid UTF-8 (byte {exc.start + 1})", line=line) from None


def _peek(stream: BinaryIO, size: int) -> bytes:
    peek = getattr(stream, "peek", None)
    if peek is not None:
        data: bytes = peek(size)
        return data[:size]
    raise TypeError("stream must be buffered")


def _plain_lines(stream: BinaryIO) -> Iterator[RawLine]:
    offset = 0
    for number, raw in enumerate(stream, start=1):
        offset += len(raw)
        if raw.endswith(b"\n"):
            yield number, raw[:-1], True, offset, False
        else:
            yield number, raw, False, offset, False


def _zstd_lines(stream: BinaryIO, result: ReadResult) -> Iterator[RawLine]:
    """Lines of a concatenation of zstd frames (SES-FILE-007).

    Offsets are compressed-file offsets of the end of the frame that completes a line, so a
    torn final frame is cut at its start. A complete frame that ends mid-line is corruption.
    """
    decompressor = zstandard.ZstdDecompressor()
    obj = decompressor.decompressobj()
    frame_started = False
    frame_start = 0
    consumed = 0
    pending = b""
    number = 0
    frame_lines: list[bytes] = []
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
            if out:
                pieces = (pending + out).split(b"\n")
                pending = pieces.pop()
                frame_lines.extend(pieces)
            if obj.eof:
                unused = obj.unused_data
                consumed += len(data) - len(unused)
                if pending:
                    raise fail("ZSTD_FRAME_MID_RECORD", "SES-FILE-007",
                               f"zstd frame ending at byte {consumed} ends in the middle of a "
                               "record")
                if frame_start == 0 and len(frame_lines) != 1:
                    raise fail("ZSTD_CORRUPT", "SES-FILE-007",
                               "corrupt zstd session log: the first frame is not exactly the "
                               f"header line (it holds {len(frame_lines)} lines)")
                for line in frame_lines:
                    number += 1
                    yield number, line, True, consumed, frame_start > 0
                frame_lines = []
                frame_start = consumed
                obj = decompressor.decompressobj()
                frame_started = False
                data = unused
            else:
                consumed += len(data)
                data = b""
    if frame_started:
        # A structurally incomplete final frame: recover its complete lines (SES-FILE-008).
        result.notes.append(f"incomplete final zstd frame at byte {frame_start}")
        for line in frame_lines:
            number += 1
            yield number, line, True, frame_start, False
        number += 1
        yield number, pending, False, frame_start, False
    elif pending:
        number += 1
        yield number, pending, False, consumed, False


def open_bytes(data: bytes) -> BinaryIO:
    """A buffered binary stream over bytes (for tests and stdin capture)."""
    return io.BufferedReader(io.BytesIO(data))
