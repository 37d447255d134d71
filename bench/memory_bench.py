"""Memory provider benchmarks (issue 8): ``query`` over 10,000 entries and add/replace
throughput with the gate on ``auto``, on one process, on a real file, with the store's
settings as shipped (WAL, ``synchronous = NORMAL``: MEM-STO-001's default durability). The
same writes with ``synchronous = FULL`` (``durability="full"``, which waits for one ``fsync``
per commit) are measured alongside for comparison, with the ``fsync`` latency of the disk.

The store is built from a seeded generator, so every run sees the same entries: four buckets,
eight workspaces, four agent layers (one shared), texts of 6 to 30 words from a fixed
vocabulary (some non-ASCII), a unique ``#e<n>`` token in each, and recall counts from a fixed
sequence of recalls. After the write runs the benchmark checks that the ledger and the budgets
are exact: ``budgets()`` equals the units of ``list_entries()`` per bucket, the ledger has one
row per write, and replaying it (MEM-AUD-005) gives ``list_entries()``.

Call ``main()`` (rows, plus a Markdown table on stdout) or run ``python bench/memory_bench.py``.
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from figures import Row, markdown, row

from dshkit.conformance.memory_model import replay
from dshkit.reference.memory import open_provider
from dshkit.reference.memory.provider import Provider

Json = dict[str, Any]
ENTRIES = 10_000
HUGE = {"user": {"userGlobal": 10**9, "workspace": 10**9},
        "agent": {"userGlobal": 10**9, "workspace": 10**9}}
BUCKETS = (("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
           ("agent", "workspace"))
WORKSPACES = tuple(f"/home/dev/project-{n}" for n in range(8))
AGENTS = ("", "coder", "reviewer", "planner")
EXTRA = ("café", "茶", "naïve", "😀", "Straße", "ΑΣ")
QUERY_GOAL_MS = 5.0
WRITE_GOAL = 2000.0


def write_context(session: str, cwd: str, preset: str) -> Json:
    return {"agent": {"session": {"id": session, "header": {"cwd": cwd, "agentPreset": preset}}}}


READER = write_context("bench-reader", WORKSPACES[0], "coder")
WRITER = write_context("bench-writer", WORKSPACES[1], "coder")


def vocabulary(rng: random.Random, size: int = 600) -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qua", "dre",
                 "ix", "om", "bel", "tar"]
    words: list[str] = []
    while len(words) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.append(word)
    return words


class Clock:
    """A deterministic clock: one millisecond per read."""

    def __init__(self) -> None:
        self._next = itertools.count(1_700_000_000_000)

    def __call__(self) -> int:
        return next(self._next)


class Ids:
    """Deterministic UUID v4 strings."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def __call__(self) -> str:
        h = f"{self._rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:]}"


def entry_inputs(rng: random.Random, words: Sequence[str], count: int, start: int = 0,
                 ) -> list[Json]:
    out = []
    for n in range(start, start + count):
        track, scope = BUCKETS[n % 4]
        text = rng.choices(words, k=rng.randint(6, 30))
        if rng.random() < 0.1:
            text.insert(rng.randrange(len(text)), rng.choice(EXTRA))
        if rng.random() < 0.3:
            text[0] = text[0].capitalize()
        item: Json = {"track": track, "scope": scope, "text": " ".join(text) + f" #e{n:05d}",
                      "tags": rng.sample(["pref", "style", "tooling", "repo", "team"],
                                         rng.randint(0, 3)),
                      "agentKey": rng.choice(AGENTS)}
        if scope == "workspace":
            item["workspaceKey"] = rng.choice(WORKSPACES)
        out.append(item)
    return out


def build(path: Path, entries: int = ENTRIES, seed: int = 8) -> tuple[Provider, list[str]]:
    """A provider over a store of ``entries`` entries, and the vocabulary."""
    rng = random.Random(seed)
    words = vocabulary(rng)
    provider = open_provider(path, budgets=HUGE, write_policy="auto", clock=Clock(),
                             ids=Ids(seed))
    for start in range(0, entries, 1000):
        provider.seed(entry_inputs(rng, words, min(1000, entries - start), start), WRITER)
    for _ in range(300):  # recall counts: later rankings depend on them
        provider.query({"text": rng.choice(words), "limit": 5},
                       {"reader": write_context("warm", rng.choice(WORKSPACES),
                                                rng.choice(AGENTS)), "recall": True})
    return provider, words


