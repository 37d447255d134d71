"""Region selection and explicit-region validation (spec chapter ``compaction/selection``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .errors import CompactionError
from .pairing import Boundaries
from .view import PricedNode


def select_range(nodes: Sequence[PricedNode], bounds: Boundaries | Callable[[], Boundaries],
                 retain_tokens: int, *, surface: Sequence[int] | None = None
                 ) -> tuple[int, int] | None:
    """CMP-SEL-001: the head-anchored range to compact, or ``None``.

    Walk back from the newest node adding prices until ``retain_tokens`` is reached (the newest
    node is always kept), then move the cut head-ward to the nearest balanced cut.

    ``bounds`` may be a function that computes the cuts: it is then called only when the walk
    stops before the head (step 4), so a corrupt pairing (CMP-BND-006) is not reported when the
    retained tail already reaches the head, as in DSH. ``surface`` is the current surface's
    seqs in order, checked against the priced nodes (default: the seqs of ``bounds``).
    """
    if not nodes:
        return None
    if surface is None:
        if callable(bounds):
            bounds = bounds()
        surface = bounds.seqs
    if tuple(n.seq for n in nodes) != tuple(surface):
        raise CompactionError("CMP_METER_MISMATCH", "CMP-SEL-001",
                              "the priced nodes do not match the current surface")
    accumulated = 0
    keep = len(nodes)
    for index in range(len(nodes) - 1, -1, -1):
        accumulated += nodes[index].tokens
        keep = index
        if accumulated >= retain_tokens:
            break
    if keep == 0:
        return None
    cuts = (bounds() if callable(bounds) else bounds).cuts
    while keep > 0 and not cuts[keep]:
        keep -= 1
    if keep == 0:
        return None
    return nodes[0].seq, nodes[keep - 1].seq


def validate_region(bounds: Boundaries, start: int, end: int) -> tuple[int, int]:
    """CMP-SEL-006: an explicit inclusive span of surface positions; returns the positions of
    ``start`` and ``end``."""
    if start not in bounds.seqs:
        raise CompactionError("CMP_REGION_NOT_FOUND", "CMP-SEL-006",
                              f"region start seq {start} is not on the current surface", seq=start)
    if end not in bounds.seqs:
        raise CompactionError("CMP_REGION_NOT_FOUND", "CMP-SEL-006",
                              f"region end seq {end} is not on the current surface", seq=end)
    i, j = bounds.seqs.index(start), bounds.seqs.index(end)
    if i > j:
        raise CompactionError("CMP_REGION_REVERSED", "CMP-SEL-006",
                              f"region start seq {start} (position {i}) comes after end seq "
                              f"{end} (position {j}) on the surface")
    if not bounds.cuts[i]:
        raise CompactionError("CMP_REGION_UNBALANCED", "CMP-SEL-006",
                              f"region start seq {start} is not a balanced cut (it would split "
                              "a tool-call/result pair)", seq=start)
    if not bounds.cuts[j + 1]:
        raise CompactionError("CMP_REGION_UNBALANCED", "CMP-SEL-006",
                              f"region end seq {end} is not a balanced cut (it would split a "
                              "tool-call/result pair, or the calls are still open)", seq=end)
    return i, j


__all__ = ["select_range", "validate_region"]
