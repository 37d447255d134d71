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
_BOM = b"\xef\xbb\xbf"


def header_candidate(raw: bytes, *, compressed: bool) -> dict[str, Any] | None:
    """The DSH header on line 1, as a candidate not judged yet, or None for a bare JSONL log
    (a compressed log must start with a header)."""
    if raw.startswith(_BOM):
        raise fail("JSON_BOM", "SES-JSON-004",
                   "the file starts with a UTF-8 byte order mark; JSON text must not", line=1)
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


def judge_header(header: dict[str, Any], raw: bytes, *, terminated: bool) -> None:
    """Raise the first problem of a header at the load level (SES-FILE-001/002)."""
    if not terminated:
        raise fail("FILE_HEADER_MISSING", "SES-FILE-001",
                   "empty or header-less session log: the header line is not terminated "
                   "by a newline", line=1)
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
