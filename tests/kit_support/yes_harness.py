"""A harness that answers every case with ``{"valid": true}``, whatever it asks.

It speaks the protocol by hand (no kit module), declares every capability the kit names in
its handshake request, or a fixed list, and never reads an expectation. Used to check that the
kit's reports survive a run in which every case fails, with any string a vector holds.
"""

from __future__ import annotations

import json
import sys

CAPABILITIES = [
    "session-log.core", "session-log.invariants", "session-log.repair", "session-log.load",
    "session-log.jsonl", "session-log.zstd", "memory", "compaction", "goal",
    "session-reference", "session-query",
]


def main() -> int:
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "start":
            answer = {"version": 1, "implementation": {
                "name": "yes-harness", "version": "1.0.0", "language": "python",
                "capabilities": CAPABILITIES}}
        elif request.get("cmd") == "run":
            answer = {"seq": request["seq"], "result": {"valid": True}}
        else:
            return 0
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
