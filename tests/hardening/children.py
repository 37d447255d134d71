"""Worker processes for the kill -9 and concurrency runs: ``python -m hardening.children ROLE
ARGS…`` (with ``tests`` and ``src`` on ``PYTHONPATH``).

Every role prints ``ready`` once imported, then loops over its operation forever (or for a
count), printing one acknowledgement line per operation that returned: what was committed,
so the parent knows what must survive the kill.
"""

from __future__ import annotations

import json
import random
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from dshkit.reference.memory import MemoryProtocolError, open_provider
from dshkit.reference.session.reader import LogReader
from dshkit.reference.session.writer import append_events, create_log

from . import samples

GENEROUS = {"user": {"userGlobal": 10**8, "workspace": 10**8},
            "agent": {"userGlobal": 10**8, "workspace": 10**8}}
BUCKETS = [("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
           ("agent", "workspace")]


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(str(p) for p in parts) + "\n")
    sys.stdout.flush()


# -- (a) appending to a session log ------------------------------------------------------------


def _state(path: Path) -> tuple[int, int, bool]:
    """(next seq, next turn number, whether a turn is open) of the log as a loader reads it."""
    seq = 0
    turn = 0
    open_turn = False
    for item in LogReader(path, tolerate_torn_tail=True):
        event = item.event
        seq = event["seq"] + 1
        if event["type"] == "turn/start":
            turn = event["data"]["turn"]
            open_turn = True
        elif event["type"] == "turn/end":
            open_turn = False
    return seq, turn + 1, open_turn


def append_log(path: str, compressed: str, seed: str) -> None:
    """Append turns to ``path`` in two batches each (so a kill can fall between them, leaving a
    turn open), with a long message now and then (so a write spans many pages)."""
    target = Path(path)
    zstd = compressed == "zstd"
    rnd = random.Random(int(seed))
    if not target.exists():
        create_log(target, samples.HEADER, [], compression="zstd" if zstd else "none")
    seq, turn, open_turn = _state(target)
    if open_turn:
        raise SystemExit("the log was handed over with an open turn: repair it first")
    say("ready", seq)
    while True:
        size = rnd.choice((5, 50, 5000, 200_000))
        first = [{"type": "turn/start", "seq": seq, "time": seq, "data": {"turn": turn}},
                 samples.user(seq + 1, "w" * size)]
        first[1]["data"]["id"] = f"u{seq + 1}"
        first.append({"type": "step/start", "seq": seq + 2, "time": seq,
                      "data": {"turn": turn, "step": 1}})
        append_events(target, first, compressed=zstd)
        say("ack", seq + 3)
        second = [{"type": "step/end", "seq": seq + 3, "time": seq,
                   "data": {"turn": turn, "step": 1}},
                  {"type": "turn/end", "seq": seq + 4, "time": seq,
                   "data": {"turn": turn, "reason": {"kind": "completed"}}}]
        append_events(target, second, compressed=zstd)
        seq += 5
        turn += 1
        say("ack", seq)


# -- (b) writing to the memory store -----------------------------------------------------------


