"""Traceability: which requirements of the specification the kit's cases cover.

Requirements have a scope (spec ``conformance/kit``, CNF-SCO-001): ``implementation``
requirements are what the kit judges, by its cases or by its own machinery; ``tool``
requirements are about the ``dshkit`` command line and distribution, which no
implementation provides, and are proven by dshkit's own test suite (the tests marked
``@pytest.mark.requirement(ID)``, recorded in the manifest's ``toolVerified``). Tool
requirements are counted apart and never in the MUST totals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .vectors import Case

__all__ = ["Coverage", "coverage", "is_tool"]

MUST_LEVELS = ("MUST", "MUST NOT", "SHALL", "SHALL NOT")


def is_tool(requirement: Mapping[str, Any]) -> bool:
    """A requirement of the index about the dshkit tool itself (scope ``tool``)."""
    return requirement.get("scope") == "tool"


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
    tool: tuple[str, ...] = ()  # tool-scoped ids (never counted above)
    tool_tested: tuple[str, ...] = ()  # tool-scoped ids that dshkit's test suite names

    @property
    def tool_untested(self) -> tuple[str, ...]:
        return tuple(i for i in self.tool if i not in self.tool_tested)

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "must": self.must, "covered": len(self.covered),
                "must_covered": self.must_covered, "kit_verified": list(self.kit_verified),
                "uncovered_other": list(self.uncovered_other),
                "tool": {"total": len(self.tool), "tested": len(self.tool_tested),
                         "untested": list(self.tool_untested)}}


def coverage(cases: Iterable[Case], index: Iterable[Mapping[str, Any]],
             kit_verified: Mapping[str, str] | None = None,
             tool_verified: Mapping[str, Sequence[str]] | None = None) -> Coverage:
    """Coverage of the requirement ``index`` (entries with ``id``, ``level`` and ``scope``) by
    ``cases``; ``kit_verified`` maps ids the kit verifies itself to how it does;
    ``tool_verified`` maps tool-scoped ids to the tests of dshkit's suite that check them."""
    counts: dict[str, int] = {}
    for case in cases:
        for requirement in case.requirements:
            counts[requirement] = counts.get(requirement, 0) + 1
    verified = dict(kit_verified or {})
    tested = {k for k, v in (tool_verified or {}).items() if v}
    every = list(index)
    requirements = [r for r in every if not is_tool(r)]
    tool = tuple(r["id"] for r in every if is_tool(r))
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
        tool=tool,
        tool_tested=tuple(i for i in tool if i in tested),
    )
