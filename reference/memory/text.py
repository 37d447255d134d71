"""String rules of the memory protocol: unit cuts and excerpts, the ASCII case fold, NFC,
one-line text (UTF-16 units, ECMAScript trim and lone surrogates are :mod:`dshkit.reference.text`)."""

from __future__ import annotations

import unicodedata

from ..text import units

ELLIPSIS = "\u2026"
LINE_BREAKS = ("\r\n", "\n", "\r", "\u0085", "\u2028", "\u2029")


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


#: Categories a terminal may act on or render invisibly: controls, format characters (bidi
#: overrides, zero-width), line/paragraph separators, surrogates, private use, unassigned.
_HIDDEN = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp", "Co", "Cn"))
_SHORT = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def visible(text: str) -> str:
    """``text`` as one double-quoted line in which every character that a terminal could act
    on or hide is an escape (``\\n``, ``\\r``, ``\\t``, ``\\xNN``, ``\\uNNNN``, ``\\UNNNNNNNN``),
    so that what is shown is exactly what is stored (TOOL-CLI-013)."""
    out = ['"']
    for ch in text:
        if ch in _SHORT:
            out.append(_SHORT[ch])
        elif unicodedata.category(ch) in _HIDDEN:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code <= 0xFF else
                       f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
