"""Benchmarks as ratios against baselines measured in the same run (``nox -s bench``).

For each log size (100,000 and 1,000,000 events; ``--quick``: 100,000 only) the deterministic
generator writes the log as bare JSONL, as DSH ``session.jsonl`` with packed chunks and as
``session.jsonl.zstd``. Then, round after round, each measurement runs in a fresh process
(:mod:`workers`, and ``bench/dsh/fold.mjs`` for DSH): the parse floor (stdlib ``json`` and
``orjson`` per line), dshkit's one pass (``validate --level load`` and the fold), the same on
the packed and compressed forms, a naive per-event ``jsonschema`` validation against the full
typed schema, and DSH's own ``Session.create`` + ``deriveMessages``. A round measures every
row once, so each ratio compares figures taken side by side; the report gives the median of
the rounds with the minimum and maximum, and the peak memory of each process.

Results go to ``build/bench.json`` and ``build/bench.md``; a full run also rewrites the
results section of ``spec/performance.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generate import LogFiles, write_logs
from report import Target, markdown, update_spec

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DSH = HERE / "dsh"
SIZES = (100_000, 1_000_000)
NAIVE_SAMPLE_EVENTS = 2_000
TIMEOUT = 1_800


@dataclass
class Series:
    """The runs of one measurement at one size."""

    name: str
    seconds: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rss: list[int] = field(default_factory=list)
    note: str = ""
    missing: str = ""  # why it was not measured

    def add(self, result: dict[str, Any]) -> None:
        self.seconds.append(float(result["seconds"]))
        self.cpu.append(float(result["cpuSeconds"]))
        self.rss.append(int(result["maxRssBytes"]))


# -- measuring ---------------------------------------------------------------------------------


def _worker(kind: str, path: Path, sample: int = 1) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(HERE / "workers.py"), kind, str(path),
                           str(sample)], capture_output=True, text=True, timeout=TIMEOUT,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench worker {kind} failed:\n{done.stderr.strip()}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _dsh_ready() -> str:
    """Empty when the pinned DSH packages are installed, else why DSH is not measured."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        return "node is not installed"
    if (DSH / "node_modules" / "@deepseek-ai" / "dsh-session").is_dir():
        return ""
    if npm is None:
        return "npm is not installed"
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=DSH, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        return f"npm ci failed: {lines[-1] if lines else done.returncode}"
    return ""


def _dsh(path: Path) -> dict[str, Any]:
    done = subprocess.run(["node", "--max-old-space-size=16384", str(DSH / "fold.mjs"),
                           str(path), "1"], capture_output=True, text=True, timeout=TIMEOUT,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip().splitlines()[-1])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    run = out["runs"][0]
    return {"seconds": run["seconds"], "cpuSeconds": run["cpuSeconds"],
            "createSeconds": run["createSeconds"],
            "maxRssBytes": out["maxRssBytes"], "node": out["node"],
            "dshSession": out["dshSession"], "messages": run["messages"]}


def _warm(files: LogFiles) -> None:
    for path in (files.jsonl, files.session, files.zstd):
        with open(path, "rb") as handle:
            while handle.read(1 << 24):
                pass


#: Every row, in the order a round measures them.
ROWS = ("floor-json", "floor-orjson", "dshkit", "dshkit-session", "dshkit-zstd", "naive-typed",
        "dsh")
#: ``--only session``: the session-log rows of dshkit and the parse floor.
SESSION_ROWS = ("floor-json", "floor-orjson", "dshkit", "dshkit-session", "dshkit-zstd")


def _print_round(series: dict[str, Series], rows: tuple[str, ...]) -> None:
    """The figures of the round just measured, with the ratios to its floor."""
    if not ("floor-json" in rows and "floor-orjson" in rows):
        return
    floor = min(series["floor-json"].seconds[-1], series["floor-orjson"].seconds[-1])
    cpu_floor = min(series["floor-json"].cpu[-1], series["floor-orjson"].cpu[-1])
    parts = [f"{name} {data.seconds[-1]:.3f} s ({data.seconds[-1] / floor:.2f}x, cpu "
             f"{data.cpu[-1] / cpu_floor:.2f}x)" for name, data in series.items()
             if name in rows and data.seconds and len(data.seconds) == len(
                 series["floor-json"].seconds)]
    print("    " + "; ".join(parts), flush=True)


