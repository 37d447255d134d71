"""Reference behaviour for DSH compaction (``dshkit.reference.compaction``).

Public API: :func:`plan` (the pure planner), :func:`apply_to_path` (append a plan to a log
file atomically), the summarizer interface, the boundaries, token estimate, region selection,
pruner, configuration and bracket companion it is built from.
"""

from .apply import ApplyReport, apply_to_path
from .brackets import BracketTrace, check_brackets, is_checkpoint_event
from .checkpoint import (
    CHECKPOINT_PREAMBLE,
    checkpoint_message,
    checkpoint_source,
    frame_summary,
    is_checkpoint_source,
)
from .config import BasicConfig, PressureSpec, resolve_config, scale, target_policy
from .errors import CompactionError
from .manual import COMMAND_TEXT, ManualOutcome, compact_now, overflow_retry
from .pairing import Boundaries, boundaries, node_delta, surface_boundaries
from .planner import TRIGGERS, Plan, plan
from .pruner import PRUNE_MARKER, PruneConfig, prune_content, resolve_prune_config
from .region import select_range, validate_region
from .summarizer import (
    DigestSummarizer,
    FailingSummarizer,
    FixedSummarizer,
    RecordedSummarizer,
    Summarizer,
    SummaryFailure,
    SummaryRequest,
    SummaryResult,
    summarizer_from_json,
)
from .tokens import estimate_content, estimate_header, estimate_message, utf16_length
from .view import LogView, Measurement, PricedNode

__all__ = [
    "CHECKPOINT_PREAMBLE", "COMMAND_TEXT", "PRUNE_MARKER", "TRIGGERS", "ApplyReport",
    "BasicConfig", "Boundaries", "BracketTrace", "CompactionError", "DigestSummarizer",
    "FailingSummarizer", "FixedSummarizer", "LogView", "ManualOutcome", "Measurement", "Plan",
    "PressureSpec", "PricedNode", "PruneConfig", "RecordedSummarizer", "Summarizer",
    "SummaryFailure", "SummaryRequest", "SummaryResult", "apply_to_path", "boundaries",
    "check_brackets", "checkpoint_message", "checkpoint_source", "compact_now",
    "estimate_content", "estimate_header", "estimate_message", "frame_summary",
    "is_checkpoint_event", "is_checkpoint_source", "node_delta", "overflow_retry", "plan",
    "prune_content", "resolve_config", "resolve_prune_config", "scale", "select_range",
    "summarizer_from_json", "surface_boundaries", "target_policy", "utf16_length",
    "validate_region",
]
