"""kill -9 at random points, and what must read back afterwards (issue 9, crash safety).

Targets:

* ``session-append`` / ``session-append-zstd``: a child appends turns (two batches each) to
  one log; after each kill the log loads (level ``load``) with at least every acknowledged
  event, a torn tail is reported, not an error, and ``repair --write`` leaves a log that is
  valid at level ``invariants`` with no torn tail (the next child appends to it).
* ``memory-store``: a child writes (add, replace, remove, consolidate, seed) to one store;
  after each kill the store opens, passes ``PRAGMA integrity_check``, replaying its audit
  ledger gives exactly its entries (every write is there with its audit row, or neither), and
  every acknowledged write is in the ledger.
* ``query-index``: a child re-indexes a corpus that changes between kills; after each kill
  the index passes SQLite's and FTS5's integrity checks, holds only whole sessions, and a
  finishing run gives the same documents as a fresh index.
* ``adapt-output``: a child converts two inputs alternately into one output file with
  ``dshkit adapt convert -o``; after each kill the file is byte for byte one of the two
  outputs.
* ``compact-output``: a child runs ``dshkit compact apply --output`` again and again; after
  each kill the output is absent or the complete new log, byte for byte.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dshkit.conformance.memory_model import replay
from dshkit.reference.memory import open_provider
from dshkit.reference.query import SessionSearchEngine
from dshkit.reference.session.levels import Level
from dshkit.reference.session.recovery import repair_path
from dshkit.reference.session.validation import validate_path

from . import samples

HERE = Path(__file__).resolve().parent
ROTATE_BYTES = 4 << 20
ROOT = HERE.parents[1]


def child_env() -> dict[str, str]:
    """The environment of a child: this package's ``tests`` directory and the ``dshkit`` the
    parent runs (a checkout's ``src`` or an installed copy) first on the path."""
    import dshkit

    package_root = Path(dshkit.__file__).resolve().parent.parent
    paths = [str(ROOT / "tests"), str(package_root), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "hardening.children", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())


def wait_ready(child: subprocess.Popen[str], timeout: float = 60) -> str:
    assert child.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        if line.startswith("ready"):
            return line.strip()
    child.kill()
    _, err = child.communicate(timeout=30)
    raise RuntimeError(f"child never became ready: {err[-2000:]}")


def kill_after(child: subprocess.Popen[str], delay: float) -> list[str]:
    """Sleep ``delay`` seconds, SIGKILL the child, and return its acknowledgement lines."""
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    out, err = child.communicate(timeout=60)
    if "Traceback" in err:
        raise RuntimeError(f"child failed before the kill: {err[-2000:]}")
    return [line for line in out.splitlines() if line and not line.startswith("ready")]


@dataclass
class CrashResult:
    target: str
    kills: int = 0
    consistent: int = 0
    lost: int = 0  # acknowledged writes missing after a kill
    acknowledged: int = 0  # operations acknowledged before the kills, in all
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "kills": self.kills, "consistent": self.consistent,
                "lost": self.lost, "acknowledged": self.acknowledged, "notes": self.notes[:10]}


Check = Callable[[Path, random.Random, CrashResult], bool]


# -- (a) session log ---------------------------------------------------------------------------


def _session(compression: str) -> Check:
    def one(tmp: Path, rnd: random.Random, result: CrashResult) -> bool:
        path = tmp / ("session.jsonl.zstd" if compression == "zstd" else "session.jsonl")
        if path.exists() and (path.stat().st_size > ROTATE_BYTES or result.kills % 10 == 0):
            path.unlink()  # start a new log: checking stays linear in the number of kills
        child = spawn("append-log", str(path), compression, str(rnd.randrange(2**32)))
        wait_ready(child)
        acks = kill_after(child, rnd.uniform(0, 0.15))
        acked = max((int(line.split()[1]) for line in acks if line.startswith("ack")),
                    default=0)
        result.acknowledged += len(acks)
        loaded = validate_path(path, Level.LOAD)
        reader_events = loaded.events
        ok = loaded.valid
        if not ok:
            result.notes.append(f"load after kill: {[p.to_json() for p in loaded.errors]}")
        if reader_events < acked:
            result.lost += acked - reader_events
            ok = False
        repaired = repair_path(path, write=True)
        after = validate_path(path, Level.LOAD)
        strict = validate_path(path, Level.INVARIANTS)
        if not (repaired.valid and after.valid and after.torn is None and strict.valid):
            result.notes.append(f"after repair: {after.to_json()} {strict.to_json()}")
            ok = False
        return ok

    return one


