"""The whitespace set every query text rule uses: ECMAScript's ``\\s`` (QRY-TXT-001)."""

from __future__ import annotations

import re
from typing import Final

WHITESPACE: Final = ("\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                     "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
CLASS: Final = "[" + WHITESPACE + "]"
RUN: Final = re.compile(CLASS + "+")


def trim(text: str) -> str:
    return text.strip(WHITESPACE)


def collapse(text: str) -> str:
    """Trim and turn every whitespace run into one space."""
    return RUN.sub(" ", trim(text))


def is_space(char: str) -> bool:
    return char in WHITESPACE
