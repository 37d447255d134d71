"""Balanced cuts and structural units of a surface (spec chapter ``compaction/boundaries``).

Balance is a count, not an id match: walking the current surface in order, an
``assistant/message`` adds its number of ``tool-call`` blocks, a ``tool/result`` subtracts one
and every other node adds nothing. A cut is balanced where the running count is zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import CompactionError


def node_delta(event: Any) -> int:
    """CMP-BND-001: how one surface event changes the count of unanswered calls."""
    kind = event.get("type") if isinstance(event, dict) else None
    if kind == "assistant/message":
        data = event.get("data")
        message = data.get("message") if isinstance(data, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return 0
        return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool-call")
    if kind == "tool/result":
        return -1
    return 0


@dataclass(frozen=True, slots=True)
class Boundaries:
    """The N + 1 cuts of a surface of N nodes, and the position of each seq."""

    seqs: tuple[int, ...]
    cuts: tuple[bool, ...]

    def index(self, seq: int) -> int:
        try:
            return self.seqs.index(seq)
        except ValueError:
            raise CompactionError("CMP_SEQ_NOT_ON_SURFACE", "CMP-BND-003",
                                  f"surface seq {seq} not found", seq=seq) from None

    def balanced_before(self, seq: int) -> bool:
        """CMP-BND-003: the cut at the node's position."""
        return self.cuts[self.index(seq)]

    def balanced_after(self, seq: int) -> bool:
        """CMP-BND-003: the cut right after the node."""
        return self.cuts[self.index(seq) + 1]

    def units(self) -> list[list[int]]:
        """CMP-BND-004: maximal runs of nodes between consecutive balanced cuts; a trailing run
        that never returns to balance (an open unit) is the last element."""
        out: list[list[int]] = []
        current: list[int] = []
        for position, seq in enumerate(self.seqs):
            current.append(seq)
            if self.cuts[position + 1]:
                out.append(current)
                current = []
        if current:
            out.append(current)
        return out

    def open_unit(self) -> list[int] | None:
        """The trailing unit whose calls are still unanswered, if any (CMP-BND-005)."""
        if self.cuts[-1]:
            return None
        return self.units()[-1]


def boundaries(nodes: Sequence[tuple[int, int]]) -> Boundaries:
    """Cuts of a surface given as ``(seq, delta)`` pairs in surface order (CMP-BND-002).

    Raises ``CMP_PAIRING_CORRUPT`` when a tool result would take the count below zero.
    """
    cuts = [True]
    balance = 0
    for seq, delta in nodes:
        balance += delta
        if balance < 0:
            raise CompactionError(
                "CMP_PAIRING_CORRUPT", "CMP-BND-006",
                f"tool/result at surface seq {seq} has no matching tool-call (corrupt surface)",
                seq=seq)
        cuts.append(balance == 0)
    return Boundaries(seqs=tuple(seq for seq, _ in nodes), cuts=tuple(cuts))


def surface_boundaries(events: Sequence[Any]) -> Boundaries:
    """Cuts of a surface given as its current events, in surface order."""
    return boundaries([(int(e["seq"]), node_delta(e)) for e in events])


__all__ = ["Boundaries", "boundaries", "node_delta", "surface_boundaries"]
