"""Text as the index stores it: lone surrogates (which SQLite cannot hold) become U+FFFD,
one code point for one, so code-point lengths do not change (QRY-IDX-009)."""

from __future__ import annotations

import re

from ..text import LONE_SURROGATE, SURROGATE_RANGE

#: What a stored document cannot hold (QRY-IDX-009): NUL, the highlight markers U+FDD0 and
#: U+FDD1, and lone surrogates.
_UNSAFE = re.compile("[\x00\ufdd0\ufdd1" + SURROGATE_RANGE + "]")


def store_text(text: str) -> str:
    return LONE_SURROGATE.sub("\ufffd", text)


def document_text(text: str) -> str:
    """``store_text(sanitize(text))`` in one pass: every unsafe code point becomes U+FFFD, so
    the length in code points does not change."""
    if text.isascii():
        return text.replace("\0", "\ufffd") if "\0" in text else text
    if "\0" in text or "\ufdd0" in text or "\ufdd1" in text:
        return _UNSAFE.sub("\ufffd", text)
    try:  # only a lone surrogate makes the encoding fail (three substring tests and one
        text.encode("utf-8")  # encoding take less than one pass of the pattern)
    except UnicodeEncodeError:
        return _UNSAFE.sub("\ufffd", text)
    return text
