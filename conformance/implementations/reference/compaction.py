"""The dshkit reference bound to the kit's ``compaction`` suite: :func:`run` answers one case
(what ``--impl reference`` runs for the suite's operations)."""

from __future__ import annotations

import base64
import os
import tempfile
from pathlib import Path
from typing import Any

from dshkit.conformance.interface import JsonObject
from dshkit.reference.compaction import (
    BracketTrace,
    CompactionError,
    LogView,
    PricedNode,
    apply_to_path,
    boundaries,
    check_brackets,
    compact_now,
    estimate_content,
    estimate_header,
    estimate_message,
    frame_summary,
    node_delta,
    overflow_retry,
    plan,
    prune_content,
    resolve_config,
    resolve_prune_config,
    scale,
    select_range,
    summarizer_from_json,
    target_policy,
)
from dshkit.reference.compaction.transaction import DuringSummary


def _deltas(input: JsonObject) -> list[tuple[int, int]]:
    """Surface nodes as ``(seq, delta)``: abbreviated ``{seq, type, calls?}`` nodes, or the
    current surface of a full log."""
    if "surface" in input:
        out = []
        for node in input["surface"]:
            kind = node["type"]
            delta = int(node.get("calls", 0)) if kind == "assistant/message" else (
                -1 if kind == "tool/result" else 0)
            out.append((int(node["seq"]), delta))
        return out
    view = LogView.of(_numbered(input["events"]))
    return [(seq, node_delta(view.event(seq))) for seq in view.nodes]


def _numbered(events: list[Any]) -> list[Any]:
    """Abbreviated events get ``seq`` = their index and ``time`` 0 when they lack them."""
    out = []
    for index, event in enumerate(events):
        if isinstance(event, dict):
            event = {"seq": index, "time": 0, **event} if "seq" not in event else event
        out.append(event)
    return out


def _error(exc: CompactionError) -> JsonObject:
    return {"valid": False, "error": exc.to_json()}


def _boundaries(input: JsonObject, params: JsonObject) -> JsonObject:
    bounds = boundaries(_deltas(input))
    result: JsonObject = {"valid": True, "cuts": list(bounds.cuts), "units": bounds.units(),
                          "openUnit": bounds.open_unit()}
    if "before" in params:
        result["before"] = {str(s): bounds.balanced_before(s) for s in params["before"]}
    if "after" in params:
        result["after"] = {str(s): bounds.balanced_after(s) for s in params["after"]}
    return result


def _select(input: JsonObject, params: JsonObject) -> JsonObject:
    deltas = _deltas(input)
    nodes = [PricedNode(int(n["seq"]), int(n["tokens"])) for n in input["prices"]]
    chosen = select_range(nodes, lambda: boundaries(deltas), int(params["retainTokens"]),
                          surface=[seq for seq, _ in deltas])
    return {"valid": True,
            "range": None if chosen is None else {"start": chosen[0], "end": chosen[1]}}


def _estimate(input: JsonObject) -> JsonObject:
    if "message" in input:
        tokens = estimate_message(input["message"])
    elif "header" in input:
        tokens = estimate_header(input["header"])
    elif "content" in input:
        tokens = estimate_content(input["content"])
    else:
        tokens = estimate_message({"content": frame_summary(input["checkpointSummary"])})
    return {"valid": True, "tokens": tokens}


def _config(input: JsonObject, params: JsonObject) -> JsonObject:
    config = resolve_config(input["config"])
    result: JsonObject = {"valid": True, "resolved": config.to_json()}
    if "contextWindow" in params:
        target = params.get("target", {"provider": "p", "model": "m"})
        policy = target_policy(config, target["provider"], target["model"])
        spec = scale(policy, target["provider"], target["model"], params["contextWindow"])
        result["pressure"] = {"thresholdTokens": spec.threshold_tokens,
                              "retainTokens": spec.retain_tokens}
    return result


def _during(params: JsonObject) -> DuringSummary | None:
    extra = params.get("duringSummary")
    if not extra:
        return None
    events = list(extra)

    def append(view: LogView) -> list[JsonObject]:
        del view
        return [dict(e) for e in events]

    return append


def _plan(input: JsonObject, params: JsonObject) -> JsonObject:
    result = _planner(params)(_numbered(input["events"]))
    out: JsonObject = {"valid": True, **result.to_json()}
    out["messageIds"] = [m.get("id") for m in result.messages]
    return out


def _planner(params: JsonObject) -> Any:
    """The planner with the arguments of ``params`` (``compaction.plan``)."""
    prune = params.get("prune", True)
    region = params.get("region")
    return lambda events: plan(
        events, params.get("contextWindow"),
        trigger=params.get("trigger", "pressure"), config=params.get("config"),
        prune=None if prune is False else resolve_prune_config(
            prune if isinstance(prune, dict) else None),
        summarizer=summarizer_from_json(params.get("summarizer")),
        region=None if region is None else (int(region["start"]), int(region["end"])),
        source_command_id=params.get("sourceCommandId"),
        compaction_ids=params.get("compactionIds", ()),
        message_ids=params.get("messageIds", ()), time=params.get("time"),
        standalone=params.get("standalone", True), during_summary=_during(params),
        pressure_tokens=params.get("pressureTokens"))


