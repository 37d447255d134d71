"""Searchable text of one event (QRY-EXT-*). Structure, reasoning, raw chunks, request
headers and anything unknown contribute nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..text import WHITESPACE


def join(parts: list[str]) -> str:
    """Trim each part, drop the empty ones, join with ``\\n``."""
    if len(parts) == 1:
        return parts[0].strip(WHITESPACE)
    return "\n".join([t for p in parts if (t := p.strip(WHITESPACE))])


def _collect(content: Any, out: list[str]) -> None:
    """Append the texts of a content array: text blocks, tool-call names and arguments, and
    (recursively) tool-result contents; reasoning, images and unknown blocks add nothing."""
    if not isinstance(content, list):
        return
    add = out.append
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                add(text)
        elif kind == "tool-call":
            name, arguments = block.get("name"), block.get("arguments")
            if isinstance(name, str):
                add(name)
            if isinstance(arguments, str):
                add(arguments)
        elif kind == "tool-result":
            _collect(block.get("content"), out)


def _add(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)


def _message_content(data: dict[str, Any], out: list[str]) -> None:
    message = data.get("message")
    if isinstance(message, dict):
        _collect(message.get("content"), out)


def _user_message(data: dict[str, Any]) -> str:
    parts: list[str] = []
    _collect(data.get("content"), parts)
    return join(parts) if parts else ""


def _assistant_message(data: dict[str, Any]) -> str:
    parts: list[str] = []
    _message_content(data, parts)
    return join(parts) if parts else ""


def _tool_call(data: dict[str, Any]) -> str:
    parts: list[str] = []
    _add(data.get("name"), parts)
    _add(data.get("arguments"), parts)
    return join(parts) if parts else ""


def _tool_result(data: dict[str, Any]) -> str:
    parts: list[str] = []
    _message_content(data, parts)
    error = data.get("error")
    if isinstance(error, dict):
        _add(error.get("name"), parts)
        _add(error.get("code"), parts)
    return join(parts) if parts else ""


def _todo_write(data: dict[str, Any]) -> str:
    parts: list[str] = []
    todos = data.get("todos")
    for todo in todos if isinstance(todos, list) else []:
        if isinstance(todo, dict):
            _add(todo.get("status"), parts)
            _add(todo.get("content"), parts)
    return join(parts) if parts else ""


def _turn_end(data: dict[str, Any]) -> str:
    reason = data.get("reason")
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


#: The text of an event's ``data`` (a dict), by event type. Every other type extracts to "".
EXTRACTORS: Final[dict[str, Callable[[dict[str, Any]], str]]] = {
    "user/message": _user_message,
    "assistant/message": _assistant_message,
    "tool/call": _tool_call,
    "tool/result": _tool_result,
    "todo/write": _todo_write,
    "turn/end": _turn_end,
}
#: The only event types whose text is searchable.
TEXT_TYPES: Final = frozenset(EXTRACTORS)


def extract_text(event: Any) -> str:
    """The newline-joined semantic text of ``event``, or ``""`` (QRY-EXT-001..004)."""
    if not isinstance(event, dict):
        return ""
    kind = event.get("type")
    if type(kind) is not str:  # a list or dict type is unhashable
        return ""
    extract = EXTRACTORS.get(kind)
    if extract is None:
        return ""
    data = event.get("data")
    return extract(data) if isinstance(data, dict) else ""
