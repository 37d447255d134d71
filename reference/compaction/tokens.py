"""The fixed token-estimate heuristic (spec chapter ``compaction/tokens``).

Lengths are UTF-16 code units, as ECMAScript ``String.length`` counts them: a character outside
the Basic Multilingual Plane counts 2. Nothing here is configurable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..json import codec as jsoncodec
from ..text import units

CHARS_PER_TOKEN = 4
BLOCK_OVERHEAD = 4
ROLE_OVERHEAD = 4


def utf16_length(text: str) -> int:
    """ECMAScript ``String.length`` of ``text`` (lone surrogates count 1)."""
    return units(text)


def _tokens(text: str) -> int:
    return -(-utf16_length(text) // CHARS_PER_TOKEN)


def _json_price(block: Any) -> int:
    return BLOCK_OVERHEAD + _tokens(jsoncodec.dumps(block))


def estimate_block(block: Any) -> int:
    """CMP-TOK-002: the price of one content block."""
    if not isinstance(block, dict):
        return _json_price(block)
    kind = block.get("type")
    if kind in ("text", "reasoning") and isinstance(block.get("text"), str):
        return _tokens(block["text"]) + BLOCK_OVERHEAD
    if (kind == "tool-call" and isinstance(block.get("name"), str)
            and isinstance(block.get("arguments"), str)):
        return _tokens(block["name"]) + _tokens(block["arguments"]) + BLOCK_OVERHEAD
    if kind == "tool-result" and isinstance(block.get("content"), list):
        return estimate_content(block["content"]) + BLOCK_OVERHEAD
    return _json_price(block)


def estimate_content(blocks: Sequence[Any]) -> int:
    """CMP-TOK-002: the sum of the block prices."""
    return sum(estimate_block(block) for block in blocks)


def estimate_message(message: Any) -> int:
    """CMP-TOK-003: content price plus the role overhead."""
    content = message.get("content") if isinstance(message, dict) else None
    return estimate_content(content if isinstance(content, list) else []) + ROLE_OVERHEAD


def estimate_system(system: Any) -> int:
    """CMP-TOK-004: the system prompt of a request header (0 when absent or empty)."""
    if not isinstance(system, str) or system == "":
        return 0
    return _tokens(system) + ROLE_OVERHEAD


def estimate_tools(tools: Any) -> int:
    """CMP-TOK-004: the tool schemas of a request header (0 when absent or empty)."""
    if not isinstance(tools, list) or not tools:
        return 0
    return _tokens(jsoncodec.dumps(tools)) + BLOCK_OVERHEAD


def estimate_header(header: Any) -> int:
    if not isinstance(header, dict):
        return 0
    return estimate_system(header.get("system")) + estimate_tools(header.get("tools"))


__all__ = ["BLOCK_OVERHEAD", "CHARS_PER_TOKEN", "ROLE_OVERHEAD", "estimate_block",
           "estimate_content", "estimate_header", "estimate_message", "estimate_system",
           "estimate_tools", "utf16_length"]
