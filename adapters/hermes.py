"""Hermes agent memory: ``MEMORY.md`` (agent notes) and ``USER.md`` (user profile), entries
separated by a line holding only ``§`` (spec chapter ``adapters/hermes``)."""

from __future__ import annotations

from typing import Any

from .entries import Entry, EntryBuilder, read_entries
from .errors import BUDGET, OPTION, PAYLOAD, UNREPRESENTABLE, AdapterError
from .model import AdaptResult, ExportResult, Loss, Where
from .options import Options
from .textutil import LineIndex, first_visible, normalise_newlines, strip_bom

FORMAT = "hermes"
DELIMITER = "\n§\n"
MEMORY_FILE, USER_FILE = "MEMORY.md", "USER.md"
#: File name -> (target name, track it holds, Hermes's default character limit).
FILES = {MEMORY_FILE: ("memory", "agent", 2200), USER_FILE: ("user", "user", 1375)}
TARGETS = {"memory": MEMORY_FILE, "user": USER_FILE}
IMPORT_OPTIONS = frozenset({"target", "scope", "source"})
EXPORT_OPTIONS = frozenset({"target", "scope", "source", "memory_char_limit", "user_char_limit",
                            "check_limits"})


def adapt(payload: Any, *, options: dict[str, Any] | None = None) -> AdaptResult:
    """One file's text (option ``target`` says which), or ``{"MEMORY.md": text | null,
    "USER.md": text | null}`` where null is a missing file."""
    opts = Options(options, IMPORT_OPTIONS)
    scope, source = opts.scope("user-global"), opts.source(FORMAT)
    result = AdaptResult()
    builder = EntryBuilder(result)
    for name, text in _files(payload, opts):
        if text is not None:
            _read_file(text, name, FILES[name][1], scope, source, builder)
    return result


def _files(payload: Any, opts: Options) -> list[tuple[str, str | None]]:
    if isinstance(payload, str):
        target = opts.string("target", None, tuple(TARGETS))
        if target is None:
            raise AdapterError(OPTION, "a single Hermes file needs option 'target' (memory for "
                               "MEMORY.md, user for USER.md)", key="target")
        return [(TARGETS[target], payload)]
    if isinstance(payload, dict) and payload:
        if opts.has("target"):
            raise AdapterError(OPTION, "option 'target' applies to a single file only",
                               key="target")
        for name, text in payload.items():
            if name not in FILES:
                raise AdapterError(PAYLOAD, f"unknown Hermes memory file {name!r} (expected "
                                   f"{MEMORY_FILE} and/or {USER_FILE})", key=str(name))
            if text is not None and not isinstance(text, str):
                raise AdapterError(PAYLOAD, "file contents must be text, or null for a missing "
                                   "file", key=name)
        return [(name, payload.get(name)) for name in FILES if name in payload]
    raise AdapterError(PAYLOAD, "a Hermes payload is a file's text or {\"MEMORY.md\": ..., "
                       "\"USER.md\": ...}", key="payload")


def _read_file(raw: str, name: str, track: str, scope: str, source: str,
               builder: EntryBuilder) -> None:
    """Hermes's own reader: split on the delimiter, strip each entry, drop empty ones and
    later duplicates (ADP-HRM-002); CR LF and CR are read as LF (ADP-HRM-003)."""
    text, cr_line = normalise_newlines(strip_bom(raw))
    if cr_line is not None:
        builder.loss("line-endings", "CR LF or CR line endings read as LF", Where(cr_line, None,
                     name), field="text")
    lines = LineIndex(text)
    seen: dict[str, int] = {}
    offset = 0
    for chunk in text.split(DELIMITER):
        start = offset
        offset += len(chunk) + len(DELIMITER)
        entry_text = chunk.strip()
        if not entry_text:
            continue
        where = Where(lines.line_of(first_visible(text, start)), None, name)
        if entry_text in seen:
            builder.loss("duplicate-dropped", f"same text as the entry at line "
                         f"{seen[entry_text]}; Hermes keeps the first", where, field="text",
                         value=None)
            continue
        seen[entry_text] = where.line or 0
        builder.add(track=track, scope=scope, text=entry_text, source=source, where=where)


