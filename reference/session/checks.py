"""Per-event checks that need no history: envelope (seed level), message and header shapes.

Each function returns ``None`` when the event is fine, otherwise the first problem, in the
order DSH's seed constructor applies its checks (SES-LVL-002).
"""

from __future__ import annotations

from typing import Any

from ..json.codec import MAX_SAFE_INTEGER
from ..problems import ProblemError, fail, pointer
from .vocabulary import ENVELOPE_KEYS, LEGACY_REQUEST_HEADER_DELTA

Event = dict[str, Any]


def is_safe_int(value: Any) -> bool:
    return type(value) is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER


def is_nonneg_safe_int(value: Any) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


def nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def check_envelope(event: Any) -> ProblemError | None:
    """SES-ENV-001..009: the fixed envelope, as checked when a log is seeded or loaded."""
    if not isinstance(event, dict):
        return fail("ENVELOPE_NOT_OBJECT", "SES-ENV-001",
                    f"an event must be a JSON object, got {_kind(event)}")
    for key in event:
        if key not in ENVELOPE_KEYS:
            return fail("ENVELOPE_UNKNOWN_KEY", "SES-ENV-002",
                        f"event has a key {key!r} outside the seven permitted envelope keys",
                        pointer=pointer(key))
    if not isinstance(event.get("type"), str):
        return fail("ENVELOPE_TYPE", "SES-ENV-003", "event type must be a string",
                    pointer="/type")
    if not is_nonneg_safe_int(event.get("seq")):
        return fail("ENVELOPE_SEQ", "SES-ENV-004",
                    f"seq must be a non-negative safe integer, got {_show(event.get('seq'))}",
                    pointer="/seq")
    if not is_safe_int(event.get("time")):
        return fail("ENVELOPE_TIME", "SES-ENV-006",
                    f"time must be a safe integer (epoch ms), got {_show(event.get('time'))}",
                    pointer="/time")
    if "data" not in event:
        return fail("ENVELOPE_DATA_MISSING", "SES-ENV-008", "event has no data member",
                    pointer="/data")
    if "ignorable" in event and event["ignorable"] is not True:
        return fail("ENVELOPE_IGNORABLE", "SES-ENV-009",
                    f"ignorable may only be the literal true, got {_show(event['ignorable'])}",
                    pointer="/ignorable")
    return None


def refuse_header_delta(event: Event) -> ProblemError | None:
    """SES-RQH-005: request/header-delta events are refused at every level."""
    if event.get("type") == LEGACY_REQUEST_HEADER_DELTA:
        return fail("LEGACY_REQUEST_HEADER_DELTA", "SES-RQH-005",
                    "request/header-delta is a retired legacy format and is not supported",
                    pointer="/type")
    return None


def refuse_header_fallback(event: Event) -> ProblemError | None:
    """SES-RQH-004: the retired request/header reason "fallback" is refused at every level."""
    if event.get("type") == "request/header":
        data = event.get("data")
        if isinstance(data, dict) and data.get("reason") == "fallback":
            return fail("LEGACY_REQUEST_HEADER_FALLBACK", "SES-RQH-004",
                        'request/header reason "fallback" is retired and not supported',
                        pointer="/data/reason")
    return None


def check_request_header_shape(event: Event) -> ProblemError | None:
    """SES-RQH-001..003 (seed level and stricter)."""
    data = event.get("data")
    header = data.get("header") if isinstance(data, dict) else None
    config = header.get("config") if isinstance(header, dict) else None
    if not isinstance(config, dict) or not (
        nonempty_str(config.get("provider")) and nonempty_str(config.get("model"))
    ):
        return fail("REQUEST_HEADER_CONFIG", "SES-RQH-001",
                    "request/header lacks a non-empty provider/model in data.header.config",
                    pointer="/data/header/config")
    assert isinstance(header, dict)
    if "reasoningEffort" in config and not nonempty_str(config["reasoningEffort"]):
        return fail("REQUEST_HEADER_REASONING_EFFORT", "SES-RQH-002",
                    "reasoningEffort must be a non-empty string when present",
                    pointer="/data/header/config/reasoningEffort")
    if "adapterDefaults" in header:
        defaults = header["adapterDefaults"]
        ok = isinstance(defaults, dict) and all(
            key in ("reasoningEffort", "maxTokens") and value is True and key in config
            for key, value in defaults.items()
        )
        if not ok:
            return fail("REQUEST_HEADER_ADAPTER_DEFAULTS", "SES-RQH-003",
                        "adapterDefaults must map reasoningEffort/maxTokens to true, "
                        "each naming a field present in config",
                        pointer="/data/header/adapterDefaults")
    return None


_ROLE = {"user/message": "user", "assistant/message": "assistant", "tool/result": "user"}


def check_message_shape(event: Event) -> ProblemError | None:
    """SES-MSG-001..008: message events carry a well-formed message (seed level and stricter)."""
    kind = event["type"]
    data = event.get("data")
    if kind == "user/message":
        message, base = data, "/data"
    else:
        message = data.get("message") if isinstance(data, dict) else None
        base = "/data/message"
    if not isinstance(message, dict) or not nonempty_str(message.get("id")):
        return fail("MESSAGE_UNIDENTIFIED", "SES-MSG-001",
                    f"{kind} lacks an identified message (non-empty string id)",
                    pointer=base + "/id")
    role = _ROLE[kind]
    if message.get("role") != role:
        return fail("MESSAGE_ROLE", "SES-MSG-002", f'{kind} message must have role "{role}"',
                    pointer=base + "/role")
    source = message.get("source")
    if not isinstance(source, dict) or not nonempty_str(source.get("kind")):
        return fail("MESSAGE_SOURCE", "SES-MSG-003",
                    f"{kind} message source must be an object with a non-empty kind",
                    pointer=base + "/source")
    content = message.get("content")
    if not isinstance(content, list):
        return fail("MESSAGE_CONTENT", "SES-MSG-004", f"{kind} message content must be an array",
                    pointer=base + "/content")
    if kind == "assistant/message":
        if not (source.get("kind") == "model" and nonempty_str(source.get("provider"))
                and nonempty_str(source.get("model"))):
            return fail("MESSAGE_MODEL_SOURCE", "SES-MSG-005",
                        'assistant/message source must be {kind:"model", provider, model}',
                        pointer=base + "/source")
    elif kind == "tool/result":
        if not (source.get("kind") == "tool" and nonempty_str(source.get("callId"))):
            return fail("MESSAGE_TOOL_SOURCE", "SES-MSG-006",
                        'tool/result source must be {kind:"tool", callId}',
                        pointer=base + "/source")
        block = content[0] if len(content) == 1 else None
        if not (isinstance(block, dict) and block.get("type") == "tool-result"
                and isinstance(block.get("content"), list)):
            return fail("MESSAGE_TOOL_RESULT_BLOCK", "SES-MSG-007",
                        "tool/result message must contain exactly one tool-result block "
                        "whose content is an array",
                        pointer=base + "/content")
        if block.get("toolCallId") != source.get("callId"):
            return fail("MESSAGE_TOOL_CALL_ID_MISMATCH", "SES-MSG-008",
                        "tool-result block toolCallId does not match source.callId",
                        pointer=base + "/content/0/toolCallId")
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _show(value: Any) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
