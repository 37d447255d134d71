"""Session-query index benchmarks (issue 8): indexing a 1,000,000-event log against the parse
floor of the same file, and search latency on the index it builds.

The log is ``generate.realistic_log`` (seeded, so every run indexes the same bytes), written as
bare JSONL with compact separators. The parse floor is the faster of stdlib ``json.loads`` and
``orjson.loads`` (when installed) on each line of that file, measured in the same run: each
round times the floors and then the index, and each ratio divides a round's index time by the
same round's floor, in wall-clock time (the goal) and in processor time (steadier on a busy
machine). Indexing is ``SessionSearchEngine.index_paths`` on a fresh index file: reading and
checking the log, classifying the surface, extracting the documents and writing the FTS5
table, with the crash-safety of QRY-IDX-010. Searches run on the finished index: a
cross-session search and an event search in the session, for a frequent word, a word of
middling frequency, a two-word phrase, a word that does not occur, and a CJK query (literal
mode, a substring scan).

Call ``main()`` (rows, plus a Markdown table on stdout) or run ``python bench/query_bench.py``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from figures import Row, markdown, row, timed
from generate import realistic_log

from dshkit.reference.query import SessionSearchEngine

EVENTS = 1_000_000
INDEX_GOAL_RATIO = 5.0
SEARCH_GOAL_MS = 50.0
SESSION = "bench-log"
#: (label, query): frequent, middling, phrase, absent, CJK (literal mode).
QUERIES = (("frequent word", "the"), ("middling word", "config"),
           ("two-word phrase", "parse stream"), ("absent word", "zyzzyva"),
           ("CJK, literal scan", "日本語"))


def write_log(path: Path, events: int) -> int:
    with open(path, "w", encoding="utf-8") as out:
        for event in realistic_log(events):
            out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
    return path.stat().st_size


def parse_floor(path: Path, loads: Callable[[bytes], Any]) -> None:
    with open(path, "rb") as handle:
        for line in handle:
            loads(line)


def _loaders() -> dict[str, Callable[[bytes], Any]]:
    out: dict[str, Callable[[bytes], Any]] = {"json": json.loads}
    try:
        import orjson
    except ImportError:
        return out
    out["orjson"] = orjson.loads
    return out


def index_once(log: Path, db: Path) -> int:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with SessionSearchEngine.open(db) as engine:
        report = engine.index_paths([log])
    if report.failed or not report.files:
        raise RuntimeError(f"indexing failed: {report.to_json()}")
    return report.files[0].documents


def search_rows(db: Path, repeat: int, calls: int) -> list[Row]:
    rows = []
    with SessionSearchEngine.open(db) as engine:
        for label, query in QUERIES:
            kinds: list[tuple[str, Callable[[], object]]] = [
                ("search sessions", partial(engine.search_sessions, {"query": query})),
                ("search events", partial(engine.search_events,
                                          {"sessionId": SESSION, "query": query})),
            ]
            for kind, call in kinds:
                runs = []
                for _ in range(repeat):
                    runs.append(statistics.median(timed(call) for _ in range(calls)) * 1000)
                rows.append(row(f"{kind}: {label} ({query!r})", runs, unit="ms",
                                below=SEARCH_GOAL_MS))
    return rows


def _index_into(found: list[int], log: Path, db: Path) -> None:
    found.append(index_once(log, db))


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and processor seconds of one call of ``fn``."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(*, events: int = EVENTS, repeat: int = 3, calls: int = 10,
         quiet: bool = False) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="dshkit-querybench-") as tmp:
        log = Path(tmp) / f"{SESSION}.jsonl"
        size = write_log(log, events)
        db = Path(tmp) / "index.sqlite"
        loaders = _loaders()
        floors: dict[str, list[tuple[float, float]]] = {name: [] for name in loaders}
        runs: list[tuple[float, float]] = []
        documents = 0
        # Rounds: each parse floor, then the index, so that every ratio compares figures taken
        # moments apart (the load of a shared machine drifts over a run).
        for _ in range(repeat):
            for name, fn in loaders.items():
                floors[name].append(_timed(partial(parse_floor, log, fn)))
            found: list[int] = []
            runs.append(_timed(partial(_index_into, found, log, db)))
            documents = found[0]
        best = min(floors, key=lambda name: statistics.median(w for w, _ in floors[name]))
        rows = [row(f"parse floor ({name}.loads per line)", [w for w, _ in values], unit="s")
                for name, values in floors.items()]
        rows.append(row(f"index {events:,} events ({documents:,} documents)",
                        [w for w, _ in runs], unit="s"))
        rows.append(row(f"index / parse floor ({best})",
                        [w / f for (w, _), (f, _) in zip(runs, floors[best], strict=True)],
                        unit="x", below=INDEX_GOAL_RATIO))
        rows.append(row(f"index / parse floor ({best}), processor time",
                        [c / f for (_, c), (_, f) in zip(runs, floors[best], strict=True)],
                        unit="x"))
        rows += search_rows(db, repeat, calls)
    if not quiet:
        print(markdown(rows, f"Session-query index ({events:,} events, {size / 1e6:.1f} MB "
                             f"JSONL; medians of {repeat} rounds)"))
    return rows


def _cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=EVENTS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    rows = main(events=args.events, repeat=args.repeat, calls=args.calls)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(_cli())