# -- (b) memory store --------------------------------------------------------------------------


def _memory(tmp: Path, rnd: random.Random, result: CrashResult) -> bool:
    db = tmp / "store" / "memory.db"
    if db.exists() and db.stat().st_size > ROTATE_BYTES:
        shutil.rmtree(db.parent)  # start a new store: checking stays linear in the kills
    child = spawn("memory-writes", str(db), "0", str(rnd.randrange(2**32)), "0")
    wait_ready(child)
    acks = kill_after(child, rnd.uniform(0, 0.25))
    result.acknowledged += sum(line.startswith("ack") for line in acks)
    unexpected = [line for line in acks if line.startswith("unexpected")]
    provider = open_provider(db)
    try:
        conn = provider.store.conn
        ok = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok" and not unexpected
        rows = provider.store.audit_rows(order="ORDER BY seq ASC")
        entries = provider.list_entries()
    finally:
        provider.close()
    if replay(rows) != entries:
        result.notes.append("ledger replay differs from the entries")
        ok = False
    audited = {(row["action"], row["entryId"]) for row in rows}
    for line in acks:
        parts = line.split()
        if parts[0] != "ack":
            continue
        op, ids = parts[1], parts[2:]
        wanted = {"add": [("add", ids[0])], "replace": [("replace", ids[0])],
                  "remove": [("remove", ids[0])],
                  "consolidate": [("consolidate-add", ids[0])]
                  + [("consolidate-remove", i) for i in ids[1:]],
                  "seed": [("add", i) for i in ids]}[op]
        missing = [w for w in wanted if w not in audited]
        if missing:
            result.lost += 1
            result.notes.append(f"acknowledged {op} missing from the ledger: {missing}")
            ok = False
    if unexpected:
        result.notes.append(json.loads(unexpected[0].split(" ", 1)[1])[-500:])
    return ok


# -- (c) query index ---------------------------------------------------------------------------


def _corpus_step(logs: Path, rnd: random.Random) -> None:
    """Change the corpus a little: new sessions, grown sessions, a removed one."""
    logs.mkdir(exist_ok=True)
    existing = sorted(logs.glob("*.jsonl"))
    for _ in range(rnd.randint(1, 3)):
        number = rnd.randrange(10**6)
        events = [samples.user(seq, f"alpha s{number} event {seq} 会话")
                  for seq in range(rnd.randint(5, 120))]
        (logs / f"s{number}.jsonl").write_bytes(samples.log(events, id=f"s{number}"))
    if existing and rnd.random() < 0.5:
        victim = rnd.choice(existing)
        text = victim.read_bytes()
        count = text.count(b"\n") - 1
        victim.write_bytes(text + b"".join(samples.line(samples.user(count + k, "grown"))
                                           for k in range(10)))
    if len(existing) > 8 and rnd.random() < 0.3:
        existing.pop(rnd.randrange(len(existing))).unlink()
    while len(existing) > 40:  # keep the corpus small: checking stays linear in the kills
        existing.pop(rnd.randrange(len(existing))).unlink()