def memory_writes(db: str, worker: str, seed: str, count: str) -> None:
    """Random adds, replaces, removes, consolidations and seeds of this worker's own entries
    (``count`` 0: forever). Acknowledges each write with its op and the ids it wrote."""
    rnd = random.Random(int(seed))
    write = {"agent": {"session": {"id": f"w{worker}", "header": {"cwd": "/ws/crash",
                                                                 "agentPreset": "h"}}}}
    provider = open_provider(db, budgets=GENEROUS, write_policy="auto")
    live: dict[str, tuple[str, str]] = {}
    for entry in provider.list_entries():
        token = entry["text"].split(" ", 1)[0]
        if token.startswith(f"#w{worker}n"):
            live[token] = (entry["track"], entry["scope"])
    say("ready")
    step = int(time.time() * 1000) % 10**9
    limit = int(count)
    done = 0
    while limit == 0 or done < limit:
        done += 1
        step += 1
        roll = rnd.random()
        try:
            if not live or roll < 0.4:
                track, scope = rnd.choice(BUCKETS)
                token = f"#w{worker}n{step};"
                result = provider.add({"track": track, "scope": scope,
                                       "text": f"{token} {'x' * rnd.choice((1, 300, 20000))}"},
                                      write)
                live[token] = (track, scope)
                say("ack", "add", result["entry"]["id"])
            elif roll < 0.6:
                token = rnd.choice(sorted(live))
                track, scope = live[token]
                result = provider.replace({"track": track, "scope": scope, "match": token,
                                           "text": f"{token} v{step}"}, write)
                say("ack", "replace", result["entry"]["id"], result["entry"]["version"])
            elif roll < 0.75:
                token = rnd.choice(sorted(live))
                track, scope = live.pop(token)
                result = provider.remove({"track": track, "scope": scope, "match": token}, write)
                say("ack", "remove", result["entry"]["id"])
            elif roll < 0.9:
                bucket = rnd.choice(BUCKETS)
                mine = [t for t, b in live.items() if b == bucket][:3]
                if len(mine) < 2:
                    continue
                token = f"#w{worker}n{step};"
                result = provider.consolidate({"track": bucket[0], "scope": bucket[1],
                                               "matches": mine, "text": f"{token} merged"},
                                              write)
                for old in mine:
                    live.pop(old)
                live[token] = bucket
                say("ack", "consolidate", result["entry"]["id"],
                    *[e["id"] for e in result["removed"]])
            else:
                items = []
                for k in range(rnd.randint(1, 4)):
                    track, scope = rnd.choice(BUCKETS)
                    token = f"#w{worker}n{step}s{k};"
                    items.append({"track": track, "scope": scope, "text": f"{token} seeded"})
                    live[token] = (track, scope)
                result = provider.seed(items, write)
                say("ack", "seed", *[e["id"] for e in result["entries"]])
        except MemoryProtocolError as exc:
            say("error", exc.code)
        except Exception:
            say("unexpected", json.dumps(traceback.format_exc()))
    provider.close()
    say("done")


# -- (c) building the query index --------------------------------------------------------------


def index_build(db: str, logs: str) -> None:
    from dshkit.reference.query import SessionSearchEngine

    say("ready")
    while True:
        with SessionSearchEngine.open(db) as engine:
            report = engine.index_paths([logs])
        say("ack", len(report.failed))


# -- (d) converting into an output file --------------------------------------------------------


def convert_loop(kind: str, first: str, second: str, output: str) -> None:
    """Run the CLI conversion of ``first`` and ``second`` into ``output`` alternately, in one
    process (so kills land in the write, not in the interpreter's start-up)."""
    import contextlib
    import io
    import os

    from dshkit.cli import main

    inputs = (first, second)
    say("ready")
    turn = 0
    while True:
        source = inputs[turn % 2]
        turn += 1
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            if kind == "adapt":
                code = main(["adapt", "convert", "--from", "mem0", "--to", "hermes-bullets",
                             source, "-o", output])
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(output)
                code = main(["compact", "apply", source, "--summary-file", first + ".summary",
                             "--trigger", "manual", "--time", "99", "--output", output])
        say("ack", turn % 2, code)


ROLES: dict[str, Callable[..., None]] = {"append-log": append_log, "memory-writes": memory_writes, "index-build": index_build,
         "convert-loop": convert_loop}



# -- concurrency roles -------------------------------------------------------------------------


def _wait_go(go: str) -> None:
    deadline = time.monotonic() + 120
    while not Path(go).exists() and time.monotonic() < deadline:
        time.sleep(0.005)


def memory_mixed(db: str, worker: str, seed: str, count: str, go: str) -> None:
    """A writer of the concurrency run: as ``memory-writes``, started by the GO file."""
    print("ready", flush=True)
    _wait_go(go)
    memory_writes(db, worker, seed, count)


