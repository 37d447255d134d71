"""The session reference projection (spec chapter ``reference``): a bounded, read-only
snapshot of other sessions injected as context (``dshkit.reference.projection``)."""

from __future__ import annotations

from .candidates import Candidate, list_candidates
from .config import (
    DEFAULT_CANDIDATE_LIMIT,
    DEFAULT_MAX_REFERENCE_BYTES,
    DEFAULT_MAX_REFERENCES,
    MAX_REFERENCES,
    ReferenceConfig,
)
from .errors import CODES, SessionReferenceError
from .prepare import (
    NormalizedReference,
    Prepared,
    RenderedSource,
    normalize_references,
    prepare,
    snapshots_resolver,
)
from .projection import ProjectedItem, RetainedSession, RetentionStats, project, retain
from .prompt import PROMPT_PREFIX, PROMPT_SUFFIX, message_source, render_payload, render_prompt
from .snapshot import SurfaceSnapshot, snapshot_of_log
from .text import head_tail, notice, tag_safe, truncate_with_notice, utf8_len
from .uri import (
    SCHEME,
    ParsedText,
    ReferenceInput,
    decode_uri,
    encode_uri,
    format_mention,
    parse_text,
)

__all__ = [
    "CODES",
    "DEFAULT_CANDIDATE_LIMIT",
    "DEFAULT_MAX_REFERENCES",
    "DEFAULT_MAX_REFERENCE_BYTES",
    "MAX_REFERENCES",
    "PROMPT_PREFIX",
    "PROMPT_SUFFIX",
    "SCHEME",
    "Candidate",
    "NormalizedReference",
    "ParsedText",
    "Prepared",
    "ProjectedItem",
    "ReferenceConfig",
    "ReferenceInput",
    "RenderedSource",
    "RetainedSession",
    "RetentionStats",
    "SessionReferenceError",
    "SurfaceSnapshot",
    "decode_uri",
    "encode_uri",
    "format_mention",
    "head_tail",
    "list_candidates",
    "message_source",
    "normalize_references",
    "notice",
    "parse_text",
    "prepare",
    "project",
    "render_payload",
    "render_prompt",
    "retain",
    "snapshot_of_log",
    "snapshots_resolver",
    "tag_safe",
    "truncate_with_notice",
    "utf8_len",
]
