"""The specification's Divergence notes, and what a baseline reason says about a case.

A note is a block quote starting ``> **Divergence.**`` or ``> **Divergence (G1, G8).**`` after
a requirement's anchor; the ``G`` numbers are dsh-memento's gap notes. ``spec/divergences.md``
groups DSH's divergences in classes (``## `cls` {#cls}``). A baseline reason names either a
class (``DSH divergence [cls]: ... (divergence note at REQ)``), a gap
(``dsh-memento divergence G11: ... (Divergence note G11 at REQ, ...)``), a difference found
without a note (``... found (no note): ...``), or, for a skip, why the operation is not
exported."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Explanation", "Note", "NoteIndex", "explain", "load_notes"]

_ANCHOR = re.compile(r"\{#(?P<id>[A-Z]{2,4}-[A-Z]{2,5}-\d{3})[ }]")
_NOTE = re.compile(r"^> \*\*Divergence(?: \((?P<gaps>[^)]*)\))?\.\*\*\s*(?P<text>.*)$")
_CLASS = re.compile(r"^## `(?P<cls>[a-z0-9-]+)` \{#(?P=cls)\}")
_GAP = re.compile(r"\bG(\d{1,3})\b")
_REQ = re.compile(r"[A-Z]{2,4}-[A-Z]{2,5}-\d{3}")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


@dataclass(frozen=True, slots=True)
class Note:
    requirement: str  # the requirement the note follows
    file: str  # its chapter, relative to the spec root
    gaps: tuple[str, ...]  # "G1", ... (empty for a DSH note)
    text: str  # plain text (Markdown links reduced to their text)


@dataclass(frozen=True, slots=True)
class NoteIndex:
    notes: tuple[Note, ...]
    classes: frozenset[str]  # the classes of spec/divergences.md

    def at(self, requirement: str) -> list[Note]:
        return [n for n in self.notes if n.requirement == requirement]

    def of_gap(self, gap: str) -> list[Note]:
        return [n for n in self.notes if gap in n.gaps]


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a case is an expected failure: ``kind`` is ``class`` (a DSH divergence class),
    ``gap`` (a dsh-memento gap note), ``found`` (a difference with no note yet), ``skip`` (an
    operation the implementation does not offer) or ``unmapped`` (a reason that names no
    note the specification has)."""

    kind: str
    label: str  # the class or gap ("" for found, skip, unmapped)
    requirement: str | None  # where the note is (or the requirement the reason names)
    text: str  # the reason as the baseline gives it


def _plain(text: str) -> str:
    return _LINK.sub(r"\1", text).replace("`", "").replace("**", "")


def _notes_of(path: Path, root: Path) -> Iterable[Note]:
    requirement: str | None = None
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        anchor = _ANCHOR.search(line)
        if anchor and line.startswith("**"):
            requirement = anchor["id"]
        match = _NOTE.match(line)
        if match and requirement is not None:
            body = [match["text"]]
            while i + 1 < len(lines) and lines[i + 1].startswith(">"):
                i += 1
                body.append(lines[i][1:].strip())
            gaps = tuple(f"G{n}" for n in _GAP.findall(match["gaps"] or ""))
            yield Note(requirement, path.relative_to(root).as_posix(), gaps,
                       _plain(" ".join(part for part in body if part)))
        i += 1


def load_notes(spec: Path | None) -> NoteIndex:
    """Every Divergence note under ``spec`` (none when there is no spec directory)."""
    if spec is None or not spec.is_dir():
        return NoteIndex((), frozenset())
    notes = [note for path in sorted(spec.rglob("*.md")) for note in _notes_of(path, spec)]
    page = spec / "divergences.md"
    classes = frozenset(m["cls"] for line in (page.read_text("utf-8").splitlines()
                                              if page.is_file() else [])
                        if (m := _CLASS.match(line)))
    return NoteIndex(tuple(notes), classes)


def explain(reason: str, status: str, index: NoteIndex) -> Explanation:
    """What a baseline ``reason`` for a case of ``status`` maps to, checked against the notes
    the specification actually has."""
    named = _REQ.findall(reason)
    requirement = named[-1] if named else None
    head = reason.split(":", 1)[0]
    cls = re.search(r"divergence \[(?P<cls>[a-z0-9-]+)\]", head)
    if cls:
        if cls["cls"] in index.classes:
            return Explanation("class", cls["cls"], requirement, reason)
        return Explanation("unmapped", cls["cls"], requirement, reason)
    gap = re.search(r"divergence (?P<gap>G\d{1,3})\b", head)
    if gap:
        if index.of_gap(gap["gap"]):
            notes = index.of_gap(gap["gap"])
            at = [n.requirement for n in notes if n.requirement == requirement]
            return Explanation("gap", gap["gap"], at[0] if at else notes[0].requirement, reason)
        return Explanation("unmapped", gap["gap"], requirement, reason)
    if "found (no note)" in head:
        return Explanation("found", "", requirement, reason)
    if status == "skipped":
        return Explanation("skip", "", None, reason)
    return Explanation("unmapped", "", requirement, reason)
