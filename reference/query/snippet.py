"""Snippets: a bounded, whitespace-normalized excerpt around the first match (QRY-SNP-*).
Lengths are counted in code points."""

from __future__ import annotations

from .sql import HIGHLIGHT_END, HIGHLIGHT_START
from .whitespace import is_space

ELLIPSIS = "\u2026"


def _clean(marked: str) -> tuple[list[str], int]:
    chars: list[str] = []
    match_start: int | None = None
    for char in marked:
        if char == HIGHLIGHT_START:
            if match_start is None:
                match_start = len(chars)
            continue
        if char == HIGHLIGHT_END:
            continue
        if is_space(char):
            if chars and chars[-1] != " ":
                chars.append(" ")
        else:
            chars.append(char)
    if chars and chars[-1] == " ":
        chars.pop()
    return chars, match_start or 0


def make_snippet(marked: str, max_chars: int) -> str:
    """At most ``max_chars`` code points of ``marked`` (text with highlight markers), with
    an ellipsis on each side that was cut (QRY-SNP-001..003)."""
    chars, match_start = _clean(marked)
    if len(chars) <= max_chars:
        return "".join(chars)
    if max_chars == 1:
        return ELLIPSIS
    index = min(match_start, len(chars) - 1)
    start = max(0, index - max_chars // 3)
    prefix = ELLIPSIS if start > 0 else ""
    suffix = ELLIPSIS
    length = max_chars - len(prefix) - len(suffix)
    if length < 1:
        start, suffix = index, ""
        length = max_chars - len(prefix)
    elif index >= start + length:
        start = index - length + 1
    end = min(len(chars), start + length)
    if end == len(chars):
        suffix = ""
        length = max_chars - len(prefix)
        start = max(0, end - length)
    end = min(len(chars), start + length)
    return prefix + "".join(chars[start:end]) + suffix
