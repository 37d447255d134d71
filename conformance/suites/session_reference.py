"""The session-reference conformance suite: runs vectors through the dshkit reference's
public API (``dshkit.reference.projection``).

A result is ``{"valid": true, ...}`` or ``{"valid": false, "error": {"code", "message"}}``.
``compare`` checks every member of ``expect`` for deep equality with the result; members the
vector does not name are not compared. A ``SESSION_REFERENCE_*`` refusal code must be one of
the closed set of REF-ERR-001. Three expectation members are not compared for equality: ``sizeAtMost`` (the
result's ``size`` is at most this), ``statsInclude`` (these members of ``stats`` are equal)
and ``conversationRoles`` (the roles of ``data.conversation``, in order).

``reference.prepare-logs`` (REF-SCO-002) prepares a message from stored logs: the host writes
``input.logs`` (``{file name: text | {"base64"}}``) into a fresh directory, reads each file as
a host that serves references reads a stored session (read only, in the implementation's own
way), and answers the implementation's reads with those sessions by id. It takes
``targetId``, ``content`` and ``references`` as ``reference.prepare`` does. Its result (or its
refusal) carries ``files``: every file in the directory afterwards with its content, which
must be the logs as written.

``reference.prepare`` takes ``params.cancel``: the host cancels the preparation
``before-reads``, ``during-reads`` (the first read fails because of the cancellation) or
``after-reads`` (once the last read has returned). Its result carries ``reads``: the session
ids the host's resolver was asked for, sorted (reads may run in parallel).
"""

from __future__ import annotations

import base64
import json
import tempfile
from pathlib import Path
from typing import Any

from dshkit.reference.problems import ProblemError
from dshkit.reference.projection import (
    ReferenceConfig,
    SessionReferenceError,
    SurfaceSnapshot,
    decode_uri,
    encode_uri,
    format_mention,
    head_tail,
    list_candidates,
    normalize_references,
    parse_text,
    prepare,
    render_payload,
    retain,
    snapshot_of_log,
    snapshots_resolver,
    tag_safe,
    truncate_with_notice,
)
from dshkit.reference.projection.errors import BUDGET_EXCEEDED, CODES
from dshkit.reference.query import SessionQueryError, load_session

SUITE = "session-reference"
CAPABILITY = "session-reference"
OPERATIONS: tuple[str, ...] = (
    "reference.uri.encode",
    "reference.uri.decode",
    "reference.uri.roundtrip",
    "reference.mention.format",
    "reference.text.parse",
    "reference.normalize",
    "reference.prepare",
    "reference.prepare-logs",
    "reference.retain",
    "reference.truncate",
    "reference.head-tail",
    "reference.tag-safe",
    "reference.snapshot",
    "reference.config",
    "reference.candidates",
)

JsonObject = dict[str, Any]


def _config(params: JsonObject) -> ReferenceConfig:
    return ReferenceConfig.from_json({k: params[k] for k in
                                      ("maxReferences", "candidateLimit", "maxReferenceBytes")
                                      if k in params})


class _Cancel:
    """The host's cancellation signal."""

    def __init__(self) -> None:
        self.cancelled = False

    def is_set(self) -> bool:
        return self.cancelled


def _prepare(data: JsonObject, params: JsonObject) -> JsonObject:
    sessions = {key: SurfaceSnapshot.from_json(value)
                for key, value in data.get("sessions", {}).items()}
    resolver = snapshots_resolver(sessions)
    cancel, when = _Cancel(), params.get("cancel")
    reads: list[str] = []
    wanted = len({str(r.get("sessionId")) for r in data.get("references", [])
                  if isinstance(r, dict)})

    def read(session_id: str) -> SurfaceSnapshot:
        reads.append(session_id)
        if when == "during-reads":
            cancel.cancelled = True
            raise LookupError("the read was aborted: the preparation was cancelled")
        snapshot = resolver(session_id)
        if when == "after-reads" and len(reads) >= wanted:
            cancel.cancelled = True
        return snapshot

    if when == "before-reads":
        cancel.cancelled = True
    try:
        prepared = prepare(data["targetId"], data.get("content", []),
                           data.get("references", []), read, _config(params), cancel=cancel,
                           new_id=lambda: "context")
    except (SessionReferenceError, ProblemError) as exc:
        refused = _refusal(exc)
        refused["reads"] = sorted(reads)
        return refused
    out: JsonObject = {"valid": True, "content": prepared.content, "context": None,
                       "reads": sorted(reads)}
    if prepared.additional_context is not None:
        context = prepared.additional_context
        out["context"] = {"role": context["role"], "source": context["source"]}
        out["prompt"] = prepared.prompt
        out["payload"] = render_payload([s.retained.data for s in prepared.sources])
    return out


