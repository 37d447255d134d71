"""Values the adapters return: entry inputs, the loss report, adapt and export results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: Every kind a loss report may name (ADP-LOS-002).
LOSS_KINDS = (
    "field-dropped",        # a source member with no place in an entry (mem0 user_id, score, ...)
    "item-skipped",         # a whole source item that produces no entry (expired, DELETE event)
    "incomplete",           # the source says it is a partial listing (a next page exists)
    "duplicate-dropped",    # an item the target's own reader drops as a duplicate
    "entry-dropped",        # an entry the target cannot hold at all
    "tag-dropped",          # one tag that cannot be carried or is not a valid tag
    "tags-changed",         # a tag trimmed, or tags read back with others added or reordered
    "text-approximated",    # the text read back differs from the text written
    "bucket-changed",       # track or scope not carried: read back as another bucket
    "source-changed",       # source label not carried: read back as the adapter's label
    "line-endings",         # CR LF or CR read as LF
    "markup-dropped",       # Markdown structure with no entry (front matter, rules, markers)
    "invisible-character",  # invisible or bidirectional control characters, flagged
    "import-missing",       # @path import whose file does not exist
    "import-unreadable",    # @path import whose file cannot be read as UTF-8 text
    "import-outside-root",  # @path import that leaves the directory it was given
    "import-cycle",         # @path import already on the chain of imports
    "import-depth",         # @path import deeper than the hop limit
)

ExportKind = Literal["text", "json", "files"]


@dataclass(frozen=True, slots=True)
class Where:
    """A location in a source or target document."""

    line: int | None = None
    pointer: str | None = None
    path: str | None = None

    def at(self, *, line: int | None = None, pointer: str | None = None) -> Where:
        return Where(line if line is not None else self.line,
                     pointer if pointer is not None else self.pointer, self.path)


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing dropped, approximated or flagged by a conversion (ADP-LOS-001)."""

    kind: str
    message: str
    entry: int | None = None
    where: Where = field(default_factory=Where)
    field: str | None = None
    value: Any = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "entry": self.entry}
        if self.where.path is not None:
            out["path"] = self.where.path
        if self.where.line is not None:
            out["line"] = self.where.line
        if self.where.pointer is not None:
            out["pointer"] = self.where.pointer
        if self.field is not None:
            out["field"] = self.field
        if self.value is not None:
            out["value"] = self.value
        out["message"] = self.message
        return out


@dataclass(slots=True)
class AdaptResult:
    """Entry inputs read from a foreign document, the loss report, and (CLAUDE.md) the
    ``@path`` references found in the entries."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    losses: list[Loss] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"entries": [dict(e) for e in self.entries],
                               "losses": [loss.to_json() for loss in self.losses]}
        if self.references:
            out["references"] = [dict(r) for r in self.references]
        return out


@dataclass(slots=True)
class ExportResult:
    """A foreign document written from entries: text, a JSON value, or several named files
    (``{file name: text}``), with the loss report of the entries."""

    output: str | dict[str, Any] | list[Any]
    kind: ExportKind
    losses: list[Loss] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "output": self.output,
                "losses": [loss.to_json() for loss in self.losses]}
