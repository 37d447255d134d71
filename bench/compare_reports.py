"""Compare two JSON reports of ``dshkit conformance`` case by case.

    python bench/compare_reports.py OLD.json NEW.json [--json OUT.json]

Prints every case whose outcome differs between the two runs (status, or the detail of a
failure, error or skip), the cases only one run has, the property tests whose outcome
differs, and one summary line per run. Exit status: 0 when both reports could be read
(whatever they contain), 2 when one cannot (the message names the file and the problem).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: statuses whose ``detail`` is a finding (a changed message there is a change of behaviour)
DETAILED = ("failed", "errored", "skipped", "expected_failure")


@dataclass(frozen=True)
class Change:
    id: str
    old_status: str | None
    new_status: str | None
    old_detail: str
    new_detail: str

    def line(self) -> str:
        if self.old_status is None:
            return f"{self.id}: only in the new run ({self.new_status})"
        if self.new_status is None:
            return f"{self.id}: only in the old run ({self.old_status})"
        if self.old_status != self.new_status:
            head = f"{self.id}: {self.old_status} -> {self.new_status}"
        else:
            head = f"{self.id}: {self.new_status}, detail changed"
        return (f"{head}\n    old: {self.old_detail or '-'}\n    new: {self.new_detail or '-'}")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "old": {"status": self.old_status, "detail": self.old_detail},
                "new": {"status": self.new_status, "detail": self.new_detail}}


class ReportError(Exception):
    """A report that cannot be read; the message says which file and why."""


def load(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: cannot read the report: {exc}") from exc
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        raise ReportError(f"{path}: not a dshkit conformance report (no 'cases' array)")
    return document


def _cases(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(c.get("id")): c for c in report["cases"] if isinstance(c, dict)}


#: Scratch folders a harness names in its messages (``/tmp/dshkit-dsh-XXXX``).
_TEMP_DIR = re.compile(r"/tmp/dshkit-[A-Za-z0-9_-]+-[A-Za-z0-9_]+")

def _detail(case: dict[str, Any] | None, version: str) -> str:
    """The case's finding, with the run's own implementation version written ``<version>``
    (a harness that names its release in a skip reason is not a change of behaviour)."""
    if case is None or case.get("status") not in DETAILED:
        return ""
    detail = str(case.get("detail") or "")
    detail = _TEMP_DIR.sub("<tmp>", detail)  # a run's own scratch folder is no finding
    return detail.replace(version, "<version>") if version else detail


def _version(report: dict[str, Any]) -> str:
    return str((report.get("implementation") or {}).get("version") or "")


def compare_cases(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    before, after = _cases(old), _cases(new)
    old_version, new_version = _version(old), _version(new)
    changes: list[Change] = []
    for case_id in sorted(set(before) | set(after)):
        a, b = before.get(case_id), after.get(case_id)
        old_status = None if a is None else str(a.get("status"))
        new_status = None if b is None else str(b.get("status"))
        old_detail, new_detail = _detail(a, old_version), _detail(b, new_version)
        if old_status == new_status and old_detail == new_detail:
            continue
        changes.append(Change(case_id, old_status, new_status, old_detail, new_detail))
    return changes


def _properties(report: dict[str, Any]) -> dict[str, str]:
    found = (report.get("summary") or {}).get("property_tests")
    if not isinstance(found, dict):
        return {}
    return {str(name): str(p.get("status")) for name, p in found.items() if isinstance(p, dict)}


def compare_properties(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    before, after = _properties(old), _properties(new)
    return [f"property {name}: {before.get(name)} -> {after.get(name)}"
            for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]


def summary(report: dict[str, Any]) -> str:
    impl = report.get("implementation") or {}
    counts = report.get("summary") or {}
    keys = ("passed", "failed", "errored", "skipped", "not_applicable", "expected_failures")
    figures = ", ".join(f"{counts.get(k, 0)} {k.replace('_', ' ')}" for k in keys)
    return f"{impl.get('name')} {impl.get('version')}: {counts.get('cases', 0)} cases, {figures}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--json", type=Path, help="also write the changes as JSON here")
    args = parser.parse_args(argv)
    try:
        old, new = load(args.old), load(args.new)
    except ReportError as exc:
        print(f"compare_reports: {exc}", file=sys.stderr)
        return 2
    changes = compare_cases(old, new)
    properties = compare_properties(old, new)
    print(f"old: {summary(old)}")
    print(f"new: {summary(new)}")
    print(f"{len(changes)} cases changed" + (":" if changes else ""))
    for change in changes:
        print("  " + change.line().replace("\n", "\n  "))
    for line in properties:
        print("  " + line)
    if args.json:
        document = {"old": summary(old), "new": summary(new),
                    "cases": [c.to_json() for c in changes], "properties": properties}
        args.json.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