def index_contents(db: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Checks the index file's integrity (SQLite's and FTS5's); returns the event count of
    each session row and the document count of each session."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.execute("INSERT INTO docs(docs) VALUES ('integrity-check')")
        rows = dict(conn.execute("SELECT id, events FROM sessions").fetchall())
        counts = dict(conn.execute(
            "SELECT session_id, count(*) FROM docs GROUP BY session_id").fetchall())
    finally:
        conn.close()
    return rows, counts


def _index_counts(db: Path) -> dict[str, int]:
    rows, counts = index_contents(db)
    assert counts == {k: v for k, v in rows.items() if v}, "partial session in the index"
    return {str(k): int(v) for k, v in rows.items()}


def _query(tmp: Path, rnd: random.Random, result: CrashResult) -> bool:
    logs, db = tmp / "logs", tmp / "index.sqlite"
    _corpus_step(logs, rnd)
    child = spawn("index-build", str(db), str(logs))
    wait_ready(child)
    acks = kill_after(child, rnd.uniform(0, 0.4))
    result.acknowledged += len(acks)
    try:
        _index_counts(db)
        with SessionSearchEngine.open(db) as engine:
            report = engine.index_paths([logs])
        finished = _index_counts(db)
        fresh_db = tmp / "fresh.sqlite"
        fresh_db.unlink(missing_ok=True)
        with SessionSearchEngine.open(fresh_db) as fresh:
            fresh.index_paths([logs])
        return not report.failed and finished == _index_counts(fresh_db)
    except (AssertionError, sqlite3.Error) as exc:
        result.notes.append(f"index after kill: {exc}")
        return False


def _quiet(argv: list[str]) -> int:
    import contextlib
    import io

    from dshkit.cli import main

    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        return main(argv)


# -- (d) output files --------------------------------------------------------------------------


def _mem0(texts: list[str]) -> str:
    return json.dumps([{"id": f"m{i}", "memory": t} for i, t in enumerate(texts)])


def _adapt_output(tmp: Path, rnd: random.Random, result: CrashResult) -> bool:
    first, second, output = tmp / "a.json", tmp / "b.json", tmp / "out" / "MEMORY.md"
    if not first.exists():
        first.write_text(_mem0([f"fact {i} " + "a" * 2000 for i in range(40)]), "utf-8")
        second.write_text(_mem0([f"other {i} " + "b" * 3000 for i in range(30)]), "utf-8")
        output.parent.mkdir()
        expected = set()
        for source in (first, second):
            _quiet(["adapt", "convert", "--from", "mem0", "--to", "hermes-bullets",
                    str(source), "-o", str(output)])
            expected.add(output.read_bytes())
        (tmp / "expected.json").write_text(json.dumps([e.decode() for e in expected]), "utf-8")
    expected_bytes = {e.encode() for e in json.loads((tmp / "expected.json").read_text("utf-8"))}
    child = spawn("convert-loop", "adapt", str(first), str(second), str(output))
    wait_ready(child)
    acks = kill_after(child, rnd.uniform(0, 0.5))
    result.acknowledged += len(acks)
    if output.read_bytes() not in expected_bytes:
        result.notes.append("the output file is neither the old nor the new one")
        return False
    return True


def _compact_output(tmp: Path, rnd: random.Random, result: CrashResult) -> bool:
    source, output = tmp / "log.jsonl", tmp / "out" / "compacted.jsonl"
    if not source.exists():
        source.write_bytes(samples.compactable_log())
        Path(f"{source}.summary").write_text("summary of the old turns", "utf-8")
        output.parent.mkdir()
        code = _quiet(["compact", "apply", str(source), "--summary-file", f"{source}.summary",
                     "--trigger", "manual", "--time", "99", "--output", str(output)])
        if code != 0:
            raise RuntimeError("compact apply --output does not apply to the crash corpus")
        (tmp / "expected.bin").write_bytes(output.read_bytes())
    expected = (tmp / "expected.bin").read_bytes()
    child = spawn("convert-loop", "compact", str(source), str(source), str(output))
    wait_ready(child)
    acks = kill_after(child, rnd.uniform(0, 0.3))
    result.acknowledged += len(acks)
    if output.exists() and output.read_bytes() != expected:
        result.notes.append("compact --output left a partial or different file")
        return False
    return True


TARGETS: dict[str, Check] = {
    "session-append": _session("none"),
    "session-append-zstd": _session("zstd"),
    "memory-store": _memory,
    "query-index": _query,
    "adapt-output": _adapt_output,
    "compact-output": _compact_output,
}


def run_target(name: str, kills: int, tmp: Path, *, seed: int = 0) -> CrashResult:
    """``kills`` kill -9 cycles of one target in ``tmp`` (state carries over between kills)."""
    rnd = random.Random(f"{seed}-{name}")
    result = CrashResult(name)
    for _ in range(kills):
        result.kills += 1
        if TARGETS[name](tmp, rnd, result):
            result.consistent += 1
    leftovers = [p.name for p in tmp.rglob("*") if p.name.endswith((".tmp", ".partial"))]
    if leftovers:
        result.notes.append(f"{len(leftovers)} temporary files left behind by killed writers "
                            f"(e.g. {leftovers[0]}); harmless, never read")
    return result
