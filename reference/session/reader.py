"""Streaming reader for every form a session log comes in (spec chapter ``session/jsonl``).

Forms: DSH ``session.jsonl`` (header line + records), the same as ``session.jsonl.zstd``
(independent zstd frames), a bare JSONL of events, a JSON array of events, and stdin (``-``).
Packed chunk rows are expanded wherever they appear. The reader holds one block of lines at a
time (a read block of a plain file, one frame of a compressed one), never the whole log, and
parses each line with the parser seam of :mod:`.jsonparse`.

With ``tolerate_torn_tail`` (the load view) a damaged tail is handled as DSH's loader does
(SES-FILE-008, SES-FILE-009): the first unparsable line or seq gap ends the preserved prefix;
if any later line decodes to a ``turn/end`` the log is corrupt, otherwise the rest is a torn,
uncommitted tail that a loader drops. Without it every line must be a good record.

The resource limits of :mod:`dshkit.reference.limits` bound what one block can cost, at every
level: a line longer than ``max_line_bytes`` is refused (FILE_LINE_TOO_LONG) as soon as more
than that is buffered, a zstd frame is refused once its content passes ``max_frame_bytes``
(ZSTD_FRAME_TOO_LARGE), and a JSON text nested deeper than ``max_json_depth`` is refused
(JSON_TOO_DEEP) whichever parser reads it. These are refusals of the file, never a torn tail.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import zstandard

from .. import limits
from ..problems import Problem, ProblemError, fail
from . import jsoncodec, jsonparse
from .chunk_rows import ROW_TYPES, decode_record
from .header import check_header, is_header_candidate, refuse_foreign_version

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 16  # compressed bytes fed to the zstd decoder at a time
_BLOCK = 1 << 16  # plain bytes read at a time; the reader holds one block of lines
_RUN = 64  # lines parsed and handed on together

_ROW_SET = frozenset(ROW_TYPES)
_TYPE = itemgetter("type")
_SEQ = itemgetter("seq")

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


#: Events read from consecutive lines: ``(line of the first, line step, events)``.
Batch = tuple[int | None, int, Sequence[Any]]


class DeferredRun(list[Any]):
    """A run of events whose chunk-row and seq checks the reader left to its consumer.

    Only a consumer that asked for it (``LogReader.batches(handback=True)``) gets one: the
    checking loops of :mod:`.pipeline`, whose fast path takes no chunk row and only events
    with contiguous seqs, the first of which the reader has checked. The consumer runs its
    fast path over the run, sets :attr:`taken` to the number of events it took from the start
    and leaves the rest alone; the reader checks the rest as it checks any run and hands it on
    again, as a plain batch, or reads it line by line.
    """

    __slots__ = ("taken",)

    taken: int


class Located(NamedTuple):
    """One event and the physical line it was read from (None for a JSON array)."""

    line: int | None
    event: Any


@dataclass(slots=True)
class _Segment:
    """Complete lines of one block of the logical text (plain: a read block; zstd: a frame)."""

    lines: list[bytes]  # each was followed by a line feed
    risky: set[int]  # indexes of lines the fast JSON parser must leave to the exact one
    base: int  # file offset of the first line (plain files)
    size: int  # bytes of the lines with their line feeds (plain files)
    end: int | None  # committed offset of every line (zstd), or None: after the line (plain)
    framed: bool  # the lines lie inside a complete zstd frame other than the header frame
    fragment: bytes | None = None  # a final piece without line feed, after the lines
    fragment_end: int = 0


@dataclass(slots=True)
class _Scan:
    """The committed-region scan (SES-FILE-009) between lines."""

    issue: Problem | None = None
    issue_line: int = 0
    dropped: int = 0
    fragment: bool = False
    expected: int = 0  # events kept so far
    committed_bytes: int | None = None
    committed_events: int = 0


_UNREAD = object()


class LogReader:
    """Iterate ``Located`` events of one log; raises :class:`ProblemError` on fatal damage.

    :meth:`batches` is what the checking loops use: runs of events from consecutive lines,
    parsed by the fast path of :mod:`.jsonparse` where it is safe. :meth:`pairs` and plain
    iteration give one event at a time.
    """

    def __init__(self, source: str | Path, *, tolerate_torn_tail: bool,
                 stdin: BinaryIO | None = None) -> None:
        self.source = str(source)
        self.tolerate = tolerate_torn_tail
        self.result = ReadResult(path=self.source)
        self._stdin = stdin
        self._handback = False

    def __iter__(self) -> Iterator[Located]:
        for line, event in self.pairs():
            yield Located(line, event)

    def pairs(self) -> Iterator[tuple[int | None, Any]]:
        """``(physical line, event)`` for every event, in order (line None for an array)."""
        for first, step, events in self.batches():
            if first is None or step == 0:
                for event in events:
                    yield first, event
            else:
                for index, event in enumerate(events):
                    yield first + index, event

    def batches(self, *, handback: bool = False) -> Iterator[Batch]:
        """Every event, in order, in batches ``(line, step, events)``: event ``i`` of a batch
        was read from line ``line + step * i`` (``step`` is 0 when all come from one line, as
        for a chunk row; ``line`` is None for a JSON array). With ``handback`` some batches
        are :class:`DeferredRun` (only for the checking loops of :mod:`.pipeline`)."""
        self._handback = handback
        stream = self._open()
        try:
            head = _peek(stream, 4)
            if head.startswith(ZSTD_MAGIC):
                self.result.compressed = True
                yield from self._scan(_zstd_segments(stream, self.result))
            elif _peek(stream, 64).lstrip(b" \t\r\n").startswith(b"["):
                self.result.form = FORM_JSON_ARRAY
                yield from self._read_array(stream)
            else:
                yield from self._scan(_plain_segments(stream))
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

    def _read_array(self, stream: BinaryIO) -> Iterator[Batch]:
        text = _decode_utf8(limits.read_bounded(stream), line=1)
        value = jsoncodec.loads(text)
        if not isinstance(value, list):
            raise fail("JSON_ARRAY_NOT_ARRAY", "SES-JSON-004", "a JSON log must be an array")
        for item in value:
            events = decode_record(item)
            self.result.events += len(events)
            yield None, 0, events

    def _scan(self, segments: Iterator[_Segment]) -> Iterator[Batch]:
        """The lines of every segment, as batches of events.

        The common case is a run of ``_RUN`` lines that the fast parser reads as plain events
        with the expected seqs, before any damage (:meth:`_runs`). A run that fails, the rest of
        a segment after damage, and a segment with a line the guard of :mod:`.jsonparse` flags
        take :meth:`_lines`, line by line, and :meth:`_line` is the committed-region scan in
        full.
        """
        scan = _Scan()
        result = self.result
        fast = jsonparse.fast_loads()
        deep = jsonparse.depth_guard()
        number = 0  # lines before the current segment
        try:
            for segment in segments:
                lines = segment.lines
                start = 0
                if number == 0 and lines:  # line 1, a possible header, on its own
                    yield from self._lines(scan, segment, 0, 1, number)
                    start = 1
                if fast is not None and not segment.risky and scan.issue is None:
                    start = yield from self._runs(scan, segment, start, number, fast, deep)
                if start < len(lines):
                    yield from self._lines(scan, segment, start, len(lines), number)
                number += len(lines)
                if segment.fragment is not None:
                    number += 1
                    self._line(scan, segment.fragment, number, False, segment.fragment_end,
                               False, _UNREAD)
        finally:
            result.events += scan.expected
            result.committed_events = scan.committed_events
            if scan.committed_bytes is not None:
                result.committed_bytes = scan.committed_bytes
        if scan.issue is not None or scan.fragment:
            result.torn = TornTail(first_line=scan.issue_line,
                                   lines=scan.dropped + int(scan.fragment), reason=scan.issue,
                                   fragment=scan.fragment, committed_bytes=result.committed_bytes)

    def _runs(self, scan: _Scan, segment: _Segment, start: int, before: int,
              fast: jsonparse.FastLoads, deep: int) -> Generator[Batch, None, int]:
        """Runs of ``_RUN`` lines of a segment from line ``start`` (``before``: lines before
        the segment), each parsed with one C-level pass and checked with two more
        (:func:`_plain`: no value is a chunk row and, when the committed region is checked,
        every value is an object with the expected seq). Each run is one batch, handed on
        while it is still in the processor's cache. With ``handback`` the two checks are left
        to the consumer (:class:`DeferredRun`) when the first value has the expected seq.

        A run that fails a check (chunk rows, a seq gap, a line the fast parser refuses, a
        line that may nest too deep) is read by :meth:`_lines`, with the values already
        parsed, and the runs go on after it. Returns the index of the first line not read:
        the number of lines, or where :meth:`_lines` found damage (the caller reads on from
        there line by line).

        Nesting: a valid JSON text nested deeper than ``deep`` is longer than ``2 * deep + 1``
        bytes and holds more than ``deep`` opening brackets, so only the values of such lines
        are measured (:func:`_depth_over`); a line that is not valid JSON is refused by the
        fast parser. The committed offset is worked out when the runs end, not per run.
        """
        lines = segment.lines
        total = len(lines)
        long_line = 2 * deep + 1
        tolerate = self.tolerate
        handback = self._handback
        expected = first = scan.expected
        make = DeferredRun if handback else list
        try:
            while start < total:
                run = lines[start:start + _RUN]
                values: list[Any]
                try:
                    values = make(map(fast, run))
                except Exception:  # refused by the fast parser: the exact one says why
                    values = []
                if values and max(map(len, run)) > long_line:
                    for raw, value in compress(zip(run, values, strict=True),
                                               map(long_line.__lt__, map(len, run))):
                        if raw.count(b"[") + raw.count(b"{") > deep and _depth_over(value, deep):
                            values = []  # the exact parser says how deep
                            break
                if type(values) is DeferredRun:
                    first_value = values[0]
                    if tolerate and (type(first_value) is not dict
                                     or first_value.get("seq") != expected):
                        values = list(values)  # the reader checks this run itself
                    else:
                        yield before + start + 1, 1, values
                        taken = values.taken
                        start += taken
                        expected += taken
                        scan.expected = expected
                        if taken == len(values):
                            continue
                        values = values[taken:]
                if values and _plain(values, expected, tolerate):
                    yield before + start + 1, 1, values
                    start += len(values)
                    expected += len(values)
                    scan.expected = expected
                    continue
                # This run line by line (chunk rows, damage), then the runs go on.
                _commit_runs(scan, segment, start, expected > first, self.result.compressed)
                first = expected
                stop = min(start + (len(values) or _RUN), total)
                yield from self._lines(scan, segment, start, stop, before, values)
                start = stop
                expected = first = scan.expected
                if scan.issue is not None:
                    break
        finally:
            _commit_runs(scan, segment, start, expected > first, self.result.compressed)
        return start

    def _lines(self, scan: _Scan, segment: _Segment, start: int, stop: int,
               before: int, parsed: Sequence[Any] = ()) -> Iterator[Batch]:
        """Lines ``start:stop`` of a segment, one at a time (``before``: lines before the
        segment; ``parsed``: the values of the first lines, already read by the fast parser).
        Lines that are plain events with the expected seq are gathered into runs."""
        fast = jsonparse.fast_loads()
        deep = jsonparse.depth_guard()
        lines = segment.lines
        risky = segment.risky
        fixed_end = segment.end
        commit = segment.framed or not self.result.compressed
        tolerate = self.tolerate
        offset = segment.base + sum(map(len, lines[:start])) + start
        run: list[Any] = []
        run_first = 0
        known = start + len(parsed)
        for index in range(start, stop):
            raw = lines[index]
            number = before + index + 1
            offset += len(raw) + 1
            end = offset if fixed_end is None else fixed_end
            value: Any = _UNREAD
            if index < known:  # read by the fast parser on a line it may read (see _runs)
                value = parsed[index - start]
            elif (number != 1 and scan.issue is None and index not in risky
                    and not jsonparse.too_deep(raw, deep) and fast is not None):
                try:
                    value = fast(raw)
                except Exception:  # the exact parser says why, or reads it after all
                    value = _UNREAD
            if (value is not _UNREAD and scan.issue is None and type(value) is dict
                    and value.get("type") not in ROW_TYPES
                    and (not tolerate or value.get("seq") == scan.expected)):
                if not run:
                    run_first = number
                run.append(value)
                scan.expected += 1
                if commit:
                    scan.committed_bytes, scan.committed_events = end, scan.expected
                continue
            if run:
                yield run_first, 1, run
                run = []
            decoded = self._line(scan, raw, number, True, end, segment.framed, value)
            if decoded:
                yield number, 0, decoded
        if run:
            yield run_first, 1, run

    def _line(self, scan: _Scan, raw: bytes, number: int, terminated: bool, end: int,
              framed: bool, value: Any) -> list[Any]:
        """One line of the committed-region scan (SES-FILE-008, SES-FILE-009); returns the
        events to yield. ``value`` is the line already parsed, or ``_UNREAD``."""
        if number == 1:
            header = self._first_line(raw, terminated)
            if header is not None:
                scan.committed_bytes = end
                return []
        # SES-FILE-008: a final fragment without newline was never committed.
        if not terminated:
            scan.fragment = True
            if scan.issue is None:
                scan.issue_line = number
            return []
        try:
            if value is _UNREAD:
                value = jsonparse.exact_loads(raw)
            decoded = decode_record(value)
        except ProblemError as exc:
            if framed:
                # A complete frame was written whole: damage inside it is no crash artefact.
                raise fail("ZSTD_FRAME_MID_RECORD", "SES-FILE-007",
                           f"corrupt zstd session log: a complete frame contains a damaged "
                           f"record at line {number}: {exc.problem.message}",
                           line=number) from None
            if not self.tolerate:
                raise ProblemError(exc.problem.located(line=number)) from None
            if scan.issue is None:
                scan.issue, scan.issue_line = exc.problem.located(line=number), number
                scan.dropped = 1
            else:
                scan.dropped += 1
            return []
        if scan.issue is not None:
            scan.dropped += 1
            if _has_turn_end(decoded):
                raise _committed(scan.issue)
            return []
        expected = scan.expected
        gap = None
        if self.tolerate and not _contiguous(decoded, expected):
            gap = next(e for i, e in enumerate(decoded)
                       if not isinstance(e, dict) or e.get("seq") != expected + i)
        if gap is not None:
            got = gap.get("seq") if isinstance(gap, dict) else None
            scan.issue = fail("FILE_COMMITTED_SEQ_GAP", "SES-FILE-009",
                              f"seq gap at line {number} (expected "
                              f"{expected + decoded.index(gap)}, got {got!r})",
                              line=number).problem
            scan.issue_line, scan.dropped = number, 1
            if _has_turn_end(decoded):
                raise _committed(scan.issue)
            return []
        scan.expected += len(decoded)
        # Lines recovered from a torn final zstd frame are read but not committed.
        if framed or not self.result.compressed:
            scan.committed_bytes = end
            scan.committed_events = scan.expected
        return decoded

    def _first_line(self, raw: bytes, terminated: bool) -> dict[str, Any] | None:
        """Recognise a DSH header on line 1; returns it, or None for a bare JSONL log."""
        if raw.startswith(_BOM):
            raise fail("JSON_BOM", "SES-JSON-004",
                       "the file starts with a UTF-8 byte order mark; JSON text must not", line=1)
        try:
            limits.check_json_depth(raw)
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


def _commit_runs(scan: _Scan, segment: _Segment, start: int, read: bool,
                 compressed: bool) -> None:
    """Record the committed region after runs that read events up to line ``start`` of the
    segment (``read``: they read any); lines recovered from a torn final zstd frame are read
    but not committed."""
    if not read or not (segment.framed or not compressed):
        return
    scan.committed_events = scan.expected
    if segment.end is not None:
        scan.committed_bytes = segment.end
    elif start == len(segment.lines):
        scan.committed_bytes = segment.base + segment.size
    else:
        scan.committed_bytes = segment.base + sum(map(len, segment.lines[:start])) + start


def _contiguous(events: list[Any], expected: int) -> bool:
    """Whether every event is an object and their seqs are ``expected``, ``expected + 1``..."""
    try:
        return list(map(_SEQ, events)) == list(range(expected, expected + len(events)))
    except (TypeError, KeyError):
        return False


def _plain(values: list[Any], expected: int, tolerate: bool) -> bool:
    """Whether no value is a chunk row (every value is one event) and, when the committed
    region is checked, every value is an object whose seq is ``expected``, ``expected + 1``,
    and so on."""
    try:
        if not _ROW_SET.isdisjoint(map(_TYPE, values)):
            return False
        return not tolerate or list(map(_SEQ, values)) == list(
            range(expected, expected + len(values)))
    except (TypeError, KeyError):  # not an object, no type or seq, an unhashable type
        return False


def _depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` (as the fast parser made it: plain dicts and lists) nests arrays and
    objects deeper than ``limit``, walked one nesting level at a time."""
    depth = 0
    level = [value]
    while True:
        below: list[Any] = []
        extend = below.extend
        nested = False
        for item in level:
            kind = type(item)
            if kind is dict:
                nested = True
                extend(item.values())
            elif kind is list:
                nested = True
                extend(item)
        if not nested:
            return False
        depth += 1
        if depth > limit:
            return True
        level = below


