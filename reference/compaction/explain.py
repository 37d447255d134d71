"""What the planner sees of a log: the priced surface, its cuts and its structural units
(spec chapters ``compaction/tokens`` and ``compaction/boundaries``), for people to read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .errors import CompactionError
from .view import LogView

Event = dict[str, Any]


def explain(events: Sequence[Event]) -> dict[str, Any]:
    """``{nodes: [{seq, type, tokens}], cuts, units, openUnit, error}`` of the current surface.

    ``cuts`` has one entry per node plus one (CMP-BND-002): entry ``i`` is the cut before node
    ``i``. On a corrupt pairing (CMP-BND-006) ``cuts``, ``units`` and ``openUnit`` are ``None``
    and ``error`` holds the refusal; prices are still given.
    """
    view = LogView.of(events)
    measured = view.measure()
    nodes = [{"seq": n.seq, "type": view.event(n.seq).get("type"), "tokens": n.tokens}
             for n in measured.nodes]
    out: dict[str, Any] = {"nodes": nodes, "cuts": None, "units": None, "openUnit": None,
                           "error": None}
    try:
        bounds = view.boundaries()
    except CompactionError as exc:
        out["error"] = exc.to_json()
        return out
    out.update(cuts=list(bounds.cuts), units=bounds.units(), openUnit=bounds.open_unit())
    return out


__all__ = ["explain"]
