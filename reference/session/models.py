"""Pydantic v2 models of the DSH session event log, format version 0.

These models mirror the JSON Schemas in ``schemas/session/v0`` (package ``dshkit.schemas``):
:class:`SessionEvent` is the open envelope layer (``envelope.json``), and every payload model is
the typed layer of one event type (``events/<type>.json#/$defs/data``). The tests in
``tests/test_models_vs_schemas.py`` generate instances from each side and validate them with
the other, so the two cannot drift apart.

Conventions shared by every model:

* Python attribute names are snake_case; the JSON names (camelCase, e.g. ``toolCallId``,
  ``sourceEventSeqs``) are the aliases. Input is accepted by JSON name only, and output uses
  the JSON names: ``model.model_dump(mode="json", exclude_unset=True)`` reproduces the input.
* Closed shapes forbid unknown keys (``extra="forbid"``), are frozen and strict (no coercion:
  ``"1"`` is not an integer and ``1`` is not ``true``). As in JSON Schema and in DSH, an
  integral float such as ``1.0`` is the integer ``1`` (it is stored as ``int``).
* An optional field is either absent or has a value: an explicit ``null`` is refused, except
  where the JSON type itself admits null (opaque JSON values such as ``meta``). Dump with
  ``exclude_unset=True`` so absent fields stay absent.
* Integers are ECMAScript safe integers; "numbers" are finite int or float values. Rules that
  JSON Schema cannot express (no ``-0``, ``seq`` = index, provenance earlier than ``seq``,
  ``toolCallId`` = ``source.callId``, ...) belong to the reference validator, not to these
  models, so that models and schemas accept exactly the same documents.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, Literal, TypeAlias, Union

from annotated_types import Ge
from pydantic import (
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    GetJsonSchemaHandler,
    JsonValue,
    RootModel,
    Strict,
    Tag,
    create_model,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from .vocabulary import CORE_EVENT_TYPES as CORE_EVENT_TYPE_LIST
from .vocabulary import KNOWN_EVENT_TYPES
from .vocabulary import SURFACE_EVENT_TYPES as VOCABULARY_SURFACE_TYPES

__all__ = [
    "CORE_EVENT_TYPES",
    "EVENT_MODELS",
    "KNOWN_EVENT_TYPES",
    "MAX_SAFE_INTEGER",
    "PAYLOAD_MODELS",
    "PLUGIN_EVENT_TYPES",
    "RETIRED_EVENT_TYPES",
    "SURFACE_EVENT_TYPES",
    "AssistantMessage",
    "ChunkRow",
    "Closed",
    "ContentBlock",
    "EpochHeader",
    "Event",
    "JsonRecord",
    "LlmFailure",
    "Message",
    "MessageSource",
    "NonNegativeSafeInt",
    "OpaqueEvent",
    "PositiveSafeInt",
    "SafeInt",
    "SessionEvent",
    "SessionHeaderLine",
    "StreamChunk",
    "TokenUsage",
    "ToolResultMessage",
    "TurnEndReason",
    "UserMessage",
    "typed_payload",
]

MAX_SAFE_INTEGER = 9007199254740991

# --------------------------------------------------------------------------- scalar types


def _integral(value: Any) -> Any:
    """JSON has one number type: 1.0 is the integer 1 (as for JSON Schema and for DSH)."""
    if type(value) is float and value.is_integer():
        return int(value)
    return value


#: Accept integral floats as integers (bools and strings are still refused by strict mode).
Integral = BeforeValidator(_integral)

SafeInt = Annotated[int, Integral, Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER, strict=True)]
NonNegativeSafeInt = Annotated[int, Integral, Field(ge=0, le=MAX_SAFE_INTEGER, strict=True)]
PositiveSafeInt = Annotated[int, Integral, Field(ge=1, le=MAX_SAFE_INTEGER, strict=True)]
Seq = NonNegativeSafeInt
Time = SafeInt
Turn = PositiveSafeInt
Step = PositiveSafeInt
Str = Annotated[str, Field(strict=True)]
NonEmptyStr = Annotated[str, Field(min_length=1, strict=True)]
Bool = Annotated[bool, Field(strict=True)]
#: Any finite JSON number; integers stay integers on output.
Number: TypeAlias = Annotated[int, Strict()] | Annotated[float, Strict(), AllowInfNan(False)]
NonNegativeNumber: TypeAlias = (
    Annotated[int, Strict(), Ge(0)] | Annotated[float, Strict(), AllowInfNan(False), Ge(0)]
)


def _exact(kind: type) -> BeforeValidator:
    """Refuse values of another JSON type that Python would compare equal (1 == True == 1.0)."""

    def check(value: Any) -> Any:
        if kind is int:
            value = _integral(value)
        if type(value) is not kind:
            raise PydanticCustomError(
                "literal_json_type", "expected a JSON {kind}", {"kind": kind.__name__}
            )
        return value

    return BeforeValidator(check)


TrueFlag = Annotated[Literal[True], _exact(bool)]
VersionOne = Annotated[Literal[1], _exact(int)]
VersionZero = Annotated[Literal[0], _exact(int)]


class _NullAllowed:
    """``Annotated`` marker: an optional field whose JSON value may legitimately be null."""

    def __repr__(self) -> str:
        return "NULL_ALLOWED"


NULL_ALLOWED = _NullAllowed()
#: An opaque JSON value in an optional field (absent and null are different).
OptionalJson = Annotated[JsonValue, NULL_ALLOWED]

# --------------------------------------------------------------------------- base classes


@cache
def _null_refused(model: type[BaseModel]) -> tuple[str, ...]:
    """JSON names of the optional fields of ``model`` that must be absent rather than null."""
    return tuple(
        info.alias or name
        for name, info in model.model_fields.items()
        if not info.is_required() and NULL_ALLOWED not in info.metadata
    )


class JsonRecord(BaseModel):
    """Base of every model of a JSON object: JSON names, strict, frozen, absent rather than null."""

    model_config = ConfigDict(
        frozen=True,
        strict=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        serialize_by_alias=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _absent_rather_than_null(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in _null_refused(cls):
                if key in data and data[key] is None:
                    raise PydanticCustomError(
                        "absent_not_null", "{key} must be omitted rather than null", {"key": key}
                    )
        return data

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler, /
    ) -> JsonSchemaValue:
        """Optional fields are 'absent or a value', never null: drop the null branch."""
        json_schema = super().__get_pydantic_json_schema__(core_schema, handler)
        target = handler.resolve_ref_schema(json_schema)
        properties = target.get("properties", {})
        for key in _null_refused(cls):
            prop = properties.get(key)
            if not isinstance(prop, dict):
                continue
            prop.pop("default", None)
            branches = prop.get("anyOf")
            if isinstance(branches, list):
                kept = [b for b in branches if b != {"type": "null"}]
                if len(kept) == 1:
                    del prop["anyOf"]
                    prop.update(kept[0])
                else:
                    prop["anyOf"] = kept
        return json_schema


class Closed(JsonRecord):
    """Base of every closed JSON object shape (``additionalProperties: false``)."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- token usage, failures


