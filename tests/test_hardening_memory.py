"""Reading a log holds the surface and one block of lines, never the log (issue 9, resource
limits): the peak memory of a child process that validates a log of chunk events (which never
reach the surface) does not grow with the size of the log."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hardening import samples

import dshkit

_CHILD = """
import resource, sys
from dshkit.reference.session.validation import validate_path
from dshkit.reference.session.levels import Level
report = validate_path(sys.argv[1], Level(sys.argv[2]))
assert report.valid, report.to_json()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def _chunks(path: Path, events: int, compressed: bool) -> None:
    body = [{"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}},
            {"type": "step/start", "seq": 1, "time": 0, "data": {"turn": 1, "step": 1}}]
    body += [{"type": "assistant/chunk", "seq": seq, "time": seq,
              "data": {"turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0,
                                                        "text": f"token {seq} " + "x" * 120}}}
             for seq in range(2, events)]
    if compressed:
        frames = [samples.zstd_frame(samples.header_line())]
        for start in range(0, len(body), 5000):  # one frame per append batch
            frames.append(samples.zstd_frame(b"".join(samples.line(e)
                                                      for e in body[start:start + 5000])))
        path.write_bytes(b"".join(frames))
    else:
        path.write_bytes(samples.log(body))


def _peak_kib(path: Path, level: str) -> int:
    root = Path(dshkit.__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(path), level], env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize("compressed", [False, True], ids=["jsonl", "zstd"])
def test_peak_memory_does_not_grow_with_the_log(tmp_path: Path, compressed: bool) -> None:
    small, large = tmp_path / "small", tmp_path / "large"
    _chunks(small, 5_000, compressed)
    _chunks(large, 100_000, compressed)  # about 16 MB of logical text
    assert large.stat().st_size > 20 * small.stat().st_size or compressed
    growth = _peak_kib(large, "load") - _peak_kib(small, "load")
    assert growth < 12 * 1024, f"peak memory grew by {growth} KiB for a log 20 times larger"
