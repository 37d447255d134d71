"""Validation and normalisation of write inputs (spec chapters ``memory/entries``, ``writes``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..text import has_lone_surrogate, js_trim, units
from .errors import invalid
from .keys import agent_key, workspace_key

TRACKS = ("user", "agent")
SCOPES = ("user-global", "workspace")
BUCKETS = (("user", "user-global"), ("user", "workspace"), ("agent", "user-global"),
           ("agent", "workspace"))
DEFAULT_SOURCE = "dshkit"
MAX_TAGS = 16
MAX_TAG_UNITS = 32
MAX_SOURCE_UNITS = 64
MAX_CONSOLIDATE = 20
MAX_SEED = 1000

#: The control characters a text must not contain: C0 except tab, LF and CR, and DEL.
_TEXT_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_bucket(data: dict[str, Any], base: str = "") -> tuple[str, str]:
    track, scope = data.get("track"), data.get("scope")
    if track not in TRACKS:
        raise invalid(f"{base}/track", f"track must be one of {', '.join(TRACKS)}")
    if scope not in SCOPES:
        raise invalid(f"{base}/scope", f"scope must be one of {', '.join(SCOPES)}")
    return track, scope


def check_text(value: Any, field: str) -> str:
    """MEM-ENT-003."""
    if not isinstance(value, str) or js_trim(value) == "":
        raise invalid(field, "text must be a string with at least one non-whitespace character")
    control = _TEXT_CONTROL.search(value)
    if control is not None:
        code = ord(control.group())
        raise invalid(field, f"text must not contain control character U+{code:04X}")
    if has_lone_surrogate(value):
        raise invalid(field, "text must not contain lone surrogates")
    return value


def normalise_tags(value: Any, field: str) -> list[str]:
    """MEM-ENT-004: the exact tag normalisation."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise invalid(field, "tags must be an array of strings")
    out: list[str] = []
    for index, raw in enumerate(value):
        where = f"{field}/{index}"
        if not isinstance(raw, str):
            raise invalid(where, "each tag must be a string")
        tag = js_trim(raw)
        if tag == "":
            raise invalid(where, "a tag must not be empty after trimming")
        if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in tag):
            raise invalid(where, "a tag must not contain control characters")
        if units(tag) > MAX_TAG_UNITS:
            raise invalid(where, f"a tag must be at most {MAX_TAG_UNITS} UTF-16 units")
        if has_lone_surrogate(tag):
            raise invalid(where, "a tag must not contain lone surrogates")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise invalid(field, f"at most {MAX_TAGS} distinct tags are allowed, got {len(out)}")
    return out


def check_source(value: Any, field: str) -> str:
    """MEM-ENT-005."""
    if value is None:
        return DEFAULT_SOURCE
    if not isinstance(value, str) or value == "":
        raise invalid(field, "source must be a non-empty string")
    if units(value) > MAX_SOURCE_UNITS:
        raise invalid(field, f"source must be at most {MAX_SOURCE_UNITS} UTF-16 units")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value) or has_lone_surrogate(value):
        raise invalid(field, "source must not contain control characters or lone surrogates")
    return value


def check_keys(data: dict[str, Any], allowed: set[str], base: str = "") -> None:
    """MEM-ENT-009: unknown input keys are refused."""
    for key in data:
        if key not in allowed:
            raise invalid(f"{base}/{key}", f"unknown field {key!r}")


def check_match(value: Any, field: str) -> str:
    if not isinstance(value, str) or value == "":
        raise invalid(field, "match must be a non-empty string")
    return value


@dataclass(frozen=True, slots=True)
class Context:
    """Who writes: the session id and the session's keys (MEM-WRT-009)."""

    session_id: str | None
    workspace: str
    agent: str
    approval_policy: str | None


def context_of(write: Any) -> Context | None:
    """The writer context, or None when the write has no owning agent (MEM-WRT-001)."""
    if not isinstance(write, dict):
        return None
    agent = write.get("agent")
    if not isinstance(agent, dict):
        return None
    session = agent.get("session")
    session = session if isinstance(session, dict) else {}
    header = session.get("header")
    header = header if isinstance(header, dict) else {}
    session_id = session.get("id")
    policy = session.get("approvalPolicy")
    return Context(
        session_id=session_id if isinstance(session_id, str) else None,
        workspace=workspace_key(header.get("cwd")),
        agent=agent_key(header.get("agentPreset")),
        approval_policy=policy if isinstance(policy, str) else None,
    )


@dataclass(frozen=True, slots=True)
class NewEntry:
    """A validated entry to insert (everything but id and timestamps)."""

    track: str
    scope: str
    text: str
    tags: tuple[str, ...]
    source: str
    workspace_key: str
    agent_key: str


ENTRY_INPUT_KEYS = {"track", "scope", "text", "tags", "source", "workspaceKey", "agentKey"}


def new_entry(data: Any, ctx: Context, base: str = "") -> NewEntry:
    if not isinstance(data, dict):
        raise invalid(base or "/", "an entry input must be an object")
    check_keys(data, ENTRY_INPUT_KEYS, base)
    track, scope = check_bucket(data, base)
    text = check_text(data.get("text"), f"{base}/text")
    tags = normalise_tags(data.get("tags"), f"{base}/tags")
    source = check_source(data.get("source"), f"{base}/source")
    if scope == "user-global":
        workspace = ""
    elif data.get("workspaceKey") is not None:
        workspace = workspace_key(_string(data["workspaceKey"], f"{base}/workspaceKey"))
    else:
        workspace = ctx.workspace
    if data.get("agentKey") is not None:
        agent = agent_key(_string(data["agentKey"], f"{base}/agentKey"))
    else:
        agent = ctx.agent
    return NewEntry(track, scope, text, tuple(tags), source, workspace, agent)


def _string(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise invalid(field, "must be a string")
    return value