class TokenUsage(Closed):
    """``token-usage.json``."""

    input_tokens: NonNegativeSafeInt
    output_tokens: NonNegativeSafeInt
    cache_read_tokens: NonNegativeSafeInt | None = None
    cache_write_tokens: NonNegativeSafeInt | None = None
    reasoning_tokens: NonNegativeSafeInt | None = None


class LlmFailure(Closed):
    """``llm-failure.json``."""

    message: Str
    code: Str
    status: SafeInt | None = None
    provider_retry_after_ms: NonNegativeNumber | None = None
    request_id: Str | None = None


# --------------------------------------------------------------------------- content blocks

BlockType = Literal["text", "reasoning", "image", "tool-call", "tool-result"]


class TextBlock(Closed):
    type: Literal["text"]
    text: Str


class ReasoningBlock(Closed):
    type: Literal["reasoning"]
    text: Str


class Attachment(Closed):
    attachment_id: Str
    media_type: Literal["image/png", "image/jpeg", "image/webp", "image/gif"]
    bytes: NonNegativeSafeInt
    width: NonNegativeSafeInt
    height: NonNegativeSafeInt
    name: Str | None = None


class ImageBlock(Closed):
    type: Literal["image"]
    attachment: Attachment


class ToolCallBlock(Closed):
    type: Literal["tool-call"]
    id: Str
    name: Str
    arguments: Str


class ToolResultBlock(Closed):
    type: Literal["tool-result"]
    tool_call_id: Str
    content: list[ContentBlock]
    is_error: Bool | None = None


#: ``content-block.json`` (typed layer: the closed set of five block types).
ContentBlock: TypeAlias = Annotated[
    TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock,
    Field(discriminator="type"),
]

# --------------------------------------------------------------------------- message sources


class UserSource(Closed):
    kind: Literal["user"]


class UserRpcSource(Closed):
    kind: Literal["user"]
    rpc_id: Str
    client_time_zone: Str | None = None


class PluginSource(Closed):
    kind: Literal["plugin"]
    plugin: Str
    form: Literal["instructions", "catalog", "relay", "recall"] | None = None


class SnapshotSection(Closed):
    name: Str
    text: Str


class PluginSnapshotSource(Closed):
    kind: Literal["plugin"]
    plugin: Str
    form: Literal["snapshot"]
    sections: list[SnapshotSection]


class PluginNoticeSource(Closed):
    kind: Literal["plugin"]
    plugin: Str
    form: Literal["notice"]
    summary: Str


class CompactCheckpointSource(Closed):
    kind: Literal["plugin"]
    plugin: Literal["compact"]
    compaction_id: Str
    source_command_id: Str | None = None


class ModelSource(Closed):
    kind: Literal["model"]
    provider: NonEmptyStr
    model: NonEmptyStr
    replay_state: OptionalJson = None


class ToolSource(Closed):
    kind: Literal["tool"]
    call_id: NonEmptyStr


class InstructionChange(Closed):
    action: Literal["set", "replace", "remove"]
    scope: Str
    path: Str
    digest: Str | None = None


class AgentInstructionsSource(Closed):
    kind: Literal["agent-instructions"]
    form: Literal["instructions"]
    baseline: TrueFlag | None = None
    baseline_identity: Str | None = None
    changes: list[InstructionChange]


class SessionReferenceEntry(Closed):
    session_id: Str
    label: Str
    captured_through_seq: SafeInt | None
    compacted: Bool
    original_messages: NonNegativeSafeInt
    retained_messages: NonNegativeSafeInt
    omitted_messages: NonNegativeSafeInt
    omitted_bytes: NonNegativeSafeInt
    truncated: Bool
    input_index: NonNegativeSafeInt


