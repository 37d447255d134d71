"""Suite ``session-ops``: session-log behaviour beyond the four operations of the
``session-log`` suite (spec ``session/*``): the typed layer, the folded request header, the
seed boundary, a live appender's surface, the writer and a committed repair.

The ``session-log`` suite keeps its four operations (``validate``, ``fold``, ``repair``,
``load``), which the kit's first implementation interface answers; these operations live in
their own suite so that an implementation of that interface is not asked for them.

Every operation takes one log as input (``{"events"}``, ``{"text"}`` or ``{"base64"}``) and
its other arguments in ``params``:

- ``session.offer`` (params ``offers``: events): folds the log, then offers each event to the
  surface fold as a live appender does; an event the fold refuses is not appended and leaves
  the fold as it was. Result ``{"valid": true, "offers": [null | {"code"}...], "nodes",
  "replaceGeneration"}``.
- ``session.request-header`` (params ``through``?: seq, ``initial``?: a header the fold starts
  from): ``{"valid": true, "header": object | null}``, the folded request header of the log
  (or of its prefix through ``through``).
- ``session.seed-boundary``: ``{"valid": true, "endSeed": seq | null, "openBracket": seq |
  null}``: the seed boundary (the last ``session/end-seed``) and the ``compaction/start`` that
  is still open after it, if any.
- ``session.typed`` (params ``level``, default ``seed``): the level verdict as ``validate``
  gives it plus ``"typed": [{"code", "seq", "pointer"}...]``, the typed layer's problems.
- ``session.write`` (params ``header``, ``batches``: the sizes of the append batches, the
  first one written with the header when the file is created; ``pack``: bool, default true;
  ``existing``?: text already stored under the final name): ``{"valid": true, "files":
  [text after each batch written], "refusedAt": null}``; when the writer refuses a batch (the
  specification names no code for that), ``refusedAt`` is its index and ``"file"`` the stored
  text afterwards.
- ``session.repair-file``: repairs the stored file in place, as a loader that commits its
  repair does; ``{"valid": true, "closers", "file"}`` or a refusal with ``"file"`` (the
  stored text afterwards, or ``{"base64"}`` when it is not UTF-8).
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dshkit.reference.compaction import CompactionError, LogView
from dshkit.reference.problems import Problem, ProblemError
from dshkit.reference.session.levels import Level
from dshkit.reference.session.recovery import repair_path
from dshkit.reference.session.surface import SurfaceFold
from dshkit.reference.session.validation import validate_events, validate_path
from dshkit.reference.session.writer import append_events, create_log

__all__ = ["CAPABILITIES", "CAPABILITY", "OPERATIONS", "SUITE", "compare", "reference",
           "requires"]

JsonObject = dict[str, Any]
SUITE = "session-ops"
CAPABILITY = "session-ops"
OPERATIONS = ("session.offer", "session.request-header", "session.seed-boundary",
              "session.typed", "session.write", "session.repair-file")
CAPABILITIES = {
    "session-ops.typed": "the typed layer: closed payload shapes of the 48 known types "
                         "(session.typed)",
    "session-ops.fold": "state folded from a log besides the surface: the request header and "
                        "the seed boundary (session.request-header, session.seed-boundary)",
    "session-ops.append": "a live appender: events offered one by one to the surface fold "
                          "(session.offer)",
    "session-ops.write": "the writer: creating and appending to a session file, committing a "
                         "repair to it (session.write, session.repair-file)",
}
_NEEDS = {"session.typed": "session-ops.typed", "session.request-header": "session-ops.fold",
          "session.seed-boundary": "session-ops.fold", "session.offer": "session-ops.append",
          "session.write": "session-ops.write", "session.repair-file": "session-ops.write"}


def requires(case: JsonObject) -> list[str]:
    """The capability a case needs (one per operation)."""
    return [_NEEDS.get(str(case.get("operation")), CAPABILITY)]


def _error(problem: Problem) -> JsonObject:
    return {"code": problem.code, "seq": problem.seq, "line": problem.line,
            "message": problem.message, "requirement": problem.requirement}


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


def reference(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run the dshkit reference on one case."""
    run = _RUN.get(operation)
    if run is None:
        return {"valid": False, "error": {"code": "UNKNOWN_OPERATION",
                                          "message": f"unknown operation {operation!r}"}}
    return run(input, params)


