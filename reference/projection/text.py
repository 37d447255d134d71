"""Byte-exact text primitives of the projection: UTF-8 sizes, tag-safe JSON, head/tail
retention and truncation with an omission notice (REF-RET-*, REF-TXT-*).

Strings are measured the way an ECMAScript host measures them: a lone surrogate costs the
three bytes of U+FFFD, and a JSON text escapes it as ``\\uXXXX``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ..json import codec as jsoncodec
from ..text import LONE_SURROGATE

NOTICE_OPEN: Final = "\n[\u2026 omitted "
NOTICE_CLOSE: Final = " UTF-8 bytes \u2026]"


def well_formed(text: str) -> str:
    """``text`` with surrogate pairs joined and every lone surrogate replaced by U+FFFD."""
    if not LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def utf8(text: str) -> bytes:
    """The UTF-8 encoding an ECMAScript ``TextEncoder`` produces."""
    return well_formed(text).encode("utf-8")


def utf8_len(text: str) -> int:
    """``Buffer.byteLength(text, "utf8")``."""
    return len(utf8(text))


def tag_safe(value: Any) -> str:
    """Compact JSON exactly as ``JSON.stringify`` writes it, with every ``<`` written as
    ``\\u003c`` so the text cannot spell a framing tag (REF-TXT-002)."""
    try:
        text = jsoncodec.dumps(value)
    except (TypeError, ValueError) as exc:
        raise TypeError("session-reference data is not JSON-serializable") from exc
    return text.replace("<", "\\u003c")


def notice(omitted: int) -> str:
    """The omission notice appended to a truncated text (REF-RET-006)."""
    return f"{NOTICE_OPEN}{omitted}{NOTICE_CLOSE}"


def _trim_partial_tail(data: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the end of a cut prefix."""
    i = len(data) - 1
    while i >= 0 and (data[i] & 0xC0) == 0x80 and len(data) - i <= 3:
        i -= 1
    if i < 0:
        return data
    lead = data[i]
    expected = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else (
        4 if lead < 0xF8 else 0)
    if expected == 0:
        return data
    return data[:i] if len(data) - i < expected else data


def _trim_leading_continuations(data: bytes) -> bytes:
    i = 0
    while i < len(data) and (data[i] & 0xC0) == 0x80:
        i += 1
    return data[i:]


@dataclass(frozen=True, slots=True)
class Retained:
    """A retained text and the exact number of UTF-8 bytes left out of it."""

    text: str
    omitted: int


def head_tail(text: str, head: int, tail: int) -> Retained:
    """Keep at most ``head`` leading and ``tail`` trailing UTF-8 bytes of ``text``, each cut
    moved inward to a character boundary (REF-RET-007)."""
    data = utf8(text)
    n = len(data)
    prefix_len = min(n, head)
    suffix_len = min(n - prefix_len, tail)
    if n - prefix_len - suffix_len == 0:
        return Retained(data.decode("utf-8", "replace"), 0)
    prefix = _trim_partial_tail(data[:prefix_len])
    suffix = _trim_leading_continuations(data[n - suffix_len:])
    kept = prefix.decode("utf-8", "replace") + suffix.decode("utf-8", "replace")
    return Retained(kept, n - len(prefix) - len(suffix))


def truncate_with_notice(text: str, max_bytes: int) -> Retained:
    """The longest head/tail cut of ``text`` that, with its notice, fits ``max_bytes`` UTF-8
    bytes, found by the exact binary search of REF-RET-006; ``""`` when nothing fits."""
    total = utf8_len(text)
    if total <= max_bytes:
        return Retained(text, 0)
    low, high = 0, max_bytes
    best = Retained("", total)
    while low <= high:
        middle = (low + high) // 2
        cut = head_tail(text, (middle + 1) // 2, middle // 2)
        candidate = cut.text + notice(cut.omitted)
        if utf8_len(candidate) <= max_bytes:
            best = Retained(candidate, cut.omitted)
            low = middle + 1
        else:
            high = middle - 1
    return best
