"""The ``## section`` + bullets Markdown that dsh-memento's ``hermes-memory-md`` adapter reads
and writes (spec chapter ``adapters/hermes``, section "The bullets variant")."""

from __future__ import annotations

from typing import Any

from dshkit.reference.memory.inputs import BUCKETS

from .entries import Entry, EntryBuilder, read_entries
from .errors import PAYLOAD, AdapterError
from .markdown import Block, Heading, Reader, render_item
from .model import AdaptResult, ExportResult, Loss, Where
from .options import Options
from .textutil import normalise_newlines, strip_bom

FORMAT = "hermes-bullets"
BUCKET_NAMES = {f"{track}/{scope}": (track, scope) for track, scope in BUCKETS}
OPTIONS = frozenset({"track", "scope", "source"})


def _text_of(payload: Any) -> str:
    if isinstance(payload, str):
        return payload
    if isinstance(payload, dict) and isinstance(payload.get("text"), str):
        return str(payload["text"])
    raise AdapterError(PAYLOAD, "payload must be Markdown text or {\"text\": \"...\"}",
                       key="payload")


def adapt(payload: Any, *, options: dict[str, Any] | None = None) -> AdaptResult:
    opts = Options(options, OPTIONS)
    default_bucket = (opts.track("user"), opts.scope("user-global"))
    source = opts.source(FORMAT)
    result = AdaptResult()
    builder = EntryBuilder(result)
    text, cr_line = normalise_newlines(strip_bom(_text_of(payload)))
    if cr_line is not None:
        builder.loss("line-endings", "CR LF or CR line endings read as LF", Where(cr_line),
                     field="text")
    bucket, section = default_bucket, None
    for event in Reader(strict=True, markers=False, front_matter=False).read(text):
        if isinstance(event, Heading):
            if event.text.strip() in BUCKET_NAMES:
                bucket, section = BUCKET_NAMES[event.text.strip()], None
            else:
                section = (event.text, event.line) if event.text.strip() else None
        elif isinstance(event, Block) and event.text:
            tags = [(section[0], Where(section[1]))] if section else []
            builder.add(track=bucket[0], scope=bucket[1], text=event.text, source=source,
                        tags=tags, where=Where(event.start))
    return result


# -- export -----------------------------------------------------------------------------------


def read_item(text: str) -> str | None:
    """What the reader gives for one entry written as a list item (None: nothing)."""
    try:
        events = Reader(strict=True, markers=False, front_matter=False).read(
            normalise_newlines("\n".join(render_item(text)))[0])
    except AdapterError:
        return None
    blocks = [e for e in events if isinstance(e, Block) and e.text]
    return blocks[0].text if len(blocks) == 1 else None


def section_of(entry: Entry) -> str | None:
    """The section heading an entry is written under: its first tag, unless that tag names a
    bucket (such a heading would be read as the bucket)."""
    if entry.tags and entry.tags[0] not in BUCKET_NAMES:
        return entry.tags[0]
    return None


def export(entries: Any, *, options: dict[str, Any] | None = None) -> ExportResult:
    """Bucket headings ``## track/scope``, section headings ``### tag``, one bullet per entry;
    an entry keeps its bucket and its first tag (ADP-HBL-004)."""
    opts = Options(options, OPTIONS)
    source = opts.source(FORMAT)
    opts.track("user")  # checked for symmetry with adapt(); every bucket is written out
    opts.scope("user-global")
    losses: list[Loss] = []
    groups: dict[tuple[str, str], dict[str | None, list[tuple[int, Entry]]]] = {}
    for index, entry in enumerate(read_entries(entries)):
        section = section_of(entry)
        groups.setdefault((entry.track, entry.scope), {None: []}).setdefault(
            section, []).append((index, entry))
        _losses(index, entry, section, source, losses)
    out: list[str] = []
    for bucket in BUCKETS:
        if bucket not in groups:
            continue
        out += ([""] if out else []) + [f"## {bucket[0]}/{bucket[1]}"]
        for section, members in groups[bucket].items():
            if not members:
                continue
            if section is not None:
                out += ["", f"### {section}"]
            out.append("")
            for _, entry in members:
                out += render_item(entry.text)
    losses.sort(key=lambda loss: loss.entry if loss.entry is not None else -1)
    return ExportResult("\n".join(out) + ("\n" if out else ""), "text", losses)


def _losses(index: int, entry: Entry, section: str | None, source: str,
            losses: list[Loss]) -> None:
    where = Where(pointer=f"/{index}")
    for tag in entry.tags:
        if tag != section:
            reason = ("it names a bucket" if tag in BUCKET_NAMES and tag == entry.tags[0]
                      else "an entry keeps only its first tag, as its section")
            losses.append(Loss("tag-dropped", f"tag {tag!r} left out: {reason}", index, where,
                               "tags", tag))
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
