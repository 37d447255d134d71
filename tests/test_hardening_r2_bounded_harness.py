"""Issue 15, class 6 (and issue 14): the harness client does not trust its harness.

Each test starts ``tests/kit_support/hostile_harness.py`` in one mode (one attack) with small
limits given as parameters: bounded stdout lines, bounded stderr per case and per run, the
process group killed on every restart and at the end, no thread traceback, and a harness that
keeps breaking the protocol given up early with a hint.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dshkit.conformance.harness_client import (
    MESSAGE_TOO_LARGE,
    HarnessCaseError,
    SubprocessImplementation,
)
from dshkit.conformance.outcomes import KitError

HOSTILE = Path(__file__).parent / "kit_support" / "hostile_harness.py"
KiB = 1024


def hostile(mode: str, *extra: str, **options: Any) -> SubprocessImplementation:
    options.setdefault("timeout", 20.0)
    options.setdefault("handshake_timeout", 20.0)
    return SubprocessImplementation([sys.executable, str(HOSTILE), mode, *extra], **options)


def case(identifier: str = "c") -> dict[str, Any]:
    return {"id": identifier, "suite": "", "operation": "op", "input": {}, "params": {}}


def errored(impl: SubprocessImplementation, identifier: str = "c") -> str:
    with pytest.raises(HarnessCaseError) as info:
        impl.run_request(case(identifier))
    return info.value.detail


@pytest.fixture
def thread_errors() -> Iterator[list[str]]:
    """Exceptions that escaped any thread during the test."""
    seen: list[str] = []
    previous = threading.excepthook

    def hook(args: Any) -> None:
        seen.append(f"{args.exc_type.__name__}: {args.exc_value}")

    threading.excepthook = hook
    yield seen
    threading.excepthook = previous


def test_an_endless_stdout_line_is_refused_at_the_limit(thread_errors: list[str]) -> None:
    impl = hostile("endless-line", max_message_bytes=64 * KiB)
    try:
        detail = errored(impl)
    finally:
        impl.close()
    assert MESSAGE_TOO_LARGE in detail and str(64 * KiB) in detail
    assert thread_errors == []


def test_a_stderr_flood_keeps_only_the_last_bytes(thread_errors: list[str]) -> None:
    impl = hostile("stderr-flood", case_stderr_limit=16 * KiB, stderr_limit=32 * KiB)
    try:
        for number in range(3):
            assert impl.run_request(case(f"c{number}")) == {"mode": "stderr-flood"}
            kept = impl.take_stderr()
            assert len(kept) <= 16 * KiB + 100
            assert kept.startswith("[") and "earlier bytes of stderr dropped" in kept
        run = impl.stderr_text()
    finally:
        impl.close()
    assert len(run) <= 32 * KiB + 100 and "dropped" in run.splitlines()[0]
    assert impl._process is None and thread_errors == []


def test_a_stderr_flood_during_the_handshake_is_reported() -> None:
    with pytest.raises(KitError) as info:
        hostile("handshake-flood", case_stderr_limit=8 * KiB)
    assert info.value.code == "HARNESS_HANDSHAKE"
    assert "exited" in info.value.message and "eee" in info.value.message
    assert len(info.value.message) < 4 * KiB


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_dead(pids: list[int], seconds: float = 10.0) -> list[int]:
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        living = [pid for pid in pids if _alive(pid)]
        if not living:
            return []
        time.sleep(0.05)
    return living


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_background_children_die_with_each_restart_and_at_the_end(tmp_path: Path) -> None:
    pids_file = tmp_path / "pids"
    impl = hostile("orphan", str(pids_file))
    try:
        assert impl.run_request(case("first")) == {"mode": "orphan"}
        assert "exited (status 3)" in errored(impl, "crash")
        first = [int(p) for p in pids_file.read_text().split()]
        assert len(first) == 1
        assert _wait_dead(first) == [], "the child of a harness that exited survived it"
        assert impl.run_request(case("after")) == {"mode": "orphan"}
        assert impl.restarts == 1
    finally:
        impl.close()
    every = [int(p) for p in pids_file.read_text().split()]
    assert len(every) == 2
    assert _wait_dead(every) == [], "a harness's child survived the end of the run"


def test_a_harness_killed_mid_write_errors_its_case_without_a_traceback(
        thread_errors: list[str]) -> None:
    impl = hostile("killed-mid-write")
    try:
        detail = errored(impl)
    finally:
        impl.close()
    assert "exited" in detail or "not JSON" in detail
    time.sleep(0.1)
    assert thread_errors == []


def test_debug_lines_on_stdout_stop_the_run_early_with_a_hint() -> None:
    impl = hostile("debug-stdout", max_protocol_restarts=3)
    try:
        details = [errored(impl, f"c{number}") for number in range(10)]
    finally:
        impl.close()
    assert all("not JSON" in d for d in details[:3])
    assert "stderr" in details[2] and "in a row" in details[2]
    assert all(d.startswith("not run:") and "stderr" in d for d in details[3:])
    assert impl.restarts == 2  # started once, restarted for the second and third cases only
    assert impl.halted is not None


def test_a_good_answer_resets_the_protocol_error_count(tmp_path: Path) -> None:
    impl = hostile("orphan", str(tmp_path / "pids"), max_protocol_restarts=2)
    try:
        impl.protocol_errors = impl.consecutive_protocol_errors = 1
        assert impl.run_request(case()) == {"mode": "orphan"}
        assert impl.consecutive_protocol_errors == 0 and impl.halted is None
    finally:
        impl.close()


def test_limits_are_parameters_with_defaults() -> None:
    from dshkit.conformance import harness_client as client

    assert client.MAX_MESSAGE_BYTES >= 1 << 20
    assert client.STDERR_LIMIT == client.CASE_STDERR_LIMIT == 64 * KiB
    assert client.MAX_PROTOCOL_RESTARTS == 3
    assert os.path.exists(HOSTILE)


class _ClosedUnderUs:
    """A pipe closed by another thread in the middle of a read."""

    def __iter__(self) -> _ClosedUnderUs:
        return self

    def __next__(self) -> bytes:
        raise ValueError("readline of closed file")

    def readline(self, size: int = -1) -> bytes:
        raise ValueError("readline of closed file")

    def read1(self, size: int = -1) -> bytes:
        raise ValueError("read of closed file")

    read = read1

    def close(self) -> None:
        pass


def test_the_reader_threads_end_quietly_when_their_pipe_fails() -> None:
    import queue

    from dshkit.conformance import harness_client as client

    process = client._Process.__new__(client._Process)
    process.lines = queue.Queue()
    process.max_message = 1024
    process.lock = threading.Lock()
    process.stderr = client._Ring(1024)
    process._pump(_ClosedUnderUs())  # type: ignore[arg-type]
    assert process.lines.get_nowait() is client._EOF
    process._drain(_ClosedUnderUs())  # type: ignore[arg-type]
