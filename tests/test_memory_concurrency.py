"""Several processes writing one store never lose or double-apply a write (MEM-STO-006).

Four worker processes (``memory_support.concurrency_worker``) each perform 250 random writes
(adds, replaces and removes of their own entries) on one store at the same time, with
writePolicy "auto" and generous budgets. Every call must succeed or fail with a protocol error
(never a bare ``sqlite3.OperationalError`` / "database is locked"); afterwards the ledger must
account for exactly the writes the workers saw succeed, and replaying it must give the store.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from cli_support import dshkit_env
from memory_support import ledger, open_store

from dshkit.conformance.memory_model import replay

WORKERS = 4
WRITES = 250
TESTS_DIR = Path(__file__).resolve().parent
WORKER = ("import sys; from memory_support.concurrency_worker import main; "
          "main(sys.argv[1:])")


def _env() -> dict[str, str]:
    return dshkit_env(TESTS_DIR)


def test_concurrent_writers_lose_and_double_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared" / "memory.db"
    open_store(db).close()  # created once, so the workers contend on writes, not creation
    go = tmp_path / "go"
    procs: list[tuple[subprocess.Popen[bytes], Path, Path]] = []
    for index in range(WORKERS):
        out, ready = tmp_path / f"out-{index}.json", tmp_path / f"ready-{index}"
        proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(db), str(index), str(WRITES), str(out),
             str(ready), str(go)], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append((proc, out, ready))
    deadline = time.monotonic() + 60
    while not all(ready.exists() for _, _, ready in procs) and time.monotonic() < deadline:
        if any(proc.poll() is not None for proc, _, _ in procs):
            break
        time.sleep(0.01)
    go.touch()  # all start writing at once
    records: list[dict[str, Any]] = []
    for proc, out, _ in procs:
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr.decode(errors="replace")
        assert b"Traceback" not in stderr, stderr.decode(errors="replace")
        records.append(json.loads(out.read_text(encoding="utf-8")))

    for record in records:
        assert record["unexpected"] == [], record["unexpected"][0]
        # Only lock contention past the busy timeout may refuse a write here.
        assert set(record["errors"]) <= {"STORE_BUSY"}, Counter(record["errors"])
        attempted = len(record["adds"]) + len(record["replaces"]) + len(record["removes"])
        assert attempted + len(record["errors"]) == WRITES

    provider = open_store(db)
    try:
        rows = ledger(provider)
        entries = provider.list_entries()
    finally:
        provider.close()
    by_action = Counter(str(row["action"]) for row in rows)
    assert set(by_action) <= {"add", "replace", "remove"}, by_action  # no -failed/-denied rows
    adds = [i for r in records for i in r["adds"]]
    replaces = [i for r in records for i in r["replaces"]]
    removes = [i for r in records for i in r["removes"]]
    assert by_action["add"] == len(adds)
    assert len(set(adds)) == len(adds)  # no id handed out twice
    assert Counter(str(r["entryId"]) for r in rows if r["action"] == "add") == Counter(adds)
    assert Counter(str(r["entryId"]) for r in rows if r["action"] == "replace") == \
        Counter(replaces)
    assert Counter(str(r["entryId"]) for r in rows if r["action"] == "remove") == \
        Counter(removes)
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    assert {e["id"] for e in entries} == set(adds) - set(removes)
    # Every replace landed exactly once: versions count the replaces of each live entry.
    replaced = Counter(replaces)
    assert all(e["version"] == 1 + replaced[e["id"]] for e in entries)
    assert replay(rows) == entries  # MEM-AUD-005
