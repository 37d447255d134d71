"""The one approval prompt: the approver of a memory write made from the command line is the
person at the terminal. Without a terminal the answer is ``unavailable`` (fail closed) unless
``--yes`` was given.

Every approval path (``memory add``/``replace``/``consolidate``/``remove``, ``seed``,
``import``, ``import --format``, ``migrate --from-memento``) renders its prompt here
(TOOL-CLI-013): each entry the write adds with its track, scope, workspaceKey, agentKey and
source, derived by the same function the provider uses (a migration's as they will be stored),
and every text as one escaped line, so that a carriage return, a C1 control or a
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


def _stored_lines(stored: Sequence[dict[str, Any]]) -> list[str]:
    """Entries given in their stored form (a migration's): the count per bucket, then each
    entry with its own keys, which are not the session's."""
    counts: dict[str, int] = {}
    for entry in stored:
        bucket = f"{visible(str(entry['track']))[1:-1]}/{visible(str(entry['scope']))[1:-1]}"
        counts[bucket] = counts.get(bucket, 0) + 1
    lines = [f"  {len(stored)} entries by bucket: "
             + ", ".join(f"{bucket} {n}" for bucket, n in sorted(counts.items()))]
    for index, entry in enumerate(stored, 1):
        lines.append(f"  {index}. {visible(str(entry['track']))[1:-1]}/"
                     f"{visible(str(entry['scope']))[1:-1]} workspaceKey "
                     f"{visible(str(entry['workspaceKey']))} agentKey "
                     f"{visible(str(entry['agentKey']))} source {visible(str(entry['source']))}")
        lines.append(f"     text {visible(str(entry['text']))}")
    return lines


def render(payload: dict[str, Any], write: dict[str, Any],
           entries: Sequence[Any] | None = None,
           stored: Sequence[dict[str, Any]] | None = None) -> str:
    """The prompt for one write: the title, each new entry and where it lands, and, for writes
    that change existing entries, the payload text; every text escaped (TOOL-CLI-013).
    ``stored``: entries already in stored form, with their own keys (a migration's)."""
    lines = [_title(payload) + ":"]
    if stored:
        return "\n".join(lines + _stored_lines(stored)) + "\nApprove? [y/N] "
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


class TerminalGate:
    """The gate of the terminal. ``entries`` are the entry inputs the write adds, as given to
    the provider, so the prompt can show each with its keys; ``stored``, set by a command that
    writes entries in their stored form (``migrate --from-memento``), replaces them."""

    def __init__(self, auto_yes: bool, entries: Sequence[Any] | None = None) -> None:
        self.auto_yes = auto_yes
        self.entries = entries
        self.stored: Sequence[dict[str, Any]] | None = None

    def __call__(self, payload: dict[str, Any], write: dict[str, Any]) -> str:
        if self.auto_yes:
            return "allowed-once"
        if not sys.stdin.isatty():
            return "unavailable"
        sys.stderr.write(render(payload, write, self.entries, self.stored))
        sys.stderr.flush()
        answer = sys.stdin.readline().strip().lower()
        return "allowed-once" if answer in ("y", "yes") else "rejected"


def terminal_gate(auto_yes: bool, entries: Sequence[Any] | None = None) -> Gate:
    return TerminalGate(auto_yes, entries)


def show_stored(gate: Any, stored: Sequence[dict[str, Any]]) -> None:
    """Make the terminal prompt show ``stored`` (entries with their own keys); a gate that is
    not the terminal's shows nothing and is left alone."""
    if isinstance(gate, TerminalGate):
        gate.stored = list(stored)
