"""The arguments and the history half of the read-only server's ``memory_recall`` tool (spec
``memory/mcp``, MEM-MCP-003).

The tool is recall (spec ``memory/recall``) made side-effect free: the project, the agent and
the time are the server's, not arguments, and the memory half is the server's own search, so
no recall count rises and no audit row is written. The history half is
:func:`.recall_history.history` over the index the server was started with.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from .inputs import check_keys
from .recall import LIMITS, IndexSource, limit_member, safe_history, string_member
from .recall_history import HistoryRequest

#: The members of the tool's arguments: recall's request without ``cwd``, ``now`` and
#: ``agentKey``, which the server fixes (MEM-MCP-003).
FIELDS: Final = ("text", "sessionId", *LIMITS)

#: The tool's input schema, also ``$defs/memory_recall-input`` of mcp-tools.json.
INPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "sessionId": {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 1}]},
        **{key: {"anyOf": [{"type": "null"},
                           {"type": "integer", "minimum": low, "maximum": high}]}
           for key, (_, low, high) in LIMITS.items()},
    },
    "required": ["text"],
    "additionalProperties": False,
}
DESCRIPTION: Final = (
    "Recall what is known about a text: the memory entries this session can see that contain "
    "it, and snippets of the messages of earlier sessions of this project (newest first) that "
    "contain it. Read-only: nothing is counted or recorded.")


@dataclass(frozen=True, slots=True)
class History:
    """What the server was given with ``--sessions``: the index, and the clock that says
    ``now``."""

    index: IndexSource
    clock: Callable[[], int]


@dataclass(frozen=True, slots=True)
class RecallArguments:
    text: str
    session_id: str | None
    limits: dict[str, int]


def parse(data: dict[str, Any]) -> RecallArguments:
    """The checked arguments (MEM-RCL-002, MEM-RCL-003 without the server's members); refused
    before anything is read."""
    check_keys(data, set(FIELDS))
    text = string_member(data, "text", required=True)
    assert text is not None
    return RecallArguments(text, string_member(data, "sessionId"),
                           {key: limit_member(data, key) for key in LIMITS})


def history_half(history: History, arguments: RecallArguments, project: str) -> dict[str, Any]:
    """The history of ``project`` (the raw ``cwd`` the server was started with) up to the
    server's ``now``, as recall's (MEM-RCL-010..017)."""
    limits = arguments.limits
    request = HistoryRequest(text=arguments.text, project=project, now=int(history.clock()),
                             session_id=arguments.session_id,
                             history_limit=limits["historyLimit"],
                             snippet_cap=limits["snippetCap"],
                             snippet_chars=limits["snippetChars"],
                             window_days=limits["windowDays"])
    return safe_history(history.index, request)
