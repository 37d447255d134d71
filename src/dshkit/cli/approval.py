"""The one approval prompt: the approver of a memory write made from the command line is the
person at the terminal. Without a terminal the answer is ``unavailable`` (fail closed) unless
``--yes`` was given.

Every approval path (``memory add``/``replace``/``consolidate``/``remove``, ``seed``,
``import``, ``import --format``) renders its prompt here (TOOL-CLI-013): each entry the write
adds with its track, scope, workspaceKey, agentKey and source, derived by the same function the
provider uses, and every text as one escaped line, so that a carriage return, a C1 control or a
bidi override cannot make the terminal show one text while another is written.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..reference.memory import MemoryProtocolError
from ..reference.memory.inputs import context_of, new_entry
from ..reference.memory.text import visible

Gate = Callable[[dict[str, Any], dict[str, Any]], str]

#: Actions whose payload text is the one new entry's text (shown with the entry).
_TEXT_IS_ENTRY = ("add", "seed")


def _title(payload: dict[str, Any]) -> str:
    title = f"memory {visible(str(payload.get('action', 'write')))[1:-1]}"
    if payload.get("track") and payload.get("scope"):
        title += f" {visible(str(payload['track']))[1:-1]}/{visible(str(payload['scope']))[1:-1]}"
    if payload.get("count") is not None:
        title += f" of {payload['count']} entries"
    if isinstance(payload.get("source"), str):
        title += f", source {visible(payload['source'])}"
    return title


def _entry_lines(entries: Sequence[Any], write: dict[str, Any]) -> list[str]:
    """One line of where and one line of text per entry the write adds."""
    ctx = context_of(write)
    if ctx is None:
        return []
    lines: list[str] = []
    for index, item in enumerate(entries, 1):
        try:
            new = new_entry(item, ctx)
        except MemoryProtocolError:
            continue  # the provider refuses such an input before it asks (MEM-WRT-002)
        lines.append(f"  {index}. {new.track}/{new.scope} workspaceKey {visible(new.workspace_key)}"
                     f" agentKey {visible(new.agent_key)} source {visible(new.source)}")
        lines.append(f"     text {visible(new.text)}")
    return lines


def render(payload: dict[str, Any], write: dict[str, Any],
           entries: Sequence[Any] | None = None) -> str:
    """The prompt for one write: the title, each new entry and where it lands, and, for writes
    that change existing entries, the payload text; every text escaped (TOOL-CLI-013)."""
    lines = [_title(payload) + ":"]
    added = _entry_lines(entries or (), write)
    lines += added
    if not added or payload.get("action") not in _TEXT_IS_ENTRY:
        ctx = context_of(write)
        if ctx is not None and not added:
            lines.append(f"  in workspaceKey {visible(ctx.workspace)} agentKey "
                         f"{visible(ctx.agent)}")
        lines.append(f"  {visible(str(payload.get('action', 'write')))[1:-1]} text "
                     f"{visible(str(payload.get('text', '')))}")
    return "\n".join(lines) + "\nApprove? [y/N] "


def terminal_gate(auto_yes: bool, entries: Sequence[Any] | None = None) -> Gate:
    """The gate of the terminal. ``entries`` are the entry inputs the write adds, as given to
    the provider, so the prompt can show each with its keys."""

    def gate(payload: dict[str, Any], write: dict[str, Any]) -> str:
        if auto_yes:
            return "allowed-once"
        if not sys.stdin.isatty():
            return "unavailable"
        sys.stderr.write(render(payload, write, entries))
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        return "allowed-once" if answer in ("y", "yes") else "rejected"

    return gate
