"""Building protocol entry inputs (import side) and reading entries to export (export side).

Both sides use the memory protocol's own rules (``dshkit.reference.memory.inputs``): an entry
an adapter produces is valid for ``seed`` as it stands (ADP-GEN-003).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dshkit.reference.memory.errors import MemoryProtocolError
from dshkit.reference.memory.inputs import (
    DEFAULT_SOURCE,
    ENTRY_INPUT_KEYS,
    MAX_TAGS,
    check_bucket,
    check_source,
    check_text,
    normalise_tags,
)

from .errors import PAYLOAD, UNREPRESENTABLE, AdapterError
from .model import AdaptResult, Loss, Where
from .textutil import invisible_in

STORED_KEYS = frozenset({"id", "track", "scope", "workspaceKey", "agentKey", "text", "source",
                         "tags", "version", "createdAt", "updatedAt", "lastRecalled",
                         "recallCount", "sessionId"})
EXPORT_KEYS = STORED_KEYS | ENTRY_INPUT_KEYS


def tag_problem(raw: str) -> tuple[str | None, str | None]:
    """(the normalised tag, None) or (None, the reason it is not a valid tag)."""
    try:
        return normalise_tags([raw], "/tags")[0], None
    except MemoryProtocolError as exc:
        return None, str(exc.details.get("reason", exc.message))


def tags_of(candidates: Iterable[str]) -> list[str]:
    """The tags an entry gets from candidate strings: invalid ones and those past 16 left out.
    (The same rule as :meth:`EntryBuilder.add`, without the loss report.)"""
    out: list[str] = []
    for raw in candidates:
        tag, _ = tag_problem(raw)
        if tag is not None and tag not in out and len(out) < MAX_TAGS:
            out.append(tag)
    return out


class EntryBuilder:
    """Appends checked entry inputs and their losses to an :class:`AdaptResult`."""

    def __init__(self, result: AdaptResult) -> None:
        self.result = result

    @property
    def next_index(self) -> int:
        return len(self.result.entries)

    def loss(self, kind: str, message: str, where: Where, *, entry: int | None = None,
             field: str | None = None, value: Any = None) -> None:
        self.result.losses.append(Loss(kind, message, entry, where, field, value))

    def add(self, *, track: str, scope: str, text: str, source: str,
            tags: Sequence[tuple[str, Where]] = (), where: Where) -> int:
        """Check and append one entry; an invalid text is refused (ADAPTER_UNREPRESENTABLE),
        an invalid or surplus tag is left out and reported."""
        try:
            check_text(text, "/text")
        except MemoryProtocolError as exc:
            reason = exc.details.get("reason", exc.message)
            raise AdapterError(UNREPRESENTABLE, f"this item cannot be a memory entry: {reason}",
                               line=where.line, pointer=where.pointer, path=where.path) from None
        index = self.next_index
        kept: list[str] = []
        for raw, tag_where in tags:
            tag, problem = tag_problem(raw)
            if tag is None:
                self.loss("tag-dropped", f"tag {raw!r} left out: {problem}", tag_where,
                          entry=index, field="tags", value=raw)
            elif tag in kept:
                continue
            elif len(kept) < MAX_TAGS and tag != raw:
                self.loss("tags-changed", f"tag {raw!r} trimmed to {tag!r}", tag_where,
                          entry=index, field="tags", value=raw)
                kept.append(tag)
            elif len(kept) >= MAX_TAGS:
                self.loss("tag-dropped", f"tag {tag!r} left out: an entry has at most "
                          f"{MAX_TAGS} tags", tag_where, entry=index, field="tags", value=tag)
            else:
                kept.append(tag)
        flagged = invisible_in(text, *kept)
        if flagged:
            self.loss("invisible-character", "text or tags contain invisible or bidirectional "
                      f"control characters {', '.join(flagged)}; review before use", where,
                      entry=index, field="text", value=flagged)
        self.result.entries.append({"track": track, "scope": scope, "text": text,
                                    "tags": kept, "source": source})
        return index


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry to export: the protocol content plus, for stored entries, their bookkeeping."""

    track: str
    scope: str
    text: str
    tags: tuple[str, ...]
    source: str
    id: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    def as_input(self) -> dict[str, Any]:
        return {"track": self.track, "scope": self.scope, "text": self.text,
                "tags": list(self.tags), "source": self.source}

    def member(self, name: str) -> Any:
        return dict(self.extra).get(name)


def read_entries(entries: Any) -> list[Entry]:
    """Entries to export: entry inputs or stored entries (``list_entries()``), checked by the
    protocol's rules; anything else is ADAPTER_PAYLOAD with a pointer (ADP-GEN-004)."""
    if not isinstance(entries, list):
        raise AdapterError(PAYLOAD, "entries to export must be an array", pointer="/")
    return [_read_entry(item, f"/{index}") for index, item in enumerate(entries)]


def _read_entry(item: Any, base: str) -> Entry:
    if not isinstance(item, dict):
        raise AdapterError(PAYLOAD, "each entry to export must be an object", pointer=base)
    for key in item:
        if key not in EXPORT_KEYS:
            raise AdapterError(PAYLOAD, f"unknown entry member {key!r}", pointer=f"{base}/{key}")
    try:
        track, scope = check_bucket(item, base)
        text = check_text(item.get("text"), f"{base}/text")
        tags = normalise_tags(item.get("tags"), f"{base}/tags")
        source = check_source(item.get("source"), f"{base}/source")
    except MemoryProtocolError as exc:
        raise AdapterError(PAYLOAD, exc.message,
                           pointer=str(exc.details.get("field", base))) from None
    ident = item.get("id")
    created = _millis(item.get("createdAt"), f"{base}/createdAt")
    updated = _millis(item.get("updatedAt"), f"{base}/updatedAt")
    if ident is not None and not isinstance(ident, str):
        raise AdapterError(PAYLOAD, "id must be a string", pointer=f"{base}/id")
    _bookkeeping(item, base)
    extra = tuple((k, item[k]) for k in ("workspaceKey", "agentKey", "version", "lastRecalled",
                                         "recallCount", "sessionId") if k in item)
    return Entry(track, scope, text, tuple(tags), source or DEFAULT_SOURCE, ident, created,
                 updated, extra)


def _bookkeeping(item: dict[str, Any], base: str) -> None:
    """The members of a stored entry that adapters carry (the dshkit envelope) must have their
    stored types."""
    for key in ("workspaceKey", "agentKey", "version", "lastRecalled", "recallCount",
                "sessionId"):
        if key in item and not _stored_type(key, item[key]):
            raise AdapterError(PAYLOAD, f"{key} does not have the type of a stored entry",
                               pointer=f"{base}/{key}")


def _stored_type(key: str, value: Any) -> bool:
    if key in ("workspaceKey", "agentKey"):
        return isinstance(value, str)
    if key == "sessionId":
        return value is None or isinstance(value, str)
    if key == "lastRecalled" and value is None:
        return True
    return _int(value) and value >= (1 if key == "version" else 0)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _millis(value: Any, pointer: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AdapterError(PAYLOAD, "timestamps must be integers of epoch milliseconds",
                           pointer=pointer)
    return value


def derived_id(index: int, entry: Entry) -> str:
    """A lower-case UUID v4 derived from an entry's position and content, so that exports are
    reproducible."""
    digest = bytearray(hashlib.sha256(
        f"{index}\0{entry.track}\0{entry.scope}\0{entry.text}".encode("utf-8", "surrogatepass"))
        .digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def same_entry(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("track", "scope", "text", "tags", "source"))
