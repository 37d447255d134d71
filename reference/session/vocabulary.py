"""The session event vocabulary of format version 0 (SES-VOC-001, SES-VOC-002)."""

from __future__ import annotations

FORMAT_VERSION = 0

SURFACE_EVENT_TYPES: frozenset[str] = frozenset({"user/message", "assistant/message", "tool/result"})

CORE_EVENT_TYPES: tuple[str, ...] = (
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "user/message",
    "assistant/chunk",
    "assistant/message",
    "tool/call",
    "tool/result",
    "todo/write",
    "request/header",
    "request/context",
    "session/end-seed",
)

PLUGIN_EVENT_TYPES: tuple[str, ...] = (
    "agent/inbox/spliced",
    "agent-preset/selected",
    "approval/asked",
    "approval/decided",
    "approval/policy",
    "command/run",
    "command/done",
    "compaction/start",
    "compaction/summary",
    "compaction/end",
    "compaction/prune",
    "feedback/record",
    "goal/change",
    "hook/invoked",
    "hook/result",
    "llm/retry",
    "llm/retry-started",
    "permission/preset",
    "plan/mode",
    "sandbox/mode",
    "schedule/change",
    "session/title",
    "session/title-llm-request",
    "subagent/descriptor",
    "team/member",
    "team/message/queued",
    "team/message/delivered",
    "team/task",
    "tool/code-dispatch-start",
    "tool/code-dispatch",
    "tool-workflow/run-start",
    "tool-workflow/agent-start",
    "tool-workflow/agent-end",
    "tool-workflow/run-end",
    "web/deepseek-search-llm-request",
)

KNOWN_EVENT_TYPES: frozenset[str] = frozenset(CORE_EVENT_TYPES + PLUGIN_EVENT_TYPES)

ENVELOPE_KEYS: frozenset[str] = frozenset(
    {"type", "seq", "time", "data", "ignorable", "surfaceOp", "sourceEventSeqs"}
)

# Types whose shapes predate the current vocabulary and are refused outright (SES-RQH-005, SES-LEG-001).
LEGACY_REQUEST_HEADER_DELTA = "request/header-delta"
LEGACY_MODE_SET = "mode/set"
LEGACY_STEERING_MESSAGE = "steering/message"
