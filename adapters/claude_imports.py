"""``@path`` imports of CLAUDE.md files: finding them outside code, resolving them, and the
managed-policy locations (spec chapter ``adapters/claude-md``, section "Imports")."""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_right
from collections.abc import Iterator

from .markdown import Block, fence_closes, fence_opens

IMPORT = re.compile(r"(?:(?<=\s)|^)@(\S+)")
BACKTICKS = re.compile(r"`+")
_NOT_NEWLINE = re.compile(r"[^\n]")
TRAILING = ".,;:!?)]}>'\""
DEFAULT_MAX_DEPTH = 5

#: Directories whose files are managed policy: read, never written (ADP-CMD-008).
MANAGED_DIRS = ("/etc/claude-code/", "/library/application support/claudecode/",
                "c:/programdata/claudecode/", "c:/program files/claudecode/")


def is_managed_policy(path: str) -> bool:
    """True for a file under one of the managed-policy directories of Claude Code (Linux/WSL,
    macOS, and the two Windows locations); case-insensitive, ``\\`` read as ``/``."""
    folded = path.replace("\\", "/").lower()
    return any(folded.startswith(prefix) for prefix in MANAGED_DIRS)


def imports_in(block: Block) -> Iterator[tuple[int, str]]:
    """(line, path) of every ``@path`` in a paragraph or list item, outside fenced code and
    code spans; trailing punctuation is not part of the path."""
    kept: list[str] = []
    numbers: list[int] = []
    fence: tuple[str, int] | None = None
    for line, number in zip(block.lines, block.numbers, strict=True):
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
            kept.append("")
        else:
            fence = fence_opens(line)
            kept.append("" if fence is not None else line)
        numbers.append(number)
    text = blank_code_spans("\n".join(kept))
    starts = [0]
    for line in kept[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    for match in IMPORT.finditer(text):
        raw = match.group(1).rstrip(TRAILING)
        if raw and not raw.startswith("@"):
            yield numbers[bisect_right(starts, match.start()) - 1], raw


def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every code span of ``text``: a run of n backticks up to the next run of
    exactly n. Linear: each run is visited once, its closer found from a table built from the
    right (a backtracking pattern took quadratic time on a text of backtick runs)."""
    runs = [(m.start(), m.end()) for m in BACKTICKS.finditer(text)]
    closer: list[int | None] = [None] * len(runs)
    seen: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        start, end = runs[index]
        closer[index] = seen.get(end - start)
        seen[end - start] = index
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        match = closer[index]
        if match is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[match][1]))
        index = match + 1
    return spans


def blank_code_spans(text: str) -> str:
    """``text`` with every character of its code spans but line feeds made a space."""
    pieces: list[str] = []
    last = 0
    for start, end in code_spans(text):
        pieces += [text[last:start], _NOT_NEWLINE.sub(" ", text[start:end])]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def resolve(raw: str, importing: str, root: str, home: str | None) -> str | None:
    """The normalised path of an import, or None when it leaves ``root`` (or is ``~/...``
    without a home directory)."""
    if raw.startswith("~/") or raw == "~":
        if home is None:
            return None
        target = home + raw[1:]
    elif raw.startswith("/"):
        target = raw
    else:
        target = posixpath.join(posixpath.dirname(importing), raw)
    target = posixpath.normpath(target)
    return target if inside(target, root) else None


def inside(path: str, root: str) -> bool:
    """Lexical containment of normalised POSIX paths (no file system access)."""
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    if posixpath.isabs(path) != posixpath.isabs(root):
        return False
    if root == "/":
        return True
    if root == ".":
        return not (path == ".." or path.startswith("../"))
    return path == root or path.startswith(root + "/")
