"""mem0: ``get_all``/``search`` output (``{"results": [...]}`` or a bare list) and the legacy
``{"facts": [...]}`` shape, to entries and back (spec chapter ``adapters/mem0``)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.memory.inputs import SCOPES, TRACKS, check_source

from .entries import Entry, EntryBuilder, derived_id, read_entries
from .errors import PAYLOAD, UNREPRESENTABLE, AdapterError
from .jsonio import load_json, pointer_token, small
from .model import AdaptResult, ExportResult, Where
from .options import Options

FORMAT = "mem0"
IMPORT_OPTIONS = frozenset({"track", "scope", "source", "expired", "now"})
EXPORT_OPTIONS = frozenset({"shape", "user_id", "agent_id", "run_id", "now"})
#: Renewed by every import (as the protocol's own import renews them): not losses.
BOOKKEEPING = frozenset({"id", "hash", "created_at", "updated_at"})
#: Envelope members that describe paging, not memories.
PAGING = frozenset({"count", "page", "page_size", "previous", "total"})
METADATA_MAPPED = ("track", "scope", "source", "category", "tags")
PROMOTED = ("user_id", "agent_id", "run_id")


def adapt(payload: Any, *, options: dict[str, Any] | None = None) -> AdaptResult:
    opts = Options(options, IMPORT_OPTIONS)
    defaults = (opts.track("user"), opts.scope("user-global"), opts.source(FORMAT))
    expired = opts.text_choice("expired", "skip", ("skip", "keep"))
    now = opts.now()
    result = AdaptResult()
    builder = EntryBuilder(result)
    for item, pointer in _items(load_json(payload), builder):
        _item(item, pointer, builder, defaults, expired == "skip", now)
    return result


def renewed(payload: Any) -> tuple[str, ...]:
    """The bookkeeping members (``id``, ``hash``, ``created_at``, ``updated_at``) that items
    of a readable payload carry: an import does not keep them (ADP-MEM-005), so a caller can
    say so beside the loss report."""
    try:
        doc = load_json(payload)
    except AdapterError:
        return ()
    if isinstance(doc, dict):
        doc = doc.get("results", doc.get("facts"))
    if not isinstance(doc, list):
        return ()
    seen = {key for item in doc if isinstance(item, dict)
            for key, value in item.items() if key in BOOKKEEPING and value is not None}
    return tuple(sorted(seen))


def _items(doc: Any, builder: EntryBuilder) -> list[tuple[Any, str]]:
    if isinstance(doc, list):
        _refuse_transcript(doc, "")
        return [(item, f"/{i}") for i, item in enumerate(doc)]
    if not isinstance(doc, dict):
        raise AdapterError(PAYLOAD, "a mem0 payload is an object with \"results\" or \"facts\", "
                           "or an array of memories", pointer="/")
    if "results" in doc:
        member, quiet = "results", PAGING
    elif "facts" in doc:
        member, quiet = "facts", frozenset({"plugin"})
    elif "messages" in doc:
        raise AdapterError(PAYLOAD, "this is a chat transcript, not memories: turning messages "
                           "into memories is extraction, which an adapter does not do",
                           pointer="/messages", reason="transcript")
    elif "memory" in doc:
        raise AdapterError(PAYLOAD, "a single memory object: wrap it in an array or in "
                           "{\"results\": [...]}", pointer="/")
    else:
        raise AdapterError(PAYLOAD, "a mem0 payload is an object with \"results\" or \"facts\", "
                           "or an array of memories", pointer="/")
    items = doc[member]
    if not isinstance(items, list):
        raise AdapterError(PAYLOAD, f"{member!r} must be an array", pointer=f"/{member}")
    _refuse_transcript(items, f"/{member}")
    for key, value in doc.items():
        where = Where(pointer=f"/{pointer_token(key)}")
        if key == member or key in quiet or value is None:
            continue
        if key == "next":
            builder.loss("incomplete", "the listing has more pages (\"next\" is set); only this "
                         "page is converted", where, field=key, value=small(value))
        else:
            builder.loss("field-dropped", f"envelope member {key!r} has no place in entries",
                         where, field=key, value=small(value))
    return [(item, f"/{member}/{i}") for i, item in enumerate(items)]


def _refuse_transcript(items: list[Any], base: str) -> None:
    for i, item in enumerate(items):
        if isinstance(item, dict) and "memory" not in item and "role" in item \
                and "content" in item:
            raise AdapterError(PAYLOAD, "these are chat messages, not memories: turning a "
                               "transcript into memories is extraction, which an adapter does "
                               "not do", pointer=f"{base}/{i}", reason="transcript")


def _item(item: Any, pointer: str, builder: EntryBuilder, defaults: tuple[str, str, str],
          skip_expired: bool, now: int) -> None:
    if not isinstance(item, dict):
        raise AdapterError(PAYLOAD, "each memory must be an object", pointer=pointer)
    memory = item.get("memory")
    if not isinstance(memory, str):
        raise AdapterError(PAYLOAD, "each memory must have a string \"memory\"",
                           pointer=f"{pointer}/memory")
    where = Where(pointer=pointer)
    if item.get("event") == "DELETE":
        builder.loss("item-skipped", "an add() result with event DELETE removes a memory; "
                     "nothing to import", where, field="event", value="DELETE")
        return
    expiry = item.get("expiration_date")
    moment = _instant(expiry)
    if skip_expired and moment is not None and moment < now:
        builder.loss("item-skipped", f"expired on {expiry} (mem0 hides it unless show_expired)",
                     where.at(pointer=f"{pointer}/expiration_date"), field="expiration_date",
                     value=small(expiry))
        return
    index = builder.next_index
    track, scope, source = defaults
    tags: list[tuple[str, Where]] = []
    categories: list[tuple[str, Where]] = []
    for key, value in item.items():
        here = Where(pointer=f"{pointer}/{pointer_token(key)}")
        if key in BOOKKEEPING or key == "memory" or value is None:
            continue
        if key == "metadata":
            track, scope, source = _metadata(value, here, builder, index, (track, scope, source),
                                             tags)
        elif key == "categories":
            _tag_list(value, here, builder, index, categories, "categories")
        elif key == "expiration_date":
            builder.loss("field-dropped", f"expiration date {value!r} dropped: entries do not "
                         "expire", here, entry=index, field=key, value=small(value))
        else:
            builder.loss("field-dropped", f"member {key!r} has no place in an entry", here,
                         entry=index, field=key, value=small(value))
    builder.add(track=track, scope=scope, text=memory, source=source, tags=tags + categories,
                where=where.at(pointer=f"{pointer}/memory"))


def _metadata(value: Any, here: Where, builder: EntryBuilder, index: int,
              current: tuple[str, str, str], tags: list[tuple[str, Where]]
              ) -> tuple[str, str, str]:
    track, scope, source = current
    if not isinstance(value, dict):
        builder.loss("field-dropped", "metadata is not an object", here, entry=index,
                     field="metadata", value=small(value))
        return current
    base = here.pointer
    category = value.get("category")
    for key in [k for k in METADATA_MAPPED if k in value] + [
            k for k in value if k not in METADATA_MAPPED]:
        item = value[key]
        at = Where(pointer=f"{base}/{pointer_token(key)}")
        if item is None:
            continue
        if key == "track" and item in TRACKS:
            track = item
        elif key == "scope" and item in SCOPES:
            scope = item
        elif key == "source" and _valid_source(item):
            source = item
        elif key == "category" and isinstance(category, str):
            tags.append((category, at))
        elif key == "tags":
            _tag_list(item, at, builder, index, tags, "metadata.tags")
        else:
            builder.loss("field-dropped", f"metadata member {key!r} has no place in an entry",
                         at, entry=index, field=f"metadata.{key}", value=small(item))
    return track, scope, source


def _valid_source(value: Any) -> bool:
    try:
        check_source(value, "/source")
    except MemoryProtocolError:
        return False
    return value is not None


def _tag_list(value: Any, here: Where, builder: EntryBuilder, index: int,
              tags: list[tuple[str, Where]], name: str) -> None:
    if not isinstance(value, list):
        builder.loss("field-dropped", f"{name} is not an array of strings", here, entry=index,
                     field=name, value=small(value))
        return
    for i, tag in enumerate(value):
        at = Where(pointer=f"{here.pointer}/{i}")
        if isinstance(tag, str):
            tags.append((tag, at))
        else:
            builder.loss("tag-dropped", f"{name} element is not a string", at, entry=index,
                         field="tags", value=small(tag))


def _instant(value: Any) -> int | None:
    """Epoch milliseconds of an ISO date or date-time (UTC when no offset), else None."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None


