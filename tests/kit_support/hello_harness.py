"""A harness that answers the handshake with the identity given as its JSON argument (default:
a valid one) and then skips every case. Used to check how the kit judges a handshake."""

from __future__ import annotations

import json
import sys

DEFAULT = {"name": "hello-harness", "version": "0.0.1", "language": "python",
           "capabilities": ["session-log.core"]}


def main() -> int:
    identity = json.loads(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "start":
            answer: dict[str, object] = {"version": 1, "implementation": identity}
        elif request.get("cmd") == "run":
            answer = {"seq": request["seq"], "skipped": True, "message": "not implemented"}
        else:
            return 0
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
