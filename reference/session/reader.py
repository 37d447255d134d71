"""Streaming reader for every form a session log comes in (spec chapter ``session/jsonl``).

Forms: DSH ``session.jsonl`` (header line + records), the same as ``session.jsonl.zstd``
(independent zstd frames), a bare JSONL of events, a JSON array of events, and stdin (``-``).
Packed chunk rows are expanded wherever they appear. The reader holds one block of lines at a
time (a read block of a plain file, one frame of a compressed one), never the whole log, and
parses each line with the parser seam of :mod:`.jsonparse`. The jobs around it have modules
of their own: telling the forms apart and judging a header (:mod:`.forms`), the blocks of lines
of a plain or compressed file (:mod:`.segments`) and the torn-tail policy (:mod:`.committed`).

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

import sys
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from ..inputs import InputError, open_input
from ..json import parse as jsonparse
from ..problems import fail
from .chunk_rows import ROW_TYPES
from .committed import UNREAD, Scan, TornTail, commit_runs
from .forms import (
    FORM_BARE_JSONL,
    FORM_DSH_JSONL,
    FORM_JSON_ARRAY,
    NAMED_FORMS,
    header_candidate,
    judge_header,
    read_array,
)
from .segments import ZSTD_MAGIC, Segment, open_bytes, peek, plain_segments, zstd_segments

if TYPE_CHECKING:
    from pathlib import Path

_RUN = 64  # lines parsed and handed on together

_ROW_SET = frozenset(ROW_TYPES)
_TYPE = itemgetter("type")
_SEQ = itemgetter("seq")


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
    #: What the input held when it holds no header and no committed event (SES-FILE-017).
    empty: str | None = None


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


class LogReader:
    """Iterate ``Located`` events of one log; raises :class:`ProblemError` on fatal damage.

    :meth:`batches` is what the checking loops use: runs of events from consecutive lines,
    parsed by the fast path of :mod:`.jsonparse` where it is safe. :meth:`pairs` and plain
    iteration give one event at a time.
    """

    def __init__(self, source: str | Path, *, tolerate_torn_tail: bool,
                 stdin: BinaryIO | None = None, form: str | None = None) -> None:
        """``form`` names the input's form (``dsh``, ``jsonl`` or ``array``, SES-FILE-015);
        None detects it. The committed-region tolerance of ``tolerate_torn_tail`` applies to a
        session file only: in an event list every complete line is committed (SES-FILE-016)."""
        if form is not None and form not in NAMED_FORMS:
            raise ValueError(f"unknown form {form!r}: expected one of {sorted(NAMED_FORMS)}")
        self.source = str(source)
        self.tolerate = tolerate_torn_tail
        self.result = ReadResult(path=self.source)
        self._stdin = stdin
        self._handback = False
        self._named = NAMED_FORMS.get(form) if form is not None else None
        self._header_required = self._named == FORM_DSH_JSONL

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
            head = peek(stream, 4)
            if head.startswith(ZSTD_MAGIC):
                self.result.compressed = True
                yield from self._scan(zstd_segments(stream, self.result.notes))
            elif self._named == FORM_JSON_ARRAY or (
                    self._named is None and not self._header_required
                    and peek(stream, 64).lstrip(b" \t\r\n").startswith(b"[")):
                self.result.form = FORM_JSON_ARRAY
                yield from self._read_array(stream)
            else:
                yield from self._scan(plain_segments(stream))
        finally:
            if stream is not self._stdin:
                stream.close()

    def _open(self) -> BinaryIO:
        if self.source == "-":
            return self._stdin if self._stdin is not None else sys.stdin.buffer
        try:  # a regular file only: a FIFO or a device would never end (spec: hardening)
            return open_input(self.source)
        except InputError as exc:
            raise fail("IO_ERROR", "SES-FILE-004", f"{exc.message} ({exc.code})") from None

    def _read_array(self, stream: BinaryIO) -> Iterator[Batch]:
        for events in read_array(stream):
            self.result.events += len(events)
            yield None, 0, events
        if self.result.events == 0:
            self.result.empty = "the JSON array holds no event"

    def _scan(self, segments: Iterator[Segment]) -> Iterator[Batch]:
        """The lines of every segment, as batches of events.

        The common case is a run of ``_RUN`` lines that the fast parser reads as plain events
        with the expected seqs, before any damage (:meth:`_runs`). A run that fails, the rest of
        a segment after damage, and a segment with a line the guard of :mod:`.jsonparse` flags
        take :meth:`_lines`, line by line, and :meth:`_line` is the committed-region scan in
        full.
        """
        scan = Scan()
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
                               False, UNREAD)
        finally:
            result.events += scan.expected
            result.committed_events = scan.committed_events
            if scan.committed_bytes is not None:
                result.committed_bytes = scan.committed_bytes
        if scan.issue is not None or scan.fragment:
            result.torn = TornTail(first_line=scan.issue_line,
                                   lines=scan.dropped + int(scan.fragment), reason=scan.issue,
                                   fragment=scan.fragment, committed_bytes=result.committed_bytes)
        if result.form != FORM_DSH_JSONL and result.events == 0:
            result.empty = (
                "its only line has no line feed at its end, so it is read as a write that a "
                "crash cut (end the line with a line feed if it is meant as an event)"
                if scan.fragment else "the input is empty")

    def _runs(self, scan: Scan, segment: Segment, start: int, before: int,
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
                commit_runs(scan, segment, start, expected > first, self.result.compressed)
                first = expected
                stop = min(start + (len(values) or _RUN), total)
                yield from self._lines(scan, segment, start, stop, before, values)
                start = stop
                expected = first = scan.expected
                if scan.issue is not None:
                    break
        finally:
            commit_runs(scan, segment, start, expected > first, self.result.compressed)
        return start

    def _lines(self, scan: Scan, segment: Segment, start: int, stop: int,
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
            value: Any = UNREAD
            if index < known:  # read by the fast parser on a line it may read (see _runs)
                value = parsed[index - start]
            elif (number != 1 and scan.issue is None and index not in risky
                    and not jsonparse.too_deep(raw, deep) and fast is not None):
                try:
                    value = fast(raw)
                except Exception:  # the exact parser says why, or reads it after all
                    value = UNREAD
            if (value is not UNREAD and scan.issue is None and type(value) is dict
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

    def _line(self, scan: Scan, raw: bytes, number: int, terminated: bool, end: int,
              framed: bool, value: Any) -> list[Any]:
        """One line of the committed-region scan; line 1 may be a DSH header."""
        if number == 1 and self._first_line(raw, terminated) is not None:
            scan.committed_bytes = end
            return []
        return scan.line(raw, number, terminated, end, framed, value,
                         tolerate=self.tolerate, compressed=self.result.compressed)

    def _first_line(self, raw: bytes, terminated: bool) -> dict[str, Any] | None:
        """Recognise a DSH header on line 1; returns it, or None for a bare JSONL log.

        A session file needs its header line whole at every level (SES-FILE-015); below the
        load level its members are set aside, not judged. Without a header the input is an
        event list, whose complete lines are all committed (SES-FILE-016): the committed-region
        tolerance is switched off for the lines that follow."""
        header = None
        if self._named != FORM_BARE_JSONL:
            header = header_candidate(
                raw, compressed=self.result.compressed or self._header_required,
                terminated=terminated)
        if header is None:
            self.tolerate = False
            return None
        self.result.form = FORM_DSH_JSONL
        judge_header(header, raw, terminated=terminated, members=self.tolerate)
        if self.tolerate:
            self.result.header = header
        return header


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


__all__ = ["FORM_BARE_JSONL", "FORM_DSH_JSONL", "FORM_JSON_ARRAY", "ZSTD_MAGIC", "Batch",
           "DeferredRun", "Located", "LogReader", "ReadResult", "TornTail", "open_bytes"]