def _files(root: Path) -> JsonObject:
    """Every file under ``root`` with its content (text, or ``{"base64"}`` when not UTF-8)."""
    out: JsonObject = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        try:
            out[path.relative_to(root).as_posix()] = data.decode("utf-8")
        except UnicodeDecodeError:
            out[path.relative_to(root).as_posix()] = {
                "base64": base64.b64encode(data).decode("ascii")}
    return out


def _prepare_logs(data: JsonObject, params: JsonObject) -> JsonObject:
    with tempfile.TemporaryDirectory(prefix="dshkit-case-") as name:
        root = Path(name)
        for file_name, value in data["logs"].items():
            raw = (base64.b64decode(value["base64"]) if isinstance(value, dict)
                   else str(value).encode("utf-8"))
            (root / file_name).write_bytes(raw)
        snapshots: dict[str, SurfaceSnapshot] = {}
        for file_name in data["logs"]:
            try:
                loaded = load_session(root / file_name)
            except SessionQueryError:
                continue  # a log that cannot be read is a session the host cannot serve
            snapshots.setdefault(loaded.session_id,
                                 snapshot_of_log(loaded.header, loaded.events))
        resolver = snapshots_resolver(snapshots)
        try:
            prepared = prepare(data["targetId"], data.get("content", []),
                               data.get("references", []), resolver, _config(params),
                               new_id=lambda: "context")
        except (SessionReferenceError, ProblemError) as exc:
            return {**_refusal(exc), "files": _files(root)}
        out: JsonObject = {"valid": True, "content": prepared.content, "context": None}
        if prepared.additional_context is not None:
            context = prepared.additional_context
            out["context"] = {"role": context["role"], "source": context["source"]}
            out["prompt"] = prepared.prompt
        out["files"] = _files(root)
        return out


def _retain(data: JsonObject, params: JsonObject) -> JsonObject:
    retained = retain(SurfaceSnapshot.from_json(data["snapshot"]), data["label"],
                      params["maxBytes"])
    if retained is None:
        raise SessionReferenceError(BUDGET_EXCEEDED, "referenced session snapshot cannot fit "
                                    "the byte budget")
    return {"valid": True, "data": retained.data, "stats": retained.stats.to_json(),
            "size": retained.size}


def _candidates(data: JsonObject) -> JsonObject:
    titles = data.get("titles", {})
    found = list_candidates(data["sessions"], data["target"], data.get("query", ""),
                            data.get("limit", _config({}).candidate_limit), titles.get)
    return {"valid": True, "candidates": [c.to_json() for c in found]}


def _snapshot(data: JsonObject) -> JsonObject:
    snapshot = snapshot_of_log(data["header"], data["events"])
    return {"valid": True, "capturedThroughSeq": snapshot.captured_through_seq,
            "surfaceSeqs": [e["seq"] for e in snapshot.events]}


def _run(operation: str, data: JsonObject, params: JsonObject) -> JsonObject:
    if operation == "reference.uri.encode":
        return {"valid": True, "uri": encode_uri(data["sessionId"])}
    if operation == "reference.uri.decode":
        return {"valid": True, "sessionId": decode_uri(data["uri"])}
    if operation == "reference.uri.roundtrip":
        return {"valid": True, "sessionId": decode_uri(encode_uri(data["sessionId"]))}
    if operation == "reference.mention.format":
        return {"valid": True, "mention": format_mention(data["sessionId"], data.get("label"))}
    if operation == "reference.text.parse":
        parsed = parse_text(data["text"])
        return {"valid": True, "text": parsed.text,
                "references": [{"sessionId": r.session_id, "label": r.label}
                               for r in parsed.references]}
    if operation == "reference.normalize":
        refs = normalize_references(data["targetId"], data["references"],
                                    _config(params).max_references)
        return {"valid": True, "references": [r.to_json() for r in refs]}
    if operation == "reference.prepare":
        return _prepare(data, params)
    if operation == "reference.prepare-logs":
        return _prepare_logs(data, params)
    if operation == "reference.retain":
        return _retain(data, params)
    if operation == "reference.truncate":
        cut = truncate_with_notice(data["text"], data["maxBytes"])
        return {"valid": True, "text": cut.text, "omittedBytes": cut.omitted}
    if operation == "reference.head-tail":
        kept = head_tail(data["text"], data["headBytes"], data["tailBytes"])
        return {"valid": True, "text": kept.text, "omittedBytes": kept.omitted}
    if operation == "reference.tag-safe":
        return {"valid": True, "text": tag_safe(data["value"])}
    if operation == "reference.snapshot":
        return _snapshot(data)
    if operation == "reference.config":
        config = ReferenceConfig.from_json(data["config"])
        return {"valid": True, "maxReferences": config.max_references,
                "candidateLimit": config.candidate_limit,
                "maxReferenceBytes": config.max_reference_bytes}
    if operation == "reference.candidates":
        return _candidates(data)
    return {"valid": False, "error": {"code": "UNKNOWN_OPERATION",
                                      "message": f"unknown operation {operation!r}"}}


