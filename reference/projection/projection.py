"""Which surface units a reference keeps, and the byte-exact retention that fits them into
one source's budget (REF-UNIT-*, REF-RET-*)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .snapshot import SurfaceSnapshot
from .text import tag_safe, truncate_with_notice, utf8_len


@dataclass(slots=True)
class ProjectedItem:
    """One kept unit. ``text`` is what is rendered; ``original_text`` never changes."""

    role: str
    text: str
    checkpoint: bool
    original_text: str
    omitted_bytes: int = 0


@dataclass(frozen=True, slots=True)
class RetentionStats:
    compacted: bool
    original_messages: int
    retained_messages: int
    omitted_messages: int
    omitted_bytes: int
    truncated: bool

    def to_json(self) -> dict[str, Any]:
        return {"compacted": self.compacted, "originalMessages": self.original_messages,
                "retainedMessages": self.retained_messages,
                "omittedMessages": self.omitted_messages, "omittedBytes": self.omitted_bytes,
                "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class RetainedSession:
    """The data object rendered for one source, its statistics and its serialized size."""

    data: dict[str, Any]
    stats: RetentionStats
    items: tuple[ProjectedItem, ...]

    @property
    def size(self) -> int:
        return utf8_len(tag_safe(self.data))


def is_checkpoint_source(source: Any) -> bool:
    """A compaction checkpoint: ``{kind: "plugin", plugin: "compact", ...}`` (REF-UNIT-002)."""
    return isinstance(source, dict) and source.get("kind") == "plugin" \
        and source.get("plugin") == "compact"


def _text(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "\n".join(block["text"] for block in content
                     if isinstance(block, dict) and block.get("type") == "text"
                     and isinstance(block.get("text"), str))


def project(snapshot: SurfaceSnapshot) -> list[ProjectedItem]:
    """The kept units of a snapshot, in surface order (REF-UNIT-001..005)."""
    items: list[ProjectedItem] = []
    for event in snapshot.events:
        kind = event.get("type")
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        if kind == "user/message":
            source = data.get("source")
            checkpoint = is_checkpoint_source(source)
            if not checkpoint and not (isinstance(source, dict) and source.get("kind") == "user"):
                continue
            text, role = _text(data.get("content")), "user"
        elif kind == "assistant/message":
            message = data.get("message")
            checkpoint = False
            text = _text(message.get("content")) if isinstance(message, dict) else ""
            role = "assistant"
        else:
            continue
        if text:
            items.append(ProjectedItem(role=role, text=text, checkpoint=checkpoint,
                                       original_text=text))
    return items


def _data(snapshot: SurfaceSnapshot, label: str, items: list[ProjectedItem]) -> dict[str, Any]:
    return {"sessionId": snapshot.session_id, "label": label, "cwd": snapshot.cwd,
            "capturedThroughSeq": snapshot.captured_through_seq,
            "conversation": [{"role": item.role, "text": item.text} for item in items]}


def retain(snapshot: SurfaceSnapshot, label: str, max_bytes: int) -> RetainedSession | None:
    """Fit one source into ``max_bytes`` serialized UTF-8 bytes; ``None`` when even its
    fixed fields cannot fit (REF-RET-001..009)."""
    original = project(snapshot)
    retained = [ProjectedItem(i.role, i.text, i.checkpoint, i.original_text) for i in original]
    omitted_messages = 0
    dropped_bytes = 0

    def size() -> int:
        return utf8_len(tag_safe(_data(snapshot, label, retained)))

    while size() > max_bytes:  # phase 1: drop the oldest non-checkpoint, never the newest
        newest = len(retained) - 1
        index = next((i for i, item in enumerate(retained)
                      if not item.checkpoint and i != newest), None)
        if index is None:
            break
        removed = retained.pop(index)
        omitted_messages += 1
        dropped_bytes += utf8_len(removed.original_text)

    while (current := size()) > max_bytes:  # phase 2: cut the longest text
        longest_index, longest_bytes = -1, 0
        for i, item in enumerate(retained):
            length = utf8_len(item.text)
            if length > longest_bytes:
                longest_index, longest_bytes = i, length
        if longest_index < 0:
            return None
        target = max(0, longest_bytes - (current - max_bytes))
        item = retained[longest_index]
        shortened = truncate_with_notice(item.original_text, target)
        if shortened.text == item.text:
            return None
        item.text = shortened.text
        item.omitted_bytes = shortened.omitted

    omitted_bytes = dropped_bytes + sum(item.omitted_bytes for item in retained)
    stats = RetentionStats(
        compacted=any(item.checkpoint for item in original),
        original_messages=len(original), retained_messages=len(retained),
        omitted_messages=omitted_messages, omitted_bytes=omitted_bytes,
        truncated=omitted_messages > 0 or omitted_bytes > 0)
    return RetainedSession(data=_data(snapshot, label, retained), stats=stats,
                           items=tuple(retained))
