"""The forms a session log comes in (spec chapter ``session/jsonl``): DSH ``session.jsonl``
(a header line, then records), a bare JSONL of events, a JSON array of events. Records may be
packed chunk rows (:mod:`.chunk_rows`). Here: telling the forms apart by the first line,
judging a DSH header, and reading a JSON array.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, BinaryIO

from .. import limits
from ..json import codec as jsoncodec
from ..problems import ProblemError, fail
from .chunk_rows import decode_record
from .header import check_header, is_header_candidate, refuse_foreign_version

FORM_DSH_JSONL = "dsh-jsonl"
FORM_BARE_JSONL = "jsonl"
FORM_JSON_ARRAY = "json-array"
#: The forms a caller may name (SES-FILE-015): ``dsh``, ``jsonl``, ``array``.
NAMED_FORMS = {"dsh": FORM_DSH_JSONL, "jsonl": FORM_BARE_JSONL, "array": FORM_JSON_ARRAY}
#: How a header that a crash cut begins (SES-FILE-015, step 5).
CUT_HEADER_PREFIX = b'{"type":"session"'
_BOM = b"\xef\xbb\xbf"


def header_candidate(raw: bytes, *, compressed: bool,
                     terminated: bool = True) -> dict[str, Any] | None:
    """The DSH header on line 1, as a candidate not judged yet, or None for a bare JSONL log.
    ``compressed`` says the file must start with a header (a zstd file, a file with DSH's own
    name, or the caller named the form); a first line that a crash cut is a header when it
    begins like one (SES-FILE-015) and is then refused (SES-FILE-001)."""
    if raw.startswith(_BOM):
        raise fail("JSON_BOM", "SES-JSON-004",
                   "the file starts with a UTF-8 byte order mark; JSON text must not", line=1)
    if not terminated and (compressed or raw.startswith(CUT_HEADER_PREFIX)):
        raise fail("FILE_HEADER_MISSING", "SES-FILE-001",
                   "empty or header-less session log: the header line is not terminated "
                   "by a newline (a crash cut it, or the file holds nothing else)", line=1)
    try:
        limits.check_json_depth(raw)
        value = json.loads(decode_utf8(raw, line=1))
    except (ValueError, RecursionError, ProblemError):
        if compressed:
            raise fail("FILE_HEADER_NOT_JSON", "SES-FILE-001",
                       "corrupt session log: header line is not valid JSON",
                       line=1) from None
        return None
    if not is_header_candidate(value):
        if compressed:
            raise fail("FILE_HEADER_NOT_SESSION", "SES-FILE-001",
                       'corrupt session log: first line is not a {"type":"session"} header',
                       line=1)
        return None
    header: dict[str, Any] = value
    return header


def judge_header(header: dict[str, Any], raw: bytes, *, terminated: bool,
                 members: bool = True) -> None:
    """Raise the first problem of a header: a header line must be whole at every level
    (SES-FILE-001, SES-FILE-015); its members are judged at the load level (``members``,
    SES-FILE-002)."""
    if not terminated:
        raise fail("FILE_HEADER_MISSING", "SES-FILE-001",
                   "empty or header-less session log: the header line is not terminated "
                   "by a newline", line=1)
    if not members:
        return
    for problem in (refuse_foreign_version(header), _lossless_header(raw),
                    check_header(header)):
        if problem is not None:
            raise ProblemError(problem.problem.located(line=1))


def read_array(stream: BinaryIO) -> Iterator[list[Any]]:
    """The events of a JSON array log, record by record (chunk rows expanded)."""
    text = decode_utf8(limits.read_bounded(stream), line=1)
    value = jsoncodec.loads(text)
    if not isinstance(value, list):
        raise fail("JSON_ARRAY_NOT_ARRAY", "SES-JSON-004", "a JSON log must be an array")
    for item in value:
        yield decode_record(item)


def nothing_to_judge(held: str) -> ProblemError:
    """SES-FILE-017: an input with no header line and no committed event."""
    return fail("LOG_EMPTY", "SES-FILE-017",
                f"not a session log: {held}; there is no header line and no committed event")


def _lossless_header(raw: bytes) -> ProblemError | None:
    """A header number written as -0 (or non-finite) is not a valid header field."""
    try:
        jsoncodec.loads(raw.decode("utf-8"))
    except ProblemError as exc:
        return fail("FILE_HEADER_INVALID", "SES-FILE-002",
                    f"session header is not lossless JSON: {exc.problem.message}")
    return None


def decode_utf8(raw: bytes, *, line: int) -> str:
    if raw.startswith(_BOM):
        raise fail("JSON_BOM", "SES-JSON-004",
                   "the line starts with a UTF-8 byte order mark; JSON text must not", line=line)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail("JSON_INVALID_UTF8", "SES-JSON-004",
                   f"line is not valid UTF-8 (byte {exc.start + 1})", line=line) from None