def measure(files: LogFiles, rounds: int, dsh_missing: str, dsh_rounds: int,
            rows: tuple[str, ...] = ROWS) -> dict[str, Series]:
    """Every row of ``rows`` at one size, ``rounds`` times, interleaved."""
    sample = max(1, files.events // NAIVE_SAMPLE_EVENTS)
    series = {name: Series(name) for name in ROWS}
    series["naive-typed"].note = (f"every {sample}th event ({files.events // sample} events), "
                                  "scaled to the whole log")
    series["dsh"].missing = dsh_missing
    for name in ROWS:
        if name not in rows:
            series[name].missing = "left out of this run"
    _warm(files)
    paths = {"floor-json": files.jsonl, "floor-orjson": files.jsonl, "dshkit": files.jsonl,
             "dshkit-session": files.session, "dshkit-zstd": files.zstd}
    for number in range(rounds):
        print(f"  round {number + 1}/{rounds}", flush=True)
        for name, path in paths.items():
            if name in rows:
                series[name].add(_worker("dshkit" if name.startswith("dshkit") else name,
                                         path))
        if "naive-typed" in rows:
            series["naive-typed"].add(_worker("naive-typed", files.jsonl, sample))
        _print_round(series, rows)
        if not series["dsh"].missing and number < dsh_rounds:
            try:
                series["dsh"].add(_dsh(files.jsonl))
            except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as exc:
                series["dsh"].missing = f"DSH run failed: {exc}"
    if series["dsh"].seconds and len(series["dsh"].seconds) < rounds:
        series["dsh"].note = f"{len(series['dsh'].seconds)} run(s): one takes long"
    return series


# -- figures -----------------------------------------------------------------------------------


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _floors(series: dict[str, Series], cpu: bool = False) -> list[float]:
    """The parse floor of each round: the faster of the two parsers in that round."""
    json_runs, orjson_runs = (
        (series["floor-json"].cpu, series["floor-orjson"].cpu) if cpu
        else (series["floor-json"].seconds, series["floor-orjson"].seconds))
    return [min(a, b) for a, b in zip(json_runs, orjson_runs, strict=True)]


def _ratios(numerators: list[float], denominators: list[float]) -> list[float]:
    return [a / b for a, b in zip(numerators, denominators, strict=False)]


def summarise(size: int, files: LogFiles, series: dict[str, Series]) -> dict[str, Any]:
    floors = _floors(series)
    cpu_floors = _floors(series, cpu=True)
    rows = []
    for name, data in series.items():
        row: dict[str, Any] = {"name": name, "note": data.note}
        if data.missing or not data.seconds or not floors:
            row["missing"] = data.missing or "not measured"
        else:
            row["seconds"] = _stats(data.seconds)
            row["runs"] = data.seconds
            row["toFloor"] = _stats(_ratios(data.seconds, floors))
            row["cpuSeconds"] = _stats(data.cpu)
            row["cpuToFloor"] = _stats(_ratios(data.cpu, cpu_floors))
            row["maxRssBytes"] = max(data.rss)
        rows.append(row)
    return {"events": size, "bytes": {"jsonl": files.jsonl.stat().st_size,
                                      "session": files.session.stat().st_size,
                                      "zstd": files.zstd.stat().st_size},
            "floorSeconds": _stats(floors) if floors else None, "rows": rows}


def targets(results: dict[int, dict[str, Any]], series: dict[int, dict[str, Series]],
            quick: bool) -> list[Target]:
    big = max(results)
    small = min(results)
    where = f"{big:,} events"
    out = []
    dshkit_big = series[big]["dshkit"]
    floors_big = series[big]["floor-json"].seconds and series[big]["floor-orjson"].seconds
    if dshkit_big.seconds and floors_big:
        out.append(Target(
            f"dshkit validate --level load + fold / parse floor ({where})", "≤ 2.5",
            _stats(_ratios(dshkit_big.seconds, _floors(series[big]))), lambda v: v <= 2.5,
            cpu=_stats(_ratios(dshkit_big.cpu, _floors(series[big], cpu=True)))))
    else:
        out.append(Target(f"dshkit validate --level load + fold / parse floor ({where})",
                          "≤ 2.5", None, None, missing="left out of this run"))
    naive = series[big]["naive-typed"]
    if naive.seconds and dshkit_big.seconds:
        out.append(Target(
            f"naive per-event jsonschema (typed) / dshkit ({where})", "≥ 10",
            _stats(_ratios(naive.seconds, dshkit_big.seconds)), lambda v: v >= 10,
            cpu=_stats(_ratios(naive.cpu, dshkit_big.cpu))))
    else:
        out.append(Target(f"naive per-event jsonschema (typed) / dshkit ({where})", "≥ 10",
                          None, None, missing=naive.missing or "not measured"))
    dsh = series[small]["dsh"]
    if dsh.seconds and series[small]["dshkit"].seconds:
        out.append(Target(
            f"dshkit / DSH Session.create + deriveMessages ({small:,} events)", "< 1.0",
            _stats(_ratios(series[small]["dshkit"].seconds, dsh.seconds)), lambda v: v < 1.0,
            cpu=_stats(_ratios(series[small]["dshkit"].cpu, dsh.cpu))))
    else:
        out.append(Target(f"dshkit / DSH ({small:,} events)", "< 1.0", None, None,
                          missing=dsh.missing or "not measured"))
    if quick or small == big:
        out.append(Target("peak memory 1,000,000 / 100,000 events", "≤ 1.5", None, None,
                          missing="--quick run (one size)"))
    elif not (series[big]["dshkit"].rss and series[small]["dshkit"].rss):
        out.append(Target("peak memory 1,000,000 / 100,000 events", "≤ 1.5", None, None,
                          missing="left out of this run"))
    else:
        ratio = max(series[big]["dshkit"].rss) / max(series[small]["dshkit"].rss)
        out.append(Target(f"dshkit peak memory {big:,} / {small:,} events", "≤ 1.5",
                          {"median": ratio, "min": ratio, "max": ratio}, lambda v: v <= 1.5))
    return out


# -- component benchmarks ------------------------------------------------------------------------


def components(quick: bool) -> list[dict[str, Any]]:
    """The memory provider, query index and start-up benchmarks (``bench/memory_bench.py``,
    ``bench/query_bench.py``, ``bench/startup_bench.py``), when present: each gives rows with
    their own goals."""
    sections: list[dict[str, Any]] = []
    for module, title, options in (
            ("memory_bench", "Memory provider (10,000 entries)", {}),
            ("query_bench", f"Session-query index ({SIZES[0] if quick else SIZES[-1]:,} events)",
             {"events": SIZES[0] if quick else SIZES[-1]}),
            ("startup_bench", "Command-line start-up (dshkit validate, one-line log)", {})):
        if not (HERE / f"{module}.py").exists():
            continue
        print(f"{title}", flush=True)
        try:
            bench = __import__(module)
            rows = bench.main(quiet=True, **options)
            sections.append({"title": title, "rows": rows})
        except Exception as exc:  # a component bench that fails is reported, not fatal
            sections.append({"title": title, "rows": [],
                             "missing": f"{type(exc).__name__}: {exc}"})
    return sections


# -- the machine -------------------------------------------------------------------------------


def _version(module: str) -> str:
    try:
        from importlib.metadata import version

        return version(module)
    except Exception:  # not installed
        return "not installed"


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    memory = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    node = shutil.which("node")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True,
                                  check=False).stdout.strip() if node else "not installed"
    return {
        "platform": platform.platform(), "cpu": cpu, "cores": os.cpu_count(),
        "memory": memory, "python": platform.python_version(),
        "implementation": platform.python_implementation(), "node": node_version,
        "dshkit": _version("dshkit"), "orjson": _version("orjson"),
        "jsonschema": _version("jsonschema"), "zstandard": _version("zstandard"),
        "dshSession": _dsh_version(),
    }


