"""The resource limits wired into the session reader and the in-memory APIs (SES-FILE-014,
SES-JSON-004, SES-JSON-001..003): line length, zstd frame size, nesting depth, lossless values
given as Python objects."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard
from builders import jsonl_line, session_header

from dshkit.reference import limits
from dshkit.reference.json import codec as jsoncodec
from dshkit.reference.json import parse as jsonparse
from dshkit.reference.problems import ProblemError
from dshkit.reference.session import segments as reader_module
from dshkit.reference.session.folding import fold_events, load_events
from dshkit.reference.session.levels import Level
from dshkit.reference.session.single_pass import validate_and_fold
from dshkit.reference.session.validation import validate_events, validate_path

HEADER = session_header("s", created_at=1)


def _event(seq: int, payload: Any = None) -> dict[str, Any]:
    return {"type": "x/note", "seq": seq, "time": seq, "ignorable": True,
            "data": {"v": payload if payload is not None else "n" * (seq % 7)}}


def _log(*events: Any) -> bytes:
    return jsonl_line(HEADER) + b"".join(jsonl_line(e) for e in events)


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _codes(path: Path, level: Level) -> list[str]:
    return [p.code for p in validate_path(path, level).errors]


# -- line length --------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [64, 1000, 1 << 16])
@pytest.mark.parametrize("where", ["middle", "tail"])
def test_a_line_past_the_limit_is_refused_at_every_level(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         block: int, where: str) -> None:
    monkeypatch.setattr(reader_module, "_BLOCK", block)
    long_event = _event(1, "y" * 3000)
    events = [_event(0), long_event, _event(2)] if where == "middle" else [_event(0)]
    data = _log(*events)
    if where == "tail":
        data += jsonl_line(long_event)[:-1]  # unterminated: still refused, not a torn tail
    path = tmp_path / "log.jsonl"
    path.write_bytes(data)
    with limits.override(max_line_bytes=2000):
        for level in Level:
            report = validate_path(path, level)
            assert [p.code for p in report.errors] == ["FILE_LINE_TOO_LONG"], level
            assert report.errors[0].line == 3
            assert report.failed_level is Level.APPEND
            assert report.errors[0].requirement == "SES-FILE-014"
        assert validate_and_fold(path).fold.errors[0].code == "FILE_LINE_TOO_LONG"
    assert _codes(path, Level.SEED) == []  # the default limit is far above


def test_a_line_at_the_limit_is_read(tmp_path: Path) -> None:
    line = jsonl_line(_event(0, "z" * 100))
    path = tmp_path / "log.jsonl"
    path.write_bytes(line)
    with limits.override(max_line_bytes=len(line) - 1):  # without its line feed
        assert validate_path(path, Level.SEED).valid
    with limits.override(max_line_bytes=len(line) - 2):
        assert _codes(path, Level.SEED) == ["FILE_LINE_TOO_LONG"]


def test_a_json_array_document_obeys_the_line_limit(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(json.dumps([_event(0), _event(1, "q" * 500)]).encode())
    assert validate_path(path, Level.SEED).valid
    with limits.override(max_line_bytes=300):
        assert _codes(path, Level.SEED) == ["FILE_LINE_TOO_LONG"]


# -- zstd frames --------------------------------------------------------------------------------


def _zstd(*frames: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(compressor.compress(frame) for frame in frames)


def test_a_frame_past_the_limit_is_refused(tmp_path: Path) -> None:
    body = b"".join(jsonl_line(_event(seq, "w" * 200)) for seq in range(40))
    path = tmp_path / "log.jsonl.zstd"
    path.write_bytes(_zstd(jsonl_line(HEADER), body))
    assert validate_path(path, Level.LOAD).valid
    with limits.override(max_frame_bytes=len(body) - 1):
        report = validate_path(path, Level.LOAD)
    assert [p.code for p in report.errors] == ["ZSTD_FRAME_TOO_LARGE"]
    assert report.torn is None
    with limits.override(max_frame_bytes=len(body)):
        assert validate_path(path, Level.LOAD).valid
    with limits.override(max_line_bytes=100):
        assert _codes(path, Level.LOAD) == ["FILE_LINE_TOO_LONG"]


# -- nesting ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["orjson", "json"])
@pytest.mark.parametrize("limit", [8, 40, limits.MAX_JSON_DEPTH])
def test_the_depth_limit_is_the_same_for_both_parsers(tmp_path: Path, backend: str,
                                                      limit: int) -> None:
    """An event line nests its payload two levels deep (event, data); around the limit, long
    lines and short ones, alone and among plain events (the fast runs and the line-by-line
    path), both parsers and every level agree."""
    for total in (limit - 1, limit, limit + 1):  # the event object, data and the payload
        payload = _nested(total - 2)
        for padding in ("", "p" * (3 * limit)):
            event = _event(1, payload)
            event["data"]["pad"] = padding
            path = tmp_path / "log.jsonl"
            path.write_bytes(_log(_event(0), event, *(_event(s) for s in range(2, 80))))
            with jsonparse.using(backend), limits.override(max_json_depth=limit):
                codes = _codes(path, Level.SEED)
                load = validate_and_fold(path).validation
            deep = total > limit
            assert codes == (["JSON_TOO_DEEP"] if deep else []), (total, padding)
            assert not load.errors
            assert (load.torn is not None) is deep
            if load.torn is not None:
                assert load.torn.reason is not None
                assert load.torn.reason.code == "JSON_TOO_DEEP"


def test_deep_nesting_never_raises_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(_log(_event(0, _nested(5))) + b'{"a":' + b"[" * 200_000 + b"\n")
    for level in Level:
        report = validate_path(path, level)
        assert report.errors or report.torn is not None


def test_a_text_within_the_limit_reads_on_a_deep_stack() -> None:
    """The verdict does not depend on how deep the caller's stack already is."""
    text = json.dumps(_nested(limits.MAX_JSON_DEPTH))

    def at_depth(left: int) -> Any:
        return jsoncodec.loads(text) if left == 0 else at_depth(left - 1)

    spare = sys.getrecursionlimit() - limits.MAX_JSON_DEPTH // 2
    assert at_depth(spare - 50) == _nested(limits.MAX_JSON_DEPTH)
    with pytest.raises(ProblemError) as info:
        jsoncodec.loads(json.dumps(_nested(limits.MAX_JSON_DEPTH + 1)))
    assert info.value.problem.code == "JSON_TOO_DEEP"


