"""One measurement in a fresh process: ``python bench/workers.py KIND PATH [SAMPLE]``.

Prints one JSON object: ``{"kind", "seconds", "cpuSeconds", "maxRssBytes", ...}``.
``seconds`` (wall clock) covers only the measured work (not the interpreter start or the
imports), ``cpuSeconds`` is the processor time of the same work (less sensitive to a busy
machine); ``maxRssBytes`` is the peak resident memory of the whole process (``ru_maxrss``). Every worker runs with the interpreter's
default settings (the collector on); what dshkit does with the collector is dshkit's own.

Kinds:

* ``floor-json``, ``floor-orjson``: parse each line of the file and drop it (the parse floor);
* ``dshkit``: :func:`~dshkit.reference.session.single_pass.validate_and_fold`, what
  ``dshkit validate --level load --fold`` runs (level ``load`` and the loader's fold, one pass);
* ``naive-typed``: ``json.loads`` and the typed layer's full schema (``session/v0/event.json``)
  per event, ``jsonschema``'s ``validate``; it is about a thousand times slower than parsing, so
  it runs on every ``SAMPLE``-th line and ``seconds`` is scaled to the whole file (the sample
  keeps the file's mix of event types).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Result = dict[str, Any]


def floor_json(path: Path, sample: int) -> Result:
    start = time.perf_counter()
    with open(path, "rb") as handle:
        for line in handle:
            json.loads(line)
    return {"seconds": time.perf_counter() - start}


def floor_orjson(path: Path, sample: int) -> Result:
    import orjson

    loads = orjson.loads
    start = time.perf_counter()
    with open(path, "rb") as handle:
        for line in handle:
            loads(line)
    return {"seconds": time.perf_counter() - start}


def dshkit(path: Path, sample: int) -> Result:
    from dshkit.reference.session.single_pass import validate_and_fold

    start = time.perf_counter()
    both = validate_and_fold(path)
    seconds = time.perf_counter() - start
    if not both.valid or not both.fold.valid:
        raise SystemExit(f"the benchmark log does not validate: {both.validation.errors[:1]}")
    return {"seconds": seconds, "events": both.validation.events,
            "messages": len(both.fold.messages)}


def naive_typed(path: Path, sample: int) -> Result:
    from dshkit import schemas

    validator = schemas.validator("session/v0/event.json")
    total = 0
    measured = 0
    seconds = 0.0
    with open(path, "rb") as handle:
        for number, line in enumerate(handle):
            total += 1
            if number % sample:
                continue
            start = time.perf_counter()
            validator.validate(json.loads(line))
            seconds += time.perf_counter() - start
            measured += 1
    return {"seconds": seconds * total / max(measured, 1), "sampledEvents": measured,
            "events": total}


KINDS: dict[str, Callable[[Path, int], Result]] = {
    "floor-json": floor_json, "floor-orjson": floor_orjson, "dshkit": dshkit,
    "naive-typed": naive_typed}


def main(argv: list[str]) -> int:
    kind, path = argv[0], Path(argv[1])
    sample = int(argv[2]) if len(argv) > 2 else 1
    cpu = time.process_time()
    result = KINDS[kind](path, sample)
    result["cpuSeconds"] = time.process_time() - cpu
    if kind == "naive-typed":  # scaled to the whole log like its wall-clock figure
        result["cpuSeconds"] *= result["events"] / max(result["sampledEvents"], 1)
    result["kind"] = kind
    result["maxRssBytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
