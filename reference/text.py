"""Strings as an ECMAScript host sees them, for every area: UTF-16 code units, white space
and trim, lone surrogates.

Python strings are sequences of code points and may hold lone surrogates (from ``\\udXXX``
escapes in JSON text); DSH is written in TypeScript, whose strings are UTF-16 code units.
"""

from __future__ import annotations

import re
from typing import Final

#: ECMAScript WhiteSpace and LineTerminator code points: what ``\s`` matches and what
#: ``String.prototype.trim`` removes.
WHITESPACE: Final = ("\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                     "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
#: ECMAScript LineTerminator code points.
LINE_TERMINATORS: Final = "\n\r\u2028\u2029"
#: The surrogate code points, as a regular-expression class range (for larger classes).
SURROGATE_RANGE: Final = "\ud800-\udfff"
#: A surrogate code point. A Python string holds a well-formed pair as one code point above
#: U+FFFF, so every match in one is a lone surrogate.
LONE_SURROGATE: Final = re.compile("[" + SURROGATE_RANGE + "]")


def units(text: str) -> int:
    """Length in UTF-16 code units (ECMAScript ``String.length``; a lone surrogate is one)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_trim(text: str) -> str:
    """ECMAScript ``String.prototype.trim``."""
    return text.strip(WHITESPACE)


def has_lone_surrogate(text: str) -> bool:
    return not text.isascii() and LONE_SURROGATE.search(text) is not None


__all__ = ["LINE_TERMINATORS", "LONE_SURROGATE", "SURROGATE_RANGE", "WHITESPACE",
           "has_lone_surrogate", "js_trim", "units"]
