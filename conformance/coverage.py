"""Traceability: which requirements of the specification the kit's cases cover."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .vectors import Case

__all__ = ["Coverage", "coverage"]

MUST_LEVELS = ("MUST", "MUST NOT", "SHALL", "SHALL NOT")


@dataclass(frozen=True, slots=True)
class Coverage:
    total: int
    must: int
    covered: tuple[str, ...]
    must_covered: int
    uncovered_must: tuple[str, ...]  # MUST ids no case covers and the kit does not verify
    uncovered_other: tuple[str, ...]  # SHOULD/MAY ids no case covers
    kit_verified: tuple[str, ...]  # MUST ids verified by the kit's machinery, not a vector
    cases_by_requirement: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "must": self.must, "covered": len(self.covered),
                "must_covered": self.must_covered, "kit_verified": list(self.kit_verified),
                "uncovered_other": list(self.uncovered_other)}


def coverage(cases: Iterable[Case], index: Iterable[Mapping[str, Any]],
             kit_verified: Mapping[str, str] | None = None) -> Coverage:
    """Coverage of the requirement ``index`` (entries with ``id`` and ``level``) by ``cases``;
    ``kit_verified`` maps ids the kit verifies itself to how it does."""
    counts: dict[str, int] = {}
    for case in cases:
        for requirement in case.requirements:
            counts[requirement] = counts.get(requirement, 0) + 1
    verified = dict(kit_verified or {})
    requirements = list(index)
    must_ids = [r["id"] for r in requirements if r["level"] in MUST_LEVELS]
    covered = tuple(r["id"] for r in requirements if r["id"] in counts)
    uncovered_must = tuple(i for i in must_ids if i not in counts and i not in verified)
    return Coverage(
        total=len(requirements),
        must=len(must_ids),
        covered=covered,
        must_covered=sum(1 for i in must_ids if i in counts or i in verified),
        uncovered_must=uncovered_must,
        uncovered_other=tuple(r["id"] for r in requirements
                              if r["level"] not in MUST_LEVELS and r["id"] not in counts),
        kit_verified=tuple(i for i in must_ids if i in verified and i not in counts),
        cases_by_requirement=counts,
    )
