"""Searchable text of one event (QRY-EXT-*). Structure, reasoning, raw chunks, request
headers and anything unknown contribute nothing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .whitespace import trim


def join(parts: Iterable[str]) -> str:
    """Trim each part, drop the empty ones, join with ``\\n``."""
    return "\n".join(t for t in (trim(p) for p in parts) if t)


def _block_texts(block: Any) -> list[str]:
    if not isinstance(block, dict):
        return []
    kind = block.get("type")
    if kind == "text":
        return [_str(block.get("text"))]
    if kind == "tool-call":
        return [_str(block.get("name")), _str(block.get("arguments"))]
    if kind == "tool-result":
        return _content_texts(block.get("content"))
    return []  # reasoning, images and unknown blocks


def _content_texts(content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    return [text for block in content for text in _block_texts(block)]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _turn_end(reason: Any) -> str:
    if not isinstance(reason, dict):
        return ""
    kind = reason.get("kind")
    if kind == "error":
        error = reason.get("error")
        return join(["error", _str(error.get("message")) if isinstance(error, dict) else ""])
    if kind == "aborted":
        return "aborted"
    if kind in ("max-tokens", "interrupted"):
        return str(kind)
    return ""


def extract_text(event: Any) -> str:
    """The newline-joined semantic text of ``event``, or ``""`` (QRY-EXT-001..004)."""
    if not isinstance(event, dict):
        return ""
    kind = event.get("type")
    data = event.get("data")
    if not isinstance(data, dict):
        return ""
    if kind == "user/message":
        return join(_content_texts(data.get("content")))
    if kind == "assistant/message":
        message = data.get("message")
        return join(_content_texts(message.get("content"))) if isinstance(message, dict) else ""
    if kind == "tool/call":
        return join([_str(data.get("name")), _str(data.get("arguments"))])
    if kind == "tool/result":
        message = data.get("message")
        raw_error = data.get("error")
        error: dict[str, Any] = raw_error if isinstance(raw_error, dict) else {}
        content = join(_content_texts(message.get("content"))) if isinstance(message, dict) \
            else ""
        return join([content, _str(error.get("name")), _str(error.get("code"))])
    if kind == "todo/write":
        todos = data.get("todos")
        parts: list[str] = []
        for todo in todos if isinstance(todos, list) else []:
            if isinstance(todo, dict):
                parts += [_str(todo.get("status")), _str(todo.get("content"))]
        return join(parts)
    if kind == "turn/end":
        return _turn_end(data.get("reason"))
    return ""