def memory_import(db: str, worker: str, count: str, go: str) -> None:
    """Imports ``count`` export envelopes of three entries each, every text unique."""
    write = {"agent": {"session": {"id": f"imp{worker}", "header": {"cwd": "/ws/imp"}}}}
    provider = open_provider(db, budgets=GENEROUS, write_policy="auto")
    say("ready")
    _wait_go(go)
    for n in range(int(count)):
        entries: list[dict[str, object]] = [{"id": f"00000000-0000-4000-8000-{k:012d}", "track": "agent",
                    "scope": "workspace", "workspaceKey": "", "agentKey": "",
                    "text": f"#imp{worker}n{n}k{k}; imported", "source": "dshkit", "tags": [],
                    "version": 1, "createdAt": 0, "updatedAt": 0, "lastRecalled": None,
                    "recallCount": 0, "sessionId": None} for k in range(3)]
        envelope = {"plugin": "dshkit", "schema": "memory-export-v1",
                    "exportedAt": "2026-01-01T00:00:00.000Z", "budgets": provider.budgets(),
                    "entries": entries}
        try:
            result = provider.import_envelope(envelope, write)
            say("ack", "seed", *[e["id"] for e in result["entries"]])
        except MemoryProtocolError as exc:
            say("error", exc.code)
        except Exception:
            say("unexpected", json.dumps(traceback.format_exc()))
    provider.close()
    say("done")


def memory_read(db: str, worker: str, count: str, go: str) -> None:
    """Queries (with recall), snapshots of fresh sessions, exports, budgets, audit pages."""
    provider = open_provider(db, budgets=GENEROUS, write_policy="auto")
    say("ready")
    _wait_go(go)
    for n in range(int(count)):
        reader = {"agent": {"session": {"id": f"r{worker}-{n}", "header": {"cwd": "/ws/crash",
                                                                          "agentPreset": "h"}}}}
        try:
            kind = n % 5
            if kind == 0:
                provider.query({"text": "#w", "limit": 5}, {"reader": reader, "recall": True})
            elif kind == 1:
                provider.snapshot(reader)
            elif kind == 2:
                provider.export()
            elif kind == 3:
                provider.budgets()
            else:
                provider.audit_list(50)
            say("ack", "read", kind)
        except MemoryProtocolError as exc:
            say("error", exc.code)
        except Exception:
            say("unexpected", json.dumps(traceback.format_exc()))
    provider.close()
    say("done")


def index_worker(db: str, logs: str, rounds: str, go: str) -> None:
    """Indexes the corpus and searches it, ``rounds`` times."""
    from dshkit.reference.query import SessionSearchEngine
    from dshkit.reference.query.errors import SessionQueryError

    say("ready")
    _wait_go(go)
    for _ in range(int(rounds)):
        try:
            with SessionSearchEngine.open(db) as engine:
                report = engine.index_paths([logs])
                page = engine.search_sessions({"query": "alpha", "limit": 20})
            say("ack", "index", len(report.failed), len(page.items))
        except SessionQueryError as exc:
            say("error", exc.code)
        except Exception:
            say("unexpected", json.dumps(traceback.format_exc()))
    say("done")


def create_store(kind: str, directory: str, worker: str, rounds: str) -> None:
    """Round after round, opens a store (``memory``: and adds one entry) or an index (``index``)
    that does not exist yet, at the moment its ``go-ROUND`` file appears, as every other worker
    does; then leaves ``done-ROUND-WORKER``."""
    from dshkit.reference.query.errors import SessionQueryError
    from dshkit.reference.query.store import open_index

    base = Path(directory)
    write = {"agent": {"session": {"id": f"create{worker}", "header": {"cwd": "/ws/create"}}}}
    say("ready")
    for number in range(int(rounds)):
        go = base / f"go-{number}"
        while not go.exists():
            time.sleep(0.0005)
        try:
            if kind == "memory":
                provider = open_provider(base / str(number) / "memory.db", write_policy="auto")
                try:
                    provider.add({"track": "user", "scope": "user-global",
                                  "text": f"worker {worker} round {number}"}, write)
                finally:
                    provider.close()
            else:
                open_index(base / str(number) / "index.sqlite").close()
            say("ack", number)
        except (MemoryProtocolError, SessionQueryError) as exc:
            say("error", number, json.dumps(exc.to_json()))
        except Exception:
            say("unexpected", json.dumps(traceback.format_exc()))
        (base / f"done-{number}-{worker}").touch()
    say("done")


ROLES.update({"memory-mixed": memory_mixed, "memory-import": memory_import,
              "memory-read": memory_read, "index-worker": index_worker,
              "create-store": create_store})


def main(argv: list[str]) -> None:
    role, *args = argv
    ROLES[role](*args)


if __name__ == "__main__":
    main(sys.argv[1:])


__all__ = ["ROLES", "main", "say"]
