"""The streaming reader's seams: bytes-level blocks, batches, the collector pause, and what the
fold keeps in memory."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from builders import event, session_header

from dshkit.reference.problems import ProblemError
from dshkit.reference.session import segments as reader_module
from dshkit.reference.session.folding import fold_path
from dshkit.reference.session.levels import Checks, Level
from dshkit.reference.session.pipeline import SessionChecker, paused_gc, run_all_batches
from dshkit.reference.session.reader import LogReader
from dshkit.reference.session.validation import validate_path

HEADER = session_header("s", created_at=1)


def _log() -> list[dict[str, Any]]:
    events = [event("turn/start", 0, {"turn": 1}),
              event("user/message", 1, {"id": "u", "role": "user", "content": [
                  {"type": "text", "text": "x" * 300}], "source": {"kind": "user"}},
                     surfaceOp="append"),
              event("step/start", 2, {"turn": 1, "step": 1})]
    for seq in range(3, 40):
        events.append(event("assistant/chunk", seq, {"turn": 1, "step": 1, "chunk": {
            "type": "text-delta", "index": 0, "text": "tok-0 " * (seq % 5)}}))
    events.append(event("plan/mode", 40, {"active": True, "n": -1}))
    return events


def _lines(events: list[Any]) -> list[bytes]:
    return [json.dumps(e, separators=(",", ":")).encode() for e in events]


def _read(path: Path, tolerate: bool) -> tuple[str, Any]:
    reader = LogReader(path, tolerate_torn_tail=tolerate)
    try:
        pairs = list(reader.pairs())
    except ProblemError as exc:
        return "error", exc.problem
    return "ok", (pairs, reader.result)


VARIANTS: dict[str, Callable[[list[bytes]], bytes]] = {
    "bare": lambda lines: b"\n".join(lines) + b"\n",
    "header": lambda lines: json.dumps(HEADER).encode() + b"\n" + b"\n".join(lines) + b"\n",
    "crlf": lambda lines: b"\r\n".join(lines) + b"\r\n",
    "fragment": lambda lines: b"\n".join(lines) + b"\n" + lines[-1][:17],
    "no-final-newline": lambda lines: b"\n".join(lines),
    "empty-line": lambda lines: b"\n".join([*lines[:5], b"", *lines[5:]]) + b"\n",
    "gap": lambda lines: b"\n".join([*lines[:9], *lines[10:]]) + b"\n",
    "garbage": lambda lines: b"\n".join([*lines[:20], b"{not json", *lines[20:]]) + b"\n",
    "negative": lambda lines: b"\n".join([*lines[:3], lines[3].replace(b'"time":3', b'"time":-0'),
                                          *lines[4:]]) + b"\n",
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("tolerate", [True, False])
def test_block_size_never_changes_what_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               variant: str, tolerate: bool) -> None:
    """Lines that straddle blocks, lines longer than a block: the same events, lines, errors
    and committed offsets whatever the block size."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(VARIANTS[variant](_lines(_log())))
    reference = _read(path, tolerate)
    for size in (1, 7, 64, 333, 4096):
        monkeypatch.setattr(reader_module, "_BLOCK", size)
        assert _read(path, tolerate) == reference, size


def test_zstd_frames_read_like_the_plain_file(tmp_path: Path) -> None:
    lines = _lines(_log())
    header = json.dumps(HEADER).encode() + b"\n"
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    body = [b"".join(line + b"\n" for line in lines[i:i + 6]) for i in range(0, len(lines), 6)]
    packed = tmp_path / "log.jsonl.zstd"
    packed.write_bytes(compressor.compress(header) + b"".join(map(compressor.compress, body)))
    plain = tmp_path / "log.jsonl"
    plain.write_bytes(header + b"".join(body))
    got, want = _read(packed, True), _read(plain, True)
    assert got[0] == want[0] == "ok"
    assert got[1][0] == want[1][0]


def test_batches_and_pairs_agree(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(VARIANTS["header"](_lines(_log())))
    flat = []
    for first, step, events in LogReader(path, tolerate_torn_tail=True).batches():
        assert first is not None
        flat += [(first + step * i, e) for i, e in enumerate(events)]
    assert flat == list(LogReader(path, tolerate_torn_tail=True).pairs())
    assert [line for line, _ in flat] == list(range(2, 2 + len(_log())))


def test_the_collector_is_paused_only_during_a_run(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(VARIANTS["bare"](_lines(_log())))
    seen: list[bool] = []
    checker = SessionChecker(Checks.for_level(Level.LOAD))

    def watch() -> Iterator[Any]:
        for batch in LogReader(path, tolerate_torn_tail=True).batches():
            seen.append(gc.isenabled())
            yield batch

    assert gc.isenabled()
    run_all_batches(checker, watch())
    assert seen and not any(seen)
    assert gc.isenabled()
    validate_path(tmp_path / "missing.jsonl", Level.LOAD)  # a run that ends in an error
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc(checker):
            assert not gc.isenabled()
        assert not gc.isenabled()  # a collector the caller turned off stays off
    finally:
        gc.enable()


def test_an_observer_runs_with_the_collector_on(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(VARIANTS["bare"](_lines(_log())))
    states: list[bool] = []
    checker = SessionChecker(Checks.for_level(Level.LOAD))
    checker.observer = lambda event, seq: states.append(gc.isenabled())
    run_all_batches(checker, LogReader(path, tolerate_torn_tail=True).batches())
    assert len(states) == len(_log()) and all(states)


def test_the_fold_keeps_no_shadowed_event(tmp_path: Path) -> None:
    events = _log()[:3]
    events.append(event("user/message", 3, {"id": "c", "role": "user", "content": [],
                                             "source": {"kind": "plugin", "plugin": "compact"}},
                         surfaceOp={"op": "replace", "start": 1, "end": 1},
                         sourceEventSeqs=[1]))
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\n".join(_lines(events)) + b"\n")
    checker = SessionChecker(Checks.for_level(Level.LOAD))
    run_all_batches(checker, LogReader(path, tolerate_torn_tail=True).batches())
    assert checker.fold.nodes == [3]
    assert set(checker.fold._events) == {3}
    assert checker.fold.shadowed == [1]
    assert fold_path(path).shadowed == (1,)


def test_the_reader_holds_one_block_of_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    lines = _lines(_log())
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setattr(reader_module, "_BLOCK", 256)
    longest = max(map(len, lines)) + 1
    with open(path, "rb") as stream:
        for segment in reader_module.plain_segments(stream):
            assert segment.size <= 256 + longest
            assert sum(len(line) + 1 for line in segment.lines) == segment.size