class SessionReferenceSource(Closed):
    kind: Literal["session-reference"]
    form: Literal["recall"]
    version: VersionOne
    references: list[SessionReferenceEntry]


class TeamMessageSource(Closed):
    kind: Literal["team-message"]
    team_id: Str
    message_id: Str
    sender_id: Str
    sender_name: Str


class GoalSource(Closed):
    kind: Literal["goal"]
    goal_id: Str
    revision: PositiveSafeInt
    round: PositiveSafeInt


class SkillInvocationSource(Closed):
    kind: Literal["skill-invocation"]
    name: Str
    form: Literal["instructions"]


class SkillCatalogEntry(Closed):
    name: Str
    description: Str


class SkillCatalogSource(Closed):
    kind: Literal["skill-catalog"]
    form: Literal["catalog"]
    update: TrueFlag | None = None
    entries: list[SkillCatalogEntry]


class CoordinatorSource(Closed):
    kind: Literal["coordinator"]
    form: Literal["relay"]
    sender_session_id: Str


class SubagentReportSource(Closed):
    kind: Literal["subagent-report"]
    form: Literal["relay"]
    sender_session_id: Str


class SubagentSettledSource(Closed):
    kind: Literal["subagent-settled"]
    form: Literal["notice"]
    summary: Str
    sender_session_id: Str


def _kind_of(value: Any) -> Any:
    if isinstance(value, dict):
        return value.get("kind")
    return getattr(value, "kind", None)


#: ``message-source.json`` (typed layer: core kinds and the known plugin kinds).
MessageSource: TypeAlias = Annotated[
    Annotated[UserSource | UserRpcSource, Tag("user")]
    | Annotated[
        PluginSource | PluginSnapshotSource | PluginNoticeSource | CompactCheckpointSource,
        Tag("plugin"),
    ]
    | Annotated[ModelSource, Tag("model")]
    | Annotated[ToolSource, Tag("tool")]
    | Annotated[AgentInstructionsSource, Tag("agent-instructions")]
    | Annotated[SessionReferenceSource, Tag("session-reference")]
    | Annotated[TeamMessageSource, Tag("team-message")]
    | Annotated[GoalSource, Tag("goal")]
    | Annotated[SkillInvocationSource, Tag("skill-invocation")]
    | Annotated[SkillCatalogSource, Tag("skill-catalog")]
    | Annotated[CoordinatorSource, Tag("coordinator")]
    | Annotated[SubagentReportSource, Tag("subagent-report")]
    | Annotated[SubagentSettledSource, Tag("subagent-settled")],
    Discriminator(_kind_of),
]

# --------------------------------------------------------------------------- messages


class UserMessage(Closed):
    """``message.json#/$defs/userMessage``; also the whole ``user/message`` payload."""

    id: NonEmptyStr
    role: Literal["user"]
    content: list[ContentBlock]
    source: MessageSource


class AssistantMessage(Closed):
    """``message.json#/$defs/assistantMessage``."""

    id: NonEmptyStr
    role: Literal["assistant"]
    content: list[ContentBlock]
    source: ModelSource


class ToolResultMessage(Closed):
    """``message.json#/$defs/toolResultMessage``: exactly one tool-result block."""

    id: NonEmptyStr
    role: Literal["user"]
    content: Annotated[list[ToolResultBlock], Field(min_length=1, max_length=1)]
    source: ToolSource


#: ``message.json#/$defs/message``: a message in a message list (a tool result is a user message).
Message: TypeAlias = Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]

# --------------------------------------------------------------------------- stream chunks


class BlockStartChunk(Closed):
    type: Literal["block-start"]
    index: NonNegativeSafeInt
    block_type: BlockType


class TextDeltaChunk(Closed):
    type: Literal["text-delta"]
    index: NonNegativeSafeInt
    text: Str


class ReasoningDeltaChunk(Closed):
    type: Literal["reasoning-delta"]
    index: NonNegativeSafeInt
    text: Str


class ToolCallDeltaChunk(Closed):
    type: Literal["tool-call-delta"]
    index: NonNegativeSafeInt
    id: Str
    name: Str | None = None
    arguments_delta: Str


class BlockEndChunk(Closed):
    type: Literal["block-end"]
    index: NonNegativeSafeInt
    block: ContentBlock


class UsageChunk(Closed):
    type: Literal["usage"]
    usage: TokenUsage


class StopFinish(Closed):
    kind: Literal["stop"]


class ToolCallsFinish(Closed):
    kind: Literal["tool-calls"]


class MaxTokensFinish(Closed):
    kind: Literal["max-tokens"]


class AbortedFinish(Closed):
    kind: Literal["aborted"]
    failure: LlmFailure


class ErrorFinish(Closed):
    kind: Literal["error"]
    failure: LlmFailure


FinishReason: TypeAlias = Annotated[
    StopFinish | ToolCallsFinish | MaxTokensFinish | AbortedFinish | ErrorFinish,
    Field(discriminator="kind"),
]


class ReplayEnvelope(Closed):
    response: JsonValue
    blocks: list[JsonValue] | None = None


class FinishChunk(Closed):
    type: Literal["finish"]
    reason: FinishReason
    replay_state: ReplayEnvelope | None = None


