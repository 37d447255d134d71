"""Issue 15, class 4: every input read through one bounded, regular-file-only opener; zstd
bounded across frames; linear-time Markdown patterns (spec chapter ``hardening``, "Inputs")."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from builders import session_header
from hardening import samples
from hypothesis import given, settings
from hypothesis import strategies as st

from dshkit.adapters.claude_imports import blank_code_spans, code_spans
from dshkit.adapters.markdown import Heading, Reader
from dshkit.reference import inputs, limits
from dshkit.reference.json import inputs as json_input
from dshkit.reference.query import SessionSearchEngine
from dshkit.reference.query.errors import PERSISTENCE_FAILED, SessionQueryError
from dshkit.reference.query.source import file_revision
from dshkit.reference.session.levels import Level
from dshkit.reference.session.reader import open_bytes
from dshkit.reference.session.validation import validate_path

DEV_ZERO = Path("/dev/zero")


def finishes(action: Callable[[], Any], seconds: float = 10.0) -> tuple[bool, Any]:
    """Run ``action`` in a daemon thread: (finished in time, its result or exception)."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(action())
        except BaseException as exc:  # handed to the test
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    return (not thread.is_alive()), (box[0] if box else None)


def release(fifo: Path) -> None:
    """Unblock a reader stuck opening ``fifo`` (an open for writing completes its open)."""
    with contextlib.suppress(OSError):  # nobody is reading any more
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.fixture()
def fifo(tmp_path: Path) -> Any:
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    yield path
    release(path)


# -- the opener ---------------------------------------------------------------------------------


def test_a_fifo_is_refused_without_blocking(fifo: Path) -> None:
    done, result = finishes(lambda: inputs.read_input(fifo), 5.0)
    assert done, "opening a FIFO blocked"
    assert isinstance(result, inputs.InputError) and result.code == inputs.NOT_REGULAR
    assert "FIFO" in result.message and result.details["path"] == str(fifo)


@pytest.mark.skipif(not DEV_ZERO.exists(), reason="no /dev/zero")
def test_a_device_is_refused_before_any_read(tmp_path: Path) -> None:
    link = tmp_path / "zero.json"
    link.symlink_to(DEV_ZERO)
    for path in (DEV_ZERO, link):
        with pytest.raises(inputs.InputError) as info:
            inputs.read_input(path)
        assert info.value.code == inputs.NOT_REGULAR and "character device" in info.value.message


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(inputs.InputError) as info:
        inputs.read_input(tmp_path)
    assert info.value.code == inputs.NOT_REGULAR


def test_a_missing_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(inputs.InputError) as info:
        inputs.read_input(tmp_path / "nope")
    assert info.value.code == inputs.UNREADABLE


def test_a_file_over_the_limit_is_refused_from_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 1001)
    with limits.override(max_input_bytes=1000):
        with pytest.raises(inputs.InputError) as info:
            inputs.read_input(big)
        assert info.value.code == inputs.TOO_LARGE
        assert info.value.details["limit"] == 1000 and info.value.details["size"] == 1001
        big.write_bytes(b" " * 1000)
        assert inputs.read_input(big) == b" " * 1000
    assert limits.current().max_input_bytes == limits.MAX_INPUT_BYTES


class _Endless:
    """A stream that never ends; counts what was read from it."""

    def __init__(self) -> None:
        self.given = 0

    def read(self, size: int = -1) -> bytes:
        assert size > 0, "an unbounded read"
        self.given += size
        return b"x" * size


def test_a_stream_is_read_up_to_the_limit_only() -> None:
    stream = _Endless()
    with pytest.raises(inputs.InputError) as info:
        inputs.read_stream(stream, limit=5000)  # type: ignore[arg-type]
    assert info.value.code == inputs.TOO_LARGE and stream.given == 5001


def test_a_link_out_of_the_directory_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    secret = tmp_path / "secret.md"
    secret.write_text("a secret\n")
    (home / "MEMORY.md").write_text("kept\n")
    (home / "USER.md").symlink_to(secret)
    with pytest.raises(inputs.InputError) as info:
        inputs.read_in_directory(home, ["MEMORY.md", "USER.md"])
    assert info.value.code == inputs.OUTSIDE_ROOT and "USER.md" in info.value.message
    inner = home / "notes.md"
    inner.write_text("inside\n")
    (home / "USER.md").unlink()
    (home / "USER.md").symlink_to("notes.md")  # a link that stays inside is read
    assert inputs.read_in_directory(home, ["MEMORY.md", "USER.md", "gone.md"]) == {
        "MEMORY.md": b"kept\n", "USER.md": b"inside\n", "gone.md": None}


