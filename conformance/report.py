"""Reports of a run: JSON (schema ``conformance/v1/report.json``), JUnit XML, Markdown, console."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from .coverage import Coverage
from .handshake import spec_version_warning
from .outcomes import RunResult
from .printable import DETAIL_LIMIT, visible
from .registry import Registry, covers

__all__ = ["build_report", "console_lines", "to_junit", "to_markdown"]

REPORT_VERSION = 1
COUNTED = ("passed", "failed", "errored", "skipped", "not_applicable")


def _capabilities(run: RunResult, suites: Registry, declared: Sequence[str]) -> dict[str, Any]:
    """Per capability: counts and the pass percentage."""
    table: dict[str, Any] = {}
    for suite in suites.suites.values():
        for capability, description in suite.capabilities.items():
            if capability == suite.capability:
                chosen = [o for o in run.outcomes if o.case.suite == suite.name]
            else:
                chosen = [o for o in run.outcomes if o.case.suite == suite.name
                          and capability in _required(o, suite)]
            if not chosen:
                continue
            row: dict[str, Any] = {"declared": covers(declared, capability),
                                   "description": description, "cases": len(chosen)}
            for status in COUNTED:
                row[status] = sum(1 for o in chosen if o.status == status)
            # Declared: over the cases that apply (skips and errors count against it);
            # not declared: over every case of the capability.
            base = len(chosen) - row["not_applicable"] if row["declared"] else len(chosen)
            row["percent"] = round(100.0 * row["passed"] / base, 2) if base else 0.0
            table[capability] = row
    return table


def _required(outcome: Any, suite: Any) -> tuple[str, ...]:
    return tuple(outcome.capabilities) or tuple(suite.requires(outcome.case))


def requirement_verdicts(cases: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Per requirement id the case records name: "pass" when every case that applies passed,
    "fail" when one failed or errored against the baseline, "fail (expected)" when every
    failure is one the baseline expects, "not run" when no case failed but not every case
    that applies ran (skipped) or none applied."""
    statuses: dict[str, list[tuple[str, bool]]] = {}
    for record in cases:
        expected = bool((record.get("baseline") or {}).get("expected"))
        for requirement in record["requirements"]:
            statuses.setdefault(requirement, []).append((record["status"], expected))
    verdicts: dict[str, str] = {}
    for requirement, seen in sorted(statuses.items()):
        failures = [expected for status, expected in seen if status in ("failed", "errored")]
        applied = [status for status, _ in seen if status != "not_applicable"]
        if failures:
            verdicts[requirement] = "fail (expected)" if all(failures) else "fail"
        elif applied and all(status == "passed" for status in applied):
            verdicts[requirement] = "pass"
        else:
            verdicts[requirement] = "not run"
    return verdicts


def verdict_counts(verdicts: Mapping[str, str]) -> tuple[int, int, int]:
    """How many requirements pass, fail (expected or not) and were not run."""
    values = list(verdicts.values())
    return (values.count("pass"), sum(1 for v in values if v.startswith("fail")),
            values.count("not run"))


def build_report(run: RunResult, *, suites: Registry, connector: str, coverage: Coverage,
                 kit: Mapping[str, Any], seed: int | None,
                 property_tests: Mapping[str, Any] | None = None) -> dict[str, Any]:
    impl = run.implementation
    declared = list(impl.capabilities)
    implementation: dict[str, Any] = {
        "name": impl.name, "version": impl.version,
        "language": str(getattr(impl, "language", "python")),
        "capabilities": declared, "connector": connector,
        "homepage": getattr(impl, "homepage", None),
    }
    spec_version = getattr(impl, "spec_version", None)
    if isinstance(spec_version, str):
        implementation["specVersion"] = spec_version
    if hasattr(impl, "restarts"):
        implementation["restarts"] = int(getattr(impl, "restarts", 0))
    stderr = getattr(impl, "stderr_text", None)
    if callable(stderr):
        implementation["stderr"] = str(stderr())
    cases = []
    for outcome in run.outcomes:
        record: dict[str, Any] = {
            "id": outcome.case.id, "suite": outcome.case.suite, "file": outcome.case.file,
            "status": outcome.status, "requirements": list(outcome.case.requirements),
            "capabilities": list(outcome.capabilities),
            "duration_ms": round(outcome.duration * 1000, 3)}
        if outcome.detail:
            record["detail"] = outcome.detail
        if outcome.stderr:
            record["stderr"] = outcome.stderr[-4000:]
        if outcome.baseline is not None:
            record["baseline"] = {"reason": outcome.baseline.reason,
                                  "expected": outcome.expected}
            if outcome.baseline.issue:
                record["baseline"]["issue"] = outcome.baseline.issue
        cases.append(record)
    properties = {name: dict(result) for name, result in (property_tests or {}).items()}
    summary: dict[str, Any] = {
        "cases": len(run.outcomes),
        **{status: run.count(status) for status in COUNTED},
        "expected_failures": sum(1 for o in run.outcomes if o.expected),
        "unexpected": sum(1 for o in run.outcomes if o.unexpected),
        "stale_baseline": list(run.stale),
        "ok": run.ok and not any(property_unexpected(p) for p in properties.values()),
        "uncovered_requirements": list(coverage.uncovered_must),
        "requirements": coverage.to_json(),
        "capabilities": _capabilities(run, suites, declared),
        "hypothesis_seed": seed,
        "property_tests": properties or None,
        "properties": _property_counts(properties),
        "kit_version": kit["version"],
        "spec_versions": dict(kit["spec_versions"]),
        "started": dt.datetime.fromtimestamp(run.started, dt.UTC).isoformat(
            timespec="seconds").replace("+00:00", "Z"),
        "duration_s": round(run.duration, 3),
    }
    kit_block = dict(kit)
    if run.problems:
        kit_block["problems"] = dict(run.problems)
    return {"reportVersion": REPORT_VERSION, "kit": kit_block,
            "implementation": implementation, "summary": summary, "cases": cases,
            "requirements": requirement_verdicts(cases)}


