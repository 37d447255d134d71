"""The dshkit reference bound to the kit's ``session_ops`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dshkit.conformance.interface import JsonObject
from dshkit.reference.compaction import CompactionError, LogView
from dshkit.reference.problems import Problem, ProblemError
from dshkit.reference.session.levels import Level
from dshkit.reference.session.recovery import repair_path
from dshkit.reference.session.surface import SurfaceFold
from dshkit.reference.session.validation import validate_events, validate_path
from dshkit.reference.session.writer import append_events, create_log


def _error(problem: Problem) -> JsonObject:
    return problem.to_json()


def _bytes(log: JsonObject) -> bytes:
    if "base64" in log:
        return base64.b64decode(str(log["base64"]))
    return str(log["text"]).encode("utf-8")


def _stored(data: bytes) -> Any:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


@contextmanager
def _directory() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dshkit-case-") as name:
        yield Path(name)


def _offer(log: JsonObject, params: JsonObject) -> JsonObject:
    fold = SurfaceFold()
    for event in log["events"]:
        try:
            fold.push(event)
        except ProblemError as exc:
            error = _error(exc.problem)
            if error["seq"] is None and isinstance(event, dict):
                error["seq"] = event.get("seq")
            return {"valid": False, "error": error}
    outcomes: list[JsonObject | None] = []
    for event in params.get("offers", []):
        try:
            fold.push(event)
        except ProblemError as exc:
            outcomes.append({"code": exc.problem.code})
        else:
            outcomes.append(None)
    return {"valid": True, "offers": outcomes, "nodes": list(fold.nodes),
            "replaceGeneration": fold.replace_generation}


def _view(events: list[Any], initial: Any = None) -> LogView | JsonObject:
    view = LogView()
    if initial is not None:
        view.header = initial
    try:
        for event in events:
            view.push(event)
    except CompactionError as exc:  # the log does not fold: the surface problem's code
        detail = exc.to_json()
        return {"valid": False, "error": {"code": str(detail.get("session") or exc.code),
                                          "seq": detail.get("seq"), "message": exc.message}}
    return view


def _request_header(log: JsonObject, params: JsonObject) -> JsonObject:
    events = list(log["events"])
    if "through" in params:
        events = [e for e in events if isinstance(e, dict) and e.get("seq", 0) <= params["through"]]
    view = _view(events, params.get("initial"))
    if isinstance(view, dict):
        return view
    return {"valid": True, "header": view.header}


def _seed_boundary(log: JsonObject, params: JsonObject) -> JsonObject:
    del params
    view = _view(list(log["events"]))
    if isinstance(view, dict):
        return view
    start = view.unmatched_start
    return {"valid": True, "endSeed": view.latest_end_seed,
            "openBracket": start["seq"] if view.busy and start is not None else None}


def _typed(log: JsonObject, params: JsonObject) -> JsonObject:
    level = Level(params.get("level", "seed"))
    if "events" in log:
        report = validate_events(log["events"], level, typed=True)
    else:
        with _directory() as directory:
            path = directory / "session.jsonl"
            path.write_bytes(_bytes(log))
            report = validate_path(path, level, typed=True)
    out: JsonObject = {"valid": report.valid}
    if report.errors:
        out["error"] = _error(report.errors[0])
    out["typed"] = [{"code": p.code, "seq": p.seq, "pointer": p.pointer}
                    for p in report.typed or ()]
    return out


def _write(log: JsonObject, params: JsonObject) -> JsonObject:
    events = list(log["events"])
    sizes = [int(n) for n in params.get("batches", [len(events)])]
    pack = bool(params.get("pack", True))
    batches, start = [], 0
    for size in sizes:
        batches.append(events[start:start + size])
        start += size
    with _directory() as directory:
        path = directory / "session.jsonl"
        if "existing" in params:
            path.write_bytes(str(params["existing"]).encode("utf-8"))
        files: list[Any] = []
        try:
            for index, batch in enumerate(batches):
                if index == 0:
                    create_log(path, params["header"], batch, pack_chunks=pack)
                else:
                    append_events(path, batch, compressed=False, pack_chunks=pack)
                files.append(_stored(path.read_bytes()))
        except ProblemError as exc:  # the writer refused this batch: report what is stored
            stored = _stored(path.read_bytes()) if path.exists() else None
            return {"valid": True, "files": files, "refusedAt": index,
                    "refusal": _error(exc.problem), "file": stored}
        return {"valid": True, "files": files, "refusedAt": None}


def _repair_file(log: JsonObject, params: JsonObject) -> JsonObject:
    del params
    with _directory() as directory:
        path = directory / "session.jsonl"
        path.write_bytes(_bytes(log))
        os.chmod(path, 0o600)
        report = repair_path(path, write=True)
        stored = _stored(path.read_bytes())
    if report.errors:
        return {"valid": False, "error": _error(report.errors[0]), "file": stored}
    return {"valid": True, "closers": list(report.closers), "file": stored}


_RUN = {"session.offer": _offer, "session.request-header": _request_header,
        "session.seed-boundary": _seed_boundary, "session.typed": _typed,
        "session.write": _write, "session.repair-file": _repair_file}


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run the dshkit reference on one case."""
    handler = _RUN.get(operation)
    if handler is None:
        return {"valid": False, "error": {"code": "UNKNOWN_OPERATION",
                                          "message": f"unknown operation {operation!r}"}}
    return handler(input, params)