# -- export -----------------------------------------------------------------------------------


def read_back(text: str) -> str:
    """What Hermes reads for an entry written as ``text`` (newlines normalised, stripped)."""
    return normalise_newlines(text)[0].strip()


def representable(text: str) -> bool:
    """False when a line of the entry would be a delimiter (a line holding only ``§``)."""
    return DELIMITER not in f"\n{read_back(text)}\n"


def export(entries: Any, *, options: dict[str, Any] | None = None) -> ExportResult:
    """``{"MEMORY.md": text, "USER.md": text}`` by track, or one file's text with option
    ``target``; refused when a file would exceed Hermes's character limit (ADP-HRM-006)."""
    opts = Options(options, EXPORT_OPTIONS)
    target = opts.string("target", None, tuple(TARGETS))
    scope, source = opts.scope("user-global"), opts.source(FORMAT)
    limits = {MEMORY_FILE: opts.integer("memory_char_limit", FILES[MEMORY_FILE][2], 1),
              USER_FILE: opts.integer("user_char_limit", FILES[USER_FILE][2], 1)}
    check = opts.boolean("check_limits", True)
    chunks: dict[str, list[str]] = {MEMORY_FILE: [], USER_FILE: []}
    losses: list[Loss] = []
    for index, entry in enumerate(read_entries(entries)):
        name = TARGETS[target] if target else (MEMORY_FILE if entry.track == "agent"
                                               else USER_FILE)
        chunk = _entry_chunk(index, entry, name, chunks[name], scope, source, losses)
        if chunk is not None:
            chunks[name].append(chunk)
    files = {name: DELIMITER.join(parts) for name, parts in chunks.items()}
    names = [TARGETS[target]] if target else list(files)
    if check:
        for name in names:
            used = len(files[name])
            if used > limits[name]:
                raise AdapterError(
                    BUDGET, f"{name} would hold {used} characters, over Hermes's limit of "
                    f"{limits[name]}; consolidate entries or raise the limit",
                    key=f"{FILES[name][0]}_char_limit", path=name, limit=limits[name],
                    needed=used, unit="characters")
    if target:
        return ExportResult(files[TARGETS[target]], "text", losses)
    return ExportResult(files, "files", losses)


def _entry_chunk(index: int, entry: Entry, name: str, written: list[str], scope: str,
                 source: str, losses: list[Loss]) -> str | None:
    where = Where(pointer=f"/{index}", path=name)
    if not representable(entry.text):
        raise AdapterError(UNREPRESENTABLE, "a line of this text holds only '§', which Hermes "
                           "reads as an entry separator", pointer=f"/{index}/text", path=name)
    chunk = read_back(entry.text)
    if not chunk:
        losses.append(Loss("entry-dropped", "Hermes strips this text to nothing and drops it",
                           index, where, "text"))
        return None
    if chunk in written:
        losses.append(Loss("duplicate-dropped", "Hermes drops an entry with the same text as an "
                           "earlier one", index, where, "text"))
        return None
    track = FILES[name][1]
    if (entry.track, entry.scope) != (track, scope):
        losses.append(Loss("bucket-changed", f"{entry.track}/{entry.scope} is not carried; "
                           f"{name} reads back as {track}/{scope}", index, where, "bucket",
                           f"{entry.track}/{entry.scope}"))
    for tag in entry.tags:
        losses.append(Loss("tag-dropped", "Hermes entries have no tags", index, where, "tags",
                           tag))
    if entry.source != source:
        losses.append(Loss("source-changed", f"source is not carried; reads back as {source!r}",
                           index, where, "source", entry.source))
    if chunk != entry.text:
        losses.append(Loss("text-approximated", "Hermes strips surrounding whitespace and reads "
                           "CR as LF", index, where, "text", chunk))
    return chunk
