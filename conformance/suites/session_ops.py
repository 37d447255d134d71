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

import json
from typing import Any

__all__ = ["CAPABILITIES", "CAPABILITY", "OPERATIONS", "SUITE", "compare", "requires"]

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
    ``code``, ``seq``, ``line``, ``pointer``, ``requirement`` and ``level`` when the
    expectation gives them; then each member the
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
        for key in ("code", "seq", "line", "pointer", "requirement", "level"):
            if key in want and error.get(key, "<absent>") != want[key]:
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
