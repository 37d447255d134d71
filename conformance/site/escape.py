"""Text made safe and visible for a page: HTML-escaped, with every character a reader could not
see (C0 and C1 controls, lone surrogates, bidi and zero-width format characters, line and
paragraph separators, spaces other than U+0020) written as ``\\uXXXX``."""

from __future__ import annotations

import html
import json
import re
from typing import Any

__all__ = ["esc", "json_block", "visible"]

_INVISIBLE = re.compile("[\x00-\x1f\x7f-\xa0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u2069"
                        "\u3000\ud800-\udfff\ufeff\ufff9-\ufffb]")


def visible(text: str, keep: str = "") -> str:
    """``text`` with each invisible character (except those in ``keep``) as ``\\uXXXX``."""
    def sub(match: re.Match[str]) -> str:
        char = match[0]
        return char if char in keep else f"\\u{ord(char):04x}"

    return _INVISIBLE.sub(sub, text)


def esc(text: object, keep: str = "") -> str:
    """HTML text (also safe in a double-quoted attribute) of ``text``, invisibles escaped."""
    return html.escape(visible(str(text), keep), quote=True)


def json_block(value: Any) -> str:
    """``value`` as indented JSON for a ``<pre>``: JSON escapes the C0 controls itself; lone
    surrogates and the other invisibles, which JSON would write raw, become ``\\uXXXX``."""
    text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=True)
    return esc(text, keep="\n")