@pytest.mark.skipif(not DEV_ZERO.exists(), reason="no /dev/zero")
def test_a_link_to_dev_zero_in_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "USER.md").symlink_to(DEV_ZERO)
    with pytest.raises(inputs.InputError) as info:
        inputs.read_in_directory(tmp_path, ["USER.md"])
    assert info.value.code == inputs.OUTSIDE_ROOT


# -- JSON documents (memory import, seed) -------------------------------------------------------


def test_read_json_refuses_a_fifo_and_a_large_file(fifo: Path, tmp_path: Path) -> None:
    done, result = finishes(lambda: json_input.read_json(str(fifo)), 5.0)
    assert done, "read_json blocked on a FIFO"
    assert isinstance(result, json_input.JsonInputError)
    assert result.code == json_input.UNREADABLE and inputs.NOT_REGULAR in result.message
    doc = tmp_path / "import.json"
    doc.write_text(json.dumps({"entries": ["x" * 100]}))
    with limits.override(max_input_bytes=50), pytest.raises(json_input.JsonInputError) as info:
        json_input.read_json(str(doc))
    assert info.value.code == json_input.UNREADABLE and inputs.TOO_LARGE in info.value.message
    assert json_input.read_json(str(doc)) == {"entries": ["x" * 100]}


# -- zstd: the whole log is bounded, not only each frame ----------------------------------------


def many_frames(frames: int, text: int) -> bytes:
    """A zstd log of a header frame and ``frames`` frames of one user message of ``text``
    bytes each (every frame far below the frame limit)."""
    body = [samples.zstd_frame(samples.line(samples.user(seq, "a" * text)))
            for seq in range(frames)]
    return samples.zstd_frame(samples.header_line()) + b"".join(body)


def _code(data: bytes) -> str:
    report = validate_path("-", Level.LOAD, stdin=open_bytes(data))
    return report.errors[0].code if report.errors else "accepted"


def test_many_small_frames_are_bounded_in_total() -> None:
    data = many_frames(64, 64 * 1024)  # 4 MiB of content in 64 frames of 64 KiB
    assert len(data) < 64 * 1024
    with limits.override(max_decompressed_bytes=1 << 20):
        assert _code(data) == limits.CONTENT_TOO_LARGE
        assert _code(many_frames(8, 64 * 1024)) == "accepted"  # 512 KiB: within the bound
    assert _code(data) == "accepted"  # the default bound is 1 GiB


def test_the_total_bound_stops_before_the_rest_is_decompressed() -> None:
    data = many_frames(4, 1000) + samples.rle_bomb(64 << 20)
    with limits.override(max_decompressed_bytes=1 << 20, max_frame_bytes=128 << 20):
        report = validate_path("-", Level.LOAD, stdin=open_bytes(data))
    assert report.errors[0].code == limits.CONTENT_TOO_LARGE
    assert report.errors[0].detail["size"] <= (1 << 20) + (8 << 20)


# -- query index: hashing a file never blocks or reads without end ------------------------------


def _write_log(path: Path) -> None:
    path.write_bytes(samples.line(session_header("ok")) + samples.line(samples.user(0)))


def test_file_revision_refuses_a_fifo(fifo: Path) -> None:
    done, result = finishes(lambda: file_revision(fifo), 5.0)
    assert done, "file_revision blocked on a FIFO"
    assert isinstance(result, SessionQueryError) and result.code == PERSISTENCE_FAILED
    assert inputs.NOT_REGULAR in result.message


@pytest.mark.skipif(not DEV_ZERO.exists(), reason="no /dev/zero")
def test_query_index_of_a_directory_with_a_fifo_and_dev_zero(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    _write_log(logs / "ok.jsonl")
    os.mkfifo(logs / "pipe.jsonl")
    (logs / "zero.jsonl").symlink_to(DEV_ZERO)

    def index() -> Any:
        with SessionSearchEngine.open(tmp_path / "index.db") as engine:
            return engine.index_paths([logs])

    try:
        done, report = finishes(index, 20.0)
    finally:
        release(logs / "pipe.jsonl")
    assert done, "query index blocked or read without end"
    assert not isinstance(report, BaseException), report
    failed = {Path(f.path).name: f.error.code for f in report.failed if f.error is not None}
    assert failed == {"pipe.jsonl": PERSISTENCE_FAILED, "zero.jsonl": PERSISTENCE_FAILED}
    assert [Path(f.path).name for f in report.files if f.status == "indexed"] == ["ok.jsonl"]


# -- linear-time Markdown patterns --------------------------------------------------------------

_OLD_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="`a \n@", max_size=60))
def test_code_spans_are_the_spans_of_the_earlier_pattern(text: str) -> None:
    assert code_spans(text) == [m.span() for m in _OLD_CODE_SPAN.finditer(text)]
    blanked = _OLD_CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    assert blank_code_spans(text) == blanked


