"""The must-show: ``dshkit validate``, ``fold`` and ``repair`` on real DSH session files.

Files are written with the reference writer in DSH's on-disk format (header line, packed
chunk rows, independent zstd frames), then damaged the way a crash damages them: a torn last
line, a torn last zstd frame, a turn left open.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard

from dshkit import cli
from dshkit.reference.problems import ProblemError
from dshkit.reference.session.folding import load_path
from dshkit.reference.session.header import header_line
from dshkit.reference.session.writer import append_events, create_log

REPO = Path(__file__).resolve().parents[1]
Event = dict[str, Any]
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _event(kind: str, seq: int, time: int, data: Any, **extra: Any) -> Event:
    event: Event = {"type": kind, "seq": seq, "time": time, "data": data}
    event.update(extra)
    return event


def _text(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def _delta(seq: int, time: int, text: str, step: int = 1, turn: int = 1) -> Event:
    return _event("assistant/chunk", seq, time, {"turn": turn, "step": step, "chunk": {
        "type": "text-delta", "index": 0, "text": text}})


def turn_one() -> list[Event]:
    """A complete loop turn: a streamed tool call, its result, then a streamed answer."""
    args = ['{"cmd":', '"ls"', "}"]
    events: list[Event] = [
        _event("turn/start", 0, 1_700_000_000_000, {"turn": 1}),
        _event("user/message", 1, 1_700_000_000_001, {
            "id": "u1", "role": "user", "content": [_text("list files")],
            "source": {"kind": "user"}}, surfaceOp="append"),
        _event("step/start", 2, 1_700_000_000_002, {"turn": 1, "step": 1}),
        _event("request/header", 3, 1_700_000_000_002, {
            "header": {"config": {"provider": "mock", "model": "m"}}, "reason": "initial"}),
    ]
    for k, part in enumerate(args):
        events.append(_event("assistant/chunk", 4 + k, 1_700_000_000_010 + k, {
            "turn": 1, "step": 1, "chunk": {"type": "tool-call-delta", "index": 0, "id": "c1",
                                            "name": "bash", "argumentsDelta": part}}))
    events += [
        _event("assistant/message", 7, 1_700_000_000_020, {
            "turn": 1, "step": 1, "message": {
                "id": "a1", "role": "assistant",
                "content": [{"type": "tool-call", "id": "c1", "name": "bash",
                             "arguments": "".join(args)}],
                "source": {"kind": "model", "provider": "mock", "model": "m"}}},
            surfaceOp="append", sourceEventSeqs=[4, 5, 6]),
        _event("tool/call", 8, 1_700_000_000_021, {"turn": 1, "step": 1, "callId": "c1",
                                                   "name": "bash", "arguments": "".join(args)}),
        _event("tool/result", 9, 1_700_000_000_030, {"turn": 1, "step": 1, "message": {
            "id": "t1", "role": "user",
            "content": [{"type": "tool-result", "toolCallId": "c1", "content": [_text("a.txt")],
                         "isError": False}],
            "source": {"kind": "tool", "callId": "c1"}}}, surfaceOp="append",
            sourceEventSeqs=[8]),
        _event("step/end", 10, 1_700_000_000_031, {"turn": 1, "step": 1}),
        _event("step/start", 11, 1_700_000_000_032, {"turn": 1, "step": 2}),
    ]
    words = ["One ", "file", ": ", "a.txt"]
    # The clock steps back once inside the run (a negative gap in the packed row).
    times = [1_700_000_000_040, 1_700_000_000_041, 1_700_000_000_039, 1_700_000_000_045]
    events += [_delta(12 + k, t, w, step=2) for k, (w, t) in enumerate(zip(words, times,
                                                                          strict=True))]
    events += [
        _event("assistant/message", 16, 1_700_000_000_050, {
            "turn": 1, "step": 2, "message": {
                "id": "a2", "role": "assistant", "content": [_text("".join(words))],
                "source": {"kind": "model", "provider": "mock", "model": "m"}}},
            surfaceOp="append", sourceEventSeqs=[12, 13, 14, 15]),
        _event("step/end", 17, 1_700_000_000_051, {"turn": 1, "step": 2}),
        _event("turn/end", 18, 1_700_000_000_052, {"turn": 1, "reason": {"kind": "completed"}}),
    ]
    return events


def turn_two_open() -> list[Event]:
    """Turn 2 as a crash leaves it: the model asked for a tool that never started."""
    return [
        _event("turn/start", 19, 1_700_000_001_000, {"turn": 2}),
        _event("user/message", 20, 1_700_000_001_001, {
            "id": "u2", "role": "user", "content": [_text("now delete it")],
            "source": {"kind": "user"}}, surfaceOp="append"),
        _event("step/start", 21, 1_700_000_001_002, {"turn": 2, "step": 1}),
        _delta(22, 1_700_000_001_003, "Deleting", turn=2),
        _delta(23, 1_700_000_001_004, " a.txt", turn=2),
        _delta(24, 1_700_000_001_005, " now.", turn=2),
        _event("assistant/message", 25, 1_700_000_001_010, {
            "turn": 2, "step": 1, "message": {
                "id": "a3", "role": "assistant",
                "content": [_text("Deleting a.txt now."),
                            {"type": "tool-call", "id": "c2", "name": "bash",
                             "arguments": '{"cmd":"rm a.txt"}'}],
                "source": {"kind": "model", "provider": "mock", "model": "m"}}},
            surfaceOp="append", sourceEventSeqs=[22, 23, 24]),
    ]


HEADER = header_line(session_id="s-1", created_at=1_700_000_000_000, cwd="/w")
NODES_ONE = [1, 7, 9, 16]
CLOSER_SEQS = [26, 27, 28]  # tool/result (not started), step/end, turn/end


def decompress_frames(raw: bytes) -> tuple[list[bytes], bytes]:
    """The decompressed content of each complete zstd frame, and the bytes left over."""
    frames: list[bytes] = []
    while raw:
        obj = zstandard.ZstdDecompressor().decompressobj()
        content = obj.decompress(raw)
        if not obj.eof:
            break
        frames.append(content)
        raw = obj.unused_data
    return frames, raw


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out


def json_lines(out: str) -> list[dict[str, Any]]:
    """The printed reports (a refused one unwrapped from its refusal envelope)."""
    printed = [json.loads(line) for line in out.splitlines() if line.strip()]
    for item in printed:
        if item.get("ok") is False:
            assert item["error"]["code"] == item["report"]["errors"][0]["code"]
    return [item["report"] if item.get("ok") is False else item for item in printed]


@pytest.fixture
def zstd_log(tmp_path: Path) -> Path:
    path = tmp_path / "--w--" / "s-1" / "session.jsonl.zstd"
    create_log(path, HEADER, turn_one(), compression="zstd", pack_chunks=True)
    return path


def test_written_file_is_dsh_format(zstd_log: Path) -> None:
    raw = zstd_log.read_bytes()
    assert raw.startswith(ZSTD_MAGIC)
    frames, rest = decompress_frames(raw)
    assert rest == b"" and len(frames) == 2  # the header frame, then the first batch
    text = b"".join(frames).decode()
    assert text.endswith("\n")
    lines = text.splitlines()
    assert json.loads(lines[0]) == HEADER
    tags = [json.loads(line)["type"] for line in lines[1:]]
    assert "tool-call-chunks" in tags and "text-chunks" in tags  # packed chunk rows
    assert len(lines) - 1 < len(turn_one())
    # the first frame holds exactly the header line (SES-FILE-007)
    assert frames[0] == (json.dumps(HEADER, separators=(",", ":")) + "\n").encode()


def test_validate_zstd_packed_log(capsys: pytest.CaptureFixture[str], zstd_log: Path) -> None:
    code, out = run_cli(capsys, "validate", str(zstd_log))
    assert code == 0
    assert out.strip() == f"{zstd_log}: valid at level load ({len(turn_one())} events)"
    for level in ("append", "seed", "invariants", "load"):
        code, out = run_cli(capsys, "validate", "--json", "--level", level, str(zstd_log))
        report = json_lines(out)[0]
        assert code == 0 and report["valid"] is True and report["errors"] == []
        assert report["events"] == len(turn_one()) and report["level"] == level


def test_fold_zstd_packed_log(capsys: pytest.CaptureFixture[str], zstd_log: Path) -> None:
    code, out = run_cli(capsys, "fold", "--json", str(zstd_log))
    report = json_lines(out)[0]
    assert code == 0
    assert report["nodes"] == NODES_ONE and report["shadowed"] == []
    assert [m["id"] for m in report["messages"]] == ["u1", "a1", "t1", "a2"]
    assert report["messages"][3]["content"] == [_text("One file: a.txt")]
    assert report["closers"] == []
    code, out = run_cli(capsys, "fold", str(zstd_log))
    assert code == 0
    assert f"nodes: {NODES_ONE}" in out and "- assistant a2: One file: a.txt" in out


def test_through_a_real_subprocess(zstd_log: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    done = subprocess.run([sys.executable, "-m", "dshkit", "validate", "--json", str(zstd_log)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["valid"] is True and report["events"] == len(turn_one())
    done = subprocess.run([sys.executable, "-m", "dshkit", "fold", "--json", str(zstd_log)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["nodes"] == NODES_ONE


def test_torn_plain_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER, turn_one() + turn_two_open(), compression="none")
    with open(path, "ab") as fh:  # a crash in the middle of the next record
        fh.write(b'{"type":"tool/call","seq":26,"time":1700000001011,"data":{"tu')
    code, out = run_cli(capsys, "validate", str(path))
    assert code == 0
    assert "torn tail of 1 line(s) dropped" in out
    code, out = run_cli(capsys, "validate", "--json", "--level", "invariants", str(path))
    assert code == 0 and json_lines(out)[0]["valid"] is True
    code, out = run_cli(capsys, "fold", "--json", str(path))
    report = json_lines(out)[0]
    assert code == 0
    assert report["nodes"] == [*NODES_ONE, 20, 25, 26]  # plus the synthetic result
    assert report["closers"] == CLOSER_SEQS
    assert report["messages"][-1]["id"] == "interrupted-tool-result-c2-26"


def test_torn_zstd_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl.zstd"
    create_log(path, HEADER, turn_one(), compression="zstd")
    size = path.stat().st_size
    append_events(path, turn_two_open(), compressed=True)
    whole = path.read_bytes()
    path.write_bytes(whole[: size + (len(whole) - size) // 2])  # half of the last frame
    code, out = run_cli(capsys, "validate", "--json", str(path))
    report = json_lines(out)[0]
    assert code == 0 and report["valid"] is True
    assert report["events"] == len(turn_one())  # the torn frame decodes to nothing
    code, out = run_cli(capsys, "fold", "--json", str(path))
    assert code == 0 and json_lines(out)[0]["nodes"] == NODES_ONE
    path.write_bytes(whole[:-4])  # only the last frame's checksum is missing
    code, out = run_cli(capsys, "fold", "--json", str(path))
    report = json_lines(out)[0]
    assert code == 0
    assert report["nodes"] == [*NODES_ONE, 20, 25, 26]  # its complete lines were recovered
    assert report["closers"] == CLOSER_SEQS


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_repair_write_closes_the_turn(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                      compression: str) -> None:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER, turn_one() + turn_two_open(),
               compression="zstd" if compression == "zstd" else "none")
    stored = path.read_bytes()
    code, out = run_cli(capsys, "repair", "--json", str(path))
    assert code == 0 and json_lines(out)[0]["written"] is False
    assert path.read_bytes() == stored  # without --write nothing changes
    code, out = run_cli(capsys, "repair", "--write", "--json", str(path))
    report = json_lines(out)[0]
    assert code == 0 and report["written"] is True
    assert [c["seq"] for c in report["closers"]] == CLOSER_SEQS
    assert path.read_bytes().startswith(stored)  # committed bytes are never rewritten
    code, out = run_cli(capsys, "validate", "--level", "load", str(path))
    assert code == 0 and "torn" not in out
    loaded = load_path(path)  # the closers are on disk: a load adds none
    assert loaded.valid and loaded.closers == 0
    assert [e["type"] for e in loaded.events[-3:]] == ["tool/result", "step/end", "turn/end"]
    assert loaded.events[-1]["data"]["reason"] == {"kind": "interrupted"}
    assert loaded.events[-3]["data"]["error"]["code"] == "TOOL_NOT_STARTED"
    code, out = run_cli(capsys, "repair", "--json", str(path))
    assert code == 0 and json_lines(out)[0]["closers"] == []


def test_repair_write_cuts_a_torn_tail(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER, turn_one() + turn_two_open(), compression="none")
    with open(path, "ab") as fh:
        fh.write(b"{torn")
    code, _ = run_cli(capsys, "repair", "--write", str(path))
    assert code == 0
    text = path.read_text(encoding="utf-8")
    assert "{torn" not in text and text.endswith("\n")
    code, out = run_cli(capsys, "validate", "--json", "--level", "seed", str(path))
    assert code == 0 and json_lines(out)[0]["events"] == 29


def test_repair_write_torn_zstd_frame(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    """The torn final frame is cut off and its recovered events re-appended, then closers."""
    path = tmp_path / "session.jsonl.zstd"
    create_log(path, HEADER, turn_one(), compression="zstd")
    append_events(path, turn_two_open(), compressed=True)
    path.write_bytes(path.read_bytes()[:-4])  # the last frame lost its checksum
    code, _ = run_cli(capsys, "repair", "--write", str(path))
    assert code == 0
    frames, rest = decompress_frames(path.read_bytes())
    assert rest == b"" and len(frames) == 3
    loaded = load_path(path)
    assert loaded.valid and loaded.closers == 0
    assert [e["seq"] for e in loaded.events] == list(range(29))


@pytest.mark.parametrize("why", ["newer-version", "unknown-type"])
def test_refused_log_is_left_alone(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                   why: str) -> None:
    """SES-VER-005: a refusal (version, unknown required type) never writes."""
    path = tmp_path / "session.jsonl"
    header = dict(HEADER, version=99) if why == "newer-version" else HEADER
    events = turn_one()[:3]
    if why == "unknown-type":
        events.append(_event("future/event", 3, 1, {"x": 1}))
    create_log(path, header, events, compression="none")
    with open(path, "ab") as fh:
        fh.write(b'{"type":"step/st')
    before = path.read_bytes()
    code, out = run_cli(capsys, "repair", "--write", "--json", str(path))
    report = json_lines(out)[0]
    assert code == 1 and report["written"] is False
    assert report["errors"][0]["code"] == ("FORMAT_VERSION_NEWER" if why == "newer-version"
                                           else "UNKNOWN_EVENT_TYPE")
    assert path.read_bytes() == before


def test_atomic_create_refuses_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    create_log(path, HEADER, turn_one(), compression="none")
    before = path.read_bytes()
    with pytest.raises(ProblemError) as caught:
        create_log(path, header_line(session_id="other", created_at=1), [], compression="zstd")
    assert caught.value.problem.code == "FILE_EXISTS"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.jsonl"]  # no temp left