def property_unexpected(result: Mapping[str, Any]) -> bool:
    """A property result that counts against the run: failed or errored, and not as a
    baseline entry lists it."""
    expected = bool((result.get("baseline") or {}).get("expected"))
    return result.get("status", "passed" if result.get("ok", True) else "failed") in (
        "failed", "errored") and not expected


def _property_counts(properties: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    counts = {status: 0 for status in ("passed", "failed", "errored", "not_applicable")}
    for result in properties.values():
        status = str(result.get("status", "passed" if result.get("ok", True) else "failed"))
        counts[status] = counts.get(status, 0) + 1
    counts["expected_failures"] = sum(1 for r in properties.values()
                                      if (r.get("baseline") or {}).get("expected"))
    counts["unexpected"] = sum(1 for r in properties.values() if property_unexpected(r))
    return counts


# -- JUnit XML ----------------------------------------------------------------------------------

def to_junit(report: Mapping[str, Any]) -> str:
    summary = report["summary"]
    impl = report["implementation"]
    root = ET.Element("testsuites", name=f"dshkit-conformance {impl['name']} {impl['version']}")
    by_suite: dict[str, list[Mapping[str, Any]]] = {}
    for record in report["cases"]:
        by_suite.setdefault(record["suite"], []).append(record)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for name, records in by_suite.items():
        element = ET.SubElement(root, "testsuite", name=name)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        seconds = 0.0
        for record in records:
            counts["tests"] += 1
            seconds += record["duration_ms"] / 1000
            stem = record["file"].rsplit(".", 1)[0].replace("/", ".")
            case = ET.SubElement(element, "testcase", classname=f"{name}.{stem}",
                                 name=record["id"], time=f"{record['duration_ms'] / 1000:.6f}")
            detail = record.get("detail", "")
            expected = record.get("baseline", {}).get("expected", False)
            if record["status"] == "not_applicable":
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"not applicable: {detail}")
            elif expected:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message="expected failure (baseline): "
                              f"{record['baseline']['reason']}: {detail}")
            elif record["status"] == "failed":
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", message=detail[:500])
                failure.text = f"requirements: {', '.join(record['requirements'])}\n{detail}"
            elif record["status"] in ("errored", "skipped"):
                counts["errors"] += 1
                ET.SubElement(case, "error", message=f"{record['status']}: {detail}"[:500])
            if record.get("stderr"):
                ET.SubElement(case, "system-err").text = record["stderr"]
        for key, value in counts.items():
            element.set(key, str(value))
            totals[key] += value
        element.set("time", f"{seconds:.6f}")
    _junit_properties(root, summary, totals)
    if summary["stale_baseline"]:
        element = ET.SubElement(root, "testsuite", name="baseline",
                                tests=str(len(summary["stale_baseline"])),
                                failures=str(len(summary["stale_baseline"])), errors="0",
                                skipped="0")
        for entry in summary["stale_baseline"]:
            case = ET.SubElement(element, "testcase", classname="baseline", name=entry["id"])
            ET.SubElement(case, "failure", message=f"stale baseline entry: {entry['problem']}")
            totals["tests"] += 1
            totals["failures"] += 1
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{summary['duration_s']:.3f}")
    _printable(root)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _printable(root: ET.Element) -> None:
    """Escape in every attribute and text what XML 1.0 cannot hold (lone surrogates,
    control characters): the file stays well-formed whatever an implementation answered."""
    for element in root.iter():
        for key, value in element.attrib.items():
            element.set(key, visible(value, layout=True))
        if element.text:
            element.text = visible(element.text, layout=True)