# -- values given in memory ---------------------------------------------------------------------


@pytest.mark.parametrize(("value", "code"), [
    (-0.0, "JSON_NEGATIVE_ZERO"), (math.nan, "JSON_NON_FINITE"), (math.inf, "JSON_NON_FINITE"),
    ((1, 2), "JSON_NOT_LOSSLESS"), ({1: "a"}, "JSON_NOT_LOSSLESS"), ({1, 2}, "JSON_NOT_LOSSLESS"),
    (b"x", "JSON_NOT_LOSSLESS"), (_nested(limits.MAX_JSON_DEPTH), "JSON_TOO_DEEP"),
])
def test_in_memory_values_must_be_lossless(value: Any, code: str) -> None:
    events = [_event(seq) for seq in range(70)]
    events[66] = _event(66, value)
    for level in Level:
        report = validate_events(events, level)
        assert [(p.code, p.seq) for p in report.errors] == [(code, 66)], level
        assert report.events == 66
    assert fold_events(events).errors[0].code == code
    assert load_events(events).errors[0].code == code


def test_in_memory_values_that_are_lossless_pass() -> None:
    class Text(str):
        pass

    events = [_event(0, {Text("k"): [Text("v"), 1.5, None, True, -3, 0.0]}),
              _event(1, _nested(limits.MAX_JSON_DEPTH - 2))]
    assert validate_events(events, Level.LOAD).valid
    assert fold_events(events).valid


def test_a_cycle_in_memory_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    report = validate_events([_event(0, loop)], Level.APPEND)
    assert [p.code for p in report.errors] == ["JSON_TOO_DEEP"]


def test_check_lossless_measures_depth_like_the_text() -> None:
    for depth in (1, 2, 30):
        value = _nested(depth)
        assert limits.json_depth(json.dumps(value)) == depth
        with limits.override(max_json_depth=depth):
            assert jsoncodec.check_lossless(value) is None
        if depth > 1:
            with limits.override(max_json_depth=depth - 1):
                problem = jsoncodec.check_lossless(value)
            assert problem is not None and problem.problem.code == "JSON_TOO_DEEP"