#: ``stream-chunk.json``.
StreamChunk: TypeAlias = Annotated[
    BlockStartChunk
    | TextDeltaChunk
    | ReasoningDeltaChunk
    | ToolCallDeltaChunk
    | BlockEndChunk
    | UsageChunk
    | FinishChunk,
    Field(discriminator="type"),
]

# --------------------------------------------------------------------------- turn end reasons


class UserCancel(Closed):
    kind: Literal["user"]


class ParentCancel(Closed):
    kind: Literal["parent"]


class HookCancel(Closed):
    kind: Literal["hook"]
    reason: Str


class DisposedCancel(Closed):
    kind: Literal["disposed"]


class LegacyCancel(Closed):
    kind: Literal["legacy"]


CancelCause: TypeAlias = Annotated[
    UserCancel | ParentCancel | HookCancel | DisposedCancel | LegacyCancel,
    Field(discriminator="kind"),
]


class CompletedTurnEnd(Closed):
    kind: Literal["completed"]


class AbortedTurnEnd(Closed):
    kind: Literal["aborted"]
    reason: CancelCause


class BlockedTurnEnd(Closed):
    kind: Literal["blocked"]


class ErrorTurnEnd(Closed):
    kind: Literal["error"]
    error: LlmFailure


class MaxTokensTurnEnd(Closed):
    kind: Literal["max-tokens"]


class InterruptedTurnEnd(Closed):
    kind: Literal["interrupted"]


#: ``turn-end-reason.json``.
TurnEndReason: TypeAlias = Annotated[
    CompletedTurnEnd
    | AbortedTurnEnd
    | BlockedTurnEnd
    | ErrorTurnEnd
    | MaxTokensTurnEnd
    | InterruptedTurnEnd,
    Field(discriminator="kind"),
]

# --------------------------------------------------------------------------- request header

RequestHeaderReason = Literal["initial", "resume", "change"]


class LlmCallConfig(Closed):
    provider: NonEmptyStr
    model: NonEmptyStr
    reasoning_effort: NonEmptyStr | None = None
    temperature: Number | None = None
    max_tokens: NonNegativeSafeInt | None = None
    stop: list[Str] | None = None


class AdapterDefaults(Closed):
    reasoning_effort: TrueFlag | None = None
    max_tokens: TrueFlag | None = None


class ToolSchema(Closed):
    name: Str
    description: Str
    parameters: dict[str, JsonValue]


class EpochHeader(Closed):
    """``request-header.json``: a true adapterDefaults marker requires its config field."""

    config: LlmCallConfig
    adapter_defaults: AdapterDefaults | None = None
    system: Str | None = None
    tools: list[ToolSchema] | None = None

    @model_validator(mode="after")
    def _markers_need_values(self) -> EpochHeader:
        markers = self.adapter_defaults
        if markers is not None:
            for field in ("reasoning_effort", "max_tokens"):
                if field in markers.model_fields_set and field not in self.config.model_fields_set:
                    raise ValueError(
                        f"adapterDefaults.{to_camel(field)} requires config.{to_camel(field)}"
                    )
        return self


# --------------------------------------------------------------------------- envelope (open layer)

SURFACE_EVENT_TYPES: frozenset[str] = VOCABULARY_SURFACE_TYPES
#: Legacy types refused by the typed layer even when ignorable (request/header-delta is also
#: refused by the open layer).
RETIRED_EVENT_TYPES: frozenset[str] = frozenset({"request/header-delta", "mode/set"})


class ReplaceSurfaceOp(Closed):
    op: Literal["replace"]
    start: NonNegativeSafeInt
    end: NonNegativeSafeInt


SurfaceOp: TypeAlias = Literal["append"] | ReplaceSurfaceOp


class SessionEvent(Closed):
    """``envelope.json``: any event as DSH accepts it (the payload stays an opaque JSON value)."""

    type: Str
    seq: Seq
    time: Time
    data: JsonValue
    ignorable: TrueFlag | None = None
    surface_op: SurfaceOp | None = None
    source_event_seqs: list[NonNegativeSafeInt] | None = None

    @model_validator(mode="after")
    def _envelope_rules(self) -> SessionEvent:
        if self.type == "request/header-delta":
            raise ValueError("the legacy request/header-delta format is refused (SES-RQH-005)")
        if (
            self.type == "request/header"
            and isinstance(self.data, dict)
            and self.data.get("reason") == "fallback"
        ):
            raise ValueError('the legacy request/header reason "fallback" is refused (SES-RQH-004)')
        if self.type in SURFACE_EVENT_TYPES:
            if self.surface_op is None:
                raise ValueError(f"{self.type} is surface-eligible and requires surfaceOp")
        elif self.surface_op is not None or self.source_event_seqs is not None:
            raise ValueError(f"{self.type} is not surface-eligible: no surfaceOp/sourceEventSeqs")
        seqs = self.source_event_seqs
        if seqs is not None:
            if not seqs and self.type != "assistant/message":
                raise ValueError("sourceEventSeqs must not be empty except on assistant/message")
            if len(set(seqs)) != len(seqs):
                raise ValueError("sourceEventSeqs must not contain duplicates")
        return self


# --------------------------------------------------------------------------- core payloads


class TurnStartPayload(Closed):
    turn: Turn


