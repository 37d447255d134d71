"""Searchable text of one event (QRY-EXT-*). Structure, reasoning, raw chunks, request
headers and anything unknown contribute nothing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from .whitespace import WHITESPACE

#: The only event types whose text is searchable; every other type extracts to ``""``.
TEXT_TYPES: Final = frozenset({"user/message", "assistant/message", "tool/call", "tool/result",
                               "todo/write", "turn/end"})


def join(parts: Iterable[str]) -> str:
    """Trim each part, drop the empty ones, join with ``\\n``."""
    return "\n".join([t for p in parts if (t := p.strip(WHITESPACE))])


def _collect(content: Any, out: list[str]) -> None:
    """Append the texts of a content array: text blocks, tool-call names and arguments, and
    (recursively) tool-result contents; reasoning, images and unknown blocks add nothing."""
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            _add(block.get("text"), out)
        elif kind == "tool-call":
            _add(block.get("name"), out)
            _add(block.get("arguments"), out)
        elif kind == "tool-result":
            _collect(block.get("content"), out)


def _add(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)


def _turn_end(reason: Any) -> str:
    if not isinstance(reason, dict):
        return ""
    kind = reason.get("kind")
    if kind == "error":
        error = reason.get("error")
        parts = ["error"]
        if isinstance(error, dict):
            _add(error.get("message"), parts)
        return join(parts)
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
    if type(kind) is not str or kind not in TEXT_TYPES:  # a list or dict type is unhashable
        return ""
    data = event.get("data")
    if not isinstance(data, dict):
        return ""
    parts: list[str] = []
    if kind == "user/message":
        _collect(data.get("content"), parts)
    elif kind == "assistant/message":
        message = data.get("message")
        if isinstance(message, dict):
            _collect(message.get("content"), parts)
    elif kind == "tool/call":
        _add(data.get("name"), parts)
        _add(data.get("arguments"), parts)
    elif kind == "tool/result":
        message = data.get("message")
        if isinstance(message, dict):
            _collect(message.get("content"), parts)
        error = data.get("error")
        if isinstance(error, dict):
            _add(error.get("name"), parts)
            _add(error.get("code"), parts)
    elif kind == "todo/write":
        todos = data.get("todos")
        for todo in todos if isinstance(todos, list) else []:
            if isinstance(todo, dict):
                _add(todo.get("status"), parts)
                _add(todo.get("content"), parts)
    else:  # turn/end
        return _turn_end(data.get("reason"))
    return join(parts)
