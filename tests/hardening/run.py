"""The long hardening run behind ``nox -s hardening``.

    python -m tests.hardening.run --inputs 100000 --kills 200 [--jobs 2] [--only SECTION ...]

Sections: ``fuzz`` (every target of :mod:`.fuzz` with ``--inputs`` inputs), ``crash`` (kill -9
at random points, ``--kills`` per target), ``concurrency`` (several processes on one memory
store and one query index, and six creating a new store or index together), ``bad`` (every
row of the bad-input table) and ``docs`` (rewrite the generated blocks of
``spec/hardening.md``). Results go to ``build/hardening.json``; a run of
some sections keeps the others' earlier results. Exit status 1 when anything is not green.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "build" / "hardening.json"
SPEC = ROOT / "spec" / "hardening.md"
SECTIONS = ("fuzz", "crash", "concurrency", "bad", "docs")


def _fuzz_one(name: str, inputs: int, seed: int) -> dict[str, Any]:
    from .fuzz import fuzz, target

    return fuzz(target(name), inputs, seed=seed).to_json()


def run_fuzz(inputs: int, jobs: int, seed: int, only: list[str] | None = None
             ) -> list[dict[str, Any]]:
    from .fuzz import TARGETS

    names = only or [t.name for t in TARGETS]
    out: list[dict[str, Any]] = []

    def done(item: dict[str, Any]) -> None:
        out.append(item)
        print(f"fuzz {item['target']}: {item['inputs']} inputs, {item['crashes']} crashes, "
              f"{item['known']} known, {item['seconds']} s", flush=True)

    if jobs <= 1:
        for name in names:
            done(_fuzz_one(name, inputs, seed))
        return out
    with ProcessPoolExecutor(jobs) as pool:
        for future in [pool.submit(_fuzz_one, name, inputs, seed) for name in names]:
            done(future.result())
    return out


def run_crash(kills: int, seed: int, only: list[str] | None = None) -> list[dict[str, Any]]:
    from .crash import TARGETS, run_target

    out = []
    for name in only or list(TARGETS):
        with tempfile.TemporaryDirectory(prefix=f"crash-{name}-") as tmp:
            result = run_target(name, kills, Path(tmp), seed=seed).to_json()
        print(f"crash {name}: {result['kills']} kills, {result['consistent']} consistent",
              flush=True)
        out.append(result)
    return out


def run_concurrency(scale: int) -> list[dict[str, Any]]:
    from .concurrency import run_creation, run_index, run_memory

    out = []
    with tempfile.TemporaryDirectory(prefix="conc-") as tmp:
        out.append(run_memory(Path(tmp) / "memory", processes=6, operations=200 * scale))
        out.append(run_index(Path(tmp) / "index", processes=4, rounds=3 * scale))
        for kind in ("memory", "index"):  # six processes creating one new store at once
            out.append(run_creation(Path(tmp) / f"create-{kind}", kind, processes=6,
                                    rounds=30 * scale))
    for item in out:
        print(f"concurrency {item['target']}: ok={item['ok']} {item['detail']}", flush=True)
    return out


def run_bad() -> dict[str, Any]:
    from .bad_inputs import ROWS

    results: dict[str, str] = {}
    for row in ROWS:
        with tempfile.TemporaryDirectory(prefix="bad-") as tmp:
            results[row.id] = row.run(Path(tmp))
    passed = sum(results[r.id] == r.expect for r in ROWS)
    known = sum(bool(r.bug) and results[r.id] != r.expect for r in ROWS)
    return {"rows": len(ROWS), "passed": passed, "known_bugs": known,
            "failed": len(ROWS) - passed - known, "results": results}


def write_docs(data: dict[str, Any]) -> None:
    from .bad_inputs import limits_table, markdown_table
    from .report import BAD_INPUTS, FIGURES, LIMITS, figures_table, write_block

    text = SPEC.read_text(encoding="utf-8")
    text = write_block(text, BAD_INPUTS, markdown_table())
    text = write_block(text, LIMITS, limits_table())
    if data:
        text = write_block(text, FIGURES, figures_table(data))
    SPEC.write_text(text, encoding="utf-8")


def green(data: dict[str, Any]) -> bool:
    fuzz_ok = all(item["crashes"] == 0 for item in data.get("fuzz", []))
    crash_ok = all(item["consistent"] == item["kills"] and item["lost"] == 0
                   for item in data.get("crash", []))
    conc_ok = all(item["ok"] for item in data.get("concurrency", []))
    bad_ok = data.get("bad_inputs", {}).get("failed", 0) == 0
    return fuzz_ok and crash_ok and conc_ok and bad_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.hardening.run")
    parser.add_argument("--inputs", type=int, default=100_000, help="fuzz inputs per target")
    parser.add_argument("--kills", type=int, default=200, help="kill -9 per crash target")
    parser.add_argument("--scale", type=int, default=5, help="concurrency workload factor")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=20260)
    parser.add_argument("--only", nargs="*", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--crash-targets", nargs="*", help="only these kill -9 targets")
    parser.add_argument("--fuzz-targets", nargs="*", help="only these fuzz targets")
    args = parser.parse_args(argv)
    data: dict[str, Any] = {}
    if RESULTS.exists():
        data = json.loads(RESULTS.read_text(encoding="utf-8"))
    jobs: dict[str, tuple[str, Callable[[], Any]]] = {
        "fuzz": ("fuzz", lambda: run_fuzz(args.inputs, args.jobs, args.seed,
                                          args.fuzz_targets)),
        "crash": ("crash", lambda: run_crash(args.kills, args.seed, args.crash_targets)),
        "concurrency": ("concurrency", lambda: run_concurrency(args.scale)),
        "bad": ("bad_inputs", run_bad)}
    runs = data.setdefault("runs", {})
    for section in args.only:
        if section not in jobs:
            continue
        key, job = jobs[section]
        begun = time.monotonic()
        result = job()
        if isinstance(result, list) and isinstance(data.get(key), list):
            # a run of some targets keeps the earlier results of the others
            merged = {item["target"]: item for item in data[key]}
            merged.update({item["target"]: item for item in result})
            result = list(merged.values())
        data[key] = result
        runs[section] = {
            "date": datetime.date.today().isoformat(),
            "command": "python -m tests.hardening.run " + " ".join(argv or sys.argv[1:]),
            "seconds": round(time.monotonic() - begun, 1),
            "machine": f"{platform.system()} {platform.machine()}, "
                       f"{os.cpu_count()} CPUs, Python {platform.python_version()}"}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if "docs" in args.only:
        write_docs(data)
    ok = green(data)
    print(f"hardening: {'green' if ok else 'NOT GREEN'}; results in {RESULTS}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
