"""The committed region of a log and its torn tail (SES-FILE-008, SES-FILE-009).

With ``tolerate`` (the load view) a damaged tail is handled as DSH's loader does: the first
unparsable line or seq gap ends the preserved prefix; if any later line decodes to a
``turn/end`` the log is corrupt, otherwise the rest is a torn, uncommitted tail that a loader
drops. Without it every line must be a good record. :class:`Scan` follows the region line by
line and records where it ends (bytes and events), for the reader and for repair.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from ..json import parse as jsonparse
from ..problems import Problem, ProblemError, fail
from .chunk_rows import decode_record
from .segments import Segment

_SEQ = itemgetter("seq")
#: A line the fast parser has not read: :meth:`Scan.line` reads it with the exact one.
UNREAD: Any = object()


@dataclass
class TornTail:
    """What a tolerant read dropped after the preserved prefix."""

    first_line: int
    lines: int
    reason: Problem | None
    fragment: bool
    committed_bytes: int | None




class Scan:
    """The committed-region scan (SES-FILE-009) between lines. (A plain class: making a
    dataclass costs every start of the command line.)"""

    __slots__ = ("committed_bytes", "committed_events", "dropped", "expected", "fragment",
                 "issue", "issue_line")

    def __init__(self) -> None:
        self.issue: Problem | None = None
        self.issue_line = 0
        self.dropped = 0
        self.fragment = False
        self.expected = 0  # events kept so far
        self.committed_bytes: int | None = None
        self.committed_events = 0

    def line(self, raw: bytes, number: int, terminated: bool, end: int, framed: bool,
             value: Any, *, tolerate: bool, compressed: bool) -> list[Any]:
        """One line after the header (SES-FILE-008, SES-FILE-009); returns the events to
        yield. ``value`` is the line already parsed, or :data:`UNREAD`; ``end`` the offset the
        region ends at if it ends after this line; ``framed``: the line lies in a complete
        zstd frame."""
        scan = self
        # SES-FILE-008: a final fragment without newline was never committed.
        if not terminated:
            scan.fragment = True
            if scan.issue is None:
                scan.issue_line = number
            return []
        try:
            if value is UNREAD:
                value = jsonparse.exact_loads(raw)
            decoded = decode_record(value)
        except ProblemError as exc:
            if framed:
                # A complete frame was written whole: damage inside it is no crash artefact.
                raise fail("ZSTD_FRAME_MID_RECORD", "SES-FILE-007",
                           f"corrupt zstd session log: a complete frame contains a damaged "
                           f"record at line {number}: {exc.problem.message}",
                           line=number) from None
            if not tolerate:
                raise ProblemError(exc.problem.located(line=number)) from None
            if scan.issue is None:
                scan.issue, scan.issue_line = exc.problem.located(line=number), number
                scan.dropped = 1
            else:
                scan.dropped += 1
            return []
        if scan.issue is not None:
            scan.dropped += 1
            if has_turn_end(decoded):
                raise committed(scan.issue)
            return []
        expected = scan.expected
        gap = None
        if tolerate and not contiguous(decoded, expected):
            gap = next(e for i, e in enumerate(decoded)
                       if not isinstance(e, dict) or e.get("seq") != expected + i)
        if gap is not None:
            got = gap.get("seq") if isinstance(gap, dict) else None
            scan.issue = fail("FILE_COMMITTED_SEQ_GAP", "SES-FILE-009",
                              f"seq gap at line {number} (expected "
                              f"{expected + decoded.index(gap)}, got {got!r})",
                              line=number).problem
            scan.issue_line, scan.dropped = number, 1
            if has_turn_end(decoded):
                raise committed(scan.issue)
            return []
        scan.expected += len(decoded)
        # Lines recovered from a torn final zstd frame are read but not committed.
        if framed or not compressed:
            scan.committed_bytes = end
            scan.committed_events = scan.expected
        return decoded


def committed(issue: Problem) -> ProblemError:
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


def has_turn_end(events: list[Any]) -> bool:
    return any(isinstance(e, dict) and e.get("type") == "turn/end" for e in events)


def commit_runs(scan: Scan, segment: Segment, start: int, read: bool,
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


def contiguous(events: list[Any], expected: int) -> bool:
    """Whether every event is an object and their seqs are ``expected``, ``expected + 1``..."""
    try:
        return list(map(_SEQ, events)) == list(range(expected, expected + len(events)))
    except (TypeError, KeyError):
        return False