# -- export -----------------------------------------------------------------------------------


def export(entries: Any, *, options: dict[str, Any] | None = None) -> ExportResult:
    """The memories as mem0's ``get_all`` returns them; track, scope, source and tags ride in
    ``metadata``, so nothing is lost (ADP-MEM-006)."""
    opts = Options(options, EXPORT_OPTIONS)
    shape = opts.text_choice("shape", "results", ("results", "list", "facts"))
    promoted = {name: opts.string(name) for name in PROMOTED}
    now = opts.now()
    items = [_export_item(i, e, promoted, now) for i, e in enumerate(read_entries(entries))]
    if not all(_fits(item) for item in items):
        bad = next(i for i, item in enumerate(items) if not _fits(item))
        raise AdapterError(UNREPRESENTABLE, "a timestamp is out of the range of ISO dates",
                           pointer=f"/{bad}/createdAt")
    if shape == "list":
        return ExportResult(items, "json")
    if shape == "facts":
        return ExportResult({"plugin": "dshkit", "facts": items}, "json")
    return ExportResult({"results": items}, "json")


def _export_item(index: int, entry: Entry, promoted: dict[str, str | None],
                 now: int) -> dict[str, Any]:
    created = entry.created_at if entry.created_at is not None else now
    updated = entry.updated_at
    item: dict[str, Any] = {
        "id": entry.id or derived_id(index, entry),
        "memory": entry.text,
        "hash": hashlib.md5(entry.text.encode("utf-8")).hexdigest(),
        "metadata": {"track": entry.track, "scope": entry.scope, "source": entry.source,
                     "tags": list(entry.tags)},
        "created_at": iso(created),
        "updated_at": iso(updated) if updated is not None and updated != created else None,
    }
    for name, value in promoted.items():
        if value is not None:
            item[name] = value
    return item


def iso(ms: int) -> str:
    """Epoch milliseconds as mem0 writes times: ISO 8601 with microseconds and an offset
    (``""`` when out of range)."""
    try:
        moment = datetime.fromtimestamp(ms // 1000, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return ""
    return moment.replace(microsecond=(ms % 1000) * 1000).isoformat(timespec="microseconds")


def _fits(item: dict[str, Any]) -> bool:
    return bool(item["created_at"] != "" and item["updated_at"] != "")
