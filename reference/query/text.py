"""Text as the index stores it: lone surrogates (which SQLite cannot hold) become U+FFFD,
one code point for one, so code-point lengths do not change (QRY-IDX-009)."""

from __future__ import annotations

import re

_LONE = re.compile("[\ud800-\udfff]")


def store_text(text: str) -> str:
    return _LONE.sub("\ufffd", text)