def _refusal(exc: SessionReferenceError | ProblemError) -> JsonObject:
    if isinstance(exc, SessionReferenceError):
        return {"valid": False, "error": {"code": exc.code, "message": exc.message}}
    return {"valid": False, "error": {"code": exc.problem.code, "message": exc.problem.message}}


def reference(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run one vector operation against the dshkit reference."""
    try:
        return _run(operation, input, params)
    except (SessionReferenceError, ProblemError) as exc:
        return _refusal(exc)


#: REF-ERR-001: the closed set of refusal codes.
CLOSED_CODES = frozenset(CODES)


def _bounded(expect: JsonObject, result: JsonObject) -> str:
    """The expectation members that are not compared for equality."""
    if "sizeAtMost" in expect:
        size = result.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size > expect["sizeAtMost"]:
            return f"size {size!r} is not at most {expect['sizeAtMost']}"
    found = result.get("stats")
    stats: JsonObject = found if isinstance(found, dict) else {}
    for key, value in expect.get("statsInclude", {}).items():
        if key not in stats or not _equal(stats[key], value):
            return f"stats.{key}: expected {json.dumps(value)}, got {json.dumps(stats.get(key))}"
    if "conversationRoles" in expect:
        found = result.get("data")
        conversation = found.get("conversation") if isinstance(found, dict) else None
        roles = [m.get("role") for m in conversation if isinstance(m, dict)] \
            if isinstance(conversation, list) else None
        if roles != expect["conversationRoles"]:
            return f"conversation roles {roles}, expected {expect['conversationRoles']}"
    return ""


_NOT_EQUALITY = ("sizeAtMost", "statsInclude", "conversationRoles")


def compare(expect: JsonObject, result: JsonObject) -> str:
    """``""`` when ``result`` satisfies ``expect``, else a one-line difference."""
    if result.get("valid") is False:  # a session-log problem of a snapshot passes through
        code = str((result.get("error") or {}).get("code"))
        if code.startswith("SESSION_REFERENCE_") and code not in CLOSED_CODES:
            return f"refusal code {code!r} is not in the closed set of REF-ERR-001"
    if result.get("valid") is not expect.get("valid"):
        got = result.get("error") if not result.get("valid") else "valid"
        return f"expected valid={expect.get('valid')}, got {json.dumps(got, ensure_ascii=False)}"
    if expect.get("valid") is False:
        want, got = expect.get("error", {}), result.get("error") or {}
        for key, value in want.items():
            if got.get(key) != value:
                return f"error {key}: expected {value!r}, got {got.get(key)!r} " \
                       f"({got.get('message', '')})"
        for key, value in expect.items():  # what a refusal leaves behind (files)
            if key not in ("valid", "error") and not _equal(result.get(key), value):
                return f"{key}: expected {json.dumps(value, ensure_ascii=False)[:300]}, got " \
                       f"{json.dumps(result.get(key), ensure_ascii=False)[:300]}"
        return ""
    bounded = _bounded(expect, result)
    if bounded:
        return bounded
    for key, value in expect.items():
        if key == "valid" or key in _NOT_EQUALITY:
            continue
        if key not in result or not _equal(result[key], value):
            return (f"{key}: expected {json.dumps(value, ensure_ascii=False)[:300]}, got "
                    f"{json.dumps(result.get(key), ensure_ascii=False)[:300]}")
    return ""


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans apart from numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(
            _equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) in (int, float, str, type(None)) \
        and type(b) in (int, float, str, type(None))