def _line_events(action: Callable[[], Any]) -> int:
    """How many Python lines ``action`` executes (a measure of work, not of time)."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


def _backticks(n: int) -> str:
    # runs of 1, 2, 3, ... backticks: no two runs alike, so no run closes: the worst case of
    # the earlier pattern (each run scanned the rest of the text for its closer)
    return " ".join("`" * (1 + i % 50) + "x" for i in range(n))


def test_code_spans_work_grows_linearly() -> None:
    small = _line_events(lambda: code_spans(_backticks(2000)))
    large = _line_events(lambda: code_spans(_backticks(4000)))
    assert large <= 2.2 * small, (small, large)


def test_no_markdown_pattern_has_a_lazy_group_before_a_trailing_class() -> None:
    from dshkit.adapters import claude_imports, markdown

    patterns = [v.pattern for m in (markdown, claude_imports) for v in vars(m).values()
                if isinstance(v, re.Pattern)]
    assert patterns
    for pattern in patterns:
        # a lazy quantifier followed by more pattern is what backtracked quadratically
        assert not re.search(r"[*+]\?\)?.+", pattern), pattern


def test_heading_with_trailing_blanks_reads_as_before() -> None:
    events = Reader(strict=False, markers=False, front_matter=False).read(
        "#   Title  \t\n##\n# \t \n### a  b \n")
    headings = [(e.level, e.text) for e in events if isinstance(e, Heading)]
    assert headings == [(1, "Title"), (2, ""), (1, ""), (3, "a  b")]


# -- the adapters' files ------------------------------------------------------------------------


def test_a_hermes_home_never_follows_a_link_out(tmp_path: Path) -> None:
    from dshkit.adapters.files import read_hermes_home

    home = tmp_path / "hermes"
    home.mkdir()
    (home / "MEMORY.md").write_text("a note\n§\nanother\n", encoding="utf-8")
    assert read_hermes_home(home) == {"MEMORY.md": "a note\n§\nanother\n", "USER.md": None}
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    (home / "USER.md").symlink_to(secret)
    with pytest.raises(inputs.InputError) as info:
        read_hermes_home(home)
    assert info.value.code == inputs.OUTSIDE_ROOT
    (home / "USER.md").unlink()
    (home / "USER.md").write_bytes(b"caf\xe9\n")
    with pytest.raises(inputs.InputError) as info:
        read_hermes_home(home)
    assert info.value.code == inputs.UNREADABLE and "not UTF-8" in info.value.message


def test_read_text_is_bounded(tmp_path: Path, fifo: Path) -> None:
    from dshkit.adapters.files import read_text

    big = tmp_path / "mem0.json"
    big.write_text("[" + "0," * 600 + "0]")
    with limits.override(max_input_bytes=1000), pytest.raises(inputs.InputError) as info:
        read_text(str(big))
    assert info.value.code == inputs.TOO_LARGE
    assert read_text(str(big)).startswith("[0,")
    done, result = finishes(lambda: read_text(str(fifo)), 5.0)
    assert done and isinstance(result, inputs.InputError) and result.code == inputs.NOT_REGULAR


def _claude(root: Path) -> list[tuple[str, str]]:
    from dshkit.adapters import REGISTRY
    from dshkit.adapters.files import import_loader

    options: dict[str, Any] = {"expand": True, "root": root.as_posix(),
                               "path": (root / "CLAUDE.md").as_posix(),
                               "loader": import_loader(root.as_posix())}
    text = (root / "CLAUDE.md").read_text(encoding="utf-8")
    result = REGISTRY.adapt("claude-md", text, options)
    return [(loss.kind, loss.message) for loss in result.losses]


def test_claude_md_imports_through_the_bounded_loader(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    outside = tmp_path / "secret.md"
    outside.write_text("- secret\n")
    (root / "linked.md").symlink_to(outside)
    os.mkfifo(root / "pipe.md")
    (root / "inside.md").write_text("- inside note\n")
    (root / "CLAUDE.md").write_text("- see @linked.md\n- and @pipe.md\n- and @inside.md\n")
    try:
        done, losses = finishes(lambda: _claude(root), 10.0)
    finally:
        release(root / "pipe.md")
    assert done, "an import of a FIFO blocked"
    assert not isinstance(losses, BaseException), losses
    # both are loader failures (ADP-CLI-005): the link out of the root and the FIFO
    assert [kind for kind, _ in losses] == ["import-unreadable", "import-unreadable"], losses
    assert inputs.OUTSIDE_ROOT in losses[0][1] and inputs.NOT_REGULAR in losses[1][1]