class TurnEndPayload(Closed):
    turn: Turn
    reason: TurnEndReason


class StepStartPayload(Closed):
    turn: Turn
    step: Step


class StepEndPayload(Closed):
    turn: Turn
    step: Step


class AssistantChunkPayload(Closed):
    turn: Turn
    step: Step
    chunk: StreamChunk


class AssistantMessagePayload(Closed):
    turn: Turn
    step: Step
    message: AssistantMessage
    usage: TokenUsage | None = None
    interrupted: TrueFlag | None = None


class ToolCallPayload(Closed):
    turn: Turn
    step: Step
    call_id: Str
    name: Str
    arguments: Str


class ToolResultError(Closed):
    name: Str
    code: Str


class ToolResultPayload(Closed):
    turn: Turn
    step: Step
    message: ToolResultMessage
    error: ToolResultError | None = None
    meta: OptionalJson = None


class TodoItem(Closed):
    content: NonEmptyStr
    status: Literal["pending", "in_progress", "completed"]


class TodoWritePayload(Closed):
    todos: list[TodoItem]


class RequestHeaderPayload(Closed):
    header: EpochHeader
    reason: RequestHeaderReason


class RequestContextPayload(Closed):
    provider: Str
    model: Str
    context_window: NonNegativeSafeInt | None = None


class SessionEndSeedPayload(Closed):
    """Always ``{}``."""


# --------------------------------------------------------------------------- plugin payloads


class AgentInboxSplicedPayload(Closed):
    target: Literal["next-turn", "next-step"]
    start: NonNegativeSafeInt
    removed_count: NonNegativeSafeInt | None = None
    inserted: list[UserMessage]
    outcome: Literal["canceled"] | None = None


class AgentPresetSelectedPayload(Closed):
    agent_preset: Str


class ApprovalAskedPayload(Closed):
    id: Str
    tool_name: NonEmptyStr
    call_id: Str | None = None
    reason: Str | None = None


class ApprovalDecidedPayload(Closed):
    id: Str
    outcome: Literal["allowed-once", "rejected", "cancelled", "unavailable"]


class ApprovalPolicyPayload(Closed):
    policy: Literal["ask", "never"]
    source: Literal["delegation"] | None = None


class CommandSource(Closed):
    kind: Literal["user"]


class CommandRunPayload(Closed):
    command_id: Str
    name: Str
    args: Str | None = None
    source: CommandSource


class CommandDonePayload(Closed):
    command_id: Str
    kind: Literal["success", "error"]
    text: Str | None = None
    source_event_seq: NonNegativeSafeInt | None = None


class SeqRange(Closed):
    start: NonNegativeSafeInt
    end: NonNegativeSafeInt


class CompactionStartPayload(Closed):
    compaction_id: Str
    source_command_id: Str | None = None
    turn: Turn | None


class CompactionSummaryPayload(Closed):
    """llmStreamCall:true requires rawOutput."""

    compaction_id: Str
    source_command_id: Str | None = None
    summary: list[ContentBlock]
    shadowed_range: SeqRange
    shadowed_seqs: list[NonNegativeSafeInt]
    shadowed_token_count: NonNegativeSafeInt
    provider: Str
    model: Str
    max_tokens: NonNegativeSafeInt | None = None
    usage: TokenUsage | None = None
    raw_output: list[ContentBlock] | None = None
    llm_stream_call: TrueFlag | None = None

    @model_validator(mode="after")
    def _stream_call_needs_raw_output(self) -> CompactionSummaryPayload:
        if self.llm_stream_call is not None and self.raw_output is None:
            raise ValueError("llmStreamCall requires rawOutput")
        return self


class CompactionEndPayload(Closed):
    compaction_id: Str
    source_command_id: Str | None = None
    turn: Turn | None
    error: Str | None = None


class CompactionPrunePayload(Closed):
    shadowed_range: SeqRange
    shadowed_seqs: list[NonNegativeSafeInt]
    shadowed_token_count: NonNegativeNumber


class FeedbackRecordPayload(Closed):
    text: Str


class GoalBlockReason(Closed):
    code: NonEmptyStr
    message: NonEmptyStr


class GoalSnapshot(Closed):
    """That blockedReason is present exactly when blocked is an owner (fold) rule, not checked here."""

    id: NonEmptyStr
    revision: PositiveSafeInt
    objective: NonEmptyStr
    phase: Literal["active", "paused", "blocked", "complete"]
    blocked_reason: GoalBlockReason | None = None
    max_goal_rounds: PositiveSafeInt


class GoalSnapshotChange(Closed):
    kind: Literal["goal/change"]
    version: VersionOne
    operation: Literal["create", "edit", "pause", "resume", "complete", "block"]
    goal: GoalSnapshot
    rounds_started: NonNegativeSafeInt
    created_at: NonNegativeSafeInt
    updated_at: NonNegativeSafeInt


class GoalRef(Closed):
    id: NonEmptyStr
    revision: PositiveSafeInt


class GoalClearChange(Closed):
    kind: Literal["goal/change"]
    version: VersionOne
    operation: Literal["clear"]
    cleared: GoalRef
    cleared_at: NonNegativeSafeInt


class GoalChangePayload(
    RootModel[Annotated[GoalSnapshotChange | GoalClearChange, Field(discriminator="operation")]]
):
    model_config = ConfigDict(frozen=True)