def _latency(call: Callable[[int], object], calls: int) -> float:
    """Median seconds of ``call(i)`` for i in 0 .. calls-1 (one run)."""
    out = []
    for i in range(calls):
        start = time.perf_counter()
        call(i)
        out.append(time.perf_counter() - start)
    return statistics.median(out)


def query_rows(provider: Provider, words: Sequence[str], repeat: int, calls: int,
               entries: int) -> list[Row]:
    rng = random.Random(11)
    common = [w for w in words if len(w) <= 4][:40]
    rare = [f"#e{n:05d}" for n in rng.sample(range(entries), min(calls, entries))]
    kinds: list[tuple[str, Callable[[int], object]]] = [
        ("query: word + reader (visibility)",
         lambda i: provider.query({"text": common[i % len(common)]}, {"reader": READER})),
        ("query: unique token + reader",
         lambda i: provider.query({"text": rare[i % len(rare)]}, {"reader": READER})),
        ("query: bucket filter + reader, no text",
         lambda i: provider.query({"track": BUCKETS[i % 4][0], "scope": BUCKETS[i % 4][1]},
                                  {"reader": READER})),
        ("query: management view (no reader), limit 100",
         lambda i: provider.query({"text": common[i % len(common)].upper(), "limit": 100})),
        ("recall: word + reader (counts + audit row)",
         lambda i: provider.query({"text": rare[i % len(rare)]},
                                  {"reader": READER, "recall": True})),
    ]
    rows = []
    for name, call in kinds:
        runs = [_latency(call, calls) * 1000 for _ in range(repeat)]
        rows.append(row(f"{name}, {entries:,} entries", runs, unit="ms",
                        below=QUERY_GOAL_MS))
    return rows


class Writes:
    """Adds and replaces by one writer; remembers the tokens it can replace."""

    def __init__(self, provider: Provider, words: Sequence[str]) -> None:
        self.provider = provider
        self.words = words
        self.rng = random.Random(13)
        self.counter = itertools.count()
        self.mine: list[tuple[str, str, str]] = []  # (track, scope, token)
        self.count = 0

    def _text(self, token: str) -> str:
        return " ".join(self.rng.choices(self.words, k=self.rng.randint(6, 20))) + f" {token}"

    def add(self) -> None:
        track, scope = BUCKETS[self.rng.randrange(4)]
        token = f"#w{next(self.counter):06d}"
        self.provider.add({"track": track, "scope": scope, "text": self._text(token)}, WRITER)
        self.mine.append((track, scope, token))
        self.count += 1

    def replace(self) -> None:
        track, scope, token = self.mine[self.rng.randrange(len(self.mine))]
        self.provider.replace({"track": track, "scope": scope, "match": token,
                               "text": self._text(token)}, WRITER)
        self.count += 1


KINDS = ("add", "replace", "add/replace alternating")


SHIPPED = "NORMAL"  # the synchronous mode of the default durability (MEM-STO-001)


def write_runs(provider: Provider, writes: Writes, repeat: int, ops: int,
               modes: Sequence[str]) -> dict[tuple[str, str], list[float]]:
    """Writes per second per (kind, synchronous mode), per run; the modes take turns on the
    same store within each run, so that a noisy disk or a busy machine affects them alike."""
    ops_of: dict[str, Callable[[int], None]] = {
        "add": lambda i: writes.add(),
        "replace": lambda i: writes.replace(),
        "add/replace alternating": lambda i: writes.add() if i % 2 else writes.replace(),
    }
    results: dict[tuple[str, str], list[float]] = {}
    for kind in KINDS:
        for _ in range(repeat):
            for mode in modes:
                provider.store.conn.execute(f"PRAGMA synchronous = {mode}")
                start = time.perf_counter()
                for i in range(ops):
                    ops_of[kind](i)
                results.setdefault((kind, mode), []).append(ops / (time.perf_counter() - start))
    provider.store.conn.execute(f"PRAGMA synchronous = {SHIPPED}")
    return results


