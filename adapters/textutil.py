"""Text rules shared by the adapters: BOM, line endings, invisible characters, line numbers."""

from __future__ import annotations

import bisect

BOM = "\ufeff"

#: Invisible and bidirectional control characters flagged on every import and export
#: (ADP-SEC-001): soft hyphen, Arabic letter mark, Mongolian vowel separator, zero-width and
#: directional marks, bidi embeddings/overrides/isolates, word joiner and invisible operators,
#: deprecated format characters, the byte order mark, interlinear annotation controls, and the
#: tag characters that can smuggle ASCII text.
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x061C, 0x061C), (0x180E, 0x180E), (0x200B, 0x200F),
    (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB), (0xE0000, 0xE007F),
)


def is_invisible(ch: str) -> bool:
    code = ord(ch)
    return any(low <= code <= high for low, high in INVISIBLE_RANGES)


def invisible_in(*texts: str) -> list[str]:
    """The distinct invisible characters of ``texts`` as ``U+XXXX``, in order of appearance."""
    found: list[str] = []
    for text in texts:
        for ch in text:
            if is_invisible(ch):
                name = f"U+{ord(ch):04X}"
                if name not in found:
                    found.append(name)
    return found


def strip_bom(text: str) -> str:
    """A leading byte order mark is an encoding signature, not content."""
    return text[1:] if text.startswith(BOM) else text


def normalise_newlines(text: str) -> tuple[str, int | None]:
    """CR LF and lone CR read as LF (as Python's text mode reads files); also returns the
    1-based line of the first CR, or None when there was none."""
    index = text.find("\r")
    if index < 0:
        return text, None
    line = text.count("\n", 0, index) + 1
    return text.replace("\r\n", "\n").replace("\r", "\n"), line


class LineIndex:
    """Offsets to 1-based line numbers in one text."""

    def __init__(self, text: str) -> None:
        self._starts = [0]
        for index, ch in enumerate(text):
            if ch == "\n":
                self._starts.append(index + 1)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)


def first_visible(text: str, offset: int = 0) -> int:
    """Offset of the first non-whitespace character at or after ``offset`` (or ``offset``)."""
    for index in range(offset, len(text)):
        if not text[index].isspace():
            return index
    return offset
