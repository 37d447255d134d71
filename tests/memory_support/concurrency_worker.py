"""One writer process of the concurrency test: random writes on a shared store.

Run as ``python -c "from memory_support.concurrency_worker import main; main(argv)"`` with
``DB INDEX COUNT OUT READY GO``. The worker opens the store, touches READY, waits for GO, then
performs COUNT random writes: adds, replaces of its own entries and removes of its own entries,
each addressed by a token no other worker uses. It records what succeeded and what failed in
OUT (JSON); any exception that is not a protocol error is recorded as unexpected.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from dshkit.reference.memory import MemoryProtocolError, open_provider

BUCKETS = [("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
           ("agent", "workspace")]
WORDS = ["alpha", "茶", "😀 emoji", "ΑΣ", "line\nbreak", "tab\tstop"]
GENEROUS = {"user": {"userGlobal": 10**7, "workspace": 10**7},
            "agent": {"userGlobal": 10**7, "workspace": 10**7}}


def main(argv: list[str]) -> None:
    db, index, count, out, ready, go = argv[0], int(argv[1]), int(argv[2]), argv[3], argv[4], \
        argv[5]
    rng = random.Random(1000 + index)
    record: dict[str, Any] = {"adds": [], "replaces": [], "removes": [], "errors": [],
                              "unexpected": []}
    write = {"agent": {"session": {"id": f"worker-{index}",
                                   "header": {"cwd": "/ws/shared", "agentPreset": "bench"}}}}
    provider = None
    try:
        provider = open_provider(db, budgets=GENEROUS, write_policy="auto")
        Path(ready).touch()
        deadline = time.monotonic() + 60
        while not Path(go).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        live: dict[str, tuple[str, str]] = {}
        for step in range(count):
            roll = rng.random()
            try:
                if not live or roll < 0.5:
                    track, scope = rng.choice(BUCKETS)
                    token = f"#w{index}n{step};"
                    result = provider.add({"track": track, "scope": scope,
                                           "text": f"{token} {rng.choice(WORDS)}"}, write)
                    live[token] = (track, scope)
                    record["adds"].append(result["entry"]["id"])
                elif roll < 0.8:
                    token = rng.choice(sorted(live))
                    track, scope = live[token]
                    result = provider.replace(
                        {"track": track, "scope": scope, "match": token,
                         "text": f"{token} v{step} {rng.choice(WORDS)}"}, write)
                    record["replaces"].append(result["entry"]["id"])
                else:
                    token = rng.choice(sorted(live))
                    track, scope = live.pop(token)
                    result = provider.remove({"track": track, "scope": scope, "match": token},
                                             write)
                    record["removes"].append(result["entry"]["id"])
            except MemoryProtocolError as exc:
                record["errors"].append(exc.code)
            except Exception:
                record["unexpected"].append(traceback.format_exc())
    except Exception:
        record["unexpected"].append(traceback.format_exc())
    finally:
        if provider is not None:
            provider.close()
        Path(out).write_text(json.dumps(record), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
