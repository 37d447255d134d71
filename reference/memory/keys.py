"""Workspace and agent keys, and the visibility rule (spec chapter ``memory/visibility``)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..text import js_trim
from .text import fold, nfc

_DRIVE = re.compile(r"^[A-Za-z]:")


def workspace_key(cwd: Any) -> str:
    """MEM-KEY-001: one portable, lexical normalisation of a working directory."""
    if not isinstance(cwd, str) or cwd == "":
        return ""
    return _workspace_key(cwd)


@lru_cache(maxsize=256)  # a session writes from one directory: normalise it once
def _workspace_key(cwd: str) -> str:
    path = nfc(cwd.replace("\\", "/"))
    prefix = ""
    if _DRIVE.match(path):
        prefix, path = path[0].lower() + ":", path[2:]
    absolute = path.startswith("/")
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append("..")
            continue
        parts.append(segment)
    body = "/".join(parts)
    if absolute:
        body = "/" + body
    elif not body and not prefix:
        body = "."
    return prefix + body


def agent_key(preset: Any) -> str:
    """MEM-KEY-002: trimmed, NFC, ASCII lower-cased agent preset name."""
    if not isinstance(preset, str):
        return ""
    return _agent_key(preset)


@lru_cache(maxsize=256)
def _agent_key(preset: str) -> str:
    return fold(nfc(js_trim(preset)))


def visible(entry: dict[str, Any], workspace: str, agent: str) -> bool:
    """MEM-KEY-004."""
    agent_ok = entry["agentKey"] == "" or entry["agentKey"] == agent
    return bool(agent_ok and (entry["scope"] == "user-global"
                              or entry["workspaceKey"] == workspace))