def _plain_segments(stream: BinaryIO) -> Iterator[_Segment]:
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
        yield _Segment(lines, jsonparse.risky_lines(block), base, len(block), None, False)
        base += len(block)
        number += len(lines)
    tail = b"".join(carry)
    if tail:
        yield _Segment([], set(), base, 0, None, False, fragment=tail,
                       fragment_end=base + len(tail))


def _zstd_segments(stream: BinaryIO, result: ReadResult) -> Iterator[_Segment]:
    """The frames of a concatenation of zstd frames (SES-FILE-007), one segment each.

    Offsets are compressed-file offsets of the end of the frame that holds a line, so a torn
    final frame is cut at its start. A complete frame that ends mid-line is corruption.
    """
    line_limit = limits.current().max_line_bytes
    decompressor = zstandard.ZstdDecompressor()
    obj = limits.BoundedFrameDecompressor(decompressor=decompressor)
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
                yield _Segment(lines, jsonparse.risky_lines(content), 0, len(content), consumed,
                               frame_start > 0)
                frame_start = consumed
                obj = limits.BoundedFrameDecompressor(decompressor=decompressor)
                frame_started = False
                data = unused
            else:
                consumed += len(data)
                data = b""
    if frame_started:
        # A structurally incomplete final frame: recover its complete lines (SES-FILE-008).
        result.notes.append(f"incomplete final zstd frame at byte {frame_start}")
        content = b"".join(outs)
        lines = content.split(b"\n")
        if len(content) > line_limit:
            limits.check_lines(lines)
        pending = lines.pop()
        yield _Segment(lines, jsonparse.risky_lines(content), 0, len(content), frame_start, False,
                       fragment=pending, fragment_end=frame_start)


def open_bytes(data: bytes) -> BinaryIO:
    """A buffered binary stream over bytes (for tests and stdin capture)."""
    return io.BufferedReader(io.BytesIO(data))
