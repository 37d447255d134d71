"""Legacy shapes on load (spec chapter ``session/versioning``, DSH layer L3).

Some retired shapes are refused outright; others are rewritten into today's shapes before any
validation, per event in a fixed order (SES-LEG-006): turn/start, turn/end, steering, message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..problems import ProblemError, fail
from .checks import is_safe_int, nonempty_str
from .vocabulary import LEGACY_MODE_SET, LEGACY_STEERING_MESSAGE

Event = dict[str, Any]
MessageIdLookup = Callable[[int], "str | None"]


def refuse_retired(event: Event) -> ProblemError | None:
    """SES-LEG-001 (mode/set). The request-header refusals live in :mod:`.checks`."""
    if event.get("type") == LEGACY_MODE_SET:
        return fail("LEGACY_MODE_SET", "SES-LEG-001",
                    "mode/set is a retired legacy event and is not supported", pointer="/type")
    return None


def _only_keys(record: dict[str, Any], required: tuple[str, ...],
               optional: tuple[str, ...] = ()) -> bool:
    allowed = set(required) | set(optional)
    return all(key in allowed for key in record) and all(key in record for key in required)


def _positive_safe_int(value: Any) -> bool:
    return is_safe_int(value) and value >= 1


def legacy_message_id(session_id: str, seq: int) -> str:
    return f"legacy-message:{session_id}:{seq}"


def normalise(event: Event, session_id: str, message_id_of: MessageIdLookup) -> Event:
    """Rewrite one stored event into today's shape (raises on a malformed legacy shape).

    ``message_id_of(seq)`` gives the message id of an earlier current surface node; a legacy
    tool-result replace inherits the id of the node it rewrites.
    """
    event = _migrate_turn_start(event)
    event = _migrate_turn_end(event)
    event = _migrate_steering(event, session_id)
    return _migrate_message(event, session_id, message_id_of)


def _migrate_turn_start(event: Event) -> Event:
    data = event.get("data")
    if event.get("type") != "turn/start" or not isinstance(data, dict) or "trigger" not in data:
        return event
    trigger = data["trigger"]
    if not (_positive_safe_int(data.get("turn")) and _only_keys(data, ("turn", "trigger"))
            and isinstance(trigger, dict) and nonempty_str(trigger.get("kind"))):
        raise fail("LEGACY_TURN_START_MALFORMED", "SES-LEG-002",
                   "malformed pre-react-loop turn/start: data must be exactly {turn, trigger} "
                   "with turn >= 1 and a non-empty trigger.kind", pointer="/data")
    return {**event, "data": {"turn": data["turn"]}}


def _malformed_end(where: str = "/data") -> ProblemError:
    return fail("LEGACY_TURN_END_MALFORMED", "SES-LEG-003",
                "malformed turn/end: stored turn/end data must be exactly {turn, reason} with "
                "turn >= 1 and a reason of a known shape", pointer=where)


def _migrate_turn_end(event: Event) -> Event:
    data = event.get("data")
    if event.get("type") != "turn/end" or not isinstance(data, dict):
        return event
    reason = data.get("reason")
    if not (_positive_safe_int(data.get("turn")) and _only_keys(data, ("turn", "reason"))
            and isinstance(reason, dict) and isinstance(reason.get("kind"), str)):
        raise _malformed_end()
    kind = reason["kind"]
    if kind in ("completed", "blocked", "max-tokens", "interrupted"):
        if not _only_keys(reason, ("kind",)):
            raise _malformed_end("/data/reason")
        return event
    if kind == "aborted":
        if "reason" in reason:
            return event
        if not _only_keys(reason, ("kind",)):
            raise _malformed_end("/data/reason")
        new_reason: dict[str, Any] = {"kind": "aborted", "reason": {"kind": "legacy"}}
    elif kind == "disposed":
        if not _only_keys(reason, ("kind",)):
            raise _malformed_end("/data/reason")
        new_reason = {"kind": "aborted", "reason": {"kind": "disposed"}}
    elif kind == "error":
        if "error" in reason:
            return event
        new_reason = {"kind": "error", "error": _legacy_failure(reason)}
    else:
        return event
    return {**event, "data": {**data, "reason": new_reason}}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _legacy_failure(reason: dict[str, Any]) -> dict[str, Any]:
    step = reason.get("step")
    if not (is_safe_int(step) and isinstance(step, int) and step >= 0):
        raise _malformed_end("/data/reason/step")
    failure = reason.get("failure")
    if (isinstance(failure, dict) and _only_keys(reason, ("kind", "step", "failure"))
            and _only_keys(failure, ("message", "code"),
                           ("status", "providerRetryAfterMs", "requestId"))
            and isinstance(failure["message"], str) and isinstance(failure["code"], str)
            and ("status" not in failure or _is_number(failure["status"]))
            and ("providerRetryAfterMs" not in failure
                 or _is_number(failure["providerRetryAfterMs"]))
            and ("requestId" not in failure or isinstance(failure["requestId"], str))):
        return failure
    keys = ("kind", "step", "message") if "code" not in reason else (
        "kind", "step", "message", "code")
    if (not _only_keys(reason, keys) or not isinstance(reason.get("message"), str)
            or ("code" in reason and not isinstance(reason["code"], str))):
        raise _malformed_end("/data/reason")
    return {"message": reason["message"], "code": reason.get("code", "UNKNOWN")}


def _migrate_steering(event: Event, session_id: str) -> Event:
    if event.get("type") != LEGACY_STEERING_MESSAGE:
        return event
    data = event.get("data")
    malformed = fail("LEGACY_STEERING_MALFORMED", "SES-LEG-004",
                     "malformed pre-react-loop steering/message: data must be {turn, message} "
                     "or {turn, content, source}", pointer="/data")
    if not isinstance(data, dict):
        raise malformed
    wrapped = data.get("message")
    if isinstance(wrapped, dict) and is_safe_int(data.get("turn")) and _only_keys(
            data, ("turn", "message")):
        return {**event, "type": "user/message", "data": wrapped}
    if not is_safe_int(data.get("turn")) or not _only_keys(data, ("turn", "content", "source")):
        raise malformed
    message = {k: v for k, v in data.items() if k != "turn"}
    seq = event.get("seq")
    return {**event, "type": "user/message",
            "data": {**message, "id": legacy_message_id(session_id, _seq(seq)), "role": "user"}}


def _seq(seq: Any) -> int:
    return seq if isinstance(seq, int) else -1


def _migrate_message(event: Event, session_id: str, message_id_of: MessageIdLookup) -> Event:
    data = event.get("data")
    if not isinstance(data, dict):
        return event
    kind = event.get("type")
    seq = _seq(event.get("seq"))
    if kind == "user/message":
        if any(k in data for k in ("id", "role", "message")) or not (
                "content" in data and "source" in data):
            return event
        return {**event, "data": {**data, "id": legacy_message_id(session_id, seq),
                                  "role": "user"}}
    if kind == "assistant/message":
        if "message" in data or "content" not in data or "provenance" not in data:
            return event
        provenance = data["provenance"]
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        source = {**(provenance if isinstance(provenance, dict) else {}), "kind": "model"}
        message = {"id": legacy_message_id(session_id, seq), "role": "assistant",
                   "content": data["content"], "source": source}
        return {**event, "data": {**rest, "message": message}}
    if kind == "tool/result":
        if "message" in data or not all(k in data for k in ("callId", "content", "isError")):
            return event
        op = event.get("surfaceOp")
        start = op.get("start") if isinstance(op, dict) and op.get("op") == "replace" else None
        new_message: dict[str, Any] = {}
        if isinstance(start, (int, float)) and not isinstance(start, bool):
            inherited = message_id_of(int(start)) if float(start).is_integer() else None
            if inherited is not None:
                new_message["id"] = inherited
        else:
            new_message["id"] = legacy_message_id(session_id, seq)
        call_id = data["callId"]
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        new_message.update({
            "role": "user",
            "content": [{"type": "tool-result", "toolCallId": call_id,
                         "content": data["content"], "isError": data["isError"]}],
            "source": {"kind": "tool", "callId": call_id},
        })
        return {**event, "data": {**rest, "message": new_message}}
    return event
