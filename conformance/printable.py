"""Strings an implementation or a vector holds, made safe for every output of the kit.

A vector may expect a lone surrogate, a harness may answer with terminal escape sequences or a
megabyte of text: none of it may stop a run or corrupt a report. :func:`visible` escapes what a
terminal, XML or Markdown cannot show (``\\ud800``, ``\\x1b``) and shortens what is huge;
:func:`json_text` writes JSON that is valid UTF-8 and still reads back to the same strings.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["DETAIL_LIMIT", "json_text", "visible"]

#: Characters of a case's detail shown on the console or in a JUnit message; the JSON report
#: keeps all of it.
DETAIL_LIMIT = 2000

# C0 and C1 controls, DEL, lone surrogates, and what XML 1.0 forbids (U+FFFE, U+FFFF).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_KEEP_LAYOUT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object, limit: int | None = None, *, layout: bool = False) -> str:
    """``text`` with every control character, lone surrogate and XML-forbidden character
    escaped as Python writes it (``\\x1b``, ``\\ud800``); tabs and newlines are kept when
    ``layout`` is true. Longer than ``limit``: cut, saying how much was left out."""
    value = text if isinstance(text, str) else str(text)
    if limit is not None and len(value) > limit:
        value = value[:limit] + f"... ({len(value) - limit} more characters)"
    return (_KEEP_LAYOUT if layout else _UNPRINTABLE).sub(_escape, value)


def json_text(value: Any, *, indent: int | None = None) -> str:
    """JSON of ``value`` without ASCII escaping, except for lone surrogates, written as JSON
    escapes (``"\\ud800"``): the text encodes as UTF-8 and parses back to ``value``."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    # json.dumps escapes every control character already; a surrogate can only stand inside a
    # string literal, where its \\u escape means the same character.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
