"""The model-free tool-result pruner (spec chapter ``compaction/pruner``).

Units are Unicode code points (a Python ``str`` indexes code points); only ``text`` blocks
count, every other block costs nothing and keeps its place.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .config import is_integral, show_value
from .errors import CompactionError

PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
DEFAULT_THRESHOLD_CHARS = 8192
DEFAULT_HEAD_CHARS = 4096
DEFAULT_TAIL_CHARS = 1024

_KEYS = ("thresholdChars", "headChars", "tailChars")


@dataclass(frozen=True, slots=True)
class PruneConfig:
    threshold_chars: int = DEFAULT_THRESHOLD_CHARS
    head_chars: int = DEFAULT_HEAD_CHARS
    tail_chars: int = DEFAULT_TAIL_CHARS

    def to_json(self) -> dict[str, int]:
        return {"thresholdChars": self.threshold_chars, "headChars": self.head_chars,
                "tailChars": self.tail_chars}


def resolve_prune_config(raw: Any = None) -> PruneConfig:
    """CMP-PRN-001: defaults 8192 / 4096 / 1024, unknown keys refused, and
    ``headChars + 39 + tailChars <= thresholdChars``."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise CompactionError("CMP_PRUNE_CONFIG", "CMP-PRN-001",
                              "ToolResultPruneConfig must be an object")
    for key in raw:
        if key not in _KEYS:
            raise CompactionError("CMP_PRUNE_CONFIG", "CMP-PRN-001",
                                  f'ToolResultPruneConfig: unknown key "{key}"', key=key)
    values = {"thresholdChars": DEFAULT_THRESHOLD_CHARS, "headChars": DEFAULT_HEAD_CHARS,
              "tailChars": DEFAULT_TAIL_CHARS}
    for key in _KEYS:
        if key in raw:
            value = raw[key]
            low = 1 if key == "thresholdChars" else 0
            if not is_integral(value) or value < low:
                raise CompactionError("CMP_PRUNE_CONFIG", "CMP-PRN-001",
                                      f"ToolResultPruneConfig.{key} ({show_value(value)}) is not an "
                                      f"integer >= {low}", key=key)
            values[key] = int(value)
    marker = len(PRUNE_MARKER)
    if values["headChars"] + marker + values["tailChars"] > values["thresholdChars"]:
        raise CompactionError(
            "CMP_PRUNE_CONFIG", "CMP-PRN-001",
            f"ToolResultPruneConfig: headChars + marker + tailChars ({values['headChars']} + "
            f"{marker} + {values['tailChars']}) exceeds thresholdChars "
            f"({values['thresholdChars']})")
    return PruneConfig(values["thresholdChars"], values["headChars"], values["tailChars"])


def text_chars(blocks: Sequence[Any]) -> int:
    """CMP-PRN-002: code points across the ``text`` blocks."""
    return sum(len(b["text"]) for b in blocks
               if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))


def _is_text(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "text" and isinstance(
        block.get("text"), str)


def prune_content(blocks: Sequence[Any], config: PruneConfig = PruneConfig()
                  ) -> list[Any] | None:
    """CMP-PRN-003: drop the middle of an over-budget text stream, or ``None`` when within
    budget."""
    total = text_chars(blocks)
    if total <= config.threshold_chars:
        return None
    removed_start = config.head_chars
    removed_end = total - config.tail_chars
    out: list[Any] = []
    consumed = 0
    marked = False
    for block in blocks:
        if not _is_text(block):
            out.append(block)
            continue
        text: str = block["text"]
        start, end = consumed, consumed + len(text)
        head_end = min(len(text), max(0, removed_start - start))
        tail_start = min(len(text), max(0, removed_end - start))
        marker = ""
        if start < removed_end and end > removed_start and not marked:
            marker, marked = PRUNE_MARKER, True
        kept = text[:head_end] + marker + text[tail_start:]
        if kept:
            out.append({**block, "text": kept})
        consumed = end
    after = text_chars(out)
    if not marked or after > config.threshold_chars or after >= total:  # pragma: no cover
        raise CompactionError("CMP_PRUNE_CONFIG", "CMP-PRN-003",
                              "tool-result prune could not shrink the content within budget")
    return out


@dataclass(frozen=True, slots=True)
class PruneRewrite:
    """One prune: the original seq, its new ``tool/result`` data and the accounting."""

    original_seq: int
    data: dict[str, Any]
    call_id: Any
    chars_before: int
    chars_after: int


def rewrite_tool_result(seq: int, event: dict[str, Any], config: PruneConfig
                        ) -> PruneRewrite | None:
    """CMP-PRN-004: the content-only rewrite of one current ``tool/result``, or ``None``."""
    data = event.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("message"), dict):
        return None
    try:
        block = data["message"]["content"][0]
        inner = block["content"]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(inner, list):
        return None
    pruned = prune_content(inner, config)
    if pruned is None:
        return None
    new_data = copy.deepcopy(data)
    new_data["message"]["content"][0]["content"] = pruned
    source = data["message"].get("source")
    call_id = source.get("callId") if isinstance(source, dict) else None
    return PruneRewrite(original_seq=seq, data=new_data, call_id=call_id,
                        chars_before=text_chars(inner), chars_after=text_chars(pruned))


__all__ = ["DEFAULT_HEAD_CHARS", "DEFAULT_TAIL_CHARS", "DEFAULT_THRESHOLD_CHARS", "PRUNE_MARKER",
           "PruneConfig", "PruneRewrite", "prune_content", "resolve_prune_config",
           "rewrite_tool_result", "text_chars"]