class HookInvokedPayload(Closed):
    turn: Turn
    point: Str
    dialect: Literal["claude-code", "codex"]
    matcher: Str | None = None
    handler_id: Str


class HookResultPayload(Closed):
    turn: Turn
    point: Str
    handler_id: Str
    decision: Str
    exit_code: SafeInt | None = None
    stderr_summary: Str | None = None
    duration_ms: NonNegativeNumber


class LlmRetryNormal(Closed):
    retry_id: Str
    turn: Turn
    step: Step
    provider: Str
    mode: Literal["normal"]
    max_retries: NonNegativeSafeInt
    policy_key: Str
    retry: NonNegativeSafeInt
    delay_ms: NonNegativeNumber
    failure: LlmFailure


class LlmRetryAlways(Closed):
    retry_id: Str
    turn: Turn
    step: Step
    provider: Str
    mode: Literal["always"]
    policy_key: Str
    retry: NonNegativeSafeInt
    delay_ms: NonNegativeNumber
    failure: LlmFailure


class LlmRetryPayload(
    RootModel[Annotated[LlmRetryNormal | LlmRetryAlways, Field(discriminator="mode")]]
):
    model_config = ConfigDict(frozen=True)


class LlmRetryStartedPayload(Closed):
    retry_id: Str
    turn: Turn
    step: Step
    retry: NonNegativeSafeInt


class PermissionPresetPayload(Closed):
    preset: Str


class PlanModePayload(Closed):
    active: Bool


class SandboxModePayload(Closed):
    mode: Literal["read-only", "workspace-write", "danger-full-access"]
    source: Literal["delegation"] | None = None


class AfterSchedule(Closed):
    id: Str
    kind: Literal["after"]
    prompt: Str
    after_seconds: Number
    scheduled_at: Str


class AtSchedule(Closed):
    id: Str
    kind: Literal["at"]
    prompt: Str
    scheduled_at: Str


class EverySchedule(Closed):
    id: Str
    kind: Literal["every"]
    prompt: Str
    every_seconds: Number
    scheduled_at: Str


ScheduleRecord: TypeAlias = Annotated[
    AfterSchedule | AtSchedule | EverySchedule, Field(discriminator="kind")
]


class ScheduleCreate(Closed):
    version: VersionOne
    operation: Literal["create"]
    schedule: ScheduleRecord


class ScheduleDelete(Closed):
    version: VersionOne
    operation: Literal["delete"]
    id: Str


class ScheduleDispatch(Closed):
    version: VersionOne
    operation: Literal["dispatch"]
    id: Str
    accepted_at: Str | None = None


class ScheduleChangePayload(
    RootModel[
        Annotated[
            ScheduleCreate | ScheduleDelete | ScheduleDispatch, Field(discriminator="operation")
        ]
    ]
):
    model_config = ConfigDict(frozen=True)


class Route(Closed):
    provider: Str
    model: Str


class FallbackTitleSource(Closed):
    kind: Literal["fallback"]


class ProviderTitleSource(Closed):
    kind: Literal["provider"]
    provider: Str
    model: Route | None = None


class UserTitleSource(Closed):
    kind: Literal["user"]


class SessionTitlePayload(Closed):
    title: Str
    message_seqs: list[NonNegativeSafeInt]
    source: Annotated[
        FallbackTitleSource | ProviderTitleSource | UserTitleSource, Field(discriminator="kind")
    ]


class SessionTitleLlmRequestPayload(Closed):
    title_provider: Str
    message_seqs: list[NonNegativeSafeInt]
    route: Route
    system: Str
    messages: list[Message]
    max_tokens: NonNegativeSafeInt


class OneShotDescriptor(Closed):
    version: PositiveSafeInt
    mode: Literal["one-shot"]
    provider: Str
    label: Str | None = None


class ToolFilter(Closed):
    allow: list[Str] | None = None
    deny: list[Str] | None = None


class ContinuableDescriptor(Closed):
    version: PositiveSafeInt
    mode: Literal["continuable"]
    provider: Str
    label: Str
    agent_provider: Str | None = None
    agent_model: Str | None = None
    persona: Str | None = None
    tool_filter: ToolFilter | None = None


class SubagentDescriptorPayload(
    RootModel[Annotated[OneShotDescriptor | ContinuableDescriptor, Field(discriminator="mode")]]
):
    model_config = ConfigDict(frozen=True)


class TeamMember(Closed):
    id: Str
    name: Str
    description: Str
    provider: Str
    context: Literal["fresh", "fork"]
    phase: Literal["provisioning", "active", "failed"]
    error: Str | None = None


class TeamMemberPayload(Closed):
    version: VersionOne
    team_id: Str
    member: TeamMember


class TeamMessage(Closed):
    id: Str
    sender_id: Str
    sender_name: Str
    target_id: Str
    delivery: Literal["quiet", "wakeup"]
    content: list[ContentBlock]


class TeamMessageQueuedPayload(Closed):
    version: VersionOne
    team_id: Str
    message: TeamMessage


class TeamMessageDeliveredPayload(Closed):
    version: VersionOne
    team_id: Str
    message_id: Str
    target_id: Str


class TeamTask(Closed):
    id: Str
    revision: NonNegativeSafeInt
    subject: Str
    description: Str
    status: Literal["pending", "in_progress", "completed", "deleted"]
    owner_id: Str | None = None
    blocked_by: list[Str]
    write_scopes: list[Str]


