"""Benchmarks as ratios against baselines measured in the same run (``nox -s bench``).

Figures: the parse floor (stdlib ``json.loads`` per line), dshkit ``validate --level load``
plus fold, and a naive per-event ``jsonschema`` validation of the envelope schema. Each is
the median of several runs; min and max are shown because these machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from generate import realistic_log

from dshkit.reference.session import jsoncodec
from dshkit.reference.session.folding import fold_path
from dshkit.reference.session.levels import Level
from dshkit.reference.session.validation import validate_path


def _time(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def parse_floor(path: Path) -> None:
    with open(path, "rb") as handle:
        for line in handle:
            json.loads(line)


def dshkit_validate_and_fold(path: Path) -> None:
    report = validate_path(path, Level.LOAD)
    assert report.valid, report.errors
    assert fold_path(path).valid


def naive_jsonschema(path: Path) -> None:
    from jsonschema import Draft202012Validator

    schema = {"type": "object", "required": ["type", "seq", "time", "data"],
              "properties": {"type": {"type": "string"}, "seq": {"type": "integer", "minimum": 0},
                             "time": {"type": "integer"}}}
    validator = Draft202012Validator(schema)
    with open(path, "rb") as handle:
        for line in handle:
            validator.validate(json.loads(line))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="build/bench.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        with open(path, "w", encoding="utf-8") as out:
            for event in realistic_log(args.events):
                out.write(jsoncodec.dumps(event) + "\n")
        size = path.stat().st_size
        floor = _time(lambda: parse_floor(path), args.repeat)
        figures = {
            "json.loads per line (parse floor)": floor,
            "dshkit validate --level load + fold": _time(
                lambda: dshkit_validate_and_fold(path), args.repeat),
            "naive per-event jsonschema (envelope)": _time(
                lambda: naive_jsonschema(path), args.repeat),
        }
    base = statistics.median(floor)
    print(f"log: {args.events} events, {size / 1e6:.1f} MB; medians of {args.repeat} runs")
    print("| measurement | median s | min s | max s | ratio to parse floor |")
    print("| --- | --- | --- | --- | --- |")
    rows = []
    for name, runs in figures.items():
        median = statistics.median(runs)
        rows.append({"name": name, "median": median, "min": min(runs), "max": max(runs),
                     "ratio": median / base})
        print(f"| {name} | {median:.3f} | {min(runs):.3f} | {max(runs):.3f} | "
              f"{median / base:.2f}x |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"events": args.events, "bytes": size,
                                          "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
