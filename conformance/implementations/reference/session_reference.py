"""The dshkit reference bound to the kit's ``session_reference`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

from dshkit.conformance.interface import JsonObject
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
from dshkit.reference.projection.errors import BUDGET_EXCEEDED
from dshkit.reference.query import SessionQueryError, load_session


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


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run one vector operation against the dshkit reference."""
    try:
        return _run(operation, input, params)
    except (SessionReferenceError, ProblemError) as exc:
        return _refusal(exc)