class TeamTaskPayload(Closed):
    version: VersionOne
    team_id: Str
    task: TeamTask


class ToolCodeDispatchStartPayload(Closed):
    root_call_id: Str
    parent_call_id: Str
    sub_call_id: Str
    name: Str
    arguments: JsonValue


class ToolCodeDispatchPayload(Closed):
    root_call_id: Str
    parent_call_id: Str
    sub_call_id: Str
    name: Str
    arguments: JsonValue
    is_error: Bool
    content: list[ContentBlock]


class ToolWorkflowRunStartPayload(Closed):
    run_id: Str
    name: Str


class ToolWorkflowAgentStartPayload(Closed):
    run_id: Str
    seq: SafeInt
    label: Str
    phase: Str | None = None
    child_id: Str


class ToolWorkflowAgentEndPayload(Closed):
    run_id: Str
    seq: SafeInt
    outcome: Literal["completed", "failed", "cancelled"]


class ToolWorkflowRunEndPayload(Closed):
    run_id: Str
    stop_reason: Literal["completed", "cancelled", "error"]


class WebSearchTextContent(Closed):
    type: Literal["text"]
    text: Str


class WebSearchMessage(Closed):
    role: Literal["user"]
    content: list[WebSearchTextContent]


class WebSearchTool(Closed):
    type: Literal["web_search_20250305"]
    name: Literal["web_search"]
    max_uses: NonNegativeSafeInt = Field(alias="max_uses")


class WebSearchBody(Closed):
    model: Str
    max_tokens: NonNegativeSafeInt = Field(alias="max_tokens")
    messages: list[WebSearchMessage]
    tools: list[WebSearchTool]


class WebDeepseekSearchLlmRequestPayload(Closed):
    endpoint: Str
    api_version: Str
    body: WebSearchBody


# --------------------------------------------------------------------------- JSONL file records


RETIRED_HEADER_MEMBERS: frozenset[str] = frozenset({"sandboxMode", "approvalPolicy"})


class SessionHeaderLine(JsonRecord):
    """``session-header.json``: line 1 of session.jsonl.

    Other members are kept and ignored (SES-FILE-002), except the retired policy members
    sandboxMode and approvalPolicy, which are refused (SES-FILE-003).
    """

    model_config = ConfigDict(extra="allow")

    type: Literal["session"]
    version: VersionZero
    id: NonEmptyStr
    created_at: NonNegativeSafeInt
    cwd: Annotated[str, Field(strict=True, pattern=r"^(/|[A-Za-z]:[\\/]|\\\\)")] | None = None
    parent_session: Str | None = None
    seed_length: NonNegativeSafeInt | None = None
    origin: Literal["subagent"] | None = None
    delegation_depth: NonNegativeSafeInt
    agent_preset: Str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_retired_members(cls, data: Any) -> Any:
        if isinstance(data, dict):
            retired = sorted(RETIRED_HEADER_MEMBERS.intersection(data))
            if retired:
                raise PydanticCustomError(
                    "retired_header_members",
                    "session header uses retired policy baseline fields: {members}",
                    {"members": ", ".join(retired)},
                )
        return data


class TextChunksData(Closed):
    turn: Number
    step: Number
    index: Number
    dt: list[SafeInt]
    texts: Annotated[list[Str], Field(min_length=1)]


class ToolCallChunksData(Closed):
    turn: Number
    step: Number
    index: Number
    id: Str
    name: Str | None = None
    dt: list[SafeInt]
    args: Annotated[list[Str], Field(min_length=1)]


class TextChunksRow(Closed):
    type: Literal["text-chunks"]
    seq0: Seq
    time0: Time
    data: TextChunksData


class ReasoningChunksRow(Closed):
    type: Literal["reasoning-chunks"]
    seq0: Seq
    time0: Time
    data: TextChunksData


class ToolCallChunksRow(Closed):
    type: Literal["tool-call-chunks"]
    seq0: Seq
    time0: Time
    data: ToolCallChunksData


#: ``chunk-row.json``.
ChunkRow: TypeAlias = Annotated[
    TextChunksRow | ReasoningChunksRow | ToolCallChunksRow, Field(discriminator="type")
]

# --------------------------------------------------------------------------- the vocabulary

