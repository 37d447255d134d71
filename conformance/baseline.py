"""Expected failures owned by an implementation (schema ``conformance/v1/baseline.json``).

A baseline lists case ids that are known to fail, each with a reason. A listed case that fails
(or errors, or is skipped) as listed does not fail the run; everything else about a listed
entry is **stale** and fails the run: the case passed, is not applicable, failed with another
status than the one listed, is unknown to the kit, is a retired id, or the entry expired.

An entry may name a property test instead of a case (``{"property": "session-fold", "reason",
"status"?, ...}``): the same rules apply to the property's outcome in a run that ran it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .outcomes import BaselineEntry, CaseOutcome

__all__ = ["Baseline", "BaselineEntry", "BaselineError", "load_baseline"]


class BaselineError(ValueError):
    """The baseline file is unreadable or does not follow its schema."""


@dataclass(frozen=True, slots=True)
class Baseline:
    entries: dict[str, BaselineEntry]
    source: str = ""
    properties: dict[str, BaselineEntry] = field(default_factory=dict)

    @classmethod
    def from_json(cls, document: Any, source: str = "") -> Baseline:
        from dshkit import schemas

        problems = schemas.errors("conformance/v1/baseline.json", document)
        if problems:
            first = problems[0]
            where = "/" + "/".join(str(p) for p in first.absolute_path)
            raise BaselineError(f"{source or 'baseline'}: {first.message} at {where}")
        entries: dict[str, BaselineEntry] = {}
        properties: dict[str, BaselineEntry] = {}
        for raw in document["expectedFailures"]:
            is_property = "property" in raw
            name = raw["property"] if is_property else raw["id"]
            table = properties if is_property else entries
            if name in table:
                raise BaselineError(f"{source or 'baseline'}: {name} is listed twice")
            expires = dt.date.fromisoformat(raw["expires"]) if raw.get("expires") else None
            table[name] = BaselineEntry(name, raw["reason"], raw.get("issue"), raw.get("status"),
                                        expires, is_property)
        return cls(entries, source, properties)

    def apply(self, outcomes: Sequence[CaseOutcome], *, kit_ids: set[str],
              retired: set[str], today: dt.date | None = None) -> list[dict[str, str]]:
        """Mark expected failures on ``outcomes``; return the stale entries."""
        day = today or dt.date.today()
        stale: list[dict[str, str]] = []
        ran = {o.case.id: o for o in outcomes}
        for entry in self.entries.values():
            outcome = ran.get(entry.id)
            if outcome is None:
                if entry.id in retired:
                    stale.append({"id": entry.id, "problem": "the id is retired (tombstoned)"})
                elif entry.id not in kit_ids:
                    stale.append({"id": entry.id, "problem": "no case of the kit has this id"})
                continue  # a known case outside this run's selection
            outcome.baseline = entry
            if entry.expires is not None and entry.expires < day:
                stale.append({"id": entry.id,
                              "problem": f"the entry expired on {entry.expires.isoformat()}"})
            elif outcome.status == "passed":
                stale.append({"id": entry.id, "problem": "listed as failing, but it passed"})
            elif outcome.status == "not_applicable":
                stale.append({"id": entry.id, "problem": "listed, but not applicable to the "
                              "declared capabilities"})
            elif entry.status is not None and outcome.status != entry.status:
                stale.append({"id": entry.id, "problem": f"listed as {entry.status}, but it "
                              f"{outcome.status}"})
            else:
                outcome.expected = True
        return stale


    def apply_properties(self, results: Mapping[str, dict[str, Any]], *, known: Iterable[str],
                         today: dt.date | None = None) -> list[dict[str, Any]]:
        """Mark the property results (``{"status", ...}`` by property name) that fail as a
        property entry lists (``expected`` and ``baseline`` are set on them); return the stale
        property entries. An entry for a property that did not run is left alone, unless no
        property of the kit has that name."""
        day = today or dt.date.today()
        names = set(known)
        stale: list[dict[str, Any]] = []
        for entry in self.properties.values():
            result = results.get(entry.id)
            if result is None:
                if entry.id not in names:
                    stale.append({"id": entry.id, "property": True,
                                  "problem": "no property of the kit has this name"})
                continue
            result["baseline"] = {"reason": entry.reason, "expected": False,
                                  **({"issue": entry.issue} if entry.issue else {})}
            status = str(result.get("status"))
            problem = _property_problem(entry, status, day)
            if problem:
                stale.append({"id": entry.id, "property": True, "problem": problem})
            else:
                result["baseline"]["expected"] = True
        return stale


def _property_problem(entry: BaselineEntry, status: str, day: dt.date) -> str:
    if entry.expires is not None and entry.expires < day:
        return f"the entry expired on {entry.expires.isoformat()}"
    if status == "passed":
        return "listed as failing, but the property passed"
    if status == "not_applicable":
        return "listed, but the property is not applicable to this implementation"
    if entry.status is not None and status != entry.status:
        return f"listed as {entry.status}, but the property {status}"
    return ""


def load_baseline(path: str | Path) -> Baseline:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BaselineError(f"cannot read baseline {path}: {exc}") from exc
    return Baseline.from_json(document, str(path))


def baseline_from(outcomes: Iterable[CaseOutcome], reason: str) -> dict[str, Any]:
    """A baseline document listing every unsuccessful outcome (to start one from a run)."""
    return {"expectedFailures": [
        {"id": o.case.id, "reason": reason, "status": o.status}
        for o in outcomes if o.status in ("failed", "errored", "skipped")]}
