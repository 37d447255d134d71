"""A small line-based Markdown block reader shared by the ``hermes-bullets`` and ``claude-md``
adapters (grammar in spec chapter ``adapters/claude-md``, section "Blocks").

It recognises ATX headings, list items (with indented and lazy continuation lines), fenced
code blocks, paragraphs, thematic breaks, YAML front matter and dshkit's managed-region
markers. It is not CommonMark: it keeps every character of an entry and only decides where
entries begin and end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dshkit.reference.text import js_trim

from .errors import PAYLOAD, AdapterError

#: Group 2 keeps trailing blanks (strip them): a lazy group before ``[ \t]*$`` backtracked in
#: quadratic time over a long run of blanks.
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
BULLET = re.compile(r"^( {0,3})([-*+]|[0-9]{1,9}[.)])(?:([ \t]+)(.*))?$")
BEGIN = re.compile(r"^<!-- dshkit:begin\b.*-->[ \t]*$")
END = re.compile(r"^<!-- dshkit:end -->[ \t]*$")
BEGIN_MARKER = "<!-- dshkit:begin (entries below are managed by dshkit; edits here are replaced " \
    "on the next export) -->"
END_MARKER = "<!-- dshkit:end -->"


@dataclass(slots=True)
class Block:
    """An entry-to-be: a list item, a paragraph or a fenced code block."""

    kind: str
    start: int
    lines: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    content_col: int = 0

    def add(self, line: str, number: int) -> None:
        self.lines.append(line)
        self.numbers.append(number)

    @property
    def text(self) -> str:
        return js_trim("\n".join(self.lines))


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class Marker:
    begin: bool
    line: int


@dataclass(frozen=True, slots=True)
class Dropped:
    what: str
    line: int


Event = Block | Heading | Marker | Dropped


def is_blank(line: str) -> bool:
    return line.strip(" \t") == ""


def _dedent(line: str, width: int) -> str:
    index = 0
    while index < len(line) and index < width and line[index] in " \t":
        index += 1
    return line[index:]


def fence_opens(line: str) -> tuple[str, int] | None:
    match = FENCE.match(line)
    if not match:
        return None
    marker, info = match.group(1), match.group(2)
    if marker[0] == "`" and "`" in info:
        return None
    return marker[0], len(marker)


def fence_closes(line: str, fence: tuple[str, int]) -> bool:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return False
    run = len(stripped) - len(stripped.lstrip(fence[0]))
    return run >= fence[1] and is_blank(stripped[run:])


class Reader:
    """Splits normalised Markdown text into events. ``strict`` refuses any line that is not a
    heading, a list item, a continuation or blank (the bullets grammar)."""

    def __init__(self, *, strict: bool, markers: bool, front_matter: bool,
                 path: str | None = None) -> None:
        self.strict = strict
        self.markers = markers
        self.front_matter = front_matter
        self.path = path
        self.events: list[Event] = []
        self.block: Block | None = None
        self.fence: tuple[str, int] | None = None
        self.pending = 0
        self.unclosed_fence: int | None = None

    def _close(self) -> None:
        if self.block is not None:
            self.events.append(self.block)
        self.block, self.fence, self.pending = None, None, 0

    def _refuse(self, number: int, line: str) -> AdapterError:
        preview = line if len(line) <= 40 else line[:40] + "…"
        return AdapterError(PAYLOAD, f"line {number} is not a heading, a bullet or an indented "
                            f"continuation ({preview!r}); this format holds bullets only, use "
                            "claude-md for prose", line=number, path=self.path)

    def read(self, text: str) -> list[Event]:
        lines = text.split("\n")
        start = 0
        if self.front_matter and lines and lines[0] == "---":
            for index in range(1, len(lines)):
                if lines[index] in ("---", "..."):
                    self.events.append(Dropped("front matter", 1))
                    start = index + 1
                    break
        for index in range(start, len(lines)):
            self._line(lines[index], index + 1)
        if self.block is not None and self.block.kind == "fence":
            self.unclosed_fence = self.block.start
        self._close()
        return self.events

    def _line(self, line: str, number: int) -> None:
        block = self.block
        if block is not None and block.kind == "fence":
            block.add(line, number)
            if self.fence is not None and fence_closes(line, self.fence):
                self._close()
            return
        if is_blank(line):
            if block is not None and block.kind == "item":
                self.pending += 1
            else:
                self._close()
            return
        indented = line[0] in " \t"
        if block is not None and block.kind == "item":
            if indented:
                for _ in range(self.pending):
                    block.add("", number)
                self.pending = 0
                block.add(_dedent(line, block.content_col), number)
                return
            if self.pending == 0 and not self.strict and self._lazy(line):
                block.add(line, number)
                return
        if self.markers and (BEGIN.match(line) or END.match(line)):
            self._close()
            self.events.append(Marker(bool(BEGIN.match(line)), number))
            return
        heading = HEADING.match(line)
        if heading:
            self._close()
            self.events.append(Heading(len(heading.group(1)),
                                       (heading.group(2) or "").rstrip(" \t"), number))
            return
        if BREAK.match(line):
            if self.strict:
                raise self._refuse(number, line)
            self._close()
            self.events.append(Dropped("thematic break", number))
            return
        fence = fence_opens(line)
        if fence is not None and not self.strict:
            self._close()
            self.block, self.fence = Block("fence", number), fence
            self.block.add(line, number)
            return
        bullet = BULLET.match(line)
        if bullet:
            self._close()
            indent, marker, space, content = bullet.groups()
            item = Block("item", number)
            item.content_col = len(indent) + len(marker) + (len(space) if space else 1)
            item.add(content or "", number)
            self.block = item
            return
        if self.strict:
            raise self._refuse(number, line)
        if block is not None and block.kind == "paragraph":
            block.add(line, number)
            return
        self._close()
        self.block = Block("paragraph", number)
        self.block.add(line, number)

    def _lazy(self, line: str) -> bool:
        return not (HEADING.match(line) or BREAK.match(line) or BULLET.match(line)
                    or fence_opens(line) is not None
                    or (self.markers and (BEGIN.match(line) or END.match(line))))


def render_item(text: str) -> list[str]:
    """An entry as one list item: ``- `` then the first line, later lines indented by two
    spaces (``*`` when ``-`` would make the line a thematic break); CR LF and CR are written as
    LF, as the reader would read them."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first = f"- {lines[0]}" if lines[0] else "-"
    if BREAK.match(first):
        first = f"* {lines[0]}"
    return [first] + [f"  {line}" if not is_blank(line) else "" for line in lines[1:]]
