"""CLAUDE.md memory files: headings become section tags, list items, paragraphs and fenced code
blocks become entries, ``@path`` imports are kept and optionally expanded (spec chapter
``adapters/claude-md``)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from dshkit.reference.inputs import InputError

from .claude_imports import DEFAULT_MAX_DEPTH, imports_in, is_managed_policy, resolve
from .entries import Entry, EntryBuilder, read_entries
from .errors import OPTION, PAYLOAD, READ_ONLY, UNREPRESENTABLE, AdapterError
from .markdown import (
    BEGIN_MARKER,
    END_MARKER,
    Block,
    Dropped,
    Heading,
    Marker,
    Reader,
    render_item,
)
from .model import AdaptResult, ExportResult, Loss, Where
from .options import Options
from .textutil import BOM, normalise_newlines, strip_bom

FORMAT = "claude-md"
MAX_HEADING_LEVEL = 6
IMPORT_OPTIONS = frozenset({"track", "scope", "source", "path", "expand", "max_depth", "root",
                            "home", "files", "loader"})
EXPORT_OPTIONS = frozenset({"track", "scope", "source", "path", "update"})
Loader = Callable[[str], str | None]


def _text_of(payload: Any) -> str:
    if isinstance(payload, str):
        return payload
    if isinstance(payload, dict) and isinstance(payload.get("text"), str):
        return str(payload["text"])
    raise AdapterError(PAYLOAD, "payload must be Markdown text or {\"text\": \"...\"}",
                       key="payload")


@dataclass(slots=True)
class _Context:
    builder: EntryBuilder
    track: str
    scope: str
    source: str
    expand: bool
    max_depth: int
    root: str
    home: str | None
    loader: Loader | None
    read: set[str] = field(default_factory=set)


def adapt(payload: Any, *, options: dict[str, Any] | None = None) -> AdaptResult:
    opts = Options(options, IMPORT_OPTIONS)
    path = opts.text("path", "CLAUDE.md")
    result = AdaptResult()
    ctx = _Context(EntryBuilder(result), opts.track("agent"), opts.scope("workspace"),
                   opts.source(FORMAT), opts.boolean("expand", False),
                   opts.integer("max_depth", DEFAULT_MAX_DEPTH),
                   opts.text("root", posixpath.dirname(path) or "."), opts.string("home"),
                   _loader(opts))
    if ctx.expand and ctx.loader is None:
        raise AdapterError(OPTION, "option 'expand' needs option 'files' or 'loader'",
                           key="expand")
    ctx.read.add(posixpath.normpath(path))
    _read_file(_text_of(payload), path, 0, [posixpath.normpath(path)], ctx)
    return result


def _loader(opts: Options) -> Loader | None:
    loader = opts.raw.get("loader")
    files = opts.raw.get("files")
    if loader is not None:
        if not callable(loader):
            raise AdapterError(OPTION, "option 'loader' must be callable", key="loader")
        return cast(Loader, loader)
    if files is None:
        return None
    if not isinstance(files, dict) or not all(
            isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in files.items()):
        raise AdapterError(OPTION, "option 'files' must map paths to text or null",
                           key="files")
    table = {posixpath.normpath(k): v for k, v in files.items()}
    return table.get


def _read_file(raw: str, path: str, depth: int, chain: list[str], ctx: _Context) -> None:
    builder = ctx.builder
    text, cr_line = normalise_newlines(strip_bom(raw))
    if cr_line is not None:
        builder.loss("line-endings", "CR LF or CR line endings read as LF",
                     Where(cr_line, None, path), field="text")
    stack: list[Heading] = []
    saved: list[list[Heading]] = []
    reader = Reader(strict=False, markers=True, front_matter=True, path=path)
    for event in reader.read(text):
        if isinstance(event, Heading):
            while stack and stack[-1].level >= event.level:
                stack.pop()
            stack.append(event)
        elif isinstance(event, Marker):
            if event.begin:
                saved.append(stack)
                stack = []
            elif saved:
                stack = saved.pop()
            else:
                builder.loss("markup-dropped", "dshkit end marker without a begin marker",
                             Where(event.line, None, path), value="end marker")
        elif isinstance(event, Dropped):
            builder.loss("markup-dropped", f"{event.what} has no entry",
                         Where(event.line, None, path), value=event.what)
        elif event.text:
            tags = [(h.text, Where(h.line, None, path)) for h in stack if h.text.strip()]
            index = builder.add(track=ctx.track, scope=ctx.scope, text=event.text,
                                source=ctx.source, tags=tags, where=Where(event.start, None,
                                                                          path))
            if event.kind != "fence":
                for line, target in imports_in(event):
                    _reference(index, line, target, path, depth, chain, ctx)


def _reference(index: int, line: int, raw: str, path: str, depth: int, chain: list[str],
               ctx: _Context) -> None:
    resolved = resolve(raw, path, ctx.root, ctx.home)
    ref: dict[str, Any] = {"entry": index, "file": path, "line": line, "path": raw,
                           "resolved": resolved, "expanded": False}
    ctx.builder.result.references.append(ref)
    if not ctx.expand:
        return
    where = Where(line, None, path)

    def lost(kind: str, message: str) -> None:
        ctx.builder.loss(kind, f"@{raw} not expanded: {message}", where, entry=index,
                         field="import", value=raw)

    if resolved is None:
        lost("import-outside-root", f"it leaves {ctx.root!r}")
        return
    if resolved in chain:
        lost("import-cycle", "it is already being read (" + " -> ".join(chain) + ")")
        return
    if depth + 1 > ctx.max_depth:
        lost("import-depth", f"more than {ctx.max_depth} hops from the first file")
        return
    if resolved in ctx.read:
        return
    assert ctx.loader is not None
    try:
        content = ctx.loader(resolved)
    except InputError as exc:  # the bounded opener of adapters.files.import_loader: a link
        # out of the root is a loader failure (ADP-CLI-005), as a FIFO or a too-large file
        lost("import-unreadable", f"{exc.message} ({exc.code})")
        return
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        lost("import-unreadable", str(exc))
        return
    if content is None:
        lost("import-missing", "no such file")
        return
    ctx.read.add(resolved)
    ref["expanded"] = True
    _read_file(content, resolved, depth + 1, [*chain, resolved], ctx)


# -- export -----------------------------------------------------------------------------------


def read_item(text: str) -> str | None:
    """What the reader gives for one entry written as a list item (None: nothing)."""
    events = Reader(strict=False, markers=True, front_matter=False).read(
        normalise_newlines("\n".join(render_item(text)))[0])
    blocks = [e for e in events if isinstance(e, Block) and e.text]
    return blocks[0].text if len(blocks) == 1 else None


def export(entries: Any, *, options: dict[str, Any] | None = None) -> ExportResult:
    """The entries as a managed region between dshkit markers: list items under headings made
    from their tags; with option ``update`` (the current file), only that region changes."""
    opts = Options(options, EXPORT_OPTIONS)
    bucket = (opts.track("agent"), opts.scope("workspace"))
    source = opts.source(FORMAT)
    path = opts.string("path")
    existing = opts.string("update")
    if path is not None and is_managed_policy(path):
        raise AdapterError(READ_ONLY, f"{path} is a managed-policy file: dshkit reads it but "
                           "never writes it", key="path", path=path)
    losses: list[Loss] = []
    groups: dict[tuple[str, ...], list[Entry]] = {(): []}
    for index, entry in enumerate(read_entries(entries)):
        groups.setdefault(entry.tags[:MAX_HEADING_LEVEL], []).append(entry)
        _losses(index, entry, bucket, source, losses)
    region = [BEGIN_MARKER, *_body(groups), END_MARKER]
    if existing is None:
        return ExportResult("\n".join(region) + "\n", "text", losses)
    return ExportResult(update(existing, region), "text", losses)


def _body(groups: dict[tuple[str, ...], list[Entry]]) -> list[str]:
    out: list[str] = []
    previous: tuple[str, ...] = ()
    for path_, members in groups.items():
        if not members:
            continue
        common = 0
        while common < min(len(previous), len(path_)) and previous[common] == path_[common]:
            common += 1
        if path_ and common == len(path_):
            common -= 1
        for level in range(common, len(path_)):
            out += ["", f"{'#' * (level + 1)} {path_[level]}"]
        if path_:
            out.append("")
        for entry in members:
            out += render_item(entry.text)
        previous = path_
    return out


def _losses(index: int, entry: Entry, bucket: tuple[str, str], source: str,
            losses: list[Loss]) -> None:
    where = Where(pointer=f"/{index}")
    if (entry.track, entry.scope) != bucket:
        losses.append(Loss("bucket-changed", f"{entry.track}/{entry.scope} is not carried; "
                           f"reads back as {bucket[0]}/{bucket[1]}", index, where, "bucket",
                           f"{entry.track}/{entry.scope}"))
    for tag in entry.tags[MAX_HEADING_LEVEL:]:
        losses.append(Loss("tag-dropped", f"tag {tag!r} left out: headings nest at most "
                           f"{MAX_HEADING_LEVEL} deep", index, where, "tags", tag))
    for tag in entry.tags[:MAX_HEADING_LEVEL]:
        if _heading_reads_back(tag) != tag:
            losses.append(Loss("tag-dropped", f"tag {tag!r} does not survive as a heading",
                               index, where, "tags", tag))
    if entry.source != source:
        losses.append(Loss("source-changed", f"source is not carried; reads back as {source!r}",
                           index, where, "source", entry.source))
    text = read_item(entry.text)
    if text is None:
        losses.append(Loss("entry-dropped", "this text does not survive as a list item", index,
                           where, "text"))
    elif text != entry.text:
        losses.append(Loss("text-approximated", "as a list item this text reads back "
                           "differently", index, where, "text", text))


def _heading_reads_back(tag: str) -> str | None:
    """The tag a heading made from ``tag`` reads back as (None: no tag at all), found by
    reading a one-heading document with this module's own reader."""
    try:
        result = adapt(f"# {tag}\n\n- x\n")
    except AdapterError:
        return None
    tags = result.entries[0].get("tags", []) if result.entries else []
    return tags[0] if len(tags) == 1 else None


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def update(existing: str, region: list[str]) -> str:
    """``existing`` with its managed region replaced by ``region`` (or the region appended);
    every other byte is kept (ADP-CMD-011)."""
    bom = BOM if existing.startswith(BOM) else ""
    body = existing[len(bom):]
    first_break = re.search(r"\r\n|\r|\n", body)
    newline = first_break.group(0) if first_break else "\n"
    reader = Reader(strict=False, markers=True, front_matter=True)
    markers = [e for e in reader.read(normalise_newlines(body)[0]) if isinstance(e, Marker)]
    block = newline.join(region)
    if not markers:
        if reader.unclosed_fence is not None:
            raise AdapterError(UNREPRESENTABLE, "the file ends inside a code fence opened at "
                               f"line {reader.unclosed_fence}; an appended region would be "
                               "read as code", key="update", line=reader.unclosed_fence)
        if not body:
            return bom + block + newline
        tail = "" if body.endswith(("\n", "\r")) else newline
        return bom + body + tail + newline + block + newline
    if len(markers) != 2 or not markers[0].begin or markers[1].begin:
        bad = next((m for i, m in enumerate(markers) if m.begin != (i == 0)), markers[-1])
        raise AdapterError(PAYLOAD, "the file must hold exactly one dshkit begin marker "
                           "followed by one end marker", key="update", line=bad.line)
    lines = [m.group(0) for m in _LINE.finditer(body)]
    if lines and lines[-1] == "":
        lines.pop()
    first, last = markers[0].line - 1, markers[1].line - 1
    ending = lines[last][len(lines[last].rstrip("\r\n")):]
    return bom + "".join(lines[:first]) + block + ending + "".join(lines[last + 1:])