def _dsh_version() -> str:
    package = DSH / "node_modules" / "@deepseek-ai" / "dsh-session" / "package.json"
    try:
        return str(json.loads(package.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return "not installed"


# -- logs --------------------------------------------------------------------------------------


def logs(size: int, seed: int, cache: Path) -> LogFiles:
    """The generated log, written once per generator version and reused."""
    digest = hashlib.sha256((HERE / "generate.py").read_bytes()).hexdigest()[:12]
    directory = cache / f"{size}-s{seed}-{digest}-{_version('dshkit')}"
    done = directory / "done"
    if done.exists():
        return LogFiles(events=size, jsonl=directory / "events.jsonl",
                        session=directory / "session.jsonl",
                        zstd=directory / "session.jsonl.zstd")
    shutil.rmtree(directory, ignore_errors=True)
    start = time.perf_counter()
    files = write_logs(directory, size, seed)
    done.write_text("")
    print(f"  generated {size:,} events in {time.perf_counter() - start:.0f} s", flush=True)
    return files


# -- main --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100,000 events only")
    parser.add_argument("--rounds", type=int, default=5, help="runs of each measurement")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=str(ROOT / "build" / "bench.json"))
    parser.add_argument("--cache", default=str(ROOT / "build" / "bench-logs"))
    parser.add_argument("--spec", default=str(ROOT / "spec" / "performance.md"),
                        help="page whose results section a full run rewrites")
    parser.add_argument("--no-dsh", action="store_true", help="leave DSH out")
    parser.add_argument("--no-components", action="store_true",
                        help="leave the memory provider and query index benchmarks out")
    parser.add_argument("--only", choices=("session",),
                        help="session: only the session-log rows of dshkit and the parse floor "
                             "(no naive jsonschema, no DSH, no component benchmarks)")
    parser.add_argument("--rows", default="",
                        help=f"comma-separated rows to measure (of {', '.join(ROWS)}); "
                             "implies no component benchmarks")
    parser.add_argument("--size", type=int, action="append", choices=SIZES,
                        help="measure this log size only (repeatable)")
    args = parser.parse_args()
    started = time.perf_counter()
    sizes = tuple(args.size) if args.size else SIZES[:1] if args.quick else SIZES
    rows: tuple[str, ...] = ROWS
    if args.only == "session":
        rows = SESSION_ROWS
    if args.rows:
        rows = tuple(name.strip() for name in args.rows.split(",") if name.strip())
        unknown = sorted(set(rows) - set(ROWS))
        if unknown:
            parser.error(f"unknown rows: {', '.join(unknown)}")
    partial = rows != ROWS or sizes != SIZES
    dsh_missing = ("left out (--no-dsh)" if args.no_dsh else
                   "left out of this run" if "dsh" not in rows else _dsh_ready())
    if dsh_missing:
        print(f"DSH: not measured: {dsh_missing}", flush=True)
    results: dict[int, dict[str, Any]] = {}
    all_series: dict[int, dict[str, Series]] = {}
    for size in sizes:
        print(f"{size:,} events", flush=True)
        files = logs(size, args.seed, Path(args.cache))
        dsh_rounds = args.rounds if size <= 100_000 else 1
        all_series[size] = measure(files, args.rounds, dsh_missing, dsh_rounds, rows)
        results[size] = summarise(size, files, all_series[size])
    goals = targets(results, all_series, args.quick)
    parts = [] if args.no_components or rows != ROWS else components(args.quick)
    info = machine()
    report = {"machine": info, "rounds": args.rounds, "quick": args.quick,
              "seconds": time.perf_counter() - started,
              "targets": [t.to_json() for t in goals],
              "sizes": {str(k): v for k, v in results.items()},
              "components": parts}
    text = markdown(report, goals)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(text)
    print(text)
    if not args.quick and not partial:
        update_spec(Path(args.spec), text)
        print(f"results written to {out}, {out.with_suffix('.md')} and {args.spec}")
    else:
        print(f"results written to {out} and {out.with_suffix('.md')} (quick or partial run: "
              "spec untouched)")
    print(f"bench took {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
