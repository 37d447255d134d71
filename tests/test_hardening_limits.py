"""The resource limits of ``dshkit.reference.limits`` on their own (the readers call them)."""

from __future__ import annotations

import io

import pytest
import zstandard
from hardening import samples

from dshkit.reference import limits
from dshkit.reference.problems import ProblemError


def test_a_gigabyte_bomb_is_refused_after_a_bounded_amount() -> None:
    bomb = samples.rle_bomb(1 << 30)
    assert len(bomb) < 64 * 1024
    decoder = limits.BoundedFrameDecompressor(limit=4 << 20)
    with pytest.raises(ProblemError) as info:
        decoder.decompress(bomb)
    assert info.value.problem.code == "ZSTD_FRAME_TOO_LARGE"
    assert decoder.produced <= (4 << 20) + limits._MIN_PIECE * limits._MAX_EXPANSION


def test_frames_within_the_limit_decode_like_the_plain_object() -> None:
    frame = samples.zstd_frame(b"x" * 100_000)
    decoder = limits.BoundedFrameDecompressor(limit=100_000)
    out = b"".join(decoder.decompress(frame[i:i + 777]) for i in range(0, len(frame), 777))
    assert out == b"x" * 100_000 and decoder.eof and decoder.unused_data == b""
    decoder = limits.BoundedFrameDecompressor()
    assert decoder.decompress(frame + b"tail") == b"x" * 100_000
    assert decoder.eof and decoder.unused_data == b"tail"
    with pytest.raises(zstandard.ZstdError):
        limits.BoundedFrameDecompressor().decompress(b"\x28\xb5\x2f\xfd" + b"\xff" * 20)


def test_the_frame_limit_comes_from_the_configuration() -> None:
    with limits.override(max_frame_bytes=1000):
        decoder = limits.BoundedFrameDecompressor()
        with pytest.raises(ProblemError):
            decoder.decompress(samples.zstd_frame(b"y" * 1001))
    assert limits.current().max_frame_bytes == limits.MAX_FRAME_BYTES


def test_line_length() -> None:
    with limits.override(max_line_bytes=10):
        limits.check_line_length(10)
        limits.check_lines([b"a" * 10, b""])
        with pytest.raises(ProblemError) as info:
            limits.check_lines([b"ok", b"a" * 11], first_line=5)
        assert info.value.problem.code == "FILE_LINE_TOO_LONG"
        assert info.value.problem.line == 6
        assert limits.read_bounded(io.BytesIO(b"a" * 10)) == b"a" * 10
        with pytest.raises(ProblemError):
            limits.read_bounded(io.BytesIO(b"a" * 11))


@pytest.mark.parametrize(("text", "depth"), [
    ("1", 0), ("[]", 1), ('{"a":[{}]}', 3), ('["[[[[", "\\"[[["]', 1), ('[[1],[2,[3]]]', 3),
    ('"unterminated [[[', 0),
])
def test_json_depth(text: str, depth: int) -> None:
    assert limits.json_depth(text) == depth
    assert limits.json_depth(text.encode()) == depth


def test_depth_limit() -> None:
    limits.check_json_depth(samples.nested(limits.MAX_JSON_DEPTH))
    limits.check_json_depth('"' + "[" * 10_000 + '"')  # brackets inside a string
    with pytest.raises(ProblemError) as info:
        limits.check_json_depth(samples.nested(limits.MAX_JSON_DEPTH + 1), line=3)
    assert info.value.problem.code == "JSON_TOO_DEEP" and info.value.problem.line == 3


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        limits.Limits(max_line_bytes=0)
