"""A hostile JSON-lines harness, for the kit's own tests of its harness client (issue 15, class 6).

It speaks just enough of the protocol to pass the handshake and answer ``run`` requests with an
empty result; it imports nothing of dshkit, so it starts fast. Usage:
``python hostile_harness.py MODE [FILE]``, where MODE is

- ``endless-line``: the answer to a run is one stdout line that never ends;
- ``stderr-flood``: every run writes 4 MiB to stderr, then answers;
- ``handshake-flood``: 4 MiB to stderr instead of the handshake reply, then exit 3;
- ``orphan``: every process started leaves a background child (its pid appended to FILE) and
  exits in the middle of the case whose id is ``crash``;
- ``debug-stdout``: a debug line on stdout before every answer;
- ``killed-mid-write``: half an answer on stdout, then the harness kills itself (SIGKILL).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

FLOOD = 4 * 1024 * 1024


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def flood_stderr() -> None:
    chunk = b"e" * 1023 + b"\n"
    for _ in range(FLOOD // len(chunk)):
        sys.stderr.buffer.write(chunk)
    sys.stderr.buffer.flush()


def answer(mode: str, seq: int, case: dict[str, object]) -> None:
    if mode == "endless-line":
        block = b"x" * 65536
        while True:
            sys.stdout.buffer.write(block)
    if mode == "stderr-flood":
        flood_stderr()
    if mode == "orphan" and case.get("id") == "crash":
        os._exit(3)
    if mode == "debug-stdout":
        sys.stdout.write(f"debug: running case {seq}\n")
    if mode == "killed-mid-write":
        sys.stdout.write('{"seq": ' + str(seq) + ', "resu')
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    send({"seq": seq, "result": {"mode": mode}})


def main(argv: list[str]) -> int:
    mode = argv[1]
    if mode == "orphan":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        with open(argv[2], "a", encoding="ascii") as pids:
            pids.write(f"{child.pid}\n")
    sys.stdin.readline()  # the start request
    if mode == "handshake-flood":
        flood_stderr()
        return 3
    send({"version": 1, "implementation": {"name": f"hostile-{mode}", "version": "0.0.1",
                                           "language": "python", "capabilities": []}})
    for raw in sys.stdin:
        request = json.loads(raw)
        if request.get("cmd") == "stop":
            return 0
        if request.get("cmd") == "run":
            answer(mode, int(request["seq"]), dict(request["case"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
