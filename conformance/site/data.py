"""The published reports as the site sees them: one :class:`Implementation` per kit report in
the reports directory (``<name>.json`` with an optional ``<name>.meta.json`` sidecar), each
case reduced to one of four outcomes, and the comparison files (``<a>-vs-<b>.json``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .notes import Explanation, NoteIndex, explain

__all__ = ["OUTCOMES", "CaseResult", "Comparison", "Implementation", "SiteError", "Tally",
           "load_reports"]

JsonObject = dict[str, Any]

#: The outcomes of a cell, in the order the site lists them.
OUTCOMES = ("pass", "fail", "expected", "n/a")


class SiteError(ValueError):
    """A reports directory or a report that cannot be used (code ``COMPLIANCE_SITE``)."""

    code = "COMPLIANCE_SITE"

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.message, self.path = message, path


@dataclass(frozen=True, slots=True)
class CaseResult:
    id: str
    suite: str
    status: str  # the kit's status: passed, failed, errored, skipped, not_applicable
    outcome: str  # one of OUTCOMES
    requirements: tuple[str, ...]
    capabilities: tuple[str, ...]
    detail: str
    explanation: Explanation | None  # set for an expected failure


@dataclass(slots=True)
class Tally:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))

    def add(self, outcome: str) -> None:
        self.counts[outcome] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True, slots=True)
class Implementation:
    slug: str  # the report's file name without .json
    name: str
    version: str
    report: JsonObject
    meta: JsonObject | None
    cases: tuple[CaseResult, ...]
    capabilities: Mapping[str, JsonObject]  # the report's summary.capabilities

    @property
    def title(self) -> str:
        return f"{self.name} {self.version}"

    def by_id(self) -> dict[str, CaseResult]:
        return {case.id: case for case in self.cases}

    def in_capability(self, capability: str) -> list[CaseResult]:
        """As the kit counts it: a family (``memory``) is every case of its suite; a
        sub-capability (``memory.store``), the cases of that suite that need it."""
        suite = capability.split(".", 1)[0]
        return [c for c in self.cases if c.suite == suite
                and (capability == suite or capability in c.capabilities)]

    def tally(self, cases: Iterable[CaseResult] | None = None) -> Tally:
        out = Tally()
        for case in self.cases if cases is None else cases:
            out.add(case.outcome)
        return out


@dataclass(frozen=True, slots=True)
class Comparison:
    slug: str
    old: str
    new: str
    changed_cases: int
    changed_properties: int


def _outcome(record: JsonObject) -> str:
    status = str(record.get("status"))
    if status == "passed":
        return "pass"
    if status == "not_applicable":
        return "n/a"
    if (record.get("baseline") or {}).get("expected") is True:
        return "expected"
    return "fail"


def _case(record: JsonObject, notes: NoteIndex) -> CaseResult:
    outcome = _outcome(record)
    explanation = None
    if outcome == "expected":
        explanation = explain(str(record["baseline"].get("reason", "")), str(record["status"]),
                              notes)
    return CaseResult(str(record["id"]), str(record.get("suite", "")), str(record["status"]),
                      outcome, tuple(record.get("requirements") or ()),
                      tuple(record.get("capabilities") or ()), str(record.get("detail", "")),
                      explanation)


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SiteError(f"cannot read {path.name}: {exc}", str(path)) from None


def _implementation(path: Path, report: JsonObject, notes: NoteIndex) -> Implementation:
    impl = report.get("implementation")
    caps = (report.get("summary") or {}).get("capabilities")
    if not isinstance(impl, dict) or not isinstance(caps, dict):
        raise SiteError(f"{path.name} has no implementation or summary.capabilities: re-run "
                        "dshkit conformance --report with this kit", str(path))
    meta_path = path.with_name(path.stem + ".meta.json")
    meta = _read(meta_path) if meta_path.is_file() else None
    cases = tuple(_case(record, notes) for record in report["cases"])
    return Implementation(path.stem, str(impl.get("name")), str(impl.get("version")), report,
                          meta if isinstance(meta, dict) else None, cases, caps)


def _order(impls: Sequence[Implementation]) -> list[Implementation]:
    """The reference first (it defines the columns' ideal), the others by name and version."""
    return sorted(impls, key=lambda i: (i.name != "dshkit-reference", i.slug))


def load_reports(folder: Path, notes: NoteIndex) -> tuple[list[Implementation], list[Comparison]]:
    """Every kit report and comparison in ``folder``; sidecars go with their report."""
    if not folder.is_dir():
        raise SiteError(f"{folder} is not a directory of reports (--reports)", str(folder))
    impls: list[Implementation] = []
    comparisons: list[Comparison] = []
    for path in sorted(folder.glob("*.json")):
        if path.name.endswith(".meta.json"):
            continue
        document = _read(path)
        if isinstance(document, dict) and "old" in document and "new" in document:
            comparisons.append(Comparison(path.stem, str(document["old"]),
                                          str(document["new"]),
                                          len(document.get("cases") or []),
                                          len(document.get("properties") or [])))
        elif isinstance(document, dict) and isinstance(document.get("cases"), list):
            impls.append(_implementation(path, document, notes))
        else:
            raise SiteError(f"{path.name} is neither a kit report nor a comparison", str(path))
    if not impls:
        raise SiteError(f"{folder} holds no kit report (<name>.json from dshkit conformance "
                        "--report)", str(folder))
    return _order(impls), comparisons