#: Payload model of each of the 48 known event types (for user/message the payload IS the message).
PAYLOAD_MODELS: dict[str, type[BaseModel]] = {
    "turn/start": TurnStartPayload,
    "turn/end": TurnEndPayload,
    "step/start": StepStartPayload,
    "step/end": StepEndPayload,
    "user/message": UserMessage,
    "assistant/chunk": AssistantChunkPayload,
    "assistant/message": AssistantMessagePayload,
    "tool/call": ToolCallPayload,
    "tool/result": ToolResultPayload,
    "todo/write": TodoWritePayload,
    "request/header": RequestHeaderPayload,
    "request/context": RequestContextPayload,
    "session/end-seed": SessionEndSeedPayload,
    "agent/inbox/spliced": AgentInboxSplicedPayload,
    "agent-preset/selected": AgentPresetSelectedPayload,
    "approval/asked": ApprovalAskedPayload,
    "approval/decided": ApprovalDecidedPayload,
    "approval/policy": ApprovalPolicyPayload,
    "command/run": CommandRunPayload,
    "command/done": CommandDonePayload,
    "compaction/start": CompactionStartPayload,
    "compaction/summary": CompactionSummaryPayload,
    "compaction/end": CompactionEndPayload,
    "compaction/prune": CompactionPrunePayload,
    "feedback/record": FeedbackRecordPayload,
    "goal/change": GoalChangePayload,
    "hook/invoked": HookInvokedPayload,
    "hook/result": HookResultPayload,
    "llm/retry": LlmRetryPayload,
    "llm/retry-started": LlmRetryStartedPayload,
    "permission/preset": PermissionPresetPayload,
    "plan/mode": PlanModePayload,
    "sandbox/mode": SandboxModePayload,
    "schedule/change": ScheduleChangePayload,
    "session/title": SessionTitlePayload,
    "session/title-llm-request": SessionTitleLlmRequestPayload,
    "subagent/descriptor": SubagentDescriptorPayload,
    "team/member": TeamMemberPayload,
    "team/message/queued": TeamMessageQueuedPayload,
    "team/message/delivered": TeamMessageDeliveredPayload,
    "team/task": TeamTaskPayload,
    "tool/code-dispatch-start": ToolCodeDispatchStartPayload,
    "tool/code-dispatch": ToolCodeDispatchPayload,
    "tool-workflow/run-start": ToolWorkflowRunStartPayload,
    "tool-workflow/agent-start": ToolWorkflowAgentStartPayload,
    "tool-workflow/agent-end": ToolWorkflowAgentEndPayload,
    "tool-workflow/run-end": ToolWorkflowRunEndPayload,
    "web/deepseek-search-llm-request": WebDeepseekSearchLlmRequestPayload,
}

# The vocabulary itself lives in .vocabulary; the models must cover exactly it (checked here
# at import, and by the tests).
assert frozenset(PAYLOAD_MODELS) == KNOWN_EVENT_TYPES, "payload models and vocabulary differ"
CORE_EVENT_TYPES: frozenset[str] = frozenset(CORE_EVENT_TYPE_LIST)
PLUGIN_EVENT_TYPES: frozenset[str] = KNOWN_EVENT_TYPES - CORE_EVENT_TYPES


def typed_payload(event: SessionEvent) -> BaseModel | None:
    """Validate ``event.data`` with the payload model of ``event.type`` (the typed layer).

    Returns ``None`` for an ignorable event of an unknown type (kept, not interpreted).
    Raises :class:`pydantic.ValidationError` for a bad payload and :class:`ValueError` for an
    unknown type without ``ignorable: true`` or a retired legacy type (SES-UNK-002).
    """
    model = PAYLOAD_MODELS.get(event.type)
    if model is not None:
        return model.model_validate(event.data)
    if event.type in RETIRED_EVENT_TYPES:
        raise ValueError(f"event type {event.type!r} is a retired legacy type")
    if event.ignorable is not True:
        raise ValueError(f"event type {event.type!r} is unknown and not marked ignorable")
    return None



# --------------------------------------------------------------------------- whole events


class OpaqueEvent(SessionEvent):
    """An event of a type outside the vocabulary: kept (its payload uninterpreted) only when it
    is marked ``ignorable: true`` and is not a retired legacy type (SES-UNK-002)."""

    @model_validator(mode="after")
    def _ignorable_unknown(self) -> OpaqueEvent:
        if self.type in RETIRED_EVENT_TYPES:
            raise ValueError(f"event type {self.type!r} is a retired legacy type")
        if self.ignorable is not True:
            raise ValueError(f"event type {self.type!r} is unknown and not marked ignorable")
        return self


def _event_class_name(kind: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[/-]", kind)) + "Event"


def _typed_event(kind: str, payload: type[BaseModel]) -> type[SessionEvent]:
    """The envelope of ``kind`` with ``data`` typed by its payload model."""
    literal: Any = Literal[kind]
    model: type[SessionEvent] = create_model(
        _event_class_name(kind),
        __base__=SessionEvent,
        __module__=__name__,
        __doc__=f"A ``{kind}`` event: the envelope with its typed payload.",
        type=(literal, ...),
        data=(payload, ...),
    )
    return model


#: The event model of each known type: a :class:`SessionEvent` whose ``data`` is the payload
#: model (e.g. ``EVENT_MODELS["turn/start"]`` is ``TurnStartEvent``).
EVENT_MODELS: dict[str, type[SessionEvent]] = {
    kind: _typed_event(kind, payload) for kind, payload in PAYLOAD_MODELS.items()
}
_OPAQUE_TAG = "(unknown type)"


def _event_tag(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) and kind in EVENT_MODELS else _OPAQUE_TAG


#: Any event, discriminated by ``type``: the typed event model of a known type, else
#: :class:`OpaqueEvent`. Every member is a :class:`SessionEvent`; use it through
#: ``pydantic.TypeAdapter`` (``dshkit.reference.session.typed.event_adapter()``).
Event: Any = Annotated[
    Union[  # built at run time from EVENT_MODELS
        (
            *(Annotated[model, Tag(kind)] for kind, model in EVENT_MODELS.items()),
            Annotated[OpaqueEvent, Tag(_OPAQUE_TAG)],
        )
    ],
    Discriminator(_event_tag),
]


ToolResultBlock.model_rebuild()
