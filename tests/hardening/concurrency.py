"""Several processes on one memory store and on one query index (issue 9, concurrency).

Memory: writers (add, replace, remove, consolidate, seed), importers (export envelopes) and
readers (recalling queries, snapshots, exports, budgets, audit pages) start at the same moment
on one store. Afterwards: no process saw anything but protocol errors (never a bare
``sqlite3.OperationalError`` such as "database is locked"), only lock contention past the busy
timeout refused a write, every acknowledged write is in the ledger exactly once, nothing is in
the ledger that no process wrote, and replaying the ledger gives the entries.

Creation: several processes open one store or index that does not exist yet at the same
moment, round after round; every open succeeds (no spurious ``STORE_CORRUPT`` for a file that
another process is creating), and every store holds every worker's entry.

Index: indexers and searchers run on one index while the corpus grows; afterwards the index
passes its integrity checks, no process saw anything but ``SessionQueryError``, and a final run
gives the documents a fresh index has.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

from dshkit.conformance.memory_model import replay
from dshkit.reference.memory import open_provider
from dshkit.reference.query import SessionSearchEngine

from . import samples
from .crash import _index_counts, spawn, wait_ready

ALLOWED_ERRORS = {"STORE_BUSY"}


def _run_all(children: list[subprocess.Popen[str]], go: Path,
             timeout: float = 600) -> list[list[str]]:
    for child in children:
        wait_ready(child)
    go.touch()
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=timeout)
        if child.returncode != 0 or "Traceback" in err:
            raise RuntimeError(f"worker failed: {err[-2000:]}")
        outputs.append([line for line in out.splitlines() if line and line != "ready"])
    return outputs


def run_memory(directory: Path, *, processes: int = 6, operations: int = 200,
               seed: int = 7) -> dict[str, Any]:
    """``processes`` workers (half writers, then importers and readers), ``operations`` each."""
    directory.mkdir(parents=True, exist_ok=True)
    db = directory / "memory.db"
    open_provider(db).close()
    go = directory / "go"
    rnd = random.Random(seed)
    writers = max(1, processes // 2)
    importers = max(1, (processes - writers) // 2)
    readers = max(1, processes - writers - importers)
    children = [spawn("memory-mixed", str(db), str(i), str(rnd.randrange(2**32)),
                      str(operations), str(go)) for i in range(writers)]
    children += [spawn("memory-import", str(db), str(i), str(max(1, operations // 4)), str(go))
                 for i in range(importers)]
    children += [spawn("memory-read", str(db), str(i), str(operations), str(go))
                 for i in range(readers)]
    started = time.monotonic()
    outputs = _run_all(children, go)
    seconds = time.monotonic() - started
    lines = [line for out in outputs for line in out]
    unexpected = [json.loads(line.split(" ", 1)[1]) for line in lines
                  if line.startswith("unexpected")]
    errors = Counter(line.split()[1] for line in lines if line.startswith("error"))
    acks = [line.split()[1:] for line in lines if line.startswith("ack")]
    provider = open_provider(db)
    try:
        rows = provider.store.audit_rows(order="ORDER BY seq ASC")
        entries = provider.list_entries()
        integrity = provider.store.conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        provider.close()
    ledger = Counter((str(r["action"]), str(r["entryId"])) for r in rows
                     if r["action"] not in ("snapshot", "recalled", "seed"))
    wanted: Counter[tuple[str, str]] = Counter()
    for ack in acks:
        op, ids = ack[0], ack[1:]
        if op == "add":
            wanted[("add", ids[0])] += 1
        elif op == "replace":
            wanted[("replace", ids[0])] += 1
        elif op == "remove":
            wanted[("remove", ids[0])] += 1
        elif op == "consolidate":
            wanted[("consolidate-add", ids[0])] += 1
            for old in ids[1:]:
                wanted[("consolidate-remove", old)] += 1
        elif op == "seed":
            for new in ids:
                wanted[("add", new)] += 1
    seeds = sum(1 for r in rows if r["action"] == "seed")
    seed_acks = sum(1 for ack in acks if ack[0] == "seed")
    problems = []
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected exceptions, first: {unexpected[0][-400:]}")
    locked = sum("locked" in text for text in unexpected)
    if set(errors) - ALLOWED_ERRORS:
        problems.append(f"refusals other than lock contention: {dict(errors)}")
    if ledger != wanted:
        lost = wanted - ledger
        doubled = ledger - wanted
        problems.append(f"ledger differs from the acknowledged writes: lost {dict(lost)}, "
                        f"extra {dict(doubled)}")
    if seeds != seed_acks:
        problems.append(f"{seeds} seed rows for {seed_acks} acknowledged seeds")
    if replay(rows) != entries:
        problems.append("replaying the ledger does not give the entries")
    if integrity != "ok":
        problems.append(f"integrity_check: {integrity}")
    operations_done = len(acks) + sum(errors.values())
    detail = (f"{len(acks):,} acknowledged ({sum(1 for a in acks if a[0] != 'read'):,} writes), "
              f"{sum(errors.values())} STORE_BUSY, {locked} bare 'database is locked', "
              f"ledger replay equals the store: {replay(rows) == entries}")
    return {"target": "memory store", "processes": len(children),
            "operations": operations_done, "ok": not problems, "detail": detail,
            "problems": problems, "seconds": round(seconds, 1)}


def run_creation(directory: Path, kind: str, *, processes: int = 6, rounds: int = 20,
                 timeout: float = 120) -> dict[str, Any]:
    """``processes`` workers open a new ``kind`` (``memory`` or ``index``) together,
    ``rounds`` times, each round on a new path."""
    directory.mkdir(parents=True, exist_ok=True)
    children = [spawn("create-store", kind, str(directory), str(i), str(rounds))
                for i in range(processes)]
    for child in children:
        wait_ready(child)
    started = time.monotonic()
    for number in range(rounds):
        (directory / f"go-{number}").touch()
        deadline = time.monotonic() + timeout
        while len(list(directory.glob(f"done-{number}-*"))) < processes:
            if time.monotonic() > deadline or any(c.poll() not in (None, 0) for c in children):
                break
            time.sleep(0.002)
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=timeout)
        if child.returncode != 0 or "Traceback" in err:
            raise RuntimeError(f"creation worker failed: {err[-2000:]}")
        outputs.append([line for line in out.splitlines() if line and line != "ready"])
    seconds = time.monotonic() - started
    lines = [line for out in outputs for line in out]
    acks = [line for line in lines if line.startswith("ack")]
    refusals = [line.split(" ", 2)[2] for line in lines if line.startswith("error")]
    unexpected = [line for line in lines if line.startswith("unexpected")]
    problems = []
    if refusals:
        problems.append(f"{len(refusals)} refused opens, first: {refusals[0][:400]}")
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected exceptions, first: "
                        f"{json.loads(unexpected[0].split(' ', 1)[1])[-400:]}")
    if kind == "memory":
        short = [n for n in range(rounds)
                 if len(_entries(directory / str(n) / "memory.db")) != processes]
        if short:
            problems.append(f"rounds whose store lacks an acknowledged entry: {short[:10]}")
    what = "memory store" if kind == "memory" else "query index"
    detail = (f"{len(acks)} of {processes * rounds} opens of a new {what} by {processes} "
              f"processes at once succeeded; {len(refusals)} refused")
    return {"target": f"{kind} creation", "processes": processes, "operations": len(acks),
            "ok": not problems, "detail": detail, "problems": problems,
            "seconds": round(seconds, 1)}


def _entries(db: Path) -> list[dict[str, Any]]:
    provider = open_provider(db)
    try:
        return provider.list_entries()
    finally:
        provider.close()


def _grow(logs: Path, rnd: random.Random, sessions: int) -> None:
    logs.mkdir(parents=True, exist_ok=True)
    for _ in range(sessions):
        number = rnd.randrange(10**7)
        events = [samples.user(seq, f"alpha c{number} event {seq}")
                  for seq in range(rnd.randint(5, 60))]
        (logs / f"c{number}.jsonl").write_bytes(samples.log(events, id=f"c{number}"))


def run_index(directory: Path, *, processes: int = 4, rounds: int = 3,
              seed: int = 7) -> dict[str, Any]:
    directory.mkdir(parents=True, exist_ok=True)
    logs, db, go = directory / "logs", directory / "index.sqlite", directory / "go"
    rnd = random.Random(seed)
    _grow(logs, rnd, 40)
    children = [spawn("index-worker", str(db), str(logs), str(rounds), str(go))
                for _ in range(processes)]
    for child in children:
        wait_ready(child)
    go.touch()
    started = time.monotonic()
    while any(child.poll() is None for child in children):
        _grow(logs, rnd, 3)  # the corpus changes while they index
        time.sleep(0.2)
    outputs = []
    for child in children:
        out, err = child.communicate(timeout=600)
        if child.returncode != 0 or "Traceback" in err:
            raise RuntimeError(f"index worker failed: {err[-2000:]}")
        outputs.append([line for line in out.splitlines() if line and line != "ready"])
    seconds = time.monotonic() - started
    lines = [line for out in outputs for line in out]
    unexpected = [json.loads(line.split(" ", 1)[1]) for line in lines
                  if line.startswith("unexpected")]
    errors = Counter(line.split()[1] for line in lines if line.startswith("error"))
    acks = [line for line in lines if line.startswith("ack")]
    problems = []
    if unexpected:
        problems.append(f"{len(unexpected)} unexpected exceptions, first: {unexpected[0][-400:]}")
    if errors:
        problems.append(f"refusals: {dict(errors)}")
    try:
        _index_counts(db)
        with SessionSearchEngine.open(db) as engine:
            report = engine.index_paths([logs])
        final = _index_counts(db)
        with SessionSearchEngine.open(directory / "fresh.sqlite") as fresh:
            fresh.index_paths([logs])
        if report.failed or final != _index_counts(directory / "fresh.sqlite"):
            problems.append("the index differs from a fresh one after a finishing run")
    except AssertionError as exc:
        problems.append(f"integrity: {exc}")
    detail = (f"{len(acks)} index-and-search rounds while the corpus grew to "
              f"{len(list(logs.glob('*.jsonl')))} sessions; {len(unexpected)} unexpected "
              "exceptions")
    return {"target": "query index", "processes": processes, "operations": len(acks),
            "ok": not problems, "detail": detail, "problems": problems,
            "seconds": round(seconds, 1)}