def _junit_properties(root: ET.Element, summary: Mapping[str, Any],
                      totals: dict[str, int]) -> None:
    """One ``testsuite`` "properties" with a ``testcase`` per property test that was run."""
    properties = summary.get("property_tests") or {}
    if not properties:
        return
    element = ET.SubElement(root, "testsuite", name="properties")
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for name, result in properties.items():
        counts["tests"] += 1
        case = ET.SubElement(element, "testcase", classname="properties", name=name,
                             time=f"{float(result.get('duration_s', 0.0)):.6f}")
        status, detail = result.get("status"), str(result.get("detail", ""))
        if status == "not_applicable":
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message=f"not applicable: {detail}")
        elif (result.get("baseline") or {}).get("expected"):
            counts["skipped"] += 1
            ET.SubElement(case, "skipped", message="expected failure (baseline): "
                          f"{result['baseline']['reason']}: {detail}")
        elif status == "failed":
            counts["failures"] += 1
            failure = ET.SubElement(case, "failure", message=detail[:500])
            failure.text = (f"seed {result.get('seed')}\n{detail}\n"
                            f"counterexample: {result.get('counterexample', '(not written)')}")
        elif status == "errored":
            counts["errors"] += 1
            ET.SubElement(case, "error", message=detail[:500])
    for key, value in counts.items():
        element.set(key, str(value))
        totals[key] += value


# -- Markdown and console -----------------------------------------------------------------------

def _rows(report: Mapping[str, Any]) -> list[tuple[str, str, int, int, int, int, int, int, str]]:
    rows = []
    for capability, row in report["summary"]["capabilities"].items():
        rows.append((capability, "yes" if row["declared"] else "no", row["cases"], row["passed"],
                     row["failed"], row["errored"], row["skipped"], row["not_applicable"],
                     f"{row['percent']:.1f}%"))
    return rows


HEADERS = ("Capability", "Declared", "Cases", "Passed", "Failed", "Errored", "Skipped", "N/A",
           "Pass")


def to_markdown(report: Mapping[str, Any]) -> str:
    summary = report["summary"]
    impl = report["implementation"]
    kit = report["kit"]
    verdict = "passes" if summary["ok"] else "does not pass"
    lines = [
        f"## dshkit conformance: {impl['name']} {impl['version']}",
        "",
        f"{impl['name']} {impl['version']} ({impl['language']}) {verdict} the dshkit "
        f"conformance kit {kit['version']} (spec {kit['spec_versions'].get('dshkit-spec', '?')})"
        f" on {summary['started'][:10]}: {summary['passed']} of {summary['cases']} cases "
        f"passed.",
        "",
        "| " + " | ".join(HEADERS) + " |",
        "| " + " | ".join(["---"] * 2 + ["---:"] * (len(HEADERS) - 2)) + " |",
    ]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in _rows(report)]
    lines += ["",
              f"Failed {summary['failed']}, errored {summary['errored']}, skipped "
              f"{summary['skipped']}, not applicable {summary['not_applicable']}, expected "
              f"failures {summary['expected_failures']}, stale baseline entries "
              f"{len(summary['stale_baseline'])}. MUST requirements without a case: "
              f"{len(summary['uncovered_requirements'])}. Hypothesis seed: "
              f"{summary['hypothesis_seed']}.", ""]
    failing = {r: v for r, v in report.get("requirements", {}).items() if v.startswith("fail")}
    if failing:
        lines += ["| Failing requirement | Verdict |", "| --- | --- |"]
        lines += [f"| {requirement} | {verdict} |" for requirement, verdict in failing.items()]
        lines.append("")
    properties = summary.get("property_tests") or {}
    if properties:
        lines += ["| Property | Needs | Examples | Outcome |", "| --- | --- | ---: | --- |"]
        lines += [f"| {name} | {', '.join(r.get('capabilities', [])) or '-'} | "
                  f"{r.get('examples_run', r.get('examples', ''))} | "
                  f"{visible(_property_outcome(r), DETAIL_LIMIT).replace('|', '/')} |"
                  for name, r in properties.items()]
        lines.append("")
    return "\n".join(visible(line, layout=True) for line in lines)


PROPERTY_HEADERS = ("Property", "Needs", "Examples", "Outcome")
_PROPERTY_MARKS = {"passed": "passed", "failed": "FAILED", "errored": "ERRORED",
                   "not_applicable": "not applicable"}


def _property_outcome(result: Mapping[str, Any]) -> str:
    status = str(result.get("status", "passed" if result.get("ok", True) else "failed"))
    text = _PROPERTY_MARKS.get(status, status)
    if (result.get("baseline") or {}).get("expected"):
        text = f"expected failure ({status})"
    if result.get("detail"):
        text += f": {result['detail']}"
    if result.get("counterexample"):
        text += f" -> {result['counterexample']}"
    return text


