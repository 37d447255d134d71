"""String rules shared by the protocol: UTF-16 units, ECMAScript trim, the ASCII case fold."""

from __future__ import annotations

import re
import unicodedata

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim removes (MEM-ENT-004).
JS_WHITESPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
ELLIPSIS = "\u2026"
_SURROGATE = re.compile("[\ud800-\udfff]")
LINE_BREAKS = ("\r\n", "\n", "\r", "\u0085", "\u2028", "\u2029")


def units(text: str) -> int:
    """Length in UTF-16 code units (what ECMAScript ``String.length`` counts)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cut_units(text: str, limit: int) -> str:
    """The longest prefix of at most ``limit`` units that does not split a surrogate pair."""
    if units(text) <= limit:
        return text
    used = 0
    for index, ch in enumerate(text):
        width = 2 if ord(ch) > 0xFFFF else 1
        if used + width > limit:
            return text[:index]
        used += width
    return text


def excerpt(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` units plus an ellipsis when it was longer."""
    return text if units(text) <= limit else cut_units(text, limit) + ELLIPSIS


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def fold(text: str) -> str:
    """The protocol's one case fold: ASCII A-Z to a-z, nothing else (MEM-MAT-001).

    ``str.lower`` on an ASCII string and ``bytes.lower`` on any UTF-8 encoding change exactly
    the bytes A-Z; ``surrogatepass`` carries lone surrogates through unchanged.
    """
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def one_line(text: str) -> str:
    """Every line break replaced by one space, so text cannot start a new line (MEM-SNP-002)."""
    for brk in LINE_BREAKS:
        text = text.replace(brk, " ")
    return text


def has_lone_surrogate(text: str) -> bool:
    return not text.isascii() and _SURROGATE.search(text) is not None
