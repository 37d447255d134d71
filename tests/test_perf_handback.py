"""The reader's hand-back of chunk-row and seq checks to the checking loops
(``LogReader.batches(handback=True)``, ``DeferredRun``): the same verdicts, problems, torn tails
and folds as when the reader checks every run itself, wherever in a run the damage is."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from builders import event, jsonl_line, session_header

from dshkit.reference.json import parse as jsonparse
from dshkit.reference.session import reader as reader_module
from dshkit.reference.session.chunk_rows import pack_events
from dshkit.reference.session.folding import FoldReport, fold_checks, fold_report
from dshkit.reference.session.levels import Checks, Level
from dshkit.reference.session.pipeline import (
    SessionChecker,
    run_all_batches,
    run_all_outcome,
)
from dshkit.reference.session.reader import DeferredRun, LogReader
from dshkit.reference.session.runlog import run_log, session_batches
from dshkit.reference.session.single_pass import validate_and_fold
from dshkit.reference.session.validation import validate_path

HEADER = session_header("s", created_at=1)
Event = dict[str, Any]


def _turn(seq: int, turn: int, chunks: int) -> list[Event]:
    events = [event("turn/start", seq, {"turn": turn}),
              event("user/message", seq + 1, {"id": f"u{seq}", "role": "user", "content": [
                  {"type": "text", "text": "hi"}], "source": {"kind": "user"}},
                     surfaceOp="append"),
              event("step/start", seq + 2, {"turn": turn, "step": 1})]
    for n in range(chunks):
        events.append(event("assistant/chunk", seq + 3 + n, {"turn": turn, "step": 1, "chunk": {
            "type": "text-delta", "index": 0, "text": f"t{n} "}}))
    at = seq + 3 + chunks
    events += [event("step/end", at, {"turn": turn, "step": 1}),
               event("turn/end", at + 1, {"turn": turn, "reason": {"kind": "completed"}})]
    return events


def _log() -> list[Event]:
    events: list[Event] = []
    for turn in range(1, 5):
        events += _turn(len(events), turn, 9)
    return events


def _text(events: list[Any], *, header: bool = True) -> bytes:
    return (jsonl_line(HEADER) if header else b"") + b"".join(jsonl_line(e) for e in events)


def _renumbered(events: list[Event], drop: int) -> list[Event]:
    return [e for i, e in enumerate(events) if i != drop]


def _damaged() -> dict[str, bytes]:
    events = _log()
    n = len(events)
    logs = {"clean": _text(events), "bare": _text(events, header=False)}
    for at in (1, 4, 7, n // 2, n - 3, n - 1):
        logs[f"gap-{at}"] = _text(_renumbered(events, at))
        logs[f"dup-{at}"] = _text([*events[:at], events[at - 1], *events[at:]])
        logs[f"array-{at}"] = _text([*events[:at], [1, 2], *events[at:]])
        logs[f"garbage-{at}"] = (_text(events[:at]) + b"{not json\n"
                                 + b"".join(jsonl_line(e) for e in events[at:]))
        bad = json.loads(json.dumps(events[at]))
        bad["seq"] = float(bad["seq"])
        logs[f"float-seq-{at}"] = _text([*events[:at], bad, *events[at + 1:]])
        row = {"type": "text-chunks", "seq": events[at]["seq"], "time": 0, "data": {}}
        logs[f"malformed-row-{at}"] = _text([*events[:at], row, *events[at + 1:]])
        logs[f"fragment-{at}"] = _text(events[:at]) + jsonl_line(events[at])[:9]
    logs["packed"] = _text(list(pack_events(events)))
    logs["packed-gap"] = _text(list(pack_events(_renumbered(events, 9))))
    return logs


DAMAGED = _damaged()


def _validate(path: Path, level: Level, handback: bool) -> Any:
    reader = LogReader(path, tolerate_torn_tail=level is Level.LOAD)
    checker = SessionChecker(Checks.for_level(level))
    problems, failed = run_all_batches(
        checker, session_batches(reader, checker, None, handback=handback))
    return problems, failed, checker.count, reader.result


def _fold(path: Path, handback: bool) -> FoldReport:
    return fold_report(run_log(path, checks=fold_checks(True), closers="append",
                               handback=handback))


def _zstd(text: bytes) -> bytes:
    """The same text as a compressed log: the header frame, then frames of seven lines (a
    final fragment, if any, in a torn last frame)."""
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    head, _, body = text.partition(b"\n")
    lines = body.split(b"\n")
    tail = lines.pop()
    frames = [compressor.compress(head + b"\n")]
    frames += [compressor.compress(b"".join(line + b"\n" for line in lines[i:i + 7]))
               for i in range(0, len(lines), 7)]
    if tail:
        frames.append(compressor.compress(tail)[:-4])
    return b"".join(frames)


# a bare log (no header line) has no compressed form: a compressed log starts with its header
_COMBINATIONS = [(form, run, name) for form in ("plain", "zstd") for run in (3, 5, 64)
                 for name in sorted(DAMAGED) if not (form == "zstd" and name == "bare")]


@pytest.mark.parametrize(("form", "run", "name"), _COMBINATIONS)
def test_handback_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str,
                                  run: int, form: str) -> None:
    monkeypatch.setattr(reader_module, "_RUN", run)
    path = tmp_path / "log.jsonl"
    path.write_bytes(DAMAGED[name] if form == "plain" else _zstd(DAMAGED[name]))
    with jsonparse.using("json"):  # no fast parser: every line is read on its own, the reference
        line_by_line = {level: _validate(path, level, False) for level in Level}
        fold_line_by_line = _fold(path, False)
    for level in Level:
        assert _validate(path, level, True) == line_by_line[level], level
        assert _validate(path, level, False) == line_by_line[level], level
    assert _fold(path, True) == _fold(path, False) == fold_line_by_line
    both = validate_and_fold(path)
    assert both.validation == validate_path(path, Level.LOAD)
    assert both.fold == _fold(path, False)


def test_deferred_runs_go_only_to_a_consumer_that_asked(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(DAMAGED["clean"])
    plain = [type(events) for _, _, events in LogReader(path, tolerate_torn_tail=True).batches()]
    assert DeferredRun not in plain
    seen: list[type] = []

    def watch(batches: Any) -> Any:
        for batch in batches:
            seen.append(type(batch[2]))
            yield batch

    reader = LogReader(path, tolerate_torn_tail=True)
    checker = SessionChecker(Checks.for_level(Level.LOAD))
    outcome = run_all_outcome(checker, watch(session_batches(reader, checker, None,
                                                             handback=True)))
    assert DeferredRun in seen and not outcome.problems
    assert checker.count == len(_log())


@pytest.mark.parametrize("decline", [0, 5, 17])
def test_the_rest_of_a_run_comes_back_as_a_plain_batch(tmp_path: Path, decline: int) -> None:
    """A consumer that takes only part of a deferred run gets the rest again, checked."""
    path = tmp_path / "log.jsonl"
    path.write_bytes(DAMAGED["bare"])
    got: list[tuple[type, int]] = []
    batches = LogReader(path, tolerate_torn_tail=True).batches(handback=True)
    for first, _step, events in batches:
        got.append((type(events), first or 0))
        if isinstance(events, DeferredRun):
            events.taken = min(decline, len(events))
    assert got[0] == (list, 1)  # line 1, a possible header, is read on its own
    assert got[1] == (DeferredRun, 2)
    if decline:
        assert got[2] == (list, 2 + decline)  # the rest of the first run, checked
    else:
        assert got[2] == (list, 2)


def _consume(path: Path, take: Callable[[int], int]) -> int:
    count = 0
    for _first, _step, events in LogReader(path, tolerate_torn_tail=True).batches(
            handback=True):
        if isinstance(events, DeferredRun):
            events.taken = take(len(events))
            count += events.taken
        else:
            count += len(events)
    return count


def test_every_event_is_handed_on_once(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(DAMAGED["clean"])
    total = len(_log())
    assert _consume(path, lambda n: n) == total
    assert _consume(path, lambda n: 0) == total
    assert _consume(path, lambda n: n // 2) == total