def _offer(input: JsonObject, params: JsonObject) -> JsonObject:
    trace: BracketTrace = check_brackets(_numbered(input["events"]))
    outcomes: list[JsonObject | None] = []
    for event in params.get("offers", []):
        try:
            trace.push(event)
        except CompactionError as exc:
            outcomes.append({"code": exc.code})
        else:
            outcomes.append(None)
    bracket = trace.bracket
    state: JsonObject | None = None
    if bracket is not None:
        state = {"compactionId": bracket.compaction_id, "startSeq": bracket.start_seq,
                 "turn": bracket.turn, "summarized": bracket.summarized}
        if isinstance(bracket.source_command_id, str):
            state["sourceCommandId"] = bracket.source_command_id
    return {"valid": True, "offers": outcomes, "openTurn": trace.open_turn, "bracket": state}


def _text(path: Path) -> Any:
    if not path.exists():
        return None
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode("ascii")}


def _interfering(planner: Any, source: Path, params: JsonObject) -> Any:
    """The planner, with another writer changing ``source`` while it runs (``duringPlan``)."""
    change = params.get("duringPlan")
    if not change:
        return planner

    def plan_while_changed(events: list[Any]) -> Any:
        made = planner(events)
        if "append" in change:
            with open(source, "ab") as handle:
                handle.write(str(change["append"]).encode("utf-8"))
        if "touch" in change:
            info = source.stat()
            moved = info.st_mtime_ns + int(change["touch"]) * 1_000_000
            os.utime(source, ns=(info.st_atime_ns, moved))
        return made

    return plan_while_changed


def _apply(input: JsonObject, params: JsonObject) -> JsonObject:
    data = (base64.b64decode(input["base64"]) if "base64" in input
            else str(input["text"]).encode("utf-8"))
    mode = params.get("mode", "write")
    with tempfile.TemporaryDirectory(prefix="dshkit-case-") as name:
        source, output = Path(name) / "session.jsonl", Path(name) / "compacted.jsonl"
        source.write_bytes(data)
        if "existingOutput" in params:
            output.write_bytes(str(params["existingOutput"]).encode("utf-8"))
        try:
            report = apply_to_path(source, _interfering(_planner(params), source, params),
                                   write=mode == "write",
                                   output=output if mode == "output" else None)
        except CompactionError as exc:
            return {**_error(exc), "source": _text(source), "output": _text(output)}
        outcome = report.plan.outcome if report.plan is not None else None
        return {"valid": True, "outcome": outcome, "source": _text(source),
                "output": _text(output)}


def _manual(input: JsonObject, params: JsonObject) -> JsonObject:
    def failing_flush() -> None:
        raise OSError("flush failed")

    outcome = compact_now(
        _numbered(input["events"]), summarizer_from_json(params.get("summarizer")),
        source_command_id=params.get("sourceCommandId"),
        flush=failing_flush if params.get("flushFails") else None,
        during_summary=_during(params), compaction_ids=params.get("compactionIds", ()),
        message_ids=params.get("messageIds", ()), time=params.get("time"))
    return {"valid": True, **outcome.to_json()}


def run(operation: str, input: JsonObject, params: JsonObject) -> JsonObject:
    """Run one case through the dshkit reference."""
    try:
        if operation == "compaction.boundaries":
            return _boundaries(input, params)
        if operation == "compaction.select":
            return _select(input, params)
        if operation == "compaction.estimate":
            return _estimate(input)
        if operation == "compaction.config":
            return _config(input, params)
        if operation == "compaction.brackets":
            check_brackets(_numbered(input["events"]))
            return {"valid": True}
        if operation == "compaction.lock":
            return {"valid": True, "busy": LogView.of(_numbered(input["events"])).busy}
        if operation == "compaction.prune-content":
            config = resolve_prune_config(params.get("config"))
            return {"valid": True, "content": prune_content(input["content"], config)}
        if operation == "compaction.plan":
            return _plan(input, params)
        if operation == "compaction.manual":
            return _manual(input, params)
        if operation == "compaction.brackets.offer":
            return _offer(input, params)
        if operation == "compaction.apply":
            return _apply(input, params)
        if operation == "compaction.overflow-retry":
            return {"valid": True, "decision": overflow_retry(
                input["code"], aborted=bool(input.get("aborted")),
                retries=int(input["retries"]), max_retries=int(input["max"]),
                generation_before=input.get("genBefore"),
                generation_after=input.get("genAfter"), threw=bool(input.get("threw")),
                has_target=input.get("hasTarget", True) is not False)}
    except CompactionError as exc:
        return _error(exc)
    return {"valid": False, "error": {"code": "UNKNOWN_OPERATION",
                                      "message": f"unknown operation {operation!r}"}}