def fsync_latency(directory: Path, samples: int = 200) -> list[float]:
    """Milliseconds of one 4 KiB write + fsync on the store's file system, per sample."""
    path = directory / "fsync.probe"
    out = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for _ in range(samples):
            os.write(fd, b"x" * 4096)
            start = time.perf_counter()
            os.fsync(fd)
            out.append((time.perf_counter() - start) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    return out


def exact(provider: Provider, writes_done: int, audit_before: int) -> bool:
    """Budgets equal the units of the stored texts; one ledger row per write; replay agrees."""
    entries = provider.list_entries()
    used: dict[tuple[str, str], int] = {}
    for e in entries:
        key = (e["track"], e["scope"])
        used[key] = used.get(key, 0) + len(e["text"].encode("utf-16-le")) // 2
    budgets_ok = all(b["used"] == used.get((b["track"], b["scope"]), 0)
                     for b in provider.budgets())
    ledger = provider.store.audit_rows(order="ORDER BY seq ASC")
    rows_ok = len(ledger) - audit_before == writes_done
    return budgets_ok and rows_ok and replay(ledger) == entries


def seed_runs(path: Path, repeat: int, per_call: int = 1000) -> list[float]:
    """Entries per second added by ``seed`` calls of ``per_call`` entries (one transaction
    each), per run, into a store that grows by one call per run."""
    rng = random.Random(17)
    words = vocabulary(rng)
    provider = open_provider(path, budgets=HUGE, write_policy="auto", clock=Clock(),
                             ids=Ids(17))
    try:
        out = []
        for run in range(repeat):
            items = entry_inputs(rng, words, per_call, run * per_call)
            start = time.perf_counter()
            provider.seed(items, WRITER)
            out.append(per_call / (time.perf_counter() - start))
        return out
    finally:
        provider.close()


def _write_rows(path: Path, entries: int, repeat: int, ops: int, modes: Sequence[str]
                ) -> tuple[list[Row], bool]:
    provider, words = build(path, entries)
    try:
        audit_before = len(provider.store.audit_rows())
        writes = Writes(provider, words)
        writes.add()  # one entry of the writer's to replace
        raw = write_runs(provider, writes, repeat, ops, modes)
        ok = exact(provider, writes.count, audit_before)
    finally:
        provider.close()
    rows = []
    for (kind, mode), runs in raw.items():
        if mode == SHIPPED:
            rows.append(row(f"{kind}, gate auto, store of {entries:,}+ entries", runs,
                            unit="writes/s", above=WRITE_GOAL, exact=ok))
        else:
            rows.append(row(f"{kind}, gate auto, store of {entries:,}+ entries, synchronous "
                            f"{mode} (comparison: durability \"full\")", runs,
                            unit="writes/s", exact=ok))
    return rows, ok


def main(*, repeat: int = 5, calls: int = 50, ops: int = 300, entries: int = ENTRIES,
         small: int = 1000, quiet: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="dshkit-membench-") as tmp:
        directory = Path(tmp)
        provider, words = build(directory / "query.db", entries)
        try:
            rows = query_rows(provider, words, repeat, calls, entries)
        finally:
            provider.close()
        big, ok_big = _write_rows(directory / "big.db", entries, repeat, ops,
                                  (SHIPPED, "FULL"))
        few, ok_few = _write_rows(directory / "small.db", small, repeat, ops, (SHIPPED,))
        rows += [r for r in big if "FULL" not in r["name"]] + few
        rows.append(row("seed, 1,000 entries per call (one transaction), gate auto",
                        seed_runs(directory / "seed.db", repeat), unit="entries/s"))
        rows += [r for r in big if "FULL" in r["name"]]
        rows.append(row("fsync of 4 KiB on the store's file system (context)",
                        fsync_latency(directory), unit="ms"))
    if not quiet:
        print(markdown(rows, f"Memory provider (medians of {repeat} runs; WAL, synchronous "
                             f"{SHIPPED} as shipped; ledger and budgets exact after every write "
                             f"run: {'yes' if ok_big and ok_few else 'NO'})"))
    return rows


def _cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--ops", type=int, default=300)
    parser.add_argument("--entries", type=int, default=ENTRIES)
    parser.add_argument("--small", type=int, default=1000)
    args = parser.parse_args()
    rows = main(repeat=args.repeat, calls=args.calls, ops=args.ops, entries=args.entries,
                small=args.small)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(_cli())
