"""The whitespace set every query text rule uses: ECMAScript's ``\\s`` (QRY-TXT-001)."""

from __future__ import annotations

import re
from typing import Final

from ..text import WHITESPACE, js_trim

CLASS: Final = "[" + WHITESPACE + "]"
RUN: Final = re.compile(CLASS + "+")


def trim(text: str) -> str:
    return js_trim(text)


def collapse(text: str) -> str:
    """Trim and turn every whitespace run into one space."""
    return RUN.sub(" ", trim(text))


def is_space(char: str) -> bool:
    return char in WHITESPACE