def _property_lines(summary: Mapping[str, Any]) -> list[str]:
    """The table of property tests (one row each) and their counts."""
    properties = summary.get("property_tests") or {}
    if not properties:
        return ["properties: none run (--properties 0, or none of the selected suites)"]
    rows = [(name, ", ".join(r.get("capabilities", [])) or "-",
             str(r.get("examples_run", r.get("examples", ""))), _property_outcome(r))
            for name, r in properties.items()]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(PROPERTY_HEADERS[:3])]
    lines = ["  ".join(h.ljust(w) for h, w in zip(PROPERTY_HEADERS, [*widths, 0], strict=True))
             .rstrip()]
    lines += ["  ".join([*(v.ljust(w) for v, w in zip(row[:3], widths, strict=True)), row[3]])
              for row in rows]
    counts = summary.get("properties") or {}
    lines.append(f"properties: {counts.get('passed', 0)} passed, {counts.get('failed', 0)} "
                 f"failed, {counts.get('errored', 0)} errored, "
                 f"{counts.get('not_applicable', 0)} not applicable, "
                 f"{counts.get('expected_failures', 0)} expected failures")
    return lines


def console_lines(report: Mapping[str, Any], verbose: bool = False) -> list[str]:
    summary = report["summary"]
    impl = report["implementation"]
    properties = summary.get("property_tests") or {}
    examples = max((int(r.get("examples", 0)) for r in properties.values()), default=0)
    lines = [f"implementation: {impl['name']} {impl['version']} ({impl['language']}, "
             f"{impl['connector']}); kit {report['kit']['version']}; "
             f"seed {summary['hypothesis_seed']}; properties: "
             + (f"{examples} examples each" if properties else "off")]
    warning = spec_version_warning(impl.get("specVersion"),
                                   report["kit"]["spec_versions"].get("dshkit-spec"))
    if warning:
        lines.append(warning)
    for record in report["cases"]:
        status = record["status"]
        shown = verbose or (status in ("failed", "errored", "skipped")
                            and not record.get("baseline", {}).get("expected"))
        if shown:
            mark = {"passed": "PASS", "failed": "FAIL", "errored": "ERROR", "skipped": "SKIP",
                    "not_applicable": "N/A"}[status]
            if record.get("baseline", {}).get("expected"):
                mark = "XFAIL"
            detail = visible(record.get("detail", ""), DETAIL_LIMIT)
            lines.append(f"{mark:5} {record['id']}" + (f": {detail}" if detail else ""))
    for entry in summary["stale_baseline"]:
        kind = "property " if entry.get("property") else ""
        lines.append(f"STALE {kind}{entry['id']}: {entry['problem']}")
    for module, problem in report["kit"].get("problems", {}).items():
        lines.append(f"SUITE {module}: {problem}")
    rows = _rows(report)
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(h)
              for i, h in enumerate(HEADERS)]
    lines.append("  ".join(str(h).ljust(w) for h, w in zip(HEADERS, widths, strict=True)))
    lines += ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True))
              for row in rows]
    requirements = summary["requirements"]
    lines.append(f"requirements: {requirements['covered']}/{requirements['total']} covered by "
                 f"cases; MUST {requirements['must_covered']}/{requirements['must']} covered "
                 f"({len(requirements['kit_verified'])} by the kit itself); uncovered MUST "
                 f"requirements: {len(summary['uncovered_requirements'])}")
    if "requirements" in report:
        passing, failing, not_run = verdict_counts(report["requirements"])
        lines.append(f"requirements: {passing} pass, {failing} fail, {not_run} not run")
    tool = requirements.get("tool")
    if tool is not None:
        lines.append(f"tool requirements: {tool['total']}, covered by the test suite: "
                     f"{tool['tested']}" + (f" (untested: {', '.join(tool['untested'])})"
                                           if tool["untested"] else ""))
    lines += [visible(line, DETAIL_LIMIT) for line in _property_lines(summary)]
    lines.append(f"{summary['errored']} errored, {summary['skipped']} skipped, "
                 f"{summary['not_applicable']} not applicable, {summary['expected_failures']} "
                 f"expected failures, {len(summary['stale_baseline'])} stale baseline entries")
    unsuccessful = summary["failed"] + summary["errored"] + summary["skipped"]
    expected = summary["expected_failures"]
    lines.append(f"{summary['passed']} passed, {unsuccessful} failed" + (
        f" ({expected} expected by the baseline, {unsuccessful - expected} unexpected)"
        if expected else ""))
    return [visible(line, layout=True) for line in lines]
