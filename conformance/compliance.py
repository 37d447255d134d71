"""The generated parts of a compliance page, from two run reports of the kit:
``python -m dshkit.conformance.compliance --report R --reference R [--baseline B] [--lock L]
--page PAGE (--write | --check)``.

A compliance page (``spec/compliance/dsh.md``) is prose with generated blocks between
``<!-- begin generated: NAME -->`` and ``<!-- end generated: NAME -->``. This module rewrites
each block from the JSON reports (schema ``conformance/v1/report.json``) of the
implementation and of the dshkit reference, run by the same kit:

- ``run``: the date, the implementation and its pinned packages (from an npm lock file), its
  runtime as its harness reported it, the kit and the verdict;
- ``capabilities``: per capability, the implementation's counts and pass percentage next to
  the reference's pass percentage;
- ``divergences``: the divergence classes of the baseline (see
  :mod:`dshkit.conformance.divergences`) with their case counts;
- ``skips``: the operations the implementation skipped, per suite, with the reason.

``--check`` exits 1 when a block differs from what the reports give (nothing is written).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .divergences import parse_reason
from .vectors import Case, load_cases

__all__ = ["BLOCKS", "ComplianceError", "Inputs", "blocks", "main", "update_page"]

JsonObject = dict[str, Any]
_BLOCK = re.compile(r"(<!-- begin generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)"
                    r"(<!-- end generated: (?P=name) -->)", re.DOTALL)
_SKIP = re.compile(r"^.* for (?P<operation>\S+): (?P<why>.+)$", re.DOTALL)


class ComplianceError(ValueError):
    """A report, the baseline, the lock file or the page is unusable (code ``COMPLIANCE``)."""

    code = "COMPLIANCE"


@dataclass(frozen=True, slots=True)
class Inputs:
    report: JsonObject  # the implementation's run
    reference: JsonObject  # the dshkit reference's run
    baseline: JsonObject | None = None
    lock: JsonObject | None = None
    divergence_page: str = "../divergences.md"


def _pct(passed: int, cases: int) -> str:
    return f"{100.0 * passed / cases:.1f}%" if cases else "n/a"


def _capabilities(report: JsonObject) -> dict[str, JsonObject]:
    caps = report.get("summary", {}).get("capabilities")
    if not isinstance(caps, dict):
        raise ComplianceError("a report has no summary.capabilities")
    return caps


def _runtime(report: JsonObject) -> str:
    stderr = str(report.get("implementation", {}).get("stderr", ""))
    match = re.search(r"\bon (Node|Python|Deno|Bun) (\S+)", stderr)
    return f"{match[1]} {match[2]}" if match else "not reported by the harness"


def _packages(lock: JsonObject | None) -> str:
    if lock is None:
        return "not given"
    root = lock.get("packages", {}).get("", {})
    deps = root.get("dependencies", {}) if isinstance(root, dict) else {}
    return ", ".join(f"`{name}` {version}" for name, version in sorted(deps.items())) or "none"


def _verdict(report: JsonObject) -> str:
    s = report["summary"]
    stale = len(s.get("stale_baseline") or [])
    word = "passes with its baseline" if s.get("ok") else "FAILS"
    expected = s.get("expected_failures", 0)
    return (f"{word}: {s['passed']} passed, {expected} expected failures or skips "
            f"({s['failed']} failed, {s['skipped']} skipped), {s['errored']} errored, "
            f"{s['not_applicable']} not applicable, {s.get('unexpected', 0)} unexpected, "
            f"{stale} stale baseline entries")


def _run_block(inputs: Inputs) -> list[str]:
    impl, ref = inputs.report["implementation"], inputs.reference["implementation"]
    kit = inputs.report.get("kit", {})
    specs = ", ".join(f"{k} {v}" for k, v in sorted(kit.get("spec_versions", {}).items()))
    vectors = kit.get("vectors", {})
    started = str(inputs.report["summary"].get("started", ""))
    ref_started = str(inputs.reference["summary"].get("started", ""))
    rows = [
        ("Date", f"{started[:10]} (run started {started})"),
        ("Implementation", f"`{impl['name']}` {impl['version']} (language `{impl['language']}`)"),
        ("Pinned packages", _packages(inputs.lock)),
        ("Runtime", _runtime(inputs.report)),
        ("Declared capabilities", ", ".join(f"`{c}`" for c in impl.get("capabilities", []))),
        ("Reference", f"`{ref['name']}` {ref['version']} (language `{ref['language']}`), "
                      f"run started {ref_started}"),
        ("Kit", f"{kit.get('name')} {kit.get('version')} ({vectors.get('files')} vector files, "
                f"{vectors.get('cases')} cases); {specs}"),
        ("Verdict", _verdict(inputs.report)),
        ("Reference verdict", _verdict(inputs.reference)),
    ]
    return ["| Item | Value |", "| --- | --- |", *(f"| {k} | {v} |" for k, v in rows)]


def _capability_block(inputs: Inputs) -> list[str]:
    mine, ref = _capabilities(inputs.report), _capabilities(inputs.reference)
    if mine.keys() != ref.keys():
        raise ComplianceError("the two reports do not cover the same capabilities: run both "
                              "with the same kit and suites")
    lines = ["| Capability | Declared | Cases | Passed | Failed | Skipped | N/A | "
             f"`{inputs.report['implementation']['name']}` pass | Reference pass |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, row in mine.items():
        other = ref[name]
        if row["cases"] != other["cases"]:
            raise ComplianceError(f"{name}: {row['cases']} cases in one report, "
                                  f"{other['cases']} in the other")
        ran = row["cases"] - row["not_applicable"]
        declared = "yes" if row["declared"] else ("in part" if ran else "no")
        pass_cell = _pct(row["passed"], row["cases"]) if ran else "not declared"
        lines.append(f"| `{name}` | {declared} | {row['cases']} | "
                     f"{row['passed']} | {row['failed'] + row['errored']} | {row['skipped']} | "
                     f"{row['not_applicable']} | {pass_cell} | "
                     f"{_pct(other['passed'], other['cases'])} |")
    return lines


def _divergence_block(inputs: Inputs) -> list[str]:
    if inputs.baseline is None:
        return ["No baseline was given."]
    counts: dict[str, int] = {}
    for entry in inputs.baseline.get("expectedFailures", []):
        if entry.get("status") != "failed":
            continue
        reason = parse_reason(str(entry.get("reason", "")))
        if reason is None:
            raise ComplianceError(f"{entry.get('id')}: a failed entry without a divergence reason")
        counts[reason.cls] = counts.get(reason.cls, 0) + 1
    total = sum(counts.values())
    classes = ", ".join(f"[`{cls}`]({inputs.divergence_page}#{cls}) ({n})"
                        for cls, n in counts.items())
    return [f"{total} cases in {len(counts)} classes: {classes}."]


def _skip_block(inputs: Inputs, cases: Iterable[Case]) -> list[str]:
    operation_of = {c.id: (c.suite, c.operation) for c in cases}
    table: dict[str, dict[str, int]] = {}
    why: dict[str, list[str]] = {}
    for record in inputs.report.get("cases", []):
        if record.get("status") != "skipped":
            continue
        suite, operation = operation_of.get(record["id"], (record.get("suite", "?"), "?"))
        match = _SKIP.match(str(record.get("detail", "")))
        reason = match["why"] if match else str(record.get("detail", ""))
        table.setdefault(suite, {})
        table[suite][operation] = table[suite].get(operation, 0) + 1
        if reason not in why.setdefault(suite, []):
            why[suite].append(reason)
    if not table:
        return ["No case was skipped."]
    lines = ["| Suite | Operations (cases) | Reason |", "| --- | --- | --- |"]
    for suite in sorted(table):
        ops = sorted(table[suite].items(), key=lambda item: (-item[1], item[0]))
        listed = ", ".join(f"`{op}` ({n})" for op, n in ops)
        lines.append(f"| `{suite}` | {listed} | {'; '.join(why[suite])} |")
    return lines


BLOCKS: dict[str, Callable[[Inputs, Sequence[Case]], list[str]]] = {
    "run": lambda inputs, cases: _run_block(inputs),
    "capabilities": lambda inputs, cases: _capability_block(inputs),
    "divergences": lambda inputs, cases: _divergence_block(inputs),
    "skips": _skip_block,
}


def blocks(inputs: Inputs, cases: Sequence[Case] | None = None) -> dict[str, str]:
    """The text of every generated block."""
    chosen = list(cases) if cases is not None else load_cases()
    return {name: "\n".join(make(inputs, chosen)) + "\n" for name, make in BLOCKS.items()}


def update_page(page: str, inputs: Inputs, cases: Sequence[Case] | None = None) -> str:
    """``page`` with each generated block rewritten; every block must be present once."""
    texts = blocks(inputs, cases)
    found = [m["name"] for m in _BLOCK.finditer(page)]
    missing = sorted(set(texts) - set(found))
    if missing or len(found) != len(set(found)):
        raise ComplianceError(f"the page must hold each generated block once (missing: "
                              f"{', '.join(missing) or 'none'}; found: {', '.join(found)})")
    unknown = sorted(set(found) - set(texts))
    if unknown:
        raise ComplianceError(f"unknown generated blocks: {', '.join(unknown)}")
    return _BLOCK.sub(lambda m: m[1] + texts[m["name"]] + m[4], page)


def _json(path: Path | None) -> Any:
    if path is None:
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dshkit.conformance.compliance",
                                     description="Rewrite the generated blocks of a "
                                                 "compliance page from two run reports.")
    parser.add_argument("--report", type=Path, required=True,
                        help="the implementation's JSON report")
    parser.add_argument("--reference", type=Path, required=True,
                        help="the reference's JSON report (same kit)")
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--lock", type=Path, help="the harness's package-lock.json")
    parser.add_argument("--page", type=Path, required=True)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        inputs = Inputs(_json(args.report), _json(args.reference), _json(args.baseline),
                        _json(args.lock))
        page = args.page.read_text(encoding="utf-8")
        updated = update_page(page, inputs)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        code = getattr(exc, "code", "IO")
        print(f"error [{code}]: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if updated != page:
            print(f"{args.page} is out of date: rerun with --write", file=sys.stderr)
            return 1
        return 0
    if updated != page:
        args.page.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