# -- comparison ---------------------------------------------------------------------------------

def _equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans apart from numbers, member order ignored."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 300 else text[:297] + "..."


def _records(text: str) -> list[Any] | str:
    """The records of a file's text, one JSON value per line; a string says what is wrong."""
    if not text.endswith("\n"):
        return "the file does not end with a line feed"
    out = []
    for number, line in enumerate(text.split("\n")[:-1], start=1):
        try:
            out.append(json.loads(line))
        except ValueError:
            return f"line {number} is not one JSON text"
    return out


def _compare_files(expect: list[Any], files: Any) -> str:
    """``files`` (texts after each batch) against ``expect`` (records after each batch): every
    text ends with a line feed and starts with the text before it, and its lines are the
    expected records."""
    if not isinstance(files, list) or len(files) != len(expect):
        return f"files: expected {len(expect)} file states, got {_show(files)}"
    previous = ""
    for index, (want, text) in enumerate(zip(expect, files, strict=True)):
        if not isinstance(text, str):
            return f"files[{index}]: not a text: {_show(text)}"
        if not text.startswith(previous):
            return f"files[{index}]: the text written before is not kept unchanged at its start"
        previous = text
        records = _records(text)
        if isinstance(records, str):
            return f"files[{index}]: {records}"
        if not _equal(records, want):
            return f"files[{index}]: records {_show(records)}, expected {_show(want)}"
    return ""


def _compare_typed(expect: list[JsonObject], found: Any) -> str:
    """Each expected problem is reported (pointer compared when the expectation gives it), and
    problems are reported for exactly the expected events."""
    if not isinstance(found, list):
        return f"typed: expected a list of problems, got {_show(found)}"
    for want in expect:
        if not any(isinstance(p, dict) and all(p.get(k) == v for k, v in want.items())
                   for p in found):
            return f"typed: no problem {_show(want)} among {_show(found)}"
    wanted = {w.get("seq") for w in expect}
    reported = {p.get("seq") for p in found if isinstance(p, dict)}
    if reported != wanted:
        return f"typed: problems reported for seqs {sorted(reported, key=str)}, expected " \
               f"{sorted(wanted, key=str)}"
    return ""


def compare(expect: JsonObject, result: JsonObject) -> str:
    """``""`` when ``result`` meets ``expect``: the same validity; for a refusal the error's
    ``code``, ``seq`` and ``line`` when the expectation gives them; then each member the
    expectation names: ``files`` (the texts after each batch: each ends with a line feed,
    starts with the text before it, and its lines are the expected records), ``file`` (exactly),
    ``fileRecords`` (the lines of ``file``), ``typed`` (each expected problem reported, and
    problems for exactly the expected seqs), and ``offers``, ``nodes``, ``replaceGeneration``,
    ``header``, ``endSeed``, ``openBracket``, ``closers``, ``refusedAt`` (as JSON values)."""
    if result.get("valid") is not expect.get("valid"):
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect.get('valid')}, got {_show(got)}"
    if expect.get("valid") is False:
        want, error = expect.get("error", {}), result.get("error") or {}
        for key in ("code", "seq", "line"):
            if key in want and error.get(key) != want[key]:
                return (f"expected error {key} {want[key]!r}, got {error.get(key)!r} "
                        f"({error.get('message', '')})")
    if "files" in expect:
        problem = _compare_files(expect["files"], result.get("files"))
        if problem:
            return problem
    if "file" in expect and not _equal(result.get("file"), expect["file"]):
        return f"file: expected {_show(expect['file'])}, got {_show(result.get('file'))}"
    if "fileRecords" in expect:
        text = result.get("file")
        records = _records(text) if isinstance(text, str) else "the file is not a text"
        if isinstance(records, str):
            return f"file: {records}"
        if not _equal(records, expect["fileRecords"]):
            return f"file: records {_show(records)}, expected {_show(expect['fileRecords'])}"
    if "typed" in expect:
        problem = _compare_typed(expect["typed"], result.get("typed"))
        if problem:
            return problem
    for key in ("offers", "nodes", "replaceGeneration", "header", "endSeed", "openBracket",
                "closers", "refusedAt"):
        if key in expect and not _equal(result.get(key, "<absent>"), expect[key]):
            return f"{key}: expected {_show(expect[key])}, got {_show(result.get(key))}"
    return ""
