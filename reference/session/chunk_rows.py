"""Packed chunk rows: runs of stream-delta events stored as one JSONL line (SES-FILE-005/006).

Rows are a storage encoding, not events. Decoding validates a row strictly and expands it
to the exact events it stands for; anything that is not a row passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..problems import ProblemError, fail
from .checks import is_nonneg_safe_int, is_safe_int

Event = dict[str, Any]

ROW_TYPES = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
MIN_RUN = 3

_ROW_OF_DELTA = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks",
                 "tool-call-delta": "tool-call-chunks"}
_DELTA_OF_ROW = {row: delta for delta, row in _ROW_OF_DELTA.items()}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _malformed(tag: str, why: str) -> ProblemError:
    return fail("CHUNK_ROW_MALFORMED", "SES-FILE-005", f"malformed {tag} storage row: {why}")


def is_row(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in ROW_TYPES


def decode_record(value: Any) -> list[Any]:
    """The events one stored record stands for (a row expands; anything else is one event)."""
    if not is_row(value):
        return [value]
    return list(expand_row(value))


def expand_row(row: dict[str, Any]) -> Iterator[Event]:
    tag: str = row["type"]
    if set(row) != {"type", "seq0", "time0", "data"}:
        raise _malformed(tag, "envelope must be exactly {type, seq0, time0, data}")
    if not is_nonneg_safe_int(row["seq0"]):
        raise _malformed(tag, "seq0 must be a non-negative safe integer")
    if not is_safe_int(row["time0"]):
        raise _malformed(tag, "time0 must be a safe integer")
    data = row["data"]
    if not isinstance(data, dict):
        raise _malformed(tag, "data must be an object")
    if tag == "tool-call-chunks":
        with_name = set(data) == {"turn", "step", "index", "id", "name", "dt", "args"}
        if not with_name and set(data) != {"turn", "step", "index", "id", "dt", "args"}:
            raise _malformed(tag, "data must be exactly {turn, step, index, id, name?, dt, args}")
        if not isinstance(data["id"], str) or (with_name and not isinstance(data["name"], str)):
            raise _malformed(tag, "id (and name when present) must be strings")
        key = "args"
    else:
        if set(data) != {"turn", "step", "index", "dt", "texts"}:
            raise _malformed(tag, "data must be exactly {turn, step, index, dt, texts}")
        key = "texts"
    if not (_is_number(data["turn"]) and _is_number(data["step"]) and _is_number(data["index"])):
        raise _malformed(tag, "turn/step/index must be numbers")
    members = data[key]
    if not isinstance(members, list) or not members or not all(
            isinstance(m, str) for m in members):
        raise _malformed(tag, f"{key} must be a non-empty string array")
    gaps = data["dt"]
    if not isinstance(gaps, list) or not all(is_safe_int(g) for g in gaps):
        raise _malformed(tag, "dt must be an array of safe integers")
    if len(gaps) != len(members) - 1:
        raise _malformed(tag, f"dt length {len(gaps)} does not match {len(members)} members")
    if not is_safe_int(row["seq0"] + len(members) - 1):
        raise _malformed(tag, "member seqs must stay safe integers")
    time = row["time0"]
    for gap in gaps:
        time += gap
        if not is_safe_int(time):
            raise _malformed(tag, "member times must stay safe integers")
    delta = _DELTA_OF_ROW[tag]
    time = row["time0"]
    for k, member in enumerate(members):
        if k:
            time += gaps[k - 1]
        if tag == "tool-call-chunks":
            chunk: dict[str, Any] = {"type": delta, "index": data["index"], "id": data["id"]}
            if "name" in data:
                chunk["name"] = data["name"]
            chunk["argumentsDelta"] = member
        else:
            chunk = {"type": delta, "index": data["index"], "text": member}
        yield {"type": "assistant/chunk", "seq": row["seq0"] + k, "time": time,
               "data": {"turn": data["turn"], "step": data["step"], "chunk": chunk}}


def _classify(event: Any) -> str | None:
    """The delta kind of an event whose whole shape is whitelisted for packing, else None."""
    if not isinstance(event, dict) or event.get("type") != "assistant/chunk":
        return None
    if set(event) != {"type", "seq", "time", "data"}:
        return None
    if not is_nonneg_safe_int(event["seq"]) or not is_safe_int(event["time"]):
        return None
    data = event["data"]
    if not isinstance(data, dict) or set(data) != {"turn", "step", "chunk"}:
        return None
    if not _is_number(data["turn"]) or not _is_number(data["step"]):
        return None
    chunk = data["chunk"]
    if not isinstance(chunk, dict) or not _is_number(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta"):
        ok = set(chunk) == {"type", "index", "text"} and isinstance(chunk["text"], str)
        return kind if ok else None
    if kind == "tool-call-delta":
        keys = set(chunk)
        shape = keys == {"type", "index", "id", "argumentsDelta"} or (
            keys == {"type", "index", "id", "name", "argumentsDelta"}
            and isinstance(chunk["name"], str))
        ok = shape and isinstance(chunk["id"], str) and isinstance(chunk["argumentsDelta"], str)
        return kind if ok else None
    return None


def _continues(prev: Event, nxt: Event, kind: str) -> bool:
    if nxt["seq"] != prev["seq"] + 1 or not is_safe_int(nxt["time"] - prev["time"]):
        return False
    a, b = prev["data"], nxt["data"]
    if a["turn"] != b["turn"] or a["step"] != b["step"]:
        return False
    if a["chunk"]["index"] != b["chunk"]["index"]:
        return False
    if kind != "tool-call-delta":
        return True
    ca, cb = a["chunk"], b["chunk"]
    return ca["id"] == cb["id"] and ("name" in ca) == ("name" in cb) and ca.get(
        "name") == cb.get("name")


def _build_row(kind: str, run: list[Event]) -> dict[str, Any]:
    first = run[0]
    data: dict[str, Any] = {
        "turn": first["data"]["turn"],
        "step": first["data"]["step"],
        "index": first["data"]["chunk"]["index"],
        "dt": [run[i + 1]["time"] - run[i]["time"] for i in range(len(run) - 1)],
    }
    if kind == "tool-call-delta":
        chunk = first["data"]["chunk"]
        data["id"] = chunk["id"]
        if "name" in chunk:
            data["name"] = chunk["name"]
        data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
    else:
        data["texts"] = [e["data"]["chunk"]["text"] for e in run]
    return {"type": _ROW_OF_DELTA[kind], "seq0": first["seq"], "time0": first["time"],
            "data": data}


def pack_events(events: Iterable[Event]) -> Iterator[Any]:
    """Storage records for a batch: whitelisted runs of >= 3 deltas packed, the rest verbatim."""
    kind: str | None = None
    run: list[Event] = []

    def flush() -> Iterator[Any]:
        if kind is not None and len(run) >= MIN_RUN:
            yield _build_row(kind, run)
        else:
            yield from run

    for event in events:
        k = _classify(event)
        if k is None:
            yield from flush()
            kind, run = None, []
            yield event
            continue
        if k == kind and run and _continues(run[-1], event, k):
            run.append(event)
            continue
        yield from flush()
        kind, run = k, [event]
    yield from flush()
